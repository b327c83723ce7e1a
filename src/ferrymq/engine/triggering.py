"""Triggering: the trigger messages (MQTM, wire.mqtm) the queue manager puts on an
initiation queue so that a trigger monitor starts the program that serves a queue.

IBM's conditions for a trigger event, as checked here when a message arrives on a local
queue with TRIGGER (``arrived``, called by engine.arrival before the message counts):

1. the message's priority is at least the queue's TRIGMPRI;
2. the messages of priority TRIGMPRI or more already on the queue, committed or not, are:
   none for TRIGTYPE(FIRST), any number for EVERY, TRIGDPTH - 1 or more for DEPTH;
3. for FIRST and DEPTH, no handle has the queue open for input (IPPROCS 0);
4. TRIGTYPE is not NONE, GET is enabled on the queue;
5. PROCESS names a process that exists (a transmission queue may leave it blank: the
   channel's name is then in TRIGDATA, for channel triggering);
6. INITQ names a local queue that a trigger monitor has open for input.

FIRST also fires on a queue that is not empty when the queue manager's TRIGINT (ms) has
passed since its last trigger message, so that a server that died is started again; DEPTH
sets TRIGGER off once it fired (an operator or the server turns it on again).

Events that are not a put (``check_waiting``): an initiation queue opened for input by its
first handle (a trigger monitor starting, after a restart too), and TRIGGER set on by
ALTER, PCF or MQSET, each look at the queues that would trigger and make a trigger message
for those whose messages already meet the conditions.

A trigger message is non-persistent, of the initiation queue's default priority, in the
MQTRIG format. One made by a put under syncpoint is put when the unit of work ends, whether
it commits or backs out (IBM: a trigger message is then always there when the conditions
are). If it cannot go to the initiation queue (full, put-inhibited) it goes to the
dead-letter queue behind an MQDLH (engine.reports ``deliver_generated``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ferrymq.engine.message import Message
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.processes import ProcessRegistry
from ferrymq.engine.session import UnitOfWork
from ferrymq.engine.state import EngineState
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqtm import FORMAT, MQTM

log = logging.getLogger("ferrymq.engine")

Deliver = Callable[[MQMD, bytes, str, str, UnitOfWork | None], None]
"""engine.reports ``deliver_generated``: a message the queue manager made, to a queue."""


def _not_bound(md: MQMD, data: bytes, queue: str, qmgr: str, uow: UnitOfWork | None) -> None:  # pragma: no cover
    raise RuntimeError("Triggers used before deliver_with")


class Triggers:
    """Trigger events of one queue manager (see the module docstring)."""

    def __init__(self, state: EngineState, processes: ProcessRegistry) -> None:
        self.state = state
        self.objects = state.objects
        self.processes = processes
        self.deliver: Deliver = _not_bound
        self.last_fired: dict[str, float] = {}  # queue name -> when its last trigger message was made

    def deliver_with(self, deliver: Deliver) -> None:
        """Bind how generated messages are delivered (engine.reports), once at composition."""
        self.deliver = deliver

    # -- a message arriving --------------------------------------------------------------
    def arrived(self, q: QueueObject, msg: Message, uow: UnitOfWork | None) -> None:
        """A message is about to be placed on ``q`` (which has TRIGGER set); not yet counted."""
        attrs = q.attrs
        kind = attrs.get("TRIGTYPE", C.MQTT_NONE)
        least = int(attrs.get("TRIGMPRI", 0))
        if kind == C.MQTT_NONE or msg.priority < least:
            return
        if kind != C.MQTT_EVERY:
            if q.input_count:
                return
            before = self.counted(q, least)
            if kind == C.MQTT_FIRST and before and not self._interval_passed(q):
                return
            if kind == C.MQTT_DEPTH and before + 1 < int(attrs.get("TRIGDPTH", 1)):
                return
        self._fire(q, uow)

    # -- events that are not a put -------------------------------------------------------
    def opened_for_input(self, q: QueueObject) -> None:
        """``q`` was just opened for input by its first handle: if it is an initiation queue,
        the queues it serves whose messages already meet the conditions trigger now."""
        for app in list(self.objects.queues.values()):
            if app.is_local and app is not q and str(app.attrs.get("INITQ", "")) == q.name:
                self.check_waiting(app)

    def check_waiting(self, q: QueueObject) -> None:
        """Trigger ``q`` if the messages on it meet the conditions now (no put involved)."""
        attrs = q.attrs
        if not q.is_local or attrs.get("TRIGGER") != C.MQTC_ON:
            return
        kind = attrs.get("TRIGTYPE", C.MQTT_NONE)
        if kind == C.MQTT_NONE or (kind != C.MQTT_EVERY and q.input_count):
            return
        count = self.counted(q, int(attrs.get("TRIGMPRI", 0)))
        needed = int(attrs.get("TRIGDPTH", 1)) if kind == C.MQTT_DEPTH else 1
        if count >= needed:
            self._fire(q, None)

    # -- the conditions and the message --------------------------------------------------
    def counted(self, q: QueueObject, least: int) -> int:
        """Messages on ``q`` of priority ``least`` or more, committed or not (IBM counts both)."""
        if least <= 0:
            return q.messages.depth
        count = sum(1 for m in q.messages.by_seq.values() if m.priority >= least)
        for conn in self.state.connections.values():
            uow = conn.uow
            if uow is not None:
                count += sum(1 for uq, m in uow.puts if uq is q and m.priority >= least)
                count += sum(1 for uq, m in uow.gets if uq is q and m.priority >= least)
        return count

    def _interval_passed(self, q: QueueObject) -> bool:
        last = self.last_fired.get(q.name)
        interval = self.state.qmgr_attr("TRIGINT") / 1000
        return last is not None and self.state.clock.now() - last >= interval

    def trigger_message(self, q: QueueObject) -> tuple[MQTM, QueueObject] | None:
        """The MQTM ``q`` would put now and its initiation queue, or None (and why, in the
        log at debug level) when a condition beyond the count is not met."""
        attrs = q.attrs
        initq = self.objects.find(str(attrs.get("INITQ", "")))
        name = str(attrs.get("PROCESS", ""))
        process = self.processes.find(name) if name else None
        why = ""
        if attrs.get("GET") == C.MQQA_GET_INHIBITED:
            why = "GET(DISABLED)"
        elif initq is None or not initq.is_local:
            why = f"INITQ({attrs.get('INITQ', '')}) is not a local queue"
        elif not initq.input_count:
            why = f"no trigger monitor has {initq.name} open for input"
        elif process is None and not (name == "" and attrs.get("USAGE") == C.MQUS_TRANSMISSION):
            why = f"PROCESS({name}) is not defined"
        if why or initq is None:
            log.debug("event=no_trigger queue=%s reason=%s", q.name, why)
            return None
        tm = MQTM(q.name, name, str(attrs.get("TRIGDATA", "")),
                  int(process.status("APPLTYPE")) if process is not None else C.MQAT_DEFAULT,
                  str(process.status("APPLICID")) if process is not None else "",
                  str(process.status("ENVRDATA")) if process is not None else "",
                  str(process.status("USERDATA")) if process is not None else "")
        return tm, initq

    def _fire(self, q: QueueObject, uow: UnitOfWork | None) -> None:
        made = self.trigger_message(q)
        if made is None:
            return
        tm, initq = made
        state = self.state
        now = state.clock.now()
        self.last_fired[q.name] = now
        date, tod = state.stamp_put(now)
        md = MQMD(version=C.MQMD_VERSION_2, msg_type=C.MQMT_DATAGRAM, format=FORMAT, encoding=C.MQENC_NATIVE,
                  coded_char_set_id=state.qmgr_attr("CCSID"), persistence=C.MQPER_NOT_PERSISTENT,
                  priority=int(initq.attrs.get("DEFPRTY", 0)), msg_id=state.new_id(),
                  reply_to_q_mgr=state.name, put_appl_type=C.MQAT_QMGR, put_appl_name=state.name[:28],
                  put_date=date, put_time=tod)
        data = tm.pack()
        if q.attrs.get("TRIGTYPE") == C.MQTT_DEPTH:
            self.objects.alter(q.name, {"TRIGGER": C.MQTC_OFF})  # until it is set on again
        if uow is None:
            self.deliver(md, data, initq.name, "", None)
            return

        def at_end() -> None:
            self.deliver(md, data, initq.name, "", None)

        uow.after_commit.append(at_end)
        uow.after_backout.append(at_end)

