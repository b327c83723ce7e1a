"""The clients' multi-step flows (ferrymq.client.flows, ferrymq.client.mqi), driven without
I/O: a scripted driver answers each step the flow yields, as a client would, and records
them. The clients run the same flows over real sockets in tests/integration
(test_client_api.py, test_reconnect.py, test_pymqi_api.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from ferrymq.client import flows as F
from ferrymq.client import mqi
from ferrymq.client import reconnect as R
from ferrymq.client import session as S
from ferrymq.client.errors import BackedOut
from ferrymq.client.steps import Call, Drop, Exchange, Flow, Lost, Pause, Reconnect, Redial, Send, Step, drive
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E

T = TypeVar("T")
Answer = Callable[[Step], Any]


class Scripted:
    """A Conversation whose steps are answered by ``answer`` (raise to fail a step)."""

    def __init__(self, answer: Answer) -> None:
        self.session = S.Session()
        self.handles = R.Handles()
        self.answer = answer
        self.steps: list[Step] = []

    def run(self, flow: Flow[T]) -> T:
        return drive(flow, self._step)

    def _step(self, step: Step) -> Any:
        self.steps.append(step)
        outcome = self.answer(step)
        if isinstance(step, Redial):
            self.session = S.Session()
            return self.session
        return outcome


def refused(ev: Any, reason: int) -> E.Reply:
    return E.Reply(ev.corr, C.MQCC_FAILED, reason)


def test_open_falls_back_to_output_only_for_a_queue_that_cannot_be_read() -> None:
    def answer(step: Step) -> Any:
        assert isinstance(step, Call) and type(step.ev) is E.Open
        if step.ev.options & C.MQOO_INPUT_AS_Q_DEF:
            return refused(step.ev, C.MQRC_OPTION_NOT_VALID_FOR_TYPE)
        return E.OpenReply(step.ev.corr, 7, "REMOTE.Q")

    conv = Scripted(answer)
    reply, record = conv.run(F.open_queue(conv, "REMOTE.Q", None, 0, "", "AMQ.*", ""))
    assert reply.hobj == 7 and record.options == S.OUTPUT_ONLY
    assert [s.ev.options for s in conv.steps if isinstance(s, Call)] == [S.DEFAULT_OPEN, S.OUTPUT_ONLY]


@pytest.mark.parametrize(("options", "reason"), [(None, C.MQRC_UNKNOWN_OBJECT_NAME),
                                                 (C.MQOO_INPUT_SHARED, C.MQRC_OPTION_NOT_VALID_FOR_TYPE)])
def test_open_does_not_fall_back_otherwise(options: int | None, reason: int) -> None:
    conv = Scripted(lambda step: refused(step.ev, reason))  # type: ignore[union-attr]
    with pytest.raises(MQError) as info:
        conv.run(F.open_queue(conv, "Q", options, 0, "", "AMQ.*", ""))
    assert info.value.reason == reason and len(conv.steps) == 1


def test_a_model_queue_is_reopened_under_the_name_it_was_given() -> None:
    conv = Scripted(lambda step: E.OpenReply(step.ev.corr, 3, "AMQ.0001"))  # type: ignore[union-attr]
    _, record = conv.run(F.open_queue(conv, "MODEL", None, 0, "", "AMQ.*", ""))
    assert (record.name, record.dynamic_q_name) == ("MODEL", "AMQ.0001")


class Opened:
    def __init__(self, name: str, hobj: int) -> None:
        self.record = R.OpenRecord(name, S.DEFAULT_OPEN, "", "")
        self.hobj = hobj


def test_reconnect_reopens_everything_and_maps_the_old_handles() -> None:
    gone = C.MQRC_UNKNOWN_OBJECT_NAME
    tries = {"dials": 0}
    new = {"A": 11, "B": 12, "NUMBERED": 13}

    def answer(step: Step) -> Any:
        if isinstance(step, Redial):
            tries["dials"] += 1
            if tries["dials"] == 1:
                raise MQError(C.MQCC_FAILED, C.MQRC_HOST_NOT_AVAILABLE, "not yet")
            return None
        if isinstance(step, Exchange):
            name = step.ev.object_name
            return refused(step.ev, gone) if name == "GONE" else E.OpenReply(step.ev.corr, new[name], name)
        assert isinstance(step, (Pause, Drop))
        return None

    conv = Scripted(answer)
    a, b, lost = Opened("A", 1), Opened("B", 2), Opened("GONE", 3)
    for q in (a, b, lost):
        conv.handles.add(q)
    conv.handles.add_numbered(R.OpenRecord("NUMBERED", C.MQOO_OUTPUT, "", ""), 4)
    uow = R.UnitOfWorkGuard()
    uow.active = True
    redial = R.Redialer(R.ReconnectPolicy(timeout=60, first=0.0), None)
    conv.run(F.reconnect(conv, redial, uow, MQError(C.MQCC_FAILED, C.MQRC_CONNECTION_BROKEN, "cut")))
    assert (a.hobj, b.hobj, lost.hobj, conv.handles.current(4)) == (11, 12, 0, 13)
    assert conv.handles.remap == {1: 11, 2: 12, 3: 0, 4: 13}  # a call in flight on GONE fails with 2019
    assert uow.lost and redial.reconnects == 1 and tries["dials"] == 2
    kinds = [type(s).__name__ for s in conv.steps]
    assert kinds[:5] == ["Drop", "Pause", "Redial", "Drop", "Pause"]  # the failed dial's connection is closed


def test_a_sent_put_is_not_sent_again_after_a_reconnect() -> None:
    conv = Scripted(lambda step: None)
    put = E.Put(5, 1, b"", b"x", C.MQPMO_NO_SYNCPOINT)
    with pytest.raises(MQError) as info:
        conv.run(F.call_again(conv, put, Lost(MQError(2, C.MQRC_CONNECTION_BROKEN, ""), sent=True), 0.0))
    assert info.value.reason == C.MQRC_CALL_INTERRUPTED
    assert [type(s) for s in conv.steps] == [Reconnect]


def test_a_call_in_a_lost_unit_of_work_is_backed_out() -> None:
    conv = Scripted(lambda step: None)
    get = E.Get(5, 1, b"", C.MQGMO_SYNCPOINT, 0, 0, 100)
    with pytest.raises(BackedOut):
        conv.run(F.call_again(conv, get, Lost(MQError(2, C.MQRC_CONNECTION_BROKEN, ""), sent=False), 0.0))


def test_an_interrupted_get_is_sent_again_on_the_reopened_handle() -> None:
    conv = Scripted(lambda step: E.Reply(step.ev.corr) if isinstance(step, Send) else None)
    conv.handles.remap = {1: 21}
    get = E.Get(5, 1, b"", C.MQGMO_NO_SYNCPOINT, 60_000, 0, 100)
    lost = Lost(MQError(2, C.MQRC_CONNECTION_BROKEN, ""), sent=True)
    conv.run(F.call_again(conv, get, lost, 0.0))  # started long ago: no wait is left
    sent = conv.steps[-1]
    assert isinstance(sent, Send) and (sent.ev.hobj, sent.ev.wait_interval) == (21, 0) and sent.ev.corr != 5


def test_a_call_lost_twice_reconnects_twice() -> None:
    lost = Lost(MQError(2, C.MQRC_CONNECTION_BROKEN, ""), sent=False)
    sends = []

    def answer(step: Step) -> Any:
        if isinstance(step, Send):
            sends.append(step)
            if len(sends) == 1:
                raise lost
            return E.Reply(step.ev.corr)
        return None

    conv = Scripted(answer)
    inq = E.Inquire(5, 1, (C.MQIA_CURRENT_Q_DEPTH,), ())
    reply = conv.run(F.call_again(conv, inq, lost, 0.0))
    assert isinstance(reply, E.Reply) and [type(s) for s in conv.steps] == [Reconnect, Send, Reconnect, Send]


def test_a_report_is_sent_only_when_asked_for() -> None:
    from ferrymq.client.message import Message
    from ferrymq.wire.mqmd import MQMD

    conv = Scripted(lambda step: E.PutReply(step.ev.corr, md=step.ev.md))  # type: ignore[union-attr]
    plain = Message(MQMD(reply_to_q="R").pack(), b"data")
    assert conv.run(F.report(conv, plain, C.MQFB_PAN, None, False)) is None and not conv.steps
    asked = Message(MQMD(reply_to_q="R", report=C.MQRO_PAN).pack(), b"data")
    conv.run(F.report(conv, asked, C.MQFB_PAN, None, False))
    (step,) = conv.steps
    assert isinstance(step, Call) and type(step.ev) is E.Put1 and step.ev.object_name == "R"


def test_mqclose_forgets_a_numbered_handle_even_when_refused() -> None:
    conv = Scripted(lambda step: refused(step.ev, C.MQRC_HOBJ_ERROR))  # type: ignore[union-attr]
    conv.handles.add_numbered(R.OpenRecord("Q", C.MQOO_OUTPUT, "", ""), 9)
    with pytest.raises(MQError):
        mqi.mqclose(conv, 9)
    assert conv.handles.numbered == {} and conv.handles.open == {}


def test_transaction_is_one_at_a_time() -> None:
    tx = F.Transaction()
    tx.begin()
    with pytest.raises(RuntimeError):
        tx.begin()
    tx.end()
    tx.begin()
