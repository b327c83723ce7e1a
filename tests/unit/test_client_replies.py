"""Replies and application reports (PAN, NAN, exception) built from the message they answer:
a table over feedback kind x data option x MsgId/CorrelId options x PASS_DISCARD_AND_EXPIRY,
each MQMD checked byte for byte; and the pymqi-side helpers."""

from __future__ import annotations

import itertools

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.client import replies
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD, NONE_ID

ORIG = MQMD(version=2, msg_id=b"M" * 24, correl_id=b"C" * 24, reply_to_q="REPLYQ", reply_to_q_mgr="QM1",
            priority=7, persistence=1, format="MQSTR", coded_char_set_id=1208, expiry=450)
BODY = b"z" * 300

KINDS = {"pan": (C.MQFB_PAN, C.MQRO_PAN), "nan": (C.MQFB_NAN, C.MQRO_NAN),
         "exception": (C.MQFB_APPL_FIRST + 1, C.MQRO_EXCEPTION)}
DATA = {"none": 0, "100": C.MQRO_EXCEPTION_WITH_DATA, "full": C.MQRO_EXCEPTION_WITH_FULL_DATA}
CASES = list(itertools.product(KINDS, DATA, (False, True), (False, True), (False, True), (False, True)))


@pytest.mark.parametrize("case", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_application_report(case: tuple[str, str, bool, bool, bool, bool]) -> None:
    kind, data, pass_msg, pass_correl, pass_discard, asked = case
    feedback, option = KINDS[kind]
    report = (option if asked else 0) | (DATA[data] if kind == "exception" and asked else 0)
    report |= (C.MQRO_PASS_MSG_ID if pass_msg else 0) | (C.MQRO_PASS_CORREL_ID if pass_correl else 0)
    report |= (C.MQRO_PASS_DISCARD_AND_EXPIRY | C.MQRO_DISCARD_MSG) if pass_discard else 0
    orig = ORIG.replace(report=report)
    plan = replies.plan_report(orig, BODY, feedback, None)
    if not asked:
        assert plan is None
        return
    assert plan is not None
    queue, md, body = plan
    want = MQMD(version=2, report=C.MQRO_DISCARD_MSG if pass_discard else 0, msg_type=C.MQMT_REPORT,
                expiry=450 if pass_discard else C.MQEI_UNLIMITED, feedback=feedback, encoding=orig.encoding,
                coded_char_set_id=1208, format="MQSTR", priority=7, persistence=1,
                msg_id=orig.msg_id if pass_msg else NONE_ID, correl_id=orig.correl_id if pass_correl else orig.msg_id)
    assert queue == "REPLYQ" and md.pack() == want.pack()
    if kind != "exception":
        assert body == b""
    else:
        assert body == {"none": b"", "100": BODY[:100], "full": BODY}[data]


@pytest.mark.parametrize(("report", "msg_id", "correl_id"), [
    (0, NONE_ID, b"M" * 24), (C.MQRO_PASS_MSG_ID, b"M" * 24, b"M" * 24),
    (C.MQRO_PASS_CORREL_ID, NONE_ID, b"C" * 24), (C.MQRO_PASS_MSG_ID | C.MQRO_PASS_CORREL_ID, b"M" * 24, b"C" * 24),
])
def test_reply_identifiers(report: int, msg_id: bytes, correl_id: bytes) -> None:
    queue, md = replies.plan_reply(ORIG.replace(report=report, msg_type=C.MQMT_REQUEST), "answer", C.MQFB_NONE, None,
                                   None)
    assert (queue, md.msg_type, md.msg_id, md.correl_id) == ("REPLYQ", C.MQMT_REPLY, msg_id, correl_id)
    assert (md.format.strip(), md.coded_char_set_id, md.priority, md.persistence) == ("MQSTR", 1208, 7, 1)
    assert md.report == 0 and md.expiry == C.MQEI_UNLIMITED


def test_exception_data_keeps_leading_headers() -> None:
    dlh = MQDLH(format="MQSTR").pack()
    orig = ORIG.replace(format="MQDEAD", report=C.MQRO_EXCEPTION_WITH_DATA)
    assert replies.exception_data(orig, dlh + BODY) == dlh + BODY[:100]


def test_no_reply_queue() -> None:
    with pytest.raises(MQError) as ei:
        replies.plan_reply(ORIG.replace(reply_to_q=""), b"x", C.MQFB_NONE, None, None)
    assert ei.value.reason == C.MQRC_MISSING_REPLY_TO_Q


def test_pymqi_helpers() -> None:
    request = pymqi.MD(MsgId=b"M" * 24, CorrelId=b"C" * 24, ReplyToQ=b"REPLYQ", MsgType=C.MQMT_REQUEST,
                       Report=C.MQRO_PASS_CORREL_ID | C.MQRO_NAN)
    md = pymqi.reply_md(request)
    assert md.MsgType == C.MQMT_REPLY and md.CorrelId == b"C" * 24 and md.MsgId == NONE_ID
    assert md.Format.rstrip() == b"MQSTR"
    assert pymqi.report_md(request, C.MQFB_PAN) is None
    nan = pymqi.report_md(request, C.MQFB_NAN)
    assert nan is not None and nan.MsgType == C.MQMT_REPORT and nan.Feedback == C.MQFB_NAN
    with pytest.raises(pymqi.MQMIError) as ei:
        pymqi.reply_md(pymqi.MD(MsgType=C.MQMT_REQUEST))
    assert ei.value.reason == C.MQRC_MISSING_REPLY_TO_Q
