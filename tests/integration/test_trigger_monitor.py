"""Triggering end to end: a queue-manager process, ``ferrymq trigger-monitor`` as a process,
and the sample it starts (samples/trigger_drain.py) draining the queue that triggered."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from qm_process import QueueManagerProcess

import ferrymq.client as fc
from ferrymq.mq import constants as C

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _status(qm: QueueManagerProcess, queue: str) -> tuple[int, int]:
    """(CURDEPTH, IPPROCS) of a queue, read through ``ferrymq mqsc``."""
    text = qm.mqsc(f"DISPLAY QSTATUS({queue}) CURDEPTH IPPROCS")
    depth, procs = re.search(r"CURDEPTH\((\d+)\)", text), re.search(r"IPPROCS\((\d+)\)", text)
    assert depth is not None and procs is not None, text
    return int(depth.group(1)), int(procs.group(1))


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _until(what: str, check: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_monitor_starts_the_sample_which_drains_the_queue(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home").start()
    out = tmp_path / "drained.txt"
    monitor = None
    try:
        qm.mqsc(f"DEFINE PROCESS(DRAIN.PROC) APPLICID('{sys.executable} {SAMPLES / 'trigger_drain.py'}') "
                f"ENVRDATA('--out {out} --wait 0.5')\n"
                "DEFINE QLOCAL(APP.INITQ)\n"
                "DEFINE QLOCAL(APP.Q) TRIGGER TRIGTYPE(FIRST) INITQ(APP.INITQ) PROCESS(DRAIN.PROC) TRIGDATA('td')\n")
        with fc.connect("QM1", qm.conn_name) as client:
            q = client.open("APP.Q", options=C.MQOO_OUTPUT)  # open for input, it would hold off FIRST
            for i in range(5):  # before the monitor runs: no trigger message yet
                q.put(f"first {i}".encode())
        assert _status(qm, "APP.INITQ") == (0, 0)
        env = dict(os.environ, FERRYMQ_HOME=str(qm.home))
        monitor = subprocess.Popen([sys.executable, "-m", "ferrymq.cli", "trigger-monitor", "QM1", "--initq", "APP.INITQ",
                                    "--limit", "2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # the monitor opening the initiation queue is the trigger event for the messages waiting
        _until("the first drain", lambda: len(_lines(out)) == 5 and _status(qm, "APP.Q") == (0, 0))
        assert _lines(out) == [f"first {i}" for i in range(5)]
        with fc.connect("QM1", qm.conn_name) as client:
            q = client.open("APP.Q", options=C.MQOO_OUTPUT)
            for i in range(3):  # the queue was empty: FIRST triggers again
                q.put(f"second {i}".encode())
        assert monitor.wait(timeout=60) == 0, monitor.stdout.read() if monitor.stdout else ""
        _until("the second drain", lambda: len(_lines(out)) == 8)
        assert _lines(out)[5:] == [f"second {i}" for i in range(3)]
        assert _status(qm, "APP.Q")[0] == 0
        log = monitor.stdout.read() if monitor.stdout else ""
        assert log.count("Starting ") == 2, log
    finally:
        if monitor is not None and monitor.poll() is None:
            monitor.kill()
            monitor.wait()
        qm.stop()
