"""Sequence-range access (browse, range, remove-up-to with reader positions) and prepared
units of work resolved by XID, including across a crash and restart of the engine."""

from __future__ import annotations

import pytest
from engine_helpers import Env, reason_of

from ferrymq.engine import sequence_access as S
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C

P = C.MQPER_PERSISTENT


def restart(env: Env) -> None:
    env.journal.sync()
    env.journal = env.journal.crash()
    env.qm = QueueManager.start("QM1", env.journal, env.clock)
    env.hconn = env.qm.connect()


def fill(env: Env, name: str, n: int, **md: object) -> int:
    h = env.open(name)
    for i in range(n):
        env.put(h, b"m%d" % i, persistence=P, **md)
    return h


def test_range_browse_and_remove_upto(env: Env) -> None:
    env.define("Q1", MSGDLVSQ="FIFO")
    fill(env, "Q1", 10)
    rng = S.queue_range(env.qm, "Q1")
    assert (rng.first_seq, rng.last_seq, rng.depth) == (1, 10, 10)
    got = S.browse_range(env.qm, "Q1", 3, 7)
    assert [m.seq for m in got] == [3, 4, 5, 6] and got[0].body(100) == b"m2"
    assert [m.seq for m in S.browse_range(env.qm, "Q1", 1, 11, max_msgs=2)] == [1, 2]
    assert len(S.browse_range(env.qm, "Q1", 1, 11, max_bytes=1)) == 1  # always advances
    assert env.depth("Q1") == 10  # browsing removes nothing
    assert S.remove_upto(env.qm, "Q1", 4, "spark-a") == 4
    assert S.remove_upto(env.qm, "Q1", 4, "spark-a") == 0  # idempotent
    assert S.remove_upto(env.qm, "Q1", 2, "spark-a") == 0
    assert env.depth("Q1") == 6
    assert S.reader_positions(env.qm, "Q1") == [("spark-a", 4, 6)]
    assert S.queue_range(env.qm, "Q1").first_seq == 5


def test_priority_queue_browses_in_sequence_order(env: Env) -> None:
    env.define("QP")
    h = env.open("QP")
    for prio in (1, 9, 5):
        env.put(h, b"p%d" % prio, priority=prio)
    assert [m.body(9) for m in S.browse_range(env.qm, "QP", 0, 100)] == [b"p1", b"p9", b"p5"]


@pytest.mark.parametrize("fifo", [False, True])
def test_ranges_narrow_and_wide_pick_the_same_messages(env: Env, fifo: bool) -> None:
    # A priority queue walks a range's numbers when it is narrow and picks from the whole
    # queue when it is wide; either way: the committed messages in range, in sequence order.
    env.define("QR", **({"MSGDLVSQ": "FIFO"} if fifo else {}))
    h = env.open("QR")
    for i in range(60):
        env.put(h, b"r%d" % i, priority=(i * 7) % 10)
    S.remove_upto(env.qm, "QR", 20, "gaps")
    for i in range(30, 40):  # holes in the middle too
        env.qm.objects.find("QR").messages.remove(env.qm.objects.find("QR").messages.by_seq[i])  # type: ignore[union-attr]
    live = sorted(env.qm.objects.find("QR").messages.by_seq)  # type: ignore[union-attr]
    for lo, hi in [(0, 10), (0, 1000), (15, 35), (21, 22), (39, 61), (50, 1 << 40), (5, 5)]:
        assert [m.seq for m in S.browse_range(env.qm, "QR", lo, hi)] == [s for s in live if lo <= s < hi], (lo, hi)
    assert [m.seq for m in S.browse_range(env.qm, "QR", 0, 1000, max_msgs=3)] == live[:3]
    assert S.remove_upto(env.qm, "QR", 45, "gaps") == len([s for s in live if s <= 45])


def test_uncommitted_put_holds_back_last_seq(env: Env) -> None:
    env.define("Q1", MSGDLVSQ="FIFO")
    h = fill(env, "Q1", 2)
    other = env.qm.connect()
    ho = env.open("Q1", hconn=other)
    env.put(ho, b"in-flight", hconn=other, pmo=C.MQPMO_SYNCPOINT)
    env.put(h, b"later")
    rng = S.queue_range(env.qm, "Q1")
    assert rng.last_seq == 2 and rng.depth == 4
    assert S.remove_upto(env.qm, "Q1", 100, "r") == 2  # never beyond the stable mark
    env.qm.commit(other)
    assert S.queue_range(env.qm, "Q1").last_seq == 4
    assert [m.body(20) for m in S.browse_range(env.qm, "Q1", 3, 5)] == [b"in-flight", b"later"]


def test_reader_position_survives_restart(env: Env) -> None:
    env.define("Q1", MSGDLVSQ="FIFO")
    fill(env, "Q1", 5)
    S.remove_upto(env.qm, "Q1", 3, "r1")
    restart(env)
    assert S.reader_positions(env.qm, "Q1") == [("r1", 3, 2)]
    assert [m.seq for m in S.browse_range(env.qm, "Q1", 0, 100)] == [4, 5]


def test_bad_calls_change_nothing(env: Env) -> None:
    env.define("Q1")
    fill(env, "Q1", 2)
    with pytest.raises(MQError) as e:
        S.queue_range(env.qm, "NOPE")
    assert reason_of(e) == (C.MQCC_FAILED, C.MQRC_UNKNOWN_OBJECT_NAME)
    with pytest.raises(MQError) as e:
        S.browse_range(env.qm, "Q1", 5, 2)
    assert reason_of(e) == (C.MQCC_FAILED, C.MQRC_OPTIONS_ERROR)
    with pytest.raises(MQError) as e:
        S.remove_upto(env.qm, "Q1", 2, "")
    assert reason_of(e) == (C.MQCC_FAILED, C.MQRC_OPTIONS_ERROR)
    assert env.depth("Q1") == 2


def test_prepare_then_other_connection_commits(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"staged", persistence=P, pmo=C.MQPMO_SYNCPOINT)
    assert env.qm.prepare(env.hconn, b"q1-b7-p0") == 1
    env.qm.disconnect(env.hconn)  # the executor goes away; the unit stays in doubt
    coord = env.qm.connect()
    assert list(env.qm.in_doubt) == [b"q1-b7-p0"]
    with pytest.raises(MQError) as e:
        env.qm.prepare(coord, b"q1-b7-p0")
    assert reason_of(e) == (C.MQCC_FAILED, C.MQRC_UOW_NOT_AVAILABLE)
    assert env.qm.resolve(coord, b"q1-b7-p0", commit=True)
    assert not env.qm.resolve(coord, b"q1-b7-p0", commit=True)  # asked again: harmless
    assert env.depth("Q1") == 1
    env.hconn = coord
    assert env.get(env.open("Q1")).data == b"staged"


def test_prepared_units_survive_a_crash_then_resolve(env: Env) -> None:
    env.define("QIN")
    env.define("QOUT")
    fill(env, "QIN", 2)
    hin, hout = env.open("QIN"), env.open("QOUT")
    got = env.get(hin, C.MQGMO_SYNCPOINT | C.MQGMO_NO_WAIT)
    env.put(hout, b"out-" + got.data, persistence=P, pmo=C.MQPMO_SYNCPOINT)
    env.qm.prepare(env.hconn, b"X1")
    env.put(hout, b"other", persistence=P, pmo=C.MQPMO_SYNCPOINT)
    env.qm.prepare(env.hconn, b"X2")
    restart(env)
    assert sorted(env.qm.in_doubt) == [b"X1", b"X2"]
    assert (env.depth("QIN"), env.depth("QOUT")) == (2, 2)  # in-doubt work still counts
    assert S.queue_range(env.qm, "QOUT").last_seq == 0  # invisible, and it holds back the mark
    assert env.qm.resolve(env.hconn, b"X1", commit=True)
    assert env.qm.resolve(env.hconn, b"X2", commit=False)
    restart(env)
    assert env.qm.in_doubt == {}
    assert (env.depth("QIN"), env.depth("QOUT")) == (1, 1)
    assert env.get(env.open("QOUT")).data == b"out-m0"
    assert env.get(env.open("QIN")).data == b"m1"


def test_remove_upto_takes_browse_cursors_off_the_removed_messages_only(env: Env) -> None:
    # Two handles browse: one stands on a message the removal takes, one beyond it; the
    # first's cursor comes off (no message under it, none kept alive by the handle), the
    # second's stays where it is.
    env.define("QC", MSGDLVSQ="FIFO")
    h1 = fill(env, "QC", 6)
    h2 = env.open("QC")
    assert env.get(h1, C.MQGMO_BROWSE_FIRST).data == b"m0"
    for _ in range(5):
        env.get(h2, C.MQGMO_BROWSE_NEXT)
    assert env.get(h2, C.MQGMO_BROWSE_MSG_UNDER_CURSOR).data == b"m4"
    assert S.remove_upto(env.qm, "QC", 3, "r") == 3
    assert env.qm.handles[h1].under_cursor is None and env.qm.handles[h2].under_cursor is not None
    with pytest.raises(MQError) as e:
        env.get(h1, C.MQGMO_BROWSE_MSG_UNDER_CURSOR)
    assert reason_of(e) == (C.MQCC_FAILED, C.MQRC_NO_MSG_UNDER_CURSOR)
    assert env.get(h2, C.MQGMO_MSG_UNDER_CURSOR).data == b"m4"
    assert env.get(h1, C.MQGMO_BROWSE_NEXT).data == b"m3"


@pytest.mark.parametrize("fifo", [False, True])
@pytest.mark.parametrize("expiring", [False, True])
def test_a_page_is_cut_by_count_and_bytes_as_message_by_message(env: Env, fifo: bool, expiring: bool) -> None:
    # Where nothing on the queue expires a page is taken in a few passes; with an expiry on
    # the queue, message by message. Both keep to the count, the bytes with the overhead,
    # always give one message, and step over the numbers of puts not committed.
    env.define("QB", MSGDLVSQ="FIFO" if fifo else "PRIORITY")
    h = env.open("QB")
    sizes = [5, 0, 17, 3, 40, 1, 1, 9, 30, 2, 6, 4]
    for i, n in enumerate(sizes):
        env.put(h, bytes([65 + i]) * n, pmo=C.MQPMO_SYNCPOINT if i in (4, 5) else C.MQPMO_NO_SYNCPOINT,
                priority=i % 10, expiry=36000 if expiring and i == 9 else -1)
    assert env.qm.objects.require("QB").messages.live_expiring == int(expiring)
    visible = [(seq, n) for seq, n in enumerate(sizes, start=1) if seq not in (5, 6)]
    for max_msgs in (1, 3, 5, 10, 50):
        for max_bytes in (0, 1, 5, 26, 27, 60, 10_000):
            for overhead in (0, 4):
                want: list[int] = []
                size = 0
                for seq, n in visible:
                    if want and (len(want) >= max_msgs or (max_bytes and size + n + overhead > max_bytes)):
                        break
                    want.append(seq)
                    size += n + overhead
                got = S.browse_range(env.qm, "QB", 1, 13, max_msgs, max_bytes, overhead)
                assert [m.seq for m in got] == want, (max_msgs, max_bytes, overhead)
    assert [m.seq for m in S.browse_range(env.qm, "QB", 4, 9, 10)] == [4, 7, 8]
    assert [m.seq for m in S.browse_range(env.qm, "QB", 0, 1000, 2)] == [1, 2]  # a range wider than the queue
