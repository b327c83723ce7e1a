"""FileJournal compaction: disk use follows the live set, and no crash point loses or
resurrects a record (the directory is copied at every filesystem step and reloaded)."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ferrymq.errors import StoreError
from ferrymq.store.file import FileJournal
from ferrymq.store.journal import Record
from ferrymq.store.memory import MemoryJournal

Model = dict[int, tuple[int, bytes]]


def disk_bytes(d: Path) -> int:
    return sum(f.stat().st_size for f in d.glob("*.seg*"))


def load(d: Path, **kw: Any) -> tuple[list[Record], list[int]]:
    j = FileJournal(d, **kw)
    try:
        loaded = j.load()
        return loaded.records, sorted(tx.txid for tx in loaded.prepared)
    finally:
        j.close()


def as_model(records: list[Record]) -> Model:
    return {r.record_id: (r.kind, r.payload) for r in records}


class Snapshots:
    """Copies of the journal directory taken right after each filesystem step of interest."""

    def __init__(self, src: Path, dest: Path) -> None:
        self.src = src
        self.dest = dest
        self.taken: list[Path] = []

    def take(self, label: str) -> None:
        copy = self.dest / f"{len(self.taken):04d}-{label}"
        shutil.copytree(self.src, copy)
        self.taken.append(copy)


class Recorder:
    def __init__(self) -> None:
        self.active: list[Snapshots] = []

    def start(self, snaps: Snapshots) -> None:
        self.active.append(snaps)

    def stop(self) -> None:
        self.active.clear()


@pytest.fixture
def fs_steps(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    """Patch os.write/rename/unlink/fsync so each call is followed by a directory copy."""
    recorder = Recorder()
    active = recorder.active
    originals = {name: getattr(os, name) for name in ("write", "rename", "unlink", "fsync")}

    def wrap(name: str) -> Callable[..., Any]:
        def step(*args: Any) -> Any:
            result = originals[name](*args)
            if active and not getattr(step, "busy", False):
                step.busy = True  # type: ignore[attr-defined]
                try:
                    active[0].take(name)
                finally:
                    step.busy = False  # type: ignore[attr-defined]
            return result
        return step

    for name in originals:
        monkeypatch.setattr(os, name, wrap(name))
    yield recorder
    recorder.stop()


def churn(j: FileJournal | MemoryJournal, model: Model, rng: random.Random, ops: int, next_id: list[int],
          keep: int = 20, random_syncs: bool = True) -> None:
    """Adds, updates, deletes and committed transactions, keeping about ``keep`` records live."""
    for _ in range(ops):
        roll = rng.random()
        if roll < 0.45 or len(model) < keep // 2:
            rid = next_id[0]
            if rid > 10 and rng.random() < 0.3 and (reuse := rng.randrange(1, rid)) not in model:
                rid = reuse  # ids come back after a delete: a new incarnation, at the end
            else:
                next_id[0] += 1
            payload = bytes([rid % 256]) * rng.randint(0, 120)
            j.add(rid, rid % 7, payload)
            model[rid] = (rid % 7, payload)
        elif roll < 0.6:
            rid = rng.choice(list(model))
            payload = b"u" * rng.randint(0, 60)
            j.update(rid, 3, payload)
            model[rid] = (3, payload)
        elif roll < 0.7:
            txid = rng.randint(1, 50)
            victim = rng.choice(list(model))
            rid = next_id[0]
            next_id[0] += 1
            j.delete(victim, txid=txid)
            j.add(rid, 1, b"tx", txid=txid)
            j.commit(txid)
            del model[victim]
            model[rid] = (1, b"tx")
        else:
            victim = rng.choice(list(model))
            j.delete(victim)
            del model[victim]
        while len(model) > keep:
            victim = next(iter(model))
            j.delete(victim)
            del model[victim]
        if rng.random() < 0.3 and random_syncs:
            j.sync()
    j.sync()


def test_disk_use_stays_proportional_to_live_records(tmp_path: Path) -> None:
    d = tmp_path / "j"
    kw = {"segment_size": 4096, "compact_min_bytes": 8192, "compact_step_bytes": 4096}
    j = FileJournal(d, **kw)
    j.load()
    model: Model = {}
    rng = random.Random(7)
    next_id = [1]
    peak = 0
    for _ in range(40):
        churn(j, model, rng, 100, next_id)
        assert j.stats().disk_bytes == sum(f.stat().st_size for f in d.glob("*.seg"))  # the owner's accounting
        peak = max(peak, disk_bytes(d))  # with a compaction's temporary file
    live = sum(40 + len(p) for _k, p in model.values())
    assert j.stats().compactions > 5
    # About live / (1 - ratio) + min bytes + four segments (file.py), plus the open segment,
    # one batch and the compaction's temporary file (a block each at least).
    assert peak < 2 * 20 * 160 + 8192 + 4 * 4096 + 3 * 4096, peak
    assert disk_bytes(d) < 4 * live + 8192 + 5 * 4096
    j.close()
    records, _ = load(d, **kw)
    assert as_model(records) == model


def test_the_check_for_a_compaction_reads_no_file_while_none_can_be_due(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every sync asks whether a compaction is due. After a look at the files found none,
    # the next look waits until the dead bytes have grown by the least any prefix lacked
    # (or a file is added): a queue drained slowly from old files asks 200 times here and
    # looks at most at each new file.
    kw = {"segment_size": 256 << 10, "compact_min_bytes": 64 << 20, "compact_step_bytes": 1 << 20}
    j = FileJournal(tmp_path / "j", **kw)
    j.load()
    passes = [0]
    real = FileJournal._skippable

    def counting(self: FileJournal, prefix: Any) -> list[bool]:
        passes[0] += 1
        return real(self, prefix)

    monkeypatch.setattr(FileJournal, "_skippable", counting)
    for rid in range(1, 1001):
        j.add(rid, 1, b"p" * 4000)
        if rid % 50 == 0:
            j.sync()
    files, before = j.stats().segments, passes[0]
    assert files >= 8
    for rid in range(1, 201):
        j.delete(rid)
        j.sync()
    assert passes[0] - before <= j.stats().segments - files + 1, passes[0] - before
    j.close()


def _due(j: FileJournal) -> int | None:
    """The prefix _maybe_compact must start a job on, by a look at every file (as it always
    looked before it kept counts): its length, or None."""
    from ferrymq.store.file import EMPTY_FILE

    count = len(j._segs) if j._sealed else len(j._segs) - 1
    if j._closing or j._appended_bytes < j._retry_at or count <= 0:
        return None
    prefix = j._segs[:count]
    skip = j._skippable(prefix)
    freed, cost = -EMPTY_FILE, 0
    for n, info in enumerate(prefix, 1):
        freed += info.dead
        if not skip[n - 1]:
            cost += 2 * info.size - info.dead
        if freed >= j._compact_min and freed >= cost:
            return n
    size = sum(info.size for info in prefix)
    if freed >= j._compact_min + 2 * j._segment_size and freed >= j._compact_ratio * size:
        return count
    return None


def test_the_counts_decide_each_compaction_as_a_look_at_every_file_would(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Through rolls, compactions, ids added again and loads: at every sync the journal starts
    # the compaction a look at every file would start, and its count of the closed files'
    # dead bytes is their sum.
    real = FileJournal._maybe_compact
    decided = [0, 0]

    def checked(self: FileJournal) -> Any:
        expected = _due(self)
        job = real(self)
        assert (job is None) == (expected is None)
        if job is not None:
            assert self._job_segs == expected
        decided[job is not None] += 1
        return job

    monkeypatch.setattr(FileJournal, "_maybe_compact", checked)
    d = tmp_path / "j"
    kw = {"segment_size": 4096, "compact_min_bytes": 8192, "compact_step_bytes": 4096}
    model: Model = {}
    rng = random.Random(11)
    next_id = [1]
    for _ in range(2):
        j = FileJournal(d, **kw)
        j.load()
        for _ in range(6):
            churn(j, model, rng, 100, next_id)
            assert j._closed_dead == sum(s.dead for s in j._segs[:-1])
        j.close()
    assert decided[1] > 3 and decided[0] > 40, decided
    records, _ = load(d, **kw)
    assert as_model(records) == model
    # A queue drained in order: its files die whole, and are passed over.
    kw = {"segment_size": 2048, "compact_min_bytes": 2048, "compact_step_bytes": 1024}
    j = FileJournal(tmp_path / "q", **kw)
    j.load()
    j.add(1, 9, b"definition")
    ids, live = [2], []
    for seed in range(2):
        _queue_like(j, random.Random(seed), 100, ids, live)
        assert j._closed_dead == sum(s.dead for s in j._segs[:-1])
    j.close()


def test_compaction_preserves_order_and_content_exactly(tmp_path: Path) -> None:
    # Same operations on a memory journal (never compacted) and a file journal compacted
    # at many points: load() must give the same list, order included.
    mem = MemoryJournal()
    mem.load()
    d = tmp_path / "j"
    kw = {"segment_size": 600, "compact_min_bytes": 300, "compact_step_bytes": 512}
    fj = FileJournal(d, **kw)
    fj.load()
    rng = random.Random(3)
    model_m: Model = {}
    model_f: Model = {}
    ids_m, ids_f = [1], [1]
    for round_ in range(30):
        seed = rng.randrange(1 << 30)
        churn(mem, model_m, random.Random(seed), 40, ids_m)
        churn(fj, model_f, random.Random(seed), 40, ids_f)
        if round_ % 7 == 3:
            fj.compact()
    mem.close()
    fj.close()
    restarted = mem.crash().load().records
    records, _ = load(d, **kw)
    assert records == restarted
    assert as_model(records) == model_f == model_m


def test_transactions_across_a_compaction(tmp_path: Path) -> None:
    d = tmp_path / "j"
    j = FileJournal(d, segment_size=300)
    j.load()
    for i in range(1, 11):
        j.add(i, 0, bytes([i]) * 30)
        j.sync()
    j.add(100, 1, b"prepared add", txid=1)
    j.update(2, 1, b"prepared update", txid=1)
    j.delete(3, txid=1)
    j.prepare(1, b"xid-1")
    j.add(200, 2, b"committed after compaction", txid=2)
    j.delete(4, txid=2)
    j.add(300, 3, b"crash leaves me open", txid=3)
    j.sync()
    for i in range(5, 11):
        j.delete(i)
    j.compact()
    j.commit(2)
    j.sync()
    j.abandon()  # crash: transaction 3 never ends on disk
    j = FileJournal(d, segment_size=300)
    loaded = j.load()
    assert [r.record_id for r in loaded.records] == [1, 2, 3, 200]
    (tx,) = loaded.prepared
    assert (tx.txid, tx.xid, tx.adds, tx.updates, tx.deletes) == (
        1, b"xid-1", [Record(100, 1, b"prepared add")], [Record(2, 1, b"prepared update")], [3])
    j.compact()  # now with the load-time rollback of transaction 3 inside the prefix
    j.add(301, 0, b"txid 3 reused", txid=3)
    j.commit(3)
    j.commit(1)
    j.close()
    records, prepared = load(d)
    assert [r.record_id for r in records] == [1, 2, 200, 301, 100] and prepared == []
    assert records[1] == Record(2, 1, b"prepared update")


def test_lsns_never_go_backwards_when_compaction_drops_the_newest_records(tmp_path: Path) -> None:
    d = tmp_path / "j"
    j = FileJournal(d)
    j.load()
    for i in range(1, 6):
        j.add(i, 0, b"x")
    for i in range(1, 6):
        j.delete(i)
    j.compact()
    last = j.appended_lsn
    j.close()
    j = FileJournal(d)
    assert j.load().records == []
    assert j.appended_lsn >= last
    j.close()


def test_failed_compaction_leaves_the_old_files_in_charge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "j"
    j = FileJournal(d, segment_size=300)
    j.load()
    for i in range(1, 21):
        j.add(i, 0, bytes([i]) * 50)
        j.sync()
    for i in range(1, 15):
        j.delete(i)
    j.sync()
    before = sorted(p.name for p in d.glob("*.seg"))
    real_fsync = os.fsync

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(StoreError, match="No space"):
        j.compact()
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert sorted(p.name for p in d.glob("*.seg*")) == before  # no temporary file left
    assert "No space" in j.stats().last_error
    j.add(99, 0, b"still writable")
    j.close()
    records, _ = load(d)
    assert [r.record_id for r in records] == [15, 16, 17, 18, 19, 20, 99]


def test_crash_at_every_step_of_a_compaction(tmp_path: Path, fs_steps: Recorder) -> None:
    d = tmp_path / "j"
    kw = {"segment_size": 700, "compact_min_bytes": 1 << 30}  # only the explicit compaction
    j = FileJournal(d, **kw)
    j.load()
    model: Model = {}
    churn(j, model, random.Random(11), 150, [1], keep=15)
    j.add(5000, 9, b"open", txid=77)
    j.prepare(77, b"in doubt")
    j.sync()
    files_before = len(list(d.glob("*.seg")))
    assert files_before > 4
    snaps = Snapshots(d, tmp_path / "snaps")
    fs_steps.start(snaps)
    j.compact()
    fs_steps.stop()
    j.close()
    labels = [p.name.split("-", 1)[1] for p in snaps.taken]
    assert {"write", "fsync", "rename", "unlink"} <= set(labels)
    # A crash while the new file was being written leaves it shorter: add such copies.
    variants = list(snaps.taken)
    for snap in snaps.taken:
        for tmp in snap.glob("*.tmp"):
            for fraction in (0.0, 0.3, 0.7):
                cut = tmp_path / "cuts" / f"{snap.name}-{fraction}"
                shutil.copytree(snap, cut)
                os.truncate(cut / tmp.name, int(tmp.stat().st_size * fraction))
                variants.append(cut)
    assert len(variants) > len(snaps.taken)
    for snap in variants:
        os.unlink(snap / "LOCK")
        records, prepared = load(snap, **kw)
        assert as_model(records) == model, snap.name
        assert prepared == [77], snap.name
        # Temporary files are gone, superseded files removed by the load.
        assert not list(snap.glob("*.tmp"))
        assert len(list(snap.glob("*.seg"))) in (1, 2, files_before)


def test_crash_at_every_step_of_an_incremental_compaction_under_load(tmp_path: Path, fs_steps: Recorder) -> None:
    # The job runs in slices inside write_pending while the owner keeps adding, updating
    # and deleting; every copy must reload to exactly what was synced when it was taken.
    d = tmp_path / "j"
    kw = {"segment_size": 500, "compact_min_bytes": 1500, "compact_step_bytes": 300}
    j = FileJournal(d, **kw)
    j.load()
    model: Model = {}
    rng = random.Random(5)
    next_id = [1]
    churn(j, model, rng, 120, next_id, keep=12)
    snaps = Snapshots(d, tmp_path / "snaps")
    expected: list[Model] = []
    fs_steps.start(snaps)
    busy = 0
    for _ in range(80):
        # A few operations and one sync: its batch is written first, so every copy taken
        # during the sync (the batch, then compaction slices) must load to the new state.
        churn(j, model, rng, 3, next_id, keep=12, random_syncs=False)
        expected.extend(dict(model) for _ in range(len(snaps.taken) - len(expected)))
        busy += j.stats().compacting
    fs_steps.stop()
    compactions = j.stats().compactions
    j.close()
    assert compactions >= 2 and busy >= 4  # jobs really spanned several syncs
    assert len(expected) == len(snaps.taken) > 100
    for snap, want in zip(snaps.taken, expected, strict=True):
        os.unlink(snap / "LOCK")
        records, _ = load(snap, **kw)
        assert as_model(records) == want, snap.name


def test_a_slice_never_acts_on_operations_not_yet_durable(tmp_path: Path) -> None:
    # The owner goes on appending while the writer runs a compaction slice; a delete
    # appended after the job's snapshot is not durable, so a crash must bring the record back.
    d = tmp_path / "j"
    j = FileJournal(d, segment_size=400, compact_min_bytes=600, compact_step_bytes=1 << 20)
    j.load()
    j.add(1, 0, b"survivor" * 10)
    j.sync()
    task = None
    for i in range(2, 200):
        j.add(i, 0, b"garbage" * 10)
        j.delete(i)
        pending = j.take_pending()
        assert pending is not None
        if pending.task is not None:
            task = pending.task
            j.delete(1)  # appended, never written
            j.write_pending(pending)  # the whole compaction runs here
            j.mark_durable(pending.lsn)
            break
        j.write_pending(pending)
        j.mark_durable(pending.lsn)
    assert task is not None and j.stats().compactions == 1
    j.abandon()
    records, _ = load(d)
    assert [r.record_id for r in records] == [1]


def _opened_sources(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The files compactions read, in order (their names' ranges)."""
    from ferrymq.store.compact import Compaction

    opened: list[tuple[int, int]] = []
    real = Compaction._open_source

    def spy(self: Compaction) -> None:
        sfile = self._sources[self._src]
        opened.append((sfile.lo, sfile.hi))
        real(self)

    monkeypatch.setattr(Compaction, "_open_source", spy)
    return opened


def _drain_in_order(j: FileJournal, rounds: int, *, txid: int = 0, first: int = 1) -> dict[int, bytes]:
    """A queue's life: each round adds 8 records and deletes the 8 oldest (after a start of
    16), then syncs. Returns what is live."""
    live: dict[int, bytes] = {}
    rid, head = first - 1, first
    for _ in range(rounds):
        for _ in range(8):
            rid += 1
            live[rid] = b"%08d" % rid * 25
            j.add(rid, 1, live[rid])
        while rid - head >= 16:
            j.delete(head, txid)
            del live[head]
            head += 1
        if txid:
            j.commit(txid)
        j.sync()
    return live


@pytest.mark.parametrize("txid", [0, 7])
def test_a_queue_drained_in_order_is_compacted_without_reading_its_dead_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, txid: int) -> None:
    opened = _opened_sources(monkeypatch)
    kw = {"segment_size": 8192, "compact_min_bytes": 8192, "compact_step_bytes": 4096}
    j = FileJournal(tmp_path, **kw)
    j.load()
    j.add(1, 2, b"a definition that lives in the first file for good")
    live = _drain_in_order(j, 200, txid=txid, first=2)  # ids only grow, as the engine's do
    live[1] = b"a definition that lives in the first file for good"
    st = j.stats()
    assert st.compactions > 10
    files = {lo for lo, _hi in opened}
    # Only the first file (the definition's) and the small ones compaction made from it are
    # read: never a file holding nothing but delivered records.
    assert files == {1}, opened
    assert st.disk_bytes < 6 * 8192 + 16 * 300
    j.close()
    records, _ = load(tmp_path, **kw)
    assert {r.record_id: r.payload for r in records} == live


def test_a_dead_file_that_still_holds_an_updated_records_place_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record added in a file whose every other record died, then updated in a later file:
    the first file holds its place in load()'s order, so compaction must read it."""
    opened = _opened_sources(monkeypatch)
    kw = {"segment_size": 4096, "compact_min_bytes": 4096, "compact_step_bytes": 4096}
    mem = MemoryJournal()
    mem.load()
    fj = FileJournal(tmp_path, **kw)
    fj.load()
    for j in (mem, fj):
        j.add(1, 1, b"kept")  # the definition: the first file is never wholly dead
        j.sync()
        for rid in range(2, 40):  # one batch: the second file
            j.add(rid, 1, b"%08d" % rid * 40)
        j.sync()
        j.add(50, 1, b"added after 20, so after it in the order")
        j.update(20, 1, b"updated, keeps its place")
        for rid in range(2, 40):
            if rid != 20:
                j.delete(rid)
        _drain_in_order(j, 60, first=100)
    assert fj.stats().compactions
    assert (2, 2) in opened
    fj.close()
    records, _ = load(tmp_path, **kw)
    again = mem.crash()
    expected = again.load().records
    assert [(r.record_id, r.payload) for r in records] == [(r.record_id, r.payload) for r in expected]
    assert [r.record_id for r in records[:3]] == [1, 20, 50]  # 20 keeps its place


def _definition_and_victim(d: Path) -> tuple[FileJournal, dict[str, Any]]:
    """A journal of 4096-byte files holding a record for good (1) and one that a
    transaction will delete (2), not yet synced; and the arguments to open it again."""
    kw: dict[str, Any] = {"segment_size": 4096, "compact_min_bytes": 4096, "compact_step_bytes": 4096}
    j = FileJournal(d, **kw)
    j.load()
    j.add(1, 1, b"definition")
    j.add(2, 1, b"to delete in the transaction")
    return j, kw


@pytest.mark.parametrize("ops", ["add", "deletes"])
def test_a_commit_in_a_dead_file_is_read_when_its_transaction_added(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ops: str) -> None:
    """A transaction whose operations are in one file and whose COMMIT is in a later file,
    otherwise wholly dead: passed over, the commit would be missing and the transaction's
    records copied as still open (rolled back at load). A commit of deletes only may be
    passed over: what it deleted is dead anyway."""
    opened = _opened_sources(monkeypatch)
    j, kw = _definition_and_victim(tmp_path)
    j.sync()  # file 1
    if ops == "add":
        j.add(3, 1, b"added by the transaction" * 10, txid=5)
    else:
        j.delete(2, txid=5)
    j.sync()  # file 2: the transaction's operation
    for rid in range(10, 20):
        j.add(rid, 1, b"x" * 300)
    for rid in range(10, 20):
        j.delete(rid)
    j.commit(5)
    j.sync()  # file 3: dead records and the COMMIT
    live = _drain_in_order(j, 40, first=100)
    live[1] = b"definition"
    if ops == "add":
        live[2] = b"to delete in the transaction"
        live[3] = b"added by the transaction" * 10
    assert j.stats().compactions
    assert ((3, 3) in opened) == (ops == "add"), opened
    j.close()
    records, _ = load(tmp_path, **kw)
    assert {r.record_id: r.payload for r in records} == live


def _queue_like(j: FileJournal | MemoryJournal, rng: random.Random, rounds: int, next_id: list[int],
                live: list[int]) -> None:
    """A queue's traffic, ids only growing: puts, gets in units of work that stay open
    across writes (committed or rolled back later), updates now and then, a definition
    updated in place."""
    open_tx: dict[int, list[int]] = {}
    for _ in range(rounds):
        for _ in range(rng.randint(0, 6)):
            rid = next_id[0]
            next_id[0] += 1
            j.add(rid, 1, bytes([rid % 256]) * rng.randint(100, 400))
            live.append(rid)
        if live and rng.random() < 0.1:
            j.update(rng.choice(live), 2, b"updated" * rng.randint(1, 20))
        if rng.random() < 0.05:
            j.update(1, 9, b"definition v%d" % rng.randint(0, 99))
        txid = rng.randint(1, 4)
        taken = open_tx.setdefault(txid, [])
        for _ in range(rng.randint(0, 4)):
            if live:
                rid = live.pop(0)
                j.delete(rid, txid=txid)
                taken.append(rid)
        if rng.random() < 0.1:
            rid = next_id[0]
            next_id[0] += 1
            j.add(rid, 1, b"added in a unit of work", txid=txid)
            taken.append(-rid)
        for t in list(open_tx):
            if rng.random() < 0.3:
                if rng.random() < 0.8:
                    j.commit(t)
                    live.extend(-r for r in open_tx[t] if r < 0)
                else:
                    j.rollback(t)
                    live[:0] = [r for r in open_tx[t] if r > 0]
                del open_tx[t]
        if rng.random() < 0.5:
            j.sync()
    for t, taken in open_tx.items():
        j.commit(t)
        live.extend(-r for r in taken if r < 0)
    j.sync()


@pytest.mark.parametrize("seed", range(6))
def test_skipping_dead_files_keeps_order_and_content_under_queue_traffic(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The memory journal (never compacted) and a file journal compacted all along, with a
    restart in the middle: load() gives the same records in the same order, and the file
    journal did pass over files."""
    from ferrymq.store.compact import Compaction

    skipped = [0]
    real = Compaction.__init__

    def counting(self: Compaction, *args: Any, **kw: Any) -> None:
        real(self, *args, **kw)
        skipped[0] += sum(kw.get("skip") or [])

    monkeypatch.setattr(Compaction, "__init__", counting)
    kw = {"segment_size": 2048, "compact_min_bytes": 2048, "compact_step_bytes": 1024}
    d = tmp_path / "j"
    mem: MemoryJournal = MemoryJournal()
    mem.load()
    fj = FileJournal(d, **kw)
    fj.load()
    for j in (mem, fj):
        j.add(1, 9, b"definition")
    ids_m, ids_f = [2], [2]
    live_m: list[int] = []
    live_f: list[int] = []
    _queue_like(mem, random.Random(seed), 150, ids_m, live_m)
    _queue_like(fj, random.Random(seed), 150, ids_f, live_f)
    fj.close()
    fj = FileJournal(d, **kw)
    fj.load()
    _queue_like(mem, random.Random(seed + 100), 150, ids_m, live_m)
    _queue_like(fj, random.Random(seed + 100), 150, ids_f, live_f)
    mem.close()
    fj.close()
    expected = mem.crash().load().records
    records, prepared = load(d, **kw)
    assert records == expected
    assert not prepared
    assert skipped[0] > 0


@pytest.mark.parametrize("then", ["commit", "prepare"])
def test_a_rolled_back_transaction_is_not_taken_in_by_its_txid_reused(tmp_path: Path, then: str) -> None:
    """Found by the model test: the ADD of transaction 1 in one file, its ROLLBACK alone in
    the next (wholly dead, so passed over) and the first file read: the ADD was copied as
    still open, and the next transaction 1 took it in (committed, or shown in doubt)."""
    kw: dict[str, Any] = {"segment_size": 300, "compact_min_bytes": 200, "compact_step_bytes": 256}
    j = FileJournal(tmp_path, **kw)
    j.load()
    j.prepare(1, b"")
    j.compact()
    j.commit(1)  # its COMMIT starts the second file, so that file must be read
    j.add(1, 0, b"", txid=1)
    j.sync()
    j.rollback(1)  # alone in the third file
    j.compact()
    j.prepare(1, b"")
    if then == "commit":
        j.commit(1)
    j.close()
    j = FileJournal(tmp_path, **kw)
    loaded = j.load()
    j.close()
    assert loaded.records == []
    assert [(tx.txid, tx.adds, tx.updates, tx.deletes) for tx in loaded.prepared] == (
        [(1, [], [], [])] if then == "prepare" else [])


@pytest.mark.parametrize("end", ["rollback", "deletes"])
def test_an_end_in_a_dead_file_is_read_when_its_operations_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, end: str) -> None:
    """A rollback, or a commit of deletes only, in a wholly dead file, of a transaction whose
    operation sits in a file that is read (it holds a live record): passed over, the
    operation would be copied as still open, and the txid's next transaction would take it
    in — the rolled-back add committed, or the delete replayed on the record added again."""
    opened = _opened_sources(monkeypatch)
    j, kw = _definition_and_victim(tmp_path)
    if end == "rollback":
        j.add(3, 1, b"added, then rolled back" * 10, txid=5)
    else:
        j.delete(2, txid=5)
    j.sync()  # file 1 (a batch fills a file of 4096 bytes): never wholly dead
    if end == "rollback":
        j.rollback(5)
    else:
        j.commit(5)
    j.sync()  # file 2: the end alone
    live = _drain_in_order(j, 40, first=100)
    assert j.stats().compactions
    assert (2, 2) in opened, opened
    again = b"added again" if end == "deletes" else b"to delete in the transaction"
    if end == "deletes":
        j.add(2, 1, again)  # the contract allows it (the engine's ids only grow)
    j.add(4, 1, b"the txid reused")
    j.delete(4, txid=5)
    j.prepare(5, b"xid")
    j.close()
    live.update({1: b"definition", 2: again, 4: b"the txid reused"})
    j = FileJournal(tmp_path, **kw)
    loaded = j.load()
    j.close()
    assert {r.record_id: r.payload for r in loaded.records} == live
    assert [(tx.txid, tx.adds, tx.deletes) for tx in loaded.prepared] == [(5, [], [4])]
