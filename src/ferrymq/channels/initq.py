"""SYSTEM.CHANNEL.INITQ, read by the channel initiator as IBM's reads it.

A transmission queue defined with TRIGGER, INITQ(SYSTEM.CHANNEL.INITQ) and (usually)
TRIGDATA naming its channel gets its trigger messages made by the engine's triggering
(engine.triggering: FIRST when the first message arrives and nobody has the queue open
for input, DEPTH, EVERY, TRIGINT) once this queue is open for input. Each MQTM names the
channel to start: its TrigData, or when that is blank the sending channel whose XMITQ is
the MQTM's queue. Such a queue is no longer polled: the trigger message starts its channel.

Given the driver's ``wait`` (EngineHost.wait), the handle waits on the queue between looks
(MQGMO_WAIT, unlimited): a trigger message arriving is handed to it and ``arrived`` is
called, so that an idle initiator does not look at an empty queue again and again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from ferrymq.engine.api import Delivery, GetOptions, GetResult, ObjectDescriptor, Waiting
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqtm import MQTM

log = logging.getLogger("ferrymq.channels")

INITQ = "SYSTEM.CHANNEL.INITQ"
_GET = GetOptions(options=C.MQGMO_NO_WAIT | C.MQGMO_NO_SYNCPOINT)
_GET_WAIT = GetOptions(options=C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, wait_interval=C.MQWI_UNLIMITED)
_MAX_TM = 4096  # an MQTM is 684 bytes; a longer message there is not one


def served_by_trigger(attrs: Mapping[str, object]) -> bool:
    """Whether a transmission queue's channel is started by its trigger messages here."""
    return attrs.get("TRIGGER") == C.MQTC_ON and str(attrs.get("INITQ", "")).strip() == INITQ


class InitiationQueue:
    """The initiator's handle on SYSTEM.CHANNEL.INITQ (``open``, ``channels``, ``close``)."""

    def __init__(self, qm: QueueManager, wait: Callable[[int, Callable[[Delivery], None]], None] | None = None,
                 arrived: Callable[[], None] = lambda: None) -> None:
        """``wait``: the driver's EngineHost.wait; ``arrived``: called when the wait is
        answered (a trigger message, or the error that ended it)."""
        self.qm = qm
        self.hconn = self.hobj = 0
        self.wait, self.arrived = wait, arrived
        self.waiter_id = 0  # the wait in progress (0: none)
        self.handed: list[GetResult] = []  # trigger messages its wait was answered with

    @property
    def waiting(self) -> bool:
        """Whether a trigger message arriving is handed to this handle (no need to look)."""
        return self.waiter_id != 0

    def _answered(self, d: Delivery) -> None:
        if d.waiter_id != self.waiter_id:  # a wait of a handle closed since
            return
        self.waiter_id = 0
        if isinstance(d.result, GetResult):
            self.handed.append(d.result)
        elif d.error is not None:
            log.warning("event=channel_initq_wait_ended error=%s", d.error)
            self.hobj = 0  # opened again at the next look
        self.arrived()

    def open(self) -> None:
        """Open it for input (its trigger conditions then hold; queues that already meet
        them get their trigger message now). Logged, not raised, when it cannot be."""
        qm = self.qm
        try:
            if not self.hconn:
                self.hconn = qm.connect(appl_name="ferrymq channel initiator", user="ferrymq", appl_type=C.MQAT_QMGR)
            self.hobj = qm.open(self.hconn, ObjectDescriptor(object_name=INITQ), C.MQOO_INPUT_SHARED).hobj
        except MQError as exc:
            log.warning("event=channel_initq_unavailable queue=%s reason=%d detail=%s", INITQ, exc.reason, exc.detail)

    def channels(self, sending_channel_of: dict[str, str]) -> list[str]:
        """The channels the trigger messages waiting now name (each message removed);
        ``sending_channel_of``: transmission queue -> its sending channel."""
        if not self.hobj:
            self.open()
            if not self.hobj:
                return []
        out: list[str] = []
        handed, self.handed = self.handed, []
        while True:
            if handed:
                res: GetResult | Waiting = handed.pop(0)
            elif self.waiting:  # what arrives is handed to the wait
                return out
            else:
                try:
                    res = self.qm.get(self.hconn, self.hobj, MQMD(), _GET if self.wait is None else _GET_WAIT, _MAX_TM)
                except MQError as exc:
                    if exc.reason != C.MQRC_NO_MSG_AVAILABLE:
                        log.warning("event=channel_initq_get_failed reason=%d detail=%s", exc.reason, exc.detail)
                        self.hobj = 0  # opened again at the next look
                    return out
                if isinstance(res, Waiting):
                    assert self.wait is not None
                    self.waiter_id = res.waiter_id
                    self.wait(res.waiter_id, self._answered)
                    return out
            assert isinstance(res, GetResult)
            try:
                tm = MQTM.unpack_from(res.data)
            except DecodeError as exc:
                log.warning("event=channel_initq_not_a_trigger_message length=%d error=%s", len(res.data), exc)
                continue
            name = tm.trigger_data.strip() or sending_channel_of.get(tm.q_name.strip(), "")
            if not name:
                log.warning("event=channel_trigger_unmatched queue=%s trigdata=%r", tm.q_name.strip(), tm.trigger_data)
                continue
            out.append(name)

    def close(self) -> None:
        if self.hconn and self.hconn in self.qm.connections:
            self.qm.disconnect(self.hconn)  # ends its wait unanswered
        self.hconn = self.hobj = self.waiter_id = 0
