"""Publish/subscribe against a real queue-manager process (``ferrymq create/start``, port 0):
a durable subscription whose MQSUB was answered survives SIGKILL with the persistent
publication waiting for it, and the local bindings socket carries publish/subscribe as TCP
does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ferrymq.client as fc

sys.path.insert(0, str(Path(__file__).parent))
from qm_process import QueueManagerProcess


def test_an_answered_durable_subscription_survives_sigkill(tmp_path: Path) -> None:
    qm = QueueManagerProcess(tmp_path / "home", "QM1").start()
    try:
        with fc.connect("QM1", qm.conn_name) as c:
            c.subscribe("orders/#", durable=True, name="ORDERS").close()  # kept: it is durable
            c.publish("orders/42", b"persistent order", persistent=True)
        qm.kill()
        qm.start()
        with fc.connect("QM1", qm.conn_name) as c, c.subscribe("orders/#", durable=True, name="ORDERS") as sub:
            assert sub.get(wait=5.0).data == b"persistent order"
            sub.close(remove=True)
    finally:
        qm.stop()


def test_publish_and_subscribe_through_the_local_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    qm = QueueManagerProcess(home, "QM1").start()
    monkeypatch.setenv("FERRYMQ_HOME", str(home))
    try:
        with fc.connect("QM1") as c, c.subscribe("local/+") as sub:  # no address: the local socket
            c.publish("local/one", b"over the local socket")
            assert sub.get(wait=5.0).data == b"over the local socket"
    finally:
        qm.stop()
