"""MQMDE, the message descriptor extension (72 bytes, version 2 only), and its MQMD helpers.

| Off | Len | Field                 | Default (MQMDE_DEFAULT)     |
|----:|----:|-----------------------|-----------------------------|
|   0 |   4 | StrucId "MDE "        |                             |
|   4 |   4 | Version               | 2                           |
|   8 |   4 | StrucLength           | 72                          |
|  12 |   4 | Encoding              | 546 (MQENC_NATIVE)          |
|  16 |   4 | CodedCharSetId        | 0 (MQCCSI_UNDEFINED)        |
|  20 |   8 | Format                | blanks                      |
|  28 |   4 | Flags                 | 0 (MQMDEF_NONE)             |
|  32 |  24 | GroupId (bytes)       | zeros                       |
|  56 |   4 | MsgSeqNumber          | 1                           |
|  60 |   4 | Offset                | 0                           |
|  64 |   4 | MsgFlags              | 0                           |
|  68 |   4 | OriginalLength        | -1 (MQOL_UNDEFINED)         |

An MQMDE carries the MQMD version-2 fields for a reader or writer that uses a version-1
MQMD: the MQMD's Format is then "MQHMDE" and the MQMDE's Encoding/CCSID/Format describe the
data after it. Its integers are in the byte order of the preceding structure's Encoding.
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import HEADER_PREFIX, Layout, is_big_endian
from ferrymq.wire.mqmd import MQMD, NONE_ID, detect_big_endian

LAYOUT = Layout.of(
    "MQMDE",
    [
        *HEADER_PREFIX,
        ("group_id", "b", 24),
        ("msg_seq_number", "l", 4),
        ("offset", "l", 4),
        ("msg_flags", "l", 4),
        ("original_length", "l", 4),
    ],
)
assert LAYOUT.size == C.MQMDE_LENGTH_2

# The MQMD format name that announces an MQMDE, without its padding blanks.
FORMAT = C.MQFMT_MD_EXTENSION.rstrip()


@dataclass(frozen=True, slots=True)
class MQMDE:
    """A message descriptor extension; the defaults are MQMDE_DEFAULT."""

    encoding: int = C.MQENC_NATIVE
    coded_char_set_id: int = C.MQCCSI_UNDEFINED
    format: str = ""
    flags: int = C.MQMDEF_NONE
    group_id: bytes = NONE_ID
    msg_seq_number: int = 1
    offset: int = 0
    msg_flags: int = C.MQMF_NONE
    original_length: int = C.MQOL_UNDEFINED

    def pack(self, *, big_endian: bool = False) -> bytes:
        return LAYOUT.pack(
            [
                C.MQMDE_STRUC_ID,
                C.MQMDE_VERSION_2,
                C.MQMDE_LENGTH_2,
                self.encoding,
                self.coded_char_set_id,
                self.format,
                self.flags,
                self.group_id,
                self.msg_seq_number,
                self.offset,
                self.msg_flags,
                self.original_length,
            ],
            big_endian,
        )

    @classmethod
    def unpack_from(
        cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool | None = None
    ) -> MQMDE:
        """Decode an MQMDE at ``offset``; the byte order is detected from Version when not given.

        Raises:
            DecodeError: wrong StrucId, Version other than 2, StrucLength other than 72, or too few bytes.
        """
        LAYOUT.check_struc_id(buf, offset, C.MQMDE_STRUC_ID)
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, "MQMDE", (C.MQMDE_VERSION_2,))
        values = LAYOUT.unpack(buf, offset, big_endian)
        if values[1] != C.MQMDE_VERSION_2:
            raise DecodeError("MQMDE", offset + 4, f"Version {values[1]} is not 2")
        # Version 2 is the only version and has no variable part, so any other length is damage.
        if values[2] != C.MQMDE_LENGTH_2:
            raise DecodeError("MQMDE", offset + 8, f"StrucLength {values[2]} is not {C.MQMDE_LENGTH_2}")
        return cls(*values[3:])

    @classmethod
    def from_md(cls, md: MQMD) -> MQMDE:
        """The extension that carries ``md``'s version-2 fields and describes ``md``'s data."""
        return cls(
            encoding=md.encoding,
            coded_char_set_id=md.coded_char_set_id,
            format=md.format,
            group_id=md.group_id,
            msg_seq_number=md.msg_seq_number,
            offset=md.offset,
            msg_flags=md.msg_flags,
            original_length=md.original_length,
        )


_V2_DEFAULTS = MQMD()


def split_md(md: MQMD, *, encoding: int = C.MQENC_NATIVE, ccsid: int = C.MQCCSI_Q_MGR) -> tuple[MQMD, MQMDE | None]:
    """Give a version-1 reader ``md``: a v1 MQMD and, when v2 fields would be lost, an MQMDE.

    The MQMDE is to be placed before the data. IBM requires it in the queue manager's native
    encoding and CCSID, which the caller passes as ``encoding``/``ccsid``; the returned MQMD then
    has Format "MQHMDE" and that Encoding/CCSID, while the MQMDE keeps ``md``'s originals.
    """
    v1 = md.replace(
        version=C.MQMD_VERSION_1,
        group_id=_V2_DEFAULTS.group_id,
        msg_seq_number=_V2_DEFAULTS.msg_seq_number,
        offset=_V2_DEFAULTS.offset,
        msg_flags=_V2_DEFAULTS.msg_flags,
        original_length=_V2_DEFAULTS.original_length,
    )
    if not md.has_v2_fields:
        return v1, None
    return v1.replace(format=FORMAT, encoding=encoding, coded_char_set_id=ccsid), MQMDE.from_md(md)


def merge_mde(md: MQMD, mde: MQMDE) -> MQMD:
    """The version-2 MQMD that ``md`` followed by ``mde`` stand for."""
    return md.replace(
        version=C.MQMD_VERSION_2,
        encoding=mde.encoding,
        coded_char_set_id=mde.coded_char_set_id,
        format=mde.format,
        group_id=mde.group_id,
        msg_seq_number=mde.msg_seq_number,
        offset=mde.offset,
        msg_flags=mde.msg_flags,
        original_length=mde.original_length,
    )


def absorb_mde(md: MQMD, data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[MQMD, int]:
    """If ``md`` announces an MQMDE at ``data[offset:]``, fold it in.

    Returns the (possibly merged, version-2) MQMD and the offset of the data after the
    MQMDE (``offset`` itself when ``md.format`` is not "MQHMDE"). The MQMDE is read in the
    byte order of ``md.encoding``, as IBM chains headers.

    Raises:
        DecodeError: the announced MQMDE is malformed or truncated.
    """
    if md.format != FORMAT:
        return md, offset
    mde = MQMDE.unpack_from(data, offset, big_endian=is_big_endian(md.encoding))
    return merge_mde(md, mde), offset + C.MQMDE_LENGTH_2
