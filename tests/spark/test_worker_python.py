"""The first wall of a new user's job: Spark's Python workers run PYSPARK_PYTHON (python3
on the PATH when unset), not the driver's interpreter. A job run as ``venv/bin/python
job.py`` with the venv not activated must work in local mode with no set-up step beyond
importing ferrymq.spark, and a worker interpreter without ferrymq must be named with the
fix, on the driver, before any query."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import connect
from ferrymq.spark import WorkerPythonError, register

pytestmark = pytest.mark.timeout(300)

# No register(): importing ferrymq.spark is the whole set-up (ferrymq.spark.sessions).
JOB = """
import sys
from pyspark.sql import SparkSession
import ferrymq.spark

spark = (SparkSession.builder.master("local[2]").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.ui.enabled", "false").getOrCreate())
opts = {"queueManager": "QM1", "connName": sys.argv[1], "queue": "WP.Q"}
spark.createDataFrame([(b"one",), (b"two",)], "payload binary").write.format("ferrymq").options(**opts).mode("append").save()
print("READ", sorted(r.payload.decode() for r in spark.read.format("ferrymq").options(**opts).load().collect()))
"""


def _python_without_ferrymq(tmp_path: Path, env: dict[str, str]) -> str:
    """The interpreter this venv was made from, as ``python3`` on a PATH: what a user's
    shell finds when the venv is not activated."""
    base = getattr(sys, "_base_executable", "")
    if not base or sys.prefix == sys.base_prefix:
        pytest.skip("this interpreter is not a venv's: no interpreter without ferrymq to stand for python3")
    probe = subprocess.run([base, "-c", "import ferrymq.spark"], env=env, capture_output=True, timeout=60)
    if probe.returncode == 0:
        pytest.skip(f"{base} imports ferrymq.spark: it cannot stand for an interpreter without ferrymq")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(base)
    return str(bindir)


def test_a_job_run_with_the_venv_not_activated_works_in_local_mode_without_register(qmp: QueueManagerProcess, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    venv_bin = str(Path(sys.executable).parent)
    bindir = _python_without_ferrymq(tmp_path, env)
    env["PATH"] = os.pathsep.join([bindir, *(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)])
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    (tmp_path / "job.py").write_text(JOB)
    out = subprocess.run([sys.executable, str(tmp_path / "job.py"), qmp.conn_name], env=env, capture_output=True,
                         text=True, timeout=240, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "READ ['one', 'two']" in out.stdout
    assert "replaced a statically registered data source" not in out.stderr  # found once, not twice
    with connect("QM1", qmp.conn_name) as c:
        assert c.queue_range("WP.Q").depth == 2


def test_workers_without_ferrymq_are_named_with_the_fix(spark: Any, tmp_path: Path) -> None:
    sc = spark.sparkContext
    bindir = _python_without_ferrymq(tmp_path, dict(os.environ))
    saved = (sc.pythonExec, os.environ.get("PYSPARK_PYTHON"))
    os.environ["PYSPARK_PYTHON"] = sc.pythonExec = str(Path(bindir) / "python3")
    try:
        with pytest.raises(WorkerPythonError) as e:
            register(spark)
    finally:
        sc.pythonExec = saved[0]
        if saved[1] is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = saved[1]
    text = str(e.value)
    assert f"run {bindir}/python3 (chosen by PYSPARK_PYTHON), which cannot import ferrymq.spark" in text
    assert f"set PYSPARK_PYTHON={sys.executable}" in text and "spark.pyspark.python" in text
    assert "Error" in text.split("cannot import ferrymq.spark: ")[1]  # the import's own error, quoted
