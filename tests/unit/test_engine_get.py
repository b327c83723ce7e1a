"""MQGET and browse: order, matching, truncation, cursors, locks, expiry, waits."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.engine.api import GetOptions, GetResult, PersistentNext, PutOptions, Waiting
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

BROWSE_FIRST = C.MQGMO_BROWSE_FIRST
BROWSE_NEXT = C.MQGMO_BROWSE_NEXT


def test_priority_then_fifo(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    for data, prio in [(b"a", 1), (b"b", 5), (b"c", 1), (b"d", 5), (b"e", 9)]:
        env.put(h, data, priority=prio)
    assert [env.get(h).data for _ in range(5)] == [b"e", b"b", b"d", b"a", b"c"]


def test_fifo_queue_ignores_priority(env: Env) -> None:
    env.define("Q1", MSGDLVSQ="FIFO")
    h = env.open("Q1")
    for data, prio in [(b"a", 1), (b"b", 5), (b"c", 9)]:
        env.put(h, data, priority=prio)
    assert [env.get(h).data for _ in range(3)] == [b"a", b"b", b"c"]


def test_no_message_and_get_inhibited(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    with pytest.raises(MQError) as e:
        env.get(h)
    assert (e.value.comp, e.value.reason) == (C.MQCC_FAILED, C.MQRC_NO_MSG_AVAILABLE)
    env.put(h)
    env.qm.objects.alter("Q1", {"GET": "DISABLED"})
    for opts in (0, BROWSE_FIRST):
        with pytest.raises(MQError) as e:
            env.get(h, opts)
        assert e.value.reason == C.MQRC_GET_INHIBITED
    assert env.depth("Q1") == 1


def test_match_by_ids_and_none_matches_any(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"1", correl_id=b"A" * 24)
    m2 = env.put(h, b"2", correl_id=b"B" * 24).md
    env.put(h, b"3", correl_id=b"B" * 24)
    assert env.get(h, correl_id=b"B" * 24).data == b"2"
    with pytest.raises(MQError):
        env.get(h, msg_id=m2.msg_id)
    assert env.get(h, match=C.MQMO_NONE, correl_id=b"Z" * 24).data == b"1"
    assert env.get(h).data == b"3"


def test_match_msg_token_and_group_and_seq(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"a", version=2, group_id=b"G" * 24, msg_seq_number=1, msg_flags=C.MQMF_MSG_IN_GROUP)
    env.put(h, b"b", version=2, group_id=b"G" * 24, msg_seq_number=2, msg_flags=C.MQMF_LAST_MSG_IN_GROUP)
    b = env.get(h, BROWSE_FIRST)
    tok = env.qm.get(env.hconn, h, MQMD(), GetOptions(BROWSE_NEXT), 100)
    assert isinstance(tok, GetResult)
    got = env.qm.get(env.hconn, h, MQMD(), GetOptions(0, 0, C.MQMO_MATCH_MSG_TOKEN, tok.msg_token), 100)
    assert isinstance(got, GetResult) and got.data == b"b"
    assert env.get(h, match=C.MQMO_MATCH_GROUP_ID | C.MQMO_MATCH_MSG_SEQ_NUMBER, version=2, group_id=b"G" * 24,
                   msg_seq_number=1).data == b.data


def test_truncation(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"0123456789")
    r = env.get(h, buffer=4)
    assert (r.comp, r.reason, r.data, r.data_length) == (C.MQCC_WARNING, C.MQRC_TRUNCATED_MSG_FAILED, b"0123", 10)
    assert env.depth("Q1") == 1
    r = env.get(h, C.MQGMO_ACCEPT_TRUNCATED_MSG, buffer=4)
    assert (r.comp, r.reason, r.data, r.data_length) == (C.MQCC_WARNING, C.MQRC_TRUNCATED_MSG_ACCEPTED, b"0123", 10)
    assert env.depth("Q1") == 0


def test_browse_cursor_and_msg_under_cursor(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    for d in (b"a", b"b", b"c"):
        env.put(h, d)
    assert env.get(h, BROWSE_FIRST).data == b"a"
    assert env.get(h, BROWSE_NEXT).data == b"b"
    assert env.get(h, C.MQGMO_BROWSE_MSG_UNDER_CURSOR).data == b"b"
    assert env.get(h, C.MQGMO_MSG_UNDER_CURSOR).data == b"b"
    with pytest.raises(MQError) as e:
        env.get(h, C.MQGMO_MSG_UNDER_CURSOR)
    assert e.value.reason == C.MQRC_NO_MSG_UNDER_CURSOR
    assert env.get(h, BROWSE_NEXT).data == b"c"
    with pytest.raises(MQError) as e:
        env.get(h, BROWSE_NEXT)
    assert e.value.reason == C.MQRC_NO_MSG_AVAILABLE
    assert env.depth("Q1") == 2


def test_browse_truncated_then_retry_under_cursor(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"0123456789")
    assert env.get(h, BROWSE_FIRST, buffer=2).reason == C.MQRC_TRUNCATED_MSG_FAILED
    assert env.get(h, C.MQGMO_BROWSE_MSG_UNDER_CURSOR, buffer=100).data == b"0123456789"


def test_lock_hides_message_from_others_until_unlock(env: Env) -> None:
    env.define("Q1")
    h1 = env.open("Q1")
    h2 = env.open("Q1")
    env.put(h1, b"a")
    env.put(h1, b"b")
    assert env.get(h1, BROWSE_FIRST | C.MQGMO_LOCK).data == b"a"
    assert env.get(h2).data == b"b"
    with pytest.raises(MQError):
        env.get(h2)
    env.get(h1, C.MQGMO_UNLOCK)
    assert env.get(h2).data == b"a"
    with pytest.raises(MQError) as e:
        env.get(h1, C.MQGMO_UNLOCK)
    assert (e.value.comp, e.value.reason) == (C.MQCC_WARNING, C.MQRC_NO_MSG_LOCKED)


@pytest.mark.parametrize(
    ("opts", "reason"),
    [
        (C.MQGMO_SYNCPOINT | C.MQGMO_NO_SYNCPOINT, C.MQRC_OPTIONS_ERROR),
        (BROWSE_FIRST | BROWSE_NEXT, C.MQRC_OPTIONS_ERROR),
        (BROWSE_FIRST | C.MQGMO_SYNCPOINT, C.MQRC_OPTIONS_ERROR),
        (C.MQGMO_LOCK, C.MQRC_OPTIONS_ERROR),
        (C.MQGMO_MARK_SKIP_BACKOUT, C.MQRC_OPTIONS_ERROR),
        (0x80000000, C.MQRC_OPTIONS_ERROR),
    ],
)
def test_get_option_errors(env: Env, opts: int, reason: int) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h)
    with pytest.raises(MQError) as e:
        env.get(h, opts)
    assert e.value.reason == reason
    assert env.depth("Q1") == 1


def test_open_mode_errors(env: Env) -> None:
    env.define("Q1")
    out = env.open("Q1", C.MQOO_OUTPUT)
    env.put(out)
    with pytest.raises(MQError) as e:
        env.get(out)
    assert e.value.reason == C.MQRC_NOT_OPEN_FOR_INPUT
    with pytest.raises(MQError) as e:
        env.get(out, BROWSE_FIRST)
    assert e.value.reason == C.MQRC_NOT_OPEN_FOR_BROWSE
    with pytest.raises(MQError) as e:
        env.get(out, match=0x1000)
    assert e.value.reason == C.MQRC_MATCH_OPTIONS_ERROR
    with pytest.raises(MQError) as e:
        env.qm.get(env.hconn, out, MQMD(), GetOptions(C.MQGMO_WAIT, -5), 10)
    assert e.value.reason == C.MQRC_WAIT_INTERVAL_ERROR
    with pytest.raises(MQError) as e:
        env.get(out, buffer=-1)
    assert e.value.reason == C.MQRC_BUFFER_LENGTH_ERROR


def test_expiry_counts_down_and_expired_never_returned(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"short", expiry=20)  # 2 seconds
    env.put(h, b"long", expiry=600)
    env.clock.advance(1.0)
    r = env.get(h, BROWSE_FIRST)
    assert r.data == b"short" and r.md.expiry == 10
    env.clock.advance(1.5)
    assert env.depth("Q1") == 2  # expired but not yet discarded still counts
    r = env.get(h)
    assert r.data == b"long" and 0 < r.md.expiry <= 600 - 25
    assert env.depth("Q1") == 0


def test_expiry_scan_discards(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"x", expiry=1, persistence=1)
    env.clock.advance(5)
    env.qm.tick()
    assert env.depth("Q1") == 0


def test_wait_satisfied_by_later_put_in_order(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    c2 = env.qm.connect()
    h2 = env.open("Q1", hconn=c2)
    w1 = env.qm.get(env.hconn, h, MQMD(), GetOptions(C.MQGMO_WAIT, 5000), 100)
    w2 = env.qm.get(c2, h2, MQMD(), GetOptions(C.MQGMO_WAIT, -1), 100)
    assert isinstance(w1, Waiting) and isinstance(w2, Waiting)
    assert w1.deadline == env.clock.now() + 5 and w2.deadline is None
    env.put(h, b"first")
    env.put(h, b"second")
    d = env.qm.take_deliveries()
    assert [(x.waiter_id, x.result.data if x.result else None) for x in d] == [(w1.waiter_id, b"first"),
                                                                                 (w2.waiter_id, b"second")]
    assert env.depth("Q1") == 0


def test_wait_cancel_and_quiesce(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    w = env.qm.get(env.hconn, h, MQMD(), GetOptions(C.MQGMO_WAIT, 100), 100)
    assert isinstance(w, Waiting)
    assert env.qm.cancel_wait(w.waiter_id) is True
    assert env.qm.cancel_wait(w.waiter_id) is False
    w = env.qm.get(env.hconn, h, MQMD(), GetOptions(C.MQGMO_WAIT | C.MQGMO_FAIL_IF_QUIESCING, -1), 100)
    assert isinstance(w, Waiting)
    env.qm.quiesce()
    (d,) = env.qm.take_deliveries()
    assert isinstance(d.error, MQError) and d.error.reason == C.MQRC_Q_MGR_QUIESCING
    with pytest.raises(MQError) as e:
        env.get(h, C.MQGMO_FAIL_IF_QUIESCING)
    assert e.value.reason == C.MQRC_Q_MGR_QUIESCING


# -- get_many: the read-ahead pump's takes -------------------------------------------------


def _many(env: Env, h: int, limit: int = 100, max_bytes: int = 1 << 20, wait: bool = False) -> tuple[list[bytes], object]:
    gmo = GetOptions(C.MQGMO_NO_SYNCPOINT | (C.MQGMO_WAIT if wait else 0), -1 if wait else 0,
                     non_persistent_only=True)
    got, stop = env.qm.get_many(env.hconn, h, MQMD(), gmo, 1 << 20, limit, max_bytes)
    return [r.data for r in got], stop


def test_get_many_takes_in_delivery_order_up_to_the_limit(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    for i, prio in enumerate((1, 5, 5, 3)):
        env.put(h, b"m%d" % i, priority=prio, persistence=0)
    assert _many(env, h, limit=3) == ([b"m1", b"m2", b"m3"], None)
    assert env.depth("Q1") == 1
    assert _many(env, h) == ([b"m0"], None)


def test_get_many_stops_before_a_persistent_message_and_at_the_byte_budget(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    for body, pers in ((b"a" * 10, 0), (b"b" * 10, 0), (b"c" * 10, 0), (b"p", 1), (b"d", 0)):
        env.put(h, body, persistence=pers)
    assert _many(env, h, max_bytes=15) == ([b"a" * 10, b"b" * 10], None)
    data, stop = _many(env, h)
    assert data == [b"c" * 10] and isinstance(stop, PersistentNext)
    assert env.depth("Q1") == 2  # the persistent message and the one after it stay


def test_get_many_waits_or_fails_as_mqget_would(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    data, stop = _many(env, h, wait=True)
    assert data == [] and isinstance(stop, Waiting)
    out_only = env.open("Q1", C.MQOO_OUTPUT)
    data, stop = _many(env, out_only)
    assert data == [] and isinstance(stop, MQError) and stop.reason == C.MQRC_NOT_OPEN_FOR_INPUT


def _mixed_queue(env: Env) -> None:
    """Messages that each need one of MQGET's decisions, between plain ones."""
    env.define("Q1")
    h = env.open("Q1")
    other = env.open("Q1")
    env.put(h, b"plain0", persistence=0)
    env.put(h, b"expires", persistence=0, expiry=5)
    env.put(h, b"lives", persistence=0, expiry=10_000)
    locked = env.put(h, b"locked", persistence=0).md.msg_id
    env.put(h, b"plain1", persistence=0)
    env.qm.put(env.hconn, h, MQMD(persistence=0), PutOptions(0), b"props", {"colour": "blue"})
    env.put(h, b"x" * 64, persistence=0)  # longer than the getter's buffer
    env.put(h, b"plain2", persistence=0, priority=0)
    env.put(h, b"durable", persistence=1, priority=0)
    env.clock.advance(1.0)  # "expires" has expired
    env.get(other, C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK, match=C.MQMO_MATCH_MSG_ID, msg_id=locked)


@pytest.mark.parametrize("handle", [False, True])
def test_get_many_returns_what_one_mqget_per_message_returns(handle: bool) -> None:
    from engine_helpers import Env as Fresh

    runs = []
    for batched in (False, True):
        env = Fresh()
        _mixed_queue(env)
        h = env.open("Q1")
        gmo = GetOptions(C.MQGMO_NO_SYNCPOINT | C.MQGMO_ACCEPT_TRUNCATED_MSG, 0, C.MQMO_NONE, msg_handle=handle)
        seen: list[tuple[object, ...]] = []
        for _ in range(12):
            if batched:
                got, stop = env.qm.get_many(env.hconn, h, MQMD(), gmo, 32, 100, 1 << 20)
            else:
                try:
                    r = env.qm.get(env.hconn, h, MQMD(), gmo, 32)
                    got, stop = ([r] if isinstance(r, GetResult) else []), None
                except MQError as exc:
                    got, stop = [], exc
            seen += [(r.md, r.data, r.data_length, r.reason, bool(r.properties) and dict(r.properties)) for r in got]
            if stop is not None or not got:
                seen.append(("stop", stop and stop.reason))
                break
        runs.append((seen, env.depth("Q1")))
    assert runs[0] == runs[1]
    assert [s[1] for s in runs[0][0] if s[0] != "stop"][:3] == [b"plain0", b"lives", b"plain1"]


def test_identifier_indexes_built_on_first_match_agree_with_delivery_order(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    for i, prio in enumerate((1, 5, 5, 3, 5)):
        env.put(h, b"m%d" % i, priority=prio, correl_id=b"C%d" % (i % 2) + bytes(22), msg_id=b"M%d" % (i % 3) + bytes(22))
    mq = env.qm.objects.require("Q1").messages
    assert not mq.indexed  # nothing has matched an identifier yet
    assert env.get(h, match=C.MQMO_MATCH_CORREL_ID, correl_id=b"C0" + bytes(22)).data == b"m2"
    assert mq.indexed
    env.put(h, b"m5", priority=9, correl_id=b"C0" + bytes(22))  # kept in the index from now on
    assert env.get(h, match=C.MQMO_MATCH_CORREL_ID, correl_id=b"C0" + bytes(22)).data == b"m5"
    assert env.get(h, match=C.MQMO_MATCH_MSG_ID, msg_id=b"M1" + bytes(22)).data == b"m1"
    assert [env.get(h, match=C.MQMO_MATCH_CORREL_ID, correl_id=b"C0" + bytes(22)).data for _ in range(2)] == [b"m4", b"m0"]
    assert set(mq.by_correl_id) == {b"C1" + bytes(22)} and [env.get(h).data] == [b"m3"] and not mq.by_msg_id


def test_expiry_scan_discards_what_is_due_and_keeps_locked_and_backed_out_messages_right(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    other = env.open("Q1")
    for i, expiry in enumerate((30, 10, -1, 20, 10)):
        env.put(h, b"m%d" % i, expiry=expiry, persistence=0)
    env.get(other, C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK, match=C.MQMO_NONE)  # locks m0
    got = env.get(h, C.MQGMO_SYNCPOINT, match=C.MQMO_NONE)  # m1, held by the unit of work
    assert got.data == b"m1"
    env.qm.backout(env.hconn)  # m1 is back on the queue
    env.clock.advance(1.5)
    env.qm.tick()
    mq = env.qm.objects.require("Q1").messages
    assert sorted(m.data for m in mq.by_seq.values()) == [b"m0", b"m2", b"m3"]  # m1 and m4 expired once each
    env.clock.advance(2.0)
    env.qm.tick()
    assert sorted(m.data for m in mq.by_seq.values()) == [b"m0", b"m2"]  # m0 is locked: it stays
    env.get(other, C.MQGMO_UNLOCK, match=C.MQMO_NONE)
    env.qm.tick()
    assert [m.data for m in mq.by_seq.values()] == [b"m2"]
    assert mq.live_expiring == 0 and mq.due(env.clock.now() + 1e9) == []


def test_options_found_valid_once_are_still_checked_with_the_rest_of_the_call(env: Env) -> None:
    """validate remembers option words that passed; the wait, match and buffer rules, and
    a word that failed, are still refused with their own reasons, every time."""
    env.define("Q1")
    h = env.open("Q1")
    opts = C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT
    for _ in range(2):
        w = env.qm.get(env.hconn, h, MQMD(), GetOptions(opts, 10, C.MQMO_NONE), 100)
        assert isinstance(w, Waiting) and env.qm.cancel_wait(w.waiter_id)
        for gmo, buffer, reason in ((GetOptions(opts, -2), 100, C.MQRC_WAIT_INTERVAL_ERROR),
                                    (GetOptions(opts, 10, 1 << 30), 100, C.MQRC_MATCH_OPTIONS_ERROR),
                                    (GetOptions(opts, 10), -1, C.MQRC_BUFFER_LENGTH_ERROR),
                                    (GetOptions(C.MQGMO_SYNCPOINT | C.MQGMO_NO_SYNCPOINT), 100, C.MQRC_OPTIONS_ERROR)):
            with pytest.raises(MQError) as e:
                env.qm.get(env.hconn, h, MQMD(), gmo, buffer)
            assert e.value.reason == reason
        with pytest.raises(MQError) as e:
            env.qm.put(env.hconn, h, MQMD(), PutOptions(C.MQPMO_SYNCPOINT | C.MQPMO_NO_SYNCPOINT), b"x")
        assert e.value.reason == C.MQRC_OPTIONS_ERROR
        env.qm.put(env.hconn, h, MQMD(), PutOptions(C.MQPMO_NO_SYNCPOINT), b"x")
        assert env.get(h, C.MQGMO_NO_SYNCPOINT).data == b"x"


def test_a_waiting_locked_browse_that_moves_its_lock_is_answered_once(env: Env) -> None:
    """A browse with MQGMO_LOCK waiting while its handle holds a lock on another message:
    the put that satisfies it moves the lock (and wakes the queue for the message it let
    go) without waking the same wait again inside its own answer."""
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"first", correl_id=b"X" * 24)
    lock = C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK
    assert env.get(h, lock, match=C.MQMO_MATCH_CORREL_ID, correl_id=b"X" * 24).data == b"first"
    w = env.qm.get(env.hconn, h, MQMD(correl_id=b"Y" * 24), GetOptions(lock | C.MQGMO_WAIT, -1, C.MQMO_MATCH_CORREL_ID),
                   100)
    assert isinstance(w, Waiting)
    env.put(h, b"second", correl_id=b"Y" * 24)
    (d,) = env.qm.take_deliveries()
    assert d.waiter_id == w.waiter_id and d.result is not None and d.result.data == b"second"
    q = env.qm.objects.require("Q1")
    assert sorted((m.data, bool(m.locked_by)) for m in q.messages.by_seq.values()) == [(b"first", False),
                                                                                        (b"second", True)]
    assert not env.qm.waiters


def _reason(call: object) -> int:
    try:
        call()  # type: ignore[operator]
    except MQError as exc:
        return exc.reason
    return C.MQRC_NONE


def test_checks_passed_once_are_made_again_after_any_change(env: Env) -> None:
    """A handle remembers the options whose checks it passed (engine.getting); a change of the
    queue's or the alias's attributes, quiescing, or other options or arguments are checked."""
    env.define("Q1")
    env.qm.objects.define("QALIAS", "A1", {"TARGET": "Q1"})
    hq, ha = env.open("Q1"), env.open("A1")
    opts = C.MQGMO_NO_WAIT | C.MQGMO_FAIL_IF_QUIESCING

    def get(hobj: int, options: int = opts, wait: int = 0, buffer: int = 100, handle: bool = False) -> int:
        return _reason(lambda: env.qm.get(env.hconn, hobj, MQMD(), GetOptions(options, wait, C.MQMO_NONE,
                                                                              msg_handle=handle), buffer))

    for hobj in (hq, ha):
        assert get(hobj) == get(hobj) == C.MQRC_NO_MSG_AVAILABLE
    env.qm.objects.alter("A1", {"GET": "DISABLED"})
    assert (get(ha), get(hq)) == (C.MQRC_GET_INHIBITED, C.MQRC_NO_MSG_AVAILABLE)
    env.qm.objects.alter("A1", {"GET": "ENABLED"})
    env.qm.objects.alter("Q1", {"GET": "DISABLED"})
    assert get(ha) == get(hq) == C.MQRC_GET_INHIBITED
    env.qm.objects.alter("Q1", {"GET": "ENABLED"})
    assert get(hq) == C.MQRC_NO_MSG_AVAILABLE
    assert get(hq, opts | C.MQGMO_WAIT, wait=-2) == C.MQRC_WAIT_INTERVAL_ERROR
    assert get(hq, buffer=-1) == C.MQRC_BUFFER_LENGTH_ERROR
    assert get(hq, opts | C.MQGMO_PROPERTIES_IN_HANDLE) == C.MQRC_HMSG_ERROR
    assert get(hq, opts | C.MQGMO_PROPERTIES_IN_HANDLE, handle=True) == C.MQRC_NO_MSG_AVAILABLE
    env.qm.close(env.hconn, ha, 0)
    assert get(ha) == C.MQRC_HOBJ_ERROR
    env.qm.quiesce()
    assert get(hq) == C.MQRC_Q_MGR_QUIESCING
    assert get(hq, C.MQGMO_NO_WAIT) == C.MQRC_NO_MSG_AVAILABLE


def test_get_many_with_a_frame_bound_stops_before_a_message_that_would_pass_it(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    for body in (b"a" * 10, b"b" * 10, b"c" * 10, b"d" * 10):
        env.put(h, body, persistence=1)
    gmo = GetOptions(C.MQGMO_NO_SYNCPOINT)
    # Each message costs its 10 bytes and 5 of framing: 30 bytes carry two, 29 only one.
    got, stop = env.qm.get_many(env.hconn, h, MQMD(), gmo, 1 << 20, 100, 1 << 20, frame_bytes=29, framing=5)
    assert [r.data for r in got] == [b"a" * 10] and stop is None
    got, stop = env.qm.get_many(env.hconn, h, MQMD(), gmo, 1 << 20, 100, 1 << 20, frame_bytes=30, framing=5)
    assert [r.data for r in got] == [b"b" * 10, b"c" * 10] and stop is None
    # max_bytes still bounds the data as without a frame bound: it stops once passed.
    got, stop = env.qm.get_many(env.hconn, h, MQMD(), gmo, 1 << 20, 100, 5, frame_bytes=1000, framing=5)
    assert [r.data for r in got] == [b"d" * 10] and stop is None
    assert env.depth("Q1") == 0
