#!/usr/bin/env python3
"""report_watch: print the report messages arriving on a reply queue, feedback decoded.

    python samples/report_watch.py REPLY.Q QM1 --conn 'localhost(1414)' --wait 5

For each report: its Feedback as a name (MQFB_COA, MQFB_COD, MQFB_EXPIRATION, MQFB_PAN,
MQFB_NAN, MQFB_QUIT ..., an MQRC_* reason when the feedback is a reason code, or
"application feedback N" in MQFB_APPL_FIRST..LAST), the CorrelId that ties it to the
message it is about, who generated it and how much of the original's data it carries.
Other messages are listed as such. Ends when nothing arrives within --wait seconds.
"""

from __future__ import annotations

import argparse
import sys

import ferrymq.client as fc
from ferrymq.errors import reason_name
from ferrymq.mq import constants as C

_FEEDBACK = {v: k for k, v in vars(C).items() if k.startswith("MQFB_") and isinstance(v, int)
             and not k.endswith(("_FIRST", "_LAST"))}


def feedback_name(feedback: int) -> str:
    if feedback in _FEEDBACK:
        return _FEEDBACK[feedback]
    if C.MQFB_APPL_FIRST <= feedback <= C.MQFB_APPL_LAST:
        return f"application feedback {feedback}"
    return reason_name(feedback)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="report_watch", description="Print the reports arriving on a queue.")
    parser.add_argument("queue", help="the reply queue reports arrive on")
    parser.add_argument("qmgr", nargs="?", default="", help="queue manager name")
    parser.add_argument("--conn", default="localhost(1414)", help="connection name (default localhost(1414))")
    parser.add_argument("--wait", type=float, default=5.0, help="seconds to wait for the next message (default 5)")
    parser.add_argument("--browse", action="store_true", help="leave the messages on the queue")
    args = parser.parse_args(argv)
    try:
        with fc.connect(args.qmgr, args.conn) as qm:
            q = qm.open(args.queue)
            messages = q.browse(wait=args.wait) if args.browse else q.messages(wait=args.wait)
            for m in messages:
                md = m.md
                if md.msg_type != C.MQMT_REPORT:
                    print(f"not a report: MsgType {md.msg_type}, {m.data_length} bytes")
                    continue
                print(f"{feedback_name(md.feedback)} ({md.feedback}) correl_id={m.correl_id.hex()} "
                      f"from={md.put_appl_name.strip() or '?'} data={m.data_length} bytes")
    except fc.MQError as exc:
        print(f"ended with reason code {exc.reason} ({exc.reason_name})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
