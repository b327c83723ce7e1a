"""L4: the PySpark data source ``format("ferrymq")`` (docs/spark.md). The only package
that imports pyspark; install it with ``pip install ferrymq[spark]``.
"""

from __future__ import annotations

from typing import Any

from ferrymq.spark.source import FerryDataSource


def register(spark: Any) -> None:
    """Register ``format("ferrymq")`` with a SparkSession (installing ferrymq also ships
    ``pyspark_ferrymq``, which Spark finds by itself on its first data-source lookup)."""
    spark.dataSource.register(FerryDataSource)


__all__ = ["FerryDataSource", "register"]
