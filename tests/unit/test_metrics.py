"""The metrics endpoint's exposition, parsed with prometheus_client's text parser."""

from __future__ import annotations

from engine_helpers import Env
from prometheus_client.parser import text_string_to_metric_families

from ferrymq.engine.api import GetOptions, Waiting
from ferrymq.mq import constants as C
from ferrymq.server.metrics import Histogram, render
from ferrymq.wire.mqmd import MQMD


def test_histogram_is_cumulative() -> None:
    h = Histogram((0.01, 0.1))
    for v in (0.001, 0.05, 0.05, 3.0):
        h.observe(v)
    assert h.lines("x") == ['x_bucket{le="0.01"} 1', 'x_bucket{le="0.1"} 3', 'x_bucket{le="+Inf"} 4',
                            "x_sum 3.101", "x_count 4"]


def test_exposition_counts_puts_gets_and_hand_overs() -> None:
    env = Env()
    env.define("APP.M")
    h = env.open("APP.M")
    waiting = env.qm.get(env.hconn, h, MQMD(), GetOptions(C.MQGMO_WAIT, 10_000, 0), 100)
    assert isinstance(waiting, Waiting)
    env.put(h)  # handed straight to the waiting get: counted in and out
    assert env.qm.take_deliveries()
    for _ in range(4):
        env.put(h)
    env.get(h)
    text = render(env.qm, Histogram((1.0,)), Histogram((1.0,)))
    samples = {(s.name, tuple(s.labels.items())): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    label = (("queue", "APP.M"),)
    assert samples[("ferrymq_queue_depth", label)] == 3
    assert samples[("ferrymq_queue_enqueued_total", label)] == 5
    assert samples[("ferrymq_queue_dequeued_total", label)] == 2
    assert samples[("ferrymq_connections", ())] == 1
    assert ("ferrymq_queue_oldest_message_age_seconds", (("queue", "SYSTEM.DEFAULT.LOCAL.QUEUE"),)) not in samples
    assert samples[("ferrymq_queue_oldest_message_age_seconds", label)] == 0


def test_the_grafana_sample_asks_only_for_metrics_that_exist() -> None:
    import json
    import re
    from pathlib import Path

    dashboard = Path(__file__).resolve().parents[2] / "samples" / "grafana-ferrymq.json"
    exprs = [t["expr"] for p in json.loads(dashboard.read_text())["panels"] for t in p["targets"]]
    asked = {m for e in exprs for m in re.findall(r"ferrymq_[a-z_]+", e)}
    env = Env()
    env.define("APP.M")
    env.put(env.open("APP.M"))
    fsync = Histogram((1.0,))
    fsync.observe(0.5)
    shown = {s.name for family in text_string_to_metric_families(render(env.qm, fsync, Histogram((1.0,))))
             for s in family.samples}
    assert asked and asked <= shown, asked - shown
