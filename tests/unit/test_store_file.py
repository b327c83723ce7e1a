"""FileJournal on disk: torn tails, damaged records, segment files, the directory lock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import entries_of

from ferrymq.errors import StoreError
from ferrymq.store import records as rec
from ferrymq.store import segments as seg
from ferrymq.store.file import FileJournal
from ferrymq.store.journal import Pending, Record


def segment_files(d: Path) -> list[Path]:
    return sorted(d.glob("*.seg"))


def write_synced(d: Path, n: int, payload: int = 20, **kw: int) -> list[Record]:
    """n records, each in its own synced batch."""
    j = FileJournal(d, **kw)
    j.load()
    out = []
    for i in range(1, n + 1):
        out.append(Record(i, i % 5, bytes([i]) * payload))
        j.add(i, i % 5, bytes([i]) * payload)
        j.sync()
    j.close()
    return out


def reload(d: Path, **kw: int) -> tuple[FileJournal, list[Record], int, int]:
    j = FileJournal(d, **kw)
    loaded = j.load()
    return j, loaded.records, loaded.torn_bytes, loaded.bad_records


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x5A
    path.write_bytes(bytes(data))


def offsets_in(start: int, end: int) -> list[int]:
    """Every offset in the records' first bytes, then a sample through the PAD's zeros."""
    dense = start + 3 * rec.HEADER_SIZE + 64
    return [*range(start, min(dense, end)), *range(dense, end, 61), end - 1]


def test_torn_tail_at_every_byte_offset_is_discarded_and_counted(tmp_path: Path) -> None:
    src = tmp_path / "src"
    expected = write_synced(src, 4)
    (seg_path,) = segment_files(src)
    entries = entries_of(seg_path)
    batch_start = entries[-4][1]  # end of the previous batch's PAD: the last batch is [ADD, BATCH, PAD]
    size = seg_path.stat().st_size
    assert [e[2] for e in entries[-3:]] == [rec.ADD, rec.BATCH, rec.PAD] and entries[-1][1] == size
    for cut in offsets_in(batch_start + 1, size):
        d = tmp_path / f"cut{cut}"
        shutil.copytree(src, d)
        os.truncate(d / seg_path.name, cut)
        j, records, torn, bad = reload(d)
        assert (records, torn, bad) == (expected[:-1], cut - batch_start, 0), cut
        assert (d / seg_path.name).stat().st_size == batch_start  # truncated away for good
        j.add(99, 0, b"after")
        j.close()
        _j2, records2, torn2, bad2 = reload(d)
        assert (records2, torn2, bad2) == ([*expected[:-1], Record(99, 0, b"after")], 0, 0), cut
        _j2.close()
        shutil.rmtree(d)


def test_damage_anywhere_in_the_last_batch_discards_that_batch(tmp_path: Path) -> None:
    # A crash can persist a batch's pages out of order: the file may end with an intact
    # BATCH record while a record before it is garbage. That batch was never acknowledged.
    # A padded batch whose PAD is damaged is such a batch too.
    src = tmp_path / "src"
    expected = write_synced(src, 3)
    (seg_path,) = segment_files(src)
    entries = entries_of(seg_path)
    batch_start, size = entries[-4][1], seg_path.stat().st_size
    for offset in offsets_in(batch_start, size):
        d = tmp_path / f"flip{offset}"
        shutil.copytree(src, d)
        flip(d / seg_path.name, offset)
        j, records, torn, bad = reload(d)
        assert (records, torn, bad) == (expected[:-1], size - batch_start, 0), offset
        j.close()
        shutil.rmtree(d)


def test_mid_file_damage_at_every_byte_of_a_record_is_skipped_and_counted(tmp_path: Path) -> None:
    src = tmp_path / "src"
    expected = write_synced(src, 5, payload=12)
    (seg_path,) = segment_files(src)
    victim = [e for e in entries_of(seg_path) if e[2] == rec.ADD][2]  # record 3, mid-file
    for offset in range(victim[0], victim[1]):
        d = tmp_path / f"flip{offset}"
        shutil.copytree(src, d)
        flip(d / seg_path.name, offset)
        j, records, torn, bad = reload(d)
        assert (records, torn, bad) == ([r for r in expected if r.record_id != 3], 0, 1), offset
        j.close()
        shutil.rmtree(d)


def test_damage_in_an_older_segment_is_skipped_and_later_records_are_right(tmp_path: Path) -> None:
    d = tmp_path / "j"
    expected = write_synced(d, 40, payload=30, segment_size=300, compact_min_bytes=1 << 30)
    files = segment_files(d)
    assert len(files) > 3
    victim = next(e for e in entries_of(files[1]) if e[2] == rec.ADD)
    flip(files[1], victim[0] + rec.HEADER_SIZE + 3)  # payload byte: length intact
    victim2 = next(e for e in entries_of(files[2]) if e[2] == rec.ADD)
    flip(files[2], victim2[0] + 9)  # length byte: resynchronise by the magic number
    j, records, torn, bad = reload(d, segment_size=300, compact_min_bytes=1 << 30)
    lost = {victim[6], victim2[6]}
    assert (records, torn, bad) == ([r for r in expected if r.record_id not in lost], 0, 2)
    j.close()


def test_forged_record_inside_a_payload_is_not_resynchronised_onto(tmp_path: Path) -> None:
    d = tmp_path / "j"
    j = FileJournal(d)
    j.load()
    # A caller-controlled payload that holds a well-formed record (any salt the attacker
    # could guess: 0 is the header's) — it must never be read as one.
    forged = b"".join(rec.encode(s, rec.ADD, 0, 0, 1000, 666, 0, b"evil") for s in (0, 1, 0xFFFFFFFF))
    j.add(1, 0, b"fine")
    j.sync()
    j.add(2, 0, b"<" + forged + b">")
    j.sync()
    j.add(3, 0, b"fine")
    j.sync()
    j.close()
    (seg_path,) = segment_files(d)
    victim = [e for e in entries_of(seg_path) if e[2] == rec.ADD][1]
    flip(seg_path, victim[0] + 1)  # its crc: resync has to search through the payload
    j, records, _torn, bad = reload(d)
    assert [r.record_id for r in records] == [1, 3] and bad == 1
    j.close()


def test_segment_rollover_and_files(tmp_path: Path) -> None:
    d = tmp_path / "j"
    j = FileJournal(d, segment_size=3 * rec.BLOCK, compact_min_bytes=1 << 30)
    j.load()
    for i in range(1, 101):
        j.add(i, 0, b"p" * 50)
        if i % 4 == 0:
            j.sync()  # a batch of one block (padded)
    j.sync()
    files = segment_files(d)
    assert len(files) >= 8
    assert [f.name for f in files] == [f"{n:010d}-{n:010d}.seg" for n in range(1, len(files) + 1)]
    # Soft limit: a segment ends with the batch that crossed segment_size.
    assert all(f.stat().st_size <= 4 * rec.BLOCK for f in files)
    assert j.stats().segments == len(files)
    assert j.stats().disk_bytes == sum(f.stat().st_size for f in files)
    j.close()
    j, records, _, _ = reload(d, segment_size=3 * rec.BLOCK, compact_min_bytes=1 << 30)
    assert [r.record_id for r in records] == list(range(1, 101))
    j.add(101, 0, b"x")
    j.close()
    assert len(segment_files(d)) == len(files) + 1  # a restart starts a new segment


def test_transaction_spanning_segments(tmp_path: Path) -> None:
    d = tmp_path / "j"
    j = FileJournal(d, segment_size=256)
    j.load()
    j.add(1, 0, b"a" * 100)
    j.sync()
    j.add(2, 0, b"b" * 100, txid=3)
    j.sync()
    j.delete(1, txid=3)
    j.sync()
    j.add(4, 0, b"d" * 100)
    j.sync()
    j.commit(3)
    j.close()
    assert len(segment_files(d)) >= 3
    j, records, _, _ = reload(d, segment_size=256)
    assert [r.record_id for r in records] == [4, 2]  # a transactional add takes its place at commit
    j.close()


def test_torn_creation_of_a_new_segment(tmp_path: Path) -> None:
    d = tmp_path / "j"
    expected = write_synced(d, 3)
    (d / "0000000002-0000000002.seg").write_bytes(b"\x00" * 30)  # crash while creating it
    j, records, torn, bad = reload(d)
    assert (records, torn, bad) == (expected, 30, 0)
    assert [f.name for f in segment_files(d)] == ["0000000001-0000000001.seg"]
    j.add(10, 0, b"x")
    j.close()
    j, records, torn, _ = reload(d)
    assert records == [*expected, Record(10, 0, b"x")] and torn == 0
    j.close()


def test_missing_or_damaged_older_files_refuse_to_load(tmp_path: Path) -> None:
    d = tmp_path / "j"
    write_synced(d, 30, payload=40, segment_size=300, compact_min_bytes=1 << 30)
    files = segment_files(d)
    gap = tmp_path / "gap"
    shutil.copytree(d, gap)
    (gap / files[1].name).unlink()
    with pytest.raises(StoreError, match="segment 2 is missing"):
        FileJournal(gap).load()
    header = tmp_path / "header"
    shutil.copytree(d, header)
    flip(header / files[1].name, 50)
    with pytest.raises(StoreError, match="checksum"):
        FileJournal(header).load()
    overlap = tmp_path / "overlap"
    shutil.copytree(d, overlap)
    shutil.copy(overlap / files[1].name, overlap / "0000000002-0000000004.seg")
    shutil.copy(overlap / files[1].name, overlap / "0000000003-0000000005.seg")
    with pytest.raises(StoreError, match="overlaps"):
        FileJournal(overlap).load()


def test_lock_file_keeps_a_second_journal_out(tmp_path: Path) -> None:
    d = tmp_path / "j"
    j = FileJournal(d)
    j.load()
    with pytest.raises(StoreError, match=f"in use by process {os.getpid()}"):
        FileJournal(d)
    probe = "from ferrymq.store.file import FileJournal\nimport sys\nFileJournal(sys.argv[1])"
    proc = subprocess.run([sys.executable, "-c", probe, str(d)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "is in use" in proc.stderr
    j.close()
    again = FileJournal(d)  # released by close
    again.load()
    again.close()


def test_write_failure_breaks_the_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    j = FileJournal(tmp_path / "j")
    j.load()
    j.add(1, 0, b"a")
    j.sync()
    j.add(2, 0, b"b")
    pending = j.take_pending()
    assert pending is not None

    def fail(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", fail)
    with pytest.raises(StoreError, match="write failed"):
        j.write_pending(pending)
    monkeypatch.undo()
    assert j.durable_lsn == 1
    with pytest.raises(StoreError, match="earlier journal write failed"):
        j.write_pending(Pending([b"x"], 2, pending.segment))
    assert "Input/output" in j.stats().last_error
    j.close()


def test_write_all_resumes_after_short_writes_and_splits_at_iov_max(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # A vectored write may stop anywhere, inside a part or between two; and one call takes
    # at most IOV_MAX parts.
    parts: list[bytes | bytearray | memoryview] = [bytes([i % 251]) * (i % 7) for i in range(seg.IOV_MAX + 300)]
    parts += [b"x" * 5000, bytearray(b"y" * 3), memoryview(b"z" * 4097)]
    real = os.pwritev
    calls: list[int] = []

    def short(fd: int, buffers: list[bytes | bytearray | memoryview], offset: int) -> int:
        assert len(buffers) <= seg.IOV_MAX
        calls.append(len(buffers))
        joined = b"".join(buffers)
        return real(fd, [joined[: max(1, len(joined) * 2 // 3 - 5)]], offset)

    monkeypatch.setattr(os, "pwritev", short)
    path = tmp_path / "out"
    path.write_bytes(b"head")
    fd = os.open(path, os.O_WRONLY)
    try:
        written = seg.write_all(fd, parts, 4)
    finally:
        os.close(fd)
    want = b"".join(parts)
    assert written == len(want) and path.read_bytes() == b"head" + want
    assert len(calls) > 2


def test_large_payloads_are_written_from_where_they_lie(tmp_path: Path) -> None:
    # Records around records.BY_REFERENCE in one batch, some in transactions; the file holds
    # them in order, and a restart reads them back.
    j = FileJournal(tmp_path / "j", segment_size=20_000)
    j.load()
    sizes = [0, rec.BY_REFERENCE - 1, rec.BY_REFERENCE, 10, rec.BY_REFERENCE + 1, 65536, 3]
    for i, n in enumerate(sizes, 1):
        j.add(i, 1, bytes([i]) * n, txid=7 if i % 2 else 0)
    j.commit(7)
    j.sync()
    j.update(6, 2, b"u" * (rec.BY_REFERENCE * 2))
    j.delete(2)
    j.close()
    again = FileJournal(tmp_path / "j")
    got = again.load()
    again.close()
    want = {i: (1, bytes([i]) * n) for i, n in enumerate(sizes, 1)}
    want[6] = (2, b"u" * (rec.BY_REFERENCE * 2))
    del want[2]
    assert {r.record_id: (r.kind, r.payload) for r in got.records} == want
    assert got.torn_bytes == 0 and got.bad_records == 0


def test_invalid_tuning_is_refused(tmp_path: Path) -> None:
    for kw in ({"segment_size": 10}, {"compact_ratio": 0.0}, {"compact_ratio": 1.0}, {"compact_min_bytes": 0}):
        with pytest.raises(ValueError):
            FileJournal(tmp_path / "j", **kw)


def test_scan_bounds_lengths_before_reading(tmp_path: Path) -> None:
    # A header claiming a huge payload is damage, not an allocation.
    good = rec.encode(7, rec.ADD, 0, 1, 1, 1, 0, b"ok")
    huge = bytearray(rec.encode(7, rec.ADD, 0, 1, 2, 2, 0, b"xx"))
    huge[8:12] = (rec.MAX_PAYLOAD + 1).to_bytes(4, "little")
    data = bytes(huge) + good
    entries, end = rec.scan(data, memoryview(data), 0, len(data), 7)
    assert [e[2] for e in entries] == [rec.BAD, rec.ADD] and end == len(data)
    assert rec.valid_at(memoryview(data), 0, len(data), 7) == -1


def test_a_gathered_run_frames_each_record_as_an_add_alone() -> None:
    # Gather.add_run: the bytes (and parts written from where they lie) of its adds one by one.
    body = bytes(range(256)) * 20
    items: list[tuple[int, bytes | tuple[bytes, ...]]] = [(7, b"small"), (8, (b"head", body, b"tail")), (9, ())]
    one, run = rec.Gather(), rec.Gather()
    sizes = [one.add(0x5A17, rec.ADD, 0, 3, 40 + i, rid, 6, payload) for i, (rid, payload) in enumerate(items)]
    assert run.add_run(0x5A17, rec.ADD, 0, 3, 40, 6, items) == sizes
    assert run.size == one.size == sum(sizes)
    assert [bytes(p) for p in run.take()] == [bytes(p) for p in one.take()]


def test_load_names_the_file_and_offset_of_each_damage(tmp_path: Path) -> None:
    """An operator is told where: the damaged record's file and offset, and the torn tail's."""
    d = tmp_path / "j"
    write_synced(d, 40, payload=30, segment_size=300, compact_min_bytes=1 << 30)
    files = segment_files(d)
    victim = next(e for e in entries_of(files[1]) if e[2] == rec.ADD)
    flip(files[1], victim[0] + 9)
    newest = files[-1]
    size = newest.stat().st_size
    with open(newest, "ab") as f:
        f.write(b"\0" * 40)  # bytes of a batch whose write never finished
    j = FileJournal(d, segment_size=300, compact_min_bytes=1 << 30)
    loaded = j.load()
    j.close()
    assert loaded.damage[0].startswith(f"{files[1].name} offset {victim[0]}: a damaged record; ")
    assert f"to the next intact record at offset {victim[1]}" in loaded.damage[0]
    assert loaded.damage[1] == f"{newest.name} offset {size}: a batch never acknowledged (a torn tail); 40 bytes cut"
    assert (loaded.bad_records, loaded.torn_bytes, len(loaded.damage)) == (1, 40, 2)
