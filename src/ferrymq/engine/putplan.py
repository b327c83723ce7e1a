"""The put entry's memo: what MQPUT works out once for a handle, its put options and a
descriptor, kept for the next put (engine.putting asks it before its checks).

An application puts through one handle with the same options and a descriptor that differs
from one message to the next only in MsgId and CorrelId (PutDate and PutTime are the queue
manager's to set). All MQPUT checks and resolves but those is a function of: the handle
(fixed at MQOPEN), the options, the descriptor's other fields, the attributes of the queue,
its alias and the queue manager, and whether the queue manager is quiescing. A PutPlan holds
the outcome (the warning, priority and persistence, the refusal rules, the stored descriptor
but its identifiers and put time, and its packed bytes) for the next put with the same
handle, options and descriptor fields and the same ``epoch``: the object registry bumps it
on every define, alter and delete of a queue and every change of the queue manager's
attributes, and quiesce bumps it too, so every such change makes every plan stale.

What may differ from one put to the next is still checked per put, in MQPUT's order (see
PutLimits): the data's length, depth, the unit of work's size. Plans are made only for the
common shape, where ``place`` decides nothing else per message: the queue manager sets all
context, and there are no message properties, no MQRFH2 and no PROPCTL(V6COMPAT).
"""

from __future__ import annotations

import sys
from collections.abc import Sized

from ferrymq.engine.objects import QueueObject
from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.store.journal import Journal
from ferrymq.wire.mqmd import MQMD

_NO_BOUND = sys.maxsize


class PutLimits:
    """The rules that refuse a put through one handle, in MQPUT's order: the data's length
    (queue manager, then queue MAXMSGL), put inhibited (alias, then queue), a persistent
    message on a temporary dynamic queue, a persistent message while the journal refuses
    them (its disk is below its reserve, full, or failed: MQRC_RESOURCE_PROBLEM, as IBM MQ
    answers when its log is full), MAXDEPTH, the queue manager's memory for non-persistent
    messages (``np_limit``, -1 for a persistent put: engine.paging), MAXUMSGS. ``place``
    checks one message with them and ``_place_run`` a run of asynchronous puts, so that a
    batch is refused exactly as the same puts one by one; what cannot change within a run
    is read once. ``store`` is the journal for a persistent message (None otherwise): its
    ``refusal`` changes without the epoch moving, so it is read per message."""

    __slots__ = ("fixed", "max_depth", "max_size", "max_uow", "np_limit", "np_room", "q_max", "qmgr_max", "queue",
                 "store")

    def __init__(self, queue: QueueObject, qmgr_max: int, q_max: int, fixed: MQError | None, max_depth: int,
                 max_uow: int, store: Journal | None = None, np_limit: int = -1) -> None:
        self.queue, self.qmgr_max, self.q_max, self.fixed = queue, qmgr_max, q_max, fixed
        self.max_depth, self.max_uow, self.store, self.np_limit = max_depth, max_uow, store, np_limit
        # Read as one test each in the usual case: the lesser MAXMSGL, and the memory limit
        # with none (-1) as a bound no put reaches.
        self.max_size = min(qmgr_max, q_max)
        self.np_room = np_limit if np_limit >= 0 else _NO_BOUND

    def refusal(self, size: int, uow: Sized | None) -> MQError | None:
        """The first rule a put of ``size`` bytes breaks now; None when it may go ahead.
        ``uow``: the unit of work the put joins (None: outside syncpoint, or none yet)."""
        q = self.queue
        if size > self.max_size:
            if size > self.qmgr_max:
                return failed(C.MQRC_MSG_TOO_BIG_FOR_Q_MGR,
                              f"message of {size} bytes exceeds queue manager MAXMSGL({self.qmgr_max})")
            return failed(C.MQRC_MSG_TOO_BIG_FOR_Q, f"message of {size} bytes exceeds {q.name} MAXMSGL({self.q_max})")
        if self.fixed is not None:
            return self.fixed
        if self.store is not None and self.store.refusal:
            return failed(C.MQRC_RESOURCE_PROBLEM, self.store.refusal)
        messages = q.messages
        if len(messages.by_seq) + messages.uncommitted >= self.max_depth:
            return failed(C.MQRC_Q_FULL, f"{q.name} holds MAXDEPTH({self.max_depth}) messages")
        if messages.meter.transient + size > self.np_room:
            return failed(C.MQRC_Q_SPACE_NOT_AVAILABLE,
                          f"non-persistent messages on this queue manager hold {messages.meter.transient} bytes; "
                          f"{size} more exceed its non-persistent memory limit ({self.np_limit} bytes)")
        if uow is not None and len(uow) >= self.max_uow:
            return failed(C.MQRC_SYNCPOINT_LIMIT_REACHED, f"unit of work holds MAXUMSGS({self.max_uow}) messages")
        return None


class PutPlan:
    """MQPUT's outcome for one handle, options and descriptor but for what differs per put
    (see the module docstring). ``base`` is the stored descriptor of a put with the plan's
    inputs, whatever its identifiers and put time."""

    __slots__ = ("base", "comp", "epoch", "expiry", "fifo", "handable", "in_uow", "limits", "options", "persistence",
                 "priority", "report", "steady", "warning")

    def __init__(self, epoch: int, options: int, steady: bytes, warning: int, limits: PutLimits, fifo: bool,
                 base: MQMD) -> None:
        self.epoch, self.options, self.steady, self.limits, self.fifo = epoch, options, steady, limits, fifo
        self.warning, self.comp = warning, C.MQCC_WARNING if warning else C.MQCC_OK
        self.in_uow = bool(options & C.MQPMO_SYNCPOINT)
        self.report = base.report
        # Expiry, Priority and Persistence of every message the plan puts (the Message's
        # fields with its identifiers: read from its descriptor once, not per put).
        self.expiry, self.priority, self.persistence = base.queue_fields()[:3]
        # What a hand-over to a waiting get asks of the put itself (engine.handover): outside
        # syncpoint, a message without expiry, not persistent.
        self.handable = (not self.in_uow and base.expiry == C.MQEI_UNLIMITED
                         and base.persistence != C.MQPER_PERSISTENT)
        self.base = base
