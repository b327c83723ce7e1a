"""The coded character sets ferrymq converts between, by CCSID, on Python's codecs.

| CCSID | character set                         | codec                                   |
|------:|---------------------------------------|-----------------------------------------|
|    37 | EBCDIC US/Canada                      | cp037                                   |
|   500 | EBCDIC International                  | cp500                                   |
|   819 | ISO 8859-1 (Latin-1)                  | latin-1                                 |
|   850 | PC Latin-1                            | cp850                                   |
|  1047 | EBCDIC Latin-1/Open Systems           | cp037 with IBM's six differences (below)|
|  1140 | EBCDIC US/Canada with the euro        | cp1140                                  |
|  1200 | UTF-16                                | utf-16-be or -le, by the integer encoding|
|  1208 | UTF-8                                 | utf-8                                   |

Python has no cp1047. IBM's CCSID 1047 is CCSID 37 with six code points exchanged among
``^ ¬ [ ] Ý ¨``: X'5F' is ``^`` (``¬`` in 37), X'AD' ``[`` (``Ý``), X'B0' ``¬`` (``^``),
X'BA' ``Ý`` (``[``), X'BB' ``¨`` (``]``), X'BD' ``]`` (``¨``). The control characters keep
IBM's CDRA mapping shared with 37 (X'15' NEL, X'25' LF), as IBM MQ converts by default.

UTF-16 (1200) has no byte order of its own in IBM MQ: the Encoding that describes the data
says it (integers NORMAL: big-endian, REVERSED: little-endian), as for an MQRFH2's folders.
Decoding and encoding are strict: a byte sequence that is not text in the CCSID, or a
character the target CCSID lacks, raises UnicodeError (the converter's MQRC_NOT_CONVERTED).
"""

from __future__ import annotations

import codecs

UTF8, UTF16 = 1208, 1200

_SWAPS_1047 = {0x5F: "^", 0xAD: "[", 0xB0: "\u00ac", 0xBA: "\u00dd", 0xBB: "\u00a8", 0xBD: "]"}


def _table_1047() -> str:
    table = list(bytes(range(256)).decode("cp037"))
    for byte, char in _SWAPS_1047.items():
        table[byte] = char
    return "".join(table)


_DECODE_1047 = _table_1047()
_ENCODE_1047 = codecs.charmap_build(_DECODE_1047)

_CODECS = {37: "cp037", 500: "cp500", 819: "latin-1", 850: "cp850", 1140: "cp1140", UTF8: "utf-8"}
SUPPORTED: frozenset[int] = frozenset({*_CODECS, 1047, UTF16})
"""The CCSIDs ferrymq converts from and to."""


def is_supported(ccsid: int) -> bool:
    return ccsid in SUPPORTED


def fits_structures(ccsid: int) -> bool:
    """Whether an MQ structure's character fields (StrucId, Format, names) may be in this
    CCSID: every supported one but UTF-16, whose two-byte units the fixed-width fields of
    IBM's headers cannot hold."""
    return ccsid in SUPPORTED and ccsid != UTF16


def decode(raw: bytes | bytearray | memoryview, ccsid: int, *, big_endian: bool = True,
           errors: str = "strict") -> str:
    """``raw`` as text in ``ccsid`` (``big_endian``: the byte order of UTF-16; ``errors``:
    Python's error handler).

    Raises:
        KeyError: an unsupported CCSID.
        UnicodeDecodeError: bytes that are not text in the CCSID (``errors="strict"``).
    """
    if ccsid == 1047:
        return codecs.charmap_decode(bytes(raw), errors, _DECODE_1047)[0]
    if ccsid == UTF16:
        return bytes(raw).decode("utf-16-be" if big_endian else "utf-16-le", errors)
    return bytes(raw).decode(_CODECS[ccsid], errors)


def encode(text: str, ccsid: int, *, big_endian: bool = True) -> bytes:
    """``text`` in ``ccsid`` (``big_endian``: the byte order of UTF-16).

    Raises:
        KeyError: an unsupported CCSID.
        UnicodeEncodeError: a character the CCSID lacks.
    """
    if ccsid == 1047:
        return codecs.charmap_encode(text, "strict", _ENCODE_1047)[0]
    if ccsid == UTF16:
        return text.encode("utf-16-be" if big_endian else "utf-16-le")
    return text.encode(_CODECS[ccsid])
