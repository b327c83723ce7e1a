"""ferrymq on a real Spark standalone cluster started by the test (tests/spark/standalone.py):
a master and two workers, each a JVM of its own through spark-class, executors in their
own JVMs under the workers and Python workers under them. The driver program
(cluster_job.py) runs the example pipelines and an exactly-once streaming query on it;
the test SIGKILLs one worker with its executor and Python workers while the query runs.
The query must recover by itself and the output hold every message exactly once.

Run alone: ``pytest tests/spark/test_cluster.py`` (about two and a half minutes on two cores shared with other work).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from qm_process import QueueManagerProcess
from standalone import StandaloneCluster, java_missing

from ferrymq.client import connect
from ferrymq.mq import constants as C

pytestmark = [pytest.mark.timeout(600),
              pytest.mark.skipif(java_missing() is not None, reason=java_missing() or "")]

JOB = Path(__file__).resolve().parent / "cluster_job.py"
MESSAGES = 2000


def _done_batches(ckpt: Path) -> int:
    d = ckpt / "commits"
    return len(list(d.glob("[0-9]*"))) if d.is_dir() else 0


def _wait_for(proc: subprocess.Popen[str], log: Path, condition: object, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        assert proc.poll() is None, f"the driver program ended before {what}:\n{log.read_text()[-4000:]}"
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {timeout} s:\n{log.read_text()[-4000:]}")


def test_pipelines_on_a_standalone_cluster_survive_a_killed_worker(tmp_path: Path) -> None:
    qmp = QueueManagerProcess(tmp_path / "home").start()
    work = tmp_path / "work"
    work.mkdir()
    proc: subprocess.Popen[str] | None = None
    try:
        qmp.mqsc("".join(f"DEFINE QLOCAL({q}) MAXDEPTH(100000)\n"
                         for q in ("EX.REQ", "EX.REPLY", "EX.REPORT", "CL.IN", "CL.OUT")))
        sent = [f"msg-{i:05d}" for i in range(MESSAGES)]
        with connect("QM1", qmp.conn_name) as c:
            with c.open("EX.REQ") as q:
                for i in range(3):
                    q.put(f"hello cluster {i}", reply_to_q="EX.REPLY", report=C.MQRO_PASS_CORREL_ID,
                          correl_id=b"C%023d" % i, persistent=True)
            with c.open("EX.REPORT") as q:
                for i in range(20):
                    q.put(b"r" * (i + 1))
            with c.open("CL.IN") as q:
                for name in sent:
                    q.put(name.encode(), persistent=True, syncpoint=True)
            c.commit()  # one forced write for them all
        with StandaloneCluster(tmp_path / "cluster", workers=2, wait=False) as cluster:
            log = tmp_path / "driver.log"
            env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYTHONUNBUFFERED="1")
            # The driver's JVM starts while the workers do; it waits for both executors.
            with log.open("w") as out:
                proc = subprocess.Popen([sys.executable, str(JOB), cluster.master_url, qmp.conn_name, str(work),
                                         str(MESSAGES)], stdout=out, stderr=subprocess.STDOUT, text=True, env=env)
            cluster.wait_for_workers()
            # Executors run in JVMs of their own under each worker (and Python workers under them).
            _wait_for(proc, log, lambda: all(cluster.executors_of(i) for i in (0, 1)), "an executor on each worker",
                      180)
            # Kill one worker (with its executor and Python workers) once the query is streaming
            # and has committed a few batches, so that later ones are in flight.
            _wait_for(proc, log, lambda: _done_batches(work / "ckpt-stream") >= 3, "three streaming batches", 240)
            cluster.kill_worker(1)
            with connect("QM1", qmp.conn_name) as c:
                killed_at = c.queue_range("CL.IN").depth
            assert killed_at > 0, "the query had drained CL.IN before the kill: nothing was in flight"
            assert proc.wait(300) == 0, log.read_text()[-4000:]
        text = log.read_text()
        assert "EXAMPLES DONE" in text and "STREAM DONE" in text, text[-4000:]
        with connect("QM1", qmp.conn_name) as c:
            with c.open("CL.OUT") as q:
                got = sorted(m.data.decode() for m in q.browse())
            assert got == sent  # every message, exactly once, across the killed worker
            assert c.queue_range("CL.IN").depth == 0
            assert [x for x in c.in_doubt() if x.startswith(b"fsp1:")] == []
            with c.open("EX.REPLY") as q:
                replies = {m.text: m.correl_id for m in q.browse()}
        assert replies == {f"HELLO CLUSTER {i} (3 words)": b"C%023d" % i for i in range(3)}
        assert sorted(p.name for p in (work / "report").iterdir()) == ["chart.png", "messages", "summary"]
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(30)
        qmp.kill()
