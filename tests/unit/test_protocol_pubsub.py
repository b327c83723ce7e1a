"""The publish/subscribe frames (protocol version 3): SUB, SUB_REPLY, SUBRQ, SUBRQ_REPLY and
the topic strings of OPEN, OPEN_REPLY and PUT1 — round trips, layouts and bad input."""

from __future__ import annotations

import struct

import pytest

from ferrymq.mq import constants as C
from ferrymq.protocol import codec
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import ClientConnection, ServerConnection
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.wire import gpacket
from ferrymq.wire.mqmd import MQMD

TOPIC = "/sports/football/" + "é" * 10


def connected_pair() -> tuple[ClientConnection, ServerConnection]:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, "QM1")))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, qmgr_name="QM1", max_msg_length=1 << 20)))
    c.next_event()
    return c, s


SUB = E.Sub(7, C.MQSO_CREATE | C.MQSO_DURABLE | C.MQSO_MANAGED, 0, "SPORTS", TOPIC, "my sub", "user data",
            b"K" * 24, 4, b"A" * 32, "appl id", "colour = 'red'", 600, 2, "alt")
REQUESTS = [
    SUB,
    E.Sub(7, C.MQSO_RESUME, 9),
    E.SubRequest(7, 3, C.MQSR_ACTION_PUBLICATION, C.MQSRO_FAIL_IF_QUIESCING),
    E.Open(7, "", C.MQOO_OUTPUT, C.MQOT_TOPIC, object_string=TOPIC),
    E.Put1(7, "SPORTS", MQMD(), b"x", C.MQPMO_RETAIN, C.MQOT_TOPIC, object_string="/football"),
]
REPLIES = [
    (SUB, E.SubReply(7, 5, 6, "SYSTEM.MANAGED.DURABLE.1", TOPIC, b"C" * 24)),
    (SUB, E.SubReply(7, 5, 6, "Q", "t", bytes(24), C.MQCC_WARNING, 2500, "a warning")),
    (SUB, E.Reply(7, C.MQCC_FAILED, C.MQRC_SUB_ALREADY_EXISTS, "exists")),
    (SUB, E.SubReply(7, 5, 6, "Q", "t", b"C" * 24, 0, 0, "", True, C.MQSO_RESUME | C.MQSO_DURABLE, "SPORTS",
                     "user data", 3, b"A" * 32, "appl", "colour = 'red'", 600, 1)),
    (E.SubRequest(7, 3), E.SubRequestReply(7, 12)),
    (E.Open(7, "", 16, C.MQOT_TOPIC, object_string="a"), E.OpenReply(7, 4, "SYSTEM.BASE.TOPIC", res_object_string="a")),
]


@pytest.mark.parametrize("ev", REQUESTS, ids=lambda e: type(e).__name__)
def test_request_round_trip(ev: E.ClientEvent) -> None:
    c, s = connected_pair()
    s.receive_data(c.send(ev))
    assert s.next_event() == ev


@pytest.mark.parametrize(("req", "reply"), REPLIES, ids=lambda e: type(e).__name__)
def test_reply_round_trip(req: E.ClientEvent, reply: E.ServerEvent) -> None:
    c, s = connected_pair()
    s.receive_data(c.send(req))
    s.next_event()
    c.receive_data(s.send(reply))
    assert c.next_event() == reply


def test_sub_layout() -> None:
    c, _ = connected_pair()
    raw = c.send(E.Sub(9, C.MQSO_CREATE, 3, "", "a/b", sub_name="n"))
    assert struct.unpack_from(">hhiiiqqI", raw)[1] == codec.T_SUB
    body = raw[36:]
    options, hobj, prio, expiry, level = struct.unpack_from(">iIiii", body)
    assert (options, hobj, prio, expiry, level) == (C.MQSO_CREATE, 3, C.MQPRI_PRIORITY_AS_PUBLISHED, -1, 1)
    assert body[20:76] == bytes(56)  # SubCorrelId, PubAccountingToken
    assert body[76:] == b"\0\0" + b"\0\x03a/b" + b"\0\x01n" + b"\0\0" * 4


def test_a_sub_reply_answers_only_a_sub() -> None:
    c, s = connected_pair()
    s.receive_data(c.send(E.Commit(7)))
    s.next_event()
    with pytest.raises(LocalProtocolError):
        s.send(E.SubReply(7, 1, 2))


def test_a_topic_string_over_10240_characters_is_refused_by_the_sender() -> None:
    c, _ = connected_pair()
    with pytest.raises(LocalProtocolError):
        c.send(E.Sub(9, C.MQSO_CREATE, object_string="x" * (C.MQ_TOPIC_STR_LENGTH + 1)))
    c, _ = connected_pair()
    c.send(E.Sub(9, C.MQSO_CREATE, object_string="é" * C.MQ_TOPIC_STR_LENGTH))  # characters, not bytes


def _charv_frame(length: int) -> bytes:
    """An OPEN whose object_string is ``length`` characters, written by hand."""
    tail = b"x" * length
    body = struct.pack(">ii", C.MQOO_OUTPUT, C.MQOT_TOPIC) + b"\0\0" * 5 + struct.pack(">H", len(tail)) + tail
    return struct.pack(">hhiiiqqI", 350, codec.T_OPEN, 36 + len(body), gpacket.MAGIC, 0, 0, 5, 1) + body


@pytest.mark.parametrize(("name", "frame"), [
    ("a topic string over 10240 characters", _charv_frame(C.MQ_TOPIC_STR_LENGTH + 1)),
    ("a SUB body cut short", None),
    ("a SUB with bytes after its body", None),
    ("a SUBRQ body cut short", None),
])
def test_malformed_pubsub_frames_are_protocol_errors(name: str, frame: bytes | None) -> None:
    c, s = connected_pair()
    if frame is None:
        whole = c.send(SUB if "SUB " in name or name.startswith("a SUB ") else E.SubRequest(8, 1))
        if "after" in name:
            frame = whole[:4] + struct.pack(">i", len(whole) + 2) + whole[8:] + b"\0\0"
        else:
            frame = whole[:4] + struct.pack(">i", len(whole) - 3) + whole[8:-3]
    s.receive_data(frame)
    with pytest.raises(RemoteProtocolError) as info:
        s.next_event()
    assert "magic" not in str(info.value)


def test_the_charv_limit_is_checked_on_decode_too() -> None:
    _, s = connected_pair()
    s.receive_data(_charv_frame(C.MQ_TOPIC_STR_LENGTH))
    ev = s.next_event()
    assert isinstance(ev, E.Open) and len(ev.object_string) == C.MQ_TOPIC_STR_LENGTH


def test_versions_4_and_5_are_served() -> None:
    # 5 only adds frames (GET_AHEAD, RETURN_AHEAD): a version 4 peer keeps every layout
    assert (E.MIN_PROTOCOL_VERSION, E.PROTOCOL_VERSION, E.AHEAD_VERSION) == (4, 5, 5)
