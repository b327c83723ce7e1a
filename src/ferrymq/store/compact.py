"""L1: compaction — rewrite the oldest segment files as one file of what is still needed.

The file journal picks a prefix of its files (segments lo..hi, never the one being
appended to) and a snapshot of its index taken when every operation so far is about to
be durable: ``record_id -> (lsn << 32) | size`` of the record that holds each live
record's content. The writer thread then walks the prefix in log order, replaying it, and
writes a new file that replays to the same result for everything still live:

- a live record becomes an ADD at the point it became live (its add, or its
  transaction's commit), with its content if that record is the current one, else a
  placeholder whose content follows: an UPDATE later in the prefix (emitted there) or a
  record in a newer file. Positions, hence the order ``load()`` returns, are kept;
- records dead in the snapshot vanish, and so do DELETEs (nothing older remains for them
  to delete) except those that retire a placeholder emitted earlier in this file;
- transactions committed or rolled back inside the prefix are applied or dropped; those
  still open at its end (prepared, or resolved in a newer file) are copied as they were.

Records keep their LSNs, so the snapshot still identifies them in the next compaction,
and ``moved`` (LSN -> offset in the new file of every record copied with its content) tells
the owner where each live record it reads back now is.
A record that dies after the snapshot is copied anyway; its delete is in a newer file.

Crash safety is the directory rule in segments.py: the new file is written as
``lo-hi.seg.tmp``, fsynced, renamed to ``lo-hi.seg`` (superseding lo..hi), the directory
is fsynced, and only then are the old files unlinked. A crash at any point leaves either
the old files or the new one in charge, never a mixture.

The work runs in slices of about ``step_bytes`` read per call (``run_step``), on the
writer thread after a batch is durable, so neither the owner nor one fdatasync waits for a
whole rewrite.

Files of the prefix that the owner knows hold nothing still needed (``skip``; file.py's
``_unneeded`` says when) are passed over without being read: replaying them would emit
nothing. A queue drained in order leaves its oldest files wholly dead, so its journal is
compacted without reading back the messages it just delivered.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from pathlib import Path

from ferrymq.errors import StoreError
from ferrymq.store import records as rec
from ferrymq.store import segments as seg
from ferrymq.store.records import (
    ADD,
    BAD,
    BATCH,
    COMMIT,
    DELETE,
    FLAG_PLACEHOLDER,
    PAD,
    PREPARE,
    ROLLBACK,
    UPDATE,
)
from ferrymq.store.replay import release_pages

_FLUSH_BYTES = 1 << 20

# A transactional record held until its transaction's fate is known:
# (type, flags, kind, lsn, record_id, payload)
_TxRecord = tuple[int, int, int, int, int, bytes]


def new_salt() -> int:
    return int.from_bytes(os.urandom(4), "little")


class Compaction:
    """One compaction of segments ``lo..hi`` (a WriterTask); see the module docstring.

    Owner thread: constructs it, reads ``finished``/``renamed``/``error``/``out_size``
    after a ``write_pending`` that ran a step has returned, calls ``abort`` when closing.
    Writer thread: ``run_step``.
    """

    def __init__(self, directory: Path, sources: list[seg.SegmentFile], base_lsn: int, end_lsn: int,
                 snapshot: dict[int, int], step_bytes: int, *, skip: list[bool] | None = None) -> None:
        self.lo = sources[0].lo
        self.hi = sources[-1].hi
        self.base_lsn = base_lsn
        self.end_lsn = end_lsn
        self.finished = False
        self.renamed = False
        self.error = ""
        self.out_size = 0
        self.framing = 0  # bytes of out_size that are never live: the header and the closing BATCH
        self.bad_records = 0
        self.moved: dict[int, int] = {}
        self.open_lsns: list[int] = []  # LSNs of the operations copied as still open (_finish)
        self._dir = directory
        self._sources = sources
        self._snapshot = snapshot
        self._step_bytes = max(step_bytes, 256)
        self._final = seg.segment_name(self.lo, self.hi)
        self._tmp = self._final + ".tmp"
        self._salt = new_salt()
        self._fd = -1
        self._out = bytearray()
        self._src = 0
        self._skip = skip or [False] * len(sources)
        self._mm: mmap.mmap | None = None
        self._mv: memoryview | None = None
        self._pos = 0
        self._released = 0
        self._size = 0
        self._src_salt = 0
        self._emitted: set[int] = set()
        self._txs: dict[int, list[_TxRecord]] = {}
        self._prepares: dict[int, tuple[int, bytes]] = {}

    # -- writer thread -----------------------------------------------------------------------
    def run_step(self) -> None:
        """Advance by one slice; a failure is recorded in ``error``, never raised."""
        if self.finished:
            return
        try:
            self._step()
        except Exception as exc:  # a failed compaction must not fail the write that carried it
            self.error = f"compaction of segments {self.lo}-{self.hi} failed: {type(exc).__name__}: {exc}"
            self._release(remove_tmp=not self.renamed)
            if not self.renamed:
                self.moved = {}
            self.finished = True

    def abort(self, *, crash: bool = False) -> None:
        """Give up (journal closing): the old files stay in charge. ``crash`` leaves the
        temporary file behind, as a crash would (for FileJournal.abandon)."""
        if not self.finished:
            self._release(remove_tmp=not (self.renamed or crash))
            self.finished = True

    def _step(self) -> None:
        if self._fd < 0:
            path = self._dir / self._tmp
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            header = rec.encode_segment_header(self._salt, self.lo, self.hi, self.base_lsn, self.end_lsn)
            self._out += header
            self.framing += len(header)
        budget = self._step_bytes
        while budget > 0 and self._src < len(self._sources):
            if self._skip[self._src]:
                self._src += 1
                continue
            if self._mm is None:
                self._open_source()
            assert self._mm is not None and self._mv is not None
            entries, pos = rec.scan(self._mm, self._mv, self._pos, self._size, self._src_salt, self._pos + budget)
            budget -= pos - self._pos
            self._pos = pos
            for entry in entries:
                self._walk(entry)
                if len(self._out) >= _FLUSH_BYTES:
                    self._flush()
            self._released = release_pages(self._mm, self._released, pos)
            if pos >= self._size:
                self._close_source()
                self._src += 1
        self._flush()
        if self._src == len(self._sources):
            self._finish()

    def _open_source(self) -> None:
        sfile = self._sources[self._src]
        path = self._dir / sfile.name
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < rec.SEGMENT_RECORD_SIZE:
                raise StoreError(f"{path}: file header is incomplete")
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        mv = memoryview(mm)
        try:
            salt, lo, hi, _base, _end = rec.decode_segment_header(mv, str(path))
            if (lo, hi) != (sfile.lo, sfile.hi):
                raise StoreError(f"{path}: header says segments {lo}-{hi}")
        except BaseException:
            mv.release()
            mm.close()
            raise
        mm.madvise(mmap.MADV_SEQUENTIAL)
        self._mm, self._mv, self._size, self._src_salt = mm, mv, size, salt
        self._pos = self._released = rec.SEGMENT_RECORD_SIZE

    def _close_source(self) -> None:
        if self._mv is not None:
            self._mv.release()
        if self._mm is not None:
            self._mm.close()
        self._mm = self._mv = None

    def _walk(self, entry: rec.Entry) -> None:
        start, end, rtype, flags, kind, lsn, rid, txid = entry
        if rtype == BAD:
            self.bad_records += 1
            return
        if rtype in (BATCH, PAD):
            return
        assert self._mv is not None
        if rtype in (ADD, UPDATE, DELETE):
            payload = self._mv[start + rec.HEADER_SIZE:end]
            if txid:
                self._txs.setdefault(txid, []).append((rtype, flags, kind, lsn, rid, bytes(payload)))
            else:
                self._event(rtype, flags, kind, lsn, rid, payload)
        elif rtype == COMMIT:
            self._prepares.pop(txid, None)
            for op, op_flags, op_kind, op_lsn, op_rid, op_payload in self._txs.pop(txid, ()):
                self._event(op, op_flags, op_kind, op_lsn, op_rid, op_payload)
        elif rtype == ROLLBACK:
            self._prepares.pop(txid, None)
            self._txs.pop(txid, None)
        elif rtype == PREPARE:
            self._txs.setdefault(txid, [])
            self._prepares[txid] = (lsn, bytes(self._mv[start + rec.HEADER_SIZE:end]))

    def _event(self, rtype: int, flags: int, kind: int, lsn: int, rid: int, payload: bytes | memoryview) -> None:
        """An operation takes effect at this point of the log (immediately or at commit)."""
        emitted = self._emitted
        if rtype == DELETE:
            if rid in emitted:
                emitted.discard(rid)
                self._emit(DELETE, 0, 0, lsn, rid, 0, b"")
            return
        current = self._snapshot.get(rid)
        if current is None:
            return  # dead in the snapshot, and its delete is durable
        is_current = current >> 32 == lsn and not flags & FLAG_PLACEHOLDER
        if rtype == ADD or rid not in emitted:
            if is_current:
                self._emit(ADD, 0, kind, lsn, rid, 0, payload)
            else:
                self._emit(ADD, FLAG_PLACEHOLDER, kind, lsn, rid, 0, b"")
            emitted.add(rid)
        elif is_current:
            self._emit(UPDATE, 0, kind, lsn, rid, 0, payload)

    def _emit(self, rtype: int, flags: int, kind: int, lsn: int, rid: int, txid: int,
              payload: bytes | memoryview) -> None:
        if rtype in (ADD, UPDATE) and not flags & FLAG_PLACEHOLDER:
            self.moved[lsn] = self.out_size + len(self._out)
        rec.append(self._out, self._salt, rtype, flags, kind, lsn, rid, txid, payload)

    def _flush(self) -> None:
        view = memoryview(self._out)
        try:
            done = 0
            while done < len(view):
                done += os.write(self._fd, view[done:])
        finally:
            view.release()
        self.out_size += len(self._out)
        self._out.clear()

    def _finish(self) -> None:
        # Transactions still open at the end of the prefix, as they were.
        for txid, ops in self._txs.items():
            for op, flags, kind, lsn, rid, payload in ops:
                self._emit(op, flags, kind, lsn, rid, txid, payload)
                self.open_lsns.append(lsn)
            if txid in self._prepares:
                lsn, xid = self._prepares[txid]
                self._emit(PREPARE, 0, 0, lsn, 0, txid, xid)
        before = len(self._out)
        self._emit(BATCH, 0, 0, self.end_lsn, 0, 0, b"")
        self.framing += len(self._out) - before
        self._flush()
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = -1
        os.rename(self._dir / self._tmp, self._dir / self._final)
        self.renamed = True
        seg.fsync_dir(self._dir)
        # From here the new file supersedes the old ones even if these unlinks are lost.
        seg.remove_files(self._dir, [s.name for s in self._sources if s.name != self._final])
        self._snapshot = {}
        self._emitted.clear()
        self.finished = True

    def _release(self, *, remove_tmp: bool) -> None:
        self._close_source()
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        if remove_tmp:
            with contextlib.suppress(OSError):
                os.unlink(self._dir / self._tmp)
        self._snapshot = {}
