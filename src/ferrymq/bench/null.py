"""The machine's ceiling: a null broker that forwards length-prefixed frames and does
nothing else (no queue, no store, no acknowledgement), written the way a Python broker's
network layer is written (an asyncio Protocol), on asyncio's own loop or on uvloop.

A client says what it is with its first byte (``P`` produces or requests, ``C`` consumes
or responds); then it sends frames of a 4-byte big-endian length and that many bytes. The
broker forwards each run of complete frames a client sends, unchanged, to the next
connection of the other kind (round robin), and stops reading from producers while a
consumer's buffer is full. The clients are blocking sockets that gather frames into
64 KiB writes, as ferrymq's client gathers asynchronous puts.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from typing import Any

from ferrymq.bench.contender import HOST, REQUEST_REPLY, TRANSIENT, Contender, Service, Target, record_trips
from ferrymq.bench.link import POLL, Clock, Link, Tally, use_uvloop
from ferrymq.bench.model import Flow, RoundTrips

LEN = struct.Struct(">I")
GATHER = 64 * 1024
HIGH_WATER = 4 * 1024 * 1024


class _Hub:
    def __init__(self) -> None:
        self.sides: dict[bytes, list[_Conn]] = {b"P": [], b"C": []}
        self.turn = {b"P": 0, b"C": 0}

    def next_of(self, kind: bytes) -> _Conn | None:
        side = self.sides[kind]
        if not side:
            return None
        self.turn[kind] = (self.turn[kind] + 1) % len(side)
        return side[self.turn[kind]]

    def pause_producers(self, paused: bool) -> None:
        for conn in self.sides[b"P"]:
            (conn.transport.pause_reading if paused else conn.transport.resume_reading)()


class _Conn(asyncio.Protocol):
    def __init__(self, hub: _Hub) -> None:
        self.hub = hub
        self.kind = b""
        self.buf = bytearray()
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport.set_write_buffer_limits(high=HIGH_WATER)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.kind:
            self.hub.sides[self.kind].remove(self)

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if not self.kind:
            self.kind = bytes(buf[:1])
            del buf[:1]
            self.hub.sides[self.kind].append(self)
        # the end of the last complete frame: forward everything before it in one write
        end, n = 0, len(buf)
        while end + 4 <= n:
            size = LEN.unpack_from(buf, end)[0]
            if end + 4 + size > n:
                break
            end += 4 + size
        if end:
            peer = self.hub.next_of(b"C" if self.kind == b"P" else b"P")
            if peer is not None:
                peer.transport.write(bytes(buf[:end]))
            del buf[:end]

    def pause_writing(self) -> None:
        self.hub.pause_producers(True)

    def resume_writing(self) -> None:
        self.hub.pause_producers(False)


def serve(ports: Any, commands: Any, answers: Any, uvloop_: bool) -> None:
    if uvloop_:
        use_uvloop()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        hub = _Hub()
        server = await loop.create_server(lambda: _Conn(hub), HOST, 0)
        ports.put(server.sockets[0].getsockname()[1])
        while True:
            command, _ = await loop.run_in_executor(None, commands.get)
            if command == "stop":
                break
            answers.put({"cpu": time.process_time()})
        server.close()

    asyncio.run(main())


def _dial(port: int, kind: bytes) -> socket.socket:
    s = socket.create_connection((HOST, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(kind)
    return s


def _read_frame(s: socket.socket, buf: bytearray) -> None:
    """Read until ``buf`` holds one whole frame, and take it out."""
    while True:
        if len(buf) >= 4:
            end = 4 + LEN.unpack_from(buf, 0)[0]
            if len(buf) >= end:
                del buf[:end]
                return
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("the null broker closed the connection")
        buf += chunk


class NullBroker(Contender):
    system = "null broker"
    kinds = frozenset({TRANSIENT, REQUEST_REPLY})
    guarantees = {  # noqa: RUF012
        TRANSIENT: "none: forwards bytes; no queue, no acknowledgement (the machine's ceiling)",
        REQUEST_REPLY: "none: forwards bytes (the machine's ceiling)",
    }
    uvloop = False

    def __init__(self) -> None:
        self.service: Service | None = None

    def unavailable(self) -> str | None:
        return "uvloop is not installed" if self.uvloop and self.missing_uvloop() else None

    @staticmethod
    def missing_uvloop() -> bool:
        from ferrymq.bench.contender import missing_modules

        return bool(missing_modules("uvloop"))

    def start(self, ctx: Any) -> None:
        if self.service is None:
            self.service = Service(ctx, serve, self.uvloop)
            self.port = self.service.port

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()
            self.service = None

    def stats(self) -> dict[str, float]:
        assert self.service is not None
        result: dict[str, float] = self.service.ask("stats")
        return result

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        s = _dial(target.port, b"P")
        frame = LEN.pack(flow.size) + bytes(flow.size)
        per_write = max(1, GATHER // len(frame))
        n = flow.share(index)
        link.ready("producer")
        link.wait_go()
        clock = Clock()
        sent = 0
        while sent < n and not link.late():
            k = min(per_write, n - sent)
            s.sendall(frame * k)
            sent += k
        s.close()
        link.reports.put(clock.report("producer", sent))

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        tally = Tally(link, flow.count, flow.consumers)
        s = _dial(target.port, b"C")
        s.settimeout(POLL)
        link.ready("consumer")
        link.wait_go()
        clock = Clock()
        buf = bytearray()
        while True:
            try:
                chunk = s.recv(262144)
            except TimeoutError:
                if tally.idle():
                    break
                continue
            if not chunk:
                break
            buf += chunk
            frames, end, n = 0, 0, len(buf)
            while end + 4 <= n:
                size = LEN.unpack_from(buf, end)[0]
                if end + 4 + size > n:
                    break
                end += 4 + size
                frames += 1
            del buf[:end]
            if frames and tally.add(frames):
                break
        s.close()
        link.reports.put(tally.report(clock.cpu()))

    def respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        s = _dial(target.port, b"C")
        s.settimeout(POLL)
        frame = LEN.pack(trips.size) + bytes(trips.size)
        link.ready("responder")
        buf = bytearray()
        answered = 0
        while answered < trips.count + trips.warmup and not link.late():
            try:
                _read_frame(s, buf)
            except TimeoutError:
                continue
            s.sendall(frame)
            answered += 1
        s.close()

    def request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        s = _dial(target.port, b"P")
        frame = LEN.pack(trips.size) + bytes(trips.size)
        buf = bytearray()

        def one() -> None:
            s.sendall(frame)
            _read_frame(s, buf)

        record_trips(link, trips, one)
        s.close()


class NullAsyncio(NullBroker):
    name = "null-asyncio"
    client = "asyncio Protocol, blocking-socket clients"


class NullUvloop(NullBroker):
    name = "null-uvloop"
    client = "asyncio Protocol on uvloop, blocking-socket clients"
    uvloop = True
