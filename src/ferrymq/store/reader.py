"""L1: reading one live record of a file journal back from its segment file.

The file journal keeps, for every live record, the file offset of the record that holds its
content (``record_id -> offset``; the file follows from the record's LSN). ``SegmentReaders``
owns the read-only descriptors: one per file, opened on first use and kept (at most
``MAX_OPEN`` of them, least recently used closed first), except that the files a running
compaction will delete are pinned open from the job's start. That is what keeps a read
correct across compaction: the writer thread unlinks the old files as soon as the new one is
renamed into place, while the owner resolves locations against the old files until it takes
the finished job in; an open descriptor still reads an unlinked file.

Every read checks the record's header (magic, type, id, length) and its salted CRC32C, so a
damaged record is an error, never content.

Reads come in runs: a queue paged out to the journal is got in order, and its records lie
one after another in a file (written past the page cache, so every read goes to the
device). One pread therefore takes a window of up to ``WINDOW`` bytes from the record
asked for onwards, and the records after it are cut from that window: one system call and
one sequential device read for a run of 64 KiB messages rather than two calls each. The
window never reaches past what the caller says is durable (``limit``: bytes beyond it
may be in flight), and is dropped when its file is superseded.
"""

from __future__ import annotations

import contextlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Final

from crc32c import crc32c

from ferrymq.errors import StoreError
from ferrymq.store import records as rec
from ferrymq.store import segments as seg

MAX_OPEN: Final = 64
WINDOW: Final = 1024 * 1024
"""Bytes one read takes ahead (about 16 records of 64 KiB)."""


class SegmentReaders:
    """Read-only descriptors of a journal directory's files; owner thread only."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._open: OrderedDict[tuple[int, int], tuple[int, int]] = OrderedDict()  # (lo, hi) -> (fd, salt)
        self._pinned: dict[tuple[int, int], tuple[int, int]] = {}
        self._window: tuple[tuple[int, int], int, bytes] | None = None  # (file, its offset, bytes)

    def pin(self, files: list[tuple[int, int]]) -> None:
        """Open ``files`` now and keep them open until ``unpin`` (a compaction deletes them).
        A file that cannot be opened is skipped: reading from it fails later, as it would."""
        for key in files:
            if key in self._pinned:
                continue
            entry = self._open.pop(key, None)
            if entry is None:
                with contextlib.suppress(OSError, StoreError):
                    entry = self._open_file(key)
            if entry is not None:
                self._pinned[key] = entry

    def unpin(self, files: list[tuple[int, int]]) -> None:
        """The job that pinned ``files`` ended without replacing them: back to the others."""
        for key in files:
            entry = self._pinned.pop(key, None)
            if entry is not None:
                self._open[key] = entry
        while len(self._open) > MAX_OPEN:
            _close(self._open.popitem(last=False)[1][0])

    def forget(self, files: list[tuple[int, int]]) -> None:
        """Close the descriptors of ``files`` (pinned or not): they were superseded."""
        self._window = None  # a file compacted alone keeps its name, not its content
        for key in files:
            for table in (self._pinned, self._open):
                entry = table.pop(key, None)
                if entry is not None:
                    _close(entry[0])

    def read(self, lo: int, hi: int, offset: int, record_id: int, size: int, limit: int = -1) -> bytes:
        """The payload of the ADD or UPDATE of ``record_id`` at ``offset`` in file lo-hi;
        ``limit``: where the file's durable bytes end (-1: all of it is durable).

        Raises:
            StoreError: the file cannot be read, or the bytes there are not that record
                intact (damaged, or not what the index says).
        """
        key = (lo, hi)
        entry = self._pinned.get(key)
        if entry is None:
            entry = self._open.get(key)
            if entry is None:
                entry = self._open_file(key)
                self._open[key] = entry
                while len(self._open) > MAX_OPEN:
                    _close(self._open.popitem(last=False)[1][0])
            else:
                self._open.move_to_end(key)
        fd, salt = entry
        name = seg.segment_name(lo, hi)
        length = size - rec.HEADER_SIZE
        window = self._window
        if window is None or window[0] != key or not window[1] <= offset <= offset + size <= window[1] + len(window[2]):
            want = max(size, WINDOW) if limit < 0 else max(size, min(WINDOW, limit - offset))
            try:
                window = (key, offset, os.pread(fd, want, offset))
            except OSError as exc:
                raise StoreError(f"cannot read record {record_id} in {name}: {exc}") from exc
            self._window = window
        start = offset - window[1]
        data = window[2]
        header = data[start : start + rec.HEADER_SIZE]
        payload = data[start + rec.HEADER_SIZE : start + size]
        if len(header) < rec.HEADER_SIZE or len(payload) != length:
            raise StoreError(f"record {record_id} in {name} at offset {offset} is cut short")
        crc, magic, rtype, flags, plen, _kind, _lsn, rid, _txid = rec.HEADER.unpack(header)
        if (magic != rec.MAGIC or rtype not in (rec.ADD, rec.UPDATE) or flags & rec.FLAG_PLACEHOLDER
                or rid != record_id or plen != length):
            raise StoreError(f"{name} at offset {offset} does not hold record {record_id}")
        if crc32c(payload, crc32c(memoryview(header)[4:], salt)) != crc:
            raise StoreError(f"record {record_id} in {name} at offset {offset} fails its checksum")
        return payload

    def close(self) -> None:
        self._window = None
        for table in (self._pinned, self._open):
            for fd, _salt in table.values():
                _close(fd)
            table.clear()

    def _open_file(self, key: tuple[int, int]) -> tuple[int, int]:
        path = self._dir / seg.segment_name(*key)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise StoreError(f"cannot open {path} to read a record: {exc}") from exc
        try:
            head = os.pread(fd, rec.SEGMENT_RECORD_SIZE, 0)
            salt = rec.decode_segment_header(memoryview(head), str(path))[0]
        except OSError as exc:
            _close(fd)
            raise StoreError(f"cannot read the header of {path}: {exc}") from exc
        except BaseException:
            _close(fd)
            raise
        return fd, salt


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
