"""``ferrymq status``: a real queue-manager process, a client holding a connection, and the
summary read back as JSON and as text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from qm_process import QueueManagerProcess

import ferrymq.client as fc
from ferrymq.mq import constants as C


def _status(qm: QueueManagerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FERRYMQ_HOME=str(qm.home))
    return subprocess.run([sys.executable, "-m", "ferrymq.cli", "status", qm.name, *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_status_shows_connections_queues_and_the_journal(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home")
    stopped = json.loads(_status(qm, "--output", "json").stdout)
    assert stopped["status"] != "Running" and stopped["queues"] is None and stopped["journal"]["free_bytes"] > 0
    qm.start()
    try:
        qm.mqsc("DEFINE QLOCAL(APP.WORK)\nDEFINE QLOCAL(APP.EMPTY)\n")
        with fc.connect("QM1", qm.conn_name, appl_name="status-test") as client:
            q = client.open("APP.WORK", options=C.MQOO_OUTPUT)
            for i in range(3):
                q.put(f"m{i}".encode(), persistent=True)
            done = _status(qm, "--output", "json")
            assert done.returncode == 0, done.stderr
            doc = json.loads(done.stdout)
            assert doc["ok"] and doc["status"] == "Running" and doc["port"] == qm.port
            queues = {row["queue"]: row for row in doc["queues"]}
            assert queues["APP.WORK"]["depth"] == 3 and queues["APP.WORK"]["output_handles"] == 1
            assert queues["APP.WORK"]["oldest_message_age"] is not None
            assert queues["APP.EMPTY"]["depth"] == 0 and queues["APP.EMPTY"]["oldest_message_age"] is None
            assert not any(name.startswith("SYSTEM.") and not row["depth"] for name, row in queues.items())
            assert not any(name.startswith("FERRYMQ.STATUS.") for name in queues)  # its own reply queue
            assert [c["application"] for c in doc["connections"]] == ["status-test"]
            assert doc["channels"] == []  # none has run
            assert doc["journal"]["bytes"] > 0 and doc["journal"]["files"] >= 1
            text = _status(qm).stdout
            assert "APP.WORK" in text and "status-test" in text and "Journal:" in text
            every = json.loads(_status(qm, "--all", "--output", "json").stdout)
            assert any(row["queue"] == "SYSTEM.DEFAULT.LOCAL.QUEUE" for row in every["queues"])
    finally:
        qm.stop()


def test_status_lists_a_started_channel(tmp_path: Path) -> None:
    from channel_pair import free_port

    qm = QueueManagerProcess(tmp_path / "home").start()
    try:
        qm.mqsc(f"DEFINE QLOCAL(QM2) USAGE(XMITQ)\nDEFINE CHANNEL(TO.QM2) CHLTYPE(SDR) "
                f"CONNAME('127.0.0.1({free_port()})') XMITQ(QM2) SHORTRTY(100) SHORTTMR(1) LONGRTY(0)\n"
                "START CHANNEL(TO.QM2)\n")
        doc = json.loads(_status(qm, "--output", "json").stdout)
        [channel] = doc["channels"]
        assert channel["channel"] == "TO.QM2" and channel["xmitq"] == "QM2"
        assert channel["state"] in ("BINDING", "STARTING", "RETRYING", "INITIALIZING")  # nobody listens there
        assert "TO.QM2" in _status(qm).stdout
    finally:
        qm.stop()
