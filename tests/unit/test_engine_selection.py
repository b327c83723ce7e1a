"""MQOPEN with a SelectionString: the refusals, and gets, browses, waits and units of work
that see only the messages the selector accepts, without evaluating the queue again."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.engine.api import GetOptions, GetResult, ObjectDescriptor, PutOptions, Waiting
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

IN = C.MQOO_INPUT_AS_Q_DEF
SELECT_OPTS = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE


def put(env: Env, hobj: int, data: bytes, pmo: int = 0, **props: object) -> None:
    env.qm.put(env.hconn, hobj, MQMD(), PutOptions(pmo), data, props or None)


def select(env: Env, name: str, text: str, options: int = SELECT_OPTS) -> int:
    return env.open(name, options, selection_string=text)


def get(env: Env, hobj: int, options: int = C.MQGMO_NO_WAIT, **md: object) -> bytes:
    """One get with a message handle (so properties stay out of the data)."""
    match = C.MQMO_MATCH_CORREL_ID if md else 0
    r = env.qm.get(env.hconn, hobj, MQMD(**md), GetOptions(options, 0, match, msg_handle=True), 1 << 20)  # type: ignore[arg-type]
    assert isinstance(r, GetResult)
    return r.data


def drain(env: Env, hobj: int, options: int = C.MQGMO_NO_WAIT) -> list[bytes]:
    out = []
    while True:
        try:
            out.append(get(env, hobj, options))
        except MQError as exc:
            assert exc.reason == C.MQRC_NO_MSG_AVAILABLE
            return out


@pytest.mark.parametrize(("text", "object_type", "options", "reason"), [
    ("a = 1", C.MQOT_Q, C.MQOO_OUTPUT, C.MQRC_SELECTOR_INVALID_FOR_TYPE),
    ("a = 1", C.MQOT_Q, C.MQOO_INQUIRE | C.MQOO_SET, C.MQRC_SELECTOR_INVALID_FOR_TYPE),
    ("a = 1", C.MQOT_Q_MGR, C.MQOO_INQUIRE, C.MQRC_SELECTOR_INVALID_FOR_TYPE),
    ("a = ", C.MQOT_Q, IN, C.MQRC_SELECTOR_SYNTAX_ERROR),
    ("a LIKE 5", C.MQOT_Q, IN, C.MQRC_SELECTOR_SYNTAX_ERROR),
    ("1 = 2", C.MQOT_Q, IN, C.MQRC_SELECTOR_ALWAYS_FALSE),
    ("a = '" + "x" * C.MQ_SELECTOR_LENGTH + "'", C.MQOT_Q, IN, C.MQRC_SELECTION_STRING_ERROR),
    ("a = '" + "é" * (C.MQ_SELECTOR_LENGTH // 2) + "'", C.MQOT_Q, IN, C.MQRC_SELECTION_STRING_ERROR),
])
def test_open_refusals_change_nothing(env: Env, text: str, object_type: int, options: int, reason: int) -> None:
    env.define("Q1")
    name = "QM1" if object_type == C.MQOT_Q_MGR else "Q1"
    before = (len(env.qm.handles), env.qm.objects.require("Q1").input_count)
    with pytest.raises(MQError) as e:
        env.qm.open(env.hconn, ObjectDescriptor(name, object_type=object_type, selection_string=text), options)
    assert (e.value.comp, e.value.reason) == (C.MQCC_FAILED, reason)
    assert (len(env.qm.handles), env.qm.objects.require("Q1").input_count) == before
    assert not env.qm.objects.require("Q1").messages.watchers


def test_model_queue_refusal_makes_no_dynamic_queue(env: Env) -> None:
    env.qm.objects.define("QMODEL", "M1", {})
    queues = set(env.qm.objects.queues)
    with pytest.raises(MQError) as e:
        env.open("M1", IN, selection_string="x = ")
    assert e.value.reason == C.MQRC_SELECTOR_SYNTAX_ERROR
    assert set(env.qm.objects.queues) == queues


def test_put1_with_a_selection_string_is_invalid_for_type(env: Env) -> None:
    env.define("Q1")
    with pytest.raises(MQError) as e:
        env.qm.put1(env.hconn, ObjectDescriptor("Q1", selection_string="a = 1"), MQMD(), PutOptions(), b"x")
    assert e.value.reason == C.MQRC_SELECTOR_INVALID_FOR_TYPE
    assert env.depth("Q1") == 0


@pytest.mark.parametrize("text", ["", "   "])
def test_empty_selection_string_selects_everything(env: Env, text: str) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    put(env, w, b"a", color="red")
    put(env, w, b"b")
    h = select(env, "Q1", text)
    assert env.qm.handles[h].selection is None
    assert drain(env, h) == [b"a", b"b"]


def test_only_matching_messages_in_priority_then_fifo_order(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    for data, prio, color in [(b"a", 1, "red"), (b"b", 5, "blue"), (b"c", 5, "red"), (b"d", 9, "red"), (b"e", 1, "red")]:
        env.qm.put(env.hconn, w, MQMD(priority=prio), PutOptions(), data, {"color": color})
    h = select(env, "Q1", "color = 'red'")
    assert drain(env, h) == [b"d", b"c", b"a", b"e"]
    assert env.depth("Q1") == 1
    plain = env.open("Q1", IN)
    assert get(env, plain) == b"b"


def test_properties_and_mqmd_fields_and_usr_prefix(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    env.qm.put(env.hconn, w, MQMD(priority=7, correl_id=b"C" * 24), PutOptions(), b"a", {"n": 3, "usr.s": "x"})
    env.qm.put(env.hconn, w, MQMD(priority=2), PutOptions(), b"b", {"n": 30})
    cases = {
        "n * 10 BETWEEN 25 AND 35": [b"a"],
        "Root.MQMD.Priority > 5": [b"a"],
        "JMSPriority < 5 AND s IN ('x', 'y') OR n IS NULL": [],
        "JMSPriority < 5 AND n > 20 OR n IS NULL": [b"b"],
        "usr.s = 'x' AND s LIKE '_'": [b"a"],
        "s IS NULL": [b"b"],
        "NOT (n > 10)": [b"a"],
    }
    for text, expected in cases.items():
        h = select(env, "Q1", text, C.MQOO_BROWSE)
        seen = []
        opts = C.MQGMO_BROWSE_FIRST
        while True:
            try:
                seen.append(get(env, h, opts))
            except MQError:
                break
            opts = C.MQGMO_BROWSE_NEXT
        assert seen == expected, text
        env.qm.close(env.hconn, h)


def test_match_options_combine_with_the_selector(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    for data, correl, color in [(b"a", b"X", "red"), (b"b", b"Y", "red"), (b"c", b"X", "blue"), (b"d", b"X", "red")]:
        env.qm.put(env.hconn, w, MQMD(correl_id=correl.ljust(24, b"\0")), PutOptions(), data, {"color": color})
    h = select(env, "Q1", "color = 'red'")
    got = [get(env, h, correl_id=b"X".ljust(24, b"\0")) for _ in range(2)]
    assert got == [b"a", b"d"]
    with pytest.raises(MQError):
        get(env, h, correl_id=b"X".ljust(24, b"\0"))
    assert drain(env, h) == [b"b"]


def test_browse_cursor_then_get_under_cursor(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    for i in range(6):
        put(env, w, bytes([97 + i]), n=i)
    h = select(env, "Q1", "n / 2 * 2 = n")  # even numbers (integer division)
    assert get(env, h, C.MQGMO_BROWSE_FIRST) == b"a"
    assert get(env, h, C.MQGMO_BROWSE_NEXT) == b"c"
    put(env, w, b"g", n=6)
    put(env, w, b"h", n=7)
    assert get(env, h, C.MQGMO_MSG_UNDER_CURSOR) == b"c"
    assert get(env, h, C.MQGMO_BROWSE_NEXT) == b"e"
    assert get(env, h, C.MQGMO_BROWSE_NEXT) == b"g"
    with pytest.raises(MQError):
        get(env, h, C.MQGMO_BROWSE_NEXT)
    assert drain(env, h) == [b"a", b"e", b"g"]


def test_units_of_work_and_backout_count(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    put(env, w, b"a", color="red")
    put(env, w, b"b", pmo=C.MQPMO_SYNCPOINT, color="red")  # invisible until committed
    h = select(env, "Q1", "color = 'red' AND Root.MQMD.BackoutCount = 0")
    retry = select(env, "Q1", "Root.MQMD.BackoutCount > 0")
    assert get(env, h, C.MQGMO_SYNCPOINT) == b"a"
    with pytest.raises(MQError):
        get(env, h)
    env.qm.backout(env.hconn)  # a returns with BackoutCount 1: no longer selected by h; b is gone
    with pytest.raises(MQError):
        get(env, h)
    assert get(env, retry) == b"a"
    put(env, w, b"c", pmo=C.MQPMO_SYNCPOINT, color="red")
    env.qm.commit(env.hconn)
    assert drain(env, h) == [b"c"]


def test_waiting_getter_is_woken_only_by_a_matching_message(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    h = select(env, "Q1", "color = 'red'")
    waiting = env.qm.get(env.hconn, h, MQMD(), GetOptions(C.MQGMO_WAIT, 10_000, msg_handle=True), 100)
    assert isinstance(waiting, Waiting)
    put(env, w, b"blue", color="blue")
    assert env.qm.take_deliveries() == []
    put(env, w, b"red", color="red")
    [delivery] = env.qm.take_deliveries()
    assert delivery.waiter_id == waiting.waiter_id and delivery.result is not None
    assert delivery.result.data == b"red"
    assert env.depth("Q1") == 1


def test_get_many_takes_only_matching_messages(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    for i in range(20):
        put(env, w, str(i).encode(), n=i)
    h = select(env, "Q1", "n >= 10 AND n < 15")
    got, why = env.qm.get_many(env.hconn, h, MQMD(), GetOptions(msg_handle=True), 100, 100, 1 << 20)
    assert [r.data for r in got] == [b"10", b"11", b"12", b"13", b"14"] and why is None
    assert env.depth("Q1") == 15


def test_get_many_selects_messages_without_properties_too(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    for i in range(6):
        env.put(w, str(i).encode(), priority=i % 3)
    h = select(env, "Q1", "Root.MQMD.Priority = 1")
    got, why = env.qm.get_many(env.hconn, h, MQMD(), GetOptions(), 100, 100, 1 << 20)
    assert [r.data for r in got] == [b"1", b"4"] and why is None


def test_two_selecting_handles_share_a_queue(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    odd, small = select(env, "Q1", "n - n / 2 * 2 = 1"), select(env, "Q1", "n < 4")
    for i in range(8):
        put(env, w, str(i).encode(), n=i)
    assert get(env, small) == b"0"
    assert get(env, odd) == b"1"
    assert drain(env, small) == [b"2", b"3"]
    assert drain(env, odd) == [b"5", b"7"]
    env.qm.close(env.hconn, odd)
    env.qm.close(env.hconn, small)
    assert not env.qm.objects.require("Q1").messages.watchers


def test_each_message_is_evaluated_once_not_per_get(env: Env) -> None:
    env.define("Q1", MAXDEPTH=100_000)
    w = env.open("Q1", C.MQOO_OUTPUT)
    for i in range(2000):
        put(env, w, b"x", n=i)
    h = select(env, "Q1", "n - n / 100 * 100 = 0")  # 1 in 100
    for i in range(500):  # new messages arriving while the backlog is consumed
        put(env, w, b"y", n=i)
    assert len(drain(env, h)) == 25
    view = env.qm.handles[h].selection
    assert view is not None and view.evaluations == 2500
    assert env.depth("Q1") == 2475


def test_expired_matching_message_is_discarded_not_returned(env: Env) -> None:
    env.define("Q1")
    w = env.open("Q1", C.MQOO_OUTPUT)
    env.qm.put(env.hconn, w, MQMD(expiry=10), PutOptions(), b"old", {"color": "red"})
    env.qm.put(env.hconn, w, MQMD(), PutOptions(), b"new", {"color": "red"})
    h = select(env, "Q1", "color = 'red'")
    env.clock.advance(5)
    assert get(env, h) == b"new"
    assert env.depth("Q1") == 0
