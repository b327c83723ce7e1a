"""The pub/sub scenario's accounting: each subscriber counts every publication once by its
number, and a run gives a figure only when every subscriber received every publication
exactly once (no timing is asserted: times here are made up)."""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

import pytest

from ferrymq.bench.link import Link
from ferrymq.bench.model import MAX_BYTES_PER_RUN
from ferrymq.bench.pubsub import NUMBER, Deliveries, FanOut, Numbered, account
from ferrymq.bench.report import pubsub_targets, target_lines


@pytest.fixture
def link() -> Link:
    return Link.make(mp.get_context("spawn"), 60.0)


def publisher(count: int, first: float = 100.0, last: float = 101.0) -> dict[str, Any]:
    return {"role": "publisher", "count": count, "first": first, "last": last, "cpu": 0.5}


def subscriber(index: int, count: int, last: float = 102.0, **more: Any) -> dict[str, Any]:
    return {"role": "subscriber", "index": index, "count": count, "duplicates": 0, "strays": 0, "missing": [],
            "first": 100.1, "last": last, "cpu": 0.25, **more}


def test_numbered_bodies_carry_their_number_and_keep_their_size() -> None:
    bodies = Numbered(64)
    one, two = bodies.body(1), bodies.body(70_000)
    assert len(one) == len(two) == 64
    assert int.from_bytes(one[:NUMBER], "big") == 1 and int.from_bytes(two[:NUMBER], "big") == 70_000
    assert one[NUMBER:] == two[NUMBER:]


def test_a_subscriber_counts_each_publication_once(link: Link) -> None:
    bodies, got = Numbered(16), Deliveries(link, 4, index=2)
    assert not got.add(bodies.body(0))
    assert not got.add(memoryview(bodies.body(2)))
    assert not got.add(bodies.body(2))  # twice: not counted again
    assert not got.add(bodies.body(9))  # never published
    assert not got.add(b"short")  # no number at all
    assert (got.count, got.duplicates, got.strays) == (2, 1, 2)
    assert got.missing() == [1, 3] and not got.done()
    assert not got.add(bodies.body(1))
    assert got.add(bodies.body(3)) and got.done() and got.missing() == []
    report = got.report(0.1)
    assert report["index"] == 2 and report["count"] == 4 and report["role"] == "subscriber"


def test_a_subscriber_waits_while_the_publisher_runs_and_stops_when_idle_after(link: Link) -> None:
    got = Deliveries(link, 3, index=0)
    got.add(Numbered(8).body(0))
    assert not got.idle()  # the publisher is still publishing
    link.producers_done.set()
    assert not got.idle()  # just done: the rest may still be on its way
    got.last = got._done_seen = time.time() - 60
    assert got.idle()


def test_every_publication_to_every_subscriber_gives_deliveries_per_second() -> None:
    fan = FanOut(count=1000, size=1024, subscribers=3)
    verdict = account(fan, [subscriber(1, 1000), publisher(1000), subscriber(0, 1000, last=104.0),
                            subscriber(2, 1000)])
    assert verdict.note == ""
    assert verdict.delivered == 3000
    assert verdict.rate == pytest.approx(3000 / 4.0)  # first publish 100.0 to last delivery 104.0
    assert verdict.extra["publications_per_s"] == pytest.approx(1000 / 1.0)


def test_one_missing_delivery_fails_the_run_and_names_the_subscriber() -> None:
    fan = FanOut(count=1000, size=1024, subscribers=3)
    verdict = account(fan, [publisher(1000), subscriber(0, 1000), subscriber(1, 999, missing=[417]),
                            subscriber(2, 1000)])
    assert verdict.rate is None
    assert "lost deliveries: 1 of 3,000 missing" in verdict.note
    assert "subscriber 1 got 999 of 1,000 (first missing: 417)" in verdict.note


def test_duplicates_strays_and_a_short_publisher_fail_the_run() -> None:
    fan = FanOut(count=100, size=64, subscribers=2)
    verdict = account(fan, [publisher(100), subscriber(0, 100, duplicates=3), subscriber(1, 100, strays=1)])
    assert verdict.rate is None
    assert "duplicate deliveries: subscriber 0 got 3" in verdict.note
    assert "deliveries never published: subscriber 1 got 1" in verdict.note
    verdict = account(fan, [publisher(60), subscriber(0, 60), subscriber(1, 60)])
    assert verdict.rate is None and "time limit: 60 of 100 published" in verdict.note


def test_a_subscriber_report_missing_fails_the_run() -> None:
    verdict = account(FanOut(count=10, size=64, subscribers=2), [publisher(10), subscriber(0, 10)])
    assert verdict.rate is None and "1 of 2 subscriber reports" in verdict.note


def test_fan_outs_beyond_the_limits_are_refused_by_name_and_value() -> None:
    assert FanOut(10_000, 1024, 10).refusal(MAX_BYTES_PER_RUN) is None
    assert "size 4 refused" in (FanOut(10, 4, 1).refusal(MAX_BYTES_PER_RUN) or "")
    assert "subscribers 17 refused" in (FanOut(10, 64, 17).refusal(MAX_BYTES_PER_RUN) or "")
    too_big = FanOut(2_000_000, 1024, 16).refusal(MAX_BYTES_PER_RUN) or ""
    assert "2,000,000 x 16 x 1,024 B" in too_big and "2,147,483,648 B per run" in too_big


def row(scenario: str, contender: str, rate: float | None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"scenario": scenario, "contender": contender, **more}
    if rate is not None:
        out["rate"] = {"median": rate, "min": rate, "max": rate, "runs": 1}
    return out


def test_targets_compare_with_nats_core_and_the_fastest_rabbitmq_client() -> None:
    rows = [row("pub/sub x10", "ferrymq", 50_000.0), row("pub/sub x10", "rabbitmq-pika", 12_000.0),
            row("pub/sub x10", "rabbitmq-aio-pika", 8_000.0), row("pub/sub x10", "nats-core", 40_000.0),
            row("persistent pub/sub x5 durable", "ferrymq", 9_000.0),
            row("persistent pub/sub x5 durable", "rabbitmq-aio-pika", 1_000.0),
            row("non-persistent", "ferrymq", 1.0)]
    targets = pubsub_targets(rows)
    assert [(t["scenario"], t["target"], t["met"]) for t in targets] == [
        ("pub/sub x10", ">= 1x NATS core", True),
        ("pub/sub x10", ">= 5x RabbitMQ", False),  # 50,000 / 12,000 (pika, the faster) = 4.2x
        ("persistent pub/sub x5 durable", ">= 5x RabbitMQ with confirms", True),
    ]
    assert targets[1]["peer"] == "rabbitmq-pika" and targets[1]["ratio"] == pytest.approx(50_000 / 12_000)
    lines = target_lines(targets)
    assert "= 4.17x, MISSED" in lines[1] and "(rabbitmq-pika)" in lines[1]


def test_a_target_without_both_figures_stays_open_and_says_why() -> None:
    rows = [row("pub/sub x1", "ferrymq", 20_000.0),
            row("pub/sub x1", "nats-core", None, notes=["run 1: lost deliveries: 5 of 10 missing"]),
            row("pub/sub x1", "rabbitmq-pika", None, skipped="not running"),
            row("pub/sub x10", "ferrymq", None, skipped="no client"), row("pub/sub x10", "nats-core", 1.0)]
    targets = {(t["scenario"], t["target"]): t for t in pubsub_targets(rows)}
    nats = targets["pub/sub x1", ">= 1x NATS core"]
    assert nats["met"] is None and "lost deliveries" in nats["why_open"]
    assert "(not run)" in targets["pub/sub x1", ">= 5x RabbitMQ"]["why_open"]
    assert targets["pub/sub x10", ">= 1x NATS core"]["why_open"] == "ferrymq has no figure: no client"
    assert all("open (" in line for line in target_lines(list(targets.values())))
