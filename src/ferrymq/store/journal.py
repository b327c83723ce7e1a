"""The journal contract every store implements (memory and file).

A record is ``(record_id, kind, payload)``: ``record_id`` is chosen by the caller and
unique among live records, ``kind`` is a small caller-defined integer (0..255), and the
payload is opaque bytes. Operations are either immediate or belong to a transaction
``txid`` (a caller-chosen positive integer): transactional operations take effect at
replay only if the transaction's commit record is durable.

Threading model (this layer never starts threads or takes locks): every method except
``write_pending`` is called from the owning thread. ``take_pending`` hands the encoded
bytes appended so far to a writer; ``write_pending`` does the blocking write + fdatasync
and may run on one worker thread at a time; the owner then calls ``mark_durable``. This
split is what lets the L3 driver group many callers' records into one fdatasync.
``sync()`` does all three in the calling thread for simple, single-threaded users.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


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
    (their content is never delivered).
    """

    records: list[Record]
    prepared: list[PreparedTx]
    torn_bytes: int = 0
    bad_records: int = 0


@dataclass(frozen=True, slots=True)
class Pending:
    """Bytes handed from the owner to the writer; ``lsn`` is the last operation they cover."""

    data: bytes
    lsn: int


class Journal(Protocol):
    """The store contract; see the module docstring for the threading model."""

    def load(self) -> LoadResult:
        """Replay what is on disk; called once, before any append."""
        ...

    def add(self, record_id: int, kind: int, payload: bytes, txid: int = 0) -> int:
        """Append an add record; returns its LSN (not yet durable)."""
        ...

    def update(self, record_id: int, kind: int, payload: bytes, txid: int = 0) -> int:
        """Replace a live record's kind and payload; returns its LSN."""
        ...

    def delete(self, record_id: int, txid: int = 0) -> int:
        """Remove a live record; returns its LSN."""
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
        """Record that ``write_pending`` returned for ``lsn``; may compact."""
        ...

    def sync(self) -> None:
        """take_pending + write_pending + mark_durable in the calling thread."""
        ...

    def close(self) -> None:
        ...
