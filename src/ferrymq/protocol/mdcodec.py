"""A fast path for the MQMD bytes carried in client frames.

ferrymq.wire.mqmd owns the MQMD layout and is the reference codec; this module produces
and reads the *same bytes* (a property test checks byte equality against it) with one
precompiled struct per version and no per-field dispatch, because every put and every
get crosses it and the general codec costs ~10-20 µs per call.

Frames carry the MQMD in its own version's length (324 bytes for version 1, 364 for
version 2), little-endian as written on x86-64. The reader accepts either byte order
(big-endian falls back to the reference codec).
"""

from __future__ import annotations

import operator
import struct
from typing import Any

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import LAYOUT_V1, LAYOUT_V2, MQMD

_LE1 = LAYOUT_V1.little
_LE2 = LAYOUT_V2.little
_NAMES2 = tuple(attr for attr, _, _ in LAYOUT_V2.fields)
_NAMES1 = _NAMES2[: len(LAYOUT_V1.fields)]
# Indexes of character fields, and whether "" packs as NULs ("c") or blanks ("f").
_CHAR2 = tuple((i, length, kind == "c") for i, (_, kind, length) in enumerate(LAYOUT_V2.fields) if kind in "cf")
_CHAR1 = tuple(t for t in _CHAR2 if t[0] < len(LAYOUT_V1.fields))
_BYTES2 = tuple((i, length, attr) for i, (attr, kind, length) in enumerate(LAYOUT_V2.fields) if kind == "b")
_BYTES1 = tuple(t for t in _BYTES2 if t[0] < len(LAYOUT_V1.fields))
_GET2 = operator.attrgetter(*_NAMES2)  # one C call for all fields
_GET1 = operator.attrgetter(*_NAMES1)
_VERSION_INDEX = 1
_VERSION_OFFSET = 4

_CharCache = dict[tuple[str, int, bool], bytes]
_char_cache: _CharCache = {}


def _chars(value: str, length: int, nul_if_empty: bool) -> bytes:
    # Field values repeat a lot (queue names, format, appl name): memoise the padded form.
    key = (value, length, nul_if_empty)
    hit = _char_cache.get(key)
    if hit is not None:
        return hit
    if not value:
        raw = (b"\0" if nul_if_empty else b" ") * length
    else:
        enc = value.encode("latin-1", errors="replace")
        if len(enc) > length:
            raise ValueError(f"MQMD: a character field is {len(enc)} characters; the field holds {length}")
        raw = enc.ljust(length, b" ")
    if len(_char_cache) < 4096:
        _char_cache[key] = raw
    return raw


def md_length(version: int) -> int:
    return C.MQMD_LENGTH_2 if version == C.MQMD_VERSION_2 else C.MQMD_LENGTH_1


def pack_md(md: MQMD) -> bytes:
    """The MQMD's bytes in its own version (little-endian); byte-equal to ``md.pack()``.

    Raises:
        ValueError: a field does not fit (name too long, identifier of the wrong length).
    """
    v2 = md.version == C.MQMD_VERSION_2
    if not v2 and md.version != C.MQMD_VERSION_1:
        raise ValueError(f"MQMD version must be 1 or 2, not {md.version}")
    values: list[Any] = list((_GET2 if v2 else _GET1)(md))
    for i, length, nul in _CHAR2 if v2 else _CHAR1:
        values[i] = _chars(values[i], length, nul)
    for i, length, attr in _BYTES2 if v2 else _BYTES1:
        if len(values[i]) != length:
            raise ValueError(f"MQMD: {attr} must be {length} bytes, not {len(values[i])}")
    try:
        return (_LE2 if v2 else _LE1).pack(*values)
    except struct.error as exc:
        raise ValueError(f"MQMD: {exc}") from None


_decoded: dict[bytes, str] = {}


def _decode_chars(raw: bytes) -> str:
    # Character fields repeat (blank names, formats, dates): memoise by the raw bytes.
    hit = _decoded.get(raw)
    if hit is not None:
        return hit
    nul = raw.find(b"\0")
    text = (raw[:nul] if nul >= 0 else raw).rstrip(b" ").decode("latin-1")
    if len(_decoded) < 4096:
        _decoded[raw] = text
    return text


def peek_md_version(buf: bytes | memoryview, offset: int) -> int:
    """The Version of the MQMD at ``offset`` (either byte order).

    Raises:
        DecodeError: truncated, wrong StrucId, or Version not 1 or 2.
    """
    if len(buf) - offset < C.MQMD_LENGTH_1:
        raise DecodeError("MQMD", offset, f"needs {C.MQMD_LENGTH_1} bytes, {max(0, len(buf) - offset)} present")
    if bytes(buf[offset : offset + 4]) != b"MD  ":
        raise DecodeError("MQMD", offset, "StrucId is not 'MD  '")
    raw = bytes(buf[offset + _VERSION_OFFSET : offset + _VERSION_OFFSET + 4])
    for order in ("little", "big"):
        v = int.from_bytes(raw, order)
        if v in (C.MQMD_VERSION_1, C.MQMD_VERSION_2):
            return v
    raise DecodeError("MQMD", offset + _VERSION_OFFSET, f"Version {raw.hex()} is not 1 or 2")


def md_end(buf: bytes | memoryview, offset: int = 0) -> int:
    """Where the MQMD at ``offset`` ends. Checks everything that can be wrong with one
    (StrucId, Version, length): any bytes are valid in the remaining fixed fields.

    Raises:
        DecodeError: truncated, wrong StrucId, or unknown version.
    """
    size = md_length(peek_md_version(buf, offset))
    if len(buf) - offset < size:
        raise DecodeError("MQMD", offset, f"needs {size} bytes, {len(buf) - offset} present")
    return offset + size


def unpack_md(buf: bytes | memoryview, offset: int = 0) -> tuple[MQMD, int]:
    """Decode the MQMD at ``offset``; returns it and the offset just after it.

    Raises:
        DecodeError: truncated, wrong StrucId, or unknown version.
    """
    version = peek_md_version(buf, offset)
    size = md_length(version)
    if len(buf) - offset < size:
        raise DecodeError("MQMD", offset, f"version {version} needs {size} bytes, {len(buf) - offset} present")
    if buf[offset + _VERSION_OFFSET] == 0:  # big-endian Version: rare, use the reference codec
        return MQMD.unpack_from(buf, offset), offset + size
    v2 = version == C.MQMD_VERSION_2
    values: list[Any] = list((_LE2 if v2 else _LE1).unpack_from(buf, offset))
    for i, _, _ in _CHAR2 if v2 else _CHAR1:
        values[i] = _decode_chars(values[i])
    return MQMD(*values), offset + size
