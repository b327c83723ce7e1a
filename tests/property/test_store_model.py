"""The journals against a dict model: random operations, transactions, syncs, clean
restarts, crashes and compactions (tiny segments, so files roll and compact constantly).

The model keeps the committed records in an insertion-ordered dict (an update keeps the
place, a transactional add takes its place at commit), the open transactions, and a copy
of both at the last sync — which is exactly what must survive a crash.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import hypothesis.strategies as st
from hypothesis import event, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from ferrymq.errors import StoreError
from ferrymq.store.file import FileJournal
from ferrymq.store.journal import Journal, LoadResult, Record
from ferrymq.store.memory import MemoryJournal
from ferrymq.store.records import BY_REFERENCE

ADD, UPDATE, DELETE = "add", "update", "delete"
ids = st.integers(min_value=1, max_value=12)
txids = st.sampled_from([0, 0, 1, 2, 3])
# Some payloads around the size from which the file journal writes a payload where it lies
# rather than copying it into its batch buffer (records.BY_REFERENCE).
payloads = st.one_of(
    st.binary(max_size=60),
    st.tuples(st.integers(BY_REFERENCE - 1, BY_REFERENCE + 1), st.binary(min_size=1, max_size=3)).map(
        lambda t: (t[1] * t[0])[: t[0]]),
)
kinds = st.integers(min_value=0, max_value=255)


@dataclass
class TxModel:
    ops: list[tuple[str, int, int, bytes]] = field(default_factory=list)
    prepared: bool = False
    xid: bytes = b""


@dataclass
class State:
    committed: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    txs: dict[int, TxModel] = field(default_factory=dict)

    def live_for(self, rid: int, txid: int) -> bool:
        live = rid in self.committed
        tx = self.txs.get(txid) if txid else None
        for op, op_rid, _k, _p in tx.ops if tx else ():
            if op_rid == rid:
                live = op != DELETE
        return live

    def holder(self, rid: int) -> int | None:
        for txid, tx in self.txs.items():
            if any(op_rid == rid for _op, op_rid, _k, _p in tx.ops):
                return txid
        return None

    def apply(self, op: str, rid: int, kind: int, payload: bytes) -> None:
        if op == DELETE:
            del self.committed[rid]
        else:
            self.committed[rid] = (kind, payload)

    def after_restart(self) -> State:
        return State(dict(self.committed), {t: copy.deepcopy(tx) for t, tx in self.txs.items() if tx.prepared})


class JournalVsModel(RuleBasedStateMachine):
    kind = "file"

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="store-model-"))
        self.state = State()
        self.durable = State()
        self.journal = self._open()
        self.check(self.journal.load())

    def _open(self) -> Journal:
        if self.kind == "memory":
            return MemoryJournal()
        return FileJournal(self.tmp / "j", segment_size=300, compact_min_bytes=200, compact_step_bytes=256)

    def teardown(self) -> None:
        compactions = self.journal.stats().compactions
        event("auto or explicit compactions: " + ("none" if not compactions else "1" if compactions == 1 else "2+"))
        self.journal.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- operations --------------------------------------------------------------------------
    @rule(op=st.sampled_from([ADD, UPDATE, DELETE]), rid=ids, kind=kinds, payload=payloads, txid=txids)
    def operation(self, op: str, rid: int, kind: int, payload: bytes, txid: int) -> None:
        s = self.state
        holder = s.holder(rid)
        tx = s.txs.get(txid)
        live = s.live_for(rid, txid)
        valid = (holder is None or holder == txid) and not (tx and tx.prepared) and (live != (op == ADD))
        j = self.journal

        def call() -> int:
            if op == ADD:
                return j.add(rid, kind, payload, txid)
            if op == UPDATE:
                return j.update(rid, kind, payload, txid)
            return j.delete(rid, txid)

        if not valid:
            before = j.appended_lsn
            try:
                call()
            except StoreError:
                assert j.appended_lsn == before
                return
            raise AssertionError(f"{op} {rid} txid={txid} should have been refused")
        assert call() == j.appended_lsn
        if txid:
            s.txs.setdefault(txid, TxModel()).ops.append((op, rid, kind, payload))
        else:
            s.apply(op, rid, kind, payload)

    @rule(txid=st.integers(min_value=1, max_value=3))
    def commit(self, txid: int) -> None:
        self.journal.commit(txid)
        tx = self.state.txs.pop(txid, None)
        for op, rid, kind, payload in tx.ops if tx else ():
            self.state.apply(op, rid, kind, payload)

    @rule(txid=st.integers(min_value=1, max_value=3))
    def rollback(self, txid: int) -> None:
        self.journal.rollback(txid)
        self.state.txs.pop(txid, None)

    @rule(txid=st.integers(min_value=1, max_value=3), xid=st.binary(max_size=16))
    def prepare(self, txid: int, xid: bytes) -> None:
        tx = self.state.txs.get(txid)
        if tx is not None and tx.prepared:
            try:
                self.journal.prepare(txid, xid)
            except StoreError:
                return
            raise AssertionError("a second prepare should have been refused")
        self.journal.prepare(txid, xid)
        tx = self.state.txs.setdefault(txid, TxModel())
        tx.prepared, tx.xid = True, xid

    # -- durability and restarts -------------------------------------------------------------
    @rule()
    def sync(self) -> None:
        self.journal.sync()
        self.durable = copy.deepcopy(self.state)

    @rule()
    def group_commit(self) -> None:
        # The writer's three steps, with the owner taking a second batch in between.
        j = self.journal
        first = j.take_pending()
        second = j.take_pending()
        assert second is None or (first is not None and second.lsn == first.lsn)
        if first is not None:
            j.write_pending(first)
            j.mark_durable(first.lsn)
        assert j.durable_lsn == j.appended_lsn
        self.durable = copy.deepcopy(self.state)

    @rule()
    def reopen(self) -> None:
        self.journal.close()
        self.journal = self.journal.crash() if isinstance(self.journal, MemoryJournal) else self._open()
        self.state = self.state.after_restart()
        self.check(self.journal.load())

    @rule()
    def crash(self) -> None:
        if isinstance(self.journal, MemoryJournal):
            self.journal = self.journal.crash()
        else:
            assert isinstance(self.journal, FileJournal)
            self.journal.abandon()
            self.journal = self._open()
        self.state = self.durable.after_restart()
        self.check(self.journal.load())

    @rule()
    def compact(self) -> None:
        self.journal.compact()  # type: ignore[attr-defined]
        self.durable = copy.deepcopy(self.state)

    # -- checks ------------------------------------------------------------------------------
    def check(self, loaded: LoadResult) -> None:
        assert loaded.torn_bytes == 0 and loaded.bad_records == 0
        assert loaded.records == [Record(rid, k, p) for rid, (k, p) in self.state.committed.items()]
        got = {tx.txid: (tx.xid, tx.adds, tx.updates, tx.deletes) for tx in loaded.prepared}
        want = {}
        for txid, tx in self.state.txs.items():
            adds = [Record(rid, k, p) for op, rid, k, p in tx.ops if op == ADD]
            updates = [Record(rid, k, p) for op, rid, k, p in tx.ops if op == UPDATE]
            deletes = [rid for op, rid, _k, _p in tx.ops if op == DELETE]
            want[txid] = (tx.xid, adds, updates, deletes)
        assert got == want
        self.durable = copy.deepcopy(self.state)

    @invariant()
    def counts_agree(self) -> None:
        stats = self.journal.stats()
        assert stats.live_records == len(self.state.committed)
        assert stats.open_transactions == len(self.state.txs)
        assert stats.prepared_transactions == sum(tx.prepared for tx in self.state.txs.values())
        assert stats.durable_lsn <= stats.appended_lsn


class MemoryJournalVsModel(JournalVsModel):
    kind = "memory"


JournalVsModel.TestCase.settings = settings(max_examples=120, stateful_step_count=50, deadline=None)
MemoryJournalVsModel.TestCase.settings = settings(max_examples=60, stateful_step_count=50, deadline=None)
TestFileJournalModel = JournalVsModel.TestCase
TestMemoryJournalModel = MemoryJournalVsModel.TestCase
