"""Server-connection channels under control, as IBM's: MAXINST and MAXINSTC refuse a
client with 2537 MQRC_CHANNEL_NOT_AVAILABLE and put a Channel Not Available event; STOP
CHANNEL ends the channel's client connections (FORCE: 2009; QUIESCE: 2202 for calls that
asked FAIL_IF_QUIESCING, MQCMIT still works, 2009 after the grace), STATUS(STOPPED) refuses
new clients with 2537 until START CHANNEL; CONNAME and CLIENTID stop some instances only;
SHARECNV shown as CURSHCNV/MAXSHCNV. One real queue-manager process, clients over TCP
(docs/distributed.md, "Server-connection channels")."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from channel_pair import wait_for
from pcf_events import decode_event
from qm_process import QueueManagerProcess

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.client.errors import NoMessageAvailable
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQCFC

GRACE = 4.0  # the queue manager's FERRYMQ_SVRCONN_QUIESCE_GRACE here (IBM: "a few seconds")


@pytest.fixture(scope="module")
def qm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueueManagerProcess]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FERRYMQ_SVRCONN_QUIESCE_GRACE", str(GRACE))
        proc = QueueManagerProcess(Path(tmp_path_factory.mktemp("svrconnctl"))).start()
    proc.mqsc("DEFINE QLOCAL(APP.Q)\n"
              "ALTER QMGR CHLEV(ENABLED)\n"
              "DEFINE CHANNEL(FEW.SVRCONN) CHLTYPE(SVRCONN) MAXINST(2)\n"
              "DEFINE CHANNEL(ONE.EACH.SVRCONN) CHLTYPE(SVRCONN) MAXINSTC(1)\n"
              "DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)\n"
              "DEFINE CHANNEL(OLD.SVRCONN) CHLTYPE(SVRCONN) SHARECNV(0)\n"
              "DEFINE CHANNEL(HB0.SVRCONN) CHLTYPE(SVRCONN) SHARECNV(0) HBINT(1)\n"
              "DEFINE CHANNEL(HB1.SVRCONN) CHLTYPE(SVRCONN) SHARECNV(1) HBINT(1)\n"
              "DEFINE CHANNEL(BURST.SVRCONN) CHLTYPE(SVRCONN) MAXINST(2)\n")
    yield proc
    proc.stop()


def reason_of(call: object) -> int:
    with pytest.raises(MQError) as info:
        call()  # type: ignore[operator]
    return info.value.reason


def channel_events(qm: QueueManagerProcess) -> list[tuple[int, dict[int, object]]]:
    out: list[tuple[int, dict[int, object]]] = []
    with fc.connect("QM1", qm.conn_name) as c:
        q = c.open("SYSTEM.ADMIN.CHANNEL.EVENT")
        while True:
            try:
                header, params = decode_event(q.get(wait=0.2).data)
            except NoMessageAvailable:
                return out
            out.append((header.Reason, params))


def broken(c: fc.Client) -> bool:
    """Whether ``c``'s connection was ended (its next call fails with 2009), not refused otherwise."""
    try:
        c.open("APP.Q")
    except MQError as exc:
        assert exc.reason == C.MQRC_CONNECTION_BROKEN, exc
        return True
    return False


def ended(c: fc.Client) -> bool:
    """Whether MQCMIT on ``c`` fails with 2009 (nothing is in its unit of work)."""
    try:
        c.commit()
    except MQError as exc:
        assert exc.reason == C.MQRC_CONNECTION_BROKEN, exc
        return True
    return False


def instances(qm: QueueManagerProcess, channel: str) -> str:
    return qm.mqsc(f"DISPLAY CHSTATUS({channel}) STATUS CURSHCNV MAXSHCNV", check=False)


def test_maxinst_and_maxinstc_refuse_with_2537_and_a_channel_not_available_event(qm: QueueManagerProcess) -> None:
    channel_events(qm)  # start from an empty event queue
    first = fc.connect("QM1", qm.conn_name, channel="FEW.SVRCONN")
    second = fc.connect("QM1", qm.conn_name, channel="FEW.SVRCONN")
    assert reason_of(lambda: fc.connect("QM1", qm.conn_name, channel="FEW.SVRCONN")) == C.MQRC_CHANNEL_NOT_AVAILABLE
    with pytest.raises(pymqi.MQMIError) as pexc:
        pymqi.connect("QM1", "FEW.SVRCONN", qm.conn_name)
    assert (pexc.value.comp, pexc.value.reason) == (C.MQCC_FAILED, C.MQRC_CHANNEL_NOT_AVAILABLE)
    first.disconnect()  # an instance ends: a new one may start
    third = fc.connect("QM1", qm.conn_name, channel="FEW.SVRCONN")
    second.disconnect()
    third.disconnect()
    # MAXINSTC counts the instances from one client address (all of these are 127.0.0.1)
    with fc.connect("QM1", qm.conn_name, channel="ONE.EACH.SVRCONN"):
        assert reason_of(lambda: fc.connect("QM1", qm.conn_name, channel="ONE.EACH.SVRCONN")) \
            == C.MQRC_CHANNEL_NOT_AVAILABLE
    with fc.connect("QM1", qm.conn_name, channel="ONE.EACH.SVRCONN"):
        pass
    refused = [p for reason, p in channel_events(qm) if reason == C.MQRC_CHANNEL_NOT_AVAILABLE]
    assert [p[CMQCFC.MQIACF_REASON_QUALIFIER] for p in refused] == [
        F.MQRQ_SVRCONN_INST_LIMIT, F.MQRQ_SVRCONN_INST_LIMIT, F.MQRQ_CLIENT_INST_LIMIT]
    assert refused[0][CMQCFC.MQCACH_CHANNEL_NAME] == b"FEW.SVRCONN"
    assert refused[0][CMQCFC.MQCACH_CONNECTION_NAME] == b"127.0.0.1"
    assert refused[0][CMQCFC.MQIACH_MAX_INSTANCES] == 2
    assert refused[2][CMQCFC.MQIACH_MAX_INSTS_PER_CLIENT] == 1 and CMQCFC.MQIACH_MAX_INSTANCES not in refused[2]


def test_a_burst_of_connects_never_passes_maxinst(qm: QueueManagerProcess) -> None:
    # A user whose password was never checked: every CONNECT of the burst waits on the
    # password check (scrypt, off the event loop) at once, and each counts from the start.
    qm.add_user("burst", "burst-pw", "mqm")
    burst = 8
    gate = threading.Barrier(burst)
    clients: list[fc.Client] = []
    reasons: list[int] = []
    lock = threading.Lock()

    def one() -> None:
        gate.wait()
        try:
            c = fc.connect("QM1", qm.conn_name, channel="BURST.SVRCONN", user="burst", password="burst-pw")
        except MQError as exc:
            with lock:
                reasons.append(exc.reason)
            return
        with lock:
            clients.append(c)

    threads = [threading.Thread(target=one) for _ in range(burst)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert len(clients) == 2, (len(clients), reasons)
        assert reasons == [C.MQRC_CHANNEL_NOT_AVAILABLE] * (burst - 2)
    finally:
        for c in clients:
            c.disconnect()
    # a refused password gives its place back, as do the instances that ended
    assert reason_of(lambda: fc.connect("QM1", qm.conn_name, channel="BURST.SVRCONN", user="burst",
                                        password="wrong")) == C.MQRC_NOT_AUTHORIZED
    with fc.connect("QM1", qm.conn_name, channel="BURST.SVRCONN", user="burst", password="burst-pw"), \
            fc.connect("QM1", qm.conn_name, channel="BURST.SVRCONN", user="burst", password="burst-pw"):
        pass


def test_stop_force_breaks_clients_and_stopped_refuses_until_start(qm: QueueManagerProcess) -> None:
    c = fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN")
    q = c.open("APP.Q")
    q.put(b"uncommitted", syncpoint=True)
    assert "CURSHCNV(1)" in instances(qm, "APP.SVRCONN") and "MAXSHCNV(1)" in instances(qm, "APP.SVRCONN")
    qm.mqsc("STOP CHANNEL(APP.SVRCONN) MODE(FORCE)\n")
    wait_for(lambda: "STATUS(RUNNING)" not in instances(qm, "APP.SVRCONN"))
    assert "STATUS(STOPPED)" in instances(qm, "APP.SVRCONN")
    assert reason_of(lambda: q.put(b"after")) == C.MQRC_CONNECTION_BROKEN
    assert reason_of(lambda: fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN")) == C.MQRC_CHANNEL_NOT_AVAILABLE
    # stopped already: nothing to stop (4064, AMQ9533); START lets clients in; the backed-out put left nothing
    assert "AMQ9533E" in qm.mqsc("STOP CHANNEL(APP.SVRCONN)\nSTART CHANNEL(APP.SVRCONN)\n", check=False)
    with fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN") as again, pytest.raises(NoMessageAvailable):
        again.open("APP.Q").get()
    assert "STATUS(STOPPED)" not in instances(qm, "APP.SVRCONN")


def test_stop_quiesce_fails_waits_with_2202_lets_commit_finish_then_breaks(qm: QueueManagerProcess) -> None:
    waiter = fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN")
    worker = fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN")
    wq = worker.open("APP.Q")
    wq.put(b"in the unit", syncpoint=True)
    got: list[int] = []

    def wait_get() -> None:
        got.append(reason_of(lambda: waiter.open("APP.Q").get(wait=30.0)))

    t = threading.Thread(target=wait_get)
    t.start()
    time.sleep(0.3)  # the get waits in the queue manager
    qm.mqsc("STOP CHANNEL(APP.SVRCONN) MODE(QUIESCE) STATUS(INACTIVE)\n")
    t.join(GRACE)
    assert got == [C.MQRC_CONNECTION_QUIESCING]  # a waiting MQGET with FAIL_IF_QUIESCING ends before the grace
    assert reason_of(lambda: wq.put(b"more")) == C.MQRC_CONNECTION_QUIESCING
    worker.commit()  # the application finishes its unit of work
    wait_for(lambda: ended(worker))  # the grace ran out: 2009
    # STATUS(INACTIVE): new clients are welcome; the committed message is there
    with fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN") as c:
        assert c.open("APP.Q").get().data == b"in the unit"
    for c in (waiter, worker):
        with contextlib.suppress(MQError):
            c.disconnect()


def test_stop_names_instances_by_clientid_and_conname(qm: QueueManagerProcess) -> None:
    keep = fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN", appl_name="keep")
    drop = fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN", appl_name="drop")
    try:
        out = qm.mqsc("STOP CHANNEL(APP.SVRCONN) CONNAME('192.0.2.1') MODE(FORCE)\n"  # no instance from there
                      "STOP CHANNEL(APP.SVRCONN) CLIENTID('drop') STATUS(STOPPED)\n", check=False)  # nor one partner
        assert "AMQ9533E" in out and str(F.MQRCCF_PARM_CONFLICT) in out, out
        # PCF, as a monitoring program sends it: ClientIdentifier names the client's ApplName
        admin = pymqi.connect("QM1", "DEV.ADMIN.SVRCONN", qm.conn_name)
        try:
            pymqi.PCFExecute(admin).MQCMD_STOP_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: b"APP.SVRCONN",
                                                        CMQCFC.MQCACH_CLIENT_ID: b"drop",
                                                        CMQCFC.MQIACF_MODE: CMQCFC.MQMODE_FORCE})
        finally:
            admin.disconnect()
        wait_for(lambda: broken(drop))
        keep.open("APP.Q").put(b"still here")  # the other instance goes on, the channel is not stopped
        qm.mqsc("STOP CHANNEL(APP.SVRCONN) CONNAME('127.0.0.1') MODE(TERMINATE)\n")
        wait_for(lambda: "STATUS(RUNNING)" not in instances(qm, "APP.SVRCONN"))
        assert reason_of(lambda: keep.open("APP.Q")) == C.MQRC_CONNECTION_BROKEN
        with fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN") as c:
            assert c.open("APP.Q").get().data == b"still here"
    finally:
        for c in (keep, drop):
            with contextlib.suppress(MQError):
                c.disconnect()


def test_sharecnv_0_shows_no_conversations_and_quiesce_ends_at_once(qm: QueueManagerProcess) -> None:
    c = fc.connect("QM1", qm.conn_name, channel="OLD.SVRCONN")
    shown = instances(qm, "OLD.SVRCONN")
    assert "CURSHCNV(0)" in shown and "MAXSHCNV(0)" in shown
    qm.mqsc("STOP CHANNEL(OLD.SVRCONN) STATUS(INACTIVE)\n")  # MODE(QUIESCE): no notice reaches such a client
    wait_for(lambda: "STATUS(RUNNING)" not in instances(qm, "OLD.SVRCONN"))
    assert broken(c)
    with contextlib.suppress(MQError):
        c.disconnect()


@pytest.mark.parametrize(("channel", "ahead"), [("OLD.SVRCONN", False), ("APP.SVRCONN", True)])
def test_sharecnv_0_ignores_read_ahead(qm: QueueManagerProcess, channel: str, ahead: bool) -> None:
    # IBM: a SHARECNV(0) channel works as before version 7, without read-ahead, so
    # MQOO_READ_AHEAD is ignored and each MQGET takes one message from the queue.
    queue = f"RA.{channel}"
    qm.mqsc(f"DEFINE QLOCAL({queue}) DEFPSIST(NO)\n")
    with fc.connect("QM1", qm.conn_name) as feeder:
        q = feeder.open(queue)
        for i in range(5):
            q.put(f"m{i}", persistent=False)
    with fc.connect("QM1", qm.conn_name, channel=channel) as c:
        reader = c.open(queue, read_ahead=10)
        assert reader.get(wait=5).data == b"m0"
        assert reader.get(wait=5).data == b"m1"
        with fc.connect("QM1", qm.conn_name) as other:
            left = other.open(queue).get_batch(10, wait=0.2)
        if ahead:  # the control: read-ahead took the rest to the client
            assert left == []
            assert [reader.get(wait=5).data for _ in range(3)] == [b"m2", b"m3", b"m4"]
        else:
            assert [m.data for m in left] == [b"m2", b"m3", b"m4"]
            with pytest.raises(NoMessageAvailable):
                reader.get(wait=0.3)


def sent_while_idle(c: fc.Client, seconds: float) -> bool:
    """Whether the server wrote anything to ``c``'s socket while it sat idle."""
    time.sleep(seconds)
    try:
        return bool(c._sock.recv(65536, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except BlockingIOError:
        return False


@pytest.mark.parametrize(("channel", "idle_beats"), [("HB0.SVRCONN", False), ("HB1.SVRCONN", True)])
def test_sharecnv_0_heartbeats_only_while_a_get_waits(qm: QueueManagerProcess, channel: str,
                                                      idle_beats: bool) -> None:
    # IBM: under SHARECNV(0) heartbeats flow only while an MQGET waits; from SHARECNV(1)
    # they flow at any time. HBINT(1) and the client's 1 s: a heartbeat a second.
    qm.mqsc(f"DEFINE QLOCAL(HB.{channel})\n")
    with fc.connect("QM1", qm.conn_name, channel=channel, heartbeat=1.0) as c:
        q = c.open(f"HB.{channel}")
        assert sent_while_idle(c, 2.5) is idle_beats
        before = c._s.heartbeats_in
        with pytest.raises(NoMessageAvailable):
            q.get(wait=3.0)
        assert c._s.heartbeats_in - before >= 2  # the waiting get heard them
        # idle past the client's limit for a silent server (2 x 1 s + 5 s): not taken for gone
        time.sleep(8.0)
        q.put(b"still here")
        assert q.get(wait=1.0).data == b"still here"


def test_sharecnv_0_a_held_put_and_get_after_idling_is_not_taken_for_gone(qm: QueueManagerProcess) -> None:
    # An asynchronous put held by the client leaves in one write with the get after it. That
    # request is as much a request as any: the silence of a SHARECNV(0) server, which sends
    # no heartbeat while no get waits, is counted from it, not from before the idle spell.
    qm.mqsc("DEFINE QLOCAL(HB.HELD)\n")
    with fc.connect("QM1", qm.conn_name, channel="HB0.SVRCONN", heartbeat=1.0) as c:
        q, held = c.open("HB.HELD"), c.open("HB.HELD", async_put=True)
        held.put(b"first")
        assert q.get(wait=1.0).data == b"first"
        time.sleep(8.0)  # past the client's limit for a silent server (2 x 1 s + 5 s)
        held.put(b"after idling")
        assert q.get(wait=1.0).data == b"after idling"
