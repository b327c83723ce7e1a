"""The Spark data source's topic options without Spark: which option combinations a read
and a write accept (and the refusals' words), where a written row goes, the MQSUB a topic
read makes, and the ``topic`` column read from a publication's MQTopicString, page and
message paths alike. (Spark itself: tests/spark/test_topic_reads_writes.py.)"""

from __future__ import annotations

import pytest

from ferrymq.client.sequence import ColumnPage, SequencedMessage
from ferrymq.engine import sequence_access as S
from ferrymq.engine.api import ObjectDescriptor, PutOptions, SubDescriptor, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import codec
from ferrymq.protocol import seqframes as F
from ferrymq.server.seq_ops import columns_reply
from ferrymq.spark import pages
from ferrymq.spark.columns import NAMES, record_batch
from ferrymq.spark.options import OptionError, parse_options
from ferrymq.spark.puts import PutPlan, Target
from ferrymq.spark.schema import SCHEMA, read_schema
from ferrymq.spark.subscribing import subscription_request
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

CONN = {"connname": "localhost(1414)"}


def test_a_topic_read_names_its_subscription() -> None:
    o = parse_options({**CONN, "Topic": "sales/+/orders", "subscription": "SALES.SPARK", "selector": "region = 'eu'",
                       "wildcards": "CHAR", "startingPosition": "latest"})
    assert (o.topic, o.subscription, o.selector, o.wildcards, o.queues) == (
        "sales/+/orders", "SALES.SPARK", "region = 'eu'", "char", ())
    assert parse_options({**CONN, "topic": "a/b", "subscription": "S"}).wildcards == "topic"
    sd = subscription_request(o)
    assert sd.options == (C.MQSO_CREATE | C.MQSO_ALTER | C.MQSO_DURABLE | C.MQSO_MANAGED | C.MQSO_FAIL_IF_QUIESCING
                          | C.MQSO_WILDCARD_CHAR)
    assert (sd.object_string, sd.sub_name, sd.selection_string) == ("sales/+/orders", "SALES.SPARK", "region = 'eu'")


@pytest.mark.parametrize(("options", "reading", "words"), [
    ({"queue": "Q1", "topic": "a/b", "subscription": "S"}, True, "queue and topic exclude each other"),
    ({"queue": "Q1", "topic": "a/b"}, False, "queue and topic exclude each other"),
    ({"topic": "a/b"}, True, "topic needs option subscription"),
    ({"queue": "Q1", "subscription": "S"}, True, r"subscription go with option topic"),
    ({"queue": "Q1", "selector": "x = 1"}, True, r"selector go with option topic"),
    ({"topic": "a/b", "subscription": "S"}, False, r"subscription are for reading"),
    ({"topic": "a/b", "subscription": "S", "wildcards": "regex"}, True, "wildcards must be topic"),
    ({"topic": "a/b", "subscription": "S", "startingposition": '{"Q1": 3}'}, True, "earliest or latest"),
    ({"topic": " ", "subscription": "S"}, True, "must be a topic string"),
    ({"topic": "a/b", "subscription": "S" * 10241}, True, "subscription is at most"),
    ({}, True, "queue names no queue"),
])
def test_option_combinations_are_refused_by_name(options: dict[str, str], reading: bool, words: str) -> None:
    with pytest.raises(OptionError, match=words):
        parse_options({**CONN, **options}, need_queue=reading)


def test_a_write_takes_a_topic_option_or_topic_column() -> None:
    o = parse_options({**CONN, "topic": "prices/eu"}, need_queue=False)
    assert (o.topic, o.queues) == ("prices/eu", ())
    assert PutPlan(["payload"], None, "prices/eu").target({}) == Target("prices/eu", topic=True)
    by_row = PutPlan(["payload", "topic", "queue"], None)
    assert by_row.target({"topic": "t/1", "queue": "Q1"}) == Target("t/1", topic=True)
    assert by_row.target({"topic": None, "queue": "Q1"}) == Target("Q1")
    with pytest.raises(ValueError, match="neither a topic nor a queue"):
        by_row.target({"topic": None, "queue": None})
    # an option overrides the columns, as Kafka's topic option does
    assert PutPlan(["payload", "topic"], "Q1").target({"topic": "t/1"}) == Target("Q1")
    assert PutPlan(["payload", "queue"], None, "t/2").target({"queue": "Q1"}) == Target("t/2", topic=True)
    assert PutPlan(["payload", "topic"], None).target({"topic": "t/3"}) == Target("t/3", topic=True)
    with pytest.raises(ValueError, match="option queue or topic, or a queue or topic column"):
        PutPlan(["payload"], None)
    with pytest.raises(ValueError, match="exclude each other"):
        PutPlan(["payload"], "Q1", "t/1")


def _published_page() -> tuple[ColumnPage, list[SequencedMessage]]:
    """A durable subscription's queue holding two publications and one ordinary message."""
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    hconn = qm.connect(appl_name="test")
    sd = SubDescriptor(C.MQSO_CREATE | C.MQSO_DURABLE | C.MQSO_MANAGED, object_string="a/#", sub_name="S1")
    sub = qm.subscribe(hconn, sd)
    pmo = PutOptions(C.MQPMO_NO_SYNCPOINT)
    topic = qm.open(hconn, ObjectDescriptor("", object_type=C.MQOT_TOPIC, object_string="a/b"), C.MQOO_OUTPUT).hobj
    qm.put(hconn, topic, MQMD(version=2), pmo, b"one", properties={"k": "v"})
    own = qm.open(hconn, ObjectDescriptor(sub.queue_name), C.MQOO_OUTPUT).hobj
    qm.put(hconn, own, MQMD(version=2), pmo, b"plain")
    topic2 = qm.open(hconn, ObjectDescriptor("", object_type=C.MQOT_TOPIC, object_string="a/c/d"), C.MQOO_OUTPUT).hobj
    qm.put(hconn, topic2, MQMD(version=2), pmo, b"two")
    msgs = S.browse_range(qm, sub.queue_name, 0, 1000)
    reply = columns_reply(7, msgs, 1 << 20)
    ptype, flags, corr, parts = codec.encode(reply)  # as the client receives it
    ev = codec.decode(codec.SERVER_FRAMES, ptype, flags, corr, b"".join(parts), None)
    assert isinstance(ev, F.BrowseColumnsReply)
    page = ColumnPage(sub.queue_name, ev)
    entries = [SequencedMessage(sub.queue_name, F.RangeEntry(m.seq, m.put_at, m.md.pack(),
                                                             m.properties or PropertySet(), m.data)) for m in msgs]
    return page, entries


def test_the_topic_column_is_the_publications_topic_string() -> None:
    assert NAMES[:3] == ("queue", "seq", "topic")
    page, entries = _published_page()
    schema = read_schema(SCHEMA)
    got, want = pages.page_batch(page, schema), record_batch(entries, schema)
    assert got.column("topic").to_pylist() == ["a/b", None, "a/c/d"]  # the plain message is no publication
    assert got.column("payload").to_pylist() == [b"one", b"plain", b"two"]
    for f in schema:
        assert got.column(f.name).equals(want.column(f.name)), f.name
    assert got.column("properties").to_pylist()[0] == [("k", "v"), ("mqps.Top", "a/b")]
