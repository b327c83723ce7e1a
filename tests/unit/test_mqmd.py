"""MQMD against the layout and MQMD_DEFAULT byte image in shared/specs/ibmmq-reference.md §1."""

from __future__ import annotations

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import LAYOUT_V2, MQMD


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
