"""PutBatch and PushedBatch: layout, bounds, version gating, and the client's coalescing."""

from __future__ import annotations

import struct

import pytest

from ferrymq.client.session import FLUSH_AT, Session
from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import codec
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import NEED_DATA, ClientConnection, ServerConnection
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.framing import pack_packet
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.wire.gpacket import GPacket
from ferrymq.wire.mqmd import MQMD

MD = MQMD(version=2, format="MQSTR", priority=3, persistence=0)
MDB = pack_md(MD)


def pair(version: int = E.PROTOCOL_VERSION) -> tuple[ClientConnection, ServerConnection]:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, "QM1")))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, qmgr_name="QM1", max_msg_length=1 << 16, version=version)))
    c.next_event()
    return c, s


def frame(body: bytes) -> bytes:
    return pack_packet(codec.T_PUT_BATCH, 0, 0, [body], None)


def ids(n: int) -> list[bytes]:
    return [bytes([i]) * 24 for i in range(1, n + 1)]


def test_put_batch_layout_one_header_one_md_then_items() -> None:
    c, s = pair()
    items = list(zip(ids(2), [b"ab", b""], strict=True))
    raw = c.send(E.PutBatch(5, MDB, items, C.MQPMO_NO_SYNCPOINT | C.MQPMO_ASYNC_RESPONSE, 0))
    pkt = GPacket.unpack_from(raw)
    assert pkt.type == codec.T_PUT_BATCH == 1130 and pkt.sequence == 0 and pkt.flags == 0
    body = pkt.payload
    assert struct.unpack_from(">IiII", body) == (5, C.MQPMO_NO_SYNCPOINT | C.MQPMO_ASYNC_RESPONSE, 0, 2)
    assert body[16 : 16 + len(MDB)] == MDB
    rest = body[16 + len(MDB) :]
    assert rest == b"\x01" * 24 + struct.pack(">I", 2) + b"ab" + b"\x02" * 24 + struct.pack(">I", 0)
    s.receive_data(raw)
    ev = s.next_event()
    assert isinstance(ev, E.PutBatch)
    assert (ev.hobj, ev.md, ev.items, ev.context) == (5, MD, items, 0)


def test_pushed_batch_round_trip_and_layout() -> None:
    c, s = pair()
    s.receive_data(c.send(E.Consume(2, 5, 10)))
    assert isinstance(s.next_event(), E.Consume)
    props = PropertySet({"mqps.Top": "news"})
    items: list[codec.MessageItem] = [(MDB, b"one", 3, b"a" * 16, None), (MDB, b"tw", 9, b"b" * 16, props)]
    raw = s.send(E.PushedBatch(5, items))
    body = GPacket.unpack_from(raw).payload
    assert struct.unpack_from(">II", body) == (5, 2)
    assert struct.unpack_from(">I16sI", body, 8) == (3, b"a" * 16, 3)
    at = 8 + 24 + len(MDB)
    assert body[8 + 24 : at] == MDB
    assert body[at : at + 4 + 3] == bytes(4) + b"one"  # no properties: length 0
    second = at + 7 + 24 + len(MDB)
    packed = props_model.pack(props)
    assert struct.unpack_from(">I", body, second) == (len(packed),)
    assert body[second + 4 : second + 4 + len(packed) + 2] == packed + b"tw"
    c.receive_data(raw)
    ev = c.next_event()
    assert isinstance(ev, E.PushedBatch) and ev.items == items


@pytest.mark.parametrize("n", [0, codec.MAX_BATCH + 1])
def test_batch_sizes_outside_the_bounds_are_refused_both_ways(n: int) -> None:
    c, s = pair()
    with pytest.raises(LocalProtocolError, match="batch holds"):
        c.send(E.PutBatch(5, MDB, [(bytes(24), b"x")] * n))
    head = struct.pack(">IiII", 5, 0, 0, n) + MDB
    s.receive_data(frame(head))
    with pytest.raises(RemoteProtocolError, match="batch of"):
        s.next_event()


def test_truncated_item_is_a_protocol_error_naming_the_item() -> None:
    _c, s = pair()
    body = struct.pack(">IiII", 5, 0, 0, 2) + MDB + b"\x01" * 24 + struct.pack(">I", 1) + b"x" + b"\x02" * 24
    body += struct.pack(">I", 50) + b"short"
    s.receive_data(frame(body))
    with pytest.raises(RemoteProtocolError, match="item 1: data of 50 bytes, 5 present"):
        s.next_event()


def test_put_batch_items_decode_as_sent_and_a_cut_item_head_is_named() -> None:
    c, s = pair()
    items = [(bytes([i]) * 24, bytes([i]) * i) for i in range(7)]
    s.receive_data(c.send(E.PutBatch(5, MDB, items)))
    ev = s.next_event()
    assert isinstance(ev, E.PutBatch) and ev.items == items
    _c, s = pair()
    body = struct.pack(">IiII", 5, 0, 0, 2) + MDB + b"\x01" * 24 + struct.pack(">I", 1) + b"x" + b"\x02" * 20
    s.receive_data(frame(body))
    with pytest.raises(RemoteProtocolError, match="needs 28 bytes, 20 present"):
        s.next_event()


def test_batch_item_over_the_negotiated_maximum_is_refused() -> None:
    c, _s = pair()
    with pytest.raises(LocalProtocolError, match="exceeds the negotiated maximum"):
        c.send(E.PutBatch(5, MDB, [(bytes(24), b"x" * ((1 << 16) + 1))]))


def test_batches_need_version_2_on_both_ends() -> None:
    c, s = pair(version=1)
    assert c.batch_limit() == 0 and s.batch_limit() == 0
    with pytest.raises(LocalProtocolError, match="protocol version 2"):
        c.send(E.PutBatch(5, MDB, [(bytes(24), b"x")]))
    body = struct.pack(">IiII", 5, 0, 0, 1) + MDB + bytes(24) + struct.pack(">I", 0)
    s.receive_data(frame(body))
    with pytest.raises(RemoteProtocolError, match="protocol version 2"):
        s.next_event()


def test_pushed_batch_for_a_handle_not_consuming_is_refused() -> None:
    _c, s = pair()
    with pytest.raises(LocalProtocolError, match="not consuming"):
        s.send(E.PushedBatch(9, [(MDB, b"x", 1, bytes(16), None)]))


# -- the client session's coalescing ------------------------------------------------------


def session(version: int = E.PROTOCOL_VERSION) -> tuple[Session, ServerConnection]:
    sess, s = Session(), ServerConnection()
    sess.send(E.Connect(1, "QM1"))
    s.receive_data(sess.take_out())
    s.next_event()
    sess.feed(s.send(E.ConnectReply(1, qmgr_name="QM1", max_msg_length=1 << 20, version=version)))
    return sess, s


def frames(s: ServerConnection, data: bytes) -> list[object]:
    s.receive_data(data)
    out = []
    while (ev := s.next_event()) is not NEED_DATA:
        out.append(ev)
    return out


def async_put(hobj: int, msg_id: bytes, data: bytes, md: bytes = MDB, props: E.Properties | None = None) -> E.Put:
    md = md[:48] + msg_id + md[72:]
    return E.Put(0, hobj, md, data, C.MQPMO_ASYNC_RESPONSE, properties=props, reply=False)


def test_consecutive_async_puts_leave_as_one_batch_in_order() -> None:
    sess, s = session()
    for i, mid in enumerate(ids(5)):
        sess.send(async_put(3, mid, b"m%d" % i))
    assert sess.out_bytes > 0 and not sess.out  # held, but counted for the flush threshold
    (ev,) = frames(s, sess.take_out())
    assert isinstance(ev, E.PutBatch)
    assert ev.items == [(mid, b"m%d" % i) for i, mid in enumerate(ids(5))]


def test_a_different_handle_descriptor_or_properties_starts_a_new_frame() -> None:
    sess, s = session()
    other_md = pack_md(MD.replace(priority=7))
    m = ids(6)
    sess.send(async_put(3, m[0], b"a"))
    sess.send(async_put(3, m[1], b"b"))
    sess.send(async_put(4, m[2], b"c"))  # another handle
    sess.send(async_put(4, m[3], b"d", other_md))  # another descriptor
    sess.send(async_put(4, m[4], b"e", other_md, {"k": 1}))  # properties: a plain Put
    sess.send(E.Commit(9))  # any other request sends what is held first
    evs = frames(s, sess.take_out())
    kinds = [(type(e).__name__, getattr(e, "hobj", None)) for e in evs]
    assert kinds == [("PutBatch", 3), ("Put", 4), ("Put", 4), ("Put", 4), ("Commit", None)]
    assert evs[3].properties == {"k": 1}  # type: ignore[attr-defined]


def test_version_1_server_gets_plain_puts() -> None:
    sess, s = session(version=1)
    for mid in ids(3):
        sess.send(async_put(3, mid, b"x"))
    assert [type(e) for e in frames(s, sess.take_out())] == [E.Put] * 3


def test_batch_frames_stay_under_the_byte_limit() -> None:
    sess, s = session()
    body = b"z" * 20_000
    for mid in ids(10):
        sess.send(async_put(3, mid, body))
    evs = frames(s, sess.take_out())
    batches = [e for e in evs if isinstance(e, E.PutBatch)]
    assert [len(b.items) for b in batches] == [3, 3, 3]  # 64 KiB frames
    assert all(sum(len(d) + 28 for _, d in b.items) <= 64 * 1024 for b in batches)
    assert isinstance(evs[-1], E.Put) and evs[-1].md.msg_id == ids(10)[-1]  # type: ignore[union-attr]  # one left: a plain Put


def test_a_write_the_buffer_forces_keeps_the_next_puts_for_the_next_batch() -> None:
    # A producer's loop as the blocking client drives it (Client._put_async): a write once
    # 64 KiB are buffered, the rest ahead of the commit. The put that found the batch full
    # starts the next one; the forced write must not send it alone as a plain Put.
    sess, s = session()
    body = b"q" * 1024
    m = [i.to_bytes(24, "big") for i in range(1, 201)]
    evs: list[object] = []
    for corr, unit in ((9, m[:100]), (10, m[100:])):
        for mid in unit:
            sess.send(async_put(3, mid, body))
            if sess.out_bytes >= FLUSH_AT:
                evs += frames(s, sess.take_out(hold=True))
                assert sess.out_bytes < FLUSH_AT
        sess.send(E.Commit(corr))
        evs += frames(s, sess.take_out())
    kinds = [type(e).__name__ for e in evs]
    assert kinds == ["PutBatch", "PutBatch", "Commit"] * 2
    assert [i for e in evs if isinstance(e, E.PutBatch) for i, _ in e.items] == m


def test_a_forced_write_sends_a_held_batch_when_nothing_else_is_there() -> None:
    sess, s = session()
    sess.send(async_put(3, ids(1)[0], b"x" * FLUSH_AT))  # one put over the threshold by itself
    assert sess.out_bytes >= FLUSH_AT and not sess.out
    (ev,) = frames(s, sess.take_out(hold=True))
    assert isinstance(ev, E.Put) and sess.out_bytes == 0


def test_get_batch_and_its_reply_round_trip() -> None:
    c, s = pair()
    req = E.GetBatch(4, 7, C.MQGMO_SYNCPOINT | C.MQGMO_WAIT, 500, 50, 1 << 20, 1 << 16)
    raw = c.send(req)
    assert GPacket.unpack_from(raw).payload == struct.pack(">IiiIII", 7, C.MQGMO_SYNCPOINT | C.MQGMO_WAIT, 500, 50,
                                                           1 << 20, 1 << 16)
    s.receive_data(raw)
    assert s.next_event() == req
    items = [(MDB, b"one", 3, b"a" * 16, None), (MDB, b"two", 3, b"b" * 16, None)]
    c.receive_data(s.send(E.GetBatchReply(4, items)))
    assert c.next_event() == E.GetBatchReply(4, items)


def test_get_batch_may_be_answered_by_one_get_reply_and_needs_version_2() -> None:
    c, s = pair()
    s.receive_data(c.send(E.GetBatch(4, 7, C.MQGMO_WAIT, -1, 10)))
    s.next_event()
    c.receive_data(s.send(E.GetReply(4, MDB, b"x", 1)))
    assert isinstance(c.next_event(), E.GetReply)
    old, _ = pair(version=1)
    with pytest.raises(LocalProtocolError, match="protocol version 2"):
        old.send(E.GetBatch(4, 7))
