"""MQRMH, the reference message header (108 bytes fixed + strings, "RMH ", Version 1, format "MQHREF").

| Off | Len | Field              | Default (MQRMH_DEFAULT) | Meaning                               |
|----:|----:|--------------------|-------------------------|---------------------------------------|
|   0 |   4 | StrucId "RMH "     |                         |                                       |
|   4 |   4 | Version            | 1                       |                                       |
|   8 |   4 | StrucLength        | 0 (see below)           | fixed part + the strings; no bulk data|
|  12 |   4 | Encoding           | 546                     | of the bulk data                      |
|  16 |   4 | CodedCharSetId     | 0                       | of the bulk data                      |
|  20 |   8 | Format             | blanks                  | of the bulk data                      |
|  28 |   4 | Flags              | 0 (MQRMHF_NOT_LAST)     | MQRMHF_LAST = 1                       |
|  32 |   8 | ObjectType         | blanks                  | application-defined                   |
|  40 |  24 | ObjectInstanceId   | zeros                   |                                       |
|  64 |   4 | SrcEnvLength       | 0                       |                                       |
|  68 |   4 | SrcEnvOffset       | 0                       | from the MQRMH start                  |
|  72 |   4 | SrcNameLength      | 0                       |                                       |
|  76 |   4 | SrcNameOffset      | 0                       |                                       |
|  80 |   4 | DestEnvLength      | 0                       |                                       |
|  84 |   4 | DestEnvOffset      | 0                       |                                       |
|  88 |   4 | DestNameLength     | 0                       |                                       |
|  92 |   4 | DestNameOffset     | 0                       |                                       |
|  96 |   4 | DataLogicalLength  | 0                       | length of the bulk data               |
| 100 |   4 | DataLogicalOffset  | 0                       | logical offset mod 1 000 000 000      |
| 104 |   4 | DataLogicalOffset2 | 0                       | logical offset div 1 000 000 000      |

Each (Length, Offset) pair addresses a string lying wholly within StrucLength; a zero length
means absent (offset ignored). Bulk data, if any, starts at StrucLength. The C default's
StrucLength of 0 is a placeholder the application must fill: ``pack()`` always writes the
true length (108 + the strings).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import HEADER_PREFIX, Layout
from ferrymq.wire.mqmd import detect_big_endian

LAYOUT = Layout.of(
    "MQRMH",
    [
        *HEADER_PREFIX,
        ("object_type", "f", 8),
        ("object_instance_id", "b", 24),
        ("src_env_length", "l", 4),
        ("src_env_offset", "l", 4),
        ("src_name_length", "l", 4),
        ("src_name_offset", "l", 4),
        ("dest_env_length", "l", 4),
        ("dest_env_offset", "l", 4),
        ("dest_name_length", "l", 4),
        ("dest_name_offset", "l", 4),
        ("data_logical_length", "l", 4),
        ("data_logical_offset", "l", 4),
        ("data_logical_offset2", "l", 4),
    ],
)
assert LAYOUT.size == C.MQRMH_LENGTH_1

FORMAT = C.MQFMT_REF_MSG_HEADER.rstrip()
LOGICAL_OFFSET_BASE = 1_000_000_000  # the split is decimal, not a high/low 32-bit pair
_STRINGS = ("src_env", "src_name", "dest_env", "dest_name")
_FIRST_PAIR = LAYOUT.offset_of("src_env_length")
# The attribute order of MQRMH, without struc_length.
_ATTRS = (
    "encoding",
    "coded_char_set_id",
    "format",
    "flags",
    "object_type",
    "object_instance_id",
    *_STRINGS,
    "data_logical_length",
    "data_logical_offset",
    "data_logical_offset2",
)


def split_logical_offset(logical_offset: int) -> tuple[int, int]:
    """(DataLogicalOffset, DataLogicalOffset2) for a logical offset."""
    if not 0 <= logical_offset < LOGICAL_OFFSET_BASE * (2**31):
        raise ValueError(f"logical offset {logical_offset} out of range")
    high, low = divmod(logical_offset, LOGICAL_OFFSET_BASE)
    return low, high


@dataclass(frozen=True, slots=True)
class MQRMH:
    """A reference message header with its four strings (Latin-1 text, exact length).

    ``struc_length`` is the StrucLength read from the wire (bulk data starts there); it is
    not compared, and ``pack()`` lays the strings out contiguously after the fixed part
    and computes the lengths, offsets and StrucLength itself.
    """

    encoding: int = C.MQENC_NATIVE
    coded_char_set_id: int = C.MQCCSI_UNDEFINED
    format: str = ""
    flags: int = C.MQRMHF_NOT_LAST
    object_type: str = ""
    object_instance_id: bytes = C.MQOII_NONE
    src_env: str = ""
    src_name: str = ""
    dest_env: str = ""
    dest_name: str = ""
    data_logical_length: int = 0
    data_logical_offset: int = 0
    data_logical_offset2: int = 0
    struc_length: int = field(default=0, compare=False)

    @property
    def logical_offset(self) -> int:
        """The bulk data's logical offset in the object: Offset2 x 10^9 + Offset."""
        return self.data_logical_offset2 * LOGICAL_OFFSET_BASE + self.data_logical_offset

    def pack(self, *, big_endian: bool = False) -> bytes:
        strings = [getattr(self, name).encode("latin-1") for name in _STRINGS]
        pairs: list[int] = []
        at = C.MQRMH_LENGTH_1
        for raw in strings:
            pairs += [len(raw), at if raw else 0]
            at += len(raw)
        head = LAYOUT.pack(
            [
                C.MQRMH_STRUC_ID,
                C.MQRMH_VERSION_1,
                at,
                self.encoding,
                self.coded_char_set_id,
                self.format,
                self.flags,
                self.object_type,
                self.object_instance_id,
                *pairs,
                self.data_logical_length,
                self.data_logical_offset,
                self.data_logical_offset2,
            ],
            big_endian,
        )
        return head + b"".join(strings)

    @classmethod
    def unpack_from(
        cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool | None = None
    ) -> MQRMH:
        """Decode an MQRMH and its strings; the byte order is detected from Version when not given.

        Raises:
            DecodeError: wrong StrucId or Version, StrucLength shorter than the fixed part or
                beyond ``buf``, a string outside StrucLength, or too few bytes.
        """
        LAYOUT.check_struc_id(buf, offset, C.MQRMH_STRUC_ID)
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, "MQRMH", (C.MQRMH_VERSION_1,))
        v = LAYOUT.unpack(buf, offset, big_endian)
        if v[1] != C.MQRMH_VERSION_1:
            raise DecodeError("MQRMH", offset + 4, f"Version {v[1]} is not 1")
        struc_length = v[2]
        if not C.MQRMH_LENGTH_1 <= struc_length <= len(buf) - offset:
            raise DecodeError("MQRMH", offset + 8, f"StrucLength {struc_length} outside 108..{len(buf) - offset}")
        strings = []
        for i in range(len(_STRINGS)):
            length, at = v[9 + 2 * i], v[10 + 2 * i]
            if length == 0:
                strings.append("")
                continue
            # Strings may not overlap the fixed part: a string's bytes are its own.
            if length < 0 or at < C.MQRMH_LENGTH_1 or at + length > struc_length:
                raise DecodeError(
                    "MQRMH",
                    offset + _FIRST_PAIR + 8 * i,
                    f"{_STRINGS[i]} of {length} bytes at {at} is outside {C.MQRMH_LENGTH_1}..{struc_length}",
                )
            strings.append(bytes(buf[offset + at : offset + at + length]).decode("latin-1"))
        fields: dict[str, Any] = dict(zip(_ATTRS, (*v[3:9], *strings, *v[17:20]), strict=True))
        return cls(**fields, struc_length=struc_length)
