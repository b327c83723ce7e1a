"""QueueManagerServer: a queue manager served over TCP, a local Unix socket and in-process sockets.

Owns the listening sockets (TCP; and the Unix socket a caller bound for local bindings,
whose peers connect as the OS user SO_PEERCRED names, as IBM's bindings do), the set of client handlers, the get-wait table and timers,
the group committer, the housekeeping tick (expiry, heartbeats, the connections'
deadlines of ``conn_limits``) and the lifecycle (quiesce and immediate stop). All engine calls happen on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pwd
import socket
import ssl
import struct
import time
from collections.abc import Callable
from typing import Any

from ferrymq.engine.api import Delivery, PersistentNext
from ferrymq.engine.chlcontrol import Request
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.session import connection_id
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import ServerConnection
from ferrymq.protocol.errors import LocalProtocolError
from ferrymq.server import gc_policy, ops
from ferrymq.server.cmdserver import CommandServer
from ferrymq.server.commit import GroupCommitter
from ferrymq.server.conn_limits import DEFAULT_LIMITS, ConnectionLimits, Limits
from ferrymq.server.connauth import Authenticator
from ferrymq.server.deadlines import Deadlines
from ferrymq.server.handler import ClientHandler, Consumer, Waiter
from ferrymq.server.listener import Listener
from ferrymq.server.metrics import MetricsEndpoint, render
from ferrymq.server.tls import ServerTLS
from ferrymq.tls import names, ocsp, rules

log = logging.getLogger("ferrymq.server")

# Seconds a client whose channel STOP CHANNEL MODE(QUIESCE) named may go on (finishing its
# unit of work after 2202) before it is ended with 2009, as IBM's "after a few seconds".
QUIESCE_GRACE = float(os.environ.get("FERRYMQ_SVRCONN_QUIESCE_GRACE", "5"))


class QueueManagerServer:
    """Serves ``qmgr`` to clients. Use from one event loop::

        server = QueueManagerServer(qmgr, port=0)
        await server.start()
        print(server.port)
        ...
        await server.stop(quiesce=True)
    """

    def __init__(
        self,
        qmgr: QueueManager,
        host: str = "127.0.0.1",
        port: int = 1414,
        *,
        max_msg_length: int = 4 * 1024 * 1024,
        heartbeat: float | None = None,
        write_buffer_high: int = 1024 * 1024,
        tick_interval: float = 1.0,
        backlog: int = 1024,
        max_connections: int = DEFAULT_LIMITS.max_connections,
        fd_reserve: int = DEFAULT_LIMITS.fd_reserve,
        handshake_timeout: float = DEFAULT_LIMITS.handshake_timeout,
        idle_timeout: float = DEFAULT_LIMITS.idle_timeout,
        frame_timeout: float = DEFAULT_LIMITS.frame_timeout,
        frame_budget: int = DEFAULT_LIMITS.frame_budget,
        local_socket: socket.socket | None = None,
        authenticator: Authenticator | None = None,
        metrics_port: int | None = None,
        tls: ServerTLS | None = None,
    ) -> None:
        """The connection knobs (``max_connections`` ... ``frame_budget``) are described in
        ``server.conn_limits`` and docs/limits.md. ``local_socket``: a bound, listening Unix
        socket served beside TCP (ferrymq.client.local); the server closes it when it stops.
        ``authenticator``: connection authentication (server.connauth) when the queue
        manager's security is on; without one every connection is taken as it asserts.
        ``heartbeat``: seconds, for every connection; None (the default) takes each
        connection's from its server-connection channel's HBINT, as IBM does.
        ``tls``: the queue manager's key repository (server.tls); without it a client that
        starts TLS is closed, and every channel must have SSLCIPH blank.

        Raises:
            ValueError: a knob out of its range.
        """
        self.limits = ConnectionLimits(Limits(max_connections, fd_reserve, handshake_timeout, idle_timeout,
                                              frame_timeout, frame_budget))
        self.qmgr = qmgr
        self.host = host
        self.port = port
        self.max_msg_length = max_msg_length
        self.heartbeat_ms = None if heartbeat is None else int(heartbeat * 1000)
        self.write_buffer_high = write_buffer_high
        self.tick_interval = tick_interval
        self.backlog = backlog
        self.handlers: set[ClientHandler] = set()
        self.dirty: set[ClientHandler] = set()
        self.waiting_answered: set[ClientHandler] = set()  # see answer_waits
        # Read-ahead consumers given messages by a wait that goes on, to send (dispatch_deliveries).
        self._gathering: dict[int, tuple[ClientHandler, Consumer]] = {}
        self.waiters: dict[int, Waiter] = {}
        # Waits of the queue manager's own agents (the channel initiator's on its initiation
        # queue): each answer goes to its function (``agent_wait``).
        self.agent_waits: dict[int, Callable[[Delivery], None]] = {}
        self.deadlines = Deadlines(self._wait_expired)
        self.committer = GroupCommitter(qmgr.journal)
        self.committer.on_failure = self._journal_failed
        self.quiescing = False
        self.stopped = False
        self.tls = tls
        self.listener: Listener | None = None
        self._local_socket = local_socket
        self._local: asyncio.Server | None = None
        self._tick_task: asyncio.Task[None] | None = None
        self._salt = os.urandom(8)
        self.command_server: CommandServer | None = None
        self.authenticator = authenticator
        # The Prometheus endpoint (server.metrics): off unless a port is given; loopback only.
        self.metrics: MetricsEndpoint | None = None
        self._metrics_port = metrics_port

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self, *, listen: bool = True) -> None:
        """Start the committer and tick; listen on ``host:port`` unless ``listen=False``
        (in-process use only). ``port`` then holds the bound port (useful with port 0)."""
        loop = asyncio.get_running_loop()
        self.limits.start()
        self.committer.start()
        self._tick_task = loop.create_task(self._tick(), name="ferrymq-tick")
        self.command_server = CommandServer(self.qmgr, self._when_durable)
        # Not inside start: what is on the command queue must never decide whether the
        # queue manager starts.
        loop.call_soon(self.serve_commands)
        if listen:
            self.listener = self.listener_for(lambda accepted: ClientHandler(self, accepted), self.backlog,
                                              self.qmgr.name)
            self.listener.full, self.listener.refuse = self._full, self._refuse_accepted
            self.port = await self.listener.start(self.host, self.port)
            if self._local_socket is not None:
                self._local = await loop.create_unix_server(lambda: LocalClientHandler(self), sock=self._local_socket)
        log.info("event=server_started qmgr=%s host=%s port=%s", self.qmgr.name, self.host, self.port if listen else "-")
        if self._metrics_port is not None:
            committer = self.committer
            self.metrics = MetricsEndpoint(lambda: render(self.qmgr, committer.sync_seconds, committer.batch_bytes))
            await self.metrics.start(self._metrics_port)
        self.qmgr.events.started()  # Queue Manager Active (STRSTPEV): the service is up
        self.dispatch_deliveries()
        self.flush_dirty()

    async def connect_local(self) -> socket.socket:
        """Bindings mode: a connected socket whose other end this server serves (no TCP)."""
        ours, theirs = socket.socketpair()
        loop = asyncio.get_running_loop()
        await loop.connect_accepted_socket(lambda: ClientHandler(self), ours)
        return theirs

    async def stop(self, quiesce: bool = True, timeout: float = 10.0) -> None:
        """End the service.

        ``quiesce=True`` (endmqm -c): refuse new connections, make FAIL_IF_QUIESCING calls
        and waits end with MQRC_Q_MGR_QUIESCING, let clients disconnect for up to
        ``timeout`` seconds, then end the rest. ``quiesce=False`` (endmqm -i): end every
        connection now (their units of work are backed out).
        """
        if self.stopped:
            return
        if self.listener is not None:
            self.listener.close()
        if self._local is not None:
            self._local.close()
        self.qmgr.events.stopping(quiesce)  # Queue Manager Not Active (STRSTPEV)
        if quiesce:
            self.quiescing = True
            self.qmgr.quiesce()
            self.dispatch_deliveries()
            self.flush_dirty()
            deadline = time.monotonic() + timeout
            while self.handlers and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        for h in list(self.handlers):
            h.end(C.MQRC_Q_MGR_STOPPING, "the queue manager is stopping")
        self.qmgr.monitor.ending()  # the interval's statistics (engine.monitoring)
        if self.command_server is not None:
            self.command_server.stop()
        if self.metrics is not None:
            await self.metrics.stop()
        self.stopped = True
        self.deadlines.close()
        if self._tick_task is not None:
            self._tick_task.cancel()
        await self.committer.stop()
        if self.listener is not None:
            await self.listener.wait_closed()
        if self._local is not None:
            await self._local.wait_closed()
        log.info("event=server_stopped qmgr=%s", self.qmgr.name)

    async def serve_forever(self) -> None:
        while not self.stopped:
            await asyncio.sleep(3600)

    # -- engine glue ---------------------------------------------------------------------

    def listener_for(self, factory: Callable[[float], asyncio.BaseProtocol], backlog: int, name: str) -> Listener:
        """A listener with this queue manager's TLS and handshake deadline (its own, and the
        channels' LISTENER objects')."""
        return Listener(factory, tls_context=self._tls_context, handshake_timeout=self.limits.limits.handshake_timeout,
                        backlog=backlog, name=name, handshake_failed=self._handshake_failed, vet=self._vet)

    async def _vet(self, tls: ssl.SSLObject, peer: str) -> bool:
        """Whether a TLS connection whose handshake has finished may go on: the partner
        certificate's revocation status by OCSP (tls.ocsp), as IBM MQ checks it when the
        certificate names a responder. REVOKED, or not known under OCSPAuthentication
        REQUIRED, closes it with a Channel SSL Error event (MQRQ_SSL_HANDSHAKE_ERROR,
        SSLHandshakeStage OCSP_CHECK, SSLReturnCode 23, 75 or 74); not known under WARN lets it
        on with a Channel SSL Warning event (MQRQ_SSL_UNKNOWN_REVOCATION); under OPTIONAL,
        with a log line only."""
        found = await self.tls.revocation(tls) if self.tls is not None else None
        if found is None:
            return True
        address, dn, verdict = peer.rpartition(":")[0], names.peer_of(tls).dn, found.verdict
        if not found.refuse:
            log.warning("event=tls_revocation_unknown peer=%s peer_dn=%r warn=%s detail=%r", peer, dn, found.warn,
                        verdict.detail)
            if found.warn:
                self.qmgr.events.channel_ssl_warning(F.MQRQ_SSL_UNKNOWN_REVOCATION, "", address)
                self._events_put()
            return True
        log.warning("event=tls_refused_revocation peer=%s peer_dn=%r status=%s code=%d detail=%r", peer, dn,
                    verdict.status, verdict.code, verdict.detail)
        self.qmgr.events.channel_ssl_error(F.MQRQ_SSL_HANDSHAKE_ERROR, "", address, stage=ocsp.STAGE,
                                           return_code=verdict.code)
        self._events_put()
        return False

    def _events_put(self) -> None:
        """After an event put outside any connection's call: a persistent one written, a
        get waiting on the event queue answered."""
        self.qmgr.take_sync_lsn()
        self.after_engine_call(None)

    def _handshake_failed(self, peer: str, exc: BaseException) -> None:
        """A Channel SSL Error event (MQRQ_SSL_HANDSHAKE_ERROR) for a handshake that failed
        before the partner named its channel (so without ChannelName, as IBM's)."""
        stage, code = rules.handshake_failure(exc)
        self.qmgr.events.channel_ssl_error(F.MQRQ_SSL_HANDSHAKE_ERROR, "", peer.rpartition(":")[0], stage=stage,
                                           return_code=code)
        self._events_put()

    def open_connections(self) -> int:
        """Connections counted against the capacity: those served, and those the listener
        holds (waiting for a first byte, in a TLS handshake, being handed over)."""
        held = len(self.listener.waiting) + len(self.listener.handshaking) if self.listener is not None else 0
        return len(self.handlers) + held

    def _full(self) -> bool:
        return self.open_connections() >= self.limits.capacity

    def _refuse_accepted(self, sock: socket.socket) -> None:
        """Tell a connection over the capacity why (2537, as ClientHandler would), without
        waiting: what the socket buffer does not take is lost with the connection anyway."""
        why = self.limits.refusal(self.open_connections()) or "connection refused: no room"
        with contextlib.suppress(OSError, LocalProtocolError):
            sock.send(ServerConnection().send(E.Ending(C.MQRC_CHANNEL_NOT_AVAILABLE, why)))

    def _tls_context(self) -> ssl.SSLContext:
        if self.tls is None:
            raise MQError(C.MQCC_FAILED, C.MQRC_SSL_INITIALIZATION_ERROR, "this queue manager has no key repository")
        return self.tls.context()

    def connection_id(self, hconn: int) -> bytes:
        return connection_id(self.qmgr.name, hconn)

    def _when_durable(self, lsn: int, send: Callable[[], None]) -> None:
        """The command server's replies go out once its changes are on disk."""
        def release() -> None:
            send()
            if self.qmgr.take_sync_lsn():
                self.committer.kick()
            self.dispatch_deliveries()
            self.flush_dirty()

        if lsn:
            self.committer.after(lsn, release)
        else:
            release()

    async def settle(self, timeout: float = 30.0) -> None:
        """After engine calls made by the queue manager's own tools on the event loop (the
        web console's commands and gets): wait until what they staged is on disk, then
        deliver what they made available, as a client's answer would be.

        Raises:
            TimeoutError: not durable within ``timeout`` seconds (the journal is failing).
        """
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def release() -> None:
            if not done.done():
                done.set_result(None)

        self._when_durable(self.qmgr.take_sync_lsn(), release)
        async with asyncio.timeout(timeout):
            await done

    def agent_done(self) -> int:
        """After engine calls of the queue manager's own agents (channels): have what they
        staged written, answer the waits they satisfied; the LSN their effects need."""
        # What they made (a received batch's messages) is long-lived, as a client's put run:
        # frozen now, the young collections do not scan it again (server.gc_policy).
        gc_policy.after_burst()
        lsn = self.qmgr.take_sync_lsn()
        if lsn:
            self.committer.kick()
        self.dispatch_deliveries()
        self.flush_dirty()
        return lsn

    def serve_commands(self) -> None:
        """Let an idle command server get again (at start, then every tick: it resumes by
        itself after GET(DISABLED) or a failed get)."""
        cs = self.command_server
        if cs is None or self.stopped or not cs.idle:
            return
        cs.pump()
        if self.qmgr.take_sync_lsn():
            self.committer.kick()
        self.dispatch_deliveries()
        self.flush_dirty()

    def agent_wait(self, waiter_id: int, answer: Callable[[Delivery], None]) -> None:
        """An agent's engine wait (no deadline): its Delivery goes to ``answer``."""
        self.agent_waits[waiter_id] = answer

    def add_waiter(self, waiter_id: int, h: ClientHandler, corr: int, hobj: int, timeout: float | None) -> None:
        self.waiters[waiter_id] = Waiter(h, corr, hobj)
        if timeout is not None:
            self.deadlines.add(waiter_id, timeout)

    def _wait_expired(self, waiter_id: int) -> None:
        w = self.waiters.pop(waiter_id, None)
        if w is None:
            return
        if self.qmgr.cancel_wait(waiter_id) and not w.handler.closed:
            w.handler.emit(E.Reply(w.corr, C.MQCC_FAILED, C.MQRC_NO_MSG_AVAILABLE,
                                   "no message arrived within the wait interval"))
        self.dispatch_deliveries()
        self.flush_dirty()

    def stop_channel(self, req: Request) -> None:
        """STOP CHANNEL of a server-connection channel (engine.commands.channels queued it,
        the channel initiator hands it here): the client connections ``req`` names end.
        FORCE and TERMINATE end them now: the call a client waits in, or its next, fails
        with 2009 MQRC_CONNECTION_BROKEN and its unit of work is backed out. QUIESCE: waits
        and calls that asked FAIL_IF_QUIESCING fail with 2202 MQRC_CONNECTION_QUIESCING,
        others (MQCMIT, MQBACK, MQCLOSE, MQDISC) still work, and a client still connected
        QUIESCE_GRACE seconds later is ended as by FORCE ("after a few seconds", IBM says).
        Under SHARECNV(0) IBM's client hears of no quiesce: QUIESCE ends it as FORCE."""
        loop = asyncio.get_running_loop()
        for h in list(self.handlers):
            conn = self.qmgr.connections.get(h.hconn) if h.hconn else None
            if (h.channel is None or h.channel.name != req.name or conn is None
                    or not req.matches(conn.conn_name, "", conn.appl_name)):
                continue
            log.info("event=svrconn_stopped channel=%s peer=%s hconn=%d mode=%d", req.name, h.peer, h.hconn, req.mode)
            if req.mode != F.MQMODE_QUIESCE or not conn.shcnv:
                h.end(C.MQRC_CONNECTION_BROKEN, f"STOP CHANNEL({req.name}) ended this connection")
            elif not h.quiescing:
                h.quiescing = conn.stopping = True
                self._fail_quiescing_waits(h)
                loop.call_later(QUIESCE_GRACE, h.end, C.MQRC_CONNECTION_BROKEN,
                                f"STOP CHANNEL({req.name}) MODE(QUIESCE): the connection did not end in time")
        self.dispatch_deliveries()
        self.flush_dirty()

    def _fail_quiescing_waits(self, h: ClientHandler) -> None:
        """End ``h``'s waiting gets and read-aheads that asked MQGMO_FAIL_IF_QUIESCING with 2202."""
        waits = self.qmgr.waits.waiters
        for wid, w in list(self.waiters.items()):
            engine_wait = waits.get(wid)
            if w.handler is not h or not w.corr or engine_wait is None:
                continue
            if engine_wait.gmo.options & C.MQGMO_FAIL_IF_QUIESCING:
                del self.waiters[wid]
                self.deadlines.discard(wid)
                self.qmgr.cancel_wait(wid)
                h.emit(E.Reply(w.corr, C.MQCC_FAILED, C.MQRC_CONNECTION_QUIESCING, "the channel is stopping"))
        for c in list(h.consumers.values()):
            if c.options & C.MQGMO_FAIL_IF_QUIESCING:
                ops.stop_consumer(h, c, MQError(C.MQCC_FAILED, C.MQRC_CONNECTION_QUIESCING, "the channel is stopping"))

    def drop_waiters(self, h: ClientHandler, hobj: int | None = None) -> None:
        """End the waits of a closing connection (or one handle) without answering them."""
        for wid, w in list(self.waiters.items()):
            if w.handler is h and (hobj is None or w.hobj == hobj):
                del self.waiters[wid]
                self.deadlines.discard(wid)
                self.qmgr.cancel_wait(wid)

    def after_engine_call(self, h: ClientHandler | None) -> None:
        """Hook run after calls that may satisfy other connections' waits."""
        if not h or not h._in_loop:
            self.dispatch_deliveries()
            self.flush_dirty()

    def dispatch_deliveries(self) -> None:
        if not self.qmgr.deliveries:  # most calls woke nobody
            return
        gathering = self._gathering
        for d in self.qmgr.take_deliveries():
            self._deliver(d)
        # Read-ahead waits that go on: what they were given leaves in one frame each.
        while gathering:
            h, c = gathering.popitem()[1]
            ops.push_gathered(h, c)

    def answer_waits(self) -> None:
        """Deliver what the last call made available, and write at once to the connections
        whose MQGET was waiting for it.

        A connection's read is worked through before anything is written, so that many
        requests share one write; but a waiting getter (a responder, or a requester waiting
        for its reply) does not depend on the rest of that read (typically the putter's own
        next get), so its answer goes out first: one hop of a request/reply round trip is
        shorter by the rest of the read. Read-ahead pushes stay batched."""
        self.dispatch_deliveries()
        while self.waiting_answered:
            h = self.waiting_answered.pop()
            if not h._in_loop:
                h.flush()

    def _deliver(self, d: Delivery) -> None:
        cs = self.command_server
        if cs is not None and d.waiter_id == cs.waiter_id and cs.deliver(d):
            return
        if self.agent_waits:
            answer = self.agent_waits.pop(d.waiter_id, None)
            if answer is not None:
                answer(d)
                return
        if d.waiting:  # a read-ahead's wait, which goes on (engine.handover)
            w = self.waiters.get(d.waiter_id)
            if w is None or w.handler.closed:
                return
            h = w.handler
            c = h.consumers.get(w.hobj)
            # Pushed as the message's parts: no GetResult is made for it (Delivery.parts).
            if c is not None and (parts := d.parts()) is not None:
                ops.gather(h, c, parts, d.sync_lsn, ops.batch_bytes(h))
                self._gathering[id(c)] = (h, c)
            return
        w = self.waiters.pop(d.waiter_id, None)
        if w is None:
            return
        self.deadlines.discard(d.waiter_id)
        h = w.handler
        if h.closed:
            return
        if w.corr == 0:  # a read-ahead consumer's wait
            c = h.consumers.get(w.hobj)
            if c is None:
                return
            c.waiter_id = 0
            parts = d.parts()
            if parts is not None:
                self._gathering.pop(id(c), None)
                ops.gather(h, c, parts, d.sync_lsn, ops.batch_bytes(h))
                ops.pump(h, c)  # sends it with what it takes next
            elif isinstance(d.error, PersistentNext):
                ops.pause(h, c)
            else:
                err = d.error if isinstance(d.error, MQError) else MQError(C.MQCC_FAILED, C.MQRC_UNEXPECTED_ERROR, repr(d.error))
                ops.stop_consumer(h, c, err)
            return
        self.waiting_answered.add(h)
        if d.result is not None:
            h.emit_after(d.sync_lsn, ops.get_reply(w.corr, d.result))
        else:
            err = d.error if isinstance(d.error, MQError) else MQError(C.MQCC_FAILED, C.MQRC_UNEXPECTED_ERROR, repr(d.error))
            h.emit_after(d.sync_lsn, E.Reply(w.corr, err.comp, err.reason, err.detail))

    def answer_first(self, d: Delivery) -> bool:
        """A put handed a message to a waiting get (PutResult.delivered): write its
        GetReply now, when it is what ``_deliver`` and ``answer_waits`` would write at once
        (a plain get's wait, on another connection than the one being worked through, the
        reply's usual frame), and tell the engine it is answered; else the Delivery takes
        the usual way (False). Called before the putter's own reply is made: one hop of a
        request/reply round trip ends here."""
        w = self.waiters.get(d.waiter_id)
        if w is None or not w.corr:  # not ours (the command server's), or a read-ahead's wait
            return False
        h, md_bytes = w.handler, d.md_bytes
        # Written from the Delivery's parts (no GetResult is made). A GetReply carries no
        # properties: a message with some takes ops.get_reply's way.
        if h._in_loop or h.closed or md_bytes is None or d.properties:
            return False
        data = d.data
        try:
            frame = h.conn.send(E.GetReply(w.corr, md_bytes, data, len(data), d.msg_token, d.queue))
        except LocalProtocolError:  # the usual way then says what is wrong
            return False
        try:
            h.send_now(frame)
        except RuntimeError:  # its transport was closed under it (a reset): connection_lost is on its way
            log.info("event=answer_lost peer=%s hconn=%d", h.peer, h.hconn)
        del self.waiters[d.waiter_id]
        self.deadlines.discard(d.waiter_id)
        self.qmgr.answered(d)
        return True

    def flush_dirty(self) -> None:
        # Every connection answer_waits would write is dirty too: written here, so no
        # reference to it (perhaps closed by then) is left for the next answer_waits.
        self.waiting_answered.clear()
        while self.dirty:
            h = self.dirty.pop()
            if not h._in_loop:
                h.flush()

    def _journal_failed(self, exc: BaseException) -> None:
        for h in list(self.handlers):
            if h.parked:
                h.end(C.MQRC_CONNECTION_BROKEN, f"journal write failed: {exc!r}")

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.tick_interval)
            try:
                self.qmgr.tick()
                self.serve_commands()
                if self.qmgr.take_sync_lsn():
                    self.committer.kick()
                self.dispatch_deliveries()
                self.limits.tick(self.handlers, time.monotonic())  # deadlines and heartbeats
                self.flush_dirty()
            except Exception:  # housekeeping must not die with one bad message
                log.exception("event=tick_failed")

    def stats(self) -> dict[str, Any]:
        return {"connections": len(self.handlers), "waiters": len(self.waiters), "syncs": self.committer.syncs,
                "parked": self.committer.parked, "journal": self.committer.health(),
                "refused": self.limits.refused_total, "frame_bytes_held": self.limits.held}


_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class LocalClientHandler(ClientHandler):
    """A connection on the local Unix socket: its user is the peer process's OS user
    (SO_PEERCRED), whatever the application claims, as in IBM's bindings mode."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        pid = uid = -1
        with contextlib.suppress(OSError, AttributeError, struct.error):
            pid, uid, _gid = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                              _PEERCRED.size))
        try:
            self.peer_user = pwd.getpwuid(uid).pw_name if uid >= 0 else ""
        except KeyError:  # a uid without a name (a container's): the number is the identity
            self.peer_user = str(uid)
        super().connection_made(transport)
        self.peer = f"local(pid={pid},user={self.peer_user or '?'})"
        if not self.refused:
            log.info("event=accept_local pid=%d user=%s", pid, self.peer_user)
