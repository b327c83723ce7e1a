"""The pipeline the exactly-once fault test kills: two streaming queries in one Spark
driver, IN.Q -> OUT (ferrymq sink) and IN.P -> Parquet (Spark's file sink), both reading
ferrymq. ``stream`` runs until killed, starting a query again from its checkpoint when it
fails (its Python workers were killed); ``final`` runs both to the end (availableNow) and
writes what the Parquet table holds, read through Spark (so through _spark_metadata).

Usage: python spark_pipeline.py stream|final CONN_NAME WORKDIR
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spark"))
from spark_session import spark_session


def start(spark: Any, conn: str, work: Path, name: str, final: bool) -> Any:
    opts = {"queueManager": "QM1", "connName": conn, "maxMessagesPerTrigger": "25", "minPartitions": "2"}
    if name == "queue":
        w = (spark.readStream.format("ferrymq").options(**opts, queue="IN.Q").load()
             .select("msg_id", "correl_id", "properties", "payload")
             .writeStream.format("ferrymq").options(queueManager="QM1", connName=conn, queue="OUT"))
    else:
        w = (spark.readStream.format("ferrymq").options(**opts, queue="IN.P").load()
             .select("seq", "msg_id", "payload")
             .writeStream.format("parquet").option("path", str(work / "table")))
    w = w.option("checkpointLocation", str(work / f"ckpt-{name}"))
    return (w.trigger(availableNow=True) if final else w.trigger(processingTime="300 milliseconds")).start()


def restart(spark: Any, conn: str, work: Path, name: str) -> Any:
    """Start a failed query again; the JVM may still be replacing the Python workers that
    were killed under it, so a start that fails is tried again."""
    for attempt in range(20):
        try:
            return start(spark, conn, work, name, False)
        except Exception as exc:
            print(f"restart {name} attempt {attempt}: {str(exc)[:200]}", flush=True)
            time.sleep(1.0)
    raise SystemExit(f"query {name} could not be started again")


def main() -> None:
    mode, conn, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    spark = spark_session("ferrymq-fault")
    spark.sparkContext.setLogLevel("ERROR")
    if mode == "stream":
        queries = {name: start(spark, conn, work, name, False) for name in ("queue", "parquet")}
        print("running", flush=True)
        while True:
            for name, q in list(queries.items()):
                if not q.isActive:
                    print(f"restarting {name} after: {str(q.exception())[:200]}", flush=True)
                    queries[name] = restart(spark, conn, work, name)
            time.sleep(0.2)
    for name in ("queue", "parquet"):
        q = start(spark, conn, work, name, True)
        q.awaitTermination()
        if q.exception() is not None:
            raise SystemExit(f"query {name} failed: {q.exception()}")
    rows = spark.read.parquet(str(work / "table")).select("payload").collect()
    (work / "table.json").write_text(json.dumps(sorted(r.payload.decode() for r in rows)))
    spark.stop()


if __name__ == "__main__":
    main()
