"""Staging what the engine writes to the journal, and the LSN the driver must see durable.

Every engine call stages its records here (messages, objects, sequence blocks, the queue
manager's attributes); a call whose reply must wait for the disk asks ``need_sync`` and the
driver reads ``take_sync_lsn`` after the call. A waiting get answered during someone
else's call has its own durability: ``apart`` begins it and ``rejoin`` ends it, so the
call that woke it keeps its own LSN.

Owns the journal's record and transaction numbering, each queue's sequence
reservations (a block of sequence numbers journaled ahead, so a restart never reuses one),
and the shared data records (kind MESSAGE_DATA: a persistent publication's data, journaled
once for all its copies, engine.message). ``shared`` counts, per data record, the messages
whose own record is live or whose delete is not yet final (a get in an open or prepared
unit of work may still be backed out); once the last of them is final, the data record is
deleted, at once (``dropped``). So the journal never holds a message record without its
data; a crash between the two deletes leaves at most a data record no message names,
which recovery deletes (``drop_unnamed_data``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Protocol

from ferrymq.engine.message import KIND_MESSAGE, KIND_MESSAGE_DATA, Message
from ferrymq.engine.objects import KIND_OBJECT, KIND_QMGR, KIND_SEQUENCE, SEQUENCE_BLOCK, ObjectRegistry, QueueObject
from ferrymq.store.journal import Journal

_UNRESERVED = 1 << 62  # a temporary queue's seq_reserved: above any sequence number it will reach


class Definition(Protocol):
    """What ``keep`` and ``forget`` write: an object standing in one record of its own."""

    record_id: int

    def encode(self) -> bytes: ...

class Staging:
    """The journal writes of one queue manager and the LSN its current call waits for."""

    __slots__ = ("_next_record", "_next_txid", "_sync_lsn", "journal", "objects", "shared")

    def __init__(self, journal: Journal, objects: ObjectRegistry) -> None:
        self.journal = journal
        self.objects = objects
        self._next_record = 1
        self._next_txid = 1
        self._sync_lsn = 0
        self.shared: dict[int, int] = {}  # data record id -> messages counted (module docstring)
        objects.persist = self.persist_object
        objects.unpersist = self.unpersist_object
        objects.persist_qmgr = self.persist_qmgr

    # -- durability ------------------------------------------------------------------------
    def need_sync(self) -> None:
        """The reply to the current call must wait until what was just journaled is on disk."""
        self._sync_lsn = self.journal.appended_lsn

    def take_sync_lsn(self) -> int:
        """The LSN the driver must see durable before replying to the last call (0: none)."""
        lsn, self._sync_lsn = self._sync_lsn, 0
        return lsn

    def apart(self) -> int:
        """Begin work whose durability is its own (a wait answered during another call):
        returns the call's LSN so far, for ``rejoin``."""
        outer, self._sync_lsn = self._sync_lsn, 0
        return outer

    def rejoin(self, outer: int) -> int:
        """End what ``apart`` began: returns the LSN that work needs (0: none); the call
        then waits for the later of the two."""
        lsn = self._sync_lsn
        self._sync_lsn = max(outer, lsn)
        return lsn

    # -- numbering -------------------------------------------------------------------------
    def new_record_id(self) -> int:
        rid = self._next_record
        self._next_record += 1
        return rid

    def new_txid(self) -> int:
        tid = self._next_txid
        self._next_txid += 1
        return tid

    def recovered(self, last_record: int, last_txid: int) -> None:
        """Recovery saw records and transactions up to these: number on from them."""
        self._next_record = max(self._next_record, last_record + 1)
        self._next_txid = max(self._next_txid, last_txid + 1)

    def next_sequence(self, q: QueueObject) -> int:
        """The queue's next sequence number, reserving a new block in the journal when needed."""
        seq = q.next_seq
        q.next_seq += 1
        if seq > q.seq_reserved:
            if q.temporary:  # nothing of it is journaled: its numbers are never reserved, nor asked again
                q.seq_reserved = _UNRESERVED
                return seq
            q.seq_reserved = seq + SEQUENCE_BLOCK
            payload = json.dumps({"queue": q.name, "reserved": q.seq_reserved}).encode()
            q.seq_record_id = self.write_record(q.seq_record_id, KIND_SEQUENCE, payload)
        return seq

    # -- records ---------------------------------------------------------------------------
    def write_record(self, record_id: int, kind: int, payload: bytes) -> int:
        """A record that stands for one thing (a queue's definition, its sequence block, a
        reader's position): updated when it has an id (non-zero), else added under a new one.
        Its id."""
        if record_id:
            self.journal.update(record_id, kind, payload)
            return record_id
        record_id = self.new_record_id()
        self.journal.add(record_id, kind, payload)
        return record_id

    def keep(self, kind: int, obj: Definition) -> None:
        """Write (or rewrite) the record of a definition (a topic object, a namelist ...);
        the reply waits for it."""
        obj.record_id = self.write_record(obj.record_id, kind, obj.encode())
        self.need_sync()

    def forget(self, obj: Definition) -> None:
        """Delete a definition's record, if it has one; the reply waits for it."""
        if obj.record_id:
            self.journal.delete(obj.record_id)
            obj.record_id = 0
        self.need_sync()

    def journal_message(self, msg: Message, txid: int = 0) -> None:
        self.journal_messages((msg,), txid)

    def journal_messages(self, msgs: Sequence[Message], txid: int = 0) -> None:
        """Each message's record, in order, numbered in that order, staged with one journal
        call (a run of puts in one unit of work: engine.putting ``put_each``)."""
        rid = self._next_record
        self._next_record = rid + len(msgs)
        items = []
        for msg in msgs:
            msg.record_id = rid
            items.append((rid, msg.record_parts()))
            rid += 1
        self.journal.add_run(KIND_MESSAGE, items, txid)
        shared = self.shared
        for msg in msgs:
            if msg.data_record:
                shared[msg.data_record] += 1

    def journal_data(self, data: bytes, txid: int) -> int:
        """A data record for messages to share (``Message.share_data``), in ``txid`` with
        their own records; its id."""
        rid = self.new_record_id()
        self.journal.add(rid, KIND_MESSAGE_DATA, data, txid)
        self.shared[rid] = 0
        return rid

    def drop_message(self, msg: Message, txid: int = 0) -> None:
        """Stage the delete of a message's record: in ``txid`` (the caller calls ``dropped``
        when that unit commits), or at once. The caller clears ``record_id`` once final."""
        self.journal.delete(msg.record_id, txid)
        if not txid:
            self.dropped(msg)

    def drop_messages(self, msgs: Sequence[Message], txid: int) -> None:
        """``drop_message`` in ``txid`` for each of ``msgs`` (each with a record), staged
        with one journal call (a unit's gets, engine.units ``settle``)."""
        self.journal.delete_run([msg.record_id for msg in msgs], txid)

    def dropped(self, msg: Message) -> None:
        """The delete of ``msg``'s record is final: its shared data record goes with the
        last message counting on it."""
        self.all_dropped((msg,))

    def all_dropped(self, msgs: Iterable[Message]) -> None:
        """``dropped`` for each of ``msgs`` (a unit's gets at commit), the data records
        that go deleted with one journal call."""
        release = self.release
        gone = [msg.data_record for msg in msgs if msg.data_record and release(msg)]
        if gone:
            self.journal.delete_run(gone)

    def release(self, msg: Message) -> bool:
        """``msg`` no longer counts on its shared data record (its delete is final, or its
        put undone with the data record's add): whether it was the last."""
        rid = msg.data_record
        left = self.shared.get(rid, 0) - 1
        if left > 0:
            self.shared[rid] = left
            return False
        self.shared.pop(rid, None)
        return True

    def count_shared(self, messages: Iterable[Message]) -> None:
        """Recovery: count the recovered messages on their shared data records."""
        shared = self.shared
        for msg in messages:
            rid = msg.data_record
            if rid:
                shared[rid] = shared.get(rid, 0) + 1

    def drop_unnamed_data(self, data_records: Iterable[int]) -> None:
        """Recovery: delete the shared data records no message counts on (their last
        message's delete was journaled, theirs was not)."""
        for rid in data_records:
            if rid not in self.shared:
                self.journal.delete(rid)

    def count_on(self, msg: Message) -> None:
        """A message recovered from a prepared unit's add counts on its data record."""
        if msg.data_record:
            self.shared[msg.data_record] = self.shared.get(msg.data_record, 0) + 1

    def persist_object(self, obj: QueueObject) -> None:
        obj.record_id = self.write_record(obj.record_id, KIND_OBJECT, obj.encode())
        self.need_sync()

    def unpersist_object(self, obj: QueueObject) -> None:
        for msg in obj.messages.clear():
            if msg.record_id:
                self.drop_message(msg)
        for rid in (obj.record_id, obj.seq_record_id):
            if rid:
                self.journal.delete(rid)
        self.need_sync()

    def persist_qmgr(self) -> None:
        objects = self.objects
        objects.qmgr_record_id = self.write_record(objects.qmgr_record_id, KIND_QMGR, objects.encode_qmgr())
        self.need_sync()
