"""L4: the PySpark data source ``format("ferrymq")`` (docs/spark.md). The only package
that imports pyspark; install it with ``pip install ferrymq[spark]``.
"""

from __future__ import annotations

from typing import Any

from ferrymq.spark.sessions import set_up_sessions
from ferrymq.spark.source import FerryDataSource
from ferrymq.spark.workers import WorkerPythonError, ensure


def register(spark: Any, *, check_workers: bool = True) -> None:
    """Register ``format("ferrymq")`` with a SparkSession, after making sure its Python
    workers can import ferrymq (ferrymq.spark.workers): with a local master and no
    ``PYSPARK_PYTHON``, the workers run this driver's interpreter; otherwise a small job
    checks a worker (``check_workers=False`` skips it).

    Installing ferrymq also ships ``pyspark_ferrymq``, which Spark finds by itself on its
    first data-source lookup, when the workers' interpreter has ferrymq.

    Raises:
        WorkerPythonError: the workers' interpreter cannot import ferrymq (the message
            names it, what chose it, and the fix).
    """
    ensure(spark, check=check_workers)
    spark.dataSource.register(FerryDataSource)


def _set_up(spark: Any) -> None:
    """What importing this package does to each driver session (ferrymq.spark.sessions):
    ``register`` without its check job (a local master with no interpreter chosen needs
    none, and an import should not start a job on a cluster), and without replacing the
    source when Spark's own look-up of ``pyspark_ferrymq`` found it (Spark warns then)."""
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return  # a Spark Connect session: its workers are its server's, not this driver's
    ensure(spark, check=False)
    if not _spark_finds(spark):
        spark.dataSource.register(FerryDataSource)


def _spark_finds(spark: Any) -> bool:
    """Whether the session's data-source manager has ``ferrymq`` already (its look-up of
    ``pyspark_*`` modules ran in an interpreter with ferrymq)."""
    try:
        return bool(spark._jsparkSession.sessionState().dataSourceManager().dataSourceExists("ferrymq"))
    except Exception:  # a private interface of the JVM side: registering is right whatever failed
        return False


set_up_sessions(_set_up)


__all__ = ["FerryDataSource", "WorkerPythonError", "register"]
