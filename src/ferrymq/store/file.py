"""L1: FileJournal — the journal contract over append-only segment files.

Owner thread (every method but ``write_pending``): validates and encodes each operation
into an in-memory batch (store/records.py framing), keeps the index of live records
(``record_id -> (lsn << 32) | size``) and per-file dead-byte counts, and decides when to
start a new segment or a compaction. ``take_pending`` closes the batch with a BATCH record
and hands it over. Writer thread (``write_pending``, one at a time, pendings in the order
taken): writes the batch to its segment file and fdatasyncs it (creating a segment file
also fsyncs the directory), then runs one slice of a running compaction (store/compact.py).
The batch is written past the page cache where the filesystem allows (store/direct.py),
which is why ``take_pending`` pads every batch to a block boundary with a PAD record.
The two sides share no mutable state except through Pending and the compaction object,
whose results the owner reads in ``mark_durable`` — after the driver has seen
``write_pending`` return, which orders the two threads.

Segment size is a soft limit: a batch never spans two files, so a segment is closed by the
first batch that starts after it reached ``segment_size``.

Compaction policy: the files before the one being appended to form the prefix. Files
wholly dead are passed over unread (``_unneeded``), so the first choice is the shortest
part of the prefix that frees at least ``compact_min_bytes`` and at least what rewriting it
costs (bytes read and copied): a queue drained in order is compacted without reading its
messages back, once its oldest files are wholly dead. Failing that, the whole prefix is
rewritten as one file (store/compact.py) when its dead bytes reach ``compact_ratio`` of its
size and ``compact_min_bytes`` plus two segments. Disk use therefore stays within about
``live / (1 - compact_ratio)`` plus ``compact_min_bytes`` and four segments (two for the
fallback's margin, one that the first choice may leave dead beyond the part it took, and the
one being appended to).

Reading a live record back (``read``): the owner keeps each live record's file offset
beside the index (``record_id -> offset`` of the record holding its content; the file follows
from its LSN); a finished compaction reports where it moved every record, and the owner
updates the offsets when it takes the job in (store/reader.py says why reads stay correct
while the job runs).

Disk space (store/space.py): the writer measures the filesystem's free space after every
batch; the owner counts the bytes appended since and sets ``refusal`` once they would eat
into ``reserve_bytes``, so that the engine refuses new persistent messages before a write
can fail. A write that fails anyway with ENOSPC or EDQUOT is cut back to the segment's last
durable byte (the file stays a valid journal) and raises JournalFull; the same batch is
written again later. Any other failure is final.

Recovery is store/replay.py; the directory rules and lock are store/segments.py.
"""

from __future__ import annotations

import contextlib
import logging
import os
from bisect import bisect_left
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ferrymq.errors import JournalFull, StoreError
from ferrymq.store import records as rec
from ferrymq.store import segments as seg
from ferrymq.store import space
from ferrymq.store.compact import Compaction, new_salt
from ferrymq.store.core import CLOSED, NEW, READY, JournalCore
from ferrymq.store.direct import BlockWriter
from ferrymq.store.journal import Content, JournalStats, LoadResult, Pending, Trim
from ferrymq.store.reader import SegmentReaders
from ferrymq.store.replay import OFFSET_SHIFT, SIZE_MASK, SegmentInfo, load_directory

log = logging.getLogger("ferrymq.store")

MiB: Final = 1024 * 1024
MIN_SEGMENT_SIZE: Final = 256
EMPTY_FILE: Final = rec.SEGMENT_RECORD_SIZE + rec.HEADER_SIZE
"""A compacted file that holds nothing: its header and its closing BATCH (both dead)."""
DEFAULT_RESERVE: Final = 8 * MiB
"""Free space kept for what drains queues (deletes, commits) and for the one message that
may be accepted as the limit is crossed; ``reserve_bytes`` changes it."""


class FileJournal(JournalCore[int, int]):
    """A durable journal in ``directory``; see the module docstring. ``direct=False``
    writes through the page cache (store/direct.py falls back to it by itself where the
    filesystem refuses direct writes).

    Raises (constructor):
        StoreError: another journal holds the directory, or it cannot be created.
        ValueError: a tuning argument is out of range.
    """

    def __init__(self, directory: str | os.PathLike[str], segment_size: int = 64 * MiB, *,
                 compact_ratio: float = 0.5, compact_min_bytes: int | None = None,
                 compact_step_bytes: int = 4 * MiB, reserve_bytes: int = DEFAULT_RESERVE,
                 direct: bool = True) -> None:
        if segment_size < MIN_SEGMENT_SIZE:
            raise ValueError(f"segment_size must be at least {MIN_SEGMENT_SIZE} bytes")
        if not 0 < compact_ratio < 1:
            raise ValueError("compact_ratio must be between 0 and 1 (exclusive)")
        if compact_min_bytes is not None and compact_min_bytes < 1:
            raise ValueError("compact_min_bytes must be positive")
        if reserve_bytes < 0:
            raise ValueError("reserve_bytes must not be negative")
        super().__init__()
        self._dir = Path(directory)
        self._segment_size = segment_size
        self._compact_ratio = compact_ratio
        self._compact_min = compact_min_bytes if compact_min_bytes is not None else segment_size
        self._compact_step = compact_step_bytes
        self._reserve = reserve_bytes
        try:
            if not self._dir.is_dir():
                self._dir.mkdir(mode=0o700, parents=True)  # private: message bodies
                seg.fsync_dir(self._dir.parent)  # the directory itself must survive a crash
        except OSError as exc:
            raise StoreError(f"cannot create journal directory {self._dir}: {exc}") from exc
        self._lock = seg.DirectoryLock(self._dir)
        self._where: dict[int, int] = {}  # record_id -> file offset of its content (see read)
        # Which files a compaction may pass over without reading them (_unneeded):
        # record_id -> LSN of the record that holds a live record's place in the order, for
        # those whose content is a later record (updated ones);
        self._anchors: dict[int, int] = {}
        # files with LSNs at or below this may hold what the owner cannot see (written before
        # load, or before an id was added again): they are always read;
        self._skip_floor = 0
        self._max_added = 0
        self._ending_from = 0  # see _end_from
        self._readers = SegmentReaders(self._dir)
        # Owner side.
        self._batch = rec.Gather()
        self._salt = 0
        self._active = 0  # number of the newest segment (the one appended to unless sealed)
        self._sealed = True  # the next append starts a new segment
        self._active_size = 0
        self._segs: list[SegmentInfo] = []
        self._bases: list[int] = []
        # The dead bytes of every file but the newest, kept as they change, and the prefix's
        # dead bytes below which no compaction can be due (_maybe_compact; 0: look again).
        self._closed_dead = 0
        self._no_job_below = 0.0
        self._taken = 0
        # Batches handed to the writer, (LSN, segment, where the batch ends), until durable;
        # then the newest durable one's segment and end: reads never look past it (reader.py).
        self._taken_ends: deque[tuple[int, int, int]] = deque()
        self._durable_end = (0, 0)
        self._appended_bytes = 0
        self._job: Compaction | None = None
        self._job_segs = 0
        self._job_dead0 = 0
        self._retry_at = 0
        self._closing = False
        self._compactions = 0
        self._last_error = ""
        self._out_bytes = 0  # bytes handed to the writer so far
        self._limit = 1 << 62  # _out_bytes + len(_buf) beyond this eats into the reserve
        self._health = space.HEALTHY
        self._free = -1
        # Writer side.
        self._w_out = BlockWriter(direct=direct)
        self._w_fd = -1
        self._w_seg = 0
        self._w_off = 0  # the segment's durable length: where the next batch goes
        self._w_new = False  # the segment's directory entry is not yet synced
        self._w_failed = ""
        self._w_full = ""  # why the last batch did not fit ("" once a write succeeded)
        self._w_full_lsn = 0
        self._w_space = (-1, 0)  # (free bytes, bytes written) when last measured
        self._fsyncs = 0
        self._written = 0

    @property
    def directory(self) -> Path:
        return self._dir

    # -- hooks for JournalCore -----------------------------------------------------------------
    def _log(self, rtype: int, record_id: int, kind: int, payload: Content, txid: int, lsn: int) -> int:
        return self._log_run(rtype, kind, ((record_id, payload),), txid, lsn)[0]

    def _log_run(self, rtype: int, kind: int, items: Sequence[tuple[int, Content]], txid: int, lsn: int) -> list[int]:
        if not self._batch and (self._sealed or self._active_size >= self._segment_size):
            self._roll(lsn - 1)
        info = self._segs[-1]
        offset = info.size
        sizes = self._batch.add_run(self._salt, rtype, 0, kind, lsn, txid, items)
        values = []
        for size in sizes:
            values.append(offset << OFFSET_SHIFT | size)
            offset += size
        size = offset - info.size
        info.size = offset
        self._active_size += size
        self._appended_bytes += size
        if rtype in (rec.COMMIT, rec.ROLLBACK):
            info.dead += size
            began = self._ending_from  # see _end_from
            if began < 0:
                if -began <= info.base_lsn:  # the transaction began in an earlier file
                    info.older_tx_from = min(info.older_tx_from or -began, -began)
            elif began <= info.base_lsn:
                info.ends_older_tx = True
        elif rtype == rec.ADD:
            # An id added again could have its earlier life's DELETE in a file that would be
            # passed over; the engine never does it (ids only grow), but the contract allows it.
            for record_id, _ in items:
                if record_id <= self._max_added:
                    self._skip_floor = lsn
                    self._no_job_below = 0  # fewer files may be passed over: costs change
                else:
                    self._max_added = record_id
                lsn += 1
        if self._out_bytes + self._batch.size > self._limit and not self.refusal:
            self.refresh()
        return values

    # A logged operation's value is (file offset << OFFSET_SHIFT) | size on disk.
    def _set_live(self, record_id: int, op: int, value: int, lsn: int) -> None:
        old = self._live.get(record_id)
        if old is not None:
            self._dead(old >> 32, old & SIZE_MASK)
            if record_id not in self._anchors:  # the old record was its first: it keeps the place
                self._anchors[record_id] = old >> 32
        self._live[record_id] = lsn << 32 | value & SIZE_MASK
        self._where[record_id] = value >> OFFSET_SHIFT

    def _remove_live(self, record_id: int, value: int, lsn: int) -> None:
        old = self._live.pop(record_id, None)
        if old is not None:
            self._dead(old >> 32, old & SIZE_MASK)
            del self._where[record_id]
            self._anchors.pop(record_id, None)
        self._dead(lsn, value & SIZE_MASK)

    def _discard(self, value: int, lsn: int) -> None:
        self._dead(lsn, value & SIZE_MASK)

    def _dead(self, lsn: int, size: int) -> None:
        bases = self._bases
        if lsn > bases[-1]:
            self._segs[-1].dead += size
        else:
            self._segs[bisect_left(bases, lsn) - 1].dead += size
            self._closed_dead += size  # not the newest file: that is the branch above

    def _roll(self, base_lsn: int) -> None:
        if self._segs:
            self._closed_dead += self._segs[-1].dead  # the newest file joins the closed ones
        self._no_job_below = 0  # the prefix has another file
        self._active += 1
        self._sealed = False
        self._salt = new_salt()
        header = rec.encode_segment_header(self._salt, self._active, self._active, base_lsn)
        self._batch.add_encoded(header)
        self._active_size = len(header)
        self._segs.append(SegmentInfo(self._active, self._active, base_lsn, len(header), len(header)))
        self._bases.append(base_lsn)

    # -- the contract --------------------------------------------------------------------------
    def load(self, trim: Trim | None = None) -> LoadResult:
        """Replay the directory (see store/replay.py); truncates a torn tail. ``trim``
        shortens the payloads returned (journal.py); ``read`` gives the whole ones.

        Raises:
            StoreError: called twice or after close; the directory is damaged beyond a
                torn tail (a missing or unreadable older file).
        """
        if self._state != NEW:
            raise StoreError("load() was already called" if self._state == READY else "journal is closed")
        try:
            loaded = load_directory(self._dir, trim)
        except OSError as exc:
            raise StoreError(f"cannot read journal {self._dir}: {exc}") from exc
        self._live = loaded.index
        self._where = loaded.where
        self._skip_floor = loaded.max_lsn
        self._max_added = max(self._live, default=0)
        self._segs = loaded.segments
        self._bases = [s.base_lsn for s in self._segs]
        self._closed_dead = sum(s.dead for s in self._segs[:-1])
        self._no_job_below = 0
        self._active = self._segs[-1].hi if self._segs else 0
        self._lsn = self._durable = self._taken = loaded.max_lsn
        with contextlib.suppress(OSError):
            self._w_space = (space.free_bytes(self._dir), 0)
        for tx in loaded.prepared:
            assert tx.xid is not None
            ops = [(op, rid, lsn, value) for op, rid, lsn, value, _record in tx.ops]
            self._adopt_prepared(tx.txid, tx.xid, tx.prepare_lsn, tx.prepare_size, ops)
        self._state = READY
        self.refresh()
        self._roll_back_incomplete(loaded.incomplete)
        return loaded.result

    def commit(self, txid: int) -> int:
        """As JournalCore.commit (notes where the transaction began, for ``_unneeded``).

        Raises:
            StoreError: txid out of range, or the journal is not loaded / closed.
        """
        self._ending_from = self._end_from(txid, committing=True)
        try:
            return super().commit(txid)
        finally:
            self._ending_from = 0

    def rollback(self, txid: int) -> int:
        """As JournalCore.rollback (notes where the transaction began, for ``_unneeded``).

        Raises:
            StoreError: txid out of range, or the journal is not loaded / closed.
        """
        self._ending_from = self._end_from(txid, committing=False)
        try:
            return super().rollback(txid)
        finally:
            self._ending_from = 0

    def _end_from(self, txid: int, *, committing: bool) -> int:
        """Where the transaction whose end is about to be logged began, when that end must be
        read with its operations (``_unneeded``): a compaction that read the operations but
        passed over the end would copy the transaction as still open. Not a commit that adds
        or updates, nor a prepared transaction (it would come back in doubt).

        A rollback, or a commit of deletes only (what they delete is dead by then), is
        returned negated (``-first LSN``): its file may be passed over, but only with every
        file from the one holding its first operation (``_keep_ends``). Copied as still open,
        its operations would be taken in by the next transaction to reuse the txid before a
        restart rolled them back: a rolled-back add resurrected, or deletes replayed, in that
        transaction's commit or prepared view. 0 when there is nothing to end."""
        tx = self._txs.get(txid) if type(txid) is int else None
        if tx is None:
            return 0
        if tx.prepare_value is not None:
            return min(tx.ops[0][2], tx.prepare_lsn) if tx.ops else tx.prepare_lsn
        if committing and any(op != rec.DELETE for op, _rid, _lsn, _value in tx.ops):
            return tx.ops[0][2]
        return -tx.ops[0][2] if tx.ops else 1 << 63

    def take_pending(self) -> Pending | None:
        """The batch appended since the last call; may carry a compaction slice (see journal.py)."""
        if self._state != READY:
            return None
        if self._batch:
            info = self._segs[-1]
            size = self._batch.add(self._salt, rec.BATCH, rec.FLAG_PADDED, 0, self._lsn, 0, 0)
            size += self._batch.add_pad(self._salt, self._lsn, info.size + size)
            info.size += size
            info.dead += size
            self._active_size += size
            self._out_bytes += self._batch.size
            data = self._batch.take()
            self._taken = self._lsn
            self._taken_ends.append((self._lsn, self._active, info.size))
            task = self._job if self._job is not None else self._maybe_compact()
            return Pending(data, self._lsn, self._active, task)
        if self._taken != self._durable:
            return None  # a batch is in flight; background work waits behind it
        job = self._job if self._job is not None else self._maybe_compact()
        if job is not None and not job.finished:
            return Pending((), self._lsn, self._active, job)
        return None

    def write_pending(self, pending: Pending) -> None:
        """Write the batch to its segment and fdatasync it; then a slice of background work.

        Raises:
            JournalFull: the write found no space (ENOSPC, EDQUOT): the segment is cut back
                to its last durable byte; write this Pending again, before any other.
            StoreError: any other failure (nothing in this batch is durable, and the journal
                accepts no more writes: close it).
        """
        if self._w_failed:
            raise StoreError(f"an earlier journal write failed ({self._w_failed}); close the journal")
        if self._w_full and pending.lsn != self._w_full_lsn:
            raise StoreError(f"the batch up to LSN {self._w_full_lsn} did not fit and must be written first")
        data = pending.data
        if data:
            stage = "write"
            try:
                if pending.segment != self._w_seg:
                    self._w_close()
                    path = self._dir / seg.segment_name(pending.segment, pending.segment)
                    self._w_fd = self._w_out.create(path)
                    self._w_seg, self._w_off, self._w_new = pending.segment, 0, True
                fd = self._w_fd
                written = self._w_out.write(fd, data, self._w_off)
                stage = "sync"
                os.fdatasync(fd)
                if self._w_new:
                    seg.fsync_dir(self._dir)  # the new file's name must survive too
                    self._w_new = False
            except OSError as exc:
                error = f"{type(exc).__name__}: {exc}"
                # Only a write is retried: after a failed fsync the page cache's state is unknown.
                if stage == "write" and exc.errno in space.RECOVERABLE_ERRNOS and self._cut_back():
                    self._w_full, self._w_full_lsn = error, pending.lsn
                    raise JournalFull(f"journal write found no space: {exc}") from exc
                self._w_failed = error
                raise StoreError(f"journal write failed: {exc}") from exc
            self._w_off += written
            self._w_full = ""
            self._fsyncs += 1
            self._written += written
            with contextlib.suppress(OSError):
                self._w_space = (space.free_bytes(self._w_fd), self._written)
        if pending.task is not None:
            pending.task.run_step()

    def _cut_back(self) -> bool:
        """After a write found no space: the segment back to its durable length (False when
        even that failed)."""
        if self._w_fd < 0:
            return True  # the file was not even created
        try:
            os.ftruncate(self._w_fd, self._w_off)
        except OSError:
            return False
        return True

    def check_space(self) -> None:
        """Measure the free space again (writer side, blocking); ``refresh`` takes it in."""
        with contextlib.suppress(OSError):
            self._w_space = (space.free_bytes(self._dir), self._written)

    def refresh(self) -> None:
        """Take in the writer's view of the disk: ``refusal`` and the byte budget follow it."""
        if self._state != READY:
            return
        if self._w_failed:
            self._health, self.refusal, self._limit = space.FAILED, space.failed_refusal(self._w_failed), -1
            return
        if self._w_full:
            self._health, self.refusal, self._limit = space.DISK_FULL, space.disk_full_refusal(self._w_full), -1
            return
        free, written = self._w_space
        self._free = free
        if free < 0:  # never measured: nothing to go by
            self._health, self.refusal, self._limit = space.HEALTHY, "", 1 << 62
            return
        self._limit = written + free - self._reserve
        unwritten = self._out_bytes + self._batch.size - written
        if unwritten > free - self._reserve:
            self._health, self.refusal = space.LOW_SPACE, space.low_space_refusal(free, unwritten, self._reserve)
        else:
            self._health, self.refusal = space.HEALTHY, ""

    def mark_durable(self, lsn: int) -> None:
        """Record that ``write_pending`` returned for ``lsn``; takes in a finished compaction.

        Raises:
            StoreError: ``lsn`` was never appended.
        """
        if self._state != READY:
            return
        if lsn > self._lsn:
            raise StoreError(f"mark_durable({lsn}) beyond the last appended LSN {self._lsn}")
        if lsn > self._durable:
            self._durable = lsn
        ends = self._taken_ends
        while ends and ends[0][0] <= lsn:
            _lsn, segment, end = ends.popleft()
            self._durable_end = (segment, end)
        job = self._job
        if job is not None and job.finished:
            self._job_done(job)
        self.refresh()

    def sync(self) -> None:
        """take_pending + write_pending + mark_durable here (one compaction slice at most)."""
        pending = self.take_pending()
        if pending is not None:
            self.write_pending(pending)
            self.mark_durable(pending.lsn)

    def read(self, record_id: int) -> bytes:
        """The whole payload of live record ``record_id``, read back from its file (pread,
        checksum checked); see journal.py.

        Raises:
            StoreError: the journal is not loaded or closed; the record is not live, or its
                content is not durable yet; the file cannot be read or the record there is
                damaged.
        """
        self._ready()
        value = self._live.get(record_id)
        if value is None:
            raise StoreError(f"record {record_id} does not exist")
        lsn = value >> 32
        if lsn > self._durable:
            raise StoreError(f"record {record_id} is not durable yet (LSN {lsn} > {self._durable})")
        bases = self._bases
        info = self._segs[-1] if lsn > bases[-1] else self._segs[bisect_left(bases, lsn) - 1]
        segment, end = self._durable_end
        limit = end if info.lo == info.hi == segment else -1  # older files are durable whole
        return self._readers.read(info.lo, info.hi, self._where[record_id], record_id, value & SIZE_MASK, limit)

    def size(self, record_id: int) -> int:
        """The length of live record ``record_id``'s payload.

        Raises:
            StoreError: the journal is not loaded or closed, or the record is not live.
        """
        self._ready()
        value = self._live.get(record_id)
        if value is None:
            raise StoreError(f"record {record_id} does not exist")
        return (value & SIZE_MASK) - rec.HEADER_SIZE

    def compact(self) -> None:
        """Sync, then compact every file now (blocking), whatever the thresholds say. Like
        ``sync()``, for the owner thread while no writer runs.

        Raises:
            StoreError: the journal is not ready, or the compaction failed (the journal is
                still consistent: the old files stay in charge).
        """
        self._ready()
        self.sync()
        self._drain_job()
        if not self._segs:
            return
        self._sealed = True  # the newest file joins the prefix; the next append starts a new one
        self._no_job_below = 0
        job = self._start_job(len(self._segs))
        self._drain_job()
        if job.error:
            raise StoreError(job.error)

    def stats(self) -> JournalStats:
        open_txs, prepared = self._counts()
        return JournalStats(
            self._lsn, self._durable, len(self._live), open_txs, prepared,
            segments=len(self._segs), disk_bytes=sum(s.size for s in self._segs),
            dead_bytes=sum(s.dead for s in self._segs), fdatasyncs=self._fsyncs, bytes_written=self._written,
            compactions=self._compactions, compacting=self._job is not None,
            last_error=self._w_failed or self._w_full or self._last_error, state=self._health,
            free_bytes=self._free, reserve_bytes=self._reserve,
        )

    def close(self) -> None:
        """Write and sync what is buffered (not a compaction in progress), release the directory.

        Raises:
            StoreError: the final write failed (the directory is released all the same).
        """
        if self._state == CLOSED:
            return
        unwritten = self._w_full
        try:
            if self._state == READY and not self._w_failed and not unwritten:
                self._abort_job()
                self._closing = True  # no new compaction while closing
                self.sync()
        finally:
            self._release()
        if unwritten:
            raise StoreError(f"closed with operations after LSN {self._durable} unwritten: the disk was full "
                             f"({unwritten}); they were never durable, so never acknowledged")

    def abandon(self) -> None:
        """Release the directory without writing what is buffered: what a crash leaves
        (for tests; durable data is of course still on disk)."""
        if self._state != CLOSED:
            self._batch.take()
            self._release(crash=True)

    # -- compaction (owner side) ---------------------------------------------------------------
    def _maybe_compact(self) -> Compaction | None:
        if self._closing or self._appended_bytes < self._retry_at:
            return None
        count = len(self._segs) if self._sealed else len(self._segs) - 1
        if count <= 0:
            return None
        # Between the events that reset ``_no_job_below`` (a file joins the prefix, a
        # compaction is taken in, a load, an id added again: fewer files may be passed over)
        # the prefix's dead bytes only grow. A death of d bytes raises every later prefix's
        # ``freed`` by d and lowers its ``cost`` by at most d, unless its file becomes one to
        # pass over, which takes at least the bytes that file still had live. So after a
        # look that found no prefix due, none can be before the dead bytes have grown by
        # the least of: half the smallest shortfall of the first choice, the fallback's
        # shortfall, the live bytes of the closest file to becoming passed over. Each sync
        # until then answers from the counts (kept in _dead and _roll).
        dead = self._closed_dead + (self._segs[-1].dead if self._sealed else 0)
        if dead < self._no_job_below:
            return None
        if dead - EMPTY_FILE < self._compact_min:  # no prefix frees enough (both choices need it)
            self._no_job_below = self._compact_min + EMPTY_FILE
            return None
        # First choice, the shortest prefix that frees at least ``compact_min`` and at least
        # what the job would cost: the bytes it reads (files it cannot pass over, see
        # _unneeded) and those it copies. A queue drained in order thus waits until its oldest
        # files are wholly dead, rather than rewriting messages about to be got.
        prefix = self._segs[:count]
        skip = self._skippable(prefix)
        freed = -EMPTY_FILE  # the job writes a header and a BATCH of its own
        cost = 0
        short = float("inf")
        for n, info in enumerate(prefix, 1):
            freed += info.dead
            if not skip[n - 1]:
                cost += info.size + info.size - info.dead
                if info.dead < info.size:
                    short = min(short, info.size - info.dead)
            if freed >= self._compact_min and freed >= cost:
                return self._start_job(n)
            short = min(short, max(self._compact_min - freed, cost - freed) / 2)
        # Else the whole prefix, once its dead bytes are ``compact_ratio`` of it and two
        # segments more than ``compact_min`` (what a queue drained in order holds dead before
        # its oldest files are: the file being drained, and the first file, which also
        # holds the definitions and so is never passed over).
        size = sum(info.size for info in prefix)
        if freed >= self._compact_min + 2 * self._segment_size and freed >= self._compact_ratio * size:
            return self._start_job(count)
        short = min(short, max(self._compact_min + 2 * self._segment_size - freed, self._compact_ratio * size - freed))
        self._no_job_below = dead + short
        return None

    def _skippable(self, prefix: list[SegmentInfo]) -> list[bool]:
        """By the counts: files wholly dead, written since load, ending no transaction begun
        in an earlier file that is read."""
        skip = [s.dead >= s.size and not s.ends_older_tx and s.base_lsn >= self._skip_floor for s in prefix]
        return self._keep_ends(prefix, skip)

    def _keep_ends(self, prefix: list[SegmentInfo], skip: list[bool]) -> list[bool]:
        """``skip`` with every file read that ends a transaction (``older_tx_from``) some of
        whose operations are in a file read: an end passed over would leave them open."""
        bases = self._bases
        for i, info in enumerate(prefix):
            if skip[i] and info.older_tx_from:
                first = max(0, bisect_left(bases, info.older_tx_from) - 1)  # the file of that LSN
                if not all(skip[first:i]):
                    skip[i] = False
        return skip

    def _unneeded(self, count: int) -> list[bool]:
        """Which of the first ``count`` files a compaction may pass over without reading:
        wholly dead by the byte counts, written since load, ending no transaction begun in
        an earlier file that is read (its operations would look open: ``_keep_ends``), and
        holding no live record's content or place (``_anchors``) nor any record of an open
        transaction. The last three are checked against the index rather than trusted to the
        counts."""
        prefix = self._segs[:count]
        skip = self._skippable(prefix)
        if not any(skip):
            return skip
        last = self._bases[count] if count < len(self._bases) else self._lsn
        ranges = [(i, s.base_lsn, self._bases[i + 1] if i + 1 < len(self._bases) else last)
                  for i, s in enumerate(prefix) if skip[i]]
        needed = [v >> 32 for v in self._live.values()]
        for tx in self._txs.values():
            needed += [lsn for _op, _rid, lsn, _value in tx.ops]
            if tx.prepare_value is not None:
                needed.append(tx.prepare_lsn)
        anchors = self._anchors.values()
        for i, lo, hi in ranges:
            if any(lo < lsn <= hi for lsn in needed):
                # The counts said nothing lives there: they are wrong; read it to be safe.
                log.warning("event=compaction_counts_disagree file=%d-%d lsns=%d..%d", prefix[i].lo, prefix[i].hi,
                            lo + 1, hi)
                skip[i] = False
            elif any(lo < lsn <= hi for lsn in anchors):
                skip[i] = False  # an updated record's first place (counted dead, holds the order)
        return self._keep_ends(prefix, skip)  # again: files just kept may hold operations

    def _start_job(self, count: int) -> Compaction:
        # Called only when every operation so far is durable or about to be written ahead of
        # the job, so the snapshot describes durable state by the time the job reads it.
        prefix = self._segs[:count]
        sources = [seg.SegmentFile(s.lo, s.hi) for s in prefix]
        job = Compaction(self._dir, sources, prefix[0].base_lsn, self._lsn, dict(self._live), self._compact_step,
                         skip=self._unneeded(count))
        self._readers.pin([(s.lo, s.hi) for s in prefix])  # the job unlinks them before _job_done
        self._job, self._job_segs, self._job_dead0 = job, count, sum(s.dead for s in prefix)
        return job

    def _job_done(self, job: Compaction) -> None:
        self._job = None
        old = self._segs[:self._job_segs]
        if job.renamed:
            # Deaths counted against the old files since the snapshot are dead in the new one.
            dead = max(0, sum(s.dead for s in old) - self._job_dead0) + job.framing
            self._segs[:self._job_segs] = [SegmentInfo(job.lo, job.hi, old[0].base_lsn, job.out_size, dead)]
            self._bases = [s.base_lsn for s in self._segs]
            self._closed_dead = sum(s.dead for s in self._segs[:-1])  # once per compaction
            self._no_job_below = 0
            self._ends_moved(job.open_lsns)
            self._compactions += 1
            self._relocate(job.moved)
            self._readers.forget([(s.lo, s.hi) for s in old])
        else:
            self._readers.unpin([(s.lo, s.hi) for s in old])  # the old files stay in charge
        if job.error:
            self._last_error = job.error
            if not job.renamed:
                self._retry_at = self._appended_bytes + max(self._compact_min, self._segment_size)

    def _ends_moved(self, open_lsns: list[int]) -> None:
        """After a compaction renamed its file into place (the first in ``_segs``): the ends
        in later files (``older_tx_from``) of transactions begun in it need it read only while
        it holds some of their operations, copied as still open (``open_lsns``); the others
        were passed over with their files, so those ends now wait only on later files."""
        if len(self._segs) < 2:
            return
        after = self._bases[1]  # the new file holds the LSNs up to this one
        for info in self._segs[1:]:
            began = info.older_tx_from
            if began and began <= after:
                info.older_tx_from = min((lsn for lsn in open_lsns if lsn >= began), default=after + 1)

    def _relocate(self, moved: dict[int, int]) -> None:
        """Point the records a compaction copied at their new offsets (``moved``: the LSN
        of each copied record with content -> its offset in the new file). A record keeps
        its LSN when copied, which is how both its file and its entry here are found."""
        if not moved:
            return
        where = self._where
        for rid, value in self._live.items():
            offset = moved.get(value >> 32)
            if offset is not None:
                where[rid] = offset
        for tx in self._txs.values():  # their records become live at commit, from the new file
            tx.ops = [(op, rid, lsn, moved[lsn] << OFFSET_SHIFT | value & SIZE_MASK if lsn in moved else value)
                      for op, rid, lsn, value in tx.ops]

    def _drain_job(self) -> None:
        """Run the current compaction to its end on this thread (everything is synced and
        no writer runs, so this thread may act as the writer)."""
        job = self._job
        while job is not None and not job.finished:
            job.run_step()
        if job is not None:
            self._job_done(job)

    def _abort_job(self, *, crash: bool = False) -> None:
        if self._job is not None:
            self._job.abort(crash=crash)
            self._job_done(self._job)

    # -- shutdown ------------------------------------------------------------------------------
    def _w_close(self) -> None:
        if self._w_fd >= 0:
            fd, self._w_fd = self._w_fd, -1
            with contextlib.suppress(OSError):
                os.close(fd)
        self._w_seg = 0

    def _release(self, *, crash: bool = False) -> None:
        self._abort_job(crash=crash)
        self._readers.close()
        self._w_close()
        self._w_out.close()
        self._lock.release()
        self._state = CLOSED
