"""PUT_COLUMNS (1180): layout, round trip, every length bounded, only DecodeError."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.protocol import codec
from ferrymq.protocol import columnframes as F
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import ClientConnection, ServerConnection
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.framing import pack_packet
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.wire.gpacket import GPacket
from ferrymq.wire.mqmd import MQMD

MD = MQMD(version=2, format="MQSTR", priority=3, persistence=0)
MDB = pack_md(MD)
OPTS = C.MQPMO_SYNCPOINT | C.MQPMO_ASYNC_RESPONSE


def pair(max_msg_length: int = 1 << 16) -> tuple[ClientConnection, ServerConnection]:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, "QM1")))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, qmgr_name="QM1", max_msg_length=max_msg_length)))
    c.next_event()
    return c, s


def offsets(*lengths: int) -> bytes:
    out = [0]
    for n in lengths:
        out.append(out[-1] + n)
    return struct.pack(f">{len(out)}I", *out)


def decode(body: bytes) -> F.PutColumns:
    ev = codec.decode(codec.CLIENT_FRAMES, F.T_PUT_COLUMNS, 0, 0, body, None)
    assert isinstance(ev, F.PutColumns)
    return ev


def test_layout_header_md_offsets_identifier_columns_then_data() -> None:
    c, s = pair()
    ev = F.PutColumns(7, MDB, offsets(2, 0, 3), b"abcde", b"m" * 72, None, OPTS, 0)
    raw = c.send(ev)
    pkt = GPacket.unpack_from(raw)
    assert pkt.type == F.T_PUT_COLUMNS == 1180 and pkt.flags == 0 and pkt.sequence == 0
    body = pkt.payload
    assert struct.unpack_from(">IiIIB", body) == (7, OPTS, 0, 3, F.HAS_MSG_IDS)
    rest = body[17:]
    assert rest[: len(MDB)] == MDB
    rest = rest[len(MDB) :]
    assert rest == struct.pack(">4I", 0, 2, 2, 5) + b"m" * 72 + b"abcde"
    s.receive_data(raw)
    got = s.next_event()
    assert isinstance(got, F.PutColumns)
    assert (got.hobj, got.md, got.options, got.count) == (7, MD, OPTS, 3)
    assert got.payloads() == [b"ab", b"", b"cde"]
    assert F.ids_of(got.msg_ids) == [b"m" * 24] * 3 and got.correl_ids is None


def test_both_identifier_columns_round_trip() -> None:
    ev = F.PutColumns(1, MDB, offsets(1, 1), b"xy", b"a" * 24 + b"b" * 24, b"c" * 24 + b"d" * 24, 0, 0)
    _, _, _, parts = codec.encode(ev)
    got = decode(b"".join(parts))
    assert F.ids_of(got.msg_ids) == [b"a" * 24, b"b" * 24] and F.ids_of(got.correl_ids) == [b"c" * 24, b"d" * 24]
    assert got.payloads() == [b"x", b"y"]


@pytest.mark.parametrize(("offs", "data", "ids", "match"), [
    (struct.pack(">I", 0), b"", None, "1..65536"),  # no message
    (offsets(1, 1)[:-1], b"xy", None, "offsets"),  # not whole u32s
    (struct.pack(">3I", 1, 1, 2), b"xy", None, "from 1"),  # not from 0
    (struct.pack(">3I", 0, 2, 1), b"xy", None, "to 1"),  # not to the end
    (struct.pack(">4I", 0, 2, 1, 2), b"xy", None, "decrease"),
    (offsets(1, 1), b"xy", b"m" * 24, "msg_ids"),
])
def test_columns_that_disagree_are_refused_locally(offs: bytes, data: bytes, ids: bytes | None, match: str) -> None:
    c, _ = pair()
    with pytest.raises(LocalProtocolError, match=match):
        c.send(F.PutColumns(1, MDB, offs, data, ids))


def test_a_message_over_the_negotiated_maximum_ends_the_connection_both_ways() -> None:
    c, s = pair(max_msg_length=4)
    ev = F.PutColumns(1, MDB, offsets(2, 5), b"abcdefg")
    with pytest.raises(LocalProtocolError, match="exceeds"):
        c.send(ev)
    _, _, _, parts = codec.encode(ev)
    s.receive_data(pack_packet(F.T_PUT_COLUMNS, 0, 0, parts, None))
    with pytest.raises(RemoteProtocolError, match="exceeds"):
        s.next_event()


def head(n: int, columns: int = 0) -> bytes:
    return struct.pack(">IiIIB", 1, 0, 0, n, columns) + MDB


@pytest.mark.parametrize(("body", "match"), [
    (head(0), "1..65536"),
    (head(F.MAX_ROWS + 1), "1..65536"),
    (head(2, 0x4), "unknown columns"),
    (head(100_000_000 // 4), "1..65536"),  # a huge count is refused before any allocation
    (head(3) + struct.pack(">2I", 0, 1), "offsets: needs 16"),
    (head(2, F.HAS_MSG_IDS) + struct.pack(">3I", 0, 1, 2) + b"m" * 24, "MsgIds: needs 48"),
    (head(2, F.HAS_CORREL_IDS) + struct.pack(">3I", 0, 1, 2) + b"c" * 47, "CorrelIds: needs 48"),
    (head(2) + struct.pack(">3I", 0, 1, 9) + b"xy", "not from 0 to the data's 2"),
    (head(2) + struct.pack(">3I", 0, 3, 2) + b"xy", "decrease"),
    (head(1) + struct.pack(">2I", 0, 1) + b"x", None),
])
def test_decoding_bounds_every_length(body: bytes, match: str | None) -> None:
    if match is None:
        assert decode(body).payloads() == [b"x"]
        return
    with pytest.raises(DecodeError, match=match):
        decode(body)


def test_properties_in_the_packet_are_refused() -> None:
    body = head(1) + struct.pack(">2I", 0, 1) + b"x"
    with pytest.raises(DecodeError, match="no properties"):
        codec.decode(codec.CLIENT_FRAMES, F.T_PUT_COLUMNS, 0, 0, body, {"k": 1})


def test_servers_do_not_send_it() -> None:
    with pytest.raises(DecodeError, match="not valid in this direction"):
        codec.decode(codec.SERVER_FRAMES, F.T_PUT_COLUMNS, 0, 0, head(1) + struct.pack(">2I", 0, 0), None)


@given(st.binary(max_size=600))
def test_any_body_decodes_or_raises_decode_error(body: bytes) -> None:
    with contextlib.suppress(DecodeError):
        decode(body)


@given(st.integers(1, 40), st.integers(0, 3), st.binary(max_size=300), st.data())
def test_valid_frames_with_damage_decode_or_raise_decode_error(n: int, columns: int, tail: bytes,
                                                                data: st.DataObject) -> None:
    lengths = data.draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    block = bytes(sum(lengths))
    ids = [b"i" * 24 * n if columns & bit else None for bit in (F.HAS_MSG_IDS, F.HAS_CORREL_IDS)]
    _, _, _, parts = codec.encode(F.PutColumns(1, MDB, offsets(*lengths), block, *ids))
    body = bytearray(b"".join(parts))
    got = decode(bytes(body))
    assert [len(p) for p in got.payloads()] == lengths
    at = data.draw(st.integers(0, len(body)))
    body[at:at + len(tail)] = tail  # overwrite (and maybe truncate or extend) somewhere
    with contextlib.suppress(DecodeError):
        decode(bytes(body))
