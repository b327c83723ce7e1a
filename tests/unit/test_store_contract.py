"""One contract, two journals: every test here runs against MemoryJournal and FileJournal.

A Harness hides the one thing that differs, how a journal is restarted: ``reopen`` is a
clean close and open; ``crash`` loses whatever was never handed to the writer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ferrymq.errors import StoreError
from ferrymq.store.file import FileJournal
from ferrymq.store.journal import Journal, LoadResult, Record, Trim
from ferrymq.store.memory import MemoryJournal


class Harness:
    def __init__(self, kind: str, tmp: Path) -> None:
        self.kind = kind
        self.tmp = tmp
        self.journal: Journal = self._new()
        self.loaded = self.journal.load()

    def _new(self) -> Journal:
        # Small segments so that the contract is also exercised across file boundaries.
        return MemoryJournal() if self.kind == "memory" else FileJournal(self.tmp / "j", segment_size=512)

    def reopen(self, trim: Trim | None = None) -> LoadResult:
        self.journal.close()
        if isinstance(self.journal, MemoryJournal):
            self.journal = self.journal.crash()
        else:
            self.journal = self._new()
        self.loaded = self.journal.load(trim)
        return self.loaded

    def crash(self) -> LoadResult:
        if isinstance(self.journal, MemoryJournal):
            self.journal = self.journal.crash()
        else:
            assert isinstance(self.journal, FileJournal)
            self.journal.abandon()
            self.journal = self._new()
        self.loaded = self.journal.load()
        return self.loaded

    def compact(self) -> None:
        assert isinstance(self.journal, MemoryJournal | FileJournal)
        self.journal.compact()

    def live(self) -> dict[int, tuple[int, bytes]]:
        return {r.record_id: (r.kind, r.payload) for r in self.loaded.records}


@pytest.fixture(params=["memory", "file"])
def h(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    harness = Harness(request.param, tmp_path)
    yield harness
    harness.journal.close()


def test_fresh_journal_is_empty(h: Harness) -> None:
    assert h.loaded == LoadResult([], [], 0, 0)
    assert h.journal.appended_lsn == 0 and h.journal.durable_lsn == 0
    assert h.journal.take_pending() is None


def test_add_update_delete_survive_reopen_in_first_added_order(h: Harness) -> None:
    j = h.journal
    j.add(3, 1, b"three")
    j.add(1, 2, b"one")
    j.add(2, 1, b"two")
    j.update(3, 7, b"THREE")  # an update keeps the record's place
    j.delete(1)
    j.add(1, 2, b"one again")  # a re-added id goes to the end
    loaded = h.reopen()
    assert loaded.records == [Record(3, 7, b"THREE"), Record(2, 1, b"two"), Record(1, 2, b"one again")]
    assert loaded.prepared == [] and loaded.torn_bytes == 0 and loaded.bad_records == 0


def test_payload_edge_cases(h: Harness) -> None:
    h.journal.add(1, 0, b"")
    h.journal.add(2, 255, bytes(range(256)) * 40)
    h.journal.add((1 << 64) - 1, 9, bytearray(b"from a bytearray"))  # type: ignore[arg-type]
    assert h.reopen().records == [Record(1, 0, b""), Record(2, 255, bytes(range(256)) * 40),
                                  Record((1 << 64) - 1, 9, b"from a bytearray")]


def test_a_payload_given_in_parts_is_their_concatenation(h: Harness) -> None:
    # Small parts and large ones (a large part is written from where it lies), in and out of
    # a transaction, by add and update; read back and replayed as one payload.
    body = bytes(range(256)) * 300
    h.journal.add(1, 1, (b"head", b"", b"descriptor" * 40, body))
    h.journal.add(2, 2, (body, b"tail"), txid=5)
    h.journal.add(3, 3, (b"only",))
    h.journal.add(4, 4, ())
    h.journal.commit(5)
    h.journal.update(3, 7, (b"new head", body[:5000], bytearray(b"from a bytearray")))  # type: ignore[arg-type]
    h.journal.sync()
    want = {1: (1, b"head" + b"descriptor" * 40 + body), 2: (2, body + b"tail"),
            3: (7, b"new head" + body[:5000] + b"from a bytearray"), 4: (4, b"")}
    assert {rid: h.journal.read(rid) for rid in want} == {rid: payload for rid, (_kind, payload) in want.items()}
    assert [h.journal.size(rid) for rid in want] == [len(payload) for _kind, payload in want.values()]
    h.reopen()
    assert h.live() == want


def test_each_operation_takes_the_next_lsn(h: Harness) -> None:
    j = h.journal
    assert [j.add(1, 0, b"a"), j.add(2, 0, b"b", txid=4), j.update(1, 0, b"c"), j.delete(2, txid=4),
            j.prepare(4, b"x"), j.commit(4), j.add(5, 0, b"", txid=9), j.rollback(9)] == list(range(1, 9))
    assert j.appended_lsn == 8 and j.durable_lsn == 0


def test_empty_transaction_end_writes_nothing(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    assert j.commit(77) == 1 and j.rollback(78) == 1
    assert j.appended_lsn == 1


def test_take_pending_mark_durable(h: Harness) -> None:
    j = h.journal
    lsn = j.add(1, 0, b"a")
    pending = j.take_pending()
    assert pending is not None and pending.lsn == lsn
    assert j.take_pending() is None  # nothing new since
    assert j.durable_lsn == 0
    j.write_pending(pending)
    j.mark_durable(pending.lsn)
    assert j.durable_lsn == lsn
    j.mark_durable(0)  # never backwards
    assert j.durable_lsn == lsn
    with pytest.raises(StoreError, match="beyond"):
        j.mark_durable(lsn + 5)


def test_group_commit_batches(h: Harness) -> None:
    j = h.journal
    first = [j.add(i, 0, b"x" * i) for i in range(1, 6)]
    p1 = j.take_pending()
    second = [j.add(i, 0, b"y") for i in range(6, 9)]  # appended while p1 is "being written"
    p2 = j.take_pending()
    assert p1 is not None and p2 is not None and p1.lsn == first[-1] and p2.lsn == second[-1]
    j.write_pending(p1)
    j.mark_durable(p1.lsn)
    assert j.durable_lsn == first[-1]
    j.write_pending(p2)
    j.mark_durable(p2.lsn)
    assert j.durable_lsn == second[-1]
    assert [r.record_id for r in h.reopen().records] == list(range(1, 9))


def test_sync_makes_everything_durable(h: Harness) -> None:
    h.journal.add(1, 0, b"a")
    h.journal.add(2, 0, b"b")
    h.journal.sync()
    assert h.journal.durable_lsn == h.journal.appended_lsn == 2


def test_crash_keeps_durable_and_drops_unhanded_operations(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"kept")
    j.add(2, 0, b"kept")
    j.sync()
    j.update(1, 0, b"lost")
    j.delete(2)
    j.add(3, 0, b"lost")
    assert h.crash().records == [Record(1, 0, b"kept"), Record(2, 0, b"kept")]


def test_lsns_keep_growing_across_restarts(h: Harness) -> None:
    h.journal.add(1, 0, b"a")
    h.journal.delete(1)
    h.reopen()
    assert h.journal.appended_lsn >= 2
    assert h.journal.add(1, 0, b"b") > 2


def test_validation(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    cases: list[Callable[[], object]] = [
        lambda: j.add(1, 0, b"dup"),
        lambda: j.update(2, 0, b"missing"),
        lambda: j.delete(2),
        lambda: j.add(0, 0, b"id zero"),
        lambda: j.add(1 << 64, 0, b"id too big"),
        lambda: j.add(-1, 0, b""),
        lambda: j.add(5, 256, b"kind"),
        lambda: j.add(5, -1, b"kind"),
        lambda: j.add(5, 0, "text"),  # type: ignore[arg-type]
        lambda: j.add(5, 0, (b"a", "text")),  # type: ignore[arg-type]
        lambda: j.add(5, 0, [b"a list"]),  # type: ignore[arg-type]
        lambda: j.add(5, 0, (bytes(1 << 20),) * 257),
        lambda: j.add(5, 0, b"", txid=-3),
        lambda: j.add(5, 0, b"", txid=1 << 64),
        lambda: j.commit(0),
        lambda: j.prepare(7, b"x" * 1025),
    ]
    for case in cases:
        with pytest.raises(StoreError):
            case()
    assert j.appended_lsn == 1  # a refused operation takes no LSN


def test_a_run_of_adds_is_those_adds_in_order(h: Harness) -> None:
    # add_run: what the adds one by one would do, LSN by LSN, in and out of a transaction,
    # payloads whole or in parts (a large part written from where it lies); an empty run
    # appends nothing.
    j = h.journal
    body = bytes(range(256)) * 20
    assert j.add_run(4, [(1, b"one"), (2, (b"head", body)), (3, ())]) == 3
    assert j.add_run(4, []) == 3
    assert j.add_run(5, [(10, (b"a", b"b")), (11, body)], txid=7) == 5
    j.update(10, 6, b"seen in its unit", txid=7)
    j.commit(7)
    assert h.reopen().records == [Record(1, 4, b"one"), Record(2, 4, b"head" + body), Record(3, 4, b""),
                                  Record(10, 6, b"seen in its unit"), Record(11, 5, body)]


def test_a_refused_run_appends_none_of_its_adds(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    j.delete(1, txid=3)
    refused: list[Callable[[], object]] = [
        lambda: j.add_run(0, [(5, b"fine"), (1, b"live")]),
        lambda: j.add_run(0, [(5, b"fine"), (6, b"fine"), (5, b"twice")], txid=4),
        lambda: j.add_run(0, [(5, b"fine"), (0, b"id zero")]),
        lambda: j.add_run(0, [(5, b"fine"), (6, "text")]),  # type: ignore[list-item]
        lambda: j.add_run(256, [(5, b"kind")]),
        lambda: j.add_run(0, [(5, b"fine"), (1, b"held by transaction 3")], txid=4),
    ]
    for case in refused:
        with pytest.raises(StoreError):
            case()
    assert j.appended_lsn == 2  # a refused run takes no LSN
    j.add_run(0, [(5, b"five"), (6, b"six")])
    j.commit(3)
    assert h.reopen().records == [Record(5, 0, b"five"), Record(6, 0, b"six")]


def test_a_run_of_deletes_is_those_deletes_in_order(h: Harness) -> None:
    # delete_run: what the deletes one by one would do, in and out of a transaction; an
    # empty run appends nothing.
    j = h.journal
    j.add_run(0, [(1, b"a"), (2, b"b"), (3, b"c"), (4, b"d"), (5, b"e")])
    assert j.delete_run([4, 2]) == 7
    assert j.delete_run([]) == 7
    assert j.delete_run([1, 5], txid=9) == 9
    j.add(6, 0, b"f", txid=9)
    assert h.reopen().records == [Record(1, 0, b"a"), Record(3, 0, b"c"), Record(5, 0, b"e")]  # 9 never ended
    h.journal.delete_run([1, 5], txid=9)
    h.journal.commit(9)
    assert h.reopen().records == [Record(3, 0, b"c")]


def test_a_refused_run_of_deletes_deletes_none(h: Harness) -> None:
    j = h.journal
    j.add_run(0, [(1, b"a"), (2, b"b"), (3, b"c")])
    j.delete(3, txid=4)
    refused: list[Callable[[], object]] = [
        lambda: j.delete_run([1, 7]),  # never added
        lambda: j.delete_run([1, 2, 1], txid=5),  # deleted earlier in the run
        lambda: j.delete_run([1, 0]),
        lambda: j.delete_run([1, 3], txid=5),  # held by transaction 4
        lambda: j.delete_run([2, 3]),  # deleted in transaction 4, seen outside it
    ]
    for case in refused:
        with pytest.raises(StoreError):
            case()
    assert j.appended_lsn == 4  # a refused run takes no LSN
    j.commit(4)
    assert h.reopen().records == [Record(1, 0, b"a"), Record(2, 0, b"b")]


def test_lifecycle_errors(tmp_path: Path) -> None:
    for j in (MemoryJournal(), FileJournal(tmp_path / "j")):
        with pytest.raises(StoreError, match="load"):
            j.add(1, 0, b"")
        j.load()
        with pytest.raises(StoreError, match="already"):
            j.load()
        j.close()
        j.close()  # idempotent
        with pytest.raises(StoreError, match="closed"):
            j.add(1, 0, b"")
        assert j.take_pending() is None


def test_commit_applies_in_order_and_survives(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"old")
    j.add(2, 0, b"gone")
    j.add(10, 1, b"new", txid=5)
    j.update(10, 2, b"newer", txid=5)  # the transaction sees its own add
    j.update(1, 0, b"changed", txid=5)
    j.delete(2, txid=5)
    j.add(2, 3, b"re-added", txid=5)  # and its own delete
    assert h.reopen().records == [Record(1, 0, b"old"), Record(2, 0, b"gone")]  # never committed

    j = h.journal
    j.add(10, 1, b"new", txid=5)  # the txid is free again after the restart
    j.update(1, 0, b"changed", txid=5)
    j.delete(2, txid=5)
    j.commit(5)
    assert h.reopen().records == [Record(1, 0, b"changed"), Record(10, 1, b"new")]


def test_rollback_forgets_and_frees(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    j.delete(1, txid=3)
    j.add(2, 0, b"b", txid=3)
    j.rollback(3)
    j.delete(1)  # no longer held by transaction 3
    j.add(2, 0, b"immediate")
    assert h.reopen().records == [Record(2, 0, b"immediate")]


def test_records_belong_to_their_open_transaction(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    j.delete(1, txid=3)
    j.add(2, 0, b"b", txid=3)
    refused: list[Callable[[], object]] = [
        lambda: j.update(1, 0, b"x"), lambda: j.delete(1, txid=4), lambda: j.add(2, 0, b""),
        lambda: j.add(2, 0, b"", txid=4), lambda: j.delete(1, txid=3), lambda: j.add(2, 0, b"", txid=3)]
    for case in refused:
        with pytest.raises(StoreError):
            case()
    j.commit(3)
    assert h.reopen().records == [Record(2, 0, b"b")]


def test_transaction_open_at_restart_is_rolled_back(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    j.add(2, 0, b"uncommitted", txid=8)
    j.delete(1, txid=8)
    j.sync()
    loaded = h.crash()
    assert loaded.records == [Record(1, 0, b"a")] and loaded.prepared == []
    # Reusing txid 8 must not drag the old operations into the new transaction.
    h.journal.add(3, 0, b"c", txid=8)
    h.journal.commit(8)
    assert h.reopen().records == [Record(1, 0, b"a"), Record(3, 0, b"c")]


def test_commit_not_durable_at_crash_is_rolled_back(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    j.delete(1, txid=2)
    j.add(2, 0, b"b", txid=2)
    j.sync()
    j.commit(2)  # never handed to the writer
    assert h.crash().records == [Record(1, 0, b"a")]


def test_prepared_transaction_survives_and_commits_later(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    j.add(2, 0, b"b")
    j.add(3, 4, b"c", txid=11)
    j.update(1, 5, b"A", txid=11)
    j.delete(2, txid=11)
    j.prepare(11, b"gtrid-bqual")
    j.prepare(12, b"empty branch")
    with pytest.raises(StoreError, match="prepared"):
        j.add(9, 0, b"", txid=11)
    with pytest.raises(StoreError, match="already prepared"):
        j.prepare(11, b"again")
    j.sync()
    loaded = h.crash()
    assert loaded.records == [Record(1, 0, b"a"), Record(2, 0, b"b")]
    assert len(loaded.prepared) == 2
    tx = next(t for t in loaded.prepared if t.txid == 11)
    assert (tx.xid, tx.adds, tx.updates, tx.deletes) == (b"gtrid-bqual", [Record(3, 4, b"c")], [Record(1, 5, b"A")], [2])
    empty = next(t for t in loaded.prepared if t.txid == 12)
    assert (empty.xid, empty.adds, empty.updates, empty.deletes) == (b"empty branch", [], [], [])
    # Still locked after the restart, and still prepared.
    with pytest.raises(StoreError):
        h.journal.delete(2)
    with pytest.raises(StoreError, match="prepared"):
        h.journal.add(9, 0, b"", txid=11)
    h.journal.commit(11)
    h.journal.rollback(12)
    loaded = h.reopen()
    assert loaded.records == [Record(1, 5, b"A"), Record(3, 4, b"c")] and loaded.prepared == []


def test_prepared_transaction_rolled_back_after_restart(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    j.delete(1, txid=4)
    j.prepare(4, b"x")
    assert len(h.reopen().prepared) == 1
    h.journal.rollback(4)
    h.journal.update(1, 0, b"free again")
    loaded = h.reopen()
    assert loaded.records == [Record(1, 0, b"free again")] and loaded.prepared == []


def test_stats(h: Harness) -> None:
    j = h.journal
    j.add(1, 0, b"a")
    j.add(2, 0, b"b", txid=3)
    j.prepare(3, b"x")
    j.add(4, 0, b"d", txid=5)
    j.sync()
    s = j.stats()
    assert (s.appended_lsn, s.durable_lsn, s.live_records, s.open_transactions, s.prepared_transactions) == (4, 4, 1, 2, 1)


def test_many_records_across_segments(h: Harness) -> None:
    j = h.journal
    expected: dict[int, tuple[int, bytes]] = {}
    for i in range(1, 301):
        j.add(i, i % 7, bytes([i % 256]) * (i % 50))
        expected[i] = (i % 7, bytes([i % 256]) * (i % 50))
        if i % 3 == 0:
            j.delete(i - 1)
            del expected[i - 1]
        if i % 10 == 0:
            j.sync()
    h.reopen()
    assert h.live() == expected


def test_read_gives_the_current_payload_once_durable(h: Harness) -> None:
    j = h.journal
    j.add(1, 3, b"one")
    j.add(2, 0, b"")
    j.add(3, 0, b"three")
    with pytest.raises(StoreError, match="not durable"):
        j.read(1)
    j.sync()
    assert (j.read(1), j.read(2), j.read(3)) == (b"one", b"", b"three")
    j.update(1, 4, b"ONE")
    with pytest.raises(StoreError, match="not durable"):
        j.read(1)  # the old content is no longer the record's
    j.delete(3)
    with pytest.raises(StoreError, match="does not exist"):
        j.read(3)
    with pytest.raises(StoreError, match="does not exist"):
        j.read(99)
    j.add(4, 0, b"four", txid=7)
    j.update(2, 0, b"two", txid=7)
    j.sync()
    assert j.read(2) == b""  # the transaction's update is not the record's content until commit
    with pytest.raises(StoreError, match="does not exist"):
        j.read(4)
    j.commit(7)
    j.sync()
    assert (j.read(1), j.read(2), j.read(4)) == (b"ONE", b"two", b"four")
    h.reopen()
    assert [h.journal.read(i) for i in (1, 2, 4)] == [b"ONE", b"two", b"four"]
    h.journal.close()
    with pytest.raises(StoreError, match="closed"):
        h.journal.read(1)


def test_read_before_load_fails(tmp_path: Path) -> None:
    for j in (MemoryJournal(), FileJournal(tmp_path / "j")):
        with pytest.raises(StoreError, match="not loaded"):
            j.read(1)
        j.close()


def test_load_trim_shortens_live_records_and_read_gives_them_whole(h: Harness) -> None:
    j = h.journal
    j.add(1, 1, b"abcdef")
    j.add(2, 2, b"xy")
    j.add(3, 1, b"ghijkl", txid=5)
    j.commit(5)
    j.add(4, 1, b"prepared", txid=6)
    j.prepare(6, b"x")
    j.add(5, 1, b"gone")
    j.delete(5)
    j.update(2, 2, b"xyz")
    seen: list[tuple[int, bytes]] = []

    def trim(kind: int, payload: memoryview) -> int:
        seen.append((kind, bytes(payload)))
        return 3 if kind == 1 else -1

    loaded = h.reopen(trim)
    assert loaded.records == [Record(1, 1, b"abc"), Record(2, 2, b""), Record(3, 1, b"ghi")]
    assert loaded.prepared[0].adds == [Record(4, 1, b"prepared")]  # whole: not live yet
    assert (1, b"abcdef") in seen and (2, b"xyz") in seen
    assert [h.journal.read(i) for i in (1, 2, 3)] == [b"abcdef", b"xyz", b"ghijkl"]
    assert [h.journal.size(i) for i in (1, 2, 3)] == [6, 3, 6]
    with pytest.raises(StoreError, match="does not exist"):
        h.journal.size(5)
    h.journal.commit(6)
    h.journal.sync()
    assert h.journal.read(4) == b"prepared"
    assert h.reopen(lambda kind, payload: len(payload) + 10).records[-1] == Record(4, 1, b"prepared")


def test_read_follows_records_through_compaction_and_restart(h: Harness) -> None:
    j = h.journal
    model: dict[int, bytes] = {}
    for i in range(1, 121):
        model[i] = bytes([i]) * (i % 40)
        j.add(i, 1, model[i])
        if i % 4 == 0:
            j.delete(i - 2)
            del model[i - 2]
        if i % 5 == 0:
            model[i - 1] = b"updated %d" % i
            j.update(i - 1, 1, model[i - 1])
        if i % 10 == 0:
            j.sync()
    # An open transaction whose records are in the compacted files, committed afterwards,
    # and a prepared one that is still open across a restart.
    j.add(500, 1, b"in a transaction", txid=9)
    j.update(3, 1, b"three in a transaction", txid=9)
    j.add(501, 1, b"prepared add", txid=10)
    j.prepare(10, b"xid")
    j.sync()
    h.compact()
    assert {i: j.read(i) for i in model} == model
    j.commit(9)
    model[500], model[3] = b"in a transaction", b"three in a transaction"
    j.add(502, 1, b"after")
    model[502] = b"after"
    j.sync()
    assert {i: j.read(i) for i in model} == model
    h.compact()
    assert {i: j.read(i) for i in model} == model
    h.reopen()
    assert {i: h.journal.read(i) for i in model} == model
    h.journal.commit(10)
    h.journal.sync()
    h.compact()
    model[501] = b"prepared add"
    assert {i: h.journal.read(i) for i in model} == model
    h.reopen()
    assert {i: h.journal.read(i) for i in model} == model
