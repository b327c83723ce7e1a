#!/usr/bin/env python3
"""trigger_drain: a triggered program. A trigger monitor (``ferrymq trigger-monitor``, or IBM's
runmqtrm) starts it with the trigger message in character form (MQTMC2) as its first
argument; it opens the queue that triggered, takes every message, and ends once the queue
stays empty for ``--wait`` seconds.

    DEFINE PROCESS(DRAIN.PROC) APPLICID('python3 samples/trigger_drain.py') ENVRDATA('--out drained.txt &')
    DEFINE QLOCAL(APP.Q) TRIGGER TRIGTYPE(FIRST) INITQ(SYSTEM.DEFAULT.INITIATION.QUEUE) PROCESS(DRAIN.PROC)
    ferrymq trigger-monitor QM1

Each message's data is appended to ``--out`` (one line each) when given, else printed.
Written against ferrymq.pymqi, in bindings mode to the queue manager the MQTMC2 names
(``--conn`` for a client connection).
"""

from __future__ import annotations

import argparse
import sys

import mqconn

import ferrymq.pymqi as pymqi
from ferrymq.errors import DecodeError
from ferrymq.pymqi import CMQC
from ferrymq.wire.mqtm import MQTMC2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trigger_drain", description="Drain the queue a trigger message names.")
    parser.add_argument("tmc2", help="the MQTMC2 a trigger monitor passes")
    parser.add_argument("--conn", default=None, help="connection name instead of bindings mode")
    parser.add_argument("--channel", default="SYSTEM.DEF.SVRCONN")
    parser.add_argument("--user", default=None)
    parser.add_argument("--out", default=None, help="append each message's data to this file")
    parser.add_argument("--wait", type=float, default=2.0, help="seconds to wait for more (default 2)")
    args = parser.parse_args(argv)
    try:
        trigger = MQTMC2.parse(args.tmc2)
    except DecodeError as exc:
        print(f"trigger_drain: the first argument is not an MQTMC2: {exc}", file=sys.stderr)
        return 2
    args.qmgr = trigger.q_mgr_name
    qmgr = mqconn.connect(args)
    try:
        queue = pymqi.Queue(qmgr, trigger.q_name, CMQC.MQOO_INPUT_AS_Q_DEF | CMQC.MQOO_FAIL_IF_QUIESCING)
        gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT | CMQC.MQGMO_FAIL_IF_QUIESCING,
                        WaitInterval=int(args.wait * 1000))
        out = open(args.out, "a", encoding="utf-8") if args.out else sys.stdout  # noqa: SIM115 - closed below
        count = 0
        try:
            while True:
                try:
                    data = queue.get(None, pymqi.MD(), gmo)
                except pymqi.MQMIError as e:
                    if e.reason == CMQC.MQRC_NO_MSG_AVAILABLE:
                        break
                    raise
                out.write(data.decode("utf-8", "replace") + "\n")
                count += 1
        finally:
            if out is not sys.stdout:
                out.close()
        queue.close()
    finally:
        qmgr.disconnect()
    print(f"trigger_drain: {count} messages from {trigger.q_name} ({trigger.trigger_data or 'no trigger data'})")
    return 0


if __name__ == "__main__":
    mqconn.run(main)
