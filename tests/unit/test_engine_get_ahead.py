"""Gets read ahead under syncpoint (GET_AHEAD) and their return (RETURN_AHEAD), in the engine:
what a run takes, what a return restores, and what commit, backout and a restart make of them."""

from __future__ import annotations

import pytest
from engine_helpers import Env, reason_of
from test_engine_recovery import drain, restart

from ferrymq.engine.api import GetOptions, GetResult
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

GSP = C.MQGMO_SYNCPOINT


def ahead(env: Env, hobj: int, limit: int, options: int = GSP, **md: object) -> list[GetResult]:
    got, stop = env.qm.get_many(env.hconn, hobj, MQMD(**md), GetOptions(options, 0, C.MQMO_NONE, msg_handle=True),  # type: ignore[arg-type]
                                1 << 20, limit, 1 << 30, ahead=True)
    assert stop is None or not isinstance(stop, MQError) or stop.reason == C.MQRC_NO_MSG_AVAILABLE
    return got


def uow_ahead(env: Env) -> int:
    uow = env.qm.state.conn(env.hconn).uow
    return 0 if uow is None else len(uow.ahead)


def filled(env: Env, n: int, name: str = "Q1", **md: object) -> int:
    env.define(name)
    h = env.open(name)
    for i in range(n):
        env.put(h, b"m%d" % i, persistence=1, **md)
    return h


def test_a_run_takes_the_first_as_a_get_and_the_rest_read_ahead(env: Env) -> None:
    h = filled(env, 5)
    got = ahead(env, h, 4)
    assert [r.data for r in got] == [b"m0", b"m1", b"m2", b"m3"]
    assert uow_ahead(env) == 3  # the first is the application's own get
    assert env.depth("Q1") == 5  # gets in a unit of work count in CURDEPTH until it commits


def test_returned_messages_are_back_in_order_with_their_backout_count(env: Env) -> None:
    h = filled(env, 5)
    got = ahead(env, h, 5)
    env.qm.return_ahead(env.hconn, h, [r.msg_token for r in got[2:]])
    assert uow_ahead(env) == 1  # m1: read ahead, handed out
    env.qm.backout(env.hconn)  # the two delivered ones count a backout; the returned ones do not
    assert drain(env, "Q1") == [(b"m0", 1), (b"m1", 1), (b"m2", 0), (b"m3", 0), (b"m4", 0)]


def test_commit_after_a_return_leaves_the_returned_messages_on_disk(env: Env) -> None:
    h = filled(env, 6)
    got = ahead(env, h, 6)
    env.qm.return_ahead(env.hconn, h, [r.msg_token for r in got[3:]])
    env.qm.commit(env.hconn)
    restart(env)
    assert drain(env, "Q1") == [(b"m3", 0), (b"m4", 0), (b"m5", 0)]


def test_a_committed_run_is_gone_after_a_restart(env: Env) -> None:
    h = filled(env, 4)
    ahead(env, h, 3)
    env.qm.commit(env.hconn)
    restart(env)
    assert drain(env, "Q1") == [(b"m3", 0)]


def test_an_uncommitted_run_is_on_the_queue_after_a_crash(env: Env) -> None:
    h = filled(env, 4)
    ahead(env, h, 4)
    env.journal.sync()
    restart(env, crash=True)
    assert [d for d, _ in drain(env, "Q1")] == [b"m0", b"m1", b"m2", b"m3"]


def test_a_lost_connection_backs_the_whole_run_out(env: Env) -> None:
    h = filled(env, 3)
    ahead(env, h, 3)
    env.qm.disconnect(env.hconn, commit=False)
    env.hconn = env.qm.connect()
    assert drain(env, "Q1") == [(b"m0", 1), (b"m1", 1), (b"m2", 1)]


def test_other_getters_see_returned_messages(env: Env) -> None:
    h = filled(env, 3)
    other = env.qm.connect(appl_name="other")
    oh = env.open("Q1", hconn=other)
    got = ahead(env, h, 3)
    with pytest.raises(MQError) as exc:
        env.get(oh, hconn=other)
    assert exc.value.reason == C.MQRC_NO_MSG_AVAILABLE  # held by the open unit, as any get under syncpoint
    env.qm.return_ahead(env.hconn, h, [got[2].msg_token])
    assert env.get(oh, hconn=other).data == b"m2"


def test_a_return_that_names_a_message_not_read_ahead_changes_nothing(env: Env) -> None:
    h = filled(env, 3)
    got = ahead(env, h, 3)
    for tokens in ([got[0].msg_token], [got[1].msg_token, bytes(16)], [got[1].msg_token, got[1].msg_token]):
        with pytest.raises(MQError) as exc:
            env.qm.return_ahead(env.hconn, h, tokens)
        assert reason_of(exc) == (C.MQCC_FAILED, C.MQRC_MSG_TOKEN_ERROR)
        assert uow_ahead(env) == 2
    env.qm.commit(env.hconn)
    assert env.depth("Q1") == 0


def test_a_run_stops_before_what_the_queue_manager_decides_at_delivery(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"a", persistence=1)
    env.put(h, b"b", persistence=1, report=C.MQRO_COD, reply_to_q="Q1")
    env.put(h, b"c", persistence=1)
    assert [r.data for r in ahead(env, h, 3)] == [b"a"]
    env.qm.commit(env.hconn)
    assert [r.data for r in ahead(env, h, 3)] == [b"b", b"c"]  # first: an ordinary get, its report in the unit
    assert uow_ahead(env) == 1


def test_expiring_messages_are_not_read_ahead(env: Env) -> None:
    env.define("Q2")
    h = env.open("Q2")
    env.put(h, b"a", persistence=1)
    env.put(h, b"e", persistence=1, expiry=10_000)
    env.put(h, b"f", persistence=1)
    assert [r.data for r in ahead(env, h, 3)] == [b"a"]
    assert uow_ahead(env) == 0


def test_no_run_outside_syncpoint_nor_on_a_handle_that_saves_context(env: Env) -> None:
    h = filled(env, 5)
    assert len(ahead(env, h, 3, C.MQGMO_NO_SYNCPOINT)) == 1
    assert uow_ahead(env) == 0
    saving = env.open("Q1", C.MQOO_INPUT_SHARED | C.MQOO_SAVE_ALL_CONTEXT)
    assert [r.data for r in ahead(env, saving, 3)] == [b"m1"]  # the context saved is the last get's
    assert uow_ahead(env) == 0
