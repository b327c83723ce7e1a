"""A columnar browse page (BROWSE_COLUMNS) as one Arrow record batch, column by column.

The page already holds its messages as arrays (protocol/seqframes.py): the sequence
numbers, the MQMDs back to back (version 2, little-endian, fixed size), the data as one
blob with offsets. So every column is a few numpy or Arrow operations over the whole
page instead of a Python step per message: integer MQMD fields are strided views, the
identifiers fixed-width slices, the character fields are cut at their first NUL and
stripped of trailing blanks with masks, and the payload is the frame's own bytes (not
copied). The values are exactly those of ``columns.record_batch`` over the same messages
(tests/unit/test_spark_pages.py holds the two side by side); only the columns of the
schema are built.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ferrymq.client.sequence import ColumnPage
from ferrymq.protocol.seqframes import MD_SIZE
from ferrymq.spark.columns import MD_FIELD, property_text, put_micros, topic_text
from ferrymq.wire.layout import decode_chars
from ferrymq.wire.mqmd import LAYOUT_V2

U8Matrix = npt.NDArray[np.uint8]

# Each MQMD field's (offset, layout kind, length) in the version-2 structure.
_AT: dict[str, tuple[int, str, int]] = {}
_pos = 0
for _name, _kind, _len in LAYOUT_V2.fields:
    _AT[_name] = (_pos, _kind, _len)
    _pos += _len
assert _pos == MD_SIZE and MD_SIZE % 4 == 0
assert all(at % 4 == 0 for at, kind, _ in _AT.values() if kind == "l")  # integers read as int32 columns
_DATE_AT = _AT["put_date"][0]
assert _AT["put_time"][0] == _DATE_AT + 8 and _DATE_AT % 4 == 0  # PutDate and PutTime side by side: 4 words


def _binary(values: npt.NDArray[np.uint8] | bytes | memoryview, offsets: npt.NDArray[np.int32], n: int) -> pa.Array:
    return pa.BinaryArray.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(values)])


def _fixed_binary(block: U8Matrix, at: int, width: int) -> pa.Array:
    n = len(block)
    return _binary(np.ascontiguousarray(block[:, at : at + width]), np.arange(0, (n + 1) * width, width, dtype=np.int32), n)


def _repeated(text: str, n: int) -> pa.Array:
    raw = text.encode("utf-8")
    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(len(raw))
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(raw * n))


def _chars(block: U8Matrix, at: int, width: int) -> pa.Array:
    """An MQCHARn field as text, as decode_chars reads one: up to the first NUL, trailing
    blanks dropped, Latin-1. Pure ASCII (the rule) is already UTF-8 and is cut out with
    masks; a column with any other byte goes by decode_chars itself, once per distinct value."""
    n = len(block)
    field = block[:, at : at + width]
    if n and (field == field[0]).all():  # the rule: one producer, one format, one reply queue
        return _repeated(decode_chars(field[0].tobytes()), n)
    raw = np.ascontiguousarray(field)
    col = np.arange(width)
    nul = raw == 0
    ends = np.where(nul.any(axis=1), nul.argmax(axis=1), width)
    kept = (raw != 0x20) & (col < ends[:, None])  # a blank before the last kept byte stays: masked below
    lengths = np.where(kept.any(axis=1), width - kept[:, ::-1].argmax(axis=1), 0)
    text = raw[col < lengths[:, None]]  # row by row: the strings back to back
    if (text >= 0x80).any():
        seen: dict[bytes, str] = {}
        values = []
        for r in map(bytes, raw):
            v = seen.get(r)
            if v is None:
                v = seen[r] = decode_chars(r)
            values.append(v)
        return pa.array(values, pa.string())
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text))


def _timestamps(block: U8Matrix) -> pa.Array:
    """PutDate + PutTime as microseconds (put_micros), converted once per run of equal
    pairs: put times are to the hundredth of a second, so a page's messages come in runs
    of one put time (found by comparing each row with the one before, not by sorting)."""
    n = len(block)
    if not n:
        return pa.array([], pa.timestamp("us", tz="UTC"))
    words = block.view("<u4")[:, _DATE_AT // 4 : _DATE_AT // 4 + 4]  # the pair as four strided words
    changed = words[1:, 0] != words[:-1, 0]
    for j in (1, 2, 3):
        changed |= words[1:, j] != words[:-1, j]
    starts = np.concatenate(([0], np.flatnonzero(changed) + 1))
    micros = np.zeros(len(starts), dtype=np.int64)
    valid = np.ones(len(starts), dtype=bool)
    seen: dict[bytes, int | None] = {}
    for i, raw in enumerate(block[start, _DATE_AT : _DATE_AT + 16].tobytes() for start in starts):
        if raw in seen:
            v = seen[raw]
        else:
            v = seen[raw] = put_micros(decode_chars(raw[:8]), decode_chars(raw[8:]))
        if v is None:
            valid[i] = False
        else:
            micros[i] = v
    lengths = np.diff(np.append(starts, n))
    mask = None if valid.all() else np.repeat(~valid, lengths)
    return pa.array(np.repeat(micros, lengths), pa.timestamp("us", tz="UTC"), mask=mask)


def _properties(page: ColumnPage, map_type: pa.DataType) -> pa.Array:
    n = len(page)
    props = page.columns.properties
    counts = np.zeros(n + 1, dtype=np.int32)
    keys: list[str] = []
    items: list[str | None] = []
    for i in sorted(props):
        for k, v in props[i].items():
            keys.append(k)
            items.append(property_text(v))
        counts[i + 1] = len(props[i])
    offsets = np.cumsum(counts, dtype=np.int32)
    return pa.MapArray.from_arrays(pa.array(offsets), pa.array(keys, pa.string()), pa.array(items, pa.string()),
                                   type=map_type)


def _topic(page: ColumnPage) -> pa.Array:
    """Each message's MQTopicString (null where it has none): only messages with
    properties can have one, and a page keeps those apart already."""
    values: list[str | None] = [None] * len(page)
    for i, props in page.columns.properties.items():
        values[i] = topic_text(props)
    return pa.array(values, pa.string())


def _queue(page: ColumnPage) -> pa.Array:
    return _repeated(page.queue, len(page))


def _payload(page: ColumnPage) -> pa.Array:
    c = page.columns
    return _binary(c.data, np.frombuffer(c.data_offsets, "<u4").astype(np.int32), c.count)


def _seq(page: ColumnPage) -> pa.Array:
    return pa.array(np.frombuffer(page.columns.seqs, "<i8"), pa.int64())


def _md_column(block: U8Matrix, name: str) -> pa.Array:
    at, kind, width = _AT[MD_FIELD[name]]
    if kind == "l":  # every field starts at a multiple of 4: one strided int32 column of the block
        return pa.array(np.ascontiguousarray(block.view("<i4")[:, at // 4]), pa.int32())
    if kind == "b":
        return _fixed_binary(block, at, width)
    return _chars(block, at, width)


_FROM_PAGE: dict[str, Callable[[ColumnPage], pa.Array]] = {"queue": _queue, "seq": _seq, "topic": _topic,
                                                            "payload": _payload}


def page_batch(page: ColumnPage, schema: pa.Schema, qmgr: str = "") -> pa.RecordBatch:
    """One Arrow record batch of the page in exactly ``schema`` (any subset of the
    documented columns, in any order; columns.record_batch's values); ``qmgr``: the name
    of the queue manager it was browsed on."""
    block: U8Matrix = np.frombuffer(page.columns.mds, dtype=np.uint8).reshape(len(page), MD_SIZE)
    arrays = []
    for f in schema:
        if f.name in MD_FIELD:
            a = _md_column(block, f.name)
        elif f.name == "put_timestamp":
            a = _timestamps(block)
        elif f.name == "properties":
            a = _properties(page, f.type)
        elif f.name == "queue_manager":
            a = _repeated(qmgr, len(page))
        else:
            a = _FROM_PAGE[f.name](page)
        arrays.append(a if a.type == f.type else a.cast(f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
