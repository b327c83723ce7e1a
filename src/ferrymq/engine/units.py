"""Units of work: MQCMIT, MQBACK, and what a backout does with a message read too often.

Owns each connection's open unit (made by its first put or get under syncpoint,
``uow_of``) and its end: at commit the puts become visible (with their confirmations of
arrival) and the gets final; at backout the puts vanish and the gets return with their
BackoutCount raised, or move to BOQNAME or the dead-letter queue once it reaches
BOTHRESH. Units prepared under an XID (engine.xa) end through ``commit_unit`` and
``backout_unit`` too.
"""

from __future__ import annotations

import logging

from ferrymq.engine import propctl
from ferrymq.engine.deadletter import dead_letter
from ferrymq.engine.message import KIND_MESSAGE, Message
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.reports import Reports
from ferrymq.engine.session import Connection, UnitOfWork
from ferrymq.engine.state import EngineState
from ferrymq.engine.waits import Waits
from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

_COA = C.MQRO_COA

log = logging.getLogger("ferrymq.engine")


class Units:
    """The units of work of one queue manager's connections (see the module docstring)."""

    def __init__(self, state: EngineState, waits: Waits, reports: Reports) -> None:
        self.state = state
        self.name, self.clock, self.objects, self.journal = state.name, state.clock, state.objects, state.journal
        self.staging, self.pager = state.staging, state.pager
        self.new_txid = state.staging.new_txid
        self.wake = waits.wake
        self.reports = reports

    def uow_of(self, conn: Connection) -> UnitOfWork:
        """The connection's open unit of work, begun now if it has none."""
        if conn.uow is None:
            conn.uow = UnitOfWork(self.new_txid())
        return conn.uow

    def join_get(self, conn: Connection, q: QueueObject, msg: Message, ahead: bool = False) -> UnitOfWork:
        """A destructive get of ``msg`` (out of ``q``'s index) joins the connection's unit
        of work: it counts in the depth, and its record's delete is staged in the unit's
        transaction when the unit settles (``settle``), with the unit's other gets. Until
        then a get read ahead (``ahead``) may be undone by ``return_ahead``."""
        uow = self.uow_of(conn)
        uow.gets.append((q, msg))
        q.messages.uncommitted += 1
        if ahead:
            uow.ahead[(q.name, msg.seq)] = (q, msg)
        elif msg.record_id:
            uow.drops.append(msg)
        return uow

    def settle(self, uow: UnitOfWork) -> None:
        """Stage the deletes of the unit's gets in its transaction, in one journal call,
        before it commits or is prepared (a backout needs none: the records stay); gets
        read ahead become ordinary ones."""
        drops = uow.drops
        drops += [msg for _, msg in uow.ahead.values() if msg.record_id]
        uow.ahead.clear()
        if drops:
            self.staging.drop_messages(drops, uow.txid)
            uow.journaled = True
            drops.clear()

    def return_ahead(self, conn: Connection, q: QueueObject, tokens: list[bytes]) -> None:
        """Gets read ahead from ``q`` (named by MsgToken) leave the connection's unit of
        work: each message is back where it was, BackoutCount unchanged, as if never got.

        Raises:
            MQError: 2331 (MQRC_MSG_TOKEN_ERROR) when one is not a get read ahead from ``q``
                in the open unit, or is named twice; nothing is returned then.
        """
        uow = conn.uow
        ahead = {} if uow is None else uow.ahead
        keys = [(q.name, int.from_bytes(t[:8], "big")) for t in tokens]
        for key, token in zip(keys, tokens, strict=True):
            got = ahead.get(key)
            if got is None or got[1].token != token:
                raise failed(C.MQRC_MSG_TOKEN_ERROR, f"MsgToken {token.hex()} is not a get read ahead from {q.name} "
                                                     "in this unit of work")
        if len(set(keys)) != len(keys):
            raise failed(C.MQRC_MSG_TOKEN_ERROR, "a MsgToken is named twice")
        assert uow is not None
        returned = [ahead.pop(key)[1] for key in keys]
        back = {id(m) for m in returned}
        uow.gets = [(gq, m) for gq, m in uow.gets if id(m) not in back]
        messages = q.messages
        messages.uncommitted -= len(returned)
        q.dequeued -= len(returned)
        for msg in returned:
            messages.insert(msg)  # its key (priority, sequence) is its old place
        self.wake(q)

    def commit(self, conn: Connection) -> None:
        """MQCMIT: puts become visible, gets become final; durable before the reply."""
        uow, conn.uow = conn.uow, None
        if uow is not None:
            self.commit_unit(uow)

    def commit_unit(self, uow: UnitOfWork) -> None:
        """End ``uow`` (a connection's, or one prepared) with its changes made final."""
        if uow.ahead or uow.drops:
            self.settle(uow)
        if uow.journaled:
            self.journal.commit(uow.txid)
            self.staging.need_sync()
        woken: dict[str, QueueObject] = {}
        arrived: list[Message] = []
        last: QueueObject | None = None
        for q, msg in uow.puts:
            if q is not last:  # a unit's puts come in runs per queue (a channel's batch)
                last, messages, fifo = q, q.messages, q.fifo
                woken[q.name] = q
            messages.uncommitted -= 1
            msg.reposition(fifo)
            messages.insert(msg)
            if msg.report & _COA:
                arrived.append(msg)
        final: list[Message] = []
        for q, msg in uow.gets:
            q.messages.uncommitted -= 1
            if msg.record_id:
                final.append(msg)
                msg.record_id = 0
        if final:
            self.staging.all_dropped(final)
        for q in woken.values():
            self.wake(q)
        if woken:
            self.pager.settle()
        for msg in arrived:  # arrival is confirmed when the put becomes visible
            self.reports.report_arrival(msg)
        for action in uow.after_commit:
            action()

    def backout(self, conn: Connection) -> None:
        """MQBACK: puts vanish; gotten messages return with BackoutCount + 1, or move to
        BOQNAME / the dead-letter queue once BackoutCount reaches BOTHRESH."""
        uow, conn.uow = conn.uow, None
        if uow is not None:
            self.backout_unit(conn, uow)

    def backout_unit(self, conn: Connection, uow: UnitOfWork) -> None:
        """End ``uow`` with its changes undone; a get marked skip-backout stays, in a new
        unit of work of ``conn``."""
        if uow.journaled:
            self.journal.rollback(uow.txid)
            self.staging.need_sync()
        staging = self.staging
        for q, msg in uow.puts:
            q.messages.uncommitted -= 1
            if msg.record_id and msg.data_record:
                staging.release(msg)  # its data record's add is undone with it
            msg.record_id = 0
        woken: dict[str, QueueObject] = {}
        for q, msg in uow.gets:
            q.messages.uncommitted -= 1
            if msg is uow.marked_skip:
                continue
            msg.md = msg.md.replace(backout_count=msg.md.backout_count + 1)
            if msg.record_id:
                self.journal.update(msg.record_id, KIND_MESSAGE, msg.encode())
                self.staging.need_sync()
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
        for action in uow.after_backout:
            action()

    def _keep_skipped(self, conn: Connection, old: UnitOfWork) -> None:
        """MQGMO_MARK_SKIP_BACKOUT: that get survives the backout in a new unit of work."""
        msg = old.marked_skip
        assert msg is not None
        self.join_get(conn, next(q for q, m in old.gets if m is msg), msg)

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
            state = self.state
            target = state.dead_letter_queue()
            date, tod = state.stamp_put(now)
            md, data = dead_letter(self.name, state.qmgr_attr("CCSID"), msg.md, msg.data, reason, q.name, date, tod)
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
        staging = self.staging
        moved = Message(target.name, staging.next_sequence(target), md, data, msg.put_at, target.fifo)
        moved.properties, moved.v6 = props, v6
        txid = self.new_txid()
        if msg.record_id:
            staging.drop_message(msg, txid)
        if moved.persistent:
            staging.journal_message(moved, txid)
        self.journal.commit(txid)
        if msg.record_id:
            staging.dropped(msg)
        staging.need_sync()
        target.messages.insert(moved)
        log.info("event=poison_message_moved queue=%s to=%s backout_count=%d reason=%d", q.name, target.name,
                 msg.md.backout_count, reason)
        self.wake(target)
        if reason:  # it could not be delivered where it was sent: an exception report if asked
            self.reports.report_exception(msg, reason)
        return True

    def _discard_poison(self, q: QueueObject, msg: Message, reason: int) -> None:
        if msg.record_id:
            self.staging.drop_message(msg)
            msg.record_id = 0
        self.staging.need_sync()
        log.info("event=poison_message_discarded queue=%s backout_count=%d reason=%d", q.name, msg.md.backout_count,
                 reason)
        self.reports.report_exception(msg, reason)

    def _can_take(self, q: QueueObject | None, md: MQMD, data: bytes) -> bool:
        return (q is not None and q.is_local and q["PUT"] == C.MQQA_PUT_ALLOWED
                and q.messages.depth < int(q["MAXDEPTH"]) and len(data) <= int(q["MAXMSGL"])
                and not (md.persistence == C.MQPER_PERSISTENT and q.temporary))
