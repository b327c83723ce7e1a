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

A read over several queue managers (option queueManagers) keys each queue by
``QMGR:QUEUE`` (``FerryOptions.place``): offsets, limits, partitions and removal are per
queue manager and per queue, each through that queue manager's own connection.
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

from ferrymq.client.sequence import QueueRange
from ferrymq.spark.connection import using
from ferrymq.spark.options import FerryOptions, starting_seqs
from ferrymq.spark.reading import SeqRange, browse_pages, bytes_prefix, cap_rows, offset, plan, positions_of
from ferrymq.spark.removal import Remover
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


def partition_of(qmgr_opts: FerryOptions, queue: str, r: SeqRange, arrow: pa.Schema) -> RangePartition:
    """The partition reading planned range ``r`` (keyed by place) of ``queue`` on the queue
    manager of ``qmgr_opts``: executors connect to that queue manager only."""
    return RangePartition(qmgr_opts, SeqRange(queue, r.start, r.end), arrow)


def read_range(p: RangePartition) -> Iterator[pa.RecordBatch]:
    with using(p.opts) as c:
        yield from browse_pages(c, p.range, p.arrow, p.opts.page_messages)


class FerryStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, schema: StructType, opts: FerryOptions) -> None:
        if not (opts.queues or opts.topic):
            raise ValueError("cannot read from ferrymq: option queue names no queue")
        self.opts = opts
        # place key -> (its queue manager's options, queue name): option queue's queues, or
        # the subscription's, on each queue manager read
        self._where: dict[str, tuple[FerryOptions, str]] | None = None
        self.arrow = read_schema(schema)
        self._initial: dict[str, int] | None = None
        self._latest: dict[str, int] | None = None
        self._until: dict[str, int] | None = None  # Trigger.AvailableNow: what was there when it started
        self._remover: Remover | None = None

    # -- driver ---------------------------------------------------------------------------
    def _places(self) -> dict[str, tuple[FerryOptions, str]]:
        if self._where is None:
            where = {}
            for one in self.opts.one_per_qmgr():
                with using(one) as c:
                    for q in reading_queues(c, one):
                        where[self.opts.place(one, q)] = (one, q)
            self._where = where
        return self._where

    def _place(self, key: str) -> tuple[FerryOptions, str]:
        try:
            return self._places()[key]
        except KeyError:
            raise ValueError(f"the query's checkpoint names {key}, which the options no longer read: start the "
                             "query with a new checkpoint, or give back the queue or queue manager") from None

    def _range(self, key: str) -> QueueRange:
        one, q = self._place(key)
        with using(one) as c:
            return c.queue_range(q)

    def _first_positions(self, keys: Sequence[str]) -> dict[str, int]:
        how = starting_seqs(self.opts.starting_position, self.opts.places())
        out = {}
        for k in keys:
            r = self._range(k)
            if isinstance(how, dict) and k in how:
                out[k] = how[k]
            elif how == "latest":
                out[k] = r.last_seq + 1
            else:
                out[k] = r.first_seq
        return out

    def initialOffset(self) -> dict[str, dict[str, int]]:
        self._initial = self._first_positions(list(self._places()))
        return offset(self._initial)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_messages_per_trigger:
            return ReadMaxRows(self.opts.max_messages_per_trigger)
        if self.opts.max_bytes_per_trigger:
            return ReadMaxBytes(self.opts.max_bytes_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._until = {k: self._range(k).last_seq + 1 for k in self._places()}

    def latestOffset(self, start: dict[str, dict[str, int]], limit: ReadLimit) -> dict[str, dict[str, int]]:
        keys = list(self._places())
        s = positions_of(start)
        missing = [k for k in keys if k not in s]
        if missing:  # a queue added to the options since the checkpoint was written
            s.update(self._first_positions(missing))
        latest = {k: self._range(k).last_seq + 1 for k in keys}
        self._check_loss(s)
        if self._until is not None:
            latest = {k: min(latest[k], self._until.get(k, latest[k])) for k in latest}
        self._latest = latest
        ends = {k: max(latest[k], s[k]) for k in latest}
        if not isinstance(limit, ReadAllAvailable):
            rows = limit.max_rows if isinstance(limit, ReadMaxRows) else self.opts.max_messages_per_trigger
            size = limit.max_bytes if isinstance(limit, ReadMaxBytes) else self.opts.max_bytes_per_trigger
            if rows:
                ends = cap_rows(s, ends, rows)
            if size:
                ends = self._cap_bytes(s, ends, size)
        # Asked last: the queue manager removes while Spark plans and reads the next batch
        # (asked first, it made this method's own requests wait behind the removal).
        if self._initial is None or any(s[k] != self._initial.get(k) for k in s):
            self._remove_below(s)
        if self._remover is not None and all(ends[k] <= s[k] for k in ends):
            # No batch follows (an idle stream, or the end of an availableNow run, which
            # Spark may stop without stopping the source first): the removals are done now.
            self._remover.flush()
        return offset(ends)

    def _cap_bytes(self, start: dict[str, int], ends: dict[str, int], max_bytes: int) -> dict[str, int]:
        """Ends holding at most ``max_bytes`` of payload in all (at least one message per
        queue that has any, so a stream always advances). The sizes are only known by
        browsing, so this browses the batch on the driver: the price of a byte limit."""
        out = dict(ends)
        todo = sorted(k for k in ends if ends[k] > start[k])
        left = max_bytes
        for i, k in enumerate(todo):
            share = max(1, left // (len(todo) - i))
            one, q = self._place(k)
            with using(one) as c:
                out[k], used = bytes_prefix(c, q, start[k], ends[k], share, self.opts.page_messages)
            left -= used
        return out

    def _remove_below(self, positions: dict[str, int]) -> None:
        """Asked of the reader's remover (ferrymq.spark.removal): done off the batch's path."""
        places = self._places()
        for k, pos in positions.items():
            if pos > 0 and k in places:
                one, q = places[k]
                if self._remover is None:
                    self._remover = Remover(self.opts.reader_name)
                self._remover.request(one, q, pos - 1)

    def _check_loss(self, s: dict[str, int]) -> None:
        """Another reader removing past our position took messages this query had not
        read. (Destructive gets by ordinary applications and expiry leave no trace the
        source could see; docs/spark.md says so.)"""
        for k, (one, q) in self._places().items():
            with using(one) as c:
                positions = c.reader_positions(q)
            for pos in positions:
                if pos.reader != self.opts.reader_name and pos.acked_seq >= s[k]:
                    text = (f"queue {k}: reader {pos.reader!r} removed messages up to sequence {pos.acked_seq}, "
                            f"past this query's position {s[k]}: those messages were never read by this query")
                    if self.opts.fail_on_data_loss:
                        raise DataLossError(text + " (set failOnDataLoss=false to go on)")
                    log.warning("event=data_loss %s", text)

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        return None if self._latest is None else offset(self._latest)

    def partitions(self, start: dict[str, dict[str, int]], end: dict[str, dict[str, int]]) -> Sequence[InputPartition]:
        s, e = positions_of(start), positions_of(end)
        return [partition_of(*self._place(r.queue), r, self.arrow) for r in plan(s, e, self.opts.min_partitions)]

    def commit(self, end: dict[str, dict[str, int]]) -> None:
        self._remove_below(positions_of(end))

    def stop(self) -> None:
        # The removals asked for are made before the query counts as stopped. Connections
        # belong to the process (ferrymq.spark.connection), which Spark ends.
        if self._remover is not None:
            self._remover.close()
            self._remover = None

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_remover"] = None  # a thread: the driver's own, never pickled with the reader
        return state

    # -- executors ------------------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, RangePartition)
        return read_range(partition)
