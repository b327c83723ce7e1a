"""Property tests for the L0 codecs: round trips in both byte orders, and untrusted bytes
(random or mutated from valid images) that may only ever raise DecodeError."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ferrymq.errors import DecodeError
from ferrymq.wire import mutf8
from ferrymq.wire.api_structs import MQCHARV, MQGMO, MQIMPO, MQOD, MQPD, MQPMO, MQSMPO
from ferrymq.wire.gpacket import (
    GPacket,
    GPacketReader,
    Prop,
    PropType,
    java_properties,
    pack_properties,
    unpack_properties,
)
from ferrymq.wire.headers import walk_headers
from ferrymq.wire.mqdh import MQDH, MQOR, MQPMR, PMRF_ALL
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqmde import MQMDE, absorb_mde, split_md
from ferrymq.wire.mqrmh import MQRMH
from ferrymq.wire.mqxqh import MQXQH, pack_xmit, unpack_xmit

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
orders = st.booleans()


def name(size: int) -> st.SearchStrategy[str]:
    """Text that survives MQCHARn decoding: Latin-1, no NUL, no trailing blank."""
    return st.text(st.characters(min_codepoint=0x21, max_codepoint=0xFF), max_size=size)


def ident(size: int) -> st.SearchStrategy[bytes]:
    return st.binary(min_size=size, max_size=size)


def only_decode_error(decode: Callable[[bytes], Any], raw: bytes) -> None:
    with contextlib.suppress(DecodeError):
        decode(raw)


@st.composite
def mutated(draw: st.DrawFn, image: bytes) -> bytes:
    """A valid image with some bytes overwritten, then maybe cut short or extended."""
    raw = bytearray(image)
    for _ in range(draw(st.integers(1, 6))):
        if raw:
            raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
    cut = draw(st.integers(0, len(raw)))
    return bytes(raw[:cut]) + draw(st.binary(max_size=8))



def make_md(**fields: Any) -> MQMD:
    """st.builds(MQMD, ...) would invent values for the NamedTuple's defaulted fields too."""
    return MQMD(**fields)


md_v1 = st.builds(
    make_md,
    report=int32,
    msg_type=int32,
    expiry=int32,
    encoding=int32,
    format=name(8),
    priority=int32,
    msg_id=ident(24),
    correl_id=ident(24),
    reply_to_q=name(48),
    put_appl_name=name(28),
    accounting_token=ident(32),
)
md_v2 = st.builds(
    make_md,
    version=st.just(2),
    format=name(8),
    encoding=int32,
    coded_char_set_id=int32,
    msg_id=ident(24),
    group_id=ident(24),
    msg_seq_number=int32,
    offset=int32,
    msg_flags=int32,
    original_length=int32,
)
mde = st.builds(
    MQMDE,
    encoding=int32,
    coded_char_set_id=int32,
    format=name(8),
    flags=int32,
    group_id=ident(24),
    msg_seq_number=int32,
    offset=int32,
    msg_flags=int32,
    original_length=int32,
)
dlh = st.builds(
    MQDLH,
    reason=int32,
    dest_q_name=name(48),
    dest_q_mgr_name=name(48),
    encoding=int32,
    coded_char_set_id=int32,
    format=name(8),
    put_appl_type=int32,
    put_appl_name=name(28),
    put_date=name(8),
    put_time=name(8),
)
xqh = st.builds(MQXQH, name(48), name(48), md_v1)
latin1 = st.text(st.characters(max_codepoint=0xFF), max_size=40)
rmh = st.builds(
    MQRMH,
    encoding=int32,
    coded_char_set_id=int32,
    format=name(8),
    flags=int32,
    object_type=name(8),
    object_instance_id=ident(24),
    src_env=latin1,
    src_name=latin1,
    dest_env=latin1,
    dest_name=latin1,
    data_logical_length=int32,
    data_logical_offset=int32,
    data_logical_offset2=int32,
)


@st.composite
def dh(draw: st.DrawFn) -> MQDH:
    objects = tuple(draw(st.lists(st.builds(MQOR, name(48), name(48)), max_size=5)))
    fields = draw(st.integers(0, PMRF_ALL))
    records: tuple[MQPMR, ...] = ()
    if fields and objects and draw(st.booleans()):
        # Only the fields the flags name travel; the others decode as their defaults.
        def record(values: dict[str, Any]) -> MQPMR:
            return MQPMR(**{k: v for k, v in values.items() if fields & _PMR_FLAG[k]})

        records = tuple(
            record(draw(st.fixed_dictionaries({
                "msg_id": ident(24), "correl_id": ident(24), "group_id": ident(24), "feedback": int32,
                "accounting_token": ident(32),
            })))
            for _ in objects
        )  # fmt: skip
    return MQDH(draw(int32), draw(int32), draw(name(8)), draw(int32), fields, objects, records)


_PMR_FLAG = {"msg_id": 1, "correl_id": 2, "group_id": 4, "feedback": 8, "accounting_token": 16}


@settings(max_examples=150)
@given(st.one_of(mde, dlh, xqh, rmh, dh()), orders)
def test_mq_headers_round_trip(value: Any, big_endian: bool) -> None:
    raw = value.pack(big_endian=big_endian)
    assert type(value).unpack_from(raw) == value
    assert type(value).unpack_from(b"\0" * 3 + raw, 3, big_endian=big_endian) == value
    assert type(value).unpack_from(raw).pack(big_endian=big_endian) == raw


@given(md_v2, orders)
def test_mde_split_merge_round_trip(md: MQMD, big_endian: bool) -> None:
    v1, extension = split_md(md, encoding=273 if big_endian else 546)
    data = b"" if extension is None else extension.pack(big_endian=big_endian)
    merged, at = absorb_mde(v1, data + b"tail")
    assert at == len(data)
    if extension is None:
        assert merged == md.replace(version=1)
    else:
        assert merged == md


@given(md_v2, name(48), name(48), orders)
def test_xmit_round_trip(md: MQMD, queue: str, qmgr: str, big_endian: bool) -> None:
    raw = pack_xmit(queue, qmgr, md, big_endian=big_endian)
    header, full, at = unpack_xmit(raw + b"data")
    assert (header.remote_q_name, header.remote_q_mgr_name, at) == (queue, qmgr, len(raw))
    expected = md if md.has_v2_fields else md.replace(version=1)
    assert full.replace(encoding=md.encoding, coded_char_set_id=md.coded_char_set_id) == expected


@given(st.binary(min_size=96, max_size=96), md_v1, st.binary(max_size=8))
def test_xmit_little_endian_header_reads_as_the_general_decoder(names: bytes, md: MQMD, tail: bytes) -> None:
    """unpack_xmit's own way for the header this queue manager writes (little-endian, MQMD
    version 1: StrucId and Versions looked at once) reads what MQXQH.unpack_from reads,
    whatever bytes the names hold."""
    assume(md.format != "MQHMDE")
    raw = b"XQH \x01\x00\x00\x00" + names + md.pack(version=1) + tail
    header, full, at = unpack_xmit(raw)
    assert header == MQXQH.unpack_from(raw, big_endian=False)
    assert (full, at) == (header.msg_desc, len(raw) - len(tail))


DECODERS: list[tuple[str, Callable[[bytes], Any], bytes]] = [
    ("MQMDE", MQMDE.unpack_from, MQMDE(format="MQSTR").pack()),
    ("MQDLH", MQDLH.unpack_from, MQDLH(format="MQSTR").pack(big_endian=True)),
    ("MQXQH", MQXQH.unpack_from, MQXQH("Q", "QM").pack()),
    ("xmit", unpack_xmit, pack_xmit("Q", "QM", MQMD(version=2, msg_seq_number=2))),
    ("MQDH", MQDH.unpack_from,
     MQDH(put_msg_rec_fields=9, objects=(MQOR("A"), MQOR("B")), put_msg_recs=(MQPMR(), MQPMR())).pack()),
    ("MQRMH", MQRMH.unpack_from, MQRMH(src_name="a", dest_name="bb").pack()),
    ("MQGMO", MQGMO.unpack_from, MQGMO(version=4).pack()),
    ("MQPMO", MQPMO.unpack_from, MQPMO(version=3).pack(big_endian=True)),
    ("MQOD", MQOD.unpack_from, MQOD(version=4).pack()),
    ("MQIMPO", MQIMPO.unpack_from, MQIMPO().pack()),
    ("GPacket", GPacket.unpack_from,
     GPacket(3, java_properties([("a", Prop.string("x")), ("b", Prop.int64(1)), ("c", Prop.float32(1.0))]),
             b"pay").pack()),
    ("headers", lambda raw: walk_headers(raw, "MQDEAD", 546, 0),
     MQDLH(format="MQHRF2").pack() + b"RFH " + bytes.fromhex("02000000 24000000 22020000 b8040000")
     + b"MQSTR   " + bytes.fromhex("00000000 b8040000")),
    ("mutf8", mutf8.decode, mutf8.encode("a\0é中\U0001f600")),
]  # fmt: skip


@settings(max_examples=300)
@given(st.sampled_from(DECODERS), st.data())
def test_untrusted_bytes_raise_only_decode_error(decoder: tuple[str, Callable[[bytes], Any], bytes],
                                                 data: st.DataObject) -> None:
    _, decode, image = decoder
    raw = data.draw(st.one_of(st.binary(max_size=600), mutated(image)))
    only_decode_error(decode, raw)


@settings(max_examples=200)
@given(st.binary(max_size=200), st.sampled_from(["MQHMDE", "MQHRF2", "MQDEAD", "MQXMIT", "MQHDIST", "MQHZZZ"]),
       st.sampled_from([273, 546, 0]))
def test_header_walk_stays_inside_the_body(body: bytes, fmt: str, encoding: int) -> None:
    try:
        chain = walk_headers(body, fmt, encoding, 0)
    except DecodeError:
        return
    assert 0 <= chain.length <= len(body)
    assert sum(h.length for h in chain.headers) == chain.length


@given(st.text(max_size=200))
def test_mutf8_round_trip(text: str) -> None:
    raw = mutf8.encode(text)
    assert b"\0" not in raw and not any(b >= 0xF0 for b in raw)
    assert mutf8.decode(raw) == text
    assert mutf8.read_utf(mutf8.write_utf(text)) == (text, 2 + len(raw))


def prop_values() -> st.SearchStrategy[Prop]:
    return st.one_of(
        st.builds(Prop.boolean, st.booleans()),
        st.builds(Prop.byte, st.integers(-128, 127)),
        st.builds(Prop.short, st.integers(-(2**15), 2**15 - 1)),
        st.builds(Prop.int32, int32),
        st.builds(Prop.int64, int64),
        st.builds(Prop.float32, st.floats(-3.4e38, 3.4e38)),  # any double: held as its float32
        st.builds(Prop.float64, st.floats(allow_nan=False)),
        st.builds(Prop.string, st.text(max_size=30)),
    )


properties = st.one_of(
    st.none(),
    st.lists(st.tuples(st.text(min_size=1, max_size=12), prop_values()), max_size=15).map(java_properties),
)
packets = st.builds(GPacket, st.integers(-(2**15), 2**15 - 1), properties, st.binary(max_size=100), int64, int64,
                    st.integers(0, 2**32 - 1))


@given(packets)
def test_gpacket_round_trip(packet: GPacket) -> None:
    raw = packet.pack()
    assert GPacket.unpack_from(raw) == packet
    assert GPacket.unpack_from(raw).pack() == raw


@given(st.lists(st.tuples(st.text(min_size=1, max_size=12), prop_values()), max_size=15))
def test_properties_section_round_trip(items: list[tuple[str, Prop]]) -> None:
    props = tuple(items)
    raw = pack_properties(props)
    assert unpack_properties(raw, 0, len(raw)) == props
    assert all(p.type != PropType.OBJECT for _, p in props)


@given(st.lists(packets, max_size=6), st.data())
def test_reader_any_chunking_gives_the_same_packets(batch: list[GPacket], data: st.DataObject) -> None:
    stream = b"".join(p.pack() for p in batch)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    reader = GPacketReader()
    got: list[GPacket] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        reader.feed(stream[start:end])
        got.extend(reader)
    assert got == batch and reader.buffered == 0


@settings(max_examples=150)
@given(st.lists(st.tuples(packets, st.integers(0, 200_000)), max_size=6), st.data())
def test_reader_reading_into_its_own_buffer_gives_the_same_packets(batch: list[tuple[GPacket, int]],
                                                                  data: st.DataObject) -> None:
    # Reads of any length into the room get_buffer offers (packets up to 200 KB, so the
    # buffer is compacted and grown), some bytes fed instead, before or between them.
    want = [dataclasses.replace(p, payload=p.payload + bytes([i % 251]) * n) for i, (p, n) in enumerate(batch)]
    stream = b"".join(p.pack() for p in want)
    reader = GPacketReader()
    got: list[GPacket] = []
    at = 0
    while at < len(stream):
        step = data.draw(st.integers(1, 300_000))
        if data.draw(st.integers(0, 4)) == 0:
            reader.feed(stream[at : at + step])
            at += len(stream[at : at + step])
        else:
            with reader.get_buffer() as room:
                n = min(len(room), len(stream) - at, step)
                room[:n] = stream[at : at + n]
            reader.buffer_updated(n)
            at += n
        got.extend(reader)
    assert got == want and reader.buffered == 0


@settings(max_examples=200)
@given(st.binary(max_size=300), st.integers(1, 50))
def test_reader_on_garbage_raises_only_decode_error(stream: bytes, chunk: int) -> None:
    reader = GPacketReader(max_size=1 << 16)
    with contextlib.suppress(DecodeError):
        for i in range(0, len(stream), chunk):
            reader.feed(stream[i : i + chunk])
            list(reader)


@given(st.builds(MQGMO, version=st.integers(1, 4), options=int32, wait_interval=int32, resolved_q_name=name(48),
                 match_options=int32, group_status=st.sampled_from([" ", "G", "L"]), msg_token=ident(16),
                 returned_length=int32, msg_handle=int64), orders)
def test_gmo_round_trip(gmo: MQGMO, big_endian: bool) -> None:
    back = MQGMO.unpack_from(gmo.pack(big_endian=big_endian))
    assert back.pack(big_endian=big_endian) == gmo.pack(big_endian=big_endian)
    if gmo.version == 4:
        assert back == gmo


charv = st.builds(MQCHARV, int32, int32, int32, int32)


@given(st.one_of(
    st.builds(MQOD, version=st.just(4), object_type=int32, object_name=name(48), dynamic_q_name=name(48),
              alternate_user_id=name(12), object_rec_offset=int32, alternate_security_id=ident(40),
              resolved_q_mgr_name=name(48), object_string=charv, res_object_string=charv, resolved_type=int32),
    st.builds(MQPMO, version=st.just(3), options=int32, timeout=int32, resolved_q_name=name(48),
              put_msg_rec_fields=int32, original_msg_handle=int64, pub_level=int32),
    st.builds(MQIMPO, options=int32, returned_name=charv, type_string=name(8)),
    st.builds(MQSMPO, options=int32, value_ccsid=int32),
    st.builds(MQPD, support=int32, copy_options=int32),
), orders)  # fmt: skip
def test_api_structs_round_trip(value: Any, big_endian: bool) -> None:
    assert type(value).unpack_from(value.pack(big_endian=big_endian)) == value


@given(st.one_of(md_v1, md_v2), ident(24), ident(24), st.integers(0, 7))
def test_mqmd_decodes_alike_from_any_buffer(md: MQMD, msg_id: bytes, correl_id: bytes, offset: int) -> None:
    """Descriptors that differ only in MsgId and CorrelId decode alike from bytes, a view
    and a receive buffer; a descriptor decoded earlier is not changed by later decodes."""
    first = bytes(offset) + md.pack()
    other = md.replace(msg_id=msg_id, correl_id=correl_id)
    second = bytes(offset) + other.pack() + b"after"
    assert MQMD.unpack_from(first, offset) == md
    assert MQMD.unpack_from(second, offset) == other
    assert MQMD.unpack_from(memoryview(second), offset) == other
    assert MQMD.unpack_from(second, offset, big_endian=False) == other
    buf = bytearray(first)
    earlier = MQMD.unpack_from(buf, offset)
    buf[offset:] = other.pack()  # the receive buffer is reused: what was decoded from it stays
    assert MQMD.unpack_from(buf, offset) == other
    assert earlier == md and type(earlier.msg_id) is bytes and type(earlier.correl_id) is bytes
