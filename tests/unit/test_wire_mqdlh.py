"""MQDLH against shared/specs/ibmmq-reference.md §4.1."""

from __future__ import annotations

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import LAYOUT, MQDLH


def default_image() -> bytes:
    """MQDLH_DEFAULT, little-endian: character fields NUL, Format blanks, integers 0."""
    img = bytearray(172)
    img[0:8] = b"DLH " + bytes.fromhex("01000000")
    img[116:124] = b" " * 8
    return bytes(img)


def test_default_image() -> None:
    assert len(MQDLH().pack()) == C.MQDLH_LENGTH_1 == 172
    assert MQDLH().pack() == default_image()


@pytest.mark.parametrize(
    ("field", "offset"),
    [("reason", 8), ("dest_q_name", 12), ("dest_q_mgr_name", 60), ("encoding", 108), ("coded_char_set_id", 112),
     ("format", 116), ("put_appl_type", 124), ("put_appl_name", 128), ("put_date", 156), ("put_time", 164)],
)
def test_offsets(field: str, offset: int) -> None:
    assert LAYOUT.offset_of(field) == offset


@pytest.mark.parametrize("big_endian", [False, True])
def test_round_trip(big_endian: bool) -> None:
    dlh = MQDLH(reason=C.MQRC_Q_FULL, dest_q_name="APP.Q", dest_q_mgr_name="QM1", encoding=546,
                coded_char_set_id=1208, format="MQSTR", put_appl_type=C.MQAT_QMGR, put_appl_name="QM1",
                put_date="20240102", put_time="12345678")
    raw = dlh.pack(big_endian=big_endian)
    order = "big" if big_endian else "little"
    assert raw[8:12] == (2053).to_bytes(4, order)
    assert raw[12:60] == b"APP.Q" + b" " * 43
    assert raw[116:124] == b"MQSTR   "
    assert MQDLH.unpack_from(raw) == dlh
    assert MQDLH.unpack_from(b"\0" * 3 + raw, 3) == dlh


def test_bad_input() -> None:
    with pytest.raises(DecodeError):
        MQDLH.unpack_from(default_image()[:171])
    with pytest.raises(DecodeError):
        MQDLH.unpack_from(b"DLX " + default_image()[4:])
    bad = bytearray(default_image())
    bad[4] = 2
    with pytest.raises(DecodeError):
        MQDLH.unpack_from(bytes(bad))
    with pytest.raises(DecodeError):  # a version that is 1 in neither byte order when forced
        MQDLH.unpack_from(default_image(), big_endian=True)
