"""The Prometheus endpoint of a real queue-manager process, scraped and parsed with
prometheus_client's text parser, its figures checked against the queues' state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from qm_process import QueueManagerProcess

import ferrymq.client as fc


def scrape(port: int) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = resp.read().decode()
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def test_metrics_match_the_queues(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home", create_args=("--metrics-port", "0")).start()
    try:
        env = dict(os.environ, FERRYMQ_HOME=str(qm.home))
        status = json.loads(subprocess.run([sys.executable, "-m", "ferrymq.cli", "status", "QM1", "--output", "json"],
                                           env=env, capture_output=True, text=True, timeout=60, check=True).stdout)
        port = status["metrics_port"]
        assert isinstance(port, int) and port > 0
        qm.mqsc("DEFINE QLOCAL(APP.M)\n")
        with fc.connect("QM1", qm.conn_name) as client:
            q = client.open("APP.M")
            for i in range(5):
                q.put(b"m%d" % i, persistent=True)
            q.get(wait=1)
            q.get(wait=1)
            m = scrape(port)
            app = (("queue", "APP.M"),)
            assert m["ferrymq_queue_depth"][app] == 3
            assert m["ferrymq_queue_enqueued_total"][app] == 5
            assert m["ferrymq_queue_dequeued_total"][app] == 2
            assert m["ferrymq_queue_oldest_message_age_seconds"][app] >= 0
            assert m["ferrymq_connections"][()] >= 1
            assert m["ferrymq_journal_fsync_seconds_count"][()] >= 1  # persistent puts were synced
            assert m["ferrymq_journal_fsync_seconds_bucket"][(("le", "+Inf"),)] == \
                m["ferrymq_journal_fsync_seconds_count"][()]
            assert m["ferrymq_journal_commit_batch_bytes_sum"][()] > 0
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=10)
        assert missing.value.code == 404
    finally:
        qm.stop()


def test_metrics_are_off_unless_asked_for(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home").start()
    try:
        env = dict(os.environ, FERRYMQ_HOME=str(qm.home))
        status = json.loads(subprocess.run([sys.executable, "-m", "ferrymq.cli", "status", "QM1", "--output", "json"],
                                           env=env, capture_output=True, text=True, timeout=60, check=True).stdout)
        assert status["metrics_port"] is None
    finally:
        qm.stop()
