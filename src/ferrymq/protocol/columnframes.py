"""The columnar put frame (type 1180): many asynchronous MQPUTs on one handle, laid out
as a column store holds them.

A PUT_BATCH (1130) carries (MsgId, length, data) item by item; PUT_COLUMNS carries the
payloads as one block with their offsets, and MsgIds and CorrelIds as optional 24-byte
columns, so that a writer holding Arrow arrays sends buffers it already has and the server
reads every offset with one unpack. Body notation as in codec.py (big-endian; ``md`` =
packed MQMD):

| type | frame       | body                                                                        |
|-----:|-------------|-----------------------------------------------------------------------------|
| 1180 | PUT_COLUMNS | u32 hobj, i32 options, i32 context, u32 n, u8 columns, md, (n+1) x u32      |
|      |             | offsets, [n x 24 MsgId if columns & 1], [n x 24 CorrelId if columns & 2],   |
|      |             | data (offsets[n] bytes; payload i is data[offsets[i]:offsets[i+1]])          |

Like PUT_BATCH it is answered by nothing: each message counts for MQSTAT as the put it
stands for. A MsgId of 24 zero bytes asks the queue manager for a new one (MQMI_NONE), as
an MQPUT's would; without a column every message takes ``md``'s identifier.

Decoding never raises anything but DecodeError: the count is bounded, the offsets start at
0, never decrease and end at the data's length, and every column's bytes are checked to be
present before anything is allocated for them.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ferrymq.mq import constants as C
from ferrymq.protocol import body
from ferrymq.protocol.body import Reader
from ferrymq.protocol.layout import Frame, Part
from ferrymq.wire.mqmd import MQMD

T_PUT_COLUMNS = 1180

MAX_ROWS = 65_536  # messages per frame (the frame's size bounds the bytes)
ID_LENGTH = 24
HAS_MSG_IDS, HAS_CORREL_IDS = 0x1, 0x2

_COUNT = struct.Struct(">IB")  # after hobj, options, context: n, columns


@dataclass(slots=True)
class PutColumns:
    """Asynchronous MQPUTs on one handle whose descriptors are ``md`` but for their
    identifiers. ``offsets``: (n + 1) big-endian u32, the first 0; ``msg_ids`` and
    ``correl_ids``: n x 24 bytes, or None for md's."""

    hobj: int
    md: MQMD | bytes
    offsets: bytes
    data: bytes | memoryview
    msg_ids: bytes | None = None
    correl_ids: bytes | None = None
    options: int = C.MQPMO_NONE
    context: int = 0

    _bounds: tuple[int, ...] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def count(self) -> int:
        return len(self.offsets) // 4 - 1

    def bounds(self) -> tuple[int, ...]:
        """The n + 1 offsets as integers (read once: the checks and the server all need them).

        Raises:
            ValueError: ``offsets`` is not a whole number of u32s.
        """
        if self._bounds is None:
            if len(self.offsets) % 4:
                raise ValueError(f"offsets are u32s: {len(self.offsets)} bytes is not a whole number of them")
            self._bounds = struct.unpack(f">{len(self.offsets) // 4}I", self.offsets)
        return self._bounds

    def payloads(self) -> list[bytes]:
        """Each message's data (copied out of the block)."""
        b, data = self.bounds(), self.data
        return [bytes(data[s:e]) for s, e in pairwise(b)]


def ids_of(column: bytes | None) -> Sequence[bytes] | None:
    """A 24-byte identifier column as one bytes object per message."""
    if column is None:
        return None
    return [column[i : i + ID_LENGTH] for i in range(0, len(column), ID_LENGTH)]


def check(ev: PutColumns) -> int:
    """The frame's count after checking that its columns agree with one another.

    Raises:
        ValueError: no messages or more than MAX_ROWS, offsets not 4-byte aligned, not
            starting at 0, decreasing or not ending at the data's length, or an identifier
            column of the wrong length.
    """
    n = ev.count
    if len(ev.offsets) % 4 or not 0 < n <= MAX_ROWS:  # checked before bounds() reads them
        raise ValueError(f"a PUT_COLUMNS holds 1..{MAX_ROWS} messages as n + 1 offsets, not {len(ev.offsets)} bytes")
    _check_bounds(ev.bounds(), len(ev.data))
    for name, col in (("msg_ids", ev.msg_ids), ("correl_ids", ev.correl_ids)):
        if col is not None and len(col) != n * ID_LENGTH:
            raise ValueError(f"{name} holds {len(col)} bytes for {n} messages of {ID_LENGTH}")
    return n


def _check_bounds(bounds: Sequence[int], size: int) -> None:
    if bounds[0] != 0 or bounds[-1] != size:
        raise ValueError(f"offsets run from {bounds[0]} to {bounds[-1]}, not from 0 to the data's {size} bytes")
    # sorted() of sorted input is one linear pass in C: no loop over the messages here
    if list(bounds) != sorted(bounds):
        raise ValueError("offsets decrease")


def largest(ev: PutColumns) -> int:
    """The longest payload's length (0 for none)."""
    b = ev.bounds()
    return max(map(operator.sub, b[1:], b[:-1]), default=0)


def _encode(ev: PutColumns) -> list[bytes]:
    n = check(ev)
    columns = (HAS_MSG_IDS if ev.msg_ids is not None else 0) | (HAS_CORREL_IDS if ev.correl_ids is not None else 0)
    parts: list[bytes] = [_COUNT.pack(n, columns), body.md(ev.md), ev.offsets]
    parts += [col for col in (ev.msg_ids, ev.correl_ids) if col is not None]
    parts.append(ev.data)  # type: ignore[arg-type]  # a view is written as it is
    return parts


def _decode(r: Reader) -> tuple[MQMD, bytes, memoryview, bytes | None, bytes | None]:
    n, columns = r.unpack(_COUNT)
    if not 0 < n <= MAX_ROWS:
        raise r.fail(f"{n} messages; 1..{MAX_ROWS} allowed")
    if columns & ~(HAS_MSG_IDS | HAS_CORREL_IDS):
        raise r.fail(f"unknown columns 0x{columns:02x}")
    md = r.md()
    offsets = r.take(4 * (n + 1), "offsets")
    msg_ids = r.take(n * ID_LENGTH, "MsgIds") if columns & HAS_MSG_IDS else None
    correl_ids = r.take(n * ID_LENGTH, "CorrelIds") if columns & HAS_CORREL_IDS else None
    size = r.left
    bounds = struct.unpack(f">{n + 1}I", offsets)
    try:  # the data is the rest of the body: the payloads are copied out once, by message (payloads())
        _check_bounds(bounds, size)
    except ValueError as exc:
        raise r.fail(str(exc)) from None
    return md, offsets, r.view(size), msg_ids, correl_ids


CLIENT_SENDS: list[Frame[Any]] = [
    Frame(T_PUT_COLUMNS, "PUT_COLUMNS", PutColumns, [
        ("hobj", "I"), ("options", "i"), ("context", "I"),
        ("columns", Part(("md", "offsets", "data", "msg_ids", "correl_ids"), _encode, _decode))], corr=False),
]
