"""Memory for message data: persistent messages paged out to the journal, a budget for the rest.

Deep queues must not take the queue manager's memory with them (IBM MQ and RabbitMQ page
deep queues to disk). The journal already holds every persistent message, so a persistent
message need not stay in memory once its record is durable: paged out, it keeps what finding
and ordering it needs (engine/message.py) and its descriptor and data are read back from the
journal by record id when a get, browse or selector asks (``Journal.read``: a pread, checksum
checked, right across compaction).

The policy (``MemoryLimits``):

- ``persistent_bytes``: the data of persistent messages on queues (in their indexes) that
  is kept in memory, across all queues. A message that enters an index while the total is
  above it is paged out once its record is durable; so each queue's head, which came while
  there was room, stays in memory for fast gets, and what a filling queue receives beyond the
  budget goes to disk. A paged-out message stays paged out until it leaves its queue (a get
  reads it back once); messages in units of work stay in memory.
- ``unsynced_bytes``: the data of persistent messages over the budget that wait for their
  records to be durable before they can be paged out. Above it the pager is ``behind``:
  the driver stops reading requests until the disk catches up (an asynchronous putter sends
  faster than fdatasync can follow, and would otherwise fill memory with what waits).
- Reads go through a small cache (``read_cache_bytes``) so that one get or browse reading
  the descriptor and then the data reads the record once, without a browse of a deep queue
  filling memory.
- ``non_persistent_bytes``: the data of non-persistent messages on queues. A put that would
  go beyond it is refused with MQRC_Q_SPACE_NOT_AVAILABLE (2056), the reason IBM MQ gives
  when a queue's storage is full; non-persistent messages are never written to disk.
- At restart, records are loaded whole while their data fits ``persistent_bytes`` (in the
  journal's order, oldest first); beyond it only their head (descriptor and properties),
  and the data is read when asked (``trim``).
- A message whose data is in a record shared with others (a persistent publication's
  copies, engine.message record version 2) pages out its data only; it is read back from
  the shared record (one cache entry for all the copies). Each copy counts the data in the
  budget as if it were its own.

The accounting lives with the queues' indexes (``msgqueue.Meter``): an index counts the bytes
held by the messages it holds, so every way a message enters or leaves a queue is counted
once, whichever engine path moved it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Final

from ferrymq.engine.message import KIND_MESSAGE, KIND_MESSAGE_DATA, Message, decode_message, head_length
from ferrymq.engine.msgqueue import MessageQueue, Meter
from ferrymq.errors import DecodeError, StoreError, failed
from ferrymq.mq import constants as C
from ferrymq.store.journal import Journal, Record

log = logging.getLogger("ferrymq.engine")

MiB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """How much message data the queue manager keeps in memory (see the module docstring)."""

    persistent_bytes: int = 256 * MiB
    non_persistent_bytes: int = 1024 * MiB
    unsynced_bytes: int = 64 * MiB
    read_cache_bytes: int = 4 * MiB

    def __post_init__(self) -> None:
        for name in ("persistent_bytes", "non_persistent_bytes", "unsynced_bytes", "read_cache_bytes"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be at least 0")


class Pager:
    """Pages persistent messages out and reads them back, for one queue manager."""

    def __init__(self, journal: Journal, limits: MemoryLimits) -> None:
        self.journal = journal
        self.limits = limits
        self.meter = Meter(limits.persistent_bytes)
        # (LSN to be durable, queue, message, its bytes held)
        self._waiting: deque[tuple[int, MessageQueue, Message, int]] = deque()
        self._cache: OrderedDict[int, bytes] = OrderedDict()  # record_id -> payload
        self._cache_bytes = 0
        self._kept_at_load = 0
        self._loaded_data: dict[int, bytes | None] = {}  # at load: shared data records (None: not kept)
        self.waiting_bytes = 0
        self.behind = False  # waiting_bytes above limits.unsynced_bytes: read no more requests
        self.reads = 0
        self.paged = 0

    # -- paging out ------------------------------------------------------------------------
    def settle(self) -> None:
        """Page out the messages that went over the budget and whose records are now durable.
        Cheap when there are none; the engine calls it after puts and on its tick."""
        meter = self.meter
        waiting = self._waiting
        if meter.due:
            lsn = self.journal.appended_lsn  # at or after each due message's record
            for mq, msg in meter.due:
                size = msg.held_bytes()
                waiting.append((lsn, mq, msg, size))
                self.waiting_bytes += size
            meter.due.clear()
        if not waiting:
            return
        durable = self.journal.durable_lsn
        while waiting and waiting[0][0] <= durable:
            _lsn, mq, msg, size = waiting.popleft()
            self.waiting_bytes -= size
            # Only a message still on that queue with its record: one got or moved meanwhile
            # is no longer counted there, and its record may be gone.
            if msg.record_id and not msg.paged_out and mq.by_seq.get(msg.seq) is msg:
                meter.persistent -= msg.held_bytes()
                msg.page_out(self)
                self.paged += 1
        self.behind = self.waiting_bytes > self.limits.unsynced_bytes

    # -- reading back (message.Source) -----------------------------------------------------
    def payload(self, msg: Message) -> bytes:
        """A paged-out message's record, from the cache or the journal.

        Raises:
            MQError: MQRC_OBJECT_DAMAGED (2101) when the record cannot be read back, or is
                not the one the message was paged out to.
        """
        rid = msg.data_record or msg.record_id
        cache = self._cache
        buf = cache.get(rid)
        if buf is not None:
            cache.move_to_end(rid)
            return buf
        buf = self._read(msg)
        cache[rid] = buf
        self._cache_bytes += len(buf)
        cap = self.limits.read_cache_bytes
        while self._cache_bytes > cap and len(cache) > 1:
            self._cache_bytes -= len(cache.popitem(last=False)[1])
        return buf

    def take(self, msg: Message) -> bytes:
        """A paged-out message's record, for a message taken back into memory for good."""
        buf = self._cache.pop(msg.data_record or msg.record_id, None)
        if buf is None:
            return self._read(msg)
        self._cache_bytes -= len(buf)
        return buf

    def _read(self, msg: Message) -> bytes:
        # The queue's storage failing to give a message back is IBM's "object damaged" (2101).
        rid = msg.data_record or msg.record_id
        try:
            buf = self.journal.read(rid)
        except StoreError as exc:
            log.error("event=paged_message_unreadable queue=%s seq=%d record_id=%d error=%s", msg.queue, msg.seq,
                      rid, exc)
            raise failed(C.MQRC_OBJECT_DAMAGED, f"message {msg.seq} on {msg.queue} cannot be read back "
                                                f"from the journal: {exc}") from exc
        self.reads += 1
        if len(buf) != msg.record_layout()[2]:
            raise failed(C.MQRC_OBJECT_DAMAGED, f"journal record {rid} is not the one message {msg.seq} "
                                                f"on {msg.queue} was paged out to")
        return buf

    # -- restart ---------------------------------------------------------------------------
    def trim(self, kind: int, payload: memoryview) -> int:
        """``Journal.load``'s trim: message records whole while their data fits the budget,
        then only their head (the record's header, queue name, MQMD and properties)."""
        size = len(payload)
        if kind not in (KIND_MESSAGE, KIND_MESSAGE_DATA) or self._kept_at_load + size <= self.limits.persistent_bytes:
            if kind in (KIND_MESSAGE, KIND_MESSAGE_DATA):
                self._kept_at_load += size
            return size
        return 0 if kind == KIND_MESSAGE_DATA else head_length(payload)

    def recover(self, record: Record, fifo_of: dict[str, bool]) -> Message:
        """The message of a record ``load`` returned, paged out when ``trim`` cut it.

        Raises:
            DecodeError: not a message record this version reads.
        """
        length = self.journal.size(record.record_id)
        msg = decode_message(record.payload, fifo_of, length)
        msg.record_id = record.record_id
        rid = msg.data_record
        if rid:
            if rid not in self._loaded_data:
                raise DecodeError("message record", 0, f"its data record {rid} is not in the journal")
            data = self._loaded_data[rid]
            if data is None:
                msg.page_out_shared(self, self.journal.size(rid))
            else:
                msg.share_data(rid, data)
        elif length != len(record.payload):
            msg.page_out_recovered(self, length)
        return msg

    def recover_data(self, record: Record) -> None:
        """A shared data record ``load`` returned (before the messages that name it):
        kept for them, or read when asked when ``trim`` cut it."""
        whole = self.journal.size(record.record_id) == len(record.payload)
        self._loaded_data[record.record_id] = record.payload if whole else None

    def loaded_data(self) -> dict[int, bytes | None]:
        """The shared data records seen at load, handed over once recovery is done."""
        seen, self._loaded_data = self._loaded_data, {}
        return seen

    def stats(self) -> dict[str, int]:
        m = self.meter
        return {"persistent_bytes": m.persistent, "non_persistent_bytes": m.transient, "paged_out": self.paged,
                "reads": self.reads, "cache_bytes": self._cache_bytes, "waiting_bytes": self.waiting_bytes}
