"""Which Python Spark's workers run, and whether it can import ferrymq.

Spark runs every Python data source in worker processes of the interpreter that
``PYSPARK_PYTHON`` names, ``python3`` on the PATH when it is unset: not the interpreter of
the driver program. A job started as ``/opt/venv/bin/python job.py`` without activating
the venv therefore has workers without ferrymq, and Spark says only DATA_SOURCE_NOT_FOUND
(its lookup of ``pyspark_ferrymq`` failed in the wrong interpreter) or, for an explicitly
registered source, ModuleNotFoundError deep in a task's traceback.

``ensure(spark)`` settles it on the driver before any query: for a local master (the
workers are processes of this machine) with no interpreter chosen, the workers run this
driver's own interpreter; otherwise one small Spark job imports ``ferrymq.spark`` in a
worker, and a failure is reported naming the interpreter, the setting that chose it and
the fix.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
from typing import Any

log = logging.getLogger("ferrymq.spark")

LOCAL_MASTER = re.compile(r"^local(\[.*\]|-cluster\[.*\])?$")
_CAUSE = re.compile(r"(ModuleNotFoundError: [^\n]*|ImportError: [^\n]*|Cannot run program [^\n]*)")


class WorkerPythonError(RuntimeError):
    """Spark's Python workers cannot import ferrymq; the message names the cause and fix."""


def chosen_by(spark: Any) -> str | None:
    """What chose the workers' interpreter: ``PYSPARK_PYTHON``, ``spark.pyspark.python``,
    or None when nothing did (Spark's default, ``python3`` on the PATH)."""
    if os.environ.get("PYSPARK_PYTHON"):
        return "PYSPARK_PYTHON"
    if spark.sparkContext.getConf().get("spark.pyspark.python"):
        return "spark.pyspark.python"
    return None


def _probe(sc: Any) -> str | None:
    """None when a Python worker imports ferrymq.spark; else what went wrong."""
    try:
        sc.parallelize(["ferrymq.spark"], 1).map(importlib.import_module).map(repr).collect()
    except Exception as exc:  # any failure of the job is the answer, reported whole below
        text = str(exc)
        found = _CAUSE.search(text)
        return found.group(1).strip() if found else text.strip().splitlines()[0][:300]
    return None


def ensure(spark: Any, *, check: bool = True) -> str:
    """Make sure the session's Python workers can import ferrymq; returns their interpreter.

    Raises:
        WorkerPythonError: they cannot (the message says which interpreter, chosen by what,
            and how to fix it).
    """
    sc = spark.sparkContext
    how = chosen_by(spark)
    if how is None and LOCAL_MASTER.match(sc.master or ""):
        # Local workers are processes of this machine: the driver's interpreter, which has
        # ferrymq (this module runs in it), serves them too.
        if sc.pythonExec != sys.executable:
            log.info("event=worker_python_set python=%s reason=PYSPARK_PYTHON unset, local master", sys.executable)
        sc.pythonExec = sys.executable
        os.environ["PYSPARK_PYTHON"] = sys.executable  # later sessions of this process agree
        return sys.executable
    if check:
        cause = _probe(sc)
        if cause is not None:
            chosen = f"chosen by {how}" if how else "PYSPARK_PYTHON is unset: python3 on each worker's PATH"
            raise WorkerPythonError(
                f"Spark's Python workers run {sc.pythonExec} ({chosen}), which cannot import ferrymq.spark: {cause}. "
                f"Every Python worker needs ferrymq: set PYSPARK_PYTHON={sys.executable} (this driver's interpreter, "
                "where ferrymq is installed) before the SparkSession starts, or install ferrymq[spark] into the "
                "workers' interpreter; on a cluster, set spark.pyspark.python to an interpreter with ferrymq that "
                "every worker has (docs/spark.md, Python workers)")
    return str(sc.pythonExec)
