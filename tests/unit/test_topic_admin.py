"""Topic and subscription administration through PCF bytes (the command server's path) and
through MQSC text: DEFINE/ALTER/DELETE/DISPLAY TOPIC, DISPLAY TPSTATUS, CLEAR TOPICSTR,
DEFINE/ALTER/DELETE/DISPLAY SUB, DISPLAY SBSTATUS, with IBM's reasons for refusals."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.admin.mqsc import MqscSyntaxError, parse, to_command
from ferrymq.admin.session import Session
from ferrymq.engine.api import ObjectDescriptor, PutOptions, SubDescriptor
from ferrymq.engine.commands.pcfmap import answer, run
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command
from ferrymq.pcf.model import Command, Filter
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD


def pcf(env: Env, cmd: Command, encoding: int = P.NATIVE) -> list[P.PCFMessage]:
    raw = from_command(cmd).pack(encoding)
    return [P.PCFMessage.unpack(r, encoding) for r in answer(env.qm, raw, encoding)]


def ok(env: Env, cmd: Command, encoding: int = P.NATIVE) -> list[dict[int, object]]:
    out = pcf(env, cmd, encoding)
    assert [(m.header.comp_code, m.header.reason) for m in out] == [(0, 0)] * len(out), out
    return [{p.parameter: getattr(p, "value", getattr(p, "values", None)) for p in m.params} for m in out]


def fails(env: Env, cmd: Command, reason: int) -> None:
    out = pcf(env, cmd)
    assert [(m.header.comp_code, m.header.reason) for m in out] == [(C.MQCC_FAILED, reason)]


def topic(name: str, string: str, **attrs: int | str) -> Command:
    params: dict[int, object] = {C.MQCA_TOPIC_NAME: name, C.MQCA_TOPIC_STRING: string}
    params.update({getattr(C, k): v for k, v in attrs.items()})
    return Command(F.MQCMD_CREATE_TOPIC, params)  # type: ignore[arg-type]


def mqsc(env: Env, *texts: str) -> list[list[str]]:
    session = Session(lambda cmd: run(env.qm, cmd))
    return [session.execute(t).messages for t in texts]


# -- TOPIC objects through PCF --------------------------------------------------------------
@pytest.mark.parametrize("encoding", [P.NATIVE, P.REVERSED])
def test_create_inquire_change_copy_delete_topic(encoding: int) -> None:
    env = Env()
    ok(env, topic("SPORT", "Sport", MQIA_DEF_PRIORITY=4, MQIA_INHIBIT_PUB=C.MQTA_PUB_INHIBITED), encoding)
    [row] = ok(env, Command(F.MQCMD_INQUIRE_TOPIC, {C.MQCA_TOPIC_NAME: "SPORT"}), encoding)
    assert str(row[C.MQCA_TOPIC_NAME]).rstrip() == "SPORT"
    assert row[C.MQCA_TOPIC_STRING] == "Sport"  # an MQCHARV field: not padded
    assert (row[C.MQIA_TOPIC_TYPE], row[C.MQIA_DEF_PRIORITY], row[C.MQIA_INHIBIT_PUB]) == (
        C.MQTOPT_LOCAL, 4, C.MQTA_PUB_INHIBITED)
    assert row[C.MQIA_TOPIC_DEF_PERSISTENCE] == C.MQPER_PERSISTENCE_AS_PARENT  # as defined, not resolved
    ok(env, Command(F.MQCMD_CHANGE_TOPIC, {C.MQCA_TOPIC_NAME: "SPORT", C.MQIA_DEF_PRIORITY: 6}), encoding)
    ok(env, Command(F.MQCMD_COPY_TOPIC, {F.MQCACF_FROM_TOPIC_NAME: "SPORT", F.MQCACF_TO_TOPIC_NAME: "GOLF",
                                         C.MQCA_TOPIC_STRING: "Sport/Golf"}), encoding)
    rows = ok(env, Command(F.MQCMD_INQUIRE_TOPIC, {C.MQCA_TOPIC_NAME: "*", F.MQIACF_TOPIC_ATTRS: (C.MQIA_DEF_PRIORITY,)},
                           [Filter(C.MQIA_DEF_PRIORITY, F.MQCFOP_EQUAL, 6)]), encoding)
    assert [(str(r[C.MQCA_TOPIC_NAME]).rstrip(), r[C.MQIA_DEF_PRIORITY]) for r in rows] == [("GOLF", 6), ("SPORT", 6)]
    [names] = ok(env, Command(F.MQCMD_INQUIRE_TOPIC_NAMES, {C.MQCA_TOPIC_NAME: "*"}), encoding)
    assert [n.rstrip() for n in names[F.MQCACF_TOPIC_NAMES]] == [  # type: ignore[attr-defined]
        "GOLF", "SPORT", "SYSTEM.BASE.TOPIC", "SYSTEM.DEFAULT.TOPIC"]
    assert ok(env, Command(F.MQCMD_INQUIRE_TOPIC, {C.MQCA_TOPIC_NAME: "*", C.MQIA_TOPIC_TYPE: C.MQTOPT_CLUSTER}),
              encoding) == [{}]  # no cluster topics: the one empty final response
    ok(env, Command(F.MQCMD_DELETE_TOPIC, {C.MQCA_TOPIC_NAME: "GOLF"}), encoding)
    assert env.qm.state.topics.find("GOLF") is None


def test_topic_refusals_through_pcf() -> None:
    env = Env()
    ok(env, topic("SPORT", "Sport"))
    before = {t.name: dict(t.attrs) for t in env.qm.state.topics}
    fails(env, topic("SPORT", "Other"), F.MQRCCF_OBJECT_ALREADY_EXISTS)
    fails(env, topic("OTHER", "Sport"), F.MQRCCF_TOPICSTR_ALREADY_EXISTS)
    fails(env, Command(F.MQCMD_CREATE_TOPIC, {C.MQCA_TOPIC_NAME: "NOSTR"}), F.MQRCCF_PARM_MISSING)
    fails(env, topic("BAD", "x", MQIA_DEF_PRIORITY=12), F.MQRCCF_ATTR_VALUE_ERROR)
    fails(env, topic("BAD", "x", MQIA_MAX_Q_DEPTH=5), F.MQRCCF_CFIN_PARM_ID_ERROR)
    fails(env, Command(F.MQCMD_CHANGE_TOPIC, {C.MQCA_TOPIC_NAME: "SPORT", C.MQCA_TOPIC_STRING: "x"}),
          C.MQRC_TOPIC_NOT_ALTERABLE)
    fails(env, Command(F.MQCMD_CHANGE_TOPIC, {C.MQCA_TOPIC_NAME: "SYSTEM.BASE.TOPIC",
                                              C.MQIA_DEF_PRIORITY: C.MQPRI_PRIORITY_AS_PARENT}), F.MQRCCF_ATTR_VALUE_ERROR)
    fails(env, Command(F.MQCMD_DELETE_TOPIC, {C.MQCA_TOPIC_NAME: "NOPE"}), C.MQRC_UNKNOWN_OBJECT_NAME)
    fails(env, Command(F.MQCMD_INQUIRE_TOPIC, {C.MQCA_TOPIC_NAME: "NOPE"}), C.MQRC_UNKNOWN_OBJECT_NAME)
    fails(env, Command(F.MQCMD_INQUIRE_TOPIC, {C.MQCA_TOPIC_NAME: "*", C.MQIA_TOPIC_TYPE: 7}), F.MQRCCF_TOPIC_TYPE_ERROR)
    fails(env, Command(F.MQCMD_COPY_TOPIC, {F.MQCACF_FROM_TOPIC_NAME: "NOPE", F.MQCACF_TO_TOPIC_NAME: "X",
                                            C.MQCA_TOPIC_STRING: "x"}), C.MQRC_UNKNOWN_OBJECT_NAME)
    assert {t.name: dict(t.attrs) for t in env.qm.state.topics} == before


# -- the topic tree's status -----------------------------------------------------------------
def publisher(env: Env, string: str) -> int:
    od = ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string=string)
    return env.qm.open(env.hconn, od, C.MQOO_OUTPUT).hobj


def test_topic_status_resolves_and_counts() -> None:
    env = Env()
    ok(env, topic("SPORT", "Sport", MQIA_DEF_PRIORITY=4))
    ok(env, topic("TENNIS", "Sport/Tennis", MQIA_TOPIC_DEF_PERSISTENCE=C.MQPER_PERSISTENT))
    env.define("SUBQ")
    ok(env, Command(F.MQCMD_CREATE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "S1", C.MQCA_TOPIC_STRING: "Sport/Tennis/Final",
                                                  F.MQIACF_DESTINATION_CLASS: C.MQDC_PROVIDED,
                                                  F.MQCACF_DESTINATION: "SUBQ"}))
    hobj = publisher(env, "Sport/Tennis/Final")
    env.qm.put(env.hconn, hobj, MQMD(), PutOptions(C.MQPMO_RETAIN), b"score")
    rows = ok(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "Sport/#"}))
    by = {r[C.MQCA_TOPIC_STRING]: r for r in rows}
    assert sorted(by) == ["Sport", "Sport/Tennis", "Sport/Tennis/Final"]
    final = by["Sport/Tennis/Final"]
    assert (final[C.MQIA_DEF_PRIORITY], final[C.MQIA_TOPIC_DEF_PERSISTENCE]) == (4, C.MQPER_PERSISTENT)
    assert (final[C.MQIA_SUB_COUNT], final[C.MQIA_PUB_COUNT], final[F.MQIACF_RETAINED_PUBLICATION]) == (1, 1, F.MQQSO_YES)
    assert str(final[C.MQCA_ADMIN_TOPIC_NAME]).strip() == ""
    assert str(by["Sport/Tennis"][C.MQCA_ADMIN_TOPIC_NAME]).strip() == "TENNIS"
    assert by["Sport"][C.MQIA_TOPIC_DEF_PERSISTENCE] == C.MQPER_NOT_PERSISTENT  # from SYSTEM.BASE.TOPIC
    [sub] = ok(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "Sport/Tennis/Final",
                                                           F.MQIACF_TOPIC_STATUS_TYPE: F.MQIACF_TOPIC_SUB}))
    assert sub[F.MQBACF_SUB_ID] == env.qm.subscriptions.find("S1").sub_id  # type: ignore[union-attr]
    [pub] = ok(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "Sport/Tennis/Final",
                                                           F.MQIACF_TOPIC_STATUS_TYPE: F.MQIACF_TOPIC_PUB}))
    assert F.MQBACF_CONNECTION_ID in pub
    # CLEAR TOPICSTR CLRTYPE(RETAINED) forgets the retained publication.
    ok(env, Command(F.MQCMD_CLEAR_TOPIC_STRING, {C.MQCA_TOPIC_STRING: "Sport/Tennis/Final",
                                                 F.MQIACF_CLEAR_TYPE: F.MQCLRT_RETAINED}))
    [final] = ok(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "Sport/Tennis/Final",
                                                             F.MQIACF_TOPIC_STATUS_ATTRS: (F.MQIACF_RETAINED_PUBLICATION,)}))
    assert final == {C.MQCA_TOPIC_STRING: "Sport/Tennis/Final", F.MQIACF_RETAINED_PUBLICATION: F.MQQSO_NO}
    fails(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "Chess"}), F.MQRCCF_TOPIC_STRING_NOT_FOUND)
    fails(env, Command(F.MQCMD_CLEAR_TOPIC_STRING, {C.MQCA_TOPIC_STRING: "Chess", F.MQIACF_CLEAR_TYPE: 1}),
          F.MQRCCF_TOPIC_STRING_NOT_FOUND)
    fails(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "#", F.MQIACF_TOPIC_STATUS_TYPE: 9}),
          F.MQRCCF_PARM_VALUE_ERROR)


def test_wildcard_block_hides_a_branch_from_tpstatus_wildcards() -> None:
    env = Env()
    ok(env, topic("OPEN", "a/open"))
    ok(env, topic("HIDDEN", "a/hidden", MQIA_WILDCARD_OPERATION=C.MQTA_BLOCK))
    rows = ok(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "#"}))
    assert [r[C.MQCA_TOPIC_STRING] for r in rows] == ["a", "a/open"]
    assert len(ok(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "a/hidden"}))) == 1


# -- subscriptions through PCF (what pymqi's test_pubsub sends) -------------------------------
def test_create_inquire_change_copy_delete_subscription() -> None:
    env = Env()
    env.define("SUBQ")
    ok(env, Command(F.MQCMD_CREATE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "PROVIDED", C.MQCA_TOPIC_STRING: "a/b",
                                                  F.MQIACF_DESTINATION_CLASS: C.MQDC_PROVIDED,
                                                  F.MQCACF_DESTINATION: "SUBQ", F.MQCACF_SUB_USER_DATA: "hello"}))
    ok(env, Command(F.MQCMD_CREATE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "MANAGED", C.MQCA_TOPIC_STRING: "a/#",
                                                  F.MQIACF_DESTINATION_CLASS: C.MQDC_MANAGED}))
    rows = ok(env, Command(F.MQCMD_INQUIRE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "*", F.MQIACF_SUB_ATTRS: (F.MQIACF_ALL,)}))
    by = {r[F.MQCACF_SUB_NAME]: r for r in rows}
    assert sorted(by) == ["MANAGED", "PROVIDED"]
    assert (str(by["PROVIDED"][F.MQCACF_DESTINATION]).rstrip(), by["PROVIDED"][F.MQCACF_SUB_USER_DATA]) == ("SUBQ", "hello")
    assert by["MANAGED"][F.MQIACF_DESTINATION_CLASS] == C.MQDC_MANAGED
    assert by["MANAGED"][F.MQIACF_DURABLE_SUBSCRIPTION] == C.MQSUB_DURABLE_YES
    managed_q = str(by["MANAGED"][F.MQCACF_DESTINATION]).rstrip()
    assert env.qm.objects.find(managed_q) is not None
    ok(env, Command(F.MQCMD_CHANGE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "PROVIDED", F.MQCACF_SUB_USER_DATA: "bye"}))
    ok(env, Command(F.MQCMD_COPY_SUBSCRIPTION, {F.MQCACF_FROM_SUB_NAME: "PROVIDED", F.MQCACF_TO_SUB_NAME: "COPY"}))
    [copy] = ok(env, Command(F.MQCMD_INQUIRE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "COPY",
                                                            F.MQIACF_SUB_ATTRS: (C.MQCA_TOPIC_STRING,
                                                                                 F.MQCACF_SUB_USER_DATA)}))
    assert (copy[C.MQCA_TOPIC_STRING], copy[F.MQCACF_SUB_USER_DATA]) == ("a/b", "bye")
    sub_id = env.qm.subscriptions.find("COPY").sub_id  # type: ignore[union-attr]
    [status] = ok(env, Command(F.MQCMD_INQUIRE_SUB_STATUS, {F.MQBACF_SUB_ID: sub_id}))
    assert (status[F.MQCACF_SUB_NAME], status[F.MQIACF_MESSAGE_COUNT]) == ("COPY", 0)
    ok(env, Command(F.MQCMD_DELETE_SUBSCRIPTION, {F.MQBACF_SUB_ID: sub_id}))
    ok(env, Command(F.MQCMD_DELETE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "PROVIDED"}))
    ok(env, Command(F.MQCMD_DELETE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "MANAGED"}))
    assert len(env.qm.subscriptions) == 0


def test_subscription_refusals_through_pcf() -> None:
    env = Env()
    env.define("SUBQ")
    create = Command(F.MQCMD_CREATE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "S1", C.MQCA_TOPIC_STRING: "a",
                                                   F.MQIACF_DESTINATION_CLASS: C.MQDC_PROVIDED,
                                                   F.MQCACF_DESTINATION: "SUBQ"})
    ok(env, create)
    fails(env, create, F.MQRCCF_SUB_ALREADY_EXISTS)
    fails(env, Command(F.MQCMD_DELETE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "NOPE"}), C.MQRC_NO_SUBSCRIPTION)
    fails(env, Command(F.MQCMD_DELETE_SUBSCRIPTION, {}), F.MQRCCF_PARM_MISSING)
    fails(env, Command(F.MQCMD_CHANGE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "S1", C.MQCA_TOPIC_STRING: "b"}),
          C.MQRC_TOPIC_NOT_ALTERABLE)
    fails(env, Command(F.MQCMD_CREATE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "S2", C.MQCA_TOPIC_STRING: "a",
                                                     F.MQIACF_PUB_PRIORITY: 12}), F.MQRCCF_ATTR_VALUE_ERROR)
    fails(env, Command(F.MQCMD_INQUIRE_SUBSCRIPTION, {F.MQCACF_SUB_NAME: "NOPE"}), C.MQRC_NO_SUBSCRIPTION)
    assert [s.key for s in env.qm.subscriptions] == ["S1"]


# -- MQSC --------------------------------------------------------------------------------------
def test_mqsc_topics_and_subscriptions() -> None:
    env = Env()
    env.define("SUBQ")
    out = mqsc(env, "DEFINE TOPIC(SPORT) TOPICSTR('Sport') DEFPRTY(4) DESCR('all sport')",
               "DEF TOPIC(TENNIS) LIKE(SPORT) TOPICSTR('Sport/Tennis') PUB(DISABLED)",
               "ALTER TOPIC(TENNIS) DEFPSIST(YES)",
               "DISPLAY TOPIC(TENNIS) DESCR DEFPRTY PUB DEFPSIST",
               "DEFINE SUB('mine') TOPICSTR('Sport/Tennis/x') DEST(SUBQ) USERDATA('u')",
               "DISPLAY TPSTATUS('Sport/Tennis/x') DEFPSIST DEFPRTY PUB",
               "DISPLAY SUB('mine') TOPICSTR DEST USERDATA",
               "DISPLAY SBSTATUS('mine') NUMMSGS",
               "DISPLAY TPSTATUS('Sport/Tennis/x') SUBCOUNT",
               "DELETE SUB('mine')",
               "DELETE TOPIC(TENNIS)")
    assert out[0] == ["AMQ8690I: Topic created."]
    assert out[3][1:] == ["   TOPIC(TENNIS)                           TYPE(LOCAL)",
                          "   DESCR(all sport)                        PUB(DISABLED)",
                          "   DEFPSIST(YES)                           DEFPRTY(4)"]
    assert out[4] == ["AMQ8094I: Subscription created."]
    assert out[5][1:] == ["   TOPICSTR(Sport/Tennis/x)                PUB(DISABLED)",
                          "   DEFPSIST(YES)                           DEFPRTY(4)"]
    assert "   TOPICSTR(Sport/Tennis/x)                DEST(SUBQ)" in out[6]
    assert "   USERDATA(u)" in out[6]
    assert any("NUMMSGS(0)" in line for line in out[7])
    assert any("SUBCOUNT(1)" in line for line in out[8])
    assert out[9] == ["AMQ8095I: Subscription deleted."] and out[10] == ["AMQ8692I: Topic deleted."]
    assert env.qm.state.topics.find("TENNIS") is None


def test_mqsc_refusals_name_the_reason() -> None:
    env = Env()
    out = mqsc(env, "DEFINE TOPIC(T1) TOPICSTR('a')", "DEFINE TOPIC(T2) TOPICSTR('a')",
               "ALTER TOPIC(T1) TOPICSTR('b')", "DISPLAY TPSTATUS('zz')", "DELETE SUB(NONE)")
    assert "3300 (MQRCCF_TOPICSTR_ALREADY_EXISTS)" in out[1][1]
    assert "2510 (MQRC_TOPIC_NOT_ALTERABLE)" in out[2][1]
    assert "3308 (MQRCCF_TOPIC_STRING_NOT_FOUND)" in out[3][1]
    assert "2428 (MQRC_NO_SUBSCRIPTION)" in out[4][1]


@pytest.mark.parametrize(("text", "command"), [
    ("DEFINE TOPIC(T) TOPICSTR('a/B') REPLACE", F.MQCMD_CREATE_TOPIC),
    ("DEFINE TOPIC(T) LIKE(U) TOPICSTR('x')", F.MQCMD_COPY_TOPIC),
    ("DISPLAY TOPIC(*) TYPE(LOCAL) WHERE(PUB EQ DISABLED)", F.MQCMD_INQUIRE_TOPIC),
    ("DIS TPSTATUS('#') TYPE(SUB)", F.MQCMD_INQUIRE_TOPIC_STATUS),
    ("CLEAR TOPICSTR('a/b') CLRTYPE(RETAINED) SCOPE(LOCAL)", F.MQCMD_CLEAR_TOPIC_STRING),
    ("DEFINE SUB(S) TOPICSTR('a') DESTCLAS(MANAGED) DESTCORL(00FF)", F.MQCMD_CREATE_SUBSCRIPTION),
    ("DEFINE SUB(S) LIKE(R)", F.MQCMD_COPY_SUBSCRIPTION),
    ("ALTER SUB(S) USERDATA('x')", F.MQCMD_CHANGE_SUBSCRIPTION),
    ("DISPLAY SUB(*) DURABLE(YES) SUBTYPE(ADMIN)", F.MQCMD_INQUIRE_SUBSCRIPTION),
    ("DISPLAY SBSTATUS(*) SUBID(0A0B)", F.MQCMD_INQUIRE_SUB_STATUS),
    ("DELETE SUB(S)", F.MQCMD_DELETE_SUBSCRIPTION),
])
def test_mqsc_parses_to_the_pcf_command(text: str, command: int) -> None:
    cmd = to_command(parse(text))
    assert cmd.command == command
    if command == F.MQCMD_CREATE_TOPIC:
        assert cmd.params[C.MQCA_TOPIC_STRING] == "a/B"  # quoted: case kept
    if command == F.MQCMD_CREATE_SUBSCRIPTION:
        assert cmd.params[F.MQBACF_DESTINATION_CORREL_ID] == b"\x00\xff"


@pytest.mark.parametrize("text", [
    "DEFINE TOPIC(T) MAXDEPTH(5)", "DEFINE TOPIC(T) DEFPRTY(HIGH)", "CLEAR TOPICSTR('a')",
    "CLEAR TOPICSTR('a') CLRTYPE(ALL)", "DISPLAY TPSTATUS('#') TYPE(QUEUE)", "DELETE TOPIC(T) PURGE",
    "DEFINE SUB(S) DESTCORL(XYZ)", "DISPLAY SUB(*) DURABLE(MAYBE)",
])
def test_mqsc_syntax_errors(text: str) -> None:
    with pytest.raises(MqscSyntaxError):
        to_command(parse(text))


def test_subscribing_with_mqsub_shows_in_sbstatus() -> None:
    env = Env()
    sd = SubDescriptor(C.MQSO_CREATE | C.MQSO_MANAGED | C.MQSO_NON_DURABLE, object_string="x/y")
    env.qm.subscribe(env.hconn, sd)
    rows = ok(env, Command(F.MQCMD_INQUIRE_SUB_STATUS, {F.MQCACF_SUB_NAME: "*"}))
    assert len(rows) == 1 and rows[0][F.MQIACF_DURABLE_SUBSCRIPTION] == C.MQSUB_DURABLE_NO
    assert rows[0][F.MQBACF_CONNECTION_ID] != bytes(24)
    assert ok(env, Command(F.MQCMD_INQUIRE_SUB_STATUS, {F.MQCACF_SUB_NAME: "*",
                                                        F.MQIACF_DURABLE_SUBSCRIPTION: C.MQSUB_DURABLE_YES})) == [{}]


def test_definitions_made_with_mqsc_govern_publish_and_subscribe() -> None:
    env = Env()
    out = mqsc(env, "DEFINE TOPIC(SPORT) TOPICSTR('Sport') PUB(DISABLED)",
               "DEFINE TOPIC(TENNIS) TOPICSTR('Sport/Tennis') PUB(ENABLED) SUB(DISABLED)")
    assert out == [["AMQ8690I: Topic created."]] * 2
    golf = env.qm.open(env.hconn, ObjectDescriptor("SPORT", object_type=C.MQOT_TOPIC, object_string="Golf"),
                       C.MQOO_OUTPUT)
    with pytest.raises(MQError) as err:
        env.qm.put(env.hconn, golf.hobj, MQMD(), PutOptions(), b"x")
    assert err.value.reason == C.MQRC_PUT_INHIBITED
    assert golf.res_object_string == "Sport/Golf"
    with pytest.raises(MQError) as err:
        env.qm.subscribe(env.hconn, SubDescriptor(C.MQSO_CREATE | C.MQSO_MANAGED, object_name="TENNIS"))
    assert err.value.reason == C.MQRC_SUB_INHIBITED
    mqsc(env, "ALTER TOPIC(TENNIS) SUB(ASPARENT)")
    env.qm.subscribe(env.hconn, SubDescriptor(C.MQSO_CREATE | C.MQSO_MANAGED, object_name="TENNIS"))
    tennis = env.qm.open(env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="Sport/Tennis"),
                         C.MQOO_OUTPUT)
    env.qm.put(env.hconn, tennis.hobj, MQMD(), PutOptions(), b"served")
    [row] = ok(env, Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: "Sport/Tennis",
                                                           F.MQIACF_TOPIC_STATUS_ATTRS: (C.MQIA_SUB_COUNT,
                                                                                         C.MQIA_PUB_COUNT)}))
    assert (row[C.MQIA_SUB_COUNT], row[C.MQIA_PUB_COUNT]) == (1, 1)


def test_tab_completion_knows_the_topic_and_subscription_words() -> None:
    from ferrymq.cli.mqsc import words

    vocabulary = set(words())
    assert {"TOPIC", "TPSTATUS", "SUB", "SBSTATUS", "TOPICSTR", "MDURMDL", "PMSGDLV", "DESTCLAS", "SUBCOUNT",
            "CLRTYPE"} <= vocabulary
