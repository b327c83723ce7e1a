#!/usr/bin/env python3
"""amqsreq: send each line of standard input as a request and print the replies (like IBM's AMQSREQ0).

    echo "ping" | python samples/amqsreq.py SERVICE.Q QM1 --conn 'localhost(1414)'

Replies come back to a temporary dynamic queue created from a model queue
(SYSTEM.DEFAULT.MODEL.QUEUE by default) and deleted when the sample ends. Each request
asks for the reply to carry the request's MsgId as its CorrelId (MQRO_COPY_MSG_ID_TO_CORREL_ID,
the default), so the sample gets exactly the replies to its own requests. Written against
ferrymq.pymqi: an example of request/reply with an OD, ReplyToQ and CorrelId matching.
"""

from __future__ import annotations

import argparse
import sys

import mqconn

import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amqsreq", description="Send requests, print the replies.")
    parser.add_argument("queue", help="queue the requests go to")
    mqconn.add_connection_args(parser)
    parser.add_argument("--model", default="SYSTEM.DEFAULT.MODEL.QUEUE", help="model queue for the reply queue")
    parser.add_argument("--wait", type=float, default=15.0, help="seconds to wait for each reply (default 15)")
    args = parser.parse_args(argv)

    print("Sample AMQSREQ0 start")
    try:
        qmgr = mqconn.connect(args)
    except pymqi.MQMIError as e:
        print(f"MQCONNX ended with reason code {mqconn.reason(e.reason)}")
        return 1
    try:
        reply_od = pymqi.OD(ObjectName=args.model.encode(), DynamicQName=b"AMQSREQ.*")
        replies = pymqi.Queue(qmgr, reply_od, CMQC.MQOO_INPUT_EXCLUSIVE | CMQC.MQOO_FAIL_IF_QUIESCING)
        requests = pymqi.Queue(qmgr, args.queue, CMQC.MQOO_OUTPUT | CMQC.MQOO_FAIL_IF_QUIESCING)
    except pymqi.MQMIError as e:
        print(f"MQOPEN ended with reason code {mqconn.reason(e.reason)}")
        qmgr.disconnect()
        return 1
    reply_q = reply_od.ObjectName.rstrip(b" \0")
    print(f"server queue is {args.queue}")
    print(f"replies to {reply_q.decode()}")

    sent: list[bytes] = []
    for line in sys.stdin:
        text = line.rstrip("\n")
        if not text:
            break
        md = pymqi.MD(MsgType=CMQC.MQMT_REQUEST, Format=CMQC.MQFMT_STRING, CodedCharSetId=1208,
                      ReplyToQ=reply_q, Report=CMQC.MQRO_NONE)
        requests.put(text.encode("utf-8"), md, pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT | CMQC.MQPMO_NEW_MSG_ID))
        sent.append(md.MsgId)

    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT | CMQC.MQGMO_FAIL_IF_QUIESCING
                    | CMQC.MQGMO_ACCEPT_TRUNCATED_MSG, WaitInterval=int(args.wait * 1000),
                    MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)
    status = 0
    for msg_id in sent:
        md = pymqi.MD(CorrelId=msg_id)
        try:
            data = replies.get(None, md, gmo)
        except pymqi.MQMIError as e:
            if e.reason == CMQC.MQRC_NO_MSG_AVAILABLE:
                print("no more replies")
                status = 1
                break
            print(f"MQGET ended with reason code {mqconn.reason(e.reason)}")
            status = 1
            break
        print(f"response <{data.decode('utf-8', 'replace')}>")

    requests.close()
    replies.close()
    qmgr.disconnect()
    print("Sample AMQSREQ0 end")
    return status


if __name__ == "__main__":
    mqconn.run(main)
