"""The server's log as an operator meets it: one line per event, in JSON or key=value,
rotated by size (``--log-max-bytes``, ``--log-backups`` at create or alter)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client.sync import connect
from ferrymq.errors import MQError
from ferrymq.mq import constants as C

pytestmark = pytest.mark.timeout(300)


def ferrymq(home: Path, *args: str) -> dict[str, Any]:
    env = dict(os.environ, FERRYMQ_HOME=str(home))
    p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *args, "--output", "json"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def json_events(path: Path) -> list[dict[str, Any]]:
    """Every line of a log file, each of which must be one JSON object with the fixed keys."""
    out = []
    for n, text in enumerate(path.read_text().splitlines(), 1):
        doc = json.loads(text)
        assert isinstance(doc, dict) and {"ts", "level", "logger", "message"} <= set(doc), f"{path}:{n}: {text}"
        out.append(doc)
    return out


def _refused_connection(qm: QueueManagerProcess) -> None:
    with pytest.raises(MQError) as refused:
        connect("QM1", qm.conn_name, user="nobody", password="wrong")
    assert refused.value.reason == C.MQRC_NOT_AUTHORIZED


def _dead_letter(qm: QueueManagerProcess) -> bytes:
    """A COA report whose ReplyToQ does not exist: the queue manager dead-letters it."""
    with connect("QM1", qm.conn_name) as c, c.open("RPT") as q:
        put = q.put(b"asks for a report", report=C.MQRO_COA, reply_to_q="NO.SUCH.QUEUE", persistent=False)
        q.get()
        with c.open("DLQ") as dlq:
            assert dlq.get(wait=5).data.startswith(b"DLH ")
    return put.msg_id


def test_json_lines_name_each_significant_event(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home", create_args=("--log-format", "json")).start()
    try:
        qm.mqsc("DEFINE QLOCAL(APP)\nDEFINE QLOCAL(RPT)\nDEFINE QLOCAL(DLQ)\nALTER QMGR DEADQ(DLQ)\n")
        with connect("QM1", qm.conn_name) as c, c.open("APP") as q:
            for i in range(5):
                q.put(b"kept %d" % i, persistent=True)
        _refused_connection(qm)
        msg_id = _dead_letter(qm)
    finally:
        qm.stop()
    qm.start()
    qm.stop()
    log = qm.home / "qmgrs" / "QM1" / "ferrymq.log"
    events = json_events(log)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_name.setdefault(str(e.get("event")), []).append(e)
    assert len(by_name["start_requested"]) == 2 and len(by_name["qmgr_started"]) == 2
    assert [e["how"] for e in by_name["qmgr_ended"]] == ["normally", "normally"]
    recovered = by_name["recovered"][-1]
    assert recovered["messages"] == 5 and isinstance(recovered["seconds"], float) and recovered["after"] == "end"
    refused = by_name["connect_refused"][0]
    assert refused["user"] == "nobody" and refused["reason"] == C.MQRC_NOT_AUTHORIZED and "wrong" not in log.read_text()
    dead = by_name["message_dead_lettered"][0]
    assert dead["dlq"] == "DLQ" and dead["queue"] == "NO.SUCH.QUEUE" and dead["reason"] == C.MQRC_UNKNOWN_OBJECT_NAME
    assert dead["level"] == "WARNING" and dead["feedback"] == C.MQFB_COA and msg_id.hex() != dead["msg_id"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", e["ts"]) for e in events)


def test_the_log_rotates_at_its_size_and_keeps_its_count(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home", create_args=("--log-format", "json", "--log-max-bytes", "4096",
                                                             "--log-backups", "2")).start()
    try:
        for _ in range(40):  # each connection logs its accept, connect and disconnect
            connect("QM1", qm.conn_name).disconnect()
    finally:
        qm.stop()
    qdir = qm.home / "qmgrs" / "QM1"
    logs = sorted(p.name for p in qdir.glob("ferrymq.log*"))
    assert logs == ["ferrymq.log", "ferrymq.log.1", "ferrymq.log.2"]
    for name in logs:
        path = qdir / name
        assert path.stat().st_mode & 0o777 == 0o600
        lines = path.read_text().splitlines()
        longest = max(len(line) + 1 for line in lines)
        assert path.stat().st_size <= 4096 + longest, name
        json_events(path)
    assert json_events(qdir / "ferrymq.log")[-1]["event"] == "qmgr_ended"
    assert len(json_events(qdir / "ferrymq.log.2")) > 5

    # back to key=value lines, and no rotation left to do for a small run
    altered = ferrymq(qm.home, "alter", "QM1", "--log-format", "text", "--log-max-bytes", "1000000")
    assert altered["log"] == {"format": "text", "max_bytes": 1_000_000, "backups": 2}
    qm.start()
    qm.stop()
    tail = (qdir / "ferrymq.log").read_text().splitlines()
    text_lines = [line for line in tail if not line.startswith("{")]
    assert text_lines and all(re.match(r"ts=\S+ level=[A-Z]+ logger=\S+ (event=\w+|message=\")", line)
                              for line in text_lines)
    assert text_lines[-1].split(" ")[3:5] == ["event=qmgr_ended", "qmgr=QM1"]
