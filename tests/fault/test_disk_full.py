"""A queue manager whose data directory is on a small filesystem that fills up.

The test mounts a 4 MiB tmpfs as FERRYMQ_HOME (root only: CI runs as root; otherwise the
test is skipped), runs a real queue manager there with real clients, and:

1. fills the disk with persistent puts until the journal's reserve is reached: the refused
   put gets MQRC_RESOURCE_PROBLEM (2102) naming the reserve; non-persistent work goes on;
   ``ferrymq list`` shows the journal's state;
2. frees space: persistence resumes without a restart; then fills the disk behind the
   queue manager's back, so that an accepted put's write finds no space (ENOSPC): that put
   waits, new persistent puts are refused with 2102, ``ferrymq list`` says "disk full";
3. frees space again: the waiting put is acknowledged and persistence resumes;
4. checks that the queue holds exactly the acknowledged messages (nothing acknowledged
   lost, nothing refused there), then again after a restart.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ferrymq.client import connect
from ferrymq.errors import MQError
from ferrymq.mq import constants as C

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from qm_process import QueueManagerProcess

KiB = 1024
MSG = 16 * KiB
RESERVE = 512 * KiB
QUEUE = "DISK.Q"


@pytest.fixture
def small_disk(small_tmpfs: Callable[[str], Path]) -> Path:
    return small_tmpfs("4m")


@pytest.fixture
def qm(small_disk: Path) -> Iterator[QueueManagerProcess]:
    qmp = QueueManagerProcess(small_disk)
    config = small_disk / "qmgrs" / "QM1" / "config.json"
    doc = json.loads(config.read_text())
    doc["disk_reserve_bytes"] = RESERVE
    config.write_text(json.dumps(doc))
    qmp.start()
    qmp.mqsc(f"DEFINE QLOCAL({QUEUE}) MAXDEPTH(100000)\n")
    try:
        yield qmp
    finally:
        qmp.stop()


def fill(path: Path) -> None:
    """Take every free byte of the filesystem with a ballast file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for chunk in (64 * KiB, 4 * KiB, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"b" * chunk)
    finally:
        os.close(fd)


def journal_health(qm: QueueManagerProcess) -> dict[str, Any]:
    """What ``ferrymq list --output json`` shows of the journal."""
    (row,) = json.loads(qm._cli("list", "--output", "json"))["queue_managers"]
    health = row.get("journal")
    assert isinstance(health, dict), row
    return health


def journal_state(qm: QueueManagerProcess) -> str:
    """The state in health.json, which ``ferrymq list`` reads (polled: no process per look)."""
    try:
        doc = json.loads((qm.home / "qmgrs" / qm.name / "health.json").read_bytes())
    except (OSError, ValueError):
        return ""
    return str(doc.get("state"))


def wait_for(what: str, check: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def payload(n: int) -> bytes:
    return f"msg-{n:06d}-".encode().ljust(MSG, b"p")


def refused_payload(n: int) -> bytes:
    return f"refused-{n:06d}-".encode().ljust(MSG, b"r")


def assert_resource_problem(exc: MQError, *words: str) -> None:
    assert (exc.comp, exc.reason) == (C.MQCC_FAILED, C.MQRC_RESOURCE_PROBLEM), exc
    for word in words:
        assert word in str(exc), exc


def test_full_disk_refuses_with_2102_loses_nothing_and_recovers_without_restart(
        small_disk: Path, qm: QueueManagerProcess) -> None:
    acked: set[bytes] = set()
    refused = 0
    with connect("QM1", qm.conn_name, timeout=60) as c, c.open(QUEUE) as q, \
            c.open("SYSTEM.DEFAULT.LOCAL.QUEUE") as scratch:
        # 1. Persistent puts until the reserve is reached; a ballast keeps some space to free.
        ballast = small_disk / "ballast"
        ballast.write_bytes(b"b" * 1024 * KiB)
        n = 0
        while True:
            n += 1
            try:
                q.put(payload(n), persistent=True)
            except MQError as exc:
                assert_resource_problem(exc, "disk_reserve_bytes", str(RESERVE))
                break
            acked.add(payload(n)[:10])
            assert n < 400, "the reserve was never reached"
        assert len(acked) > 20
        for _ in range(3):  # every later persistent put is refused too, at once
            refused += 1
            with pytest.raises(MQError) as e:
                q.put(refused_payload(refused), persistent=True)
            assert_resource_problem(e.value, "disk_reserve_bytes")
        scratch.put(b"transient", persistent=False)  # non-persistent work goes on
        assert scratch.get().data == b"transient"
        health = journal_health(qm)
        assert health["state"] == "low_space" and 0 <= health["free_bytes"] < RESERVE + 2 * MSG
        assert "low space since" in qm._cli("list")

        # 2. Space is freed: persistence resumes without a restart.
        ballast.unlink()
        wait_for("the journal to take persistent work again", lambda: journal_state(qm) == "healthy")
        n += 1
        q.put(payload(n), persistent=True)
        acked.add(payload(n)[:10])

        # Then the disk fills behind the queue manager's back: an accepted put finds no space.
        fill(small_disk / "ballast2")
        held: dict[str, Any] = {}
        n += 1
        held_payload = payload(n)

        def put_held() -> None:
            with connect("QM1", qm.conn_name, timeout=60) as c2, c2.open(QUEUE) as q2:
                try:
                    q2.put(held_payload, persistent=True)
                    held["ok"] = True
                except MQError as exc:  # pragma: no cover - reported by the assertion below
                    held["error"] = exc

        putter = threading.Thread(target=put_held)
        putter.start()
        wait_for("the journal to report a full disk", lambda: journal_state(qm) == "disk_full")
        assert putter.is_alive() and not held, "the put whose write found no space must wait, not fail"
        refused += 1
        with pytest.raises(MQError) as e:
            q.put(refused_payload(refused), persistent=True)
        assert_resource_problem(e.value, "disk is full")
        scratch.put(b"transient", persistent=False)
        assert scratch.get().data == b"transient"
        health = journal_health(qm)
        assert health["state"] == "disk_full" and "No space" in health["detail"]
        listing = qm._cli("list")
        assert "disk full since" in listing and "Running" in listing

        # 3. Space is back: the waiting put is acknowledged, and persistence resumes.
        (small_disk / "ballast2").unlink()
        putter.join(timeout=30)
        assert held == {"ok": True}
        acked.add(held_payload[:10])
        wait_for("the journal to be healthy again", lambda: journal_state(qm) == "healthy")
        for _ in range(5):
            n += 1
            q.put(payload(n), persistent=True)
            acked.add(payload(n)[:10])

        # 4. Exactly the acknowledged messages are there.
        assert {m.data[:10] for m in q.browse()} == acked

    log = (small_disk / "qmgrs" / "QM1" / "ferrymq.log").read_text(errors="replace")
    for state in ("low_space", "disk_full", "healthy"):
        assert f"event=journal_state state={state}" in log
    assert "free_bytes=" in log

    qm.stop()
    qm.start()
    with connect("QM1", qm.conn_name) as c, c.open(QUEUE) as q:
        got = [m.data for m in q.messages()]
    assert {d[:10] for d in got} == acked and len(got) == len(acked)
    assert all(d in (payload(int(d[4:10])),) for d in got)
