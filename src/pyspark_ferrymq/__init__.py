"""Spark imports every top-level ``pyspark_*`` module on its first data-source lookup and
registers its ``DefaultSource``: installing ferrymq makes ``format("ferrymq")`` work with
no ``register()`` call."""

from ferrymq.spark.source import FerryDataSource as DefaultSource

__all__ = ["DefaultSource"]
