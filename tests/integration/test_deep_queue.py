"""A deep queue through a real server process: 3000 persistent messages of 64 KiB (192 MiB)
with a 16 MiB paging budget. The server's resident memory stays well below what the queue
holds while it is filled, browsed, restarted and drained, and every message comes back
intact and in order (engine/paging.py; the full-size run is bench/deep_queue_bench.py)."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from qm_process import QueueManagerProcess

import ferrymq.client as fc

COUNT = 3000
SIZE = 64 * 1024
MiB = 1024 * 1024


def body(i: int) -> bytes:
    filler = (i.to_bytes(4, "big") * (SIZE // 4))[: SIZE - 8]
    return i.to_bytes(4, "big") + zlib.crc32(filler).to_bytes(4, "big") + filler


class PeakRss(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.02):
            try:
                with open(f"/proc/{self.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            self.peak = max(self.peak, int(line.split()[1]) * 1024)
            except OSError:
                return

    def __enter__(self) -> PeakRss:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.join()


@pytest.fixture
def qmp(tmp_path: Path) -> Iterator[QueueManagerProcess]:
    p = QueueManagerProcess(tmp_path / "home", create_args=("--persistent-memory", str(16 * MiB),
                                                            "--unsynced-memory", str(8 * MiB))).start()
    p.mqsc("DEFINE QLOCAL(DEEP.Q) MAXDEPTH(100000)\n")
    yield p
    p.stop()


def test_a_queue_larger_than_the_budget_fills_browses_restarts_and_drains(qmp: QueueManagerProcess) -> None:
    with PeakRss(qmp.pid) as fill, fc.connect("QM1", qmp.conn_name) as c:
        q = c.open("DEEP.Q", async_put=True)
        for i in range(COUNT):
            q.put(body(i), persistent=True)
        assert c.stat().failures == 0
        assert q.depth() == COUNT
    with PeakRss(qmp.pid) as browse, fc.connect("QM1", qmp.conn_name) as c:
        seen = [m.data for m in c.open("DEEP.Q").browse()]
        assert len(seen) == COUNT and all(data == body(i) for i, data in enumerate(seen))
        del seen
    qmp.stop()
    qmp.start()
    with PeakRss(qmp.pid) as drain, fc.connect("QM1", qmp.conn_name) as c:
        q = c.open("DEEP.Q")
        n = 0
        while n < COUNT:
            with c.transaction():
                got = q.get_batch(50, max_bytes=4 * MiB - 65536)
            assert got, f"the queue ran dry after {n} messages"
            for m in got:
                assert m.data == body(n), f"message {n} came back wrong"
                n += 1
        assert q.depth() == 0
    total = COUNT * SIZE  # 192 MiB on the queue
    peaks = {"fill": fill.peak, "browse": browse.peak, "drain after restart": drain.peak}
    assert all(0 < peak < total // 2 for peak in peaks.values()), {k: v // MiB for k, v in peaks.items()}
