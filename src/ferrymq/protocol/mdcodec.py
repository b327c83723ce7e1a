"""The MQMD in client frames: the names framing uses, over ferrymq.wire.mqmd.

Frames carry the MQMD in its own version's length (324 bytes for version 1, 364 for
version 2), in the writer's byte order. ferrymq.wire.mqmd is the one module that knows
the descriptor's layout; these are the calls the frame codecs make of it.
"""

from __future__ import annotations

from ferrymq.wire.mqmd import MQMD, PLAIN_LENGTHS, end_of, plain_length

PLAIN_MD_LENGTHS = PLAIN_LENGTHS
"""``plain_md_length`` as a table: an MQMD's first 8 bytes -> its length, for a plain one."""
plain_md_length = plain_length
md_end = end_of
md_length = MQMD.length


def pack_md(md: MQMD) -> bytes:
    """The MQMD's bytes in its own version (little-endian)."""
    return md.pack()


def unpack_md(buf: bytes | memoryview, offset: int = 0) -> tuple[MQMD, int]:
    """Decode the MQMD at ``offset``; returns it and the offset just after it.

    Raises:
        DecodeError: truncated, wrong StrucId, or unknown version.
    """
    md = MQMD.decode(buf, offset)
    return md, offset + MQMD.length(md.version)
