"""Statistics and accounting messages (engine.monitoring) against the operations done: MQI
and queue statistics every STATINT, MQI and queue accounting at MQDISC and every ACCTINT,
IBM's switches (STATQ/ACCTQ QMGR, ON, OFF, NONE), RESET QMGR TYPE(STATISTICS); each message
decoded with ferrymq's PCF codec and with ferrymq.pymqi's."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import Env

from ferrymq.admin.mqsc import parse, to_command
from ferrymq.engine.api import ObjectDescriptor, PutOptions
from ferrymq.engine.commands.pcfmap import run
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command
from ferrymq.pymqi.pcf import PCFExecute
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD

STATS, ACCT = "SYSTEM.ADMIN.STATISTICS.QUEUE", "SYSTEM.ADMIN.ACCOUNTING.QUEUE"
NP, PERS = 0, 1


def flat(params: tuple[P.Param, ...]) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for p in params:
        if isinstance(p, P.CFGR):
            out.setdefault(p.parameter, []).append(flat(p.params))
        else:
            out[p.parameter] = getattr(p, "value", getattr(p, "values", None))
    return out


def taken(env: Env, queue: str) -> list[tuple[P.CFH, dict[int, Any], bytes]]:
    """Every message on ``queue``, removed and decoded (header, parameters, raw bytes)."""
    q = env.qm.objects.require(queue)
    out = []
    for msg in list(q.messages.by_seq.values()):
        assert msg.md.format == C.MQFMT_ADMIN.rstrip() and msg.md.put_appl_type == C.MQAT_QMGR
        assert msg.md.msg_type == C.MQMT_DATAGRAM
        decoded = P.PCFMessage.unpack(msg.data, msg.md.encoding)
        out.append((decoded.header, flat(decoded.params), msg.data))
        q.messages.remove(msg)
    return out


def test_attributes_have_ibms_defaults_and_values() -> None:
    env = Env()
    shown = env.qm.objects.display_qmgr()
    assert (shown["STATMQI"], shown["STATQ"], shown["STATINT"]) == (C.MQMON_OFF, C.MQMON_OFF, 1800)
    assert (shown["ACCTMQI"], shown["ACCTQ"], shown["ACCTINT"]) == (C.MQMON_OFF, C.MQMON_OFF, 1800)
    env.define("Q1")
    q = env.qm.objects.require("Q1")
    assert (q.status("STATQ"), q.status("ACCTQ")) == (C.MQMON_Q_MGR, C.MQMON_Q_MGR)
    env.qm.objects.alter_qmgr({"STATQ": "NONE", "STATINT": "60", "ACCTQ": "ON"})
    assert env.qm.objects.qmgr["STATQ"] == C.MQMON_NONE and env.qm.objects.qmgr["ACCTQ"] == C.MQMON_ON
    for bad in ({"STATINT": "0"}, {"STATMQI": "NONE"}, {"ACCTINT": "604801"}):
        with pytest.raises(MQError):
            env.qm.objects.alter_qmgr(bad)
    with pytest.raises(MQError):
        env.qm.objects.alter("Q1", {"STATQ": "NONE"})  # a queue has QMGR, ON and OFF only
    del q.attrs["STATQ"]  # a definition journaled before the attribute existed
    assert q.status("STATQ") == C.MQMON_Q_MGR


def test_mqsc_alters_displays_and_resets() -> None:
    cmd = to_command(parse("ALTER QMGR STATMQI(ON) STATQ(ON) STATINT(5) ACCTMQI(ON) ACCTQ(NONE) ACCTINT(7)"))
    assert cmd.command == F.MQCMD_CHANGE_Q_MGR
    assert cmd.params[C.MQIA_STATISTICS_MQI] == C.MQMON_ON and cmd.params[C.MQIA_ACCOUNTING_Q] == C.MQMON_NONE
    assert cmd.params[C.MQIA_STATISTICS_INTERVAL] == 5 and cmd.params[C.MQIA_ACCOUNTING_INTERVAL] == 7
    cmd = to_command(parse("ALTER QLOCAL(Q1) STATQ(OFF) ACCTQ(QMGR)"))
    assert cmd.params[C.MQIA_STATISTICS_Q] == C.MQMON_OFF and cmd.params[C.MQIA_ACCOUNTING_Q] == C.MQMON_Q_MGR
    reset = to_command(parse("RESET QMGR TYPE(STATISTICS)"))
    assert reset.command == F.MQCMD_RESET_Q_MGR and reset.params == {F.MQIACF_ACTION: F.MQACT_COLLECT_STATISTICS}
    env = Env()
    [resp] = run(env.qm, Command(F.MQCMD_CHANGE_Q_MGR, {C.MQIA_STATISTICS_MQI: C.MQMON_ON}))
    assert resp.comp == C.MQCC_OK
    [resp] = run(env.qm, Command(F.MQCMD_INQUIRE_Q_MGR, {F.MQIACF_Q_MGR_ATTRS: (C.MQIA_STATISTICS_MQI,)}))
    assert resp.params[C.MQIA_STATISTICS_MQI] == C.MQMON_ON
    [refused] = run(env.qm, Command(F.MQCMD_RESET_Q_MGR, {F.MQIACF_ACTION: F.MQACT_ADVANCE_LOG}))
    assert (refused.comp, refused.reason) == (C.MQCC_FAILED, F.MQRCCF_PARM_VALUE_ERROR)
    [missing] = run(env.qm, Command(F.MQCMD_RESET_Q_MGR))
    assert missing.reason == F.MQRCCF_PARM_MISSING


def _work(env: Env) -> int:
    """3 non-persistent puts of 10 bytes, 2 persistent of 100, 1 PUT1 of 7, 2 gets, 1
    browse, 1 failed get; returns the handle."""
    env.define("WORK", DEFPSIST="NO")
    h = env.open("WORK")
    for _ in range(3):
        env.put(h, b"a" * 10)
    for _ in range(2):
        env.put(h, b"b" * 100, persistence=C.MQPER_PERSISTENT)
    env.qm.put1(env.hconn, ObjectDescriptor(object_name="WORK"), MQMD(), PutOptions(0), b"c" * 7)
    env.clock.advance(0.5)
    env.get(h)
    env.get(h)
    env.get(h, C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_WAIT)
    with pytest.raises(MQError):
        env.get(h, msg_id=b"n" * 24)  # nothing matches: 2033
    return h


def test_statistics_count_the_operations_each_interval() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"STATMQI": "ON", "STATQ": "ON", "STATINT": "10"})
    _work(env)
    env.qm.tick()
    assert taken(env, STATS) == []  # the interval has not ended
    env.clock.advance(10)
    env.qm.tick()
    (mqi_h, mqi, _), (q_h, qs, raw) = taken(env, STATS)
    assert (mqi_h.type, mqi_h.command, mqi_h.version, mqi_h.control) == (F.MQCFT_STATISTICS, F.MQCMD_STATISTICS_MQI,
                                                                         F.MQCFH_VERSION_3, F.MQCFC_LAST)
    assert mqi[C.MQCA_Q_MGR_NAME] == "QM1" and mqi[C.MQIA_COMMAND_LEVEL] == C.MQCMDL_CURRENT_LEVEL
    assert len(str(mqi[F.MQCAMO_START_DATE])) == 10 and len(str(mqi[F.MQCAMO_END_TIME])) == 8
    assert mqi[F.MQIAMO_PUTS] == (3, 2) and mqi[F.MQIAMO_PUT1S] == (1, 0)
    assert mqi[F.MQIAMO64_PUT_BYTES] == (37, 200)
    assert mqi[F.MQIAMO_GETS] == (2, 0) and mqi[F.MQIAMO64_GET_BYTES] == (20, 0)
    assert mqi[F.MQIAMO_BROWSES] == (1, 0) and mqi[F.MQIAMO_GETS_FAILED] == 1
    opens = mqi[F.MQIAMO_OPENS]
    assert isinstance(opens, tuple) and len(opens) == 13 and opens[C.MQOT_Q] == 2  # the open and PUT1's
    assert (q_h.command, q_h.type) == (F.MQCMD_STATISTICS_Q, F.MQCFT_STATISTICS)
    assert qs[F.MQIAMO_OBJECT_COUNT] == 1
    [group] = qs[F.MQGACF_Q_STATISTICS_DATA]
    assert group[C.MQCA_Q_NAME] == "WORK" and group[C.MQIA_Q_TYPE] == C.MQQT_LOCAL
    assert (group[F.MQIAMO_Q_MIN_DEPTH], group[F.MQIAMO_Q_MAX_DEPTH]) == (0, 6)
    assert group[F.MQIAMO_PUTS] == (3, 2) and group[F.MQIAMO_PUT1S] == (1, 0)
    assert group[F.MQIAMO_GETS] == (2, 0) and group[F.MQIAMO_BROWSES] == (1, 0)
    assert group[F.MQIAMO64_AVG_Q_TIME] == (500_000, 0)  # microseconds, by persistence
    # the same bytes through ferrymq.pymqi's PCF support
    params, header = PCFExecute.unpack(raw)
    assert header.Type == F.MQCFT_STATISTICS and header.Command == F.MQCMD_STATISTICS_Q
    [pgroup] = params[F.MQGACF_Q_STATISTICS_DATA]
    assert pgroup[F.MQIAMO_PUTS] == [3, 2] and pgroup[F.MQIAMO64_PUT_BYTES] == [37, 200]
    # the next interval starts from nothing: no queue activity, an MQI message of zeros
    env.clock.advance(10)
    env.qm.tick()
    [(h2, mqi2, _)] = taken(env, STATS)
    assert h2.command == F.MQCMD_STATISTICS_MQI and mqi2[F.MQIAMO_PUTS] == (0, 0)
    assert mqi2[F.MQCAMO_START_TIME] == mqi[F.MQCAMO_END_TIME]


def test_queue_switches_follow_ibm() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"STATQ": "OFF", "STATINT": "5"})
    env.define("ON", STATQ="ON")
    env.define("QM")
    env.define("OFF", STATQ="OFF")
    for name in ("ON", "QM", "OFF"):
        env.put(env.open(name))
    env.clock.advance(5)
    env.qm.tick()
    [(_, qs, _)] = taken(env, STATS)
    assert [g[C.MQCA_Q_NAME] for g in qs[F.MQGACF_Q_STATISTICS_DATA]] == ["ON"]
    env.qm.objects.alter_qmgr({"STATQ": "NONE"})
    env.put(env.open("ON"))
    env.clock.advance(5)
    env.qm.tick()
    assert taken(env, STATS) == []  # NONE: off whatever the queues say


def test_reset_qmgr_writes_statistics_now() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"STATMQI": "ON", "STATINT": "1000"})
    env.define("R")
    env.put(env.open("R"))
    [resp] = run(env.qm, Command(F.MQCMD_RESET_Q_MGR, {F.MQIACF_ACTION: F.MQACT_COLLECT_STATISTICS}))
    assert resp.comp == C.MQCC_OK
    [(h, mqi, _)] = taken(env, STATS)
    assert h.command == F.MQCMD_STATISTICS_MQI and mqi[F.MQIAMO_PUTS] == (1, 0)


def test_more_than_100_queues_span_messages() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"STATQ": "ON", "STATINT": "5"})
    for i in range(130):
        env.define(f"MANY.{i}")
        env.put(env.open(f"MANY.{i}"))
    env.clock.advance(5)
    env.qm.tick()
    got = taken(env, STATS)
    assert [(h.msg_seq_number, h.control, p[F.MQIAMO_OBJECT_COUNT]) for h, p, _ in got] == [
        (1, F.MQCFC_NOT_LAST, 100), (2, F.MQCFC_LAST, 30)]


def _account_work(env: Env, queue: str, appl: str) -> tuple[int, int]:
    """A connection that puts 5 bytes non-persistent and 9 persistent, gets one 2 s later
    and commits; returns its connection and object handles."""
    env.define(queue)
    hconn = env.qm.connect(appl_name=appl, user="alice")
    h = env.open(queue, hconn=hconn)
    env.put(h, b"x" * 5, hconn=hconn)
    env.put(h, b"y" * 9, hconn=hconn, persistence=C.MQPER_PERSISTENT)
    env.clock.advance(2)
    env.get(h, hconn=hconn)
    env.qm.commit(hconn)
    return hconn, h


def test_accounting_at_disconnect_and_each_interval() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"ACCTMQI": "ON", "ACCTQ": "ON", "ACCTINT": "20"})
    hconn, h = _account_work(env, "A1", "billing")
    env.qm.tick()
    assert taken(env, ACCT) == []
    env.clock.advance(20)  # ACCTINT: an intermediate record, then the connection goes on
    env.qm.tick()
    first = [(h_.command, p[F.MQIACF_SEQUENCE_NUMBER]) for h_, p, _ in taken(env, ACCT)
             if p.get(F.MQCACF_APPL_NAME) == "billing"]
    assert first == [(F.MQCMD_ACCOUNTING_MQI, 0), (F.MQCMD_ACCOUNTING_Q, 0)]
    env.put(h, b"z", hconn=hconn)
    env.qm.close(hconn, h)
    env.qm.disconnect(hconn)
    (mqi_h, mqi, _), (q_h, qa, raw) = taken(env, ACCT)
    assert (mqi_h.type, mqi_h.command) == (F.MQCFT_ACCOUNTING, F.MQCMD_ACCOUNTING_MQI)
    assert mqi[F.MQIACF_SEQUENCE_NUMBER] == 1 and mqi[F.MQCACF_APPL_NAME] == "billing"
    assert mqi[F.MQCACF_USER_IDENTIFIER] == "alice" and mqi[F.MQIAMO_DISC_TYPE] == F.MQDISCONNECT_NORMAL
    assert isinstance(mqi[F.MQBACF_CONNECTION_ID], bytes) and len(mqi[F.MQBACF_CONNECTION_ID]) == 24
    assert mqi[F.MQIAMO_PUTS] == (1, 0) and mqi[F.MQIAMO_CLOSES][C.MQOT_Q] == 1
    assert q_h.command == F.MQCMD_ACCOUNTING_Q and qa[F.MQIAMO_OBJECT_COUNT] == 1
    [group] = qa[F.MQGACF_Q_ACCOUNTING_DATA]
    assert group[C.MQCA_Q_NAME] == "A1" and group[F.MQIAMO_PUTS] == (1, 0)
    assert len(str(group[F.MQCAMO_CLOSE_DATE])) == 10
    params, header = PCFExecute.unpack(raw)
    assert header.Type == F.MQCFT_ACCOUNTING and params[F.MQIACF_SEQUENCE_NUMBER] == 1


def test_accounting_of_the_first_interval_counts_its_operations() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"ACCTMQI": "ON", "ACCTQ": "ON"})
    hconn, _ = _account_work(env, "A2", "app2")
    env.qm.disconnect(hconn)
    (_, mqi, _), (_, qa, _) = taken(env, ACCT)
    assert mqi[F.MQIAMO_PUTS] == (1, 1) and mqi[F.MQIAMO64_PUT_BYTES] == (5, 9)
    assert mqi[F.MQIAMO_GETS] == (1, 0) and mqi[F.MQIAMO_COMMITS] == 1
    [group] = qa[F.MQGACF_Q_ACCOUNTING_DATA]
    assert (group[F.MQIAMO_PUT_MIN_BYTES], group[F.MQIAMO_PUT_MAX_BYTES]) == (5, 9)
    assert group[F.MQIAMO_GETS] == (1, 0) and group[F.MQIAMO64_Q_TIME_MAX] == 2_000_000


def test_nothing_is_counted_while_everything_is_off() -> None:
    env = Env()
    env.define("QUIET")
    h = env.open("QUIET")
    env.put(h)
    env.get(h)
    assert not env.qm.monitor.on and env.qm.objects.require("QUIET").stats is None
    env.clock.advance(4000)
    env.qm.tick()
    env.qm.disconnect(env.hconn)
    assert taken(env, STATS) == [] and taken(env, ACCT) == []


def test_codec_round_trips_integer64_lists() -> None:
    msg = P.PCFMessage(P.CFH(type=F.MQCFT_STATISTICS), (P.CFIL64(F.MQIAMO64_PUT_BYTES, (1, 2**40)),))
    for enc in (C.MQENC_NATIVE, P.NATIVE):
        assert P.PCFMessage.unpack(msg.pack(enc), enc).params == msg.params
    bad = bytearray(msg.pack(P.NATIVE))
    bad[36 + 12:36 + 16] = (3).to_bytes(4, "big")  # Count 3 in a structure holding 2
    with pytest.raises(Exception, match="MQCFIL64"):
        P.PCFMessage.unpack(bytes(bad), P.NATIVE)


def test_the_switches_survive_a_restart() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"STATMQI": "ON", "STATQ": "NONE", "STATINT": "42", "ACCTMQI": "ON", "ACCTINT": "99"})
    env.define("KEPT", STATQ="ON", ACCTQ="OFF")
    env.qm.take_sync_lsn()
    env.journal.sync()
    again = QueueManager.start("QM1", env.journal.crash(), env.clock)
    shown = again.objects.display_qmgr()
    assert (shown["STATMQI"], shown["STATQ"], shown["STATINT"]) == (C.MQMON_ON, C.MQMON_NONE, 42)
    assert (shown["ACCTMQI"], shown["ACCTQ"], shown["ACCTINT"]) == (C.MQMON_ON, C.MQMON_OFF, 99)
    kept = again.objects.require("KEPT")
    assert (kept.status("STATQ"), kept.status("ACCTQ")) == (C.MQMON_ON, C.MQMON_OFF)


def test_a_run_of_puts_counts_each_message_placed() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"STATMQI": "ON", "STATQ": "ON", "STATINT": "5"})
    env.define("RUN", MAXDEPTH=3)
    h = env.open("RUN")
    outcomes = env.qm.put_columns(env.hconn, h, MQMD(), PutOptions(0), [b"a" * 4, b"b" * 6, b"c" * 8, b"d"])
    assert [o is None for o in outcomes] == [True, True, True, False]  # the 4th: queue full
    env.clock.advance(5)
    env.qm.tick()
    (_, mqi, _), (_, qs, _) = taken(env, STATS)
    assert mqi[F.MQIAMO_PUTS] == (3, 0) and mqi[F.MQIAMO64_PUT_BYTES] == (18, 0) and mqi[F.MQIAMO_PUTS_FAILED] == 1
    [group] = qs[F.MQGACF_Q_STATISTICS_DATA]
    assert group[F.MQIAMO_PUTS] == (3, 0) and group[F.MQIAMO_PUTS_FAILED] == 1 and group[F.MQIAMO_Q_MAX_DEPTH] == 3


def test_clear_counts_purged_messages_and_an_ending_writes_the_interval() -> None:
    env = Env()
    env.qm.objects.alter_qmgr({"STATMQI": "ON", "STATQ": "ON", "STATINT": "1000"})
    env.define("CLEARED")
    h = env.open("CLEARED")
    for _ in range(4):
        env.put(h)
    env.qm.close(env.hconn, h)
    [resp] = run(env.qm, Command(F.MQCMD_CLEAR_Q, {C.MQCA_Q_NAME: "CLEARED"}))
    assert resp.comp == C.MQCC_OK
    env.qm.monitor.ending()
    (_, mqi, _), (_, qs, _) = taken(env, STATS)
    [group] = qs[F.MQGACF_Q_STATISTICS_DATA]
    assert mqi[F.MQIAMO_MSGS_PURGED] == 4 and group[F.MQIAMO_MSGS_PURGED] == 4


def _disconnect_accounting(env: Env, options: int, pid: int = 0, tid: int = 0) -> list[tuple[int, dict[int, Any]]]:
    """Connect with MQCNO ``options``, put one message on ACQ, disconnect: the accounting
    messages written (command, parameters)."""
    hconn = env.qm.connect(appl_name="cno", user="alice", options=options, pid=pid, tid=tid)
    env.put(env.open("ACQ", hconn=hconn), b"abc", hconn=hconn)
    env.qm.disconnect(hconn)
    return [(h.command, p) for h, p, _ in taken(env, ACCT)]


def test_acctcono_lets_mqcno_options_override_acctmqi_and_acctq() -> None:
    env = Env()
    env.define("ACQ")
    assert env.qm.objects.display_qmgr()["ACCTCONO"] == C.MQMON_DISABLED
    both = C.MQCNO_ACCOUNTING_MQI_ENABLED | C.MQCNO_ACCOUNTING_Q_ENABLED
    assert _disconnect_accounting(env, both) == []  # ACCTCONO(DISABLED): ignored, no error
    env.qm.objects.alter_qmgr({"ACCTCONO": "ENABLED"})
    got = _disconnect_accounting(env, both, pid=4321, tid=17)
    assert [c for c, _ in got] == [F.MQCMD_ACCOUNTING_MQI, F.MQCMD_ACCOUNTING_Q]
    mqi = got[0][1]
    assert (mqi[F.MQIACF_PROCESS_ID], mqi[F.MQIACF_THREAD_ID]) == (4321, 17) and mqi[F.MQIAMO_PUTS] == (1, 0)
    assert got[1][1][F.MQGACF_Q_ACCOUNTING_DATA][0][C.MQCA_Q_NAME] == "ACQ"
    only_mqi = _disconnect_accounting(env, C.MQCNO_ACCOUNTING_MQI_ENABLED)
    assert [c for c, _ in only_mqi] == [F.MQCMD_ACCOUNTING_MQI]
    env.qm.objects.alter_qmgr({"ACCTMQI": "ON", "ACCTQ": "ON"})
    off = C.MQCNO_ACCOUNTING_MQI_DISABLED | C.MQCNO_ACCOUNTING_Q_DISABLED
    assert _disconnect_accounting(env, off) == []  # the connection switches both off
    assert [c for c, _ in _disconnect_accounting(env, C.MQCNO_ACCOUNTING_Q_DISABLED)] == [F.MQCMD_ACCOUNTING_MQI]
    env.qm.objects.alter_qmgr({"ACCTMQI": "OFF", "ACCTQ": "NONE"})
    assert _disconnect_accounting(env, C.MQCNO_ACCOUNTING_Q_ENABLED) == []  # NONE is not overridden
    connections = len(env.qm.connections)
    for bad in (C.MQCNO_ACCOUNTING_MQI_ENABLED | C.MQCNO_ACCOUNTING_MQI_DISABLED,
                C.MQCNO_ACCOUNTING_Q_ENABLED | C.MQCNO_ACCOUNTING_Q_DISABLED):
        with pytest.raises(MQError) as excinfo:
            env.qm.connect(appl_name="bad", options=bad)
        assert excinfo.value.reason == C.MQRC_OPTIONS_ERROR
    assert len(env.qm.connections) == connections  # refused, nothing made
    cmd = to_command(parse("ALTER QMGR ACCTCONO(ENABLED)"))
    assert cmd.params[C.MQIA_ACCOUNTING_CONN_OVERRIDE] == C.MQMON_ENABLED


def test_times_are_the_queue_managers_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "XST-05:30")  # a zone half an hour off any whole-hour one
    time.tzset()
    try:
        env = Env()
        env.qm.objects.alter_qmgr({"STATMQI": "ON", "STATINT": "5"})
        env.clock.advance(5)
        env.qm.tick()
        [(_, mqi, _)] = taken(env, STATS)
        end = env.clock.now()
        assert (mqi[F.MQCAMO_END_DATE], mqi[F.MQCAMO_END_TIME]) == (
            time.strftime("%Y-%m-%d", time.localtime(end)), time.strftime("%H.%M.%S", time.localtime(end)))
        assert mqi[F.MQCAMO_END_TIME] != time.strftime("%H.%M.%S", time.gmtime(end))
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_publish_subscribe_counts_in_mqi_statistics_and_accounting() -> None:
    from ferrymq.engine.api import SubDescriptor

    env = Env()
    env.qm.objects.alter_qmgr({"STATMQI": "ON", "STATINT": "5", "ACCTMQI": "ON"})
    hconn = env.qm.connect(appl_name="pubsub", user="alice")
    managed = C.MQSO_CREATE | C.MQSO_MANAGED
    nondurable = env.qm.subscribe(hconn, SubDescriptor(managed, object_string="price/a"))
    durable = env.qm.subscribe(hconn, SubDescriptor(managed | C.MQSO_DURABLE, object_string="price/#",
                                                     sub_name="D1"))
    with pytest.raises(MQError):  # the name is taken
        env.qm.subscribe(hconn, SubDescriptor(managed | C.MQSO_DURABLE, object_string="price/#", sub_name="D1"))
    topic = env.qm.open(hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="price/a"),
                        C.MQOO_OUTPUT).hobj
    env.put(topic, b"p" * 6, hconn=hconn)  # two copies
    env.put(topic, b"q" * 4, hconn=hconn, persistence=C.MQPER_PERSISTENT)  # two persistent copies
    env.qm.put1(hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="price/b"), MQMD(), PutOptions(0),
                b"r" * 3)  # one copy (the durable subscription's)
    with pytest.raises(MQError):
        env.qm.sub_request(hconn, nondurable.hsub, C.MQSR_ACTION_PUBLICATION)  # nothing retained: 2437
    env.qm.close(hconn, nondurable.hsub)
    env.qm.close(hconn, durable.hsub)  # kept
    resumed = env.qm.subscribe(hconn, SubDescriptor(C.MQSO_RESUME | C.MQSO_DURABLE, sub_name="D1"))
    env.qm.close(hconn, resumed.hsub, C.MQCO_REMOVE_SUB)
    env.qm.disconnect(hconn)
    [acct] = [p for _, p, _ in taken(env, ACCT) if p[F.MQCACF_APPL_NAME] == "pubsub"]
    env.clock.advance(5)
    env.qm.tick()
    [(_, stats, raw)] = taken(env, STATS)
    for mqi in (acct, stats):
        assert mqi[F.MQIAMO_SUBS_NDUR] == (1, 0, 0) and mqi[F.MQIAMO_SUBS_DUR] == (1, 0, 1)
        assert mqi[F.MQIAMO_SUBS_FAILED] == 1
        assert mqi[F.MQIAMO_UNSUBS_NDUR] == (0, 1) and mqi[F.MQIAMO_UNSUBS_DUR] == (1, 1)
        assert (mqi[F.MQIAMO_SUBRQS], mqi[F.MQIAMO_SUBRQS_FAILED]) == (0, 1)
        assert mqi[F.MQIAMO_TOPIC_PUTS] == (1, 1) and mqi[F.MQIAMO_TOPIC_PUT1S] == (1, 0)
        assert mqi[F.MQIAMO64_TOPIC_PUT_BYTES] == (9, 4)
        assert mqi[F.MQIAMO_PUTS] == (0, 0)  # a publication is a topic put, not a queue put
    # by the copies' persistence: the non-durable subscription's managed queue is temporary
    # dynamic, so its copy of the persistent publication is not persistent
    assert stats[F.MQIAMO_PUBLISH_MSG_COUNT] == (4, 1) and stats[F.MQIAMO64_PUBLISH_MSG_BYTES] == (19, 4)
    assert F.MQIAMO_PUBLISH_MSG_COUNT not in acct  # IBM has it in statistics only
    params, _ = PCFExecute.unpack(raw)
    assert params[F.MQIAMO_PUBLISH_MSG_COUNT] == [4, 1] and params[F.MQIAMO_SUBS_DUR] == [1, 0, 1]


def test_statchl_decides_at_channel_start_and_writes_each_interval() -> None:
    from ferrymq.admin.session import Session
    from ferrymq.engine.chlcontrol import ChannelStatus

    env = Env()
    session = Session(lambda c: run(env.qm, c))
    for define in ("DEFINE CHANNEL(TO.QM2) CHLTYPE(SDR) CONNAME('127.0.0.1(1)') XMITQ(QM2)",
                   "DEFINE CHANNEL(OWN.LOW) CHLTYPE(RCVR) STATCHL(LOW)", "DEFINE CHANNEL(NOT.ME) CHLTYPE(RCVR) STATCHL(OFF)"):
        assert session.execute(define).messages == ["AMQ8014I: IBM MQ channel created."]
    monitor = env.qm.monitor
    assert monitor.channel_counts("TO.QM2") is None  # QMGR, and the queue manager's is OFF
    assert monitor.channel_counts("OWN.LOW") is not None  # its own level, the queue manager's OFF
    env.qm.objects.alter_qmgr({"STATCHL": "HIGH", "STATINT": "5"})
    assert monitor.channel_counts("TO.QM2") is not None and monitor.channel_counts("NOT.ME") is None
    env.qm.objects.alter_qmgr({"STATCHL": "NONE"})
    assert monitor.channel_counts("OWN.LOW") is None  # NONE: off whatever the channel says
    env.qm.objects.alter_qmgr({"STATCHL": "MEDIUM"})
    row = env.qm.state.channel_control.channels["TO.QM2"] = ChannelStatus(
        "TO.QM2", F.MQCHT_SENDER, F.MQCHS_RUNNING, conname="127.0.0.1(1)", rqmname="QM2", batchsz=10,
        stats=monitor.channel_counts("TO.QM2"))
    assert row.stats is not None
    row.stats.batch(10, True, 5_000)
    row.stats.net.add(300)
    row.stats.batch(4, False, 7_000)
    row.stats.net.add(100)
    row.stats.put_retries += 2
    env.clock.advance(5)
    env.qm.tick()
    [(h, params, raw)] = [m for m in taken(env, STATS) if m[0].command == F.MQCMD_STATISTICS_CHANNEL]
    assert (h.type, h.control, params[F.MQIAMO_OBJECT_COUNT]) == (F.MQCFT_STATISTICS, F.MQCFC_LAST, 1)
    [g] = params[F.MQGACF_CHL_STATISTICS_DATA]
    assert (g[F.MQCACH_CHANNEL_NAME], g[F.MQIACH_CHANNEL_TYPE], g[C.MQCA_REMOTE_Q_MGR_NAME]) == (
        "TO.QM2", F.MQCHT_SENDER, "QM2")
    assert (g[F.MQIAMO_MSGS], g[F.MQIAMO64_BYTES], g[F.MQIAMO_FULL_BATCHES], g[F.MQIAMO_INCOMPLETE_BATCHES]) == (
        14, 7_000, 1, 1)
    assert (g[F.MQIAMO_AVG_BATCH_SIZE], g[F.MQIAMO_PUT_RETRIES]) == (7, 2)
    assert (g[F.MQIAMO_NET_TIME_MIN], g[F.MQIAMO_NET_TIME_AVG], g[F.MQIAMO_NET_TIME_MAX]) == (100, 200, 300)
    assert F.MQIAMO_EXIT_TIME_AVG not in g  # no message exit: not available
    params_p, _ = PCFExecute.unpack(raw)
    assert params_p[F.MQGACF_CHL_STATISTICS_DATA][0][F.MQIAMO_MSGS] == 14
    env.clock.advance(5)  # the next interval counts from where this one ended
    env.qm.tick()
    [(_, again, _)] = [m for m in taken(env, STATS) if m[0].command == F.MQCMD_STATISTICS_CHANNEL]
    [g2] = again[F.MQGACF_CHL_STATISTICS_DATA]
    assert (g2[F.MQIAMO_MSGS], g2[F.MQIAMO64_BYTES]) == (0, 0)
    assert "STATCHL(MEDIUM)" in " ".join(session.execute("DISPLAY QMGR STATCHL").messages)
    assert "STATCHL(LOW)" in " ".join(session.execute("DISPLAY CHANNEL(OWN.LOW) STATCHL").messages)
