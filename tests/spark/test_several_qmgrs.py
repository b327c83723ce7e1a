"""A read over several queue managers (option queueManagers): partitions per queue manager
and per queue, streaming offsets per queue manager and queue (each queue manager numbers
its own messages), removal on each after Spark's commit. Two real queue-manager processes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client import connect

pytestmark = pytest.mark.timeout(600)
QUEUES = ("MQ.A", "MQ.B")


@pytest.fixture(scope="module")
def qm2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueueManagerProcess]:
    p = QueueManagerProcess(tmp_path_factory.mktemp("spark-qm2") / "home", name="QM2").start()
    p.mqsc("".join(f"DEFINE QLOCAL({q})\n" for q in QUEUES) + "DEFINE CHANNEL(SPARK.SVRCONN) CHLTYPE(SVRCONN)\n")
    yield p
    p.kill()


def _put(qmp: QueueManagerProcess, queue: str, payloads: list[str]) -> None:
    with connect(qmp.name, qmp.conn_name) as c, c.open(queue) as q:
        for p in payloads:
            q.put(p.encode(), persistent=True)


def _both(qmp: QueueManagerProcess, qm2: QueueManagerProcess) -> dict[str, str]:
    return {"queueManagers": f"QM1={qmp.conn_name};QM2={qm2.conn_name}", "channel": "SPARK.SVRCONN"}


def test_a_batch_read_splits_per_queue_manager_and_queue(spark: Any, qmp: QueueManagerProcess,
                                                        qm2: QueueManagerProcess) -> None:
    qmp.mqsc("".join(f"DEFINE QLOCAL({q})\n" for q in QUEUES))
    sent = []
    for p in (qmp, qm2):
        for q in QUEUES:
            names = [f"{p.name}-{q}-{i}" for i in range(5)]
            _put(p, q, names)
            sent += names
    df = spark.read.format("ferrymq").options(**_both(qmp, qm2), queue=",".join(QUEUES)).load()
    assert df.rdd.getNumPartitions() == 4  # one per queue manager and queue
    rows = df.select("queue_manager", "queue", "seq", "payload").collect()
    assert sorted(r.payload.decode() for r in rows) == sorted(sent)
    assert all(r.payload.decode().startswith(f"{r.queue_manager}-{r.queue}-") for r in rows)  # where each came from
    # Each queue manager numbers its own messages: the same sequence numbers on both.
    assert sorted(r.seq for r in rows if r.payload.startswith(b"QM2-MQ.A")) == sorted(
        r.seq for r in rows if r.payload.startswith(b"QM1-MQ.A"))
    assert spark.read.format("ferrymq").options(**_both(qmp, qm2), queue="MQ.A", minPartitions="4").load(
        ).rdd.getNumPartitions() == 4


def test_streaming_offsets_track_each_queue_manager(spark: Any, qmp: QueueManagerProcess, qm2: QueueManagerProcess,
                                                    ferry: dict[str, str], tmp_path: Path) -> None:
    def run() -> list[dict[str, Any]]:
        df = spark.readStream.format("ferrymq").options(**_both(qmp, qm2), queue="MQ.S",
                                                        maxMessagesPerTrigger="7").load()
        q = (df.select("payload").writeStream.format("ferrymq").options(**ferry, queue="MQ.SINK")
             .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
        q.awaitTermination(300)
        assert q.exception() is None, q.exception()
        return [p for p in q.recentProgress if p["numInputRows"] > 0]

    qmp.mqsc("DEFINE QLOCAL(MQ.S)\nDEFINE QLOCAL(MQ.SINK)\n")
    qm2.mqsc("DEFINE QLOCAL(MQ.S)\n")
    _put(qmp, "MQ.S", [f"one-{i}" for i in range(10)])
    _put(qm2, "MQ.S", [f"two-{i}" for i in range(4)])
    progress = run()
    first = progress[0]["sources"][0]
    end, latest = (json.loads(x) if isinstance(x, str) else x for x in (first["endOffset"], first["latestOffset"]))
    assert sorted(end["queues"]) == sorted(latest["queues"]) == ["QM1:MQ.S", "QM2:MQ.S"]
    # The progress shows the lag: what is on each queue beyond the batch (7 of 14 read).
    assert sum(latest["queues"][k] - end["queues"][k] for k in end["queues"]) == 14 - 7
    with connect("QM1", qmp.conn_name) as c, c.open("MQ.SINK") as sink:
        assert sorted(m.data.decode() for m in sink.browse()) == sorted(
            [f"one-{i}" for i in range(10)] + [f"two-{i}" for i in range(4)])
    # Only QM2 gets more: the next run reads just those, from QM2's own position.
    _put(qm2, "MQ.S", [f"two-{i}" for i in range(4, 9)])
    progress = run()
    assert sum(p["numInputRows"] for p in progress) == 5
    with connect("QM1", qmp.conn_name) as c:
        with c.open("MQ.SINK") as sink:
            got = sorted(m.data.decode() for m in sink.browse())
        assert got == sorted([f"one-{i}" for i in range(10)] + [f"two-{i}" for i in range(9)])  # each once
        assert c.queue_range("MQ.S").depth == 0  # removed after Spark's commit, on each
    with connect("QM2", qm2.conn_name) as c:
        # The run's last batch goes once Spark has committed it (in this run or the next).
        assert c.queue_range("MQ.S").depth in (0, 5)
        assert [(r.reader, r.acked_seq >= 4) for r in c.reader_positions("MQ.S")] == [("spark", True)]
