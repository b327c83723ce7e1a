"""One channel conversation over an asyncio stream: frames in and out through the machine."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from collections.abc import Callable

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


class Link:
    """A connected stream with its channel machine. ``sent``/``received`` count bytes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, sender: bool) -> None:
        self.reader, self.writer = reader, writer
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
        await self.writer.drain()

    async def next_event(self, timeout: float | None) -> P.Event:
        """The next frame's event.

        Raises:
            ChannelError: the peer closed the connection; RemoteProtocolError from the machine;
                TimeoutError after ``timeout`` seconds without a whole frame.
        """
        while not self.pending:
            data = await asyncio.wait_for(self.reader.read(262_144), timeout)
            if not data:
                raise ChannelError(2009, "the remote end closed the connection")  # MQRC_CONNECTION_BROKEN
            self.received += len(data)
            self.heard = time.monotonic()
            self.conn.receive_data(data)
            self.pending.extend(self.conn.events())
        return self.pending.popleft()

    def gone(self) -> bool:
        """Whether the partner closed the connection, or it broke, though nothing reads it:
        asyncio's protocol feeds the end of the stream (or the error) to the reader as it
        comes, so an idle sending end sees it without a read or a heartbeat."""
        return self.reader.at_eof() or self.reader.exception() is not None

    def close(self) -> None:
        self.writer.close()


async def open_link(conname: str, timeout: float, context: ssl.SSLContext | None = None,
                    check: Callable[[asyncio.StreamWriter], None] | None = None, *,
                    sender: bool = True) -> tuple[Link, str]:
    """A sender's (or, ``sender=False``, a requester's) connection to the first CONNAME address that answers, and that address
    as ``host(port)``; over TLS with ``context``, the handshake's outcome then given to
    ``check`` (which raises to refuse it).

    Raises:
        OSError, TimeoutError: none answered (the last one's error); what ``check`` raises.
    """
    last: Exception = ChannelError(F.MQRCCF_MISSING_CONN_NAME, "no CONNAME")
    for host, port in connection_names(conname):
        try:
            if context is None:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
            else:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(
                    host, port, ssl=context, server_hostname=host, ssl_handshake_timeout=timeout), timeout)
                if check is not None:
                    check(writer)
            # The listener tunes the receiving end; this end needs the same keepalive so that a
            # channel with HBINT(0) notices a peer gone without a word (ferrymq.tcpopts).
            tune_tcp(writer.get_extra_info("socket"))
            return Link(reader, writer, sender=sender), f"{host}({port})"
        except (OSError, TimeoutError) as exc:
            last = exc
    raise last
