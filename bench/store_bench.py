"""Benchmark the file journal: persistent appends with group commit, and restart time.

(a) appends: P producer threads each append a record and wait until it is durable before
    the next (a persistent put's acknowledgement); one writer thread runs the journal's
    group commit (take_pending -> write_pending -> mark_durable), so one fdatasync covers
    whatever the producers appended meanwhile. Reported: messages/s and fdatasyncs/s, and
    the same run with fdatasync stubbed out (what everything but the disk flush costs).
(b) load: N live records written in large batches, then the time of FileJournal.load().

Everything goes to a temporary directory (``--dir`` picks where; removed at the end).
Counts and durations are bounded by the options. Examples:

    .venv/bin/python bench/store_bench.py
    .venv/bin/python bench/store_bench.py --count 200000 --seconds 3 --output json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ferrymq.store.file import FileJournal


@contextmanager
def no_fdatasync(enabled: bool) -> Iterator[None]:
    """Stub os.fdatasync for the comparison run (never in the product: only here)."""
    real = os.fdatasync
    if enabled:
        os.fdatasync = lambda fd: None
    try:
        yield
    finally:
        os.fdatasync = real


GATHER_S = 0.002  # at most this long to let every running producer append before a sync


def run_appends(base: Path, producers: int, size: int, limit: int, seconds: float, fsync: bool) -> dict[str, Any]:
    d = Path(tempfile.mkdtemp(prefix=f"appends-{producers}-", dir=base))
    journal = FileJournal(d)
    journal.load()
    payload = os.urandom(size)
    cond = threading.Condition()  # its lock makes the producers plus the writer's bookkeeping one "owner"
    stop = threading.Event()
    done = [0] * producers
    deadline = time.perf_counter() + seconds
    per_producer = max(1, limit // producers)
    failure: list[BaseException] = []
    # Records appended since the writer last took a batch, and producers still running: the
    # writer syncs once every running producer has appended (or GATHER_S has passed), so a
    # batch holds what all of them had to give, not whoever won the race for the lock.
    fresh = [0]
    running = [producers]

    def producer(index: int) -> None:
        rid = index * per_producer * 4 + 1
        try:
            while not stop.is_set() and done[index] < per_producer and time.perf_counter() < deadline:
                with cond:
                    lsn = journal.add(rid, 1, payload)
                    fresh[0] += 1
                    cond.notify_all()
                    while journal.durable_lsn < lsn and not stop.is_set():
                        cond.wait(0.5)
                rid += 1
                done[index] += 1
        except BaseException as exc:  # surface in the main thread
            failure.append(exc)
            stop.set()
        finally:
            with cond:
                running[0] -= 1
                cond.notify_all()

    def writer() -> None:
        try:
            while True:
                with cond:
                    while journal.appended_lsn == journal.durable_lsn and not stop.is_set():
                        cond.wait(0.5)
                    if stop.is_set() and journal.appended_lsn == journal.durable_lsn:
                        return
                    gather_until = time.perf_counter() + GATHER_S
                    while fresh[0] < running[0] and not stop.is_set():
                        left = gather_until - time.perf_counter()
                        if left <= 0:
                            break
                        cond.wait(left)
                    fresh[0] = 0
                    pending = journal.take_pending()
                if pending is None:
                    continue
                journal.write_pending(pending)  # outside the lock: producers keep appending
                with cond:
                    journal.mark_durable(pending.lsn)
                    cond.notify_all()
        except BaseException as exc:
            failure.append(exc)
            stop.set()

    with no_fdatasync(not fsync):
        w = threading.Thread(target=writer, name="writer")
        threads = [threading.Thread(target=producer, args=(i,), name=f"producer-{i}") for i in range(producers)]
        start = time.perf_counter()
        w.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
        stop.set()
        with cond:
            cond.notify_all()
        w.join()
    if failure:
        raise failure[0]
    stats = journal.stats()
    journal.close()
    shutil.rmtree(d, ignore_errors=True)
    messages = sum(done)
    return {
        "producers": producers, "fsync": fsync, "messages": messages, "seconds": round(elapsed, 3),
        "messages_per_s": round(messages / elapsed), "fdatasyncs": stats.fdatasyncs,
        "fdatasyncs_per_s": round(stats.fdatasyncs / elapsed), "messages_per_sync": round(messages / max(1, stats.fdatasyncs), 2),
    }


def run_load(base: Path, count: int, size: int, batch: int) -> dict[str, Any]:
    d = Path(tempfile.mkdtemp(prefix="load-", dir=base))
    journal = FileJournal(d)
    journal.load()
    payload = os.urandom(size)
    start = time.perf_counter()
    for rid in range(1, count + 1):
        journal.add(rid, 1, payload)
        if rid % batch == 0:
            journal.sync()
    journal.close()
    fill = time.perf_counter() - start
    disk = sum(f.stat().st_size for f in d.glob("*.seg"))
    files = len(list(d.glob("*.seg")))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    warm = timed_load(d, count)  # the files are still in the page cache from writing them
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    evict(d)
    cold = timed_load(d, count)
    shutil.rmtree(d, ignore_errors=True)
    return {
        "records": count, "payload_bytes": size, "segments": files, "disk_mib": round(disk / 2**20, 1),
        "fill_seconds": round(fill, 2), "load_seconds": round(warm, 3), "records_per_s": round(count / warm),
        "load_evicted_seconds": round(cold, 3), "peak_rss_growth_mib": round(max(0, rss_after - rss_before) / 1024, 1),
    }


def timed_load(d: Path, count: int) -> float:
    journal = FileJournal(d)
    start = time.perf_counter()
    loaded = journal.load()
    elapsed = time.perf_counter() - start
    assert len(loaded.records) == count, (len(loaded.records), count)
    del loaded
    journal.close()
    return elapsed


def evict(d: Path) -> None:
    """Drop our files from the page cache (a virtual disk may still cache them on the host)."""
    for f in d.glob("*.seg"):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "machine": platform.machine()}


def render(console: Console, results: dict[str, Any]) -> None:
    t = Table(title="(a) persistent appends, group commit (1 writer thread)")
    for col in ("producers", "payload", "msgs/s (fdatasync)", "fdatasyncs/s", "msgs per sync", "msgs/s (no fsync)"):
        t.add_column(col, justify="right")
    by_key = {(r["producers"], r["fsync"]): r for r in results["appends"]}
    for p in sorted({r["producers"] for r in results["appends"]}):
        synced, unsynced = by_key.get((p, True)), by_key.get((p, False))
        t.add_row(str(p), f"{results['args']['size']} B",
                  f"{synced['messages_per_s']:,}" if synced else "-", f"{synced['fdatasyncs_per_s']:,}" if synced else "-",
                  f"{synced['messages_per_sync']}" if synced else "-", f"{unsynced['messages_per_s']:,}" if unsynced else "-")
    if results["appends"]:
        console.print(t)
    if results.get("load"):
        r = results["load"]
        t = Table(title="(b) restart: FileJournal.load()")
        for col in ("live records", "payload", "segments", "on disk", "load", "records/s", "load, cache evicted",
                    "RSS growth"):
            t.add_column(col, justify="right")
        t.add_row(f"{r['records']:,}", f"{r['payload_bytes']} B", str(r["segments"]), f"{r['disk_mib']} MiB",
                  f"{r['load_seconds']} s", f"{r['records_per_s']:,}", f"{r['load_evicted_seconds']} s",
                  f"{r['peak_rss_growth_mib']} MiB")
        console.print(t)
    m = results["machine"]
    console.print(f"machine: {m['platform']}, {m['cpus']} CPUs, Python {m['python']}; dir {results['args']['dir']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--count", type=int, default=1_000_000, help="live records for the load test (default 1000000)")
    parser.add_argument("--size", type=int, default=1024, help="payload bytes per record (default 1024)")
    parser.add_argument("--appends", type=int, default=20_000, help="at most this many appends per run (default 20000)")
    parser.add_argument("--seconds", type=float, default=5.0, help="at most this long per append run (default 5)")
    parser.add_argument("--producers", default="1,8", help="comma-separated producer counts (default 1,8)")
    parser.add_argument("--batch", type=int, default=1000, help="records per sync when filling the load test")
    parser.add_argument("--dir", default=None, help="where to create the temporary directories (default: system temp)")
    parser.add_argument("--skip-appends", action="store_true")
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--output", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)
    if args.count < 1 or args.size < 0 or args.appends < 1 or args.seconds <= 0:
        parser.error("counts and durations must be positive")
    base = Path(tempfile.mkdtemp(prefix="ferrymq-store-bench-", dir=args.dir))
    results: dict[str, Any] = {"machine": machine(), "args": {**vars(args), "dir": str(base.parent)}, "appends": []}
    console = Console(stderr=args.output == "json", width=max(130, shutil.get_terminal_size().columns))
    try:
        if not args.skip_appends:
            for producers in (int(p) for p in args.producers.split(",")):
                for fsync in (True, False):
                    console.log(f"appends: {producers} producer(s), fdatasync={'on' if fsync else 'off'}")
                    results["appends"].append(run_appends(base, producers, args.size, args.appends, args.seconds, fsync))
        if not args.skip_load:
            console.log(f"load: writing {args.count:,} records of {args.size} bytes")
            results["load"] = run_load(base, args.count, args.size, args.batch)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.output == "json":
        json.dump(results, sys.stdout, indent=2)
        print()
    else:
        render(console, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
