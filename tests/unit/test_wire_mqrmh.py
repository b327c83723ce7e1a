"""MQRMH against shared/specs/ibmmq-reference.md §3."""

from __future__ import annotations

import struct

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqrmh import LAYOUT, MQRMH, split_logical_offset


def test_default_image() -> None:
    """MQRMH_DEFAULT with the true StrucLength (108) in place of the C placeholder 0."""
    expected = (
        b"RMH "
        + bytes.fromhex("01000000 6c000000 22020000 00000000")
        + b" " * 8  # Format
        + bytes(4)  # Flags
        + b" " * 8  # ObjectType
        + bytes(24)  # ObjectInstanceId
        + bytes(44)  # four (length, offset) pairs and the three logical fields
    )
    assert len(expected) == C.MQRMH_LENGTH_1 == 108
    assert MQRMH().pack() == expected


@pytest.mark.parametrize(
    ("field", "offset"),
    [("struc_length", 8), ("encoding", 12), ("format", 20), ("flags", 28), ("object_type", 32),
     ("object_instance_id", 40), ("src_env_length", 64), ("src_env_offset", 68), ("src_name_length", 72),
     ("src_name_offset", 76), ("dest_env_length", 80), ("dest_env_offset", 84), ("dest_name_length", 88),
     ("dest_name_offset", 92), ("data_logical_length", 96), ("data_logical_offset", 100),
     ("data_logical_offset2", 104)],
)
def test_offsets(field: str, offset: int) -> None:
    assert LAYOUT.offset_of(field) == offset


@pytest.mark.parametrize("big_endian", [False, True])
def test_strings_laid_out_after_the_fixed_part(big_endian: bool) -> None:
    rmh = MQRMH(format="MQSTR", flags=C.MQRMHF_LAST, object_type="FILE", object_instance_id=b"i" * 24,
                src_env="host1", src_name="/tmp/a", dest_name="b.dat", data_logical_length=4096,
                data_logical_offset=5, data_logical_offset2=2)
    raw = rmh.pack(big_endian=big_endian)
    pairs = struct.unpack_from((">" if big_endian else "<") + "8i", raw, 64)
    assert pairs == (5, 108, 6, 113, 0, 0, 5, 119)
    assert raw[108:] == b"host1/tmp/ab.dat"
    back = MQRMH.unpack_from(raw + b"BULK")
    assert back == rmh and back.struc_length == len(raw) == 124
    assert back.logical_offset == 2_000_000_005


def test_strings_by_offset_in_any_order() -> None:
    tail = b"..DEST..SRC"
    head = LAYOUT.pack(["RMH ", 1, 108 + len(tail), 546, 0, "", 0, "", bytes(24), 0, 0, 3, 116, 0, 0, 4, 110,
                        0, 0, 0], False)
    rmh = MQRMH.unpack_from(head + tail)
    assert (rmh.src_name, rmh.dest_name, rmh.src_env, rmh.dest_env) == ("SRC", "DEST", "", "")


def test_split_logical_offset() -> None:
    assert split_logical_offset(2_000_000_005) == (5, 2)
    assert split_logical_offset(999_999_999) == (999_999_999, 0)
    with pytest.raises(ValueError):
        split_logical_offset(-1)


@pytest.mark.parametrize(
    ("struc_length", "pair", "reason"),
    [
        (100, (0, 0), "StrucLength below the fixed part"),
        (1000, (0, 0), "StrucLength beyond the buffer"),
        (112, (-1, 108), "negative length"),
        (112, (5, 108), "string past StrucLength"),
        (112, (4, 50), "string inside the fixed part"),
        (112, (4, 2**31 - 4), "offset near the int32 limit"),
    ],
)
def test_bad_headers(struc_length: int, pair: tuple[int, int], reason: str) -> None:
    head = LAYOUT.pack(["RMH ", 1, struc_length, 546, 0, "", 0, "", bytes(24), *pair, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                       False)
    with pytest.raises(DecodeError):
        MQRMH.unpack_from(head + b"abcd")
