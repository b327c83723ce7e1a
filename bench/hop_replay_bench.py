"""The queue manager's own CPU per request/reply round trip, replayed without sockets.

    .venv/bin/python bench/hop_replay_bench.py [--n 3000] [--size 1024] [--replays 5] [--profile FILE]
                                               [--recording FILE] [--cold KIB]

First a live request/reply run of the shape of ``ferrymq bench --scenario request-reply``
(three processes on 127.0.0.1, as in request_reply_hops.py) records every chunk of bytes
the server process read, in order, per connection. Then this process replays that
recording into a fresh queue manager and server several times: the same handlers, engine
and codec, with transports that only count what is written. The clients choose their own
MsgIds, so the replies and CorrelId matches come out as in the live run.

What it prints, per round trip (median over the replays):
- the whole server cost (both hops, each connection's next get included), in process CPU;
- the critical part of each hop: from the chunk's arrival to the write of the answer to
  the other side's waiting get (what the other process waits for), in wall time (the
  median; clock_gettime of the process's CPU clock is a system call, of the monotonic
  clock is not).

No kernel, no scheduler: a change to the server's Python shows here in one run, with a few
percent of noise, where the live figures need many alternated runs. ``--profile`` writes a
cProfile of one replay. ``--cold KIB`` writes over KIB KiB of memory before each chunk
(``Cooler``) and prints the critical parts only: what they cost with the caches a live hop
finds. ``--calls`` counts the Python functions run in each critical part instead (a
profile hook, so no times): unlike times it does not move with the machine's load, and
cold, the functions a hop runs are much of what it costs. ``--opcodes`` counts the Python
bytecode instructions of each critical part the same way (a trace hook). ``--recording FILE`` keeps the recording: replayed from FILE when it
exists (so versions of the server are compared on the same bytes), written there otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import multiprocessing as mp
import os
import statistics
import struct
import sys
import time
from pathlib import Path
from typing import Any

from request_reply_hops import REPLIES, REQUESTS, WARMUP, respond

Chunk = tuple[int, bytes]  # (connection number, the bytes one read delivered)


def record(ports: Any, stop: Any, out: Any) -> None:
    """The live queue manager, recording what each connection's reads delivered."""
    from ferrymq.engine.api import SystemClock
    from ferrymq.engine.qmgr import QueueManager
    from ferrymq.server import QueueManagerServer, eventloop
    from ferrymq.server import handler as hd
    from ferrymq.store.memory import MemoryJournal

    chunks: list[Chunk] = []
    numbers: dict[int, int] = {}
    inner = hd.ClientHandler.data_received

    def data_received(h: Any, data: bytes) -> None:
        chunks.append((numbers.setdefault(id(h), len(numbers)), bytes(data)))
        inner(h, data)

    hd.ClientHandler.data_received = data_received  # type: ignore[method-assign]
    # The transports read into the handler's buffer (asyncio.BufferedProtocol): what a
    # read put there is recorded as the chunk it would have been.
    rooms: dict[int, memoryview] = {}
    # (an older server, 1fee357's, took bytes with data_received only)
    get_buffer = getattr(hd.ClientHandler, "get_buffer", None)
    buffer_updated = getattr(hd.ClientHandler, "buffer_updated", None)

    def recorded_room(h: Any, sizehint: int) -> memoryview:
        assert get_buffer is not None
        room = rooms[id(h)] = get_buffer(h, sizehint)
        return room

    def recorded_read(h: Any, nbytes: int) -> None:
        chunks.append((numbers.setdefault(id(h), len(numbers)), bytes(rooms[id(h)][:nbytes])))
        assert buffer_updated is not None
        buffer_updated(h, nbytes)

    if get_buffer is not None:
        hd.ClientHandler.get_buffer = recorded_room  # type: ignore[method-assign]
        hd.ClientHandler.buffer_updated = recorded_read  # type: ignore[method-assign]

    async def main() -> None:
        qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
        for name in (REQUESTS, REPLIES):
            qm.objects.define("QLOCAL", name, {"MAXDEPTH": 999_999_999})
        server = QueueManagerServer(qm, "127.0.0.1", 0)
        await server.start()
        ports.put(server.port)
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        out.put(chunks)
        await server.stop(quiesce=False)

    with asyncio.Runner(loop_factory=eventloop.loop_factory("auto")) as runner:
        runner.run(main())


def live(n: int, size: int) -> list[Chunk]:
    import ferrymq.client as fc

    ctx = mp.get_context("spawn")
    ports, stop, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    server = ctx.Process(target=record, args=(ports, stop, out))
    server.start()
    port = ports.get(timeout=60)
    responder = ctx.Process(target=respond, args=(port, n + WARMUP))
    body = os.urandom(size)
    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        requests, replies = qm.open(REQUESTS, async_put=True), qm.open(REPLIES)
        responder.start()
        for _ in range(n + WARMUP):
            r = requests.put(body, persistent=False, reply_to_q=REPLIES)
            replies.get(wait=30, correl_id=r.msg_id)
    responder.join()
    stop.set()
    chunks: list[Chunk] = out.get(timeout=60)
    server.join()
    return chunks


_ENTRY = struct.Struct(">II")  # connection number, chunk length


def save(path: Path, chunks: list[Chunk]) -> None:
    path.write_bytes(b"".join(_ENTRY.pack(n, len(data)) + data for n, data in chunks))


def load(path: Path) -> list[Chunk]:
    raw, chunks, at = path.read_bytes(), [], 0
    while at < len(raw):
        number, size = _ENTRY.unpack_from(raw, at)
        at += _ENTRY.size
        chunks.append((number, raw[at:at + size]))
        at += size
    return chunks


class CountingTransport:
    """What a handler needs of a transport; writes are counted and timed, not sent."""

    def __init__(self) -> None:
        self.written = 0
        self.last_write = 0.0

    def write(self, data: bytes) -> None:
        self.written += len(data)
        self.last_write = time.perf_counter()

    def writelines(self, parts: list[bytes]) -> None:
        self.write(b"".join(parts))

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 0) if name == "peername" else default

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class Cooler:
    """``--cold``: before each timed step, write one byte in every 64 of ``kib`` KiB, so that
    the step finds the processor's caches as a live process does after the other two ran
    in between (its code and objects evicted). Live, that is most of the difference
    between versions: a replay with warm caches hides it."""

    def __init__(self, kib: int) -> None:
        self._room = bytearray(kib * 1024)
        self._fill = b"x" * (len(self._room) // 64)

    def __call__(self) -> None:
        if self._room:
            self._room[::64] = self._fill


class CallCounter:
    """``--calls``: the Python calls from a chunk's arrival to the first write to another
    connection (the answer to its waiting get), and how many distinct functions they ran."""

    def __init__(self) -> None:
        self.codes: list[Any] = []
        self.upto = 0  # calls before the answer's write; 0 while none was seen
        self.own: CountingTransport | None = None
        self.hops: list[tuple[int, int]] = []

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and not self.upto:
            code = frame.f_code
            self.codes.append(code)
            if code is _WRITE_CODE and frame.f_locals.get("self") is not self.own:
                self.upto = len(self.codes)

    def step(self, own: CountingTransport, fn: Any, data: bytes) -> None:
        self.codes, self.upto, self.own = [], 0, own
        sys.setprofile(self)
        try:
            fn(data)
        finally:
            sys.setprofile(None)
        if self.upto:
            self.hops.append((self.upto, len(set(self.codes[:self.upto]))))


class OpcodeCounter(CallCounter):
    """``--opcodes``: the Python bytecode instructions run in each critical part (a trace
    hook with ``f_trace_opcodes``): what the interpreter executes before the answer is
    written, where ``--calls`` counts only the calls. Each part's count is kept as a call
    count is, with the distinct functions it ran."""

    def step(self, own: CountingTransport, fn: Any, data: bytes) -> None:
        self.codes, self.upto, self.own = [], 0, own
        ops = 0

        def trace(frame: Any, event: str, arg: Any) -> Any:
            nonlocal ops
            if self.upto:
                return None
            if event == "call":
                code = frame.f_code
                if code is _WRITE_CODE and frame.f_locals.get("self") is not self.own:
                    self.upto = ops
                    return None
                self.codes.append(code)
                frame.f_trace_opcodes = True
            elif event == "opcode":
                ops += 1
            return trace

        sys.settrace(trace)
        try:
            fn(data)
        finally:
            sys.settrace(None)
        if self.upto:
            self.hops.append((self.upto, len(set(self.codes))))


_WRITE_CODE = CountingTransport.write.__code__


async def replay(chunks: list[Chunk], trips: int, profile: cProfile.Profile | None,
                 cool: Cooler | None = None, counter: CallCounter | None = None) -> dict[str, float]:
    """Feed the recording to a fresh server; CPU per round trip of the last ``trips``
    (with ``cool``: the critical parts of the hops only, each after the caches were cooled;
    with ``counter``: the calls each critical part made, counted there)."""
    from ferrymq.engine.api import SystemClock
    from ferrymq.engine.qmgr import QueueManager
    from ferrymq.server import QueueManagerServer
    from ferrymq.server.handler import ClientHandler
    from ferrymq.store.memory import MemoryJournal

    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    for name in (REQUESTS, REPLIES):
        qm.objects.define("QLOCAL", name, {"MAXDEPTH": 999_999_999})
    server = QueueManagerServer(qm, "127.0.0.1", 0)
    await server.start(listen=False)
    # As live, the command server opens its queue before any client connects (it is called
    # soon after the start): object handles are numbered across the queue manager, and the
    # clients' frames name the ones the live run gave them.
    await asyncio.sleep(0)
    handlers: dict[int, ClientHandler] = {}
    transports: dict[int, CountingTransport] = {}
    for number, _ in chunks:
        if number not in handlers:
            handlers[number] = h = ClientHandler(server)
            transports[number] = t = CountingTransport()
            h.connection_made(t)  # type: ignore[arg-type]
    # The timed part: the chunks of the last ``trips`` round trips (two chunks each, one per side).
    start = len(chunks) - 2 * trips
    for number, data in chunks[:start]:
        handlers[number].data_received(data)
    hop: dict[int, list[float]] = {n: [] for n in handlers}
    if profile is not None:
        profile.enable()
    t0 = time.process_time()
    for number, data in chunks[start:]:
        if cool is not None:
            cool()
        others = [t for n, t in transports.items() if n != number]
        before = [t.last_write for t in others]
        t = time.perf_counter()
        if counter is not None:
            counter.step(transports[number], handlers[number].data_received, data)
            continue
        handlers[number].data_received(data)
        answered = [o.last_write for o, b in zip(others, before, strict=True) if o.last_write != b]
        if answered:
            hop[number].append(answered[0] - t)
    total = time.process_time() - t0
    if profile is not None:
        profile.disable()
    for h in handlers.values():
        h.connection_lost(None)
    await server.stop(quiesce=False)
    out = {"server CPU per round trip": total / trips} if cool is None else {}
    for number, values in hop.items():
        if len(values) > trips // 2:
            out[f"critical part of a hop, connection {number}"] = statistics.median(values)
    return out


def main() -> None:
    from ferrymq.server import eventloop

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=3000, help=f"round trips recorded (after {WARMUP})")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--replays", type=int, default=5)
    ap.add_argument("--profile", metavar="FILE", help="write a cProfile of one more replay to FILE")
    ap.add_argument("--cold", metavar="KIB", type=int, default=0,
                    help="write over KIB KiB of memory before each chunk (8192 evicts the caches here): the "
                         "critical parts then include the cache misses a live hop meets")
    ap.add_argument("--calls", action="store_true",
                    help="count the Python calls and distinct functions of each critical part (no times)")
    ap.add_argument("--opcodes", action="store_true",
                    help="count the Python bytecode instructions of each critical part (no times)")
    ap.add_argument("--recording", metavar="FILE", type=Path,
                    help="replay FILE if it exists (--n and --size then come from it), else record into it")
    a = ap.parse_args()
    if a.recording is not None and a.recording.exists():
        chunks = load(a.recording)
        a.n = len(chunks) // 2 - 5  # the handshake is a few chunks per connection
    else:
        chunks = live(a.n, a.size)
        if a.recording is not None:
            save(a.recording, chunks)
    # The handshake (connect, opens) and warm-up are replayed untimed; a round trip is one
    # chunk from each side, so only the recording's steady tail is timed.
    trips = a.n - 200
    runs: list[dict[str, float]] = []
    with asyncio.Runner(loop_factory=eventloop.loop_factory("auto")) as runner:
        if a.calls or a.opcodes:
            counter = OpcodeCounter() if a.opcodes else CallCounter()
            runner.run(replay(chunks, trips, None, counter=counter))
            print(f"{len(counter.hops)} critical parts of hops (median): "
                  f"{statistics.median(c for c, _ in counter.hops):.0f} Python {'opcodes' if a.opcodes else 'calls'}, "
                  f"{statistics.median(d for _, d in counter.hops):.0f} distinct functions")
            return
        for _ in range(a.replays):
            runs.append(runner.run(replay(chunks, trips, None, Cooler(a.cold) if a.cold else None)))
        if a.profile:
            prof = cProfile.Profile()
            runner.run(replay(chunks, trips, prof))
            prof.dump_stats(a.profile)
    print(f"{len(chunks)} chunks recorded; {trips} round trips timed per replay, {a.replays} replays (process CPU, median)")
    for name in runs[0]:
        values = [r[name] for r in runs if name in r]
        print(f"  {name:45s} {statistics.median(values) * 1e6:7.1f} µs  (min {min(values) * 1e6:.1f})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
