"""CHANNEL and LISTENER objects through MQSC and PCF: IBM's defaults, the rules of each
channel type with IBM's reasons, channel control requests, and the journal."""

from __future__ import annotations

import pytest
from engine_helpers import Env
from test_admin_commands import fails, ok

from ferrymq.admin.session import Session
from ferrymq.engine.api import FakeClock, ObjectDescriptor
from ferrymq.engine.channels import connection_names
from ferrymq.engine.chlcontrol import ChannelStatus, Request, batch_xid, parse_xid
from ferrymq.engine.commands.pcfmap import run as run_command
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter
from ferrymq.store.file import FileJournal
from ferrymq.wire import pcf as P


def sender(name: str = "TO.QM2", extra: dict[int, object] | None = None) -> Command:
    params = {F.MQCACH_CHANNEL_NAME: name, F.MQIACH_CHANNEL_TYPE: F.MQCHT_SENDER,
              F.MQCACH_CONNECTION_NAME: "127.0.0.1(1415)", F.MQCACH_XMIT_Q_NAME: "QM2"}
    params.update(extra or {})  # type: ignore[arg-type]
    return Command(F.MQCMD_CREATE_CHANNEL, params)


def mqsc(env: Env, text: str) -> list[str]:
    return Session(lambda c: run_command(env.qm, c)).execute(text).messages


def test_ibm_default_objects_exist() -> None:
    env = Env()
    names = ok(env, Command(F.MQCMD_INQUIRE_CHANNEL_NAMES, {F.MQCACH_CHANNEL_NAME: "SYSTEM.*"}))[0]
    assert [n.rstrip() for n in names[F.MQCACH_CHANNEL_NAMES]] == [  # type: ignore[union-attr]
        "SYSTEM.ADMIN.SVRCONN", "SYSTEM.AUTO.RECEIVER", "SYSTEM.AUTO.SVRCONN", "SYSTEM.DEF.RECEIVER", "SYSTEM.DEF.REQUESTER",
        "SYSTEM.DEF.SENDER", "SYSTEM.DEF.SERVER", "SYSTEM.DEF.SVRCONN"]
    assert env.qm.state.listeners.find("SYSTEM.DEFAULT.LISTENER.TCP") is not None
    assert env.qm.objects.find("SYSTEM.CHANNEL.SYNCQ") is not None


@pytest.mark.parametrize("encoding", [P.NATIVE, P.REVERSED], ids=["normal", "reversed"])
def test_sender_defaults_and_round_trip(encoding: int) -> None:
    env = Env()
    ok(env, sender(extra={F.MQIACH_BATCH_SIZE: 10}), encoding)
    got = ok(env, Command(F.MQCMD_INQUIRE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2"}), encoding)[0]
    assert got[F.MQIACH_BATCH_SIZE] == 10 and got[F.MQIACH_DISC_INTERVAL] == 6000
    assert (got[F.MQIACH_SHORT_RETRY], got[F.MQIACH_SHORT_TIMER]) == (10, 60)
    assert (got[F.MQIACH_LONG_RETRY], got[F.MQIACH_LONG_TIMER]) == (999_999_999, 1200)
    assert (got[F.MQIACH_HB_INTERVAL], got[F.MQIACH_NPM_SPEED]) == (300, F.MQNPMS_FAST)
    assert got[F.MQIACH_MAX_MSG_LENGTH] == 4_194_304 and got[F.MQIACH_SEQUENCE_NUMBER_WRAP] == 999_999_999
    assert str(got[F.MQCACH_XMIT_Q_NAME]).rstrip() == "QM2"
    assert F.MQIACH_PUT_AUTHORITY not in got  # a receiver's attribute
    ok(env, Command(F.MQCMD_CHANGE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2", F.MQIACH_CHANNEL_TYPE: F.MQCHT_SENDER,
                                             F.MQIACH_HB_INTERVAL: 5}), encoding)
    assert env.qm.state.channels.require("TO.QM2").get("HBINT") == 5
    found = ok(env, Command(F.MQCMD_INQUIRE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "*"},
                            [Filter(F.MQIACH_HB_INTERVAL, F.MQCFOP_EQUAL, 5)]), encoding)
    assert [str(r[F.MQCACH_CHANNEL_NAME]).rstrip() for r in found] == ["TO.QM2"]


@pytest.mark.parametrize(("cmd", "reason"), [
    (sender(extra={F.MQIACH_BATCH_SIZE: 0}), F.MQRCCF_BATCH_SIZE_ERROR),
    (sender(extra={F.MQIACH_DISC_INTERVAL: 1_000_000}), F.MQRCCF_DISC_INT_ERROR),
    (sender(extra={F.MQIACH_SEQUENCE_NUMBER_WRAP: 99}), F.MQRCCF_SEQ_NUMBER_WRAP_ERROR),
    (sender(extra={F.MQIACH_MAX_MSG_LENGTH: 104_857_601}), F.MQRCCF_MAX_MSG_LENGTH_ERROR),
    (sender(extra={F.MQIACH_HB_INTERVAL: -1}), F.MQRCCF_HB_INTERVAL_ERROR),
    (sender(extra={F.MQIACH_NPM_SPEED: 3}), F.MQRCCF_NPM_SPEED_ERROR),
    (sender(extra={F.MQIACH_PUT_AUTHORITY: F.MQPA_CONTEXT}), F.MQRCCF_WRONG_CHANNEL_TYPE),
    (sender(extra={F.MQCACH_CONNECTION_NAME: ""}), F.MQRCCF_MISSING_CONN_NAME),
    (sender(extra={F.MQCACH_CONNECTION_NAME: "host(70000)"}), F.MQRCCF_CONN_NAME_ERROR),
    (sender(extra={F.MQCACH_XMIT_Q_NAME: ""}), F.MQRCCF_XMIT_Q_NAME_ERROR),
    (sender("A.NAME.LONGER.THAN.20.CHARS"), F.MQRCCF_CHANNEL_NAME_ERROR),
    (sender(extra={F.MQIACH_CHANNEL_TYPE: 9}), F.MQRCCF_CHANNEL_TYPE_ERROR),
    (Command(F.MQCMD_CREATE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "R", F.MQIACH_CHANNEL_TYPE: F.MQCHT_RECEIVER,
                                      F.MQCACH_XMIT_Q_NAME: "QM2"}), F.MQRCCF_WRONG_CHANNEL_TYPE),
    (Command(F.MQCMD_CREATE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "R", F.MQIACH_CHANNEL_TYPE: F.MQCHT_REQUESTER}),
     F.MQRCCF_MISSING_CONN_NAME),
    (Command(F.MQCMD_CREATE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "R"}), F.MQRCCF_PARM_MISSING),
    (Command(F.MQCMD_DELETE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "NONE"}), F.MQRCCF_CHANNEL_NOT_FOUND),
    (Command(F.MQCMD_STOP_CHANNEL, {F.MQCACH_CHANNEL_NAME: "SYSTEM.DEF.SENDER"}), F.MQRCCF_CHANNEL_NOT_ACTIVE),
    (Command(F.MQCMD_RESOLVE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "SYSTEM.DEF.SENDER", F.MQIACH_IN_DOUBT: 3}),
     F.MQRCCF_INDOUBT_VALUE_ERROR),
    (Command(F.MQCMD_INQUIRE_CHANNEL_STATUS, {F.MQCACH_CHANNEL_NAME: "TO.QM2"}), F.MQRCCF_CHL_STATUS_NOT_FOUND),
])
def test_refusals_name_ibms_reason_and_change_nothing(cmd: Command, reason: int) -> None:
    env = Env()
    before = {c.name: dict(c.attrs) for c in env.qm.state.channels}
    fails(env, cmd, reason)
    assert {c.name: dict(c.attrs) for c in env.qm.state.channels} == before
    assert env.qm.state.channel_control.requests == []


def test_replace_like_and_types() -> None:
    env = Env()
    ok(env, sender())
    fails(env, sender(), F.MQRCCF_OBJECT_ALREADY_EXISTS)
    fails(env, Command(F.MQCMD_CREATE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2", F.MQIACH_CHANNEL_TYPE: F.MQCHT_RECEIVER,
                                                F.MQIACF_REPLACE: F.MQRP_YES}), F.MQRCCF_OBJECT_WRONG_TYPE)
    ok(env, Command(F.MQCMD_COPY_CHANNEL, {F.MQCACF_FROM_CHANNEL_NAME: "TO.QM2", F.MQCACF_TO_CHANNEL_NAME: "TO.QM3",
                                           F.MQIACH_CHANNEL_TYPE: F.MQCHT_SENDER, F.MQCACH_XMIT_Q_NAME: "QM3"}))
    copy = env.qm.state.channels.require("TO.QM3")
    assert (copy.get("CONNAME"), copy.get("XMITQ")) == ("127.0.0.1(1415)", "QM3")
    fails(env, Command(F.MQCMD_CHANGE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2", F.MQIACH_CHANNEL_TYPE: F.MQCHT_SERVER}),
          F.MQRCCF_OBJECT_WRONG_TYPE)


def test_mqsc_define_display_control() -> None:
    env = Env()
    assert mqsc(env, "DEFINE CHANNEL(TO.QM2) CHLTYPE(SDR) CONNAME('h1(1415),h2') XMITQ(QM2) BATCHSZ(10)") == [
        "AMQ8014I: IBM MQ channel created."]
    assert connection_names(str(env.qm.state.channels.require("TO.QM2").get("CONNAME"))) == [("h1", 1415), ("h2", 1414)]
    shown = "\n".join(mqsc(env, "DISPLAY CHANNEL(TO.QM2) ALL"))
    assert "CHLTYPE(SDR)" in shown and "BATCHSZ(10)" in shown and "NPMSPEED(FAST)" in shown
    assert "needs CHLTYPE" in "\n".join(mqsc(env, "ALTER CHANNEL(TO.QM2) BATCHSZ(5)"))
    assert mqsc(env, "DEFINE CHANNEL(QM2.TO.QM1) CHLTYPE(RCVR) PUTAUT(CTX)") == ["AMQ8014I: IBM MQ channel created."]
    assert mqsc(env, "START CHANNEL(TO.QM2)") == ["AMQ8018I: Start IBM MQ channel accepted."]
    assert env.qm.state.channel_control.take_requests() == [Request("START", "TO.QM2")]
    control = env.qm.state.channel_control
    control.channels["TO.QM2"] = ChannelStatus("TO.QM2", F.MQCHT_SENDER, F.MQCHS_RUNNING, xmitq="QM2", cur_seq=7)
    shown = "\n".join(mqsc(env, "DISPLAY CHSTATUS(TO.QM2) ALL"))
    assert "STATUS(RUNNING)" in shown and "CURSEQNO(7)" in shown and "XMITQ(QM2)" in shown
    assert "AMQ9514E" in mqsc(env, "DELETE CHANNEL(TO.QM2)")[0]  # running
    assert mqsc(env, "STOP CHANNEL(TO.QM2) MODE(FORCE)") == ["AMQ8019I: Stop IBM MQ channel accepted."]
    assert control.take_requests() == [Request("STOP", "TO.QM2", mode=F.MQMODE_FORCE)]
    assert "TO.QM2" in control.stopped
    assert mqsc(env, "RESET CHANNEL(TO.QM2) SEQNUM(5)") == ["AMQ8023I: IBM MQ channel reset."]
    assert control.take_requests() == [Request("RESET", "TO.QM2", seq=5)]
    # stopped, the channel may be deleted, and its status goes with it
    control.channels["TO.QM2"] = ChannelStatus("TO.QM2", F.MQCHT_SENDER, F.MQCHS_STOPPED, xmitq="QM2")
    assert mqsc(env, "DELETE CHANNEL(TO.QM2)") == ["AMQ8015I: IBM MQ channel deleted."]
    assert "TO.QM2" not in control.stopped and "TO.QM2" not in control.channels
    assert "TO.QM2" not in "\n".join(mqsc(env, "DISPLAY CHSTATUS(*)"))
    assert mqsc(env, "DEFINE LISTENER(L1) TRPTYPE(TCP) PORT(0) CONTROL(QMGR)") == ["AMQ8626I: IBM MQ listener created."]
    shown = "\n".join(mqsc(env, "DISPLAY LISTENER(L1)"))
    assert "PORT(0)" in shown and "CONTROL(QMGR)" in shown
    assert mqsc(env, "START LISTENER(L1)") == ["AMQ8021I: Request to start IBM MQ listener accepted."]


def test_xids_name_channel_and_sequence() -> None:
    xid = batch_xid("TO.QM2", 42)
    assert parse_xid(xid) == ("TO.QM2", 42) and parse_xid(b"other") is None
    with pytest.raises(MQError):
        connection_names("bad host")


def test_definitions_survive_a_restart(tmp_path: object) -> None:
    path = str(tmp_path)
    clock = FakeClock()
    journal = FileJournal(path)
    qm = QueueManager.start("QM1", journal, clock)
    for cmd in (sender(), sender("GONE"), Command(F.MQCMD_CREATE_LISTENER, {F.MQCACH_LISTENER_NAME: "L1",
                                                                            F.MQIACH_PORT: 0})):
        assert run_command(qm, cmd)[0].comp == C.MQCC_OK
    run_command(qm, Command(F.MQCMD_DELETE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "GONE"}))
    run_command(qm, Command(F.MQCMD_CHANGE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2", F.MQIACH_BATCH_SIZE: 7}))
    qm.take_sync_lsn()
    journal.sync()
    journal.close()
    again = QueueManager.start("QM1", FileJournal(path), clock)
    kept = again.state.channels.require("TO.QM2")
    assert (kept.chltype, kept.get("BATCHSZ"), kept.get("XMITQ")) == ("SDR", 7, "QM2")
    assert again.state.channels.find("GONE") is None
    assert again.state.listeners.require("L1").get("PORT") == 0


def _in_doubt_batch(env: Env) -> bytes:
    """A sending channel's batch of one message, prepared as its agent prepares it."""
    env.qm.objects.define("QLOCAL", "QM2", {"USAGE": "XMITQ"})
    ok(env, sender())
    qm = env.qm
    out = qm.open(env.hconn, ObjectDescriptor(object_name="APP", object_q_mgr_name="QM2"), C.MQOO_OUTPUT).hobj
    env.put(out, b"batched", persistence=C.MQPER_PERSISTENT)
    h = env.open("QM2", C.MQOO_INPUT_AS_Q_DEF)
    env.get(h, C.MQGMO_SYNCPOINT | C.MQGMO_NO_WAIT)
    xid = batch_xid("TO.QM2", 1)
    qm.prepare(env.hconn, xid)
    assert env.depth("QM2") == 1 and xid in qm.in_doubt
    return xid


@pytest.mark.parametrize(("action", "left"), [(F.MQIDO_COMMIT, 0), (F.MQIDO_BACKOUT, 1)])
def test_resolve_channel_commits_or_backs_out_the_batch_in_doubt(action: int, left: int) -> None:
    env = Env()
    xid = _in_doubt_batch(env)
    fails(env, Command(F.MQCMD_RESET_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2"}), F.MQRCCF_CHANNEL_INDOUBT)
    env.qm.state.channel_control.channels["TO.QM2"] = ChannelStatus("TO.QM2", F.MQCHT_SENDER, F.MQCHS_RUNNING)
    fails(env, Command(F.MQCMD_RESOLVE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2", F.MQIACH_IN_DOUBT: action}),
          F.MQRCCF_CHANNEL_IN_USE)
    env.qm.state.channel_control.channels["TO.QM2"].status = F.MQCHS_STOPPED
    ok(env, Command(F.MQCMD_RESOLVE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2", F.MQIACH_IN_DOUBT: action}))
    assert xid not in env.qm.in_doubt
    assert len(env.qm.objects.require("QM2").messages.by_seq) == left
    assert env.qm.state.channel_control.channels["TO.QM2"].indoubt is False


def test_stop_filters_name_instances_and_never_stop_a_channel_for_one_partner() -> None:
    env = Env()
    ok(env, sender())
    control = env.qm.state.channel_control
    control.channels["TO.QM2"] = ChannelStatus("TO.QM2", F.MQCHT_SENDER, F.MQCHS_RUNNING, conname="10.1.1.1(1415)",
                                               rqmname="QM2")
    # CONNAME, QMNAME or CLIENTID with STATUS(STOPPED): refused, nothing requested
    assert "3203" in "\n".join(mqsc(env, "STOP CHANNEL(TO.QM2) QMNAME(QM2) STATUS(STOPPED)"))
    assert "AMQ9533E" in mqsc(env, "STOP CHANNEL(TO.QM2) CONNAME('10.9.9.9')")[0]  # not that partner
    assert "AMQ9533E" in mqsc(env, "STOP CHANNEL(TO.QM2) QMNAME(QM3)")[0]
    assert control.requests == [] and "TO.QM2" not in control.stopped
    assert mqsc(env, "STOP CHANNEL(TO.QM2) CONNAME('10.1.1.1') QMNAME(qm2)") == [
        "AMQ8019I: Stop IBM MQ channel accepted."]
    [req] = control.take_requests()
    assert (req.status, req.conname, req.qmname) == (F.MQCHS_INACTIVE, "10.1.1.1", "QM2")  # filters imply INACTIVE
    assert "TO.QM2" not in control.stopped
    assert req.matches("10.1.1.1(1415)", "QM2") and not req.matches("10.1.1.1(1415)", "QM9")
    assert Request("STOP", "X", conname="h(1)").matches("h(1)") and not Request("STOP", "X", conname="h(1)").matches("h(2)")
    assert Request("STOP", "X", clientid="app").matches("h", "", "app ") and not Request("STOP", "X", clientid="a").matches("h")
    # a server-connection channel without a client connection has nothing to stop
    assert "AMQ9533E" in mqsc(env, "STOP CHANNEL(SYSTEM.DEF.SVRCONN)")[0]
    shown = "\n".join(mqsc(env, "DISPLAY CHANNEL(SYSTEM.DEF.SVRCONN) SHARECNV MAXINST MAXINSTC"))
    assert "SHARECNV(10)" in shown and "MAXINST(999999999)" in shown and "MAXINSTC(999999999)" in shown


def test_exit_lists_as_ibm_has_them(tmp_path: object) -> None:
    env = Env()
    ok(env, sender())
    # MQSC: a list of quoted items, a data item holding commas and a doubled quote
    assert mqsc(env, "ALTER CHANNEL(TO.QM2) CHLTYPE(SDR) MSGEXIT('mod:f1', 'mod:f2') "
                     "MSGDATA('a,b' , 'it''s') SENDEXIT('mod:s') SENDDATA('x,y')") == [
        "AMQ8016I: IBM MQ channel changed."]
    chl = env.qm.state.channels.require("TO.QM2")
    assert (chl.items("MSGEXIT"), chl.items("MSGDATA")) == (("mod:f1", "mod:f2"), ("a,b", "it's"))
    assert (chl.items("SENDEXIT"), chl.items("SENDDATA")) == (("mod:s",), ("x,y",))
    shown = "\n".join(mqsc(env, "DISPLAY CHANNEL(TO.QM2) MSGEXIT MSGDATA SENDEXIT SENDDATA RCVEXIT"))
    assert "MSGEXIT('mod:f1','mod:f2')" in shown and "MSGDATA('a,b','it''s')" in shown
    assert "SENDEXIT(mod:s)" in shown and "SENDDATA(x,y)" in shown and "RCVEXIT( )" in shown
    # PCF: several items come back as an MQCFSL, one or none as an MQCFST, as IBM's Inquire Channel
    got = ok(env, Command(F.MQCMD_INQUIRE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2"}))[0]
    assert [str(v).rstrip() for v in got[F.MQCACH_MSG_EXIT_USER_DATA]] == ["a,b", "it's"]  # type: ignore[attr-defined]
    assert [str(v).rstrip() for v in got[F.MQCACH_MSG_EXIT_NAME]] == ["mod:f1", "mod:f2"]  # type: ignore[attr-defined]
    assert str(got[F.MQCACH_SEND_EXIT_USER_DATA]).rstrip() == "x,y" and str(got[F.MQCACH_RCV_EXIT_NAME]).strip() == ""
    ok(env, Command(F.MQCMD_CHANGE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2", F.MQIACH_CHANNEL_TYPE: F.MQCHT_SENDER,
                                             F.MQCACH_RCV_EXIT_NAME: ("mod:r1", "mod:r2"),
                                             F.MQCACH_RCV_EXIT_USER_DATA: ("1,2,3",)}))
    assert chl.items("RCVEXIT") == ("mod:r1", "mod:r2") and chl.items("RCVDATA") == ("1,2,3",)
    # blank empties a list; LIKE copies the lists
    assert mqsc(env, "ALTER CHANNEL(TO.QM2) CHLTYPE(SDR) SENDEXIT(' ')") == ["AMQ8016I: IBM MQ channel changed."]
    assert chl.items("SENDEXIT") == ()
    mqsc(env, "DEFINE CHANNEL(COPY) CHLTYPE(SDR) LIKE(TO.QM2)")
    assert env.qm.state.channels.require("COPY").lists == chl.lists
    # IBM's limits, with IBM's reasons; nothing changes
    too_long = [(F.MQCACH_MSG_EXIT_USER_DATA, ("ok", "d" * 33), F.MQRCCF_CFSL_STRING_LENGTH_ERR),
                (F.MQCACH_MSG_EXIT_USER_DATA, "d" * 33, F.MQRCCF_CFST_STRING_LENGTH_ERR),
                (F.MQCACH_MSG_EXIT_NAME, ("m:" + "f" * 127,), F.MQRCCF_CFSL_STRING_LENGTH_ERR),
                (F.MQCACH_SEND_EXIT_NAME, ("m:" + "f" * 120,) * 9, F.MQRCCF_CFSL_TOTAL_LENGTH_ERROR)]
    for selector, value, reason in too_long:
        fails(env, Command(F.MQCMD_CHANGE_CHANNEL, {F.MQCACH_CHANNEL_NAME: "TO.QM2",
                                                    F.MQIACH_CHANNEL_TYPE: F.MQCHT_SENDER, selector: value}), reason)
    said = "\n".join(mqsc(env, f"ALTER CHANNEL(TO.QM2) CHLTYPE(SDR) MSGDATA('a','{'d' * 33}')"))
    assert f"reason {F.MQRCCF_CFSL_STRING_LENGTH_ERR} (MQRCCF_CFSL_STRING_LENGTH_ERR)" in said, said
    assert chl.items("MSGDATA") == ("a,b", "it's")
    # a list where one value is taken is a syntax error
    assert "AMQ8405E" in mqsc(env, "ALTER CHANNEL(TO.QM2) CHLTYPE(SDR) DESCR('a','b')")[0]
    assert "AMQ8405E" in mqsc(env, "ALTER CHANNEL(TO.QM2) CHLTYPE(SDR) SCYEXIT('m:a','m:b')")[0]
