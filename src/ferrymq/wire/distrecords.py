"""The distribution-list records of an MQOD and an MQPMO version 2, read from their bytes as
IBM's MQI reads them (ibmmq-reference.md §4.3 and §4.5), for the pymqi-compatible layer.

MQOD v2: RecsPresent @168, KnownDestCount @172, UnknownDestCount @176, InvalidDestCount @180,
ObjectRecOffset @184, ResponseRecOffset @188, ObjectRecPtr @192/8, ResponseRecPtr @200/8.
MQPMO v2: RecsPresent @128, PutMsgRecFields @132, PutMsgRecOffset @136, ResponseRecOffset
@140, PutMsgRecPtr @144/8, ResponseRecPtr @152/8. Offsets count from the structure's start.
MQOR 96 bytes, MQRR 8, MQPMR as PutMsgRecFields says (ferrymq.wire.mqdh).

The rules, each refusal IBM's reason with MQCC_FAILED:

- RecsPresent < 0: MQRC_RECS_PRESENT_ERROR (2154). 0 (or version 1): no list.
- Object records: exactly one of ObjectRecOffset and ObjectRecPtr must be non-zero, and the
  records must lie in the bytes given: MQRC_OBJECT_RECORDS_ERROR (2155). A pointer means
  nothing across a process boundary, so a non-zero one counts as an invalid pointer.
- Response records: optional; both location fields set, a pointer, or records past the
  bytes given: MQRC_RESPONSE_RECORDS_ERROR (2156).
- PutMsgRecFields with bits other than MQPMRF_*: MQRC_PMO_RECORD_FLAGS_ERROR (2158).
- Put-message records: optional; both location fields set, a pointer, or records past the
  bytes given: MQRC_PUT_MSG_RECORDS_ERROR (2159).

Counts are bounded by the bytes present before anything is allocated.
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.wire import mqdh
from ferrymq.wire.api_structs import MQOD, MQPMO, layout
from ferrymq.wire.mqmd import detect_big_endian

Buffer = bytes | bytearray | memoryview
_OD2, _PMO2 = layout(MQOD, 2), layout(MQPMO, 2)


@dataclass(frozen=True, slots=True)
class ODRecords:
    od: MQOD
    objects: tuple[mqdh.MQOR, ...]
    response_offset: int  # from the MQOD's start; 0: no response records wanted


@dataclass(frozen=True, slots=True)
class PMORecords:
    pmo: MQPMO
    fields: int
    records: tuple[mqdh.MQPMR, ...]
    response_offset: int  # from the MQPMO's start; 0: none wanted


def _ptr(buf: Buffer, at: int, big_endian: bool) -> int:
    return int.from_bytes(bytes(buf[at:at + 8]), "big" if big_endian else "little")


def _area(buf: Buffer, start: int, count: int, size: int, reason: int, what: str) -> None:
    if start < 0 or start + count * size > len(buf):
        raise failed(reason, f"{count} {what} of {size} bytes at offset {start} run past the {len(buf)} bytes given")


def _located(rec_offset: int, ptr: int, reason: int, what: str, *, required: bool) -> bool:
    """Whether records are at an offset; raises ``reason`` for a pointer or for both set."""
    if rec_offset and ptr:
        raise failed(reason, f"both the offset and the pointer of the {what} are set")
    if ptr:
        raise failed(reason, f"the {what}' pointer cannot be followed here: give them at an offset")
    if required and not rec_offset:
        raise failed(reason, f"RecsPresent > 0 but neither the offset nor the pointer of the {what} is set")
    return bool(rec_offset)


def od_records(buf: Buffer, offset: int = 0, *, big_endian: bool | None = None) -> ODRecords:
    """An MQOD and its object records (see the module docstring).

    Raises:
        DecodeError: not an MQOD. MQError: 2154, 2155, 2156.
    """
    if big_endian is None:
        big_endian = detect_big_endian(buf, offset, "MQOD", (1, 2, 3, 4))
    od = MQOD.unpack_from(buf, offset, big_endian=big_endian)
    if od.version < C.MQOD_VERSION_2 or od.recs_present == 0:
        return ODRecords(od, (), 0)
    n = od.recs_present
    if n < 0:
        raise failed(C.MQRC_RECS_PRESENT_ERROR, f"RecsPresent {n} is negative")
    _located(od.object_rec_offset, _ptr(buf, offset + _OD2.offset_of("object_rec_ptr"), big_endian),
             C.MQRC_OBJECT_RECORDS_ERROR, "object records", required=True)
    start = offset + od.object_rec_offset
    _area(buf, start, n, mqdh.OR_LENGTH, C.MQRC_OBJECT_RECORDS_ERROR, "object records")
    objects = tuple(mqdh.MQOR.unpack_from(buf, start + i * mqdh.OR_LENGTH) for i in range(n))
    if _located(od.response_rec_offset, _ptr(buf, offset + _OD2.offset_of("response_rec_ptr"), big_endian),
                C.MQRC_RESPONSE_RECORDS_ERROR, "response records", required=False):
        _area(buf, offset + od.response_rec_offset, n, mqdh.RR_LENGTH, C.MQRC_RESPONSE_RECORDS_ERROR,
              "response records")
    return ODRecords(od, objects, od.response_rec_offset)


def pmo_records(buf: Buffer, offset: int = 0, *, big_endian: bool | None = None) -> PMORecords:
    """An MQPMO and its put-message records (see the module docstring).

    Raises:
        DecodeError: not an MQPMO. MQError: 2154, 2156, 2158, 2159.
    """
    if big_endian is None:
        big_endian = detect_big_endian(buf, offset, "MQPMO", (1, 2, 3))
    pmo = MQPMO.unpack_from(buf, offset, big_endian=big_endian)
    if pmo.version < C.MQPMO_VERSION_2 or pmo.recs_present == 0:
        return PMORecords(pmo, 0, (), 0)
    n, fields = pmo.recs_present, pmo.put_msg_rec_fields
    if n < 0:
        raise failed(C.MQRC_RECS_PRESENT_ERROR, f"RecsPresent {n} is negative")
    if fields & ~mqdh.PMRF_ALL:
        raise failed(C.MQRC_PMO_RECORD_FLAGS_ERROR, f"PutMsgRecFields {fields:#x} has bits other than MQPMRF_*")
    records: tuple[mqdh.MQPMR, ...] = ()
    if _located(pmo.put_msg_rec_offset, _ptr(buf, offset + _PMO2.offset_of("put_msg_rec_ptr"), big_endian),
                C.MQRC_PUT_MSG_RECORDS_ERROR, "put-message records", required=False) and fields:
        size = mqdh.MQPMR.length(fields)
        start = offset + pmo.put_msg_rec_offset
        _area(buf, start, n, size, C.MQRC_PUT_MSG_RECORDS_ERROR, "put-message records")
        records = tuple(mqdh.MQPMR.unpack_from(buf, start + i * size, fields=fields, big_endian=big_endian)
                        for i in range(n))
    if _located(pmo.response_rec_offset, _ptr(buf, offset + _PMO2.offset_of("response_rec_ptr"), big_endian),
                C.MQRC_RESPONSE_RECORDS_ERROR, "response records", required=False):
        _area(buf, offset + pmo.response_rec_offset, n, mqdh.RR_LENGTH, C.MQRC_RESPONSE_RECORDS_ERROR,
              "response records")
    return PMORecords(pmo, fields, records, pmo.response_rec_offset)


def write_responses(buf: bytearray, at: int, responses: list[tuple[int, int]], *, big_endian: bool = False) -> None:
    """The response records (MQRR) written at ``at``, as the MQI fills the caller's array."""
    for i, (comp, reason) in enumerate(responses):
        rr = mqdh.MQRR(comp, reason).pack(big_endian=big_endian)
        buf[at + i * mqdh.RR_LENGTH:at + (i + 1) * mqdh.RR_LENGTH] = rr
