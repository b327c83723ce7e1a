#!/usr/bin/env python3
"""amqsprm: send a file to another queue manager as reference messages (like IBM's AMQSPRM0).

    python samples/amqsprm.py big.iso TO.QM2.FILES QM1 --conn 'localhost(1414)' --dest copies/big.iso

It puts one message that is only an MQRMH: SrcName is the file's name under the sending
queue manager's bulk_data_dir, DestName where the receiving queue manager writes it under
its own. The queue (a remote queue, or one reached through ObjectQMgrName) must be served
by a channel whose MSGEXIT is ``ferrymq.channels.refexits:send_reference``, its partner's
``ferrymq.channels.refexits:receive_reference`` (docs/distributed.md, "Reference
messages"): the exits move the bytes, the queues only ever hold references. Read them at
the other end with amqsgrm.py.
"""

from __future__ import annotations

import argparse

import mqconn

import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC
from ferrymq.wire.mqrmh import MQRMH


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amqsprm", description="Send a file as reference messages.")
    parser.add_argument("source", help="the file's name under the sending queue manager's bulk_data_dir")
    parser.add_argument("queue", help="target queue name (a remote queue definition, or see --remote-qmgr)")
    mqconn.add_connection_args(parser)
    parser.add_argument("--dest", default="", help="name under the receiving bulk_data_dir (default: as source)")
    parser.add_argument("--remote-qmgr", default="", help="ObjectQMgrName: the queue manager the queue is on")
    parser.add_argument("--object-type", default="FILE", help="MQRMH ObjectType, 8 characters (default FILE)")
    args = parser.parse_args(argv)

    print("Sample AMQSPRM0 start")
    try:
        qmgr = mqconn.connect(args)
    except pymqi.MQMIError as e:
        print(f"MQCONNX ended with reason code {mqconn.reason(e.reason)}")
        return 1
    rmh = MQRMH(object_type=args.object_type[:8], src_name=args.source, dest_name=args.dest,
                flags=CMQC.MQRMHF_LAST)
    od = pymqi.OD(ObjectName=args.queue.encode(), ObjectQMgrName=args.remote_qmgr.encode())
    md = pymqi.MD(Format=CMQC.MQFMT_REF_MSG_HEADER, Persistence=CMQC.MQPER_PERSISTENT)
    pmo = pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT | CMQC.MQPMO_FAIL_IF_QUIESCING | CMQC.MQPMO_NEW_MSG_ID)
    status = 0
    try:
        qmgr.put1(od, rmh.pack(), md, pmo)
        print(f"reference to {args.source} put on {args.queue}")
    except pymqi.MQMIError as e:
        print(f"MQPUT1 ended with reason code {mqconn.reason(e.reason)}")
        status = 1
    qmgr.disconnect()
    print("Sample AMQSPRM0 end")
    return status


if __name__ == "__main__":
    mqconn.run(main)
