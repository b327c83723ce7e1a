"""Structured Streaming through format("ferrymq") with real Spark (local mode) against a
real queue-manager process: offsets, admission control, availableNow, removal after
commit, exactly-once writes with their commit markers, abort, data loss."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import connect

pytestmark = pytest.mark.timeout(600)


def _put(conn_name: str, queue: str, payloads: list[bytes]) -> None:
    with connect("QM1", conn_name) as c, c.open(queue) as q:
        for p in payloads:
            q.put(p, persistent=True)


def _browse(conn_name: str, queue: str) -> list[bytes]:
    with connect("QM1", conn_name) as c, c.open(queue) as q:
        return [m.data for m in q.browse()]


def _run_available_now(spark: Any, ferry: dict[str, str], source: dict[str, str], sink: dict[str, str],
                       checkpoint: Path) -> list[dict[str, Any]]:
    """One availableNow run from ferrymq to ferrymq; its progress reports, batch by batch."""
    df = spark.readStream.format("ferrymq").options(**ferry, **source).load()
    q = (df.writeStream.format("ferrymq").options(**ferry, **sink).option("checkpointLocation", str(checkpoint))
         .trigger(availableNow=True).start())
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()
    return [p for p in q.recentProgress if p["numInputRows"] > 0]


def test_queue_to_queue_in_limited_batches_then_removed(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess,
                                                        tmp_path: Path) -> None:
    data = [b"m%03d" % i for i in range(50)]
    _put(qmp.conn_name, "ST.IN", data)
    progress = _run_available_now(spark, ferry, {"queue": "ST.IN", "maxMessagesPerTrigger": "20"},
                                  {"queue": "ST.OUT"}, tmp_path / "ckpt")
    assert [p["numInputRows"] for p in progress] == [20, 20, 10]
    assert sorted(_browse(qmp.conn_name, "ST.OUT")) == data
    query_id = progress[0]["id"]  # kept in the checkpoint: the same for every run below
    end = json.loads(progress[-1]["sources"][0]["endOffset"])
    assert list(end) == ["queues"] and list(end["queues"]) == ["ST.IN"]
    with connect("QM1", qmp.conn_name) as c:
        # Spark commits a source one batch late and never the last batch of a run, but
        # availableNow asks for the next offset once more after it: that removes it.
        assert c.queue_range("ST.IN").depth == 0
        assert c.in_doubt() == []
    more = [b"n%03d" % i for i in range(5)]
    _put(qmp.conn_name, "ST.IN", more)
    progress = _run_available_now(spark, ferry, {"queue": "ST.IN", "maxMessagesPerTrigger": "20"},
                                  {"queue": "ST.OUT"}, tmp_path / "ckpt")
    assert [p["numInputRows"] for p in progress] == [5]
    assert sorted(_browse(qmp.conn_name, "ST.OUT")) == data + more  # nothing twice
    _run_available_now(spark, ferry, {"queue": "ST.IN"}, {"queue": "ST.OUT"}, tmp_path / "ckpt")
    with connect("QM1", qmp.conn_name) as c:
        assert c.queue_range("ST.IN").depth == 0
        (pos,) = c.reader_positions("ST.IN")
        assert (pos.reader, pos.lag) == ("spark", 0)
        with c.open("FERRYMQ.SPARK.COMMITS") as mq:
            markers = [m for m in mq.browse() if json.loads(m.data)["scope"] == query_id]
        assert len(markers) == 1  # only the newest batch's marker of this query is kept


def test_several_queues_bytes_limit_and_narrow_schema(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess,
                                                      tmp_path: Path) -> None:
    _put(qmp.conn_name, "ST.A", [b"a" * 1000 for _ in range(6)])
    _put(qmp.conn_name, "ST.B", [b"b" * 1000 for _ in range(6)])
    df = (spark.readStream.format("ferrymq").options(**ferry, queue="ST.A,ST.B", maxBytesPerTrigger="4000")
          .schema("queue STRING, seq BIGINT, payload BINARY").load())
    q = (df.writeStream.format("memory").queryName("several").option("checkpointLocation", str(tmp_path / "c"))
         .trigger(availableNow=True).start())
    q.awaitTermination(300)
    assert q.exception() is None
    sizes = [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]
    assert sum(sizes) == 12 and max(sizes) <= 4 and len(sizes) >= 3
    rows = spark.sql("select queue, count(*) as n from several group by queue order by queue").collect()
    assert [(r.queue, r.n) for r in rows] == [("ST.A", 6), ("ST.B", 6)]


def test_starting_position_latest_reads_only_new_messages(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess,
                                                          tmp_path: Path) -> None:
    _put(qmp.conn_name, "ST.NOW", [b"old-1", b"old-2"])
    df = spark.readStream.format("ferrymq").options(**ferry, queue="ST.NOW", startingPosition="latest").load()
    q = (df.select("payload").writeStream.format("memory").queryName("latest")
         .option("checkpointLocation", str(tmp_path / "c")).trigger(processingTime="200 milliseconds").start())
    try:
        deadline = time.monotonic() + 120
        while not q.recentProgress and time.monotonic() < deadline:
            time.sleep(0.2)
        _put(qmp.conn_name, "ST.NOW", [b"new-1", b"new-2"])
        got: list[bytes] = []
        while time.monotonic() < deadline and len(got) < 2:
            got = [r.payload for r in spark.sql("select payload from latest").collect()]
            time.sleep(0.3)
    finally:
        q.stop()
    assert sorted(got) == [b"new-1", b"new-2"]  # the backlog was skipped


def test_a_failed_write_backs_out_every_staged_unit(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess,
                                                     tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    _put(qmp.conn_name, "ST.ABORT", [b"x%02d" % i for i in range(20)])
    df = spark.readStream.format("ferrymq").options(**ferry, queue="ST.ABORT", minPartitions="2").load()
    bad = df.select(F.when(F.col("payload") == F.lit(b"x15"), F.lit(None)).otherwise(F.col("payload")).alias("payload"))
    q = (bad.writeStream.format("ferrymq").options(**ferry, queue="ST.SINK")
         .option("checkpointLocation", str(tmp_path / "c")).trigger(availableNow=True).start())
    with pytest.raises(Exception, match="null payload"):
        q.awaitTermination(300)
    with connect("QM1", qmp.conn_name) as c:
        # Nothing the failed batch staged is visible. A task that prepared its unit while
        # Spark was failing the job can leave it in doubt (Spark cancels tasks without
        # waiting); the query's next commit or abort settles it, never commits it.
        with c.open("ST.SINK") as sink:
            assert list(sink.browse()) == []  # CURDEPTH would count an in-doubt unit's messages
        assert c.queue_range("ST.ABORT").depth == 20
        assert all(x.startswith(b"fsp1:" + q.id.encode() + b":0:") for x in c.in_doubt())
    fixed = df.select("payload")  # the same query, from its checkpoint, without the bad row
    q = (fixed.writeStream.format("ferrymq").options(**ferry, queue="ST.SINK")
         .option("checkpointLocation", str(tmp_path / "c")).trigger(availableNow=True).start())
    q.awaitTermination(300)
    with connect("QM1", qmp.conn_name) as c:
        assert c.in_doubt() == []
        assert c.queue_range("ST.SINK").depth == 20  # every row once: the failed attempt's units backed out
        assert c.queue_range("ST.ABORT").depth == 0


def test_the_driver_checks_every_object_before_any_data_moves(spark: Any, ferry: dict[str, str],
                                                              qmp: QueueManagerProcess, tmp_path: Path) -> None:
    # A missing commit queue used to fail the first commit, after every task had staged its
    # rows (left in doubt by an abort that needed the same queue); a misnamed target failed
    # every task. Both are refused now before the first task runs: nothing staged, nothing read.
    _put(qmp.conn_name, "ST.CHECK", [b"c%02d" % i for i in range(10)])
    df = spark.readStream.format("ferrymq").options(**ferry, queue="ST.CHECK").load().select("payload")
    with connect("QM1", qmp.conn_name) as c:
        sink_depth = c.queue_range("ST.SINK").depth  # other tests write there too
    cases = [({"queue": "ST.SINK", "commitQueue": "NO.SUCH.COMMITS"}, r"DEFINE QLOCAL\(NO.SUCH.COMMITS\)"),
             ({"queue": "NO.SUCH.TARGET"}, r"2085.*option queue 'NO.SUCH.TARGET' does not open for output")]
    for i, (sink, error) in enumerate(cases):
        q = (df.writeStream.format("ferrymq").options(**ferry, **sink)
             .option("checkpointLocation", str(tmp_path / f"c{i}")).trigger(availableNow=True).start())
        with pytest.raises(Exception, match=error):
            q.awaitTermination(300)
        with connect("QM1", qmp.conn_name) as c:
            assert [x for x in c.in_doubt() if x.startswith(b"fsp1:" + q.id.encode())] == []
            assert c.queue_range("ST.SINK").depth == sink_depth and c.queue_range("ST.CHECK").depth == 10
    with pytest.raises(Exception, match=r"option queue 'NO.SUCH.TARGET' does not open for output"):
        spark.createDataFrame([(b"x",)], "payload binary").write.format("ferrymq").options(
            **ferry, queue="NO.SUCH.TARGET").mode("append").save()


def test_fail_on_data_loss(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess, tmp_path: Path) -> None:
    _put(qmp.conn_name, "ST.LOSS", [b"a", b"b"])

    def run(fail: str) -> Any:
        df = spark.readStream.format("ferrymq").options(**ferry, queue="ST.LOSS", failOnDataLoss=fail).load()
        q = (df.select("payload").writeStream.format("noop")
             .option("checkpointLocation", str(tmp_path / "c")).trigger(availableNow=True).start())
        with contextlib.suppress(Exception):  # a failed query raises here; q.exception() tells
            q.awaitTermination(300)
        return q

    assert run("true").exception() is None
    _put(qmp.conn_name, "ST.LOSS", [b"c", b"d"])
    with connect("QM1", qmp.conn_name) as c:
        assert c.remove_upto("ST.LOSS", 1 << 40, "someone-else") == 2  # c and d, never read
    q = run("true")
    assert q.exception() is not None and "someone-else" in str(q.exception())
    assert run("false").exception() is None
