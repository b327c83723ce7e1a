"""Publish/subscribe in the engine: MQOPEN of a topic, MQPUT/MQPUT1 fan-out, MQSUB, MQCLOSE
of a subscription, lifetimes, and what each copy of a publication carries."""

from __future__ import annotations

import pytest
from engine_helpers import Env, reason_of

from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor, PutOptions, SubDescriptor, SubResult
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

MANAGED = C.MQSO_CREATE | C.MQSO_MANAGED


@pytest.fixture
def env() -> Env:
    return Env()


def sub(env: Env, topic: str, options: int = MANAGED, hobj: int = C.MQHO_NONE, hconn: int | None = None,
        **sd: object) -> SubResult:
    return env.qm.subscribe(hconn or env.hconn, SubDescriptor(options, object_string=topic, **sd), hobj)  # type: ignore[arg-type]


def topic_handle(env: Env, topic: str, options: int = C.MQOO_OUTPUT, hconn: int | None = None) -> int:
    od = ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string=topic)
    return env.qm.open(hconn or env.hconn, od, options).hobj


def publish(env: Env, topic: str, data: bytes = b"pub", pmo: int = 0, hconn: int | None = None, **md: object) -> int:
    h = topic_handle(env, topic, hconn=hconn)
    res = env.qm.put(hconn or env.hconn, h, MQMD(**md), PutOptions(pmo), data)  # type: ignore[arg-type]
    env.qm.close(hconn or env.hconn, h)
    return res.reason


def received(env: Env, hobj: int, hconn: int | None = None) -> list[GetResult]:
    out = []
    while True:
        try:
            res = env.qm.get(hconn or env.hconn, hobj, MQMD(), GetOptions(C.MQGMO_NO_WAIT, msg_handle=True), 1 << 16)
        except MQError as exc:
            assert exc.reason == C.MQRC_NO_MSG_AVAILABLE
            return out
        assert isinstance(res, GetResult)
        out.append(res)


def fails(reason: int, fn: object, *args: object, **kw: object) -> None:
    with pytest.raises(MQError) as excinfo:
        fn(*args, **kw)  # type: ignore[operator]
    assert reason_of(excinfo) == (C.MQCC_FAILED, reason)


# -- MQOPEN of a topic ---------------------------------------------------------------------

def test_open_topic_gives_the_full_topic_string(env: Env) -> None:
    res = env.qm.open(env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="a/b"), C.MQOO_OUTPUT)
    assert res.res_object_string == "a/b"
    res = env.qm.open(env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_name="SYSTEM.BASE.TOPIC",
                                                  object_string="x/y"), C.MQOO_OUTPUT)
    assert res.res_object_string == "x/y"


@pytest.mark.parametrize(("od", "options", "reason"), [
    ({"object_string": "a"}, C.MQOO_INPUT_AS_Q_DEF, C.MQRC_OPTION_NOT_VALID_FOR_TYPE),
    ({"object_string": "a"}, C.MQOO_BROWSE, C.MQRC_OPTION_NOT_VALID_FOR_TYPE),
    ({"object_string": "a"}, C.MQOO_OUTPUT | C.MQOO_SAVE_ALL_CONTEXT, C.MQRC_OPTION_NOT_VALID_FOR_TYPE),
    ({"object_string": "a"}, C.MQOO_SET, C.MQRC_OPTION_NOT_VALID_FOR_TYPE),
    ({}, C.MQOO_OUTPUT, C.MQRC_UNKNOWN_OBJECT_NAME),
    ({"object_name": "NO.SUCH.TOPIC"}, C.MQOO_OUTPUT, C.MQRC_UNKNOWN_OBJECT_NAME),
    ({"object_string": "a", "object_q_mgr_name": "OTHER"}, C.MQOO_OUTPUT, C.MQRC_UNKNOWN_REMOTE_Q_MGR),
    ({"object_string": "a\0b"}, C.MQOO_OUTPUT, C.MQRC_TOPIC_STRING_ERROR),
])
def test_open_topic_refusals(env: Env, od: dict[str, str], options: int, reason: int) -> None:
    before = len(env.qm.handles)
    fails(reason, env.qm.open, env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, **od), options)  # type: ignore[arg-type]
    assert len(env.qm.handles) == before


def test_get_on_topic_or_subscription_handle_is_hobj_error(env: Env) -> None:
    h = topic_handle(env, "a")
    s = sub(env, "a")
    for hobj in (h, s.hsub):
        fails(C.MQRC_HOBJ_ERROR, env.qm.get, env.hconn, hobj, MQMD(), GetOptions(), 100)
    fails(C.MQRC_HOBJ_ERROR, env.qm.put, env.hconn, s.hsub, MQMD(), PutOptions(), b"x")
    fails(C.MQRC_NOT_OPEN_FOR_OUTPUT, env.qm.put, env.hconn, s.hobj, MQMD(), PutOptions(), b"x")


# -- publishing and what a copy carries ----------------------------------------------------

def test_put_with_no_subscriber_succeeds_and_warns_only_when_asked(env: Env) -> None:
    assert publish(env, "nobody/home") == C.MQRC_NONE
    assert publish(env, "nobody/home", pmo=C.MQPMO_WARN_IF_NO_SUBS_MATCHED) == C.MQRC_NO_SUBS_MATCHED
    sub(env, "nobody/home")
    assert publish(env, "nobody/home", pmo=C.MQPMO_WARN_IF_NO_SUBS_MATCHED) == C.MQRC_NONE


def test_copy_fields_follow_ibm(env: Env) -> None:
    s = sub(env, "price/fruit", sub_user_data="fruit desk")
    other = env.qm.connect(appl_name="publisher", user="pubuser")
    h = topic_handle(env, "price/fruit", hconn=other)
    put = env.qm.put(other, h, MQMD(priority=7, correl_id=b"C" * 24, reply_to_q="REPLY"), PutOptions(), b"apple")
    [got] = received(env, s.hobj)
    md = got.md
    assert got.data == b"apple"
    assert md.msg_id != put.md.msg_id  # each copy has its own MsgId
    assert md.correl_id == s.sub_correl_id  # the subscription's CorrelId
    assert md.priority == 7  # PubPriority AS_PUBLISHED
    assert md.user_identifier.strip() == "tester"  # identity context: the subscriber's
    assert md.put_appl_name.strip() == "publisher"  # origin context: the publisher's
    assert md.reply_to_q.strip() == "REPLY"
    assert got.properties is not None
    assert got.properties["mqps.Top"] == "price/fruit"
    assert got.properties["mqps.Sud"] == "fruit desk"
    assert "mqps.Ret" not in got.properties


def test_suppress_replyto_and_its_report_rule(env: Env) -> None:
    s = sub(env, "t")
    assert publish(env, "t", pmo=C.MQPMO_SUPPRESS_REPLYTO, reply_to_q="REPLY") == C.MQRC_NONE
    [got] = received(env, s.hobj)
    assert got.md.reply_to_q.strip() == ""
    fails(C.MQRC_MISSING_REPLY_TO_Q, publish, env, "t", pmo=C.MQPMO_SUPPRESS_REPLYTO, reply_to_q="REPLY",
          report=C.MQRO_COA)
    assert received(env, s.hobj) == []


def test_set_correl_id_and_pub_priority(env: Env) -> None:
    fixed = sub(env, "t", MANAGED | C.MQSO_SET_CORREL_ID, sub_correl_id=b"F" * 24, pub_priority=2)
    passed = sub(env, "t", MANAGED | C.MQSO_SET_CORREL_ID, sub_correl_id=bytes(24))
    publish(env, "t", correl_id=b"P" * 24, priority=5)
    [a] = received(env, fixed.hobj)
    [b] = received(env, passed.hobj)
    assert (a.md.correl_id, a.md.priority) == (b"F" * 24, 2)
    assert (b.md.correl_id, b.md.priority) == (b"P" * 24, 5)  # MQCI_NONE: the publication's own


def test_every_matching_subscription_gets_one_copy(env: Env) -> None:
    subs = {t: sub(env, t) for t in ("a/b", "a/+", "a/#", "#", "b/#", "+/c")}
    wild_char = sub(env, "a*", MANAGED | C.MQSO_WILDCARD_CHAR)
    publish(env, "a/b")
    counts = {t: len(received(env, s.hobj)) for t, s in subs.items()}
    assert counts == {"a/b": 1, "a/+": 1, "a/#": 1, "#": 1, "b/#": 0, "+/c": 0}
    assert len(received(env, wild_char.hobj)) == 1


def test_selector_on_subscription(env: Env) -> None:
    s = sub(env, "t", selection_string="Root.MQMD.Priority > 4")
    publish(env, "t", priority=3)
    publish(env, "t", priority=6)
    assert [r.md.priority for r in received(env, s.hobj)] == [6]
    fails(C.MQRC_SELECTOR_SYNTAX_ERROR, sub, env, "t", selection_string="Root.MQMD.Priority >")


def test_not_own_subs(env: Env) -> None:
    mine = sub(env, "t")
    other_conn = env.qm.connect(user="tester")
    theirs = sub(env, "t", hconn=other_conn)
    publish(env, "t", pmo=C.MQPMO_NOT_OWN_SUBS)
    assert received(env, mine.hobj) == []
    assert len(received(env, theirs.hobj, other_conn)) == 1


def test_publication_under_syncpoint_is_delivered_at_commit(env: Env) -> None:
    s = sub(env, "t")
    h = topic_handle(env, "t")
    env.qm.put(env.hconn, h, MQMD(), PutOptions(C.MQPMO_SYNCPOINT), b"1")
    assert received(env, s.hobj) == []
    env.qm.backout(env.hconn)
    assert received(env, s.hobj) == []
    env.qm.put(env.hconn, h, MQMD(), PutOptions(C.MQPMO_SYNCPOINT), b"2")
    env.qm.commit(env.hconn)
    assert [r.data for r in received(env, s.hobj)] == [b"2"]


def test_put1_to_a_topic(env: Env) -> None:
    s = sub(env, "t")
    res = env.qm.put1(env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="t"), MQMD(), PutOptions(),
                      b"once")
    assert res.reason == C.MQRC_NONE
    assert [r.data for r in received(env, s.hobj)] == [b"once"]
    assert not any(h.topic for h in env.qm.handles.values())


def test_put_run_on_a_topic_publishes_each_message(env: Env) -> None:
    s = sub(env, "t")
    h = topic_handle(env, "t")
    outcomes = env.qm.put_columns(env.hconn, h, MQMD(), PutOptions(), [b"1", b"2", b"3"])
    assert outcomes == [None, None, None]
    assert [r.data for r in received(env, s.hobj)] == [b"1", b"2", b"3"]


# -- delivery that fails: PMSGDLV, NPMSGDLV, the dead-letter queue -------------------------

def provided(env: Env, name: str, topic: str, *, durable: bool, **attrs: object) -> SubResult:
    env.define(name, **attrs)
    h = env.open(name, C.MQOO_INPUT_AS_Q_DEF)
    options = C.MQSO_CREATE | (C.MQSO_DURABLE if durable else 0)
    return sub(env, topic, options, hobj=h, sub_name=name if durable else "")


def test_persistent_publication_to_a_full_durable_subscription_fails_whole(env: Env) -> None:
    env.qm.objects.alter_qmgr({"DEADQ": ""})  # no dead-letter queue: PMSGDLV decides
    full = provided(env, "FULL", "t", durable=True, MAXDEPTH=1)
    ok = provided(env, "OK", "t", durable=False)
    publish(env, "t", b"first", persistence=C.MQPER_PERSISTENT)
    fails(C.MQRC_PUBLICATION_FAILURE, publish, env, "t", b"second", persistence=C.MQPER_PERSISTENT)
    assert [r.data for r in received(env, ok.hobj)] == [b"first"]  # nothing of the failed put
    assert [r.data for r in received(env, full.hobj)] == [b"first"]


def test_non_durable_failures_are_dropped_under_alldur_and_allavail(env: Env) -> None:
    env.qm.objects.alter_qmgr({"DEADQ": ""})
    full = provided(env, "FULL", "t", durable=False, MAXDEPTH=1)
    ok = provided(env, "OK", "t", durable=False)
    publish(env, "t", b"1", persistence=C.MQPER_PERSISTENT)  # PMSGDLV(ALLDUR)
    publish(env, "t", b"2", persistence=C.MQPER_PERSISTENT)
    publish(env, "t", b"3")  # NPMSGDLV(ALLAVAIL)
    assert [r.data for r in received(env, ok.hobj)] == [b"1", b"2", b"3"]
    assert [r.data for r in received(env, full.hobj)] == [b"1"]


def test_undeliverable_copy_goes_to_the_dead_letter_queue(env: Env) -> None:
    env.qm.objects.alter_qmgr({"DEADQ": "SYSTEM.DEAD.LETTER.QUEUE"})
    full = provided(env, "FULL", "t", durable=True, MAXDEPTH=1)
    publish(env, "t", b"1", persistence=C.MQPER_PERSISTENT)
    assert publish(env, "t", b"2", persistence=C.MQPER_PERSISTENT) == C.MQRC_NONE
    assert env.depth("SYSTEM.DEAD.LETTER.QUEUE") == 1
    dlq = env.open("SYSTEM.DEAD.LETTER.QUEUE")
    dead = env.get(dlq)
    assert dead.md.format.strip() == C.MQFMT_DEAD_LETTER_HEADER.strip()
    assert dead.data.endswith(b"2")
    assert len(received(env, full.hobj)) == 1


# -- MQSUB ---------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    C.MQSO_MANAGED,  # none of CREATE, RESUME, ALTER
    MANAGED | C.MQSO_ANY_USERID | C.MQSO_FIXED_USERID,
    MANAGED | C.MQSO_WILDCARD_CHAR | C.MQSO_WILDCARD_TOPIC,
    MANAGED | C.MQSO_NEW_PUBLICATIONS_ONLY | C.MQSO_PUBLICATIONS_ON_REQUEST,
    C.MQSO_RESUME | C.MQSO_MANAGED | C.MQSO_NEW_PUBLICATIONS_ONLY,
    MANAGED | C.MQSO_GROUP_SUB | C.MQSO_SET_CORREL_ID,
    MANAGED | 0x40000000,
])
def test_option_errors(env: Env, options: int) -> None:
    fails(C.MQRC_OPTIONS_ERROR, sub, env, "t", options, sub_name="S")
    assert len(env.qm.subscriptions) == 0


def test_mqsub_refusals_change_nothing(env: Env) -> None:
    queues = set(env.qm.objects.queues)
    fails(C.MQRC_SUB_NAME_ERROR, sub, env, "t", MANAGED | C.MQSO_DURABLE)
    fails(C.MQRC_SUB_NAME_ERROR, sub, env, "t", C.MQSO_RESUME | C.MQSO_MANAGED)
    fails(C.MQRC_NO_SUBSCRIPTION, sub, env, "t", C.MQSO_RESUME | C.MQSO_MANAGED, sub_name="NONE")
    fails(C.MQRC_SD_ERROR, sub, env, "t", sub_level=2)
    fails(C.MQRC_HOBJ_ERROR, sub, env, "t", C.MQSO_CREATE)
    out = env.open("SYSTEM.DEFAULT.LOCAL.QUEUE", C.MQOO_OUTPUT)
    fails(C.MQRC_HOBJ_ERROR, sub, env, "t", C.MQSO_CREATE, hobj=out)
    fails(C.MQRC_UNKNOWN_OBJECT_NAME, env.qm.subscribe, env.hconn, SubDescriptor(MANAGED), C.MQHO_NONE)
    fails(C.MQRC_SUB_USER_DATA_ERROR, sub, env, "t", sub_user_data="x" * 10241)
    fails(C.MQRC_PRIORITY_ERROR, sub, env, "t", pub_priority=12)
    fails(C.MQRC_SELECTOR_SYNTAX_ERROR, sub, env, "t", selection_string="a ==")
    assert len(env.qm.subscriptions) == 0
    assert set(env.qm.objects.queues) == queues


def test_create_resume_alter(env: Env) -> None:
    first = sub(env, "t", MANAGED | C.MQSO_DURABLE, sub_name="S")
    fails(C.MQRC_SUB_ALREADY_EXISTS, sub, env, "t", MANAGED | C.MQSO_DURABLE, sub_name="S")
    fails(C.MQRC_SUBSCRIPTION_IN_USE, sub, env, "t", C.MQSO_RESUME | C.MQSO_DURABLE, sub_name="S")
    env.qm.close(env.hconn, first.hsub)  # durable: kept
    again = sub(env, "", C.MQSO_CREATE | C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED, sub_name="S")
    assert (again.queue_name, again.res_object_string, again.sub_correl_id) == (first.queue_name, "t",
                                                                                first.sub_correl_id)
    env.qm.close(env.hconn, again.hsub)
    for options, sd, reason in [
        (C.MQSO_ALTER | C.MQSO_MANAGED, {}, C.MQRC_DURABILITY_NOT_ALTERABLE),
        (C.MQSO_ALTER | C.MQSO_DURABLE | C.MQSO_MANAGED, {"object_string": "u"}, C.MQRC_TOPIC_NOT_ALTERABLE),
        (C.MQSO_ALTER | C.MQSO_DURABLE | C.MQSO_MANAGED, {"selection_string": "Root.MQMD.Priority > 1"},
         C.MQRC_SELECTOR_NOT_ALTERABLE),
        (C.MQSO_ALTER | C.MQSO_DURABLE | C.MQSO_MANAGED | C.MQSO_WILDCARD_CHAR, {}, C.MQRC_TOPIC_NOT_ALTERABLE),
        (C.MQSO_ALTER | C.MQSO_DURABLE, {}, C.MQRC_DEST_CLASS_NOT_ALTERABLE),
    ]:
        fails(reason, env.qm.subscribe, env.hconn, SubDescriptor(options, sub_name="S", **sd), C.MQHO_NONE)  # type: ignore[arg-type]
    altered = sub(env, "", C.MQSO_ALTER | C.MQSO_DURABLE | C.MQSO_MANAGED, sub_name="S", sub_user_data="now")
    publish(env, "t")
    [got] = received(env, altered.hobj)
    assert got.properties is not None and got.properties["mqps.Sud"] == "now"


def test_resume_by_another_user_needs_any_userid(env: Env) -> None:
    fixed = sub(env, "t", MANAGED | C.MQSO_DURABLE, sub_name="FIXED")
    anyone = sub(env, "t", MANAGED | C.MQSO_DURABLE | C.MQSO_ANY_USERID, sub_name="ANY")
    env.qm.close(env.hconn, fixed.hsub)
    env.qm.close(env.hconn, anyone.hsub)
    stranger = env.qm.connect(user="stranger")
    fails(C.MQRC_IDENTITY_MISMATCH, sub, env, "", C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED, hconn=stranger,
          sub_name="FIXED")
    assert sub(env, "", C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED, hconn=stranger, sub_name="ANY").hsub


def test_durability_follows_the_connection_and_close_options(env: Env) -> None:
    nd = sub(env, "t")
    fails(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, env.qm.close, env.hconn, nd.hsub, C.MQCO_KEEP_SUB)
    fails(C.MQRC_OPTIONS_ERROR, env.qm.close, env.hconn, nd.hsub, C.MQCO_KEEP_SUB | C.MQCO_REMOVE_SUB)
    fails(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, env.qm.close, env.hconn, nd.hsub, C.MQCO_DELETE)
    fails(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, env.qm.close, env.hconn, nd.hobj, C.MQCO_DELETE)
    d = sub(env, "t", MANAGED | C.MQSO_DURABLE, sub_name="D")
    env.qm.disconnect(env.hconn)
    assert env.qm.objects.find(nd.queue_name) is None  # non-durable: gone with its connection
    assert env.qm.subscriptions.find("D") is not None
    env.hconn = env.qm.connect(user="tester")
    publish(env, "t", b"while away")
    back = sub(env, "", C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED, sub_name="D")
    assert back.queue_name == d.queue_name
    assert [r.data for r in received(env, back.hobj)] == [b"while away"]
    publish(env, "t", b"left behind")
    env.qm.close(env.hconn, back.hsub, C.MQCO_REMOVE_SUB)
    assert env.qm.subscriptions.find("D") is None
    publish(env, "t", b"after the removal")
    # IBM: the managed queue goes when its handle closes, what is left on it with it.
    assert env.qm.objects.find(d.queue_name) is not None
    assert env.depth(d.queue_name) == 1
    env.qm.close(env.hconn, back.hobj)
    assert env.qm.objects.find(d.queue_name) is None


def test_expired_subscription_receives_nothing(env: Env) -> None:
    s = sub(env, "t", sub_expiry=10)
    publish(env, "t", b"in time")
    env.clock.advance(2)
    publish(env, "t", b"too late")
    assert [r.data for r in received(env, s.hobj)] == [b"in time"]


# -- retained publications and MQSUBRQ -----------------------------------------------------

def test_retained_publication_reaches_new_subscriptions(env: Env) -> None:
    publish(env, "r/a", b"old", pmo=C.MQPMO_RETAIN)
    publish(env, "r/a", b"latest", pmo=C.MQPMO_RETAIN)
    publish(env, "r/b", b"plain")
    s = sub(env, "r/#")
    [got] = received(env, s.hobj)
    assert got.data == b"latest"
    assert got.properties is not None and got.properties["mqps.Ret"] is True
    assert received(env, sub(env, "r/a", MANAGED | C.MQSO_NEW_PUBLICATIONS_ONLY).hobj) == []
    assert env.qm.subscriber.topic_status("r/a")["RETAINED"] == "YES"
    assert env.qm.subscriber.clear_retained("r/a")
    assert received(env, sub(env, "r/a").hobj) == []


def test_sub_request(env: Env) -> None:
    s = sub(env, "q/#", MANAGED | C.MQSO_PUBLICATIONS_ON_REQUEST)
    fails(C.MQRC_NO_RETAINED_MSG, env.qm.sub_request, env.hconn, s.hsub)
    publish(env, "q/1", b"one", pmo=C.MQPMO_RETAIN)
    publish(env, "q/2", b"two", pmo=C.MQPMO_RETAIN)
    assert received(env, s.hobj) == []  # on request only
    assert env.qm.sub_request(env.hconn, s.hsub) == 2
    assert sorted(r.data for r in received(env, s.hobj)) == [b"one", b"two"]
    fails(C.MQRC_ACTION_ERROR, env.qm.sub_request, env.hconn, s.hsub, 2)
    fails(C.MQRC_OPTIONS_ERROR, env.qm.sub_request, env.hconn, s.hsub, C.MQSR_ACTION_PUBLICATION, 1)
    fails(C.MQRC_HOBJ_ERROR, env.qm.sub_request, env.hconn, s.hobj)


def test_retained_under_syncpoint_changes_at_commit(env: Env) -> None:
    publish(env, "r", b"before", pmo=C.MQPMO_RETAIN)
    h = topic_handle(env, "r")
    env.qm.put(env.hconn, h, MQMD(), PutOptions(C.MQPMO_RETAIN | C.MQPMO_SYNCPOINT), b"backed out")
    env.qm.backout(env.hconn)
    assert [r.data for r in received(env, sub(env, "r").hobj)] == [b"before"]
    env.qm.put(env.hconn, h, MQMD(), PutOptions(C.MQPMO_RETAIN | C.MQPMO_SYNCPOINT), b"committed")
    env.qm.commit(env.hconn)
    assert [r.data for r in received(env, sub(env, "r").hobj)] == [b"committed"]


# -- administration -------------------------------------------------------------------------

def test_admin_subscription_define_alter_delete(env: Env) -> None:
    env.define("DESTQ")
    s = env.qm.subscriber.define("ADMIN.SUB", {"TOPICSTR": "adm/t", "DEST": "DESTQ", "USERDATA": "u"})
    assert env.qm.subscriber.describe(s)["SUBTYPE"] == 2
    fails(C.MQRC_SUB_ALREADY_EXISTS, env.qm.subscriber.define, "ADMIN.SUB", {"TOPICSTR": "adm/t", "DEST": "DESTQ"})
    fails(C.MQRC_TOPIC_NOT_ALTERABLE, env.qm.subscriber.alter, "ADMIN.SUB", {"TOPICSTR": "other"})
    env.qm.subscriber.alter("ADMIN.SUB", {"USERDATA": "v"})
    publish(env, "adm/t", b"x")
    got = env.get(env.open("DESTQ"))
    assert got.data == b"x"
    assert env.qm.subscriber.status(s)["NUMMSGS"] == 1
    managed = env.qm.subscriber.define("ADMIN.MANAGED", {"TOPICSTR": "adm/t", "DESTCLAS": "MANAGED"})
    resumed = sub(env, "", C.MQSO_RESUME | C.MQSO_DURABLE, sub_name="ADMIN.MANAGED")
    assert resumed.queue_name == managed.destination
    env.qm.subscriber.delete("ADMIN.SUB")
    fails(C.MQRC_NO_SUBSCRIPTION, env.qm.subscriber.delete, "ADMIN.SUB")


def test_delete_sub_by_identifier_and_only_durable_ones(env: Env) -> None:
    sub(env, "x", sub_name="NONDURABLE")
    fails(C.MQRC_NO_SUBSCRIPTION, env.qm.subscriber.delete, "NONDURABLE")
    s = env.qm.subscriber.define("BY.ID", {"TOPICSTR": "x", "DESTCLAS": "MANAGED"})
    other = env.qm.subscriber.define("OTHER", {"TOPICSTR": "x", "DESTCLAS": "MANAGED"})
    fails(C.MQRC_NO_SUBSCRIPTION, env.qm.subscriber.delete, "BY.ID", other.sub_id)
    env.qm.subscriber.delete(sub_id=s.sub_id)
    assert env.qm.subscriptions.find("BY.ID") is None
    assert env.qm.objects.find(s.destination) is None
    assert env.qm.subscriptions.find("NONDURABLE") is not None


def test_expired_subscriptions_are_removed(env: Env) -> None:
    held = sub(env, "t", MANAGED | C.MQSO_DURABLE, sub_name="HELD", sub_expiry=10)
    kept = sub(env, "t", MANAGED | C.MQSO_DURABLE, sub_name="KEPT", sub_expiry=10)
    env.qm.close(env.hconn, kept.hsub)
    env.clock.advance(2)
    env.qm.tick()
    assert env.qm.subscriptions.find("KEPT") is None
    assert env.qm.objects.find(kept.queue_name) is None
    assert env.qm.subscriptions.find("HELD") is not None  # its handle is open
    env.qm.close(env.hconn, held.hsub)  # KEEP_SUB, but it has expired
    assert env.qm.subscriptions.find("HELD") is None


def test_maxhands_refuses_before_anything_is_made(env: Env) -> None:
    env.qm.objects.alter_qmgr({"MAXHANDS": len(env.qm.conn(env.hconn).handles) + 1})
    queues = set(env.qm.objects.queues)
    fails(C.MQRC_HANDLE_NOT_AVAILABLE, sub, env, "t")
    assert set(env.qm.objects.queues) == queues
    assert len(env.qm.subscriptions) == 0


def test_persistent_copy_to_a_given_temporary_queue_is_refused_not_converted(env: Env) -> None:
    env.qm.objects.alter_qmgr({"DEADQ": ""})
    temp = env.qm.open(env.hconn, ObjectDescriptor("SYSTEM.DEFAULT.MODEL.QUEUE"), C.MQOO_INPUT_AS_Q_DEF)
    s = sub(env, "t", C.MQSO_CREATE, hobj=temp.hobj)
    managed = sub(env, "t")
    assert publish(env, "t", b"np") == C.MQRC_NONE
    assert publish(env, "t", b"p", persistence=C.MQPER_PERSISTENT) == C.MQRC_NONE  # ALLDUR: non-durable dropped
    assert [r.data for r in received(env, s.hobj)] == [b"np"]
    got = received(env, managed.hobj)  # a managed temporary queue keeps it, non-persistent
    assert [(r.data, r.md.persistence) for r in got] == [(b"np", 0), (b"p", 0)]
