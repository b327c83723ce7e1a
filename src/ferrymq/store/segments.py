"""L1: the file journal's data directory — file names, which files count, the lock.

A directory holds numbered segment files ``LLLLLLLLLL-HHHHHHHHHH.seg``: a file written as
segment n is ``n-n``; compaction merges segments lo..hi into one file named ``lo-hi``
(written as ``lo-hi.seg.tmp``, fsynced, then renamed). The rule that makes compaction
crash-safe: a file whose range contains another file's range supersedes it, so after the
rename the old files are ignored (and deleted) whether or not their unlinks happened.
Temporary files are never part of the journal.

``LOCK`` is held with ``flock`` for as long as a journal has the directory open, so two
processes (or two journals in one process) cannot write the same files.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ferrymq.errors import StoreError

SUFFIX: Final = ".seg"
TMP_SUFFIX: Final = ".seg.tmp"
LOCK_NAME: Final = "LOCK"
_NAME = re.compile(r"^(\d{10})-(\d{10})\.seg$")
_TMP = re.compile(r"^\d{10}-\d{10}\.seg\.tmp$")


@dataclass(frozen=True, slots=True)
class SegmentFile:
    lo: int
    hi: int

    @property
    def name(self) -> str:
        return segment_name(self.lo, self.hi)


def segment_name(lo: int, hi: int) -> str:
    return f"{lo:010d}-{hi:010d}{SUFFIX}"


IOV_MAX: Final = 1024  # Linux's limit on the parts of one vectored write


def write_all(fd: int, parts: Sequence[bytes | bytearray | memoryview], offset: int) -> int:
    """Write ``parts`` in order at ``offset`` with vectored writes (no joined copy),
    resuming after a short write where it stopped; returns the bytes written.

    Raises:
        OSError: a write failed (what went before it may be in the file).
    """
    todo = list(parts)
    total = i = 0
    while i < len(todo):
        chunk = todo[i : i + IOV_MAX]
        done = os.pwritev(fd, chunk, offset + total)
        total += done
        for part in chunk:
            n = len(part)
            if done < n:
                todo[i] = memoryview(part)[done:]
                break
            done -= n
            i += 1
    return total


def fsync_dir(directory: Path) -> None:
    """Make creations, renames and unlinks in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def survey(directory: Path) -> tuple[list[SegmentFile], list[str], list[str]]:
    """The files that make up the journal, in order, plus superseded and temporary names.

    Raises:
        StoreError: ranges overlap without one containing the other, or a segment is
            missing (a gap, or the first file does not start at segment 1): the directory
            was changed by hand, and guessing would lose or resurrect records.
    """
    found: list[SegmentFile] = []
    temps: list[str] = []
    for name in os.listdir(directory):
        match = _NAME.match(name)
        if match:
            lo, hi = int(match.group(1)), int(match.group(2))
            if lo < 1 or hi < lo:
                raise StoreError(f"{directory / name}: not a valid segment range")
            found.append(SegmentFile(lo, hi))
        elif _TMP.match(name):
            temps.append(name)
    # Widest range first for each start, so a merged file is met before what it replaced.
    found.sort(key=lambda f: (f.lo, -f.hi))
    kept: list[SegmentFile] = []
    superseded: list[str] = []
    for seg in found:
        if kept and seg.hi <= kept[-1].hi:
            superseded.append(seg.name)
            continue
        if kept and seg.lo <= kept[-1].hi:
            raise StoreError(f"{directory}: {seg.name} overlaps {kept[-1].name}")
        expected = kept[-1].hi + 1 if kept else 1
        if seg.lo != expected:
            raise StoreError(f"{directory}: segment {expected} is missing (next file is {seg.name})")
        kept.append(seg)
    return kept, superseded, temps


def remove_files(directory: Path, names: list[str]) -> None:
    """Unlink ``names`` (already gone is fine) and make that durable."""
    if not names:
        return
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(directory / name)
    fsync_dir(directory)


class DirectoryLock:
    """An exclusive ``flock`` on ``directory/LOCK``, held until ``release``."""

    def __init__(self, directory: Path) -> None:
        path = directory / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = b""
            with contextlib.suppress(OSError):
                holder = os.pread(fd, 32, 0).strip()
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                who = f" by process {holder.decode('ascii', 'replace')}" if holder else ""
                raise StoreError(f"journal directory {directory} is in use{who} (lock file {path})") from None
            raise StoreError(f"cannot lock {path}: {exc}") from exc
        # The pid is only for the error message a second opener sees.
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the descriptor drops the flock
