"""The SparkSession every Spark test and the fault test's pipeline use: local[2], on the
loopback interface, Python workers running this interpreter (where ferrymq is installed)."""

from __future__ import annotations

import os
import sys
from typing import Any


def spark_session(app: str, master: str = "local[2]", **conf: str) -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # tests stay on the loopback interface
    from pyspark.sql import SparkSession

    b = (SparkSession.builder.master(master).appName(app)
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.driver.memory", "1g")
         .config("spark.sql.streaming.noDataMicroBatches.enabled", "false"))
    for k, v in conf.items():
        b = b.config(k, v)
    return b.getOrCreate()
