"""Spark throughput through format("ferrymq"), beside the machine's ceiling.

1. ingest: a streaming query reads N messages of SIZE bytes from a ferrymq queue
   (availableNow, maxMessagesPerTrigger=BATCH, PARTS partitions) into Spark's noop sink;
2. synthetic: the same query over an in-memory Python source of the same shape (the same
   32 columns as Arrow batches, random payloads of SIZE bytes): what Spark's Python-source
   path can take on this machine, whatever the source; synthetic_like: the same with the
   other columns holding a real message's values (strings of their lengths, nulls where
   ferrymq has nulls) instead of empty strings and zeros;
3. write: a DataFrame of N rows of SIZE-byte payloads written to a queue (batch write,
   Arrow writer, prepared units committed by the driver), and the same with the Row writer;
4. stream write: the synthetic source (payload column only) written by a streaming query
   (availableNow, BATCH rows per micro-batch, Arrow stream writer, exactly once through
   the commit queue) into a queue.

Beside each write's rate: the CPU time per message of the Spark JVM, its Python workers and
the queue manager (from /proc; the writes are what those processes do in that time), which
other load on the machine changes far less than the rates.

Fairness between the reads (1 and 2): before any timed query, every read runs once untimed
(--warmup rows: the JVM's first query of a source pays for JIT, Python workers and
connections); each query starts from a collected JVM heap; and --rounds rotates the order of
the reads by one per round, so that each takes each place in a round equally often (the
second query of a round has cost the JVM 15-30 % less than the first, whatever it read). The
ingest is compared with each synthetic read within each round (the same JVM, minutes apart):
the per-round ratios of steady rates and their median, and the same by CPU per row (the
other's total over the ingest's: what the rates' ratio is when the queries have the cores
to themselves); with each read's median CPU per row by process over the rounds, and the
one-minute load average at each query's start.

"steady" is rows over the summed trigger time of every micro-batch but the first (which
pays for starting Python workers); "wall" is rows over the query's whole run;
"steady_cpu_us_per_row" is the same CPU time (JVM, Python workers, queue manager) over the
steady batches of a read, per row (sampled every 0.2 s); "steady_ms" splits the steady
batches' time as Spark reports it (addBatch is reading plus the sink).
Starts its own queue manager (temporary FERRYMQ_HOME, 127.0.0.1, a free port) unless
--conn names one. Run: .venv/bin/python bench/spark_bench.py [--messages 200000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from qmgr_process import proc_stat, start_qmgr

from ferrymq.client import connect

QUEUE_IN, QUEUE_OUT, QUEUE_STREAM = "BENCH.SPARK.IN", "BENCH.SPARK.OUT", "BENCH.SPARK.STREAM"
QUEUES = [(q, 5_000_000) for q in (QUEUE_IN, QUEUE_OUT, QUEUE_STREAM)]  # FERRYMQ.SPARK.COMMITS: the queue manager defines it


def cpu_by_role(qmgr_pid: int, seen: dict[int, tuple[str, float]] | None = None) -> dict[str, float]:
    """CPU seconds so far of this run's Spark JVM, its Python workers (pyspark daemons and
    their forks) and the queue manager, from /proc. Only this process's descendants count:
    other sessions on the machine run Spark too. ``seen``: each process's role and CPU at
    its last sighting, kept across calls, so that a process that has exited (Spark ends
    idle Python workers) still counts what it had used when last seen."""
    stats: dict[int, tuple[int, float]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stats[int(name)] = proc_stat(int(name))
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
    ours = {os.getpid()}
    grew = True
    while grew:
        before = len(ours)
        ours |= {pid for pid, (ppid, _) in stats.items() if ppid in ours}
        grew = len(ours) > before
    seen = {} if seen is None else seen
    if qmgr_pid in stats:
        seen[qmgr_pid] = ("qmgr", stats[qmgr_pid][1])
    for pid in ours - {os.getpid(), qmgr_pid}:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"SparkSubmit" in cmd:
            seen[pid] = ("jvm", stats[pid][1])
        elif b"pyspark.daemon" in cmd:
            seen[pid] = ("python_workers", stats[pid][1])
    out = dict.fromkeys(("jvm", "python_workers", "qmgr"), 0.0)
    for role, seconds in seen.values():
        out[role] += seconds
    return out


def per_message(before: dict[str, float], after: dict[str, float], n: int) -> dict[str, float]:
    """Microseconds of CPU per message by role (workers that exited in between are missed)."""
    us = {f"{k}_us": round(1e6 * max(0.0, after[k] - before[k]) / n, 1) for k in after}
    us["total_us"] = round(sum(us.values()), 1)
    return us


def fill(conn: str, qmgr: str, n: int, size: int) -> float:
    payload = os.urandom(size)
    t0 = time.perf_counter()
    with connect(qmgr, conn) as c, c.open(QUEUE_IN, async_put=True) as q:
        for _ in range(n):
            q.put(payload, persistent=False)
        c.stat()
    return n / (time.perf_counter() - t0)


def rates(query: Any, rows: int, seconds: float) -> dict[str, float]:
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    later = batches[1:] or batches
    steady_rows = sum(p["numInputRows"] for p in later)
    steady_ms = sum(p["durationMs"]["triggerExecution"] for p in later)
    # Where a steady batch's time goes (Spark's own split: addBatch is the reading and the
    # sink, the rest is the fixed cost of a micro-batch), summed over the steady batches.
    parts: dict[str, int] = {}
    for p in later:
        for k, v in p["durationMs"].items():
            parts[k] = parts.get(k, 0) + v
    return {"rows": sum(p["numInputRows"] for p in batches), "batches": len(batches),
            "steady_rows_s": round(steady_rows / (steady_ms / 1000.0)) if steady_ms else 0.0,
            "wall_rows_s": round(rows / seconds), "steady_ms": parts}


class CpuSampler(threading.Thread):
    """Samples ``cpu_by_role`` every ``period`` seconds, so that the CPU of a stretch of the
    run (the steady batches) can be read off afterwards. A worker that exits keeps its CPU
    at its last sample: what it used after that, within ``period``, is missed."""

    def __init__(self, qmgr: int, period: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.qmgr, self.period = qmgr, period
        self.samples: list[tuple[float, dict[str, float]]] = []
        self.seen: dict[int, tuple[str, float]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.samples.append((time.time(), cpu_by_role(self.qmgr, self.seen)))
            self.done.wait(self.period)

    def at(self, when: float) -> dict[str, float]:
        """CPU seconds by kind at wall-clock time ``when`` (linear between the samples around it)."""
        before = [s for s in self.samples if s[0] <= when] or self.samples[:1]
        after = [s for s in self.samples if s[0] >= when] or self.samples[-1:]
        (t0, c0), (t1, c1) = before[-1], after[0]
        share = 0.0 if t1 == t0 else (when - t0) / (t1 - t0)
        return {k: c0.get(k, 0.0) + (c1.get(k, 0.0) - c0.get(k, 0.0)) * share for k in c0.keys() | c1.keys()}


def _epoch(stamp: str) -> float:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def run_stream(spark: Any, reader: Any, rows: int, qmgr: int) -> dict[str, Any]:
    sampler = CpuSampler(qmgr)
    sampler.start()
    t0 = time.perf_counter()
    q = reader.load().writeStream.format("noop").trigger(availableNow=True).start()
    q.awaitTermination()
    sampler.done.set()
    sampler.join()
    if q.exception() is not None:
        raise SystemExit(str(q.exception()))
    out = rates(q, rows, time.perf_counter() - t0)
    # The JVM, the Python workers and the queue manager from the second batch's start to
    # the last one's end.
    batches = [p for p in q.recentProgress if p["numInputRows"] > 0]
    if len(batches) > 1:
        start = _epoch(batches[1]["timestamp"])
        end = _epoch(batches[-1]["timestamp"]) + batches[-1]["durationMs"]["triggerExecution"] / 1000.0
        steady_rows = sum(p["numInputRows"] for p in batches[1:])
        c0, c1 = sampler.at(start), sampler.at(end)
        per = {k: round((c1[k] - c0[k]) / steady_rows * 1e6, 1) for k in sorted(c1)}
        out["steady_cpu_us_per_row"] = {"total": round(sum(per.values()), 1), **per}
    return out


def synthetic_source(size: int, like: dict[str, Any] | None = None, name: str = "ferrymq_synthetic") -> Any:
    """An in-memory stream source producing ferrymq-shaped Arrow batches (defined here so
    that Spark pickles it by value to its workers). ``like``: the values of a real message's
    other columns (a browsed message's, ``message_values``), repeated in every row instead
    of empty strings and zeros: the same shape down to the strings' lengths and the nulls."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
    from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

    from ferrymq.spark.schema import SCHEMA, read_schema

    @dataclass
    class Span(InputPartition):
        start: int
        end: int

    def batch(schema: pa.Schema, start: int, n: int) -> pa.RecordBatch:
        payload = np.random.default_rng(start).integers(0, 256, n * size, dtype=np.uint8).tobytes()
        offsets = pa.array(np.arange(0, (n + 1) * size, size, dtype=np.int32))
        cols: dict[str, pa.Array] = {
            "queue": pa.array([QUEUE_IN] * n, pa.string()), "seq": pa.array(np.arange(start, start + n), pa.int64()),
            "payload": pa.BinaryArray.from_buffers(pa.binary(), n, [None, offsets.buffers()[1], pa.py_buffer(payload)]),
            "properties": pa.MapArray.from_arrays(pa.array(np.zeros(n + 1, dtype=np.int32)), pa.array([], pa.string()),
                                                  pa.array([], pa.string())),
        }
        arrays = []
        for f in schema:
            if like is not None and f.name in like and f.name not in cols:
                arrays.append(pa.array([like[f.name]] * n, f.type))
            elif f.name in cols:
                arrays.append(cols[f.name].cast(f.type))
            elif pa.types.is_binary(f.type):
                arrays.append(pa.array([bytes(24)] * n, f.type))
            elif pa.types.is_string(f.type):
                arrays.append(pa.array([""] * n, f.type))
            elif pa.types.is_timestamp(f.type):
                arrays.append(pa.array(np.full(n, 1_790_000_000_000_000, dtype=np.int64), pa.int64()).cast(f.type))
            else:
                arrays.append(pa.array(np.zeros(n, dtype=np.int32), f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    class Reader(DataSourceStreamReader, SupportsTriggerAvailableNow):
        def __init__(self, options: dict[str, str], schema: Any) -> None:
            self.total = int(options["rows"])
            self.per_batch = int(options["batch"])
            self.parts = int(options["parts"])
            self.arrow = read_schema(schema)

        def initialOffset(self) -> dict[str, int]:
            return {"n": 0}

        def getDefaultReadLimit(self) -> ReadLimit:
            return ReadMaxRows(self.per_batch)

        def prepareForTriggerAvailableNow(self) -> None:
            pass

        def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
            cap = limit.max_rows if isinstance(limit, ReadMaxRows) else self.total
            return {"n": min(self.total, start["n"] + cap)}

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
            step = max(1, -(-(end["n"] - start["n"]) // self.parts))
            return [Span(s, min(s + step, end["n"])) for s in range(start["n"], end["n"], step)]

        def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
            assert isinstance(partition, Span)
            for s in range(partition.start, partition.end, 4096):
                yield batch(self.arrow, s, min(4096, partition.end - s))

    class Synthetic(DataSource):
        @classmethod
        def name(cls) -> str:
            return name

        def schema(self) -> Any:
            return SCHEMA

        def streamReader(self, schema: Any) -> DataSourceStreamReader:
            return Reader(dict(self.options), schema)

    return Synthetic


READS = ("ingest", "synthetic", "synthetic_like")
CPU_ROLES = ("jvm", "python_workers", "qmgr")


def _median(values: Sequence[float]) -> float:
    return float(np.median(values)) if values else float("nan")


def summary(out: dict[str, Any], reads: Sequence[str], rounds: int) -> dict[str, Any]:
    """The ingest's steady rate over each other read's, paired within each round (the same
    sitting, the same JVM, minutes apart), and their median; and each read's median CPU per
    row by process over the rounds."""
    tags = [t for t in ([""] if rounds == 1 else [f"_{r + 1}" for r in range(rounds)])
            if not any("error" in out[f"{n}{t}"] for n in reads)]  # a round with a failed query has no pair
    doc: dict[str, Any] = {"rounds_compared": [t.lstrip("_") or "1" for t in tags]}
    for other in reads:
        if other == "ingest":
            continue
        ratios = [round(out[f"ingest{t}"]["steady_rows_s"] / out[f"{other}{t}"]["steady_rows_s"], 3) for t in tags
                  if out[f"{other}{t}"]["steady_rows_s"]]
        # The same by CPU per row (the other's total over the ingest's): what the rates' ratio is
        # when the cores are all the queries', which other load on the machine changes far less.
        cpu = [round(out[f"{other}{t}"]["steady_cpu_us_per_row"]["total"]
                     / out[f"ingest{t}"]["steady_cpu_us_per_row"]["total"], 3) for t in tags
               if "steady_cpu_us_per_row" in out[f"{other}{t}"] and "steady_cpu_us_per_row" in out[f"ingest{t}"]]
        doc[f"ingest/{other}"] = {"rounds": ratios, "median": round(_median(ratios), 3),
                                  "by_cpu_rounds": cpu, "by_cpu_median": round(_median(cpu), 3)}
    for name in reads:
        cpu = [out[f"{name}{t}"].get("steady_cpu_us_per_row", {}) for t in tags]
        doc[f"{name}_cpu_us_per_row_median"] = {
            k: round(_median([c[k] for c in cpu if k in c and c[k] >= 0]), 1) for k in ("total", *CPU_ROLES)}
    return doc


def print_summary(out: dict[str, Any], reads: Sequence[str], rounds: int) -> None:
    doc = out["summary"]
    tags = [f"_{r}" if rounds > 1 else "" for r in doc["rounds_compared"]]
    print("round | order | " + " | ".join(f"{n} rows/s" for n in reads) + " | "
          + " | ".join(f"ingest/{n}" for n in reads if n != "ingest") + " | "
          + " | ".join(f"{n} CPU us/row jvm/workers/qmgr" for n in reads) + " | load at each start")
    for i, t in enumerate(tags):
        cpu = [out[f"{n}{t}"].get("steady_cpu_us_per_row", {}) for n in reads]
        print(" | ".join([doc["rounds_compared"][i], ",".join(out[f"order{t}"]),
                          *(str(out[f"{n}{t}"]["steady_rows_s"]) for n in reads),
                          *(str(doc[f"ingest/{n}"]["rounds"][i]) if i < len(doc[f"ingest/{n}"]["rounds"]) else "-"
                            for n in reads if n != "ingest"),
                          *("/".join(str(c.get(k, "-")) for k in CPU_ROLES) for c in cpu),
                          "/".join(str(out[f"{n}{t}"]["load_1m"][0]) for n in out[f"order{t}"])]))
    print("median | " + " | ".join(f"ingest/{n} {doc[f'ingest/{n}']['median']} (by CPU per row "
                                   f"{doc[f'ingest/{n}']['by_cpu_median']}: {doc[f'ingest/{n}']['by_cpu_rounds']})"
                                   for n in reads if n != "ingest")
          + " | CPU us/row jvm/workers/qmgr: " + " | ".join(f"{n} " + "/".join(str(doc[f"{n}_cpu_us_per_row_median"][k]) for k in CPU_ROLES)
                               for n in reads), flush=True)


def message_values(conn: str, qmgr: str) -> dict[str, Any]:
    """Every column but the generated ones of the first message on the input queue, as the
    source reads it."""
    from ferrymq.spark.pages import page_batch
    from ferrymq.spark.schema import SCHEMA, read_schema

    with connect(qmgr, conn) as c:
        r = c.queue_range(QUEUE_IN)
        page = c.browse_columns(QUEUE_IN, r.first_seq, r.first_seq + 1, max_msgs=1)
    row: dict[str, Any] = page_batch(page, read_schema(SCHEMA), qmgr).to_pylist()[0]
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conn", help="connName of a running queue manager with the bench queues (default: start one)")
    p.add_argument("--qmgr", default="QMB")
    p.add_argument("--messages", type=int, default=200_000)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--batch", type=int, default=50_000, help="maxMessagesPerTrigger")
    p.add_argument("--parts", type=int, default=2, help="partitions per micro-batch (minPartitions)")
    p.add_argument("--master", default="local[2]", help="Spark master (local[N]: N tasks, each Python worker "
                   "with its own connection)")
    p.add_argument("--skip", default="", help="comma list of phases to skip: ingest,synthetic,synthetic_like,write,"
                   "stream_write")
    p.add_argument("--writes-only", action="store_true", help="skip ingest and synthetic (the write phases only)")
    p.add_argument("--rounds", type=int, default=1, help="every read this many times, the order rotated per round")
    p.add_argument("--warmup", type=int, default=400_000, help="rows of an untimed first query of every read before "
                   "the rounds (0: none)")
    p.add_argument("--page-messages", type=int, default=4096, help="the ingest's pageMessages (Arrow batch rows)")
    p.add_argument("--max-bytes", type=int, default=0, help="the ingest's maxBytesPerTrigger instead of --batch")
    args = p.parse_args()
    skip = set(args.skip.split(",")) | ({"ingest", "synthetic"} if args.writes_only else set())
    home = tempfile.mkdtemp(prefix="ferrymq-spark-bench-")
    pid = 0
    conn = args.conn
    if conn is None:
        conn, pid = start_qmgr(home, QUEUES)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (SparkSession.builder.master(args.master).appName("ferrymq-spark-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.memory", "4g").config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    out: dict[str, Any] = {"messages": args.messages, "size": args.size, "batch": args.batch, "parts": args.parts,
                           "master": args.master}
    opts = {"queueManager": args.qmgr, "connName": conn}
    try:
        reads = [name for name in READS if name not in skip and (name != "synthetic_like" or "ingest" not in skip)]
        if "synthetic" in reads:
            spark.dataSource.register(synthetic_source(args.size))
        waiting = 0  # messages on the input queue before a round's fill
        if "ingest" in reads:
            fill(conn, args.qmgr, 1, args.size)  # the message whose values synthetic_like repeats
            waiting = 1
            if "synthetic_like" in reads:
                spark.dataSource.register(synthetic_source(args.size, message_values(conn, args.qmgr),
                                                           "ferrymq_synthetic_like"))
        # --max-bytes: the same batches by a byte limit (the driver sizes each batch by browsing it).
        limit = {"maxBytesPerTrigger": str(args.max_bytes)} if args.max_bytes else {
            "maxMessagesPerTrigger": str(args.batch)}

        def read(name: str, rows: int) -> dict[str, Any]:
            """One timed query of ``name`` over ``rows`` rows, from a collected JVM heap."""
            if name == "ingest":
                reader = spark.readStream.format("ferrymq").options(
                    **opts, queue=QUEUE_IN, **limit, minPartitions=str(args.parts),
                    pageMessages=str(args.page_messages), checkpointLocation=tempfile.mkdtemp())
            else:  # synthetic_like: the synthetic source, its other columns holding a real message's values
                reader = spark.readStream.format(f"ferrymq_{name}").options(
                    rows=str(rows), batch=str(args.batch), parts=str(args.parts))
            spark.sparkContext._jvm.System.gc()  # no query starts with the garbage of the one before it
            load = os.getloadavg()[0]
            result = run_stream(spark, reader, rows, pid)
            return {**result, "load_1m": [round(load, 2), round(os.getloadavg()[0], 2)]}

        if args.warmup and reads:
            # Not timed: every source's first query in this JVM (JIT, Python workers, connections),
            # so that no timed query is a source's first.
            if "ingest" in reads:
                fill(conn, args.qmgr, args.warmup, args.size)
            out["warmup"] = {name: read(name, args.warmup + (waiting if name == "ingest" else 0))["steady_rows_s"]
                             for name in reads}
            waiting = 0
            print("warmup", out["warmup"], flush=True)
        # Each round runs every read once, the order rotated by one per round: every source takes
        # each place in a round equally often over len(reads) rounds (a round's first query costs
        # the JVM more than its later ones), and the ratios are taken within a round.
        for r in range(args.rounds):
            tag = "" if args.rounds == 1 else f"_{r + 1}"
            order = reads[r % len(reads):] + reads[: r % len(reads)] if reads else []
            out[f"order{tag}"] = order
            if "ingest" in reads:
                out[f"fill_puts_s{tag}"] = round(fill(conn, args.qmgr, args.messages, args.size))
            for name in order:
                try:
                    out[f"{name}{tag}"] = read(name, args.messages + (waiting if name == "ingest" else 0))
                except Exception as exc:  # e.g. a Python worker too slow to start on a loaded machine
                    out[f"{name}{tag}"] = {"error": str(exc).splitlines()[0][:300]}
                    if name == "ingest":  # what it left unread goes to the next round's ingest
                        with connect(args.qmgr, conn) as c:
                            waiting = c.queue_range(QUEUE_IN).depth
                print(f"{name}{tag}", out[f"{name}{tag}"], flush=True)
                if name == "ingest" and "error" not in out[f"{name}{tag}"]:
                    waiting = 0
        if "ingest" in reads and len(reads) > 1:
            out["summary"] = summary(out, reads, args.rounds)
            print_summary(out, reads, args.rounds)
        if "write" not in skip:
            df = (spark.range(args.messages, numPartitions=args.parts)
                  .select(F.expr(f"cast(repeat('x', {args.size}) as binary)").alias("payload")).cache())
            df.count()
            # A first, small write starts the Python workers, so neither timed write pays for it.
            df.limit(1000).write.format("ferrymq").options(**opts, queue=QUEUE_OUT).mode("append").save()
            for mode in ("arrow", "rows"):
                c0, t0 = cpu_by_role(pid), time.perf_counter()
                df.write.format("ferrymq").options(**opts, queue=QUEUE_OUT, writeMode=mode).mode("append").save()
                out[f"write_{mode}_rows_s"] = round(args.messages / (time.perf_counter() - t0))
                out[f"write_{mode}_cpu"] = per_message(c0, cpu_by_role(pid), args.messages)
                print(f"write {mode}", out[f"write_{mode}_rows_s"], out[f"write_{mode}_cpu"], flush=True)
        if "stream_write" not in skip:
            spark.dataSource.register(synthetic_source(args.size))
            # Only the payload column is generated (a narrower user schema): the source's own cost
            # stays small beside the write's. A first, small query starts the streaming
            # writer's Python workers, so the timed one does not pay for them.
            for rows in (2 * args.parts * 1000, args.messages):
                stream = spark.readStream.format("ferrymq_synthetic").schema("payload BINARY").options(
                    rows=str(rows), batch=str(args.batch), parts=str(args.parts)).load()
                c0, t0 = cpu_by_role(pid), time.perf_counter()
                q = (stream.writeStream.format("ferrymq").options(**opts, queue=QUEUE_STREAM)
                     .option("checkpointLocation", tempfile.mkdtemp()).trigger(availableNow=True).start())
                q.awaitTermination()
                if q.exception() is not None:
                    raise SystemExit(str(q.exception()))
            out["stream_write"] = rates(q, args.messages, time.perf_counter() - t0)
            out["stream_write_batches_ms"] = [{k: p["durationMs"].get(k) for k in ("triggerExecution", "addBatch",
                                                                                 "walCommit", "commitOffsets")}
                                              for p in q.recentProgress if p["numInputRows"] > 0]
            out["stream_write_cpu"] = per_message(c0, cpu_by_role(pid), args.messages)
            print("stream write", out["stream_write"], out["stream_write_cpu"], flush=True)
    finally:
        spark.stop()
        if pid:
            os.kill(pid, 9)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
