#!/usr/bin/env python3
"""qdepth: a queue-depth monitor, the classic pymqi PCF program.

    python samples/qdepth.py 'APP.*' QM1 --conn 'localhost(1414)'

Asks the command server (PCFExecute, MQCMD_INQUIRE_Q_STATUS) for each local queue whose
name matches, and prints its depth, open input/output counts, uncommitted messages and
the age of its oldest message. Exit code 1 when any queue is deeper than --warn.
"""

from __future__ import annotations

import argparse

import mqconn

import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC, CMQCFC


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="qdepth", description="Show the depth and users of local queues.")
    parser.add_argument("queues", help="queue name or generic name (APP.*)")
    mqconn.add_connection_args(parser)
    parser.add_argument("--warn", type=int, default=0, help="exit 1 if a queue holds more messages than this")
    args = parser.parse_args(argv)

    qmgr = mqconn.connect(args)
    pcf = pymqi.PCFExecute(qmgr)
    try:
        status = pcf.MQCMD_INQUIRE_Q_STATUS({CMQC.MQCA_Q_NAME: args.queues.encode()})
    except pymqi.MQMIError as e:
        print(f"INQUIRE_Q_STATUS ended with reason code {mqconn.reason(e.reason)}")
        return 2
    finally:
        pcf.disconnect()
        qmgr.disconnect()
    print(f"{'QUEUE':<48} {'DEPTH':>7} {'IN':>4} {'OUT':>4} {'UNCOM':>6} {'AGE(s)':>7}")
    deep = False
    for q in status:
        depth = q[CMQC.MQIA_CURRENT_Q_DEPTH]
        age = q[CMQCFC.MQIACF_OLDEST_MSG_AGE]
        print(f"{q[CMQC.MQCA_Q_NAME].decode().strip():<48} {depth:>7} {q[CMQC.MQIA_OPEN_INPUT_COUNT]:>4} "
              f"{q[CMQC.MQIA_OPEN_OUTPUT_COUNT]:>4} {q[CMQCFC.MQIACF_UNCOMMITTED_MSGS]:>6} "
              f"{'' if age < 0 else age:>7}")
        deep = deep or (args.warn > 0 and depth > args.warn)
    return 1 if deep else 0


if __name__ == "__main__":
    mqconn.run(main)
