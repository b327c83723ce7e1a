"""Each frame's decoder of usual values against its general decoder (ferrymq.protocol.layout):
for any body, the same event or the same DecodeError; and each frame's packer against its
general packer: for the events those bodies decode to, the same bytes.

Bodies are made from each frame's declaration, field by field, mostly with the usual values
(an OK status, an MQMD version 2 in little-endian, no properties, ASCII text) and otherwise
with any other (a failed status, a version-1 or big-endian MQMD, properties, UTF-8 text,
bytes that are none of these), then sometimes damaged (cut short, lengthened, a byte
changed), in a bytes object and in a bytearray (a server's receive buffer).
"""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.errors import DecodeError
from ferrymq.protocol import body, codec
from ferrymq.protocol import events as E
from ferrymq.protocol.layout import Frame, Part
from ferrymq.wire.mqmd import MQMD

_DECODERS: list[tuple[str, Frame[Any], Any]] = [
    (f.name, f, f.decode) for f in codec.FRAMES.values() if f.decode is not f.decode_general]
_DECODERS.append(("PUT md_bytes", codec.FRAMES[E.Put], codec.CLIENT_FRAMES_MD_BYTES[codec.T_PUT]))
_PACKERS: list[tuple[str, Frame[Any], Any]] = [
    (f.name, f, f.decode_general) for f in codec.FRAMES.values() if f.pack is not f.pack_general]


def _general(frame: Frame[Any], decode: Any) -> Any:
    return frame.decode_general if decode is frame.decode else frame._decoders(md_as_bytes=True)[0]


def test_frames_with_their_own_fields_have_no_usual_decoder() -> None:
    for f in codec.FRAMES.values():
        if any(isinstance(kind, Part) or kind == "charv" for _, kind in f.fields):
            assert f.decode is f.decode_general
    assert {name for name, _, _ in _DECODERS} >= {"PUT", "GET", "GET_REPLY", "REPLY", "PUT_REPLY", "PUT md_bytes"}


def _text(usual: bool) -> st.SearchStrategy[bytes]:
    if usual:
        raw = st.text(st.characters(max_codepoint=127), max_size=12).map(lambda s: s.encode("ascii"))
    else:
        raw = st.text(max_size=6).map(lambda s: s.encode("utf-8", "surrogatepass")) | st.binary(max_size=8)
    return raw.map(lambda b: struct.pack(">H", len(b)) + b)


def _md(usual: bool) -> st.SearchStrategy[bytes]:
    if usual:
        return st.binary(min_size=356, max_size=356).map(lambda rest: b"MD  \x02\x00\x00\x00" + rest)
    md = MQMD(priority=3, msg_id=b"m" * 24, reply_to_q="Q")
    return st.sampled_from([md.pack(version=1), md.pack(big_endian=True), md.pack(version=1, big_endian=True),
                            b"MD  \x03\x00\x00\x00" + bytes(356), b"XX" * 182])


def _field(kind: str, usual: bool) -> st.SearchStrategy[bytes]:
    if kind == "status":
        return st.just(body.OK_STATUS) if usual else st.sampled_from(
            [body.status(2, 2033, ""), body.status(1, 2079, "truncated"), body.status(0, 0, "note")])
    if kind in ("md", "md_bytes"):
        return _md(usual)
    if kind == "props":
        return st.just(body.NO_PROPS) if usual else st.sampled_from(
            [b"\0\0\0\x03abc", b"\0\0\0\x00", b"\xff\xff\xff\xff"])
    if kind == "rest":
        return st.binary(max_size=40)
    if kind in ("str", "name", "detail", "charv"):
        return _text(usual)
    code = "I" if kind == "batch" else kind
    size = struct.calcsize(">" + code)
    if kind == "batch" and usual:
        return st.integers(1, body.MAX_BATCH).map(lambda n: struct.pack(">I", n))
    return st.binary(min_size=size, max_size=size)


@st.composite
def bodies(draw: st.DrawFn, frames: list[tuple[str, Frame[Any], Any]] = _DECODERS) -> tuple[str, Frame[Any], Any, bytes]:
    name, frame, decode = draw(st.sampled_from(frames))
    parts = []
    for _, kind in frame.fields:
        assert isinstance(kind, str)
        parts.append(draw(_field(kind, draw(st.booleans() | st.just(True)))))
    raw = b"".join(parts)
    damage = draw(st.sampled_from(["none", "none", "cut", "longer", "byte"]))
    if damage == "cut" and raw:
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    elif damage == "longer":
        raw += draw(st.binary(min_size=1, max_size=4))
    elif damage == "byte" and raw:
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    return name, frame, decode, raw


def _outcome(fn: Any, buf: Any, start: int, end: int, corr: int, flags: int) -> Any:
    try:
        return fn(buf, start, end, corr, flags)
    except DecodeError as exc:
        return ("DecodeError", str(exc))


@given(bodies(), st.binary(max_size=5), st.integers(0, 2**40), st.integers(0, 3),
       st.sampled_from([bytes, bytearray]))
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_usual_decoder_is_the_general_one(case: tuple[str, Frame[Any], Any, bytes], before: bytes, corr: int,
                                          flags: int, kind: type) -> None:
    """Where the body lies in the buffer (after other bytes, before others) changes nothing."""
    _, frame, decode, raw = case
    buf = kind(before + raw + b"tail")
    start, end = len(before), len(before) + len(raw)
    assert _outcome(decode, buf, start, end, corr, flags) == _outcome(_general(frame, decode), buf, start, end,
                                                                       corr, flags)


def test_every_reply_that_packs_its_status_with_the_header_is_drawn() -> None:
    assert {name for name, _, _ in _PACKERS} >= {"GET_REPLY", "OPEN_REPLY", "CONNECT_REPLY", "STAT_REPLY"}
    for _, frame, _ in _PACKERS:
        assert not any(isinstance(kind, Part) for _, kind in frame.fields)


@given(bodies(_PACKERS), st.sampled_from([(0, 0, ""), (0, 0, ""), (1, 2079, ""), (2, 2033, "refused"), (0, 0, "note")]))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_packer_is_the_general_one(case: tuple[str, Frame[Any], Any, bytes], status: tuple[int, int, str]) -> None:
    """A reply's usual status is packed with its header: the same bytes as on its own."""
    _, frame, _, raw = case
    try:
        ev = frame.decode_general(raw, 0, len(raw), 7, 0)
    except DecodeError:
        return
    if hasattr(ev, "comp"):
        ev.comp, ev.reason, ev.detail = status
    assert b"".join(frame.pack(ev)) == b"".join(frame.pack_general(ev))


_PACKETS: list[tuple[str, Frame[Any], Any]] = [  # the frames whose bodies ``bodies`` can draw
    (f.name, f, f.decode_packet) for f in codec.FRAMES.values() if not any(isinstance(k, Part) for _, k in f.fields)]
_PACKETS.append(("PUT md_bytes", codec.FRAMES[E.Put], codec.CLIENT_PACKETS_MD_BYTES[codec.T_PUT]))


@given(bodies(_PACKETS), st.binary(max_size=5), st.integers(0, 2**40), st.integers(0, 3),
       st.sampled_from(["none", "none", "none", "type", "magic", "version", "props", "size+", "size-", "cut", "limit"]),
       st.sampled_from([bytes, bytearray]))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_packet_decoder_is_the_general_one(case: tuple[str, Frame[Any], Any, bytes], before: bytes, corr: int,
                                           flags: int, header: str, kind: type) -> None:
    """A packet decoder gives the general decoder's event or error for the packet's body, and
    the packet's end; or None, and then only for a packet that is not whole, not this frame's,
    or whose header the reader would refuse (it reads each of those)."""
    name, frame, decode_packet, raw = case
    ptype, size, magic, props, limit = frame.ptype, 36 + len(raw), 2147476418, 0, 1 << 20
    version = 350
    if header == "type":
        ptype ^= 1
    elif header == "magic":
        magic ^= 1 << 8
    elif header == "version":
        version += 1
    elif header == "props":
        props = 4
    elif header == "size+":
        size += 1
    elif header == "size-":
        size -= 1
    elif header == "limit":
        limit = size - 1
    packet = struct.pack(">hhiiiqqI", version, ptype, size, magic, props, 0, corr, flags) + raw
    if header == "cut":
        packet = packet[:-1]
    buf = kind(before + packet + (b"tail" if header != "cut" else b""))
    have = len(before) + len(packet)
    try:
        got = decode_packet(buf, len(before), have, limit)
    except DecodeError as exc:
        got = (("DecodeError", str(exc)), len(before) + size)
    if got is None:
        return
    assert header in ("none", "size-") and size >= 36, header
    ev, end = got
    assert end == len(before) + size
    general = frame.decode_general if name != "PUT md_bytes" else frame._decoders(md_as_bytes=True)[0]
    assert ev == _outcome(general, buf, len(before) + 36, end, corr, flags)


def test_packet_decoder_takes_the_usual_packets() -> None:
    """The packets a request/reply loop sends and receives are read by their packet decoders."""
    md = MQMD(msg_id=b"m" * 24, correl_id=b"c" * 24).pack(version=2)
    for ev in (E.GetReply(5, md, b"body", 4, bytes(16), "Q.R"), E.Put(6, 3, md, b"data"),
               E.Get(7, 3, md, options=0, wait_interval=-1, match_options=2, buffer_length=1024, msg_token=bytes(16)),
               E.Reply(8)):
        packet = b"".join(codec.pack(ev))
        got = codec.FRAMES[type(ev)].decode_packet(packet, 0, len(packet), 1 << 20)
        assert got is not None and got[1] == len(packet)
        assert got[0] == codec.FRAMES[type(ev)].decode_general(packet, 36, len(packet), ev.corr,
                                                               struct.unpack_from(">I", packet, 32)[0])


_NAMES = [b"QA", b"QB", b"Q.REPLY.1", b"Q.REPLY.2", b"", b"Q" * 48, b"Q" * 49, "QÄ".encode(), b"Q\xff"]


@given(st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(["none", "none", "status", "md", "props", "cut"])),
                min_size=1, max_size=12),
       st.sampled_from([bytes, bytearray]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_name_read_with_the_last_names_struct_is_read_as_any_other(replies: list[tuple[bytes, str]],
                                                                      kind: type) -> None:
    """A GET_REPLY's queue name is read with the fields around it in one unpack when its bytes
    are the last name's: in a run of replies from queues of the same name length, of other
    lengths, too long to keep, not ASCII, and with another field than the usual one after or
    before it, each decoder gives what the general decoder gives."""
    frame = codec.FRAMES[E.GetReply]
    md = b"MD  \x02\x00\x00\x00" + bytes(356)
    for name, damage in replies:
        status = body.status(2, 2033, "") if damage == "status" else body.OK_STATUS
        head = b"MD  \x01\x00\x00\x00" if damage == "md" else md[:8]
        props = b"\0\0\0\x03abc" if damage == "props" else body.NO_PROPS
        raw = status + struct.pack(">I16sH", 4, bytes(16), len(name)) + name + head + md[8:] + props + b"data"
        if damage == "cut":
            raw = raw[: 10 + 20 + 2 + len(name) + 100]
        buf = kind(b"x" + raw + b"tail")
        general = _outcome(frame.decode_general, buf, 1, 1 + len(raw), 9, 0)
        assert _outcome(frame.decode, buf, 1, 1 + len(raw), 9, 0) == general
        packet = kind(struct.pack(">hhiiiqqI", 350, frame.ptype, 36 + len(raw), 2147476418, 0, 0, 9, 0) + raw)
        try:
            got = frame.decode_packet(packet, 0, len(packet), 1 << 20)
        except DecodeError as exc:
            got = (("DecodeError", str(exc)), len(packet))
        assert got is not None and got == (_outcome(frame.decode_general, packet, 36, len(packet), 9, 0), len(packet))
