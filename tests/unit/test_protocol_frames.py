"""Every client-protocol frame: round trip through the machines, and the byte layout."""

from __future__ import annotations

import struct

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import body, codec, columnframes, seqframes
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import NEED_DATA, ClientConnection, ServerConnection
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.mdcodec import pack_md, unpack_md
from ferrymq.wire.gpacket import MAGIC, GPacket
from ferrymq.wire.mqmd import MQMD

MD = MQMD(version=2, msg_id=b"M" * 24, correl_id=b"C" * 24, format="MQSTR", put_date="20240101",
          put_time="12000000", reply_to_q="REPLY", priority=4, persistence=1, put_appl_name="app")
MD1 = MQMD(version=1, format="MQSTR", user_identifier="bob")


def connected_pair() -> tuple[ClientConnection, ServerConnection]:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, "QM1")))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, qmgr_name="QM1", max_msg_length=1 << 20)))
    c.next_event()
    return c, s


REQUESTS: list[E.ClientEvent] = [
    E.Disconnect(7),
    E.Open(7, "Q1", C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED, C.MQOT_Q, "QM2", "DYN.*", "alt", "color = 'red'"),
    E.Close(7, 3, C.MQCO_DELETE),
    E.Put(7, 3, MD, b"data", C.MQPMO_SYNCPOINT, 9, {"color": "red", "n": 5, "ok": True, "f": 1.5}),
    E.Put(7, 3, MD1, b"", reply=False),
    E.Put1(7, "Q1", MD, b"x" * 1000, C.MQPMO_NEW_MSG_ID, C.MQOT_Q, "QM2", "alt", 0),
    E.Get(7, 3, MD, C.MQGMO_WAIT, 5000, C.MQMO_MATCH_CORREL_ID, 100, b"T" * 16),
    E.Commit(7),
    E.Backout(7),
    E.Inquire(7, 3, (C.MQIA_CURRENT_Q_DEPTH, C.MQIA_MAX_Q_DEPTH), (C.MQCA_Q_NAME,)),
    E.Set(7, 3, {C.MQIA_INHIBIT_PUT: 1}, {C.MQCA_TRIGGER_DATA: "td"}),
    E.Heartbeat(7, reply=True),
    E.Stat(7),
    E.Consume(7, 3, 100, C.MQGMO_FAIL_IF_QUIESCING),
]

REPLIES: list[tuple[E.ClientEvent, E.ServerEvent]] = [
    (E.Open(7, "Q1", 16), E.OpenReply(7, 0xFFFFFFF0, "Q1", "Q1", "QM1")),
    (E.Put(7, 3, MD, b"d"), E.PutReply(7, pack_md(MD), "Q1", "QM1", C.MQCC_WARNING, 2104, "warn")),
    (E.Get(7, 3, MD), E.GetReply(7, pack_md(MD), b"abc", 10, b"t" * 16, "Q1", {"p": "v"}, 1, 2079, "")),
    (E.Inquire(7, 3, (1, 2), (2016,)), E.InquireReply(7, (5, -1), ("Q1",))),
    (E.Stat(7), E.StatReply(7, 10, 1, 2, C.MQCC_FAILED, 2053, "full")),
    (E.Heartbeat(7, reply=True), E.HeartbeatReply(7)),
    (E.Commit(7), E.Reply(7, C.MQCC_FAILED, C.MQRC_BACKED_OUT, "backed out: reason")),
    # The status every reply starts with has a short form for MQCC_OK / MQRC_NONE / no
    # detail: each part alone must still travel.
    (E.Get(7, 3, MD), E.GetReply(7, pack_md(MD), b"abc", 3, b"t" * 16, "Q" * 48)),
    (E.Get(7, 3, MD), E.GetReply(7, pack_md(MD), b"", 0, b"t" * 16, "", None, 0, 0, "detail only")),
    (E.Get(7, 3, MD), E.GetReply(7, pack_md(MD), b"", 0, b"t" * 16, "Q1", None, 0, C.MQRC_TRUNCATED_MSG_ACCEPTED)),
    (E.Commit(7), E.Reply(7, C.MQCC_WARNING)),
    (E.Commit(7), E.Reply(7)),
]


def _norm(ev: object) -> object:
    """Requests decode their MQMD as an object; normalise packed bytes the same way."""
    md = getattr(ev, "md", None)
    if isinstance(md, bytes):
        import dataclasses

        return dataclasses.replace(ev, md=unpack_md(md)[0])  # type: ignore[type-var]
    return ev


@pytest.mark.parametrize("ev", REQUESTS, ids=lambda e: type(e).__name__)
def test_request_round_trip(ev: E.ClientEvent) -> None:
    c, s = connected_pair()
    s.receive_data(c.send(ev))
    assert s.next_event() == ev


def test_packed_md_round_trips_as_object() -> None:
    c, s = connected_pair()
    s.receive_data(c.send(E.Put(2, 3, pack_md(MD), b"d")))
    assert s.next_event() == E.Put(2, 3, MD, b"d")


@pytest.mark.parametrize(("req", "reply"), REPLIES, ids=lambda e: type(e).__name__)
def test_reply_round_trip(req: E.ClientEvent, reply: E.ServerEvent) -> None:
    c, s = connected_pair()
    s.receive_data(c.send(req))
    s.next_event()
    c.receive_data(s.send(reply))
    assert c.next_event() == reply


def test_server_initiated_frames_round_trip() -> None:
    c, s = connected_pair()
    s.receive_data(c.send(E.Consume(5, 3, 10)))
    s.next_event()
    pushed = E.Pushed(3, pack_md(MD1), b"payload", 7, b"k" * 16)
    for ev in (pushed, E.PersistentNext(3), E.Heartbeat(), E.Ending(C.MQRC_Q_MGR_STOPPING, "stopping")):
        c.receive_data(s.send(ev))
        assert c.next_event() == ev


def test_a_connect_password_travels_but_never_shows() -> None:
    ev = E.Connect(1, "QM1", "app", "bob", password="s3cret")
    raw = ClientConnection().send(ev)
    assert raw.endswith(b"\x00\x03bob\x00\x06s3cret\x00\x00" + bytes(8))  # the channel (blank), pid, tid
    assert "s3cret" not in repr(ev)
    server = ServerConnection()
    server.receive_data(raw)
    got = server.next_event()
    assert isinstance(got, E.Connect) and got.password == "s3cret" and "s3cret" not in repr(got)


def test_a_connect_carries_the_process_and_thread_ids_or_none() -> None:
    server = ServerConnection()
    server.receive_data(ClientConnection().send(E.Connect(1, "QM1", "app", pid=4242, tid=17)))
    got = server.next_event()
    assert isinstance(got, E.Connect) and (got.pid, got.tid) == (4242, 17)
    older = ClientConnection().send(E.Connect(1, "QM1", "app"))[:-8]  # a client from before the ids
    older = older[:4] + struct.pack(">i", len(older)) + older[8:]
    server = ServerConnection()
    server.receive_data(older)
    got = server.next_event()
    assert isinstance(got, E.Connect) and (got.pid, got.tid, got.appl_name) == (0, 0, "app")
    with pytest.raises(LocalProtocolError):
        ClientConnection().send(E.Connect(1, "QM1", pid=1 << 31))
    for tail in (struct.pack(">II", 1 << 31, 1), b"\x00\x00\x00\x01"):  # above an MQCFIN; not 8 bytes
        raw = ClientConnection().send(E.Connect(1, "QM1"))[:-8] + tail
        raw = raw[:4] + struct.pack(">i", len(raw)) + raw[8:]
        server = ServerConnection()
        with pytest.raises((DecodeError, RemoteProtocolError)):
            server.receive_data(raw)
            server.next_event()


def test_connect_layout_is_a_gpacket() -> None:
    raw = ClientConnection().send(E.Connect(1, "QM1", "app", "bob", 6, 1, 1, 65536, 30000, 0, channel="APP.SVRCONN"))
    version, ptype, size, magic, props, ts, seq, flags = struct.unpack_from(">hhiiiqqI", raw)
    assert (version, ptype, size, magic, props, ts, seq, flags) == (350, 1100, len(raw), MAGIC, 0, 0, 1, 1)
    body = raw[36:]
    assert body == (struct.pack(">HHIIii", 1, 1, 65536, 30000, 0, 6) + b"\x00\x03QM1\x00\x03app\x00\x03bob\x00\x00"
                    + b"\x00\x0bAPP.SVRCONN" + bytes(8))
    packet = GPacket.unpack_from(raw)  # the wire codec reads it as a GPacket
    assert packet.type == codec.T_CONNECT and packet.sequence == 1 and packet.flags == 1


def test_put_layout_carries_md_bytes_props_then_data() -> None:
    c, _ = connected_pair()
    raw = c.send(E.Put(9, 4, MD, b"hello", C.MQPMO_SYNCPOINT, 0, None, reply=False))
    assert struct.unpack_from(">h", raw, 2)[0] == codec.T_PUT
    assert struct.unpack_from(">I", raw, 32)[0] == 0  # no reply expected: flag A clear
    assert raw[36:48] == struct.pack(">IiI", 4, C.MQPMO_SYNCPOINT, 0)
    assert raw[48 : 48 + 364] == MD.pack()  # the exact MQMD v2 bytes
    assert raw[48 + 364 :] == b"\0\0\0\0hello"  # no properties (length 0), then the data


def test_properties_travel_typed_in_the_payload() -> None:
    props = PropertySet()
    props.set("k", "v")
    props.set("n", 7, C.MQTYPE_INT8)
    props.set("b", b"\x01\x02")
    props.set("z", None)
    c, s = connected_pair()
    raw = c.send(E.Put(9, 4, MD1, b"x", properties=props))
    packet = GPacket.unpack_from(raw)
    assert packet.properties is None  # the GPacket section cannot hold bytes, nulls or MQ types
    assert packet.payload.endswith(b"x")
    s.receive_data(raw)
    ev = s.next_event()
    assert isinstance(ev, E.Put) and ev.data == b"x" and ev.properties == props
    assert ev.properties is not None and ev.properties.type_of("n") == C.MQTYPE_INT8


def test_get_carries_the_message_handle_flag() -> None:
    c, s = connected_pair()
    for handle in (False, True):
        s.receive_data(c.send(E.Get(5 + handle, 4, MD1, msg_handle=handle)))
        ev = s.next_event()
        assert isinstance(ev, E.Get) and ev.msg_handle is handle


def test_reply_layout() -> None:
    c, s = connected_pair()
    s.receive_data(c.send(E.Commit(4)))
    s.next_event()
    raw = s.send(E.Reply(4, 2, 2003, "why"))
    assert struct.unpack_from(">hhi", raw) == (350, codec.T_REPLY, 36 + 13)
    assert raw[36:] == struct.pack(">iiH", 2, 2003, 3) + b"why"


def test_md_codec_matches_reference_both_versions() -> None:
    for md in (MD, MD1, MQMD()):
        assert pack_md(md) == md.pack()
        assert unpack_md(md.pack())[0] == MQMD.unpack_from(md.pack())
    big = MD.pack(big_endian=True)
    assert unpack_md(big)[0] == MD


def test_every_packet_type_has_a_decoder_in_one_direction() -> None:
    types = {v for mod in (codec, seqframes, columnframes) for k, v in vars(mod).items() if k.startswith("T_")}
    assert types == set(codec.CLIENT_FRAMES) | set(codec.SERVER_FRAMES) | {codec.T_CONNECT_REPLY}
    assert all(1100 <= t <= 1199 for t in types)



def test_properties_decoded_once_are_each_messages_own() -> None:
    props = PropertySet()
    props.set("mqps.Top", "a/b")
    field = body.props(props)
    r = body.Reader(bytearray(field * 3), "PUSHED_BATCH")
    sets = [r.props() for _ in range(3)]
    assert all(p == props for p in sets)
    assert len({id(p) for p in sets}) == 3  # a receiver may change its own without changing the others
    assert sets[0] is not None
    sets[0]["mqps.Top"] = "changed"
    assert body.Reader(field, "PUSHED_BATCH").props() == props
    bad = b"\0" * 8 + field[:-1] + b"\xff"  # the value's last byte no longer UTF-8
    with pytest.raises(DecodeError) as excinfo:
        body.Reader(bad, "X", 8).props()
    assert excinfo.value.offset >= 8  # where it lies in the frame, not in the set alone


def test_a_reply_queue_name_is_decoded_once_and_the_table_is_bounded() -> None:
    """A getter's replies name one queue again and again: the name's text is found by its
    bytes, not decoded for every reply; the table starts again when full, and a name that
    is not ASCII is left to the general decoder (None)."""
    c, s = connected_pair()
    got = []
    for corr in (2, 3):
        s.receive_data(c.send(E.Get(corr, 3, MD, 0, 0, 0, 1024, bytes(16))))
        assert isinstance(s.next_event(), E.Get)
        data = s.send(E.GetReply(corr, MD.pack(version=2), b"body", 4, bytes(16), "REPLY.QUEUE"))
        ev = c.take_event(data)
        assert isinstance(ev, E.GetReply) and ev.resolved_q_name == "REPLY.QUEUE"
        got.append(ev.resolved_q_name)
    assert got[0] is got[1]
    assert body.NAME_STRS[b"REPLY.QUEUE"] is got[0]
    for i in range(1100):
        assert body.name_str(b"Q%d" % i) == f"Q{i}"
    assert len(body.NAME_STRS) <= 1024
    assert body.name_str("Q.\u00e9".encode()) is None


def test_frame_begun_says_when_packet_room_can_give_room() -> None:
    """A driver asks ``packet_room`` only while ``frame_begun``: it is set when a frame's
    header is in and its body is not, and cleared once the frame is taken (a whole reply
    never sets it)."""
    c, s = connected_pair()
    s.receive_data(c.send(E.Get(2, 3, MD, 0, 0, 0, 1024, bytes(16))))
    s.next_event()
    whole = s.send(E.GetReply(2, MD.pack(version=2), b"x" * 300, 300, bytes(16), "Q1"))
    assert isinstance(c.take_event(whole), E.GetReply)
    assert not c.frame_begun and c.packet_room(1) is None
    s.receive_data(c.send(E.Get(3, 3, MD, 0, 0, 0, 1024, bytes(16))))
    s.next_event()
    split = s.send(E.GetReply(3, MD.pack(version=2), b"y" * 300, 300, bytes(16), "Q1"))
    assert c.take_event(split[:40]) is None  # not a whole packet: the general way's
    c.receive_data(split[:40])
    assert c.next_event() is NEED_DATA
    assert c.frame_begun  # the header is in: room may be given (for the frames that take it)
    assert c.take_event(split[40:]) is None  # a frame is begun: the general way's
    c.receive_data(split[40:])
    ev = c.next_event()
    assert isinstance(ev, E.GetReply) and ev.data == b"y" * 300
    assert not c.frame_begun
