"""The records of an MQOD and MQPMO version 2 read from their bytes (ferrymq.wire.distrecords),
at the offsets of ibmmq-reference.md §4.3/§4.5, with IBM's reasons for what is wrong."""

from __future__ import annotations

import struct

import pytest

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.api_structs import MQOD, MQPMO
from ferrymq.wire.distrecords import od_records, pmo_records, write_responses
from ferrymq.wire.mqdh import MQOR, MQPMR


def od_bytes(recs: int, or_off: int, rr_off: int = 0, or_ptr: int = 0, rr_ptr: int = 0, n: int = 2) -> bytearray:
    raw = bytearray(MQOD(version=C.MQOD_VERSION_2).pack())
    assert len(raw) == C.MQOD_LENGTH_2 == 208
    struct.pack_into("<i", raw, 168, recs)
    struct.pack_into("<ii", raw, 184, or_off, rr_off)
    struct.pack_into("<QQ", raw, 192, or_ptr, rr_ptr)
    raw += MQOR("A", "").pack() + MQOR("B", "QM2").pack()[: 96 * (n - 1)] if n else b""
    return raw


def reason(fn: object, *args: object) -> int:
    with pytest.raises(MQError) as e:
        fn(*args)  # type: ignore[operator]
    assert e.value.comp == C.MQCC_FAILED
    return e.value.reason


def test_object_records_at_their_offset() -> None:
    raw = od_bytes(2, 208, 208 + 192) + bytes(16)
    found = od_records(raw)
    assert [(o.object_name, o.object_q_mgr_name) for o in found.objects] == [("A", ""), ("B", "QM2")]
    assert found.response_offset == 400
    write_responses(raw, 400, [(0, 0), (2, 2085)])
    assert struct.unpack_from("<4i", raw, 400) == (0, 0, 2, 2085)


def test_od_refusals() -> None:
    assert reason(od_records, od_bytes(-1, 208)) == C.MQRC_RECS_PRESENT_ERROR
    assert reason(od_records, od_bytes(2, 0)) == C.MQRC_OBJECT_RECORDS_ERROR  # neither offset nor pointer
    assert reason(od_records, od_bytes(2, 208, or_ptr=0x1000)) == C.MQRC_OBJECT_RECORDS_ERROR  # both
    assert reason(od_records, od_bytes(2, 0, or_ptr=0x1000)) == C.MQRC_OBJECT_RECORDS_ERROR  # a pointer
    assert reason(od_records, od_bytes(3, 208)) == C.MQRC_OBJECT_RECORDS_ERROR  # fewer records than RecsPresent
    assert reason(od_records, od_bytes(2, 208, 400, rr_ptr=8)) == C.MQRC_RESPONSE_RECORDS_ERROR
    assert reason(od_records, od_bytes(2, 208, 400)) == C.MQRC_RESPONSE_RECORDS_ERROR  # past the end
    assert od_records(od_bytes(0, 0)).objects == ()  # RecsPresent 0: no list
    assert od_records(MQOD().pack()).objects == ()  # version 1


def pmo_bytes(recs: int, fields: int, pmr_off: int, rr_off: int = 0, pmr_ptr: int = 0, rr_ptr: int = 0,
              records: tuple[MQPMR, ...] = ()) -> bytearray:
    raw = bytearray(MQPMO(version=C.MQPMO_VERSION_2).pack())
    assert len(raw) == C.MQPMO_LENGTH_2 == 160
    struct.pack_into("<iiii", raw, 128, recs, fields, pmr_off, rr_off)
    struct.pack_into("<QQ", raw, 144, pmr_ptr, rr_ptr)
    for r in records:
        raw += r.pack(fields)
    return raw


def test_put_message_records_by_their_fields() -> None:
    fields = C.MQPMRF_CORREL_ID | C.MQPMRF_FEEDBACK
    recs = (MQPMR(correl_id=b"c" * 24, feedback=7), MQPMR(correl_id=b"d" * 24, feedback=8))
    raw = pmo_bytes(2, fields, 160, 160 + 56, records=recs) + bytes(16)
    assert MQPMR.length(fields) == 28
    found = pmo_records(raw)
    assert found.fields == fields and found.records == recs and found.response_offset == 216


def test_pmo_refusals() -> None:
    rec = (MQPMR(),)
    assert reason(pmo_records, pmo_bytes(-1, 0, 0)) == C.MQRC_RECS_PRESENT_ERROR
    assert reason(pmo_records, pmo_bytes(1, 0x40, 160)) == C.MQRC_PMO_RECORD_FLAGS_ERROR
    assert reason(pmo_records, pmo_bytes(1, 1, 160, pmr_ptr=16, records=rec)) == C.MQRC_PUT_MSG_RECORDS_ERROR
    assert reason(pmo_records, pmo_bytes(1, 1, 0, pmr_ptr=16)) == C.MQRC_PUT_MSG_RECORDS_ERROR
    assert reason(pmo_records, pmo_bytes(2, 1, 160, records=rec)) == C.MQRC_PUT_MSG_RECORDS_ERROR  # one short
    assert reason(pmo_records, pmo_bytes(1, 1, 160, 184, rr_ptr=16, records=rec)) == C.MQRC_RESPONSE_RECORDS_ERROR
    assert pmo_records(pmo_bytes(1, 1, 0)).records == ()  # records are optional
