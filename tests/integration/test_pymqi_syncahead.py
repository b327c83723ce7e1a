"""pymqi gets read ahead under syncpoint (ferrymq.pymqi.syncahead) over TCP on 127.0.0.1: what
commit, backout, close, disconnect and other gets make of the messages read ahead, what
other consumers see, the opt-outs, and a consumer killed (SIGKILL) in the middle of a unit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import test_pymqi_async_readahead as readahead
from qm_process import QueueManagerProcess

import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQC

pytestmark = pytest.mark.timeout(120)

SP = pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT)
INPUT = CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD


queues, qmgr = readahead.queues, readahead.qmgr  # the fixtures: its queues (READA.YES ...), a connection
connect = readahead.other


def put_n(qmgr: pymqi.QueueManager, name: str, n: int, start: int = 0) -> None:
    q = pymqi.Queue(qmgr, name, CMQC.MQOO_OUTPUT)
    for i in range(start, start + n):
        q.put(b"m%03d" % i, pymqi.MD(Persistence=CMQC.MQPER_PERSISTENT, CorrelId=b"c%03d" % i))
    q.close()


def get_n(q: pymqi.Queue, n: int, gmo: pymqi.GMO = SP) -> list[bytes]:
    return [q.get(None, pymqi.MD(), gmo) for _ in range(n)]


def drain(queues: EmbeddedQueueManager, name: str) -> list[tuple[bytes, int]]:
    """What another connection finds on the queue: (data, BackoutCount) in order."""
    other = connect(queues)
    q = pymqi.Queue(other, name, CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_NO_READ_AHEAD)
    got = []
    while True:
        md = pymqi.MD()
        try:
            got.append((q.get(None, md), md.BackoutCount))
        except pymqi.MQMIError as exc:
            assert exc.reason == CMQC.MQRC_NO_MSG_AVAILABLE
            other.disconnect()
            return got


def held_ahead(queues: EmbeddedQueueManager) -> int:
    """Gets read ahead in the units of work open at the queue manager."""
    def count() -> int:
        assert queues.qmgr is not None
        return sum(len(c.uow.ahead) for c in queues.qmgr.state.connections.values() if c.uow is not None)
    return queues.run(count)


def warmed(qmgr: pymqi.QueueManager, name: str, unit: int, options: int = INPUT) -> pymqi.Queue:
    """A handle whose last unit of work got ``unit`` messages: it now reads that many ahead."""
    q = pymqi.Queue(qmgr, name, options)
    get_n(q, unit)
    qmgr.commit()
    return q


def names(first: int, last: int) -> list[bytes]:
    return [b"m%03d" % i for i in range(first, last)]


def test_units_get_every_message_once_in_order(qmgr: pymqi.QueueManager, queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 250)
    q = pymqi.Queue(qmgr, "Q1", INPUT)
    got = []
    for _ in range(8):
        got += get_n(q, 30)
        assert held_ahead(queues) > 0 or len(got) <= 60  # from the third unit each reads 30 at once
        qmgr.commit()
    got += get_n(q, 10)
    qmgr.commit()
    assert got == names(0, 250)
    assert drain(queues, "Q1") == []


def test_commit_returns_what_was_read_ahead_and_not_got(qmgr: pymqi.QueueManager,
                                                         queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 40)
    q = warmed(qmgr, "Q1", 20)
    assert get_n(q, 5) == names(20, 25)
    assert held_ahead(queues) == 19  # the first of the 20 is the get's own
    qmgr.commit()
    assert held_ahead(queues) == 0
    assert drain(queues, "Q1") == [(m, 0) for m in names(25, 40)]


def test_backout_counts_a_backout_only_for_what_was_got(qmgr: pymqi.QueueManager,
                                                         queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 30)
    q = warmed(qmgr, "Q1", 10)
    assert get_n(q, 4) == names(10, 14)
    qmgr.backout()
    assert drain(queues, "Q1") == [(m, 1) for m in names(10, 14)] + [(m, 0) for m in names(14, 30)]


def test_close_returns_them_to_other_consumers(qmgr: pymqi.QueueManager, queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 30)
    q = warmed(qmgr, "Q1", 10)
    get_n(q, 3)
    other = connect(queues)
    rival = pymqi.Queue(other, "Q1", CMQC.MQOO_INPUT_SHARED)
    with pytest.raises(pymqi.MQMIError):  # the next 7 are in this unit of work, then 20 more
        for _ in range(21):
            rival.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT))
    other.backout()
    q.close()
    qmgr.commit()
    assert [m for m, _ in drain(queues, "Q1")] == names(13, 30)


def test_a_waiting_consumer_gets_the_messages_returned(qmgr: pymqi.QueueManager,
                                                       queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 20)
    q = warmed(qmgr, "Q1", 10)
    get_n(q, 2)  # and 8 read ahead: the queue is empty for everyone else
    other = connect(queues)
    rival = pymqi.Queue(other, "Q1", CMQC.MQOO_INPUT_SHARED)
    got: list[bytes] = []
    waiter = threading.Thread(target=lambda: got.append(
        rival.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_NO_SYNCPOINT,
                                             WaitInterval=10_000))))
    waiter.start()
    qmgr.commit()
    waiter.join(15)
    assert got == [b"m012"]
    other.disconnect()


def test_a_get_by_correl_id_finds_a_message_read_ahead(qmgr: pymqi.QueueManager,
                                                       queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 30)
    q = warmed(qmgr, "Q1", 10)
    assert get_n(q, 1) == [b"m010"]
    gmo = pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT, MatchOptions=CMQC.MQMO_MATCH_CORREL_ID)
    assert q.get(None, pymqi.MD(CorrelId=b"c015"), gmo) == b"m015"
    assert held_ahead(queues) == 0  # returned before that get
    assert get_n(q, 3) == [b"m011", b"m012", b"m013"]
    qmgr.commit()
    assert [m for m, _ in drain(queues, "Q1")] == [*names(14, 15), *names(16, 30)]


def test_a_browse_and_a_get_outside_syncpoint_see_them_on_the_queue(qmgr: pymqi.QueueManager,
                                                                    queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 30)
    q = warmed(qmgr, "Q1", 10, INPUT | CMQC.MQOO_BROWSE)
    assert get_n(q, 1) == [b"m010"]
    assert q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_BROWSE_FIRST)) == b"m011"
    assert get_n(q, 1) == [b"m011"]
    assert q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"m012"
    qmgr.backout()
    assert [m for m, _ in drain(queues, "Q1")][:3] == [b"m010", b"m011", b"m013"]


def test_disconnect_commits_only_what_was_got(qmgr: pymqi.QueueManager, queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 30)
    q = warmed(qmgr, "Q1", 10)
    get_n(q, 5)
    qmgr.disconnect()  # MQDISC commits the unit of work
    assert drain(queues, "Q1") == [(m, 0) for m in names(15, 30)]


def test_a_message_read_ahead_longer_than_the_buffer_stays_first(qmgr: pymqi.QueueManager,
                                                                 queues: EmbeddedQueueManager) -> None:
    put_n(qmgr, "Q1", 30)
    q = warmed(qmgr, "Q1", 10)
    assert get_n(q, 1) == [b"m010"]
    with pytest.raises(pymqi.MQMIError) as exc:
        q.get(2, pymqi.MD(), SP)
    assert (exc.value.reason, exc.value.message, exc.value.original_length) == (C.MQRC_TRUNCATED_MSG_FAILED, b"m0", 4)
    assert get_n(q, 1) == [b"m011"]
    qmgr.commit()
    assert [m for m, _ in drain(queues, "Q1")] == names(12, 30)


@pytest.mark.parametrize(("name", "options", "reads"), [
    ("Q1", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_NO_READ_AHEAD, False),
    ("Q1", CMQC.MQOO_INPUT_SHARED, False),  # MQOO_READ_AHEAD_AS_Q_DEF on DEFREADA(NO)
    ("READA.DISABLED", INPUT, False),
    ("READA.YES", CMQC.MQOO_INPUT_SHARED, True),
])
def test_the_opt_outs(qmgr: pymqi.QueueManager, queues: EmbeddedQueueManager, name: str, options: int,
                      reads: bool) -> None:
    put_n(qmgr, name, 40)
    q = warmed(qmgr, name, 10, options)
    get_n(q, 2)
    assert (held_ahead(queues) > 0) is reads
    qmgr.commit()
    assert [m for m, _ in drain(queues, name)] == names(12, 40)


def test_expiring_messages_are_got_one_by_one(qmgr: pymqi.QueueManager, queues: EmbeddedQueueManager) -> None:
    q = pymqi.Queue(qmgr, "Q1", CMQC.MQOO_OUTPUT)
    for i in range(20):
        q.put(b"e%02d" % i, pymqi.MD(Persistence=CMQC.MQPER_PERSISTENT, Expiry=600_000))
    r = warmed(qmgr, "Q1", 10)
    md = pymqi.MD()
    assert r.get(None, md, SP) == b"e10" and 0 < md.Expiry <= 600_000
    assert held_ahead(queues) == 0
    qmgr.commit()


# -- a consumer killed in the middle of a unit of work -------------------------------------------

CONSUMER = """
import sys
import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC
qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", sys.argv[1])
q = pymqi.Queue(qm, "SAFE", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_READ_AHEAD)
gmo = pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT | CMQC.MQGMO_WAIT, WaitInterval=5000)
units, unit = int(sys.argv[2]), int(sys.argv[3])
for _ in range(units):
    got = [q.get(None, pymqi.MD(), gmo) for _ in range(unit)]
    qm.commit()
    print("committed", *(m.decode() for m in got), flush=True)
got = [q.get(None, pymqi.MD(), gmo) for _ in range(unit // 2)]
print("holding", *(m.decode() for m in got), flush=True)
sys.stdin.read()  # killed here, half a unit got and the rest read ahead
"""


def test_a_consumer_killed_mid_unit_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    qmp = QueueManagerProcess(tmp_path / "home").start()
    try:
        qmp.mqsc("DEFINE QLOCAL(SAFE) MSGDLVSQ(FIFO)\n")
        total, units, unit = 300, 4, 40
        producer = pymqi.connect("QM1", "DEV.APP.SVRCONN", qmp.conn_name)
        put_n(producer, "SAFE", total)
        proc = subprocess.Popen([sys.executable, "-c", CONSUMER, qmp.conn_name, str(units), str(unit)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
        assert proc.stdout is not None
        committed: list[str] = []
        while True:
            line = proc.stdout.readline().split()
            assert line, "the consumer ended early"
            if line[0] == "holding":
                held = line[1:]
                break
            committed += line[1:]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert len(committed) == units * unit and len(held) == unit // 2
        q = pymqi.Queue(producer, "SAFE", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_NO_READ_AHEAD)
        left: list[tuple[str, int]] = []
        while len(committed) + len(left) < total:
            md = pymqi.MD()
            data = q.get(None, md, pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=10_000))
            left.append((data.decode(), md.BackoutCount))
        with pytest.raises(pymqi.MQMIError):
            q.get(None, pymqi.MD())
        everything = committed + [m for m, _ in left]
        assert sorted(everything) == [m.decode() for m in names(0, total)]  # each once: none lost, none twice
        assert [m for m, _ in left] == [m.decode() for m in names(units * unit, total)]  # in order
        # the half unit the consumer got counts a backout; so, as after any lost connection
        # with a unit of work open, do the messages it had read ahead (docs/pymqi.md)
        assert {m for m, n in left if n == 1} >= set(held)
        producer.disconnect()
    finally:
        qmp.stop()
