"""L1: writing journal files past the page cache (O_DIRECT), from one reused aligned buffer.

Why: a buffered write copies every byte into fresh page-cache pages, found, locked and put
on the LRU one by one; for 64 KiB messages that copy was the largest single cost of the
queue manager (a third of its CPU samples, all in the writer thread). A direct write hands
the device the writer's own memory instead. Its price is alignment: the file offset, the
length and the memory address of every direct write must be multiples of the device's
logical block. The journal therefore pads each batch to ``records.BLOCK`` with a PAD record
(store/records.py), and ``BlockWriter`` copies the batch's parts, which lie anywhere in
memory, into one page-aligned anonymous mapping of ``CHUNK`` bytes, writing it out each time
it is full. The mapping lives as long as the writer and is small enough to stay in the
processor's caches, so the copy costs a fraction of the page cache's.

Durability is unchanged: a direct write bypasses the page cache, not the device's volatile
cache nor the file's metadata (its size grows with every batch), so the journal still
fdatasyncs each batch before it counts as durable.

Fallback: where the filesystem refuses O_DIRECT, at open or at the first write (EINVAL),
the same bytes are written through the page cache from then on: the padded layout is kept,
so the format does not depend on the filesystem. ``direct=False`` asks for that from the
start.

Writer thread only.
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
from collections.abc import Sequence
from typing import Final

from ferrymq.store import segments as seg
from ferrymq.store.records import BLOCK

CHUNK: Final = 1024 * 1024
"""Bytes per direct write: large enough that a write's fixed cost is small against its
transfer, small enough to stay in the caches (a larger buffer measured no faster)."""

_O_DIRECT: Final = getattr(os, "O_DIRECT", 0)


class BlockWriter:
    """Opens the journal's new files and writes batches to them; see the module docstring."""

    def __init__(self, *, direct: bool = True) -> None:
        self._direct = direct and bool(_O_DIRECT)
        self._buf: mmap.mmap | None = None
        self._view: memoryview | None = None

    @property
    def direct(self) -> bool:
        """Whether writes still go past the page cache (False once a filesystem refused)."""
        return self._direct

    def create(self, path: os.PathLike[str] | str) -> int:
        """A new file at ``path`` (which must not exist), open for writing.

        Raises:
            OSError: the file exists or cannot be created.
        """
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        if self._direct:
            try:
                return os.open(path, flags | _O_DIRECT, 0o600)
            except OSError as exc:
                if exc.errno != errno.EINVAL:
                    raise
                # Linux checks O_DIRECT after creating the file: it may exist now, empty.
                self._direct = False
                return os.open(path, flags & ~os.O_EXCL | os.O_TRUNC, 0o600)
        return os.open(path, flags, 0o600)

    def write(self, fd: int, parts: Sequence[bytes | bytearray | memoryview], offset: int) -> int:
        """Write ``parts`` in order at ``offset`` of ``fd`` (from ``create``); returns the bytes
        written. Direct writes need ``offset`` and the parts' total length to be multiples of
        BLOCK (a padded batch).

        Raises:
            OSError: a write failed (what went before it may be in the file).
            ValueError: direct writes, and the offset or length is not block-aligned.
        """
        if not self._direct:
            return seg.write_all(fd, parts, offset)
        if offset % BLOCK or sum(len(p) for p in parts) % BLOCK:
            raise ValueError(f"a direct write must start and end on a multiple of {BLOCK} bytes")
        view = self._buffer()
        start = offset
        fill = 0
        for part in parts:
            data = memoryview(part)
            pos, n = 0, len(data)
            while pos < n:
                take = min(n - pos, CHUNK - fill)
                view[fill : fill + take] = data[pos : pos + take]
                fill += take
                pos += take
                if fill == CHUNK:
                    offset += self._write_chunk(fd, view, CHUNK, offset)
                    fill = 0
        if fill:
            offset += self._write_chunk(fd, view, fill, offset)
        return offset - start

    def _write_chunk(self, fd: int, view: memoryview, length: int, offset: int) -> int:
        done = 0
        while done < length:
            try:
                done += os.pwrite(fd, view[done:length], offset + done)
            except OSError as exc:
                if exc.errno != errno.EINVAL or not self._direct:
                    raise
                # The filesystem took O_DIRECT at open but refuses the write (its block is
                # larger than BLOCK, or it only pretends): the page cache from now on.
                fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_O_DIRECT)
                self._direct = False
        return done

    def _buffer(self) -> memoryview:
        if self._view is None:
            self._buf = mmap.mmap(-1, CHUNK)  # anonymous mappings are page-aligned
            self._view = memoryview(self._buf)
        return self._view

    def close(self) -> None:
        """Free the buffer (a later write maps a new one)."""
        if self._view is not None:
            self._view.release()
            self._view = None
        if self._buf is not None:
            self._buf.close()
            self._buf = None
