#!/usr/bin/env python3
"""amqsech: answer each request on a queue with an echo reply (like IBM's AMQSECH0).

    python samples/amqsech.py SERVICE.Q QM1                 # a queue manager started here
    python samples/amqsech.py SERVICE.Q QM1 --conn 'localhost(1414)'   # or MQSERVER=CHANNEL/TCP/host(port)

Each reply goes to the request's ReplyToQ and follows the request's Report options, as a
server application must (see ferrymq.client.replies): CorrelId from the request's MsgId
(or its CorrelId with MQRO_PASS_CORREL_ID), the request's priority and persistence. A
request that also asked for a positive action notification (MQRO_PAN) gets one. The
sample ends when no request arrives within --wait seconds, or when a message with
Feedback MQFB_QUIT arrives (how a monitor tells its servers to stop). Written against the
Pythonic client, ferrymq.client.
"""

from __future__ import annotations

import argparse

import mqconn

import ferrymq.client as fc
from ferrymq.mq import constants as C


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amqsech", description="Echo each request back to its reply queue.")
    parser.add_argument("queue", help="queue the requests arrive on")
    mqconn.add_connection_args(parser)
    parser.add_argument("--wait", type=float, default=15.0, help="seconds to wait for the next request (default 15)")
    args = parser.parse_args(argv)
    print("Sample AMQSECH0 start")
    address = mqconn.client_address(args)  # (channel, connection name), or None: the local socket
    try:
        with fc.connect(args.qmgr, address[1] if address else None, channel=address[0] if address else "",
                        user=args.user or "",
                        password=mqconn.password(args), appl_name="amqsech") as qm:
            q = qm.open(args.queue, options=C.MQOO_INPUT_SHARED | C.MQOO_FAIL_IF_QUIESCING)
            while True:
                try:
                    request = q.get(wait=args.wait)
                except fc.NoMessageAvailable:
                    print("no more requests")
                    break
                if request.md.feedback == C.MQFB_QUIT:
                    print("told to quit")
                    break
                if not request.reply_to_q.strip():
                    print(f"message {request.msg_id.hex()} names no reply queue: not answered")
                    continue
                qm.reply(request, request.data)
                qm.send_report(request, C.MQFB_PAN)
                print(f"echoed {request.data_length} bytes to {request.reply_to_q.strip()}")
    except fc.MQError as exc:
        print(f"ended with reason code {mqconn.reason(exc.reason)}")
        return 1
    print("Sample AMQSECH0 end")
    return 0


if __name__ == "__main__":
    mqconn.run(main)
