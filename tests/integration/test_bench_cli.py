"""``ferrymq bench``: tiny bounded runs against a real queue manager and the peers on this
machine (no timing is asserted, only the output's shape and its honesty)."""

from __future__ import annotations

import csv
import io
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ferrymq.bench.contender import listening


def ferrymq(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ferrymq.cli", "bench", *args], capture_output=True, text=True,
                          timeout=240, check=False)


def bench_json(*args: str) -> list[dict[str, Any]]:
    done = ferrymq(*args, "--repeat", "1", "--time-limit", "60", "--output", "json")
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return rows


def closed_port() -> int:
    """A port nothing listens on (bound, never listened, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_help_lists_scenarios_and_limits() -> None:
    done = ferrymq("--help")
    assert done.returncode == 0
    for option in ("--scenario", "--producers", "--uow", "--sync-put", "--plot", "--output", "--time-limit",
                   "--subscribers", "--durable-subscribers", "--publications"):
        assert option in done.stdout


def test_limits_are_refused_by_name_and_value() -> None:
    done = ferrymq("--count", "2000000", "--size", "4194304")
    assert done.returncode == 2
    assert "2,000,000 x 4,194,304" in done.stderr and "2,147,483,648 B per run" in done.stderr
    done = ferrymq("--producers", "17")
    assert done.returncode == 2 and "17" in done.stderr and "1<=x<=16" in done.stderr
    done = ferrymq("--port", "kafka=9092")
    assert done.returncode == 2 and "kafka=9092" in done.stderr


def test_ferrymq_scenarios_json_and_plot(tmp_path: Path) -> None:
    png = tmp_path / "bench.png"
    rows = bench_json("--only", "ferrymq", "--only", "null-asyncio", "--scenario", "transient",
                      "--scenario", "request-reply", "--scenario", "machine",
                      "--count", "300", "--rr", "30", "--plot", str(png))
    by = {(r["scenario"], r["contender"]): r for r in rows}
    ours = by["non-persistent", "ferrymq"]
    assert ours["rate"]["min"] <= ours["rate"]["median"] <= ours["rate"]["max"] and ours["guarantee"]
    assert set(ours["cpu_us_per_msg"]) == {"producer", "consumer", "server"}
    null = by["non-persistent", "null-asyncio"]
    assert null["ferrymq_ratio"] == pytest.approx(ours["rate"]["median"] / null["rate"]["median"])
    lat = by["request/reply", "ferrymq"]["latency_us"]
    assert lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]
    assert sum(by["request/reply", "ferrymq"]["histogram"]["counts"]) == 30
    assert by["machine", "disk fdatasync"]["rate"]["median"] > 0
    assert by["machine", "loopback TCP"]["bytes_per_s"] > 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_persistent_units_of_work_and_store_as_csv() -> None:
    done = ferrymq("--only", "ferrymq", "--scenario", "persistent", "--scenario", "store", "--persistent-count",
                   "200", "--producers", "2", "--consumers", "2", "--uow", "10", "--store-units", "2",
                   "--store-seconds", "0.5", "--repeat", "1", "--output", "csv")
    assert done.returncode == 0, done.stderr
    rows = {r["contender"]: r for r in csv.DictReader(io.StringIO(done.stdout))}
    assert set(rows) == {"ferrymq", "ferrymq x1", "ferrymq x2"}
    assert float(rows["ferrymq"]["median"]) > 0 and rows["ferrymq"]["notes"] == ""
    assert float(rows["ferrymq x2"]["median"]) > 0


@pytest.mark.parametrize(("contender", "port"), [("rabbitmq-pika", 5672), ("nats-core", 4222),
                                                 ("mosquitto-qos0", 1883)])
def test_a_peer_runs_beside_ferrymq_or_is_skipped(contender: str, port: int) -> None:
    rows = bench_json("--only", contender, "--scenario", "transient", "--count", "300")
    peer = next(r for r in rows if r["contender"] == contender)
    if not listening(port):
        assert peer["skipped"].startswith("not running"), peer
        return
    assert "skipped" not in peer and peer["guarantee"]
    if peer.get("rate"):  # an at-most-once broker may drop messages: then a note, no rate
        assert peer["ferrymq_ratio"] > 0
    else:
        assert "lost messages" in peer["notes"][0]


def test_a_peer_not_running_is_reported_skipped(tmp_path: Path) -> None:
    saved = tmp_path / "run.json"
    done = ferrymq("--only", "nats-core", "--only", "nats-jetstream", "--scenario", "transient", "--scenario",
                   "persistent", "--count", "100", "--persistent-count", "100", "--port", f"nats={closed_port()}",
                   "--repeat", "1", "--output", "markdown", "--json-file", str(saved))
    assert done.returncode == 0, done.stderr
    rows = json.loads(saved.read_text())["results"]
    skipped = {r["contender"]: r["skipped"] for r in rows if r["contender"].startswith("nats")}
    assert set(skipped) == {"nats-core", "nats-jetstream"}
    assert all(s.startswith("not running: nothing listening on 127.0.0.1:") for s in skipped.values())
    assert all(r.get("rate") for r in rows if r["contender"] == "ferrymq")
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| scenario | contender |") and len(table) == 1 + len(rows)
    assert sum("| skipped |" in line for line in table) == 2


PUBSUB_PEERS = {"nats-core": 4222, "nats-jetstream": 4222, "rabbitmq-pika": 5672, "rabbitmq-aio-pika": 5672,
                "mosquitto-qos0": 1883, "mosquitto-qos1": 1883}


def test_pubsub_fan_out_counts_every_subscribers_deliveries() -> None:
    """ferrymq (a real queue manager on 127.0.0.1 port 0) and every peer that is running,
    taking turns: a figure only where every subscriber got every publication."""
    done = ferrymq("--scenario", "pubsub", *(a for p in PUBSUB_PEERS for a in ("--only", p)),
                   "--subscribers", "1", "--subscribers", "3", "--durable-subscribers", "2", "--publications", "200",
                   "--persistent-publications", "50", "--repeat", "1", "--time-limit", "60", "--output", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    rows = document["results"]
    assert [r["scenario"] for r in rows if r["contender"] == "ferrymq"] == [
        "pub/sub x1", "pub/sub x3", "persistent pub/sub x2 durable"]
    offered = {"pub/sub x1": PUBSUB_PEERS.keys() - {"nats-jetstream"}, "pub/sub x3": PUBSUB_PEERS.keys() - {
        "nats-jetstream"}, "persistent pub/sub x2 durable": PUBSUB_PEERS.keys() - {"nats-core", "mosquitto-qos0"}}
    for scenario, peers in offered.items():
        assert {r["contender"] for r in rows if r["scenario"] == scenario} == {"ferrymq", *peers}
    for r in rows:
        if r.get("skipped"):
            assert r["contender"] != "ferrymq" and not listening(PUBSUB_PEERS[r["contender"]]), r
            continue
        assert r["subscribers"] == int(r["scenario"].split(" x")[1].split()[0]) and r["guarantee"]
        if r.get("rate"):
            assert r["publications_per_s"] > 0 and not r["notes"]
            assert set(r["cpu_us_per_msg"]) >= {"publisher", "subscriber"}
        else:  # an at-most-once broker may drop: then the note says so, and there is no figure
            assert "lost deliveries" in r["notes"][0], r
    ours = [r for r in rows if r["contender"] == "ferrymq"]
    assert all(r["rate"] and "server" in r["cpu_us_per_msg"] for r in ours), ours
    assert ours[-1]["server_fdatasyncs"] > 0  # the persistent fan-out was synced
    assert {t["scenario"] for t in document["targets"]} == set(offered)


def test_channel_scenario_beside_the_one_qmgr_baseline_and_the_shovel() -> None:
    rows = bench_json("--only", "ferrymq", "--only", "rabbitmq-pika", "--scenario", "channel",
                      "--channel-count", "200")
    by = {(r["scenario"], r["contender"]): r for r in rows}
    for scenario in ("channel persistent", "channel non-persistent"):
        ours = by[(scenario, "ferrymq")]
        assert ours["rate"]["median"] > 0 and not ours["notes"], ours
        assert set(ours["cpu_us_per_msg"]) == {"QM1", "QM2"}
        shovel = by[(scenario, "rabbitmq-shovel")]  # run, or skipped saying why
        assert shovel.get("rate") or shovel.get("skipped"), shovel
    base = by[("channel persistent", "ferrymq put, one qmgr")]
    assert base["rate"]["median"] > 0
    assert base["ferrymq_ratio"] > 0  # the channel's rate / the baseline's
