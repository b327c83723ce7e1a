"""L1: MemoryJournal — the journal contract with nothing on disk.

It behaves like the file journal in every observable way (validation, LSNs, durability,
replay rules), so the engine can be tested against it, and it can pretend to crash:
``crash()`` returns a fresh journal holding only what had been marked durable, which is
what a restart after a power cut would find. ``take_pending`` hands over no bytes (the
data stays here), but ``mark_durable`` is still what makes operations survive a crash.

Memory use is bounded by the live records, open transactions and the operations not yet
marked durable (the durable state is kept folded, not as a growing log).
"""

from __future__ import annotations

from typing import Final

from ferrymq.errors import StoreError
from ferrymq.store.core import CLOSED, NEW, READY, JournalCore, prepared_view
from ferrymq.store.journal import Content, JournalStats, LoadResult, Pending, PreparedTx, Record, Trim
from ferrymq.store.records import ADD, COMMIT, DELETE, PREPARE, ROLLBACK, UPDATE

# One logged operation: (type, lsn, txid, record_id, record for ADD/UPDATE, xid for PREPARE).
_Op = tuple[int, int, int, int, Record | None, bytes]
_NO_XID: Final = b""


class _ImageTx:
    __slots__ = ("ops", "prepare_lsn", "xid")

    def __init__(self) -> None:
        self.ops: list[tuple[int, int, int, Record | None]] = []  # (type, record_id, lsn, record)
        self.xid: bytes | None = None  # set once prepared
        self.prepare_lsn = 0


class _Image:
    """What the journal has "on disk": the state its durable operations replay to."""

    __slots__ = ("lsn", "records", "txs")

    def __init__(self) -> None:
        self.records: dict[int, Record] = {}
        self.txs: dict[int, _ImageTx] = {}
        self.lsn = 0

    def apply(self, op: _Op) -> None:
        # The same replay rules as the file journal's load (see store/replay.py).
        rtype, lsn, txid, record_id, record, xid = op
        if rtype in (ADD, UPDATE, DELETE):
            if txid:
                self.txs.setdefault(txid, _ImageTx()).ops.append((rtype, record_id, lsn, record))
            elif record is None:
                self.records.pop(record_id, None)
            else:
                self.records[record_id] = record
        elif rtype == PREPARE:
            tx = self.txs.setdefault(txid, _ImageTx())
            tx.xid, tx.prepare_lsn = xid, lsn
        elif rtype == COMMIT:
            done = self.txs.pop(txid, None)
            for op_type, rid, _lsn, rec in done.ops if done else ():
                if op_type == DELETE or rec is None:
                    self.records.pop(rid, None)
                else:
                    self.records[rid] = rec
        elif rtype == ROLLBACK:
            self.txs.pop(txid, None)
        self.lsn = max(self.lsn, lsn)

    def copy(self) -> _Image:
        image = _Image()
        image.records = dict(self.records)
        for txid, tx in self.txs.items():
            clone = image.txs[txid] = _ImageTx()
            clone.ops, clone.xid, clone.prepare_lsn = list(tx.ops), tx.xid, tx.prepare_lsn
        image.lsn = self.lsn
        return image


class MemoryJournal(JournalCore[Record, Record | None]):
    """A journal in memory; see the module docstring. Same threading model as the contract."""

    def __init__(self) -> None:
        super().__init__()
        self._image = _Image()
        self._lsns: dict[int, int] = {}  # record_id -> LSN of its content (read's durability test)
        self._unsynced: list[_Op] = []  # logged, not yet marked durable, in LSN order
        self._taken = 0

    @classmethod
    def _restarted(cls, image: _Image) -> MemoryJournal:
        journal = cls()
        journal._image = image
        return journal

    # -- hooks for JournalCore -----------------------------------------------------------------
    def _log(self, rtype: int, record_id: int, kind: int, content: Content, txid: int, lsn: int) -> Record | None:
        payload = b"".join(content) if isinstance(content, tuple) else content
        record = Record(record_id, kind, payload) if rtype in (ADD, UPDATE) else None
        self._unsynced.append((rtype, lsn, txid, record_id, record, payload if rtype == PREPARE else _NO_XID))
        return record

    def _set_live(self, record_id: int, op: int, value: Record | None, lsn: int) -> None:
        assert value is not None
        self._live[record_id] = value
        self._lsns[record_id] = lsn

    def _remove_live(self, record_id: int, value: Record | None, lsn: int) -> None:
        self._live.pop(record_id, None)
        self._lsns.pop(record_id, None)

    def _discard(self, value: Record | None, lsn: int) -> None:
        pass

    # -- the contract --------------------------------------------------------------------------
    def load(self, trim: Trim | None = None) -> LoadResult:
        """What survived (everything, or what was durable when ``crash()`` was called);
        ``trim`` shortens the payloads returned (journal.py).

        Raises:
            StoreError: called twice, or after close.
        """
        if self._state != NEW:
            raise StoreError("load() was already called" if self._state == READY else "journal is closed")
        image = self._image
        self._live = dict(image.records)
        self._lsns = dict.fromkeys(image.records, 0)
        self._lsn = self._durable = self._taken = image.lsn
        prepared: list[PreparedTx] = []
        incomplete: list[int] = []
        for txid, itx in image.txs.items():
            if itx.xid is None:
                incomplete.append(txid)
                continue
            ops = [(op, rid, lsn, rec) for op, rid, lsn, rec in itx.ops]
            self._adopt_prepared(txid, itx.xid, itx.prepare_lsn, None, ops)
            prepared.append(prepared_view(txid, itx.xid, [(op, rid if rec is None else rec) for op, rid, _, rec in itx.ops]))
        self._state = READY
        self._roll_back_incomplete(incomplete)
        records = list(image.records.values())
        if trim is not None:
            records = [Record(r.record_id, r.kind, r.payload[:max(0, trim(r.kind, memoryview(r.payload)))])
                       for r in records]
        return LoadResult(records, prepared)

    def read(self, record_id: int) -> bytes:
        """The whole payload of a live record whose content is durable (journal.py).

        Raises:
            StoreError: not loaded or closed; the record is not live or not durable yet.
        """
        self._ready()
        record = self._live.get(record_id)
        if record is None:
            raise StoreError(f"record {record_id} does not exist")
        lsn = self._lsns[record_id]
        if lsn > self._durable:
            raise StoreError(f"record {record_id} is not durable yet (LSN {lsn} > {self._durable})")
        return record.payload

    def size(self, record_id: int) -> int:
        """The length of a live record's payload.

        Raises:
            StoreError: not loaded or closed, or the record is not live.
        """
        self._ready()
        record = self._live.get(record_id)
        if record is None:
            raise StoreError(f"record {record_id} does not exist")
        return len(record.payload)

    def take_pending(self) -> Pending | None:
        """Everything since the last call, as an empty-bytes Pending (None if nothing new)."""
        if self._state != READY or self._lsn == self._taken:
            return None
        self._taken = self._lsn
        return Pending((), self._lsn)

    def write_pending(self, pending: Pending) -> None:
        """Nothing to write: the data never leaves memory."""

    def refresh(self) -> None:
        """No disk: ``refusal`` stays empty."""

    def check_space(self) -> None:
        """No disk to measure."""

    def mark_durable(self, lsn: int) -> None:
        """Operations up to ``lsn`` now survive ``crash()``.

        Raises:
            StoreError: ``lsn`` was never appended.
        """
        if self._state != READY or lsn <= self._durable:
            return
        if lsn > self._lsn:
            raise StoreError(f"mark_durable({lsn}) beyond the last appended LSN {self._lsn}")
        ops = self._unsynced
        cut = 0
        while cut < len(ops) and ops[cut][1] <= lsn:
            self._image.apply(ops[cut])
            cut += 1
        del ops[:cut]
        self._image.lsn = max(self._image.lsn, lsn)
        self._durable = lsn

    def sync(self) -> None:
        pending = self.take_pending()
        if pending is not None:
            self.mark_durable(pending.lsn)

    def stats(self) -> JournalStats:
        open_txs, prepared = self._counts()
        return JournalStats(self._lsn, self._durable, len(self._live), open_txs, prepared)

    def compact(self) -> None:
        """Sync (as FileJournal.compact does first); there is nothing to rewrite.

        Raises:
            StoreError: the journal is not loaded, or closed.
        """
        self._ready()
        self.sync()

    def close(self) -> None:
        """Make everything durable and refuse further use (idempotent)."""
        if self._state == READY:
            self.sync()
        self._state = CLOSED

    # -- testing aid ---------------------------------------------------------------------------
    def crash(self) -> MemoryJournal:
        """A new, unloaded journal holding only what was durable; this one is closed.

        What was appended but not marked durable is lost, exactly as a power cut loses
        what had not been fsynced.
        """
        self._state = CLOSED
        return MemoryJournal._restarted(self._image.copy())
