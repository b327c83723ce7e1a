"""The server's limits (docs/limits.md): replies that fit the negotiated frame, bounded
read-ahead, and the deadlines and caps that keep one client from holding the server's memory."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import ferrymq.client as fc
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import NEED_DATA, ClientConnection
from ferrymq.server import QueueManagerServer
from ferrymq.store.file import FileJournal
from ferrymq.wire.mqmd import MQMD

MIB = 1024 * 1024


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


class Raw:
    """A client speaking the protocol by hand over a real socket (no client library limits)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.conn = ClientConnection()
        self.corr = 0

    @classmethod
    async def open(cls, port: int) -> Raw:
        sock = socket.socket()
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        return cls(sock)

    async def send(self, ev: Any) -> None:
        await asyncio.get_running_loop().sock_sendall(self.sock, self.conn.send(ev))

    async def next(self, timeout: float = 5.0) -> Any:
        """The next event (CLOSED at the end of the stream)."""
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + timeout
        while True:
            ev = self.conn.next_event()
            if ev is not NEED_DATA:
                return ev
            data = await asyncio.wait_for(loop.sock_recv(self.sock, 1 << 20), deadline - time.monotonic())
            self.conn.receive_data(data)

    async def call(self, ev: Any) -> Any:
        await self.send(ev)
        return await self.next()

    def next_corr(self) -> int:
        self.corr += 1
        return self.corr

    async def connect(self, **kw: Any) -> E.ConnectReply:
        reply = await self.call(E.Connect(self.next_corr(), **kw))
        assert isinstance(reply, E.ConnectReply) and reply.comp == C.MQCC_OK, reply
        return reply

    async def open_queue(self, name: str) -> int:
        reply = await self.call(E.Open(self.next_corr(), name, C.MQOO_INPUT_SHARED | C.MQOO_INQUIRE))
        assert isinstance(reply, E.OpenReply), reply
        return reply.hobj

    def close(self) -> None:
        self.sock.close()


async def _depth(port: int, queue: str) -> int:
    async with await fc.connect_async("QM1", addr(port)) as c:
        return await (await c.open(queue)).depth()


# -- replies that fit the frame ------------------------------------------------------------


async def test_batch_get_outside_syncpoint_never_loses_persistent_messages(make_server: Any, tmp_path: Any) -> None:
    """Issue 24 #2: get_batch(max_bytes=8 MiB) made a reply over the 4 MiB frame limit; the
    client refused it and the messages taken for it were gone, also after a restart."""
    n, size = 60, 100_000
    journal = FileJournal(tmp_path / "qm1")
    server = await make_server(journal)
    sent = {b"%04d" % i + b"x" * (size - 4) for i in range(n)}
    async with await fc.connect_async("QM1", addr(server.port)) as c:
        q = await c.open("Q1")
        for body in sorted(sent):
            await q.put(body, persistent=True)
        got: list[bytes] = []
        while batch := await q.get_batch(100, syncpoint=False, max_bytes=8 * MIB):
            assert sum(len(m.data) for m in batch) <= 4 * MIB
            got += [m.data for m in batch]
    # The server caps a request that the client library does not: a hand-made one too.
    async with await fc.connect_async("QM1", addr(server.port)) as c:
        q = await c.open("Q2")
        for body in sorted(sent):
            await q.put(body, persistent=True)
    raw = await Raw.open(server.port)
    await raw.connect()
    hobj = await raw.open_queue("Q2")
    raw_got: list[bytes] = []
    while True:
        reply = await raw.call(E.GetBatch(raw.next_corr(), hobj, C.MQGMO_NO_SYNCPOINT, 0, 100, 8 * MIB, 8 * MIB))
        if not isinstance(reply, E.GetBatchReply):
            assert isinstance(reply, E.Reply) and reply.reason == C.MQRC_NO_MSG_AVAILABLE, reply
            break
        raw_got += [bytes(item[1]) for item in reply.items]
    raw.close()
    await server.stop(quiesce=False)
    journal.close()
    again = await make_server(FileJournal(tmp_path / "qm1"))
    assert set(got) == sent and len(got) == n
    assert set(raw_got) == sent and len(raw_got) == n
    assert await _depth(again.port, "Q1") == 0 and await _depth(again.port, "Q2") == 0
    await again.stop(quiesce=False)
    again.qmgr.journal.close()


async def test_get_longer_than_the_connection_carries_stays_queued(server: QueueManagerServer) -> None:
    """A Get whose buffer exceeds the connection's negotiated maximum: the message does not
    leave the queue unless its reply fits the connection's frames (2080, it stays)."""
    async with await fc.connect_async("QM1", addr(server.port)) as c:
        await (await c.open("Q1")).put(b"b" * 300_000, persistent=False)
    raw = await Raw.open(server.port)
    await raw.connect(max_msg_length=64 * 1024)
    hobj = await raw.open_queue("Q1")
    reply = await raw.call(E.Get(raw.next_corr(), hobj, MQMD(version=2), C.MQGMO_NO_SYNCPOINT,
                                 buffer_length=4 * MIB))
    assert isinstance(reply, E.GetReply) and reply.reason == C.MQRC_TRUNCATED_MSG_FAILED, reply
    reply = await raw.call(E.GetBatch(raw.next_corr(), hobj, C.MQGMO_NO_SYNCPOINT, 0, 10, 4 * MIB, 4 * MIB))
    assert isinstance(reply, E.GetReply) and reply.reason == C.MQRC_TRUNCATED_MSG_FAILED, reply
    raw.close()
    assert await _depth(server.port, "Q1") == 1


# -- read-ahead ----------------------------------------------------------------------------


async def test_read_ahead_window_over_the_maximum_is_refused(server: QueueManagerServer) -> None:
    raw = await Raw.open(server.port)
    await raw.connect()
    hobj = await raw.open_queue("Q1")
    reply = await raw.call(E.Consume(raw.next_corr(), hobj, 2**32 - 1, C.MQGMO_NO_SYNCPOINT))
    assert isinstance(reply, E.Reply) and reply.reason == C.MQRC_OPTIONS_ERROR
    assert f"MAX_WINDOW({E.MAX_WINDOW})" in reply.detail
    raw.close()


async def test_consumer_that_never_reads_leaves_the_messages_queued(server: QueueManagerServer) -> None:
    """Issue 24 #4: the pump never asked whether the connection had room, so a consumer that
    never reads moved the whole queue into the server's buffer (and the queue looked empty)."""
    n, body = 3000, b"m" * 10_000
    async with await fc.connect_async("QM1", addr(server.port)) as producer:
        q = await producer.open("Q2", async_put=True)
        for _ in range(n):
            await q.put(body, persistent=False)
        assert (await producer.stat()).successes == n
    raw = await Raw.open(server.port)
    raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    await raw.connect()
    hobj = await raw.open_queue("Q2")
    await raw.send(E.Consume(raw.next_corr(), hobj, E.MAX_WINDOW, C.MQGMO_NO_SYNCPOINT))
    # More credit than the window, as a faulty client might send: held to the window.
    await raw.send(E.Credit(hobj, 2**31 - 1))
    await asyncio.sleep(1.0)
    handler = max(server.handlers, key=lambda h: h.counters.bytes_out)
    assert handler.transport is not None
    buffered = handler.transport.get_write_buffer_size() + handler.out_bytes
    assert buffered <= server.write_buffer_high + 512 * 1024, buffered
    assert handler.consumers[hobj].credit <= E.MAX_WINDOW
    depth = await _depth(server.port, "Q2")
    # What left the queue is in the server's buffer or the sockets' (a few MB at most).
    assert depth >= n // 2, depth
    # Reading drains the queue: the pump resumes as the writes drain.
    got = 0
    deadline = time.monotonic() + 20
    while got < n and time.monotonic() < deadline:
        ev = await raw.next()
        if isinstance(ev, E.PushedBatch):
            got += len(ev.items)
            await raw.send(E.Credit(hobj, len(ev.items)))
        elif isinstance(ev, E.Pushed):
            got += 1
            await raw.send(E.Credit(hobj, 1))
    assert got == n
    assert await _depth(server.port, "Q2") == 0
    raw.close()
