"""A table-driven codec for IBM MQ's fixed-layout structures.

Each structure declares its fields once, in order, as ``(attribute, kind, length)``:

| kind | C type            | Python value | packing rule                                  |
|------|-------------------|--------------|-----------------------------------------------|
| "l"  | MQLONG (int32)    | int          | byte order from the MQENC integer bits        |
| "q"  | MQINT64 / MQHMSG  | int          | byte order from the MQENC integer bits        |
| "c"  | MQCHARn (name)    | str          | blank padded; "" packs as NULs (C default)    |
| "f"  | MQCHARn (always)  | str          | always blank padded (Format, StrucId)         |
| "b"  | MQBYTEn           | bytes        | exact length, never converted                 |

Character fields are decoded as Latin-1 (lossless) with trailing blanks and NULs removed,
because IBM treats a NUL and everything after it as blanks. Decoding untrusted bytes only
ever raises DecodeError.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C

Field = tuple[str, str, int]

# The prefix IBM's chained headers share (MQMDE, MQRMH, MQDH, MQRFH2, MQCIH ...): tools walk a
# header chain by reading StrucLength, Encoding, CodedCharSetId and Format at these offsets.
HEADER_PREFIX: tuple[Field, ...] = (
    ("struc_id", "f", 4),
    ("version", "l", 4),
    ("struc_length", "l", 4),
    ("encoding", "l", 4),
    ("coded_char_set_id", "l", 4),
    ("format", "f", 8),
    ("flags", "l", 4),
)

_KIND_FMT = {"l": "i", "q": "q", "c": "s", "f": "s", "b": "s"}


def is_big_endian(encoding: int) -> bool:
    """True when MQENC integer bits say NORMAL (big-endian); REVERSED and undefined are little."""
    return (encoding & C.MQENC_INTEGER_MASK) == C.MQENC_INTEGER_NORMAL


def decode_chars(raw: bytes) -> str:
    """An MQCHARn field as text: stop at the first NUL, drop trailing blanks."""
    nul = raw.find(b"\0")
    if nul >= 0:
        raw = raw[:nul]
    return raw.rstrip(b" ").decode("latin-1")


def encode_chars(value: str, length: int, *, nul_if_empty: bool, name: str) -> bytes:
    raw = value.encode("latin-1", errors="replace") if value else b""
    if len(raw) > length:
        raise ValueError(f"{name} is {len(raw)} characters; the field holds {length}")
    if not raw and nul_if_empty:
        return b"\0" * length
    return raw.ljust(length, b" ")


@dataclass(frozen=True, slots=True)
class Layout:
    """The packing plan of one structure (one per structure, built at import time)."""

    name: str
    fields: tuple[Field, ...]
    little: struct.Struct
    big: struct.Struct

    @classmethod
    def of(cls, name: str, fields: Sequence[Field]) -> Layout:
        fmt = "".join(f"{n}{_KIND_FMT[k]}" if k in "cfb" else _KIND_FMT[k] for _, k, n in fields)
        return cls(name, tuple(fields), struct.Struct("<" + fmt), struct.Struct(">" + fmt))

    @property
    def size(self) -> int:
        return self.little.size

    def offset_of(self, attribute: str) -> int:
        offset = 0
        for attr, kind, length in self.fields:
            if attr == attribute:
                return offset
            offset += length if kind in "cfb" else (4 if kind == "l" else 8)
        raise KeyError(attribute)

    def pack(self, values: Sequence[Any], big_endian: bool) -> bytes:
        out: list[Any] = []
        for (attr, kind, length), value in zip(self.fields, values, strict=True):
            if kind == "c" or kind == "f":
                out.append(encode_chars(value, length, nul_if_empty=kind == "c", name=attr))
            elif kind == "b":
                if len(value) != length:
                    raise ValueError(f"{attr} must be {length} bytes, not {len(value)}")
                out.append(value)
            else:
                out.append(value)
        try:
            return (self.big if big_endian else self.little).pack(*out)
        except struct.error as exc:
            raise ValueError(f"{self.name}: {exc}") from None

    def unpack(self, buf: bytes | bytearray | memoryview, offset: int, big_endian: bool) -> list[Any]:
        if offset < 0 or len(buf) - offset < self.size:
            raise DecodeError(self.name, offset, f"needs {self.size} bytes, {max(0, len(buf) - offset)} present")
        raw = (self.big if big_endian else self.little).unpack_from(buf, offset)
        values: list[Any] = []
        for (_, kind, _), value in zip(self.fields, raw, strict=True):
            if kind == "c" or kind == "f":
                values.append(decode_chars(value))
            else:
                values.append(value)
        return values

    def check_struc_id(self, buf: bytes | bytearray | memoryview, offset: int, struc_id: str) -> None:
        got = bytes(buf[offset : offset + 4])
        if got != struc_id.encode("ascii"):
            raise DecodeError(self.name, offset, f"StrucId is {got!r}, expected {struc_id!r}")
