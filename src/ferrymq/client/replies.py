"""Replies and application reports built from the message they answer, honouring its Report
options exactly as IBM MQ asks of server applications (shared by both clients).

- MsgId: the request's when it asked MQRO_PASS_MSG_ID, else a new one (the queue manager
  makes it); CorrelId: the request's CorrelId with MQRO_PASS_CORREL_ID, else its MsgId.
- Priority and Persistence as the request's (the application may override them).
- MQRO_PASS_DISCARD_AND_EXPIRY: the answer carries the request's MQRO_DISCARD_MSG and its
  remaining Expiry; otherwise Report MQRO_NONE and unlimited Expiry.
- It goes to the request's ReplyToQ at ReplyToQMgr; none named is MQRC_MISSING_REPLY_TO_Q.
- A report (MsgType REPORT) is sent only when the original asked for that kind: MQRO_PAN
  for MQFB_PAN, MQRO_NAN for MQFB_NAN, MQRO_EXCEPTION* for any other feedback. An exception
  report carries the data its option asks for (none, the leading MQ headers plus 100 bytes,
  or all of it) unless the application gives its own.
"""

from __future__ import annotations

from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import constants as C
from ferrymq.wire.headers import report_data
from ferrymq.wire.mqmd import MQMD, NONE_ID


def _answer(original: MQMD, msg_type: int, feedback: int, fmt: str | None, ccsid: int | None,
            priority: int | None, persistent: bool | None) -> MQMD:
    if not original.reply_to_q.strip():
        raise MQError(C.MQCC_FAILED, C.MQRC_MISSING_REPLY_TO_Q,
                      "the message names no ReplyToQ: there is nowhere to send the answer")
    report = original.report
    pass_on = bool(report & C.MQRO_PASS_DISCARD_AND_EXPIRY)
    return MQMD(
        version=C.MQMD_VERSION_2,
        report=(report & C.MQRO_DISCARD_MSG) if pass_on else C.MQRO_NONE,
        msg_type=msg_type,
        expiry=original.expiry if pass_on else C.MQEI_UNLIMITED,
        feedback=feedback,
        encoding=original.encoding if fmt is None else C.MQENC_NATIVE,
        coded_char_set_id=(original.coded_char_set_id if fmt is None else 1208) if ccsid is None else ccsid,
        format=original.format if fmt is None else fmt,
        priority=original.priority if priority is None else priority,
        persistence=original.persistence if persistent is None else int(persistent),
        msg_id=original.msg_id if report & C.MQRO_PASS_MSG_ID else NONE_ID,
        correl_id=original.correl_id if report & C.MQRO_PASS_CORREL_ID else original.msg_id,
    )


def reply_md(request: MQMD, *, feedback: int = C.MQFB_NONE, format: str | None = C.MQFMT_STRING,
             ccsid: int | None = None, priority: int | None = None, persistent: bool | None = None) -> MQMD:
    """The MQMD of a reply (MsgType REPLY) to ``request``.

    Raises:
        MQError: MQRC_MISSING_REPLY_TO_Q when the request names no ReplyToQ.
    """
    return _answer(request, C.MQMT_REPLY, feedback, format, ccsid, priority, persistent)


def wants_report(original: MQMD, feedback: int) -> bool:
    """Did ``original`` ask for a report with this feedback?"""
    if feedback == C.MQFB_PAN:
        return bool(original.report & C.MQRO_PAN)
    if feedback == C.MQFB_NAN:
        return bool(original.report & C.MQRO_NAN)
    return bool(original.report & C.MQRO_EXCEPTION)


def report_md(original: MQMD, feedback: int) -> MQMD:
    """The MQMD of an application report (PAN, NAN or an exception) on ``original``.

    Raises:
        MQError: MQRC_MISSING_REPLY_TO_Q when the original names no ReplyToQ.
    """
    return _answer(original, C.MQMT_REPORT, feedback, None, None, None, None)


def exception_data(original: MQMD, data: bytes) -> bytes:
    """What an exception report on ``original`` carries of its data, by its Report option."""
    report = original.report
    if report & C.MQRO_EXCEPTION_WITH_FULL_DATA == C.MQRO_EXCEPTION_WITH_FULL_DATA:
        return data
    if report & C.MQRO_EXCEPTION_WITH_DATA != C.MQRO_EXCEPTION_WITH_DATA:
        return b""
    try:
        return report_data(data, original.format, original.encoding, original.coded_char_set_id, 100)
    except DecodeError:
        return data[:100]


def plan_reply(request: MQMD, data: bytes | str, feedback: int, priority: int | None,
               persistent: bool | None) -> tuple[str, MQMD]:
    """Where a reply to ``request`` goes and its MQMD (text data is sent as MQSTR in UTF-8).

    Raises:
        MQError: MQRC_MISSING_REPLY_TO_Q.
    """
    text = isinstance(data, str)
    md = reply_md(request, feedback=feedback, format=C.MQFMT_STRING if text else C.MQFMT_NONE,
                  ccsid=1208 if text else None, priority=priority, persistent=persistent)
    return request.reply_to_q.strip(), md


def plan_report(original: MQMD, original_data: bytes, feedback: int,
                data: bytes | None) -> tuple[str, MQMD, bytes] | None:
    """Where an application report on ``original`` goes, its MQMD and data; None when the
    original did not ask for this kind of report.

    Raises:
        MQError: MQRC_MISSING_REPLY_TO_Q.
    """
    if not wants_report(original, feedback):
        return None
    if data is None:
        data = b"" if feedback in (C.MQFB_PAN, C.MQFB_NAN) else exception_data(original, original_data)
    return original.reply_to_q.strip(), report_md(original, feedback), data

