"""A batch job: a queue's contents to Parquet, a summary table and a chart.

Reads every message on the queue (a browse: nothing is removed unless --consume, which
takes them in units of work), writes them to a Parquet table, then summarises: message
rates per minute, payload sizes, ages (now minus put time) and feedback codes. The
summary is printed, saved as Parquet beside the table, and drawn as a PNG chart.

    python examples/spark_queue_report.py --conn 'localhost(1414)' --queue APP.IN --out /tmp/app-in-report --demo 500

(--demo N first puts N sample messages of varied sizes, priorities and feedback codes.)
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ferry import connection_args, ferry_options, prepare, spark_session

from ferrymq.client import connect
from ferrymq.mq import constants as C


def summarise(messages: Any, now: dt.datetime) -> dict[str, Any]:
    """Aggregates of a ferrymq DataFrame, small enough to collect: one pandas frame each."""
    from pyspark.sql import functions as F

    m = messages.select(
        F.date_trunc("minute", "put_timestamp").alias("minute"),
        F.length("payload").alias("size"),
        (F.lit(now).cast("double") - F.col("put_timestamp").cast("double")).alias("age_s"),
        "feedback", "priority",
    )
    overall = m.agg(
        F.count("*").alias("messages"), F.sum("size").alias("bytes"), F.min("size").alias("min_size"),
        F.expr("percentile_approx(size, 0.5)").alias("median_size"), F.max("size").alias("max_size"),
        F.min("age_s").alias("youngest_s"), F.expr("percentile_approx(age_s, 0.5)").alias("median_age_s"),
        F.max("age_s").alias("oldest_s"),
    )
    return {
        "overall": overall.toPandas(),
        "per_minute": m.groupBy("minute").agg(F.count("*").alias("messages")).orderBy("minute").toPandas(),
        "sizes": m.select("size").toPandas(),
        "ages": m.select("age_s").toPandas(),
        "feedback": m.groupBy("feedback").agg(F.count("*").alias("messages")).orderBy("feedback").toPandas(),
    }


def chart(summary: dict[str, Any], queue: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(11, 7))
    pm = summary["per_minute"]
    ax[0][0].bar(pm["minute"].astype(str), pm["messages"], color="tab:blue")
    ax[0][0].set_title("messages put per minute")
    ax[0][0].tick_params(axis="x", labelrotation=45, labelsize=7)
    ax[0][1].hist(summary["sizes"]["size"], bins=30, color="tab:green")
    ax[0][1].set_title("payload size (bytes)")
    ax[1][0].hist(summary["ages"]["age_s"], bins=30, color="tab:orange")
    ax[1][0].set_title("age (seconds since put)")
    fb = summary["feedback"]
    ax[1][1].bar([str(x) for x in fb["feedback"]], fb["messages"], color="tab:red")
    ax[1][1].set_title("feedback codes")
    fig.suptitle(f"queue {queue}: {int(summary['overall']['messages'][0])} messages")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def report(spark: Any, opts: dict[str, str], queue: str, out: Path, *, consume: bool = False) -> dict[str, Any]:
    """Run the job; returns the summary (written under ``out`` too)."""
    reader = spark.read.format("ferrymq").options(**opts, queue=queue)
    if consume:
        reader = reader.option("destructive", "true")
    # Written first, then summarised from the table: a destructive read happens once.
    reader.load().write.mode("overwrite").parquet(str(out / "messages"))
    table = spark.read.parquet(str(out / "messages"))
    summary = summarise(table, dt.datetime.now(dt.UTC).replace(tzinfo=None))
    spark.createDataFrame(summary["overall"]).write.mode("overwrite").parquet(str(out / "summary"))
    chart(summary, queue, out / "chart.png")
    return summary


def _demo(args: argparse.Namespace, n: int) -> None:
    rng = random.Random(7)
    feedback = [C.MQFB_NONE] * 6 + [C.MQFB_COA, C.MQFB_COD, C.MQFB_EXPIRATION, C.MQRC_Q_FULL]
    with connect(args.qmgr, args.conn) as c, c.open(args.queue) as q:
        for i in range(n):
            q.put(bytes(rng.randrange(256) for _ in range(rng.choice([64, 256, 1024, 4096]))), priority=rng.randrange(10),
                  feedback=rng.choice(feedback), msg_type=C.MQMT_REPORT if i % 10 == 0 else None)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    connection_args(p)
    p.add_argument("--queue", default="APP.IN", help="queue to report on (default APP.IN)")
    p.add_argument("--out", default="/tmp/ferrymq-queue-report", help="output directory")
    p.add_argument("--consume", action="store_true", help="take the messages instead of browsing them")
    p.add_argument("--demo", type=int, default=0, metavar="N", help="first put N sample messages on the queue")
    args = p.parse_args()
    prepare(args, [args.queue])
    if args.demo:
        _demo(args, args.demo)
    spark = spark_session("ferrymq-queue-report", args.master)
    out = Path(args.out)
    summary = report(spark, ferry_options(args), args.queue, out, consume=args.consume)
    print(summary["overall"].to_string(index=False))
    print(summary["feedback"].to_string(index=False))
    print(f"table {out / 'messages'}, summary {out / 'summary'}, chart {out / 'chart.png'}")
    spark.stop()


if __name__ == "__main__":
    main()
