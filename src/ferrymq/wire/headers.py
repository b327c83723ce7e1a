"""Walk the chain of MQ headers at the start of a message body, by Format.

Each header names the Format, Encoding and CCSID of what follows it, starting from the
MQMD's. A Format denotes an MQ header when it is MQHMDE, MQDEAD, MQXMIT, MQIMS, MQCICS or
any "MQH*" name. Where each header keeps the next link:

| Format            | Header  | StrucId | Length          | Encoding | CCSID | Format |
|-------------------|---------|---------|-----------------|---------:|------:|-------:|
| MQDEAD            | MQDLH   | "DLH "  | 172, fixed      |      108 |   112 |    116 |
| MQXMIT            | MQXQH   | "XQH "  | 428, fixed      |      128 |   132 |    136 |
| MQHMDE            | MQMDE   | "MDE "  | StrucLength@8   |       12 |    16 |     20 |
| MQHRF2 / MQHRF    | MQRFH2/1| "RFH "  | StrucLength@8   |       12 |    16 |     20 |
| MQHDIST           | MQDH    | "DH  "  | StrucLength@8   |       12 |    16 |     20 |
| MQHREF            | MQRMH   | "RMH "  | StrucLength@8   |       12 |    16 |     20 |
| MQHWIH            | MQWIH   | "WIH "  | StrucLength@8   |       12 |    16 |     20 |
| MQIMS / MQCICS    | MQIIH/CIH | "IIH "/"CIH " | StrucLength@8 |   12 |    16 |     20 |
| any other MQH*    | ?       | not checked | StrucLength@8 (>= 28) | 12 |  16 |     20 |

(MQXQH's link is its embedded MQMD's Encoding/CCSID/Format, at 104 + 24/28/32.) For the
known StrucLength@8 headers StrucLength must be at least the fixed part's size; for any
header it must stay within the body. A header's integers are in the byte order of the Encoding before it. A CodedCharSetId of
MQCCSI_INHERIT (-2) means "the same CCSID as this header", i.e. the one before it.

Format names are compared as Latin-1 text, so a chain written in an EBCDIC CCSID is not
recognised and counts as application data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import decode_chars, is_big_endian

_DEAD = C.MQFMT_DEAD_LETTER_HEADER.rstrip()
_XMIT = C.MQFMT_XMIT_Q_HEADER.rstrip()
_NON_MQH_HEADERS = frozenset({_DEAD, _XMIT, C.MQFMT_IMS.rstrip(), C.MQFMT_CICS.rstrip()})

# Format -> (StrucId, smallest valid StrucLength) for the StrucLength@8 headers we know.
_KNOWN = {
    C.MQFMT_MD_EXTENSION.rstrip(): (C.MQMDE_STRUC_ID, C.MQMDE_LENGTH_2),
    C.MQFMT_RF_HEADER_2.rstrip(): (C.MQRFH_STRUC_ID, C.MQRFH_STRUC_LENGTH_FIXED_2),
    C.MQFMT_RF_HEADER.rstrip(): (C.MQRFH_STRUC_ID, C.MQRFH_STRUC_LENGTH_FIXED),
    C.MQFMT_DIST_HEADER.rstrip(): (C.MQDH_STRUC_ID, C.MQDH_LENGTH_1),
    C.MQFMT_REF_MSG_HEADER.rstrip(): (C.MQRMH_STRUC_ID, C.MQRMH_LENGTH_1),
    C.MQFMT_WORK_INFO_HEADER.rstrip(): (C.MQWIH_STRUC_ID, C.MQWIH_LENGTH_1),
    C.MQFMT_IMS.rstrip(): (C.MQIIH_STRUC_ID, C.MQIIH_LENGTH_1),
    C.MQFMT_CICS.rstrip(): (C.MQCIH_STRUC_ID, C.MQCIH_LENGTH_1),
}
# Fixed-size headers that keep the next link elsewhere: (StrucId, length, link offset).
_FIXED = {
    _DEAD: (C.MQDLH_STRUC_ID, C.MQDLH_LENGTH_1, 108),
    _XMIT: (C.MQXQH_STRUC_ID, C.MQXQH_LENGTH_1, 104 + 24),
}
_GENERIC_LINK = 12  # Encoding@12, CodedCharSetId@16, Format@20 ...
_GENERIC_MIN = 28  # ... so a header must hold at least 28 bytes to name its successor.
MAX_HEADERS = 64


def is_header_format(fmt: str) -> bool:
    """True when a Format names an MQ header rather than application data."""
    fmt = fmt.rstrip(" \0")
    return fmt.startswith("MQH") or fmt in _NON_MQH_HEADERS


@dataclass(frozen=True, slots=True)
class HeaderRef:
    """One header of a chain: its Format, where it starts in the body and its length."""

    format: str
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class HeaderChain:
    """The leading MQ headers of a body and what the data after them is."""

    length: int
    format: str
    encoding: int
    coded_char_set_id: int
    headers: tuple[HeaderRef, ...] = ()


def walk_headers(
    body: bytes | bytearray | memoryview,
    fmt: str,
    encoding: int,
    ccsid: int,
    *,
    max_headers: int = MAX_HEADERS,
) -> HeaderChain:
    """Follow the header chain that ``fmt``/``encoding``/``ccsid`` (the MQMD's) start.

    Returns the total length of the leading headers and the Format, Encoding and CCSID
    of the data after them (the MQMD's own when the body has no headers).

    Raises:
        DecodeError: a header that is truncated, has the wrong StrucId, a StrucLength
            too small or beyond the body, or more than ``max_headers`` headers.
    """
    fmt = fmt.rstrip(" \0")
    pos = 0
    refs: list[HeaderRef] = []
    while is_header_format(fmt):
        if len(refs) >= max_headers:
            raise DecodeError("MQ header chain", pos, f"more than {max_headers} headers")
        order: Literal["big", "little"] = "big" if is_big_endian(encoding) else "little"
        left = len(body) - pos
        fixed = _FIXED.get(fmt)
        if fixed is not None:
            struc_id, length, link = fixed
            if left < length:
                raise DecodeError(fmt, pos, f"needs {length} bytes, {left} present")
        else:
            struc_id, length = _KNOWN.get(fmt, ("", _GENERIC_MIN))
            link = _GENERIC_LINK
            if left < _GENERIC_MIN:
                raise DecodeError(fmt, pos, f"needs at least {_GENERIC_MIN} bytes, {left} present")
            declared = int.from_bytes(body[pos + 8 : pos + 12], order, signed=True)
            if not length <= declared <= left:
                raise DecodeError(fmt, pos + 8, f"StrucLength {declared} outside {length}..{left}")
            length = declared
        if struc_id and bytes(body[pos : pos + 4]) != struc_id.encode("ascii"):
            raise DecodeError(fmt, pos, f"StrucId is {bytes(body[pos : pos + 4])!r}, expected {struc_id!r}")
        refs.append(HeaderRef(fmt, pos, length))
        encoding = int.from_bytes(body[pos + link : pos + link + 4], order, signed=True)
        next_ccsid = int.from_bytes(body[pos + link + 4 : pos + link + 8], order, signed=True)
        if next_ccsid != C.MQCCSI_INHERIT:
            ccsid = next_ccsid
        fmt = decode_chars(bytes(body[pos + link + 8 : pos + link + 16]))
        pos += length
    return HeaderChain(pos, fmt, encoding, ccsid, tuple(refs))


def report_data(
    body: bytes | bytearray | memoryview,
    fmt: str,
    encoding: int,
    ccsid: int,
    data_length: int | None = 100,
) -> bytes:
    """What a report carries of the original body: its leading MQ headers, then up to
    ``data_length`` bytes of the data after them (all of it when None: *_WITH_FULL_DATA).

    Raises:
        DecodeError: the header chain is malformed (see ``walk_headers``).
    """
    chain = walk_headers(body, fmt, encoding, ccsid)
    end = len(body) if data_length is None else chain.length + data_length
    return bytes(body[:end])
