#!/usr/bin/env python3
"""amqsget: take every message from a queue and print it (like IBM's AMQSGET0).

    python samples/amqsget.py Q1 QM1 --conn 'localhost(1414)' --wait 15

It waits up to ``--wait`` seconds for each further message, then ends. Written against
ferrymq.pymqi: an example of get with MQGMO_WAIT and of reusing one MD across gets.
"""

from __future__ import annotations

import argparse

import mqconn

import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amqsget", description="Get and print all messages on a queue.")
    parser.add_argument("queue", help="source queue name")
    mqconn.add_connection_args(parser)
    parser.add_argument("--wait", type=float, default=15.0, help="seconds to wait for more messages (default 15)")
    parser.add_argument("--max-length", type=int, default=None, help="buffer length (default: any size)")
    args = parser.parse_args(argv)

    print("Sample AMQSGET0 start")
    try:
        qmgr = mqconn.connect(args)
    except pymqi.MQMIError as e:
        print(f"MQCONNX ended with reason code {mqconn.reason(e.reason)}")
        return 1
    try:
        queue = pymqi.Queue(qmgr, args.queue, CMQC.MQOO_INPUT_AS_Q_DEF | CMQC.MQOO_FAIL_IF_QUIESCING)
    except pymqi.MQMIError as e:
        print(f"MQOPEN ended with reason code {mqconn.reason(e.reason)}")
        print("unable to open queue for input")
        qmgr.disconnect()
        return 1

    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT | CMQC.MQGMO_FAIL_IF_QUIESCING
                    | CMQC.MQGMO_ACCEPT_TRUNCATED_MSG, WaitInterval=int(args.wait * 1000))
    status = 0
    while True:
        md = pymqi.MD()  # MsgId and CorrelId blank: take messages in order
        try:
            data = queue.get(args.max_length, md, gmo)
        except pymqi.MQMIError as e:
            if e.reason == CMQC.MQRC_NO_MSG_AVAILABLE:
                print("no more messages")
                break
            if e.reason == CMQC.MQRC_TRUNCATED_MSG_ACCEPTED:
                print(f"message <{e.message.decode('utf-8', 'replace')}> (truncated from {e.original_length} bytes)")
                continue
            print(f"MQGET ended with reason code {mqconn.reason(e.reason)}")
            status = 1
            break
        print(f"message <{data.decode('utf-8', 'replace')}>")

    queue.close()
    qmgr.disconnect()
    print("Sample AMQSGET0 end")
    return status


if __name__ == "__main__":
    mqconn.run(main)
