"""The journal contract every store implements (memory and file).

A record is ``(record_id, kind, payload)``: ``record_id`` is chosen by the caller and
unique among live records, ``kind`` is a small caller-defined integer (0..255), and the
payload is opaque bytes. ``add`` and ``update`` also take the payload as a tuple of bytes,
its parts in order (``Content``): the journal frames them as one payload without joining them
first, so a caller whose payload is a small header and a large body copies nothing. The
caller does not change the parts it handed over. Operations are either immediate or belong to a transaction
``txid`` (a caller-chosen positive integer): transactional operations take effect at
replay only if the transaction's commit record is durable.

Threading model (this layer never starts threads or takes locks): every method except
``write_pending`` is called from the owning thread. ``take_pending`` hands the encoded
bytes appended so far to a writer; ``write_pending`` does the blocking write + fdatasync
and may run on one worker thread at a time; the owner then calls ``mark_durable``. This
split is what lets the L3 driver group many callers' records into one fdatasync.
``sync()`` does all three in the calling thread for simple, single-threaded users.

Rules every implementation follows (the contract tests in tests/unit/test_store_contract.py
pin them down):

- ``load()`` comes first and once; every other operation before it raises StoreError.
- LSNs: every add/update/delete/prepare/commit/rollback takes the next LSN; they keep
  growing across restarts (``load()`` resumes after the highest LSN found). A commit or
  rollback of a transaction that has no operations writes nothing and returns
  ``appended_lsn``. ``durable_lsn`` only moves forward, through ``mark_durable``.
- Validation (StoreError): ``kind`` in 0..255, ids in 1..2**64-1, an add needs a free id, an
  update or delete needs a live one. A record touched by an open transaction belongs to it
  until commit or rollback: another transaction or an immediate operation on it raises.
  Within a transaction the caller sees its own changes (add then update is fine). A
  prepared transaction takes no more operations, only commit or rollback.
- Replay: transactional operations take effect at their commit, in order; ``load()`` rolls
  back (and journals the rollback of) every transaction that was neither prepared nor
  committed, so a txid may be reused after a restart. ``LoadResult.records`` come in the
  order the records became live (an update keeps the place, a transactional add takes
  its place at commit, a deleted and re-added id goes to the end), compaction included.
- Pendings must be written in the order they were taken, one at a time.
- A failed ``write_pending`` raises ``JournalFull`` or another ``StoreError``; either way
  the driver then calls ``refresh()`` so that the owner sees the new ``refusal``.
  ``JournalFull`` (ENOSPC, EDQUOT) is recoverable: nothing of that batch counts (the file
  was cut back to its last durable byte), and the driver writes the same Pending again,
  before any later one, until it fits; only then is it durable. Any other StoreError is
  final: nothing more is durable; close the journal.
- ``refusal`` is "" while the journal takes persistent work, else why not (disk below its
  reserve, disk full, failed; store/space.py): the engine refuses new persistent messages
  with it before staging anything. Operations are still accepted whatever it says (the
  owner cannot refuse a delete or a commit record); they become durable once space is back.
  ``check_space()`` (writer side, blocking) measures the free space again for the next
  ``refresh()``: a driver calls both while ``refusal`` is set and nothing is written.
- ``close()`` writes and syncs what is still buffered (the writer must be idle); after a
  ``JournalFull`` that was not followed by a successful write it writes nothing and
  raises (those operations were never durable, hence never acknowledged).

Reading back (so a caller need not hold every payload in memory): ``read(record_id)``
returns the whole current payload of a live record, as the journal holds it (a file journal
reads it from its file and checks its checksum), whatever compaction did since it was
written; ``size(record_id)`` is that payload's length (durable or not). Only content that is durable can be read (its add or update has an LSN at or below
``durable_lsn``): StoreError otherwise, and for an id that is not live. ``load(trim)``: the
records ``load`` returns may be cut short by the caller's ``trim(kind, payload)``, which
says how many leading bytes of each live record's payload to return (it is called during
replay, possibly for records that turn out dead; at least the payload's length keeps it
whole); ``read`` still gives the whole payload. Prepared transactions' records are whole.

Additions since the first contract (all backward compatible): ``Pending.segment`` and
``Pending.task`` (a file journal's target segment and background work, compaction, done by
the writer after the data is durable: ``take_pending`` may therefore return a Pending with
empty ``data``; write it like any other), ``WriterTask``, ``JournalStats`` and ``stats()``;
``JournalFull``, ``refusal``, ``check_space()`` and ``refresh()`` (a full disk is survived).
Outside the Protocol, both implementations have ``compact()`` (sync, then compact now;
owner thread, writer idle); ``MemoryJournal.crash()`` and ``FileJournal.abandon()`` let
tests restart from what was durable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

Trim = Callable[[int, memoryview], int]
Content = bytes | tuple[bytes, ...]
"""A payload given to ``add``/``update``: bytes, or its parts in order (see above)."""
"""``trim(kind, payload)``: how many leading bytes of a payload ``load`` returns."""


@dataclass(frozen=True, slots=True)
class Record:
    record_id: int
    kind: int
    payload: bytes


@dataclass(slots=True)
class PreparedTx:
    """A transaction that was prepared (two-phase) but neither committed nor rolled back."""

    txid: int
    xid: bytes
    adds: list[Record] = field(default_factory=list)
    updates: list[Record] = field(default_factory=list)
    deletes: list[int] = field(default_factory=list)


@dataclass(slots=True)
class LoadResult:
    """What survived: live records in the order they were first added, and open prepared txs.

    Transactions that were neither prepared nor committed are dropped (rolled back).
    ``torn_bytes`` counts bytes discarded at the tail of the last segment (never acknowledged);
    ``bad_records`` counts records that failed their checksum in the middle of the journal
    (their content is never delivered). ``damage`` says where each was found, and where a
    torn tail was cut: one line each, naming the file, the offset and what was skipped (at
    most DAMAGE_NOTES lines; the counts hold the rest).
    """

    records: list[Record]
    prepared: list[PreparedTx]
    torn_bytes: int = 0
    bad_records: int = 0
    damage: list[str] = field(default_factory=list)


DAMAGE_NOTES = 100
"""Lines of LoadResult.damage kept: a journal damaged all over is told by its counts."""


class WriterTask(Protocol):
    """Background work a journal hands to its writer thread inside a Pending."""

    def run_step(self) -> None:
        """Do one bounded slice of the work (blocking I/O allowed); never raises."""
        ...


@dataclass(frozen=True, slots=True)
class Pending:
    """Bytes handed from the owner to the writer, as parts to write in order (one
    vectored write, not a joined copy); ``lsn`` is the last operation they cover.

    ``segment`` names the file the bytes belong to (0 when the journal has no files);
    ``task`` is a slice of background work the writer runs after the bytes are durable.
    Both are the journal's business: a driver only passes the Pending back.
    """

    data: Sequence[bytes | bytearray | memoryview]
    lsn: int
    segment: int = 0
    task: WriterTask | None = None


@dataclass(frozen=True, slots=True)
class JournalStats:
    """A snapshot for monitoring; byte figures are 0 for the memory journal.

    ``state`` is the journal's health (store/space.py); ``free_bytes`` the free space of its
    filesystem when last measured (-1: not measured, or no disk).

    Counters the writer thread updates (``fdatasyncs``, ``bytes_written``) may lag by one
    batch when read while a write is in flight.
    """

    appended_lsn: int
    durable_lsn: int
    live_records: int
    open_transactions: int
    prepared_transactions: int
    segments: int = 0
    disk_bytes: int = 0
    dead_bytes: int = 0
    fdatasyncs: int = 0
    bytes_written: int = 0
    compactions: int = 0
    compacting: bool = False
    last_error: str = ""
    state: str = "healthy"
    free_bytes: int = -1
    reserve_bytes: int = 0


class Journal(Protocol):
    """The store contract; see the module docstring for the threading model."""

    refusal: str

    def load(self, trim: Trim | None = None) -> LoadResult:
        """Replay what is on disk; called once, before any append (``trim``: see above)."""
        ...

    def read(self, record_id: int) -> bytes:
        """The whole payload of a live record whose content is durable."""
        ...

    def size(self, record_id: int) -> int:
        """The length of a live record's payload."""
        ...

    def add(self, record_id: int, kind: int, payload: Content, txid: int = 0) -> int:
        """Append an add record; returns its LSN (not yet durable)."""
        ...

    def add_run(self, kind: int, items: Sequence[tuple[int, Content]], txid: int = 0) -> int:
        """``add`` for each ``(record_id, payload)`` in order, validated first (a refusal
        appends none) and staged in one pass; returns the last LSN."""
        ...

    def update(self, record_id: int, kind: int, payload: Content, txid: int = 0) -> int:
        """Replace a live record's kind and payload; returns its LSN."""
        ...

    def delete(self, record_id: int, txid: int = 0) -> int:
        """Remove a live record; returns its LSN."""
        ...

    def delete_run(self, record_ids: Sequence[int], txid: int = 0) -> int:
        """``delete`` for each of ``record_ids`` in order, validated first (a refusal
        appends none) and staged in one pass; returns the last LSN."""
        ...

    def prepare(self, txid: int, xid: bytes) -> int:
        """Phase one of a two-phase commit: the transaction survives restart as prepared."""
        ...

    def commit(self, txid: int) -> int:
        """The transaction's operations take effect."""
        ...

    def rollback(self, txid: int) -> int:
        """The transaction's operations are forgotten."""
        ...

    @property
    def appended_lsn(self) -> int:
        """LSN of the last operation appended."""
        ...

    @property
    def durable_lsn(self) -> int:
        """LSN up to which everything is on disk (fdatasync returned)."""
        ...

    def take_pending(self) -> Pending | None:
        """Hand over everything appended since the last call (None if nothing)."""
        ...

    def write_pending(self, pending: Pending) -> None:
        """Write and fdatasync; blocking; one writer at a time, any thread."""
        ...

    def mark_durable(self, lsn: int) -> None:
        """Record that ``write_pending`` returned for ``lsn``; may compact; ``refresh()``es."""
        ...

    def refresh(self) -> None:
        """Take in what the writer learnt about the disk (owner thread): sets ``refusal``."""
        ...

    def check_space(self) -> None:
        """Measure the disk's free space again (writer side, blocking) for ``refresh``."""
        ...

    def sync(self) -> None:
        """take_pending + write_pending + mark_durable in the calling thread."""
        ...

    def stats(self) -> JournalStats:
        """Counters for monitoring (cheap; owner thread)."""
        ...

    def close(self) -> None:
        """Write and sync what is buffered, then release the journal (files, lock)."""
        ...
