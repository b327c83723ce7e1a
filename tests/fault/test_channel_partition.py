"""Once and once only across network partitions: QM1 and QM2 run each in a network
namespace of its own, joined by a veth pair on a subnet picked at random; QM2's channel
listener is bound to its veth address (beyond loopback: both queue managers are created
with --allow-unauthenticated-remote, docs/security.md). While persistent messages flow
QM1 -> QM2, the link is taken down and up again CYCLES times, each time long enough for
the sender's receive timeout (twice the negotiated HBINT) to find the connection lost.
The channel retries on its short timer, comes back by itself, and at the end every
message is on QM2 exactly once and the channel RUNNING, without an operator command.

Needs root and iproute2's ``ip`` (CI runs as root); skipped otherwise. Namespaces and
links are removed in a finalizer, whatever happened. The full size::

    FERRYMQ_PARTITION_CYCLES=20 FERRYMQ_PARTITION_MESSAGES=20000 \\
        pytest -q tests/fault/test_channel_partition.py
"""

from __future__ import annotations

import os
import random
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from qm_process import QueueManagerProcess

import ferrymq.client as fc
from ferrymq.errors import FerryError

CYCLES = int(os.environ.get("FERRYMQ_PARTITION_CYCLES", "4"))
MESSAGES = int(os.environ.get("FERRYMQ_PARTITION_MESSAGES", "3000"))
DOWN, UP = 3.5, 2.0  # seconds: DOWN > 2 x HBINT(1), the sender's receive timeout


def ip(*args: str) -> None:
    p = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, f"ip {' '.join(args)}: {p.stderr.strip()}"


@dataclass(frozen=True)
class Link:
    """Two namespaces joined by one veth pair: ``ns[i]`` holds ``dev[i]`` with ``addr[i]``."""

    ns: tuple[str, str]
    dev: tuple[str, str]
    addr: tuple[str, str]

    def set(self, side: int, state: str) -> None:
        ip("-n", self.ns[side], "link", "set", self.dev[side], state)


@pytest.fixture
def link() -> Iterator[Link]:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (CI runs as root)")
    if shutil.which("ip") is None:
        pytest.skip("iproute2's 'ip' tool is not installed: no network namespaces")
    tag = secrets.token_hex(3)
    rng = random.SystemRandom()
    net = f"10.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}"
    made = Link((f"fmq{tag}a", f"fmq{tag}b"), (f"fmq{tag}a", f"fmq{tag}b"), (f"{net}.1", f"{net}.2"))
    try:
        for ns in made.ns:
            ip("netns", "add", ns)
        ip("link", "add", made.dev[0], "type", "veth", "peer", "name", made.dev[1])
        for side in (0, 1):
            ns, dev = made.ns[side], made.dev[side]
            ip("link", "set", dev, "netns", ns)
            ip("-n", ns, "addr", "add", f"{made.addr[side]}/24", "dev", dev)
            ip("-n", ns, "link", "set", dev, "up")
            ip("-n", ns, "link", "set", "lo", "up")  # each queue manager's client port is on its own loopback
        yield made
    finally:
        for ns in made.ns:  # deleting a namespace deletes the veth end in it, and so its peer
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)
        subprocess.run(["ip", "link", "del", made.dev[0]], capture_output=True, timeout=20)


def status(qm: QueueManagerProcess, channel: str) -> str:
    out = qm.mqsc(f"DISPLAY CHSTATUS({channel})")
    m = re.search(r"\bSTATUS\((\w+)\)", out)
    return m.group(1) if m else "INACTIVE"


def wait_for(check: object, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}: not in {timeout} s")


def put_all(acked: list[int], stop: threading.Event) -> None:
    """Persistent puts to QM1's remote queue, through its local socket (the partition is
    between the queue managers, not between QM1 and its application)."""
    with fc.connect("QM1") as c:
        q = c.open("TO.QM2.APP")
        for n in range(MESSAGES):
            if stop.is_set():
                return
            q.put(n.to_bytes(8, "big"), persistent=True)
            acked.append(n)
            time.sleep(0.002)


@pytest.mark.slow
def test_partitions_lose_and_repeat_nothing(tmp_path: Path, link: Link, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERRYMQ_HOME", str(tmp_path))
    remote = ("--allow-unauthenticated-remote", "--pipeline-length", "2")  # up to two batches in doubt at a cut
    qm1 = QueueManagerProcess(tmp_path, "QM1", remote, netns=link.ns[0])
    qm2 = QueueManagerProcess(tmp_path, "QM2", remote, netns=link.ns[1])
    stop = threading.Event()
    putter: threading.Thread | None = None
    try:
        qm1.start()
        qm2.start()
        qm2.mqsc(f"""
DEFINE LISTENER(CHL.LISTENER) TRPTYPE(TCP) IPADDR('{link.addr[1]}') PORT(0) CONTROL(QMGR)
DEFINE CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) HBINT(1)
DEFINE QLOCAL(APP.IN) MAXDEPTH(999999999)
START LISTENER(CHL.LISTENER)
""")
        wait_for(lambda: "STATUS(RUNNING)" in qm2.mqsc("DISPLAY LSSTATUS(CHL.LISTENER)"), "QM2's listener")
        port = re.search(r"\bPORT\((\d+)\)", qm2.mqsc("DISPLAY LSSTATUS(CHL.LISTENER) PORT"))
        assert port is not None and int(port.group(1)) > 0
        qm1.mqsc(f"""
DEFINE QLOCAL(QM2) USAGE(XMITQ)
DEFINE CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) CONNAME('{link.addr[1]}({port.group(1)})') XMITQ(QM2) +
       BATCHSZ(20) HBINT(1) DISCINT(0) SHORTRTY(1000) SHORTTMR(1) LONGRTY(0)
DEFINE QREMOTE(TO.QM2.APP) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)
""")
        acked: list[int] = []
        putter = threading.Thread(target=put_all, args=(acked, stop), daemon=True)
        putter.start()
        wait_for(lambda: status(qm1, "QM1.TO.QM2") == "RUNNING", "the channel's first start")
        seen: Counter[str] = Counter()
        for cycle in range(CYCLES):
            side = cycle % 2  # the sender's end, then the receiver's
            link.set(side, "down")
            deadline = time.monotonic() + DOWN
            while time.monotonic() < deadline:
                seen[status(qm1, "QM1.TO.QM2")] += 1
                time.sleep(0.2)
            link.set(side, "up")
            time.sleep(UP)
        print("statuses seen during the partitions:", dict(seen))
        assert seen["RETRYING"], f"the channel never retried during a partition: {dict(seen)}"
        putter.join(timeout=60)
        assert not putter.is_alive(), "the puts did not finish"
        assert len(acked) == MESSAGES
        wait_for(lambda: "CURDEPTH(0)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH"), "QM1's transmission queue "
                 "drained", timeout=60)
        received: Counter[int] = Counter()
        with fc.connect("QM2") as c:
            q = c.open("APP.IN")
            while True:
                try:
                    received[int.from_bytes(q.get(wait=2.0).data, "big")] += 1
                except FerryError:
                    break
        twice = sorted(n for n, k in received.items() if k > 1)
        assert not twice, f"delivered more than once: {twice[:20]}"
        missing = sorted(set(acked) - set(received))
        assert not missing, f"lost: {len(missing)}, first {missing[:20]}"
        shown = qm1.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2) ALL")
        assert "STATUS(RUNNING)" in shown and "INDOUBT(NO)" in shown, shown
    finally:
        stop.set()
        if putter is not None:
            putter.join(timeout=10)
        qm1.stop()
        qm2.stop()
