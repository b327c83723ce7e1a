"""The client protocol fuzzed at a real server: captured conversations, mutated, replayed.

Frames are captured from the real clients (``protofuzz_capture``), mutated
(``protofuzz_mutate``) and sent to a queue manager listening on 127.0.0.1 port 0, one
conversation at a time; each ends with the client closing its side. The only outcomes
allowed: replies, an ENDING frame with a reason, or a closed connection. Every frame the
server sends must be a well-formed server frame; an ENDING comes last, with a reason that
is not MQRC_UNEXPECTED_ERROR (2195, our own bug) and a detail; the server closes within a
few seconds; nothing is logged at ERROR (an exception in a handler, a failed callback,
``event=internal_error``). A client connected through the whole campaign keeps its
connection and its message; after the campaign no connection or handle is left behind, a
fresh client puts and gets, and the process's resident memory grew by a bounded amount.

A CI run sends ``FERRYMQ_FUZZ_FRAMES`` frames (default 20000, some seconds); the
long run is, for instance::

    FERRYMQ_FUZZ_FRAMES=200000 pytest -q tests/fuzz/test_protocol_fuzz.py

``FERRYMQ_FUZZ_SEED`` replays a campaign; a failure reports its seed, the conversation's
number and the mutations that made it.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import random
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest
from protofuzz_capture import Conversation, capture, rebase
from protofuzz_mutate import HEADER, mutate

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.protocol import codec
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import CLOSED, NEED_DATA, ClientConnection
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire import gpacket

FRAMES = int(os.environ.get("FERRYMQ_FUZZ_FRAMES", "20000"))
SEED = int(os.environ.get("FERRYMQ_FUZZ_SEED", str(random.randrange(1 << 32))))
QUEUES = ("Q1", "Q2", "Q3", "REPLY")
END_WITHIN = 10.0  # seconds for the server to answer and close once the client closed its side
RSS_GROWTH_LIMIT = 96 << 20


class ErrorLog(logging.Handler):
    """Records at ERROR (or ``level``) and above from any logger (asyncio's failed callbacks included)."""

    def __init__(self, level: int = logging.ERROR) -> None:
        super().__init__(level)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def qm() -> Iterator[EmbeddedQueueManager]:
    emb = EmbeddedQueueManager("QM1", MemoryJournal(), listen=True, port=0, heartbeat=30.0)
    emb.start()

    def define() -> None:
        for name in QUEUES:
            emb.qmgr.objects.define("QLOCAL", name)

    emb.run(define)
    yield emb
    emb.stop()


@pytest.fixture(scope="module")
def conversations(qm: EmbeddedQueueManager) -> list[Conversation]:
    convs = capture(qm.port, lambda: qm.run(lambda: qm.qmgr.opener.next_hobj))
    kinds = {struct.unpack_from(">h", f, 2)[0] for c in convs for f in c.sent}
    # The capture covers every request the clients make (a client change that drops one shows here).
    wanted = {codec.T_CONNECT, codec.T_OPEN, codec.T_PUT, codec.T_PUT1, codec.T_GET, codec.T_GET_BATCH,
              codec.T_PUT_BATCH, codec.T_CONSUME, codec.T_CREDIT, codec.T_COMMIT, codec.T_BACKOUT, codec.T_INQUIRE,
              codec.T_SET, codec.T_STAT, codec.T_HEARTBEAT, codec.T_CLOSE, codec.T_DISCONNECT, 1180, 1150, 1152,
              1154, 1156, 1158, 1160, 1162, 1164}
    assert wanted <= kinds, sorted(wanted - kinds)
    return convs


def exchange(port: int, stream: bytes) -> tuple[bytes, bool]:
    """Send ``stream``, close our side, and read what the server sends until it closes
    (True) or ``END_WITHIN`` passes (False). A reader thread keeps taking the server's
    frames while we send, so that neither side waits on the other's full buffer."""
    sock = socket.create_connection(("127.0.0.1", port))
    got = bytearray()
    ended = threading.Event()

    def read() -> None:
        try:
            while data := sock.recv(1 << 16):
                got.extend(data)
        except OSError:
            pass
        ended.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        sock.sendall(stream)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the server ended the conversation while we were still sending: allowed
    closed = ended.wait(END_WITHIN)
    sock.close()
    reader.join(1)
    return bytes(got), closed


def problems(data: bytes) -> list[str]:
    """What is wrong with what the server sent (nothing, for an allowed outcome)."""
    out: list[str] = []
    pos = 0
    ending: E.Ending | None = None
    while pos < len(data):
        if ending is not None:
            out.append(f"a frame after ENDING at {pos}")
            break
        if len(data) - pos < HEADER:
            out.append(f"{len(data) - pos} bytes of a torn header at {pos}")
            break
        version, ptype, size, magic, props, _ts, corr, flags = struct.unpack_from(">hhiiiqqI", data, pos)
        if version != gpacket.VERSION or magic != gpacket.MAGIC or props or size < HEADER or pos + size > len(data):
            out.append(f"a malformed header at {pos}: {data[pos:pos + HEADER].hex()}")
            break
        if ptype not in codec.SERVER_FRAMES:
            out.append(f"unknown server frame type {ptype} at {pos}")
            break
        try:
            ev = codec.decode(codec.SERVER_FRAMES, ptype, flags, corr, data[pos + HEADER : pos + size], None)
        except DecodeError as exc:
            out.append(f"a {codec.NAMES.get(ptype)} frame that does not decode: {exc}")
            break
        if isinstance(ev, E.Ending):
            ending = ev
            if ev.reason == C.MQRC_UNEXPECTED_ERROR or not ev.reason or not ev.detail:
                out.append(f"ENDING {ev.reason}: {ev.detail!r}")
        pos += size
    return out


def first_malformed(stream: bytes) -> str:
    """The first frame of ``stream`` that is malformed on its own (framing, an unknown type,
    a body that does not decode), or "" when every frame is well-formed. Such a frame must
    end the conversation with an ENDING: whatever the conversation's state, it is never a
    request to answer."""
    pos = 0
    while pos < len(stream):
        if len(stream) - pos < HEADER:
            return f"a torn header at {pos}"
        version, ptype, size, magic, props, _ts, corr, flags = struct.unpack_from(">hhiiiqqI", stream, pos)
        if version != gpacket.VERSION or magic != gpacket.MAGIC or size < HEADER or pos + size > len(stream):
            return f"a malformed or torn frame at {pos}"
        if props or ptype not in codec.CLIENT_FRAMES:
            return f"a frame of type {ptype} (properties {props}) at {pos}"
        try:
            codec.decode(codec.CLIENT_FRAMES, ptype, flags, corr, stream[pos + HEADER : pos + size], None)
        except DecodeError as exc:
            return f"a {codec.NAMES.get(ptype)} that does not decode at {pos}: {exc}"
        pos += size
    return ""


def ending_of(data: bytes) -> bool:
    """Whether what the server sent ends with an ENDING frame."""
    pos, last = 0, 0
    while len(data) - pos >= HEADER:
        last = struct.unpack_from(">h", data, pos + 2)[0]
        pos += max(HEADER, struct.unpack_from(">i", data, pos + 4)[0])
    return last == codec.T_ENDING


def server_state(qm: EmbeddedQueueManager) -> tuple[int, int, int]:
    """Connections the server holds, engine connections, open handles."""
    srv = qm.server
    return qm.run(lambda: (len(srv.handlers), len(qm.qmgr.connections), len(qm.qmgr.handles)))


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def clear_queues(qm: EmbeddedQueueManager) -> None:
    """Empty what the campaign put (its messages are not a leak; the check is for the rest)."""
    full = qm.run(lambda: [q.name for q in qm.qmgr.objects.queues.values()
                           if q.is_local and q.messages.depth and q.name != "FUZZ.BYSTANDER"])
    if full:
        qm.mqsc(*(f"CLEAR QLOCAL('{name}')" for name in full))  # a queue in use stays as it is


def test_mutated_conversations_end_in_replies_an_ending_or_a_close(qm: EmbeddedQueueManager,
                                                                   conversations: list[Conversation]) -> None:
    rng = random.Random(SEED)
    pool = [f for c in conversations for f in c.sent]
    errors = ErrorLog()
    logging.getLogger().addHandler(errors)
    # A well-behaved application connected through the whole campaign: others' broken
    # conversations must not end or disturb its own.
    # No heartbeat: a synchronous client idle through a long campaign would otherwise meet
    # the server's idle deadline (docs/limits.md), which is not what this checks.
    bystander = fc.connect("QM1", f"127.0.0.1({qm.port})", appl_name="fuzz-bystander", heartbeat=0)
    qm.run(lambda: qm.qmgr.objects.define("QLOCAL", "FUZZ.BYSTANDER"))
    mine = bystander.open("FUZZ.BYSTANDER")
    mine.put(b"before the campaign", persistent=True)
    baseline = server_state(qm)
    sent = n = ended = 0
    rss_from = 0
    failures: list[str] = []
    started = time.monotonic()
    try:
        while sent < FRAMES and len(failures) < 5:
            n += 1
            conv = rng.choice(conversations)
            first = qm.run(lambda: qm.qmgr.opener.next_hobj)
            frames = rebase(conv.sent[: rng.randint(2, len(conv.sent))], conv.first_hobj, first)
            frames, done = mutate(frames, rng, pool)
            sent += len(frames)
            before = len(errors.records)
            stream = b"".join(frames)
            data, closed = exchange(qm.port, stream)
            found = problems(data)
            bad = first_malformed(stream)
            ended += ending_of(data)
            if bad and not ending_of(data):
                found.append(f"{bad}, and the server closed without an ENDING")
            if not closed:
                found.append(f"the server did not close within {END_WITHIN} s of the client's end")
            found += [f"logged: {r.getMessage()[:300]}" for r in errors.records[before:]]
            if found:
                failures.append(f"seed {SEED}, conversation {n} ({'; '.join(done)}): {' | '.join(found)}")
            if n % 100 == 0:
                clear_queues(qm)
                if not rss_from and sent >= FRAMES // 5:  # after warm-up: allocator pools, caches, journals
                    gc.collect()
                    rss_from = rss()
    finally:
        logging.getLogger().removeHandler(errors)
    elapsed = time.monotonic() - started
    assert not failures, "\n".join(failures)
    print(f"fuzz: seed {SEED}, {n} conversations ({ended} ended by the server), {sent} frames in {elapsed:.1f} s")
    # Nothing left behind: every fuzzed connection ended, with its handles.
    deadline = time.monotonic() + 5
    while server_state(qm) != baseline and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server_state(qm) == baseline
    clear_queues(qm)
    gc.collect()
    if rss_from:
        assert rss() - rss_from < RSS_GROWTH_LIMIT, f"resident memory grew by {(rss() - rss_from) >> 20} MiB"
    assert mine.get().data == b"before the campaign"  # the bystander's connection is intact
    mine.put(b"after the campaign")
    assert mine.get().data == b"after the campaign"
    bystander.disconnect()
    # The server serves a new conversation afterwards.
    qm.run(lambda: qm.qmgr.objects.define("QLOCAL", "FUZZ.AFTER"))
    with fc.connect("QM1", f"127.0.0.1({qm.port})") as c:
        q = c.open("FUZZ.AFTER")
        q.put(b"after the campaign", persistent=True)
        assert q.get().data == b"after the campaign"


def primed_client(conv: Conversation) -> tuple[ClientConnection, list[bytes]] | None:
    """A client machine that has sent ``conv``'s requests (after its ConnectReply), and the
    server frames that answer them; None when the conversation has no ConnectReply."""
    c = ClientConnection()
    requests = [codec.decode(codec.CLIENT_FRAMES, struct.unpack_from(">h", f, 2)[0],
                             struct.unpack_from(">I", f, 32)[0], struct.unpack_from(">q", f, 24)[0], f[HEADER:], None)
                for f in conv.sent]
    if not conv.received or not isinstance(requests[0], E.Connect):
        return None
    c.send(requests[0])  # type: ignore[arg-type]
    c.receive_data(conv.received[0])
    if not isinstance(c.next_event(), E.ConnectReply):
        return None
    for ev in requests[1:]:
        with contextlib.suppress(LocalProtocolError):  # a correlation id in use again: the reply came between
            c.send(ev)  # type: ignore[arg-type]
    return c, conv.received[1:]


def test_a_client_machine_fed_mutated_server_frames_raises_only_remote_protocol_errors(
        conversations: list[Conversation]) -> None:
    """The server's captured frames (replies, GetReplies, batches, pushed read-ahead, column
    pages), mutated, fed to a client machine that sent the requests they answer, frame
    by frame: only events or RemoteProtocolError, whatever the damage."""
    rng = random.Random(SEED)
    pool = [f for c in conversations for f in c.received]
    cases = max(200, FRAMES // 20)
    for n in range(cases):
        primed = primed_client(rng.choice(conversations))
        assert primed is not None
        c, frames = primed
        damaged, done = mutate(frames, rng, pool) if frames else ([], [])
        try:
            for f in damaged:
                if f:  # (b"" would say the server closed)
                    c.receive_data(f)
                    while c.next_event() not in (NEED_DATA, CLOSED):
                        pass
            c.receive_data(b"")
            while c.next_event() not in (NEED_DATA, CLOSED):
                pass
        except RemoteProtocolError:
            continue
        except Exception as exc:
            raise AssertionError(f"seed {SEED}, case {n} ({'; '.join(done)}): {exc!r}") from exc
