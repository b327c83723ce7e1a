"""Automatic client reconnection (MQCNO_RECONNECT): the decisions, shared by both clients.

What a reconnecting client does after its connection is lost (a broken socket, missed
heartbeats, or the queue manager ending the conversation because it stops):

- it dials the connection name again, with growing pauses, until ``timeout`` seconds
  have passed (MQ's MQRCN default is 1800 s), then fails with MQRC_RECONNECT_FAILED;
- it re-opens every queue and topic still open, with the same options (a temporary
  dynamic queue is made again under the same name), and restarts read-ahead on demand;
- it makes every subscription still open again, after the queue it delivers to: a durable
  one is resumed by name (MQSO_RESUME), with the publications that waited for it; a
  non-durable one ended with the conversation, as IBM MQ ends it, and is created again
  (MQSO_CREATE) on a new managed queue: what was published in between is not delivered,
  as for any non-durable subscription that did not exist then. A durable MQSUB whose
  request had left answers MQRC_CALL_INTERRUPTED (it may have been created);
- the unit of work in progress is gone (the queue manager backed it out when the
  connection dropped): every later call in it fails with MQRC_BACKED_OUT until the
  application ends it (MQCMIT answers 2003, MQBACK succeeds);
- the call that was in flight is sent again when doing so cannot duplicate or lose
  anything the application was told about (opens, closes, inquiries, gets outside a unit
  of work — a non-persistent message taken by a get whose answer was lost is lost, as in
  MQ); a put or commit whose request had left answers MQRC_CALL_INTERRUPTED, because its
  outcome is unknown (persistent puts outside syncpoint may then have been stored);
- asynchronous puts sent since the last MQSTAT may or may not have reached the queue
  manager, and MQSTAT after a reconnect counts the new conversation only: an application
  that must know calls stat() (which waits until its puts are on disk) at its own
  checkpoints, and puts again what came after the last good one;
- non-persistent messages read ahead and not yet taken are gone (never persistent ones:
  those are not sent ahead).

``events`` receives (reason, detail) with MQRC_RECONNECTING, MQRC_RECONNECTED and
MQRC_RECONNECT_FAILED, like an MQCBT_EVENT_HANDLER; the same facts are logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ferrymq.client.errors import BackedOut, error_for
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.columnframes import PutColumns

log = logging.getLogger("ferrymq.client")

EventHandler = Callable[[int, str], None]

DEFAULT_TIMEOUT = 1800.0
"""Seconds a client keeps trying (MQ's default reconnect timeout, MQRCN)."""

# Why a conversation ended that a reconnect can cure: the link, or the queue manager
# going away (quiescing or stopping, as for a restart).
RECONNECTABLE = frozenset({C.MQRC_CONNECTION_BROKEN, C.MQRC_Q_MGR_QUIESCING, C.MQRC_Q_MGR_STOPPING,
                           C.MQRC_Q_MGR_NOT_AVAILABLE, C.MQRC_HOST_NOT_AVAILABLE, C.MQRC_CONNECTION_QUIESCING,
                           C.MQRC_CONNECTION_STOPPING})


@dataclass(frozen=True, slots=True)
class ReconnectPolicy:
    """How long and how often to redial. ``first`` and ``longest`` bound the pause."""

    timeout: float = DEFAULT_TIMEOUT
    first: float = 0.05
    longest: float = 2.0

    def pauses(self) -> Iterator[float]:
        pause = self.first
        while True:
            yield pause
            pause = min(self.longest, pause * 2)


@dataclass(slots=True)
class OpenRecord:
    """What re-opens a queue or a topic after a reconnect; or, with ``sub``, what makes a
    subscription again (MQSUB, not MQOPEN); or, with ``managed``, marks the queue a
    managed subscription made, which its subscription's MQSUB makes again."""

    name: str  # the object the application named (for a model queue, the model)
    options: int
    object_q_mgr_name: str
    dynamic_q_name: str
    selection_string: str = ""
    object_type: int = C.MQOT_Q
    object_string: str = ""  # a topic's string
    managed: bool = False
    sub: E.Sub | None = None  # the MQSUB as the application made it


class Reopenable(Protocol):
    """An open object a reconnect opens again: a ``Queue`` or an MQI layer's handle (for a
    subscription, ``hobj`` is its hsub)."""

    record: OpenRecord
    hobj: int  # its handle on the current conversation (0: it could not be re-opened)


class Resubscribable(Reopenable, Protocol):
    """A subscription a reconnect makes again, and the queue its publications reach."""

    queue: Reopenable


@dataclass(slots=True)
class NumberedHandle:
    """A handle opened through the MQI layer (ferrymq.client.mqi): the application keeps
    the number the first open gave (``number``); ``hobj`` is its handle now. A
    subscription's (an hsub) has its ``queue``."""

    record: OpenRecord
    hobj: int
    number: int
    queue: Reopenable | None = None


class Handles:
    """Everything open on a client's conversation, for the reconnect to open again, and
    how the handles of the last conversation map onto the current one (``remap``)."""

    __slots__ = ("numbered", "open", "remap")

    def __init__(self) -> None:
        self.open: dict[int, Reopenable] = {}  # id(object) -> object
        self.numbered: dict[int, NumberedHandle] = {}  # the application's number -> its handle
        self.remap: dict[int, int] = {}  # handles before the last reconnect -> after

    def add(self, obj: Reopenable) -> None:
        self.open[id(obj)] = obj

    def add_numbered(self, record: OpenRecord, hobj: int, queue: Reopenable | None = None) -> NumberedHandle:
        handle = NumberedHandle(record, hobj, hobj, queue)
        self.numbered[hobj] = handle
        self.open[id(handle)] = handle
        return handle

    def keep(self, handle: NumberedHandle) -> None:
        """Add a numbered handle made elsewhere (a managed subscription's queue)."""
        self.numbered[handle.number] = handle
        self.open[id(handle)] = handle

    def forget(self, obj: Reopenable) -> None:
        self.open.pop(id(obj), None)
        if isinstance(obj, NumberedHandle):
            self.numbered.pop(obj.number, None)

    def current(self, number: int) -> int:
        """The handle an application-held number has on the current conversation."""
        handle = self.numbered.get(number)
        return number if handle is None else handle.hobj

    def by_number(self, number: int) -> Reopenable:
        """The object behind a number (an unknown one stands for itself: the queue manager
        answers MQRC_HOBJ_ERROR for it)."""
        return self.numbered.get(number) or NumberedHandle(OpenRecord("", 0, "", ""), number, number)


def reopen_name(record: OpenRecord, opened_as: str) -> OpenRecord:
    """A model queue's open made ``opened_as``: re-open the same dynamic queue name."""
    if opened_as and opened_as != record.name:
        return replace(record, dynamic_q_name=opened_as)
    return record


def reconnectable(exc: BaseException) -> bool:
    return isinstance(exc, MQError) and exc.reason in RECONNECTABLE


GET_SYNCPOINT = C.MQGMO_SYNCPOINT | C.MQGMO_SYNCPOINT_IF_PERSISTENT
"""The get options that make a get part of a unit of work."""


def in_syncpoint(ev: Any) -> bool:
    """Is the call part of a unit of work? (Of the calls ``UnitOfWorkGuard`` sees, only these
    and Commit/Backout change or consult its state: callers on a hot path skip it for others.)"""
    t = type(ev)
    if t is E.Put or t is E.Put1 or t is PutColumns:
        return bool(ev.options & C.MQPMO_SYNCPOINT)
    if t is E.Get or t is E.GetBatch or t is E.GetAhead:
        return bool(ev.options & GET_SYNCPOINT)
    return t is E.ReturnAhead


class UnitOfWorkGuard:
    """Knows whether a unit of work is open, and fails its calls once a reconnect lost it."""

    __slots__ = ("active", "lost")

    def __init__(self) -> None:
        self.active = False  # a syncpoint put or get was sent since the last commit/backout
        self.lost = False  # a reconnect happened while active

    def before(self, ev: Any) -> None:
        """Raises BackedOut for a call in a unit of work that a reconnect already lost."""
        if not self.lost:
            if in_syncpoint(ev):
                self.active = True
            return
        t = type(ev)
        if t is E.Commit:
            self.lost = self.active = False
            raise BackedOut(C.MQCC_FAILED, C.MQRC_BACKED_OUT,
                            "the connection was lost and re-made: the unit of work was backed out")
        if t is E.Backout:
            self.lost = self.active = False
            return
        if in_syncpoint(ev):
            raise BackedOut(C.MQCC_FAILED, C.MQRC_BACKED_OUT,
                            "the connection was lost and re-made inside this unit of work: it was backed out; "
                            "end it with backout (or commit, which reports 2003)")

    def ended(self, ev: Any) -> None:
        if type(ev) is E.Commit or type(ev) is E.Backout:
            self.active = False

    def reconnected(self) -> None:
        if self.active:
            self.lost = True


def after_reconnect(ev: Any, sent: bool) -> str:
    """What to do with the call that was in flight: "retry", or raise.

    Raises:
        BackedOut: the call belonged to the unit of work the reconnect lost.
        MQError: MQRC_CALL_INTERRUPTED, a put or commit whose outcome is unknown.
    """
    t = type(ev)
    if in_syncpoint(ev) or (t is E.Commit and not sent):
        raise BackedOut(C.MQCC_FAILED, C.MQRC_BACKED_OUT,
                        "the connection was lost inside this unit of work: it was backed out")
    if sent and (t is E.Put or t is E.Put1 or t is E.Commit):
        raise error_for(C.MQCC_FAILED, C.MQRC_CALL_INTERRUPTED,
                        f"the connection was lost after this {t.__name__.upper()} was sent: its outcome is unknown")
    if sent and t is E.Sub and ev.options & C.MQSO_DURABLE:  # a non-durable one ended with the conversation
        raise error_for(C.MQCC_FAILED, C.MQRC_CALL_INTERRUPTED,
                        "the connection was lost after this durable MQSUB was sent: it may have been made")
    return "retry"


class Redialer:
    """Redials with backoff until the policy's time runs out; reports through ``events``."""

    def __init__(self, policy: ReconnectPolicy, events: EventHandler | None) -> None:
        self.policy = policy
        self.events = events
        self.reconnects = 0

    def report(self, reason: int, detail: str) -> None:
        log.warning("event=reconnect reason=%d detail=%s", reason, detail)
        if self.events is not None:
            self.events(reason, detail)

    def attempts(self, cause: BaseException) -> Iterator[float]:
        """Pauses before each attempt (0 first); raises MQRC_RECONNECT_FAILED at the end."""
        self.report(C.MQRC_RECONNECTING, f"connection lost ({cause}); reconnecting")
        deadline = time.monotonic() + self.policy.timeout
        yield 0.0
        for pause in self.policy.pauses():
            now = time.monotonic()
            if now >= deadline:
                break
            yield min(pause, deadline - now)
        detail = f"no queue manager answered within the reconnect timeout ({self.policy.timeout:g} s)"
        self.report(C.MQRC_RECONNECT_FAILED, detail)
        raise error_for(C.MQCC_FAILED, C.MQRC_RECONNECT_FAILED, detail)

    def succeeded(self) -> None:
        self.reconnects += 1
        self.report(C.MQRC_RECONNECTED, f"reconnected (reconnect number {self.reconnects})")


def renew(ev: Any, corr: int, remap: dict[int, int], elapsed: float) -> Any:
    """The interrupted request again, for the new conversation: new correlation id, the
    re-opened handle, what is left of a get's wait."""
    changes: dict[str, Any] = {"corr": corr}
    for attr in ("hobj", "hsub"):
        handle = getattr(ev, attr, None)
        if isinstance(handle, int):
            changes[attr] = remap.get(handle, handle)
    if type(ev) is E.Get and ev.wait_interval > 0:
        changes["wait_interval"] = max(0, ev.wait_interval - int(elapsed * 1000))
    return replace(ev, **changes)


def resubscription(sub: E.Sub, hobj: int) -> E.Sub:
    """The MQSUB that makes a subscription again on a new conversation, delivering to the
    queue ``hobj`` (MQHO_NONE for a managed one): a durable subscription resumed by name,
    a non-durable one created again."""
    options = sub.options
    if options & C.MQSO_DURABLE:
        options = options & ~(C.MQSO_CREATE | C.MQSO_ALTER) | C.MQSO_RESUME
    else:
        options = options & ~(C.MQSO_RESUME | C.MQSO_ALTER) | C.MQSO_CREATE
    return replace(sub, options=options, hobj=hobj)


def reopen_failed(exc: MQError, name: str) -> None:
    """A queue could not be re-opened after a reconnect. A reconnectable reason means the
    new conversation died too (raised, so the redial goes on); any other (the queue is
    gone or changed while we were away) is logged, and calls on the handle fail (2019).

    Raises:
        MQError: ``exc``, when reconnectable.
    """
    if reconnectable(exc):
        raise exc
    log.warning("event=reopen_failed queue=%s reason=%d", name, exc.reason)

