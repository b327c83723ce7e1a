"""The server: protocol errors, memory bounds, durability, group commit, quiesce and stop."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import time
from typing import Any

import pytest

import ferrymq.client as fc
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import CLOSED, NEED_DATA, ClientConnection
from ferrymq.server import QueueManagerServer
from ferrymq.store.file import FileJournal
from ferrymq.store.journal import Journal
from ferrymq.wire.mqmd import MQMD


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


async def read_events(reader: asyncio.StreamReader, conn: ClientConnection, timeout: float = 2.0) -> list[object]:
    out: list[object] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = await asyncio.wait_for(reader.read(65536), deadline - time.monotonic())
        except TimeoutError:
            break
        conn.receive_data(data)
        while (ev := conn.next_event()) not in (NEED_DATA, CLOSED):
            out.append(ev)
        if not data:
            break
    return out


@pytest.mark.parametrize("garbage", [
    b"GET / HTTP/1.1\r\n\r\n" + bytes(40),
    struct.pack(">hhiiiqqI", 350, 1100, 1 << 30, 2147476418, 0, 0, 1, 1),  # absurd length
    struct.pack(">hhiiiqqI", 350, 1114, 36, 2147476418, 0, 0, 1, 1),  # COMMIT before CONNECT
    os.urandom(200),
])
async def test_protocol_errors_end_one_connection_only(server: QueueManagerServer, garbage: bytes) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as good:
        q = await good.open("Q1")
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(garbage)
        await writer.drain()
        conn = ClientConnection()
        conn.send(E.Connect(1))  # so that the machine accepts the server's Ending
        evs = await read_events(reader, conn)
        assert any(isinstance(e, E.Ending) and e.reason == C.MQRC_CONNECTION_BROKEN for e in evs) or evs == []
        assert await reader.read() == b""  # the server closed it
        writer.close()
        await q.put(b"still serving")
        assert (await q.get()).data == b"still serving"


async def test_slow_consumer_cannot_grow_the_server(server: QueueManagerServer) -> None:
    big = b"x" * 200_000
    async with await fc.connect_async("QM1", addr(server.port)) as producer:
        q = await producer.open("Q2", async_put=True)
        for _ in range(100):
            await q.put(big)
        assert (await producer.stat()).successes == 100
        # A client that asks for all 100 (pipelined) and never reads its socket.
        loop = asyncio.get_running_loop()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", server.port))
        conn = ClientConnection()
        await loop.sock_sendall(sock, conn.send(E.Connect(1)))
        conn.receive_data(await loop.sock_recv(sock, 65536))
        conn.next_event()
        await loop.sock_sendall(sock, conn.send(E.Open(2, "Q2", C.MQOO_INPUT_SHARED)))
        conn.receive_data(await loop.sock_recv(sock, 65536))
        hobj = conn.next_event().hobj  # type: ignore[union-attr]
        gets = b"".join(conn.send(E.Get(3 + i, hobj, MQMD(version=2), C.MQGMO_NO_SYNCPOINT)) for i in range(100))
        await loop.sock_sendall(sock, gets)
        await asyncio.sleep(0.5)
        handler = max(server.handlers, key=lambda h: h.counters.bytes_out)
        assert handler.transport is not None
        buffered = handler.transport.get_write_buffer_size()
        assert buffered <= server.write_buffer_high + len(big) + 4096, buffered
        assert handler.reading_paused
        assert handler.counters.requests < 60  # most GETs still sit unread in its machine
        # the server keeps serving everyone else
        async with await fc.connect_async("QM1", addr(server.port)) as other:
            q3 = await other.open("Q3")
            await q3.put(b"ok")
            assert (await q3.get()).data == b"ok"
        # and the slow client gets everything once it reads
        got = 0
        while got < 100:
            data = await asyncio.wait_for(loop.sock_recv(sock, 1 << 20), 5)
            conn.receive_data(data)
            while (ev := conn.next_event()) not in (NEED_DATA, CLOSED):
                assert isinstance(ev, E.GetReply) and ev.data == big
                got += 1
        sock.close()


async def test_persistent_put_is_acknowledged_only_after_fsync(make_server: Any, slow_journal: Any) -> None:
    journal = slow_journal(delay=0.2)
    server = await make_server(journal)
    async with await fc.connect_async("QM1", addr(server.port)) as c:
        q = await c.open("Q1")
        syncs = journal.syncs
        t0 = time.monotonic()
        await q.put(b"p", persistent=True)
        assert time.monotonic() - t0 >= 0.19
        assert journal.syncs > syncs
        t0 = time.monotonic()
        await q.put(b"n", persistent=False)
        assert time.monotonic() - t0 < 0.15  # non-persistent never waits for the disk
        # group commit: 50 concurrent persistent puts share a handful of fsyncs
        syncs = journal.syncs
        t0 = time.monotonic()
        await asyncio.gather(*(q.put(b"g", persistent=True) for _ in range(50)))
        assert journal.syncs - syncs <= 3
        assert time.monotonic() - t0 < 1.5


async def test_file_journal_reply_waits_for_its_fdatasync(make_server: Any, tmp_path: Any) -> None:
    journal = FileJournal(tmp_path / "qm1")
    real_write = journal.write_pending
    synced: list[int] = []

    def slow_write(pending: Any) -> None:
        time.sleep(0.1)
        real_write(pending)
        synced.append(pending.lsn)

    journal.write_pending = slow_write  # type: ignore[method-assign]
    server = await make_server(journal)
    async with await fc.connect_async("QM1", addr(server.port)) as c:
        q = await c.open("Q1")
        await q.put(b"before", persistent=True)
        lsn = journal.appended_lsn
        t0 = time.monotonic()
        await q.put(b"durable", persistent=True)
        assert time.monotonic() - t0 >= 0.09
        assert synced and synced[-1] > lsn and journal.durable_lsn >= journal.appended_lsn - 1
    await server.stop(quiesce=False)
    journal.close()
    # the acknowledged message survives a restart
    again = FileJournal(tmp_path / "qm1")
    restarted = await make_server(again)
    async with await fc.connect_async("QM1", addr(restarted.port)) as c:
        q = await c.open("Q1")
        assert [(await q.get()).data for _ in range(2)] == [b"before", b"durable"]
    await restarted.stop(quiesce=False)
    again.close()


async def test_quiesce_ends_fail_if_quiescing_waits_with_2161(server: QueueManagerServer) -> None:
    c = await fc.connect_async("QM1", addr(server.port))
    q = await c.open("Q1")
    waiting = asyncio.create_task(q.get(wait=30))  # the client sets FAIL_IF_QUIESCING
    await asyncio.sleep(0.1)
    stopping = asyncio.create_task(server.stop(quiesce=True, timeout=2))
    with pytest.raises(fc.Quiescing) as ei:
        await asyncio.wait_for(waiting, 2)
    assert ei.value.reason == C.MQRC_Q_MGR_QUIESCING
    with pytest.raises(fc.MQError) as ei2:
        await q.put(b"x")
    assert ei2.value.reason == C.MQRC_Q_MGR_QUIESCING
    with pytest.raises(fc.MQError):  # new connections are refused while quiescing
        await fc.connect_async("QM1", addr(server.port), connect_timeout=1)
    await c.disconnect()
    await asyncio.wait_for(stopping, 5)
    assert not server.handlers


async def test_immediate_stop_ends_connections_with_2162(server: QueueManagerServer) -> None:
    c = await fc.connect_async("QM1", addr(server.port))
    q = await c.open("Q1")
    await q.put(b"x", syncpoint=True)
    waiting = asyncio.create_task(q.get(wait=30, correl_id=b"none"))
    await asyncio.sleep(0.05)
    await server.stop(quiesce=False)
    with pytest.raises(fc.MQError) as ei:
        await asyncio.wait_for(waiting, 2)
    assert ei.value.reason in (C.MQRC_Q_MGR_STOPPING, C.MQRC_CONNECTION_BROKEN)
    assert server.qmgr.connections == {}


def test_the_slow_journal_keeps_the_whole_journal_contract(slow_journal: Any) -> None:
    """The slow journal stands in for the real ones: a method the contract gains and it lacks
    would end a test's connection with an internal error, far from the cause."""
    contract = {n for n, v in vars(Journal).items() if callable(v) and not n.startswith("_")}
    assert contract and not {n for n in contract if not callable(getattr(slow_journal, n, None))}
