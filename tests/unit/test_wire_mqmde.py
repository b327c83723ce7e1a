"""MQMDE against shared/specs/ibmmq-reference.md §1 (MQMDE table), and its MQMD helpers."""

from __future__ import annotations

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqmde import LAYOUT, MQMDE, absorb_mde, merge_mde, split_md


def default_image() -> bytes:
    """MQMDE_DEFAULT, little-endian, from the spec's table."""
    return (
        b"MDE "
        + bytes.fromhex("02000000 48000000 22020000 00000000")
        + b" " * 8
        + bytes(4)
        + bytes(24)
        + bytes.fromhex("01000000 00000000 00000000 ffffffff")
    )


def test_default_image() -> None:
    assert len(default_image()) == C.MQMDE_LENGTH_2 == 72
    assert MQMDE().pack() == default_image()


def test_default_image_big_endian() -> None:
    raw = MQMDE().pack(big_endian=True)
    assert raw[4:16] == bytes.fromhex("00000002 00000048 00000222")
    assert raw[56:60] == bytes.fromhex("00000001")
    assert MQMDE.unpack_from(raw) == MQMDE()


@pytest.mark.parametrize(
    ("field", "offset"),
    [("struc_length", 8), ("encoding", 12), ("coded_char_set_id", 16), ("format", 20), ("flags", 28),
     ("group_id", 32), ("msg_seq_number", 56), ("offset", 60), ("msg_flags", 64), ("original_length", 68)],
)
def test_offsets(field: str, offset: int) -> None:
    assert LAYOUT.offset_of(field) == offset


@pytest.mark.parametrize("big_endian", [False, True])
def test_round_trip(big_endian: bool) -> None:
    mde = MQMDE(encoding=273, coded_char_set_id=1208, format="MQSTR", group_id=b"g" * 24, msg_seq_number=4,
                offset=100, msg_flags=C.MQMF_LAST_MSG_IN_GROUP, original_length=50)
    raw = mde.pack(big_endian=big_endian)
    assert raw[20:28] == b"MQSTR   "
    assert MQMDE.unpack_from(raw) == mde
    assert MQMDE.unpack_from(b"xx" + raw, 2, big_endian=big_endian) == mde


def test_bad_input() -> None:
    good = bytearray(default_image())
    with pytest.raises(DecodeError):
        MQMDE.unpack_from(bytes(good[:71]))
    bad = bytearray(good)
    bad[0:4] = b"MD  "
    with pytest.raises(DecodeError):
        MQMDE.unpack_from(bytes(bad))
    bad = bytearray(good)
    bad[4] = 1  # only version 2 exists
    with pytest.raises(DecodeError):
        MQMDE.unpack_from(bytes(bad))
    bad = bytearray(good)
    bad[8] = 76  # no variable part, so no other length
    with pytest.raises(DecodeError):
        MQMDE.unpack_from(bytes(bad))


def test_split_without_v2_fields_gives_no_mde() -> None:
    md = MQMD(version=2, format="MQSTR", priority=3)
    v1, mde = split_md(md)
    assert mde is None
    assert v1 == md.replace(version=1)


def test_split_and_merge() -> None:
    md = MQMD(version=2, format="MQSTR", encoding=273, coded_char_set_id=1208, group_id=b"G" * 24,
              msg_seq_number=2, offset=10, msg_flags=C.MQMF_SEGMENT, original_length=99)
    v1, mde = split_md(md, encoding=C.MQENC_NATIVE, ccsid=819)
    assert mde is not None
    assert v1.version == 1 and v1.format == "MQHMDE" and v1.encoding == C.MQENC_NATIVE and v1.coded_char_set_id == 819
    assert not v1.has_v2_fields
    assert (mde.format, mde.encoding, mde.coded_char_set_id) == ("MQSTR", 273, 1208)
    assert merge_mde(v1, mde) == md


def test_absorb_mde_reads_in_the_md_encoding() -> None:
    md = MQMD(version=2, format="MQSTR", group_id=b"G" * 24, msg_flags=C.MQMF_MSG_IN_GROUP)
    v1, mde = split_md(md, encoding=273)
    assert mde is not None
    data = mde.pack(big_endian=True) + b"hello"
    merged, at = absorb_mde(v1, data)
    assert merged == md and data[at:] == b"hello"
    plain = MQMD(format="MQSTR")
    assert absorb_mde(plain, b"hello") == (plain, 0)
    with pytest.raises(DecodeError):
        absorb_mde(v1, data[:40])
