"""Put to a waiting getter: a message handed over without passing through the queue's index.

IBM MQ gives a non-persistent message put outside syncpoint straight to an MQGET that is
waiting for it. Here the same shortcut saves the sorted insert, the search, the identifier
index and the removal of every request and reply of a request/reply exchange. It is taken
only where nothing could tell it from the ordinary path (insert, then ``wake``, which offers
the message to the waits in the order they began, then the COA):

- the queue holds no visible message, so nothing there comes before the new one for any
  getter, and no handle watches the queue (a selection view would see it pass);
- the message is non-persistent, has no expiry and no MQRFH2 kept for PROPCTL(V6COMPAT),
  so no journal record or expiry scan is involved; properties only when the taker's handle
  takes them as stored (propctl.in_handle_as_stored: a copy of them in its message handle,
  as the get path's own run of head messages gives them), so none is re-formed;
- every wait before the one that takes it is a plain destructive get that simply does not
  match it (no browse, cursor, lock, skip-backout mark or conversion, no selection string, no token, group,
  sequence or offset to match, GET allowed), so ``wake`` would have done nothing with them;
- the taker's buffer holds the whole message.

A read-ahead's wait (Getter.get_many ``streamed``, outside syncpoint) may take more than one message:
it goes on after each hand-over while its ``limit`` and ``room`` last (Delivery.waiting),
at the end of the queue's wait order, as if its next get had begun at once. Every copy of
a run of publications to a subscriber whose read-ahead waits is so handed over, and none
enters the queue's index; a message that cannot be (one placed the ordinary way) ends the
wait at its ``wake`` as before, and the read-ahead takes the rest from the queue.

Anything else returns False and the caller places the message the ordinary way. The taker
gets exactly what ``attempt`` would give: the same ``take`` (unit of work, COD, saved
context), the same result, the same Delivery; COA follows, as after ``wake``.

A put that its handle's memo covers (engine.putplan), and a publication's copy
(engine.publishing), ask ``taker`` before they make a Message at all, and ``give`` makes one
only for what needs it (take, a COA): the message a plain hand-over moves is never held
anywhere. A copy is handed over as its publication's shared parts (data, properties, its
run's template spliced with the copy's identifiers).

The engine never calls up into its driver: ``give`` returns the answer it made when the
driver may write it before anything else (it needs no disk write and no earlier answer is
pending), and the put returns it (PutResult.delivered) for the driver to write first.
"""

from __future__ import annotations

from collections.abc import Callable

from ferrymq.engine import propctl
from ferrymq.engine.api import Delivery
from ferrymq.engine.message import Message, token_of
from ferrymq.engine.monitoring import Monitor
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.session import Connection, Handle, UnitOfWork, Waiter
from ferrymq.engine.waits import Waits
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD

_PERSISTENT, _GET_INHIBITED = C.MQPER_PERSISTENT, C.MQQA_GET_INHIBITED
_COD, _COA = C.MQRO_COD, C.MQRO_COA
_TRIGGER_ON = C.MQTC_ON


Take = Callable[[Connection, Handle, QueueObject, Message, int, bool, bool], None]
"""The get path's destructive take (engine.getting): connection, handle, queue, message,
get options, whether it holds the first key, whether it is queued."""


class HandOver:
    """Puts to waiting gets, for one queue manager (see the module docstring)."""

    monitor: Monitor  # statistics and accounting (engine.monitoring), bound at composition

    def __init__(self, waits: Waits, take: Take, confirm: Callable[[Message, UnitOfWork | None], None]) -> None:
        self.waiters, self.queue_waiters = waits.waiters, waits.queue_waiters
        self.deliveries = waits.deliveries
        self.ended = waits.ended
        self.staging = waits.staging
        self.take, self.confirm = take, confirm

    def hand_over(self, q: QueueObject, msg: Message, via: Handle | None, now: float) -> tuple[bool, Delivery | None]:
        """Give ``msg``, just put through ``via`` (None: a publication's copy) outside syncpoint
        to ``q`` at ``now``, to the
        first waiting get that would take it, when that is provably what placing it would do.
        Returns whether it was given (the caller then neither inserts it nor wakes the queue)
        and ``give``'s answer for the driver to write first."""
        if msg.expires_at is not None or msg.persistence == _PERSISTENT or msg.v6:
            return False, None
        taken = self.taker(q, msg.msg_id, msg.correl_id, msg.data_length, bool(msg.properties))
        if taken is None:
            return False, None
        # A run's message (every publication copy) is spliced from its template once, its
        # descriptor not kept: it is leaving before it was ever queued.
        md, raw = msg.md_packed()
        return True, self.give(q, taken, md, raw, msg.report, msg.data, msg.seq, now, msg)

    def taker(self, q: QueueObject, msg_id: bytes, correl_id: bytes, size: int,
              props: bool = False) -> Waiter | None:
        """The wait that a message just put to ``q`` (non-persistent, without expiry; these
        identifiers, ``size`` bytes of data, ``props``: with properties) would go to, when a
        hand-over is provably what placing it would do (see the module docstring); None
        otherwise."""
        messages = q.messages
        if messages.by_seq or messages.watchers:
            return None
        ids = self.queue_waiters.get(q.name)
        attrs = q.attrs
        # GET(DISABLED): wake would answer the waits with MQRC_GET_INHIBITED.
        if not ids or attrs["GET"] == _GET_INHIBITED:
            return None
        if attrs.get("TRIGGER") == _TRIGGER_ON:  # the arrival is a trigger event (engine.triggering)
            return None
        waiters = self.waiters
        for wid in ids:
            w = waiters.get(wid)
            if w is None or not w.plain:
                return None
            alias = w.handle.alias
            if alias is not None and alias.attrs["GET"] == _GET_INHIBITED:
                return None
            wanted = w.match_msg_id
            if wanted is not None and wanted != msg_id:
                continue  # its search would find nothing: wake goes on to the next wait
            wanted = w.match_correl_id
            if wanted is not None and wanted != correl_id:
                continue
            if size > w.buffer_length:
                return None  # truncation: the message stays on the queue, under the getter's cursor
            if props and not propctl.in_handle_as_stored(int((alias or q)["PROPCTL"]), w.gmo.options,
                                                         w.gmo.msg_handle):
                return None  # its properties are re-formed for this getter (propctl.on_get)
            return w
        return None

    def give(self, q: QueueObject, w: Waiter, md: MQMD, raw: bytes, report: int, data: bytes, seq: int,
             now: float, msg: Message | None, fifo: bool = False,
             properties: PropertySet | None = None) -> Delivery | None:
        """What wake and attempt do for the wait ``taker`` found, for the message of sequence
        number ``seq`` with this descriptor (``raw``: packed; ``report``: its Report field) and
        data. ``msg``: the message, or None when the putter made none (it is made here if take
        or a report needs it, as placing it would have made it; ``fifo``: the queue's order;
        ``properties``: its properties, a publication's copy's, shared with the others).

        Returns the answer when the driver may write it before anything else: it needs no
        disk write and comes after no earlier answer (deliveries are answered in order). It
        is among ``deliveries`` too, for a driver that does not."""
        lsn = 0
        # take (the getter's unit of work, its saved context, a COD): only what applies to a
        # message never queued, locked or journaled (the message is never persistent here).
        if not w.bare or report & _COD:
            if msg is None:
                msg = Message(q.name, seq, md, data, now, fifo)
                msg.properties = properties
            staging = self.staging
            outer = staging.apart()
            self.take(w.conn, w.handle, q, msg, w.gmo.options, False, False)
            lsn = staging.rejoin(outer)
            q.last_get = now
            q.enqueued += 1  # put and taken at once: both counted, as the ordinary path counts them
        else:
            q.last_get = now
            q.enqueued += 1
            q.dequeued += 1  # (take counted it otherwise)
            if self.monitor.on:
                self.monitor.got(w.conn, q, md.persistence == C.MQPER_PERSISTENT, len(data), now, False)
        # Whether the wait goes on after this message: only a read-ahead's, whose limit and
        # room count down (a plain get's limit is 1, its room 0; its wait ends here).
        waiting = w.limit > 1 and w.room > len(data)
        if not waiting:
            self.ended(w)
        else:
            w.limit -= 1
            w.room -= len(data)
            ids = self.queue_waiters[w.queue]
            if len(ids) > 1:  # its next get begins now: after those already waiting
                ids.remove(w.waiter_id)
                ids.append(w.waiter_id)
        deliveries = self.deliveries
        first = not lsn and not deliveries and not waiting
        # Its GetResult is made only if asked for (Delivery.result): the driver writes the
        # reply from these parts.
        delivery = Delivery(w.waiter_id, None, None, lsn, waiting, md, raw, data, token_of(seq), seq, q.name,
                            msg.properties if msg is not None else properties, w.gmo.msg_handle)
        deliveries.append(delivery)
        if report & _COA:
            if msg is None:
                msg = Message(q.name, seq, md, data, now, fifo)
                msg.properties = properties
            self.confirm(msg, None)
        return delivery if first else None

