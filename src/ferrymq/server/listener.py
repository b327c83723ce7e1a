"""A TCP listener that serves plain and TLS connections on one port, as IBM MQ's does.

Whether a connection speaks TLS is the channel's choice (SSLCIPH), not the port's: the
first byte a client sends tells. A TLS connection opens with a handshake record (content
type 0x16); a ferrymq frame or an MQ channel frame never does. So the listener accepts
sockets itself, waits for the first byte without taking it (MSG_PEEK), and hands the socket
to the event loop as a plain transport or as a TLS one (the loop's own TLS layer then reads
the ClientHello). The protocol ``factory`` gives sees only the decrypted stream; its
transport's ``get_extra_info("ssl_object")`` says what the handshake agreed.

Time is bounded throughout: a socket that sends nothing for ``handshake_timeout`` after
its accept is handed over as a plain connection (whose protocol's own handshake deadline,
counted from the accept, which ``factory`` is given, then ends it with its reason), and a
TLS handshake not finished by then is abandoned by the loop (``ssl_handshake_timeout``)
and its socket closed. ``waiting`` and ``handshaking`` count the connections in either
state (tests watch them return to zero).

``tls_context()`` gives the server's context, or raises ``MQError`` saying why there is
none (no certificate in the key repository, say): a client that starts TLS then is logged
and closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import cast

from ferrymq.errors import MQError
from ferrymq.tcpopts import tune_tcp

log = logging.getLogger("ferrymq.server")

TLS_HANDSHAKE = 0x16
"""A TLS record's content type for a handshake: the first byte of every ClientHello."""
_PAUSE_ON_EMFILE = 1.0  # seconds without accepting after running out of descriptors (asyncio's own rule)
_DEADLINE_REACHED = 0.98  # a handshake ended this close to its deadline was ended by it (timer slack)


class HandshakeTimeout(TimeoutError):
    """A TLS handshake not finished within the listener's ``handshake_timeout``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(errno.ETIMEDOUT, f"TLS handshake not finished within {seconds:g} s (handshake_timeout)")
        self.seconds = seconds


class Listener:
    """Accepts on ``host:port``; each connection goes to a protocol from ``factory``."""

    def __init__(self, factory: Callable[[float], asyncio.BaseProtocol], *, tls_context: Callable[[], ssl.SSLContext],
                 handshake_timeout: float, backlog: int = 1024, name: str = "listener",
                 full: Callable[[], bool] = lambda: False,
                 refuse: Callable[[socket.socket], None] = lambda sock: None,
                 handshake_failed: Callable[[str, BaseException], None] = lambda peer, exc: None,
                 vet: Callable[[ssl.SSLObject, str], Awaitable[bool]] | None = None) -> None:
        """``full()``: no room for another connection; one accepted then is given to
        ``refuse`` (to say why, without blocking) and closed at once, so that a flood never
        holds descriptors the queue manager needs. ``handshake_failed(peer, exc)``: a TLS
        handshake ended in an error or was not finished in time (``HandshakeTimeout``; not a
        peer gone), for the queue manager's Channel SSL Error event. ``vet(tls, peer)``:
        after a TLS handshake, before any byte is read, whether the connection may go on
        (a certificate's revocation status by OCSP, which needs a look-up the handshake
        cannot wait for); False closes it."""
        self.handshake_failed = handshake_failed
        self.vet = vet
        self.factory = factory
        self.full = full
        self.refuse = refuse
        self.tls_context = tls_context
        self.handshake_timeout = handshake_timeout
        self.backlog = backlog
        self.name = name
        self.sockets: list[socket.socket] = []
        self.waiting: dict[socket.socket, tuple[float, asyncio.TimerHandle]] = {}  # accepted (when); no byte yet
        self.handshaking: set[asyncio.Task[None]] = set()  # TLS handshakes, and plain transports being made
        self.closed = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self, host: str, port: int) -> int:
        """Bind and listen (every address ``host`` has, as asyncio's create_server does); the
        port bound (the first address's, when ``port`` is 0).

        Raises:
            OSError: an address cannot be bound.
        """
        loop = self._loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        seen: set[tuple[object, ...]] = set()
        try:
            for family, kind, proto, _, addr in infos:
                if (family, addr) in seen:
                    continue
                seen.add((family, addr))
                if self.sockets and port == 0:  # the other addresses take the first one's port
                    addr = (addr[0], self.sockets[0].getsockname()[1], *addr[2:])
                sock = socket.socket(family, kind, proto)
                self.sockets.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(addr)
                sock.listen(self.backlog)
                sock.setblocking(False)
        except OSError:
            for sock in self.sockets:
                sock.close()
            self.sockets.clear()
            raise
        for sock in self.sockets:
            loop.add_reader(sock.fileno(), self._accept, sock)
        return int(self.sockets[0].getsockname()[1])

    def close(self) -> None:
        """Stop accepting; close what has not become a connection yet."""
        if self.closed:
            return
        self.closed = True
        loop = self._loop
        for sock in self.sockets:
            if loop is not None:
                loop.remove_reader(sock.fileno())
            sock.close()
        for conn in list(self.waiting):
            self._drop(conn)
        for task in list(self.handshaking):
            task.cancel()

    async def wait_closed(self) -> None:
        if self.handshaking:
            await asyncio.gather(*self.handshaking, return_exceptions=True)

    # -- accepting ------------------------------------------------------------------------

    def _accept(self, lsock: socket.socket) -> None:
        loop = self._loop
        assert loop is not None
        for _ in range(self.backlog):
            try:
                conn, _ = lsock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    raise
                # Out of descriptors: stop accepting for a moment rather than spin on the
                # readable listener (connections already open are still served).
                log.warning("event=accept_paused listener=%s error=%r seconds=%g", self.name, exc, _PAUSE_ON_EMFILE)
                loop.remove_reader(lsock.fileno())
                loop.call_later(_PAUSE_ON_EMFILE, self._resume, lsock)
                return
            conn.setblocking(False)
            tune_tcp(conn)
            if self.full():
                try:
                    self.refuse(conn)
                finally:
                    conn.close()
                continue
            self.waiting[conn] = (time.monotonic(), loop.call_later(self.handshake_timeout, self._silent, conn))
            loop.add_reader(conn.fileno(), self._first_byte, conn)

    def _resume(self, lsock: socket.socket) -> None:
        if not self.closed and self._loop is not None:
            self._loop.add_reader(lsock.fileno(), self._accept, lsock)

    def _drop(self, conn: socket.socket) -> None:
        waited = self.waiting.pop(conn, None)
        if waited is not None:
            waited[1].cancel()
        if self._loop is not None:
            with contextlib.suppress(ValueError, OSError):  # already closed
                self._loop.remove_reader(conn.fileno())
        conn.close()

    def _silent(self, conn: socket.socket) -> None:
        self._start(conn, False)

    def _first_byte(self, conn: socket.socket) -> None:
        try:
            head = conn.recv(1, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        if not head:
            self._drop(conn)
            return
        self._start(conn, head[0] == TLS_HANDSHAKE)

    def _start(self, conn: socket.socket, tls: bool) -> None:
        loop = self._loop
        assert loop is not None
        accepted, timer = self.waiting.pop(conn)
        timer.cancel()
        loop.remove_reader(conn.fileno())
        task = loop.create_task(self._serve(conn, tls, accepted))
        self.handshaking.add(task)
        task.add_done_callback(self.handshaking.discard)

    async def _serve(self, conn: socket.socket, tls: bool, accepted: float) -> None:
        loop = self._loop
        assert loop is not None
        peer = _peer(conn)

        def factory() -> asyncio.BaseProtocol:
            return self.factory(accepted)

        if not tls:
            try:
                await loop.connect_accepted_socket(factory, conn)
            except OSError as exc:
                log.info("event=connection_dropped listener=%s peer=%s detail=%s", self.name, peer, repr(exc))
                conn.close()
            return
        try:
            context = self.tls_context()
        except MQError as exc:
            log.warning("event=tls_refused listener=%s peer=%s reason=%d detail=%r", self.name, peer,
                        exc.reason, exc.detail)
            conn.close()
            return
        held = _Held()
        try:
            left = max(0.001, accepted + self.handshake_timeout - time.monotonic())
            transport, _ = await loop.connect_accepted_socket(lambda: held, conn, ssl=context,
                                                              ssl_handshake_timeout=left)
        except (TimeoutError, OSError, ssl.SSLError, ConnectionError) as exc:
            # An untrusted or expired certificate, no suite in common, a peer gone or too slow.
            log.warning("event=tls_handshake_failed listener=%s peer=%s detail=%s", self.name, peer, repr(exc))
            conn.close()
            if isinstance(exc, ssl.SSLError):
                self.handshake_failed(peer, exc)
            elif time.monotonic() - accepted >= self.handshake_timeout * _DEADLINE_REACHED:
                # asyncio ends a late handshake with ConnectionAbortedError, as it ends one
                # whose peer went away: only the time taken tells a stall (an attack, or a
                # client that cannot finish) from a partner that gave up, which is no event.
                self.handshake_failed(peer, HandshakeTimeout(self.handshake_timeout))
            return
        try:
            agreed: ssl.SSLObject | None = transport.get_extra_info("ssl_object")
            go_on = True
            if self.vet is not None and agreed is not None:
                go_on = await self.vet(agreed, peer)
        except BaseException:
            transport.abort()
            raise
        if not go_on or held.lost or self.closed:
            transport.abort()
            return
        held.hand_over(transport, factory())


class _Held(asyncio.Protocol):
    """A TLS connection's protocol until ``vet`` has decided: it reads nothing (reading is
    paused from the start; anything the TLS layer had already decrypted is kept) and then
    hands the transport, and what it kept, to the real protocol."""

    def __init__(self) -> None:
        self.kept: list[bytes] = []
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TLS transport is not an asyncio.Transport subclass, but reads the same way.
        cast(asyncio.ReadTransport, transport).pause_reading()

    def data_received(self, data: bytes) -> None:
        self.kept.append(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True

    def hand_over(self, transport: asyncio.BaseTransport, protocol: asyncio.BaseProtocol) -> None:
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        for data in self.kept:
            if isinstance(protocol, asyncio.BufferedProtocol):
                view = memoryview(data)
                while view:
                    buf = memoryview(protocol.get_buffer(len(view)))
                    n = min(len(buf), len(view))
                    buf[:n] = view[:n]
                    protocol.buffer_updated(n)
                    view = view[n:]
            elif isinstance(protocol, asyncio.Protocol):
                protocol.data_received(data)
        self.kept.clear()
        cast(asyncio.ReadTransport, transport).resume_reading()


def _peer(conn: socket.socket) -> str:
    try:
        addr = conn.getpeername()
    except OSError:
        return "?"
    return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) else str(addr)
