"""MQRFH2, the rules and formatting header version 2 (StrucId "RFH ", format "MQHRF2").

| Off | Len | Field          | Default (MQRFH2_DEFAULT)            |
|----:|----:|----------------|-------------------------------------|
|   0 |   4 | StrucId "RFH " |                                     |
|   4 |   4 | Version        | 2                                   |
|   8 |   4 | StrucLength    | 36 + every (4 + NameValueLength)    |
|  12 |   4 | Encoding       | 546 (of what follows the header)    |
|  16 |   4 | CodedCharSetId | -2 (MQCCSI_INHERIT)                 |
|  20 |   8 | Format         | blanks (of what follows)            |
|  28 |   4 | Flags          | 0                                   |
|  32 |   4 | NameValueCCSID | 1208                                |
|  36 |   … | pairs: NameValueLength (4), NameValueData (that many bytes, one folder) |

The integers, every NameValueLength included, are in the byte order of the preceding
structure's Encoding (little-endian for 546, big-endian for 273). NameValueData is text in
NameValueCCSID: UTF-8 (1208) or UTF-16 (1200, 13488, 17584) in the same byte order as the
integers. Writers pad each folder with blanks to a multiple of 4 bytes; readers here accept
trailing blanks and NULs after the closing tag and any NameValueLength that fits, and refuse
everything else that is wrong with a DecodeError naming the offset.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import decode_chars, encode_chars

FORMAT = C.MQFMT_RF_HEADER_2.rstrip()
FIXED_LENGTH = C.MQRFH_STRUC_LENGTH_FIXED_2
NAME_VALUE_CCSIDS = (1208, 1200, 13488, 17584)
MAX_FOLDERS = 1024
"""More folders than any producer writes: a bound on what one header may make us decode."""

_LE = struct.Struct("<4siiii8sii")
_BE = struct.Struct(">4siiii8sii")
assert _LE.size == FIXED_LENGTH
_LEN_LE, _LEN_BE = struct.Struct("<i"), struct.Struct(">i")


def _codec(ccsid: int, big_endian: bool) -> str:
    if ccsid == 1208:
        return "utf-8"
    return "utf-16-be" if big_endian else "utf-16-le"


@dataclass(frozen=True, slots=True)
class MQRFH2:
    """One MQRFH2: the fixed fields and its folders as text (without the padding)."""

    folders: tuple[str, ...] = ()
    encoding: int = C.MQENC_NATIVE
    coded_char_set_id: int = C.MQCCSI_INHERIT
    format: str = ""
    flags: int = C.MQRFH_NO_FLAGS
    name_value_ccsid: int = 1208

    def encoded_folders(self, *, big_endian: bool = False) -> list[bytes]:
        """Each folder's NameValueData: its text in NameValueCCSID, blank-padded to 4 bytes.

        Raises:
            ValueError: a NameValueCCSID ferrymq cannot write.
        """
        if self.name_value_ccsid not in NAME_VALUE_CCSIDS:
            raise ValueError(f"NameValueCCSID {self.name_value_ccsid} is not one of {NAME_VALUE_CCSIDS}")
        codec = _codec(self.name_value_ccsid, big_endian)
        out = []
        for text in self.folders:
            raw = text.encode(codec)
            pad = -len(raw) % 4
            out.append(raw + " ".encode(codec) * (pad // len(" ".encode(codec))) if pad else raw)
        return out

    def struc_length(self) -> int:
        return FIXED_LENGTH + sum(4 + len(f) for f in self.encoded_folders())

    def pack(self, *, big_endian: bool = False) -> bytes:
        """The header's bytes, integers in the given byte order.

        Raises:
            ValueError: a field out of range or a NameValueCCSID ferrymq cannot write.
        """
        folders = self.encoded_folders(big_endian=big_endian)
        length = _LEN_BE if big_endian else _LEN_LE
        body = b"".join(length.pack(len(f)) + f for f in folders)
        try:
            head = (_BE if big_endian else _LE).pack(
                C.MQRFH_STRUC_ID.encode("ascii"), C.MQRFH_VERSION_2, FIXED_LENGTH + len(body), self.encoding,
                self.coded_char_set_id, encode_chars(self.format, 8, nul_if_empty=False, name="Format"), self.flags,
                self.name_value_ccsid)
        except struct.error as exc:
            raise ValueError(f"MQRFH2: {exc}") from None
        return head + body

    @classmethod
    def unpack_from(cls, buf: bytes | bytearray | memoryview, offset: int = 0, *,
                    big_endian: bool = False) -> tuple[MQRFH2, int]:
        """Decode the MQRFH2 at ``offset`` (integers in the preceding structure's byte order);
        returns it and the offset just after it.

        Raises:
            DecodeError: wrong StrucId or Version, a StrucLength or NameValueLength that does
                not fit, an unknown NameValueCCSID, or folder text that does not decode.
        """
        if len(buf) - offset < FIXED_LENGTH:
            raise DecodeError("MQRFH2", offset, f"needs {FIXED_LENGTH} bytes, {max(0, len(buf) - offset)} present")
        sid, version, struc_length, encoding, ccsid, fmt, flags, nv_ccsid = (_BE if big_endian else _LE).unpack_from(
            buf, offset)
        if sid != b"RFH ":
            raise DecodeError("MQRFH2", offset, f"StrucId is {sid!r}, expected b'RFH '")
        if version != C.MQRFH_VERSION_2:
            raise DecodeError("MQRFH2", offset + 4, f"Version {version} is not 2")
        end = offset + struc_length
        if struc_length < FIXED_LENGTH or end > len(buf):
            raise DecodeError("MQRFH2", offset + 8,
                              f"StrucLength {struc_length} outside {FIXED_LENGTH}..{len(buf) - offset}")
        if nv_ccsid not in NAME_VALUE_CCSIDS:
            raise DecodeError("MQRFH2", offset + 32, f"NameValueCCSID {nv_ccsid} is not one of {NAME_VALUE_CCSIDS}")
        codec = _codec(nv_ccsid, big_endian)
        length = _LEN_BE if big_endian else _LEN_LE
        folders: list[str] = []
        pos = offset + FIXED_LENGTH
        while pos < end:
            if end - pos < 4:
                raise DecodeError("MQRFH2", pos, f"{end - pos} bytes left where a NameValueLength belongs")
            (n,) = length.unpack_from(buf, pos)
            if n < 0 or pos + 4 + n > end:
                raise DecodeError("MQRFH2", pos, f"NameValueLength {n} runs past StrucLength {struc_length}")
            if len(folders) >= MAX_FOLDERS:
                raise DecodeError("MQRFH2", pos, f"more than {MAX_FOLDERS} folders")
            raw = bytes(buf[pos + 4 : pos + 4 + n])
            try:
                text = raw.decode(codec)
            except UnicodeDecodeError as exc:
                raise DecodeError("MQRFH2", pos + 4 + exc.start, f"folder text is not {codec}") from None
            folders.append(text.rstrip(" \0"))
            pos += 4 + n
        header = cls(tuple(folders), encoding, ccsid, decode_chars(fmt), flags, nv_ccsid)
        return header, end


def unpack_chain(buf: bytes | bytearray | memoryview, fmt: str, encoding: int) -> tuple[list[MQRFH2], int, str, int]:
    """Every MQRFH2 at the start of a message body whose Format is ``fmt`` (several may be
    chained): the headers, where the data after them starts, and that data's Format and
    Encoding.

    Raises:
        DecodeError: a malformed header (see ``MQRFH2.unpack_from``).
    """
    headers: list[MQRFH2] = []
    pos = 0
    while fmt.rstrip() == FORMAT:
        big = encoding & C.MQENC_INTEGER_MASK == C.MQENC_INTEGER_NORMAL
        header, pos = MQRFH2.unpack_from(buf, pos, big_endian=big)
        headers.append(header)
        fmt, encoding = header.format, header.encoding
    return headers, pos, fmt, encoding
