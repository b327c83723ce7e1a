"""The driver program the cluster test submits to a standalone master: the two example
pipelines, then a streaming query IN -> OUT (ferrymq to ferrymq, exactly-once) that runs
until IN is empty and OUT holds ``expected`` messages. The test kills a worker under the
streaming query; the query must recover by itself (a restart here would hide a failure, so
a failed query ends the program with an error).

Usage: python cluster_job.py MASTER_URL CONN_NAME WORKDIR EXPECTED
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import spark_queue_report
import spark_request_reply
from spark_session import spark_session

import ferrymq.spark
from ferrymq.client import connect

EXECUTOR_CONF = {
    "spark.executor.memory": "512m",
    "spark.executor.cores": "1",
    "spark.cores.max": "2",
    # Start planning only once both executors are up, so that partitions spread over both.
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
}


def main() -> None:
    master, conn, work, expected = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    spark = spark_session("ferrymq-cluster", master, **EXECUTOR_CONF)
    spark.sparkContext.setLogLevel("ERROR")
    ferrymq.spark.register(spark)  # a cluster master: checks that a worker imports ferrymq
    ferry = {"queueManager": "QM1", "connName": conn}
    q = spark_request_reply.serve(spark, ferry, "EX.REQ", str(work / "ckpt-reply"), available_now=True)
    q.awaitTermination()
    if q.exception() is not None:
        raise SystemExit(f"request/reply failed: {q.exception()}")
    spark_queue_report.report(spark, ferry, "EX.REPORT", work / "report")
    print("EXAMPLES DONE", flush=True)
    query = (spark.readStream.format("ferrymq")
             .options(**ferry, queue="CL.IN", maxMessagesPerTrigger="200", minPartitions="2").load()
             .select("msg_id", "correl_id", "properties", "payload")
             .writeStream.format("ferrymq").options(**ferry, queue="CL.OUT")
             .option("checkpointLocation", str(work / "ckpt-stream")).trigger(processingTime="200 milliseconds")
             .start())
    print("STREAMING", flush=True)
    deadline = time.monotonic() + 240
    with connect("QM1", conn) as c:
        while time.monotonic() < deadline:
            if not query.isActive:
                raise SystemExit(f"the streaming query failed: {query.exception()}")
            if c.queue_range("CL.IN").depth == 0 and c.queue_range("CL.OUT").depth >= expected:
                break
            time.sleep(0.3)
        else:
            raise SystemExit("the streaming query did not drain CL.IN in time")
    query.stop()
    print("STREAM DONE", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
