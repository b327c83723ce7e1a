"""Once and once only across SIGKILL with two batches in doubt and a third on the wire
(issue 19, docs/distributed.md "Pipelining"): QM2 is frozen (SIGSTOP) while 30 persistent
messages leave QM1 in batches of 10, so no CONFIRM comes back. QM1, pipelining, prepares
two batches and sends the third batch's messages, then waits for the first CONFIRM
(DISPLAY CHSTATUS: CURSEQNO three past LSTSEQNO). QM1 is then killed with SIGKILL, and QM2
either killed too while frozen (it read nothing of the three batches) or let go first (it
commits the first two and puts the third in a unit the broken connection backs out). Both
start again: every message is on QM2's queue exactly once, the channel RUNNING with
nothing in doubt, without an operator command.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from channel_pair import received_numbers, setup_pair, wait_for
from qm_process import QueueManagerProcess

import ferrymq.client as fc

CHANNEL = "QM1.TO.QM2"


def status(qm: QueueManagerProcess) -> str:
    return qm.mqsc(f"DISPLAY CHSTATUS({CHANNEL}) ALL", check=False)


def field(text: str, name: str) -> int:
    return int(text.split(f" {name}(")[1].split(")")[0]) if f" {name}(" in text else -1


def put_unit(qm1: QueueManagerProcess, first: int, count: int) -> None:
    """``count`` persistent messages in one unit of work: on the transmission queue at once."""
    with fc.connect("QM1", qm1.conn_name) as c:
        q = c.open("TO.QM2.APP")
        for n in range(first, first + count):
            q.put(n.to_bytes(8, "big"), persistent=True, syncpoint=True)
        c.commit()


def third_batch_out(qm1: QueueManagerProcess) -> bool:
    text = status(qm1)
    return field(text, "CURSEQNO") == field(text, "LSTSEQNO") + 3 and "INDOUBT(YES)" in text


@pytest.mark.slow
@pytest.mark.parametrize("receiver", ["killed-frozen", "let-go-first"])
def test_sigkill_with_two_batches_in_doubt_and_a_third_sent(tmp_path: Path, receiver: str) -> None:
    qm1, qm2 = setup_pair(tmp_path, batch=10,
                          create_args={name: ("--pipeline-length", "2") for name in ("QM1", "QM2")})
    # HBINT(60): QM1 waits two minutes for the CONFIRM QM2 cannot send while frozen.
    qm1.mqsc(f"ALTER CHANNEL({CHANNEL}) CHLTYPE(SDR) HBINT(60)")
    try:
        put_unit(qm1, 0, 1)
        wait_for(lambda: "STATUS(RUNNING)" in status(qm1) and "INDOUBT(NO)" in status(qm1))
        os.kill(qm2.pid, signal.SIGSTOP)
        try:
            put_unit(qm1, 1, 30)
            wait_for(lambda: third_batch_out(qm1))
            qm1.kill()
            if receiver == "let-go-first":
                os.kill(qm2.pid, signal.SIGCONT)
                time.sleep(1.0)  # it reads the three batches, commits two, and finds QM1 gone
            qm2.kill()
        finally:
            with contextlib.suppress(ProcessLookupError):  # a failing wait must not leave it frozen
                os.kill(qm2.pid, signal.SIGCONT)
        qm2.start()
        qm1.start()
        wait_for(lambda: "STATUS(RUNNING)" in status(qm1) and "INDOUBT(NO)" in status(qm1)
                 and "CURDEPTH(0)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH"))
        got = received_numbers(qm2)
        assert sorted(got) == list(range(31)), f"lost: {sorted(set(range(31)) - set(got))}"
        assert not [n for n, k in got.items() if k > 1], f"delivered more than once: {got}"
    finally:
        qm1.stop()
        qm2.stop()
