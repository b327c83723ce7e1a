"""Instrumentation events against IBM's rules: queue depth high/low/full with their enabling
and statistics, inhibit, unknown object, start/stop, configuration and command events,
each decoded with ferrymq's PCF codec."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.engine.api import ObjectDescriptor, PutOptions, SubDescriptor
from ferrymq.engine.authority import PRINCIPAL
from ferrymq.engine.commands.pcfmap import run
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD

_IN = C.MQOO_INPUT_AS_Q_DEF


def events(env: Env, queue: str) -> list[tuple[P.CFH, dict[int, object]]]:
    """Take every event message on ``queue`` and decode it."""
    q = env.qm.objects.require(queue)
    out = []
    for msg in list(q.messages.by_seq.values()):
        assert msg.md.format == C.MQFMT_EVENT.rstrip() and msg.md.put_appl_type == C.MQAT_QMGR
        decoded = P.PCFMessage.unpack(msg.data, msg.md.encoding)
        params: dict[int, object] = {}
        for p in decoded.params:
            params[p.parameter] = p.params if isinstance(p, P.CFGR) else getattr(p, "value", getattr(p, "values", None))
        out.append((decoded.header, params))
        q.messages.remove(msg)
    return out


def test_depth_high_full_and_low_follow_the_enabling_rules() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"PERFMEV": "ENABLED"})
    env.define("DEEP", MAXDEPTH=10, QDEPTHHI=80, QDEPTHLO=20, QDPHIEV="ENABLED", QDPMAXEV="DISABLED")
    h = env.open("DEEP")
    for _ in range(7):
        env.put(h)
    assert events(env, "SYSTEM.ADMIN.PERFM.EVENT") == []
    env.put(h)  # the 8th: 80 % of MAXDEPTH
    [(cfh, params)] = events(env, "SYSTEM.ADMIN.PERFM.EVENT")
    assert (cfh.type, cfh.command, cfh.comp_code, cfh.reason) == (F.MQCFT_EVENT, F.MQCMD_PERFM_EVENT, C.MQCC_WARNING,
                                                                  C.MQRC_Q_DEPTH_HIGH)
    assert params[C.MQCA_Q_MGR_NAME] == "QM1" and params[C.MQCA_BASE_OBJECT_NAME] == "DEEP"
    assert (params[C.MQIA_HIGH_Q_DEPTH], params[C.MQIA_MSG_ENQ_COUNT], params[C.MQIA_MSG_DEQ_COUNT]) == (8, 8, 0)
    attrs = env.qm.objects.require("DEEP").attrs
    assert (attrs["QDPHIEV"], attrs["QDPLOEV"], attrs["QDPMAXEV"]) == (F.MQEVR_DISABLED, F.MQEVR_ENABLED, F.MQEVR_ENABLED)
    env.put(h)
    env.put(h)
    with pytest.raises(MQError) as refused:
        env.put(h)
    assert refused.value.reason == C.MQRC_Q_FULL
    [(cfh, params)] = events(env, "SYSTEM.ADMIN.PERFM.EVENT")
    assert cfh.reason == C.MQRC_Q_FULL and params[C.MQIA_MSG_ENQ_COUNT] == 2  # reset by the high event
    with pytest.raises(MQError):
        env.put(h)
    assert events(env, "SYSTEM.ADMIN.PERFM.EVENT") == []  # Queue Full disabled itself
    for _ in range(8):
        env.get(h)
    [(cfh, params)] = events(env, "SYSTEM.ADMIN.PERFM.EVENT")
    assert cfh.reason == C.MQRC_Q_DEPTH_LOW and params[C.MQIA_MSG_DEQ_COUNT] == 8
    assert env.qm.objects.require("DEEP").attrs["QDPHIEV"] == F.MQEVR_ENABLED


def test_no_performance_events_without_perfmev() -> None:
    env = Env()
    env.define("DEEP", MAXDEPTH=2, QDEPTHHI=50, QDPHIEV="ENABLED")
    h = env.open("DEEP")
    env.put(h)
    env.put(h)
    assert events(env, "SYSTEM.ADMIN.PERFM.EVENT") == []


def test_inhibit_and_unknown_object_events() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"INHIBTEV": "ENABLED", "LOCALEV": "ENABLED"})
    env.define("SHUT", PUT="DISABLED", GET="DISABLED")
    h = env.open("SHUT")
    with pytest.raises(MQError):
        env.put(h)
    with pytest.raises(MQError):
        env.get(h)
    with pytest.raises(MQError):
        env.open("NOT.THERE")
    got = events(env, "SYSTEM.ADMIN.QMGR.EVENT")
    assert [cfh.reason for cfh, _ in got] == [C.MQRC_PUT_INHIBITED, C.MQRC_GET_INHIBITED, C.MQRC_UNKNOWN_OBJECT_NAME]
    assert all(cfh.command == F.MQCMD_Q_MGR_EVENT for cfh, _ in got)
    assert got[0][1][C.MQCA_Q_NAME] == "SHUT" and got[0][1][F.MQCACF_APPL_NAME] == "tests"
    assert got[2][1][C.MQCA_Q_NAME] == "NOT.THERE" and got[2][1][F.MQIACF_OBJECT_TYPE] == C.MQOT_Q


@pytest.mark.parametrize("switched", [False, True])
def test_put1_inhibit_event_only_when_switched_on(switched: bool) -> None:
    env = Env()
    if switched:
        env.qm.objects.alter_qmgr({"INHIBTEV": "ENABLED"})
    env.define("SHUT", PUT="DISABLED")
    with pytest.raises(MQError):
        env.qm.put1(env.hconn, ObjectDescriptor(object_name="SHUT"), MQMD(), PutOptions(0), b"x")
    assert [c.reason for c, _ in events(env, "SYSTEM.ADMIN.QMGR.EVENT")] == ([C.MQRC_PUT_INHIBITED] if switched else [])


def test_start_and_stop_events() -> None:
    env = Env()  # the server announces the start and the end (server.server); the engine's part:
    env.qm.events.started()
    [(cfh, params)] = events(env, "SYSTEM.ADMIN.QMGR.EVENT")
    assert cfh.reason == C.MQRC_Q_MGR_ACTIVE and params[C.MQCA_Q_MGR_NAME] == "QM1"
    env.qm.events.stopping(quiescing=True)
    env.qm.events.stopping(quiescing=False)
    got = events(env, "SYSTEM.ADMIN.QMGR.EVENT")
    assert [(c.reason, p[F.MQIACF_REASON_QUALIFIER]) for c, p in got] == [
        (C.MQRC_Q_MGR_NOT_ACTIVE, F.MQRQ_Q_MGR_QUIESCING), (C.MQRC_Q_MGR_NOT_ACTIVE, F.MQRQ_Q_MGR_STOPPING)]
    env.qm.objects.alter_qmgr({"STRSTPEV": "DISABLED"})
    env.qm.events.started()
    assert events(env, "SYSTEM.ADMIN.QMGR.EVENT") == []


def test_configuration_events_for_create_change_delete() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"CONFIGEV": "ENABLED"})
    run(env.qm, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "CFG.Q", C.MQIA_Q_TYPE: C.MQQT_LOCAL, C.MQIA_MAX_Q_DEPTH: 7}))
    run(env.qm, Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "CFG.Q", C.MQIA_MAX_Q_DEPTH: 9}))
    run(env.qm, Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: "CFG.Q"}))
    got = events(env, "SYSTEM.ADMIN.CONFIG.EVENT")
    assert [(c.reason, c.msg_seq_number, c.control) for c, _ in got] == [
        (C.MQRC_CONFIG_CREATE_OBJECT, 1, F.MQCFC_LAST), (C.MQRC_CONFIG_CHANGE_OBJECT, 1, F.MQCFC_NOT_LAST),
        (C.MQRC_CONFIG_CHANGE_OBJECT, 2, F.MQCFC_LAST), (C.MQRC_CONFIG_DELETE_OBJECT, 1, F.MQCFC_LAST)]
    assert [p[C.MQIA_MAX_Q_DEPTH] for _, p in got] == [7, 7, 9, 9]
    assert all(p[F.MQIACF_OBJECT_TYPE] == C.MQOT_Q and p[C.MQCA_Q_NAME] == "CFG.Q" for _, p in got)
    assert all(c.command == F.MQCMD_CONFIG_EVENT for c, _ in got)


def test_command_events_and_nodisplay() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"CMDEV": "NODISPLAY"})
    run(env.qm, Command(F.MQCMD_INQUIRE_Q_MGR, {F.MQIACF_Q_MGR_ATTRS: (F.MQIACF_ALL,)}))
    run(env.qm, Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "CMD.Q", C.MQIA_Q_TYPE: C.MQQT_LOCAL}))
    [(cfh, params)] = events(env, "SYSTEM.ADMIN.COMMAND.EVENT")
    assert (cfh.command, cfh.reason) == (F.MQCMD_COMMAND_EVENT, C.MQRC_COMMAND_PCF)
    context, data = params[F.MQGACF_COMMAND_CONTEXT], params[F.MQGACF_COMMAND_DATA]
    assert P.CFIN(F.MQIACF_COMMAND, F.MQCMD_CREATE_Q) in context  # type: ignore[operator]
    assert any(getattr(p, "value", None) == "CMD.Q" for p in data)  # type: ignore[attr-defined]


def test_service_interval_events_as_ibms_examples() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"PERFMEV": "ENABLED"})
    env.define("SVC", QSVCIEV="HIGH", QSVCINT=1000)
    h = env.open("SVC")
    env.put(h)  # P1 on an empty queue: the service timer starts
    env.clock.advance(1.5)
    env.get(h)  # G1 after the interval: High, then OK events are the ones switched on
    [(cfh, params)] = events(env, "SYSTEM.ADMIN.PERFM.EVENT")
    assert cfh.reason == C.MQRC_Q_SERVICE_INTERVAL_HIGH and params[C.MQCA_BASE_OBJECT_NAME] == "SVC"
    assert env.qm.objects.require("SVC").attrs["QSVCIEV"] == F.MQQSIE_OK
    env.put(h)  # P2
    env.put(h)  # P3: a put never makes an OK event
    env.clock.advance(1.5)
    env.get(h)  # G2 too late for OK: nothing, the timer restarts (a message is left)
    assert events(env, "SYSTEM.ADMIN.PERFM.EVENT") == []
    env.clock.advance(0.5)
    env.get(h)  # G3 within the interval: OK, and High is switched on again
    [(cfh, _)] = events(env, "SYSTEM.ADMIN.PERFM.EVENT")
    assert cfh.reason == C.MQRC_Q_SERVICE_INTERVAL_OK
    assert env.qm.objects.require("SVC").attrs["QSVCIEV"] == F.MQQSIE_HIGH
    env.clock.advance(5)
    env.put(h)  # the queue was empty: the timer was off, so no High for the idle time
    assert events(env, "SYSTEM.ADMIN.PERFM.EVENT") == []
    env.clock.advance(1.5)
    env.put(h)  # a put can make the High event
    [(cfh, _)] = events(env, "SYSTEM.ADMIN.PERFM.EVENT")
    assert cfh.reason == C.MQRC_Q_SERVICE_INTERVAL_HIGH


@pytest.mark.parametrize("switched", [False, True])
def test_authority_events_follow_authorev_and_carry_ibms_parameters(switched: bool) -> None:
    env = Env()
    oam = env.qm.state.authority
    oam.enabled = True  # "tester" is no administrator and has no authority at all
    env.define("APP.Q")
    if switched:
        env.qm.objects.alter_qmgr({"AUTHOREV": "ENABLED"})
    with pytest.raises(MQError) as info:
        env.open("APP.Q", C.MQOO_OUTPUT)
    assert info.value.reason == C.MQRC_NOT_AUTHORIZED
    with pytest.raises(MQError):
        env.qm.put1(env.hconn, ObjectDescriptor(object_name="APP.Q"), MQMD(), PutOptions(C.MQPMO_SET_IDENTITY_CONTEXT),
                    b"x")
    [answer] = run(env.qm, Command(F.MQCMD_CLEAR_Q, {C.MQCA_Q_NAME: "APP.Q"}), user="tester")
    assert answer.reason == C.MQRC_NOT_AUTHORIZED
    with pytest.raises(MQError):
        env.qm.subscribe(env.hconn, SubDescriptor(options=C.MQSO_CREATE | C.MQSO_MANAGED, object_string="prices/ibm"))
    got = events(env, "SYSTEM.ADMIN.QMGR.EVENT")
    if not switched:
        assert got == []
        return
    assert [(cfh.command, cfh.reason, params[F.MQIACF_REASON_QUALIFIER]) for cfh, params in got] == [
        (F.MQCMD_Q_MGR_EVENT, C.MQRC_NOT_AUTHORIZED, F.MQRQ_OPEN_NOT_AUTHORIZED),
        (F.MQCMD_Q_MGR_EVENT, C.MQRC_NOT_AUTHORIZED, F.MQRQ_OPEN_NOT_AUTHORIZED),
        (F.MQCMD_Q_MGR_EVENT, C.MQRC_NOT_AUTHORIZED, F.MQRQ_CMD_NOT_AUTHORIZED),
        (F.MQCMD_Q_MGR_EVENT, C.MQRC_NOT_AUTHORIZED, F.MQRQ_SUB_NOT_AUTHORIZED)]
    (_, opened), (_, put1), (_, command), (_, subscribed) = got
    assert opened[F.MQIACF_OPEN_OPTIONS] == C.MQOO_OUTPUT and opened[C.MQCA_Q_NAME] == "APP.Q"
    assert opened[F.MQCACF_USER_IDENTIFIER] == "tester" and opened[F.MQCACF_APPL_NAME] == "tests"
    assert put1[F.MQIACF_OPEN_OPTIONS] == C.MQOO_OUTPUT | C.MQOO_SET_IDENTITY_CONTEXT  # the open MQPUT1 implies
    assert (command[F.MQIACF_COMMAND], command[F.MQCACF_USER_IDENTIFIER]) == (F.MQCMD_CLEAR_Q, "tester")
    assert subscribed[C.MQCA_TOPIC_STRING] == "prices/ibm"
    assert subscribed[F.MQIACF_SUB_OPTIONS] == C.MQSO_CREATE | C.MQSO_MANAGED


def test_close_and_subscription_destination_refusals_make_types_3_and_18() -> None:
    """MQCLOSE deleting a permanent dynamic queue another handle made, without +dlt;
    MQCO_REMOVE_SUB without +sub on the topic; MQSUB to a queue without +put. Each is
    refused 2035, changes nothing, and makes its Not Authorized event."""
    env = Env()
    qm, oam = env.qm, env.qm.state.authority
    qm.objects.define("QMODEL", "PERM.MODEL", {"DEFTYPE": C.MQQDT_PERMANENT_DYNAMIC})
    env.define("DEST.Q")
    maker = qm.connect(appl_name="maker", user="maker")
    made = qm.open(maker, ObjectDescriptor(object_name="PERM.MODEL", dynamic_q_name="APP.DYN.*"), _IN)
    dyn = made.object_name
    qm.close(maker, made.hobj)  # kept: permanent
    qm.objects.alter_qmgr({"AUTHOREV": "ENABLED"})
    oam.enabled = True

    def grant(profile: str, objtype: int, *auths: int) -> None:
        oam.set_record(profile, objtype, [(PRINCIPAL, "tester")], auths)

    def revoke(profile: str, objtype: int, *auths: int) -> None:
        oam.set_record(profile, objtype, [(PRINCIPAL, "tester")], (), auths)

    grant(dyn, C.MQOT_Q, F.MQAUTH_INPUT)
    hobj = env.open(dyn, _IN)
    with pytest.raises(MQError) as info:
        qm.close(env.hconn, hobj, C.MQCO_DELETE)
    assert info.value.reason == C.MQRC_NOT_AUTHORIZED
    assert hobj in qm.connections[env.hconn].handles and qm.objects.find(dyn) is not None  # nothing changed
    grant("SYSTEM.BASE.TOPIC", C.MQOT_TOPIC, F.MQAUTH_SUBSCRIBE)
    sub = qm.subscribe(env.hconn, SubDescriptor(options=C.MQSO_CREATE | C.MQSO_MANAGED | C.MQSO_DURABLE,
                                                object_string="prices/ibm", sub_name="S1"))
    revoke("SYSTEM.BASE.TOPIC", C.MQOT_TOPIC, F.MQAUTH_SUBSCRIBE)
    with pytest.raises(MQError) as info:
        qm.close(env.hconn, sub.hsub, C.MQCO_REMOVE_SUB)
    assert info.value.reason == C.MQRC_NOT_AUTHORIZED and qm.subscriptions.find("S1") is not None
    grant("SYSTEM.BASE.TOPIC", C.MQOT_TOPIC, F.MQAUTH_SUBSCRIBE)
    grant("DEST.Q", C.MQOT_Q, F.MQAUTH_INPUT)
    dest = env.open("DEST.Q", _IN)
    with pytest.raises(MQError) as info:
        qm.subscribe(env.hconn, SubDescriptor(options=C.MQSO_CREATE, object_string="prices/sun"), dest)
    assert info.value.reason == C.MQRC_NOT_AUTHORIZED
    got = events(env, "SYSTEM.ADMIN.QMGR.EVENT")
    assert [params[F.MQIACF_REASON_QUALIFIER] for _, params in got] == [
        F.MQRQ_CLOSE_NOT_AUTHORIZED, F.MQRQ_CLOSE_NOT_AUTHORIZED, F.MQRQ_SUB_DEST_NOT_AUTHORIZED]
    (_, closed), (_, removed), (_, dest_refused) = got
    assert list(closed) == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER, F.MQCACF_USER_IDENTIFIER,
                            C.MQIA_APPL_TYPE, F.MQCACF_APPL_NAME, C.MQCA_Q_NAME]
    assert closed[C.MQCA_Q_NAME] == dyn and closed[F.MQCACF_USER_IDENTIFIER] == "tester"
    assert removed[F.MQCACF_SUB_NAME] == "S1"
    assert list(dest_refused) == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER, F.MQIACF_SUB_OPTIONS,
                                  F.MQCACF_USER_IDENTIFIER, C.MQIA_APPL_TYPE, F.MQCACF_APPL_NAME,
                                  C.MQCA_TOPIC_STRING, C.MQCA_Q_NAME, F.MQIACF_OPEN_OPTIONS]
    assert (dest_refused[C.MQCA_TOPIC_STRING], dest_refused[C.MQCA_Q_NAME]) == ("prices/sun", "DEST.Q")
    assert dest_refused[F.MQIACF_OPEN_OPTIONS] == C.MQOO_OUTPUT
    # Granted, each goes through.
    grant(dyn, C.MQOT_Q, F.MQAUTH_DELETE)
    qm.close(env.hconn, hobj, C.MQCO_DELETE)
    assert qm.objects.find(dyn) is None
    qm.close(env.hconn, sub.hsub, C.MQCO_REMOVE_SUB)
    assert qm.subscriptions.find("S1") is None
    grant("DEST.Q", C.MQOT_Q, F.MQAUTH_OUTPUT)
    qm.subscribe(env.hconn, SubDescriptor(options=C.MQSO_CREATE, object_string="prices/sun"), dest)
    assert events(env, "SYSTEM.ADMIN.QMGR.EVENT") == []


def test_channel_blocked_events_follow_chlev() -> None:
    env = Env()
    env.qm.events.channel_blocked(F.MQRQ_CHANNEL_BLOCKED_NOACCESS, "APP.SVRCONN", "10.0.0.1", client_user="bob")
    assert events(env, "SYSTEM.ADMIN.CHANNEL.EVENT") == []
    env.qm.objects.alter_qmgr({"CHLEV": "EXCEPTION"})
    env.qm.events.channel_blocked(F.MQRQ_CHANNEL_BLOCKED_ADDRESS, "APP.SVRCONN", "10.0.0.1")
    env.qm.events.channel_blocked(F.MQRQ_CHANNEL_BLOCKED_NOACCESS, "TO.QM1", "10.0.0.2", warning=True,
                                  remote_qmgr="QM2")
    (cfh1, address), (cfh2, warned) = events(env, "SYSTEM.ADMIN.CHANNEL.EVENT")
    assert (cfh1.command, cfh1.reason, cfh2.reason) == (F.MQCMD_CHANNEL_EVENT, C.MQRC_CHANNEL_BLOCKED,
                                                        C.MQRC_CHANNEL_BLOCKED_WARNING)
    assert F.MQCACH_CHANNEL_NAME not in address  # a blocked address: refused before the channel is known
    assert (warned[F.MQCACH_CHANNEL_NAME], warned[C.MQCA_REMOTE_Q_MGR_NAME]) == ("TO.QM1", "QM2")
