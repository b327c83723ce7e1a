"""A message arriving on a queue: the one step every message the engine accepts ends in.

``place`` holds the message in the unit of work it was put under (visible at commit), or
journals it (when persistent), inserts it in the queue's index, offers it to the waiting
gets and sends its confirmation of arrival. Puts (engine.putting), reports and dead letters
(engine.reports), messages moved at backout (engine.units) all arrive here.

It is also where what comes next plugs in (docs/architecture.md, "Extension points"): a
subscription's copy of a publication and a message bound for another queue manager, on
its transmission queue, arrive through ``place`` like any other.
"""

from __future__ import annotations

from collections.abc import Callable

from ferrymq.engine.message import Message
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.session import UnitOfWork
from ferrymq.engine.state import EngineState
from ferrymq.engine.waits import Waits
from ferrymq.mq import constants as C

_COA = C.MQRO_COA
_TRIGGER_ON = C.MQTC_ON
_PERSISTENT = C.MQPER_PERSISTENT


def _no_confirmation(msg: Message, uow: UnitOfWork | None = None) -> None:  # pragma: no cover - until bound
    raise RuntimeError("Arrivals used before confirm_with")


def _no_triggers(q: QueueObject, msg: Message, uow: UnitOfWork | None) -> None:  # pragma: no cover - until bound
    raise RuntimeError("Arrivals used before trigger_with")


class Arrivals:
    """Places messages on queues (see the module docstring)."""

    def __init__(self, state: EngineState, waits: Waits) -> None:
        self.staging = state.staging
        self.pager = state.pager
        self.wake = waits.wake
        self.queue_waiters = waits.queue_waiters  # the queues with waiting gets: the only ones to wake
        self.confirm: Callable[[Message, UnitOfWork | None], None] = _no_confirmation
        self.trigger: Callable[[QueueObject, Message, UnitOfWork | None], None] = _no_triggers
        self.objects = state.objects
        self.counted: Callable[[QueueObject], None] = lambda q: None  # engine.events: depth events

    def confirm_with(self, report_arrival: Callable[[Message, UnitOfWork | None], None]) -> None:
        """Bind the confirmation of arrival (engine.reports), made once at composition."""
        self.confirm = report_arrival

    def trigger_with(self, arrived: Callable[[QueueObject, Message, UnitOfWork | None], None]) -> None:
        """Bind the trigger check (engine.triggering ``Triggers.arrived``), made once at composition."""
        self.trigger = arrived

    def place(self, q: QueueObject, msg: Message, uow: UnitOfWork | None, gather: list[Message] | None = None) -> None:
        """Put a message on its queue: held by ``uow`` until it commits, or visible now (with
        its confirmation of arrival, if it asked for one). A queue with TRIGGER set is
        looked at before the message counts in its depth (engine.triggering).

        ``gather`` (a run of puts in ``uow``): a persistent message's record is not staged
        here but left in it, for the caller to stage with the run's others
        (``Staging.journal_messages``) before its call returns."""
        if q.attrs.get("TRIGGER") == _TRIGGER_ON:
            self.trigger(q, msg, uow)
        persistent = msg.persistence == _PERSISTENT
        if uow is not None:
            if persistent:
                if gather is None:
                    self.staging.journal_message(msg, uow.txid)
                else:
                    gather.append(msg)
                uow.journaled = True
            uow.puts.append((q, msg))
            q.messages.uncommitted += 1
            q.enqueued += 1
            if q.events_on or q.events_epoch != self.objects.epoch:
                self.counted(q)
            return
        if persistent:
            staging = self.staging
            staging.journal_message(msg)
            staging.need_sync()
        q.messages.insert(msg)
        q.enqueued += 1
        if q.events_on or q.events_epoch != self.objects.epoch:
            self.counted(q)
        if persistent:
            self.pager.settle()
        if q.name in self.queue_waiters:
            self.wake(q)
        if msg.report & _COA:
            self.confirm(msg, None)
