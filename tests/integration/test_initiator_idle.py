"""An idle started queue manager costs next to no CPU: its channel initiator waits for work
(a request, a trigger message on SYSTEM.CHANNEL.INITQ, a change of definitions) rather than
looking every POLL seconds (about 6 ms of CPU a second before it did)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from qm_process import QueueManagerProcess


def _cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_idle_queue_manager_burns_little_cpu(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path).start()
    try:
        time.sleep(1.0)  # past its start
        before, t0 = _cpu_seconds(qm.pid), time.monotonic()
        time.sleep(4.0)
        used, elapsed = _cpu_seconds(qm.pid) - before, time.monotonic() - t0
        # The counters are whole clock ticks (10 ms) of a cumulative time: an idle process
        # may see one tick go by; a 50 ms poll (about 6 ms/s) shows two or more over 4 s.
        tick = 1 / os.sysconf("SC_CLK_TCK")
        assert used < 1.5 * tick, f"{1000 * used / elapsed:.2f} ms of CPU a second\n{qm.log_tail(20)}"
    finally:
        qm.stop()
