"""Sequence-range and prepared-unit frames (1150..1169): round trips through the protocol
machines, the byte layout, and malformed bodies refused with DecodeError only."""

from __future__ import annotations

import contextlib
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrymq.errors import DecodeError
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


PAIRS: list[tuple[Any, Any]] = [
    (F.SeqRange(5, "Q1"), F.SeqRangeReply(5, "Q1", 3, 1 << 40, 17)),
    (F.BrowseRange(5, "Q1", 10, 20, 7, 4096),
     F.BrowseRangeReply(5, [F.RangeEntry(10, 1.75e9, MD, {"n": 3, "s": "x"}, b"data"),
                            F.RangeEntry(11, 1.75e9 + 0.5, MD, {}, b"")])),
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


@given(st.integers(1150, 1163), st.binary(max_size=200))
def test_any_body_decodes_or_raises_decode_error(ptype: int, body: bytes) -> None:
    for table in (codec.CLIENT_FRAMES, codec.SERVER_FRAMES):
        with contextlib.suppress(DecodeError):
            codec.decode(table, ptype, 0, 1, body, None)
