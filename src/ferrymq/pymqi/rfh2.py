"""pymqi's ``RFH2``: an MQRFH2 header built folder by folder, packed and unpacked.

As in pymqi, each folder is an attribute named after its root element holding the folder's
bytes (blank-padded to a multiple of 4), beside ``<name>Length``; ``StrucLength`` follows
the folders. The folder text is checked with ferrymq's MQRFH2 folder parser (no XML
library); a folder that does not parse raises PYIFError, with pymqi's texts. A header keeps
the byte order it was unpacked in: ``pack()`` without an encoding gives it back as it came
(``pack(encoding)`` follows the encoding given). One difference from pymqi:
``NameValueCCSID`` defaults to 1208, the only CCSID IBM's own writers use (pymqi's 0 is not
a CCSID an MQRFH2 may carry).
"""

from __future__ import annotations

import struct
from typing import Any

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.pymqi.errors import PYIFError
from ferrymq.pymqi.structs import as_bytes
from ferrymq.wire import rfh2_folders

_FIXED = ("StrucId", "Version", "StrucLength", "Encoding", "CodedCharSetId", "Format", "Flags", "NameValueCCSID")
_LE, _BE = struct.Struct("<4siiii8sii"), struct.Struct(">4siiii8sii")

BIG_ENDIAN_ENCODINGS = [C.MQENC_INTEGER_NORMAL, C.MQENC_DECIMAL_NORMAL, C.MQENC_FLOAT_IEEE_NORMAL, C.MQENC_FLOAT_S390,
                        C.MQENC_INTEGER_NORMAL + C.MQENC_DECIMAL_NORMAL,
                        C.MQENC_INTEGER_NORMAL + C.MQENC_FLOAT_IEEE_NORMAL,
                        C.MQENC_DECIMAL_NORMAL + C.MQENC_FLOAT_IEEE_NORMAL,
                        C.MQENC_INTEGER_NORMAL + C.MQENC_DECIMAL_NORMAL + C.MQENC_FLOAT_IEEE_NORMAL]


def _folder_name(folder_data: bytes) -> str:
    try:
        text = folder_data.decode("utf-8")
        return rfh2_folders.parse_folder(text).name
    except (UnicodeDecodeError, DecodeError) as exc:
        raise PYIFError(f"RFH2 - XML Folder not well formed. Exception: {exc}") from None


class RFH2:
    """An MQRFH2 (version 2) with its folders."""

    big_endian_encodings = BIG_ENDIAN_ENCODINGS

    def __init__(self, **kw: Any) -> None:
        self.StrucId = as_bytes(C.MQRFH_STRUC_ID)
        self.Version = C.MQRFH_VERSION_2
        self.StrucLength = C.MQRFH_STRUC_LENGTH_FIXED_2
        self.Encoding = C.MQENC_NATIVE
        self.CodedCharSetId = C.MQCCSI_INHERIT
        self.Format = as_bytes(C.MQFMT_NONE)
        self.Flags = 0
        self.NameValueCCSID = 1208
        self._folders: list[str] = []
        self._big_endian = False  # the byte order unpack() found, for pack() without an encoding
        self.set(**kw)

    def set(self, **kw: Any) -> None:
        for name, value in kw.items():
            if name not in _FIXED and name not in self._folders and not name.endswith("Length"):
                raise PYIFError(f"RFH2 has no field {name!r}")
            setattr(self, name, value)

    def get(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in _FIXED}
        for folder in self._folders:
            out[folder + "Length"] = getattr(self, folder + "Length")
            out[folder] = getattr(self, folder)
        return out

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __setitem__(self, name: str, value: Any) -> None:
        self.set(**{name: value})

    def get_length(self) -> int:
        return C.MQRFH_STRUC_LENGTH_FIXED_2 + sum(4 + len(getattr(self, f)) for f in self._folders)

    def add_folder(self, folder_data: bytes) -> None:
        """Add a folder (its XML-like text as bytes); StrucLength follows.

        Raises:
            PYIFError: the folder is not well formed.
        """
        if isinstance(folder_data, str):
            raise TypeError(f"Python 3 style string found but not allowed here: '{folder_data}'. Convert to bytes.")
        name = _folder_name(bytes(folder_data))
        data = bytes(folder_data) + b" " * (-len(folder_data) % 4)
        if name not in self._folders:
            self._folders.append(name)
        setattr(self, name + "Length", len(data))
        setattr(self, name, data)
        self.StrucLength = self.get_length()

    def pack(self, encoding: int | None = None) -> bytes:
        """The header's bytes; integers big-endian when ``encoding`` is a big-endian one, or,
        without an encoding, in the byte order the header was unpacked in."""
        big = self._big_endian if encoding is None else encoding in self.big_endian_encodings
        try:
            head = (_BE if big else _LE).pack(as_bytes(self.StrucId), self.Version, self.StrucLength, self.Encoding,
                                              self.CodedCharSetId, as_bytes(self.Format).ljust(8)[:8], self.Flags,
                                              self.NameValueCCSID)
        except struct.error as exc:
            raise PYIFError(f"RFH2: {exc}") from None
        length = struct.Struct(">i" if big else "<i")
        return head + b"".join(length.pack(getattr(self, f + "Length")) + getattr(self, f) for f in self._folders)

    def unpack(self, buff: bytes, encoding: int | None = None) -> None:
        """Read an MQRFH2 and its folders from the start of ``buff`` (big-endian when
        ``encoding`` says so, or, without one, when the first Version byte is 0).

        Raises:
            PYIFError: not an MQRFH2, too short, or a folder that is not well formed.
        """
        if buff[0:4] != as_bytes(C.MQRFH_STRUC_ID):
            raise PYIFError(f"RFH2 - StrucId not MQRFH_STRUC_ID. Value: {buff[0:4]!r}")
        fixed = C.MQRFH_STRUC_LENGTH_FIXED_2
        if len(buff) < fixed:
            raise PYIFError(f"RFH2 - Buffer too short. Should be {fixed}+ bytes instead of {len(buff)}")
        big = encoding in self.big_endian_encodings if encoding is not None else buff[4:5] == b"\x00"
        values = (_BE if big else _LE).unpack_from(buff, 0)
        self._folders = []
        self._big_endian = big
        for name, value in zip(_FIXED, values, strict=True):
            setattr(self, name, value)
        if self.StrucLength < 0:
            raise PYIFError("RFH2 - 'StrucLength' is negative. Check numeric encoding.")
        # As pymqi: the fixed part alone (36 bytes) may be read to learn StrucLength.
        if len(buff) > fixed and self.StrucLength > len(buff):
            raise PYIFError(f"RFH2 - Buffer too short. Expected: {self.StrucLength} Buffer Length: {len(buff)}")
        length = struct.Struct(">i" if big else "<i")
        pos, end = fixed, min(self.StrucLength, len(buff))
        while pos + 4 <= end:
            (n,) = length.unpack_from(buff, pos)
            if n < 0 or pos + 4 + n > self.StrucLength:
                raise PYIFError(f"RFH2 - folder length {n} at offset {pos} runs past StrucLength")
            data = bytes(buff[pos + 4 : pos + 4 + n])
            name = _folder_name(data.rstrip(b" \0"))
            if name not in self._folders:
                self._folders.append(name)
            setattr(self, name + "Length", n)
            setattr(self, name, data)
            pos += 4 + n

    def __repr__(self) -> str:
        return f"RFH2({self.get()!r})"
