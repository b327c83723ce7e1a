"""A request/reply service on Spark Structured Streaming: read requests from a queue,
compute each answer, put it on the request's ReplyToQ as IBM MQ's Report options ask.

The answer to a text request is the text in capitals and its word count. Each reply:
* CorrelId: the request's CorrelId if it asked MQRO_PASS_CORREL_ID, else its MsgId;
* MsgId: the request's with MQRO_PASS_MSG_ID, else a new one;
* Priority and Persistence as the request's; MQRO_PASS_DISCARD_AND_EXPIRY passes on the
  request's MQRO_DISCARD_MSG and remaining Expiry (else unlimited);
* MsgType MQMT_REPLY, Format MQSTR, to the request's ReplyToQ.
Requests that name no ReplyToQ cannot be answered and are skipped. Exactly once: a
request is answered once even if the service crashes and restarts from its checkpoint.

    python examples/spark_request_reply.py --conn 'localhost(1414)' --demo 5

puts five sample requests on APP.REQUESTS (replies to APP.REPLIES), answers them and
prints the replies. Without --demo it serves APP.REQUESTS until stopped (Ctrl-C), or for
--seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ferry import connection_args, ferry_options, prepare, spark_session

from ferrymq.client import connect
from ferrymq.mq import constants as C


def replies(requests: Any) -> Any:
    """The reply rows for a DataFrame of requests (ferrymq columns in, ferrymq columns out)."""
    from pyspark.sql import functions as F

    report = F.col("report")

    def has(option: int) -> Any:
        return F.expr(f"(report & {option}) != 0")

    text = F.decode(F.col("payload"), "UTF-8")
    words = F.size(F.split(F.trim(text), r"\s+"))
    answer = F.concat(F.upper(text), F.lit(" ("), F.when(F.trim(text) == "", 0).otherwise(words).cast("string"),
                      F.lit(" words)"))
    pass_on = has(C.MQRO_PASS_DISCARD_AND_EXPIRY)
    return (requests.where(F.trim(F.col("reply_to_q")) != "")
            .select(
                F.col("reply_to_q").alias("queue"),
                F.when(has(C.MQRO_PASS_MSG_ID), F.col("msg_id")).alias("msg_id"),
                F.when(has(C.MQRO_PASS_CORREL_ID), F.col("correl_id")).otherwise(F.col("msg_id")).alias("correl_id"),
                F.lit(C.MQMT_REPLY).alias("msg_type"),
                F.col("priority"),
                F.col("persistence"),
                F.when(pass_on, F.col("expiry")).otherwise(F.lit(C.MQEI_UNLIMITED)).alias("expiry"),
                F.when(pass_on, report.bitwiseAND(F.lit(C.MQRO_DISCARD_MSG))).otherwise(F.lit(C.MQRO_NONE)).alias("report"),
                F.lit(C.MQFMT_STRING).alias("format"),
                F.lit(1208).alias("ccsid"),
                answer.alias("payload"),
            ))


def serve(spark: Any, opts: dict[str, str], request_queue: str, checkpoint: str, *, available_now: bool) -> Any:
    """Start the service: a streaming query from ``request_queue`` to each ReplyToQ."""
    stream = spark.readStream.format("ferrymq").options(**opts, queue=request_queue).load()
    writer = (replies(stream).writeStream.format("ferrymq").options(**opts)
              .option("checkpointLocation", checkpoint).queryName("request_reply"))
    if available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime="500 milliseconds").start()


def _demo_requests(args: argparse.Namespace, n: int) -> None:
    options = [C.MQRO_NONE, C.MQRO_PASS_CORREL_ID, C.MQRO_PASS_MSG_ID | C.MQRO_PASS_CORREL_ID]
    with connect(args.qmgr, args.conn) as c, c.open(args.requests) as q:
        for i in range(n):
            r = q.put(f"request number {i} from the demo", reply_to_q=args.replies, report=options[i % 3],
                      correl_id=b"DEMO%020d" % i, persistent=True)
            print(f"request  msg_id={r.msg_id.hex()} correl_id={r.correl_id.hex()} report={options[i % 3]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    connection_args(p)
    p.add_argument("--requests", default="APP.REQUESTS", help="request queue (default APP.REQUESTS)")
    p.add_argument("--replies", default="APP.REPLIES", help="reply queue for --demo requests (default APP.REPLIES)")
    p.add_argument("--checkpoint", default="/tmp/ferrymq-request-reply", help="Spark checkpoint directory")
    p.add_argument("--seconds", type=float, default=0, help="serve this long, then stop (0: until Ctrl-C)")
    p.add_argument("--demo", type=int, default=0, metavar="N", help="put N sample requests, answer them, show the replies")
    args = p.parse_args()
    prepare(args, [args.requests, args.replies])
    if args.demo:
        _demo_requests(args, args.demo)
    spark = spark_session("ferrymq-request-reply", args.master)
    query = serve(spark, ferry_options(args), args.requests, args.checkpoint, available_now=bool(args.demo))
    try:
        if args.demo:
            query.awaitTermination()
        elif args.seconds:
            query.awaitTermination(args.seconds)
        else:
            query.awaitTermination()
    except KeyboardInterrupt:
        pass
    finally:
        query.stop()
    if args.demo:
        with connect(args.qmgr, args.conn) as c, c.open(args.replies) as q:
            for m in q.browse():
                print(f"reply    msg_id={m.msg_id.hex()} correl_id={m.correl_id.hex()} {m.text!r}")
    spark.stop()
    time.sleep(0)


if __name__ == "__main__":
    main()
