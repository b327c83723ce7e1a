"""The Spark data source's pure parts: options, offsets and range planning, admission
control arithmetic, XIDs, put-time conversion. (Spark itself is exercised in tests/spark.)"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from ferrymq.spark.columns import property_text, put_fields, put_micros
from ferrymq.spark.commits import parse_xid, task_xid
from ferrymq.spark.options import OptionError, parse_options
from ferrymq.spark.puts import PutPlan
from ferrymq.spark.reading import SeqRange, cap_rows, offset, plan, positions_of, split

BASE = {"connname": "localhost(1414), backup(1415)", "queue": "Q1, Q2"}


def test_options_parse_and_refuse_by_name() -> None:
    o = parse_options({**BASE, "MaxMessagesPerTrigger": "500", "channel": "DEV.APP.SVRCONN", "failondataloss": "false"})
    assert o.queues == ("Q1", "Q2") and o.max_messages_per_trigger == 500 and not o.fail_on_data_loss
    assert o.appl_name == "spark/DEV.APP.SVRCONN"
    with pytest.raises(OptionError, match=r"unknown option.*maxoffsetspertrigger"):
        parse_options({**BASE, "maxoffsetspertrigger": "1"})
    with pytest.raises(OptionError, match="connName is required"):
        parse_options({"queue": "Q1"})
    with pytest.raises(OptionError, match="not host"):
        parse_options({**BASE, "connname": "a(b"})
    with pytest.raises(OptionError, match="at least 1"):
        parse_options({**BASE, "maxmessagespertrigger": "0"})
    with pytest.raises(OptionError, match="true or false"):
        parse_options({**BASE, "destructive": "maybe"})
    with pytest.raises(OptionError, match="not a valid MQ queue name"):
        parse_options({**BASE, "queue": "Q 1"})
    with pytest.raises(OptionError, match="does not read"):
        parse_options({**BASE, "startingposition": '{"Q9": 3}'})
    with pytest.raises(OptionError, match="earliest, latest or JSON"):
        parse_options({**BASE, "startingposition": "oldest"})
    assert parse_options({"connname": "h(1)"}, need_queue=False).queues == ()


def test_offsets_are_sorted_json_and_round_trip() -> None:
    doc = offset({"ZED": 5, "ALPHA": 7})
    assert json.dumps(doc) == '{"queues": {"ALPHA": 7, "ZED": 5}}'
    assert positions_of(json.loads(json.dumps(doc))) == {"ALPHA": 7, "ZED": 5}
    with pytest.raises(ValueError, match="not a ferrymq offset"):
        positions_of({"seq": 3})


def test_ranges_split_evenly_and_cover_exactly() -> None:
    assert split("Q", 10, 20, 3) == [SeqRange("Q", 10, 14), SeqRange("Q", 14, 17), SeqRange("Q", 17, 20)]
    assert split("Q", 5, 5, 4) == [] and split("Q", 5, 7, 9) == [SeqRange("Q", 5, 6), SeqRange("Q", 6, 7)]
    parts = plan({"A": 0, "B": 100}, {"A": 90, "B": 110}, 4)
    assert sum(r.end - r.start for r in parts) == 100 and {r.queue for r in parts} == {"A", "B"}
    assert len([r for r in parts if r.queue == "A"]) == 4  # in proportion to the spans


def test_row_cap_is_shared_fairly_and_never_exceeded() -> None:
    assert cap_rows({"A": 0, "B": 0}, {"A": 100, "B": 100}, 50) == {"A": 25, "B": 25}
    assert cap_rows({"A": 0, "B": 0}, {"A": 3, "B": 100}, 50) == {"A": 3, "B": 47}
    assert cap_rows({"A": 7}, {"A": 7}, 50) == {"A": 7}
    ends = cap_rows({"A": 0, "B": 10, "C": 0}, {"A": 9, "B": 15, "C": 1000}, 7)
    assert sum(ends[q] - s for q, s in {"A": 0, "B": 10, "C": 0}.items()) == 7


def test_xids_carry_scope_and_batch_and_never_repeat() -> None:
    a, b = task_xid("q-1", 7, 0, 0), task_xid("q-1", 7, 0, 0)
    assert a != b and len(a) <= 128
    parts = parse_xid(a)
    assert parts is not None and (parts.scope, parts.batch) == ("q-1", 7)
    assert parse_xid(b"query-1/batch-7/part-0") is None
    with pytest.raises(ValueError):
        task_xid("a:b", 1, 0, 0)


def test_put_time_converts_both_ways() -> None:
    when = dt.datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=dt.UTC)
    assert put_fields(when) == ("20260304", "05060789")
    micros = put_micros("20260304", "05060789")
    assert micros == int(when.timestamp() * 1_000_000)
    assert put_micros("", "") is None and put_micros("2026xx04", "05060789") is None
    assert put_fields(None) == ("", "")
    assert property_text(True) == "true" and property_text(b"\x00\xff") == "00ff" and property_text(None) is None


def test_put_plan_refuses_what_it_cannot_write() -> None:
    with pytest.raises(ValueError, match=r"unknown column.*colour"):
        PutPlan(["payload", "colour"], "Q")
    with pytest.raises(ValueError, match="payload column"):
        PutPlan(["priority"], "Q")
    with pytest.raises(ValueError, match="option queue or topic, or a queue or topic column"):
        PutPlan(["payload"], None)
    plan_ = PutPlan(["payload", "user_identifier", "seq", "backout_count", "msg_id"], "Q")
    assert plan_.set_context and sorted(c for c, _ in plan_.md_columns) == ["msg_id", "user_identifier"]
    with pytest.raises(ValueError, match="msg_id holds 25 bytes"):
        plan_.descriptor({"payload": b"x", "user_identifier": None, "msg_id": b"m" * 25}, False)
