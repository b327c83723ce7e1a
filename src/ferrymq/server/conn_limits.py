"""What one client may hold of the server: connections, time and half-received frames.

``ConnectionLimits`` owns (docs/limits.md, "Connections" and "Timeouts"):
- admission: at most ``max_connections`` conversations, and never so many that the process
  runs out of file descriptors (its RLIMIT_NOFILE less what it had open at start and a
  reserve for the journal and the listener), so that the listener can always accept a
  client and tell it why it is refused (MQRC_CHANNEL_NOT_AVAILABLE, 2537, as IBM MQ answers
  when a server-connection channel reaches MAXINST) instead of failing on EMFILE;
- deadlines: a Connect within ``handshake_timeout`` of the accept (or of a Disconnect); a
  frame, once begun, complete within ``frame_timeout``; a client that misses heartbeats is
  cut: the server sends one after each heartbeat interval without writing, and the socket's
  TCP_USER_TIMEOUT (twice the interval and 5 s, the client's own rule for the server) ends
  the connection when the peer does not acknowledge it. That does not end a live client
  that merely sits idle (a synchronous client reads only inside its calls, as an IBM MQ
  client without shared conversations does); ``idle_timeout`` (as DISCINT) ends one that
  sends nothing for that long, answering the server's heartbeats included;
- the budget of bytes that frames being received hold across all connections: a connection
  whose frame grows the total past ``frame_budget`` stops being read until the total falls
  back (a stalled sender still meets its frame deadline).

The deadlines are checked by the server's housekeeping tick, one pass over the connections,
not by a timer per connection: a deadline is met to within one tick.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ferrymq.mq import constants as C

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ferrymq.server.handler import ClientHandler

log = logging.getLogger("ferrymq.server")

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """The knobs (``QueueManagerServer`` keywords, ``ferrymq create/start`` options)."""

    max_connections: int = 1000
    fd_reserve: int = 64  # descriptors kept for the queue manager itself (journal, listener, logs)
    handshake_timeout: float = 10.0
    idle_timeout: float = 0.0  # seconds a connected client may send nothing; 0: no limit
    frame_timeout: float = 60.0
    frame_budget: int = 256 * MIB

    def __post_init__(self) -> None:
        for name in ("max_connections", "fd_reserve", "frame_budget"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)}")
        for name in ("handshake_timeout", "frame_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)}")
        if self.idle_timeout < 0:
            raise ValueError(f"idle_timeout must not be negative, not {self.idle_timeout}")


DEFAULT_LIMITS = Limits()


def _open_descriptors() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # no /proc: count on the reserve alone
        return 0


class ConnectionLimits:
    """Admission, deadlines and the frame budget of one server (see the module docstring)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.capacity = limits.max_connections
        self.fd_bound = False  # the capacity comes from RLIMIT_NOFILE, not max_connections
        self.nofile = -1
        self.refused = 0  # since the last log line about refusals
        self.refused_total = 0
        self.held = 0  # bytes that connections' machines hold (frames begun, frames not yet taken)
        self.budget_paused: set[ClientHandler] = set()

    def start(self) -> None:
        """Work out the capacity from the process's descriptor limit (called once, at start)."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.nofile = soft
        self.capacity = self.limits.max_connections
        if soft != resource.RLIM_INFINITY:
            by_fd = max(0, soft - _open_descriptors() - self.limits.fd_reserve)
            if by_fd < self.capacity:
                self.capacity, self.fd_bound = by_fd, True
        log.info("event=connection_limits capacity=%d max_connections=%d nofile=%d fd_reserve=%d "
                 "handshake_timeout=%s idle_timeout=%s frame_timeout=%s frame_budget=%d", self.capacity,
                 self.limits.max_connections, soft, self.limits.fd_reserve, self.limits.handshake_timeout,
                 self.limits.idle_timeout, self.limits.frame_timeout, self.limits.frame_budget)

    # -- admission -----------------------------------------------------------------------

    def refusal(self, open_now: int) -> str | None:
        """Why a new connection is refused when ``open_now`` are open; None to admit it."""
        if open_now < self.capacity:
            return None
        self.refused += 1
        self.refused_total += 1
        if self.fd_bound:
            why = (f"connection refused: {open_now} connections are open, the most this process's "
                   f"descriptors allow: RLIMIT_NOFILE({self.nofile}) less fd_reserve({self.limits.fd_reserve}) "
                   f"and those in use at start")
        else:
            why = f"connection refused: {open_now} connections are open, max_connections({self.limits.max_connections})"
        if self.refused == 1:  # the first of a run at once; the rest are counted by the tick
            log.warning("event=connection_refused rule=%s limit=%d detail=%r",
                        "fd_limit" if self.fd_bound else "max_connections", self.capacity, why)
        return why

    # -- the frame budget ----------------------------------------------------------------

    def hold(self, h: ClientHandler, size: int) -> None:
        """``h``'s machine now holds ``size`` bytes received and not yet taken."""
        grew = size > h.held
        self.held += size - h.held
        h.held = size
        budget = self.limits.frame_budget
        if grew:
            if self.held > budget and not h.budget_paused and not h.closed:
                h.pause_for_budget()
                self.budget_paused.add(h)
                log.info("event=frame_budget_pause peer=%s held=%d frame_budget=%d", h.peer, self.held, budget)
        elif self.budget_paused and self.held <= budget:
            self._resume_all()

    def forget(self, h: ClientHandler) -> None:
        """``h`` is gone: what it held is free."""
        self.budget_paused.discard(h)
        self.hold(h, 0)

    def _resume_all(self) -> None:
        paused, self.budget_paused = self.budget_paused, set()
        for h in paused:
            h.resume_for_budget()

    def _unstick(self, handlers: Iterable[ClientHandler]) -> None:
        """Over the budget with every holder paused, nobody would finish a frame: let the one
        nearest to the end of its frame go on (it then frees what it holds)."""
        if self.held <= self.limits.frame_budget:
            self._resume_all()
            return
        if any(h.held and not h.budget_paused for h in handlers):
            return
        h = max(self.budget_paused, key=lambda x: x.held)
        self.budget_paused.discard(h)
        h.resume_for_budget()

    # -- deadlines -----------------------------------------------------------------------

    @staticmethod
    def dead_peer_limit(h: ClientHandler) -> float:
        """Seconds a heartbeat may stay unacknowledged before ``h``'s peer is taken for gone
        (0: no heartbeats agreed, IBM's HBINT(0): none)."""
        return h.heartbeat_ms / 1000 * 2 + 5 if h.heartbeat_ms else 0.0

    def connected(self, h: ClientHandler, sock: socket.socket | None) -> None:
        """``h`` agreed its heartbeat: the kernel ends the connection when what the server
        sends (a heartbeat at least once an interval) stays unacknowledged for the limit."""
        limit = self.dead_peer_limit(h)
        if not limit or sock is None or not hasattr(socket, "TCP_USER_TIMEOUT"):
            return
        with contextlib.suppress(OSError):  # not TCP (a socket pair in bindings mode)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, int(limit * 1000))

    def tick(self, handlers: Iterable[ClientHandler], now: float) -> None:
        """End the connections past a deadline; probe quiet ones; log refusals."""
        lim = self.limits
        for h in list(handlers):
            if h.closed:
                continue
            if h.counters.bytes_in != h.rx_seen:
                h.rx_seen, h.rx_at = h.counters.bytes_in, now
            if not h.hconn:
                if now - h.unconnected_since > lim.handshake_timeout:
                    h.end_by_limit("handshake_timeout", lim.handshake_timeout, C.MQRC_CONNECTION_BROKEN,
                                   f"no Connect within {lim.handshake_timeout:g} s: handshake_timeout"
                                   f"({lim.handshake_timeout:g})")
                    continue
            else:
                idle = lim.idle_timeout
                if idle and now - h.rx_at > idle:
                    h.end_by_limit("idle_timeout", idle, C.MQRC_CONNECTION_BROKEN,
                                   f"nothing received for {now - h.rx_at:.0f} s: idle_timeout({idle:g})")
                    continue
                h.heartbeat(now)
            if h.held and not h.reading_paused:
                if h.frame_since is None or h.frame_mark != h.counters.requests:
                    h.frame_since, h.frame_mark = now, h.counters.requests
                elif now - h.frame_since > lim.frame_timeout:
                    h.end_by_limit("frame_timeout", lim.frame_timeout, C.MQRC_CONNECTION_BROKEN,
                                   f"a frame begun {now - h.frame_since:.0f} s ago is not complete "
                                   f"({h.held} bytes received): frame_timeout({lim.frame_timeout:g})")
            else:
                h.frame_since = None
        if self.budget_paused:
            self._unstick(handlers)
        if self.refused > 1:
            log.warning("event=connections_refused count=%d limit=%d", self.refused, self.capacity)
        self.refused = 0
