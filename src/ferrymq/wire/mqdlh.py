"""MQDLH, the dead-letter header (172 bytes, StrucId "DLH ", Version 1, format "MQDEAD").

| Off | Len | Field            | Default (MQDLH_DEFAULT)  |
|----:|----:|------------------|--------------------------|
|   0 |   4 | StrucId "DLH "   |                          |
|   4 |   4 | Version          | 1                        |
|   8 |   4 | Reason           | 0 (MQRC_NONE)            |
|  12 |  48 | DestQName        | NULs                     |
|  60 |  48 | DestQMgrName     | NULs                     |
| 108 |   4 | Encoding         | 0                        |
| 112 |   4 | CodedCharSetId   | 0 (MQCCSI_UNDEFINED)     |
| 116 |   8 | Format           | blanks                   |
| 124 |   4 | PutApplType      | 0                        |
| 128 |  28 | PutApplName      | NULs                     |
| 156 |   8 | PutDate          | NULs                     |
| 164 |   8 | PutTime          | NULs                     |

Unlike the MQH* headers, the MQDLH has no StrucLength and keeps Encoding/CCSID/Format at
108/112/116. Its integers are in the byte order of the preceding MQMD's Encoding; its
Encoding/CCSID/Format describe the original message data that follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import Layout
from ferrymq.wire.mqmd import detect_big_endian

LAYOUT = Layout.of(
    "MQDLH",
    [
        ("struc_id", "f", 4),
        ("version", "l", 4),
        ("reason", "l", 4),
        ("dest_q_name", "c", 48),
        ("dest_q_mgr_name", "c", 48),
        ("encoding", "l", 4),
        ("coded_char_set_id", "l", 4),
        ("format", "f", 8),
        ("put_appl_type", "l", 4),
        ("put_appl_name", "c", 28),
        ("put_date", "c", 8),
        ("put_time", "c", 8),
    ],
)
assert LAYOUT.size == C.MQDLH_LENGTH_1

FORMAT = C.MQFMT_DEAD_LETTER_HEADER.rstrip()


@dataclass(frozen=True, slots=True)
class MQDLH:
    """A dead-letter header; the defaults are MQDLH_DEFAULT."""

    reason: int = C.MQRC_NONE
    dest_q_name: str = ""
    dest_q_mgr_name: str = ""
    encoding: int = 0
    coded_char_set_id: int = C.MQCCSI_UNDEFINED
    format: str = ""
    put_appl_type: int = 0
    put_appl_name: str = ""
    put_date: str = ""
    put_time: str = ""

    def pack(self, *, big_endian: bool = False) -> bytes:
        return LAYOUT.pack(
            [
                C.MQDLH_STRUC_ID,
                C.MQDLH_VERSION_1,
                self.reason,
                self.dest_q_name,
                self.dest_q_mgr_name,
                self.encoding,
                self.coded_char_set_id,
                self.format,
                self.put_appl_type,
                self.put_appl_name,
                self.put_date,
                self.put_time,
            ],
            big_endian,
        )

    @classmethod
    def unpack_from(
        cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool | None = None
    ) -> MQDLH:
        """Decode an MQDLH at ``offset``; the byte order is detected from Version when not given.

        Raises:
            DecodeError: wrong StrucId, Version other than 1, or too few bytes.
        """
        LAYOUT.check_struc_id(buf, offset, C.MQDLH_STRUC_ID)
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, "MQDLH", (C.MQDLH_VERSION_1,))
        values = LAYOUT.unpack(buf, offset, big_endian)
        if values[1] != C.MQDLH_VERSION_1:
            raise DecodeError("MQDLH", offset + 4, f"Version {values[1]} is not 1")
        return cls(*values[2:])
