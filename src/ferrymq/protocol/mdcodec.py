"""The MQMD bytes carried in client frames: framing helpers over ferrymq.wire.mqmd.

Frames carry the MQMD in its own version's length (324 bytes for version 1, 364 for
version 2), in the writer's byte order. The codec itself is ferrymq.wire.mqmd (one
implementation, tuned there for the put/get path); this module adds what framing needs:
where an MQMD ends, and decoding with the offset after it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

_VERSION_OFFSET = 4


def md_length(version: int) -> int:
    return C.MQMD_LENGTH_2 if version == C.MQMD_VERSION_2 else C.MQMD_LENGTH_1


def pack_md(md: MQMD) -> bytes:
    """The MQMD's bytes in its own version (little-endian).

    Raises:
        ValueError: a field does not fit (name too long, identifier of the wrong length).
    """
    return md.pack()


# StrucId and Version as little-endian x86-64 writers send them: the common case, decided
# by one dictionary lookup (every Put, Get and reply frame carries an MQMD).
_HEADS = {b"MD  \x01\x00\x00\x00": C.MQMD_VERSION_1, b"MD  \x02\x00\x00\x00": C.MQMD_VERSION_2,
          b"MD  \x00\x00\x00\x01": C.MQMD_VERSION_1, b"MD  \x00\x00\x00\x02": C.MQMD_VERSION_2}
_LENGTHS = {v: md_length(v) for v in (C.MQMD_VERSION_1, C.MQMD_VERSION_2)}
_HEAD_LENGTHS = {head: _LENGTHS[v] for head, v in _HEADS.items()}
PLAIN_MD_LENGTHS: Mapping[bytes, int] = _HEAD_LENGTHS
"""``plain_md_length`` as a table: an MQMD's first 8 bytes -> its length, for a plain one."""


def peek_md_version(buf: bytes | memoryview, offset: int) -> int:
    """The Version of the MQMD at ``offset`` (either byte order).

    Raises:
        DecodeError: truncated, wrong StrucId, or Version not 1 or 2.
    """
    if len(buf) - offset < C.MQMD_LENGTH_1:
        raise DecodeError("MQMD", offset, f"needs {C.MQMD_LENGTH_1} bytes, {max(0, len(buf) - offset)} present")
    version = _HEADS.get(bytes(buf[offset : offset + 8]))
    if version is not None:
        return version
    if bytes(buf[offset : offset + 4]) != b"MD  ":
        raise DecodeError("MQMD", offset, "StrucId is not 'MD  '")
    raw = bytes(buf[offset + _VERSION_OFFSET : offset + _VERSION_OFFSET + 4])
    raise DecodeError("MQMD", offset + _VERSION_OFFSET, f"Version {raw.hex()} is not 1 or 2")


def plain_md_length(buf: bytes | bytearray | memoryview, offset: int) -> int:
    """The length of the MQMD at ``offset`` when its StrucId and Version are what a writer
    sends (version 1 or 2, either byte order), else 0 (``md_end`` then says what is wrong).
    The caller checks that the bytes are there."""
    return _HEAD_LENGTHS.get(bytes(buf[offset : offset + 8]), 0)


def md_end(buf: bytes | memoryview, offset: int = 0) -> int:
    """Where the MQMD at ``offset`` ends. Checks everything that can be wrong with one
    (StrucId, Version, length): any bytes are valid in the remaining fixed fields.

    Raises:
        DecodeError: truncated, wrong StrucId, or unknown version.
    """
    size = _LENGTHS[peek_md_version(buf, offset)]
    if len(buf) - offset < size:
        raise DecodeError("MQMD", offset, f"needs {size} bytes, {len(buf) - offset} present")
    return offset + size


def unpack_md(buf: bytes | memoryview, offset: int = 0) -> tuple[MQMD, int]:
    """Decode the MQMD at ``offset``; returns it and the offset just after it.

    Raises:
        DecodeError: truncated, wrong StrucId, or unknown version.
    """
    md = MQMD.unpack_from(buf, offset)
    return md, offset + md_length(md.version)
