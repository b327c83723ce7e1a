"""MQDH, the distribution header (48 bytes, "DH  ", format "MQHDIST"), with its MQOR and MQPMR records, and MQRR.

MQDH:

| Off | Len | Field            | Default (MQDH_DEFAULT) | Meaning                                  |
|----:|----:|------------------|------------------------|------------------------------------------|
|   0 |   4 | StrucId "DH  "   |                        |                                          |
|   4 |   4 | Version          | 1                      |                                          |
|   8 |   4 | StrucLength      | 0                      | MQDH + all records (+ any gap bytes)     |
|  12 |   4 | Encoding         | 0                      | of the data after the records            |
|  16 |   4 | CodedCharSetId   | 0                      | of the data after the records            |
|  20 |   8 | Format           | blanks                 | of the data after the records            |
|  28 |   4 | Flags            | 0 (MQDHF_NONE)         | MQDHF_NEW_MSG_IDS = 1                    |
|  32 |   4 | PutMsgRecFields  | 0 (MQPMRF_NONE)        | which MQPMR fields exist                 |
|  36 |   4 | RecsPresent      | 0                      | number of MQOR (and of MQPMR) records    |
|  40 |   4 | ObjectRecOffset  | 0                      | from the MQDH start to the first MQOR    |
|  44 |   4 | PutMsgRecOffset  | 0                      | from the MQDH start to the first MQPMR   |

MQOR (96 bytes): ObjectName MQCHAR48 @0, ObjectQMgrName MQCHAR48 @48.

MQPMR (no fixed layout): only the fields flagged in PutMsgRecFields, always in this order:
MsgId 24 (0x01), CorrelId 24 (0x02), GroupId 24 (0x04), Feedback MQLONG (0x08),
AccountingToken 32 (0x10); at most 108 bytes.

MQRR (8 bytes): CompCode MQLONG @0, Reason MQLONG @4.

Integers are in the byte order of the preceding structure's Encoding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import HEADER_PREFIX, Layout
from ferrymq.wire.mqmd import detect_big_endian

LAYOUT = Layout.of(
    "MQDH",
    [
        *HEADER_PREFIX,
        ("put_msg_rec_fields", "l", 4),
        ("recs_present", "l", 4),
        ("object_rec_offset", "l", 4),
        ("put_msg_rec_offset", "l", 4),
    ],
)
assert LAYOUT.size == C.MQDH_LENGTH_1
OR_LAYOUT = Layout.of("MQOR", [("object_name", "c", 48), ("object_q_mgr_name", "c", 48)])
RR_LAYOUT = Layout.of("MQRR", [("comp_code", "l", 4), ("reason", "l", 4)])
OR_LENGTH = OR_LAYOUT.size
RR_LENGTH = RR_LAYOUT.size

FORMAT = C.MQFMT_DIST_HEADER.rstrip()

# (flag, attribute, size, kind) in the order the fields appear in an MQPMR.
_PMR_FIELDS = (
    (C.MQPMRF_MSG_ID, "msg_id", 24, "b"),
    (C.MQPMRF_CORREL_ID, "correl_id", 24, "b"),
    (C.MQPMRF_GROUP_ID, "group_id", 24, "b"),
    (C.MQPMRF_FEEDBACK, "feedback", 4, "l"),
    (C.MQPMRF_ACCOUNTING_TOKEN, "accounting_token", 32, "b"),
)
PMRF_ALL = sum(flag for flag, *_ in _PMR_FIELDS)


def _pmr_layout(fields: int) -> Layout:
    return Layout.of("MQPMR", [(attr, kind, size) for flag, attr, size, kind in _PMR_FIELDS if fields & flag])


# Thirty-two possible layouts, built once: the flags select them on every record.
_PMR_LAYOUTS = tuple(_pmr_layout(fields) for fields in range(PMRF_ALL + 1))


def pmr_layout(fields: int) -> Layout:
    """The layout of one MQPMR with these PutMsgRecFields (bits beyond MQPMRF_* ignored)."""
    return _PMR_LAYOUTS[fields & PMRF_ALL]


@dataclass(frozen=True, slots=True)
class MQOR:
    """An object record: one destination of a distribution list."""

    object_name: str = ""
    object_q_mgr_name: str = ""

    def pack(self, *, big_endian: bool = False) -> bytes:
        return OR_LAYOUT.pack([self.object_name, self.object_q_mgr_name], big_endian)

    @classmethod
    def unpack_from(cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool = False) -> MQOR:
        """Raises: DecodeError: too few bytes."""
        return cls(*OR_LAYOUT.unpack(buf, offset, big_endian))


@dataclass(frozen=True, slots=True)
class MQRR:
    """A response record: one destination's completion code and reason."""

    comp_code: int = C.MQCC_OK
    reason: int = C.MQRC_NONE

    def pack(self, *, big_endian: bool = False) -> bytes:
        return RR_LAYOUT.pack([self.comp_code, self.reason], big_endian)

    @classmethod
    def unpack_from(cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool = False) -> MQRR:
        """Raises: DecodeError: too few bytes."""
        return cls(*RR_LAYOUT.unpack(buf, offset, big_endian))


@dataclass(frozen=True, slots=True)
class MQPMR:
    """A put-message record; on the wire only the fields named by PutMsgRecFields exist."""

    msg_id: bytes = C.MQMI_NONE
    correl_id: bytes = C.MQMI_NONE  # MQCI_NONE: the same 24 zero bytes (absent from constants.py)
    group_id: bytes = C.MQGI_NONE
    feedback: int = C.MQFB_NONE
    accounting_token: bytes = C.MQACT_NONE

    @staticmethod
    def length(fields: int) -> int:
        """The size of one record with these PutMsgRecFields (0..108)."""
        return _PMR_LAYOUTS[fields & PMRF_ALL].size

    def pack(self, fields: int, *, big_endian: bool = False) -> bytes:
        if fields & ~PMRF_ALL:
            raise ValueError(f"PutMsgRecFields {fields:#x} has bits other than MQPMRF_*")
        layout = _PMR_LAYOUTS[fields]
        return layout.pack([getattr(self, attr) for attr, _, _ in layout.fields], big_endian)

    @classmethod
    def unpack_from(
        cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, fields: int, big_endian: bool = False
    ) -> MQPMR:
        """Decode one record laid out per ``fields``; absent fields take their defaults.

        Raises:
            DecodeError: unknown bits in ``fields``, or too few bytes.
        """
        if fields & ~PMRF_ALL:
            raise DecodeError("MQPMR", offset, f"PutMsgRecFields {fields:#x} has bits other than MQPMRF_*")
        layout = _PMR_LAYOUTS[fields]
        values = layout.unpack(buf, offset, big_endian)
        return cls(**{attr: value for (attr, _, _), value in zip(layout.fields, values, strict=True)})


@dataclass(frozen=True, slots=True)
class MQDH:
    """A distribution header with its records.

    ``put_msg_recs`` is empty (no MQPMRs) or holds one record per object record.
    ``struc_length`` is the StrucLength read from the wire (the data starts there); it is
    not compared, and ``pack()`` always writes the records contiguously after the MQDH and
    computes StrucLength, RecsPresent and both offsets itself.
    """

    encoding: int = 0
    coded_char_set_id: int = 0
    format: str = ""
    flags: int = C.MQDHF_NONE
    put_msg_rec_fields: int = C.MQPMRF_NONE
    objects: tuple[MQOR, ...] = ()
    put_msg_recs: tuple[MQPMR, ...] = ()
    struc_length: int = field(default=0, compare=False)

    @property
    def packed_length(self) -> int:
        """The StrucLength that ``pack()`` writes."""
        recs = len(self.objects)
        pmrs = MQPMR.length(self.put_msg_rec_fields) * recs if self.put_msg_recs else 0
        return C.MQDH_LENGTH_1 + OR_LENGTH * recs + pmrs

    def pack(self, *, big_endian: bool = False) -> bytes:
        recs = len(self.objects)
        if self.put_msg_recs and len(self.put_msg_recs) != recs:
            raise ValueError(f"{len(self.put_msg_recs)} put-message records for {recs} object records")
        if self.put_msg_recs and not self.put_msg_rec_fields:
            raise ValueError("put-message records need PutMsgRecFields to say which fields they hold")
        object_offset = C.MQDH_LENGTH_1 if recs else 0
        pmr_offset = C.MQDH_LENGTH_1 + OR_LENGTH * recs if self.put_msg_recs else 0
        head = LAYOUT.pack(
            [
                C.MQDH_STRUC_ID,
                C.MQDH_VERSION_1,
                self.packed_length,
                self.encoding,
                self.coded_char_set_id,
                self.format,
                self.flags,
                self.put_msg_rec_fields,
                recs,
                object_offset,
                pmr_offset,
            ],
            big_endian,
        )
        parts = [head, *(o.pack(big_endian=big_endian) for o in self.objects)]
        parts.extend(r.pack(self.put_msg_rec_fields, big_endian=big_endian) for r in self.put_msg_recs)
        return b"".join(parts)

    @classmethod
    def unpack_from(
        cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool | None = None
    ) -> MQDH:
        """Decode an MQDH and its records; the byte order is detected from Version when not given.

        Every record must lie within StrucLength, and StrucLength within ``buf``.

        Raises:
            DecodeError: wrong StrucId or Version, a length, count or offset out of bounds,
                unknown PutMsgRecFields bits, or too few bytes.
        """
        LAYOUT.check_struc_id(buf, offset, C.MQDH_STRUC_ID)
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, "MQDH", (C.MQDH_VERSION_1,))
        (_, version, struc_length, encoding, ccsid, fmt, flags, fields, recs, or_offset, pmr_offset) = LAYOUT.unpack(
            buf, offset, big_endian
        )
        if version != C.MQDH_VERSION_1:
            raise DecodeError("MQDH", offset + 4, f"Version {version} is not 1")
        if not C.MQDH_LENGTH_1 <= struc_length <= len(buf) - offset:
            raise DecodeError("MQDH", offset + 8, f"StrucLength {struc_length} outside 48..{len(buf) - offset}")
        if fields & ~PMRF_ALL:
            raise DecodeError("MQDH", offset + 32, f"PutMsgRecFields {fields:#x} has bits other than MQPMRF_*")
        if recs < 0:
            raise DecodeError("MQDH", offset + 36, f"RecsPresent {recs} is negative")
        # StrucLength is already bounded by the buffer, so bounding the record areas by
        # StrucLength bounds the number of records decoded.
        _check_area("object records", offset + 40, or_offset, recs, OR_LENGTH, struc_length)
        objects = tuple(MQOR.unpack_from(buf, offset + or_offset + i * OR_LENGTH) for i in range(recs))
        pmrs: tuple[MQPMR, ...] = ()
        if fields and pmr_offset:
            size = MQPMR.length(fields)
            _check_area("put-message records", offset + 44, pmr_offset, recs, size, struc_length)
            pmrs = tuple(
                MQPMR.unpack_from(buf, offset + pmr_offset + i * size, fields=fields, big_endian=big_endian)
                for i in range(recs)
            )
        return cls(encoding, ccsid, fmt, flags, fields, objects, pmrs, struc_length)


def _check_area(what: str, at: int, start: int, count: int, size: int, struc_length: int) -> None:
    if count and (start < C.MQDH_LENGTH_1 or start + count * size > struc_length):
        raise DecodeError(
            "MQDH", at, f"{count} {what} of {size} bytes at offset {start} do not fit in StrucLength {struc_length}"
        )
