"""FileJournal's direct writes: batches padded to a block with a PAD record, recovery of a
padded batch torn anywhere, files from before padding, the fallback to the page cache."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from pathlib import Path

import pytest
from store_helpers import entries_of

from ferrymq.store import direct
from ferrymq.store import records as rec
from ferrymq.store.direct import BlockWriter
from ferrymq.store.file import FileJournal
from ferrymq.store.journal import Record

BLOCK = rec.BLOCK


def reload(d: Path) -> tuple[list[Record], int, int]:
    j = FileJournal(d)
    loaded = j.load()
    j.close()
    return loaded.records, loaded.torn_bytes, loaded.bad_records


def only_segment(d: Path) -> Path:
    (path,) = d.glob("*.seg")
    return path


def open_flags(path: Path) -> list[int]:
    """The status flags of this process's descriptors open on ``path``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != str(path):
                continue
            info = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        found.append(int(info.split("flags:")[1].split()[0], 8))
    return found


def test_pad_size_reaches_the_next_block_and_holds_a_header() -> None:
    for end in [0, 1, 88, BLOCK - rec.HEADER_SIZE - 1, BLOCK - rec.HEADER_SIZE, BLOCK - 1, BLOCK, 5 * BLOCK + 7]:
        size = rec.pad_size(end)
        assert (end + size) % BLOCK == 0 and rec.HEADER_SIZE <= size < BLOCK + rec.HEADER_SIZE, end


def test_every_batch_ends_on_a_block_boundary_with_a_pad(tmp_path: Path) -> None:
    # Payloads chosen so that a batch's BATCH record ends 0, 1, 39, 40 and 41 bytes before a
    # block boundary (a PAD always holds its header, so the first cases take a whole block
    # more), and batches of several blocks.
    d = tmp_path / "j"
    j = FileJournal(d)
    j.load()
    path = d / "0000000001-0000000001.seg"
    expected = []
    for rid, short in enumerate([0, 1, 39, 40, 41, 5 * BLOCK + 3], 1):
        start = j.stats().disk_bytes
        # This batch: [SEGMENT] + ADD + BATCH; make its end `short` bytes before a boundary.
        fixed = (rec.SEGMENT_RECORD_SIZE if start == 0 else 0) + 2 * rec.HEADER_SIZE
        n = (-(start + fixed + short)) % BLOCK if short < BLOCK else short
        payload = bytes([rid]) * n
        j.add(rid, 1, payload)
        expected.append(Record(rid, 1, payload))
        j.sync()
        size = path.stat().st_size
        assert size % BLOCK == 0 and size == j.stats().disk_bytes
        kinds = [e[2] for e in entries_of(path)]
        assert kinds[-3:] == [rec.ADD, rec.BATCH, rec.PAD]
        assert entries_of(path)[-2][3] & rec.FLAG_PADDED
        assert j.read(rid) == payload
    j.close()
    assert reload(d) == (expected, 0, 0)


def test_a_padded_batch_torn_in_any_block_is_discarded_whole(tmp_path: Path) -> None:
    # The last batch spans several blocks; a crash may leave any prefix of its blocks, or
    # all of its length with any one block never written (zeros).
    src = tmp_path / "src"
    j = FileJournal(src)
    j.load()
    j.add(1, 0, b"kept" * 100)
    j.sync()
    batch_start = j.stats().disk_bytes
    for rid in range(2, 5):
        j.add(rid, 0, bytes([rid]) * 5000)
    j.delete(1)
    j.sync()
    j.close()
    path = only_segment(src)
    size = path.stat().st_size
    assert size - batch_start >= 4 * BLOCK
    kept = [Record(1, 0, b"kept" * 100)]
    for block in range(batch_start, size, BLOCK):
        for case in ("cut", "zeros"):
            d = tmp_path / f"{case}{block}"
            shutil.copytree(src, d)
            seg_path = d / path.name
            if case == "cut":
                os.truncate(seg_path, block)
                want_torn = block - batch_start
            else:
                with open(seg_path, "r+b") as f:
                    f.seek(block)
                    f.write(bytes(BLOCK))
                want_torn = size - batch_start
            assert reload(d) == (kept, want_torn, 0), (case, block)
            assert seg_path.stat().st_size == batch_start
            j = FileJournal(d)
            j.load()
            assert j.read(1) == b"kept" * 100
            j.close()
            shutil.rmtree(d)


def test_files_from_before_padding_still_load_and_lose_only_a_torn_tail(tmp_path: Path) -> None:
    # Written before PAD existed: batches end with an unflagged BATCH, anywhere in a block.
    salt = 0x1234
    data = bytearray(rec.encode_segment_header(salt, 1, 1, 0))
    for rid in (1, 2, 3):
        data += rec.encode(salt, rec.ADD, 0, 0, rid, rid, 0, bytes([rid]) * 30)
        data += rec.encode(salt, rec.BATCH, 0, 0, rid, 0, 0)
    complete = len(data)
    data += rec.encode(salt, rec.ADD, 0, 0, 4, 4, 0, b"torn" * 10)[:25]
    d = tmp_path / "old"
    d.mkdir()
    (d / "0000000001-0000000001.seg").write_bytes(bytes(data))
    expected = [Record(rid, 0, bytes([rid]) * 30) for rid in (1, 2, 3)]
    assert reload(d) == (expected, len(data) - complete, 0)
    j = FileJournal(d)
    j.load()
    j.add(5, 0, b"new")  # goes to a new, padded segment
    j.close()
    assert reload(d) == ([*expected, Record(5, 0, b"new")], 0, 0)


def test_batches_are_written_past_the_page_cache(tmp_path: Path) -> None:
    j = FileJournal(tmp_path / "j")
    j.load()
    j.add(1, 0, b"x" * 70_000)
    j.sync()
    path = only_segment(tmp_path / "j")
    flags = open_flags(path)
    j.close()
    assert flags and all(f & os.O_DIRECT for f in flags)
    writer = BlockWriter()
    fd = writer.create(tmp_path / "f")
    try:
        with pytest.raises(ValueError, match="multiple of"):
            writer.write(fd, [b"x" * 100], 0)
        assert writer.write(fd, [b"a" * 100, b"b" * (BLOCK - 100), b"c" * (direct.CHUNK + BLOCK)], 0) \
            == direct.CHUNK + 2 * BLOCK
    finally:
        os.close(fd)
        writer.close()
    assert (tmp_path / "f").read_bytes() == b"a" * 100 + b"b" * (BLOCK - 100) + b"c" * (direct.CHUNK + BLOCK)


def test_a_filesystem_that_refuses_o_direct_at_open_gets_buffered_writes(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open
    refused: list[str] = []

    def no_direct(path: str, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_DIRECT:
            os.close(real_open(path, flags & ~os.O_DIRECT, mode))  # Linux creates, then refuses
            refused.append(str(path))
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, mode)

    monkeypatch.setattr(direct.os, "open", no_direct)
    d = tmp_path / "j"
    j = FileJournal(d)
    j.load()
    j.add(1, 0, b"a" * 10_000)
    j.sync()
    j.add(2, 0, b"b")
    j.close()
    assert len(refused) == 1  # asked once; the next files are opened buffered
    monkeypatch.undo()
    assert reload(d) == ([Record(1, 0, b"a" * 10_000), Record(2, 0, b"b")], 0, 0)
    assert all(f.stat().st_size % BLOCK == 0 for f in d.glob("*.seg"))  # the layout is the same


def test_a_filesystem_that_refuses_a_direct_write_gets_it_buffered(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    real_pwrite = os.pwrite
    refused: list[int] = []

    def no_direct(fd: int, data: memoryview, offset: int) -> int:
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT:
            refused.append(fd)
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(direct.os, "pwrite", no_direct)
    d = tmp_path / "j"
    j = FileJournal(d)
    j.load()
    payloads = {rid: bytes([rid]) * (direct.CHUNK // 3) for rid in range(1, 6)}  # two chunks
    for rid, payload in payloads.items():
        j.add(rid, 0, payload)
    j.sync()
    assert {rid: j.read(rid) for rid in payloads} == payloads
    j.close()
    assert len(refused) == 1
    monkeypatch.undo()
    assert reload(d) == ([Record(rid, 0, p) for rid, p in payloads.items()], 0, 0)
