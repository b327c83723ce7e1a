"""Exactly-once under SIGKILL: a Spark driver running ferrymq IN.Q -> OUT (ferrymq sink)
and IN.P -> Parquet is killed at random moments, at least five times — the driver JVM, its
Python workers (executors' and the driver's stream-source runner), or the driver program
— and restarted from its checkpoints while new messages keep arriving. At the end every
input message is exactly once on OUT and exactly once in the Parquet table, and both
input queues are empty.

Bounded: small message counts, a fast trigger, kills within short windows; the whole test
has a timeout and a deadline for each phase.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from qm_process import QueueManagerProcess

from ferrymq.client import connect

pytestmark = pytest.mark.timeout(420)

PIPELINE = Path(__file__).with_name("spark_pipeline.py")
PER_CYCLE = 60


def _children(root: int) -> list[int]:
    """Every descendant of ``root`` (from /proc), deepest last."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (d / "stat").read_text()
                parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out.extend(kids)
        todo.extend(kids)
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    for pid in _children(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(30)


def _put(conn: str, start: int, n: int) -> list[str]:
    """The same new messages on both inputs."""
    names = [f"msg-{i:05d}" for i in range(start, start + n)]
    with connect("QM1", conn) as c, c.open("IN.Q") as q, c.open("IN.P") as p:
        for name in names:
            q.put(name.encode(), persistent=True)
            p.put(name.encode(), persistent=True)
    return names


def _batches_started(work: Path) -> int:
    return sum(len(list((work / d / "offsets").glob("[0-9]*"))) for d in ("ckpt-queue", "ckpt-parquet")
               if (work / d / "offsets").is_dir())


def _table(path: Path) -> list[str]:
    """The payloads of the Parquet table as Spark's file sink committed it: the files its
    _spark_metadata log lists (a killed batch can leave files that no reader should see)."""
    files: set[str] = set()
    logs = [p for p in (path / "_spark_metadata").glob("*") if p.name.split(".")[0].isdigit()]
    for log_file in sorted(logs, key=lambda p: int(p.name.split(".")[0])):
        for line in log_file.read_text().splitlines()[1:]:
            entry = json.loads(line)
            (files.add if entry["action"] == "add" else files.discard)(entry["path"].removeprefix("file://"))
    if not files:
        return []
    return sorted(x.decode() for x in pq.read_table(sorted(files), columns=["payload"]).column("payload").to_pylist())


def _start(conn: str, work: Path, log: Any) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, str(PIPELINE), "stream", conn, str(work)], stdout=log, stderr=log,
                            env=env, start_new_session=True)


def _victims(proc: subprocess.Popen[bytes], kind: str) -> list[int]:
    tree = _children(proc.pid)
    java = [p for p in tree if _cmdline(p).split(" ")[0].endswith("java")]
    python = [p for p in tree if p not in java and "python" in _cmdline(p).split(" ")[0]]
    if kind == "workers" and python:
        return python  # executors' workers and the driver's stream-source runners: the queries fail
    if kind == "driver":
        return [proc.pid]
    return java


def test_killed_pipeline_delivers_every_message_exactly_once(tmp_path: Path) -> None:
    seed = int(os.environ.get("FERRYMQ_FAULT_SEED") or time.time_ns() % 1_000_000)
    rng = random.Random(seed)
    qmp = QueueManagerProcess(tmp_path / "home").start()
    work = tmp_path / "work"
    work.mkdir()
    log = (tmp_path / "driver.log").open("ab")
    proc: subprocess.Popen[bytes] | None = None
    try:
        qmp.mqsc("DEFINE QLOCAL(IN.Q)\nDEFINE QLOCAL(IN.P)\nDEFINE QLOCAL(OUT)\n")
        sent: list[str] = []
        # Killing Python workers fails the queries, which the driver starts again from their
        # checkpoints in the same JVM; killing the JVM or the driver program restarts it all
        # (the costly case on two cores: a JVM start takes 6 s or more).
        kinds = ["workers"] * 4 + [rng.choice(["jvm", "driver"])]
        rng.shuffle(kinds)
        for cycle, kind in enumerate(kinds):
            sent += _put(qmp.conn_name, len(sent), PER_CYCLE)
            before = _batches_started(work)
            if proc is None:
                proc = _start(qmp.conn_name, work, log)
            deadline = time.monotonic() + 120
            # Kill at a random moment once the (re)started queries have planned a new batch.
            while _batches_started(work) <= before and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert proc.poll() is None, f"seed {seed} cycle {cycle}: the pipeline stopped ({tmp_path}/driver.log)"
            assert time.monotonic() < deadline, f"seed {seed} cycle {cycle}: no batch planned ({tmp_path}/driver.log)"
            time.sleep(rng.uniform(0.0, 1.5))
            for pid in _victims(proc, kind):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if kind != "workers":
                time.sleep(0.3)
                _kill_tree(proc)  # whatever the victim leaves behind goes too
                proc = None
            with connect("QM1", qmp.conn_name) as c, c.open("OUT") as out:  # never anything twice, at any crash
                seen = [m.data.decode() for m in out.browse()]
            assert len(seen) == len(set(seen)), f"seed {seed} cycle {cycle} ({kind}): duplicates on OUT"
        # Let the last run drain both inputs (the source removes what Spark has committed),
        # then check what it left: nothing lost, nothing twice, inputs empty.
        if proc is None:
            proc = _start(qmp.conn_name, work, log)
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            with connect("QM1", qmp.conn_name) as c:
                done = (c.queue_range("IN.Q").depth == 0 and c.queue_range("IN.P").depth == 0
                        and c.queue_range("OUT").depth >= len(sent) and len(_table(work / "table")) >= len(sent))
            if done:
                break
            assert proc.poll() is None, f"seed {seed}: the pipeline stopped ({tmp_path}/driver.log)"
            time.sleep(0.5)
        _kill_tree(proc)
        proc = None
        with connect("QM1", qmp.conn_name) as c:
            with c.open("OUT") as out:
                on_out = sorted(m.data.decode() for m in out.browse())
            assert on_out == sent, f"seed {seed}: OUT differs"  # every message, exactly once
            assert c.queue_range("IN.Q").depth == 0 and c.queue_range("IN.P").depth == 0
            assert [x for x in c.in_doubt() if x.startswith(b"fsp1:")] == []
        assert _table(work / "table") == sent, f"seed {seed}: the Parquet table differs"
    finally:
        if proc is not None:
            _kill_tree(proc)
        log.close()
        qmp.kill()
