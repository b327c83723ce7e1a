"""Arrow record batches put as columns: a write task's messages without a Python object
per row.

A batch is cut into runs of consecutive rows that go to one queue (or topic) with one descriptor
(everything but MsgId and CorrelId): most batches are one run (a payload column, perhaps
some constant ones). A run leaves as PUT_COLUMNS frames (``Queue.put_columns``) whose
payload block and offsets are the Arrow array's own buffers, and whose MsgId and CorrelId
columns come from ``msg_id``/``correl_id`` when the batch has them. A row with properties
is put on its own, between the runs around it, so every message keeps its row's place.
The Row writer gathers its rows into Arrow batches of the same shape (``batches_of_rows``).

Every put is asynchronous under syncpoint: the queue manager checks each message as the
MQPUT it stands for, and ``client.stat()`` reports the first refusal with IBM's reason.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ferrymq.client import Client, Queue
from ferrymq.protocol.columnframes import ID_LENGTH, MAX_ROWS
from ferrymq.spark.options import queue_names
from ferrymq.spark.puts import PutPlan, Target

ROWS_PER_BATCH = 4096  # rows the Row writer gathers into one Arrow batch
_IDS = ("msg_id", "correl_id")  # per-message columns of the frame, never part of a run's descriptor


class ColumnPutter:
    """One write task's puts: the queues and topics it opened and how many messages it put
    (a put to a topic is a publication: the queue manager copies it to the subscriptions)."""

    def __init__(self, client: Client, plan: PutPlan) -> None:
        self.client = client
        self.plan = plan
        self.queues: dict[Target, Queue] = {}
        self.count = 0
        self.limit = client.column_limit()
        self._described = [c for c, _ in plan.md_columns if c not in _IDS]
        if plan.has_timestamp:
            self._described.append("put_timestamp")

    def queue(self, target: Target) -> Queue:
        q = self.queues.get(target)
        if q is None:
            if target.topic:
                q = self.client.open_topic(target.name, async_put=True, options=self.plan.open_options)
            else:
                queue_names(target.name)
                q = self.client.open(target.name, options=self.plan.open_options, async_put=True)
            self.queues[target] = q
        return q

    def close(self) -> None:
        for q in self.queues.values():
            with contextlib.suppress(Exception):
                q.close()

    def put_batch(self, batch: pa.RecordBatch) -> None:
        """Put every row of ``batch``.

        Raises:
            ValueError: a row that cannot be a message (null payload, an identifier too long,
                a payload neither binary nor text, no target queue).
        """
        n = batch.num_rows
        if not n:
            return
        cols = dict(zip(batch.schema.names, batch.columns, strict=True))
        payload = _payload_column(cols["payload"])
        text = pa.types.is_string(payload.type)
        fixed: dict[str, Any] = {name: None for name in _IDS}
        varying: dict[str, list[Any]] = {}
        for name in self._described:
            _split_constant(name, cols[name], fixed, varying)
        if self.plan.queue is None and self.plan.topic is None:  # the targets come from the rows
            for name in ("topic", "queue"):
                if name in cols:
                    _split_constant(name, cols[name], fixed, varying)
        props = _properties(cols.get("properties"))
        ids = [_id_block(cols[name], name) if name in cols else None for name in _IDS]
        for start, end in _runs(n, varying, props):
            row = dict(fixed)
            row.update((name, values[start]) for name, values in varying.items())
            target = self.plan.target(row)
            md = self.plan.descriptor(row, text)
            q = self.queue(target)
            if props is not None and props[start]:
                one = payload[start].as_py()
                own = [None if col is None else col[start * ID_LENGTH : (start + 1) * ID_LENGTH] for col in ids]
                md = md.replace(**{f: v for f, v in zip(_IDS, own, strict=True) if v is not None and any(v)})
                q.put(one, md=md, properties=dict(props[start]), syncpoint=True, options=self.plan.put_options)
                self.count += 1
                continue
            self._put_run(q, md, payload, start, end, ids)

    def _put_run(self, q: Queue, md: Any, payload: pa.Array, start: int, end: int,
                 ids: Sequence[bytes | None]) -> None:
        # int64: a frame's bound (an offset plus the limit) may pass what int32 holds
        offsets = np.frombuffer(payload.buffers()[1], dtype=np.int32, count=len(payload) + 1,
                                offset=4 * payload.offset).astype(np.int64)
        data = payload.buffers()[2]
        block = memoryview(data) if data is not None else memoryview(b"")
        while start < end:
            # the most rows from start whose data fits one frame (at least one row)
            stop = int(np.searchsorted(offsets, offsets[start] + self.limit, side="right")) - 1
            stop = min(max(stop, start + 1), start + MAX_ROWS, end)
            rel = (offsets[start : stop + 1] - offsets[start]).astype(">u4").tobytes()
            msg_ids, correl_ids = (None if col is None else col[start * ID_LENGTH : stop * ID_LENGTH] for col in ids)
            self.count += q.put_columns(rel, block[offsets[start] : offsets[stop]], md=md, msg_ids=msg_ids,
                                        correl_ids=correl_ids, syncpoint=True, options=self.plan.put_options)
            start = stop


def put_batches(client: Client, plan: PutPlan, batches: Iterable[pa.RecordBatch]) -> int:
    """Put every row of every batch under syncpoint; returns how many. The caller prepares,
    commits or backs out the unit.

    Raises:
        ValueError: a row that cannot be a message.
        MQError: a put the queue manager refused (the first such).
    """
    putter = ColumnPutter(client, plan)
    try:
        for batch in batches:
            putter.put_batch(batch)
        status = client.stat()
        if status.failures:
            assert status.first_error is not None
            raise status.first_error
    finally:
        putter.close()
    return putter.count


def stage(client: Client, plan: PutPlan, batches: Iterable[pa.RecordBatch], xid: bytes) -> int:
    """Put the batches' rows in a unit of work and prepare it under ``xid``: nothing is
    visible until the driver resolves ``xid``. Backs the unit out when anything fails.
    Returns the count."""
    try:
        count = put_batches(client, plan, batches)
        client.prepare(xid)
    except BaseException:
        with contextlib.suppress(Exception):  # the connection may be the failure; the caller drops it
            client.backout()
        raise
    return count


def batches_of_rows(names: Sequence[str], rows: Iterable[Sequence[Any] | Mapping[str, Any]],
                    size: int = ROWS_PER_BATCH) -> Iterator[pa.RecordBatch]:
    """The Row writer's rows (Spark Rows are tuples in the schema's order; mappings are read
    by name) as Arrow batches of ``size`` rows, one column at a time."""
    chunk: list[Sequence[Any]] = []
    for row in rows:
        chunk.append(tuple(row[n] for n in names) if isinstance(row, Mapping) else row)
        if len(chunk) == size:
            yield _batch(names, chunk)
            chunk = []
    if chunk:
        yield _batch(names, chunk)


def _batch(names: Sequence[str], rows: list[Sequence[Any]]) -> pa.RecordBatch:
    arrays = []
    for name, values in zip(names, zip(*rows, strict=True), strict=True):
        if name == "payload":
            kind = pa.string() if any(isinstance(v, str) for v in values) else pa.binary()
            arrays.append(pa.array(values, kind))
        elif name == "properties":
            arrays.append(pa.array([None if not v else [(str(k), None if x is None else str(x)) for k, x in v.items()]
                                    for v in values], pa.map_(pa.string(), pa.string())))
        elif name == "put_timestamp":  # a row writer's timestamps are naive local time (Spark's conversion)
            arrays.append(pa.array([None if v is None else v.astimezone(dt.UTC) for v in values],
                                   pa.timestamp("us", tz="UTC")))
        else:
            arrays.append(pa.array(values))
    return pa.RecordBatch.from_arrays(arrays, names=list(names))


def _payload_column(arr: pa.Array) -> pa.Array:
    if pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string() if pa.types.is_large_string(arr.type) else pa.binary())
    if arr.null_count:
        raise ValueError("cannot write to ferrymq: a row has a null payload")
    if not (pa.types.is_binary(arr.type) or pa.types.is_string(arr.type)):
        raise ValueError(f"cannot write to ferrymq: the payload column is {arr.type}; it must be binary or string")
    return arr


def _split_constant(name: str, arr: pa.Array, fixed: dict[str, Any], varying: dict[str, list[Any]]) -> None:
    """File the column as one value for the batch, or as a value per row."""
    n = len(arr)
    if arr.null_count == n:
        fixed[name] = None
    elif arr.null_count == 0 and len(pc.unique(arr)) == 1:
        fixed[name] = arr[0].as_py()
    else:
        varying[name] = arr.to_pylist()


def _properties(arr: pa.Array | None) -> list[Any] | None:
    """Each row's properties when any row has some (None: no row has any)."""
    if arr is None or arr.null_count == len(arr):
        return None
    if not isinstance(arr, pa.ListArray | pa.MapArray):
        raise ValueError(f"cannot write to ferrymq: the properties column is {arr.type}; it must be a map")
    if not np.any(np.diff(arr.offsets.to_numpy(zero_copy_only=False)) > 0):  # every map empty (or null)
        return None
    rows: list[Any] = arr.to_pylist()
    return rows


def _id_block(arr: pa.Array, name: str) -> bytes | None:
    """A binary identifier column as n x 24 bytes (shorter values padded with zeros, null:
    zeros, which a put reads as none); None when every row is null."""
    n = len(arr)
    if arr.null_count == n:
        return None
    lengths = pc.binary_length(arr)
    longest = pc.max(lengths).as_py()
    if longest > ID_LENGTH:
        raise ValueError(f"column {name} holds {longest} bytes; MQ allows {ID_LENGTH}")
    if arr.null_count == 0 and pc.min(lengths).as_py() == ID_LENGTH:  # the buffer is the column already
        start = int(np.frombuffer(arr.buffers()[1], dtype=np.int32, count=1, offset=4 * arr.offset)[0])
        return bytes(memoryview(arr.buffers()[2])[start : start + n * ID_LENGTH])
    return b"".join(bytes(v or b"").ljust(ID_LENGTH, b"\0") for v in arr.to_pylist())


def _runs(n: int, varying: Mapping[str, list[Any]], props: list[Any] | None) -> Iterator[tuple[int, int]]:
    """[start, end) of each run: consecutive rows with the same varying values; a row with
    properties is a run of its own."""
    if not varying and props is None:
        yield 0, n
        return
    keys = list(zip(*varying.values(), strict=True)) if varying else None
    start = 0
    for i in range(1, n + 1):
        if i == n or (props is not None and (props[i] or props[i - 1])) or (keys is not None and keys[i] != keys[i - 1]):
            yield start, i
            start = i
