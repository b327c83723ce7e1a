"""L1: the owner-side logic both journals share — validation, LSNs, open transactions.

``JournalCore`` implements add/update/delete/prepare/commit/rollback once, so the memory
and the file journal cannot drift apart in what they accept. A subclass says how an
operation is logged (``_log``) and what happens when a record changes state
(``_set_live``, ``_remove_live``, ``_discard``); the core decides when.

Type parameters: ``L`` is what the subclass keeps per live record in ``_live`` (the core
only asks whether an id is there), ``V`` what ``_log`` returns for one logged operation
(the memory journal keeps the Record, the file journal the record's size on disk).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Generic, TypeVar

from ferrymq.errors import StoreError
from ferrymq.store.journal import Content, PreparedTx, Record
from ferrymq.store.records import ADD, COMMIT, DELETE, MAX_ID, MAX_PAYLOAD, MAX_XID, PREPARE, ROLLBACK, UPDATE

L = TypeVar("L")
V = TypeVar("V")

NEW: Final = 0
READY: Final = 1
CLOSED: Final = 2


class OpenTx(Generic[V]):
    """A transaction with operations logged but neither committed nor rolled back."""

    __slots__ = ("ops", "prepare_lsn", "prepare_value", "prepared", "txid", "view", "xid")

    def __init__(self, txid: int) -> None:
        self.txid = txid
        self.ops: list[tuple[int, int, int, V]] = []  # (op, record_id, lsn, value) in log order
        self.view: dict[int, bool] = {}  # record_id -> live once this transaction commits
        self.prepared = False
        self.xid = b""
        self.prepare_lsn = 0
        self.prepare_value: V | None = None


def prepared_view(txid: int, xid: bytes, ops: list[tuple[int, Record | int]]) -> PreparedTx:
    """The contract's PreparedTx from ``(op, Record or deleted id)`` pairs in log order."""
    tx = PreparedTx(txid, xid)
    for op, item in ops:
        if op == DELETE:
            assert isinstance(item, int)
            tx.deletes.append(item)
        else:
            assert isinstance(item, Record)
            (tx.adds if op == ADD else tx.updates).append(item)
    return tx


class JournalCore(Generic[L, V]):
    """Validation, LSN accounting and transaction bookkeeping of the owner thread."""

    def __init__(self) -> None:
        self._live: dict[int, L] = {}
        self._txs: dict[int, OpenTx[V]] = {}
        self._locks: dict[int, int] = {}  # record_id -> txid of the open transaction that touched it
        self._lsn = 0
        self._durable = 0
        self._state = NEW
        # Why persistent work is refused now ("" while it is not); read by the engine before
        # it stages a persistent message (see store/space.py for the states).
        self.refusal = ""

    # -- what a subclass provides ------------------------------------------------------------
    def _log(self, rtype: int, record_id: int, kind: int, payload: Content, txid: int, lsn: int) -> V:
        raise NotImplementedError

    def _log_run(self, rtype: int, kind: int, items: Sequence[tuple[int, Content]], txid: int, lsn: int) -> list[V]:
        """``_log`` for each ``(record_id, payload)`` in order, from LSN ``lsn`` on."""
        log = self._log
        return [log(rtype, record_id, kind, payload, txid, lsn + i) for i, (record_id, payload) in enumerate(items)]

    def _set_live(self, record_id: int, op: int, value: V, lsn: int) -> None:
        """An add or update (``op``) took effect, immediately or at its transaction's commit."""
        raise NotImplementedError

    def _remove_live(self, record_id: int, value: V, lsn: int) -> None:
        """A delete took effect; ``value``/``lsn`` are those of the delete itself."""
        raise NotImplementedError

    def _discard(self, value: V, lsn: int) -> None:
        """A logged transactional operation (or prepare) was rolled back or is spent."""
        raise NotImplementedError

    # -- the contract ------------------------------------------------------------------------
    @property
    def appended_lsn(self) -> int:
        return self._lsn

    @property
    def durable_lsn(self) -> int:
        return self._durable

    def add(self, record_id: int, kind: int, payload: Content, txid: int = 0) -> int:
        """Append an add record; returns its LSN.

        Raises:
            StoreError: bad arguments, the id is live (or taken by an open transaction),
                the transaction is prepared, or the journal is not loaded / closed.
        """
        return self._ops(ADD, kind, ((record_id, payload),), txid)

    def add_run(self, kind: int, items: Sequence[tuple[int, Content]], txid: int = 0) -> int:
        """Append an add record for each ``(record_id, payload)`` of ``items``, in order, all
        of ``kind`` and in ``txid``: what as many ``add`` calls would append, staged in one
        pass. Returns the last one's LSN (``appended_lsn`` when ``items`` is empty).

        Raises:
            StoreError: as ``add`` for any of them (an id may not come twice); then none is
                appended.
        """
        return self._ops(ADD, kind, items, txid) if items else self._lsn

    def delete_run(self, record_ids: Sequence[int], txid: int = 0) -> int:
        """Remove each live record of ``record_ids``, in order, in ``txid``: what as many
        ``delete`` calls would append, staged in one pass. Returns the last one's LSN
        (``appended_lsn`` when ``record_ids`` is empty).

        Raises:
            StoreError: as ``delete`` for any of them (an id may not come twice); then none
                is appended.
        """
        return self._ops(DELETE, 0, [(record_id, b"") for record_id in record_ids], txid) if record_ids else self._lsn

    def update(self, record_id: int, kind: int, payload: Content, txid: int = 0) -> int:
        """Replace a live record's kind and payload; returns the LSN.

        Raises:
            StoreError: as for ``add``, or the record is not live.
        """
        return self._ops(UPDATE, kind, ((record_id, payload),), txid)

    def delete(self, record_id: int, txid: int = 0) -> int:
        """Remove a live record; returns the LSN.

        Raises:
            StoreError: as for ``update``.
        """
        return self._ops(DELETE, 0, ((record_id, b""),), txid)

    def prepare(self, txid: int, xid: bytes) -> int:
        """Phase one of two-phase commit: the transaction survives a restart as prepared.

        Raises:
            StoreError: txid out of range, xid longer than MAX_XID, already prepared.
        """
        self._ready()
        _check_txid(txid)
        if not isinstance(xid, bytes | bytearray | memoryview):
            raise StoreError(f"xid must be bytes, not {type(xid).__name__}")
        xid = bytes(xid)
        if len(xid) > MAX_XID:
            raise StoreError(f"xid is {len(xid)} bytes; at most {MAX_XID}")
        tx = self._txs.get(txid)
        if tx is not None and tx.prepared:
            raise StoreError(f"transaction {txid} is already prepared")
        lsn = self._next()
        value = self._log(PREPARE, 0, 0, xid, txid, lsn)
        if tx is None:
            tx = self._txs[txid] = OpenTx(txid)
        tx.prepared, tx.xid, tx.prepare_lsn, tx.prepare_value = True, xid, lsn, value
        return lsn

    def _end_tx(self, txid: int, rtype: int) -> tuple[OpenTx[V], int] | None:
        """Log the COMMIT or ROLLBACK that ends ``txid``; None when it has no operations."""
        self._ready()
        _check_txid(txid)
        tx = self._txs.pop(txid, None)
        if tx is None:
            return None
        lsn = self._next()
        self._log(rtype, 0, 0, b"", txid, lsn)
        return tx, lsn

    def commit(self, txid: int) -> int:
        """The transaction's operations take effect, in order; returns the LSN.

        A transaction with no logged operation writes nothing and returns ``appended_lsn``.

        Raises:
            StoreError: txid out of range, or the journal is not loaded / closed.
        """
        ended = self._end_tx(txid, COMMIT)
        if ended is None:
            return self._lsn
        tx, lsn = ended
        locks = self._locks
        for op, record_id, op_lsn, value in tx.ops:
            locks.pop(record_id, None)
            if op == DELETE:
                self._remove_live(record_id, value, op_lsn)
            else:
                self._set_live(record_id, op, value, op_lsn)
        if tx.prepare_value is not None:
            self._discard(tx.prepare_value, tx.prepare_lsn)
        return lsn

    def rollback(self, txid: int) -> int:
        """The transaction's operations are forgotten; returns the LSN (see ``commit``).

        Raises:
            StoreError: txid out of range, or the journal is not loaded / closed.
        """
        ended = self._end_tx(txid, ROLLBACK)
        if ended is None:
            return self._lsn
        tx, lsn = ended
        for _op, record_id, op_lsn, value in tx.ops:
            self._locks.pop(record_id, None)
            self._discard(value, op_lsn)
        if tx.prepare_value is not None:
            self._discard(tx.prepare_value, tx.prepare_lsn)
        return lsn

    # -- shared machinery --------------------------------------------------------------------
    def _ready(self) -> None:
        if self._state != READY:
            raise StoreError("journal is closed" if self._state == CLOSED else "journal not loaded: call load() first")

    def _next(self) -> int:
        self._lsn += 1
        return self._lsn

    def _ops(self, op: int, kind: int, items: Sequence[tuple[int, Content]], txid: int) -> int:
        """Validate every operation of ``items`` (one for add, update and delete; a run for
        ``add_run``), then log them in order: a refusal logs none. The last LSN."""
        if self._state != READY:
            self._ready()
        if op != DELETE and (type(kind) is not int or not 0 <= kind <= 255):
            raise StoreError(f"kind must be an int in 0..255, not {kind!r}")
        tx: OpenTx[V] | None = None
        if txid:
            if type(txid) is not int or not 0 < txid <= MAX_ID:  # _check_txid's test, inline: one op per message
                _check_txid(txid)
            tx = self._txs.get(txid)
            if tx is not None and tx.prepared:
                raise StoreError(f"transaction {txid} is prepared: only commit or rollback")
        locks, live_ids = self._locks, self._live
        view = tx.view if tx is not None else None
        checked: list[tuple[int, Content]] = []
        seen: set[int] | None = set() if len(items) > 1 else None  # an id twice in a run: its second op fails
        for record_id, payload in items:
            if type(record_id) is not int or not 0 < record_id <= MAX_ID:
                raise StoreError(f"record id must be an int in 1..2**64-1, not {record_id!r}")
            if op != DELETE:
                if type(payload) is tuple:
                    for part in payload:  # a message's parts are bytes: taken as they are
                        if type(part) is not bytes:
                            payload = tuple(map(_as_bytes, payload))
                            break
                    size = sum(map(len, payload))
                else:
                    payload = _as_bytes(payload)
                    size = len(payload)
                if size > MAX_PAYLOAD:
                    raise StoreError(f"payload is {size} bytes; at most {MAX_PAYLOAD}")
            holder = locks.get(record_id)
            if holder is not None and holder != txid:
                raise StoreError(f"record {record_id} belongs to open transaction {holder}")
            if view is not None and record_id in view:
                live = view[record_id]
            else:
                live = record_id in live_ids
            if seen is not None:
                if record_id in seen:
                    live = op != DELETE  # added, or deleted, earlier in this run
                seen.add(record_id)
            if op == ADD:
                if live:
                    raise StoreError(f"record {record_id} already exists")
            elif not live:
                raise StoreError(f"record {record_id} does not exist")
            checked.append((record_id, payload))
        lsn = self._lsn + 1
        self._lsn += len(checked)
        values = self._log_run(op, kind, checked, txid, lsn)
        if tx is None and txid:
            tx = self._txs[txid] = OpenTx(txid)
        if tx is None:
            for (record_id, _), value in zip(checked, values, strict=True):
                if op == DELETE:
                    self._remove_live(record_id, value, lsn)
                else:
                    self._set_live(record_id, op, value, lsn)
                lsn += 1
        else:
            ops, view = tx.ops, tx.view
            for (record_id, _), value in zip(checked, values, strict=True):
                ops.append((op, record_id, lsn, value))
                view[record_id] = op != DELETE
                locks[record_id] = txid
                lsn += 1
        return lsn - 1

    def _adopt_prepared(self, txid: int, xid: bytes, prepare_lsn: int, prepare_value: V,
                        ops: list[tuple[int, int, int, V]]) -> None:
        """Rebuild a prepared transaction found by ``load()`` (its records are on disk)."""
        tx: OpenTx[V] = OpenTx(txid)
        tx.prepared, tx.xid, tx.prepare_lsn, tx.prepare_value = True, xid, prepare_lsn, prepare_value
        tx.ops = ops
        for op, record_id, _lsn, _value in ops:
            tx.view[record_id] = op != DELETE
            self._locks[record_id] = txid
        self._txs[txid] = tx

    def _roll_back_incomplete(self, txids: list[int]) -> None:
        """Journal a rollback for transactions a crash left open, so their txids are free."""
        for txid in txids:
            self._log(ROLLBACK, 0, 0, b"", txid, self._next())

    def _counts(self) -> tuple[int, int]:
        prepared = sum(1 for tx in self._txs.values() if tx.prepared)
        return len(self._txs), prepared


def _as_bytes(part: object) -> bytes:
    if type(part) is bytes:
        return part
    if not isinstance(part, bytearray | memoryview):
        raise StoreError(f"payload must be bytes, not {type(part).__name__}")
    return bytes(part)


def _check_txid(txid: int) -> None:
    if type(txid) is not int or not 0 < txid <= MAX_ID:
        raise StoreError(f"txid must be an int in 1..2**64-1, not {txid!r}")
