"""The four writers (batch and streaming, Row and Arrow input): each task stages its
partition under a prepared unit of work; the driver commits or aborts the lot
(ferrymq.spark.commits).

Spark builds a streaming writer again for every micro-batch and runs ``write()`` on a
pickled copy, so nothing here keeps state between calls: a task learns its batch and
query from the task's local properties and reports what it staged in its commit message.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import Row
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    DataSourceStreamWriter,
    DataSourceWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.spark import commits
from ferrymq.spark.columnar import batches_of_rows, stage
from ferrymq.spark.connection import using
from ferrymq.spark.options import FerryOptions
from ferrymq.spark.puts import PutPlan

log = logging.getLogger("ferrymq.spark")

BATCH_ID_KEY = "streaming.sql.batchId"  # set by Spark on every task of a micro-batch
QUERY_ID_KEY = "sql.streaming.queryId"  # the query's id, kept in its checkpoint across restarts


@dataclass
class Staged(WriterCommitMessage):
    """What one task left prepared: its XID and how many messages it holds."""

    scope: str
    batch: int
    xid: bytes
    count: int


def plan_for(opts: FerryOptions, schema: StructType, overwrite: bool) -> PutPlan:
    """Raises: ValueError for mode overwrite, several target queues, or unusable columns."""
    if overwrite:
        raise ValueError("cannot write to ferrymq in mode overwrite: messages are appended to queues and topics")
    if len(opts.queues) > 1:
        raise ValueError(f"cannot write to ferrymq: option queue names several queues ({', '.join(opts.queues)}); "
                         "name one, or leave it out and give a queue column")
    return PutPlan([f.name for f in schema.fields], opts.queues[0] if opts.queues else None, opts.topic or None)


def _task() -> TaskContext:
    ctx = TaskContext.get()
    if ctx is None:
        raise RuntimeError("ferrymq writers run inside Spark tasks")
    return ctx


class _Writing:
    def __init__(self, opts: FerryOptions, plan: PutPlan, job: str | None) -> None:
        self.opts = opts
        self.plan = plan
        self.job = job  # a batch write's scope; a streaming write's comes from the task
        # Made on the driver and carried to every task in the pickled writer: the tail of
        # each XID its tasks stage, so abort finds them even when Spark hands it no message.
        self.instance = uuid.uuid4().hex[:12]

    def _stage(self, batches: Iterable[pa.RecordBatch]) -> Staged:
        ctx = _task()
        if self.job is None:
            scope, batch_text = ctx.getLocalProperty(QUERY_ID_KEY), ctx.getLocalProperty(BATCH_ID_KEY)
            if not scope or batch_text is None:
                raise RuntimeError("a ferrymq stream writer ran outside a streaming query (no query or batch id)")
            batch = int(batch_text)
        else:
            scope, batch = self.job, 0
        xid = commits.task_xid(scope, batch, ctx.partitionId(), ctx.attemptNumber(), self.instance)
        try:
            with using(self.opts) as c:
                count = stage(c, self.plan, batches, xid)
        except MQError as exc:
            if exc.reason != C.MQRC_SYNCPOINT_LIMIT_REACHED:
                raise
            # A task's partition is one unit of work: say what bounds it and how to lift it.
            raise MQError(exc.comp, exc.reason, f"{exc.detail}: a write task puts its whole partition in one unit "
                          "of work; raise the queue manager's limit (ALTER QMGR MAXUMSGS(n)) or repartition the "
                          "DataFrame into smaller partitions") from exc
        return Staged(scope, batch, xid, count)

    def _commit(self, messages: list[WriterCommitMessage | None], batch: int | None) -> None:
        staged = [m for m in messages if isinstance(m, Staged)]
        with using(self.opts) as c:
            if batch is None:
                assert self.job is not None
                commits.commit_job(c, self.job, [m.xid for m in staged])
            elif staged:
                out = commits.commit_batch(c, self.opts.commit_queue, staged[0].scope, batch, [m.xid for m in staged])
                log.info("event=batch_committed scope=%s batch=%d units=%d replayed=%s", staged[0].scope, batch,
                         out.committed, out.replayed)

    def _abort(self, messages: list[WriterCommitMessage | None], batch: int | None) -> None:
        staged = [m for m in messages if isinstance(m, Staged)]
        with using(self.opts) as c:
            if batch is None:
                assert self.job is not None
                commits.abort_job(c, self.job, [m.xid for m in staged])
            else:
                # Spark may hand abort no message at all (a task that prepared its unit was
                # cancelled before it reported): the instance id finds what they staged.
                scope = staged[0].scope if staged else commits.scope_of_writer(c, self.instance)
                if scope is not None:
                    commits.abort_batch(c, self.opts.commit_queue, scope, batch, [m.xid for m in staged])


class _BatchWriting(_Writing):
    """A batch write: one job, committed by the driver when every task succeeded."""

    def __init__(self, opts: FerryOptions, plan: PutPlan) -> None:
        super().__init__(opts, plan, f"job{uuid.uuid4().hex}")

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        self._commit(messages, None)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self._abort(messages, None)


class _StreamWriting(_Writing):
    """A streaming write: committed once per micro-batch, idempotently across replays."""

    def __init__(self, opts: FerryOptions, plan: PutPlan) -> None:
        super().__init__(opts, plan, None)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._commit(messages, batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        self._abort(messages, batchId)


# The Row writers gather their rows into Arrow batches: every writer puts by columns.
class FerryBatchWriter(_BatchWriting, DataSourceWriter):
    def write(self, iterator: Iterator[Row]) -> WriterCommitMessage:
        return self._stage(batches_of_rows(self.plan.names, iterator))


class FerryBatchArrowWriter(_BatchWriting, DataSourceArrowWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        return self._stage(iterator)


class FerryStreamWriter(_StreamWriting, DataSourceStreamWriter):
    def write(self, iterator: Iterator[Row]) -> WriterCommitMessage:
        return self._stage(batches_of_rows(self.plan.names, iterator))


class FerryStreamArrowWriter(_StreamWriting, DataSourceStreamArrowWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        return self._stage(iterator)
