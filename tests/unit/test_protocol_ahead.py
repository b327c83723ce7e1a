"""GET_AHEAD and RETURN_AHEAD (protocol version 5): layout, bounds, and the version rule."""

from __future__ import annotations

import struct

import pytest
from test_protocol_batches import pair

from ferrymq.mq import constants as C
from ferrymq.protocol import codec
from ferrymq.protocol import events as E
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.framing import pack_packet
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.wire.gpacket import GPacket
from ferrymq.wire.mqmd import MQMD


def test_get_ahead_layout_and_its_answers() -> None:
    c, s = pair()
    raw = c.send(E.GetAhead(7, 3, C.MQGMO_SYNCPOINT | C.MQGMO_WAIT, 500, 100, 262144, 4096))
    pkt = GPacket.unpack_from(raw)
    assert (pkt.type, pkt.sequence, pkt.flags) == (codec.T_GET_AHEAD, 7, 1)
    assert struct.unpack(">IiiIII", pkt.payload) == (3, C.MQGMO_SYNCPOINT | C.MQGMO_WAIT, 500, 100, 262144, 4096)
    s.receive_data(raw)
    assert s.next_event() == E.GetAhead(7, 3, C.MQGMO_SYNCPOINT | C.MQGMO_WAIT, 500, 100, 262144, 4096)
    c.receive_data(s.send(E.GetBatchReply(7, [(pack_md(MQMD(version=2)), b"d", 1, bytes(16), None)])))
    assert isinstance(c.next_event(), E.GetBatchReply)


def test_return_ahead_layout_and_round_trip() -> None:
    c, s = pair()
    tokens = [bytes([i]) * 16 for i in (1, 2)]
    raw = c.send(E.ReturnAhead(8, 3, tokens))
    pkt = GPacket.unpack_from(raw)
    assert pkt.type == codec.T_RETURN_AHEAD and pkt.payload == struct.pack(">II", 3, 2) + b"".join(tokens)
    s.receive_data(raw)
    assert s.next_event() == E.ReturnAhead(8, 3, tokens)
    c.receive_data(s.send(E.Reply(8, C.MQCC_FAILED, C.MQRC_MSG_TOKEN_ERROR)))
    assert c.next_event() == E.Reply(8, C.MQCC_FAILED, C.MQRC_MSG_TOKEN_ERROR)


@pytest.mark.parametrize("ev", [E.GetAhead(2, 3), E.ReturnAhead(2, 3, [bytes(16)])])
def test_a_version_4_conversation_has_neither_frame(ev: E.GetAhead | E.ReturnAhead) -> None:
    c, s = pair(4)
    with pytest.raises(LocalProtocolError, match="needs protocol version 5"):
        c.send(ev)
    good, _ = pair(5)
    raw = good.send(ev)
    s.receive_data(raw)  # the server holds a version 4 peer to the same rule
    with pytest.raises(RemoteProtocolError, match="needs protocol version 5"):
        s.next_event()


@pytest.mark.parametrize("body", [
    struct.pack(">II", 3, 2) + bytes(16),  # two tokens announced, one present
    struct.pack(">II", 3, 1) + bytes(17),  # a byte too many
    struct.pack(">II", 3, 0),  # an empty return
    struct.pack(">II", 3, 1 << 30),  # a count past the batch bound, refused before anything is read
])
def test_a_malformed_return_ahead_is_a_protocol_error(body: bytes) -> None:
    _, s = pair()
    s.receive_data(pack_packet(codec.T_RETURN_AHEAD, 9, 1, [body], None))
    with pytest.raises(RemoteProtocolError):
        s.next_event()


def test_tokens_must_be_16_bytes_and_some() -> None:
    c, _ = pair()
    for tokens in ([b"short"], []):
        with pytest.raises(LocalProtocolError):
            c.send(E.ReturnAhead(3, 1, tokens))
