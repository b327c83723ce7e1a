"""MQDH, MQOR, MQPMR and MQRR against shared/specs/ibmmq-reference.md §4.3."""

from __future__ import annotations

import struct

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqdh import LAYOUT, MQDH, MQOR, MQPMR, MQRR


def test_default_image() -> None:
    """MQDH_DEFAULT with the StrucLength pack() must write (48) instead of the C placeholder 0."""
    expected = b"DH  " + bytes.fromhex("01000000 30000000 00000000 00000000") + b" " * 8 + bytes(20)
    assert len(expected) == C.MQDH_LENGTH_1 == 48
    assert MQDH().pack() == expected


@pytest.mark.parametrize(
    ("field", "offset"),
    [("struc_length", 8), ("encoding", 12), ("coded_char_set_id", 16), ("format", 20), ("flags", 28),
     ("put_msg_rec_fields", 32), ("recs_present", 36), ("object_rec_offset", 40), ("put_msg_rec_offset", 44)],
)
def test_offsets(field: str, offset: int) -> None:
    assert LAYOUT.offset_of(field) == offset


def test_object_and_response_records() -> None:
    assert MQOR().pack() == bytes(96)
    raw = MQOR("Q1", "QM1").pack()
    assert raw == b"Q1" + b" " * 46 + b"QM1" + b" " * 45
    assert MQOR.unpack_from(raw) == MQOR("Q1", "QM1")
    assert MQRR().pack() == bytes(8)
    rr = MQRR(C.MQCC_FAILED, C.MQRC_Q_FULL)
    assert rr.pack(big_endian=True) == struct.pack(">ii", 2, 2053)
    assert MQRR.unpack_from(rr.pack()) == rr
    with pytest.raises(DecodeError):
        MQRR.unpack_from(b"1234567")


@pytest.mark.parametrize(
    ("fields", "length"),
    [(0, 0), (C.MQPMRF_MSG_ID, 24), (C.MQPMRF_FEEDBACK, 4), (C.MQPMRF_ACCOUNTING_TOKEN, 32), (0x1F, 108),
     (C.MQPMRF_CORREL_ID | C.MQPMRF_FEEDBACK, 28)],
)
def test_pmr_lengths(fields: int, length: int) -> None:
    assert MQPMR.length(fields) == length
    assert len(MQPMR().pack(fields)) == length


def test_pmr_field_order() -> None:
    pmr = MQPMR(msg_id=b"m" * 24, correl_id=b"c" * 24, group_id=b"g" * 24, feedback=7, accounting_token=b"a" * 32)
    raw = pmr.pack(0x1F, big_endian=True)
    assert raw == b"m" * 24 + b"c" * 24 + b"g" * 24 + struct.pack(">i", 7) + b"a" * 32
    only = pmr.pack(C.MQPMRF_CORREL_ID | C.MQPMRF_FEEDBACK)
    assert only == b"c" * 24 + struct.pack("<i", 7)
    assert MQPMR.unpack_from(only, fields=C.MQPMRF_CORREL_ID | C.MQPMRF_FEEDBACK) == MQPMR(correl_id=b"c" * 24,
                                                                                          feedback=7)
    with pytest.raises(ValueError):
        pmr.pack(0x20)
    with pytest.raises(DecodeError):
        MQPMR.unpack_from(raw, fields=0x40)


@pytest.mark.parametrize("big_endian", [False, True])
def test_distribution_list_round_trip(big_endian: bool) -> None:
    fields = C.MQPMRF_MSG_ID | C.MQPMRF_FEEDBACK
    dh = MQDH(encoding=546, coded_char_set_id=1208, format="MQSTR", flags=C.MQDHF_NEW_MSG_IDS,
              put_msg_rec_fields=fields, objects=(MQOR("A"), MQOR("B", "QMB")),
              put_msg_recs=(MQPMR(msg_id=b"1" * 24, feedback=1), MQPMR(msg_id=b"2" * 24)))
    raw = dh.pack(big_endian=big_endian)
    assert len(raw) == dh.packed_length == 48 + 2 * 96 + 2 * 28
    unpack = struct.Struct((">" if big_endian else "<") + "iiiii")
    assert unpack.unpack_from(raw, 28) == (C.MQDHF_NEW_MSG_IDS, fields, 2, 48, 48 + 192)
    back = MQDH.unpack_from(raw + b"data")
    assert back == dh and back.struc_length == len(raw)


def test_records_after_a_gap_are_found_by_offset() -> None:
    head = LAYOUT.pack(["DH  ", 1, 48 + 8 + 96, 0, 0, "", 0, 0, 1, 56, 0], False)
    raw = head + b"\xee" * 8 + MQOR("GAPPED").pack()
    dh = MQDH.unpack_from(raw)
    assert dh.objects == (MQOR("GAPPED"),) and dh.struc_length == 152


def test_pack_refuses_inconsistent_records() -> None:
    with pytest.raises(ValueError):
        MQDH(put_msg_rec_fields=1, objects=(MQOR("A"),), put_msg_recs=(MQPMR(), MQPMR())).pack()
    with pytest.raises(ValueError):
        MQDH(objects=(MQOR("A"),), put_msg_recs=(MQPMR(),)).pack()


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        (["DH  ", 1, 47, 0, 0, "", 0, 0, 0, 0, 0], "StrucLength below 48"),
        (["DH  ", 1, 10_000, 0, 0, "", 0, 0, 0, 0, 0], "StrucLength beyond the buffer"),
        (["DH  ", 1, 48, 0, 0, "", 0, 0, -1, 0, 0], "negative RecsPresent"),
        (["DH  ", 1, 144, 0, 0, "", 0, 0, 2, 48, 0], "records past StrucLength"),
        (["DH  ", 1, 144, 0, 0, "", 0, 0, 1, 0, 0], "records over the MQDH itself"),
        (["DH  ", 1, 144, 0, 0, "", 0, 0, 1, 2**31 - 1, 0], "huge offset"),
        (["DH  ", 1, 144, 0, 0, "", 0, 0x20, 1, 48, 0], "unknown PutMsgRecFields bit"),
        (["DH  ", 1, 144, 0, 0, "", 0, 1, 1, 48, 130], "MQPMR past StrucLength"),
        (["DH  ", 2, 144, 0, 0, "", 0, 0, 1, 48, 0], "version 2"),
    ],
)
def test_bad_headers(values: list[object], reason: str) -> None:
    raw = LAYOUT.pack(values, False) + bytes(96)
    with pytest.raises(DecodeError):
        MQDH.unpack_from(raw)
