"""Once and once only across SIGKILL: persistent messages flow QM1 -> QM2 through a
sender/receiver channel while one of the two queue-manager processes, picked at random,
is killed with SIGKILL at a random moment and started again, KILLS times. At the end every
message whose MQPUT was acknowledged is on QM2's queue exactly once, nothing arrived twice,
and the channel is RUNNING again with nothing in doubt, without an operator command. Both
queue managers pipeline (PipeLineLength 2), so up to two batches are in doubt at a kill.

CI runs a small count; the issue's full size (100,000 messages, 20 kills) is::

    FERRYMQ_CHANNEL_KILLS=20 FERRYMQ_CHANNEL_MESSAGES=100000 \\
        pytest -q tests/fault/test_channel_kill.py
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from channel_pair import received_numbers, setup_pair
from qm_process import QueueManagerProcess

import ferrymq.client as fc
from ferrymq.errors import FerryError

KILLS = int(os.environ.get("FERRYMQ_CHANNEL_KILLS", "5"))
MESSAGES = int(os.environ.get("FERRYMQ_CHANNEL_MESSAGES", "1000"))


def put_chunk(qm1: QueueManagerProcess, first: int, count: int, acked: set[int]) -> int:
    """Put messages first.. to QM1's remote queue; the acknowledged ones go in ``acked``.
    Returns the next number (a failed put's number is used up: it may or may not arrive)."""
    i = first
    try:
        with fc.connect("QM1", qm1.conn_name) as c:
            q = c.open("TO.QM2.APP")
            while i < first + count:
                n, i = i, i + 1
                q.put(n.to_bytes(8, "big"), persistent=True)
                acked.add(n)
    except (FerryError, OSError):
        pass
    return i


def depth(qm: QueueManagerProcess, queue: str) -> int:
    out = qm.mqsc(f"DISPLAY QLOCAL({queue}) CURDEPTH")
    return int(out.split("CURDEPTH(")[1].split(")")[0])


@pytest.mark.slow
def test_sigkill_either_end_loses_and_repeats_nothing(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("FERRYMQ_SEED", "19")))
    # PipeLineLength 2 at both ends: two batches may be in doubt when either dies.
    qm1, qm2 = setup_pair(tmp_path, batch=20, create_args={name: ("--pipeline-length", "2") for name in ("QM1", "QM2")})
    acked: set[int] = set()
    next_n = 0
    chunk = max(1, MESSAGES // (KILLS + 1))
    try:
        for _ in range(KILLS):
            next_n = put_chunk(qm1, next_n, chunk, acked)
            time.sleep(rng.uniform(0.0, 0.6))  # the channel is moving that chunk now
            victim = rng.choice((qm1, qm2))
            victim.kill()
            victim.start()
        next_n = put_chunk(qm1, next_n, MESSAGES - next_n, acked)
        deadline = time.monotonic() + 120
        while depth(qm1, "QM2") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert depth(qm1, "QM2") == 0, "\n".join((
            "the transmission queue did not drain", *(qm.log_tail(having=("channel", "listener", "qmgr_started"))
                                                      for qm in (qm1, qm2))))
        received = received_numbers(qm2)
        twice = sorted(n for n, k in received.items() if k > 1)
        assert not twice, f"delivered more than once: {twice[:20]}"
        missing = sorted(acked - set(received))
        assert not missing, f"acknowledged but lost: {missing[:20]}"
        assert set(received) <= set(range(next_n))
        status = qm1.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2) ALL")
        assert "STATUS(RUNNING)" in status and "INDOUBT(NO)" in status
    finally:
        qm1.stop()
        qm2.stop()
