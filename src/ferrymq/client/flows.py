"""The clients' multi-step flows, written once (sans-IO; the steps are in ferrymq.client.steps).

- ``open_queue``: MQOPEN with the client's default options, falling back to output only
  for a queue that cannot be read (a remote queue, an alias of one);
- ``reply`` and ``report``: the answer a Report option asks for, sent with MQPUT1;
- ``call_again`` and ``reconnect``: a call whose conversation ended, sent again on a new
  one (the rules are in ferrymq.client.reconnect);
- ``Transaction``: whether a client's calls default to syncpoint (``transaction()``).

``Client`` and ``AsyncClient`` run them with their ``run``; tests/unit/test_client_flows.py runs them
with a scripted driver, tests/integration with the clients.
"""

from __future__ import annotations

import time
from typing import Any, cast

from ferrymq.client import mqi, pubsub, replies
from ferrymq.client import reconnect as R
from ferrymq.client import session as S
from ferrymq.client.errors import error_for
from ferrymq.client.message import Message, PutResult
from ferrymq.client.steps import Call, Drop, Exchange, Flow, Lost, Pause, Reconnect, Redial, Send
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.wire.mqmd import MQMD

_NO_SPEC: S.PutSpec = (None, None, None, "", "", None, None, 0, 0)  # every descriptor field from ``md``


def open_queue(conv: mqi.Conversation, name: str, options: int | None, read_ahead: int, object_q_mgr_name: str,
               dynamic_q_name: str, selector: str) -> Flow[tuple[E.OpenReply, R.OpenRecord]]:
    """MQOPEN as ``Client.open`` does it; the reply and what re-opens the queue.

    Raises:
        MQError: the open was refused.
    """
    opts = S.DEFAULT_OPEN if options is None else options
    if read_ahead:
        opts |= C.MQOO_READ_AHEAD
    record = R.OpenRecord(name, opts, object_q_mgr_name, dynamic_q_name, selector)
    try:
        reply = yield from mqi.open_(conv, record)
    except MQError as exc:
        if options is None and exc.reason == C.MQRC_NOT_AUTHORIZED:
            return (yield from _open_as_authorized(conv, record, exc))
        if options is not None or exc.reason != C.MQRC_OPTION_NOT_VALID_FOR_TYPE:
            raise
        record = R.OpenRecord(name, S.OUTPUT_ONLY, object_q_mgr_name, dynamic_q_name, selector)
        try:
            reply = yield from mqi.open_(conv, record)
        except MQError as again:
            # a queue named at another queue manager has no attributes here to inquire on
            if again.reason != C.MQRC_OPTION_NOT_VALID_FOR_TYPE or not object_q_mgr_name.strip():
                raise
            record = R.OpenRecord(name, S.OUTPUT_ONLY & ~C.MQOO_INQUIRE, object_q_mgr_name, dynamic_q_name, selector)
            reply = yield from mqi.open_(conv, record)
    return reply, R.reopen_name(record, reply.object_name)


# What a default open falls back to when the queue manager's authority records refuse some
# of its options (2035): the widest set the user is granted, the first that opens.
_AUTHORIZED_FALLBACKS = (C.MQOO_INPUT_AS_Q_DEF | C.MQOO_OUTPUT, C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE,
                         C.MQOO_OUTPUT, C.MQOO_INPUT_AS_Q_DEF, C.MQOO_BROWSE)


def _open_as_authorized(conv: mqi.Conversation, first: R.OpenRecord,
                        refusal: MQError) -> Flow[tuple[E.OpenReply, R.OpenRecord]]:
    """``Client.open(name)`` without options by a user the OAM grants less than all of them.

    Raises:
        MQError: the first refusal (2035) when no narrower open is granted either.
    """
    keep = first.options & (C.MQOO_READ_AHEAD | C.MQOO_FAIL_IF_QUIESCING)
    for options in _AUTHORIZED_FALLBACKS:
        record = R.OpenRecord(first.name, options | keep, first.object_q_mgr_name, first.dynamic_q_name,
                              first.selection_string)
        try:
            reply = yield from mqi.open_(conv, record)
        except MQError as exc:
            if exc.reason != C.MQRC_NOT_AUTHORIZED:
                raise
            continue
        return reply, R.reopen_name(record, reply.object_name)
    raise refusal


def put1(conv: mqi.Conversation, queue: str, data: bytes | str, md: MQMD, syncpoint: bool) -> Flow[PutResult]:
    """MQPUT1 of a descriptor made whole (a reply's, a report's)."""
    s = conv.session
    ev, _ = S.put_event(s, s.next_corr(), queue, data, _NO_SPEC, None, None, None, syncpoint, False, md, 0)
    return S.put_result((yield Call(ev)))


def reply(conv: mqi.Conversation, request: Message, data: bytes | str, feedback: int, persistent: bool | None,
          priority: int | None, syncpoint: bool) -> Flow[PutResult]:
    """A reply to ``request``, as its Report options ask (see ferrymq.client.replies).

    Raises:
        MQError: MQRC_MISSING_REPLY_TO_Q when the request names no ReplyToQ; a put failure.
    """
    queue, md = replies.plan_reply(request.md, data, feedback, priority, persistent)
    return (yield from put1(conv, queue, data, md, syncpoint))


def report(conv: mqi.Conversation, original: Message, feedback: int, data: bytes | None,
           syncpoint: bool) -> Flow[PutResult | None]:
    """A report on ``original`` if it asked for that kind; None otherwise.

    Raises:
        MQError: MQRC_MISSING_REPLY_TO_Q when the original names no ReplyToQ; a put failure.
    """
    plan = replies.plan_report(original.md, original.data, feedback, data)
    if plan is None:
        return None
    queue, md, body = plan
    return (yield from put1(conv, queue, body, md, syncpoint))


def call_again(conv: mqi.Conversation, ev: Any, lost: Lost, started: float) -> Flow[Any]:
    """A call whose conversation ended (``lost``): reconnect, then send it again on the new
    conversation, or raise what ``reconnect.after_reconnect`` decides.

    Raises:
        BackedOut: the call belongs to a unit of work a reconnect lost.
        MQError: MQRC_CALL_INTERRUPTED; MQRC_RECONNECT_FAILED.
    """
    while True:
        yield Reconnect(lost)
        R.after_reconnect(ev, lost.sent)
        ev = R.renew(ev, conv.session.next_corr(), conv.handles.remap, time.monotonic() - started)
        try:
            return (yield Send(ev))
        except Lost as again:
            lost = again


def reconnect(conv: mqi.Conversation, redial: R.Redialer, uow: R.UnitOfWorkGuard, cause: MQError) -> Flow[None]:
    """Dial again until a queue manager answers, then re-open everything open.

    Raises:
        MQError: MQRC_RECONNECT_FAILED once the reconnect timeout has passed.
    """
    handles = conv.handles
    yield Drop()
    before = {key: obj.hobj for key, obj in handles.open.items()}
    for pause in redial.attempts(cause):
        yield Pause(pause)
        try:
            s = yield Redial()
            for obj in list(handles.open.values()):
                yield from _reopen(s, obj)
        except (OSError, MQError) as exc:
            if isinstance(exc, MQError) and not R.reconnectable(exc):
                raise
            yield Drop()
            continue
        # An object that could not be re-opened maps to 0: a call in flight on it fails (2019).
        handles.remap = {before[key]: obj.hobj for key, obj in handles.open.items() if before.get(key)}
        uow.reconnected()
        redial.succeeded()
        return


def _reopen(s: S.Session, obj: R.Reopenable) -> Flow[None]:
    """Open an object again on a new conversation; one that cannot be (gone or changed
    while we were away) keeps handle 0, so its calls fail with 2019. A subscription is
    made again (reconnect.resubscription) after the queue it delivers to, which it
    hands its new handle when managed."""
    record = obj.record
    if record.managed:  # its subscription, met before it, made it again
        return
    if record.sub is not None:
        yield from _resubscribe(s, cast(R.Resubscribable, obj), record.sub)
        return
    try:
        reply = S.check((yield Exchange(S.open_event(s.next_corr(), obj.record))))
    except MQError as exc:
        R.reopen_failed(exc, obj.record.name)
        obj.hobj = 0
        return
    obj.hobj = reply.hobj


def _resubscribe(s: S.Session, obj: R.Resubscribable, sub: E.Sub) -> Flow[None]:
    queue = obj.queue
    managed = queue.record.managed
    try:
        if not managed and not queue.hobj:
            raise error_for(C.MQCC_FAILED, C.MQRC_HOBJ_ERROR, "the subscription's queue could not be re-opened")
        ev = R.resubscription(sub, C.MQHO_NONE if managed else queue.hobj)
        reply = S.check((yield Exchange(pubsub.sub_event(s.next_corr(), ev))))
    except MQError as exc:
        R.reopen_failed(exc, sub.sub_name or sub.object_string)
        obj.hobj = 0
        if managed:
            queue.hobj = 0
        return
    obj.hobj = reply.hsub
    if managed:
        queue.hobj = reply.hobj


class Transaction:
    """Whether ``transaction()`` is active: puts and gets default to syncpoint inside it."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active = False

    def begin(self) -> None:
        """Raises RuntimeError when one is already active on the connection."""
        if self.active:
            raise RuntimeError("a unit of work is already active on this connection")
        self.active = True

    def end(self) -> None:
        self.active = False
