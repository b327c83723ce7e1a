"""The machines' rules: order, correlation, limits, read-ahead, end of stream."""

from __future__ import annotations

import struct

import pytest

from ferrymq.protocol import events as E
from ferrymq.protocol.connection import (
    CLOSED,
    HANDSHAKE_LIMIT,
    NEED_DATA,
    ClientConnection,
    ServerConnection,
    State,
)
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.wire.mqmd import MQMD

MD = MQMD(version=2)


def pair(max_len: int = 1000) -> tuple[ClientConnection, ServerConnection]:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, max_msg_length=max_len)))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, max_msg_length=max_len)))
    c.next_event()
    return c, s


def test_request_before_connect_is_refused_both_ways() -> None:
    with pytest.raises(LocalProtocolError):
        ClientConnection().send(E.Commit(1))
    c, _ = pair()
    s = ServerConnection()
    s.receive_data(c.send(E.Commit(2)))
    with pytest.raises(RemoteProtocolError, match="before Connect"):
        s.next_event()
    assert s.state is State.ERROR
    with pytest.raises(RemoteProtocolError):  # and it stays broken
        s.next_event()


def test_second_connect_is_a_protocol_error() -> None:
    _c, s = pair()
    s.receive_data(ClientConnection().send(E.Connect(5)))
    with pytest.raises(RemoteProtocolError, match="second Connect"):
        s.next_event()


def test_duplicate_outstanding_corr() -> None:
    c, s = pair()
    c.send(E.Commit(5))
    with pytest.raises(LocalProtocolError):
        c.send(E.Backout(5))
    raw = ClientConnection()
    # forge the same correlation id twice at the server
    s.receive_data(c.send(E.Backout(6)))
    s.next_event()
    c2, _ = pair()
    s.receive_data(c2.send(E.Backout(6)))
    with pytest.raises(RemoteProtocolError, match="still in use"):
        s.next_event()
    del raw


def test_pipelined_replies_may_come_in_any_order() -> None:
    c, s = pair()
    s.receive_data(c.send(E.Commit(2)) + c.send(E.Backout(3)) + c.send(E.Stat(4)))
    assert [type(s.next_event()) for _ in range(3)] == [E.Commit, E.Backout, E.Stat]
    c.receive_data(s.send(E.StatReply(4)) + s.send(E.Reply(2)) + s.send(E.Reply(3)))
    assert [c.next_event().corr for _ in range(3)] == [4, 2, 3]  # type: ignore[union-attr]
    assert c.outstanding == 0


def test_reply_to_nothing_and_wrong_reply_type() -> None:
    c, s = pair()
    with pytest.raises(LocalProtocolError):
        s.send(E.Reply(99))
    s.receive_data(c.send(E.Commit(2)))
    s.next_event()
    with pytest.raises(LocalProtocolError, match="cannot answer"):
        s.send(E.GetReply(2, MD.pack(), b"", 0))
    # the client catches a server that does the same
    c.receive_data(ServerConnection()._pack(E.GetReply(2, MD.pack(), b"", 0)))
    with pytest.raises(RemoteProtocolError, match="cannot answer"):
        c.next_event()


def test_unknown_corr_reply_is_remote_error() -> None:
    c, _ = pair()
    c.receive_data(ServerConnection()._pack(E.Reply(42)))
    with pytest.raises(RemoteProtocolError, match="not outstanding"):
        c.next_event()


def test_oversized_packet_is_refused_on_its_header_alone() -> None:
    s = ServerConnection()
    header = struct.pack(">hhiiiqqI", 350, 1100, HANDSHAKE_LIMIT + 1, 2147476418, 0, 0, 1, 1)
    s.receive_data(header)  # the body is never sent: the length alone is enough
    with pytest.raises(RemoteProtocolError, match=r"size .* outside"):
        s.next_event()


def test_message_longer_than_negotiated_maximum() -> None:
    c, s = pair(max_len=100)
    with pytest.raises(LocalProtocolError, match="negotiated maximum"):
        c.send(E.Put(2, 1, MD, b"x" * 101))
    forged = ClientConnection()._pack(E.Put(2, 1, MD, b"x" * 101))
    s.receive_data(forged)
    with pytest.raises(RemoteProtocolError, match="negotiated maximum"):
        s.next_event()
    # well beyond the frame overhead the header alone condemns it
    _c2, s2 = pair(max_len=100)
    s2.receive_data(struct.pack(">hhiiiqqI", 350, 1108, 10_000_000, 2147476418, 0, 0, 2, 1))
    with pytest.raises(RemoteProtocolError, match=r"size .* outside"):
        s2.next_event()


def test_bad_magic_and_bad_version() -> None:
    s = ServerConnection()
    s.receive_data(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(20))
    with pytest.raises(RemoteProtocolError, match="bad packet"):
        s.next_event()
    raw = bytearray(ClientConnection().send(E.Connect(1)))
    raw[0:2] = (351).to_bytes(2, "big")
    s = ServerConnection()
    s.receive_data(bytes(raw))
    with pytest.raises(RemoteProtocolError):
        s.next_event()


def test_wrong_direction_type() -> None:
    _c, s = pair()
    s.receive_data(ServerConnection()._pack(E.Reply(3)))
    with pytest.raises(RemoteProtocolError, match="not valid in this direction"):
        s.next_event()


def test_trailing_bytes_in_body() -> None:
    raw = bytearray(ClientConnection().send(E.Connect(1)))
    raw += b"\0"
    raw[4:8] = len(raw).to_bytes(4, "big")
    s = ServerConnection()
    s.receive_data(bytes(raw))
    with pytest.raises(RemoteProtocolError, match="8 bytes, 9 present"):  # CONNECT ends in its optional ids
        s.next_event()
    c, s = pair()
    raw = bytearray(c.send(E.Close(2, 3, 0)))
    raw += b"\0"
    raw[4:8] = len(raw).to_bytes(4, "big")
    s.receive_data(bytes(raw))
    with pytest.raises(RemoteProtocolError, match="after the end"):
        s.next_event()


def test_eof_between_and_inside_frames() -> None:
    _, s = pair()
    s.receive_data(b"")
    assert s.next_event() is CLOSED
    c, s = pair()
    s.receive_data(c.send(E.Commit(2))[:-1])
    assert s.next_event() is NEED_DATA
    s.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="inside a packet"):
        s.next_event()


def test_read_ahead_pushes_only_while_consuming() -> None:
    c, s = pair()
    with pytest.raises(LocalProtocolError):
        s.send(E.Pushed(3, MD.pack(), b"", 0))
    s.receive_data(c.send(E.Consume(2, 3, 10)))
    s.next_event()
    c.receive_data(s.send(E.Pushed(3, MD.pack(), b"a", 1)))
    assert isinstance(c.next_event(), E.Pushed)
    c.send(E.Credit(3, 1))
    with pytest.raises(LocalProtocolError):
        c.send(E.Consume(4, 3, 10))
    c.receive_data(s.send(E.Reply(2)))  # the Consume's reply ends the read-ahead
    assert c.next_event() == E.Reply(2)
    with pytest.raises(LocalProtocolError):
        c.send(E.Credit(3, 1))
    with pytest.raises(LocalProtocolError):
        s.send(E.Pushed(3, MD.pack(), b"", 0))
    c.receive_data(ServerConnection()._pack(E.Pushed(3, MD.pack(), b"", 0)))
    with pytest.raises(RemoteProtocolError, match="not consuming"):
        c.next_event()


def test_async_put_needs_no_reply() -> None:
    c, s = pair()
    s.receive_data(c.send(E.Put(0, 1, MD, b"x", reply=False)) * 3)
    assert [s.next_event().reply for _ in range(3)] == [False] * 3  # type: ignore[union-attr]
    assert s.outstanding == 0 and c.outstanding == 0


def test_failed_connect_closes() -> None:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, "QMX")))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, 2, 2058, "no")))
    reply = c.next_event()
    assert isinstance(reply, E.ConnectReply) and reply.reason == 2058
    assert c.state is State.CLOSED and s.state is State.CLOSED


def test_ending_closes_the_client() -> None:
    c, s = pair()
    c.receive_data(s.send(E.Ending(2162, "stop")))
    assert c.next_event() == E.Ending(2162, "stop")
    assert c.state is State.CLOSED
    with pytest.raises(LocalProtocolError):
        c.send(E.Commit(9))


def test_server_heartbeat_probe_is_answered_and_buffered_counts_a_partial_frame() -> None:
    c, s = pair()
    c.receive_data(s.send(E.Heartbeat(0, reply=True)))  # the server's probe: no request outstanding
    probe = c.next_event()
    assert isinstance(probe, E.Heartbeat) and probe.reply
    answer = c.send(E.HeartbeatReply(probe.corr))
    s.receive_data(answer[:10])
    assert s.next_event() is NEED_DATA and s.buffered == 10  # a frame begun
    s.receive_data(answer[10:])
    assert isinstance(s.next_event(), E.HeartbeatReply) and s.buffered == 0


@pytest.mark.parametrize("section", [{}, {"k": 1}, {"JMSType": "x", "n": 2.5}])
def test_a_frame_with_a_gpacket_properties_section_is_a_protocol_error(section: dict[str, object]) -> None:
    """Frames carry no GPacket properties section (message properties travel in the
    payload): one that has one is refused, both ways, not read as if it had none."""
    from ferrymq.wire import gpacket

    c, s = pair()
    props = gpacket.encode_properties(section)  # type: ignore[arg-type]
    c2, s2 = pair()
    s2.receive_data(c2.send(E.Commit(2)))
    s2.next_event()
    for machine, frame in ((s, c.send(E.Commit(2))), (c2, s2.send(E.Reply(2)))):
        with_props = bytearray(frame[:36] + props + frame[36:])
        struct.pack_into(">ii", with_props, 4, len(with_props), gpacket.MAGIC)
        struct.pack_into(">i", with_props, 12, len(props))
        machine.receive_data(bytes(with_props))
        with pytest.raises(RemoteProtocolError, match="properties"):
            machine.next_event()


def test_a_put_that_comes_in_several_reads_is_decoded_in_place() -> None:
    # A large Put rarely comes in one read. Asked for between the reads, the machine keeps
    # the incomplete packet's header; the packet must still be decoded where it lies (its
    # MQMD left in bytes, its body copied once), not copied out and decoded the slow way.
    c = ClientConnection()
    s = ServerConnection(max_msg_length=1 << 20, raw_put_md=True)
    s.receive_data(c.send(E.Connect(1, max_msg_length=1 << 20)))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, max_msg_length=1 << 20)))
    c.next_event()
    body = bytes(range(256)) * 256
    frame = c.send(E.Put(0, 1, pack_md(MD), body, reply=False))
    for cut in (10, 40, 5000, len(frame) - 1):
        s.receive_data(frame[:cut])
        assert s.next_event() is NEED_DATA
        s.receive_data(frame[cut:])
        ev = s.next_event()
        assert isinstance(ev, E.Put) and ev.data == body
        assert isinstance(ev.md, bytes) and MQMD.unpack_from(ev.md) == MD
