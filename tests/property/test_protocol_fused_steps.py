"""Each machine's fused steps against the general way (ferrymq.protocol.connection):

- a frame's taker (layout.Frame.taker: its usual packet decoded and its rule applied in one
  step) gives the general decoder's event and leaves the conversation as the rule does, or
  gives None and leaves it as it was (the general way then reads or refuses the packet);
- a frame's sender (layout.Frame.sender: its packer and its rule at once) gives the packer's
  bytes and leaves the conversation as the rule does, or raises the rule's error having
  changed nothing;
- ``take_event(data)`` gives the first event ``receive_data(data)`` then ``next_event()``
  give, with the rest of the read buffered as they leave it, or None having changed nothing.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.protocol import codec, rules
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import ClientConnection, ServerConnection, State
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.wire.mqmd import MQMD

_MD = MQMD(msg_id=b"m" * 24, correl_id=b"c" * 24).pack(version=2)
_MD_V1 = MQMD(msg_id=b"m" * 24).pack(version=1)
_CORR = 5
_HOBJ = 3

_SERVER_EVENTS: list[Any] = [  # what a client receives
    E.GetReply(_CORR, _MD, b"body", 4, bytes(16), "Q.R"),
    E.GetReply(_CORR, _MD, b"body", 9, b"t" * 16, "Q.\u00e9"),
    E.GetReply(_CORR, _MD_V1, b"", 0, bytes(16), "Q"),
    E.GetReply(_CORR, _MD, b"x", 1, bytes(16), "Q", None, 1, 2079, ""),
    E.PutReply(_CORR, _MD, "Q", "QM"),
    E.Reply(_CORR),
    E.Reply(_CORR, 2, 2033, "no message"),
    E.StatReply(_CORR, 1, 0, 0, 0, 0, ""),
    E.OpenReply(_CORR, _HOBJ, "Q", "Q", "QM"),
    E.ConnectReply(_CORR, max_msg_length=1024, version=5),
    E.Pushed(_HOBJ, _MD, b"pushed", 6, bytes(16)),
    E.PersistentNext(_HOBJ),
    E.Heartbeat(0, reply=True),
    E.Ending(2161, "quiescing"),
]
_CLIENT_EVENTS: list[Any] = [  # what a server receives
    E.Get(_CORR, _HOBJ, _MD, 0, -1, 2, 1024, bytes(16)),
    E.Get(_CORR, _HOBJ, _MD_V1, 0, 0, 0, 1024, bytes(16), False),
    E.Put(_CORR, _HOBJ, _MD, b"data"),
    E.Put(_CORR, _HOBJ, _MD, b"data" * 100, reply=False),
    E.Put(_CORR, _HOBJ, _MD_V1, b"data"),
    E.Commit(_CORR),
    E.Close(_CORR, _HOBJ),
    E.Credit(_HOBJ, 4),
    E.Stat(_CORR),
    E.Consume(_CORR, _HOBJ, 10),
    E.Heartbeat(_CORR, reply=True),
    E.HeartbeatReply(_CORR),
]
_REQUESTS = [E.Get, E.Put, E.Connect, E.Close, E.Consume, E.Stat, E.Open, E.GetBatch, E.Commit]


def _machines() -> list[tuple[str, Any, list[Any]]]:
    return [("client", ClientConnection, _SERVER_EVENTS), ("server", ServerConnection, _CLIENT_EVENTS),
            ("server raw md", lambda: ServerConnection(raw_put_md=True), _CLIENT_EVENTS)]


def _state(m: Any) -> tuple[Any, ...]:
    return (m.state, dict(m._outstanding), set(m._consuming), dict(m._consume_req), dict(m._closing), m.version,
            m.max_msg_length, m.max_packet)


def _set_up(m: Any, state: State, outstanding: type | None, consuming: bool, max_length: int) -> Any:
    m.state = state
    if outstanding is not None:
        m._outstanding[_CORR] = outstanding
        if outstanding is E.Consume:
            m._consume_req[_CORR] = _HOBJ
        elif outstanding is E.Close:
            m._closing[_CORR] = _HOBJ
    if consuming:
        m._consuming.add(_HOBJ)
    m._proposed = 4096
    if max_length:
        m._negotiated(max_length, 5)
    return m


def _conversations() -> st.SearchStrategy[tuple[State, type | None, bool, int]]:
    return st.tuples(st.sampled_from([State.CONNECTED, State.CONNECTED, State.IDLE, State.CONNECTING, State.CLOSED]),
                     st.sampled_from([None, *_REQUESTS]), st.booleans(), st.sampled_from([0, 0, 64, 4096]))


def _decoded(m: Any, packet: bytes) -> Any:
    """The general way's event for a whole packet (the machine's own general decoder)."""
    ptype, corr, flags = struct.unpack_from(">h", packet, 2)[0], *struct.unpack_from(">qI", packet, 24)
    _, _, decode = m._theirs[ptype]
    return decode(packet, 36, len(packet), corr, flags)


@given(st.sampled_from(_machines()), st.data(), _conversations())
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_taker_is_the_decoder_and_the_rule(machine: tuple[str, Any, list[Any]], data: st.DataObject,
                                           conversation: tuple[State, type | None, bool, int]) -> None:
    _, make, events = machine
    ev = data.draw(st.sampled_from(events))
    taken, general = _set_up(make(), *conversation), _set_up(make(), *conversation)
    packet = b"".join(codec.pack(ev))
    take = taken._takers[packet[3]]
    if take is None:  # a frame with a field only the general decoder reads
        assert any(kind == "charv" for _, kind in codec.FRAMES[type(ev)].fields)
        return
    before = _state(taken)
    got = take(taken, packet, 0, len(packet), taken._reader.max_size)
    if got is None:
        assert _state(taken) == before
        return
    expected = _decoded(general, packet)
    rule = general._theirs[codec.FRAMES[type(ev)].ptype][1]
    rule(general, expected)  # a taker takes only what the rule allows: this raises nothing
    assert got == (expected, len(packet))
    assert _state(taken) == _state(general)


def test_takers_take_what_a_request_reply_loop_receives() -> None:
    for make, ev, request in ((ClientConnection, _SERVER_EVENTS[0], E.Get), (ClientConnection, _SERVER_EVENTS[5], E.Put),
                              (ServerConnection, _CLIENT_EVENTS[0], None), (ServerConnection, _CLIENT_EVENTS[3], None)):
        m = _set_up(make(), State.CONNECTED, request, False, 4096)
        packet = b"".join(codec.pack(ev))
        got = m._takers[packet[3]](m, packet, 0, len(packet), m._reader.max_size)
        assert got is not None and got[1] == len(packet)


@given(st.sampled_from(_machines()), st.data(), _conversations())
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_sender_is_the_packer_and_the_rule(machine: tuple[str, Any, list[Any]], data: st.DataObject,
                                           conversation: tuple[State, type | None, bool, int]) -> None:
    name, make, _ = machine
    ev = data.draw(st.sampled_from(_CLIENT_EVENTS if name == "client" else _SERVER_EVENTS))
    sent, general = _set_up(make(), *conversation), _set_up(make(), *conversation)
    parts: list[bytes] = []
    try:
        sent._mine[type(ev)](sent, ev, parts)
        got: Any = b"".join(parts)
    except LocalProtocolError as exc:
        got = (type(exc), str(exc))
    packet = b"".join(codec.pack(ev))
    try:
        (rules.CLIENT_SENDS if name == "client" else rules.SERVER_SENDS)[type(ev)](general, ev)
        expected: Any = packet
    except LocalProtocolError as exc:
        expected = (type(exc), str(exc))
    assert got == expected
    assert _state(sent) == _state(general)


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except (RemoteProtocolError, RuntimeError) as exc:
        return type(exc), str(exc)


def _events(m: Any, first: Any) -> list[Any]:
    out = [first]
    while not isinstance(out[-1], tuple) and not m.drained:
        out.append(_outcome(m.next_event))
    return out


@pytest.mark.parametrize("read", [
    [_SERVER_EVENTS[0]], [_SERVER_EVENTS[0], _SERVER_EVENTS[10]], [_SERVER_EVENTS[10], _SERVER_EVENTS[10]],
    [_SERVER_EVENTS[3]], [_SERVER_EVENTS[1]], [_SERVER_EVENTS[12], _SERVER_EVENTS[0]]])
@pytest.mark.parametrize("cut", [0, 1, 37])
@pytest.mark.parametrize("outstanding", [E.Get, E.Put, None])
def test_take_event_is_receive_data_then_next_event(read: list[Any], cut: int, outstanding: type | None) -> None:
    data = b"".join(b"".join(codec.pack(ev)) for ev in read)
    data = data[: len(data) - cut]
    one, two = (_set_up(ClientConnection(), State.CONNECTED, outstanding, True, 4096) for _ in range(2))
    before = _state(one)
    taken = one.take_event(data)
    if taken is None:  # not taken: nothing changed, and the general way reads it
        assert _state(one) == before and one.buffered == 0 and one.drained
        one.receive_data(data)
        taken = _outcome(one.next_event)
    got = _events(one, taken)
    two.receive_data(data)
    expected = _events(two, _outcome(two.next_event))
    assert got == expected
    assert _state(one) == _state(two) and one.buffered == two.buffered and one.drained == two.drained
