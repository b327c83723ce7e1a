"""One channel conversation over a connection: frames in and out through the machine.

The connection's protocol (``Inbound``) is a buffered one: the transport reads into its
buffer, which the conversation's task hands to the machine whole when it asks for the next
frame. Read through an asyncio StreamReader instead, every byte was copied twice more (into
the reader's buffer, and out again as the read's bytes object) and every read waited in a
task of its own (``wait_for``); a channel's batch is nearly all message bytes.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, cast

from ferrymq.engine.channels import connection_names
from ferrymq.mq import cfc as F
from ferrymq.protocol import channel as P
from ferrymq.tcpopts import tune_tcp

NO_HEARTBEAT_WAIT = 60.0  # seconds a reply may take when the channel has no heartbeat (HBINT 0)


def receive_timeout(hbint: int) -> float:
    """How long an agent waits for its partner's next frame (a CONFIRM, a heartbeat's
    answer) before it takes the connection as lost: twice the negotiated HBINT, IBM's
    default (ReceiveTimeoutType MULTIPLY, ReceiveTimeout 2). A network that drops packets
    without closing the connection (a partition) is so found within the heartbeat's
    reach, not the operating system's TCP timeouts (many minutes)."""
    return 2.0 * hbint if hbint > 0 else NO_HEARTBEAT_WAIT


class ChannelError(Exception):
    """The conversation cannot go on; ``reason`` is an MQRC_/MQRCCF_ code for the status."""

    def __init__(self, reason: int, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class Inbound(asyncio.BufferedProtocol):
    """A channel connection's protocol: what arrives is kept in one buffer until the
    conversation takes it (``take``); reading pauses while READ_AHEAD bytes wait there.
    Writes go to the transport itself (``Link.writer``), ``drain`` waits while it asks the
    protocol to pause writing (a StreamWriter's flow control; uvloop reads into a protocol's
    buffer only when it is not also an asyncio.Protocol, as a StreamWriter's would be)."""

    READ_AHEAD = 262_144

    def __init__(self, accepted: Callable[[Link], Coroutine[Any, Any, None]] | None = None, *, sender: bool = False) -> None:
        """``accepted``: run as a task with the connection's Link once it is made (a
        listener's connection; ``sender``: which end of the machine it is)."""
        self.accepted, self.sender = accepted, sender
        self.buf = bytearray(self.READ_AHEAD)
        self.end = 0  # bytes of ``buf`` filled
        self.eof = False
        self.error: Exception | None = None  # why the connection broke (None: it did not, or closed cleanly)
        self.waiter: asyncio.Future[None] | None = None
        self.paused = False
        self.write_paused = False
        self.drained: asyncio.Future[None] | None = None  # drain's, while writing is paused
        self.lost = False
        self.link: Link | None = None
        self.task: asyncio.Task[None] | None = None  # ``accepted``'s, held here until it ends

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        loop = asyncio.get_running_loop()
        self.transport = transport
        self.over_tls = transport.get_extra_info("sslcontext") is not None
        # uvloop's TLS transport is not an asyncio.Transport subclass, but writes the same way.
        self.link = Link(self, cast(asyncio.WriteTransport, transport), sender=self.sender)
        if self.accepted is not None:
            self.task = loop.create_task(self.accepted(self.link))
            self.task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self.task = None

    def get_buffer(self, sizehint: int) -> bytearray | memoryview:
        buf, end = self.buf, self.end
        if end == len(buf):  # full (more handed over than READ_AHEAD): a larger one, never resized
            self.buf = bigger = bytearray(2 * len(buf))  # in place (the transport may still hold a view)
            bigger[:end] = buf[:end]
            buf = bigger
        return memoryview(buf)[end:]

    def buffer_updated(self, nbytes: int) -> None:
        self.end += nbytes
        if self.end >= self.READ_AHEAD and not self.paused:
            self.paused = True
            self.transport.pause_reading()  # type: ignore[attr-defined]
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return not self.over_tls  # as a StreamReader's protocol: TLS closes, plain TCP may still write

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = self.lost = True
        self.error = exc
        self._wake()
        self.resume_writing(exc)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self, exc: Exception | None = None) -> None:
        self.write_paused = False
        drained, self.drained = self.drained, None
        if drained is not None and not drained.done():
            if exc is None:
                drained.set_result(None)
            else:
                drained.set_exception(exc)

    async def drain(self) -> None:
        """Wait while the transport holds more than it wants to (StreamWriter.drain).

        Raises:
            ConnectionResetError: the connection is lost; the error that broke it.
        """
        if self.transport.is_closing():
            await asyncio.sleep(0)  # connection_lost may be on its way: let it come first
        if self.lost:
            raise ConnectionResetError("Connection lost")
        if not self.write_paused:
            return
        if self.drained is None:
            self.drained = asyncio.get_running_loop().create_future()
        await asyncio.shield(self.drained)  # several may wait: one cancelled leaves the others

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self, conn: P.ChannelConnection, timeout: float | None) -> int:
        """Hand what arrived to ``conn`` (waiting up to ``timeout`` seconds for some); how
        many bytes.

        Raises:
            TimeoutError: nothing arrived in time; the error that broke the connection.
        """
        if not self.end and not self.eof:
            loop = asyncio.get_running_loop()
            self.waiter = waiter = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
            try:
                await waiter
            finally:
                self.waiter = None
                if timer is not None:
                    timer.cancel()
        n = self.end
        if n:
            conn.receive_data(memoryview(self.buf)[:n])  # copied there once: the buffer is read into again
            self.end = 0
            if self.paused:
                self.paused = False
                self.transport.resume_reading()  # type: ignore[attr-defined]
        elif self.error is not None:
            raise self.error
        return n

    def gone(self) -> bool:
        return self.eof


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


class Link:
    """A connected channel conversation with its machine. ``sent``/``received`` count bytes."""

    def __init__(self, inbound: Inbound, writer: asyncio.WriteTransport, *, sender: bool) -> None:
        self.inbound, self.writer = inbound, writer
        self.conn = P.ChannelConnection(sender=sender)
        self.pending: deque[P.Event] = deque()  # decoded, not yet taken (a read holds many frames)
        self.sent = self.received = 0
        self.heard = time.monotonic()  # when the partner's last bytes came (BATCHHB)

    def write(self, ev: P.Event) -> None:
        self.write_frames([self.conn.send(ev)])

    def frame(self, ev: P.Event) -> bytes:
        """``ev``'s frame, for ``write_frames`` (the machine takes it as sent)."""
        return self.conn.send(ev)

    def write_frames(self, frames: list[bytes]) -> None:
        """Frames made by ``frame``, in one write (one system call for a batch's messages)."""
        if not frames:
            return
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        self.sent += len(data)
        try:
            self.writer.write(data)
        except RuntimeError as exc:  # its transport was closed under it (reset, STOP FORCE)
            raise ChannelError(2009, f"the connection is closed: {exc}") from None

    async def flush(self) -> None:
        await self.inbound.drain()

    async def next_event(self, timeout: float | None) -> P.Event:
        """The next frame's event.

        Raises:
            ChannelError: the peer closed the connection; RemoteProtocolError from the machine;
                TimeoutError after ``timeout`` seconds without a whole frame.
        """
        while not self.pending:
            n = await self.inbound.take(self.conn, timeout)
            if not n:
                raise ChannelError(2009, "the remote end closed the connection")  # MQRC_CONNECTION_BROKEN
            self.received += n
            self.heard = time.monotonic()
            self.pending.extend(self.conn.events())
        return self.pending.popleft()

    def gone(self) -> bool:
        """Whether the partner closed the connection, or it broke, though nothing reads it:
        the protocol learns it as it comes, so an idle sending end sees it without a read or
        a heartbeat."""
        return self.inbound.gone()

    def close(self) -> None:
        self.writer.close()


async def open_link(conname: str, timeout: float, context: ssl.SSLContext | None = None,
                    check: Callable[[asyncio.WriteTransport], None] | None = None, *,
                    sender: bool = True) -> tuple[Link, str]:
    """A sender's (or, ``sender=False``, a requester's) connection to the first CONNAME address that answers, and that address
    as ``host(port)``; over TLS with ``context``, the handshake's outcome then given to
    ``check`` (which raises to refuse it).

    Raises:
        OSError, TimeoutError: none answered (the last one's error); what ``check`` raises.
    """
    last: Exception = ChannelError(F.MQRCCF_MISSING_CONN_NAME, "no CONNAME")
    loop = asyncio.get_running_loop()
    for host, port in connection_names(conname):
        try:
            if context is None:
                _, inbound = await asyncio.wait_for(loop.create_connection(lambda: Inbound(sender=sender), host, port),
                                                    timeout)
            else:
                _, inbound = await asyncio.wait_for(loop.create_connection(
                    lambda: Inbound(sender=sender), host, port, ssl=context, server_hostname=host,
                    ssl_handshake_timeout=timeout), timeout)
            link = inbound.link
            assert link is not None  # made with the connection
            if context is not None and check is not None:
                check(link.writer)
            # The listener tunes the receiving end; this end needs the same keepalive so that a
            # channel with HBINT(0) notices a peer gone without a word (ferrymq.tcpopts).
            tune_tcp(link.writer.get_extra_info("socket"))
            return link, f"{host}({port})"
        except (OSError, TimeoutError) as exc:
            last = exc
    raise last
