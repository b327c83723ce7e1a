"""``format("ferrymq")``: the PySpark data source (batch and streaming, read and write).

Registered by ``spark.dataSource.register(FerryDataSource)`` (``ferrymq.spark.register``)
or with no code at all through the top-level module ``pyspark_ferrymq``, which Spark
imports on its first data-source lookup. The columns are in docs/spark.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.types import StructType

from ferrymq.client import Message
from ferrymq.client.sequence import SequencedMessage
from ferrymq.protocol.seqframes import RangeEntry
from ferrymq.spark.columns import record_batch
from ferrymq.spark.connection import using
from ferrymq.spark.options import FerryOptions, parse_options
from ferrymq.spark.preflight import check_write
from ferrymq.spark.puts import PutPlan
from ferrymq.spark.reading import SeqRange, plan
from ferrymq.spark.schema import SCHEMA, read_schema
from ferrymq.spark.streaming import FerryStreamReader, RangePartition, partition_of, read_range
from ferrymq.spark.subscribing import reading_queues
from ferrymq.spark.writers import (
    FerryBatchArrowWriter,
    FerryBatchWriter,
    FerryStreamArrowWriter,
    FerryStreamWriter,
    plan_for,
)


@dataclass
class TakePartition(InputPartition):
    """A destructive read of one queue: up to ``limit`` messages, in one unit of work."""

    opts: FerryOptions
    queue: str
    limit: int
    arrow: pa.Schema


def _take(p: TakePartition) -> Iterator[pa.RecordBatch]:
    """Get up to the limit under syncpoint, hand them to Spark, then commit; a failure or
    an abandoned read (the generator closed early) backs the unit out."""
    with using(p.opts) as c, c.open(p.queue) as q, c.transaction():
        left = p.limit
        while left > 0:
            got = q.get_batch(min(left, p.opts.page_messages), syncpoint=True)
            if not got:
                break
            left -= len(got)
            page = [_sequenced(p.queue, m) for m in got]
            yield record_batch(page, p.arrow, c.qmgr_name.strip())


def _sequenced(queue: str, m: Message) -> SequencedMessage:
    """A got message as a browsed one would be: ferrymq's MsgToken starts with the
    message's sequence number (big-endian), so a destructive read gives the same ``seq``."""
    seq = int.from_bytes(m.msg_token[:8], "big")
    return SequencedMessage(queue, RangeEntry(seq, 0.0, m.md_bytes, m.properties, m.data))


class FerryBatchReader(DataSourceReader):
    def __init__(self, schema: StructType, opts: FerryOptions) -> None:
        if not (opts.queues or opts.topic):
            raise ValueError("cannot read from ferrymq: option queue names no queue")
        self.opts = opts
        self.arrow = read_schema(schema)

    def partitions(self) -> Sequence[InputPartition]:
        """At least one partition per queue manager and queue holding messages (more with
        minPartitions), each read through its own queue manager's connection."""
        where: dict[str, tuple[FerryOptions, str]] = {}
        ranges = {}
        for one in self.opts.one_per_qmgr():
            with using(one) as c:
                for q in reading_queues(c, one):  # a topic read: its subscription's queue, made first
                    key = self.opts.place(one, q)
                    where[key] = (one, q)
                    ranges[key] = c.queue_range(q)
        if self.opts.destructive:
            return [TakePartition(*where[k], r.depth, self.arrow) for k, r in sorted(ranges.items()) if r.depth]
        start = {k: r.first_seq for k, r in ranges.items()}
        end = {k: r.last_seq + 1 for k, r in ranges.items()}
        parts = plan(start, end, self.opts.min_partitions)
        if not parts:  # an empty read still needs one partition
            parts = [SeqRange(next(iter(where)), 0, 0)]
        return [partition_of(*where[r.queue], r, self.arrow) for r in parts]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition, TakePartition):
            return _take(partition)
        assert isinstance(partition, RangePartition)
        return read_range(partition)


class FerryDataSource(DataSource):
    """The ferrymq data source; options in ferrymq.spark.options and docs/spark.md."""

    @classmethod
    def name(cls) -> str:
        return "ferrymq"

    def schema(self) -> StructType:
        return SCHEMA

    def _opts(self, need_queue: bool) -> FerryOptions:
        return parse_options(dict(self.options), need_queue=need_queue)

    def reader(self, schema: StructType) -> DataSourceReader:
        return FerryBatchReader(schema, self._opts(True))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return FerryStreamReader(schema, self._opts(True))

    def _checked_plan(self, schema: StructType, overwrite: bool, streaming: bool) -> tuple[FerryOptions, PutPlan]:
        """The write's options and plan, its objects checked on the driver before any task
        runs (ferrymq.spark.preflight)."""
        opts = self._opts(False)
        plan = plan_for(opts, schema, overwrite)
        with using(opts) as c:
            check_write(c, plan, opts.commit_queue if streaming else None)
        return opts, plan

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        opts, plan = self._checked_plan(schema, overwrite, False)
        return FerryBatchWriter(opts, plan) if opts.write_rows else FerryBatchArrowWriter(opts, plan)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        opts, plan = self._checked_plan(schema, overwrite, True)
        return FerryStreamWriter(opts, plan) if opts.write_rows else FerryStreamArrowWriter(opts, plan)
