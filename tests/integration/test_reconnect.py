"""Automatic reconnect (MQCNO_RECONNECT) through a proxy that cuts connections, and across
a queue manager restart on the same journal."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal

sys.path.insert(0, str(Path(__file__).parent))
from tcp_proxy import TcpProxy


def define_queues(emb: EmbeddedQueueManager) -> None:
    qm = emb.qmgr
    assert qm is not None
    for name in ("Q1", "Q2", "Q3"):
        if qm.objects.find(name) is None:  # a restarted queue manager has them already
            qm.objects.define("QLOCAL", name)


def start_qm(journal_dir: Path) -> EmbeddedQueueManager:
    emb = EmbeddedQueueManager("QM1", FileJournal(str(journal_dir)), listen=True, port=0, heartbeat=1.0,
                               tick_interval=0.2)
    emb.start()
    emb.run(lambda: define_queues(emb))
    return emb


def stop_qm(emb: EmbeddedQueueManager) -> None:
    emb.stop()
    emb.qmgr.journal.close()  # type: ignore[attr-defined]


@pytest.fixture
def qm_and_proxy(tmp_path: Path) -> Iterator[tuple[list[EmbeddedQueueManager], TcpProxy]]:
    running = [start_qm(tmp_path)]
    proxy = TcpProxy(running[0].port)
    yield running, proxy
    proxy.close()
    for emb in running:
        stop_qm(emb)


def connect(proxy: TcpProxy, events: list[int] | None = None, reconnect: bool | float = True) -> fc.Client:
    def record(reason: int, detail: str) -> None:
        if events is not None:
            events.append(reason)

    return fc.connect("QM1", f"127.0.0.1({proxy.port})", reconnect=reconnect, on_reconnect=record, heartbeat=1.0)


def test_calls_carry_on_after_a_cut(qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy]) -> None:
    _, proxy = qm_and_proxy
    events: list[int] = []
    with connect(proxy, events) as qm:
        q = qm.open("Q1")
        q.put(b"before", persistent=True)
        assert proxy.cut() == 1
        time.sleep(0.2)  # the connection died while idle (a put racing the cut may get 2549)
        q.put(b"after", persistent=True)  # the handle was re-opened on the new connection
        assert events == [C.MQRC_RECONNECTING, C.MQRC_RECONNECTED] and qm.reconnects == 1
        assert [m.data for m in q.messages()] == [b"before", b"after"]


def test_without_reconnect_the_connection_is_broken(qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy]) -> None:
    _, proxy = qm_and_proxy
    qm = connect(proxy, reconnect=False)
    q = qm.open("Q1")
    proxy.cut()
    time.sleep(0.2)
    with pytest.raises(fc.ConnectionBroken) as ei:
        q.put(b"x")
    assert ei.value.reason == C.MQRC_CONNECTION_BROKEN
    qm.disconnect()


def test_a_silent_queue_manager_is_given_up_after_the_timeout(
        qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy]) -> None:
    _, proxy = qm_and_proxy
    qm = fc.connect("QM1", f"127.0.0.1({proxy.port})", timeout=0.5)
    q = qm.open("Q1")
    for wait in (0.0, 0.3, 0.0):  # each call sets its own bound on the wait for the reply
        with pytest.raises(fc.NoMessageAvailable):
            q.get(wait=wait)
    q.put(b"x")
    proxy.swallow()  # the connection stays up; no reply comes any more
    with pytest.raises(fc.ConnectionBroken, match="no reply from the queue manager") as ei:
        q.get(wait=0.2)
    assert ei.value.reason == C.MQRC_CONNECTION_BROKEN
    qm.disconnect()


def test_a_unit_of_work_in_flight_is_backed_out(qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy]) -> None:
    _, proxy = qm_and_proxy
    with connect(proxy) as qm:
        q = qm.open("Q1")
        q.put(b"committed", syncpoint=True)
        qm.commit()
        assert q.get(syncpoint=True).data == b"committed"
        q.put(b"lost", syncpoint=True)
        proxy.cut()
        time.sleep(0.2)
        with pytest.raises(fc.BackedOut) as ei:
            q.put(b"more", syncpoint=True)  # the reconnect happens here; the unit is gone
        assert ei.value.reason == C.MQRC_BACKED_OUT
        with pytest.raises(fc.BackedOut):
            q.get(syncpoint=True)
        with pytest.raises(fc.BackedOut):
            qm.commit()  # reports 2003 once and ends the unit
        assert [m.data for m in q.browse()] == [b"committed"]  # the get was backed out too
        q.put(b"next", syncpoint=True)  # a new unit of work works
        qm.commit()
        assert [m.data for m in q.messages()] == [b"committed", b"next"]


def test_a_waiting_get_is_reissued(qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy]) -> None:
    running, proxy = qm_and_proxy
    with connect(proxy) as qm:
        q = qm.open("Q2")
        timer = threading.Timer(0.3, proxy.cut)
        timer.start()

        def put_later() -> None:
            time.sleep(0.8)
            with running[0].connect() as other:
                other.open("Q2").put(b"late")

        t = threading.Thread(target=put_later)
        t.start()
        assert q.get(wait=10).data == b"late"
        t.join()
        assert qm.reconnects == 1


def test_restart_keeps_handles_and_browse_position(qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy],
                                                   tmp_path: Path) -> None:
    running, proxy = qm_and_proxy
    with connect(proxy) as qm:
        q = qm.open("Q3")
        for i in range(6):
            q.put(b"%d" % i, persistent=True)
        browse = q.browse()
        assert [next(browse).data for _ in range(3)] == [b"0", b"1", b"2"]
        stop_qm(running[0])  # the queue manager goes away ...
        emb = start_qm(tmp_path)  # ... and comes back on the same journal, on another port
        running[0] = emb
        proxy.target_port = emb.port
        assert [m.data for m in browse] == [b"3", b"4", b"5"]  # resumes after what it had seen
        assert q.depth() == 6
        assert qm.reconnects == 1


def test_reconnect_gives_up_after_its_timeout(qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy]) -> None:
    running, proxy = qm_and_proxy
    events: list[int] = []
    qm = connect(proxy, events, reconnect=0.5)
    q = qm.open("Q1")
    running[0].stop()
    t0 = time.monotonic()
    with pytest.raises(fc.MQError) as ei:
        q.put(b"x")
    assert ei.value.reason == C.MQRC_RECONNECT_FAILED
    assert 0.4 <= time.monotonic() - t0 < 5
    assert events[0] == C.MQRC_RECONNECTING and events[-1] == C.MQRC_RECONNECT_FAILED
    qm.disconnect()


def test_pymqi_cno_reconnect_option(qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy]) -> None:
    import ferrymq.pymqi as pymqi

    _, proxy = qm_and_proxy
    cd = pymqi.CD(ChannelName=b"DEV.APP.SVRCONN", ConnectionName=f"127.0.0.1({proxy.port})".encode())
    cno = pymqi.CNO(Options=pymqi.CMQC.MQCNO_RECONNECT)
    qmgr = pymqi.QueueManager(None)
    qmgr.connect_with_options("QM1", cd=cd, cno=cno)
    q = pymqi.Queue(qmgr, "Q1")
    q.put(b"one")
    proxy.cut()
    time.sleep(0.2)
    q.put(b"two")
    assert q.get() == b"one" and q.get() == b"two"
    q.close()
    qmgr.disconnect()


async def test_async_client_reconnects(qm_and_proxy: tuple[list[EmbeddedQueueManager], TcpProxy],
                                       tmp_path: Path) -> None:
    import asyncio

    running, proxy = qm_and_proxy
    events: list[int] = []
    async with await fc.connect_async("QM1", f"127.0.0.1({proxy.port})", reconnect=True, heartbeat=1.0,
                                      on_reconnect=lambda r, d: events.append(r)) as qm:
        q = await qm.open("Q1")
        await q.put(b"one", persistent=True)
        proxy.cut()
        await asyncio.sleep(0.2)
        await q.put(b"two", persistent=True)
        assert events == [C.MQRC_RECONNECTING, C.MQRC_RECONNECTED]
        # a unit of work in flight is backed out
        await q.put(b"lost", persistent=True, syncpoint=True)
        proxy.cut()
        await asyncio.sleep(0.2)
        with pytest.raises(fc.BackedOut):
            await q.put(b"more", syncpoint=True)
        with pytest.raises(fc.BackedOut):
            await qm.commit()
        # a restart on the same journal, while a get waits
        waiter = asyncio.create_task(q.get(wait=10, correl_id=b"late"))
        await asyncio.sleep(0.2)
        await asyncio.to_thread(stop_qm, running[0])
        emb = await asyncio.to_thread(start_qm, tmp_path)
        running[0] = emb
        proxy.target_port = emb.port
        await asyncio.sleep(0.5)
        await q.put(b"late!", correl_id=b"late")
        assert (await asyncio.wait_for(waiter, 10)).data == b"late!"
        assert [m.data async for m in q.browse()] == [b"one", b"two"]
        assert qm.reconnects == 3
