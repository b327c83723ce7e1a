"""Units of work across queues: commit, backout, BackoutCount, BOTHRESH/BOQNAME, skip-backout."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH

SP = C.MQPMO_SYNCPOINT
GSP = C.MQGMO_SYNCPOINT


def test_uncommitted_puts_invisible_then_committed(env: Env) -> None:
    env.define("Q1")
    env.define("Q2")
    h1, h2 = env.open("Q1"), env.open("Q2")
    env.put(h1, b"a", pmo=SP)
    env.put(h2, b"b", pmo=SP)
    assert env.depth("Q1") == 1  # uncommitted messages count in CURDEPTH
    with pytest.raises(MQError):
        env.get(h1)
    env.qm.commit(env.hconn)
    assert env.get(h1).data == b"a" and env.get(h2).data == b"b"


def test_backout_discards_puts_and_restores_gets_with_count(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"first")
    env.put(h, b"second")
    env.put(h, b"never", pmo=SP)
    assert env.get(h, GSP).data == b"first"
    env.qm.backout(env.hconn)
    assert env.depth("Q1") == 2
    r = env.get(h)
    assert (r.data, r.md.backout_count) == (b"first", 1)
    assert env.get(h).md.backout_count == 0


def test_syncpoint_if_persistent(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"p", persistence=1)
    env.put(h, b"n", persistence=0)
    env.get(h, C.MQGMO_SYNCPOINT_IF_PERSISTENT)
    env.get(h, C.MQGMO_SYNCPOINT_IF_PERSISTENT)
    env.qm.backout(env.hconn)
    assert [env.get(h).data for _ in range(env.depth("Q1"))] == [b"p"]


def test_backout_threshold_moves_to_boqname(env: Env) -> None:
    env.define("BO")
    env.define("Q1", BOTHRESH=2, BOQNAME="BO")
    h = env.open("Q1")
    env.put(h, b"poison", persistence=1)
    env.get(h, GSP)
    env.qm.backout(env.hconn)
    env.get(h, GSP)
    env.qm.backout(env.hconn)
    assert env.depth("Q1") == 0
    r = env.get(env.open("BO"))
    assert (r.data, r.md.backout_count) == (b"poison", 2)


def test_backout_threshold_without_boqname_goes_to_dlq_with_mqdlh(env: Env) -> None:
    env.define("Q1", BOTHRESH=1)
    h = env.open("Q1")
    env.put(h, b"poison", format="MQSTR")
    env.get(h, GSP)
    env.qm.backout(env.hconn)
    r = env.get(env.open("SYSTEM.DEAD.LETTER.QUEUE"))
    assert r.md.format == "MQDEAD"
    dlh = MQDLH.unpack_from(r.data)
    assert (dlh.reason, dlh.dest_q_name, dlh.dest_q_mgr_name, dlh.format) == (
        C.MQRC_BACKOUT_THRESHOLD_REACHED, "Q1", "QM1", "MQSTR")
    assert (dlh.put_appl_type, dlh.put_appl_name) == (C.MQAT_QMGR, "QM1")
    assert r.data[C.MQDLH_LENGTH_1:] == b"poison"


def test_poison_kept_when_nowhere_to_go(env: Env) -> None:
    env.define("Q1", BOTHRESH=1)
    env.qm.objects.alter("SYSTEM.DEAD.LETTER.QUEUE", {"PUT": "DISABLED"})
    h = env.open("Q1")
    env.put(h, b"poison")
    env.get(h, GSP)
    env.qm.backout(env.hconn)
    assert env.get(h).md.backout_count == 1


def test_mark_skip_backout(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"a")
    env.put(h, b"b")
    env.get(h, GSP | C.MQGMO_MARK_SKIP_BACKOUT)
    with pytest.raises(MQError) as e:
        env.get(h, GSP | C.MQGMO_MARK_SKIP_BACKOUT)
    assert e.value.reason == C.MQRC_SECOND_MARK_NOT_ALLOWED
    env.get(h, GSP)
    env.qm.backout(env.hconn)
    assert env.get(h).data == b"b"
    env.qm.commit(env.hconn)
    assert env.depth("Q1") == 0


def test_disconnect_commits_and_connection_loss_backs_out(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    c2 = env.qm.connect()
    h2 = env.open("Q1", hconn=c2)
    env.put(h2, b"kept", hconn=c2, pmo=SP)
    env.qm.disconnect(c2)
    c3 = env.qm.connect()
    h3 = env.open("Q1", hconn=c3)
    env.put(h3, b"lost", hconn=c3, pmo=SP)
    env.qm.disconnect(c3, commit=False)
    assert [env.get(h).data for _ in range(env.depth("Q1"))] == [b"kept"]


def test_commit_wakes_waiters(env: Env) -> None:
    from ferrymq.engine.api import GetOptions, Waiting
    from ferrymq.wire.mqmd import MQMD

    env.define("Q1")
    h = env.open("Q1")
    c2 = env.qm.connect()
    h2 = env.open("Q1", hconn=c2)
    w = env.qm.get(c2, h2, MQMD(), GetOptions(C.MQGMO_WAIT, -1), 100)
    assert isinstance(w, Waiting)
    env.put(h, b"x", pmo=SP)
    assert env.qm.take_deliveries() == []
    env.qm.commit(env.hconn)
    (d,) = env.qm.take_deliveries()
    assert d.result is not None and d.result.data == b"x"
