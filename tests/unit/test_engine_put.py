"""MQPUT/MQPUT1 rules: IBM's reason for each refusal, and nothing changes after one."""

from __future__ import annotations

import time

import pytest
from engine_helpers import Env

from ferrymq.engine.api import GetOptions, ObjectDescriptor, PutOptions
from ferrymq.engine.message import md_column
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD, NONE_ID


def refuse(env: Env, hobj: int, reason: int, data: bytes = b"x", pmo: int = 0, **md: object) -> None:
    before = env.depth("Q1")
    with pytest.raises(MQError) as e:
        env.put(hobj, data, pmo=pmo, **md)
    assert (e.value.comp, e.value.reason) == (C.MQCC_FAILED, reason), e.value
    assert env.depth("Q1") == before


@pytest.mark.parametrize(
    ("md", "reason"),
    [
        ({"msg_type": 0}, C.MQRC_MSG_TYPE_ERROR),
        ({"msg_type": 3}, C.MQRC_MSG_TYPE_ERROR),
        ({"expiry": 0}, C.MQRC_EXPIRY_ERROR),
        ({"expiry": -2}, C.MQRC_EXPIRY_ERROR),
        ({"feedback": -5}, C.MQRC_FEEDBACK_ERROR),
        ({"persistence": 3}, C.MQRC_PERSISTENCE_ERROR),
        ({"priority": -2}, C.MQRC_PRIORITY_ERROR),
        ({"msg_type": C.MQMT_REQUEST}, C.MQRC_MISSING_REPLY_TO_Q),
        ({"report": C.MQRO_COA}, C.MQRC_MISSING_REPLY_TO_Q),
        ({"report": C.MQRO_COD_WITH_FULL_DATA}, C.MQRC_MISSING_REPLY_TO_Q),
        ({"report": 0x00100000}, C.MQRC_REPORT_OPTIONS_ERROR),
    ],
)
def test_descriptor_errors(env: Env, md: dict[str, object], reason: int) -> None:
    env.define("Q1")
    refuse(env, env.open("Q1"), reason, **md)


def test_application_message_types_and_feedback_ranges_accepted(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, msg_type=C.MQMT_APPL_FIRST, feedback=C.MQFB_APPL_LAST)
    env.put(h, msg_type=C.MQMT_REPORT, feedback=C.MQFB_QUIT, reply_to_q="R")
    assert env.depth("Q1") == 2


def test_queue_limits(env: Env) -> None:
    env.define("Q1", MAXDEPTH=2, MAXMSGL=10)
    h = env.open("Q1")
    refuse(env, h, C.MQRC_MSG_TOO_BIG_FOR_Q, data=b"x" * 11)
    env.put(h)
    env.put(h)
    refuse(env, h, C.MQRC_Q_FULL)
    env.qm.objects.alter_qmgr({"MAXMSGL": 32768})
    env.qm.objects.alter("Q1", {"MAXMSGL": 100000, "MAXDEPTH": 10})
    refuse(env, h, C.MQRC_MSG_TOO_BIG_FOR_Q_MGR, data=b"x" * 40000)


def test_put_inhibited_on_queue_and_alias(env: Env) -> None:
    env.define("Q1")
    env.qm.objects.define("QALIAS", "A1", {"TARGET": "Q1"})
    ha = env.open("A1", C.MQOO_OUTPUT)
    env.qm.objects.alter("A1", {"PUT": "DISABLED"})
    refuse(env, ha, C.MQRC_PUT_INHIBITED)
    env.qm.objects.alter("A1", {"PUT": "ENABLED"})
    env.qm.objects.alter("Q1", {"PUT": "DISABLED"})
    refuse(env, ha, C.MQRC_PUT_INHIBITED)


def test_not_open_for_output_and_bad_handles(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1", C.MQOO_INPUT_SHARED)
    refuse(env, h, C.MQRC_NOT_OPEN_FOR_OUTPUT)
    refuse(env, 999, C.MQRC_HOBJ_ERROR)
    with pytest.raises(MQError) as e:
        env.put(h, hconn=777)
    assert e.value.reason == C.MQRC_HCONN_ERROR


@pytest.mark.parametrize(
    ("pmo", "reason"),
    [
        (C.MQPMO_SYNCPOINT | C.MQPMO_NO_SYNCPOINT, C.MQRC_OPTIONS_ERROR),
        (C.MQPMO_NO_CONTEXT | C.MQPMO_DEFAULT_CONTEXT, C.MQRC_OPTIONS_ERROR),
        (0x40000000, C.MQRC_OPTIONS_ERROR),
        (C.MQPMO_SET_ALL_CONTEXT, C.MQRC_NOT_OPEN_FOR_SET_ALL),
        (C.MQPMO_SET_IDENTITY_CONTEXT, C.MQRC_NOT_OPEN_FOR_SET_IDENT),
        (C.MQPMO_PASS_ALL_CONTEXT, C.MQRC_NOT_OPEN_FOR_PASS_ALL),
        (C.MQPMO_PASS_IDENTITY_CONTEXT, C.MQRC_NOT_OPEN_FOR_PASS_IDENT),
    ],
)
def test_put_option_errors(env: Env, pmo: int, reason: int) -> None:
    env.define("Q1")
    refuse(env, env.open("Q1"), reason, pmo=pmo)


def test_output_descriptor_fields(env: Env) -> None:
    env.define("Q1", DEFPRTY=4, DEFPSIST="YES")
    env.clock.t = 1_700_000_000.25  # 2023-11-14 22:13:20.25 GMT
    res = env.put(env.open("Q1"), b"hello")
    md = res.md
    assert md.msg_id[:4] == b"AMQ " and md.msg_id[4:16] == b"QM1".ljust(12)
    assert md.correl_id == NONE_ID
    assert (md.priority, md.persistence) == (4, C.MQPER_PERSISTENT)
    assert (md.put_date, md.put_time) == ("20231114", "22132025")
    assert md.user_identifier == "tester" and md.put_appl_name == "tests" and md.put_appl_type == C.MQAT_DEFAULT
    assert md.reply_to_q_mgr == "QM1"
    other = env.put(env.open("Q1"), b"hello").md.msg_id
    assert other != md.msg_id


def test_new_ids_and_given_ids(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    given = b"G" * 24
    assert env.put(h, msg_id=given).md.msg_id == given
    assert env.put(h, msg_id=given, pmo=C.MQPMO_NEW_MSG_ID).md.msg_id != given
    assert env.put(h, correl_id=given).md.correl_id == given
    assert env.put(h, pmo=C.MQPMO_NEW_CORREL_ID).md.correl_id[:4] == b"AMQ "


def test_context_options(env: Env) -> None:
    env.define("Q1")
    env.define("Q2")
    h = env.open("Q1", C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT)
    md = env.put(h, pmo=C.MQPMO_SET_ALL_CONTEXT, user_identifier="alice", put_appl_name="app",
                 put_date="20200101", put_time="01020304", appl_origin_data="AB").md
    assert (md.user_identifier, md.put_appl_name, md.put_date, md.put_time, md.appl_origin_data) == (
        "alice", "app", "20200101", "01020304", "AB")
    none = env.put(h, pmo=C.MQPMO_NO_CONTEXT).md
    assert (none.user_identifier, none.put_appl_type, none.put_date) == ("", C.MQAT_NO_CONTEXT, "")
    hin = env.open("Q1", C.MQOO_INPUT_SHARED | C.MQOO_SAVE_ALL_CONTEXT)
    env.get(hin)
    hout = env.open("Q2", C.MQOO_OUTPUT | C.MQOO_PASS_ALL_CONTEXT)
    passed = env.qm.put(env.hconn, hout, MQMD(), PutOptions(C.MQPMO_PASS_ALL_CONTEXT, hin), b"y").md
    assert (passed.user_identifier, passed.put_date) == ("alice", "20200101")
    with pytest.raises(MQError) as e:
        env.qm.put(env.hconn, hout, MQMD(), PutOptions(C.MQPMO_PASS_ALL_CONTEXT, hout), b"y")
    assert e.value.reason == C.MQRC_CONTEXT_HANDLE_ERROR


def test_priority_above_maximum_warns_and_queues_at_nine(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"p9", priority=9)
    res = env.put(h, b"p12", priority=12)
    assert (res.comp, res.reason) == (C.MQCC_WARNING, C.MQRC_PRIORITY_EXCEEDS_MAXIMUM)
    assert env.get(h).data == b"p9"  # same effective priority: FIFO among them


def test_put1_and_its_errors(env: Env) -> None:
    env.define("Q1")
    res = env.qm.put1(env.hconn, ObjectDescriptor("Q1"), MQMD(), PutOptions(), b"one")
    assert res.resolved_q_name == "Q1" and env.depth("Q1") == 1
    with pytest.raises(MQError) as e:
        env.qm.put1(env.hconn, ObjectDescriptor("NOPE"), MQMD(), PutOptions(), b"one")
    assert e.value.reason == C.MQRC_UNKNOWN_OBJECT_NAME
    with pytest.raises(MQError) as e:
        env.qm.put1(env.hconn, ObjectDescriptor("Q1"), MQMD(msg_type=C.MQMT_REQUEST), PutOptions(), b"one")
    assert e.value.reason == C.MQRC_MISSING_REPLY_TO_Q
    q = env.qm.objects.require("Q1")
    assert (q.output_count, q.handles) == (0, set())


def test_persistent_not_allowed_on_temporary_dynamic(env: Env) -> None:
    h = env.open("SYSTEM.DEFAULT.MODEL.QUEUE", C.MQOO_OUTPUT | C.MQOO_INPUT_EXCLUSIVE, dynamic_q_name="TMP.*")
    with pytest.raises(MQError) as e:
        env.put(h, persistence=C.MQPER_PERSISTENT)
    assert e.value.reason == C.MQRC_PERSISTENT_NOT_ALLOWED


def test_syncpoint_limit(env: Env) -> None:
    env.define("Q1")
    env.qm.objects.alter_qmgr({"MAXUMSGS": 2})
    h = env.open("Q1")
    env.put(h, pmo=C.MQPMO_SYNCPOINT)
    env.put(h, pmo=C.MQPMO_SYNCPOINT)
    refuse(env, h, C.MQRC_SYNCPOINT_LIMIT_REACHED, pmo=C.MQPMO_SYNCPOINT)


# -- put_many: the batch path asynchronous puts take -------------------------------------


def test_put_many_places_each_item_as_mqput_would(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    mids = [bytes([i]) * 24 for i in range(1, 4)]
    out = env.qm.put_many(env.hconn, h, MQMD(priority=2), PutOptions(C.MQPMO_NO_SYNCPOINT),
                          [(m, b"d%d" % i) for i, m in enumerate(mids)])
    assert out == [None, None, None]
    got = [env.get(h) for _ in mids]
    assert [(g.md.msg_id, g.data, g.md.priority) for g in got] == [(m, b"d%d" % i, 2) for i, m in enumerate(mids)]
    assert all(g.md.put_appl_name == "tests" and g.md.user_identifier == "tester" for g in got)


def test_put_many_counts_each_failure_and_keeps_what_fitted(env: Env) -> None:
    env.define("Q1", MAXDEPTH=2)
    h = env.open("Q1")
    out = env.qm.put_many(env.hconn, h, MQMD(), PutOptions(0), [(bytes(24), b"x")] * 4)
    assert [None if e is None else e.reason for e in out] == [None, None, C.MQRC_Q_FULL, C.MQRC_Q_FULL]
    assert env.depth("Q1") == 2


def test_put_many_in_a_unit_stages_its_persistent_records_with_one_journal_call(env: Env) -> None:
    # A run's persistent messages in a unit of work are staged together (Staging.journal_messages):
    # one add_run, numbered in put order, the ones MAXUMSGS refused left out; the commit makes
    # exactly those durable, as one put after another would.
    env.define("Q1")
    env.qm.objects.alter_qmgr({"MAXUMSGS": 3})
    h = env.open("Q1")
    calls: list[list[int]] = []
    add_run = env.journal.add_run
    env.journal.add_run = lambda kind, items, *a, **k: (  # type: ignore[method-assign]
        calls.append([rid for rid, _ in items]) or add_run(kind, items, *a, **k))
    mids = [bytes([i]) * 24 for i in range(1, 6)]
    out = env.qm.put_many(env.hconn, h, MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(C.MQPMO_SYNCPOINT),
                          [(m, b"d%d" % i) for i, m in enumerate(mids)])
    assert [None if e is None else e.reason for e in out] == [None, None, None, C.MQRC_SYNCPOINT_LIMIT_REACHED,
                                                               C.MQRC_SYNCPOINT_LIMIT_REACHED]
    assert len(calls) == 1 and len(calls[0]) == 3 and calls[0] == sorted(calls[0])
    env.qm.commit(env.hconn)
    env.journal.sync()
    again = QueueManager.start("QM1", env.journal.crash(), env.clock)
    assert [m.data for m in again.objects.require("Q1").messages.by_seq.values()] == [b"d0", b"d1", b"d2"]


def test_put_many_refused_call_fails_every_item_and_changes_nothing(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1", C.MQOO_INPUT_SHARED)
    out = env.qm.put_many(env.hconn, h, MQMD(), PutOptions(0), [(bytes(24), b"x")] * 2)
    assert [(e.comp, e.reason) for e in out if e is not None] == [(C.MQCC_FAILED, C.MQRC_NOT_OPEN_FOR_OUTPUT)] * 2
    assert env.depth("Q1") == 0


def test_put_many_reports_warnings_per_item(env: Env) -> None:
    env.define("Q1")
    out = env.qm.put_many(env.hconn, env.open("Q1"), MQMD(priority=12), PutOptions(0), [(bytes(24), b"x")] * 2)
    assert [(e.comp, e.reason) for e in out if e is not None] == [(C.MQCC_WARNING, C.MQRC_PRIORITY_EXCEEDS_MAXIMUM)] * 2
    assert env.depth("Q1") == 2


# put_many's shared-work path must be indistinguishable from one MQPUT per item: the same
# outcome per item, the same messages (every MQMD field) on the queue, the same reports.
_PUT_MANY_CASES = {
    "plain": ({}, {}, 0, [b"a", b"b", b"c"]),
    "defaults from the queue": ({"DEFPRTY": 7, "DEFPSIST": "YES"},
                                {"priority": C.MQPRI_PRIORITY_AS_Q_DEF, "persistence": C.MQPER_PERSISTENCE_AS_Q_DEF},
                                0, [b"a", b"b"]),
    "too big mid-run": ({"MAXMSGL": 4}, {}, 0, [b"ab", b"abcdef", b"abcd"]),
    "full mid-run": ({"MAXDEPTH": 2}, {}, 0, [b"a", b"b", b"c", b"d"]),
    "put inhibited": ({"PUT": "DISABLED", "MAXMSGL": 4}, {}, 0, [b"a", b"toolong"]),
    "unit of work limit": ({}, {}, C.MQPMO_SYNCPOINT, [b"a", b"b", b"c"]),
    "new message ids": ({}, {}, C.MQPMO_NEW_MSG_ID, [b"a", b"b"]),
    "priority warning": ({}, {"priority": 11}, 0, [b"a", b"b"]),
    "confirm on arrival": ({}, {"report": C.MQRO_COA, "reply_to_q": "REPLIES"}, 0, [b"a", b"b"]),
    "persistent under syncpoint": ({}, {"persistence": C.MQPER_PERSISTENT}, C.MQPMO_SYNCPOINT, [b"a", b"b"]),
    "set all context": ({}, {"user_identifier": "alice", "put_appl_name": "loader", "put_date": "20260304",
                            "put_time": "05060789", "appl_origin_data": "o", "accounting_token": b"A" * 32},
                        C.MQPMO_SET_ALL_CONTEXT | C.MQPMO_SYNCPOINT, [b"a", b"b"]),
    "set identity context": ({}, {"user_identifier": "bob", "appl_identity_data": "id"},
                             C.MQPMO_SET_IDENTITY_CONTEXT, [b"a", b"b"]),
    "no context": ({}, {"user_identifier": "bob"}, C.MQPMO_NO_CONTEXT, [b"a", b"b"]),
}


def _queue_image(env: Env, name: str) -> list[tuple[object, ...]]:
    q = env.qm.objects.require(name)
    return [(m.md.replace(put_date="", put_time=""), m.data, m.key) for m in (q.messages.get(k) for k in q.messages.order)
            if m is not None]


@pytest.mark.parametrize("form", ["items", "columns"])
@pytest.mark.parametrize("case", sorted(_PUT_MANY_CASES))
def test_put_many_equals_one_put_per_item(case: str, form: str) -> None:
    """``items``: put_many as a PutBatch frame carries it (a MsgId each); ``columns``:
    put_columns with each message's MsgId (some left to the queue manager) and CorrelId."""
    attrs, md_fields, pmo, bodies = _PUT_MANY_CASES[case]
    n = len(bodies)
    if form == "items":
        ids, correls = [bytes([i + 1]) * 24 for i in range(n)], None
    else:
        ids, correls = [bytes([i + 1]) * 24 if i % 2 else bytes(24) for i in range(n)], [bytes([0x40 + i]) * 24 for i in range(n)]
    images = []
    for batched in (False, True):
        env = Env()
        env.define("Q1", **attrs)
        env.define("REPLIES")
        env.qm.objects.alter_qmgr({"MAXUMSGS": 2})
        h = env.open("Q1", C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT)
        md = MQMD(**md_fields)  # type: ignore[arg-type]
        if batched and correls is None:
            out = env.qm.put_many(env.hconn, h, md, PutOptions(pmo), list(zip(ids, bodies, strict=True)))
        elif batched:
            out = env.qm.put_columns(env.hconn, h, md, PutOptions(pmo), bodies, ids, correls)
        else:
            out = []
            for i, (mid, body) in enumerate(zip(ids, bodies, strict=True)):
                one = md.replace(msg_id=mid) if correls is None else md.replace(msg_id=mid, correl_id=correls[i])
                try:
                    r = env.qm.put(env.hconn, h, one, PutOptions(pmo), body)
                    out.append(None if not r.reason else MQError(r.comp, r.reason, ""))
                except MQError as exc:
                    out.append(exc)
        outcomes = [None if e is None else (e.comp, e.reason) for e in out]
        if pmo & C.MQPMO_SYNCPOINT:
            env.qm.commit(env.hconn)
        image = _queue_image(env, "Q1") + _queue_image(env, "REPLIES")
        # identifiers the queue manager made differ run to run; their uniqueness does not
        assert len({m[0].msg_id for m in image}) == len(image)  # type: ignore[attr-defined]
        kept = set() if pmo & C.MQPMO_NEW_MSG_ID else set(ids)
        image = [(m[0].replace(msg_id=m[0].msg_id if m[0].msg_id in kept else bytes(24)), *m[1:])  # type: ignore[attr-defined]
                 for m in image]
        images.append((outcomes, image, env.depth("Q1"), env.journal.appended_lsn))
    assert images[0] == images[1]
    assert images[0][1] or case == "put inhibited", "the case placed nothing: it would compare nothing"


def test_put_columns_refused_call_creates_no_unit_of_work(env: Env) -> None:
    env.define("Q1", PUT="DISABLED")
    h = env.open("Q1", C.MQOO_OUTPUT)
    out = env.qm.put_columns(env.hconn, h, MQMD(), PutOptions(C.MQPMO_SYNCPOINT), [b"a", b"b"])
    assert [e.reason for e in out if e is not None] == [C.MQRC_PUT_INHIBITED] * 2
    assert env.qm.conn(env.hconn).uow is None


def test_run_messages_share_a_template_and_keep_their_identifiers(env: Env) -> None:
    """A run's messages make their descriptor (object and bytes) from the shared template,
    and a journaled one recovers with the same descriptor."""
    env.define("Q1")
    h = env.open("Q1")
    md = MQMD(persistence=C.MQPER_PERSISTENT, report=C.MQRO_COA, reply_to_q="R")
    env.qm.put_columns(env.hconn, h, md, PutOptions(C.MQPMO_SYNCPOINT), [b"a", b"b"], [b"m" * 24, b"n" * 24],
                       [b"c" * 24, b"d" * 24])
    uow = env.qm.conn(env.hconn).uow
    assert uow is not None
    msgs = [m for _, m in uow.puts]
    spliced = [m.md_bytes() for m in msgs]  # before any MQMD is made: the template's bytes, spliced
    assert [(m.md.msg_id, m.md.correl_id) for m in msgs] == [(b"m" * 24, b"c" * 24), (b"n" * 24, b"d" * 24)]
    assert spliced == [m.md.pack(version=2) for m in msgs] == [m.md_bytes() for m in msgs]
    assert all(m.report == C.MQRO_COA for m in msgs)
    msgs[0].md = msgs[0].md.replace(backout_count=3)  # a descriptor set later is the message's own
    assert msgs[0].md_bytes() == msgs[0].md.pack(version=2) and msgs[1].md.backout_count == 0


def test_put_many_descriptor_bytes_are_the_stored_descriptor_packed(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    md = MQMD(priority=4, reply_to_q="R", correl_id=b"c" * 24, persistence=0)
    env.qm.put_many(env.hconn, h, md, PutOptions(C.MQPMO_NEW_MSG_ID), [(bytes(24), b"a"), (bytes(24), b"b")])
    gmo = GetOptions(C.MQGMO_NO_SYNCPOINT, 0, C.MQMO_NONE)
    got, _ = env.qm.get_many(env.hconn, h, MQMD(), gmo, 100, 10, 1 << 20)
    assert len(got) == 2 and got[0].md.msg_id != got[1].md.msg_id
    assert [r.md_bytes for r in got] == [r.md.pack(version=2) for r in got]


@pytest.mark.parametrize("now", [0.0, 0.5, 1_700_000_000.0, 1_700_000_000.004, 1_700_000_000.995, 1_700_000_059.999999,
                                 1_700_000_000 + 1 - 2**-22])
def test_put_date_and_time_are_gmt_to_the_hundredth(env: Env, now: float) -> None:
    t = time.gmtime(int(now))
    hundredths = int((now - int(now)) * 100)
    assert env.qm.stamp_put(now) == (time.strftime("%Y%m%d", t), time.strftime("%H%M%S", t) + f"{hundredths:02d}")
    assert len(env.qm.stamp_put(now)[1]) == 8


def test_md_column_is_each_message_s_descriptor_back_to_back(env: Env) -> None:
    """A browse page's descriptor column, made a run at a time, holds exactly each message's
    own bytes: runs of two templates (one a version-1 MQMD), a run cut by a message whose
    descriptor was made, and a message put on its own."""
    env.define("Q1")
    h = env.open("Q1")
    ids = [bytes([65 + i]) * 24 for i in range(3)]
    for md in (MQMD(version=1, priority=2, reply_to_q="R1"), MQMD(persistence=0, correl_id=b"k" * 24)):
        env.qm.put_columns(env.hconn, h, md, PutOptions(C.MQPMO_SYNCPOINT), [b"a", b"b", b"c"], ids, [b"c" * 24] * 3)
    env.put(h, b"own", pmo=C.MQPMO_SYNCPOINT)
    uow = env.qm.conn(env.hconn).uow
    assert uow is not None
    msgs = [m for _, m in uow.puts]
    assert [m.run_template() is not None for m in msgs] == [True] * 6 + [False]
    assert msgs[1].md.msg_id == ids[1]  # a descriptor made: that message's bytes are its own from now on
    assert msgs[1].run_template() is None and msgs[0].run_template() is msgs[2].run_template()
    assert md_column(msgs) == b"".join(m.md.pack(version=2) for m in msgs)
    assert md_column(msgs[3:4]) == msgs[3].md.pack(version=2) and md_column([]) == b""


def test_put_stamp_is_stamp_put_side_by_side_whatever_came_before(env: Env) -> None:
    """The planned put's stamp, kept per 1/100 s, is always the one of its own time: the
    same hundredth of another second, or of a second stamp_put moved to meanwhile, is not
    taken for it."""
    state = env.qm.state
    for now in [1_700_000_000.004, 1_700_000_000.0049, 1_700_000_001.004, 1_700_000_000.995, 1_700_000_001.004,
                1_700_000_059.999999, 1_700_000_060.0, 1_700_000_000 + 1 - 2**-22, 0.5]:
        if now == 1_700_000_060.0:
            env.qm.stamp_put(1_700_000_061.0)  # another caller moves stamp_put's own second
        date, tod = env.qm.stamp_put(now)
        assert state.put_stamp(now) == (date + tod).encode("ascii")
