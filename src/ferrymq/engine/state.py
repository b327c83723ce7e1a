"""The engine's shared state and the bookkeeping every MQI verb needs.

QueueManager is built in layers of mixins over this state (messaging, then the MQI
verbs), so each module stays small; all of them share one set of fields declared here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from ferrymq.engine import attrs as A
from ferrymq.engine.api import Clock, Delivery, GetOptions
from ferrymq.engine.message import KIND_MESSAGE, Message
from ferrymq.engine.objects import KIND_OBJECT, KIND_QMGR, KIND_SEQUENCE, SEQUENCE_BLOCK, ObjectRegistry, QueueObject
from ferrymq.engine.paging import MemoryLimits, Pager
from ferrymq.engine.sequence_access import ReaderPosition
from ferrymq.engine.session import Connection, Handle, UnitOfWork
from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.store.journal import Journal
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqod_names import check_dynamic_q_name

_HUNDREDTHS = tuple(f"{n:02d}" for n in range(100))  # PutTime's last two digits, made once


@dataclass(slots=True)
class Waiter:
    """A get that is waiting for a message (MQGMO_WAIT)."""

    waiter_id: int
    hconn: int
    hobj: int
    md: MQMD
    gmo: GetOptions
    buffer_length: int
    queue: str


class EngineState:
    """Fields and helpers shared by the engine's mixins."""

    def __init__(self, name: str, journal: Journal, clock: Clock, limits: MemoryLimits | None = None) -> None:
        self.name = name
        self.journal = journal
        self.clock = clock
        self.pager = Pager(journal, limits or MemoryLimits())
        self.objects = ObjectRegistry(name, clock.now)
        self.objects.meter = self.pager.meter
        self.objects.persist = self._persist_object
        self.objects.unpersist = self._unpersist_object
        self.objects.persist_qmgr = self._persist_qmgr
        self.connections: dict[int, Connection] = {}
        self.handles: dict[int, Handle] = {}
        self.waiters: dict[int, Waiter] = {}
        self.queue_waiters: dict[str, list[int]] = {}
        self._waking: dict[str, bool] = {}  # queues whose waits wake() is serving: asked again meanwhile?
        self.deliveries: list[Delivery] = []
        # A driver that answers a waiting get handed a message (engine.handover) itself, at
        # once: called with the wait's id, the packed descriptor, the data, the MsgToken and
        # the queue's name; True if it answered (no Delivery is then made), False to have
        # the Delivery as usual.
        self.answer_now: Callable[[int, bytes, bytes, bytes, str], bool] | None = None
        self.quiescing = False
        # Replayable readers' positions (sequence_access) and prepared units by XID (xa).
        self.readers: dict[tuple[str, str], ReaderPosition] = {}
        self.in_doubt: dict[bytes, UnitOfWork] = {}
        self._next_hconn = 1
        self._next_hobj = 1
        self._next_waiter = 1
        self._next_record = 1
        self._next_txid = 1
        self._last_id = 0
        self._sync_lsn = 0
        self._dyn_counter = 0
        self._stamp_second = -1
        self._stamp = ("", "")
        self._id_prefix = b"AMQ " + name[:12].encode("latin-1", "replace").ljust(12, b" ")

    # -- identifiers -----------------------------------------------------------------------
    def new_id(self) -> bytes:
        """A 24-byte MsgId/CorrelId: ``AMQ ``, 12 characters of the QM name, 8 clock-derived bytes.

        The tail is max(last + 1, microseconds now), so identifiers stay unique across
        restarts as long as the clock does not run backwards by more than the restart took.
        """
        self._last_id = max(self._last_id + 1, int(self.clock.now() * 1_000_000))
        return self._id_prefix + self._last_id.to_bytes(8, "big")

    def reserve_ids(self, n: int) -> tuple[bytes, int]:
        """``n`` identifiers at once, as ``new_id`` would make them one by one: the prefix
        and the first tail (tail + i is the i-th; the caller may leave some unused)."""
        first = max(self._last_id + 1, int(self.clock.now() * 1_000_000))
        self._last_id = first + max(n, 1) - 1
        return self._id_prefix, first

    def new_record_id(self) -> int:
        rid = self._next_record
        self._next_record += 1
        return rid

    def new_txid(self) -> int:
        tid = self._next_txid
        self._next_txid += 1
        return tid

    def dynamic_name(self, pattern: str) -> str:
        """A name from DynamicQName: ``*`` at the end is replaced by a unique string.

        Raises:
            MQError: MQRC_DYNAMIC_Q_NAME_ERROR for a pattern IBM would refuse.
        """
        pattern = pattern.rstrip()
        check_dynamic_q_name(pattern)
        if not pattern or pattern.startswith("*") or ("*" in pattern and not pattern.endswith("*")):
            raise failed(C.MQRC_DYNAMIC_Q_NAME_ERROR, f"DynamicQName {pattern!r}: '*' may only end a non-empty prefix")
        if any(not (c.isascii() and (c.isalnum() or c in "./_%")) for c in pattern.removesuffix("*")):
            raise failed(C.MQRC_DYNAMIC_Q_NAME_ERROR,
                         f"DynamicQName {pattern!r} has characters a queue name may not (A-Z a-z 0-9 . / _ %)")
        if not pattern.endswith("*"):
            return pattern
        while True:
            self._dyn_counter += 1
            unique = f"{int(self.clock.now()):08X}{self._dyn_counter:08X}"
            name = (pattern[:-1] + unique)[: C.MQ_Q_NAME_LENGTH]
            if self.objects.find(name) is None:
                return name

    # -- durability ------------------------------------------------------------------------
    def need_sync(self) -> None:
        """The reply to the current call must wait until what was just journaled is on disk."""
        self._sync_lsn = self.journal.appended_lsn

    def take_sync_lsn(self) -> int:
        """The LSN the driver must see durable before replying to the last call (0: none)."""
        lsn, self._sync_lsn = self._sync_lsn, 0
        return lsn

    def _persist_object(self, obj: QueueObject) -> None:
        if obj.record_id:
            self.journal.update(obj.record_id, KIND_OBJECT, obj.encode())
        else:
            obj.record_id = self.new_record_id()
            self.journal.add(obj.record_id, KIND_OBJECT, obj.encode())
        self.need_sync()

    def _unpersist_object(self, obj: QueueObject) -> None:
        for msg in obj.messages.clear():
            if msg.record_id:
                self.journal.delete(msg.record_id)
        for rid in (obj.record_id, obj.seq_record_id):
            if rid:
                self.journal.delete(rid)
        self.need_sync()

    def _persist_qmgr(self) -> None:
        payload = self.objects.encode_qmgr()
        if self.objects.qmgr_record_id:
            self.journal.update(self.objects.qmgr_record_id, KIND_QMGR, payload)
        else:
            self.objects.qmgr_record_id = self.new_record_id()
            self.journal.add(self.objects.qmgr_record_id, KIND_QMGR, payload)
        self.need_sync()

    def next_sequence(self, q: QueueObject) -> int:
        """The queue's next sequence number, reserving a new block in the journal when needed."""
        seq = q.next_seq
        q.next_seq += 1
        if seq > q.seq_reserved and not q.temporary:
            q.seq_reserved = seq + SEQUENCE_BLOCK
            payload = json.dumps({"queue": q.name, "reserved": q.seq_reserved}).encode()
            if q.seq_record_id:
                self.journal.update(q.seq_record_id, KIND_SEQUENCE, payload)
            else:
                q.seq_record_id = self.new_record_id()
                self.journal.add(q.seq_record_id, KIND_SEQUENCE, payload)
        return seq

    def journal_message(self, msg: Message, txid: int = 0) -> None:
        msg.record_id = self.new_record_id()
        self.journal.add(msg.record_id, KIND_MESSAGE, msg.record_parts(), txid)

    # -- lookups ---------------------------------------------------------------------------
    def conn(self, hconn: int) -> Connection:
        conn = self.connections.get(hconn)
        if conn is None:
            raise failed(C.MQRC_HCONN_ERROR, f"connection handle {hconn} is not connected")
        return conn

    def handle(self, conn: Connection, hobj: int) -> Handle:
        h = conn.handles.get(hobj)
        if h is None:
            raise failed(C.MQRC_HOBJ_ERROR, f"object handle {hobj} is not open on this connection")
        if h.deleted:
            raise failed(C.MQRC_Q_DELETED, f"queue {h.name} was deleted while this handle was open")
        return h

    def check_quiescing(self, options: int, flag: int) -> None:
        if self.quiescing and options & flag:
            raise failed(C.MQRC_Q_MGR_QUIESCING, f"queue manager {self.name} is quiescing")

    def dead_letter_queue(self) -> QueueObject | None:
        name = str(self.objects.qmgr.get("DEADQ", ""))
        q = self.objects.find(name) if name else None
        return q if q is not None and q.is_local else None

    def stamp_put(self, now: float) -> tuple[str, str]:
        """PutDate ``YYYYMMDD`` and PutTime ``HHMMSSTH`` in GMT."""
        second = int(now)
        if second != self._stamp_second:
            t = time.gmtime(second)
            self._stamp_second, self._stamp = second, (time.strftime("%Y%m%d", t), time.strftime("%H%M%S", t))
        hundredths = int((now - second) * 100)
        return self._stamp[0], self._stamp[1] + (_HUNDREDTHS[hundredths] if 0 <= hundredths < 100 else f"{hundredths:02d}")

    def qmgr_attr(self, name: str) -> int:
        value = self.objects.qmgr.get(name)
        return int(A.QMGR_BY_NAME[name].default if value is None else value)
