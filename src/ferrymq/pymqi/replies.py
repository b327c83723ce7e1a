"""ferrymq's additions to the pymqi API: the MD of a reply or report built from the message it
answers, by that message's Report options (the rules: ferrymq.client.replies).

    md = pymqi.reply_md(request_md)                  # MsgType REPLY, MsgId/CorrelId per Report
    qmgr.put1(pymqi.OD(ObjectName=request_md.ReplyToQ), b"answer", md)
    md = pymqi.report_md(request_md, CMQC.MQFB_PAN)  # None when the request did not ask for a PAN

pymqi itself has no such helpers; programs that use them run on ferrymq only.
"""

from __future__ import annotations

from ferrymq.client import replies
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.pymqi.errors import from_mq_error
from ferrymq.pymqi.structs import MD
from ferrymq.wire.mqmd import MQMD


def _md_of(md: MD) -> MQMD:
    return MQMD.decode(md.pack())


def _as_md(mqmd: MQMD) -> MD:
    out = MD()
    out.unpack(mqmd.pack())
    return out


def reply_md(request: MD, feedback: int = C.MQFB_NONE, format: bytes | str = C.MQFMT_STRING) -> MD:
    """The MD for a reply to the message whose MD is ``request``.

    Raises:
        MQMIError: MQRC_MISSING_REPLY_TO_Q when the request names no ReplyToQ.
    """
    fmt = format.decode("ascii") if isinstance(format, bytes) else format
    try:
        return _as_md(replies.reply_md(_md_of(request), feedback=feedback, format=fmt))
    except MQError as exc:
        raise from_mq_error(exc) from None


def report_md(original: MD, feedback: int) -> MD | None:
    """The MD for a PAN, NAN or exception report on ``original``; None when it did not ask for one.

    Raises:
        MQMIError: MQRC_MISSING_REPLY_TO_Q when the original names no ReplyToQ.
    """
    md = _md_of(original)
    if not replies.wants_report(md, feedback):
        return None
    try:
        return _as_md(replies.report_md(md, feedback))
    except MQError as exc:
        raise from_mq_error(exc) from None
