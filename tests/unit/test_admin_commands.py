"""The command executor through PCF bytes: every command, both encodings, IBM's reasons.

Requests are real PCF messages decoded by ferrymq.engine.commands.pcfmap.answer, the same
path the command server takes; the engine is real (MemoryJournal, fake clock).
"""

from __future__ import annotations

import struct

import pytest
from engine_helpers import Env

from ferrymq.engine.commands.pcfmap import answer
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command
from ferrymq.pcf.model import Command, Filter
from ferrymq.wire import pcf as P


@pytest.fixture(params=[P.NATIVE, P.REVERSED], ids=["normal", "reversed"])
def encoding(request: pytest.FixtureRequest) -> int:
    return int(request.param)


def run(env: Env, cmd: Command, encoding: int = P.NATIVE) -> list[P.PCFMessage]:
    raw = from_command(cmd).pack(encoding)
    return [P.PCFMessage.unpack(r, encoding) for r in answer(env.qm, raw, encoding)]


def values(msg: P.PCFMessage) -> dict[int, object]:
    return {p.parameter: getattr(p, "value", getattr(p, "values", None)) for p in msg.params}


def ok(env: Env, cmd: Command, encoding: int = P.NATIVE) -> list[dict[int, object]]:
    out = run(env, cmd, encoding)
    assert [(m.header.comp_code, m.header.reason) for m in out] == [(0, 0)] * len(out), out
    return [values(m) for m in out]


def fails(env: Env, cmd: Command, reason: int) -> None:
    out = run(env, cmd)
    assert len(out) == 1
    assert (out[0].header.comp_code, out[0].header.reason, out[0].header.control) == (C.MQCC_FAILED, reason, F.MQCFC_LAST)


def create(name: str, qtype: int = C.MQQT_LOCAL) -> Command:
    return Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: name, C.MQIA_Q_TYPE: qtype})


def test_responses_follow_ibm_layout(encoding: int) -> None:
    env = Env()
    for n in ("APP.A", "APP.B", "APP.C"):
        ok(env, create(n), encoding)
    raw = from_command(Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "APP.*"})).pack(encoding)
    replies = answer(env.qm, raw, encoding)
    bo = P.order(encoding)
    heads = [struct.unpack_from(bo + "9i", r) for r in replies]
    assert [h[:8] for h in heads] == [
        (F.MQCFT_RESPONSE, 36, 3, F.MQCMD_INQUIRE_Q, 1, F.MQCFC_NOT_LAST, 0, 0),
        (F.MQCFT_RESPONSE, 36, 3, F.MQCMD_INQUIRE_Q, 2, F.MQCFC_NOT_LAST, 0, 0),
        (F.MQCFT_RESPONSE, 36, 3, F.MQCMD_INQUIRE_Q, 3, F.MQCFC_LAST, 0, 0)]
    first = P.PCFMessage.unpack(replies[0], encoding)
    name = next(p for p in first.params if p.parameter == C.MQCA_Q_NAME)
    assert isinstance(name, P.CFST)
    # IBM pads names to MQ_Q_NAME_LENGTH: StrucLength 20 + 48
    assert struct.unpack_from(bo + "2i", replies[0], 36) == (F.MQCFT_STRING, 68)
    assert name.value == "APP.A"


def test_create_change_copy_delete_every_queue_type() -> None:
    env = Env()
    ok(env, create("L1"))
    ok(env, create("M1", C.MQQT_MODEL))
    ok(env, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "A1", C.MQIA_Q_TYPE: C.MQQT_ALIAS, C.MQCA_BASE_Q_NAME: "L1"}))
    ok(env, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "L1", C.MQIA_Q_TYPE: C.MQQT_LOCAL, C.MQIA_MAX_Q_DEPTH: 7,
                                       C.MQCA_Q_DESC: "orders"}))
    ok(env, Command(F.MQCMD_COPY_Q, {F.MQCACF_FROM_Q_NAME: "L1", F.MQCACF_TO_Q_NAME: "L2", C.MQIA_Q_TYPE: C.MQQT_LOCAL,
                                     C.MQIA_DEF_PRIORITY: 4}))
    l2 = env.qm.objects.require("L2")
    assert (l2["MAXDEPTH"], l2["DESCR"], l2["DEFPRTY"]) == (7, "orders", 4)
    ok(env, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "M1", C.MQIA_Q_TYPE: C.MQQT_MODEL,
                                       C.MQIA_DEFINITION_TYPE: C.MQQDT_PERMANENT_DYNAMIC}))
    assert env.qm.objects.require("M1")["DEFTYPE"] == C.MQQDT_PERMANENT_DYNAMIC
    alias = ok(env, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "A1", F.MQIACF_Q_ATTRS: (C.MQCA_BASE_Q_NAME,)}))
    assert alias == [{C.MQCA_Q_NAME: "A1", C.MQIA_Q_TYPE: C.MQQT_ALIAS, C.MQCA_BASE_Q_NAME: "L1"}]
    for name, qtype in (("A1", C.MQQT_ALIAS), ("M1", C.MQQT_MODEL), ("L2", C.MQQT_LOCAL)):
        ok(env, Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: name, C.MQIA_Q_TYPE: qtype}))
        assert env.qm.objects.find(name) is None


def test_replace_and_the_errors_ibm_gives() -> None:
    env = Env()
    ok(env, create("Q1"))
    fails(env, create("Q1"), F.MQRCCF_OBJECT_ALREADY_EXISTS)
    ok(env, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "Q1", C.MQIA_Q_TYPE: C.MQQT_LOCAL,
                                                                          F.MQIACF_REPLACE: F.MQRP_YES, C.MQIA_MAX_Q_DEPTH: 3}))
    assert env.qm.objects.require("Q1")["MAXDEPTH"] == 3
    fails(env, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "Q1", C.MQIA_Q_TYPE: C.MQQT_ALIAS, F.MQIACF_REPLACE: 1}),
          F.MQRCCF_OBJECT_WRONG_TYPE)
    fails(env, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "Q1", C.MQIA_Q_TYPE: C.MQQT_LOCAL, C.MQIA_DEF_PRIORITY: 10}),
          F.MQRCCF_ATTR_VALUE_ERROR)
    assert env.qm.objects.require("Q1")["DEFPRTY"] == 0
    bad = run(env, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "Q1", C.MQIA_Q_TYPE: 1, C.MQIA_DEF_PRIORITY: 10}))
    assert values(bad[0]) == {F.MQIACF_PARAMETER_ID: C.MQIA_DEF_PRIORITY}  # IBM names the parameter
    fails(env, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "NOPE", C.MQIA_Q_TYPE: C.MQQT_LOCAL}), C.MQRC_UNKNOWN_OBJECT_NAME)
    fails(env, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "Q1", C.MQIA_Q_TYPE: C.MQQT_ALIAS}), F.MQRCCF_OBJECT_WRONG_TYPE)
    fails(env, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "Q2"}), F.MQRCCF_PARM_MISSING)
    fails(env, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "bad name!", C.MQIA_Q_TYPE: 1}), F.MQRCCF_OBJECT_NAME_ERROR)
    fails(env, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "Q3", C.MQIA_Q_TYPE: 1, C.MQIA_BASE_TYPE: 1}),
          F.MQRCCF_CFIN_PARM_ID_ERROR)
    fails(env, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "ZZZ*"}), C.MQRC_UNKNOWN_OBJECT_NAME)
    fails(env, Command(F.MQCMD_REFRESH_Q_MGR, {}), F.MQRCCF_CFH_COMMAND_ERROR)  # a command not served
    fails(env, Command(F.MQCMD_COPY_Q, {F.MQCACF_FROM_Q_NAME: "Q1", F.MQCACF_TO_Q_NAME: "Q9", C.MQIA_Q_TYPE: C.MQQT_MODEL}),
          F.MQRCCF_LIKE_OBJECT_WRONG_TYPE)


def test_delete_and_clear_respect_messages_and_handles() -> None:
    env = Env()
    env.define("Q1")
    hobj = env.open("Q1")
    env.put(hobj, b"a")
    env.put(hobj, b"b", persistence=C.MQPER_PERSISTENT)
    fails(env, Command(F.MQCMD_CLEAR_Q, {C.MQCA_Q_NAME: "Q1"}), F.MQRCCF_OBJECT_OPEN)
    fails(env, Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: "Q1"}), F.MQRCCF_OBJECT_OPEN)
    env.qm.close(env.hconn, hobj)
    fails(env, Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: "Q1"}), C.MQRC_Q_NOT_EMPTY)
    ok(env, Command(F.MQCMD_CLEAR_Q, {C.MQCA_Q_NAME: "Q1"}))
    assert env.depth("Q1") == 0
    env.put(env.open("Q1", C.MQOO_OUTPUT), b"c")
    env.qm.disconnect(env.hconn)
    ok(env, Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: "Q1", F.MQIACF_PURGE: F.MQPO_YES}))
    assert env.qm.objects.find("Q1") is None
    fails(env, Command(F.MQCMD_CLEAR_Q, {C.MQCA_Q_NAME: "SYSTEM.DEFAULT.ALIAS.QUEUE"}), F.MQRCCF_Q_WRONG_TYPE)


def test_inquire_attributes_filters_and_names(encoding: int) -> None:
    env = Env()
    for n, depth in (("APP.A", 10), ("APP.B", 20), ("OTHER", 30)):
        ok(env, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: n, C.MQIA_Q_TYPE: 1,
                                                                          C.MQIA_MAX_Q_DEPTH: depth}), encoding)
    got = ok(env, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "*", C.MQIA_Q_TYPE: C.MQQT_LOCAL,
                                              F.MQIACF_Q_ATTRS: (C.MQIA_MAX_Q_DEPTH,)},
                          [Filter(C.MQIA_MAX_Q_DEPTH, F.MQCFOP_LESS, 25)]), encoding)
    assert [(r[C.MQCA_Q_NAME], r[C.MQIA_MAX_Q_DEPTH]) for r in got] == [("APP.A", 10), ("APP.B", 20)]
    got = ok(env, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "*"}, [Filter(C.MQCA_Q_NAME, F.MQCFOP_LIKE, "APP.*")]))
    assert [r[C.MQCA_Q_NAME] for r in got] == ["APP.A", "APP.B"]
    full = ok(env, Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "APP.A"}))[0]
    assert full[C.MQIA_MAX_MSG_LENGTH] == 4_194_304 and full[C.MQIA_CURRENT_Q_DEPTH] == 0 and C.MQCA_CREATION_DATE in full
    names = ok(env, Command(F.MQCMD_INQUIRE_Q_NAMES, {C.MQCA_Q_NAME: "APP.*", C.MQIA_Q_TYPE: C.MQQT_ALL}), encoding)
    assert names == [{F.MQCACF_Q_NAMES: ("APP.A", "APP.B"), F.MQIACF_Q_TYPES: (1, 1)}]


def test_queue_status_and_handles() -> None:
    env = Env()
    env.define("Q1")
    env.open("Q1", C.MQOO_INPUT_SHARED | C.MQOO_BROWSE)
    other = env.qm.connect(appl_name="putter", user="bob")
    hout = env.open("Q1", C.MQOO_OUTPUT, hconn=other)
    env.put(hout, b"x", hconn=other)
    env.clock.advance(42)
    env.put(hout, b"y", hconn=other, pmo=C.MQPMO_SYNCPOINT)
    st = ok(env, Command(F.MQCMD_INQUIRE_Q_STATUS, {C.MQCA_Q_NAME: "Q1"}))[0]
    assert st[F.MQIACF_Q_STATUS_TYPE] == F.MQIACF_Q_STATUS
    assert (st[C.MQIA_CURRENT_Q_DEPTH], st[C.MQIA_OPEN_INPUT_COUNT], st[C.MQIA_OPEN_OUTPUT_COUNT]) == (2, 1, 1)
    assert st[F.MQIACF_UNCOMMITTED_MSGS] == 1 and st[F.MQIACF_OLDEST_MSG_AGE] == 42
    assert str(st[F.MQCACF_LAST_PUT_DATE]).strip() and not str(st[F.MQCACF_LAST_GET_DATE]).strip()
    handles = ok(env, Command(F.MQCMD_INQUIRE_Q_STATUS, {C.MQCA_Q_NAME: "Q1", F.MQIACF_Q_STATUS_TYPE: F.MQIACF_Q_HANDLE}))
    who = {str(h[F.MQCACF_APPL_TAG]).strip(): h for h in handles}
    assert who["tests"][F.MQIACF_OPEN_INPUT_TYPE] == F.MQQSO_SHARED and who["tests"][F.MQIACF_OPEN_BROWSE] == F.MQQSO_YES
    assert who["putter"][F.MQIACF_OPEN_OUTPUT] == F.MQQSO_YES and str(who["putter"][F.MQCACF_USER_IDENTIFIER]).strip() == "bob"
    fails(env, Command(F.MQCMD_INQUIRE_Q_STATUS, {C.MQCA_Q_NAME: "SYSTEM.DEFAULT.ALIAS.QUEUE"}), F.MQRCCF_Q_WRONG_TYPE)
    conns = ok(env, Command(F.MQCMD_INQUIRE_CONNECTION, {F.MQBACF_GENERIC_CONNECTION_ID: b""}))
    tags = sorted(str(c[F.MQCACF_APPL_TAG]).strip() for c in conns)
    assert tags == ["putter", "tests"]
    putter = next(c for c in conns if str(c[F.MQCACF_APPL_TAG]).strip() == "putter")
    assert putter[F.MQIACF_UOW_STATE] == F.MQUOWST_ACTIVE
    one = ok(env, Command(F.MQCMD_INQUIRE_CONNECTION, {F.MQBACF_GENERIC_CONNECTION_ID: putter[F.MQBACF_CONNECTION_ID]}))
    assert len(one) == 1


def test_queue_manager_commands() -> None:
    env = Env()
    ok(env, Command(F.MQCMD_PING_Q_MGR))
    ok(env, Command(F.MQCMD_CHANGE_Q_MGR, {C.MQCA_Q_MGR_DESC: "test qm", C.MQIA_MAX_HANDLES: 500}))
    qm = ok(env, Command(F.MQCMD_INQUIRE_Q_MGR, {F.MQIACF_Q_MGR_ATTRS: (C.MQCA_Q_MGR_DESC, C.MQIA_MAX_HANDLES)}))[0]
    assert str(qm[C.MQCA_Q_MGR_NAME]).strip() == "QM1" and str(qm[C.MQCA_Q_MGR_DESC]).strip() == "test qm"
    assert qm[C.MQIA_MAX_HANDLES] == 500
    fails(env, Command(F.MQCMD_CHANGE_Q_MGR, {C.MQIA_PLATFORM: 3}), F.MQRCCF_CFIN_PARM_ID_ERROR)


def test_malformed_request_gets_a_failed_response_and_changes_nothing() -> None:
    env = Env()
    before = sorted(env.qm.objects.queues)
    for raw in (b"junk", P.PCFMessage(P.CFH(F.MQCFT_RESPONSE, F.MQCMD_PING_Q_MGR)).pack()):
        out = [P.PCFMessage.unpack(r) for r in answer(env.qm, raw, P.NATIVE)]
        assert out[0].header.comp_code == C.MQCC_FAILED and out[0].header.control == F.MQCFC_LAST
    dup = P.PCFMessage(P.CFH(F.MQCFT_COMMAND, F.MQCMD_CREATE_Q), (P.CFST(C.MQCA_Q_NAME, "X"), P.CFST(C.MQCA_Q_NAME, "Y"),
                                                                 P.CFIN(C.MQIA_Q_TYPE, 1))).pack()
    out = [P.PCFMessage.unpack(r) for r in answer(env.qm, dup, P.NATIVE)]
    assert out[0].header.reason == F.MQRCCF_CFST_DUPLICATE_PARM
    assert sorted(env.qm.objects.queues) == before
