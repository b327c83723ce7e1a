"""CPU per message of a Spark write task's puts, without Spark (run on demand; never a timed test).

    .venv/bin/python bench/put_columns_bench.py [--messages 200000] [--size 1024] [--reps 3] [--output table|json]

Each rep stages N messages of SIZE bytes the way a write task does (puts under syncpoint,
then prepare under an XID) and commits them from a second connection, as the driver does,
against a queue-manager process of its own (temporary FERRYMQ_HOME, 127.0.0.1, a free
port). Three ways of putting the same rows:

- ``columns``: the writers' path, an Arrow batch put by columns (PUT_COLUMNS frames);
- ``rows``: the Row writer's path, Python rows gathered into Arrow batches, then the same;
- ``puts``: one asynchronous ``Queue.put`` per row (PUT_BATCH frames), how the writers put
  before the columnar frame.

Reported per message: the client's CPU (this process) and the queue manager's CPU (its
process, from /proc) for staging, and the queue manager's for the driver's commit. CPU
time, not wall time, so that other load on the machine changes the figures far less. The
output queue is never drained, so later reps put into a deeper queue.
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
from qmgr_process import cpu_seconds, start_qmgr

from ferrymq.client import Client, connect
from ferrymq.mq import constants as C
from ferrymq.spark import commits
from ferrymq.spark.columnar import batches_of_rows, stage
from ferrymq.spark.puts import PutPlan

QUEUE = "BENCH.COLUMNS"


def one_put_per_row(c: Client, payloads: list[bytes], xid: bytes) -> None:
    with c.open(QUEUE, options=C.MQOO_OUTPUT | C.MQOO_FAIL_IF_QUIESCING, async_put=True) as q:
        for p in payloads:
            q.put(p, syncpoint=True)
    assert c.stat().failures == 0
    c.prepare(xid)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="columns,rows,puts")
    ap.add_argument("--output", choices=["table", "json"], default="table")
    args = ap.parse_args()
    n, payload = args.messages, os.urandom(args.size)
    plan = PutPlan(["payload"], QUEUE)
    payloads = [payload] * n
    arrow = pa.array(payloads, pa.binary())
    batches = [pa.RecordBatch.from_arrays([arrow.slice(i, 10_000)], names=["payload"]) for i in range(0, n, 10_000)]
    ways: dict[str, Callable[[Client, bytes], Any]] = {
        "columns": lambda c, xid: stage(c, plan, iter(batches), xid),
        "rows": lambda c, xid: stage(c, plan, batches_of_rows(["payload"], ((p,) for p in payloads)), xid),
        "puts": lambda c, xid: one_put_per_row(c, payloads, xid),
    }
    conn, pid = start_qmgr(tempfile.mkdtemp(prefix="ferrymq-columns-bench-"), [(QUEUE, 50_000_000)])
    results: list[dict[str, Any]] = []
    try:
        for rep in range(args.reps):
            for mode in args.modes.split(","):
                with connect("QMB", conn) as c, connect("QMB", conn) as driver:
                    scope = f"bench{rep}{mode}"
                    xid = commits.task_xid(scope, 0, 0, 0)
                    s0, p0, t0 = cpu_seconds(pid), time.process_time(), time.perf_counter()
                    ways[mode](c, xid)
                    s1, p1, t1 = cpu_seconds(pid), time.process_time(), time.perf_counter()
                    commits.commit_job(driver, scope, [xid])
                    s2 = cpu_seconds(pid)
                results.append({"rep": rep, "mode": mode, "client_us": round(1e6 * (p1 - p0) / n, 2),
                                "server_us": round(1e6 * (s1 - s0) / n, 2),
                                "commit_server_us": round(1e6 * (s2 - s1) / n, 2),
                                "wall_msgs_s": round(n / (t1 - t0))})
    finally:
        os.kill(pid, 9)
    if args.output == "json":
        print(json.dumps({"messages": n, "size": args.size, "results": results}))
        return
    print(f"{n} messages of {args.size} bytes per rep; CPU microseconds per message")
    print(f"{'rep':>3} {'mode':8} {'client':>8} {'server':>8} {'commit':>8} {'wall msg/s':>11}")
    for r in results:
        print(f"{r['rep']:>3} {r['mode']:8} {r['client_us']:>8} {r['server_us']:>8} {r['commit_server_us']:>8} "
              f"{r['wall_msgs_s']:>11}")


if __name__ == "__main__":
    main()
