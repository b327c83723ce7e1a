"""Sequence-range and prepared-unit frames (1150..1169): round trips through the protocol
machines, the byte layout, and malformed bodies refused with DecodeError only."""

from __future__ import annotations

import contextlib
import dataclasses
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrymq.errors import DecodeError
from ferrymq.properties import model as props_model
from ferrymq.protocol import codec
from ferrymq.protocol import events as E
from ferrymq.protocol import seqframes as F
from ferrymq.protocol.connection import ClientConnection, ServerConnection
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.framing import pack_packet
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.wire.mqmd import MQMD

MD = pack_md(MQMD(version=2, msg_id=b"M" * 24, format="MQSTR", priority=4))


def connected_pair() -> tuple[ClientConnection, ServerConnection]:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, "QM1")))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, qmgr_name="QM1", max_msg_length=1 << 20)))
    c.next_event()
    return c, s


MD2 = MQMD(version=2, msg_id=b"M" * 24, format="MQSTR", priority=4).pack(version=2)


def columns(props: dict[int, Any] | None = None, data: tuple[bytes, ...] = (b"data", b"")) -> F.BrowseColumnsReply:
    n = len(data)
    return F.BrowseColumnsReply(5, n, F.pack_le("q", list(range(10, 10 + n))), F.pack_le("d", [1.75e9] * n), MD2 * n,
                                props or {}, F.column_offsets([len(d) for d in data]), b"".join(data))


PAIRS: list[tuple[Any, Any]] = [
    (F.SeqRange(5, "Q1"), F.SeqRangeReply(5, "Q1", 3, 1 << 40, 17)),
    (F.BrowseRange(5, "Q1", 10, 20, 7, 4096),
     F.BrowseRangeReply(5, [F.RangeEntry(10, 1.75e9, MD, {"n": 3, "s": "x"}, b"data"),
                            F.RangeEntry(11, 1.75e9 + 0.5, MD, {}, b"")])),
    (F.BrowseColumns(5, "Q1", 10, 20, 7, 4096), columns({0: {"n": 3, "s": "x"}})),
    (F.BrowseColumns(5, "Q1", 10, 20, 0, 0), columns(data=())),
    (F.RemoveUpto(5, "Q1", 99, "spark-query-1"), F.RemoveUptoReply(5, 42)),
    (F.Readers(5, "Q1"), F.ReadersReply(5, [("a", 4, 6), ("b", -1, 0)])),
    (F.Prepare(5, b"x" * 128), F.PrepareReply(5, 3)),
    (F.Resolve(5, b"q/b/p", True), F.ResolveReply(5, True)),
    (F.Resolve(5, b"q/b/p", False), F.ResolveReply(5, False)),
    (F.InDoubt(5), F.InDoubtReply(5, [b"a", b"b" * 128])),
]


@pytest.mark.parametrize(("req", "reply"), PAIRS)
def test_round_trip_through_both_machines(req: Any, reply: Any) -> None:
    c, s = connected_pair()
    s.receive_data(c.send(req))
    assert s.next_event() == req
    c.receive_data(s.send(reply))
    assert c.next_event() == reply


def test_a_wrong_reply_kind_is_a_protocol_error() -> None:
    c, s = connected_pair()
    s.receive_data(c.send(F.SeqRange(5, "Q1")))
    s.next_event()
    with pytest.raises(LocalProtocolError, match="cannot answer SeqRange"):
        s.send(F.RemoveUptoReply(5, 1))  # our own end refuses to send it
    ptype, flags, corr, parts = codec.encode(F.RemoveUptoReply(5, 1))
    c.receive_data(pack_packet(ptype, flags, corr, parts, None))
    with pytest.raises(RemoteProtocolError, match="cannot answer SeqRange"):
        c.next_event()


def test_remove_upto_layout() -> None:
    ptype, flags, corr, parts = codec.encode(F.RemoveUpto(9, "Q1", 7, "r"))
    assert (ptype, flags, corr) == (1154, 1, 9)
    assert b"".join(parts) == b"\x00\x02Q1" + struct.pack(">q", 7) + b"\x00\x01r"


@pytest.mark.parametrize("xid", [b"", b"x" * 129])
def test_bad_xids_are_refused_both_ways(xid: bytes) -> None:
    with pytest.raises(ValueError, match="XID"):
        codec.encode(F.Prepare(1, xid))
    body = struct.pack(">H", len(xid)) + xid
    with pytest.raises(DecodeError, match="XID"):
        codec.decode(codec.CLIENT_FRAMES, F.T_PREPARE, 1, 1, body, None)


def test_counts_are_bounded_before_allocation() -> None:
    with pytest.raises(DecodeError, match="limit"):
        codec.decode(codec.SERVER_FRAMES, F.T_BROWSE_RANGE_REPLY, 0, 1, struct.pack(">I", F.MAX_BROWSE + 1), None)
    with pytest.raises(DecodeError, match="limit"):
        codec.decode(codec.SERVER_FRAMES, F.T_IN_DOUBT_REPLY, 0, 1, struct.pack(">H", F.MAX_LIST + 1), None)


def columns_body(reply: F.BrowseColumnsReply) -> bytes:
    return b"".join(codec.encode(reply)[3])


def decode_columns(body: bytes) -> F.BrowseColumnsReply:
    ev = codec.decode(codec.SERVER_FRAMES, F.T_BROWSE_COLUMNS_REPLY, 0, 5, body, None)
    assert isinstance(ev, F.BrowseColumnsReply)
    return ev


def test_columns_reply_layout() -> None:
    reply = columns({1: {"n": 3}})
    props = props_model.pack({"n": 3})
    expected = b"".join([struct.pack(">I", 2), struct.pack("<qq", 10, 11), struct.pack("<dd", 1.75e9, 1.75e9), MD2 * 2,
                         struct.pack("<III", 0, 0, len(props)), props, struct.pack("<III", 0, 4, 4), b"data"])
    assert columns_body(reply) == expected
    # The server's packed properties stand in for packing them again, and are not part of the value.
    packed = dataclasses.replace(reply, packed_properties=[b"", props])
    assert columns_body(packed) == expected and packed == reply


GOOD = columns_body(columns({0: {"n": 3, "s": "x"}}, (b"abc", b"", b"de")))
N, MDS = 3, 3 * F.MD_SIZE
PROP_OFFS = 4 + 16 * N + MDS  # where the property offsets start


def _patched(at: int, raw: bytes) -> bytes:
    return GOOD[:at] + raw + GOOD[at + len(raw) :]


@pytest.mark.parametrize(("body", "match"), [
    (struct.pack(">I", F.MAX_BROWSE + 1), "limit"),
    (struct.pack(">I", 2) + bytes(700), "limit"),  # two messages cannot fit in what follows
    (GOOD[:-1], "data offsets run from 0 to 5; 4 bytes follow"),
    (GOOD + b"x", "data offsets end at 5; 6 bytes of data follow"),
    (_patched(4 + 16 * N, b"XD  "), "not a little-endian version-2 MQMD"),
    (_patched(4 + 16 * N + F.MD_SIZE + 4, b"\x01"), "not a little-endian version-2 MQMD"),
    (_patched(PROP_OFFS, struct.pack("<I", 1)), "property offsets run from 1"),
    (_patched(PROP_OFFS + 4, struct.pack("<I", 1 << 30)), "property offsets decrease"),
    (_patched(PROP_OFFS + 12, struct.pack("<I", 1 << 30)), "property offsets run from 0 to 1073741824"),
    (_patched(PROP_OFFS + 4, struct.pack("<I", 3)), "message properties"),  # a property set cut short
])
def test_malformed_columns_are_refused(body: bytes, match: str) -> None:
    with pytest.raises(DecodeError, match=match):
        decode_columns(body)


def test_data_offsets_must_not_decrease() -> None:
    at = len(GOOD) - 5 - 16
    assert struct.unpack_from("<4I", GOOD, at) == (0, 3, 3, 5)
    with pytest.raises(DecodeError, match="data offsets decrease"):
        decode_columns(_patched(at + 4, struct.pack("<I", 4)))


def test_decoded_columns_are_views_of_the_frame() -> None:
    ev = decode_columns(GOOD)
    assert isinstance(ev.data, memoryview) and bytes(ev.data) == b"abcde"
    assert ev.properties == {0: {"n": 3, "s": "x"}} and ev.count == 3


@given(st.lists(st.tuples(st.integers(0, len(GOOD) - 1), st.integers(0, 255)), min_size=1, max_size=4),
       st.integers(0, len(GOOD)))
def test_mutated_columns_decode_or_raise_decode_error(flips: list[tuple[int, int]], cut: int) -> None:
    body = bytearray(GOOD)
    for at, value in flips:
        body[at] = value
    for candidate in (bytes(body), bytes(body[:cut]), bytes(body) + bytes(body[cut:])):
        with contextlib.suppress(DecodeError):
            decode_columns(candidate)


@given(st.integers(1150, 1165), st.binary(max_size=200))
def test_any_body_decodes_or_raises_decode_error(ptype: int, body: bytes) -> None:
    for table in (codec.CLIENT_FRAMES, codec.SERVER_FRAMES):
        with contextlib.suppress(DecodeError):
            codec.decode(table, ptype, 0, 1, body, None)


def test_a_column_page_sent_in_pieces_is_the_same_frame() -> None:
    # The server writes a page's pieces with one vectored write (the data as the messages hold it).
    frames = []
    for pieces in (False, True):
        c, s = connected_pair()
        s.receive_data(c.send(F.BrowseColumns(5, "Q1", 10, 20, 7, 4096)))
        s.next_event()
        reply = columns(data=(b"abc", b"", b"de"))
        if pieces:
            frames.append(b"".join(s.send_parts(dataclasses.replace(reply, data=b"", data_parts=[b"abc", b"", b"de"]))))
        else:
            frames.append(s.send(reply))
        c.receive_data(frames[-1])
        assert c.next_event() == reply
    assert frames[0] == frames[1]
