"""CPU per message of browsing by sequence into Arrow: BROWSE_RANGE + record_batch
(entries, decoded per message) beside BROWSE_COLUMNS + page_batch (columns).

    .venv/bin/python bench/browse_bench.py [--n 100000] [--size 1024] [--page 4096] [--props 0]

No sockets and no Spark (run on demand; never a timed test): a queue manager in this
process holds N messages of SIZE bytes (put as a batch, as a producer's asynchronous puts
arrive; --props gives each message that many properties). The queue is browsed page by
page over ``[first, last]`` as the Spark reader browses a partition, under a 4 MiB frame
limit, and each page goes through the same steps as on a real connection:

- engine: ``sequence_access.browse_range`` (what the server's handler calls);
- server reply: building the reply event and encoding its frame (ServerConnection.send, or
  send_parts for a column page, which the server writes in its pieces);
- client decode: ClientConnection.receive_data + next_event (the frame's decoder);
- to Arrow: the record batch of the 30 documented columns Spark is handed.

CPU time (time.process_time), the best of --repeat runs per step: other load on the
machine only ever adds. ``--tcp`` adds the same reads over TCP against a queue-manager
process (its CPU from /proc, this client's, and the rate one client reads at). The
end-to-end Spark figures are bench/spark_bench.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ferrymq.client.sequence import ColumnPage, SequencedMessage
from ferrymq.engine import sequence_access as S
from ferrymq.engine.api import ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import events as E
from ferrymq.protocol import seqframes as F
from ferrymq.protocol.connection import ClientConnection, ServerConnection
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.server.seq_ops import columns_reply
from ferrymq.spark.columns import record_batch
from ferrymq.spark.memory import keep_freed_pages
from ferrymq.spark.pages import page_batch
from ferrymq.spark.schema import SCHEMA, read_schema
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

LIMIT = 4 * 1024 * 1024  # the clients' default maximum message length, so a page's frame limit
QUEUE = "BENCH"


def filled_qmgr(n: int, size: int, props: int) -> QueueManager:
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", QUEUE, {"MAXDEPTH": 999_999_999})
    hconn = qm.connect(appl_name="bench")
    h = qm.open(hconn, ObjectDescriptor(QUEUE), C.MQOO_OUTPUT).hobj
    md = MQMD(version=C.MQMD_VERSION_2, persistence=C.MQPER_NOT_PERSISTENT, format="MQSTR", reply_to_q="BENCH.REPLY")
    pmo = PutOptions(C.MQPMO_NO_SYNCPOINT)
    body = os.urandom(size)
    if props:
        values = PropertySet({f"p{i}": (i if i % 2 else f"value {i}") for i in range(props)})
        for _ in range(n):
            qm.put(hconn, h, md, pmo, body, properties=values)
    else:
        for i in range(0, n, 256):
            qm.put_many(hconn, h, md, pmo, [(i.to_bytes(24, "big"), body) for i in range(i, min(n, i + 256))])
    return qm


def connected() -> tuple[ClientConnection, ServerConnection]:
    c, s = ClientConnection(), ServerConnection()
    s.receive_data(c.send(E.Connect(1, "QM1", max_msg_length=LIMIT)))
    s.next_event()
    c.receive_data(s.send(E.ConnectReply(1, qmgr_name="QM1", max_msg_length=LIMIT)))
    c.next_event()
    return c, s


def entries_reply(corr: int, msgs: list[Any]) -> F.BrowseRangeReply:
    return F.BrowseRangeReply(corr, [F.RangeEntry(m.seq, m.put_at, pack_md(m.md), m.properties or PropertySet(),
                                                  m.body(m.data_length)) for m in msgs])


# way -> (request, server overhead per message, reply builder, to Arrow)
WAYS: dict[str, tuple[type, int, Callable[[int, list[Any]], Any], Callable[[Any, pa.Schema], pa.RecordBatch]]] = {
    "entries": (F.BrowseRange, 1024, entries_reply,
                lambda ev, schema: record_batch([SequencedMessage(QUEUE, e) for e in ev.entries], schema)),
    "columns": (F.BrowseColumns, 8 + 8 + F.MD_SIZE + 8, lambda corr, msgs: columns_reply(corr, msgs, LIMIT),
                lambda ev, schema: page_batch(ColumnPage(QUEUE, ev), schema)),
}


def run(qm: QueueManager, way: str, page: int) -> dict[str, float]:
    request, overhead, reply, to_arrow = WAYS[way]
    # The server writes a column page in its pieces (vectored); the join is only for the client here.
    send = (lambda s, ev: s.send_parts(ev)) if way == "columns" else (lambda s, ev: [s.send(ev)])
    c, s = connected()
    schema = read_schema(SCHEMA)
    r = S.queue_range(qm, QUEUE)
    pos, end, corr = r.first_seq, r.last_seq + 1, 2
    steps = dict.fromkeys(("engine", "server_reply", "client_decode", "to_arrow"), 0.0)
    rows = 0
    while pos < end:
        corr += 1
        s.receive_data(c.send(request(corr, QUEUE, pos, end, page, LIMIT)))
        s.next_event()
        t0 = time.process_time()
        msgs = S.browse_range(qm, QUEUE, pos, end, page, LIMIT, overhead=overhead)
        t1 = time.process_time()
        frame = b"".join(send(s, reply(corr, msgs)))
        t2 = time.process_time()
        c.receive_data(frame)
        ev = c.next_event()
        t3 = time.process_time()
        batch = to_arrow(ev, schema)
        t4 = time.process_time()
        for k, v in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            steps[k] += v
        rows += batch.num_rows
        pos = msgs[-1].seq + 1
    out = {f"{k}_us": v / rows * 1e6 for k, v in steps.items()}
    out["page_rows"] = rows / (corr - 2)
    return out


def tcp_runs(n: int, size: int, page: int, repeat: int) -> dict[str, dict[str, float]]:
    """Both ways over TCP against a queue-manager process: its CPU (from /proc) and this
    client's, per message, the best of ``repeat`` passes over the whole queue."""
    from qmgr_process import cpu_seconds, start_qmgr
    from spark_bench import QUEUE_IN, QUEUES, fill

    from ferrymq.client import connect
    from ferrymq.spark.reading import SeqRange, browse_pages

    home = tempfile.mkdtemp(prefix="ferrymq-browse-bench-")
    conn, pid = start_qmgr(home, QUEUES)
    schema = read_schema(SCHEMA)
    out: dict[str, dict[str, float]] = {}
    try:
        fill(conn, "QMB", n, size)
        with connect("QMB", conn) as c:
            r = c.queue_range(QUEUE_IN)
            ways: dict[str, Callable[[], int]] = {
                "entries": lambda: sum(record_batch(p, schema).num_rows for p in _pages(c, QUEUE_IN, r, page)),
                "columns": lambda: sum(b.num_rows for b in browse_pages(c, SeqRange(QUEUE_IN, r.first_seq,
                                                                                    r.last_seq + 1), schema, page)),
            }
            for way, read in ways.items():
                runs = []
                for _ in range(repeat):
                    s0, c0, w0 = cpu_seconds(pid), time.process_time(), time.perf_counter()
                    rows = read()
                    s1, c1, w1 = cpu_seconds(pid), time.process_time(), time.perf_counter()
                    runs.append({"server_us": (s1 - s0) / rows * 1e6, "client_us": (c1 - c0) / rows * 1e6,
                                 "msgs_per_s_one_client": rows / (w1 - w0)})
                out[way] = {k: (max if k.startswith("msgs") else min)(x[k] for x in runs) for k in runs[0]}
    finally:
        os.kill(pid, 9)
    return out


def _pages(c: Any, queue: str, r: Any, page: int) -> Any:
    pos = r.first_seq
    while pos <= r.last_seq:
        msgs = c.browse_range(queue, pos, r.last_seq + 1, max_msgs=page, max_bytes=LIMIT)
        if not msgs:
            return
        yield msgs
        pos = msgs[-1].seq + 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--page", type=int, default=4096, help="max messages per page (the reader's pageMessages)")
    ap.add_argument("--props", type=int, default=0, help="properties per message")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--output", choices=("table", "json"), default="table")
    ap.add_argument("--tcp", action="store_true", help="also over TCP against a queue-manager process")
    a = ap.parse_args()
    keep_freed_pages()  # as the Spark reader does in its worker (ferrymq.spark.memory)
    qm = filled_qmgr(a.n, a.size, a.props)
    run(qm, "columns", a.page)  # warm-up: imports (pyarrow's timezone support pulls in pandas), caches
    result: dict[str, dict[str, float]] = {}
    for way in WAYS:
        runs = [run(qm, way, a.page) for _ in range(a.repeat)]
        best = {k: min(r[k] for r in runs) for k in runs[0]}
        best["server_us"] = best["engine_us"] + best["server_reply_us"]
        best["client_us"] = best["client_decode_us"] + best["to_arrow_us"]
        result[way] = best
    tables = {"in process": result}
    if a.tcp:
        tables["over TCP"] = tcp_runs(a.n, a.size, a.page, a.repeat)
    if a.output == "json":
        print(json.dumps(tables, indent=2))
        return
    for title, table in tables.items():
        print(f"{title + ', us per message':30}" + "".join(f"{w:>12}" for w in table))
        for k in table["entries"]:
            print(f"{k:30}" + "".join(f"{table[w][k]:12,.2f}" for w in table))


if __name__ == "__main__":
    main()
