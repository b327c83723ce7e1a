"""An optional Prometheus endpoint: ``GET /metrics`` in the text exposition format (0.0.4),
served by the queue manager on the loopback interface only, off unless a port is given
(``ferrymq start QM1 --metrics-port N``; 0 picks a free port, kept in status.json).

| metric                                     | type      | labels | what                                  |
|--------------------------------------------|-----------|--------|---------------------------------------|
| ferrymq_queue_depth                        | gauge     | queue  | CURDEPTH (uncommitted messages count) |
| ferrymq_queue_enqueued_total               | counter   | queue  | messages placed since start           |
| ferrymq_queue_dequeued_total               | counter   | queue  | messages taken by destructive gets    |
| ferrymq_queue_oldest_message_age_seconds   | gauge     | queue  | age of the oldest visible message     |
| ferrymq_connections                        | gauge     |        | connections (applications and agents) |
| ferrymq_journal_fsync_seconds              | histogram |        | one group commit's write and fdatasync |
| ferrymq_journal_commit_batch_bytes         | histogram |        | bytes one group commit wrote          |

Local queues only, SYSTEM.* and temporary dynamic queues included. The request is read
with a bound (8 KiB of request line and headers, 5 s) and answered once; the body is built
on the event loop from the engine's state, so a scrape sees one consistent moment.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from bisect import bisect_left
from collections.abc import Callable, Sequence

from ferrymq.engine.qmgr import QueueManager

log = logging.getLogger("ferrymq.server")

MAX_REQUEST = 8192
READ_TIMEOUT = 5.0
FSYNC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
BATCH_BUCKETS = (4096, 16384, 65536, 262144, 1048576, 4194304, 16777216)


class Histogram:
    """A cumulative histogram as Prometheus keeps one: counts per upper bound, sum, count."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last is +Inf
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def lines(self, name: str) -> list[str]:
        out = []
        running = 0
        for bound, n in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += n
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            out.append(f'{name}_bucket{{le="{le}"}} {running}')
        out += [f"{name}_sum {self.sum:.9g}", f"{name}_count {self.count}"]
        return out


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(qm: QueueManager, fsync: Histogram, batch: Histogram) -> str:
    """The whole exposition, in Prometheus's text format."""
    now = qm.clock.now()
    depth, enq, deq, age = [], [], [], []
    for q in sorted((q for q in qm.objects.queues.values() if q.is_local), key=lambda q: q.name):
        label = f'{{queue="{_label(q.name)}"}}'
        depth.append(f"ferrymq_queue_depth{label} {q.messages.depth}")
        enq.append(f"ferrymq_queue_enqueued_total{label} {q.enqueued}")
        deq.append(f"ferrymq_queue_dequeued_total{label} {q.dequeued}")
        oldest = min((m.put_at for m in q.messages.by_seq.values()), default=None)
        if oldest is not None:
            age.append(f"ferrymq_queue_oldest_message_age_seconds{label} {max(0.0, now - oldest):.3f}")
    lines = ["# HELP ferrymq_queue_depth Messages on the queue (CURDEPTH), uncommitted ones included.",
             "# TYPE ferrymq_queue_depth gauge", *depth,
             "# HELP ferrymq_queue_enqueued_total Messages placed on the queue since the queue manager started.",
             "# TYPE ferrymq_queue_enqueued_total counter", *enq,
             "# HELP ferrymq_queue_dequeued_total Messages taken from the queue by destructive gets since start.",
             "# TYPE ferrymq_queue_dequeued_total counter", *deq,
             "# HELP ferrymq_queue_oldest_message_age_seconds Age of the oldest message a getter could see.",
             "# TYPE ferrymq_queue_oldest_message_age_seconds gauge", *age,
             "# HELP ferrymq_connections Connections to the queue manager.",
             "# TYPE ferrymq_connections gauge", f"ferrymq_connections {len(qm.connections)}",
             "# HELP ferrymq_journal_fsync_seconds Time one group commit took to write and fdatasync.",
             "# TYPE ferrymq_journal_fsync_seconds histogram", *fsync.lines("ferrymq_journal_fsync_seconds"),
             "# HELP ferrymq_journal_commit_batch_bytes Bytes one group commit wrote.",
             "# TYPE ferrymq_journal_commit_batch_bytes histogram",
             *batch.lines("ferrymq_journal_commit_batch_bytes")]
    return "\n".join(lines) + "\n"


class MetricsEndpoint:
    """The HTTP listener (see the module docstring); ``body()`` makes the exposition."""

    def __init__(self, body: Callable[[], str]) -> None:
        self.body = body
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self, port: int) -> None:
        """Listen on 127.0.0.1 ``port`` (0: a free one; ``self.port`` then holds it)."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port, reuse_address=True,
                                                  limit=MAX_REQUEST)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("event=metrics_listening host=127.0.0.1 port=%d", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            writer.close()
            return
        if len(head) > MAX_REQUEST:
            status, body = "431 Request Header Fields Too Large", ""
        else:
            parts = head.split(b"\r\n", 1)[0].split()
            if len(parts) != 3 or parts[0] not in (b"GET", b"HEAD"):
                status, body = "405 Method Not Allowed", ""
            elif parts[1].split(b"?", 1)[0] != b"/metrics":
                status, body = "404 Not Found", "see /metrics\n"
            else:
                status, body = "200 OK", self.body()
                if parts[0] == b"HEAD":
                    body = ""
        data = body.encode()
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                     f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()
