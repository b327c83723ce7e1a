"""L4: the PySpark data source ``format("ferrymq")`` (docs/spark.md). The only package
that imports pyspark; install it with ``pip install ferrymq[spark]``.
"""

from __future__ import annotations

from typing import Any

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


__all__ = ["FerryDataSource", "WorkerPythonError", "register"]
