"""Mutations of captured conversations: what a broken or hostile peer may send.

``mutate(frames, rng)`` returns a damaged copy of a conversation's frames, with between
one and three of: bit flips, bytes set to edge values, integer fields set to edge values
(lengths, counts, handles, options), the header's size, type, correlation id or flags
edited, a frame truncated, two frames spliced, a frame duplicated, frames reordered or
dropped, a properties section added, and a frame of a random known type with a random body inserted. Each mutation
says what it did, so that a failure report names it.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable

from ferrymq.protocol import codec
from ferrymq.wire import gpacket

HEADER = 36
EDGE_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)
EDGE_U16 = (0, 1, 0x7FFF, 0x8000, 0xFFFF)
EDGE_U32 = (0, 1, 2, 48, 255, 256, 4096, 4097, 65535, 65536, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)
CLIENT_TYPES = sorted(codec.CLIENT_FRAMES)
Frames = list[bytes]


def _frame_index(frames: Frames, rng: random.Random) -> int:
    # The Connect (frame 0) is damaged less often, so that most conversations get past it.
    if len(frames) > 1 and rng.random() < 0.85:
        return rng.randrange(1, len(frames))
    return rng.randrange(len(frames))


def _edit(frames: Frames, rng: random.Random, fn: Callable[[bytearray], str]) -> str:
    i = _frame_index(frames, rng)
    frame = bytearray(frames[i])
    what = fn(frame)
    frames[i] = bytes(frame)
    return f"frame {i} ({_name(frames[i])}): {what}"


def _name(frame: bytes) -> str:
    if len(frame) < 4:
        return "torn"
    return codec.NAMES.get(struct.unpack_from(">h", frame, 2)[0], "?")


def bit_flips(frames: Frames, rng: random.Random) -> str:
    def fn(f: bytearray) -> str:
        if not f:
            return "empty: unchanged"
        spots = [rng.randrange(len(f) * 8) for _ in range(rng.randint(1, 4))]
        for bit in spots:
            f[bit // 8] ^= 1 << (bit % 8)
        return f"bits {spots} flipped"
    return _edit(frames, rng, fn)


def edge_byte(frames: Frames, rng: random.Random) -> str:
    def fn(f: bytearray) -> str:
        if not f:
            return "empty: unchanged"
        pos, value = rng.randrange(len(f)), rng.choice(EDGE_BYTES)
        f[pos] = value
        return f"byte {pos} = {value:#x}"
    return _edit(frames, rng, fn)


def edge_int(frames: Frames, rng: random.Random) -> str:
    """An integer field of the body (a length, count, handle or option word) set to an edge value."""
    def fn(f: bytearray) -> str:
        if len(f) < HEADER + 4:
            return "body too short: unchanged"
        if rng.random() < 0.5:
            pos, value = rng.randrange(HEADER, len(f) - 1), rng.choice(EDGE_U16)
            struct.pack_into(">H", f, pos, value)
        else:
            pos, value = rng.randrange(HEADER, len(f) - 3), rng.choice(EDGE_U32)
            struct.pack_into(">I", f, pos, value)
        return f"integer at {pos} = {value:#x}"
    return _edit(frames, rng, fn)


def header_field(frames: Frames, rng: random.Random) -> str:
    def fn(f: bytearray) -> str:
        if len(f) < HEADER:
            return "torn already: unchanged"
        field = rng.choice(("size", "type", "corr", "flags", "props", "version"))
        if field == "size":
            value = rng.choice((0, 1, HEADER - 1, HEADER, len(f) - 1, len(f) + 1, len(f) + 4096, 0x7FFFFFFF, -1))
            struct.pack_into(">i", f, 4, value)
        elif field == "type":
            value = rng.choice([*CLIENT_TYPES, 0, 1101, 1129, 1199, 1150 + rng.randrange(20), rng.randrange(65536) - 32768])
            struct.pack_into(">h", f, 2, value)
        elif field == "corr":
            value = rng.choice((0, -1, 1, 2, 3, 1 << 62))
            struct.pack_into(">q", f, 24, value)
        elif field == "flags":
            value = rng.choice((0, 1, 2, 3, 0xFFFFFFFF))
            struct.pack_into(">I", f, 32, value)
        elif field == "props":
            value = rng.choice((1, 8, 0x7FFFFFFF, -1))
            struct.pack_into(">i", f, 12, value)
        else:
            value = rng.choice((0, 349, 351, -1))
            struct.pack_into(">h", f, 0, value)
        return f"header {field} = {value}"
    return _edit(frames, rng, fn)


def properties_section(frames: Frames, rng: random.Random) -> str:
    """A well-formed GPacket properties section put between a frame's header and body."""
    def fn(f: bytearray) -> str:
        if len(f) < HEADER:
            return "torn already: unchanged"
        section = gpacket.encode_properties(rng.choice(({}, {"k": 1}, {"JMSType": "x", "n": 2.5, "b": True})))
        f[HEADER:HEADER] = section
        struct.pack_into(">i", f, 4, len(f))
        struct.pack_into(">i", f, 12, len(section))
        return f"a properties section of {len(section)} bytes"
    return _edit(frames, rng, fn)


def truncate(frames: Frames, rng: random.Random) -> str:
    i = _frame_index(frames, rng)
    cut = rng.randrange(max(1, len(frames[i])))
    frames[i] = frames[i][:cut]
    if rng.random() < 0.5:  # the stream ends there, or goes on out of step
        del frames[i + 1 :]
    return f"frame {i} cut to {cut} bytes"


def truncate_body(frames: Frames, rng: random.Random) -> str:
    """A frame shortened with its size field to match: a well-framed but short body."""
    def fn(f: bytearray) -> str:
        if len(f) < HEADER:
            return "torn already: unchanged"
        cut = rng.randrange(HEADER, len(f) + 1)
        del f[cut:]
        struct.pack_into(">i", f, 4, len(f))
        return f"body cut to {cut - HEADER} bytes (size fixed)"
    return _edit(frames, rng, fn)


def extend_body(frames: Frames, rng: random.Random) -> str:
    def fn(f: bytearray) -> str:
        extra = bytes(rng.choice(EDGE_BYTES) for _ in range(rng.choice((1, 4, 24, 300))))
        if len(f) < HEADER:
            return "torn already: unchanged"
        f += extra
        struct.pack_into(">i", f, 4, len(f))
        return f"{len(extra)} bytes appended (size fixed)"
    return _edit(frames, rng, fn)


def splice(frames: Frames, rng: random.Random, pool: list[bytes]) -> str:
    """One frame's header (or head) on another frame's body (or tail), size fixed."""
    i = _frame_index(frames, rng)
    other = rng.choice(pool)
    if len(frames[i]) < HEADER:
        return f"frame {i} torn already: unchanged"
    cut_a = rng.randrange(HEADER, len(frames[i]) + 1)
    cut_b = rng.randrange(min(HEADER, len(other)), len(other) + 1)
    new = bytearray(frames[i][:cut_a] + other[cut_b:])
    struct.pack_into(">i", new, 4, len(new))
    frames[i] = bytes(new)
    return f"frame {i} ({_name(frames[i])}) spliced at {cut_a} with a {_name(other)} from {cut_b}"


def duplicate(frames: Frames, rng: random.Random) -> str:
    i = rng.randrange(len(frames))
    at = rng.randrange(i, len(frames) + 1)
    frames.insert(at, frames[i])
    return f"frame {i} ({_name(frames[i])}) sent again at {at}"


def reorder(frames: Frames, rng: random.Random) -> str:
    i, j = rng.randrange(len(frames)), rng.randrange(len(frames))
    frames[i], frames[j] = frames[j], frames[i]
    return f"frames {i} and {j} swapped"


def drop(frames: Frames, rng: random.Random) -> str:
    i = rng.randrange(len(frames))
    del frames[i]
    return f"frame {i} dropped"


def random_frame(frames: Frames, rng: random.Random) -> str:
    ptype = rng.choice(CLIENT_TYPES)
    body = bytes(rng.randrange(256) for _ in range(rng.choice((0, 4, 8, 16, 40, 400))))
    head = struct.pack(">hhiiiqqI", 350, ptype, HEADER + len(body), 0x7FFFE3C2, 0, 0, rng.randrange(1, 64), 1)
    at = rng.randrange(len(frames) + 1)
    frames.insert(at, head + body)
    return f"a random {codec.NAMES.get(ptype)} of {len(body)} bytes inserted at {at}"


MUTATORS: list[Callable[..., str]] = [bit_flips, edge_byte, edge_int, edge_int, header_field, properties_section, truncate,
                                      truncate_body, extend_body, splice, duplicate, reorder, drop, random_frame]


def mutate(frames: Frames, rng: random.Random, pool: list[bytes]) -> tuple[Frames, list[str]]:
    """A damaged copy of ``frames`` (``pool``: frames to splice from) and what was done."""
    out = list(frames)
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if not out:
            break
        fn = rng.choice(MUTATORS)
        done.append(fn(out, rng, pool) if fn is splice else fn(out, rng))
    return out, done
