"""Publishing: an MQPUT or MQPUT1 on a topic handle, fanned out to its subscriptions.

The put entry (engine.putting) checks the call as for a queue and hands a put through a
topic handle to ``Publisher.publish``, which:

1. refuses what the topic refuses (PUB(DISABLED): MQRC_PUT_INHIBITED) and resolves the
   publication's priority and persistence from the topic (DEFPRTY, DEFPSIST);
2. makes the publication's stored descriptor as a put to a queue would (the MsgId and
   context the publisher gets back);
3. finds the subscriptions whose topic matches (cached per topic string by the registry),
   less those that take publications only on request, have expired, are the publisher's
   own connection's (MQPMO_NOT_OWN_SUBS) or whose selector refuses it;
4. plans one copy per subscription (``_plan``): its own MsgId, the subscription's CorrelId
   (the publication's when the subscription's is MQCI_NONE), PubPriority, the identity
   context of the subscription (SUBUSER, PubAccountingToken, PubApplIdentityData) and the
   publisher's origin context, the mqps properties MQTopicString, MQSubUserData and
   MQIsRetained. A copy its queue cannot take goes to the dead-letter queue when the topic
   says USEDLQ(YES); else PMSGDLV (persistent) or NPMSGDLV decides: ALL fails the put with
   MQRC_PUBLICATION_FAILURE and nothing is delivered, ALLDUR fails it for a durable
   subscription's copy only, ALLAVAIL delivers the others. A copy not delivered is logged;
   nothing is dropped silently.
5. places every copy through arrival.Arrivals.place: in the putter's unit of work under
   syncpoint (visible at commit), else at once (handed to a waiting get as a put to the
   queue would be, engine.handover: as the publication's shared parts, no Message made for
   the copy); persistent copies outside syncpoint are
   journaled in one transaction, so a crash delivers all of them or none. When several
   copies are journaled, the data is journaled once, in a record of its own that their
   records name (engine.message, record version 2; engine.staging counts them);
6. keeps the publication as its topic's retained one (MQPMO_RETAIN; engine.retained).

Retained publications reach a new subscription, or one that asks with MQSUBRQ, through
``send_retained``, by the same planning with MQIsRetained set.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ferrymq.engine import propctl
from ferrymq.engine.api import PutOptions, PutResult
from ferrymq.engine.arrival import Arrivals
from ferrymq.engine.deadletter import dead_letter
from ferrymq.engine.handover import HandOver
from ferrymq.engine.message import Message
from ferrymq.engine.monitoring import Monitor
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.pubtopics import TopicView
from ferrymq.engine.retained import Retained, RetainedStore
from ferrymq.engine.selector.fields import message_lookup
from ferrymq.engine.session import Connection, Handle, UnitOfWork
from ferrymq.engine.state import EngineState
from ferrymq.engine.subscriptions import Subscription, SubscriptionRegistry
from ferrymq.engine.units import Units
from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD, NONE_ID

log = logging.getLogger("ferrymq.engine")

TOPIC_PROPERTY = "mqps.Top"  # MQTopicString
USER_DATA_PROPERTY = "mqps.Sud"  # MQSubUserData
RETAINED_PROPERTY = "mqps.Ret"  # MQIsRetained
_REPLY_REPORTS = C.MQRO_COA | C.MQRO_COD | C.MQRO_EXCEPTION | C.MQRO_EXPIRATION | C.MQRO_PAN | C.MQRO_NAN

_MQPS_KEPT = 4096  # topic strings' mqps sets kept (cleared whole beyond)



class FillDescriptor(Protocol):
    """The put entry's ``fill_descriptor``: the descriptor as a put stores it."""

    def __call__(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, priority: int, persistence: int,
                 now: float, msg_id: bytes | None = None) -> MQMD: ...


@dataclass(slots=True, eq=False)
class Publication:
    """A publication being delivered: as the publisher put it (its stored descriptor,
    data and properties), its topic string and the publisher's connection (0: none).

    ``correl_id`` (b"": none) is the publication's CorrelId when ``md`` is its run's
    stored descriptor without the publication's identifiers (``Publisher._publish_in``,
    when nothing asks for the publication's own descriptor): the copies take their
    identifiers from it and the rest of their descriptor from ``md``, which is the same."""

    topic: str
    md: MQMD
    data: bytes
    properties: PropertySet | None
    put_at: float
    hconn: int = 0
    correl_id: bytes = b""

    @property
    def persistent(self) -> bool:
        return self.md.persistence == C.MQPER_PERSISTENT


_Limits = tuple[int, int, int, bool]
"""A queue's attributes as a copy's refusal reads them (``Publisher._limits``)."""
_Shape = tuple[QueueObject | None, str, MQMD, PropertySet, int, int, bytes | None, _Limits, bool, int, int, bool]
"""A subscription's copies (``_Copies.shapes``)."""
_Copy = tuple[QueueObject, Subscription, bytes, bytes, _Shape]
"""A copy of a publication planned (``Publisher._plan``): its queue and subscription, MsgId
and CorrelId and its subscription's shape. No Message is made for it until it is queued
(``Publisher._place``): one handed over to a waiting get never is."""
_Dead = tuple[QueueObject, Message]
"""A copy its queue refused, as a dead letter, and the dead-letter queue it goes to."""
_PERSISTENT = C.MQPER_PERSISTENT


class _Copies:
    """A publication's copies' descriptors and properties, shared by every publication of
    a run (``_plan``): the stored descriptor per identity setting (a template, see
    Message), the property set per SubUserData, and what each subscription's copy takes
    from them."""

    __slots__ = ("fields", "properties", "shapes", "templates")

    def __init__(self) -> None:
        # The publications' Expiry, Persistence and Priority: a run's descriptors differ in
        # their identifiers only (None until the first publication).
        self.fields: tuple[int, int, int] | None = None
        self.templates: dict[tuple[str, bytes, str, int, int], MQMD] = {}
        self.properties: dict[str, PropertySet] = {}
        # Per subscription: its queue (None: gone) and the queue's name, its copies'
        # template, properties, priority and persistence, its CorrelId (None: each
        # publication's own), the queue's limits, whether it is FIFO, the template's
        # Report options (a copy's arrival and take each read them), the Expiry and
        # whether a copy may be handed over to a waiting get (engine.handover: neither
        # persistent nor expiring). Nothing a run does changes the queues, their
        # attributes or the subscriptions.
        self.shapes: dict[Subscription, _Shape] = {}


class _Run:
    """What the publications of one run of MQPUTs share (``Publisher._run``): the
    connection and topic handle, the descriptor (but the identifiers), the put options,
    priority and persistence resolved, the properties, the warning; after the first
    publication, the stored descriptor, the put time, the subscriptions (None: chosen per
    publication) and the copies' descriptors and properties. What the put options and the
    persistence say of each publication is read from them once, here."""

    __slots__ = ("conn", "copies", "fill_descriptor", "handle", "in_uow", "max_length", "md", "new_correl_id",
                 "new_msg_id", "not_own", "now", "options", "own", "persistence", "persistent", "pmo", "priority",
                 "properties", "pub", "retain", "stored", "subs", "topic", "unit", "warn_if_none", "warning")

    def __init__(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, priority: int, persistence: int,
                 fill_descriptor: FillDescriptor, properties: PropertySet | None, warning: int) -> None:
        assert h.topic is not None
        self.conn, self.handle, self.topic, self.md, self.pmo = conn, h, h.topic, md, pmo
        self.options = pmo.options
        options = pmo.options
        self.not_own = bool(options & C.MQPMO_NOT_OWN_SUBS)
        self.new_msg_id = bool(options & C.MQPMO_NEW_MSG_ID)
        self.new_correl_id = bool(options & C.MQPMO_NEW_CORREL_ID)
        self.in_uow = bool(options & C.MQPMO_SYNCPOINT)
        self.retain = bool(options & C.MQPMO_RETAIN)
        self.warn_if_none = bool(options & C.MQPMO_WARN_IF_NO_SUBS_MATCHED)
        self.priority, self.persistence, self.fill_descriptor = priority, persistence, fill_descriptor
        self.persistent = persistence == C.MQPER_PERSISTENT
        self.properties, self.warning = properties, warning
        self.max_length = 0  # the queue manager's MAXMSGL, read by Publisher._run
        self.stored: MQMD | None = None
        self.now = 0.0
        self.subs: list[Subscription] | None = None
        # Whether every publication needs its own descriptor whatever asked for it (a
        # selector decides who receives it, or it is kept as the retained one); else the
        # run's publication (``_settle``), which each one takes as its own data and CorrelId.
        self.own = True
        self.pub: Publication | None = None
        self.copies = _Copies()
        self.unit: UnitOfWork | None = None  # its persistent copies outside syncpoint (Publisher._end_run)


class Publisher:
    """Publications of one queue manager (see the module docstring)."""

    monitor: Monitor  # statistics (engine.monitoring): copies delivered, bound at composition

    def __init__(self, state: EngineState, arrivals: Arrivals, units: Units, subscriptions: SubscriptionRegistry,
                 retained: RetainedStore, topics: TopicView, handover: HandOver) -> None:
        self.state = state
        self.name, self.clock, self.objects, self.journal = state.name, state.clock, state.objects, state.journal
        self.staging, self.pager = state.staging, state.pager
        self.reserve_ids, self.next_sequence = state.reserve_ids, state.staging.next_sequence
        self.place_message = arrivals.place
        self.queue_waiters, self.hand_over = arrivals.queue_waiters, handover.hand_over
        self.taker, self.give = handover.taker, handover.give
        self.units = units
        self.subscriptions, self.retained, self.topics = subscriptions, retained, topics
        # The mqps properties of publications that carry none of their own, per (topic
        # string, SubUserData, retained): the same set, packed once, for every publication.
        # Sets on messages are never changed in place (a getter receives a copy).
        self._mqps_only: dict[tuple[str, str, bool], PropertySet] = {}

    # -- MQPUT on a topic ------------------------------------------------------------------
    def publish(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, data: bytes, warning: int,
                properties: Mapping[str, object] | None, fill_descriptor: FillDescriptor) -> PutResult:
        """Publish one message put through topic handle ``h`` (checked by the put entry).

        Raises:
            MQError: MQRC_PUT_INHIBITED, MQRC_MISSING_REPLY_TO_Q, MQRC_MSG_TOO_BIG_FOR_Q_MGR,
                MQRC_RESOURCE_PROBLEM, MQRC_SYNCPOINT_LIMIT_REACHED, MQRC_PUBLICATION_FAILURE,
                and what propctl refuses of the message's properties.
        """
        md = self._admit(h, md, pmo)
        props = PropertySet.of(properties) if properties else None
        if props or md.format.rstrip() == "MQHRF2":
            md, data, props, _ = propctl.on_put(md, data, props, C.MQPROP_COMPATIBILITY, keep_as_put=False)
            if props:
                propctl.check_length(props, self.state.qmgr_attr("MAXPROPL"))
        run = self._run(conn, h, md, pmo, warning, props, fill_descriptor)
        try:
            stored, reason = self._publish_in(run, md.msg_id, md.correl_id, data)
        finally:
            self._end_run(run)
        assert stored is not None
        return PutResult(stored, "", self.name, C.MQCC_WARNING if reason else C.MQCC_OK, reason)

    def publish_run(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions,
                    rows: Iterable[tuple[bytes, bytes, bytes]], warning: int,
                    fill_descriptor: FillDescriptor) -> list[MQError | None]:
        """A run of MQPUTs through topic handle ``h`` whose descriptors are ``md`` but for
        each one's (MsgId, CorrelId) in ``rows``: each its own publication, with its own
        outcome (None or the MQError, a failure or a warning, MQPUT would have returned).
        What cannot differ between them (the topic's checks and attributes, the stored
        descriptor but its identifiers, and, without selectors, the subscriptions and their
        copies' descriptors and properties) is worked out once: ``_run``."""
        outcomes: list[MQError | None] = []
        note = outcomes.append
        if md.format.rstrip() == "MQHRF2":  # each message's properties come out of its own data
            for msg_id, correl_id, data in rows:
                try:
                    done = self.publish(conn, h, md.with_ids(msg_id, correl_id), pmo, data, warning, None,
                                        fill_descriptor)
                except MQError as exc:
                    note(exc)
                else:
                    note(None if not done.reason else MQError(done.comp, done.reason, "put warning"))
            return outcomes
        try:
            run = self._run(conn, h, self._admit(h, md, pmo), pmo, warning, None, fill_descriptor)
        except MQError as exc:
            return [exc for _ in rows]
        publish_in = self._publish_in
        try:
            for msg_id, correl_id, data in rows:
                try:
                    _, reason = publish_in(run, msg_id, correl_id, data, False)
                except MQError as exc:
                    note(exc)
                else:
                    note(None if not reason else MQError(C.MQCC_WARNING, reason, "put warning"))
        finally:
            self._end_run(run)
        return outcomes

    def _admit(self, h: Handle, md: MQMD, pmo: PutOptions) -> MQMD:
        """The topic's and the put options' refusals of a publication through ``h``; its
        descriptor without ReplyToQ/ReplyToQMgr under MQPMO_SUPPRESS_REPLYTO."""
        topic = h.topic
        assert topic is not None
        if self.topics.effective(topic, "PUB") == C.MQTA_PUB_INHIBITED:
            raise failed(C.MQRC_PUT_INHIBITED, f"topic {topic!r} has PUB(DISABLED)")
        if pmo.options & C.MQPMO_SUPPRESS_REPLYTO:
            if md.report & _REPLY_REPORTS:
                raise failed(C.MQRC_MISSING_REPLY_TO_Q,
                             "MQPMO_SUPPRESS_REPLYTO with report options that need a ReplyToQ")
            if md.reply_to_q.strip() or md.reply_to_q_mgr.strip():
                md = md.replace(reply_to_q="", reply_to_q_mgr="")
        return md

    def _run(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, warning: int, props: PropertySet | None,
             fill_descriptor: FillDescriptor) -> _Run:
        """What the publications put through ``h`` with ``md`` (but its identifiers), ``pmo``
        and ``props`` share: priority and persistence resolved from the topic; the stored
        descriptor and the subscriptions follow with the first publication (``_publish_in``)."""
        topic = h.topic
        assert topic is not None
        topics = self.topics
        priority = int(topics.effective(topic, "DEFPRTY")) if md.priority == C.MQPRI_PRIORITY_AS_TOPIC_DEF \
            else md.priority
        persistence = (int(topics.effective(topic, "DEFPSIST")) if md.persistence == C.MQPER_PERSISTENCE_AS_TOPIC_DEF
                       else md.persistence)
        run = _Run(conn, h, md, pmo, priority, persistence, fill_descriptor, props, warning)
        run.max_length = self.state.qmgr_attr("MAXMSGL")
        return run

    def _settle(self, run: _Run) -> MQMD:
        """The run's stored descriptor (its MsgId and CorrelId are each publication's), made
        at its first publication that passes the checks before it, as MQPUT makes it; and,
        when no subscription to its topic has a selector (one could refuse one publication
        and take the next), the subscriptions that receive every publication of the run.

        Raises:
            MQError: what ``fill_descriptor`` refuses (context).
        """
        run.now = now = self.clock.now()
        conn, topic = run.conn, run.topic
        pmo = run.pmo
        if pmo.options & C.MQPMO_NEW_CORREL_ID:  # each publication's, made by _publish_in
            pmo = PutOptions(pmo.options & ~C.MQPMO_NEW_CORREL_ID, pmo.context)
        run.stored = stored = run.fill_descriptor(conn, run.handle, run.md, pmo, run.priority, run.persistence, now,
                                                  NONE_ID)
        if not any(sub.selector is not None for sub in self.subscriptions.matching(topic, self.topics.epoch)):
            run.pub = Publication(topic, stored, b"", run.properties, now, conn.hconn)
            run.subs = self.receivers(run.pub, not_own=run.not_own)
            run.own = run.retain
        return stored

    def _publish_in(self, run: _Run, msg_id: bytes, correl_id: bytes, data: bytes,
                    answered: bool = True) -> tuple[MQMD | None, int]:
        """Publish one message of ``run`` (MQPUT's ``msg_id`` and ``correl_id``): its stored
        descriptor (None when not ``answered`` and nothing else needed it: a run's
        publication, whose outcome is its reason alone) and the warning reason (0: none).

        Raises:
            MQError: as ``publish``, but for what ``_admit`` decides.
        """
        qmgr_max = run.max_length
        if len(data) > qmgr_max:
            raise failed(C.MQRC_MSG_TOO_BIG_FOR_Q_MGR, f"message of {len(data)} bytes exceeds MAXMSGL({qmgr_max})")
        persistent = run.persistent
        if persistent and self.journal.refusal:
            raise failed(C.MQRC_RESOURCE_PROBLEM, self.journal.refusal)
        base = run.stored or self._settle(run)
        subs, new_correl_id = run.subs, run.new_correl_id
        new_msg_id = run.new_msg_id or msg_id == NONE_ID
        # The publication's own descriptor: for its answer, a selector or the retained one.
        # Without them no one sees its MsgId (each copy has its own): none is made for it.
        own = answered or run.own
        ids: tuple[bytes, int] | None = None
        if subs is None:  # a selector: who receives it depends on its own descriptor
            if new_msg_id:
                msg_id = self.state.new_id()
            if new_correl_id:
                correl_id = self.state.new_id()
        elif wanted := new_msg_id + new_correl_id + len(subs):
            # Its identifiers and its copies' (``_plan``) from one reservation, as new_id
            # would make them one by one; a MsgId not made keeps its place all the same.
            prefix, tail = self.state.reserve_ids(wanted)
            if new_msg_id:
                if own:
                    msg_id = prefix + tail.to_bytes(8, "big")
                tail += 1
            if new_correl_id:
                correl_id = prefix + tail.to_bytes(8, "big")
                tail += 1
            ids = prefix, tail
        stored: MQMD | None = None
        pub = run.pub
        if own or pub is None:
            stored = base.with_ids(msg_id, correl_id)
            pub = Publication(run.topic, stored, bytes(data), run.properties, run.now, run.conn.hconn)
        else:  # the run's: the copies' descriptors need its descriptor and the CorrelId only
            pub.data, pub.correl_id = bytes(data), correl_id
        if subs is None:
            subs = self.receivers(pub, not_own=run.not_own)
        uow = None
        if run.in_uow:
            uow = run.conn.uow
            if uow is not None and len(uow) + len(subs) > self.state.qmgr_attr("MAXUMSGS"):
                raise failed(C.MQRC_SYNCPOINT_LIMIT_REACHED,
                             f"unit of work would exceed MAXUMSGS with {len(subs)} copies")
        copies, dead = self._plan(pub, subs, False, copies=run.copies, ids=ids)
        if run.in_uow:
            uow = self.units.uow_of(run.conn)
        self._place(pub, copies, dead, uow, persistent, True, run)
        if run.retain:
            self.retained.keep(Retained(run.topic, pub.md, pub.data, run.properties, run.now), uow)
        if subs or not run.warn_if_none:
            return stored, run.warning
        return stored, run.warning or C.MQRC_NO_SUBS_MATCHED

    def receivers(self, pub: Publication, *, not_own: bool = False) -> list[Subscription]:
        """The subscriptions that receive ``pub`` now (see the module docstring, step 3)."""
        now = pub.put_at
        topics = self.topics
        found = []
        lookup = None
        for sub in self.subscriptions.matching(pub.topic, topics.epoch):
            if sub.on_request or sub.expired(now) or (not_own and sub.hconn == pub.hconn and pub.hconn):
                continue
            if sub.selector is not None:
                if lookup is None:
                    probe = Message("", 0, pub.md, pub.data, pub.put_at, False)
                    probe.properties = pub.properties
                    lookup = message_lookup(probe)
                if not sub.selector.matches(lookup):
                    continue
            found.append(sub)
        return found

    # -- retained publications -------------------------------------------------------------
    def selects(self, sub: Subscription, r: Retained) -> bool:
        """Whether ``sub``'s selector takes retained publication ``r``."""
        if sub.selector is None:
            return True
        probe = Message("", 0, r.md, r.data, r.put_at, False)
        probe.properties = r.properties
        return sub.selector.matches(message_lookup(probe))

    def send_retained(self, sub: Subscription, pubs: Iterable[Retained], *, strict: bool) -> int:
        """Deliver retained publications to ``sub`` outside any unit of work; the number
        delivered. ``strict`` (a subscription being made): a copy that can go neither to
        its queue nor to the dead-letter queue fails the call with
        MQRC_RETAINED_NOT_DELIVERED and nothing is delivered.

        Raises:
            MQError: MQRC_RETAINED_NOT_DELIVERED.
        """
        plans: list[tuple[Publication, list[_Copy], Sequence[_Dead]]] = []
        planned: dict[str, int] = {}
        for r in pubs:
            pub = Publication(r.topic, r.md, r.data, r.properties, r.put_at)
            try:
                plans.append((pub, *self._plan(pub, [sub], True, planned, strict)))
            except MQError:
                raise failed(C.MQRC_RETAINED_NOT_DELIVERED,
                             f"a retained publication on {r.topic!r} can reach neither {sub.destination} "
                             "nor the dead-letter queue") from None
        count = sum(len(copies) + len(dead) for _, copies, dead in plans)
        persistent = any(shape[5] == _PERSISTENT for _, copies, _ in plans for *_, shape in copies) or any(
            m.persistence == _PERSISTENT for _, _, dead in plans for _, m in dead)
        # Persistent copies to more than one queue: in one unit, one journal transaction.
        unit = UnitOfWork(self.staging.new_txid()) if persistent and count > 1 else None
        for pub, copies, dead in plans:
            self._place(pub, copies, dead, unit, persistent, share=False)
        if unit is not None:
            self.units.commit_unit(unit)
        return count

    # -- planning and placing copies -------------------------------------------------------
    def _plan(self, pub: Publication, subs: list[Subscription], retained: bool,
              planned: dict[str, int] | None = None, strict: bool = False,
              copies: _Copies | None = None,
              ids: tuple[bytes, int] | None = None) -> tuple[list[_Copy], Sequence[_Dead]]:
        """Each subscription's copy and the queue it goes to, and the dead letters of those
        their own queues refuse (to a dead-letter queue), or MQRC_PUBLICATION_FAILURE as
        PMSGDLV/NPMSGDLV decide. ``planned`` counts copies already planned per queue (depth
        is checked with them). ``copies``: the descriptors and properties made for the
        other publications of a run (they are the same for every one), added to as they
        are made. ``ids``: the copies' MsgIds reserved already (``reserve_ids``'s prefix
        and first tail), else reserved here."""
        if planned is None:
            planned = {}
        plans: list[_Copy] = []
        if not subs:
            return plans, []
        md = pub.md
        data, md_correl = pub.data, pub.correl_id or md.correl_id
        size = len(data)
        # The copies of one publication differ in MsgId, CorrelId and what the subscription
        # sets (identity, priority, persistence): one stored descriptor (a template, see
        # Message) per distinct setting, each copy its identifiers. The publications of a
        # run differ only in their identifiers, which no template holds.
        if copies is None:
            copies = _Copies()
        fields = copies.fields
        if fields is None:
            fields = copies.fields = (md.expiry, md.persistence, md.priority)
        expiry, md_persistence, md_priority = fields
        templates, props_for = copies.templates, copies.properties
        failures: list[tuple[Subscription, MQMD, PropertySet, int, str]] = []
        queues, refusal = self.objects.queues, self._refusal
        id_prefix, id_tail = self.reserve_ids(len(subs)) if ids is None else ids
        shapes = copies.shapes
        for sub in subs:
            shape = shapes.get(sub)
            if shape is None:
                q = queues.get(sub.destination)
                user_data = sub.user_data
                props = props_for.get(user_data)
                if props is None:
                    props = props_for[user_data] = self._copy_properties(pub, user_data, retained)
                persistence = md_persistence
                if (sub.managed and q is not None and q.deftype == C.MQQDT_TEMPORARY_DYNAMIC
                        and persistence == C.MQPER_PERSISTENT):
                    persistence = C.MQPER_NOT_PERSISTENT  # a temporary managed queue holds none (docs/pubsub.md)
                priority = sub.pub_priority
                if priority == C.MQPRI_PRIORITY_AS_PUBLISHED or (priority < 0 and q is None):
                    priority = md_priority
                elif priority < 0:
                    priority = int(q.attrs["DEFPRTY"])  # type: ignore[union-attr]
                key = (sub.user, sub.pub_accounting_token, sub.pub_appl_identity_data, priority, persistence)
                template = templates.get(key)
                if template is None:
                    template = templates[key] = md.with_copy_identity(
                        priority, persistence, sub.user[:12], sub.pub_accounting_token, sub.pub_appl_identity_data)
                shape = shapes[sub] = (q, q.name if q is not None else sub.destination, template, props, priority,
                                       persistence, sub.correl_id if sub.correl_id != NONE_ID else None,
                                       self._limits(q), q is not None and q.fifo, template.report, expiry,
                                       persistence != _PERSISTENT and expiry == C.MQEI_UNLIMITED)
            q, qname, _, _, _, persistence, correl, limits, _, _, _, _ = shape
            if correl is None:
                correl = md_correl
            msg_id = id_prefix + id_tail.to_bytes(8, "big")
            id_tail += 1
            reason = refusal(q, size, persistence, planned.get(qname, 0), limits)
            if reason:
                failures.append((sub, shape[2].with_ids(msg_id, correl), shape[3], reason, qname))
                continue
            assert q is not None
            planned[qname] = planned.get(qname, 0) + 1
            plans.append((q, sub, msg_id, correl, shape))
        return plans, self._undeliverable(pub, failures, planned, strict) if failures else ()

    def _copy_properties(self, pub: Publication, user_data: str, retained: bool) -> PropertySet:
        own = pub.properties
        if not own:
            key = (pub.topic, user_data, retained)
            props = self._mqps_only.get(key)
            if props is not None:
                return props
        props = own.copy() if own else PropertySet()
        props.set(TOPIC_PROPERTY, pub.topic, C.MQTYPE_STRING)
        if user_data:
            props.set(USER_DATA_PROPERTY, user_data, C.MQTYPE_STRING)
        if retained:
            props.set(RETAINED_PROPERTY, True, C.MQTYPE_BOOLEAN)
        # Packed now, while it is the only one: every copy (and each getter's copy of a
        # copy, PropertySet.copy) then carries the packed form instead of packing its own
        # for its delivery, its size check and its journal record.
        props_model.pack(props)
        if not own:
            if len(self._mqps_only) >= _MQPS_KEPT:
                self._mqps_only.clear()
            self._mqps_only[key] = props
        return props

    @staticmethod
    def _limits(q: QueueObject | None) -> _Limits:
        """What ``q``'s attributes say of every copy: the refusal of any (0: none), its
        MAXMSGL and MAXDEPTH, and whether it is a temporary dynamic queue."""
        if q is None or q.qtype != "QLOCAL":
            return C.MQRC_UNKNOWN_OBJECT_NAME, 0, 0, False
        qa = q.attrs
        if qa["PUT"] == C.MQQA_PUT_INHIBITED:
            return C.MQRC_PUT_INHIBITED, 0, 0, False
        return 0, int(qa["MAXMSGL"]), int(qa["MAXDEPTH"]), q.deftype == C.MQQDT_TEMPORARY_DYNAMIC

    def _refusal(self, q: QueueObject | None, size: int, persistence: int, planned: int,
                 limits: _Limits | None = None) -> int:
        """Why ``q`` cannot take a message of ``size`` bytes of data and this persistence
        now (0: it can). ``limits``: ``_limits(q)``, when the caller has it (a run's copies
        to one queue)."""
        every, max_length, max_depth, temporary = self._limits(q) if limits is None else limits
        if every:
            return every
        assert q is not None
        messages = q.messages
        if size > max_length:
            return C.MQRC_MSG_TOO_BIG_FOR_Q
        if len(messages.by_seq) + messages.uncommitted + planned >= max_depth:
            return C.MQRC_Q_FULL
        if persistence == C.MQPER_PERSISTENT:
            return C.MQRC_PERSISTENT_NOT_ALLOWED if temporary else 0
        if messages.meter.transient + size > self.pager.limits.non_persistent_bytes:
            return C.MQRC_Q_SPACE_NOT_AVAILABLE
        return 0

    def _undeliverable(self, pub: Publication, failures: list[tuple[Subscription, MQMD, PropertySet, int, str]],
                       planned: dict[str, int], strict: bool) -> list[_Dead]:
        """The dead letters of the copies their queues refused (each: its subscription,
        descriptor, properties, the reason and the queue), as the module docstring says.

        Raises:
            MQError: MQRC_PUBLICATION_FAILURE.
        """
        topics = self.topics
        dlq = self.state.dead_letter_queue() if topics.effective(pub.topic, "USEDLQ") == C.MQUSEDLQ_YES else None
        policy = int(topics.effective(pub.topic, "PMSGDLV" if pub.persistent else "NPMSGDLV"))
        out: list[_Dead] = []
        date, tod = self.state.stamp_put(self.clock.now())
        ccsid = self.state.qmgr_attr("CCSID")
        for sub, md, props, reason, qname in failures:
            if dlq is not None:
                dl_md, dl_data = dead_letter(self.name, ccsid, md, pub.data, reason, qname, date, tod)
                dead = Message(dlq.name, 0, dl_md, dl_data, pub.put_at, dlq.fifo)
                dead.properties = props
                if not self._refusal(dlq, dead.data_length, dead.persistence, planned.get(dlq.name, 0)):
                    planned[dlq.name] = planned.get(dlq.name, 0) + 1
                    out.append((dlq, dead))
                    log.warning("event=publication_dead_lettered topic=%s subscription=%s queue=%s reason=%d",
                                pub.topic, sub.key, qname, reason)
                    continue
            if strict or policy == C.MQDLV_ALL or (policy == C.MQDLV_ALL_DUR and sub.durable):
                raise failed(C.MQRC_PUBLICATION_FAILURE,
                             f"subscription {sub.key} cannot take the publication on {pub.topic!r} "
                             f"(queue {qname}, reason {reason}); nothing was delivered")
            log.warning("event=publication_not_delivered topic=%s subscription=%s queue=%s reason=%d",
                        pub.topic, sub.key, qname, reason)
        return out

    def _place(self, pub: Publication, copies: list[_Copy], dead: Sequence[_Dead], uow: UnitOfWork | None,
               persistent: bool, share: bool, run: _Run | None = None) -> None:
        """Place the planned copies of ``pub``, then the dead letters: in ``uow``; or, for
        persistent copies to more than one queue, in a unit of their own (one journal
        transaction): the ``run``'s, which ``_end_run`` commits once for all its
        publications, or one committed at once; or one by one. With ``share``, the
        persistent copies (not the dead letters) share one record of the data when there
        are several.

        A copy outside a unit of work goes straight to a get waiting for it, when that is
        provably what placing it would do (engine.handover), as the publication's parts
        (template, identifiers, data, properties): a Message is made only for a copy that
        is queued, or that the taking needs (HandOver.give)."""
        if not copies and not dead:
            return
        own_unit = uow is None and persistent and (len(copies) + len(dead) > 1
                                                   or (run is not None and run.unit is not None))
        unit = uow
        if own_unit:
            unit = run.unit if run is not None else None
            if unit is None:
                unit = UnitOfWork(self.staging.new_txid())
                if run is not None:
                    run.unit = unit
        data, put_at = pub.data, pub.put_at
        # The queues with waiting gets (None in a unit of work: no hand-over there), and the
        # record of the data the persistent copies share (0: none).
        waiting: dict[str, list[int]] | None = self.queue_waiters
        shared = 0
        if unit is not None:
            waiting = None
            if persistent and share and sum(1 for *_, shape in copies if shape[5] == _PERSISTENT) > 1:
                shared = self.staging.journal_data(data, unit.txid)
        next_sequence, place, monitor = self.next_sequence, self.place_message, self.monitor
        # The persistent copies placed in a unit: their records staged with one journal call.
        gather: list[Message] | None = [] if unit is not None else None
        for q, sub, msg_id, correl, shape in copies:
            seq = next_sequence(q)
            _, qname, template, props, priority, persistence, _, _, fifo, report, expiry, handable = shape
            # (a copy always has properties: MQTopicString)
            if (waiting and handable and qname in waiting
                    and (taken := self.taker(q, msg_id, correl, len(data), True)) is not None):
                md, raw = template.with_ids_packed(msg_id, correl)
                self.give(q, taken, md, raw, report, data, seq, put_at, None, fifo, props)
            else:
                msg = Message(qname, seq, None, data, put_at, fifo, fields=(expiry, priority, persistence, msg_id, correl),
                              template=template, report=report)
                msg.properties = props
                if shared and persistence == _PERSISTENT:
                    msg.share_data(shared, data)
                place(q, msg, unit, gather)
            q.last_put = put_at
            sub.delivered += 1
            sub.last_msg_at = put_at
            if monitor.on:
                monitor.published(persistence == _PERSISTENT, len(data))
        if dead:
            hand_over = self.hand_over
            for q, msg in dead:
                msg.seq = seq = next_sequence(q)
                msg.key = (msg.key[0], seq)
                if unit is not None or q.name not in self.queue_waiters or not hand_over(q, msg, None, put_at)[0]:
                    place(q, msg, unit, gather)
                q.last_put = put_at
        if gather:
            assert unit is not None
            self.staging.journal_messages(gather, unit.txid)
        if own_unit and run is None:
            assert unit is not None
            self.units.commit_unit(unit)

    def _end_run(self, run: _Run) -> None:
        """Commit the unit the run's persistent copies outside syncpoint were placed in: one
        journal transaction for every publication of the run, each delivered whole or not
        at all (a crash before the commit is durable loses the run's publications, none of
        which was acknowledged), visible together."""
        if run.unit is not None:
            unit, run.unit = run.unit, None
            self.units.commit_unit(unit)
