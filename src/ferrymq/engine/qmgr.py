"""The queue manager: a thin facade over the collaborators that make the engine.

Build one with QueueManager.start(name, journal, clock). Every call is synchronous and
atomic; after each a driver reads take_sync_lsn() (wait for the journal before replying)
and take_deliveries() (answers for waiting gets). A put's result carries the answer it
made for a waiting get that the driver writes before anything else (PutResult.delivered).

The collaborators, each in its own module, composed once in ``__init__`` (each binds what
it uses of the others then, so no call looks its way through several objects):

- EngineState (engine.state): name, clock, journal, objects, connections and handles;
- Staging (engine.staging): journal writes, numbering, the LSN a reply waits for;
- Waits (engine.waits): waiting gets and the answers made for them;
- Arrivals (engine.arrival): a message arriving on a queue;
- Reports (engine.reports): COA, COD, expiration, exception reports, dead letters;
- Units (engine.units) and InDoubt (engine.xa): units of work, local and prepared;
- Resolver (engine.routing) and Opener (engine.opening): MQCONN, MQOPEN and their ends;
- Getter (engine.getting), HandOver (engine.handover), Putter (engine.putting): MQGET, MQPUT;
- Events (engine.events) and Monitor (engine.monitoring): instrumentation events, statistics
  and accounting messages;
- SubscriptionRegistry (engine.subscriptions), RetainedStore (engine.retained), Publisher
  (engine.publishing) and Subscriber (engine.subscribing): publish/subscribe, with the topic
  tree seen through TopicView (engine.pubtopics).

The facade adds recovery, MQINQ and MQSET, and the periodic work.
"""

from __future__ import annotations

import gc
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ferrymq.engine import attrs as A
from ferrymq.engine import sequence_access
from ferrymq.engine.api import (
    Clock,
    GetOptions,
    GetResult,
    InquireResult,
    ObjectDescriptor,
    OpenResult,
    PersistentNext,
    PutOptions,
    PutRequest,
    PutResult,
    SubDescriptor,
    SubResult,
    Waiting,
)
from ferrymq.engine.arrival import Arrivals
from ferrymq.engine.authority import KIND_SECURITY, PUT1_CONTEXT
from ferrymq.engine.channels import KIND_CHANNEL, KIND_LISTENER, decode_channel, decode_listener
from ferrymq.engine.definitions import Definition, Definitions
from ferrymq.engine.distlist import Distributor
from ferrymq.engine.events import Events
from ferrymq.engine.getting import Getter
from ferrymq.engine.handover import HandOver
from ferrymq.engine.message import KIND_MESSAGE, KIND_MESSAGE_DATA, Message
from ferrymq.engine.monitoring import Monitor
from ferrymq.engine.namelists import KIND_NAMELIST, decode_namelist
from ferrymq.engine.objects import KIND_OBJECT, KIND_QMGR, KIND_SEQUENCE, SYSTEM_QUEUES, QueueObject, decode_object
from ferrymq.engine.opening import Opener
from ferrymq.engine.paging import MemoryLimits
from ferrymq.engine.processes import KIND_PROCESS, decode_process
from ferrymq.engine.publishing import Publisher
from ferrymq.engine.pubtopics import TopicView, has_wildcards
from ferrymq.engine.putting import Putter
from ferrymq.engine.reports import Reports
from ferrymq.engine.retained import KIND_RETAINED, RetainedStore
from ferrymq.engine.routing import Resolver
from ferrymq.engine.session import ReaderPosition
from ferrymq.engine.state import EngineState
from ferrymq.engine.subscribing import DestinationNotAuthorized, Subscriber
from ferrymq.engine.subscriptions import KIND_SUBSCRIPTION, Subscription, SubscriptionRegistry, decode_subscription
from ferrymq.engine.topics import KIND_TOPIC, decode_topic
from ferrymq.engine.triggering import Triggers
from ferrymq.engine.units import Units
from ferrymq.engine.waits import Waits
from ferrymq.engine.xa import InDoubt
from ferrymq.errors import DecodeError, MQError, failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.store.journal import Journal, LoadResult, Record
from ferrymq.wire.mqmd import MQMD

log = logging.getLogger("ferrymq.engine")

_BROWSE = C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR
_PUT_EVENTS = frozenset({C.MQRC_Q_FULL, C.MQRC_PUT_INHIBITED, C.MQRC_UNKNOWN_OBJECT_NAME})
_SET_REASON = {"PUT": C.MQRC_INHIBIT_VALUE_ERROR, "GET": C.MQRC_INHIBIT_VALUE_ERROR,
               "DISTL": C.MQRC_INHIBIT_VALUE_ERROR, "TRIGGER": C.MQRC_TRIGGER_CONTROL_ERROR,
               "TRIGTYPE": C.MQRC_TRIGGER_TYPE_ERROR, "TRIGDPTH": C.MQRC_TRIGGER_DEPTH_ERROR,
               "TRIGMPRI": C.MQRC_TRIGGER_MSG_PRIORITY_ERR, "TRIGDATA": C.MQRC_CHAR_ATTR_LENGTH_ERROR}
_ACCT_MQI_BOTH = C.MQCNO_ACCOUNTING_MQI_ENABLED | C.MQCNO_ACCOUNTING_MQI_DISABLED
_ACCT_Q_BOTH = C.MQCNO_ACCOUNTING_Q_ENABLED | C.MQCNO_ACCOUNTING_Q_DISABLED
_ACCT_OPTIONS = _ACCT_MQI_BOTH | _ACCT_Q_BOTH  # the MQCNO options the engine acts on
_CATALOGUE = {KIND_QMGR: "qmgr", KIND_OBJECT: "queue", KIND_SEQUENCE: "sequence"}
"""The records QueueManager._recover_catalogue takes back, by their journal kind."""
_UNREADABLE = (DecodeError, ValueError, KeyError, TypeError, IndexError, MQError)
"""What reading a record that passed its checksum raises when its content is not what this
version writes (JSON's and UTF-8's errors are ValueErrors)."""


class QueueManager:
    """One queue manager's engine (see the module docstring)."""

    def __init__(self, name: str, journal: Journal, clock: Clock, limits: MemoryLimits | None = None) -> None:
        self.state = state = EngineState(name, journal, clock, limits)
        self.name, self.journal, self.clock, self.pager = name, journal, clock, state.pager
        self.objects, self.connections, self.handles = state.objects, state.connections, state.handles
        self.staging = staging = state.staging
        self.waits = waits = Waits(state)
        self.arrivals = arrivals = Arrivals(state, waits)
        self.reports = reports = Reports(state, arrivals)
        self.triggers = triggers = Triggers(state, state.processes)
        triggers.deliver_with(reports.deliver_generated)
        arrivals.trigger_with(triggers.arrived)
        self.events = events = Events(state)
        events.deliver_with(reports.deliver_generated)
        arrivals.counted = events.arrived
        self.units = units = Units(state, waits, reports)
        self.xa = InDoubt(state, units)
        self.topics = topics = TopicView(state.objects, state.topics)
        self.opener = opener = Opener(state, waits, units, Resolver(name, state.objects, topics))
        opener.opened_for_input = triggers.opened_for_input
        self.getter = getter = Getter(state, waits, reports, units)
        getter.removed = events.removed
        self.handover = handover = HandOver(waits, getter.take, reports.report_arrival)
        self.monitor = monitor = Monitor(state)
        monitor.deliver_with(reports.deliver_generated)
        getter.monitor = handover.monitor = monitor
        self.subscriptions = subscriptions = SubscriptionRegistry(topics.receives, has_wildcards)
        subscriptions.persist, subscriptions.unpersist = self._persist_subscription, self._unpersist_subscription
        self.retained = retained = RetainedStore(staging)
        self.publisher = publisher = Publisher(state, arrivals, units, subscriptions, retained, topics,
                                                     handover)
        publisher.monitor = monitor
        self.subscriber = Subscriber(state, opener, publisher, subscriptions, retained, topics)
        self.putter = Putter(state, waits, arrivals, reports, units, handover, opener.open, opener.close, publisher)
        self.distributor = distributor = Distributor(state, opener, self.putter, self.open, self.close)
        self.open_list, self.put_list, self.put1_list = distributor.open, distributor.put, distributor.put1
        self.putter.list_put = distributor.plain_put
        # Replayable readers' positions (engine.sequence_access) and prepared units by XID.
        self.readers: dict[tuple[str, str], ReaderPosition] = {}
        self.in_doubt = self.xa.units_by_xid
        self.waiters, self.queue_waiters, self.deliveries = waits.waiters, waits.queue_waiters, waits.deliveries
        # The MQI, bound once: a call through the facade is the collaborator's own call.
        # What drivers, the command server and admin use of the collaborators.
        self.take_sync_lsn, self.need_sync = staging.take_sync_lsn, staging.need_sync
        self.next_sequence, self.new_record_id = staging.next_sequence, staging.new_record_id
        self.write_record = staging.write_record
        self.take_deliveries, self.cancel_wait, self.wake = waits.take_deliveries, waits.cancel_wait, waits.wake
        self.answered = waits.answered
        self.discard_expired = getter.discard_expired
        self.deliver_generated, self.report_arrival = reports.deliver_generated, reports.report_arrival
        self.new_id, self.stamp_put, self.qmgr_attr = state.new_id, state.stamp_put, state.qmgr_attr
        self.dead_letter_queue, self.conn = state.dead_letter_queue, state.conn

    @property
    def quiescing(self) -> bool:
        return self.state.quiescing

    @classmethod
    def start(cls, name: str, journal: Journal, clock: Clock, limits: MemoryLimits | None = None) -> QueueManager:
        """Replay the journal into a running engine; a new journal gets the system objects.
        ``limits``: how much message data to keep in memory (engine/paging.py)."""
        qm = cls(name, journal, clock, limits)
        # A restart builds millions of long-lived objects: the cyclic collector would rescan
        # them again and again (it doubled restart time), and afterwards they never die young.
        gc.disable()
        try:
            qm.recover(journal.load(qm.pager.trim))
        finally:
            gc.enable()
        gc.freeze()
        qm.subscriber.drop_orphaned_queues()
        new = not qm.objects.qmgr_record_id
        if new:
            qm.staging.persist_qmgr()
        for qname, qtype, overrides in SYSTEM_QUEUES:
            if qm.objects.find(qname) is None:
                qm.objects.define(qtype, qname, overrides)
        qm.state.topics.define_system()
        qm.state.namelists.define_system()
        qm.state.channels.define_system(new=new)
        qm.state.listeners.define_system()
        qm.state.processes.define_system()
        qm.take_sync_lsn()
        journal.sync()
        return qm

    # -- recovery --------------------------------------------------------------------------
    def recover(self, loaded: LoadResult) -> None:
        messages: list[Message] = []
        message_records: list[Record] = []
        reserved: dict[str, tuple[int, int]] = {}
        fifo_of: dict[str, bool] = {}
        now = self.clock.now()
        last_record = 0
        state = self.state
        # Each named definition's journal kind: how to read it back, and where it goes.
        definitions: dict[int, tuple[Callable[[bytes, float], Definition], Definitions[Any]]] = {
            KIND_TOPIC: (decode_topic, state.topics), KIND_NAMELIST: (decode_namelist, state.namelists),
            KIND_CHANNEL: (decode_channel, state.channels), KIND_LISTENER: (decode_listener, state.listeners),
            KIND_PROCESS: (decode_process, state.processes)}
        for rec in loaded.records:
            last_record = max(last_record, rec.record_id)
            if rec.kind in _CATALOGUE:
                try:
                    self._recover_catalogue(rec, now, fifo_of, reserved)
                except _UNREADABLE as exc:
                    # Passed its checksum yet unreadable: left in the journal for an operator;
                    # a queue's messages wait there too (orphan_messages) and the rest starts.
                    log.error("event=unreadable_catalogue_record kind=%s record_id=%d error=%r",
                              _CATALOGUE[rec.kind], rec.record_id, exc)
            elif rec.kind in definitions:
                decode, registry = definitions[rec.kind]
                try:
                    defined = decode(rec.payload, now)
                except _UNREADABLE as exc:
                    # passed its checksum yet unreadable: left for an operator, the rest starts
                    log.error("event=unreadable_definition kind=%d record_id=%d error=%s",
                              rec.kind, rec.record_id, exc)
                    continue
                defined.record_id = rec.record_id
                registry.load(defined)
            elif rec.kind == KIND_SUBSCRIPTION:
                try:
                    sub = decode_subscription(rec.payload)
                except DecodeError as exc:
                    log.error("event=unreadable_subscription record_id=%d error=%s", rec.record_id, exc)
                    continue
                sub.record_id = rec.record_id
                self.subscriber.recovered(sub)
            elif rec.kind == KIND_RETAINED:
                self.retained.recover(rec.record_id, rec.payload)
            elif rec.kind == KIND_SECURITY:
                try:
                    self.state.authority.load(rec.payload)
                except (ValueError, KeyError, TypeError) as exc:
                    log.error("event=unreadable_authority_records record_id=%d error=%s", rec.record_id, exc)
                    continue
                self.state.authority.record_id = rec.record_id
            elif rec.kind == sequence_access.KIND_READER:
                sequence_access.load_reader(self, rec)
            elif rec.kind == KIND_MESSAGE_DATA:
                self.pager.recover_data(rec)
            elif rec.kind == KIND_MESSAGE:
                message_records.append(rec)  # decoded once every data record they may name is known
        for rec in message_records:
            try:
                msg = self.pager.recover(rec, fifo_of)
            except DecodeError as exc:
                # Passed its checksum yet unreadable: never delivered, left in the journal
                # for an operator, and the rest of the queue manager still starts.
                log.error("event=unreadable_message record_id=%d error=%s", rec.record_id, exc)
                continue
            messages.append(msg)
        self.staging.count_shared(messages)
        by_queue: dict[str, list[Message]] = {}
        last_id = 0
        for msg in messages:
            by_queue.setdefault(msg.queue, []).append(msg)
            tail = int.from_bytes(msg.msg_id[16:], "big")
            if tail > last_id:
                last_id = tail
        self.state.recovered_id(last_id)
        for qname, msgs in by_queue.items():
            q = self.objects.find(qname)
            if q is None or not q.is_local:
                log.error("event=orphan_messages queue=%s count=%d action=kept_in_journal", qname, len(msgs))
                continue
            q.messages.load(msgs)
            q.next_seq = max(q.next_seq, max(m.seq for m in msgs) + 1)
        for qname, (value, rid) in reserved.items():
            q = self.objects.find(qname)
            if q is not None:
                # Everything up to the reservation may have been handed out before the crash.
                q.next_seq = max(q.next_seq, value + 1)
                q.seq_reserved, q.seq_record_id = value, rid
        self.xa.restore(loaded.prepared)
        self.staging.drop_unnamed_data(self.pager.loaded_data())
        self.staging.recovered(last_record, max([0] + [tx.txid for tx in loaded.prepared]))
        if loaded.torn_bytes or loaded.bad_records:
            log.warning("event=journal_damage torn_bytes=%d bad_records=%d", loaded.torn_bytes, loaded.bad_records)
            for where in loaded.damage:
                log.warning("event=journal_damage_at %s", where)

    def _recover_catalogue(self, rec: Record, now: float, fifo_of: dict[str, bool],
                           reserved: dict[str, tuple[int, int]]) -> None:
        """Take back the queue manager's, a queue's or a sequence reservation's record.

        Raises:
            _UNREADABLE: the record is not one of these as this version writes it.
        """
        if rec.kind == KIND_QMGR:
            self.objects.load_qmgr(rec.payload)
            self.objects.qmgr_record_id = rec.record_id
        elif rec.kind == KIND_OBJECT:
            obj = decode_object(rec.payload, now, self.objects.meter)
            obj.record_id = rec.record_id
            self.objects.queues[obj.name] = obj
            fifo_of[obj.name] = obj.fifo
        else:
            doc = json.loads(rec.payload)
            reserved[str(doc["queue"])] = (int(doc["reserved"]), rec.record_id)

    def _persist_subscription(self, sub: Subscription) -> None:
        sub.record_id = self.staging.write_record(sub.record_id, KIND_SUBSCRIPTION, sub.encode())

    def _unpersist_subscription(self, sub: Subscription) -> None:
        if sub.record_id:
            self.journal.delete(sub.record_id)
            sub.record_id = 0

    # -- the MQI that is not bound in __init__ ---------------------------------------------
    # MQOPEN, MQPUT/MQPUT1 and MQGET pass their refusals by engine.events (inhibit, local and
    # queue-full events) on the way out; a call that succeeds pays only the try.
    def open(self, hconn: int, od: ObjectDescriptor, options: int) -> OpenResult:
        """MQOPEN (engine.opening).

        Raises:
            MQError: IBM's reason for every refusal.
        """
        try:
            result = self.opener.open(hconn, od, options)
        except MQError as exc:
            self.monitor.counted(self.connections.get(hconn), "opens", od.object_type, False)
            if exc.reason == C.MQRC_NOT_AUTHORIZED:
                self.events.open_refused(self.connections.get(hconn), options, od.object_type,
                                         od.object_name.strip() or od.object_string.strip())
            elif exc.reason == C.MQRC_UNKNOWN_OBJECT_NAME:
                self.events.refused(self.connections.get(hconn), exc.reason, od.object_name.strip(),
                                    od.object_type, od.object_q_mgr_name.strip())
            raise
        conn = self.connections.get(hconn)
        h = conn.handles.get(result.hobj) if conn is not None else None
        self.monitor.opened(conn, h.queue if h is not None else None, od.object_type)
        return result

    def connect(self, *, appl_name: str = "", user: str = "", appl_type: int = C.MQAT_DEFAULT, options: int = 0,
                pid: int = 0, tid: int = 0) -> int:
        """MQCONN(X) (engine.opening). ``options``: MQCNO options (its MQCNO_ACCOUNTING_* are
        acted on, under ACCTCONO); ``pid``/``tid``: the application's process and thread, as
        its accounting messages name them.

        Raises:
            MQError: MQRC_Q_MGR_QUIESCING while ending; 2035 without connect authority;
                MQRC_OPTIONS_ERROR (2046) for an accounting option both enabled and disabled.
        """
        try:
            if (options & _ACCT_MQI_BOTH) == _ACCT_MQI_BOTH or (options & _ACCT_Q_BOTH) == _ACCT_Q_BOTH:
                raise failed(C.MQRC_OPTIONS_ERROR, "MQCNO_ACCOUNTING_*_ENABLED and _DISABLED together")
            hconn = self.opener.connect(appl_name=appl_name, user=user, appl_type=appl_type)
        except MQError:
            self.monitor.connect_failed()
            raise
        conn = self.connections[hconn]
        conn.cno_options, conn.pid, conn.tid = options & _ACCT_OPTIONS, pid, tid
        self.monitor.connected_now(conn)
        return hconn

    def disconnect(self, hconn: int, *, commit: bool = True) -> None:
        """MQDISC (engine.opening); ``commit=False``: the connection was lost (an implicit
        disconnect), its unit of work backed out. Its accounting messages follow."""
        conn = self.connections.get(hconn)
        self.opener.disconnect(hconn, commit=commit)
        if conn is not None:
            self.monitor.disconnected(conn, F.MQDISCONNECT_NORMAL if commit else F.MQDISCONNECT_IMPLICIT)

    def close(self, hconn: int, hobj: int, options: int = C.MQCO_NONE) -> None:
        """MQCLOSE (engine.opening); a refusal for authority makes its Not Authorized event
        (type 3) and changes nothing.

        Raises:
            MQError: as Opener.close.
        """
        conn = self.connections.get(hconn)
        h = conn.handles.get(hobj) if conn is not None else None
        kind = C.MQOT_Q if h is not None and h.queue is not None else C.MQOT_TOPIC if h is not None and h.topic else C.MQOT_Q_MGR
        sub = h.subscription if h is not None else None
        try:
            self.opener.close(hconn, hobj, options)
        except MQError as exc:
            self.monitor.counted(conn, "closes", kind, False)
            if sub is not None and self.monitor.on:
                self.monitor.unsubscribed(conn, sub.durable, None)
            if exc.reason == C.MQRC_NOT_AUTHORIZED and h is not None:
                sub = h.subscription
                self.events.close_refused(conn, sub.name if sub is not None else h.name, subscription=sub is not None)
            raise
        self.monitor.counted(conn, "closes", kind, True)
        if sub is not None and self.monitor.on:
            self.monitor.unsubscribed(conn, sub.durable, not sub.durable or bool(options & C.MQCO_REMOVE_SUB))

    def subscribe(self, hconn: int, sd: SubDescriptor, hobj: int = C.MQHO_NONE) -> SubResult:
        """MQSUB (engine.subscribing); a refusal for authority makes its Not Authorized event.

        Raises:
            MQError: IBM's reason for every refusal.
        """
        try:
            result = self.subscriber.subscribe(hconn, sd, hobj)
        except MQError as exc:
            if self.monitor.on:
                self.monitor.subscribed(self.connections.get(hconn), bool(sd.options & C.MQSO_DURABLE), None)
            if exc.reason == C.MQRC_NOT_AUTHORIZED:
                try:  # the refusal came after the topic was resolved: this does not raise again
                    topic = self.state.topics.full_string(sd.object_name, sd.object_string)
                except MQError:
                    topic = sd.object_string
                if isinstance(exc, DestinationNotAuthorized):
                    self.events.sub_destination_refused(self.connections.get(hconn), sd.options, topic, exc.queue,
                                                        exc.open_options)
                else:
                    self.events.subscribe_refused(self.connections.get(hconn), sd.options, topic)
            raise
        if self.monitor.on:
            conn = self.connections.get(hconn)
            h = conn.handles.get(result.hsub) if conn is not None else None
            durable = h is not None and h.subscription is not None and h.subscription.durable
            done = 0 if result.descriptor is None else 1 if sd.options & C.MQSO_ALTER else 2
            self.monitor.subscribed(conn, durable, done)
        return result

    def sub_request(self, hconn: int, hsub: int, action: int = C.MQSR_ACTION_PUBLICATION,
                    options: int = C.MQSRO_NONE) -> int:
        """MQSUBRQ (engine.subscribing).

        Raises:
            MQError: as Subscriber.sub_request.
        """
        try:
            sent = self.subscriber.sub_request(hconn, hsub, action, options)
        except MQError:
            if self.monitor.on:
                self.monitor.sub_requested(self.connections.get(hconn), False)
            raise
        if self.monitor.on:
            self.monitor.sub_requested(self.connections.get(hconn), True)
        return sent

    def put_request(self, req: PutRequest) -> PutResult:
        """The one put entry (engine.putting).

        Raises:
            MQError: IBM's reason for every refusal.
        """
        try:
            result = self.putter.put(req)
            if self.monitor.on:
                self.monitor.put_done(req, result)
            return result
        except MQError as exc:
            if self.monitor.on:
                self.monitor.put_refused(req)
            if exc.reason in _PUT_EVENTS:
                self._put_refused(req, exc.reason)
            elif exc.reason == C.MQRC_NOT_AUTHORIZED and req.od is not None:  # MQPUT1's implied open
                options = C.MQOO_OUTPUT | sum(oo for pmo, oo in PUT1_CONTEXT if req.options & pmo)
                self.events.open_refused(self.connections.get(req.hconn), options, req.od.object_type,
                                         req.od.object_name.strip() or req.od.object_string.strip())
            raise

    def _put_refused(self, req: PutRequest, reason: int) -> None:
        conn = self.connections.get(req.hconn)
        if req.od is not None:
            name = req.od.object_name.strip()
            q = self.objects.find(name)
        else:
            h = conn.handles.get(req.hobj) if conn is not None else None
            if h is None:
                return
            name, q = h.name, h.queue
        if reason == C.MQRC_Q_FULL:
            if q is not None:
                self.events.full(q)
        else:
            self.events.refused(conn, reason, name)

    def get(self, hconn: int, hobj: int, md: MQMD, gmo: GetOptions, buffer_length: int) -> GetResult | Waiting:
        """MQGET (engine.getting).

        Raises:
            MQError: IBM's reason for every refusal.
        """
        try:
            return self.getter.get(hconn, hobj, md, gmo, buffer_length)
        except MQError as exc:
            self._get_refused(hconn, hobj, gmo, exc)
            raise

    def get_many(self, hconn: int, hobj: int, md: MQMD, gmo: GetOptions, buffer_length: int, limit: int,
                 max_bytes: int, *, frame_bytes: int = 0, framing: int = 0,
                 ahead: bool = False, streamed: bool = False) -> tuple[list[GetResult], Waiting | MQError | None]:
        """Several destructive MQGETs in one call (engine.getting ``Getter.get_many``): a
        refused first get is counted and reported as MQGET's refusal is."""
        results, stop = self.getter.get_many(hconn, hobj, md, gmo, buffer_length, limit, max_bytes,
                                             frame_bytes=frame_bytes, framing=framing, ahead=ahead,
                                             streamed=streamed)
        if not results and isinstance(stop, MQError) and not isinstance(stop, PersistentNext):
            self._get_refused(hconn, hobj, gmo, stop)
        return results, stop

    def _get_refused(self, hconn: int, hobj: int, gmo: GetOptions, exc: MQError) -> None:
        """MQGET refused with ``exc``: statistics and the Get Inhibited event."""
        if self.monitor.on:
            conn = self.connections.get(hconn)
            h = conn.handles.get(hobj) if conn is not None else None
            self.monitor.get_failed(conn, h.queue if h is not None else None, bool(gmo.options & _BROWSE))
        if exc.reason == C.MQRC_GET_INHIBITED:
            conn = self.connections.get(hconn)
            h = conn.handles.get(hobj) if conn is not None else None
            self.events.refused(conn, exc.reason, h.name if h is not None else "")

    def put(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions, data: bytes,
            properties: Mapping[str, object] | None = None) -> PutResult:
        """MQPUT (see engine.putting). ``properties`` are the message handle's.

        Raises:
            MQError: IBM's reason for every refusal.
        """
        return self.put_request(PutRequest(hconn, hobj, md, pmo.options, pmo.context, data, properties))

    def put_raw(self, hconn: int, hobj: int, raw: bytes, options: int, context: int, data: bytes) -> PutResult:
        """MQPUT with the descriptor still in its bytes (a plain one: StrucId and Version
        checked, all its bytes there)."""
        return self.put_request(PutRequest(hconn, hobj, raw, options, context, data))

    def put1(self, hconn: int, od: ObjectDescriptor, md: MQMD, pmo: PutOptions, data: bytes,
             properties: Mapping[str, object] | None = None) -> PutResult:
        """MQPUT1: open for output, put one message, close — as one call.

        Raises:
            MQError: any reason MQOPEN or MQPUT would give; nothing stays open.
        """
        return self.put_request(PutRequest(hconn, 0, md, pmo.options, pmo.context, data, properties, od))

    def put_each(self, hconn: int, hobj: int, pmo: PutOptions, items: Sequence[tuple[MQMD, bytes]],
                 start: int = 0) -> tuple[int, MQError | None]:
        """MQPUTs of ``items[start:]`` (descriptor, data) through one handle in order, each
        as ``put`` makes it, in one call (a receiving channel agent's batch); the first
        refusal stops them. How many were put, and that refusal (None: every one was)."""
        if self.monitor.on:  # each put counted as it is made
            for i in range(start, len(items)):
                try:
                    self.put(hconn, hobj, items[i][0], pmo, items[i][1])
                except MQError as exc:
                    return i - start, exc
            return len(items) - start, None
        done, refused = self.putter.put_each(hconn, hobj, pmo.options, items, start)
        if refused is not None and refused.reason in _PUT_EVENTS:
            md, data = items[start + done]
            self._put_refused(PutRequest(hconn, hobj, md, pmo.options, pmo.context, data), refused.reason)
        return done, refused

    def put_many(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions,
                 items: Sequence[tuple[bytes, bytes]]) -> list[MQError | None]:
        """Several MQPUTs on one handle that differ only in MsgId and data (asynchronous
        puts a client sent as one batch); see ``put_columns``."""
        return self.put_columns(hconn, hobj, md, pmo, [data for _, data in items], [m for m, _ in items])

    def put_columns(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions, datas: Sequence[bytes],
                    msg_ids: Sequence[bytes] | None = None,
                    correl_ids: Sequence[bytes] | None = None) -> list[MQError | None]:
        """Several MQPUTs on one handle whose descriptors are ``md`` but for each message's
        MsgId and CorrelId; one outcome per message (see PutRequest and PutResult.outcomes)."""
        outcomes = self.put_request(PutRequest(hconn, hobj, md, pmo.options, pmo.context, datas=datas,
                                               msg_ids=msg_ids, correl_ids=correl_ids)).outcomes
        assert outcomes is not None
        return outcomes

    def commit(self, hconn: int) -> None:
        """MQCMIT (engine.units)."""
        conn = self.state.conn(hconn)
        try:
            self.units.commit(conn)
        except MQError:
            self.monitor.unit(conn, True, False)
            raise
        self.monitor.unit(conn, True, True)

    def backout(self, hconn: int) -> None:
        """MQBACK (engine.units)."""
        conn = self.state.conn(hconn)
        self.units.backout(conn)
        self.monitor.unit(conn, False, True)

    def return_ahead(self, hconn: int, hobj: int, tokens: list[bytes]) -> None:
        """Gets read ahead on ``hobj`` (by MsgToken) back on its queue, out of the unit of
        work (engine.units).

        Raises:
            MQError: 2018/2019 for the connection or handle; 2331 as Units.return_ahead.
        """
        conn = self.state.conn(hconn)
        q = self.state.handle(conn, hobj).queue
        if q is None:
            raise failed(C.MQRC_HOBJ_ERROR, f"object handle {hobj} is not a queue's")
        self.units.return_ahead(conn, q, tokens)

    def prepare(self, hconn: int, xid: bytes) -> int:
        """Phase one of a global unit of work (engine.xa)."""
        return self.xa.prepare(self.state.conn(hconn), xid)

    def resolve(self, hconn: int, xid: bytes, commit: bool) -> bool:
        """Phase two by XID from any connection (engine.xa)."""
        return self.xa.resolve(self.state.conn(hconn), xid, commit)

    # -- inquire / set ---------------------------------------------------------------------
    def inquire(self, hconn: int, hobj: int, int_selectors: Sequence[int], char_selectors: Sequence[int]) -> InquireResult:
        """MQINQ: values in selector order; an inapplicable selector warns (2068).

        Raises:
            MQError: MQRC_NOT_OPEN_FOR_INQUIRE, MQRC_SELECTOR_ERROR for an unknown selector.
        """
        conn = self.state.conn(hconn)
        h = self.state.handle(conn, hobj)
        self.monitor.counted(conn, "inqs", C.MQOT_Q if h.queue is not None else C.MQOT_Q_MGR,
                             bool(h.options & C.MQOO_INQUIRE))
        if not h.options & C.MQOO_INQUIRE:
            raise failed(C.MQRC_NOT_OPEN_FOR_INQUIRE, f"{h.name} was not opened with MQOO_INQUIRE")
        obj = h.alias or h.queue
        topic = h.topic
        if topic is not None:  # a topic handle: the topic's attributes as they resolve at its string
            table = A.TOPIC_BY_SELECTOR
        else:
            table = A.QMGR_BY_SELECTOR if obj is None else A.QUEUE_BY_SELECTOR
        result = InquireResult()
        for sel in list(int_selectors) + list(char_selectors):
            ok_range = (C.MQIA_FIRST <= sel <= C.MQIA_LAST) if sel in int_selectors else (C.MQCA_FIRST <= sel <= C.MQCA_LAST)
            if not ok_range:
                raise failed(C.MQRC_SELECTOR_ERROR, f"selector {sel} is not an {'MQIA' if sel in int_selectors else 'MQCA'} value")

        def value_of(sel: int) -> int | str | None:
            attr = table.get(sel)
            if attr is None:
                return None
            if topic is not None:
                return self.topics.effective(topic, attr.name)
            if obj is None:
                return self.objects.qmgr_status(attr.name)
            return obj.status(attr.name) if obj.qtype in attr.types else None

        for sel in int_selectors:
            value = value_of(sel)
            if value is None:
                result.ints.append(C.MQIAV_NOT_APPLICABLE)
                result.comp, result.reason = C.MQCC_WARNING, C.MQRC_SELECTOR_NOT_FOR_TYPE
                continue
            result.ints.append(int(value))
        for sel in char_selectors:
            value = value_of(sel)
            if value is None:
                result.chars.append("")
                result.comp, result.reason = C.MQCC_WARNING, C.MQRC_SELECTOR_NOT_FOR_TYPE
                continue
            result.chars.append(str(value))
        return result

    def set(self, hconn: int, hobj: int, ints: Mapping[int, int], chars: Mapping[int, str]) -> None:
        """MQSET: only the attributes IBM lets MQSET change; all or nothing.

        Raises:
            MQError: MQRC_NOT_OPEN_FOR_SET, MQRC_SELECTOR_ERROR, and the value reasons (2020, 2075..2078).
        """
        conn = self.state.conn(hconn)
        h = self.state.handle(conn, hobj)
        self.monitor.counted(conn, "sets", C.MQOT_Q if h.queue is not None else C.MQOT_Q_MGR,
                             bool(h.options & C.MQOO_SET))
        if not h.options & C.MQOO_SET:
            raise failed(C.MQRC_NOT_OPEN_FOR_SET, f"{h.name} was not opened with MQOO_SET")
        obj = h.alias or h.queue
        if obj is None:
            raise failed(C.MQRC_SELECTOR_ERROR, "queue manager attributes are not settable with MQSET")
        changes: dict[str, int | str] = {}
        for sel, value in list(ints.items()) + list(chars.items()):
            attr = A.QUEUE_BY_SELECTOR.get(sel)
            if attr is None or not attr.settable or obj.qtype not in attr.types:
                raise failed(C.MQRC_SELECTOR_ERROR, f"selector {sel} is not settable on {obj.qtype} {obj.name}")
            try:
                changes[attr.name] = attr.check(value)
            except MQError as exc:
                raise failed(_SET_REASON.get(attr.name, C.MQRC_INHIBIT_VALUE_ERROR), exc.detail) from None
        self.objects.alter(obj.name, changes)
        self.altered(obj, changes)
        self.state.channel_control.changed()  # TRIGGER: whether a transmission queue is polled

    def altered(self, obj: QueueObject, changes: Mapping[str, object]) -> None:
        """After ALTER, a PCF change or MQSET of a queue: waiting gets see GET(ENABLED); TRIGGER
        set on triggers a queue whose messages already meet the conditions (IBM)."""
        if changes.get("GET") in (C.MQQA_GET_ALLOWED, "ENABLED") and obj.is_local:
            self.wake(obj)
        if changes.get("TRIGGER") in (C.MQTC_ON, "TRIGGER"):
            self.triggers.check_waiting(obj)

    # -- housekeeping ----------------------------------------------------------------------
    def tick(self) -> None:
        """Periodic work: discard expired messages so they stop counting in CURDEPTH, and
        remove expired subscriptions."""
        now = self.clock.now()
        self.monitor.tick(now)
        if self.subscriptions.expiring:
            self.subscriber.expire(now)
        for q in list(self.objects.queues.values()):
            if not q.is_local or not len(q.messages):
                continue
            dead = []
            for m in q.messages.due(now):
                if m.locked_by:  # a browse lock holds it on the queue; looked at again next time
                    q.messages.recheck(m)
                else:
                    dead.append(m)
            for m in dead:
                self.getter.discard_expired(q, m)
            if any(m.record_id == 0 and m.persistent for m in dead):
                self.staging.need_sync()
        self.pager.settle()

    def quiesce(self) -> None:
        """Begin ending: FAIL_IF_QUIESCING callers and waits get MQRC_Q_MGR_QUIESCING."""
        self.state.quiescing = True
        self.objects.epoch += 1  # puts planned with MQPMO_FAIL_IF_QUIESCING now fail (engine.putplan)
        self.waits.quiesce(self.name)
