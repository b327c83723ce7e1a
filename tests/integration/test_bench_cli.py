"""``ferrymq bench``: tiny bounded runs (no timing is asserted, only shape and honesty)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ferrymq.bench.peers import listening


def ferrymq(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ferrymq.cli", *args], capture_output=True, text=True, timeout=600,
                          check=False)


def test_help() -> None:
    done = ferrymq("bench", "--help")
    assert done.returncode == 0 and "--only" in done.stdout and "--plot" in done.stdout


def test_json_csv_and_plot(tmp_path: Path) -> None:
    png = tmp_path / "bench.png"
    done = ferrymq("bench", "--only", "ferrymq", "--n", "200", "--rr", "20", "--repeat", "1", "--output", "json",
                   "--plot", str(png))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    r = data["results"]["ferrymq"]
    assert r["throughput_msgs_per_s"] > 0 and r["request_reply"]["n"] == 20
    assert r["request_reply"]["p50_us"] <= r["request_reply"]["p99_us"] <= r["request_reply"]["max_us"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    done = ferrymq("bench", "--only", "ferrymq", "--n", "100", "--rr", "10", "--repeat", "1", "--output", "csv")
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [row["broker"] for row in rows] == ["ferrymq"] and float(rows[0]["throughput_msgs_per_s"]) > 0


@pytest.mark.parametrize(("peer", "port"), [("rabbitmq", 5672), ("nats", 4222), ("mosquitto", 1883)])
def test_peer_runs_or_is_skipped_with_a_note(peer: str, port: int) -> None:
    done = ferrymq("bench", "--only", "ferrymq", "--only", peer, "--n", "200", "--rr", "20", "--repeat", "1",
                   "--output", "json")
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)["results"][peer]
    if not listening(port):
        assert "nothing listening" in r["skipped"]
        return
    assert "skipped" not in r, r
    assert r["request_reply"]["n"] >= 1 and r["guarantee"]
    if r["throughput_msgs_per_s"]:
        assert r["ferrymq_ratio"] > 0
