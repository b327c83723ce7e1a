#!/usr/bin/env python3
"""amqsput: put each line of standard input on a queue as a message (like IBM's AMQSPUT0).

    echo "hello" | python samples/amqsput.py Q1 QM1 --conn 'localhost(1414)'

Reading stops at end of input or at an empty line. Written against ferrymq.pymqi, so it
is also an example of pymqi's put API.
"""

from __future__ import annotations

import argparse
import sys

import mqconn

import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amqsput", description="Put lines of standard input on a queue.")
    parser.add_argument("queue", help="target queue name")
    mqconn.add_connection_args(parser)
    parser.add_argument("--persistent", action="store_true", help="put persistent messages")
    args = parser.parse_args(argv)

    print("Sample AMQSPUT0 start")
    try:
        qmgr = mqconn.connect(args)
    except pymqi.MQMIError as e:
        print(f"MQCONNX ended with reason code {mqconn.reason(e.reason)}")
        return 1
    print(f"target queue is {args.queue}")
    try:
        queue = pymqi.Queue(qmgr, args.queue, CMQC.MQOO_OUTPUT | CMQC.MQOO_FAIL_IF_QUIESCING)
    except pymqi.MQMIError as e:
        print(f"MQOPEN ended with reason code {mqconn.reason(e.reason)}")
        print("unable to open queue for output")
        qmgr.disconnect()
        return 1

    pmo = pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT | CMQC.MQPMO_FAIL_IF_QUIESCING | CMQC.MQPMO_NEW_MSG_ID)
    status = 0
    for line in sys.stdin:
        text = line.rstrip("\n")
        if not text:
            break
        md = pymqi.MD(Format=CMQC.MQFMT_STRING, CodedCharSetId=1208,
                      Persistence=CMQC.MQPER_PERSISTENT if args.persistent else CMQC.MQPER_PERSISTENCE_AS_Q_DEF)
        try:
            queue.put(text.encode("utf-8"), md, pmo)
        except pymqi.MQMIError as e:
            print(f"MQPUT ended with reason code {mqconn.reason(e.reason)}")
            status = 1
            break

    queue.close()
    qmgr.disconnect()
    print("Sample AMQSPUT0 end")
    return status


if __name__ == "__main__":
    mqconn.run(main)
