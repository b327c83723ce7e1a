"""The Spark writers' puts by columns (ferrymq.spark.columnar) against a real queue manager
over TCP, without Spark: every message is the one the same row put on its own would make
(descriptor, identifiers, properties, data, order), and refusals carry IBM's reasons and
leave nothing behind once the unit is backed out."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.client import Client
from ferrymq.mq import constants as C
from ferrymq.spark.columnar import batches_of_rows, put_batches
from ferrymq.spark.puts import PutPlan

WHEN = dt.datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=dt.UTC)


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


def one_by_one(c: Client, plan: PutPlan, rows: list[dict[str, Any]]) -> None:
    """The reference: each row put on its own, as the writers did before columns."""
    queues = {}
    for row in rows:
        name = plan.target(row).name
        if name not in queues:
            queues[name] = c.open(name, options=plan.open_options, async_put=True)
        data = row["payload"]
        md = plan.descriptor(row, isinstance(data, str))
        props = row.get("properties")
        queues[name].put(data, md=md, properties=dict(props) if props else None, syncpoint=True,
                         options=plan.put_options)
    assert c.stat().failures == 0
    c.commit()


def image(c: Client, queue: str, made_ids: bool = True) -> list[tuple[Any, ...]]:
    """What a getter sees, but for what the queue manager makes anew on every put."""
    with c.open(queue) as q:
        got = list(q.browse())
    out = []
    for m in got:
        md = m.md.replace(put_date="", put_time="") if m.md.put_appl_name != "loader" else m.md
        if made_ids and m.msg_id.startswith(b"AMQ "):
            md = md.replace(msg_id=bytes(24))
        out.append((md, m.properties, m.data))
    return out


def both_ways(emb: EmbeddedQueueManager, names: list[str], rows: list[dict[str, Any]], batch: pa.RecordBatch) -> None:
    for q in ("COLS", "ROWS"):
        emb.mqsc(f"DEFINE QLOCAL({q}) REPLACE")
    with fc.connect("QM1", addr(emb.port)) as c:
        put_batches(c, PutPlan(names, "COLS"), [batch])
        c.commit()
        one_by_one(c, PutPlan(names, "ROWS"), rows)
        cols, ref = image(c, "COLS"), image(c, "ROWS")
    assert len(cols) == len(rows)
    assert cols == ref


def test_payload_only_rows_are_messages_with_the_default_descriptor(embedded: EmbeddedQueueManager) -> None:
    rows = [{"payload": b"p%04d" % i * (i % 5)} for i in range(3000)]
    batch = pa.RecordBatch.from_pylist(rows, schema=pa.schema([("payload", pa.binary())]))
    both_ways(embedded, ["payload"], rows, batch)


def test_mixed_descriptors_identifiers_and_properties_in_one_batch(embedded: EmbeddedQueueManager) -> None:
    names = ["msg_id", "correl_id", "priority", "persistence", "reply_to_q", "format", "properties", "payload"]
    rows = []
    for i in range(60):
        rows.append({
            "msg_id": None if i % 4 == 0 else b"M%02d" % i,  # short: padded with zeros
            "correl_id": b"C" * 24 if i % 3 else None,
            "priority": None if i < 10 else (i // 10) % 10,  # runs of ten, then nulls
            "persistence": 0,
            "reply_to_q": "R" if i % 20 < 10 else None,
            "format": None if i % 7 else "MYFMT",
            "properties": {"k": str(i)} if i % 11 == 5 else ({} if i % 2 else None),
            "payload": b"body %d" % i,
        })
    schema = pa.schema([("msg_id", pa.binary()), ("correl_id", pa.binary()), ("priority", pa.int32()),
                        ("persistence", pa.int32()), ("reply_to_q", pa.string()), ("format", pa.string()),
                        ("properties", pa.map_(pa.string(), pa.string())), ("payload", pa.binary())])
    batch = pa.RecordBatch.from_pylist([{**r, "properties": None if r["properties"] is None
                                         else list(r["properties"].items())} for r in rows], schema=schema)
    both_ways(embedded, names, rows, batch)


def test_text_payloads_context_columns_and_null_columns(embedded: EmbeddedQueueManager) -> None:
    names = ["user_identifier", "put_timestamp", "put_appl_name", "expiry", "group_id", "payload"]
    rows = [{"user_identifier": "alice", "put_timestamp": WHEN, "put_appl_name": "loader", "expiry": None,
             "group_id": None, "payload": f"text {i} é"} for i in range(20)]
    schema = pa.schema([("user_identifier", pa.string()), ("put_timestamp", pa.timestamp("us", tz="UTC")),
                        ("put_appl_name", pa.string()), ("expiry", pa.int32()), ("group_id", pa.binary()),
                        ("payload", pa.string())])
    both_ways(embedded, names, rows, pa.RecordBatch.from_pylist(rows, schema=schema))
    with fc.connect("QM1", addr(embedded.port)) as c, c.open("COLS") as q:
        m = next(iter(q.browse()))
    assert (m.format, m.md.coded_char_set_id, m.md.user_identifier.rstrip(), m.text) == ("MQSTR", 1208, "alice",
                                                                                         "text 0 é")


def test_a_batch_over_several_frames_keeps_its_order(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as c:
        size = c.column_limit() // 3 + 1  # three rows do not fit one frame
        rows = [{"payload": bytes([i]) * size} for i in range(10)] + [{"payload": b"x" * 10} for _ in range(4000)]
        batch = pa.RecordBatch.from_pylist(rows, schema=pa.schema([("payload", pa.binary())]))
        assert put_batches(c, PutPlan(["payload"], "Q1"), [batch.slice(3), batch.slice(0, 3)]) == len(rows)
        c.commit()
        with c.open("Q1") as q:
            got = [m.data for m in q.browse()]
    assert got == [r["payload"] for r in rows[3:] + rows[:3]]


@pytest.mark.parametrize(("queue", "bodies", "error", "reason"), [
    ("DEFINE QLOCAL(SMALL) MAXMSGL(100)", [b"ok", b"x" * 101, b"ok"], fc.MessageTooBig, C.MQRC_MSG_TOO_BIG_FOR_Q),
    ("DEFINE QLOCAL(TINY) MAXDEPTH(5)", [b"m%d" % i for i in range(8)], fc.QueueFull, C.MQRC_Q_FULL),
])
def test_a_refused_row_fails_with_ibms_reason_and_leaves_nothing(embedded: EmbeddedQueueManager, queue: str,
                                                                 bodies: list[bytes], error: type[Exception],
                                                                 reason: int) -> None:
    embedded.mqsc(queue)
    name = queue.split("(")[1].split(")")[0]
    batch = pa.RecordBatch.from_pylist([{"payload": b} for b in bodies])
    with fc.connect("QM1", addr(embedded.port)) as c:
        with pytest.raises(error) as err:
            put_batches(c, PutPlan(["payload"], name), [batch])
        assert getattr(err.value, "reason", None) == reason
        c.backout()
        assert c.queue_range(name).depth == 0


@pytest.mark.parametrize(("rows", "match"), [
    ([{"payload": None}], "null payload"),
    ([{"payload": b"x", "msg_id": b"m" * 25}], "msg_id holds 25 bytes"),
    ([{"payload": 7}], "binary or string"),
])
def test_rows_that_cannot_be_messages_are_refused(embedded: EmbeddedQueueManager, rows: list[dict[str, Any]],
                                                  match: str) -> None:
    names = list(rows[0])
    with fc.connect("QM1", addr(embedded.port)) as c:
        with pytest.raises(ValueError, match=match):
            put_batches(c, PutPlan(names, "Q1"), [pa.RecordBatch.from_pylist(rows)])
        c.backout()


def test_rows_gather_into_batches_by_position_or_by_name() -> None:
    names = ["payload", "priority", "properties", "put_timestamp"]
    naive = WHEN.astimezone().replace(tzinfo=None)  # how Spark hands timestamps to row writers
    rows: list[Any] = [(b"a", 1, {"k": "v"}, naive), {"payload": "b", "priority": None, "properties": None,
                                                       "put_timestamp": None}]
    (batch,) = list(batches_of_rows(names, rows * 3, size=10))
    assert batch.num_rows == 6 and batch.schema.field("payload").type == pa.string()
    assert batch.column("put_timestamp")[0].as_py() == WHEN
    assert batch.column("properties")[0].as_py() == [("k", "v")]
    assert [b.num_rows for b in batches_of_rows(names, rows * 3, size=4)] == [4, 2]


def test_rows_are_published_with_their_context_per_row_topic_or_queue(embedded: EmbeddedQueueManager) -> None:
    names = ["topic", "queue", "put_appl_name", "user_identifier", "properties", "payload"]
    rows = [{"topic": f"colpub/{i % 2}" if i != 3 else None, "queue": "Q1", "put_appl_name": "loader",
             "user_identifier": "alice", "properties": {"n": str(i)} if i == 4 else {"mqps.Top": "was/here"} if i == 3
             else None, "payload": b"r%d" % i}
            for i in range(6)]
    with fc.connect("QM1", addr(embedded.port)) as c:
        with c.subscribe("colpub/#", durable=True, name="COLPUB") as sub:
            queue = sub.queue.name
        assert put_batches(c, PutPlan(names, None), batches_of_rows(names, rows)) == 6
        with fc.connect("QM1", addr(embedded.port)) as other, other.open(queue) as q:
            assert list(q.browse()) == []  # under syncpoint: nothing before the commit
        c.commit()
        with c.open(queue) as q:
            got = sorted(q.browse(), key=lambda m: m.data)
        with c.open("Q1") as q:
            plain = [(m.data, m.properties) for m in q.browse()]
    assert [m.data for m in got] == [b"r0", b"r1", b"r2", b"r4", b"r5"]
    assert plain == [(b"r3", {"mqps.Top": "was/here"})]  # a null topic: the queue, its properties kept
    assert [m.properties["mqps.Top"] for m in got] == ["colpub/0", "colpub/1", "colpub/0", "colpub/0", "colpub/1"]
    assert got[3].properties["n"] == "4"
    # the publisher's origin context is the row's (MQOO_SET_ALL_CONTEXT on the topic)
    assert {(m.md.put_appl_name.rstrip()) for m in got} == {"loader"}
