"""Topics through format("ferrymq") with real Spark (local mode) against a real
queue-manager process: reading a durable subscription the query names (batch and
streaming, exactly once across a restart from the checkpoint), publishing under units of
work (each publication reaching every durable subscriber once, none from a failed write),
and the refusals of options that do not go together."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import Client, connect
from ferrymq.spark.columns import NAMES

pytestmark = pytest.mark.timeout(600)


def _publish(conn_name: str, items: list[tuple[str, bytes]], **props: Any) -> None:
    with connect("QM1", conn_name) as c:
        for topic, data in items:
            c.publish(topic, data, persistent=True, properties=dict(props) or None)


def _durable(c: Client, topic: str, name: str) -> str:
    """Make a durable subscription as an application would; the name of its queue."""
    with c.subscribe(topic, durable=True, name=name) as s:
        return s.queue.name


def _copies(c: Client, queue: str) -> list[bytes]:
    with c.open(queue) as q:
        return sorted(m.data for m in q.browse())


def test_batch_read_from_a_subscription_the_query_names(spark: Any, ferry: dict[str, str],
                                                        qmp: QueueManagerProcess) -> None:
    def load(**opts: str) -> Any:
        return spark.read.format("ferrymq").options(**ferry, **opts).load()

    # The first read makes the durable subscriptions: nothing was published to them yet.
    assert load(topic="tpb/eu/#", subscription="TPB.ALL").count() == 0
    assert load(topic="tpb/eu/#", subscription="TPB.FR", selector="region = 'fr'").count() == 0
    _publish(qmp.conn_name, [("tpb/eu/fr", b"fr-1")], region="fr")
    _publish(qmp.conn_name, [("tpb/eu/de", b"de-1"), ("tpb/us", b"us-1")], region="de")
    df = load(topic="tpb/eu/#", subscription="TPB.ALL")
    assert tuple(df.columns) == NAMES  # the columns of a queue read
    rows = sorted(df.collect(), key=lambda r: r.seq)
    assert [(r.topic, r.payload, r.properties["region"]) for r in rows] == [("tpb/eu/fr", b"fr-1", "fr"),
                                                                          ("tpb/eu/de", b"de-1", "de")]
    assert rows[0].queue.startswith("SYSTEM.MANAGED.DURABLE.") and rows[0].properties["mqps.Top"] == "tpb/eu/fr"
    assert load(topic="tpb/eu/#", subscription="TPB.ALL").count() == 2  # a browse leaves them
    fr = {"topic": "tpb/eu/#", "subscription": "TPB.FR", "selector": "region = 'fr'"}  # its definition, each time
    assert [r.payload for r in load(**fr).collect()] == [b"fr-1"]
    taken = load(**fr, destructive="true").collect()
    assert [r.topic for r in taken] == ["tpb/eu/fr"]
    assert load(**fr).count() == 0
    # An existing subscription is not silently re-pointed at another topic or selector.
    with pytest.raises(Exception, match=r"2510.*topic string and wildcard scheme cannot change"):
        load(topic="tpb/us", subscription="TPB.ALL").collect()
    with pytest.raises(Exception, match=r"2524.*selector cannot change"):
        load(topic="tpb/eu/#", subscription="TPB.ALL", selector="region = 'de'").collect()
    assert load(topic="tpb/eu/#", subscription="TPB.ALL").count() == 2  # and it is unchanged


def test_refused_option_combinations(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess) -> None:
    with pytest.raises(Exception, match="options queue and topic exclude each other"):
        spark.read.format("ferrymq").options(**ferry, queue="ST.IN", topic="a/b", subscription="S").load().collect()
    with pytest.raises(Exception, match="option topic needs option subscription"):
        spark.read.format("ferrymq").options(**ferry, topic="a/b").load().collect()
    with pytest.raises(Exception, match="go with option topic"):
        spark.read.format("ferrymq").options(**ferry, queue="ST.IN", selector="x = 1").load().collect()
    df = spark.createDataFrame([(b"x",)], "payload BINARY")
    with pytest.raises(Exception, match="options queue and topic exclude each other"):
        df.write.format("ferrymq").options(**ferry, queue="ST.IN", topic="a/b").mode("append").save()
    with pytest.raises(Exception, match="subscription are for reading"):
        df.write.format("ferrymq").options(**ferry, topic="a/b", subscription="S").mode("append").save()


def test_batch_write_publishes_once_to_every_durable_subscriber(spark: Any, ferry: dict[str, str],
                                                                 qmp: QueueManagerProcess) -> None:
    from pyspark.sql import functions as F

    with connect("QM1", qmp.conn_name) as c:
        one, two = _durable(c, "tpw/#", "TPW.ONE"), _durable(c, "tpw/b", "TPW.TWO")
    rows = [(f"tpw/{'ab'[i % 2]}", b"p%02d" % i) for i in range(20)]
    df = spark.createDataFrame(rows, "topic STRING, payload BINARY").repartition(2)
    df.write.format("ferrymq").options(**ferry).mode("append").save()  # each row to its topic column's topic
    spark.createDataFrame([(b"c0",), (b"c1",)], "payload BINARY").write.format("ferrymq").options(
        **ferry, topic="tpw/c", writeMode="rows").mode("append").save()
    # A failed write publishes nothing: every partition's unit of work is backed out.
    bad = df.select("topic", F.when(F.col("payload") == F.lit(b"p07"), F.lit(None)).otherwise(F.col("payload"))
                    .alias("payload"))
    with pytest.raises(Exception, match="null payload"):
        bad.write.format("ferrymq").options(**ferry).mode("append").save()
    with connect("QM1", qmp.conn_name) as c:
        assert _copies(c, one) == sorted([p for _, p in rows] + [b"c0", b"c1"])
        assert _copies(c, two) == sorted(p for t, p in rows if t == "tpw/b")
        assert c.in_doubt() == []


def test_stream_from_a_topic_exactly_once_across_a_restart(spark: Any, ferry: dict[str, str],
                                                           qmp: QueueManagerProcess, tmp_path: Path) -> None:
    """Topic to topic: the query reads subscription TPS.QUERY and republishes each row under
    ``tps-out/``; a durable subscriber of the output sees every publication once."""
    from pyspark.sql import functions as F

    with connect("QM1", qmp.conn_name) as c:
        out = _durable(c, "tps-out/#", "TPS.OUT")

    def run() -> list[int]:
        src = (spark.readStream.format("ferrymq")
               .options(**ferry, topic="tps/#", subscription="TPS.QUERY", maxMessagesPerTrigger="4").load())
        q = (src.select(F.concat(F.lit("tps-out/"), F.col("topic")).alias("topic"), "payload")
             .writeStream.format("ferrymq").options(**ferry).option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(availableNow=True).start())
        with contextlib.suppress(Exception):
            q.awaitTermination(300)
        assert q.exception() is None, q.exception()
        return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]

    assert run() == []  # the first run makes the subscription
    first = [(f"tps/{i % 3}", b"s%02d" % i) for i in range(10)]
    _publish(qmp.conn_name, first)
    assert run() == [4, 4, 2]
    more = [("tps/x", b"t%02d" % i) for i in range(5)]  # published while the query is stopped
    _publish(qmp.conn_name, more)
    assert run() == [4, 1]  # from the checkpoint: only what it had not read
    with connect("QM1", qmp.conn_name) as c:
        assert _copies(c, out) == sorted(p for _, p in first + more)  # each exactly once
        with c.open(out) as q:
            assert {m.properties["mqps.Top"] for m in q.browse()} == {"tps-out/tps/0", "tps-out/tps/1",
                                                                     "tps-out/tps/2", "tps-out/tps/x"}
        assert c.in_doubt() == []
        read = _durable(c, "tps/#", "TPS.QUERY")  # resumes the query's subscription
        assert c.queue_range(read).depth == 0  # what Spark committed was removed
