"""The client API against a real server and engine over 127.0.0.1 sockets."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.server import QueueManagerServer


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


async def test_put_get_browse_async(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as qm:
        q = await qm.open("Q1")
        r1 = await q.put(b"one", priority=1)
        r2 = await q.put("two", priority=5, correl_id=b"corr")
        assert r1.msg_id != r2.msg_id and len(r1.msg_id) == 24
        assert r2.correl_id == b"corr".ljust(24, b"\0")
        browsed = [m.data async for m in q.browse()]
        assert browsed == [b"two", b"one"]  # priority order
        assert await q.depth() == 2
        m = await q.get(correl_id=b"corr")
        assert m.text == "two" and m.format.strip() == "MQSTR" and m.msg_id == r2.msg_id
        assert (await q.get()).data == b"one"
        with pytest.raises(fc.NoMessageAvailable) as ei:
            await q.get()
        assert ei.value.reason == C.MQRC_NO_MSG_AVAILABLE


async def test_get_waits_for_a_later_put(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as a, await fc.connect_async("QM1", addr(server.port)) as b:
        qa, qb = await a.open("Q2"), await b.open("Q2")
        waiting = asyncio.create_task(qa.get(wait=5))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        await qb.put(b"late")
        # woken by the put itself, not by the server's housekeeping tick (0.2 s here)
        assert (await asyncio.wait_for(waiting, 0.1)).data == b"late"
        t0 = time.monotonic()
        with pytest.raises(fc.NoMessageAvailable):
            await qa.get(wait=0.3)
        assert 0.25 <= time.monotonic() - t0 < 2


async def test_units_of_work(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as qm:
        q = await qm.open("Q1")
        with pytest.raises(RuntimeError):
            async with qm.transaction():
                await q.put(b"never")
                raise RuntimeError("boom")
        assert await q.depth() == 0
        async with qm.transaction():
            await q.put(b"kept")
        async with qm.transaction():
            assert (await q.get()).data == b"kept"
            await qm.backout()
        assert (await q.get()).backout_count == 1


async def test_lost_connection_backs_out_its_unit_of_work(server: QueueManagerServer) -> None:
    c1 = await fc.connect_async("QM1", addr(server.port))
    q1 = await c1.open("Q3")
    await q1.put(b"uow", syncpoint=True)
    c1._transport.abort()  # type: ignore[union-attr]
    await asyncio.sleep(0.1)
    async with await fc.connect_async("QM1", addr(server.port)) as c2:
        with pytest.raises(fc.NoMessageAvailable):
            await (await c2.open("Q3")).get()


async def test_inquire_set_and_errors(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as qm:
        q = await qm.open("Q1", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_SET)
        attrs = await q.inquire(C.MQIA_CURRENT_Q_DEPTH, C.MQCA_Q_NAME)
        assert attrs == {C.MQIA_CURRENT_Q_DEPTH: 0, C.MQCA_Q_NAME: "Q1"}
        await q.set({C.MQIA_INHIBIT_PUT: C.MQQA_PUT_INHIBITED})
        with pytest.raises(fc.Inhibited) as ei:
            await q.put(b"x")
        assert ei.value.reason == C.MQRC_PUT_INHIBITED and ei.value.comp == C.MQCC_FAILED
        with pytest.raises(fc.UnknownObjectName):
            await qm.open("NO.SUCH.QUEUE")


async def test_wrong_queue_manager_name(server: QueueManagerServer) -> None:
    with pytest.raises(fc.MQError) as ei:
        await fc.connect_async("QMX", addr(server.port))
    assert ei.value.reason == C.MQRC_Q_MGR_NAME_ERROR


async def test_conn_name_list_tries_in_order(server: QueueManagerServer) -> None:
    qm = await fc.connect_async("QM1", f"127.0.0.1(1), 127.0.0.1({server.port})")
    await qm.disconnect()
    with pytest.raises(fc.QueueManagerUnavailable):
        await fc.connect_async("QM1", "127.0.0.1(1)")


async def test_pipelined_requests_on_one_connection(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as qm:
        q = await qm.open("Q1")
        results = await asyncio.gather(*(q.put(f"m{i}") for i in range(200)))
        assert len({r.msg_id for r in results}) == 200
        got = await asyncio.gather(*(q.get(wait=2) for _ in range(200)))
        assert sorted(m.text for m in got) == sorted(f"m{i}" for i in range(200))


async def test_many_concurrent_clients(server: QueueManagerServer) -> None:
    async def one(i: int) -> bytes:
        async with await fc.connect_async("QM1", addr(server.port), appl_name=f"c{i}") as qm:
            q = await qm.open("Q2")
            await q.put(b"x%d" % i, correl_id=b"c%d" % i)
            return (await q.get(correl_id=b"c%d" % i, wait=5)).data

    got = await asyncio.gather(*(one(i) for i in range(200)))
    assert got == [b"x%d" % i for i in range(200)]
    assert len(server.handlers) <= 200


async def test_async_put_and_stat(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as qm:
        q = await qm.open("Q1", async_put=True)
        ids = [(await q.put(b"a%d" % i)).msg_id for i in range(500)]
        assert len(set(ids)) == 500 and all(i.startswith(b"AMQ QM1") for i in ids)
        st = await qm.stat()
        assert (st.successes, st.failures, st.first_error) == (500, 0, None)
        m = await q.get()
        assert m.msg_id == ids[0]  # the client-chosen MsgId is the message's
        admin = await qm.open("Q1", options=C.MQOO_SET)
        await admin.set({C.MQIA_INHIBIT_PUT: C.MQQA_PUT_INHIBITED})
        for _ in range(3):
            await q.put(b"refused")  # does not raise: errors surface in stat()
        st = await qm.stat()
        assert st.failures == 3 and isinstance(st.first_error, fc.Inhibited)
        assert (await qm.stat()).failures == 0  # stat resets


async def test_read_ahead_async(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as p, await fc.connect_async("QM1", addr(server.port)) as c:
        qp = await p.open("Q3", async_put=True)
        qc = await c.open("Q3", read_ahead=20)
        for i in range(100):
            await qp.put(b"%d" % i, persistent=False)
        got = [int((await qc.get(wait=5)).data) for _ in range(100)]
        assert got == list(range(100))
        with pytest.raises(fc.NoMessageAvailable):
            await qc.get(wait=0.1)
        await qp.put(b"after")  # arrives while the consumer waits in the engine
        assert (await qc.get(wait=5)).data == b"after"
        await qc.close()


def test_sync_client_bindings_and_tcp(embedded: EmbeddedQueueManager) -> None:
    with embedded.connect() as local, fc.connect("QM1", addr(embedded.port)) as remote:
        ql, qr = local.open("Q1"), remote.open("Q1", read_ahead=10)
        for i in range(30):
            ql.put(f"m{i}")
        assert [qr.get(wait=2).text for _ in range(30)] == [f"m{i}" for i in range(30)]
        qr.close()  # its read-ahead, credit returned, would take what comes next
        with local.transaction():
            ql.put(b"tx")
        assert [m.data for m in ql.browse()] == [b"tx"]
        assert [m.data for m in ql.messages()] == [b"tx"]
        assert local.ping() < 1


def test_sync_get_wait_with_heartbeats(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port), heartbeat=1.0) as qm:
        q = qm.open("Q2")

        def later() -> None:
            time.sleep(1.5)
            with embedded.connect() as other:
                other.open("Q2").put(b"wake")

        t = threading.Thread(target=later)
        t.start()
        assert q.get(wait=10).data == b"wake"  # heartbeats flowed while it waited
        t.join()
        time.sleep(1.2)  # idle across a heartbeat interval, then keep working
        q.put(b"again")
        assert q.get().data == b"again"


def test_truncation(embedded: EmbeddedQueueManager) -> None:
    with embedded.connect() as qm:
        q = qm.open("Q1")
        q.put(b"0123456789")
        with pytest.raises(fc.Truncated) as ei:
            q.get(max_length=4)
        assert ei.value.message.data == b"0123"  # type: ignore[attr-defined]
        m = q.get(max_length=4, accept_truncated=True)
        assert (m.data, m.data_length, m.reason) == (b"0123", 10, C.MQRC_TRUNCATED_MSG_ACCEPTED)


def test_properties_travel_and_survive_restart(tmp_path: object) -> None:
    from pathlib import Path

    from ferrymq.store.file import FileJournal

    def start() -> EmbeddedQueueManager:
        emb = EmbeddedQueueManager("QM1", FileJournal(str(Path(str(tmp_path)))), listen=True, port=0)
        emb.start()
        emb.run(lambda: emb.qmgr.objects.find("PQ") or emb.qmgr.objects.define("QLOCAL", "PQ"))  # type: ignore[union-attr]
        return emb

    props = {"colour": "red", "size": 7, "ratio": 0.5, "urgent": True}
    emb = start()
    with fc.connect("QM1", addr(emb.port)) as qm:
        q = qm.open("PQ")
        q.put(b"a", properties=props, persistent=True)
        q.put(b"b", properties={"n": -1}, persistent=True)
        assert [m.properties for m in q.browse()] == [props, {"n": -1}]
    emb.stop()
    emb.qmgr.journal.close()  # type: ignore[union-attr]
    emb = start()
    try:
        with fc.connect("QM1", addr(emb.port)) as qm:
            q = qm.open("PQ", read_ahead=5)
            assert q.get(wait=2).properties == props  # after a restart, through a sync get
            q.put(b"c", properties={"k": "v"}, persistent=False)
            assert q.get(wait=2).properties == {"n": -1}
            assert q.get(wait=2).properties == {"k": "v"}  # pushed ahead
    finally:
        emb.stop()
        emb.qmgr.journal.close()  # type: ignore[union-attr]


async def test_waits_of_different_intervals_each_end_with_2033_or_their_message(server: QueueManagerServer) -> None:
    """Waits share one timer in the server: each still ends on its own, answered or 2033."""
    async with await fc.connect_async("QM1", addr(server.port)) as a, await fc.connect_async("QM1", addr(server.port)) as b:
        qa, qb = await a.open("Q2"), await b.open("Q2")
        long_wait = asyncio.create_task(qa.get(wait=30))
        await asyncio.sleep(0.05)
        short = [asyncio.create_task(qb.get(wait=w, correl_id=b"never")) for w in (0.2, 0.05)]
        for t in short:
            with pytest.raises(fc.NoMessageAvailable) as ei:
                await asyncio.wait_for(t, 10)
            assert ei.value.reason == C.MQRC_NO_MSG_AVAILABLE
        assert not long_wait.done()
        await qb.put(b"for the long wait")
        assert (await asyncio.wait_for(long_wait, 10)).data == b"for the long wait"
        assert not server.deadlines and not server.waiters
