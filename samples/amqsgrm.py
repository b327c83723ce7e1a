#!/usr/bin/env python3
"""amqsgrm: read the reference messages a file arrived by (like IBM's AMQSGRM0).

    python samples/amqsgrm.py APP.FILES QM2 --conn 'localhost(1415)' --wait 60

Each message on the queue is an MQRMH without its bulk data (the receiving channel's
exit wrote that under its bulk_data_dir, docs/distributed.md): the sample prints the
object's name and the piece each reference stands for, and ends after the one flagged
MQRMHF_LAST (or when nothing more arrives within --wait seconds: exit status 1).
"""

from __future__ import annotations

import argparse

import mqconn

import ferrymq.pymqi as pymqi
from ferrymq.errors import DecodeError
from ferrymq.pymqi import CMQC
from ferrymq.wire.mqrmh import MQRMH


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amqsgrm", description="Read reference messages until the last piece.")
    parser.add_argument("queue", help="queue the references arrive on")
    mqconn.add_connection_args(parser)
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for each reference (default 30)")
    args = parser.parse_args(argv)

    print("Sample AMQSGRM0 start")
    try:
        qmgr = mqconn.connect(args)
    except pymqi.MQMIError as e:
        print(f"MQCONNX ended with reason code {mqconn.reason(e.reason)}")
        return 1
    queue = pymqi.Queue(qmgr, args.queue, CMQC.MQOO_INPUT_AS_Q_DEF | CMQC.MQOO_FAIL_IF_QUIESCING)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT | CMQC.MQGMO_FAIL_IF_QUIESCING,
                    WaitInterval=int(args.wait * 1000))
    status, pieces, total = 1, 0, 0
    while True:
        md = pymqi.MD()
        try:
            data = queue.get(None, md, gmo)
        except pymqi.MQMIError as e:
            print(f"MQGET ended with reason code {mqconn.reason(e.reason)}")
            break
        if md.Format.rstrip() != CMQC.MQFMT_REF_MSG_HEADER.rstrip():
            print(f"not a reference message (Format {md.Format!r}), {len(data)} bytes")
            continue
        try:
            rmh = MQRMH.unpack_from(data)
        except DecodeError as e:
            print(f"a malformed MQRMH: {e}")
            continue
        pieces += 1
        total += rmh.data_logical_length
        last = bool(rmh.flags & CMQC.MQRMHF_LAST)
        print(f"reference {rmh.dest_name or rmh.src_name}: offset {rmh.logical_offset} length "
              f"{rmh.data_logical_length}{' LAST' if last else ''} ({len(data)} bytes on the queue)")
        if last:
            print(f"object {rmh.dest_name or rmh.src_name} complete: {pieces} references, {total} bytes")
            status = 0
            break
    queue.close()
    qmgr.disconnect()
    print("Sample AMQSGRM0 end")
    return status


if __name__ == "__main__":
    mqconn.run(main)
