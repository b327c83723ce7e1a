"""Reading by sequence: planning ranges on the driver, browsing them on executors.

An offset is ``{"queues": {queue: next_seq, ...}}``: for each queue the first sequence
not yet handed to Spark. Spark compares offsets as JSON text, so they are always built
with the queues in sorted order (``offset``). A batch is ``[start, end)`` per queue; the
executors browse it (nothing is removed), so a range stays re-readable until the driver
removes it once Spark has committed it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ferrymq.client import Client
from ferrymq.spark.memory import keep_freed_pages
from ferrymq.spark.pages import page_batch

PAGE_BYTES = 8 * 1024 * 1024  # one browse reply at most; also bounds an executor's memory per partition


@dataclass(frozen=True, slots=True)
class SeqRange:
    """What one partition reads: ``queue``'s messages with ``start <= seq < end``."""

    queue: str
    start: int
    end: int


def offset(positions: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """The offset document, queues in sorted order (Spark compares offsets as JSON text)."""
    return {"queues": {q: int(positions[q]) for q in sorted(positions)}}


def positions_of(doc: Mapping[str, object]) -> dict[str, int]:
    """The per-queue positions of an offset document (as Spark hands it back).

    Raises:
        ValueError: not an offset this source wrote.
    """
    queues = doc.get("queues")
    if not isinstance(queues, dict):
        raise ValueError(f"not a ferrymq offset: {doc!r}")
    return {str(q): int(s) for q, s in queues.items()}


def split(queue: str, start: int, end: int, parts: int) -> list[SeqRange]:
    """``[start, end)`` in up to ``parts`` contiguous, non-empty ranges of about equal span."""
    span = end - start
    if span <= 0:
        return []
    parts = max(1, min(parts, span))
    step, extra = divmod(span, parts)
    out = []
    lo = start
    for i in range(parts):
        hi = lo + step + (1 if i < extra else 0)
        out.append(SeqRange(queue, lo, hi))
        lo = hi
    return out


def plan(start: Mapping[str, int], end: Mapping[str, int], min_partitions: int) -> list[SeqRange]:
    """Partitions for a batch: each queue's range, split so that there are at least
    ``min_partitions`` in all (in proportion to each queue's span)."""
    spans = {q: end[q] - start.get(q, end[q]) for q in sorted(end)}
    total = sum(s for s in spans.values() if s > 0)
    out: list[SeqRange] = []
    for q, span in spans.items():
        if span > 0:
            share = max(1, -(-min_partitions * span // total))
            out.extend(split(q, start[q], end[q], share))
    return out


def cap_rows(start: Mapping[str, int], latest: Mapping[str, int], max_rows: int) -> dict[str, int]:
    """Ends that admit at most ``max_rows`` sequence numbers in all, shared fairly among
    the queues (a queue that needs less leaves the rest to the others). Sequence numbers
    can have gaps (expired messages, numbers a restart skipped), so a batch may hold fewer
    rows than the limit, never more."""
    want = {q: max(0, latest[q] - start[q]) for q in latest}
    grant = dict.fromkeys(want, 0)
    left = max_rows
    open_queues = sorted(q for q, w in want.items() if w > 0)
    while left > 0 and open_queues:
        share = max(1, left // len(open_queues))
        for q in list(open_queues):
            take = min(share, want[q] - grant[q], left)
            grant[q] += take
            left -= take
            if grant[q] >= want[q]:
                open_queues.remove(q)
            if left <= 0:
                break
    return {q: start[q] + grant[q] for q in latest}


def browse_pages(client: Client, r: SeqRange, schema: pa.Schema, page_messages: int) -> Iterator[pa.RecordBatch]:
    """The range's messages as Arrow record batches, one per browse round trip (pages come
    as columns, built into arrays without a Python step per message: ferrymq.spark.pages)."""
    keep_freed_pages()  # pages are megabytes: reuse their memory (ferrymq.spark.memory)
    qmgr = client.qmgr_name.strip()
    pos = r.start
    while pos < r.end:
        page = client.browse_columns(r.queue, pos, r.end, max_msgs=page_messages, max_bytes=PAGE_BYTES)
        if not len(page):
            return
        yield page_batch(page, schema, qmgr)
        pos = page.last_seq + 1


def bytes_prefix(client: Client, queue: str, start: int, end: int, budget: int,
                 page_messages: int = 4096) -> tuple[int, int]:
    """Where a batch of ``queue`` from ``start`` (below ``end``) ends when its payloads may
    take ``budget`` bytes: the sequence after the last message that fits (at least one
    message when any is there), and the payload bytes taken. Pages are browsed as columns
    and cut at their data offsets, so a budget of many pages costs a few round trips."""
    pos, used = start, 0
    while pos < end:
        page = client.browse_columns(queue, pos, end, max_msgs=page_messages, max_bytes=PAGE_BYTES)
        if not len(page):
            break
        ends = np.frombuffer(page.columns.data_offsets, "<u4")[1:]  # each message's cumulative payload
        fit = int(np.searchsorted(ends, budget - used, side="right"))
        if fit == 0 and used == 0:
            fit = 1  # a stream always advances
        seqs = np.frombuffer(page.columns.seqs, "<i8")
        if fit < len(page):
            return (int(seqs[fit - 1]) + 1, used + int(ends[fit - 1])) if fit else (pos, used)
        used += int(ends[-1])
        pos = int(seqs[-1]) + 1
    return end, used


def seqs_within(ranges: Sequence[SeqRange]) -> int:
    return sum(r.end - r.start for r in ranges)
