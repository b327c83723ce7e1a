"""Spark tests: ONE local SparkSession for the whole run (a JVM costs about 6 s to start)
and one queue-manager process, real, on 127.0.0.1 port 0. Each test uses its own queues.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from qm_process import QueueManagerProcess
from spark_session import spark_session

# Queues the tests use (defined once): each test reads and writes its own.
QUEUES = ("BR.IN", "BR.OUT", "BR.ROWS", "BR.BAD", "BR.TAKE", "BR.NARROW", "ST.IN", "ST.OUT", "ST.LIM", "ST.NOW",
          "ST.A", "ST.B", "ST.SINK", "ST.ABORT", "ST.CHECK", "WP.Q", "ST.LOSS", "ST.BYTES", "EX.REQ", "EX.REPLY", "EX.REPORT")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    s = spark_session("ferrymq-tests")
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def qmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueueManagerProcess]:
    p = QueueManagerProcess(tmp_path_factory.mktemp("spark-qm") / "home").start()
    p.mqsc("".join(f"DEFINE QLOCAL({q}) MAXDEPTH(100000)\n" for q in QUEUES)  # FERRYMQ.SPARK.COMMITS: the QM's
           + "DEFINE CHANNEL(SPARK.SVRCONN) CHLTYPE(SVRCONN)\n")  # the channel the jobs connect through
    yield p
    p.kill()  # a quiescing stop would wait for the Spark workers' cached connections


@pytest.fixture
def ferry(qmp: QueueManagerProcess) -> dict[str, str]:
    """The connection options of the test queue manager."""
    return {"queueManager": "QM1", "connName": qmp.conn_name, "channel": "SPARK.SVRCONN"}
