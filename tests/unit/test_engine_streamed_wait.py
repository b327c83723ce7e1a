"""A read-ahead's wait (get_many ``streamed``) given many messages by hand-over (engine.handover):
publication copies with their mqps properties go to it without entering the queue's index,
in order, while its credit and room last; everything else keeps the one-message wait."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import Env

from ferrymq.engine.api import (
    Delivery,
    GetOptions,
    GetResult,
    ObjectDescriptor,
    PutOptions,
    SubDescriptor,
    Waiting,
)
from ferrymq.engine.message import Message
from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

STREAM = GetOptions(C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, C.MQWI_UNLIMITED, C.MQMO_NONE, non_persistent_only=True,
                    msg_handle=True)


def _subscriber(env: Env, topic: str) -> tuple[int, int, str]:
    """A connection with a managed non-durable subscription: its hconn, hobj and queue."""
    hconn = env.qm.connect()
    sd = SubDescriptor(C.MQSO_CREATE | C.MQSO_MANAGED | C.MQSO_NON_DURABLE, object_string=topic)
    hobj = env.qm.subscribe(hconn, sd).hobj
    queue = env.qm.connections[hconn].handles[hobj].queue
    assert queue is not None
    return hconn, hobj, queue.name


def _publisher(env: Env, topic: str) -> int:
    return env.qm.open(env.hconn, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string=topic),
                       C.MQOO_OUTPUT).hobj


def _wait(env: Env, hconn: int, hobj: int, limit: int, gmo: GetOptions = STREAM, *, streamed: bool = True) -> int:
    results, stop = env.qm.get_many(hconn, hobj, MQMD(version=2), gmo, 1 << 20, limit, 1 << 30, streamed=streamed)
    assert results == [] and isinstance(stop, Waiting)
    return stop.waiter_id


def test_a_streamed_wait_takes_copies_with_properties_without_queueing_them() -> None:
    env = Env()
    hconn, hobj, qname = _subscriber(env, "news/a")
    wid = _wait(env, hconn, hobj, 3)
    pub = _publisher(env, "news/a")
    assert env.qm.put_columns(env.hconn, pub, MQMD(), PutOptions(), [b"%d" % i for i in range(5)]) == [None] * 5
    deliveries = env.qm.take_deliveries()
    assert [(d.waiter_id, d.waiting) for d in deliveries] == [(wid, True), (wid, True), (wid, False)]
    for i, d in enumerate(deliveries):
        assert d.result is not None and d.result.data == b"%d" % i
        assert d.result.properties is not None and d.result.properties["mqps.Top"] == "news/a"
    q = env.qm.objects.require(qname)
    # Three handed over (put and got at once), the two after the credit on the queue, in order.
    assert (q.enqueued, q.dequeued, len(q.messages)) == (5, 3, 2)
    assert [env.get(hobj, hconn=hconn).data for _ in range(2)] == [b"3", b"4"]
    assert not env.qm.waiters


def test_a_wait_that_is_not_streamed_takes_one_message() -> None:
    """A GetBatch's wait (and every MQGET's) is answered with one message, as before."""
    env = Env()
    hconn, hobj, qname = _subscriber(env, "news/b")
    wid = _wait(env, hconn, hobj, 10, streamed=False)
    pub = _publisher(env, "news/b")
    env.qm.put_columns(env.hconn, pub, MQMD(), PutOptions(), [b"a", b"b", b"c"])
    (d,) = env.qm.take_deliveries()
    assert d.waiter_id == wid and not d.waiting and d.result is not None and d.result.data == b"a"
    assert len(env.qm.objects.require(qname).messages) == 2


def test_properties_re_formed_for_the_getter_are_not_handed_over() -> None:
    """Without a message handle, under PROPCTL(FORCE), the mqps folder comes in an MQRFH2:
    the copy is queued and the get path makes it, ending the wait."""
    env = Env()
    env.qm.objects.alter("SYSTEM.NDURABLE.MODEL.QUEUE", {"PROPCTL": C.MQPROP_FORCE_MQRFH2})
    hconn, hobj, qname = _subscriber(env, "news/c")
    no_handle = GetOptions(STREAM.options, STREAM.wait_interval, C.MQMO_NONE, non_persistent_only=True)
    wid = _wait(env, hconn, hobj, 5, no_handle)
    pub = _publisher(env, "news/c")
    env.qm.put_columns(env.hconn, pub, MQMD(format="MQSTR"), PutOptions(), [b"a", b"b"])
    (d,) = env.qm.take_deliveries()
    assert d.waiter_id == wid and not d.waiting and d.result is not None
    assert d.result.md.format.rstrip() == "MQHRF2" and d.result.data.startswith(b"RFH ")
    assert len(env.qm.objects.require(qname).messages) == 1


def test_a_wait_that_goes_on_takes_its_turn_after_the_others() -> None:
    """Two streamed waits on one queue share the messages put to it, as two read-aheads that
    each get again at once would: the wait just given one goes to the back."""
    env = Env()
    env.define("Q1")
    q1 = env.open("Q1")
    other = env.qm.connect()
    q1b = env.qm.open(other, ObjectDescriptor(object_name="Q1"), C.MQOO_INPUT_SHARED).hobj
    first = _wait(env, env.hconn, q1, 5)
    second = _wait(env, other, q1b, 5)
    for i in range(4):
        env.put(q1, b"%d" % i, persistence=C.MQPER_NOT_PERSISTENT)
    got = [(d.waiter_id, d.result.data) for d in env.qm.take_deliveries() if d.result is not None]
    assert got == [(first, b"0"), (second, b"1"), (first, b"2"), (second, b"3")]
    assert env.depth("Q1") == 0


def test_a_copy_handed_over_is_never_made_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """A publication's copy given to a waiting read-ahead goes as the publication's parts
    (its run's template and the copy's identifiers, the shared data and properties): no
    Message is made for it; the copies left after the credit are queued, each a Message."""
    env = Env()
    hconn, hobj, qname = _subscriber(env, "news/m")
    _wait(env, hconn, hobj, 3)
    pub = _publisher(env, "news/m")
    made: list[str] = []
    init = Message.__init__

    def counted(self: Message, queue: str, *args: Any, **kwargs: Any) -> None:
        made.append(queue)
        init(self, queue, *args, **kwargs)

    monkeypatch.setattr(Message, "__init__", counted)
    assert env.qm.put_columns(env.hconn, pub, MQMD(), PutOptions(), [b"%d" % i for i in range(5)]) == [None] * 5
    deliveries = env.qm.take_deliveries()
    assert [d.result.data for d in deliveries if d.result is not None] == [b"0", b"1", b"2"]
    assert made == [qname, qname]
    assert [env.get(hobj, hconn=hconn).data for _ in range(2)] == [b"3", b"4"]


def test_a_copy_handed_over_with_a_confirmation_keeps_its_properties() -> None:
    """A copy whose arrival is confirmed (MQRO_COA) is made a Message as it is handed over,
    for the report: the getter still receives the copy's mqps properties."""
    env = Env()
    env.define("REPLIES")
    hconn, hobj, _ = _subscriber(env, "news/r")
    wid = _wait(env, hconn, hobj, 2)
    pub = _publisher(env, "news/r")
    md = MQMD(report=C.MQRO_COA, reply_to_q="REPLIES")
    assert env.qm.put_columns(env.hconn, pub, md, PutOptions(), [b"x"]) == [None]
    (d,) = env.qm.take_deliveries()
    assert d.waiter_id == wid and d.result is not None and d.result.data == b"x"
    assert d.result.properties is not None and d.result.properties["mqps.Top"] == "news/r"
    assert env.depth("REPLIES") == 1


def test_a_handed_over_copy_is_pushed_as_its_own_parts() -> None:
    """What a read-ahead pushes of a copy handed to its wait (Delivery.parts) is what get
    returns of it, but with the publication's own property set, shared by the copies (a
    frame only reads it), where ``result`` gives the getter a copy of its own."""
    env = Env()
    hconn, hobj, _ = _subscriber(env, "news/p")
    _wait(env, hconn, hobj, 3)
    pub = _publisher(env, "news/p")
    env.qm.put_columns(env.hconn, pub, MQMD(), PutOptions(), [b"a", b"bb"])
    first, second = env.qm.take_deliveries()
    parts, others = first.parts(), second.parts()
    assert parts is not None and others is not None
    md_bytes, data, length, token, props = parts
    assert props is not None and props is others[4] and props["mqps.Top"] == "news/p"
    r = first.result
    assert r is not None and r.md_bytes is not None
    assert (md_bytes, data, length, token) == (r.md_bytes, r.data, r.data_length, r.msg_token) == (
        r.md.pack(), b"a", 1, r.msg_token)
    assert r.properties == props and r.properties is not props
    assert others[1:3] == (b"bb", 2)


def test_a_delivery_made_from_a_result_or_an_error_has_its_parts_or_none() -> None:
    result = GetResult(MQMD(version=2), b"xyz", 5, bytes(16), "Q1")
    assert Delivery(7, result).parts() == (MQMD(version=2).pack(), b"xyz", 5, bytes(16), None) == result.parts()
    assert Delivery(8, None, failed(C.MQRC_NO_MSG_AVAILABLE, "timed out")).parts() is None
