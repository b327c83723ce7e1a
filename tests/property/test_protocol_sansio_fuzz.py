"""The sans-IO machines fed mutated conversations: only RemoteProtocolError, only known events.

Conversations are drawn as in test_protocol_stream, encoded, split into frames and damaged
by the protocol fuzzer's mutations (tests/fuzz/protofuzz_mutate.py: bit flips, edge values
in length and count fields, header edits, truncation, splices, duplicated, reordered and
dropped frames, properties sections, random frames), then fed to a ServerConnection in
random chunks, with the replies a server would send. Whatever the damage, ``next_event``
returns events of the types the codec decodes for that direction, or raises
RemoteProtocolError and keeps raising it; nothing else.
"""

from __future__ import annotations

import contextlib
import random
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_protocol_stream import encode_stream, requests

from ferrymq.protocol import codec
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import CLOSED, NEED_DATA, ClientConnection, ServerConnection
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError

sys.path.insert(0, str(Path(__file__).parent.parent / "fuzz"))
from protofuzz_capture import split_frames
from protofuzz_mutate import mutate

# The event types each direction's decoders make (a decoder's result is the only way in).
_KNOWN_CLIENT = (E.Connect, E.Disconnect, E.Open, E.Close, E.Put, E.Put1, E.Get, E.Commit, E.Backout, E.Inquire,
                 E.Set, E.Heartbeat, E.HeartbeatReply, E.Stat, E.Consume, E.Credit, E.PutBatch, E.GetBatch)


# The server's frames by name (REPLY, OPEN_REPLY, ...) as the events' class names (Reply, OpenReply, ...).
SERVER_EVENTS = {"".join(w.capitalize() for w in codec.NAMES[t].split("_")) for t in codec.SERVER_FRAMES}


def known_client_event(ev: object) -> bool:
    if isinstance(ev, _KNOWN_CLIENT):
        return True
    return type(ev).__module__ in ("ferrymq.protocol.seqframes", "ferrymq.protocol.columnframes")


def answer(s: ServerConnection, ev: object) -> None:
    """What a server would send at once: the ConnectReply that sets the limits, a Reply to
    each request that expects one (freeing its correlation id)."""
    if isinstance(ev, E.Connect):
        # Never above what the client proposed (a mutated Connect may propose less): the
        # rules refuse a ConnectReply that raises it, on the sending side too.
        s.send(E.ConnectReply(ev.corr, max_msg_length=min(ev.max_msg_length, 1 << 20)))
        return
    corr = getattr(ev, "corr", 0)
    if getattr(ev, "reply", True) and corr > 0 and not isinstance(ev, E.Consume):
        with contextlib.suppress(LocalProtocolError):  # not outstanding (after a Disconnect's reply, say)
            s.send(E.Reply(corr, 2, 2033))


def feed(machine: ServerConnection | ClientConnection, stream: bytes, rng: random.Random) -> list[object]:
    """``stream`` in random chunks, then its end; the events (the machine's checks apply)."""
    got: list[object] = []
    pos = 0
    while True:
        if pos < len(stream):
            step = rng.choice((1, 7, 36, 100, 4096, len(stream)))
            machine.receive_data(stream[pos : pos + step])
            pos += step
        else:
            machine.receive_data(b"")
        while True:
            ev = machine.next_event()
            if ev is NEED_DATA:
                break
            if ev is CLOSED:
                return got
            got.append(ev)
            if isinstance(machine, ServerConnection):
                answer(machine, ev)
        if pos >= len(stream) and ev is NEED_DATA:
            return got


@settings(max_examples=250, suppress_health_check=[HealthCheck.too_slow])
@given(requests(), st.integers(0, 2**32 - 1))
def test_a_server_machine_fed_mutated_frames_raises_only_remote_protocol_errors(evs: list[E.ClientEvent],
                                                                              seed: int) -> None:
    rng = random.Random(seed)
    frames = split_frames(encode_stream(evs))
    damaged, _ = mutate(frames, rng, frames)
    s = ServerConnection()
    try:
        got = feed(s, b"".join(damaged), rng)
    except RemoteProtocolError as exc:
        try:
            s.next_event()
        except RemoteProtocolError as again:
            assert again is exc  # the machine stays in ERROR, with the same error
        else:
            raise AssertionError("a machine in ERROR gave an event") from None
        return
    assert all(known_client_event(ev) for ev in got), [type(ev) for ev in got]


@settings(max_examples=100)
@given(st.binary(max_size=600), st.integers(0, 2**32 - 1))
def test_random_bytes_after_a_connect_raise_only_remote_protocol_errors(raw: bytes, seed: int) -> None:
    connect = encode_stream([E.Connect(1, "QM1")])
    s = ServerConnection()
    try:
        got = feed(s, connect + raw, random.Random(seed))
    except RemoteProtocolError:
        return
    assert all(known_client_event(ev) for ev in got)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([E.Reply(2, 2, 2033), E.OpenReply(2, 7, "Q1", "Q1", "QM1"),
                                 E.Ending(2009, "x"), E.Heartbeat(), E.StatReply(2, 1, 0, 0, 0, 0, "")]),
                min_size=1, max_size=6),
       st.integers(0, 2**32 - 1))
def test_a_client_machine_fed_mutated_server_frames_raises_only_remote_protocol_errors(
        replies: list[E.ServerEvent], seed: int) -> None:
    rng = random.Random(seed)
    server = ServerConnection()
    server.receive_data(ClientConnection().send(E.Connect(1, "QM1")))
    server.next_event()
    frames = [server.send(E.ConnectReply(1, max_msg_length=1 << 20))]
    for ev in replies:
        server._outstanding[getattr(ev, "corr", 0) or 2] = E.Open  # any request they answer
        frames.append(server._pack(ev))
    damaged, _ = mutate(frames, rng, frames)
    c = ClientConnection()
    c.send(E.Connect(1, "QM1"))
    for corr in range(2, 10):
        c._outstanding[corr] = E.Open
    try:
        got = feed(c, b"".join(damaged), rng)
    except RemoteProtocolError:
        return
    assert all(type(ev).__name__ in SERVER_EVENTS for ev in got), [type(ev) for ev in got]
