"""The blocking client's own CPU per request/reply round trip, replayed without sockets.

    .venv/bin/python bench/client_trip_bench.py [--n 3000] [--size 1024] [--replays 7]
                                                [--recording FILE] [--profile PREFIX] [--kernel] [--cold KIB]
                                                [--side request|respond|both]

First a live request/reply run of the shape of ``ferrymq bench --scenario request-reply``
(a queue manager process, a responder process, this process as the requester, on
127.0.0.1) records, for each client, every chunk of bytes a receive returned and
everything it sent (and prints both clients' process CPU per round trip in that run). Both clients make their MsgIds from a fixed salt and counter (the
Session's ``_salt`` and ``_msg_counter``), so that a replay asks for the same CorrelIds.
Then this process replays each side's recording into a real ``ferrymq.client.Client``
over a socket-like object (``recv`` hands out the recorded chunks, ``sendall`` collects):
the requester's ``put`` (asynchronous, ReplyToQ) and ``get`` (wait, by CorrelId), and the
responder's ``get`` (wait) and asynchronous ``put`` of the reply, exactly as the live run
called them. What the replayed client sends must equal what the live one sent, byte for
byte (checked after each replay): a faster client that changed the wire fails here.

What it prints: each side's process CPU per round trip over the recording's steady part
(median and minimum of the replays). No kernel, no scheduler, no server: a change to the
client's Python shows in one run with a few percent of noise. ``--kernel`` receives each
chunk through a socketpair instead, so that what a receive costs below Python (the system
call, the allocation of its buffer) is counted too. ``--recording FILE`` keeps
the recording (replayed from FILE when it exists, so versions compare on the same bytes);
``--cold KIB`` writes over KIB KiB of memory before each trip
(see ``hop_replay_bench.Cooler``), so that a trip meets the cache misses a live one does.
``--profile PREFIX`` writes a cProfile of one more replay per side to PREFIX.<side>.prof.
"""

from __future__ import annotations

import argparse
import cProfile
import ctypes
import itertools
import multiprocessing as mp
import os
import socket
import statistics
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hop_replay_bench import Cooler
from request_reply_hops import REPLIES, REQUESTS, WARMUP, serve

SALT = 0x5A5A5A << 40  # the fixed MsgId salt of both recorded clients
TIMED_FROM = WARMUP  # trips before this one are replayed untimed


class RecordingSocket:
    """A connected socket that keeps what each receive returned and everything sent."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.family = sock.family
        self.chunks: list[bytes] = []
        self.sent: list[bytes] = []

    def recv(self, size: int, flags: int = 0) -> bytes:
        data = self._sock.recv(size, flags)
        self.chunks.append(data)
        return data

    def sendall(self, data: bytes) -> None:
        self.sent.append(bytes(data))
        self._sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class ReplaySocket:
    """What the blocking client needs of a socket: receives hand out the recorded chunks
    (through a socketpair when ``kernel``: each chunk is written to it, then received with
    the client's own size and flags)."""

    family = socket.AF_UNIX  # no TCP options to set

    def __init__(self, chunks: list[bytes], kernel: bool = False) -> None:
        self._chunks = iter(chunks)
        self.sent: list[bytes] = []
        self._pair = socket.socketpair() if kernel else None
        if kernel:
            _fresh_malloc()

    def recv(self, size: int, flags: int = 0) -> bytes:
        chunk = next(self._chunks, b"")
        if self._pair is None or not chunk:
            return chunk
        ours, theirs = self._pair
        theirs.sendall(chunk)
        return ours.recv(size, flags)

    def sendall(self, data: bytes) -> None:
        self.sent.append(data)

    def setblocking(self, flag: bool) -> None:
        pass

    def setsockopt(self, *args: Any) -> None:
        pass

    def close(self) -> None:
        if self._pair is not None:
            for sock in self._pair:
                sock.close()


def _fresh_malloc() -> None:
    """Give glibc's malloc back the mmap threshold of a fresh process (128 KiB): this
    process freed large blocks (the recording), which raises it, and a client's receive
    buffer would then come from the heap where a request/reply client's comes from mmap."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD (also stops its adjustment)
    except (OSError, AttributeError):
        pass


def _fixed_ids(client: Any) -> None:
    client._s._salt = SALT
    client._s._msg_counter = itertools.count(1)


def _respond(client: Any, count: int) -> float:
    """The responder's loop; its process CPU per round trip after the warm-up."""
    requests, replies = client.open(REQUESTS), client.open(REPLIES, async_put=True)
    t0 = 0.0
    for i in range(count):
        if i == WARMUP:
            t0 = time.process_time()
        m = requests.get(wait=30)
        replies.put(m.data, correl_id=m.msg_id, persistent=False)
    cpu = (time.process_time() - t0) / (count - WARMUP)
    client.stat()
    return cpu


def _request(client: Any, body: bytes, count: int) -> float:
    """The requester's loop; its process CPU per round trip after the warm-up."""
    requests, replies = client.open(REQUESTS, async_put=True), client.open(REPLIES)
    t0 = 0.0
    for i in range(count):
        if i == WARMUP:
            t0 = time.process_time()
        r = requests.put(body, persistent=False, reply_to_q=REPLIES)
        replies.get(wait=30, correl_id=r.msg_id)
    return (time.process_time() - t0) / (count - WARMUP)


def _connect(port: int) -> tuple[Any, RecordingSocket]:
    from ferrymq.client import Client

    rec = RecordingSocket(socket.create_connection(("127.0.0.1", port)))
    client = Client(rec, qmgr="QM1")  # type: ignore[arg-type]
    _fixed_ids(client)
    return client, rec


def responder(port: int, count: int, out: Any) -> None:
    client, rec = _connect(port)
    with client:
        cpu = _respond(client, count)
    out.put((rec.chunks, rec.sent, cpu))


def live(n: int, size: int) -> dict[str, Any]:
    """Record both clients of one live run."""
    ctx = mp.get_context("spawn")
    ports, stop, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    server = ctx.Process(target=serve, args=(ports, stop, "auto"))  # the hops bench's queue manager
    server.start()
    port = ports.get(timeout=60)
    ports.get(timeout=60)  # its CPU times at the start (not used here)
    total = n + WARMUP
    resp = ctx.Process(target=responder, args=(port, total, out))
    body = os.urandom(size)
    client, rec = _connect(port)
    resp.start()
    with client:
        cpu = _request(client, body, total)
    resp_chunks, resp_sent, resp_cpu = out.get(timeout=60)
    resp.join()
    stop.set()
    ports.get(timeout=60)  # its CPU times and step timings at the end
    ports.get(timeout=60)
    server.join()
    print(f"live run: process CPU per round trip (recording included): requester {cpu * 1e6:.1f} µs, "
          f"responder {resp_cpu * 1e6:.1f} µs")
    return {"n": total, "body": body, "request": (rec.chunks, rec.sent), "respond": (resp_chunks, resp_sent)}


_U32 = struct.Struct(">I")


def save(path: Path, recording: dict[str, Any]) -> None:
    """Round trips, body, then each side's received chunks and sent writes (u32 count, then
    u32 length + bytes each)."""
    lists = [*recording["request"], *recording["respond"]]
    out = [_U32.pack(recording["n"]), _U32.pack(len(recording["body"])), recording["body"]]
    for items in lists:
        out.append(_U32.pack(len(items)))
        for item in items:
            out += (_U32.pack(len(item)), item)
    path.write_bytes(b"".join(out))


def load(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    at = 0

    def take() -> bytes:
        nonlocal at
        (size,) = _U32.unpack_from(raw, at)
        at += 4 + size
        return raw[at - size : at]

    (n,) = _U32.unpack_from(raw, 0)
    at = 4
    body = take()
    lists: list[list[bytes]] = []
    for _ in range(4):
        (count,) = _U32.unpack_from(raw, at)
        at += 4
        lists.append([take() for _ in range(count)])
    return {"n": n, "body": body, "request": (lists[0], lists[1]), "respond": (lists[2], lists[3])}


def replay(side: str, recording: dict[str, Any], profile: cProfile.Profile | None, kernel: bool = False,
           cool: Cooler | None = None) -> float:
    """One replay of ``side``; its process CPU per timed round trip (with ``cool``: each trip
    timed alone, after the caches were cooled)."""
    from ferrymq.client import Client

    chunks, sent = recording[side]
    sock = ReplaySocket(chunks, kernel)
    client = Client(sock, qmgr="QM1")  # type: ignore[arg-type]
    _fixed_ids(client)
    total = recording["n"]
    if side == "request":
        body = recording["body"]
        requests, replies = client.open(REQUESTS, async_put=True), client.open(REPLIES)

        def trip() -> None:
            r = requests.put(body, persistent=False, reply_to_q=REPLIES)
            replies.get(wait=30, correl_id=r.msg_id)
    else:
        requests, replies = client.open(REQUESTS), client.open(REPLIES, async_put=True)

        def trip() -> None:
            m = requests.get(wait=30)
            replies.put(m.data, correl_id=m.msg_id, persistent=False)
    for _ in range(TIMED_FROM):
        trip()
    timed = total - TIMED_FROM
    if profile is not None:
        profile.enable()
    if cool is None:
        t0 = time.process_time()
        for _ in range(timed):
            trip()
        cpu = time.process_time() - t0
    else:
        cpu = 0.0
        for _ in range(timed):
            cool()
            t0 = time.process_time()
            trip()
            cpu += time.process_time() - t0
    if profile is not None:
        profile.disable()
    if side == "respond":
        client.stat()
    client.disconnect()
    same_bytes(side, sock, sent)
    return cpu / timed


def same_bytes(side: str, sock: ReplaySocket, sent: list[bytes]) -> None:
    """A replay must send what the live client sent, byte for byte, but for the process
    and thread ids its CONNECT names (a saved recording replays in another process, and a
    responder's recording always does)."""
    if comparable(sock.sent) != comparable(sent):
        raise SystemExit(f"{side}: the replayed client sent other bytes than the live one")


def comparable(writes: list[bytes]) -> tuple[object, bytes]:
    """A client's writes as what must be equal between two processes: its first packet,
    the CONNECT, decoded with its process and thread ids zeroed, then the rest's bytes."""
    from ferrymq.protocol import codec

    data = b"".join(writes)
    ptype = struct.unpack_from(">h", data, 2)[0] if len(data) >= 4 else None
    if ptype != codec.T_CONNECT:
        return None, data
    found = codec.CLIENT_PACKETS[codec.T_CONNECT](data, 0, len(data), len(data))
    if found is None:
        return None, data
    connect, end = found
    connect.pid = connect.tid = 0  # type: ignore[attr-defined]
    return connect, data[end:]


def recording_options(ap: argparse.ArgumentParser) -> None:
    """The options of a replay bench (this one, pymqi_trip_bench.py)."""
    ap.add_argument("--n", type=int, default=3000, help=f"round trips recorded (after {WARMUP})")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--replays", type=int, default=7)
    ap.add_argument("--recording", metavar="FILE", type=Path,
                    help="replay FILE if it exists (--n and --size then come from it), else record into it")
    ap.add_argument("--side", choices=("request", "respond", "both"), default="both", help="replay one side only")


def recorded(a: argparse.Namespace, live_run: Callable[[int, int], dict[str, Any]]) -> dict[str, Any]:
    """The recording ``--recording`` names, or a new live run's (kept there when named)."""
    if a.recording is not None and a.recording.exists():
        return load(a.recording)
    recording = live_run(a.n, a.size)
    if a.recording is not None:
        save(a.recording, recording)
    return recording


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    recording_options(ap)
    ap.add_argument("--profile", metavar="PREFIX", help="write a cProfile of one more replay per side")
    ap.add_argument("--kernel", action="store_true",
                    help="receive through a socketpair: counts the kernel's and the allocator's part of each "
                         "receive too (and the bench's write of the chunk, the same for every version)")
    ap.add_argument("--cold", metavar="KIB", type=int, default=0,
                    help="write over KIB KiB of memory before each trip (8192 evicts the caches here): the "
                         "trip's CPU then includes the cache misses a live client meets")
    a = ap.parse_args()
    cool = Cooler(a.cold) if a.cold else None
    recording = recorded(a, live)
    timed = recording["n"] - TIMED_FROM
    print(f"{timed} round trips of {len(recording['body'])} B timed per replay, {a.replays} replays "
          f"(process CPU per round trip{', receives through a socketpair' if a.kernel else ''})")
    for side in ("request", "respond") if a.side == "both" else (a.side,):
        runs = [replay(side, recording, None, a.kernel, cool) for _ in range(a.replays)]
        print(f"  {side + 'er' if side == 'request' else 'responder':10s} median {statistics.median(runs) * 1e6:6.1f} µs"
              f"  min {min(runs) * 1e6:6.1f} µs")
        if a.profile:
            prof = cProfile.Profile()
            replay(side, recording, prof, a.kernel)
            prof.dump_stats(f"{a.profile}.{side}.prof")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
