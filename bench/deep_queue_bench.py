"""Deep queue: the queue manager's memory while a queue far larger than its budget is filled,
browsed, restarted and drained over TCP (engine/paging.py, docs/limits.md "Memory per queue").

A real queue manager (``ferrymq create/start`` in a scratch FERRYMQ_HOME) gets ``--total``
bytes of ``--size``-byte persistent messages on one queue from one client (asynchronous
puts), then one client browses them all, the queue manager is stopped and started again, and
one client drains the queue under syncpoint in batches, checking that every message comes
back intact and in order (each body carries its number and a checksum). A thread samples the
server's /proc/<pid>/status (VmRSS, RssAnon, RssFile) every ``--sample`` seconds; the report
gives each phase's time, rate and peak memory (VmHWM: the process's own high-water mark,
which also covers a restart's recovery, before the server answers).

    python bench/deep_queue_bench.py --total 20G --home /work/deepq-bench    # the full run
    python bench/deep_queue_bench.py --total 1G --budget 64M                  # a quick one

The journal needs about twice ``--total`` of free disk at the peak (compaction rewrites what
is still live while the drain deletes); ``--home`` must be on a disk with that much room.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from typing import Any

from qmgr_process import start_qmgr

QUEUE = "DEEP.Q"
QMGR = "QMB"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_arg(text: str) -> int:
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1] if text[-1:] in _UNITS else ""
    return int(text[: len(text) - len(unit)]) * _UNITS[unit]


def body(i: int, size: int) -> bytes:
    """Message ``i``: its number, a CRC of the rest, and filler that differs per message."""
    filler = (i.to_bytes(8, "big") * (size // 8 + 1))[: size - 12]
    return i.to_bytes(8, "big") + zlib.crc32(filler).to_bytes(4, "big") + filler


def check(data: bytes, i: int, size: int) -> None:
    if len(data) != size or int.from_bytes(data[:8], "big") != i or zlib.crc32(data[12:]) != int.from_bytes(data[8:12], "big"):
        raise SystemExit(f"message {i} came back wrong (number {int.from_bytes(data[:8], 'big')}, {len(data)} bytes)")


class Sampler(threading.Thread):
    """Peak memory of a process per phase, from /proc/<pid>/status (kB -> bytes)."""

    def __init__(self, interval: float) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.pid = 0
        self.phase = ""
        self.peaks: dict[str, dict[str, int]] = {}
        self.lock = threading.Lock()
        self.done = threading.Event()

    def set(self, pid: int, phase: str) -> None:
        with self.lock:
            self.pid, self.phase = pid, phase
            self.peaks.setdefault(phase, {"VmRSS": 0, "VmHWM": 0, "RssAnon": 0, "RssFile": 0})
        self.sample()

    def sample(self) -> None:
        with self.lock:
            pid, phase = self.pid, self.phase
        if not pid:
            return
        try:
            with open(f"/proc/{pid}/status") as f:
                lines = f.read().splitlines()
        except OSError:
            return
        values = {k: int(v.split()[0]) * 1024 for k, v in (ln.split(":", 1) for ln in lines) if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile")}
        with self.lock:
            peak = self.peaks.setdefault(phase, {"VmRSS": 0, "VmHWM": 0, "RssAnon": 0, "RssFile": 0})
            for k, v in values.items():
                peak[k] = max(peak[k], v)

    def run(self) -> None:
        while not self.done.wait(self.interval):
            self.sample()


def cli(home: str, *args: str) -> str:
    env = dict(os.environ, FERRYMQ_HOME=home)
    return subprocess.run([sys.executable, "-m", "ferrymq.cli", *args], env=env, check=True, capture_output=True,
                          text=True, timeout=3600).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--total", type=size_arg, default=size_arg("1G"), help="bytes of message data to queue")
    ap.add_argument("--size", type=size_arg, default=65536, help="bytes per message")
    ap.add_argument("--budget", type=size_arg, default=0,
                    help="the server's --persistent-memory, bytes or with K, M, G (default: its own)")
    ap.add_argument("--home", default="", help="scratch FERRYMQ_HOME (default: a temporary directory); removed after")
    ap.add_argument("--batch", type=int, default=64, help="messages per drain unit of work")
    ap.add_argument("--sample", type=float, default=0.2, help="seconds between memory samples")
    ap.add_argument("--json", default="", help="also write the results to this file")
    args = ap.parse_args()
    import ferrymq.client as fc

    count = args.total // args.size
    home = args.home or tempfile.mkdtemp(prefix="deepq-")
    os.makedirs(home, exist_ok=True)
    sampler = Sampler(args.sample)
    sampler.start()
    results: dict[str, Any] = {"messages": count, "size": args.size, "total_bytes": count * args.size,
                               "budget": args.budget or "default", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    phases: dict[str, float] = {}
    try:
        budget = ("--persistent-memory", str(args.budget)) if args.budget else ()
        conn, pid = start_qmgr(home, [(QUEUE, 999_999_999)], QMGR, budget)
        sampler.set(pid, "idle")
        max_len = max(4 * 1024 * 1024, args.size + 65536)
        # Fill: asynchronous persistent puts, one client.
        sampler.set(pid, "fill")
        t0 = time.monotonic()
        with fc.connect(QMGR, conn, max_msg_length=max_len) as c:
            q = c.open(QUEUE, async_put=True)
            for i in range(count):
                q.put(body(i, args.size), persistent=True)
            status = c.stat()
            if status.failures:
                raise SystemExit(f"{status.failures} puts failed: {status.first_error}")
            depth = q.depth()
        phases["fill"] = time.monotonic() - t0
        if depth != count:
            raise SystemExit(f"depth {depth} after filling, expected {count}")
        # Browse everything in order.
        sampler.set(pid, "browse")
        t0 = time.monotonic()
        with fc.connect(QMGR, conn, max_msg_length=max_len) as c:
            q = c.open(QUEUE)
            n = 0
            for msg in q.browse():
                check(msg.data, n, args.size)
                n += 1
        phases["browse"] = time.monotonic() - t0
        if n != count:
            raise SystemExit(f"browsed {n} of {count} messages")
        # Restart with the queue full.
        sampler.set(pid, "stop")
        t0 = time.monotonic()
        cli(home, "stop", QMGR, "--wait", "600")
        doc = json.loads(cli(home, "start", QMGR, "--output", "json", "--timeout", "3600"))
        conn, pid = f"127.0.0.1({doc['port']})", int(doc["pid"])
        phases["restart"] = time.monotonic() - t0
        sampler.set(pid, "restarted")
        # Drain under syncpoint, in order.
        sampler.set(pid, "drain")
        t0 = time.monotonic()
        with fc.connect(QMGR, conn, max_msg_length=max_len) as c:
            q = c.open(QUEUE)
            n = 0
            while n < count:
                with c.transaction():
                    got = q.get_batch(args.batch, max_bytes=max_len - 65536)
                if not got:
                    raise SystemExit(f"queue empty after {n} of {count} messages")
                for msg in got:
                    check(msg.data, n, args.size)
                    n += 1
            if q.depth():
                raise SystemExit(f"{q.depth()} messages left after the drain")
        phases["drain"] = time.monotonic() - t0
        sampler.set(pid, "end")
        cli(home, "stop", QMGR, "--wait", "600")
    finally:
        sampler.done.set()
        subprocess.run([sys.executable, "-m", "ferrymq.cli", "stop", QMGR, "--immediate"],
                       env=dict(os.environ, FERRYMQ_HOME=home), capture_output=True, check=False)
        shutil.rmtree(home, ignore_errors=True)
    results["seconds"] = {k: round(v, 1) for k, v in phases.items()}
    results["peak_bytes"] = sampler.peaks
    mb = 1024 * 1024
    print(f"{count} messages x {args.size} bytes = {count * args.size / mb / 1024:.2f} GiB, budget {results['budget']}")
    for phase, secs in phases.items():
        rate = f"{count / secs:8.0f} msg/s {count * args.size / secs / mb:7.1f} MiB/s" if phase != "restart" else ""
        print(f"  {phase:8s} {secs:8.1f} s {rate}")
    for phase, peak in sampler.peaks.items():
        print(f"  peak {phase:10s} VmRSS {peak['VmRSS'] / mb:8.1f} MiB  RssAnon {peak['RssAnon'] / mb:8.1f} MiB"
              f"  RssFile {peak['RssFile'] / mb:8.1f} MiB  VmHWM {peak['VmHWM'] / mb:8.1f} MiB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
