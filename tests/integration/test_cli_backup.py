"""``ferrymq backup`` and ``ferrymq restore`` run as a user runs them: a stopped queue
manager backed up, restored into another FERRYMQ_HOME (another machine, as far as it can
tell) under another name, started, and its messages, users and authorities found intact."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from qm_process import QueueManagerProcess

from ferrymq.client.sync import connect
from ferrymq.errors import MQError
from ferrymq.mq import constants as C

pytestmark = pytest.mark.timeout(300)


def ferrymq(home: Path, *args: str, code: int = 0) -> dict[str, Any]:
    env = dict(os.environ, FERRYMQ_HOME=str(home))
    p = subprocess.run([sys.executable, "-m", "ferrymq.cli", *args, "--output", "json"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == code, f"ferrymq {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def _snapshot(conn_name: str, qmgr: str, queue: str) -> list[tuple[bytes, bytes, list[Any]]]:
    with connect(qmgr, conn_name) as c, c.open(queue, options=C.MQOO_BROWSE) as q:
        return [(m.md.replace(expiry=0).pack(), m.data, list(m.properties.typed_items())) for m in q.browse()]


@pytest.fixture
def stopped(tmp_path: Path) -> QueueManagerProcess:
    """QM1 with a queue of persistent messages, a user and an authority record; stopped."""
    qm = QueueManagerProcess(tmp_path / "home1").start()
    try:
        qm.mqsc("DEFINE QLOCAL(KEEP)\n")
        qm.add_user("app", "app-password")
        ferrymq(qm.home, "setmqaut", "QM1", "-t", "queue", "-n", "KEEP", "-p", "app", "+browse", "+inq")
        ferrymq(qm.home, "setmqaut", "QM1", "-t", "qmgr", "-p", "app", "+connect")
        with connect("QM1", qm.conn_name) as c, c.open("KEEP") as q:
            for i in range(300):
                q.put(b"kept %d" % i * (i % 50), persistent=True, properties={"usr.n": i, "usr.s": f"v{i}"},
                      correl_id=bytes([i % 256]) * 24, priority=i % 10)
        qm.snapshot = _snapshot(qm.conn_name, "QM1", "KEEP")  # type: ignore[attr-defined]
    finally:
        qm.stop()
    return qm


def test_backup_restores_into_another_home_and_runs(stopped: QueueManagerProcess, tmp_path: Path) -> None:
    archive = tmp_path / "qm1.tar"
    done = ferrymq(stopped.home, "backup", "QM1", "--file", str(archive))
    assert done["files"] >= 3 and archive.stat().st_mode & 0o777 == 0o600
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("MANIFEST.json").read())  # type: ignore[union-attr]
    assert {"qmgr/config.json", "qmgr/users.json"} <= set(names)
    assert not {"qmgr/run.lock", "qmgr/ferrymq.pid", "qmgr/qmgr.sock", "qmgr/journal/LOCK"} & set(names)
    assert all(len(f["sha256"]) == 64 for f in manifest["files"]) and manifest["queue_manager"] == "QM1"

    home2 = tmp_path / "elsewhere"
    restored = ferrymq(home2, "restore", str(archive))
    assert restored["queue_manager"] == "QM1"
    data_dir = home2 / "qmgrs" / "QM1"
    for path in [data_dir, *data_dir.rglob("*")]:
        assert path.stat().st_mode & 0o777 == (0o700 if path.is_dir() else 0o600), path
    assert not (home2 / ".restoring").exists()
    conn = f"127.0.0.1({ferrymq(home2, 'start', 'QM1')['port']})"
    try:
        assert _snapshot(conn, "QM1", "KEEP") == stopped.snapshot  # type: ignore[attr-defined]
        # the users and their authorities came along: app may browse KEEP, and not put to it
        with connect("QM1", conn, user="app", password="app-password") as c:
            with c.open("KEEP", options=C.MQOO_BROWSE) as q:
                assert len(list(q.browse())) == 300
            with pytest.raises(MQError) as refused:
                c.open("KEEP", options=C.MQOO_OUTPUT)
            assert refused.value.reason == C.MQRC_NOT_AUTHORIZED
    finally:
        ferrymq(home2, "stop", "QM1")

    # the same backup beside it under another name and port: its own queue manager, the same messages
    renamed = ferrymq(home2, "restore", str(archive), "--name", "QM2", "--port", "0")
    assert renamed["queue_manager"] == "QM2" and renamed["from_queue_manager"] == "QM1"
    assert json.loads((home2 / "qmgrs" / "QM2" / "config.json").read_text())["name"] == "QM2"
    conn = f"127.0.0.1({ferrymq(home2, 'start', 'QM2')['port']})"
    try:
        assert _snapshot(conn, "QM2", "KEEP") == stopped.snapshot  # type: ignore[attr-defined]
        # app's record on the queue manager object followed the name: app still connects
        with connect("QM2", conn, user="app", password="app-password") as c, \
                c.open("KEEP", options=C.MQOO_BROWSE) as q:
            assert len(list(q.browse())) == 300
        shown = ferrymq(home2, "dspmqaut", "QM2", "-t", "qmgr", "-p", "app")
        assert "connect" in json.dumps(shown).lower(), shown
    finally:
        ferrymq(home2, "stop", "QM2")
    again = ferrymq(home2, "restore", str(archive), "--name", "QM2", code=8)
    assert again["error"]["rule"] == "qmgr_exists"


def test_backup_of_a_running_queue_manager_is_refused(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home").start()
    try:
        doc = ferrymq(qm.home, "backup", "QM1", "--file", str(tmp_path / "x.tar"), code=5)
    finally:
        qm.stop()
    assert doc["error"]["rule"] == "qmgr_running"
    assert "running" in doc["error"]["message"] and "stop" in doc["error"]["message"]
    assert not (tmp_path / "x.tar").exists()


def _rewrite(src: Path, dst: Path, change: Any) -> None:
    """Copy tar ``src`` to ``dst``, passing each (TarInfo, data) through ``change``."""
    with tarfile.open(src) as tin, tarfile.open(dst, "w") as tout:
        for m in tin.getmembers():
            data = tin.extractfile(m).read()  # type: ignore[union-attr]
            for info, body in change(m, data):
                tout.addfile(info, io.BytesIO(body) if body is not None else None)


def test_a_damaged_or_hostile_archive_restores_nothing(stopped: QueueManagerProcess, tmp_path: Path) -> None:
    archive = tmp_path / "qm1.tar"
    ferrymq(stopped.home, "backup", "QM1", "--file", str(archive))
    home2 = tmp_path / "other"

    def flip(m: tarfile.TarInfo, data: bytes) -> list[tuple[tarfile.TarInfo, bytes | None]]:
        if m.name.endswith(".seg"):
            data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
        return [(m, data)]

    def escape(m: tarfile.TarInfo, data: bytes) -> list[tuple[tarfile.TarInfo, bytes | None]]:
        out: list[tuple[tarfile.TarInfo, bytes | None]] = [(m, data)]
        if m.name == "qmgr/config.json":
            evil = tarfile.TarInfo("qmgr/../../evil")
            evil.size = 4
            out.append((evil, b"evil"))
        return out

    def link(m: tarfile.TarInfo, data: bytes) -> list[tuple[tarfile.TarInfo, bytes | None]]:
        if m.name == "qmgr/users.json":
            m = tarfile.TarInfo(m.name)
            m.type, m.linkname = tarfile.SYMTYPE, "/etc/passwd"
            return [(m, None)]
        return [(m, data)]

    cases = {"flipped": (flip, "SHA-256"), "escape": (escape, "disagree"), "link": (link, "regular file")}
    for label, (change, words) in cases.items():
        bad = tmp_path / f"{label}.tar"
        _rewrite(archive, bad, change)
        err = ferrymq(home2, "restore", str(bad), code=23)["error"]
        assert err["rule"] == "backup_damaged" and words in err["message"], (label, err)
        assert not (home2 / "qmgrs" / "QM1").exists() and not (tmp_path / "evil").exists()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    err = ferrymq(home2, "restore", str(cut), code=23)["error"]
    assert err["rule"] == "backup_damaged"
    assert not (home2 / "qmgrs" / "QM1").exists()
