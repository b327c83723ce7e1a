"""The blocking client's own CPU per request/reply round trip, replayed without sockets.

    .venv/bin/python bench/client_trip_bench.py [--n 3000] [--size 1024] [--replays 7]
                                                [--recording FILE] [--profile PREFIX]

First a live request/reply run of the shape of ``ferrymq bench --scenario request-reply``
(a queue manager process, a responder process, this process as the requester, on
127.0.0.1) records, for each client, every chunk of bytes its receives returned and
everything it sent. Both clients make their MsgIds from a fixed salt and counter (the
Session's ``_salt`` and ``_msg_counter``), so that a replay asks for the same CorrelIds.
Then this process replays each side's recording into a real ``ferrymq.client.Client``
over a socket-like object (``recv`` hands out the recorded chunks, ``sendall`` collects):
the requester's ``put`` (asynchronous, ReplyToQ) and ``get`` (wait, by CorrelId), and the
responder's ``get`` (wait) and asynchronous ``put`` of the reply, exactly as the live run
called them. What the replayed client sends must equal what the live one sent, byte for
byte (checked after each replay): a faster client that changed the wire fails here.

What it prints: each side's process CPU per round trip over the recording's steady part
(median and minimum of the replays). No kernel, no scheduler, no server: a change to the
client's Python shows in one run with a few percent of noise. ``--recording FILE`` keeps
the recording (replayed from FILE when it exists, so versions compare on the same bytes);
``--profile PREFIX`` writes a cProfile of one more replay per side to PREFIX.<side>.prof.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import itertools
import multiprocessing as mp
import os
import socket
import statistics
import struct
import sys
import time
from pathlib import Path
from typing import Any

from request_reply_hops import REPLIES, REQUESTS, WARMUP

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
    """What the blocking client needs of a socket: receives hand out the recorded chunks."""

    family = socket.AF_UNIX  # no TCP options to set

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = iter(chunks)
        self.sent: list[bytes] = []

    def recv(self, size: int, flags: int = 0) -> bytes:
        return next(self._chunks, b"")

    def sendall(self, data: bytes) -> None:
        self.sent.append(data)

    def setblocking(self, flag: bool) -> None:
        pass

    def setsockopt(self, *args: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _fixed_ids(client: Any) -> None:
    client._s._salt = SALT
    client._s._msg_counter = itertools.count(1)


def serve(ports: Any, stop: Any) -> None:
    from ferrymq.engine.api import SystemClock
    from ferrymq.engine.qmgr import QueueManager
    from ferrymq.server import QueueManagerServer, eventloop
    from ferrymq.store.memory import MemoryJournal

    async def main() -> None:
        qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
        for name in (REQUESTS, REPLIES):
            qm.objects.define("QLOCAL", name, {"MAXDEPTH": 999_999_999})
        server = QueueManagerServer(qm, "127.0.0.1", 0)
        await server.start()
        ports.put(server.port)
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        await server.stop(quiesce=False)

    with asyncio.Runner(loop_factory=eventloop.loop_factory("auto")) as runner:
        runner.run(main())


def _respond(client: Any, count: int) -> None:
    requests, replies = client.open(REQUESTS), client.open(REPLIES, async_put=True)
    for _ in range(count):
        m = requests.get(wait=30)
        replies.put(m.data, correl_id=m.msg_id, persistent=False)
    client.stat()


def _request(client: Any, body: bytes, count: int) -> None:
    requests, replies = client.open(REQUESTS, async_put=True), client.open(REPLIES)
    for _ in range(count):
        r = requests.put(body, persistent=False, reply_to_q=REPLIES)
        replies.get(wait=30, correl_id=r.msg_id)


def _connect(port: int) -> tuple[Any, RecordingSocket]:
    from ferrymq.client import Client

    rec = RecordingSocket(socket.create_connection(("127.0.0.1", port)))
    client = Client(rec, qmgr="QM1")  # type: ignore[arg-type]
    _fixed_ids(client)
    return client, rec


def responder(port: int, count: int, out: Any) -> None:
    client, rec = _connect(port)
    with client:
        _respond(client, count)
    out.put((rec.chunks, rec.sent))


def live(n: int, size: int) -> dict[str, Any]:
    """Record both clients of one live run."""
    ctx = mp.get_context("spawn")
    ports, stop, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    server = ctx.Process(target=serve, args=(ports, stop))
    server.start()
    port = ports.get(timeout=60)
    total = n + WARMUP
    resp = ctx.Process(target=responder, args=(port, total, out))
    body = os.urandom(size)
    client, rec = _connect(port)
    resp.start()
    with client:
        _request(client, body, total)
    resp_chunks, resp_sent = out.get(timeout=60)
    resp.join()
    stop.set()
    server.join()
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


def replay(side: str, recording: dict[str, Any], profile: cProfile.Profile | None) -> float:
    """One replay of ``side``; its process CPU per timed round trip."""
    from ferrymq.client import Client

    chunks, sent = recording[side]
    sock = ReplaySocket(chunks)
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
    t0 = time.process_time()
    for _ in range(timed):
        trip()
    cpu = time.process_time() - t0
    if profile is not None:
        profile.disable()
    if side == "respond":
        client.stat()
    client.disconnect()
    if b"".join(sock.sent) != b"".join(sent):
        raise SystemExit(f"{side}: the replayed client sent other bytes than the live one")
    return cpu / timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=3000, help=f"round trips recorded (after {WARMUP})")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--replays", type=int, default=7)
    ap.add_argument("--recording", metavar="FILE", type=Path,
                    help="replay FILE if it exists (--n and --size then come from it), else record into it")
    ap.add_argument("--profile", metavar="PREFIX", help="write a cProfile of one more replay per side")
    a = ap.parse_args()
    if a.recording is not None and a.recording.exists():
        recording = load(a.recording)
    else:
        recording = live(a.n, a.size)
        if a.recording is not None:
            save(a.recording, recording)
    timed = recording["n"] - TIMED_FROM
    print(f"{timed} round trips of {len(recording['body'])} B timed per replay, {a.replays} replays "
          f"(process CPU per round trip)")
    for side in ("request", "respond"):
        runs = [replay(side, recording, None) for _ in range(a.replays)]
        print(f"  {side + 'er' if side == 'request' else 'responder':10s} median {statistics.median(runs) * 1e6:6.1f} µs"
              f"  min {min(runs) * 1e6:6.1f} µs")
        if a.profile:
            prof = cProfile.Profile()
            replay(side, recording, prof)
            prof.dump_stats(f"{a.profile}.{side}.prof")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
