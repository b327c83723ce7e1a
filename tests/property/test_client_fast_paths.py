"""The client session's folds against the general way: the same bytes, the same state
afterwards, the same errors, for any events."""

from __future__ import annotations

import copy
import copyreg
import struct
from collections.abc import Iterable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.client import session as S
from ferrymq.client.session import Session
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import ClientConnection, ServerConnection
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


md_fields = st.one_of(
    mds,
    mds.map(lambda md: md.pack()),  # packed, as the client sends them
    st.binary(max_size=400),  # a packed descriptor that is not one: the encoder's error
)
anything = st.integers(-(2**70), 2**70)  # also out of every field's range


# -- a held asynchronous put and the request after it, in one write ----------------------------

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
    called: list[int] = []
    many = sess.conn.send_many

    def spy(events: Iterable[E.Event]) -> bytes:
        events = list(events)
        called.append(len(events))
        return many(events)

    sess.conn.send_many = spy  # type: ignore[method-assign]
    sess.take_with(E.Get(5, 1, MQMD(version=2).pack()))
    assert called == [2]
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
