"""Put to a waiting getter (engine.handover): the same outcome as the queued path, every time."""

from __future__ import annotations

from engine_helpers import Env

from ferrymq.engine.api import GetOptions, GetResult, PutOptions, Waiting
from ferrymq.engine.message import Message
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.session import Handle
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

WAIT = C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT
CORREL = b"C" * 24


def _setup() -> tuple[Env, int, int]:
    env = Env()
    env.define("Q1")
    env.define("REPLIES")
    return env, env.open("Q1"), env.open("REPLIES")


def _wait(env: Env, hobj: int, options: int = WAIT, buffer: int = 1 << 20, match: int = C.MQMO_MATCH_CORREL_ID,
          hconn: int | None = None, **md: object) -> int:
    w = env.qm.get(hconn or env.hconn, hobj, MQMD(version=2, **md), GetOptions(options, 30_000, match,  # type: ignore[arg-type]
                                                                             msg_handle=True), buffer)
    assert isinstance(w, Waiting)
    return w.waiter_id


def _drain(env: Env, hobj: int) -> list[tuple[MQMD, bytes]]:
    out = []
    while env.depth(env.qm.handles[hobj].name):
        r = env.get(hobj)
        out.append((r.md, r.data))
    return out


def test_a_handed_over_message_is_what_the_queued_path_gives() -> None:
    """The same wait and put, handed over or (another handle watching the queue through a
    selection string makes it decline) placed on the queue and woken: equal results,
    reports in the same order, queue times and depths; descriptors byte for byte equal."""
    md = {"report": C.MQRO_COA | C.MQRO_COD_WITH_DATA, "reply_to_q": "REPLIES", "msg_type": C.MQMT_REQUEST,
          "format": "MQSTR", "persistence": 0, "correl_id": CORREL}
    outcomes = []
    for watched in (False, True):
        env, q1, replies = _setup()
        if watched:
            env.open("Q1", C.MQOO_BROWSE, selection_string="JMSPriority >= 0")
        wid = _wait(env, q1)
        put = env.put(q1, b"payload", **md)
        (d,) = env.qm.take_deliveries()
        assert d.waiter_id == wid and d.error is None and d.sync_lsn == 0
        got = d.result
        assert isinstance(got, GetResult)
        q = env.qm.objects.require("Q1")
        assert bool(q.messages.watchers) is watched  # what made the watched run decline
        assert got.md_bytes is None or got.md_bytes == got.md.pack(version=2)
        outcomes.append((put.md, got.md, got.md.pack(version=2), got.data, got.data_length, got.msg_token,
                         got.properties is not None and len(got.properties), got.comp, got.reason, got.sequence,
                         env.depth("Q1"), q.last_put, q.last_get, _drain(env, replies)))
    handed, queued = outcomes
    assert handed == queued
    assert [m.feedback for m, _ in handed[-1]] == [C.MQFB_COD, C.MQFB_COA]  # COD made by the take, then COA


def test_waits_are_offered_the_message_in_the_order_they_began() -> None:
    env, q1, _ = _setup()
    c2 = env.qm.connect()
    h2 = env.open("Q1", hconn=c2)
    other = _wait(env, q1, correl_id=b"X" * 24)  # does not match: passed over
    plain = _wait(env, h2, hconn=c2, match=C.MQMO_NONE)
    env.put(q1, b"one", correl_id=CORREL, persistence=0)
    (d,) = env.qm.take_deliveries()
    assert d.waiter_id == plain and d.result is not None and d.result.data == b"one"
    env.put(q1, b"two", correl_id=b"X" * 24, persistence=0)
    (d,) = env.qm.take_deliveries()
    assert d.waiter_id == other and d.result is not None and d.result.data == b"two"
    assert env.depth("Q1") == 0 and not env.qm.waiters


def test_a_wait_keeps_the_identifiers_its_search_compares() -> None:
    """What a hand-over compares is read as the wait begins: the identifiers matched and
    not none; none where the options do not match them or the value is MQMI_NONE."""
    env, q1, _ = _setup()
    both = C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID
    waits = [_wait(env, q1, match=both, msg_id=b"M" * 24, correl_id=CORREL),
             _wait(env, q1, match=C.MQMO_MATCH_CORREL_ID, msg_id=b"M" * 24, correl_id=CORREL),
             _wait(env, q1, match=both)]
    kept = [(env.qm.waiters[w].match_msg_id, env.qm.waiters[w].match_correl_id) for w in waits]
    assert kept == [(b"M" * 24, CORREL), (None, CORREL), (None, None)]
    env.put(q1, b"one", msg_id=b"M" * 24, correl_id=b"X" * 24, persistence=0)  # the third wait takes it
    (d,) = env.qm.take_deliveries()
    assert d.waiter_id == waits[2] and d.result is not None and d.result.data == b"one"


def test_a_browsing_wait_sees_the_message_before_a_destructive_one_takes_it() -> None:
    env, q1, _ = _setup()
    browser = _wait(env, q1, options=C.MQGMO_WAIT | C.MQGMO_BROWSE_FIRST, match=C.MQMO_NONE)
    taker = _wait(env, q1, match=C.MQMO_NONE)
    env.put(q1, b"m", persistence=0)
    d = env.qm.take_deliveries()
    assert [(x.waiter_id, x.result.data if x.result else None) for x in d] == [(browser, b"m"), (taker, b"m")]
    assert env.depth("Q1") == 0


def test_what_must_stay_on_the_queue_stays() -> None:
    env, q1, _ = _setup()
    # A buffer too short: the waiter hears of it, the message stays for a retry.
    _wait(env, q1, buffer=2, match=C.MQMO_NONE)
    env.put(q1, b"too long", persistence=0)
    (d,) = env.qm.take_deliveries()
    assert d.result is not None and d.result.reason == C.MQRC_TRUNCATED_MSG_FAILED
    assert env.depth("Q1") == 1
    assert env.get(q1).data == b"too long"
    # A wait under syncpoint: the message is back on the queue when the unit is backed out.
    _wait(env, q1, options=C.MQGMO_WAIT | C.MQGMO_SYNCPOINT, match=C.MQMO_NONE)
    env.put(q1, b"uow", persistence=0)
    (d,) = env.qm.take_deliveries()
    assert d.result is not None and d.result.data == b"uow" and env.depth("Q1") == 1  # counted while held
    env.qm.backout(env.hconn)
    assert env.get(q1).data == b"uow"
    # GET(DISABLED): the wait ends with MQRC_GET_INHIBITED and the message stays.
    _wait(env, q1, match=C.MQMO_NONE)
    env.qm.objects.alter("Q1", {"GET": "DISABLED"})
    env.put(q1, b"kept", persistence=0)
    (d,) = env.qm.take_deliveries()
    assert isinstance(d.error, MQError) and d.error.reason == C.MQRC_GET_INHIBITED
    assert env.depth("Q1") == 1


def _hand_over(env: Env, q: QueueObject, msg: Message, via: Handle) -> bool:
    given, _ = env.qm.handover.hand_over(q, msg, via, env.clock.now())
    return given


def test_only_the_plain_case_is_handed_over() -> None:
    env, q1, _ = _setup()
    q, via = env.qm.objects.require("Q1"), env.qm.handles[q1]
    msg_of = lambda **kw: Message("Q1", env.qm.next_sequence(q), MQMD(**{"persistence": 0, **kw}), b"x",  # noqa: E731
                                  env.clock.now(), False)
    assert not _hand_over(env, q, msg_of(), via)  # nobody waits
    wid = _wait(env, q1, match=C.MQMO_NONE)
    assert not _hand_over(env, q, msg_of(persistence=1), via)
    assert not _hand_over(env, q, msg_of(expiry=100), via)
    assert _hand_over(env, q, msg_of(), via)
    assert [d.waiter_id for d in env.qm.take_deliveries()] == [wid]
    env.put(q1, b"older", persistence=0, correl_id=CORREL)  # nobody waits: queued
    _wait(env, q1, correl_id=b"X" * 24)
    assert not _hand_over(env, q, msg_of(correl_id=b"X" * 24), via)  # the queue is not empty


def test_a_persistent_message_to_a_waiting_getter_is_still_journaled_and_removed() -> None:
    env, q1, _ = _setup()
    _wait(env, q1, match=C.MQMO_NONE)
    before = env.journal.appended_lsn
    env.qm.put(env.hconn, q1, MQMD(persistence=1), PutOptions(C.MQPMO_NO_SYNCPOINT), b"p")
    (d,) = env.qm.take_deliveries()
    assert d.result is not None and d.result.data == b"p"
    assert env.journal.appended_lsn > before  # its record was written, then deleted by the take


def test_descriptors_handed_over_are_packed_exactly() -> None:
    """The getter's descriptor bytes, spliced from the putter's previous ones, are what
    packing the descriptor gives, whatever changed between the puts."""
    env, q1, _ = _setup()
    env.clock.t = 1_700_000_000.004
    variants: list[dict[str, object]] = [{}, {}, {"correl_id": CORREL}, {"priority": 3}, {"reply_to_q": "REPLIES"},
                                         {"msg_id": b"M" * 24}, {"format": "MQSTR"}, {}]
    for i, md in enumerate(variants):
        env.clock.advance(0.013 * i)
        _wait(env, q1, match=C.MQMO_NONE)
        env.put(q1, b"%d" % i, persistence=0, **md)
        (d,) = env.qm.take_deliveries()
        assert d.result is not None and d.result.md_bytes == d.result.md.pack(version=2)
        assert MQMD.unpack_from(d.result.md_bytes) == d.result.md


def test_a_handed_over_message_carries_its_reply_and_makes_its_result_when_asked() -> None:
    """The put's Delivery (PutResult.delivered) holds what the get's reply is written from:
    the packed descriptor, the data, the MsgToken and the queue's name. Its GetResult, made
    when first asked for and kept, is the one the queued path gives (a handle's empty
    PropertySet included)."""
    env, q1, _ = _setup()
    wid = _wait(env, q1)
    put = env.put(q1, b"payload", correl_id=CORREL, persistence=0)
    d = put.delivered
    assert d is not None and d.waiter_id == wid and d.error is None
    assert (d.data, d.queue, d.properties) == (b"payload", "Q1", None)
    assert d.md_bytes == put.md.pack(version=2)
    got = d.result
    assert isinstance(got, GetResult) and d.result is got
    assert (got.md_bytes, got.data, got.data_length, got.msg_token, got.resolved_q_name, got.queue) == (
        d.md_bytes, b"payload", 7, d.msg_token, "Q1", "Q1")
    assert got.properties is not None and len(got.properties) == 0  # the getter gave a message handle
    env.qm.answered(d)
    assert env.qm.take_deliveries() == []
    env.put(q1, b"queued", correl_id=CORREL, persistence=0)
    assert env.get(q1, match=C.MQMO_MATCH_CORREL_ID, correl_id=CORREL).msg_token != got.msg_token
