"""Batch reads and writes through format("ferrymq") with real Spark (local mode) against a
real queue-manager process: every column, both writer paths, narrow schemas, refusals,
destructive reads under a unit of work."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import connect
from ferrymq.mq import constants as C
from ferrymq.spark.columns import NAMES
from ferrymq.wire.mqmd import MQMD

pytestmark = pytest.mark.timeout(600)

WHEN = dt.datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=dt.UTC)


def _full_md(i: int) -> MQMD:
    """A descriptor with every field away from its default (context included)."""
    return MQMD(
        version=C.MQMD_VERSION_2, report=C.MQRO_COA | C.MQRO_PASS_MSG_ID, msg_type=C.MQMT_REQUEST, expiry=-1,
        feedback=C.MQFB_NONE + i, encoding=C.MQENC_NATIVE, coded_char_set_id=1208, format=C.MQFMT_STRING,
        priority=i % 10, persistence=C.MQPER_PERSISTENT, msg_id=b"MSG%021d" % i, correl_id=b"COR%021d" % i,
        reply_to_q="BR.REPLY", reply_to_q_mgr="QMR", user_identifier="alice", accounting_token=b"A" * 32,
        appl_identity_data="ident", put_appl_type=C.MQAT_JAVA, put_appl_name="loader", put_date="20260304",
        put_time="05060789", appl_origin_data="orig", group_id=b"G" * 24, msg_seq_number=i + 1, offset=0,
        msg_flags=C.MQMF_NONE, original_length=-1,
    )


def _put_full(conn_name: str, queue: str, n: int) -> None:
    with connect("QM1", conn_name) as c, c.open(queue, options=C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT) as q:
        for i in range(n):
            q.put(b"payload %d" % i, md=_full_md(i), properties={"color": "red", "n": i, "ok": True, "raw": b"\x01\x02"},
                  options=C.MQPMO_SET_ALL_CONTEXT)


def _load(spark: Any, ferry: dict[str, str], queue: str, **opts: str) -> Any:
    return spark.read.format("ferrymq").options(**ferry, queue=queue, **opts).load()


def test_read_gives_every_documented_column(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess) -> None:
    _put_full(qmp.conn_name, "BR.IN", 3)
    df = _load(spark, ferry, "BR.IN")
    assert tuple(df.columns) == NAMES
    types = dict(df.dtypes)
    assert (types["msg_id"], types["seq"], types["priority"], types["put_timestamp"], types["properties"]) == (
        "binary", "bigint", "int", "timestamp", "map<string,string>")
    rows = sorted(df.collect(), key=lambda r: r.seq)
    assert len(rows) == 3
    r = rows[1]
    assert (r.queue_manager, r.queue) == ("QM1", "BR.IN")
    assert (r.msg_id, r.correl_id, r.group_id) == (b"MSG%021d" % 1, b"COR%021d" % 1, b"G" * 24)
    assert (r.msg_type, r.priority, r.persistence, r.expiry, r.feedback) == (C.MQMT_REQUEST, 1, 1, -1, 1)
    assert (r.report, r.encoding, r.ccsid, r.format) == (C.MQRO_COA | C.MQRO_PASS_MSG_ID, C.MQENC_NATIVE, 1208, "MQSTR")
    assert (r.reply_to_q, r.reply_to_qmgr, r.user_identifier, r.accounting_token) == ("BR.REPLY", "QMR", "alice", b"A" * 32)
    assert (r.appl_identity_data, r.put_appl_type, r.put_appl_name, r.appl_origin_data) == ("ident", C.MQAT_JAVA, "loader", "orig")
    assert r.put_timestamp == WHEN.replace(tzinfo=None)  # the session's time zone is UTC
    assert (r.msg_seq_number, r.offset, r.msg_flags, r.original_length, r.backout_count) == (2, 0, 0, -1, 0)
    assert r.properties == {"color": "red", "n": "1", "ok": "true", "raw": "0102"}
    assert r.payload == b"payload 1"
    assert [x.seq for x in rows] == list(range(rows[0].seq, rows[0].seq + 3))
    with connect("QM1", qmp.conn_name) as c:
        assert c.queue_range("BR.IN").depth == 3  # a browse leaves them


@pytest.mark.parametrize(("mode", "queue"), [("arrow", "BR.OUT"), ("rows", "BR.ROWS")])
def test_write_round_trips_every_column(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess, mode: str,
                                        queue: str) -> None:
    src = _load(spark, ferry, "BR.IN").orderBy("seq")
    original = src.collect()
    src.write.format("ferrymq").options(**ferry, queue=queue, writeMode=mode).mode("append").save()
    back = _load(spark, ferry, queue).orderBy("seq").collect()
    assert len(back) == len(original) == 3
    for a, b in zip(original, back, strict=True):
        da, db = a.asDict(), b.asDict()
        assert (db["queue"], da["queue"]) == (queue, "BR.IN")
        for col in ("queue", "seq"):  # where it was read from
            da.pop(col), db.pop(col)
        assert da == db


def test_written_defaults_and_queue_column(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess) -> None:
    df = spark.createDataFrame([("BR.NARROW", "text one", {"k": "v"}), ("BR.NARROW", "text two", None)],
                               "queue STRING, payload STRING, properties MAP<STRING,STRING>")
    df.write.format("ferrymq").options(**ferry).mode("append").save()
    with connect("QM1", qmp.conn_name) as c, c.open("BR.NARROW") as q:
        got = list(q.browse())
    got.sort(key=lambda m: m.text)  # two partitions: their units commit in either order
    assert [m.text for m in got] == ["text one", "text two"]
    assert got[0].format == C.MQFMT_STRING.strip() and got[0].md.coded_char_set_id == 1208
    assert got[0].properties == {"k": "v"} and got[1].properties == {}
    assert got[0].md.put_appl_name != "" and got[0].md.msg_id != bytes(24)  # the queue manager's context and MsgId
    narrow = _load(spark, ferry, "BR.NARROW").select("seq", "payload").collect()
    assert sorted(r.payload for r in narrow) == [b"text one", b"text two"]
    user = spark.read.format("ferrymq").options(**ferry, queue="BR.NARROW").schema("payload BINARY, seq BIGINT").load()
    assert user.columns == ["payload", "seq"] and user.count() == 2


def test_unknown_columns_and_bad_options_are_refused(spark: Any, ferry: dict[str, str], qmp: QueueManagerProcess) -> None:
    df = spark.createDataFrame([(b"x", "red", 1)], "payload BINARY, colour STRING, size INT")
    with pytest.raises(Exception, match=r"unknown column.*colour, size"):
        df.write.format("ferrymq").options(**ferry, queue="BR.BAD").mode("append").save()
    with pytest.raises(Exception, match="a payload column"):
        spark.createDataFrame([(1,)], "priority INT").write.format("ferrymq").options(**ferry, queue="BR.BAD").mode(
            "append").save()
    with pytest.raises(Exception, match="overwrite"):
        spark.createDataFrame([(b"x",)], "payload BINARY").write.format("ferrymq").options(**ferry, queue="BR.BAD").mode(
            "overwrite").save()
    with pytest.raises(Exception, match="connName is required"):
        spark.read.format("ferrymq").option("queue", "BR.BAD").load().collect()
    with pytest.raises(Exception, match=r"unknown option.*maxoffsetspertrigger"):
        _load(spark, ferry, "BR.BAD", maxOffsetsPerTrigger="5").collect()
    with pytest.raises(Exception, match=r"seq int .is bigint."):
        spark.read.format("ferrymq").options(**ferry, queue="BR.BAD").schema("seq INT").load().collect()
    with connect("QM1", qmp.conn_name) as c:
        assert c.queue_range("BR.BAD").depth == 0
        assert c.in_doubt() == []  # nothing staged was left behind


def test_destructive_read_takes_the_messages_in_a_unit_of_work(spark: Any, ferry: dict[str, str],
                                                                qmp: QueueManagerProcess) -> None:
    with connect("QM1", qmp.conn_name) as c, c.open("BR.TAKE") as q:
        for i in range(25):
            q.put(b"t%d" % i, persistent=True)
        first = c.queue_range("BR.TAKE").first_seq
    rows = _load(spark, ferry, "BR.TAKE", destructive="true", pageMessages="10").collect()
    assert sorted(r.payload for r in rows) == sorted(b"t%d" % i for i in range(25))
    assert sorted(r.seq for r in rows) == list(range(first, first + 25))  # the same seq a browse would give
    with connect("QM1", qmp.conn_name) as c:
        assert c.queue_range("BR.TAKE").depth == 0
    assert _load(spark, ferry, "BR.TAKE").count() == 0
