"""The queue manager: connections, open/close, units of work, inquire/set, recovery.

Build one with QueueManager.start(name, journal, clock). Every method is synchronous
and atomic; after each call a driver reads take_sync_lsn() (wait for the journal before
replying) and take_deliveries() (answers for waiting gets).
"""

from __future__ import annotations

import gc
import json
import logging
from collections.abc import Mapping, Sequence

from ferrymq.engine import attrs as A
from ferrymq.engine import propctl, sequence_access, validate, xa
from ferrymq.engine.api import Clock, Delivery, InquireResult, ObjectDescriptor, OpenResult, PutOptions, PutResult
from ferrymq.engine.deadletter import dead_letter
from ferrymq.engine.message import KIND_MESSAGE, Message
from ferrymq.engine.messaging import Messaging
from ferrymq.engine.objects import KIND_OBJECT, KIND_QMGR, KIND_SEQUENCE, SYSTEM_QUEUES, QueueObject, decode_object
from ferrymq.engine.paging import MemoryLimits
from ferrymq.engine.selection import SelectionView, selector_for_open
from ferrymq.engine.selector import Selector
from ferrymq.engine.session import Connection, Handle, UnitOfWork
from ferrymq.errors import DecodeError, MQError, failed
from ferrymq.mq import constants as C
from ferrymq.store.journal import Journal, LoadResult
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqod_names import check_od_names

log = logging.getLogger("ferrymq.engine")

_INPUT = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE
_QMGR_OPEN_OK = C.MQOO_INQUIRE | C.MQOO_FAIL_IF_QUIESCING | C.MQOO_ALTERNATE_USER_AUTHORITY
_SET_REASON = {"PUT": C.MQRC_INHIBIT_VALUE_ERROR, "GET": C.MQRC_INHIBIT_VALUE_ERROR,
               "DISTL": C.MQRC_INHIBIT_VALUE_ERROR, "TRIGGER": C.MQRC_TRIGGER_CONTROL_ERROR,
               "TRIGTYPE": C.MQRC_TRIGGER_TYPE_ERROR, "TRIGDPTH": C.MQRC_TRIGGER_DEPTH_ERROR,
               "TRIGMPRI": C.MQRC_TRIGGER_MSG_PRIORITY_ERR, "TRIGDATA": C.MQRC_CHAR_ATTR_LENGTH_ERROR}


class QueueManager(Messaging):
    """One queue manager's engine (see the module docstring)."""

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
        if not qm.objects.qmgr_record_id:
            qm._persist_qmgr()
        for qname, qtype, overrides in SYSTEM_QUEUES:
            if qm.objects.find(qname) is None:
                qm.objects.define(qtype, qname, overrides)
        qm.take_sync_lsn()
        journal.sync()
        return qm

    # -- recovery --------------------------------------------------------------------------
    def recover(self, loaded: LoadResult) -> None:
        messages: list[Message] = []
        reserved: dict[str, tuple[int, int]] = {}
        fifo_of: dict[str, bool] = {}
        now = self.clock.now()
        for rec in loaded.records:
            self._next_record = max(self._next_record, rec.record_id + 1)
            if rec.kind == KIND_QMGR:
                self.objects.load_qmgr(rec.payload)
                self.objects.qmgr_record_id = rec.record_id
            elif rec.kind == KIND_OBJECT:
                obj = decode_object(rec.payload, now, self.objects.meter)
                obj.record_id = rec.record_id
                self.objects.queues[obj.name] = obj
                fifo_of[obj.name] = obj.fifo
            elif rec.kind == KIND_SEQUENCE:
                doc = json.loads(rec.payload)
                reserved[doc["queue"]] = (int(doc["reserved"]), rec.record_id)
            elif rec.kind == sequence_access.KIND_READER:
                sequence_access.load_reader(self, rec)
            elif rec.kind == KIND_MESSAGE:
                try:
                    msg = self.pager.recover(rec, fifo_of)
                except DecodeError as exc:
                    # Passed its checksum yet unreadable: never delivered, left in the journal
                    # for an operator, and the rest of the queue manager still starts.
                    log.error("event=unreadable_message record_id=%d error=%s", rec.record_id, exc)
                    continue
                messages.append(msg)
        by_queue: dict[str, list[Message]] = {}
        last_id = self._last_id
        for msg in messages:
            by_queue.setdefault(msg.queue, []).append(msg)
            tail = int.from_bytes(msg.msg_id[16:], "big")
            if tail > last_id:
                last_id = tail
        self._last_id = last_id
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
        xa.restore(self, loaded.prepared)
        self._next_txid = max([self._next_txid] + [tx.txid + 1 for tx in loaded.prepared])
        if loaded.torn_bytes or loaded.bad_records:
            log.warning("event=journal_damage torn_bytes=%d bad_records=%d", loaded.torn_bytes, loaded.bad_records)

    # -- connections -----------------------------------------------------------------------
    def connect(self, *, appl_name: str = "", user: str = "", appl_type: int = C.MQAT_DEFAULT) -> int:
        """MQCONN: a new connection handle.

        Raises:
            MQError: MQRC_Q_MGR_QUIESCING while the queue manager is ending.
        """
        if self.quiescing:
            raise failed(C.MQRC_Q_MGR_QUIESCING, f"queue manager {self.name} is quiescing")
        hconn = self._next_hconn
        self._next_hconn += 1
        self.connections[hconn] = Connection(hconn, appl_name, user, appl_type)
        return hconn

    def disconnect(self, hconn: int, *, commit: bool = True) -> None:
        """MQDISC: closes the connection's handles; an open unit of work is committed (as IBM
        does on a normal MQDISC) or backed out (``commit=False``: the connection was lost)."""
        conn = self.conn(hconn)
        if conn.uow is not None:
            if commit:
                try:
                    self.commit(hconn)
                except MQError:
                    self.backout(hconn)
            else:
                self.backout(hconn)
        for wid in list(conn.waiters):
            self.end_wait(wid)
        for hobj in list(conn.handles):
            self.close(hconn, hobj)
        del self.connections[hconn]

    # -- open / close ----------------------------------------------------------------------
    def open(self, hconn: int, od: ObjectDescriptor, options: int) -> OpenResult:
        """MQOPEN a queue (local, alias or model) or the queue manager object.

        Raises:
            MQError: 2046, 2043, 2045, 2085, 2086, 2035, 2082, 2001, 2087, 2042, 2161, 2011, 2100 ...;
                for a SelectionString 2516, 2519, 2459, 2504 (see engine.selection).
        """
        conn = self.conn(hconn)
        validate.open_options(options)
        check_od_names(od.object_name, od.object_q_mgr_name, od.alternate_user_id, options)
        selector = selector_for_open(od.selection_string, od.object_type, options)
        self.check_quiescing(options, C.MQOO_FAIL_IF_QUIESCING)
        if len(conn.handles) >= self.qmgr_attr("MAXHANDS"):
            raise failed(C.MQRC_HANDLE_NOT_AVAILABLE, f"connection holds MAXHANDS({self.qmgr_attr('MAXHANDS')}) handles")
        if od.object_type == C.MQOT_Q_MGR:
            if od.object_name.strip() not in ("", self.name):
                raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"{od.object_name.strip()} is not this queue manager")
            if options & ~_QMGR_OPEN_OK:
                raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, "the queue manager object opens for MQOO_INQUIRE only")
            return self._new_handle(conn, options, self.name, None, None, 0)
        if od.object_type != C.MQOT_Q:
            raise failed(C.MQRC_OBJECT_TYPE_ERROR, f"ObjectType {od.object_type} is not MQOT_Q or MQOT_Q_MGR")
        if od.object_q_mgr_name.strip() not in ("", self.name):
            raise failed(C.MQRC_UNKNOWN_REMOTE_Q_MGR, f"no route to queue manager {od.object_q_mgr_name.strip()}")
        if not od.object_name.strip():
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, "ObjectName is blank")
        obj = self.objects.require(od.object_name)
        alias: QueueObject | None = None
        if obj.qtype == A.QALIAS:
            alias = obj
            target = self.objects.find(str(obj["TARGET"]))
            if target is None:
                raise failed(C.MQRC_UNKNOWN_ALIAS_BASE_Q, f"alias {obj.name} targets {obj['TARGET']!r}, which is not defined")
            if not target.is_local:
                raise failed(C.MQRC_ALIAS_BASE_Q_TYPE_ERROR, f"alias {obj.name} targets {target.qtype} {target.name}")
            obj = target
        input_mode = 0
        if options & _INPUT:
            input_mode = self._input_mode(obj, options)
        if obj.qtype == A.QMODEL:
            name = self.dynamic_name(od.dynamic_q_name)
            if self.objects.find(name) is not None:
                raise failed(C.MQRC_OBJECT_ALREADY_EXISTS, f"dynamic queue {name} already exists")
            attrs = {k: v for k, v in obj.attrs.items() if k != "DEFTYPE"}
            deftype = int(obj["DEFTYPE"])
            obj = self.objects.define(A.QLOCAL, name, {}, like=None, deftype=deftype)
            self.objects.queues[name].attrs.update(attrs)
            self.objects.epoch += 1
            if not obj.temporary:
                self._persist_object(obj)
            input_mode = self._input_mode(obj, options) if options & _INPUT else 0
            opened = self._new_handle(conn, options, obj.name, obj, None, input_mode, selector)
            obj.owner_hobj = opened.hobj
            return opened
        return self._new_handle(conn, options, alias.name if alias else obj.name, obj, alias, input_mode, selector)

    def _input_mode(self, q: QueueObject, options: int) -> int:
        mode = options & (C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE) or int(q["DEFSOPT"])
        if q["SHARE"] == C.MQQA_NOT_SHAREABLE:
            mode = C.MQOO_INPUT_EXCLUSIVE  # IBM: shared requests on a NOSHARE queue are exclusive
        if q.input_count and (mode == C.MQOO_INPUT_EXCLUSIVE or q.exclusive):
            raise failed(C.MQRC_OBJECT_IN_USE, f"{q.name} is open for {'exclusive ' if q.exclusive else ''}input by another handle")
        return mode

    def _new_handle(self, conn: Connection, options: int, name: str, q: QueueObject | None,
                    alias: QueueObject | None, input_mode: int, selector: Selector | None = None) -> OpenResult:
        hobj = self._next_hobj
        self._next_hobj += 1
        h = Handle(hobj, conn.hconn, options, name, q, alias, input_mode)
        if selector is not None and q is not None:
            h.selection = SelectionView(selector, q.messages)
            q.messages.watchers.append(h.selection)
        conn.handles[hobj] = h
        self.handles[hobj] = h
        if q is not None:
            q.handles.add(hobj)
            if input_mode:
                q.input_count += 1
                q.exclusive = input_mode == C.MQOO_INPUT_EXCLUSIVE
            if options & C.MQOO_OUTPUT:
                q.output_count += 1
        resolved = q.name if q is not None else ""
        return OpenResult(hobj, q.name if q is not None and alias is None else name, resolved, self.name)

    def close(self, hconn: int, hobj: int, options: int = C.MQCO_NONE) -> None:
        """MQCLOSE; MQCO_DELETE / DELETE_PURGE delete a permanent dynamic queue.

        Raises:
            MQError: 2046 bad options, 2045 delete of a predefined queue, 2055 not empty, 2042 in use.
        """
        conn = self.conn(hconn)
        h = conn.handles.get(hobj)
        if h is None:
            raise failed(C.MQRC_HOBJ_ERROR, f"object handle {hobj} is not open on this connection")
        if options & ~(C.MQCO_DELETE | C.MQCO_DELETE_PURGE | C.MQCO_KEEP_SUB | C.MQCO_REMOVE_SUB | C.MQCO_QUIESCE) \
                or (options & C.MQCO_DELETE and options & C.MQCO_DELETE_PURGE):
            raise failed(C.MQRC_OPTIONS_ERROR, f"MQCLOSE options 0x{options:08X} are not valid")
        q = h.queue
        delete = False
        if options & (C.MQCO_DELETE | C.MQCO_DELETE_PURGE) and not h.deleted:
            if q is None or h.alias is not None or q.deftype == C.MQQDT_PREDEFINED:
                raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, f"{h.name} is not a dynamic queue; MQCO_DELETE refused")
            if q.messages.uncommitted or (len(q.messages) and not options & C.MQCO_DELETE_PURGE):
                raise failed(C.MQRC_Q_NOT_EMPTY, f"{q.name} holds {q.messages.depth} messages")
            if len(q.handles) > 1:
                raise failed(C.MQRC_OBJECT_IN_USE, f"{q.name} is open by {len(q.handles) - 1} other handles")
            delete = True
        if q is not None and not h.deleted and q.temporary and q.owner_hobj == hobj:
            delete = True  # a temporary dynamic queue ends when the handle that created it closes
        self._release(conn, h)
        if delete and q is not None and self.objects.find(q.name) is q:
            self._drop_queue(q)

    def _release(self, conn: Connection, h: Handle) -> None:
        for wid in [w.waiter_id for w in self.waiters.values() if w.hobj == h.hobj]:
            self.end_wait(wid)
        del conn.handles[h.hobj]
        self.handles.pop(h.hobj, None)
        q = h.queue
        if q is None or h.deleted:
            return
        if h.locked is not None:
            h.locked.locked_by = 0
            h.locked = None
            self.wake(q)
        if h.selection is not None:
            q.messages.watchers.remove(h.selection)
        q.handles.discard(h.hobj)
        if h.input_mode:
            q.input_count -= 1
            if not q.input_count:
                q.exclusive = False
        if h.options & C.MQOO_OUTPUT:
            q.output_count -= 1

    def _drop_queue(self, q: QueueObject) -> None:
        """Delete a dynamic queue and its messages; other handles on it see MQRC_Q_DELETED."""
        for hobj in list(q.handles):
            other = self.handles.get(hobj)
            if other is not None:
                other.deleted = True
        q.handles.clear()
        for conn in self.connections.values():
            if conn.uow is not None:
                conn.uow.puts = [(uq, m) for uq, m in conn.uow.puts if uq is not q]
                conn.uow.gets = [(uq, m) for uq, m in conn.uow.gets if uq is not q]
        q.messages.uncommitted = 0
        self.objects.queues.pop(q.name, None)
        if not q.temporary:
            self._unpersist_object(q)

    # -- put1 ------------------------------------------------------------------------------
    def put1(self, hconn: int, od: ObjectDescriptor, md: MQMD, pmo: PutOptions, data: bytes,
             properties: Mapping[str, object] | None = None) -> PutResult:
        """MQPUT1: open for output, put one message, close — as one call.

        Raises:
            MQError: any reason MQOPEN or MQPUT would give; nothing stays open.
        """
        ctx = pmo.options & (C.MQPMO_PASS_IDENTITY_CONTEXT | C.MQPMO_PASS_ALL_CONTEXT | C.MQPMO_SET_IDENTITY_CONTEXT
                             | C.MQPMO_SET_ALL_CONTEXT)
        oo = C.MQOO_OUTPUT | {C.MQPMO_PASS_IDENTITY_CONTEXT: C.MQOO_PASS_IDENTITY_CONTEXT,
                              C.MQPMO_PASS_ALL_CONTEXT: C.MQOO_PASS_ALL_CONTEXT,
                              C.MQPMO_SET_IDENTITY_CONTEXT: C.MQOO_SET_IDENTITY_CONTEXT,
                              C.MQPMO_SET_ALL_CONTEXT: C.MQOO_SET_ALL_CONTEXT}.get(ctx, 0)
        validate.put_options(pmo.options)
        validate.descriptor_for_put(md)
        oo |= pmo.options & C.MQPMO_FAIL_IF_QUIESCING and C.MQOO_FAIL_IF_QUIESCING
        oo |= pmo.options & C.MQPMO_ALTERNATE_USER_AUTHORITY and C.MQOO_ALTERNATE_USER_AUTHORITY
        opened = self.open(hconn, od, oo)
        try:  # MQPUT's path without its plan, which this handle would not live to use
            conn, h, warning = self._check_put(hconn, opened.hobj, md, pmo)
            return self.place(conn, h, md, pmo, data, warning, properties)
        finally:
            self.close(hconn, opened.hobj)

    # -- units of work ---------------------------------------------------------------------
    def commit(self, hconn: int) -> None:
        """MQCMIT: puts become visible, gets become final; durable before the reply."""
        conn = self.conn(hconn)
        uow, conn.uow = conn.uow, None
        if uow is None:
            return
        if uow.journaled:
            self.journal.commit(uow.txid)
            self.need_sync()
        woken: dict[str, QueueObject] = {}
        for q, msg in uow.puts:
            q.messages.uncommitted -= 1
            msg.reposition(q.fifo)
            q.messages.insert(msg)
            woken[q.name] = q
        for q, msg in uow.gets:
            q.messages.uncommitted -= 1
            msg.record_id = 0
        for q in woken.values():
            self.wake(q)
        if woken:
            self.pager.settle()
        for _, msg in uow.puts:  # arrival is confirmed when the put becomes visible
            if msg.report & C.MQRO_COA:
                self.report_arrival(msg)

    def backout(self, hconn: int) -> None:
        """MQBACK: puts vanish; gotten messages return with BackoutCount + 1, or move to
        BOQNAME / the dead-letter queue once BackoutCount reaches BOTHRESH."""
        conn = self.conn(hconn)
        uow, conn.uow = conn.uow, None
        if uow is None:
            return
        if uow.journaled:
            self.journal.rollback(uow.txid)
            self.need_sync()
        for q, msg in uow.puts:
            q.messages.uncommitted -= 1
            msg.record_id = 0
        woken: dict[str, QueueObject] = {}
        for q, msg in uow.gets:
            q.messages.uncommitted -= 1
            if msg is uow.marked_skip:
                continue
            msg.md = msg.md.replace(backout_count=msg.md.backout_count + 1)
            if msg.record_id:
                self.journal.update(msg.record_id, KIND_MESSAGE, msg.encode())
                self.need_sync()
            threshold = int(q.attrs.get("BOTHRESH", 0))
            if threshold and msg.md.backout_count >= threshold and self._requeue_poison(q, msg):
                continue
            msg.reposition(q.fifo)
            q.messages.insert(msg)
            woken[q.name] = q
        if uow.marked_skip is not None:
            self._keep_skipped(conn, uow)
        for q in woken.values():
            self.wake(q)

    def _keep_skipped(self, conn: Connection, old: UnitOfWork) -> None:
        """MQGMO_MARK_SKIP_BACKOUT: that get survives the backout in a new unit of work."""
        msg = old.marked_skip
        assert msg is not None
        q = next(q for q, m in old.gets if m is msg)
        uow = self.uow_of(conn)
        uow.gets.append((q, msg))
        q.messages.uncommitted += 1
        if msg.record_id:
            self.journal.delete(msg.record_id, uow.txid)
            uow.journaled = True

    def _requeue_poison(self, q: QueueObject, msg: Message) -> bool:
        """Move a message that reached BOTHRESH to BOQNAME, else to the DLQ behind an MQDLH,
        in one journal transaction. False (it stays) when neither can take it."""
        now = self.clock.now()
        target = self.objects.find(str(q.attrs.get("BOQNAME", "")))
        md, data, reason = msg.md, msg.data, 0
        if not self._can_take(target, md, data):
            reason = C.MQRC_BACKOUT_THRESHOLD_REACHED
            if md.report & C.MQRO_DISCARD_MSG:  # the putter asked for discard rather than the DLQ
                self._discard_poison(q, msg, reason)
                return True
            target = self.dead_letter_queue()
            date, tod = self.stamp_put(now)
            md, data = dead_letter(self.name, self.qmgr_attr("CCSID"), msg.md, msg.data, reason, q.name, date, tod)
            if not self._can_take(target, md, data):
                log.warning("event=poison_message_kept queue=%s seq=%d backout_count=%d", q.name, msg.seq, msg.md.backout_count)
                return False
        assert target is not None
        props, v6 = msg.properties, msg.v6
        if v6 and (reason or target["PROPCTL"] != C.MQPROP_V6COMPAT):
            # V6COMPAT holds only while every queue the message crosses has it. Behind an
            # MQDLH the putter's MQRFH2 is dead-letter data, read by nobody as properties.
            v6 = False
            if not reason:
                md, data, props = propctl.leave_v6(md, data, props)
        moved = Message(target.name, self.next_sequence(target), md, data, msg.put_at, target.fifo)
        moved.properties, moved.v6 = props, v6
        txid = self.new_txid()
        if msg.record_id:
            self.journal.delete(msg.record_id, txid)
        if moved.persistent:
            self.journal_message(moved, txid)
        self.journal.commit(txid)
        self.need_sync()
        target.messages.insert(moved)
        log.info("event=poison_message_moved queue=%s to=%s backout_count=%d reason=%d", q.name, target.name,
                 msg.md.backout_count, reason)
        self.wake(target)
        if reason:  # it could not be delivered where it was sent: an exception report if asked
            self.report_exception(msg, reason)
        return True

    def _discard_poison(self, q: QueueObject, msg: Message, reason: int) -> None:
        if msg.record_id:
            self.journal.delete(msg.record_id)
            msg.record_id = 0
        self.need_sync()
        log.info("event=poison_message_discarded queue=%s backout_count=%d reason=%d", q.name, msg.md.backout_count,
                 reason)
        self.report_exception(msg, reason)

    def _can_take(self, q: QueueObject | None, md: MQMD, data: bytes) -> bool:
        return (q is not None and q.is_local and q["PUT"] == C.MQQA_PUT_ALLOWED
                and q.messages.depth < int(q["MAXDEPTH"]) and len(data) <= int(q["MAXMSGL"])
                and not (md.persistence == C.MQPER_PERSISTENT and q.temporary))

    # -- inquire / set ---------------------------------------------------------------------
    def inquire(self, hconn: int, hobj: int, int_selectors: Sequence[int], char_selectors: Sequence[int]) -> InquireResult:
        """MQINQ: values in selector order; an inapplicable selector warns (2068).

        Raises:
            MQError: MQRC_NOT_OPEN_FOR_INQUIRE, MQRC_SELECTOR_ERROR for an unknown selector.
        """
        conn = self.conn(hconn)
        h = self.handle(conn, hobj)
        if not h.options & C.MQOO_INQUIRE:
            raise failed(C.MQRC_NOT_OPEN_FOR_INQUIRE, f"{h.name} was not opened with MQOO_INQUIRE")
        obj = h.alias or h.queue
        table = A.QMGR_BY_SELECTOR if obj is None else A.QUEUE_BY_SELECTOR
        result = InquireResult()
        for sel in list(int_selectors) + list(char_selectors):
            ok_range = (C.MQIA_FIRST <= sel <= C.MQIA_LAST) if sel in int_selectors else (C.MQCA_FIRST <= sel <= C.MQCA_LAST)
            if not ok_range:
                raise failed(C.MQRC_SELECTOR_ERROR, f"selector {sel} is not an {'MQIA' if sel in int_selectors else 'MQCA'} value")
        for sel in int_selectors:
            attr = table.get(sel)
            if attr is None or (obj is not None and obj.qtype not in attr.types):
                result.ints.append(C.MQIAV_NOT_APPLICABLE)
                result.comp, result.reason = C.MQCC_WARNING, C.MQRC_SELECTOR_NOT_FOR_TYPE
                continue
            value = self.objects.qmgr_status(attr.name) if obj is None else obj.status(attr.name)
            result.ints.append(int(value))
        for sel in char_selectors:
            attr = table.get(sel)
            if attr is None or (obj is not None and obj.qtype not in attr.types):
                result.chars.append("")
                result.comp, result.reason = C.MQCC_WARNING, C.MQRC_SELECTOR_NOT_FOR_TYPE
                continue
            value = self.objects.qmgr_status(attr.name) if obj is None else obj.status(attr.name)
            result.chars.append(str(value))
        return result

    def set(self, hconn: int, hobj: int, ints: Mapping[int, int], chars: Mapping[int, str]) -> None:
        """MQSET: only the attributes IBM lets MQSET change; all or nothing.

        Raises:
            MQError: MQRC_NOT_OPEN_FOR_SET, MQRC_SELECTOR_ERROR, and the value reasons (2020, 2075..2078).
        """
        conn = self.conn(hconn)
        h = self.handle(conn, hobj)
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
        if changes.get("GET") == C.MQQA_GET_ALLOWED and obj.is_local:
            self.wake(obj)

    # -- housekeeping ----------------------------------------------------------------------
    def tick(self) -> None:
        """Periodic work: discard expired messages so they stop counting in CURDEPTH."""
        now = self.clock.now()
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
                self.discard_expired(q, m)
            if any(m.record_id == 0 and m.persistent for m in dead):
                self.need_sync()
        self.pager.settle()

    def quiesce(self) -> None:
        """Begin ending: FAIL_IF_QUIESCING callers and waits get MQRC_Q_MGR_QUIESCING."""
        self.quiescing = True
        self.objects.epoch += 1  # puts planned with MQPMO_FAIL_IF_QUIESCING now fail (engine.putplan)
        for wid, w in list(self.waiters.items()):
            if w.gmo.options & C.MQGMO_FAIL_IF_QUIESCING:
                self.end_wait(wid)
                self.deliveries.append(Delivery(wid, None, failed(C.MQRC_Q_MGR_QUIESCING, f"queue manager {self.name} is quiescing")))
