"""MQPUT and MQPUT1: the engine's one put entry, its checks and the placing of a message.

``put`` takes a PutRequest (engine.api): one MQPUT, an MQPUT1 or a run of asynchronous
MQPUTs on one handle. Its steps, in order:

1. the memo (engine.putplan): a put through a handle with the options and descriptor of
   the last one there skips the checks and resolutions below, which it recorded;
2. the checks of the handle, options and descriptor (``_check_put``; every refusal raises
   before anything changes);
3. the destination: the handle's queue, resolved through an alias at MQOPEN (engine.routing),
   or a queue on another queue manager (the handle's ``remote`` Route: the message goes on
   the transmission queue behind an MQXQH, ``_place_remote``), or its topic: a put through a topic handle is a publication (engine.publishing), which
   makes no memo and fans out through the same arrival step;
4. the message: properties (engine.propctl), defaults, context and identifiers
   (``fill_descriptor``), the refusals that may differ per message (PutLimits);
5. its arrival: handed to a waiting get (engine.handover) or placed on the queue
   (engine.arrival), in the putter's unit of work under syncpoint.

A ReplyToQ naming a reply-to alias is resolved before the checks (engine.remote), so the
memo and every path see the resolved names.

The result carries the answer the put made for a waiting get (PutResult.delivered): the
driver writes it before anything else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat

from ferrymq.engine import propctl, validate
from ferrymq.engine.api import Delivery, ObjectDescriptor, OpenResult, PutOptions, PutRequest, PutResult
from ferrymq.engine.arrival import Arrivals
from ferrymq.engine.handover import HandOver
from ferrymq.engine.message import Message
from ferrymq.engine.publishing import Publisher
from ferrymq.engine.putplan import PutLimits, PutPlan
from ferrymq.engine.remote import RemoteNames, xmit_descriptor
from ferrymq.engine.reports import Reports
from ferrymq.engine.session import Connection, Handle
from ferrymq.engine.state import EngineState
from ferrymq.engine.units import Units
from ferrymq.engine.waits import Waits
from ferrymq.errors import DecodeError, MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD, NONE_ID
from ferrymq.wire.mqmd import steady_ids as _steady_ids
from ferrymq.wire.mqxqh import pack_xmit, unpack_xmit

_decode = MQMD.decode  # bound once: a classmethod looked up on its class makes a method at every call
NO_ACCOUNTING = bytes(32)
_PASS_IDENT_OK = (C.MQOO_PASS_IDENTITY_CONTEXT | C.MQOO_PASS_ALL_CONTEXT | C.MQOO_SET_IDENTITY_CONTEXT
                  | C.MQOO_SET_ALL_CONTEXT)
_CONTEXT_OPTIONS = (C.MQPMO_NO_CONTEXT | C.MQPMO_PASS_IDENTITY_CONTEXT | C.MQPMO_PASS_ALL_CONTEXT
                    | C.MQPMO_SET_IDENTITY_CONTEXT | C.MQPMO_SET_ALL_CONTEXT)
# Put options under which place() decides something per message (a run cannot share it):
# passing context may fail per put (MQRC_CONTEXT_HANDLE_ERROR); set or no context is the
# descriptor's or none, the same for every message of a run.
_SET_ALL_CONTEXT = C.MQPMO_SET_ALL_CONTEXT
_PLANNED_RARE = C.MQPMO_NEW_MSG_ID | C.MQPMO_NEW_CORREL_ID  # a planned put's options that make identifiers
_PER_MESSAGE_PUT_OPTIONS = C.MQPMO_PASS_IDENTITY_CONTEXT | C.MQPMO_PASS_ALL_CONTEXT | C.MQPMO_NEW_CORREL_ID
_CONTEXT_RULES = (
    (C.MQPMO_PASS_IDENTITY_CONTEXT, _PASS_IDENT_OK, C.MQRC_NOT_OPEN_FOR_PASS_IDENT),
    (C.MQPMO_PASS_ALL_CONTEXT, C.MQOO_PASS_ALL_CONTEXT | C.MQOO_SET_ALL_CONTEXT, C.MQRC_NOT_OPEN_FOR_PASS_ALL),
    (C.MQPMO_SET_IDENTITY_CONTEXT, C.MQOO_SET_IDENTITY_CONTEXT | C.MQOO_SET_ALL_CONTEXT, C.MQRC_NOT_OPEN_FOR_SET_IDENT),
    (C.MQPMO_SET_ALL_CONTEXT, C.MQOO_SET_ALL_CONTEXT, C.MQRC_NOT_OPEN_FOR_SET_ALL),
)
_CONTEXT_RULE_FLAGS = sum(flag for flag, _, _ in _CONTEXT_RULES)
_PUT1_OPEN = {C.MQPMO_PASS_IDENTITY_CONTEXT: C.MQOO_PASS_IDENTITY_CONTEXT, C.MQPMO_PASS_ALL_CONTEXT: C.MQOO_PASS_ALL_CONTEXT,
              C.MQPMO_SET_IDENTITY_CONTEXT: C.MQOO_SET_IDENTITY_CONTEXT, C.MQPMO_SET_ALL_CONTEXT: C.MQOO_SET_ALL_CONTEXT}


def _no_lists(req: PutRequest, md: MQMD, pmo: PutOptions) -> PutResult:  # pragma: no cover - bound at composition
    raise RuntimeError("Putter used for a distribution list before list_put was bound")


def own_context(conn: Connection, date: str, tod: str) -> tuple[str, bytes, str, int, str, str, str, str]:
    """The identity and origin context the queue manager sets for a put by ``conn``
    (UserIdentifier to ApplOriginData, in MQMD order)."""
    return (conn.user[:12], NO_ACCOUNTING, "", conn.appl_type, conn.appl_name[-28:], date, tod, "")


def given_context(md: MQMD) -> tuple[str, bytes, str, int, str, str, str, str]:
    """The identity and origin context of ``md`` itself (MQPMO_SET_ALL_CONTEXT), in
    ``own_context``'s order."""
    return (md.user_identifier, md.accounting_token, md.appl_identity_data, md.put_appl_type, md.put_appl_name,
            md.put_date, md.put_time, md.appl_origin_data)


class Putter:
    """MQPUT and MQPUT1 for one queue manager (see the module docstring)."""

    def __init__(self, state: EngineState, waits: Waits, arrivals: Arrivals, reports: Reports, units: Units,
                 handover: HandOver, open_: Callable[[int, ObjectDescriptor, int], OpenResult],
                 close: Callable[[int, int], None], publisher: Publisher) -> None:
        self.state = state
        self.name, self.clock, self.objects, self.connections = state.name, state.clock, state.objects, state.connections
        self.pager, self.journal = state.pager, state.journal
        self.new_id, self.reserve_ids, self.stamp_put = state.new_id, state.reserve_ids, state.stamp_put
        self.put_stamp = state.put_stamp
        staging = state.staging
        self.staging, self.next_sequence, self.journal_message = staging, staging.next_sequence, staging.journal_message
        self.wake = waits.wake
        self.place_message = arrivals.place
        self.report_arrival = reports.report_arrival
        self.uow_of = units.uow_of
        self.taker, self.give, self.hand_over = handover.taker, handover.give, handover.hand_over
        self.open, self.close = open_, close
        self.publish, self.publish_run = publisher.publish, publisher.publish_run
        self.remote = RemoteNames(state.name, state.objects)
        self._remotes_epoch = -1  # the objects' epoch when ``_remotes`` was counted
        self._remotes = False  # any QREMOTE with an RNAME: a ReplyToQ may name a reply-to alias
        # MQPUT or a run of puts through a distribution list's handle: bound at composition
        self.list_put: Callable[[PutRequest, MQMD, PutOptions], PutResult] = _no_lists

    def _reply_aliases(self) -> bool:
        objects = self.objects
        if self._remotes_epoch != objects.epoch:
            self._remotes = any(o.qtype == "QREMOTE" and o.attrs["RNAME"] for o in objects.queues.values())
            self._remotes_epoch = objects.epoch
        return self._remotes

    def put(self, req: PutRequest) -> PutResult:
        """MQPUT, MQPUT1 or a run of puts (see PutRequest and the module docstring).

        Raises:
            MQError: IBM's reason for every refusal (see validate.py and place); a run
                returns each message's outcome instead (PutResult.outcomes).
        """
        conn = self.connections.get(req.hconn)
        h = None
        md = req.md
        if conn is not None:
            h = conn.handles.get(req.hobj)
            if h is not None and req.datas is None and not req.properties:  # MQPUT1 opens its own handle: never one of these
                plan, md, msg_id, correl_id = self._planned(h, req.options, md)
                if plan is not None:
                    return self._put_planned(conn, h, plan, md, msg_id, correl_id, req.data)
        if isinstance(md, bytes):  # decoding is taking the bytes: nothing is read until asked
            md = _decode(md)
        steady = md
        if self._reply_aliases():
            md = self.remote.reply_alias(md)
        pmo = PutOptions(req.options, req.context)
        if h is not None and h.members is not None:  # a distribution list's handle (engine.distlist)
            return self.list_put(req, md, pmo)
        if req.od is not None:
            return self._put1(req.hconn, req.od, md, pmo, req.data, req.properties)
        if req.datas is not None:
            return self._put_run(req, md, pmo)
        conn, h, warning = self.check_put(req.hconn, req.hobj, md, pmo)
        result = self.place(conn, h, md, pmo, req.data, warning, req.properties)
        h.put_plan = None if req.properties or h.topic is not None else self._plan(conn, h, md, pmo, warning,
                                                                                   steady.steady_key())
        return result

    def put_each(self, hconn: int, hobj: int, options: int, items: Sequence[tuple[MQMD, bytes]],
                 start: int = 0) -> tuple[int, MQError | None]:
        """MQPUTs through one handle with the same options, in order, each message with its
        own descriptor and no properties (``items[start:]``: a channel's batch): each put is
        the one ``put`` would make, with the same checks and outcomes, and the first refusal
        stops the run. How many were put, and that refusal (None: every one was)."""
        conn = self.connections.get(hconn)
        h = None if conn is None else conn.handles.get(hobj)
        put_planned = self._put_planned
        # The records of the planned puts in a unit of work, staged together (Arrivals.place):
        # before any other put (its records after theirs) and before this call returns.
        gather: list[Message] = []
        try:
            for i in range(start, len(items)):
                given, data = items[i]
                try:
                    if h is not None:
                        assert conn is not None
                        plan, md, msg_id, correl_id = self._planned(h, options, given)
                        if plan is not None:
                            put_planned(conn, h, plan, md, msg_id, correl_id, data, gather)
                            continue
                    if gather:
                        self._stage(conn, gather)
                    self.put(PutRequest(hconn, hobj, given, options, 0, data))
                except MQError as exc:
                    return i - start, exc
            return len(items) - start, None
        finally:
            if gather:
                self._stage(conn, gather)

    def _stage(self, conn: Connection | None, gather: list[Message]) -> None:
        """Stage the gathered records in the connection's unit of work (put_each)."""
        assert conn is not None and conn.uow is not None
        self.staging.journal_messages(gather, conn.uow.txid)
        gather.clear()

    def _planned(self, h: Handle, options: int, md: MQMD | bytes) -> tuple[PutPlan | None, MQMD | bytes, bytes, bytes]:
        """The handle's plan when it covers a put of ``md`` with ``options`` (else None), the
        descriptor (decoded if its bytes were not the plan's image), its MsgId and CorrelId."""
        plan = h.put_plan
        if plan is None or plan.epoch != self.objects.epoch or plan.options != options or h.deleted:
            return None, md, NONE_ID, NONE_ID
        if isinstance(md, bytes):  # matched as they came: a planned put makes no MQMD
            key, msg_id, correl_id = _steady_ids(md)
            if plan.steady == key:
                return plan, md, msg_id, correl_id
            md = _decode(md)  # another image (version 1, big-endian) of the descriptor?
        key, msg_id, correl_id = md.steady_ids()
        return (plan if plan.steady == key else None), md, msg_id, correl_id

    def _put1(self, hconn: int, od: ObjectDescriptor, md: MQMD, pmo: PutOptions, data: bytes,
              properties: Mapping[str, object] | None) -> PutResult:
        """MQPUT1: open for output, put one message, close — as one call; nothing stays open."""
        ctx = pmo.options & _CONTEXT_RULE_FLAGS
        oo = C.MQOO_OUTPUT | _PUT1_OPEN.get(ctx, 0)
        validate.put_options(pmo.options)
        validate.descriptor_for_put(md)
        oo |= pmo.options & C.MQPMO_FAIL_IF_QUIESCING and C.MQOO_FAIL_IF_QUIESCING
        oo |= pmo.options & C.MQPMO_ALTERNATE_USER_AUTHORITY and C.MQOO_ALTERNATE_USER_AUTHORITY
        opened = self.open(hconn, od, oo)
        try:  # MQPUT's path without its memo, which this handle would not live to use
            conn, h, warning = self.check_put(hconn, opened.hobj, md, pmo)
            return self.place(conn, h, md, pmo, data, warning, properties)
        finally:
            self.close(hconn, opened.hobj)

    def _put_planned(self, conn: Connection, h: Handle, plan: PutPlan, md: MQMD | bytes, msg_id: bytes,
                     correl_id: bytes, data: bytes, gather: list[Message] | None = None) -> PutResult:
        """``place`` for a put that its handle's plan covers: what ``_check_put`` and
        ``place`` would work out from the handle, options and descriptor is the plan's
        (the descriptor's own: its MsgId and CorrelId, and with MQPMO_SET_ALL_CONTEXT its
        PutDate and PutTime). ``gather``: see Arrivals.place (a put in a unit of work)."""
        limits = plan.limits
        q = limits.queue
        in_uow = plan.in_uow
        refusal = limits.refusal(len(data), conn.uow if in_uow else None)
        if refusal is not None:
            raise refusal
        now = self.clock.now()
        opts = plan.options
        if opts & _PLANNED_RARE or msg_id == NONE_ID:
            # MsgId, then CorrelId: new identifiers are made in fill_descriptor's order
            if opts & C.MQPMO_NEW_MSG_ID or msg_id == NONE_ID:
                msg_id = self.new_id()
            if opts & C.MQPMO_NEW_CORREL_ID:
                correl_id = self.new_id()
        if opts & _SET_ALL_CONTEXT:  # the putter's own put time (md: as it came, perhaps its bytes), kept as it lies
            stamp = (_decode(md) if isinstance(md, bytes) else md).put_stamp()
        else:
            stamp = self.put_stamp(now)
        seq = self.next_sequence(q)
        data = bytes(data)
        taken = self.taker(q, msg_id, correl_id, len(data)) if plan.handable else None
        delivered: Delivery | None = None
        stored = plan.base.with_ids(msg_id, correl_id, stamp=stamp)  # the plan's descriptor, this put's own
        if taken is not None:  # handed over: no Message is made unless take or a report needs one
            delivered = self.give(q, taken, stored, stored.image, plan.report, data, seq, now, None, plan.fifo)
        else:
            msg = Message(q.name, seq, stored, data, now, plan.fifo, report=plan.report,
                          fields=(plan.expiry, plan.priority, plan.persistence, msg_id, correl_id))
            self.place_message(q, msg, self.uow_of(conn) if in_uow else None, gather)
        q.last_put = now
        return PutResult(stored, q.name, self.name, plan.comp, plan.warning, seq, delivered)

    def _plan(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, warning: int,
              steady: bytes) -> PutPlan | None:
        """The plan for the next put through ``h`` with these options and descriptor fields
        (just put by ``place``; ``steady``: the key of the descriptor as given, before a
        reply-to alias was resolved); None where ``place`` decides per message (see putplan):
        a transmission queue's messages are made by ``_place_remote`` or checked for their
        MQXQH, and passed context or none is not the descriptor's. With
        MQPMO_SET_ALL_CONTEXT (a channel's receiving agent) the context is the
        descriptor's, PutDate and PutTime too: the plan's ``stored`` takes them from it."""
        q = h.queue
        assert q is not None
        qa = q.attrs
        opts = pmo.options
        context = opts & _CONTEXT_OPTIONS
        if (h.remote is not None or qa.get("USAGE") == C.MQUS_TRANSMISSION
                or (context and context != C.MQPMO_SET_ALL_CONTEXT) or md.format.rstrip() == "MQHRF2"
                or qa["PROPCTL"] == C.MQPROP_V6COMPAT):
            return None
        definer = h.alias or q
        priority = int(definer.attrs["DEFPRTY"]) if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority
        persistence = (int(definer.attrs["DEFPSIST"]) if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF
                       else md.persistence)
        base = md.with_put_context(NONE_ID, NONE_ID, priority, persistence, md.reply_to_q_mgr or self.name,
                                   given_context(md) if context else own_context(conn, "", ""))
        return PutPlan(self.objects.epoch, opts, steady, warning, self.put_limits(h, persistence),
                       qa.get("MSGDLVSQ") == C.MQMDS_FIFO, base)

    def _put_run(self, req: PutRequest, md: MQMD, pmo: PutOptions) -> PutResult:
        """Several MQPUTs on one handle whose descriptors are ``md`` but for each message's
        MsgId and CorrelId (``req.msg_ids``/``req.correl_ids``: 24 bytes per message; None:
        md's for every one). The handle, options and descriptor are checked once, as each
        MQPUT would check them; then every message is placed in order.

        Returns PutResult.outcomes: one per message, None or the MQError (a failure, or a
        warning such as MQRC_PRIORITY_EXCEEDS_MAXIMUM) that MQPUT would have returned for it.
        """
        datas = req.datas
        assert datas is not None
        msg_ids, correl_ids = req.msg_ids, req.correl_ids
        try:
            conn, h, warning = self.check_put(req.hconn, req.hobj, md, pmo)
        except MQError as exc:
            return PutResult(md, "", self.name, exc.comp, exc.reason, outcomes=[exc] * len(datas))
        ok = None if not warning else MQError(C.MQCC_WARNING, warning, "the put succeeded with a warning")
        if h.topic is not None:  # each message a publication of its own
            rows = zip(repeat(md.msg_id) if msg_ids is None else msg_ids,
                       repeat(md.correl_id) if correl_ids is None else correl_ids, datas, strict=False)
            return PutResult(md, "", self.name, outcomes=self.publish_run(conn, h, md, pmo, rows, warning,
                                                                          self.fill_descriptor))
        q = h.queue
        assert q is not None
        if any(col is not None and len(col) != len(datas) for col in (msg_ids, correl_ids)):
            raise ValueError("put_columns: an identifier column's length differs from the data's")
        # strict=False: a column left out is md's identifier repeated without end
        ids = zip(repeat(md.msg_id) if msg_ids is None else msg_ids,
                  repeat(md.correl_id) if correl_ids is None else correl_ids, datas, strict=False)
        if (not pmo.options & _PER_MESSAGE_PUT_OPTIONS and q.attrs["PROPCTL"] != C.MQPROP_V6COMPAT
                and md.format.rstrip() != "MQHRF2" and h.remote is None and q.attrs.get("USAGE") != C.MQUS_TRANSMISSION):
            outcomes = self._place_run(conn, h, md, pmo, ids, len(datas), ok)
        else:
            outcomes = []
            note = outcomes.append
            for msg_id, correl_id, data in ids:
                try:
                    self.place(conn, h, md.with_ids(msg_id, correl_id), pmo, data, warning)
                except MQError as exc:
                    note(exc)
                else:
                    note(ok)
        if h.remote is not None:  # IBM reports the remote names
            return PutResult(md, h.remote.q_name, h.remote.q_mgr_name, outcomes=outcomes)
        return PutResult(md, q.name, self.name, outcomes=outcomes)

    def _place_run(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions,
                   rows: Iterable[tuple[bytes, bytes, bytes]], count: int, ok: MQError | None) -> list[MQError | None]:
        """``place`` for each (MsgId, CorrelId, data), with what cannot differ between them
        done once.

        The messages share the handle, options and descriptor, so the queue's attributes,
        priority, persistence, context and put time are resolved once for the run, and the
        messages share one stored descriptor (a template: see Message) with their own
        identifiers. What can differ is still checked per message and in ``place``'s order:
        the data's length, then the queue's refusals, then depth and the unit of work's
        size. Callers exclude what ``place`` decides per message: properties in an MQRFH2,
        PROPCTL(V6COMPAT), passed context and new CorrelIds.
        """
        q = h.queue
        assert q is not None
        qa = q.attrs
        definer = h.alias or q
        priority = int(definer["DEFPRTY"]) if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority
        persistence = int(definer["DEFPSIST"]) if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF else md.persistence
        now = self.clock.now()
        stored = self.fill_descriptor(conn, h, md, pmo, priority, persistence, now, NONE_ID)
        expiry = stored.expiry
        new_ids = bool(pmo.options & C.MQPMO_NEW_MSG_ID)
        in_uow = bool(pmo.options & C.MQPMO_SYNCPOINT)
        uow = conn.uow if in_uow else None  # made by the first message placed, as place does
        fifo = qa.get("MSGDLVSQ") == C.MQMDS_FIFO
        messages, name, persistent = q.messages, q.name, persistence == C.MQPER_PERSISTENT
        coa = bool(stored.report & C.MQRO_COA)
        # each arrival is looked at (engine.triggering, engine.events)
        triggered = qa.get("TRIGGER") == C.MQTC_ON or q.events_on or q.events_epoch != self.objects.epoch
        outcomes: list[MQError | None] = []
        note = outcomes.append
        placed = False
        refusal_of = self.put_limits(h, persistence).refusal
        id_prefix, id_tail = self.reserve_ids(count)  # one clock read for the run's new MsgIds
        # The records of the run's persistent messages in the unit of work, staged together
        # (Arrivals.place) before this call returns: one journal call, not one per message.
        gather: list[Message] | None = [] if in_uow and persistent else None
        try:
            for msg_id, correl_id, data in rows:
                refusal = refusal_of(len(data), uow if in_uow else None)
                if refusal is not None:
                    note(refusal)
                else:
                    if new_ids or msg_id == NONE_ID:
                        msg_id = id_prefix + id_tail.to_bytes(8, "big")
                        id_tail += 1
                    msg = Message(name, self.next_sequence(q), None, bytes(data), now, fifo,
                                  fields=(expiry, priority, persistence, msg_id, correl_id), template=stored)
                    if in_uow or triggered:
                        if in_uow and uow is None:
                            uow = self.uow_of(conn)
                        self.place_message(q, msg, uow, gather)
                    else:  # place_message without the wake: waiters are woken once, after the run
                        if persistent:
                            self.journal_message(msg)
                            self.staging.need_sync()
                        messages.insert(msg)
                        q.enqueued += 1
                        if coa:
                            self.report_arrival(msg)
                    placed = True
                    note(ok)
        finally:
            if gather:
                assert uow is not None
                self.staging.journal_messages(gather, uow.txid)
        if placed:
            q.last_put = now
            if not in_uow:
                self.wake(q)
                if persistent:
                    self.pager.settle()
        return outcomes

    def check_put(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions) -> tuple[Connection, Handle, int]:
        """MQPUT's checks of the handle, options and descriptor; returns the warning reason.

        Raises:
            MQError: the first rule the call breaks.
        """
        state = self.state
        conn = state.conn(hconn)
        h = state.handle(conn, hobj)
        if h.subscription is not None:
            raise failed(C.MQRC_HOBJ_ERROR, f"{h.name} is a subscription handle: publications are got from its queue")
        if (h.queue is None and h.topic is None and h.members is None) or not h.options & C.MQOO_OUTPUT:
            raise failed(C.MQRC_NOT_OPEN_FOR_OUTPUT, f"{h.name} was not opened with MQOO_OUTPUT")
        validate.put_options(pmo.options)
        if state.quiescing:
            state.check_quiescing(pmo.options, C.MQPMO_FAIL_IF_QUIESCING)
        if pmo.options & _CONTEXT_RULE_FLAGS:
            for flag, needed, reason in _CONTEXT_RULES:
                if pmo.options & flag and not h.options & needed:
                    raise failed(reason, f"{h.name} was not opened with the context option this put needs")
        return conn, h, validate.descriptor_for_put(md)

    def place(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, data: bytes, warning: int,
              properties: Mapping[str, object] | None = None) -> PutResult:
        """Put a validated message on the handle's queue, or publish it on the handle's
        topic (shared by MQPUT and MQPUT1)."""
        if h.topic is not None:
            return self.publish(conn, h, md, pmo, data, warning, properties, self.fill_descriptor)
        if h.remote is not None:
            return self._place_remote(conn, h, md, pmo, data, warning, properties)
        q = h.queue
        assert q is not None
        definer = h.alias or q
        qa = q.attrs  # every put reads these: one dict, no property calls
        if qa.get("USAGE") == C.MQUS_TRANSMISSION:
            _check_xmit_header(q.name, data)
        props = PropertySet.of(properties) if properties else None
        v6 = False
        if props or md.format.rstrip() == "MQHRF2" or qa["PROPCTL"] == C.MQPROP_V6COMPAT:
            alias_rule = None if h.alias is None else h.alias.attrs.get("PROPCTL")  # a QREMOTE has none
            rule = propctl.put_control(int(qa["PROPCTL"]), None if alias_rule is None else int(alias_rule))
            md, data, props, v6 = propctl.on_put(md, data, props, rule)
            if props:
                propctl.check_length(props, self.state.qmgr_attr("MAXPROPL"))
        priority = int(definer.attrs["DEFPRTY"]) if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority
        persistence = (int(definer.attrs["DEFPSIST"]) if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF
                       else md.persistence)
        in_uow = bool(pmo.options & C.MQPMO_SYNCPOINT)
        refusal = self.put_limits(h, persistence).refusal(len(data), conn.uow if in_uow else None)
        if refusal is not None:
            raise refusal
        now = self.clock.now()
        stored = self.fill_descriptor(conn, h, md, pmo, priority, persistence, now)
        msg = Message(q.name, self.next_sequence(q), stored, bytes(data), now, qa.get("MSGDLVSQ") == C.MQMDS_FIFO)
        msg.properties, msg.v6 = props, v6
        delivered: Delivery | None = None
        if in_uow:
            self.place_message(q, msg, self.uow_of(conn))
        else:
            given, delivered = self.hand_over(q, msg, h, now)
            if not given:
                self.place_message(q, msg, None)
        q.last_put = now
        comp = C.MQCC_WARNING if warning else C.MQCC_OK
        return PutResult(stored, q.name, self.name, comp, warning, msg.seq, delivered)

    def _place_remote(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, data: bytes, warning: int,
                      properties: Mapping[str, object] | None) -> PutResult:
        """Put a validated message bound for another queue manager: on the handle's
        transmission queue, behind an MQXQH holding the destination's names and the message's
        own descriptor, under a descriptor of its own (engine.remote.xmit_descriptor)."""
        route = h.remote
        q = h.queue
        assert route is not None and q is not None
        definer = h.alias or q
        priority = int(definer.attrs["DEFPRTY"]) if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority
        persistence = (int(definer.attrs["DEFPSIST"]) if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF
                       else md.persistence)
        in_uow = bool(pmo.options & C.MQPMO_SYNCPOINT)
        ccsid = int(self.state.qmgr_attr("CCSID"))
        # the transmission queue holds the header too: its MAXMSGL counts it
        length = C.MQXQH_LENGTH_1 + (C.MQMDE_LENGTH_2 if md.has_v2_fields else 0) + len(data)
        refusal = self.put_limits(h, persistence).refusal(length, conn.uow if in_uow else None)
        if refusal is not None:
            raise refusal
        now = self.clock.now()
        stored = self.fill_descriptor(conn, h, md, pmo, priority, persistence, now)
        body = pack_xmit(route.q_name, route.q_mgr_name, stored, ccsid=ccsid) + bytes(data)
        msg = Message(q.name, self.next_sequence(q), xmit_descriptor(stored, ccsid), body, now,
                      q.attrs.get("MSGDLVSQ") == C.MQMDS_FIFO)
        msg.properties = PropertySet.of(properties) if properties else None
        self.place_message(q, msg, self.uow_of(conn) if in_uow else None)
        q.last_put = now
        comp = C.MQCC_WARNING if warning else C.MQCC_OK
        return PutResult(stored, route.q_name, route.q_mgr_name, comp, warning, msg.seq)

    def put_limits(self, h: Handle, persistence: int) -> PutLimits:
        """What may refuse a put through ``h`` (see PutLimits), read once for a message or a run."""
        q = h.queue
        assert q is not None
        qa = q.attrs
        fixed: MQError | None = None
        remote_def = None if h.remote is None else h.remote.definition
        if h.alias is not None and h.alias["PUT"] == C.MQQA_PUT_INHIBITED:
            fixed = failed(C.MQRC_PUT_INHIBITED, f"{h.alias.name} has PUT(DISABLED)")
        elif remote_def is not None and remote_def["PUT"] == C.MQQA_PUT_INHIBITED:
            fixed = failed(C.MQRC_PUT_INHIBITED, f"{remote_def.name} has PUT(DISABLED)")
        elif qa["PUT"] == C.MQQA_PUT_INHIBITED:
            fixed = failed(C.MQRC_PUT_INHIBITED, f"{q.name} has PUT(DISABLED)")
        elif persistence == C.MQPER_PERSISTENT and q.deftype == C.MQQDT_TEMPORARY_DYNAMIC:
            fixed = failed(C.MQRC_PERSISTENT_NOT_ALLOWED,
                           f"{q.name} is a temporary dynamic queue; it holds no persistent messages")
        qmgr_attr = self.state.qmgr_attr
        return PutLimits(q, qmgr_attr("MAXMSGL"), int(qa["MAXMSGL"]), fixed, int(qa["MAXDEPTH"]),
                         qmgr_attr("MAXUMSGS"), self.journal if persistence == C.MQPER_PERSISTENT else None,
                         -1 if persistence == C.MQPER_PERSISTENT else self.pager.limits.non_persistent_bytes)

    def fill_descriptor(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, priority: int,
                        persistence: int, now: float, msg_id: bytes | None = None) -> MQMD:
        """The descriptor as stored: identifiers, context and defaults resolved (``msg_id``
        given: that MsgId, whatever the options say)."""
        opts = pmo.options
        if msg_id is None:
            msg_id = self.new_id() if opts & C.MQPMO_NEW_MSG_ID or md.msg_id == NONE_ID else md.msg_id
        correl_id = self.new_id() if opts & C.MQPMO_NEW_CORREL_ID else md.correl_id
        reply_qmgr = md.reply_to_q_mgr or self.name
        if not opts & _CONTEXT_OPTIONS:  # the common case: the queue manager sets all context
            date, tod = self.stamp_put(now)
            return md.with_put_context(msg_id, correl_id, priority, persistence, reply_qmgr,
                                       own_context(conn, date, tod))
        if opts & C.MQPMO_SET_ALL_CONTEXT:  # a channel's receiving agent: the message's own
            return md.with_put_context(msg_id, correl_id, priority, persistence, reply_qmgr, given_context(md))
        identity: tuple[str, bytes, str]
        origin: tuple[int, str, str, str, str]
        if opts & C.MQPMO_NO_CONTEXT:
            identity = ("", NO_ACCOUNTING, "")
            origin = (C.MQAT_NO_CONTEXT, "", "", "", "")
        else:
            date, tod = self.stamp_put(now)
            identity = (conn.user[:12], NO_ACCOUNTING, "")
            origin = (conn.appl_type, conn.appl_name[-28:], date, tod, "")
        if opts & C.MQPMO_SET_IDENTITY_CONTEXT:
            identity = (md.user_identifier, md.accounting_token, md.appl_identity_data)
        elif opts & (C.MQPMO_PASS_IDENTITY_CONTEXT | C.MQPMO_PASS_ALL_CONTEXT):
            source = conn.handles.get(pmo.context)
            if source is None or not source.options & C.MQOO_SAVE_ALL_CONTEXT:
                raise failed(C.MQRC_CONTEXT_HANDLE_ERROR, f"Context {pmo.context} is not a handle opened with MQOO_SAVE_ALL_CONTEXT")
            ctx = source.saved_context
            if ctx is not None:
                identity = (ctx.user_identifier, ctx.accounting_token, ctx.appl_identity_data)
                if opts & C.MQPMO_PASS_ALL_CONTEXT:
                    origin = (ctx.put_appl_type, ctx.put_appl_name, ctx.put_date, ctx.put_time, ctx.appl_origin_data)
        return md.with_put_context(msg_id, correl_id, priority, persistence, reply_qmgr, (*identity, *origin))


def _check_xmit_header(name: str, data: bytes) -> None:
    """A message put straight to a transmission queue must begin with a valid MQXQH (IBM:
    the application builds it, as a channel's agent does).

    Raises:
        MQError: MQRC_XQH_ERROR (2260) naming what is wrong.
    """
    try:
        unpack_xmit(data)
    except DecodeError as exc:
        raise failed(C.MQRC_XQH_ERROR, f"{name} is a transmission queue: the message must begin with a valid MQXQH ({exc})") from None
