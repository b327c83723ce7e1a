#!/usr/bin/env python3
"""amqsbcg: browse a queue and print each message's descriptor and body (like IBM's AMQSBCG0).

    python samples/amqsbcg.py Q1 QM1 --conn 'localhost(1414)'

Messages stay on the queue. Each is shown with its MQMD field by field and its data as
a hex and character dump. Written against ferrymq.pymqi: an example of browsing with
MQGMO_BROWSE_FIRST / MQGMO_BROWSE_NEXT.
"""

from __future__ import annotations

import argparse

import mqconn

import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC


def chars(value: bytes) -> str:
    return value.decode("latin-1").replace("\0", " ")


def hexid(value: bytes) -> str:
    return "X'" + value.hex().upper() + "'"


def format_md(md: pymqi.MD) -> str:
    """The descriptor laid out as AMQSBCG0 lays it out."""
    lines = [
        "****Message descriptor****",
        "",
        f"  StrucId  : '{chars(md.StrucId)}'  Version : {md.Version}",
        f"  Report   : {md.Report}  MsgType : {md.MsgType}",
        f"  Expiry   : {md.Expiry}  Feedback : {md.Feedback}",
        f"  Encoding : {md.Encoding}  CodedCharSetId : {md.CodedCharSetId}",
        f"  Format : '{chars(md.Format)}'",
        f"  Priority : {md.Priority}  Persistence : {md.Persistence}",
        f"  MsgId : {hexid(md.MsgId)}",
        f"  CorrelId : {hexid(md.CorrelId)}",
        f"  BackoutCount : {md.BackoutCount}",
        f"  ReplyToQ       : '{chars(md.ReplyToQ)}'",
        f"  ReplyToQMgr    : '{chars(md.ReplyToQMgr)}'",
        "  ** Identity Context",
        f"  UserIdentifier : '{chars(md.UserIdentifier)}'",
        "  AccountingToken : ",
        f"   {hexid(md.AccountingToken)}",
        f"  ApplIdentityData : '{chars(md.ApplIdentityData)}'",
        "  ** Origin Context",
        f"  PutApplType    : '{md.PutApplType}'",
        f"  PutApplName    : '{chars(md.PutApplName)}'",
        f"  PutDate  : '{chars(md.PutDate)}'    PutTime  : '{chars(md.PutTime)}'",
        f"  ApplOriginData : '{chars(md.ApplOriginData)}'",
    ]
    if md.Version >= CMQC.MQMD_VERSION_2:
        lines += [
            "",
            f"  GroupId : {hexid(md.GroupId)}",
            f"  MsgSeqNumber   : '{md.MsgSeqNumber}'",
            f"  Offset         : '{md.Offset}'",
            f"  MsgFlags       : '{md.MsgFlags}'",
            f"  OriginalLength : '{md.OriginalLength}'",
        ]
    return "\n".join(lines)


def dump(data: bytes) -> str:
    """16 bytes a line: offset, hex in groups of two bytes, then the printable characters."""
    lines = []
    for offset in range(0, len(data), 16):
        chunk = data[offset:offset + 16]
        groups = " ".join(chunk[i:i + 2].hex().upper() for i in range(0, len(chunk), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{offset:08X}:  {groups:<39}  '{text:<16}'")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amqsbcg", description="Browse messages: descriptor and hex dump.")
    parser.add_argument("queue", help="queue to browse")
    mqconn.add_connection_args(parser)
    parser.add_argument("--max-length", type=int, default=64 * 1024, help="bytes of each message to show")
    args = parser.parse_args(argv)

    print("AMQSBCG0 - starts here")
    print("**********************")
    print()
    try:
        qmgr = mqconn.connect(args)
    except pymqi.MQMIError as e:
        print(f" MQCONNX failed, CompCode:{e.comp} Reason:{mqconn.reason(e.reason)}")
        return 1
    print(f" MQOPEN - '{args.queue}'")
    try:
        queue = pymqi.Queue(qmgr, args.queue, CMQC.MQOO_BROWSE | CMQC.MQOO_FAIL_IF_QUIESCING)
    except pymqi.MQMIError as e:
        print(f" MQOPEN failed, CompCode:{e.comp} Reason:{mqconn.reason(e.reason)}")
        qmgr.disconnect()
        return 1
    print()

    gmo = pymqi.GMO(Options=CMQC.MQGMO_BROWSE_FIRST | CMQC.MQGMO_ACCEPT_TRUNCATED_MSG | CMQC.MQGMO_NO_WAIT)
    number = 0
    status = 0
    while True:
        md = pymqi.MD(Version=CMQC.MQMD_VERSION_2)  # as IBM's amqsbcg: the whole version 2 descriptor
        try:
            data = queue.get(args.max_length, md, gmo)
            comp, reason, length = CMQC.MQCC_OK, CMQC.MQRC_NONE, len(data)
        except pymqi.MQMIError as e:
            if e.reason == CMQC.MQRC_NO_MSG_AVAILABLE:
                print(" No more messages ")
                break
            if e.reason != CMQC.MQRC_TRUNCATED_MSG_ACCEPTED:
                print(f" MQGET failed, CompCode:{e.comp} Reason:{mqconn.reason(e.reason)}")
                status = 1
                break
            data, comp, reason, length = e.message, e.comp, e.reason, e.original_length
        number += 1
        print()
        print(f" MQGET of message number {number}, CompCode:{comp} Reason:{reason}")
        print(format_md(md))
        print(" ")
        print("****   Message      ****")
        print(" ")
        print(f" length - {length} of {length} bytes" if len(data) == length
              else f" length - {len(data)} of {length} bytes")
        print(" ")
        print(dump(data))
        print(" ")
        gmo.Options = CMQC.MQGMO_BROWSE_NEXT | CMQC.MQGMO_ACCEPT_TRUNCATED_MSG | CMQC.MQGMO_NO_WAIT

    print(" MQCLOSE")
    queue.close()
    print(" MQDISC")
    qmgr.disconnect()
    return status


if __name__ == "__main__":
    mqconn.run(main)
