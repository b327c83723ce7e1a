"""FileJournal.read on disk: checksums, reads while a compaction is in flight, descriptors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ferrymq.errors import StoreError
from ferrymq.store import reader
from ferrymq.store import records as rec
from ferrymq.store.file import FileJournal


def test_a_damaged_record_is_an_error_not_content(tmp_path: Path) -> None:
    j = FileJournal(tmp_path, segment_size=1 << 20)
    j.load()
    j.add(1, 0, b"intact payload")
    j.add(2, 0, b"payload to damage")
    j.sync()
    (path,) = tmp_path.glob("*.seg")
    data = bytearray(path.read_bytes())
    at = data.find(b"payload to damage")
    data[at + 3] ^= 0x20
    path.write_bytes(bytes(data))
    assert j.read(1) == b"intact payload"
    with pytest.raises(StoreError, match="fails its checksum"):
        j.read(2)
    j.close()


def test_read_while_a_compaction_has_deleted_the_old_files(tmp_path: Path) -> None:
    """The writer unlinks the old files when its job renames the new one; the owner takes
    the job in later (mark_durable). Reads in between still find every record."""
    j = FileJournal(tmp_path, segment_size=256, compact_ratio=0.1, compact_min_bytes=1, compact_step_bytes=256)
    j.load()
    model: dict[int, bytes] = {}
    for i in range(1, 60):
        model[i] = b"record %d " % i * 3
        j.add(i, 0, model[i])
        if i % 3 == 0:
            j.delete(i)
            del model[i]
        j.sync()
    unlinked_while_in_flight = 0
    for i in range(60, 120):
        model[i] = b"late %d" % i
        j.add(i, 0, model[i])
        pending = j.take_pending()
        assert pending is not None
        before = set(tmp_path.glob("*.seg"))
        j.write_pending(pending)
        if before - set(tmp_path.glob("*.seg")):
            unlinked_while_in_flight += 1
            # Old files are gone, the job is not taken in: earlier records still read.
            assert {k: j.read(k) for k in model if k < i} == {k: v for k, v in model.items() if k < i}
        j.mark_durable(pending.lsn)
    assert {k: j.read(k) for k in model} == model
    assert unlinked_while_in_flight and j.stats().compactions
    j.close()
    j = FileJournal(tmp_path)
    j.load()
    assert {k: j.read(k) for k in model} == model
    j.close()


def test_descriptors_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_OPEN", 3)
    j = FileJournal(tmp_path, segment_size=256, compact_min_bytes=1 << 30)
    j.load()
    for i in range(1, 40):
        j.add(i, 0, bytes(200))
        j.sync()
    assert len(list(tmp_path.glob("*.seg"))) > 10
    for i in range(1, 40):
        assert j.read(i) == bytes(200)
    assert len(j._readers._open) == 3
    j.close()


def test_replay_in_windows_releases_pages_and_loads_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ferrymq.store import replay

    j = FileJournal(tmp_path, segment_size=4 << 20)  # 299 padded batches in one file
    j.load()
    model = {i: bytes([i % 251]) * (500 + i) for i in range(1, 300)}
    for i, payload in model.items():
        j.add(i, 0, payload)
        j.sync()  # each its own batch: a damaged one in the middle is not the torn tail
    j.close()
    (path,) = tmp_path.glob("*.seg")
    data = bytearray(path.read_bytes())
    at = data.find(bytes([150]) * 600)  # damage record 150, in the middle of a window
    data[at] ^= 1
    path.write_bytes(bytes(data))
    monkeypatch.setattr(replay, "WINDOW", 5 * rec.BLOCK)
    released: list[int] = []
    real = replay.release_pages
    monkeypatch.setattr(replay, "release_pages", lambda mm, start, upto: released.append(upto) or real(mm, start, upto))
    j = FileJournal(tmp_path)
    loaded = j.load()
    del model[150]
    assert {r.record_id: r.payload for r in loaded.records} == model and loaded.bad_records == 1
    assert len(released) > 10
    j.close()


def test_a_run_of_records_is_read_with_one_pread_per_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A queue paged out to the journal is got in order: its records are cut from windows
    of reader.WINDOW bytes, one pread each, never reading past the durable end."""
    j = FileJournal(tmp_path, segment_size=64 << 20)
    j.load()
    bodies = {rid: bytes([rid]) * 65536 for rid in range(1, 41)}
    for rid, body in bodies.items():
        j.add(rid, 1, body)
        if rid % 8 == 0:
            j.sync()
    j.add(99, 1, b"in flight" * 1000)
    in_flight = j.take_pending()  # taken, not yet written: beyond what reads may look at
    assert in_flight is not None
    reads: list[tuple[int, int]] = []
    real = reader.os.pread

    def spy(fd: int, n: int, offset: int) -> bytes:
        reads.append((n, offset))
        return real(fd, n, offset)

    monkeypatch.setattr(reader.os, "pread", spy)
    assert all(j.read(rid) == body for rid, body in bodies.items())
    # 40 records of 64 KiB in windows of 1 MiB (the segment header's read aside).
    data_reads = [r for r in reads if r[0] > rec.SEGMENT_RECORD_SIZE]
    assert len(data_reads) <= 40 * 65600 // reader.WINDOW + 1
    durable_end = max(offset + n for n, offset in data_reads)
    assert durable_end <= j.stats().disk_bytes - len(b"".join(bytes(p) for p in in_flight.data))
    j.write_pending(in_flight)
    j.mark_durable(in_flight.lsn)
    assert j.read(99) == b"in flight" * 1000
    j.close()
