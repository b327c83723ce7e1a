"""One client conversation: the read → feed → drain events → act → write loop.

``ClientHandler`` is an asyncio BufferedProtocol (callbacks, not a reader task, because it
saves two context switches per read on the hot path; buffered, so that the transport reads
into the sans-IO ``ServerConnection``'s own buffer, reused from read to read, rather than
making a bytes object per read). Each read (``buffer_updated``) drains the connection's
events, calls the engine for each, and writes every reply produced by that read with one
``transport.write``.

Memory per connection is bounded: when the transport's write buffer passes its high-water
mark, or too many replies are parked waiting for an fsync, the handler stops taking
events (the unread bytes stay in the machine, at most one read's worth) and pauses
reading, and the read-ahead pumps stop taking messages off their queues; both resume when
the buffer drains. A slow consumer therefore slows only itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.codec import MessageItem
from ferrymq.protocol.connection import CLOSED, NEED_DATA, ServerConnection
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.server import ops
from ferrymq.tls.names import TLSPeer, peer_of

if TYPE_CHECKING:
    from ferrymq.engine.channels import ChannelObject
    from ferrymq.server.server import QueueManagerServer

log = logging.getLogger("ferrymq.server")

MAX_PARKED_PER_CONNECTION = 4096
"""Replies waiting for an fsync before the handler stops taking requests."""


@dataclass(slots=True)
class AsyncPutStats:
    """MQSTAT's view of asynchronous puts since the last Stat."""

    success: int = 0
    warning: int = 0
    failure: int = 0
    first: MQError | None = None

    def count_all(self, outcomes: list[MQError | None]) -> None:
        """``count`` for each outcome of a run (most are None: counted at once)."""
        ok = outcomes.count(None)
        self.success += ok
        if ok != len(outcomes):
            for exc in outcomes:
                if exc is not None:
                    self.count(exc)

    def count(self, exc: MQError | None) -> None:
        if exc is None:
            self.success += 1
            return
        if exc.comp == C.MQCC_WARNING:
            self.warning += 1
        else:
            self.failure += 1
        if self.first is None:
            self.first = exc


@dataclass(slots=True)
class Consumer:
    """A read-ahead consumer: how many more messages may be pushed, and its wait."""

    corr: int  # the Consume request, answered when the read-ahead ends
    hobj: int
    options: int
    credit: int
    window: int  # the credit never exceeds it
    waiter_id: int = 0
    paused: bool = False  # the next message is persistent: pushing resumes after the client's Get
    # Messages taken for it and not yet sent, and their estimated frame bytes (ops.gather).
    gathered: list[MessageItem] = field(default_factory=list)
    gathered_bytes: int = 0


@dataclass(slots=True)
class Waiter:
    """A get that waits in the engine: whose it is (its deadline is in server.deadlines)."""

    handler: ClientHandler
    corr: int  # 0 for a read-ahead consumer's wait
    hobj: int


@dataclass(slots=True)
class Counters:
    requests: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    started: float = field(default_factory=time.monotonic)


class ClientHandler(asyncio.BufferedProtocol):
    """Drives one ServerConnection against the server's queue manager."""

    peer_user = ""  # the OS user of a local-socket peer (server.LocalClientHandler), else none
    network = False  # a TCP connection (a client's), not the local socket or an in-process pair
    channel: ChannelObject | None = None  # the SVRCONN channel a TCP client connected through
    # What the TLS handshake agreed (None: plain TCP). ``peer_dn`` is the client certificate's
    # subject as IBM MQ shows it ("CN=app1,OU=Payments,O=Bank"; blank: no certificate, or no
    # TLS) and ``peer_issuer_dn`` its issuer's: what channel-authentication rules (SSLPEERMAP)
    # and DISPLAY CHSTATUS's SSLPEER/SSLCERTI read (docs/security.md, "TLS").
    tls_peer: TLSPeer | None = None
    peer_dn = ""
    peer_issuer_dn = ""
    last_hconn = 0  # the latest session's hconn, for the log once MQDISC has cleared hconn
    quiescing = False  # STOP CHANNEL MODE(QUIESCE) named this client (server.stop_channel)
    idle_heartbeats = True  # False under SHARECNV(0): heartbeats only while a get waits (ops._admit)
    claimed = ""  # the SVRCONN whose MAXINST counts this CONNECT while its password is checked (ops)

    def __init__(self, server: QueueManagerServer, accepted: float | None = None) -> None:
        """``accepted``: when the listener accepted the socket (time.monotonic(); default
        now), from which the handshake deadline counts."""
        self.server = server
        self.qmgr = server.qmgr
        self.pager = server.qmgr.pager
        self.conn = ServerConnection(max_msg_length=server.max_msg_length, raw_put_md=True)  # see ops._put
        self.transport: asyncio.Transport | None = None
        self.peer = "?"
        self.hconn = 0
        self.heartbeat_ms = 0
        self.out: list[bytes] = []
        self.out_bytes = 0
        self.parked = 0
        self.paused_writing = False
        self.reading_paused = False
        self.pumps_stalled = False  # a read-ahead pump stopped for want of room (see ops.pump)
        self._drain_poll = False  # a _maybe_resume is scheduled
        self.closed = False
        self.refused = False  # over the connection limit: told why and closed at once
        now = time.monotonic()
        self.last_write = now
        # The server's deadlines (conn_limits): read by its tick, never on the request path.
        self.accepted = accepted
        self.unconnected_since = now if accepted is None else accepted  # accepted, or disconnected: a Connect is due
        self.rx_seen, self.rx_at, self.probed_at = 0, now, now  # bytes_in as last seen, and when
        self.frame_since: float | None = None  # when the frame being received was first seen
        self.frame_mark = 0  # counters.requests then: a frame completed since if it moved
        self.held = 0  # bytes the machine holds, as counted in the server's frame budget
        self.budget_paused = False
        self.stats = AsyncPutStats()
        self.consumers: dict[int, Consumer] = {}
        self.counters = Counters()
        self._in_loop = False

    # -- asyncio callbacks ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.network = isinstance(peer, tuple)
        self.peer = f"{peer[0]}:{peer[1]}" if self.network else "local"
        tls = transport.get_extra_info("ssl_object")
        if tls is not None:
            self.tls_peer = peer_of(tls)
            self.peer_dn, self.peer_issuer_dn = self.tls_peer.dn, self.tls_peer.issuer_dn
        self.transport.set_write_buffer_limits(high=self.server.write_buffer_high)
        # One the listener handed over is still among those it holds: not counted twice.
        why = self.server.limits.refusal(self.server.open_connections() - (self.accepted is not None))
        if why is not None:
            self.refused = self.closed = True
            with contextlib.suppress(LocalProtocolError):
                self.transport.write(self.conn.send(E.Ending(C.MQRC_CHANNEL_NOT_AVAILABLE, why)))
            self.transport.close()
            return
        self.server.handlers.add(self)
        log.info("event=accept peer=%s connections=%d", self.peer, len(self.server.handlers))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.conn.get_buffer(sizehint)  # reads go straight into the framer's buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.conn.buffer_updated(nbytes)
        self.process()
        self.counters.bytes_in += nbytes  # after: the read's answers to waiting gets go out first

    def data_received(self, data: bytes) -> None:
        """Bytes read by someone else (a driver that feeds them; transports use get_buffer)."""
        self.conn.receive_data(data)
        self.process()
        self.counters.bytes_in += len(data)

    def eof_received(self) -> bool:
        self.conn.receive_data(b"")
        self.process()
        return False

    def pause_writing(self) -> None:
        self.paused_writing = True

    def resume_writing(self) -> None:
        self.paused_writing = False
        if self.reading_paused and self.transport is not None and not self.closed:
            self.reading_paused = False
            if not self.budget_paused:
                self.transport.resume_reading()
        if self.pumps_stalled and not self.closed and not self.blocked():
            self.pumps_stalled = False
            ops.resume_pumps(self)
        self.process()

    def pump_stalled(self) -> None:
        """A read-ahead pump stopped because the connection is full: pump again once it drains."""
        self.pumps_stalled = True
        if not self.paused_writing:
            self._poll_drain()

    def _poll_drain(self) -> None:
        if not self._drain_poll:
            self._drain_poll = True
            asyncio.get_running_loop().call_later(0.005, self._maybe_resume)

    def _maybe_resume(self) -> None:
        # blocked() by buffer size alone gets no resume_writing callback: poll as it drains.
        # While the transport has paused us, its resume_writing comes by itself.
        self._drain_poll = False
        if self.closed or not (self.reading_paused or self.pumps_stalled) or self.transport is None:
            return
        if not self.blocked():
            self.resume_writing()
        elif not self.paused_writing:
            self._poll_drain()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.refused:
            return
        self.closed = True
        self.server.handlers.discard(self)
        self._end_session()
        log.info("event=disconnect peer=%s hconn=%d requests=%d error=%r", self.peer, self.last_hconn,
                 self.counters.requests, exc)

    # -- the loop ------------------------------------------------------------------------

    def blocked(self) -> bool:
        """No room for more replies: the peer is not reading fast enough, or the disk is behind."""
        if self.paused_writing or self.parked >= MAX_PARKED_PER_CONNECTION:
            return True
        if self.pager.behind:  # persistent messages wait for the disk before leaving memory
            self.pager.settle()
            if self.pager.behind:
                return True
        if self.out_bytes >= self.server.write_buffer_high:
            return True
        # Counting the transport's buffer too keeps the total at high-water + one message.
        t = self.transport
        return t is not None and self.out_bytes + t.get_write_buffer_size() >= self.server.write_buffer_high

    def process(self) -> None:
        """Take events while there is room for their replies; act; write once."""
        if self._in_loop or self.closed:
            return
        self._in_loop = True
        try:
            conn, server = self.conn, self.server
            while not self.closed:
                # Nothing of ours unwritten and the transport not pausing us (so its buffer is
                # at most the high-water mark): room for one more reply without asking the
                # transport. After that reply the full test runs, keeping the bound at
                # high-water plus one message.
                if (self.out_bytes or self.parked or self.paused_writing or self.pager.behind) and self.blocked():
                    if not self.reading_paused and self.transport is not None:
                        self.reading_paused = True
                        self.transport.pause_reading()
                        if not self.paused_writing:
                            self._poll_drain()
                    break
                try:
                    ev = conn.next_event()
                except RemoteProtocolError as exc:
                    self.protocol_error(exc)
                    break
                if ev is NEED_DATA:
                    break
                if ev is CLOSED:
                    self.flush()
                    self.close()
                    break
                try:
                    ops.handle(self, ev)  # type: ignore[arg-type]
                except Exception as exc:  # our bug: tell the client why (2195) rather than drop it unsaid
                    log.exception("event=internal_error peer=%s error=%s", self.peer, exc)
                    self.end(C.MQRC_UNEXPECTED_ERROR, f"internal error: {exc}")
                    break
                finally:  # counted after: a waiting getter's answer that it makes goes out first
                    self.counters.requests += 1
                if server.qmgr.deliveries:
                    server.answer_waits()
                if conn.drained:  # the next next_event would say NEED_DATA
                    break
            server.dispatch_deliveries()
        finally:
            self._in_loop = False
        self.flush()
        self.server.flush_dirty()  # replies this read produced for other connections' waits
        held = self.conn.buffered
        if held != self.held:  # a frame begun, or one left: the server's frame budget counts it
            self.server.limits.hold(self, held)

    def pause_for_budget(self) -> None:
        """Frames being received across connections hold the server's budget: read no more."""
        self.budget_paused = True
        if self.transport is not None and not self.reading_paused:
            self.transport.pause_reading()

    def resume_for_budget(self) -> None:
        self.budget_paused = False
        if self.transport is not None and not self.reading_paused and not self.closed:
            self.transport.resume_reading()

    def emit(self, ev: E.ServerEvent) -> None:
        """Queue a frame for the next write."""
        data = self.conn.send(ev)
        self.out.append(data)
        self.out_bytes += len(data)
        self.server.dirty.add(self)

    def emit_after(self, lsn: int, ev: E.ServerEvent, *, vectored: bool = False) -> None:
        """Queue a frame once ``lsn`` is on disk (encoded now, so the machine's state moves now).

        ``vectored``: a frame of megabytes, kept in its pieces and written with the others
        by one vectored write, rather than copied into one buffer and then again into a joined write.
        """
        if lsn <= 0 and not vectored:
            self.emit(ev)
            return
        parts = self.conn.send_parts(ev) if vectored else [self.conn.send(ev)]
        if lsn <= 0:
            self._queue(parts)
            return
        self.parked += 1

        def release() -> None:
            self.parked -= 1
            if self.closed:
                return
            self._queue(parts)
            self.flush()
            if (self.reading_paused or self.pumps_stalled) and not self.blocked():
                self.resume_writing()

        self.server.committer.after(lsn, release, self)

    def _queue(self, parts: list[bytes]) -> None:
        self.out += parts
        self.out_bytes += sum(map(len, parts))
        self.server.dirty.add(self)

    def send_now(self, frame: bytes) -> None:
        """Queue ``frame`` and ``flush``: an answer that another connection's read produced
        and that goes out at once. Alone, it is written before any bookkeeping."""
        t = self.transport
        if self.out or t is None or self.closed:
            self.out.append(frame)
            self.out_bytes += len(frame)
            self.flush()
            return
        t.write(frame)
        self.server.dirty.discard(self)
        self.counters.bytes_out += len(frame)
        self.last_write = time.monotonic()

    def flush(self) -> None:
        self.server.dirty.discard(self)
        if not self.out or self.transport is None:
            return
        out, size = self.out, self.out_bytes
        self.out = []
        self.out_bytes = 0
        self.counters.bytes_out += size
        self.last_write = time.monotonic()
        if self.closed:
            return
        if size >= ops.VECTORED_FROM and len(out) > 1:
            self.transport.writelines(out)  # no copy with uvloop (writev); asyncio joins, as below
        else:
            self.transport.write(out[0] if len(out) == 1 else b"".join(out))

    # -- ending --------------------------------------------------------------------------

    def protocol_error(self, exc: RemoteProtocolError) -> None:
        # The text, not the exception: a handler that keeps records (a buffer, a test's
        # capture) would keep its traceback, and through its frames this whole connection.
        detail = str(exc)
        log.warning("event=protocol_error peer=%s hconn=%d error=%s", self.peer, self.hconn, detail)
        self.end(C.MQRC_CONNECTION_BROKEN, f"protocol error: {detail}")

    def end(self, reason: int, detail: str) -> None:
        """Tell the client why, then close (the write drains first)."""
        if self.closed:
            return
        with contextlib.suppress(LocalProtocolError):
            self.emit(E.Ending(reason, detail[:1000]))
        self.flush()
        self.close()

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        self._end_session()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()
        self._end_session()

    def _end_session(self) -> None:
        self.closed = True
        self.server.limits.forget(self)
        for c in list(self.consumers.values()):
            ops.stop_consumer(self, c, reply=False)
        self.server.drop_waiters(self)
        if self.hconn:
            hconn, self.hconn = self.hconn, 0
            try:
                self.qmgr.disconnect(hconn, commit=False)  # lost: back the unit of work out
            except MQError as exc:
                log.info("event=disconnect_error hconn=%d reason=%d", hconn, exc.reason)
            self.server.after_engine_call(self)

    def heartbeat(self, now: float) -> None:
        """After a heartbeat interval without writing, or without hearing from the client,
        send a heartbeat; it asks for an answer, which keeps a quiet client within the idle
        limit (conn_limits)."""
        if self.closed or not self.heartbeat_ms:
            return
        if not self.idle_heartbeats and not any(w.handler is self for w in self.server.waiters.values()):
            return  # SHARECNV(0): heartbeats only while a get waits, as IBM's pre-7 channel
        interval = self.heartbeat_ms / 1000
        if now - self.last_write >= interval or (now - self.rx_at >= interval and now - self.probed_at >= interval):
            self.probed_at = now
            self.emit(E.Heartbeat(0, reply=True))
            self.flush()

    def end_by_limit(self, rule: str, limit: float, reason: int, detail: str) -> None:
        """End the conversation for passing one of the server's limits, saying which."""
        log.warning("event=connection_ended rule=%s limit=%g peer=%s hconn=%d detail=%r", rule, limit, self.peer,
                    self.hconn, detail)
        self.end(reason, detail)

    def describe(self) -> dict[str, Any]:
        return {"peer": self.peer, "hconn": self.hconn, "requests": self.counters.requests}
