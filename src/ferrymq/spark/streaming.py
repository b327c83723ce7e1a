"""The micro-batch reader: offsets are per-queue sequence positions (ferrymq.spark.reading).

Spark drives one long-lived instance of this reader on the driver (offsets, partitions,
commits) and reads on executors with a pickled copy built elsewhere, so ``read`` uses
only its partition and the options, and connections are per process
(ferrymq.spark.connection), never attributes.

Removal follows Spark's commits: ``commit(end)`` removes every message below ``end``. Spark
commits one batch late and never commits a run's last batch in that run, so
``latestOffset(start)`` also removes below ``start`` when ``start`` is the end of a batch
(Spark asks for the next offset only once the batch that ended there is in its commit
log); never below an initial offset, which only says where reading starts.

A topic read consumes its durable subscription's managed queue (ferrymq.spark.subscribing):
the driver makes or checks the subscription once per reader, and from then on the offsets
name that queue like any other.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from ferrymq.client import Client
from ferrymq.spark.connection import using
from ferrymq.spark.options import FerryOptions, starting_seqs
from ferrymq.spark.reading import SeqRange, browse_pages, bytes_prefix, cap_rows, offset, plan, positions_of
from ferrymq.spark.schema import read_schema
from ferrymq.spark.subscribing import reading_queues

log = logging.getLogger("ferrymq.spark")


class DataLossError(RuntimeError):
    """Messages the query had not read are gone (failOnDataLoss=true)."""


@dataclass
class RangePartition(InputPartition):
    """Everything an executor needs to read one range: it runs on a different object."""

    opts: FerryOptions
    range: SeqRange
    arrow: pa.Schema


def read_range(p: RangePartition) -> Iterator[pa.RecordBatch]:
    with using(p.opts) as c:
        yield from browse_pages(c, p.range, p.arrow, p.opts.page_messages)


class FerryStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, schema: StructType, opts: FerryOptions) -> None:
        if not (opts.queues or opts.topic):
            raise ValueError("cannot read from ferrymq: option queue names no queue")
        self.opts = opts
        self._read: tuple[str, ...] | None = None  # the queues read: option queue's, or the subscription's
        self.arrow = read_schema(schema)
        self._initial: dict[str, int] | None = None
        self._latest: dict[str, int] | None = None
        self._until: dict[str, int] | None = None  # Trigger.AvailableNow: what was there when it started

    # -- driver ---------------------------------------------------------------------------
    def _queues(self, c: Client) -> tuple[str, ...]:
        if self._read is None:
            self._read = reading_queues(c, self.opts)
        return self._read

    def _first_positions(self, c: Client, queues: Sequence[str]) -> dict[str, int]:
        how = starting_seqs(self.opts.starting_position, self.opts.queues)
        out = {}
        for q in queues:
            r = c.queue_range(q)
            if isinstance(how, dict) and q in how:
                out[q] = how[q]
            elif how == "latest":
                out[q] = r.last_seq + 1
            else:
                out[q] = r.first_seq
        return out

    def initialOffset(self) -> dict[str, dict[str, int]]:
        with using(self.opts) as c:
            self._initial = self._first_positions(c, self._queues(c))
        return offset(self._initial)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_messages_per_trigger:
            return ReadMaxRows(self.opts.max_messages_per_trigger)
        if self.opts.max_bytes_per_trigger:
            return ReadMaxBytes(self.opts.max_bytes_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        with using(self.opts) as c:
            self._until = {q: c.queue_range(q).last_seq + 1 for q in self._queues(c)}

    def latestOffset(self, start: dict[str, dict[str, int]], limit: ReadLimit) -> dict[str, dict[str, int]]:
        with using(self.opts) as c:
            queues = self._queues(c)
            s = positions_of(start)
            missing = [q for q in queues if q not in s]
            if missing:  # a queue added to the option since the checkpoint was written
                s.update(self._first_positions(c, missing))
            if self._initial is None or any(s[q] != self._initial.get(q) for q in s):
                self._remove_below(c, s)
            latest = {q: c.queue_range(q).last_seq + 1 for q in queues}
            self._check_loss(c, s)
            if self._until is not None:
                latest = {q: min(latest[q], self._until.get(q, latest[q])) for q in latest}
            self._latest = latest
            ends = {q: max(latest[q], s[q]) for q in latest}
            if not isinstance(limit, ReadAllAvailable):
                rows = limit.max_rows if isinstance(limit, ReadMaxRows) else self.opts.max_messages_per_trigger
                size = limit.max_bytes if isinstance(limit, ReadMaxBytes) else self.opts.max_bytes_per_trigger
                if rows:
                    ends = cap_rows(s, ends, rows)
                if size:
                    ends = self._cap_bytes(c, s, ends, size)
        return offset(ends)

    def _cap_bytes(self, c: Client, start: dict[str, int], ends: dict[str, int], max_bytes: int) -> dict[str, int]:
        """Ends holding at most ``max_bytes`` of payload in all (at least one message per
        queue that has any, so a stream always advances). The sizes are only known by
        browsing, so this browses the batch on the driver: the price of a byte limit."""
        out = dict(ends)
        todo = sorted(q for q in ends if ends[q] > start[q])
        left = max_bytes
        for i, q in enumerate(todo):
            share = max(1, left // (len(todo) - i))
            out[q], used = bytes_prefix(c, q, start[q], ends[q], share, self.opts.page_messages)
            left -= used
        return out

    def _remove_below(self, c: Client, positions: dict[str, int]) -> None:
        for q, pos in positions.items():
            if pos > 0 and q in self._queues(c):
                c.remove_upto(q, pos - 1, self.opts.reader_name)

    def _check_loss(self, c: Client, s: dict[str, int]) -> None:
        """Another reader removing past our position took messages this query had not
        read. (Destructive gets by ordinary applications and expiry leave no trace the
        source could see; docs/spark.md says so.)"""
        for q in self._queues(c):
            for pos in c.reader_positions(q):
                if pos.reader != self.opts.reader_name and pos.acked_seq >= s[q]:
                    text = (f"queue {q}: reader {pos.reader!r} removed messages up to sequence {pos.acked_seq}, "
                            f"past this query's position {s[q]}: those messages were never read by this query")
                    if self.opts.fail_on_data_loss:
                        raise DataLossError(text + " (set failOnDataLoss=false to go on)")
                    log.warning("event=data_loss %s", text)

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        return None if self._latest is None else offset(self._latest)

    def partitions(self, start: dict[str, dict[str, int]], end: dict[str, dict[str, int]]) -> Sequence[InputPartition]:
        s, e = positions_of(start), positions_of(end)
        return [RangePartition(self.opts, r, self.arrow) for r in plan(s, e, self.opts.min_partitions)]

    def commit(self, end: dict[str, dict[str, int]]) -> None:
        with using(self.opts) as c:
            self._remove_below(c, positions_of(end))

    def stop(self) -> None:
        pass  # connections belong to the process (ferrymq.spark.connection), which Spark ends

    # -- executors ------------------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, RangePartition)
        return read_range(partition)
