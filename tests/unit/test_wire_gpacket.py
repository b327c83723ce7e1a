"""GPacket against cluster-protocol.md §1 and its test vectors."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrymq.errors import DecodeError
from ferrymq.wire.gpacket import (
    A_BIT,
    B_BIT,
    HEADER_SIZE,
    MAGIC,
    RX_INITIAL,
    RX_KEEP,
    GPacket,
    GPacketReader,
    Prop,
    PropType,
    decode_properties,
    encode_properties,
    hashtable_order,
    java_properties,
    java_string_hash,
    pack_properties,
    unpack_header,
    unpack_properties,
)

# Vector v03 (§1.6): G_LOCK broadcast, 102 bytes.
V03 = bytes.fromhex(
    "015e 000b 00000066 7fffe3c2 00000042 0000018bcfe56802 0000000000000003 00000002"
    "00000001 00000004"
    "0001 49 0008 0011 636c69656e7469643a6d79436c69656e74"
    "0002 5348 0001 00"
    "0002 5453 0005 0000000000000000"
    "0001 58 0005 0000018bcfe56802"
)


def header(ptype: int = 1, size: int = 36, magic: int = MAGIC, props: int = 0, version: int = 350,
           flags: int = 0) -> bytes:
    return struct.pack(">hhiiiqqI", version, ptype, size, magic, props, 0, 0, flags)


def test_v03_decodes() -> None:
    assert len(V03) == 102
    p = GPacket.unpack_from(V03)
    assert (p.type, p.timestamp, p.sequence, p.flags, p.payload) == (11, 1700000000002, 3, B_BIT, b"")
    assert p.properties == (
        ("I", Prop.string("clientid:myClient")),
        ("SH", Prop.boolean(False)),
        ("TS", Prop.int64(0)),
        ("X", Prop.int64(1700000000002)),
    )
    assert p.prop("X") == 1700000000002 and p.prop("missing") is None


@pytest.mark.parametrize(
    "put_order", [["I", "SH", "TS", "X"], ["X", "TS", "SH", "I"], ["SH", "X", "I", "TS"]]
)
def test_v03_encodes_byte_for_byte_in_hashtable_order(put_order: list[str]) -> None:
    values = {"I": Prop.string("clientid:myClient"), "SH": Prop.boolean(False), "TS": Prop.int64(0),
              "X": Prop.int64(1700000000002)}
    props = java_properties((k, values[k]) for k in put_order)
    assert GPacket(11, props, b"", 1700000000002, 3, B_BIT).pack() == V03


def test_v15_empty_section_differs_from_no_section() -> None:
    empty = GPacket(5, ()).pack()
    assert empty == header(5, 44, props=8) + bytes.fromhex("00000001 00000000")
    assert GPacket.unpack_from(empty).properties == ()
    none = GPacket(5).pack()
    assert none == header(5, 36)
    assert GPacket.unpack_from(none).properties is None


def test_payload_and_unsigned_flags() -> None:
    p = GPacket(-2, None, b"\x01\x02\x03", -5, 2**63 - 1, 0x80000001)
    raw = p.pack()
    assert raw[4:8] == (39).to_bytes(4, "big") and raw[32:36] == b"\x80\x00\x00\x01" and raw[36:] == b"\x01\x02\x03"
    assert GPacket.unpack_from(raw) == p
    assert GPacket.unpack_from(b"xx" + raw + b"yy", 2) == p


@pytest.mark.parametrize(
    ("prop", "value_hex"),
    [
        (Prop.boolean(True), "0001 01"),
        (Prop.boolean(False), "0001 00"),
        (Prop.byte(-1), "0002 ff"),
        (Prop.short(-2), "0003 fffe"),
        (Prop.int32(2**31 - 1), "0004 7fffffff"),
        (Prop.int64(-(2**63)), "0005 8000000000000000"),
        (Prop.float32(1.5), "0006 3fc00000"),
        (Prop.float32(float("-inf")), "0006 ff800000"),
        (Prop.float64(-0.5), "0007 bfe0000000000000"),
        (Prop.string(""), "0008 0000"),
        (Prop.string("a\0"), "0008 0003 61c080"),
    ],
)
def test_value_encodings(prop: Prop, value_hex: str) -> None:
    section = bytes.fromhex("00000001 00000001 0001 6b" + value_hex)
    assert pack_properties((("k", prop),)) == section
    assert unpack_properties(section, 0, len(section)) == (("k", prop),)


def test_float_nan_is_canonical() -> None:
    """Java's writeFloat writes NaN as 7fc00000."""
    assert Prop.float32(math.nan).pack() == bytes.fromhex("0006 7fc00000")
    section = bytes.fromhex("00000001 00000001 0001 6b 0006 7f800001")
    value = unpack_properties(section, 0, len(section))[0][1].value
    assert isinstance(value, float) and math.isnan(value)


def test_float_holds_its_float32_value() -> None:
    prop = Prop.float32(0.1)
    assert prop.value == 0.10000000149011612
    section = pack_properties((("k", prop),))
    assert unpack_properties(section, 0, len(section)) == (("k", prop),)


def test_non_zero_boolean_byte_is_true() -> None:
    section = bytes.fromhex("00000001 00000001 0001 6b 0001 05")
    assert unpack_properties(section, 0, len(section)) == (("k", Prop.boolean(True)),)


@pytest.mark.parametrize(
    ("ptype", "value"),
    [(PropType.BOOLEAN, 1), (PropType.BYTE, 128), (PropType.SHORT, -32769), (PropType.INTEGER, True),
     (PropType.LONG, 2**63), (PropType.FLOAT, 1e39), (PropType.DOUBLE, "1"), (PropType.STRING, b"x"),
     (PropType.OBJECT, b"\xac\xed")],
)
def test_prop_refuses_bad_values(ptype: PropType, value: object) -> None:
    with pytest.raises(ValueError):
        Prop(ptype, value)  # type: ignore[arg-type]


def test_object_values_are_refused() -> None:
    """Type 9 is Java serialization: never decoded (cluster-protocol.md decision 2)."""
    java_bytes = bytes.fromhex("aced0005757200025b42acf317f8060854e00200007870000000030102 03")
    section = bytes.fromhex("00000001 00000001 0001 6f 0009") + struct.pack(">i", len(java_bytes)) + java_bytes
    raw = header(99, 36 + len(section), props=len(section)) + section
    with pytest.raises(DecodeError, match="OBJECT"):
        GPacket.unpack_from(raw)


@pytest.mark.parametrize(
    "section_hex",
    [
        "00000002 00000000",  # properties version 2
        "00000001 ffffffff",  # negative count
        "00000001",  # shorter than its head
        "00000001 00000001 0001 6b 000a 00",  # unknown type code
        "00000001 00000001 0001 6b 0000 00",
        "00000001 00000001 0001 6b ffff 00",
        "00000001 00000001 0001 6b 0004 0000",  # value runs past the section
        "00000001 00000001 0001 6b 0008 0005 6162",  # string runs past the section
        "00000001 00000001 0005 6b",  # key runs past the section
        "00000001 00000001 0001 6b 00",  # type code runs past the section
        "00000001 00000001 0001 6b 0001",  # boolean runs past the section
        "00000001 00000002 0001 6b 0001 01",  # fewer entries than the count
        "00000001 00000001 0002 f09f 0001 01",  # key is not modified UTF-8
    ],
)
def test_malformed_sections(section_hex: str) -> None:
    section = bytes.fromhex(section_hex)
    with pytest.raises(DecodeError):
        unpack_properties(section, 0, len(section))
    with pytest.raises(DecodeError):
        GPacket.unpack_from(header(1, 36 + len(section), props=len(section)) + section)


def test_count_limit_is_checked_before_parsing() -> None:
    section = bytes.fromhex("00000001 7fffffff")
    with pytest.raises(DecodeError, match="count"):
        unpack_properties(section, 0, len(section))
    ok = pack_properties(tuple((f"k{i}", Prop.boolean(True)) for i in range(5)))
    assert len(unpack_properties(ok, 0, len(ok), max_properties=5)) == 5
    with pytest.raises(DecodeError):
        unpack_properties(ok, 0, len(ok), max_properties=4)


def test_empty_key_ends_parsing_like_java() -> None:
    section = bytes.fromhex("00000001 00000003 0001 61 0001 01 0000 0001 01 0001 62 0001 01")
    assert unpack_properties(section, 0, len(section)) == (("a", Prop.boolean(True)),)
    with pytest.raises(ValueError):
        pack_properties((("", Prop.boolean(True)),))


@pytest.mark.parametrize(
    ("raw", "what"),
    [
        (header(magic=0x7FFFE3C3), "magic"),
        (header(version=301), "version"),
        (header(size=35), "size"),
        (header(size=-1), "size"),
        (header(size=200 * 2**20), "size"),
        (header(size=40, props=5), "properties size"),
        (header(size=40, props=-4), "properties size"),
        (header()[:35], "needs"),
        (header(size=40) + b"abc", "only 39 bytes"),
    ],
)
def test_bad_headers(raw: bytes, what: str) -> None:
    with pytest.raises(DecodeError, match=what):
        GPacket.unpack_from(raw)


def test_magic_is_checked_before_version() -> None:
    with pytest.raises(DecodeError, match="magic"):
        unpack_header(header(magic=0, version=1))


def test_max_size_parameter() -> None:
    raw = GPacket(1, None, b"x" * 100).pack()
    assert unpack_header(raw, max_size=136).size == 136
    with pytest.raises(DecodeError):
        unpack_header(raw, max_size=135)


def test_pack_refuses_out_of_range_fields() -> None:
    with pytest.raises(ValueError):
        GPacket(40000).pack()
    with pytest.raises(ValueError):
        GPacket(1, flags=2**32).pack()
    with pytest.raises(ValueError):
        GPacket(1, (("k", Prop.string("x" * 70000)),)).pack()


def test_java_string_hash() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("\U0001f600") == (31 * 0xD83D + 0xDE00)
    assert java_string_hash("x" * 20) < 2**32


def test_hashtable_order_without_resize() -> None:
    keys = "ABCDEFGH"  # indexes 65 % 11 = 10, then 0..6
    assert [k for k, _ in hashtable_order((k, 0) for k in keys)] == list("AHGFEDCB")


def test_hashtable_order_with_resize() -> None:
    """The ninth key grows the table to 23 buckets (65 % 23 = 19 ... 76 % 23 = 7)."""
    order = [k for k, _ in hashtable_order((k, 0) for k in "ABCDEFGHIJKL")]
    assert order == list("DCBALKJIHGFE")


def test_hashtable_collisions_and_rehash_reverse_a_chain() -> None:
    """'Aa' and 'BB' share every bucket: new keys go to the chain's head, rehash reverses it."""
    before = [k for k, _ in hashtable_order((k, 0) for k in ["Aa", "BB", *"CDEFGH"])]
    assert before == ["H", "G", "F", "E", "D", "C", "BB", "Aa"]
    after = [k for k, _ in hashtable_order((k, 0) for k in ["Aa", "BB", *"CDEFGHI"])]
    assert after == ["D", "C", "Aa", "BB", "I", "H", "G", "F", "E"]


def test_hashtable_reput_keeps_place_and_takes_new_value() -> None:
    assert hashtable_order([("A", 1), ("B", 2), ("A", 3)]) == [("A", 3), ("B", 2)]


def test_plain_mapping_helpers() -> None:
    raw = encode_properties({"b": True, "i": 5, "f": 0.25, "s": "x", "typed": Prop.short(3)})
    assert raw == pack_properties((("b", Prop.boolean(True)), ("i", Prop.int64(5)), ("f", Prop.float64(0.25)),
                                   ("s", Prop.string("x")), ("typed", Prop.short(3))))
    assert decode_properties(raw) == {"b": True, "i": 5, "f": 0.25, "s": "x", "typed": 3}
    with pytest.raises(ValueError):
        encode_properties({"big": 2**64})
    with pytest.raises(ValueError):
        encode_properties({"list": [1]})  # type: ignore[dict-item]


def stream() -> tuple[bytes, list[GPacket]]:
    packets = [
        GPacket(11, java_properties([("X", Prop.int64(1))]), b"", 1, 1, A_BIT),
        GPacket(1),
        GPacket(3, (), b"payload" * 50, 2, 2, 0),
        GPacket(2, (("s", Prop.string("\U0001f600")),), b"\0" * 10),
    ]
    return b"".join(p.pack() for p in packets) + V03, [*packets, GPacket.unpack_from(V03)]


def test_reader_byte_at_a_time_equals_all_at_once() -> None:
    raw, expected = stream()
    whole = GPacketReader()
    whole.feed(raw)
    assert list(whole) == expected and whole.buffered == 0
    trickle = GPacketReader()
    got: list[GPacket] = []
    for i in range(len(raw)):
        trickle.feed(raw[i : i + 1])
        got.extend(trickle)
    assert got == expected and trickle.buffered == 0


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(1, 70_000), st.sampled_from(["bytes", "bytearray", "memoryview"]),
                          st.booleans()), max_size=30))
def test_reader_takes_bytes_without_copying_and_anything_else_by_copy(cuts: list[tuple[int, str, bool]]) -> None:
    """Fed in any pieces, of any kind (what is fed as bytes is kept as it is; a bytearray or a
    view is copied, so the caller may reuse it), taken packet by packet or decoded in place
    (next_in_place), with packets over the compaction threshold among them: the same packets."""
    raw, expected = stream()
    big = GPacket(4, None, bytes(range(256)) * 300)  # 76,800 bytes: compaction happens after it
    raw, expected = raw + big.pack() + raw, [*expected, big, *expected]
    reader, got, at = GPacketReader(), [], 0
    for size, kind, plain in [*cuts, (len(raw), "bytes", False)]:
        piece = raw[at : at + size]
        at += len(piece)
        if kind == "bytes":
            reader.feed(piece)
        else:
            scratch = bytearray(piece)
            reader.feed(scratch if kind == "bytearray" else memoryview(scratch))
            scratch[:] = bytes(len(scratch))  # reused by its owner: what was fed must not change
        while True:
            packet = in_place(reader) if plain else reader.next_packet()
            if packet is None:
                break
            got.append(packet)
    assert [(p.type, p.properties or None, p.payload, p.sequence, p.flags) for p in got] == [
        (p.type, p.properties or None, p.payload, p.sequence, p.flags) for p in expected]
    assert reader.buffered == 0


def test_reader_keeps_a_partial_packet() -> None:
    reader = GPacketReader()
    reader.feed(V03[:50])
    assert reader.next_packet() is None and reader.buffered == 50
    reader.feed(V03[50:] + V03[:10])
    assert reader.next_packet() == GPacket.unpack_from(V03)
    assert reader.next_packet() is None and reader.buffered == 10


def test_reader_rejects_a_huge_size_as_soon_as_the_header_is_in() -> None:
    reader = GPacketReader(max_size=1024)
    reader.feed(header(size=1025))
    with pytest.raises(DecodeError):
        reader.next_packet()


def test_reader_errors_are_final() -> None:
    reader = GPacketReader()
    reader.feed(V03 + header(magic=1))
    assert reader.next_packet() is not None
    with pytest.raises(DecodeError):
        reader.next_packet()
    with pytest.raises(DecodeError):
        reader.feed(V03)
    with pytest.raises(DecodeError):
        list(reader)


def test_reader_compacts_its_buffer() -> None:
    one = GPacket(1, None, b"z" * 1000).pack()
    reader = GPacketReader()
    reader.feed(one * 100 + one[:10])
    assert len(list(reader)) == 100
    assert reader.buffered == 10
    reader.feed(one[10:])
    assert list(reader) == [GPacket.unpack_from(one)]


def read_into(reader: GPacketReader, data: bytes) -> bytearray:
    """Read ``data`` into the reader's own buffer as a transport would; returns the buffer."""
    at = 0
    while at < len(data):
        with reader.get_buffer() as room:
            n = min(len(room), len(data) - at)
            room[:n] = data[at : at + n]
            buffer = room.obj
        reader.buffer_updated(n)
        at += n
    assert isinstance(buffer, bytearray)
    return buffer


def test_reads_into_the_readers_buffer_reuse_it_and_let_a_large_one_go() -> None:
    one = GPacket(1, None, b"m" * 65_000).pack()
    reader = GPacketReader()
    buffers = set()
    for _ in range(40):  # a packet that spans reads, read after read
        buffers.add(id(read_into(reader, one[:30_000])))
        buffers.add(id(read_into(reader, one[30_000:])))
        assert list(reader) == [GPacket.unpack_from(one)]
    assert len(buffers) <= 3  # grown to fit, then the same buffer every time
    huge = GPacket(2, None, b"h" * (3 * RX_KEEP)).pack()
    read_into(reader, huge)
    assert list(reader) == [GPacket.unpack_from(huge)] and reader.buffered == 0
    with reader.get_buffer() as room:
        assert len(room) == RX_INITIAL  # the large buffer was let go
    reader.feed(one)  # fed bytes go into the buffer too
    assert list(reader) == [GPacket.unpack_from(one)]


def test_header_size_constant() -> None:
    assert HEADER_SIZE == 36 and MAGIC == 0x7FFFE3C2


def in_place(reader: GPacketReader) -> GPacket | None:
    """The next packet, read from where ``next_in_place`` says it lies."""
    frame = reader.next_in_place()
    if frame is None:
        return None
    ptype, flags, sequence, props_size, buf, start, end = frame
    props = unpack_properties(buf, start, start + props_size) if props_size else None
    return GPacket(ptype, props, buf[start + props_size : end], 0, sequence, flags)


def test_a_packet_that_spans_reads_is_handed_over_in_bytes() -> None:
    # A packet that came in several reads, of any kind, is made contiguous once it is all
    # here: a decoder in place sees bytes (what it slices off is bytes), never a buffer
    # that grew read by read.
    big = GPacket(4, None, bytes(range(256)) * 300)
    raw = big.pack() + V03
    reader = GPacketReader()
    for i, piece in enumerate([raw[:30], raw[30:5000], raw[5000:70_000], raw[70_000:]]):
        reader.feed(piece if i % 2 else bytearray(piece))
        got = reader.next_in_place()
        assert (got is None) == (i < 3)
    assert got is not None and type(got[4]) is bytes
    _, _, _, _, buf, start, end = got
    assert buf[start:end] == big.payload
    assert reader.next_packet() == GPacket.unpack_from(V03) and reader.buffered == 0


def test_a_large_packet_is_read_into_a_buffer_of_its_own() -> None:
    # packet_room: once a large packet's header is in, the rest of it is read where the
    # packet is kept (a buffer of its size), and the packet is handed over there; the next
    # packet gets a buffer of its own, so what a decoder kept of the first stays as it was.
    first = GPacket(9, None, bytes(range(256)) * 2000)
    second = GPacket(9, None, b"\xee" * 300_000, 0, 2)
    reader = GPacketReader()
    kept = []
    for packet in (first, second):
        raw = packet.pack()
        reader.feed(raw[:1000])
        assert reader.next_in_place() is None  # the header is read: the packet is known to be large
        assert reader.packet_room(1 << 20, {9}) is None  # smaller than asked for
        assert reader.packet_room(1000, {8}) is None  # not a type that may be
        at = 1000
        while (room := reader.packet_room(1000, {9})) is not None:
            assert len(room) == len(raw) - at
            n = min(len(room), 70_000)
            room[:n] = raw[at : at + n]
            reader.packet_filled(n)
            at += n
        assert at == len(raw)
        ptype, _, sequence, _, buf, start, end = reader.next_in_place()  # type: ignore[misc]
        assert (ptype, sequence, type(buf), len(buf)) == (9, packet.sequence, bytearray, len(raw))
        kept.append(memoryview(buf)[start:end])
        assert reader.buffered == 0 and reader.next_in_place() is None
    assert [bytes(v) for v in kept] == [first.payload, second.payload]
    reader.feed(V03)  # and then the usual way again
    assert reader.next_packet() == GPacket.unpack_from(V03)


def test_bytes_fed_into_a_packets_own_buffer_are_joined_as_usual() -> None:
    big = GPacket(9, None, b"b" * 500_000)
    raw = big.pack() + V03
    reader = GPacketReader()
    reader.feed(raw[:100])
    assert reader.next_in_place() is None
    room = reader.packet_room(1000, {9})
    assert room is not None
    room[:1000] = raw[100:1100]
    reader.packet_filled(1000)
    reader.feed(raw[1100:])  # fed, not read into the room: no more room is offered
    assert reader.packet_room(1000, {9}) is None
    assert reader.next_packet() == big and reader.next_packet() == GPacket.unpack_from(V03)
    assert reader.buffered == 0
