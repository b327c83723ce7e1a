"""The client's fast paths against the general ones: the same events, the same bytes, the
same state afterwards, for any frame (also damaged ones, which the fast paths must leave
to the general path and its errors)."""

from __future__ import annotations

import copy
import copyreg
import struct
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.client import session as S
from ferrymq.client.session import Session
from ferrymq.mq import constants as C
from ferrymq.protocol import codec
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import CLOSED, NEED_DATA, ClientConnection, ServerConnection
from ferrymq.protocol.errors import RemoteProtocolError
from ferrymq.wire.mqmd import MQMD

# The twins below are deep copies; a connection holds a struct.Struct (the shape of the
# replies it expects), which copy cannot pickle: copied by its format.
copyreg.pickle(struct.Struct, lambda shape: (struct.Struct, (shape.format,)))

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
i32 = st.integers(-(2**31), 2**31 - 1)
mds = st.fixed_dictionaries({
    "version": st.sampled_from([1, 2]), "priority": st.integers(-1, 9), "msg_id": st.binary(min_size=24, max_size=24),
    "correl_id": st.binary(min_size=24, max_size=24), "encoding": st.sampled_from([273, 546]),
}).map(lambda kw: MQMD(**kw))
props = st.none() | st.dictionaries(st.text(min_size=1, max_size=8), st.booleans() | st.text(max_size=10), max_size=2)
statuses = st.just((0, 0, "")) | st.sampled_from([(1, 2079, ""), (2, 2080, "truncated"), (0, 0, "x")])  # OK: half

MAX = 4096


def connected() -> tuple[ClientConnection, ServerConnection]:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, max_msg_length=MAX)))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, max_msg_length=MAX, version=E.PROTOCOL_VERSION)))
    c.next_event()
    return c, s


@st.composite
def get_reply_frames(draw: st.DrawFn) -> tuple[ClientConnection, bytes]:
    """A connected client with a request outstanding and the bytes of a GetReply to it
    (sometimes damaged, sometimes answering another request or none)."""
    c, s = connected()
    name = draw(names)
    if draw(st.booleans()):  # an earlier reply, from the same queue mostly: its name is known
        s.receive_data(c.send(E.Get(3, 1, MQMD(version=2))))
        s.next_event()
        earlier = E.GetReply(3, MQMD(version=2).pack(), b"", 0, bytes(16), draw(st.just(name) | names))
        assert c.receive_get_reply(s.send(earlier)) is not None
    req = draw(st.just("get") | st.sampled_from(["get_batch", "inquire"]))
    if req == "get":
        ev: E.ClientEvent = E.Get(2, 1, MQMD(version=2))
    elif req == "get_batch":
        ev = E.GetBatch(2, 1, max_messages=5)
    else:
        ev = E.Inquire(2, 1, (1,), ())
    s.receive_data(c.send(ev))
    s.next_event()
    comp, reason, detail = draw(statuses)
    md = draw(mds).pack()
    reply = E.GetReply(2, md, draw(st.binary(max_size=200)), draw(st.integers(0, 2**32 - 1)),
                       draw(st.binary(min_size=16, max_size=16)), name, None, comp, reason, detail)
    if draw(st.booleans()) and req != "inquire":
        data = s.send(reply)
    else:  # the server machine would refuse to send it; encode it as a rogue server would
        data = s._pack(reply)
    damage = draw(st.sampled_from(["none", "bytes", "cut"]))
    if damage == "bytes":
        raw = bytearray(data)
        for _ in range(draw(st.integers(1, 3))):
            at = draw(st.integers(0, 67) | st.integers(0, len(raw) - 1))  # the header and fixed body, often
            raw[at] = draw(st.integers(0, 255))
        data = bytes(raw)
    elif damage == "cut":
        data = data[: draw(st.integers(1, len(data)))]
    return c, data


def slow(c: ClientConnection, data: bytes) -> list[object]:
    c.receive_data(data)
    out: list[object] = []
    while True:
        try:
            ev = c.next_event()
        except RemoteProtocolError as exc:
            out.append(("error", str(exc)))
            return out
        if ev is NEED_DATA or ev is CLOSED:
            return out
        out.append(ev)


def state(c: ClientConnection) -> tuple[object, ...]:
    return c._outstanding.copy(), c._fed, c._reader.buffered, c.state


@settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
@given(get_reply_frames())
def test_receive_get_reply_is_next_event(case: tuple[ClientConnection, bytes]) -> None:
    c, data = case
    twin = copy.deepcopy(c)
    expected = slow(twin, data)
    before = state(c)
    got = c.receive_get_reply(data)
    if got is None:  # nothing taken: the general path decides, and says the same
        assert state(c) == before
        assert slow(c, data) == expected
    else:
        assert expected == [got]
        assert state(c) == state(twin)


def test_the_usual_reply_takes_the_fast_path() -> None:
    """A test that the fast path is taken at all (the property above holds either way)."""
    c, s = connected()
    s.receive_data(c.send(E.Get(2, 1, MQMD(version=2))))
    s.next_event()
    reply = E.GetReply(2, MQMD(version=2).pack(), b"data", 4, bytes(16), "Q")
    frame = s.send(reply)
    assert c.receive_get_reply(bytearray(frame)) is None  # its slices would not be bytes
    got = c.receive_get_reply(frame)
    assert got == reply
    assert type(got.data) is bytes and type(got.md_bytes) is bytes
    assert c.outstanding == 0


md_fields = st.one_of(
    mds,
    mds.map(lambda md: md.pack()),  # packed, as the client sends them
    st.binary(max_size=400),  # a packed descriptor that is not one: the general encoder's error
)
anything = st.integers(-(2**70), 2**70)  # also out of every field's range


def _refuse(ev: object) -> bytes:
    raise ValueError("the general encoder, please")


def fast(ev: E.ClientEvent) -> bytes | str:
    """What ``send`` makes of ``ev``, or the name of what it raises."""
    c, _ = connected()
    c.max_msg_length = 0  # no length limit: the encoding alone is compared
    try:
        return c.send(ev)
    except Exception as exc:
        return type(exc).__name__


def general(ev: E.ClientEvent) -> bytes | str:
    """``fast`` with the one-step encoders failing, so that ``send`` uses the general one."""
    saved = codec.put_frame, codec.get_frame
    codec.put_frame = codec.get_frame = _refuse
    try:
        return fast(ev)
    finally:
        codec.put_frame, codec.get_frame = saved


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.builds(E.Put, st.integers(-5, 2**63 + 5), st.one_of(st.integers(0, 2**32 - 1), anything), md_fields,
                 st.one_of(st.binary(max_size=300), st.text(max_size=3), st.none()), st.one_of(i32, anything), st.one_of(st.integers(0, 2**32 - 1), anything),
                 props, st.just(False)))
def test_put_frame_is_the_general_encoding(ev: E.Put) -> None:
    assert fast(ev) == general(ev)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.builds(E.Get, st.integers(1, 2**63 + 5), st.one_of(st.integers(0, 2**32 - 1), anything), md_fields,
                 st.one_of(i32, anything), st.one_of(i32, anything), st.one_of(i32, anything),
                 st.one_of(st.integers(0, 2**32 - 1), anything), st.binary(min_size=14, max_size=18), st.booleans()))
def test_get_frame_is_the_general_encoding(ev: E.Get) -> None:
    assert fast(ev) == general(ev)


# -- a held asynchronous put and the get after it, in one step ----------------------------

plain_md = st.just(MQMD(version=2).pack()) | mds.map(lambda md: md.pack())  # what the client sends


def mostly(usual: st.SearchStrategy[Any], other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``usual`` nine times in ten: the fast paths' cases (an event must be usual in every field
    to take one), with enough of the rest."""
    return st.integers(0, 9).flatmap(lambda i: other if i == 9 else usual)


gets = st.builds(E.Get, mostly(st.integers(1, 6), st.integers(-2, 0) | st.integers(2**63 - 2, 2**63 + 5)),
                 mostly(st.integers(0, 2**32 - 1), anything), mostly(plain_md, md_fields),
                 mostly(i32, anything), mostly(i32, anything), i32, st.integers(0, 2**32 - 1),
                 mostly(st.just(bytes(16)), st.binary(min_size=15, max_size=17)), st.booleans())
async_puts = st.builds(E.Put, st.integers(0, 3), mostly(st.integers(0, 2**32 - 1), anything),
                       mostly(plain_md, md_fields), mostly(st.binary(max_size=300), st.text(max_size=3) | st.none()),
                       mostly(i32, anything), st.integers(0, 2**32 - 1), mostly(st.none(), props),
                       mostly(st.just(False), st.just(True)))


def conn_state(c: ClientConnection) -> tuple[object, ...]:
    return c._outstanding.copy(), c.state, c._consuming.copy(), c._closing.copy()


def one_by_one(c: ClientConnection, *evs: E.ClientEvent) -> bytes | str:
    try:
        return b"".join(c.send(ev) for ev in evs)
    except Exception as exc:
        return type(exc).__name__


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(async_puts, gets, mostly(st.just(MAX), st.sampled_from([0, 64])), mostly(st.just(False), st.just(True)),
       mostly(st.just(False), st.just(True)))
def test_send_pair_is_two_sends(put: E.Put, get: E.Get, limit: int, busy: bool, idle: bool) -> None:
    c = ClientConnection() if idle else connected()[0]
    c.max_msg_length = limit
    if busy and type(get.corr) is int:
        c._outstanding[get.corr] = E.Inquire
    twin = copy.deepcopy(c)
    before = conn_state(c)
    got = c.send_pair(put, get)
    if got is None:  # nothing taken: the sends one by one decide
        assert conn_state(c) == before
    else:
        assert got == one_by_one(twin, put, get)
        assert conn_state(c) == conn_state(twin)


def connected_session(limit: int) -> Session:
    sess, s = Session(), ServerConnection()
    sess.send(E.Connect(1, "QM1", max_msg_length=MAX))
    s.receive_data(sess.take_out())
    s.next_event()
    sess.feed(s.send(E.ConnectReply(1, qmgr_name="QM1", max_msg_length=limit, version=E.PROTOCOL_VERSION)))
    return sess


def session_state(sess: Session) -> tuple[object, ...]:
    return (list(sess.out), sess.out_bytes, list(sess._batch), sess._batch_bytes, sess.eof, sess.ending,
            conn_state(sess.conn))


def outcome(fn: Any) -> object:
    try:
        return fn()
    except Exception as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(async_puts, max_size=3), mostly(st.just(False), st.just(True)),
       mostly(gets, st.just(E.Inquire(5, 1, (1,), ()))), mostly(st.just(MAX), st.just(64)),
       mostly(st.just("open"), st.sampled_from(["eof", "ending"])))
def test_take_with_is_send_then_take_out(puts: list[E.Put], heartbeat: bool, ev: E.ClientEvent, limit: int,
                                         end: str) -> None:
    sess = connected_session(limit)
    for put in puts:
        if outcome(lambda put=put: sess.send(put)) is not None:  # type: ignore[misc]
            return  # a put refused on its own: nothing held to fold
    if heartbeat and outcome(lambda: sess.send(E.HeartbeatReply(9))) is not None:  # a frame ahead of the held puts
        return
    if end == "eof":
        sess.eof = True
    elif end == "ending":
        sess.ending = E.Ending(C.MQRC_Q_MGR_QUIESCING, "bye")
    twin = copy.deepcopy(sess)
    got = outcome(lambda: sess.take_with(ev))
    expected = outcome(lambda: (twin.send(ev), twin.take_out())[1])
    assert got == expected
    assert session_state(sess) == session_state(twin)


def test_a_request_reply_write_takes_the_one_step_path() -> None:
    """The fold is taken at all (the property above holds either way)."""
    sess = connected_session(MAX)
    sess.send(E.Put(0, 1, MQMD(version=2).pack(), b"request", 0, reply=False))
    called: list[bool] = []
    pair = sess.conn.send_pair

    def spy(put: E.Put, get: E.Get) -> bytes | None:
        out = pair(put, get)
        called.append(out is not None)
        return out

    sess.conn.send_pair = spy  # type: ignore[method-assign]
    sess.take_with(E.Get(5, 1, MQMD(version=2).pack()))
    assert called == [True]
    assert not sess._batch and sess.out_bytes == 0 and not sess.out


ids = st.none() | st.binary(min_size=24, max_size=24) | st.binary(max_size=30)


@settings(max_examples=300)
@given(ids, ids)
def test_get_event_descriptor_is_get_md(msg_id: bytes | None, correl_id: bytes | None) -> None:
    """``get_event`` splices a get's identifiers in itself for the usual gets: as ``get_md`` does."""
    S.get_md(None, None)  # its template made, as after a first get

    def inline() -> tuple[bytes, int]:
        ev = S.get_event(1, 1, 0.0, msg_id, correl_id, False, 100, False)
        return ev.md, ev.match_options  # type: ignore[return-value]

    assert outcome(inline) == outcome(lambda: S.get_md(msg_id, correl_id))
