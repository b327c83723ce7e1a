"""The server's limits (docs/limits.md): replies that fit the negotiated frame, bounded
read-ahead, and the deadlines and caps that keep one client from holding the server's memory."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from qm_process import add_admin, create_args_for_tests

import ferrymq.client as fc
from ferrymq.engine.api import SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import CLOSED, NEED_DATA, ClientConnection
from ferrymq.server import QueueManagerServer
from ferrymq.store.file import FileJournal
from ferrymq.store.memory import MemoryJournal
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
        reply = await self.call(E.Open(self.next_corr(), name, C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE))
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


# -- connections: deadlines, cap, frame budget ----------------------------------------------


@contextlib.asynccontextmanager
async def limited(**knobs: Any) -> AsyncIterator[QueueManagerServer]:
    """A server with the given knobs, a fast tick and heartbeats it does not impose."""
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    for name in ("Q1", "Q2"):
        qm.objects.define("QLOCAL", name)
    srv = QueueManagerServer(qm, "127.0.0.1", 0, tick_interval=0.1, **knobs)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(quiesce=False)


async def _ending(raw: Raw, timeout: float = 5.0) -> E.Ending:
    """The Ending the server sends before it closes the connection."""
    while True:
        ev = await raw.next(timeout)
        if isinstance(ev, E.Ending):
            return ev
        assert isinstance(ev, E.Heartbeat), ev  # a probe the raw client does not answer


async def test_handshake_deadline_ends_a_silent_connection() -> None:
    async with limited(handshake_timeout=0.5) as server:
        raw = await Raw.open(server.port)
        ending = await _ending(raw)
        assert ending.reason == C.MQRC_CONNECTION_BROKEN and "handshake_timeout(0.5)" in ending.detail
        assert await raw.next() is CLOSED
        raw.close()
        assert not server.handlers


async def test_idle_deadline_ends_a_client_that_does_not_answer_heartbeats() -> None:
    # A library client answers the server's heartbeats while idle and stays connected.
    async with limited(heartbeat=0.2, idle_timeout=1.0) as server, \
            await fc.connect_async("QM1", addr(server.port), heartbeat=0.2) as client:
        raw = await Raw.open(server.port)
        await raw.connect(heartbeat_ms=200)
        t0 = time.monotonic()
        ending = await _ending(raw)
        assert time.monotonic() - t0 < 4
        assert ending.reason == C.MQRC_CONNECTION_BROKEN and "idle_timeout(1)" in ending.detail
        raw.close()
        await asyncio.sleep(1.0)  # idle past the limit
        q = await client.open("Q1")
        await q.put(b"still here")
        assert (await q.get()).data == b"still here"


async def test_a_client_that_misses_heartbeats_is_cut_by_the_kernel() -> None:
    """Without idle_timeout, a live idle client stays (a synchronous one reads only inside its
    calls); one whose host stops acknowledging the server's heartbeats is cut: the socket's
    TCP_USER_TIMEOUT is twice the agreed heartbeat interval and 5 s."""
    async with limited(heartbeat=2.0) as server:
        raw = await Raw.open(server.port)
        await raw.connect(heartbeat_ms=3000)  # the larger of the two is agreed
        (h,) = server.handlers
        sock = h.transport.get_extra_info("socket") if h.transport is not None else None
        assert sock is not None
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 11_000
        raw.close()
        no_hb = await Raw.open(server.port)
        await no_hb.connect(heartbeat_ms=0)  # no heartbeats agreed (IBM's HBINT(0)): no limit
        h = max(server.handlers, key=lambda x: x.hconn)  # the first may not be gone yet
        assert h.transport is not None
        assert h.transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 0
        no_hb.close()


async def test_a_heartbeat_beyond_hbint_range_is_agreed_at_its_top() -> None:
    """A client asking for a heartbeat over IBM's HBINT range (999,999 s) is agreed the top of
    the range; the connection is served and its kernel deadline stays what the range allows."""
    async with limited(heartbeat=2.0) as server:
        raw = await Raw.open(server.port)
        reply = await raw.connect(heartbeat_ms=0xFFFF_FFFF)
        assert reply.heartbeat_ms == 999_999_000
        (h,) = server.handlers
        sock = h.transport.get_extra_info("socket") if h.transport is not None else None
        assert sock is not None
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == (999_999 * 2 + 5) * 1000
        assert isinstance(await raw.call(E.Open(raw.next_corr(), "Q1", C.MQOO_OUTPUT)), E.OpenReply)
        raw.close()


async def test_partial_frame_deadline_ends_a_stalled_frame() -> None:
    async with limited(frame_timeout=0.5) as server:
        raw = await Raw.open(server.port)
        await raw.connect()
        hobj = await raw.open_queue("Q1")
        frame = raw.conn.send(E.Put(raw.next_corr(), hobj, MQMD(version=2), b"d" * 300_000, C.MQPMO_NO_SYNCPOINT))
        await asyncio.get_running_loop().sock_sendall(raw.sock, frame[:100_000])  # and then nothing
        ending = await _ending(raw)
        assert ending.reason == C.MQRC_CONNECTION_BROKEN and "frame_timeout(0.5)" in ending.detail
        raw.close()
        assert server.limits.held == 0  # what it held is free again


async def test_connection_cap_refuses_clearly_and_admits_again() -> None:
    async with limited(max_connections=3) as server:
        held = [await Raw.open(server.port) for _ in range(3)]
        for raw in held:
            await raw.connect()
        extra = await Raw.open(server.port)
        ending = await _ending(extra)
        assert ending.reason == C.MQRC_CHANNEL_NOT_AVAILABLE and "max_connections(3)" in ending.detail
        extra.close()
        try:
            await fc.connect_async("QM1", addr(server.port))
            raise AssertionError("a fourth connection was admitted")
        except fc.MQError as exc:
            assert exc.reason == C.MQRC_CHANNEL_NOT_AVAILABLE
        assert len(server.handlers) == 3 and server.limits.refused_total == 2
        held.pop().close()
        await asyncio.sleep(0.1)
        async with await fc.connect_async("QM1", addr(server.port)) as c:
            await (await c.open("Q1")).put(b"admitted")
        for raw in held:
            raw.close()


async def test_frames_being_received_stay_within_the_budget() -> None:
    """Ten clients each send a 1 MB Put at once with a 2 MiB budget for frames being
    received: the server holds about the budget at a time (plus the frame it lets finish
    when every holder is paused, and a read per connection), and every put completes."""
    budget, n, size = 2 * MIB, 10, 1000 * 1000
    async with limited(frame_budget=budget) as server:
        loop = asyncio.get_running_loop()
        raws = [await Raw.open(server.port) for _ in range(n)]
        frames = []
        for raw in raws:
            await raw.connect()
            hobj = await raw.open_queue("Q1")
            frames.append(raw.conn.send(E.Put(raw.next_corr(), hobj, MQMD(version=2), b"p" * size,
                                              C.MQPMO_NO_SYNCPOINT)))
        peak = 0
        done = False

        async def sample() -> None:
            nonlocal peak
            while not done:
                peak = max(peak, sum(h.conn.buffered for h in server.handlers))
                await asyncio.sleep(0)

        sampler = loop.create_task(sample())
        sends = [loop.create_task(loop.sock_sendall(raw.sock, f)) for raw, f in zip(raws, frames, strict=True)]
        for raw in raws:
            assert isinstance(await raw.next(10), E.PutReply)
            raw.close()
        done = True
        await asyncio.gather(sampler, *sends)
        assert budget / 2 < peak <= budget + size + n * 256 * 1024, peak
        assert await _depth(server.port, "Q1") == n


def test_near_the_descriptor_limit_new_clients_are_refused_clearly(tmp_path: Any) -> None:
    """A real server process with RLIMIT_NOFILE lowered: a flood of connections never makes
    the listener fail on EMFILE; the ones over what the descriptors allow are told why
    (2537, naming RLIMIT_NOFILE), connected clients keep working, and once the flood ends
    new clients are admitted again."""
    env = dict(os.environ, FERRYMQ_HOME=str(tmp_path))

    def cli(*args: str, **kw: Any) -> str:
        p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *create_args_for_tests(args)], env=env,
                           capture_output=True, text=True, timeout=60, **kw)
        assert p.returncode == 0, p.stderr
        return p.stdout

    def low_nofile() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    cli("create", "QM1", "--port", "0")
    add_admin(tmp_path, "QM1")
    port = int(json.loads(cli("start", "QM1", "--output", "json", preexec_fn=low_nofile))["port"])
    flood: list[socket.socket] = []
    try:
        with fc.connect("QM1", addr(port)) as early:
            q = early.open("SYSTEM.DEFAULT.LOCAL.QUEUE")
            for _ in range(150):
                s = socket.create_connection(("127.0.0.1", port))
                flood.append(s)
            time.sleep(1.0)
            refused, silent = [], 0
            for s in flood:
                s.setblocking(False)
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    silent += 1  # admitted: the server waits for its Connect
                    continue
                conn = ClientConnection()
                conn.receive_data(data)
                refused.append(conn.next_event())
            assert 0 < silent < 128 - 64
            assert len(refused) == 150 - silent
            for ev in refused:
                assert isinstance(ev, E.Ending) and ev.reason == C.MQRC_CHANNEL_NOT_AVAILABLE, ev
                assert "RLIMIT_NOFILE(128)" in ev.detail
            try:
                fc.connect("QM1", addr(port)).close()
                raise AssertionError("a connection over the limit was admitted")
            except fc.MQError as exc:
                assert exc.reason == C.MQRC_CHANNEL_NOT_AVAILABLE
            q.put(b"still serving")
            assert q.get().data == b"still serving"
            for s in flood:
                s.close()
            flood.clear()
            time.sleep(0.5)
            with fc.connect("QM1", addr(port)) as late:
                late.open("SYSTEM.DEFAULT.LOCAL.QUEUE").put(b"admitted again")
    finally:
        for s in flood:
            s.close()
        cli("stop", "QM1", "--immediate")


def test_cli_keeps_server_knobs_and_start_overrides_them(tmp_path: Any) -> None:
    env = dict(os.environ, FERRYMQ_HOME=str(tmp_path))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ferrymq.cli", *create_args_for_tests(args)], env=env,
                              capture_output=True, text=True, timeout=60)

    bad = cli("create", "QM1", "--port", "0", "--max-connections", "-1")
    assert bad.returncode != 0 and "max_connections must be at least 0" in bad.stdout + bad.stderr
    assert cli("create", "QM1", "--port", "0", "--max-connections", "5", "--idle-timeout", "30").returncode == 0
    config = json.loads((tmp_path / "qmgrs" / "QM1" / "config.json").read_text())
    assert config["server"] == {"max_connections": 5, "idle_timeout": 30.0}
    add_admin(tmp_path, "QM1")
    started = cli("start", "QM1", "--output", "json", "--max-connections", "1")
    assert started.returncode == 0, started.stderr
    port = int(json.loads(started.stdout)["port"])
    try:
        with fc.connect("QM1", addr(port)):
            try:
                fc.connect("QM1", addr(port)).close()
                raise AssertionError("a second connection was admitted")
            except fc.MQError as exc:
                assert exc.reason == C.MQRC_CHANNEL_NOT_AVAILABLE and "max_connections(1)" in str(exc)
    finally:
        cli("stop", "QM1", "--immediate")
