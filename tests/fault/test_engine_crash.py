"""Kill a loaded queue-manager process with SIGKILL, restart it from its journal, and check
that nothing acknowledged is lost, nothing committed comes back, and backouts are kept."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from ferrymq.engine.api import SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.store.file import FileJournal

WORKER = Path(__file__).with_name("crash_worker.py")
CYCLES = int(os.environ.get("FERRYMQ_CRASH_CYCLES", "20"))


def run_and_kill(directory: Path, seed: int, rng: random.Random, worker: Path = WORKER) -> list[str]:
    """Run ``worker`` on ``directory`` until it is READY, kill it with SIGKILL a random moment
    later, and return the lines it printed in full."""
    proc = subprocess.Popen([sys.executable, str(worker), str(directory), str(seed)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    assert first.strip() == "READY", first + proc.stderr.read()
    # Read every later line through the same buffered file object in a thread: communicate()
    # reads the raw pipe and would drop whatever readline() had already buffered.
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout))  # type: ignore[arg-type]
    reader.start()
    time.sleep(rng.uniform(0.05, 0.6))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    reader.join(timeout=30)
    err = proc.stderr.read()
    assert proc.returncode == -signal.SIGKILL, err
    if lines and not lines[-1].endswith("\n"):
        lines.pop()  # a line cut by the kill was never acknowledged
    return [line.rstrip("\n") for line in lines]


def test_sigkill_under_load_loses_nothing_acknowledged(tmp_path: Path) -> None:
    rng = random.Random(20261122)
    acked: set[str] = set()
    tentative: set[str] = set()
    backed_out_puts: set[str] = set()
    consumed: set[str] = set()
    min_backout: dict[str, int] = {}
    for cycle in range(CYCLES):
        got_in_flight: set[str] = set()
        for line in run_and_kill(tmp_path, cycle + 1, rng):
            kind, ident, *rest = line.split()
            if kind == "T":
                tentative.add(ident)
            elif kind == "P":
                acked.add(ident)
            elif kind == "X":
                backed_out_puts.add(ident)
            elif kind == "G":
                got_in_flight.add(ident)
            elif kind == "C":
                consumed.add(ident)
            elif kind == "B":
                min_backout[ident] = max(min_backout.get(ident, 0), int(rest[0]))
        journal = FileJournal(tmp_path)
        qm = QueueManager.start("CRASHQM", journal, SystemClock())
        q = qm.objects.require("WORK")
        present = Counter(m.data.decode() for m in q.messages.by_seq.values())
        journal.close()
        assert all(n == 1 for n in present.values()), "a message is on the queue twice"
        missing = (acked - consumed) - set(present)
        # A get whose commit reached the disk just before the kill never printed C: it may
        # be gone, but only if it was got inside a unit of work in this cycle.
        lost = missing - got_in_flight
        assert not lost, f"cycle {cycle}: acknowledged puts lost: {sorted(lost)[:5]}"
        consumed |= missing
        redelivered = consumed & set(present)
        assert not redelivered, f"cycle {cycle}: committed gets back on the queue: {sorted(redelivered)[:5]}"
        assert not (backed_out_puts & set(present)), "a backed-out put became visible"
        assert set(present) <= acked | tentative, "a message nobody put appeared"
        for m in q.messages.by_seq.values():
            ident = m.data.decode()
            assert m.md.backout_count >= min_backout.get(ident, 0), f"BackoutCount of {ident} went back"
        # Messages whose commit reached the disk but whose acknowledgement did not are real:
        # count them as acknowledged from here on.
        acked |= set(present)
    assert acked and consumed and min_backout, "the load did not exercise puts, gets and backouts"
