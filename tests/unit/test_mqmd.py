"""MQMD against the layout and MQMD_DEFAULT byte image in shared/specs/ibmmq-reference.md §1."""

from __future__ import annotations

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import FIELD_NAMES, LAYOUT_V2, MQMD, QUEUE_FIELDS_END, queue_fields


def default_image_v2() -> bytes:
    """MQMD2_DEFAULT, little-endian, rebuilt from the spec's hex dump (bytes not shown are 0)."""
    img = bytearray(364)
    img[0x00:0x10] = bytes.fromhex("4d442020 01000000 00000000 08000000")
    img[0x10:0x20] = bytes.fromhex("ffffffff 00000000 22020000 00000000")
    img[0x20:0x30] = b" " * 8 + bytes.fromhex("ffffffff 02000000")
    img[0x15C:0x160] = bytes.fromhex("01000000")
    img[0x160:0x16C] = bytes.fromhex("00000000 00000000 ffffffff")
    img[4] = 2
    return bytes(img)


def test_sizes() -> None:
    assert len(MQMD().pack()) == C.MQMD_LENGTH_1 == 324
    assert len(MQMD(version=2).pack()) == C.MQMD_LENGTH_2 == 364


def test_default_image_v2() -> None:
    assert MQMD(version=2).pack() == default_image_v2()


def test_default_image_v1_is_v2_prefix_with_version_1() -> None:
    img = bytearray(default_image_v2()[:324])
    img[4] = 1
    assert MQMD().pack() == bytes(img)


@pytest.mark.parametrize(
    ("field", "offset"),
    [("report", 8), ("format", 32), ("msg_id", 48), ("correl_id", 72), ("backout_count", 96), ("reply_to_q", 100),
     ("reply_to_q_mgr", 148), ("user_identifier", 196), ("accounting_token", 208), ("put_appl_type", 272),
     ("put_appl_name", 276), ("put_date", 304), ("put_time", 312), ("appl_origin_data", 320), ("group_id", 324),
     ("msg_seq_number", 348), ("offset", 352), ("msg_flags", 356), ("original_length", 360)],
)
def test_offsets(field: str, offset: int) -> None:
    assert LAYOUT_V2.offset_of(field) == offset


def test_big_endian_round_trip_and_detection() -> None:
    md = MQMD(version=2, report=C.MQRO_COA, priority=7, reply_to_q="REPLY.Q", msg_id=b"A" * 24, original_length=5)
    raw = md.pack(big_endian=True)
    assert raw[4:8] == b"\x00\x00\x00\x02"
    assert raw[8:12] == C.MQRO_COA.to_bytes(4, "big")
    assert MQMD.unpack_from(raw) == md
    assert MQMD.unpack_from(md.pack()) == md


def test_char_fields_blank_padded_and_nul_terminated_on_input() -> None:
    md = MQMD(reply_to_q="Q1")
    raw = bytearray(md.pack())
    assert raw[100:148] == b"Q1" + b" " * 46
    raw[102:148] = b"\0garbage" + b" " * 38  # a NUL and everything after it count as blanks
    assert MQMD.unpack_from(bytes(raw)).reply_to_q == "Q1"


def test_bad_input_raises_decode_error() -> None:
    with pytest.raises(DecodeError):
        MQMD.unpack_from(b"MD  " + b"\x05\x00\x00\x00" + bytes(316))
    with pytest.raises(DecodeError):
        MQMD.unpack_from(b"XX  " + bytes(320))
    with pytest.raises(DecodeError):
        MQMD.unpack_from(MQMD(version=2).pack()[:300])


def test_identifier_fields_must_have_their_length() -> None:
    with pytest.raises(ValueError, match="msg_id"):
        MQMD(msg_id=b"short").pack()
    with pytest.raises(ValueError, match="reply_to_q"):
        MQMD(reply_to_q="Q" * 49).pack()


def test_replace_copies_and_rejects_unknown_fields() -> None:
    md = MQMD(priority=3)
    other = md.replace(priority=4, reply_to_q="R")
    assert (md.priority, other.priority, other.reply_to_q, other.msg_type) == (3, 4, "R", md.msg_type)
    with pytest.raises(TypeError):
        md.replace(no_such_field=1)


# The integer fields' offsets in the spec's table (§1): where a big-endian writer's image differs.
_LONGS = [4, 8, 12, 16, 20, 24, 28, 40, 44, 96, 272, 348, 352, 356, 360]


def big_endian_image(little: bytes) -> bytes:
    out = bytearray(little)
    for at in _LONGS:
        if at < len(out):
            out[at : at + 4] = little[at : at + 4][::-1]
    return bytes(out)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("big_endian", [False, True])
def test_default_images_both_orders(version: int, big_endian: bool) -> None:
    little = bytearray(default_image_v2()[: MQMD.length(version)])
    little[4] = version
    image = big_endian_image(bytes(little)) if big_endian else bytes(little)
    md = MQMD(version=version)
    assert md.pack(big_endian=big_endian) == image
    assert MQMD.decode(image) == md and MQMD.decode(image).pack(big_endian=big_endian) == image
    assert MQMD(version=3 - version).pack(version=version, big_endian=big_endian) == image


@pytest.mark.parametrize("big_endian", [False, True])
def test_every_field_is_read_where_the_spec_puts_it(big_endian: bool) -> None:
    """A v2 image with each field set to a distinct value at its spec offset."""
    values = {name: i + 3 for i, (name, kind, _) in enumerate(LAYOUT_V2.fields) if kind == "l"}
    values["version"] = 2
    raw = bytearray(default_image_v2())
    order = "big" if big_endian else "little"
    for name, value in values.items():
        at = LAYOUT_V2.offset_of(name)
        raw[at : at + 4] = value.to_bytes(4, order, signed=True)
    raw[48:72], raw[72:96], raw[208:240], raw[324:348] = b"M" * 24, b"C" * 24, b"A" * 32, b"G" * 24
    raw[32:40], raw[100:148], raw[148:196] = b"MQSTR   ", b"RQ".ljust(48), b"RQM\0junk".ljust(48)
    raw[196:208], raw[240:272], raw[276:304] = b"bob".ljust(12), b"aid".ljust(32), b"app".ljust(28)
    raw[304:312], raw[312:320], raw[320:324] = b"20261126", b"12345678", b"od  "
    md = MQMD.decode(bytes(raw))
    assert {name: getattr(md, name) for name in values} == values
    assert (md.msg_id, md.correl_id, md.accounting_token, md.group_id) == (b"M" * 24, b"C" * 24, b"A" * 32, b"G" * 24)
    assert (md.struc_id, md.format, md.reply_to_q, md.reply_to_q_mgr) == ("MD", "MQSTR", "RQ", "RQM")
    assert (md.user_identifier, md.appl_identity_data, md.put_appl_name) == ("bob", "aid", "app")
    assert (md.put_date, md.put_time, md.appl_origin_data) == ("20261126", "12345678", "od")
    assert md.pack(big_endian=big_endian) == bytes(raw)
    assert md.pack(big_endian=not big_endian) == big_endian_image(bytes(raw))  # turning the integers round


def test_a_descriptor_cannot_be_changed() -> None:
    md = MQMD(priority=3)
    with pytest.raises(AttributeError):
        md.priority = 4  # type: ignore[misc]
    with pytest.raises(AttributeError):
        md.other = 1  # type: ignore[attr-defined]
    other = md.replace(priority=4)
    assert md.priority == 3 and other.priority == 4


@pytest.mark.parametrize("version", [1, 2])
def test_v2_with_ids_is_with_ids_packed_as_version_2(version: int) -> None:
    md = MQMD(version=version, priority=7, reply_to_q="R", put_appl_name="app")
    ids = (b"m" * 24, b"c" * 24)
    assert md.v2_with_ids(*ids) == md.with_ids(*ids).pack(version=2)
    assert MQMD.decode(md.v2_with_ids(*ids)).version == 2


@pytest.mark.parametrize("version", [1, 2])
def test_with_ids_packed_is_with_ids_and_its_pack(version: int) -> None:
    md = MQMD(version=version, priority=7, reply_to_q="R", put_appl_name="app")
    ids = (b"m" * 24, b"c" * 24)
    got, raw = md.with_ids_packed(*ids)
    assert got == md.with_ids(*ids) and raw == md.with_ids(*ids).pack() == got.pack()
    assert len(raw) == MQMD.length(version) and got.msg_id == ids[0] and got.correl_id == ids[1]


def test_image_is_the_held_bytes_what_pack_gives_at_version_2() -> None:
    md = MQMD(version=2, priority=7, reply_to_q="R").with_ids(b"m" * 24, b"c" * 24, "20261127", "13500000")
    assert md.image == md.pack() and len(md.image) == 364
    assert md.image is md.image  # the bytes themselves, nothing made
    v1 = MQMD(priority=7)
    assert len(v1.image) == 364 and v1.image[:324] == v1.pack() and v1.image[8:] == v1.pack(version=2)[8:]


def test_derived_copies_refuse_what_does_not_fit() -> None:
    md = MQMD(version=2)
    with pytest.raises(ValueError, match="24 bytes"):
        md.with_ids(b"short", bytes(24))
    with pytest.raises(ValueError, match="put_date"):
        md.with_put_time("202611260", "00000000")
    with pytest.raises(ValueError, match="version"):
        md.replace(version=3)
    with pytest.raises(ValueError, match="priority"):
        md.replace(priority=2**31)


def test_a_version_1_descriptor_keeps_its_version_2_fields_until_packed() -> None:
    md = MQMD(group_id=b"G" * 24, msg_flags=C.MQMF_LAST_MSG_IN_GROUP)
    assert md.version == 1 and md.has_v2_fields and md.group_id == b"G" * 24
    assert len(md.pack()) == 324 and not MQMD.decode(md.pack()).has_v2_fields
    assert MQMD.decode(md.pack(version=2)).replace(version=1) == md


def test_queue_fields_read_in_place() -> None:
    md = MQMD(version=2, expiry=50, priority=7, persistence=1, msg_id=b"M" * 24, correl_id=b"C" * 24)
    raw = b"head" + md.pack()
    assert queue_fields(raw, 4) == (50, 7, 1, b"M" * 24, b"C" * 24)
    assert queue_fields(raw[: 4 + QUEUE_FIELDS_END], 4) == queue_fields(raw, 4)


def test_repr_names_what_differs_from_the_default() -> None:
    assert repr(MQMD(priority=4)) == "MQMD(version=1, priority=4)"
    assert set(MQMD().asdict()) == set(FIELD_NAMES)


@pytest.mark.parametrize(("user", "token", "appl_id"), [("", bytes(32), ""), ("subuser", b"t" * 32, "identity data"),
                                                         ("twelve_chars", bytes(range(32)), "x" * 32)])
def test_a_copy_identity_spliced_is_what_put_context_makes(user: str, token: bytes, appl_id: str) -> None:
    put = MQMD(format="MQSTR", report=C.MQRO_COA, reply_to_q="RQ", expiry=50, correl_id=b"c" * 24, msg_type=2)
    context = ("publisher", b"p" * 32, "appl", 28, "pubapp", "20261127", "00011122", "orig")
    stored = put.with_put_context(b"m" * 24, b"c" * 24, 4, 1, "QM1", context)
    spliced = stored.with_copy_identity(7, 0, user, token, appl_id)
    made = stored.with_put_context(bytes(24), bytes(24), 7, 0, "QM1", (user, token, appl_id, *context[3:]))
    assert spliced.pack() == made.pack()
    with pytest.raises(ValueError):
        stored.with_copy_identity(1, 0, user, b"short", appl_id)
