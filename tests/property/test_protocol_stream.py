"""Any chunking of a stream gives the same events; any damage ends it with a protocol error."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.properties.model import PropertySet
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import CLOSED, NEED_DATA, ClientConnection, ServerConnection
from ferrymq.protocol.errors import RemoteProtocolError
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.wire.mqmd import MQMD

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
small = st.integers(-(2**31), 2**31 - 1)
u32 = st.integers(1, 2**32 - 1)
# Through a dict: builds() on a NamedTuple would also invent values for the defaulted fields.
mds = st.fixed_dictionaries({
    "version": st.sampled_from([1, 2]), "priority": st.integers(-1, 9), "msg_id": st.binary(min_size=24, max_size=24),
    "format": st.text(st.characters(min_codepoint=65, max_codepoint=90), max_size=8),
}).map(lambda kw: MQMD(**kw))
props = st.none() | st.dictionaries(st.text(min_size=1, max_size=8), st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=10), max_size=3)


@st.composite
def requests(draw: st.DrawFn) -> list[E.ClientEvent]:
    kinds = [
        st.builds(E.Open, st.just(0), names, small, small, names, names, names, names),
        st.builds(E.Close, st.just(0), u32, small),
        st.builds(E.Put, st.just(0), u32, mds, st.binary(max_size=300), small, u32, props, st.booleans()),
        st.builds(E.Put1, st.just(0), names, mds, st.binary(max_size=50), small, small, names, names, u32, props),
        st.builds(E.Get, st.just(0), u32, mds, small, small, small, u32, st.binary(min_size=16, max_size=16)),
        st.builds(E.Commit, st.just(0)),
        st.builds(E.Inquire, st.just(0), u32, st.lists(small, max_size=5).map(tuple), st.lists(small, max_size=5).map(tuple)),
        st.builds(E.Set, st.just(0), u32, st.dictionaries(small, small, max_size=3), st.dictionaries(small, names, max_size=3)),
        st.builds(E.Heartbeat, st.just(0), st.booleans()),
        st.builds(E.Stat, st.just(0), small),
        st.builds(E.PutBatch, u32, mds, st.lists(st.tuples(st.binary(min_size=24, max_size=24), st.binary(max_size=80)),
                                                 min_size=1, max_size=5), small, u32),
    ]
    evs = draw(st.lists(st.one_of(kinds), max_size=12))
    out: list[E.ClientEvent] = [E.Connect(1, draw(names), draw(names), draw(names))]
    for i, ev in enumerate(evs, start=2):
        if isinstance(ev, E.PutBatch):  # no correlation id: nothing answers it
            out.append(ev)
            continue
        out.append(type(ev)(i, *[getattr(ev, f) for f in ev.__dataclass_fields__ if f != "corr"]))  # type: ignore[arg-type]
    return out


def encode_stream(evs: list[E.ClientEvent]) -> bytes:
    c = ClientConnection()
    data = c.send(evs[0])
    c._negotiated(1 << 20, E.PROTOCOL_VERSION)
    c.state = c.state.CONNECTED
    return data + b"".join(c.send(ev) for ev in evs[1:])


def drain(s: ServerConnection) -> list[object]:
    """The events; and ``drained`` says when the next call would return NEED_DATA."""
    out: list[object] = []
    while True:
        drained = s.drained
        ev = s.next_event()
        if drained:
            assert ev is NEED_DATA
        if ev is NEED_DATA or ev is CLOSED:
            return out
        out.append(ev)
        if isinstance(ev, E.Connect):  # answer so that the limit becomes the negotiated one
            s.send(E.ConnectReply(ev.corr, max_msg_length=1 << 20))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(requests(), st.data())
def test_any_chunking_gives_the_same_events(evs: list[E.ClientEvent], data: st.DataObject) -> None:
    stream = encode_stream(evs)
    whole = ServerConnection()
    whole.receive_data(stream)
    expected = drain(whole)
    assert len(expected) == len(evs)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    chunked = ServerConnection()
    got: list[object] = []
    prev = 0
    for cut in [*cuts, len(stream)]:
        if cut > prev:
            chunked.receive_data(stream[prev:cut])
        prev = max(prev, cut)
        got += drain(chunked)
    assert got == expected
    # The same pieces read into the machine's own buffer, as the server's transport does.
    buffered = ServerConnection()
    got, prev = [], 0
    for cut in [*cuts, len(stream)]:
        piece = stream[prev:cut]
        while piece:
            with buffered.get_buffer() as room:
                n = min(len(room), len(piece))
                room[:n] = piece[:n]
            buffered.buffer_updated(n)
            piece = piece[n:]
        prev = max(prev, cut)
        got += drain(buffered)
    assert got == expected


def test_byte_at_a_time() -> None:
    evs: list[E.ClientEvent] = [E.Connect(1, "QM1"), E.Put(2, 1, MQMD(), b"abc"), E.Commit(3)]
    stream = encode_stream(evs)
    s = ServerConnection()
    got: list[object] = []
    for i in range(len(stream)):
        s.receive_data(stream[i : i + 1])
        got += drain(s)
    assert [type(e) for e in got] == [E.Connect, E.Put, E.Commit]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(requests(), st.data())
def test_mutated_streams_end_in_protocol_error_or_valid_events(evs: list[E.ClientEvent], data: st.DataObject) -> None:
    stream = damaged(evs, data, 1, 4)
    s = ServerConnection()
    s.receive_data(stream)
    s.receive_data(b"")
    try:
        while s.next_event() not in (NEED_DATA, CLOSED):
            pass
    except RemoteProtocolError:
        pass  # the only exception a damaged stream may raise


@settings(max_examples=200)
@given(st.binary(max_size=500))
def test_random_bytes_never_raise_anything_else(raw: bytes) -> None:
    for machine in (ServerConnection(), ClientConnection()):
        machine.receive_data(raw)
        machine.receive_data(b"")
        try:
            while machine.next_event() not in (NEED_DATA, CLOSED):
                pass
        except RemoteProtocolError:
            pass


def damaged(evs: list[E.ClientEvent], data: st.DataObject, fewest: int, most: int) -> bytes:
    """The frames of ``evs`` with between ``fewest`` and ``most`` bytes overwritten at random."""
    stream = bytearray(encode_stream(evs))
    for _ in range(data.draw(st.integers(fewest, most))):
        pos = data.draw(st.integers(0, len(stream) - 1))
        stream[pos] = data.draw(st.integers(0, 255))
    return stream


def outcome(s: ServerConnection, stream: bytes) -> tuple[list[object], str]:
    """The events a stream gives, and the protocol error that ended it ("" if none)."""
    s.receive_data(stream)
    s.receive_data(b"")
    got: list[object] = []
    try:
        while (ev := s.next_event()) not in (NEED_DATA, CLOSED):
            got.append(ev)
            if isinstance(ev, E.Connect):  # a damaged Connect may propose less: never answer more
                s.send(E.ConnectReply(ev.corr, max_msg_length=min(ev.max_msg_length, 1 << 20)))
    except RemoteProtocolError as exc:
        return got, str(exc)
    return got, ""


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(requests(), st.data())
def test_puts_with_their_descriptors_in_bytes_are_the_frames_the_decoders_give(evs: list[E.ClientEvent],
                                                                              data: st.DataObject) -> None:
    """A server machine made with ``raw_put_md`` leaves a Put's MQMD in its bytes: on any
    stream, intact or damaged, those bytes decode to the ordinary decoder's MQMD, and the rest
    of the events and the error that ends the stream are its."""
    stream = damaged(evs, data, 0, 3)
    ordinary = ServerConnection()
    got, error = outcome(ServerConnection(raw_put_md=True), stream)
    raw = [ev for ev in got if isinstance(ev, E.Put) and isinstance(ev.md, bytes)]
    for ev in raw:
        ev.md = MQMD.unpack_from(ev.md)  # type: ignore[arg-type]
    assert (got, error) == outcome(ordinary, stream)


@st.composite
def batch_replies(draw: st.DrawFn) -> tuple[int, bytes]:
    """How many GetBatch requests a client sent (correlation ids 2, 3, ...), and the server's
    frames answering them: GetBatchReplies of any items (bodies up to a few KiB, a descriptor
    of either version, properties or none), Replies, GetReplies."""
    n = draw(st.integers(1, 5))
    c, s = ClientConnection(), ServerConnection(max_msg_length=1 << 20)
    s.receive_data(c.send(E.Connect(1, max_msg_length=1 << 20)))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, max_msg_length=1 << 20)))
    c.next_event()
    for corr in range(2, n + 2):
        s.receive_data(c.send(E.GetBatch(corr, 1)))
        s.next_event()
    item_props = props.map(lambda d: PropertySet(d) if d else None)
    items = st.lists(st.tuples(mds.map(pack_md), st.binary(max_size=300) | st.binary(min_size=3000, max_size=5000),
                               st.integers(0, 2**31 - 1), st.binary(min_size=16, max_size=16), item_props),
                     min_size=1, max_size=4)
    frames = []
    for corr in draw(st.permutations(range(2, n + 2))):
        kind = draw(st.sampled_from(["batch", "batch", "reply", "get"]))
        if kind == "batch":
            frames.append(s.send(E.GetBatchReply(corr, draw(items))))
        elif kind == "reply":
            frames.append(s.send(E.Reply(corr, 2, 2033, "")))
        else:
            frames.append(s.send(E.GetReply(corr, pack_md(MQMD()), b"x", 1, bytes(16), "Q")))
    return n, b"".join(frames)


def client_outcome(requests: int, stream: bytes, cuts: list[int]) -> tuple[list[object], str]:
    c, s = ClientConnection(), ServerConnection(max_msg_length=1 << 20)
    s.receive_data(c.send(E.Connect(1, max_msg_length=1 << 20)))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, max_msg_length=1 << 20)))
    c.next_event()
    for corr in range(2, requests + 2):
        c.send(E.GetBatch(corr, 1))
    got: list[object] = []
    prev = 0
    try:
        for cut in [*sorted(cuts), len(stream), -1]:
            if cut < 0:
                c.receive_data(b"")
            elif cut > prev:
                c.receive_data(stream[prev:cut])
                prev = cut
            while (ev := c.next_event()) not in (NEED_DATA, CLOSED):
                got.append(ev)
    except RemoteProtocolError as exc:
        return got, str(exc)
    return got, ""


def test_a_batch_reply_with_bytes_after_its_body_ends_the_stream_as_the_decoder_says() -> None:
    """A GetBatchReply whose packet runs on past its last item is refused, not delivered
    with its tail ignored."""
    c, s = ClientConnection(), ServerConnection(max_msg_length=1 << 20)
    s.receive_data(c.send(E.Connect(1, max_msg_length=1 << 20)))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, max_msg_length=1 << 20)))
    c.next_event()
    s.receive_data(c.send(E.GetBatch(2, 1)))
    s.next_event()
    frame = bytearray(s.send(E.GetBatchReply(2, [(pack_md(MQMD()), b"body", 4, bytes(16), None)])))
    size = int.from_bytes(frame[4:8], "big")
    assert size == len(frame)
    frame[4:8] = (size + 25).to_bytes(4, "big")
    frame += bytes(25)
    got = client_outcome(1, bytes(frame), [])
    assert got[0] == [] and "25 bytes after the end of the body" in got[1]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(batch_replies(), st.data())
def test_batch_replies_in_any_pieces_are_the_replies_whole(replies: tuple[int, bytes], data: st.DataObject) -> None:
    """A client decodes a GetBatchReply where it lies in its receive buffer; on any stream of
    replies, in any pieces, intact or damaged, the events (every body as bytes) and the error
    that ends it are those of the stream in one piece."""
    requests, stream = replies
    damaged_stream = bytearray(stream)
    for _ in range(data.draw(st.integers(0, 3))):
        damaged_stream[data.draw(st.integers(0, len(stream) - 1))] = data.draw(st.integers(0, 255))
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=6))
    got = client_outcome(requests, bytes(damaged_stream), cuts)
    whole = client_outcome(requests, bytes(damaged_stream), [])

    def where_in_the_stream(outcome: tuple[list[object], str]) -> tuple[list[object], str]:
        # An error may name an offset in the read that held the frame too: cut away (the
        # offset in the stream stays).
        return outcome[0], re.sub(r"(?<!stream )offset \d+", "offset", outcome[1])

    assert where_in_the_stream(got) == where_in_the_stream(whole)
    for ev in got[0]:
        if isinstance(ev, E.GetBatchReply):
            assert all(type(md) is bytes and type(body) is bytes for md, body, *_ in ev.items)
