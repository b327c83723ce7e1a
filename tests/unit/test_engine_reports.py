"""Queue-manager-generated reports (COA, COD, expiration), table-driven over the report
options: data amount x MsgId option x CorrelId option x where the report can go x unit of
work. Each case checks the report's whole MQMD byte for byte against one built field by
field from the rules, and what lands on the dead-letter queue."""

from __future__ import annotations

import itertools

import pytest
from engine_helpers import Env

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD

DLQ = "SYSTEM.DEAD.LETTER.QUEUE"
BODY = bytes(range(256)) * 2  # 512 bytes: "first 100" and "full" differ
ORIG_MSG_ID = b"ORIGINAL-MSG-ID".ljust(24, b".")
ORIG_CORREL = b"ORIGINAL-CORREL".ljust(24, b"-")

KINDS = {  # name: (option family base, with data, full data, feedback)
    "coa": (C.MQRO_COA, C.MQRO_COA_WITH_DATA, C.MQRO_COA_WITH_FULL_DATA, C.MQFB_COA),
    "cod": (C.MQRO_COD, C.MQRO_COD_WITH_DATA, C.MQRO_COD_WITH_FULL_DATA, C.MQFB_COD),
    "expiry": (C.MQRO_EXPIRATION, C.MQRO_EXPIRATION_WITH_DATA, C.MQRO_EXPIRATION_WITH_FULL_DATA, C.MQFB_EXPIRATION),
}
AMOUNTS = {"none": 0, "100": 1, "full": 2}
ROUTES = ("deliver", "dead-letter", "discard")
UOWS = ("none", "commit", "backout")

CASES = list(itertools.product(KINDS, AMOUNTS, (False, True), (False, True), ROUTES, UOWS))


def case_id(case: tuple[object, ...]) -> str:
    kind, amount, pass_msg, pass_correl, route, uow = case
    return f"{kind}-{amount}-{'passmsg' if pass_msg else 'newmsg'}-{'passcorr' if pass_correl else 'copycorr'}-{route}-uow_{uow}"


def setup(env: Env, route: str) -> tuple[int, int, int]:
    env.define("APP")
    env.define("REPLYQ", MAXDEPTH=1 if route != "deliver" else 5000)
    app = env.open("APP")
    reply = env.open("REPLYQ")
    dlq = env.open(DLQ)
    if route != "deliver":
        env.put(reply, b"filler")  # REPLYQ is full: the report cannot go there
    return app, reply, dlq


def expected_report(orig: MQMD, kind: str, report_opts: int, actual: MQMD) -> MQMD:
    """The report's MQMD from the rules, taking only the generated MsgId and timestamps from ``actual``."""
    pass_on = bool(report_opts & C.MQRO_PASS_DISCARD_AND_EXPIRY)
    return MQMD(
        version=2, report=(report_opts & C.MQRO_DISCARD_MSG) if pass_on else 0, msg_type=C.MQMT_REPORT,
        expiry=C.MQEI_UNLIMITED, feedback=KINDS[kind][3], encoding=orig.encoding,
        coded_char_set_id=orig.coded_char_set_id, format=orig.format, priority=orig.priority,
        persistence=orig.persistence,
        msg_id=orig.msg_id if report_opts & C.MQRO_PASS_MSG_ID else actual.msg_id,
        correl_id=orig.correl_id if report_opts & C.MQRO_PASS_CORREL_ID else orig.msg_id,
        backout_count=0, reply_to_q="", reply_to_q_mgr="QM1", user_identifier=orig.user_identifier,
        accounting_token=orig.accounting_token, appl_identity_data=orig.appl_identity_data,
        put_appl_type=C.MQAT_QMGR, put_appl_name="QM1", put_date=actual.put_date, put_time=actual.put_time,
    )


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_report(env: Env, case: tuple[str, str, bool, bool, str, str]) -> None:
    kind, amount, pass_msg, pass_correl, route, uow = case
    app, reply, dlq = setup(env, route)
    report_opts = KINDS[kind][AMOUNTS[amount]]
    report_opts |= (C.MQRO_PASS_MSG_ID if pass_msg else 0) | (C.MQRO_PASS_CORREL_ID if pass_correl else 0)
    if route == "discard":
        report_opts |= C.MQRO_DISCARD_MSG | C.MQRO_PASS_DISCARD_AND_EXPIRY
    expiry = 5 if kind == "expiry" else C.MQEI_UNLIMITED
    in_put_uow = uow != "none" and kind == "coa"
    in_get_uow = uow != "none" and kind == "cod"
    put = env.put(app, BODY, pmo=C.MQPMO_SYNCPOINT if in_put_uow else C.MQPMO_NO_SYNCPOINT, version=2,
                  msg_id=ORIG_MSG_ID, correl_id=ORIG_CORREL, report=report_opts, reply_to_q="REPLYQ", priority=4,
                  persistence=C.MQPER_PERSISTENT, format=C.MQFMT_NONE, expiry=expiry)
    orig = put.md
    dlq_before = env.depth(DLQ)
    if kind == "coa" and uow != "none":
        assert env.depth("REPLYQ") == (0 if route == "deliver" else 1)  # nothing before the commit
        (env.qm.commit if uow == "commit" else env.qm.backout)(env.hconn)
    elif kind == "cod":
        env.get(app, C.MQGMO_SYNCPOINT if in_get_uow else C.MQGMO_NO_SYNCPOINT)
        if uow != "none":
            (env.qm.commit if uow == "commit" else env.qm.backout)(env.hconn)
    elif kind == "expiry":
        env.clock.advance(1.0)
        with pytest.raises(MQError):
            env.get(app, C.MQGMO_BROWSE_FIRST)  # the search meets it expired and discards it
    produced = not (uow == "backout" and kind in ("coa", "cod"))
    if route == "deliver":
        if not produced:
            assert env.depth("REPLYQ") == 0
            return
        got = env.get(reply)
        want = expected_report(orig, kind, report_opts, got.md)
        assert got.md.pack() == want.pack()
        assert got.data == {"none": b"", "100": BODY[:100], "full": BODY}[amount]
        assert env.depth(DLQ) == dlq_before
        return
    env.get(reply)  # the filler
    if route == "discard" or not produced:
        assert env.depth(DLQ) == dlq_before and env.depth("REPLYQ") == 0
        return
    dead = env.get(dlq)
    dlh = MQDLH.unpack_from(dead.data)
    want_dlh = MQDLH(reason=C.MQRC_Q_FULL, dest_q_name="REPLYQ", dest_q_mgr_name="QM1", encoding=orig.encoding,
                     coded_char_set_id=orig.coded_char_set_id, format=orig.format, put_appl_type=C.MQAT_QMGR,
                     put_appl_name="QM1", put_date=dlh.put_date, put_time=dlh.put_time)
    assert dead.data[:172] == want_dlh.pack()  # the MQDLH byte for byte (its timestamps are the queue manager's)
    assert len(dlh.put_date.strip()) == 8 and len(dlh.put_time.strip()) == 8
    assert dead.md.format.strip() == "MQDEAD"
    want = expected_report(orig, kind, report_opts, dead.md).replace(format=C.MQFMT_DEAD_LETTER_HEADER.rstrip(),
                                                                       coded_char_set_id=dead.md.coded_char_set_id,
                                                                       encoding=C.MQENC_NATIVE)
    assert dead.md.pack() == want.pack()
    assert dead.data[MQDLH.unpack_from(dead.data).pack().__len__():] == {"none": b"", "100": BODY[:100],
                                                                        "full": BODY}[amount]


def test_no_cod_on_browse_and_no_confirmation_for_dead_letter_format(env: Env) -> None:
    env.define("APP")
    env.define("REPLYQ")
    app, reply = env.open("APP"), env.open("REPLYQ")
    env.put(app, b"x", report=C.MQRO_COD, reply_to_q="REPLYQ")
    env.get(app, C.MQGMO_BROWSE_FIRST)
    assert env.depth("REPLYQ") == 0
    env.get(app)
    assert env.depth("REPLYQ") == 1
    env.get(reply)
    env.put(app, MQDLH().pack(), report=C.MQRO_COA | C.MQRO_COD, reply_to_q="REPLYQ",
            format=C.MQFMT_DEAD_LETTER_HEADER)
    env.get(app)
    assert env.depth("REPLYQ") == 0


def test_report_with_data_keeps_leading_headers(env: Env) -> None:
    from ferrymq.wire.mqmde import MQMDE

    env.define("APP")
    env.define("REPLYQ")
    app, reply = env.open("APP"), env.open("REPLYQ")
    mde = MQMDE(format=C.MQFMT_STRING).pack()  # an MQ header ahead of the data
    env.put(app, mde + b"y" * 300, report=C.MQRO_COA_WITH_DATA, reply_to_q="REPLYQ", format=C.MQFMT_MD_EXTENSION)
    got = env.get(reply)
    assert got.data == mde + b"y" * 100  # the header, then 100 bytes of data after it


def test_pass_discard_and_expiry_passes_the_remaining_expiry(env: Env) -> None:
    env.define("APP")
    env.define("REPLYQ")
    app, reply = env.open("APP"), env.open("REPLYQ")
    env.put(app, b"x", report=C.MQRO_COD | C.MQRO_PASS_DISCARD_AND_EXPIRY, reply_to_q="REPLYQ", expiry=600)
    env.clock.advance(10.0)
    env.get(app)
    got = env.get(reply)
    assert got.md.report == C.MQRO_NONE and 490 <= got.md.expiry <= 500


def test_unknown_reply_queue_dead_letters_with_2085_and_remote_qmgr_with_2087(env: Env) -> None:
    env.define("APP")
    app, dlq = env.open("APP"), env.open(DLQ)
    env.put(app, b"x", report=C.MQRO_COA, reply_to_q="NOWHERE")
    assert MQDLH.unpack_from(env.get(dlq).data).reason == C.MQRC_UNKNOWN_OBJECT_NAME
    env.put(app, b"x", report=C.MQRO_COA, reply_to_q="Q", reply_to_q_mgr="OTHERQM")
    assert MQDLH.unpack_from(env.get(dlq).data).reason == C.MQRC_UNKNOWN_REMOTE_Q_MGR


def test_reports_survive_restart(env: Env) -> None:
    env.define("APP")
    env.define("REPLYQ")
    app = env.open("APP")
    env.put(app, b"x", report=C.MQRO_COA, reply_to_q="REPLYQ", persistence=C.MQPER_PERSISTENT)
    env.journal.sync()
    from ferrymq.engine.qmgr import QueueManager

    again = QueueManager.start("QM1", env.journal.crash(), env.clock)
    assert again.objects.require("REPLYQ").messages.depth == 1


@pytest.mark.parametrize("discard", [False, True])
def test_exception_report_when_a_poison_message_cannot_be_delivered(env: Env, discard: bool) -> None:
    env.define("APP", BOTHRESH=1)
    env.define("REPLYQ")
    app, reply, dlq = env.open("APP"), env.open("REPLYQ"), env.open(DLQ)
    report = C.MQRO_EXCEPTION_WITH_DATA | (C.MQRO_DISCARD_MSG if discard else 0)
    sent = env.put(app, BODY, report=report, reply_to_q="REPLYQ", persistence=C.MQPER_PERSISTENT)
    env.get(app, C.MQGMO_SYNCPOINT)
    env.qm.backout(env.hconn)  # BackoutCount reaches BOTHRESH: it cannot go back to APP
    exc = env.get(reply)
    assert exc.md.msg_type == C.MQMT_REPORT and exc.md.feedback == C.MQRC_BACKOUT_THRESHOLD_REACHED
    assert exc.md.correl_id == sent.md.msg_id and exc.data == BODY[:100]
    assert env.depth("APP") == 0
    if discard:
        assert env.depth(DLQ) == 0  # MQRO_DISCARD_MSG: discarded instead of dead-lettered
    else:
        assert MQDLH.unpack_from(env.get(dlq).data).reason == C.MQRC_BACKOUT_THRESHOLD_REACHED
    env.journal.sync()
    from ferrymq.engine.qmgr import QueueManager

    again = QueueManager.start("QM1", env.journal.crash(), env.clock)
    assert again.objects.require("APP").messages.depth == 0  # the discard is durable too


EXC_CASES = list(itertools.product(AMOUNTS, (False, True), (False, True), (False, True)))


@pytest.mark.parametrize("case", EXC_CASES, ids=["-".join(map(str, c)) for c in EXC_CASES])
def test_exception_report_mqmd(env: Env, case: tuple[str, bool, bool, bool]) -> None:
    """Exception reports over data amount x MsgId option x CorrelId option x discard: the
    report's MQMD byte for byte, its data, and the original's MQDLH (or its discard)."""
    amount, pass_msg, pass_correl, discard = case
    env.define("APP", BOTHRESH=1)
    env.define("REPLYQ")
    app, reply, dlq = env.open("APP"), env.open("REPLYQ"), env.open(DLQ)
    report = (C.MQRO_EXCEPTION, C.MQRO_EXCEPTION_WITH_DATA, C.MQRO_EXCEPTION_WITH_FULL_DATA)[AMOUNTS[amount]]
    report |= (C.MQRO_PASS_MSG_ID if pass_msg else 0) | (C.MQRO_PASS_CORREL_ID if pass_correl else 0)
    report |= C.MQRO_DISCARD_MSG if discard else 0
    orig = env.put(app, BODY, version=2, msg_id=ORIG_MSG_ID, correl_id=ORIG_CORREL, report=report,
                   reply_to_q="REPLYQ", priority=7, persistence=C.MQPER_NOT_PERSISTENT, format=C.MQFMT_STRING).md
    env.get(app, C.MQGMO_SYNCPOINT)
    env.qm.backout(env.hconn)  # BackoutCount reaches BOTHRESH: the queue manager cannot deliver it
    exc = env.get(reply)
    want = expected_report(orig, "coa", report, exc.md).replace(feedback=C.MQRC_BACKOUT_THRESHOLD_REACHED)
    assert exc.md.pack() == want.pack()
    assert exc.data == {"none": b"", "100": BODY[:100], "full": BODY}[amount]
    if discard:
        assert env.depth(DLQ) == 0
        return
    dead = env.get(dlq)
    dlh = MQDLH.unpack_from(dead.data)
    want_dlh = MQDLH(reason=C.MQRC_BACKOUT_THRESHOLD_REACHED, dest_q_name="APP", dest_q_mgr_name="QM1",
                     encoding=orig.encoding, coded_char_set_id=orig.coded_char_set_id, format=orig.format,
                     put_appl_type=C.MQAT_QMGR, put_appl_name="QM1", put_date=dlh.put_date, put_time=dlh.put_time)
    assert dead.data == want_dlh.pack() + BODY
    assert dead.md.msg_id == ORIG_MSG_ID and dead.md.correl_id == ORIG_CORREL and dead.md.report == report
