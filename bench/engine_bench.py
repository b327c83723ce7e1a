"""Engine-only benchmark: MQPUT/MQGET inside one process, and restart time from a file journal.

Not a test. Measures the queue manager's own cost per call (no sockets, no client), and
how long QueueManager.start takes to replay N live persistent messages.

    python bench/engine_bench.py --count 100000 --restart 1000000 --output table|json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ferrymq.engine.api import GetOptions, ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD


def put_get(count: int, size: int, persistent: bool) -> dict[str, float]:
    qm = QueueManager.start("BENCH", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "Q", {"MAXDEPTH": count + 1})
    hconn = qm.connect()
    hobj = qm.open(hconn, ObjectDescriptor("Q"), C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED).hobj
    md, pmo, gmo, data = MQMD(persistence=int(persistent)), PutOptions(), GetOptions(), b"x" * size
    t0 = time.perf_counter()
    for _ in range(count):
        qm.put(hconn, hobj, md, pmo, data)
    t1 = time.perf_counter()
    for _ in range(count):
        qm.get(hconn, hobj, MQMD(), gmo, size)
    t2 = time.perf_counter()
    return {"put_per_s": count / (t1 - t0), "get_per_s": count / (t2 - t1)}


def restart(count: int, size: int) -> dict[str, float]:
    directory = Path(tempfile.mkdtemp(prefix="ferrymq-bench-"))
    try:
        qm = QueueManager.start("BENCH", FileJournal(directory), SystemClock())
        qm.objects.define("QLOCAL", "Q", {"MAXDEPTH": count + 1})
        hconn = qm.connect()
        hobj = qm.open(hconn, ObjectDescriptor("Q"), C.MQOO_OUTPUT).hobj
        md, pmo, data = MQMD(persistence=1), PutOptions(), b"x" * size
        for i in range(count):
            qm.put(hconn, hobj, md, pmo, data)
            if i % 10_000 == 0:
                qm.journal.sync()
        qm.journal.close()
        del qm
        # A restart is a new process: time it in one, as an operator would see it.
        probe = (
            "import sys, time; t = time.perf_counter();"
            "from ferrymq.engine.qmgr import QueueManager; from ferrymq.engine.api import SystemClock;"
            "from ferrymq.store.file import FileJournal;"
            f"qm = QueueManager.start('BENCH', FileJournal({str(directory)!r}), SystemClock());"
            "print(time.perf_counter() - t, qm.objects.require('Q').messages.depth)"
        )
        out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.split()
        assert int(out[1]) == count, out
        return {"messages": count, "restart_s": float(out[0])}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100_000, help="messages per put/get run (default 100000)")
    ap.add_argument("--size", type=int, default=1024, help="message size in bytes (default 1024)")
    ap.add_argument("--restart", type=int, default=200_000, help="live messages for the restart run (0 skips)")
    ap.add_argument("--output", choices=["table", "json"], default="table")
    args = ap.parse_args()
    results = {
        "nonpersistent": put_get(args.count, args.size, False),
        "persistent_memory_journal": put_get(args.count, args.size, True),
    }
    if args.restart:
        results["restart"] = restart(args.restart, args.size)
    if args.output == "json":
        print(json.dumps(results, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"engine, {args.size}-byte messages")
    table.add_column("scenario")
    table.add_column("figure", justify="right")
    for name, figures in results.items():
        for key, value in figures.items():
            table.add_row(f"{name} {key}", f"{value:,.2f}" if isinstance(value, float) else f"{value:,}")
    Console().print(table)


if __name__ == "__main__":
    main()
