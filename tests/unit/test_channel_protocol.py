"""The channel protocol's frames and machine: round trips, any chunking, bounded lengths,
the order of frames, and the negotiation."""

from __future__ import annotations

import dataclasses

import pytest

from ferrymq.protocol import channel as P
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError

HELLO = P.Hello("QM1.TO.QM2", "QM1", 50, 4_194_304, 300, 999_999_999, 7, 0)
ACK = P.HelloAck(0, "QM2", 20, 1_048_576, 600, 6, "ok")


def conversation() -> tuple[P.ChannelConnection, P.ChannelConnection, bytes]:
    sender, receiver = P.ChannelConnection(sender=True), P.ChannelConnection(sender=False)
    wire = sender.send(HELLO)
    receiver.receive_data(wire)
    assert list(receiver.events()) == [HELLO]
    sender.receive_data(receiver.send(ACK))
    assert list(sender.events()) == [ACK]
    return sender, receiver, wire


def test_every_frame_round_trips_in_any_chunking() -> None:
    sender, _receiver, _ = conversation()
    frames = [P.Message(b"\0" * 1000), P.Message(b""), P.Message(b"data", b"props"), P.Message(b"np", b"", True),
              P.BatchEnd(8, 2), P.Heartbeat(), P.Close(0, "bye")]
    wire = b"".join(sender.send(f) for f in frames)
    for size in (1, 3, 13, len(wire)):
        r = P.ChannelConnection(sender=False)
        r.said_hello = r.acked = True
        got = []
        for i in range(0, len(wire), size):
            r.receive_data(wire[i:i + size])
            got.extend(r.events())
        assert got == frames
    assert P.encode(P.Confirm(8, 0))[:4] == b"FMQC" and len(P.encode(P.Confirm(8, 0))) == 12 + 8


def test_a_message_longer_than_a_read_is_gathered_then_read_with_what_follows() -> None:
    """A frame cut by the reads: short cuts joined with the next read, a long frame gathered
    read by read; the frames after it in its last read come out with it, and the bytes not
    yet decoded are what ``buffer`` says."""
    sender, _receiver, _ = conversation()
    frames = [P.Message(bytes(range(256)) * 4096, b"props"), P.Message(b"next"), P.BatchEnd(1, 2), P.Message(b"part")]
    wire = b"".join(sender.send(f) for f in frames)
    for size in (5, 65_536, 100_000):
        r = P.ChannelConnection(sender=False)
        r.said_hello = r.acked = True
        r.agreed(2 * 1024 * 1024)
        got: list[P.Event] = []
        for i in range(0, len(wire) - 3, size):
            r.receive_data(bytearray(wire[i:min(i + size, len(wire) - 3)]))
            got.extend(r.events())
        assert got == frames[:3]
        assert r.buffer == wire[-20:-3]
        r.receive_data(wire[-3:])
        assert list(r.events()) == frames[3:] and r.buffer == b""
    r = P.ChannelConnection(sender=False)
    r.said_hello = r.acked = True
    r.receive_data(wire[:70_000])  # beyond the limit agreed: refused before the rest is read
    with pytest.raises(RemoteProtocolError, match="exceeds the limit"):
        list(r.events())


def test_a_batchs_messages_are_framed_and_read_as_every_frame_is() -> None:
    """MESSAGE and FAST_MESSAGE after the handshake take a way of their own at both ends:
    the same bytes as ``encode``, the same events and refusals as ``_decode``."""
    sender, receiver, _ = conversation()
    for ev in (P.Message(b"\0" * 1000), P.Message(b""), P.Message(b"data", b"props"), P.Message(b"np", b"p", True)):
        assert sender.send(ev) == P.encode(ev)
        receiver.receive_data(P.encode(ev))
        assert list(receiver.events()) == [ev]
    for bad in (b"FMQC\x03\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x09x",
                b"FMQC\x03\x00\x00\x00\x00\x00\x00\x02\x00\x00"):
        _s, r, _ = conversation()
        r.receive_data(bad)
        with pytest.raises(RemoteProtocolError):
            list(r.events())


def test_byte_layout_of_hello() -> None:
    frame = P.encode(HELLO)
    assert frame[:12] == b"FMQC\x01\x00\x00\x00" + (4 + 20 + 48 + 7 * 4).to_bytes(4, "big")
    assert frame[-4:] == P.NPMS_NORMAL.to_bytes(4, "big")
    assert frame[12:16] == (1).to_bytes(4, "big") and frame[16:36] == b"QM1.TO.QM2".ljust(20)


def test_lengths_are_bounded_before_reading() -> None:
    r = P.ChannelConnection(sender=False)
    r.receive_data(b"FMQC\x01\x00\x00\x00" + (P.HANDSHAKE_LIMIT + 1).to_bytes(4, "big"))
    with pytest.raises(RemoteProtocolError):
        list(r.events())
    _sender, receiver, _ = conversation()
    receiver.agreed(1000)
    receiver.receive_data(b"FMQC\x03\x00\x00\x00" + (1000 + P.SLACK + 1).to_bytes(4, "big"))
    with pytest.raises(RemoteProtocolError):
        list(receiver.events())


@pytest.mark.parametrize("wire", [b"XXXX\x01\x00\x00\x00\x00\x00\x00\x00", P.encode(P.Message(b"x")),
                                  P.encode(P.Confirm(1)),
                                  b"FMQC\x03\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x09x", b"FMQC\x09\x00\x00\x00\x00\x00\x00\x00",
                                  b"FMQC\x01\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x01"])
def test_bad_or_early_frames_are_refused(wire: bytes) -> None:
    r = P.ChannelConnection(sender=False)
    r.receive_data(wire)
    with pytest.raises(RemoteProtocolError):
        list(r.events())


def test_each_end_sends_only_its_frames() -> None:
    sender, receiver, _ = conversation()
    with pytest.raises(LocalProtocolError):
        receiver.send(P.Message(b"x"))
    with pytest.raises(LocalProtocolError):
        sender.send(P.Confirm(1))
    receiver.receive_data(P.encode(P.Confirm(1)))
    with pytest.raises(RemoteProtocolError):
        list(receiver.events())
    with pytest.raises(LocalProtocolError):
        P.ChannelConnection(sender=True).send(P.Message(b"early"))


def test_negotiation_takes_the_smaller_batch_and_length_the_larger_heartbeat() -> None:
    assert P.negotiate(HELLO, 20, 1_048_576, 600) == (20, 1_048_576, 600)
    assert P.negotiate(HELLO, 100, 0, 60) == (50, 4_194_304, 300)


def test_npmspeed_is_fast_only_when_both_ends_say_so_and_old_frames_mean_normal() -> None:
    fast = P.Hello("C", "QM1", 50, 1000, 5, 999_999_999, npm_speed=P.NPMS_FAST)
    assert P.npm_speed(fast, P.NPMS_FAST) == P.NPMS_FAST
    assert P.npm_speed(fast, P.NPMS_NORMAL) == P.npm_speed(HELLO, P.NPMS_FAST) == P.NPMS_NORMAL
    assert P.encode(P.Message(b"x", b"", True))[4] == P.FAST_MESSAGE
    # a HELLO and a HELLO_ACK of an older end, without the field: NORMAL
    old_hello = P.encode(fast)[:-4]
    old_hello = old_hello[:8] + (len(old_hello) - 12).to_bytes(4, "big") + old_hello[12:]
    r = P.ChannelConnection(sender=False)
    r.receive_data(old_hello)
    assert list(r.events()) == [P.Hello("C", "QM1", 50, 1000, 5, 999_999_999)]
    old_ack = P.encode(ACK)[:-4]
    old_ack = old_ack[:8] + (len(old_ack) - 12).to_bytes(4, "big") + old_ack[12:]
    s = P.ChannelConnection(sender=True)
    s.send(HELLO)
    s.receive_data(old_ack)
    assert [a.npm_speed for a in s.events() if isinstance(a, P.HelloAck)] == [P.NPMS_NORMAL]
    bad = P.encode(P.Hello("C", "QM1", 50, 1000, 5, 999_999_999, npm_speed=7))
    r = P.ChannelConnection(sender=False)
    r.receive_data(bad)
    with pytest.raises(RemoteProtocolError):
        list(r.events())


def test_a_converting_sender_asks_and_learns_the_receivers_ccsid() -> None:
    asking = P.Hello("QM1.TO.QM2", "QM1", 50, 4_194_304, 300, 999_999_999, 0, 0, P.NPMS_NORMAL, True)
    told = P.HelloAck(0, "QM2", 20, 1_048_576, 600, 6, "", P.NPMS_NORMAL, 500, 546)
    sender, receiver = P.ChannelConnection(sender=True), P.ChannelConnection(sender=False)
    receiver.receive_data(sender.send(asking))
    assert list(receiver.events()) == [asking]
    sender.receive_data(receiver.send(told))
    assert list(sender.events()) == [told]
    # Without CONVERT(YES) neither frame carries anything more than before.
    assert len(P.encode(asking)) == len(P.encode(HELLO)) + 4
    assert len(P.encode(told)) == len(P.encode(P.HelloAck(0, "QM2", 20, 1_048_576, 600, 6, ""))) + 8


@pytest.mark.parametrize("extra", [b"\0", b"\0" * 5, b"\0" * 9])
def test_hello_and_ack_with_odd_trailers_are_refused(extra: bytes) -> None:
    for frame, sender in ((P.encode(HELLO), False), (P.encode(ACK), True)):
        head, body = frame[:12], frame[12:] + extra
        conn = P.ChannelConnection(sender=sender)
        conn.said_hello = sender  # a sender has said HELLO before its HELLO_ACK comes
        conn.receive_data(head[:8] + len(body).to_bytes(4, "big") + body)
        with pytest.raises(RemoteProtocolError):
            list(conn.events())


def receiving(frame: P.Event) -> P.ChannelConnection:
    """The end that takes ``frame``, in the state where it may come."""
    sender, receiver, _ = conversation()
    if isinstance(frame, P.Hello):
        return P.ChannelConnection(sender=False)
    if isinstance(frame, P.HelloAck):
        conn = P.ChannelConnection(sender=True)
        conn.send(HELLO)
        return conn
    if isinstance(frame, P.PingAck):
        conn = P.ChannelConnection(sender=True)
        conn.send(P.Ping("C", "QM1", bytes(16)))
        return conn
    return sender if isinstance(frame, P.Confirm) else receiver


BEYOND = {"HELLO BATCHSZ": dataclasses.replace(HELLO, batch_size=10_000),
          "HELLO MAXMSGL": dataclasses.replace(HELLO, max_msg_length=104_857_601),
          "HELLO HBINT": dataclasses.replace(HELLO, heartbeat=0xFFFFFFFF),
          "HELLO SEQWRAP": dataclasses.replace(HELLO, seq_wrap=1_000_000_000),
          "HELLO in-doubt sequence": dataclasses.replace(HELLO, in_doubt_seq=0x80000000),
          "HELLO reset sequence": dataclasses.replace(HELLO, reset_to=0xFFFFFFFF),
          "HELLO_ACK reason": dataclasses.replace(ACK, reason=0x80000000),
          "HELLO_ACK BATCHSZ": dataclasses.replace(ACK, batch_size=0xFFFFFFFF),
          "HELLO_ACK MAXMSGL": dataclasses.replace(ACK, max_msg_length=0xFFFFFFFF),
          "HELLO_ACK HBINT": dataclasses.replace(ACK, heartbeat=1_000_000),
          "HELLO_ACK sequence": dataclasses.replace(ACK, last_seq=0xFFFFFFFF),
          "HELLO_ACK CCSID": dataclasses.replace(ACK, ccsid=0x80000000, encoding=546),
          "HELLO_ACK Encoding": dataclasses.replace(ACK, ccsid=1208, encoding=0xFFFFFFFF),
          "PING_ACK reason": P.PingAck(0xFFFFFFFF, "QM2", b""),
          "BATCH_END sequence": P.BatchEnd(0xFFFFFFFF, 0),
          "BATCH_END messages": P.BatchEnd(1, 0x80000000),
          "CONFIRM sequence": P.Confirm(1_000_000_000),
          "CONFIRM reason": P.Confirm(1, 0xFFFFFFFF),
          "CLOSE reason": P.Close(0x80000000, "x")}


@pytest.mark.parametrize("frame", BEYOND.values(), ids=BEYOND.keys())
def test_a_number_beyond_its_range_is_refused(frame: P.Event) -> None:
    """A partner's u32 beyond IBM's range (HBINT 999999, SEQWRAP 999999999, an MQLONG) was
    kept: an agreed HBINT of 0xFFFFFFFF or a reset sequence of 0xFFFFFFFF reached the
    channel's status, and PCF's DISPLAY CHSTATUS then failed packing it as a signed MQLONG."""
    conn = receiving(frame)
    conn.receive_data(P.encode(frame))
    with pytest.raises(RemoteProtocolError, match="beyond"):
        list(conn.events())


TOPS = [dataclasses.replace(HELLO, batch_size=9999, max_msg_length=104_857_600, heartbeat=999_999,
                            in_doubt_seq=999_999_999, reset_to=999_999_999),
        P.HelloAck(0x7FFFFFFF, "QM2", 9999, 104_857_600, 999_999, 999_999_999, "", P.NPMS_NORMAL, 0x7FFFFFFF,
                   0x7FFFFFFF),
        P.PingAck(0x7FFFFFFF, "QM2", b""), P.BatchEnd(999_999_999, 0x7FFFFFFF), P.Confirm(999_999_999, 0x7FFFFFFF),
        P.Close(0x7FFFFFFF)]


@pytest.mark.parametrize("frame", TOPS, ids=[type(f).__name__ for f in TOPS])
def test_the_top_of_each_range_is_taken(frame: P.Event) -> None:
    conn = receiving(frame)
    conn.receive_data(P.encode(frame))
    assert list(conn.events()) == [frame]


def test_send_and_receive_exits_see_payloads_after_the_handshake() -> None:
    sender, receiver = P.ChannelConnection(sender=True), P.ChannelConnection(sender=False)
    seen: list[bytes] = []

    def scramble(payload: bytes) -> bytes:
        seen.append(payload)
        return payload[::-1] + b"!"

    sender.outbound = scramble
    receiver.inbound = lambda payload: payload[:-1][::-1]
    wire = sender.send(HELLO)
    assert seen == [] and wire == P.encode(HELLO)  # HELLO never goes through the exits
    receiver.receive_data(wire)
    assert list(receiver.events()) == [HELLO]
    sender.receive_data(receiver.send(ACK))
    assert list(sender.events()) == [ACK]
    message = P.Message(b"payload", b"props")
    frame = sender.send(message)
    assert frame != P.encode(message) and len(frame) == len(P.encode(message)) + 1 and len(seen) == 1
    for i in range(len(frame)):  # one byte at a time: the exit sees whole payloads only
        receiver.receive_data(frame[i:i + 1])
        got = list(receiver.events())
    assert got == [message]
    receiver.inbound = lambda payload: payload + bytes(P.SLACK + ACK.max_msg_length)
    receiver.agreed(ACK.max_msg_length)
    receiver.receive_data(sender.send(P.Heartbeat()))
    with pytest.raises(RemoteProtocolError, match="after the receive exit"):
        list(receiver.events())


def test_security_frames_and_the_handshake_word() -> None:
    hello = P.Hello("C", "QM1", 50, 1000, 300, 999_999_999, 0, 0, P.NPMS_FAST, security=1)
    ack = P.HelloAck(0, "QM2", 50, 1000, 300, 0, "", P.NPMS_FAST, security=1)
    both = P.HelloAck(0, "QM2", 50, 1000, 300, 0, "", P.NPMS_FAST, 1208, 546, security=1)
    for frame in (ack, both):  # with and without the CCSID a converting sender asked for
        conn = P.ChannelConnection(sender=True)
        conn.said_hello = True
        conn.receive_data(P.encode(frame))
        assert list(conn.events()) == [frame]
    sender, receiver = P.ChannelConnection(sender=True), P.ChannelConnection(sender=False)
    receiver.receive_data(sender.send(hello))
    assert list(receiver.events()) == [hello]
    sender.receive_data(receiver.send(ack))
    assert list(sender.events()) == [ack]
    steps = [P.Security(P.SEC_REQUEST, b"challenge"), P.Security(P.SEC_SEND, b""), P.Security(P.SEC_DONE)]
    for step in steps:
        receiver.receive_data(sender.send(step))
        sender.receive_data(receiver.send(step))
    assert list(receiver.events()) == steps and list(sender.events()) == steps
    bad = P.ChannelConnection(sender=False)
    bad.said_hello = bad.acked = True
    bad.receive_data(b"FMQC\x0c\x00\x00\x00" + (4).to_bytes(4, "big") + (7).to_bytes(4, "big"))
    with pytest.raises(RemoteProtocolError, match="SECURITY step 7"):
        list(bad.events())
    plain = P.Hello("C", "QM1", 50, 1000, 300, 999_999_999, 0, 0, 2)
    assert len(P.encode(hello)) == len(P.encode(plain)) + 4 and P.encode(hello)[-4:] == (2).to_bytes(4, "big")


def test_pipelining_is_a_flag_of_each_handshake_frame_and_absent_when_off() -> None:
    asking = P.Hello("C", "QM1", 50, 1000, 300, 999_999_999, 3, 0, pipelined=True)
    agreed = P.HelloAck(0, "QM2", 50, 1000, 300, 2, "", pipelined=True)
    sender, receiver = P.ChannelConnection(sender=True), P.ChannelConnection(sender=False)
    receiver.receive_data(sender.send(asking))
    assert list(receiver.events()) == [asking]
    sender.receive_data(receiver.send(agreed))
    assert list(sender.events()) == [agreed]
    assert P.encode(asking)[-4:] == (4).to_bytes(4, "big")
    assert P.encode(agreed)[-12:] == bytes(8) + (4).to_bytes(4, "big")  # no CCSID asked: 0 0, then the flags
    # Off, neither frame carries more than an older end writes or reads.
    assert len(P.encode(P.Hello("C", "QM1", 50, 1000, 300, 999_999_999, 3, 0))) == len(P.encode(asking)) - 4
    assert len(P.encode(P.HelloAck(0, "QM2", 50, 1000, 300, 2, ""))) == len(P.encode(agreed)) - 12
    both = P.HelloAck(0, "QM2", 50, 1000, 300, 2, "", P.NPMS_NORMAL, 1208, 546, security=1, pipelined=True)
    conn = P.ChannelConnection(sender=True)
    conn.said_hello = True
    conn.receive_data(P.encode(both))
    assert list(conn.events()) == [both]


def test_a_request_turns_the_end_that_takes_it_into_the_sender() -> None:
    requester, partner = P.ChannelConnection(sender=False), P.ChannelConnection(sender=False)
    partner.receive_data(requester.send(P.Request("PULL.QM2", "QM1")))
    assert list(partner.events()) == [P.Request("PULL.QM2", "QM1")]
    with pytest.raises(LocalProtocolError):
        requester.send(P.Request("PULL.QM2", "QM1"))  # once
    requester.receive_data(partner.send(P.Hello("PULL.QM2", "QM2", 50, 4096, 300, 999_999_999)))
    assert isinstance(next(requester.events()), P.Hello)
    partner.receive_data(requester.send(P.HelloAck(0, "QM1", 50, 4096, 300, 0)))
    assert isinstance(next(partner.events()), P.HelloAck)
    # a REQUEST after HELLO, or to a sender, is refused
    late = P.ChannelConnection(sender=False)
    late.receive_data(P.encode(P.Hello("C", "Q", 1, 1, 1, 1)) + P.encode(P.Request("C", "Q")))
    with pytest.raises(RemoteProtocolError):
        list(late.events())
    with pytest.raises(LocalProtocolError):
        P.ChannelConnection(sender=True).send(P.Request("C", "Q"))
    short = P.ChannelConnection(sender=False)
    short.receive_data(b"FMQC\x0d\x00\x00\x00\x00\x00\x00\x01x")  # a REQUEST of 1 byte
    with pytest.raises(RemoteProtocolError):
        list(short.events())
