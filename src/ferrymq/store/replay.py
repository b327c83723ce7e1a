"""L1: recovery of a file journal — replay the segment files into live records.

Replay rules (the memory journal folds its durable operations by the same ones):

- ADD and UPDATE of an immediate operation set the record (an ADD of an id already
  present, which only compaction writes, replaces it in place; an UPDATE of an absent id
  adds it); DELETE removes it if present. A placeholder ADD (compaction's "content
  follows later") holds the record's place until an UPDATE or ADD brings the content; one
  that never gets content is damage, counted in ``bad_records``.
- Transactional operations wait in their transaction; COMMIT applies them in order,
  ROLLBACK drops them, PREPARE marks the transaction as surviving a restart.

The torn-tail rule, for the newest segment only (the only file a crash can leave half
written; older ones were complete and synced before it was created): every batch ends with
a BATCH record, followed by its PAD when the BATCH says FLAG_PADDED (records.py), and the
writer starts a batch only after the previous one's fdatasync returned. So bytes after the
last batch's end (its PAD, or its BATCH if unpadded) belong to a batch that was never
acknowledged; and if the file ends exactly there but that batch contains a damaged record,
or its BATCH says padded but no intact PAD follows, that batch was the one being written (a
crash can persist its blocks out of order) and it goes too. The discarded bytes are
truncated away and counted in ``torn_bytes``. Damage anywhere else is a bad record:
skipped, counted, never delivered. PAD records carry nothing and are skipped.

Where each live record's content sits is kept too (``Loaded.where``: its offset in its
file), so the journal can read it back; a ``trim`` function (journal.py) makes the records
handed to the caller shorter (a record's content is kept whole while its transaction is
open, and trimmed when it becomes live), so a restart need not hold every payload.

Speed matters here (a restart with a million records must take seconds): each file is
mmapped and parsed in one tight loop with ``struct.unpack_from`` and CRC32C over
memoryview slices, immediate ADDs take the short path, and the cyclic garbage collector is
paused while a million Record objects are created.
"""

from __future__ import annotations

import gc
import mmap
import os
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from crc32c import crc32c

from ferrymq.errors import StoreError
from ferrymq.store import segments as seg
from ferrymq.store.core import prepared_view
from ferrymq.store.journal import DAMAGE_NOTES, LoadResult, PreparedTx, Record, Trim
from ferrymq.store.records import (
    ADD,
    BAD,
    BATCH,
    COMMIT,
    DELETE,
    FLAG_PADDED,
    FLAG_PLACEHOLDER,
    HEADER,
    HEADER_SIZE,
    KNOWN_TYPES,
    MAGIC,
    MAX_PAYLOAD,
    PAD,
    PREPARE,
    ROLLBACK,
    SEGMENT_RECORD_SIZE,
    UPDATE,
    Entry,
    Findable,
    decode_segment_header,
    resync,
    scan,
)

WINDOW: Final = 16 * 1024 * 1024  # replayed between two releases of the pages read
SIZE_MASK: Final = 0xFFFFFFFF  # index values pack (lsn << 32) | record size on disk
OFFSET_SHIFT: Final = 32  # a transaction's op values pack (offset << 32) | size
_PLACEHOLDER: Final = Record(0, 0, b"")


@dataclass(slots=True)
class SegmentInfo:
    """The owner's accounting for one file: LSNs in it are above ``base_lsn``."""

    lo: int
    hi: int
    base_lsn: int
    size: int
    dead: int
    ends_older_tx: bool = False  # holds the COMMIT/ROLLBACK of a transaction begun in an earlier file
    # The lowest first LSN of the transactions begun in an earlier file whose end this file
    # holds but need not be read for itself (file.py's _end_from); 0 when none.
    older_tx_from: int = 0


@dataclass(slots=True)
class LoadedTx:
    """A transaction found open on disk: ops are (type, record_id, lsn, value, record), the
    value packing the op's file offset and size: (offset << OFFSET_SHIFT) | size."""

    txid: int
    xid: bytes | None = None
    prepare_lsn: int = 0
    prepare_size: int = 0
    ops: list[tuple[int, int, int, int, Record]] = field(default_factory=list)


@dataclass(slots=True)
class Loaded:
    result: LoadResult
    index: dict[int, int]  # record_id -> (lsn << 32) | size of the record holding its content
    where: dict[int, int]  # record_id -> that record's offset in its file
    prepared: list[LoadedTx]
    incomplete: list[int]
    segments: list[SegmentInfo]
    max_lsn: int


class _Replay:
    def __init__(self, trim: Trim | None) -> None:
        self.trim = trim
        self.live: dict[int, Record] = {}
        self.index: dict[int, int] = {}
        self.where: dict[int, int] = {}
        self.txs: dict[int, LoadedTx] = {}
        self.placeholders: set[int] = set()
        self.max_lsn = 0
        self.bad = 0
        self.file = ""  # the file being replayed, for the damage notes
        self.damage: list[str] = []

    def note(self, text: str) -> None:
        """Say where damage was found (LoadResult.damage), up to DAMAGE_NOTES lines."""
        if len(self.damage) < DAMAGE_NOTES:
            self.damage.append(text)

    def feed(self, raw: Findable, buf: memoryview, pos: int, end: int, salt: int, stop: int) -> int:
        """Replay the records in ``buf[pos:end]`` that start before ``stop`` (the hot loop of
        every restart); returns where it stopped."""
        unpack = HEADER.unpack_from
        live = self.live
        index = self.index
        where = self.where
        trim = self.trim
        placeholders = self.placeholders
        known = KNOWN_TYPES
        max_lsn = self.max_lsn
        hs = HEADER_SIZE
        limit = min(end, stop)
        while pos < limit:
            if pos + hs <= end:
                crc, magic, rtype, flags, length, kind, lsn, rid, txid = unpack(buf, pos)
                nxt = pos + hs + length
                if (magic == MAGIC and nxt <= end and length <= MAX_PAYLOAD and rtype in known
                        and crc32c(buf[pos + 4:nxt], salt) == crc):
                    if lsn > max_lsn:
                        max_lsn = lsn
                    if rtype == ADD and not txid and not flags:
                        if trim is None:
                            live[rid] = Record(rid, kind, bytes(buf[pos + hs:nxt]))
                        else:
                            keep = trim(kind, buf[pos + hs:nxt])
                            live[rid] = Record(rid, kind, bytes(buf[pos + hs:min(nxt, pos + hs + max(0, keep))]))
                        index[rid] = lsn << 32 | (nxt - pos)
                        where[rid] = pos
                        if placeholders:
                            placeholders.discard(rid)
                    else:
                        self._other(rtype, flags, kind, lsn, rid, txid, buf, pos, nxt)
                    pos = nxt
                    continue
            # Same validity test as records.scan, so both agree on where damage is.
            at, pos = pos, resync(raw, buf, pos, end, salt)
            self.bad += 1
            self.note(f"{self.file} offset {at}: a damaged record; {pos - at} bytes skipped to the next intact "
                      f"record at offset {pos}")
        self.max_lsn = max_lsn
        return pos

    def _other(self, rtype: int, flags: int, kind: int, lsn: int, rid: int, txid: int, buf: memoryview,
               pos: int, nxt: int) -> None:
        size = nxt - pos
        if rtype in (BATCH, PAD):
            return
        if rtype in (ADD, UPDATE, DELETE):
            if txid:
                record = _PLACEHOLDER if rtype == DELETE else Record(rid, kind, bytes(buf[pos + HEADER_SIZE:nxt]))
                tx = self.txs.get(txid)
                if tx is None:
                    tx = self.txs[txid] = LoadedTx(txid)
                tx.ops.append((rtype, rid, lsn, pos << OFFSET_SHIFT | size, record))
            elif rtype == DELETE:
                self._delete(rid)
            elif flags & FLAG_PLACEHOLDER:
                self.live[rid] = _PLACEHOLDER
                self.index[rid] = lsn << 32 | size
                self.where[rid] = pos
                self.placeholders.add(rid)
            else:
                self._set(Record(rid, kind, self._kept(kind, buf[pos + HEADER_SIZE:nxt])), lsn, size, pos)
        elif rtype == COMMIT:
            done = self.txs.pop(txid, None)
            for op, op_rid, op_lsn, op_value, record in done.ops if done else ():
                if op == DELETE:
                    self._delete(op_rid)
                else:
                    if self.trim is not None:
                        record = Record(op_rid, record.kind, self._kept(record.kind, memoryview(record.payload)))
                    self._set(record, op_lsn, op_value & SIZE_MASK, op_value >> OFFSET_SHIFT)
        elif rtype == ROLLBACK:
            self.txs.pop(txid, None)
        elif rtype == PREPARE:
            tx = self.txs.get(txid)
            if tx is None:
                tx = self.txs[txid] = LoadedTx(txid)
            tx.xid, tx.prepare_lsn, tx.prepare_size = bytes(buf[pos + HEADER_SIZE:nxt]), lsn, size

    def _kept(self, kind: int, payload: memoryview) -> bytes:
        """What of a payload the caller gets back from load (all of it, or trim's part)."""
        if self.trim is None:
            return bytes(payload)
        return bytes(payload[:max(0, self.trim(kind, payload))])

    def _set(self, record: Record, lsn: int, size: int, offset: int) -> None:
        self.live[record.record_id] = record
        self.index[record.record_id] = lsn << 32 | size
        self.where[record.record_id] = offset
        self.placeholders.discard(record.record_id)

    def _delete(self, rid: int) -> None:
        self.live.pop(rid, None)
        self.index.pop(rid, None)
        self.where.pop(rid, None)
        self.placeholders.discard(rid)


def release_pages(mm: mmap.mmap, released: int, upto: int) -> int:
    """Drop the mapping's pages in ``[released, upto)`` (whole pages) from this process:
    a file read through a mapping would otherwise count in its resident memory until the
    mapping closes, all of a compacted file of many gigabytes. They stay in the page cache.
    Returns the new start of what is still mapped in."""
    end = upto - upto % mmap.PAGESIZE
    if end > released:
        start = released - released % mmap.PAGESIZE
        mm.madvise(mmap.MADV_DONTNEED, start, end - start)
        return end
    return released


def tail_cut(raw: Findable, buf: memoryview, size: int, salt: int) -> int:
    """Where the newest segment's acknowledged bytes end (see the module docstring)."""
    entries, _ = scan(raw, buf, SEGMENT_RECORD_SIZE, size, salt)
    batch_ends = [i for i, entry in enumerate(entries) if entry[2] == BATCH]
    if not batch_ends:
        return SEGMENT_RECORD_SIZE
    last = batch_ends[-1]
    # The batch before the last one ends at its BATCH or at the PAD after it: the last starts there.
    first = _after_batch(entries, batch_ends[-2]) if len(batch_ends) > 1 else 0
    before = entries[first - 1][1] if first else SEGMENT_RECORD_SIZE
    end_at = _after_batch(entries, last)
    if entries[last][3] & FLAG_PADDED and end_at == last + 1:
        return before  # padded, but its PAD did not reach the disk: it was being written
    end = entries[end_at - 1][1]
    if end < size:
        return end
    if any(entries[i][2] == BAD for i in range(first, last)):
        return before
    return size


def _after_batch(entries: list[Entry], i: int) -> int:
    """The index of the first entry after the batch whose BATCH record is ``entries[i]``."""
    if entries[i][3] & FLAG_PADDED and i + 1 < len(entries) and entries[i + 1][2] == PAD:
        return i + 2
    return i + 1


def load_directory(directory: Path, trim: Trim | None = None) -> Loaded:
    """Replay every file of the journal in ``directory``; repairs the torn tail.

    Raises:
        StoreError: a file other than the newest is unreadable, or the directory's files
            do not form one journal (see segments.survey).
    """
    kept, superseded, temps = seg.survey(directory)
    seg.remove_files(directory, superseded + temps)
    replay = _Replay(trim)
    infos: list[SegmentInfo] = []
    torn = 0
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a million Records would trigger dozens of full, useless collections
    try:
        for i, sfile in enumerate(kept):
            newest = i == len(kept) - 1
            path = directory / sfile.name
            replay.file = sfile.name
            try:
                info, cut, size = _replay_file(replay, path, sfile, newest)
            except StoreError:
                if not (newest and sfile.lo == sfile.hi):
                    raise
                # The newest plain segment with an unreadable header: its creation was torn.
                torn += os.path.getsize(path)
                replay.note(f"{sfile.name}: the newest file's header is unreadable (its creation was torn); "
                            f"{os.path.getsize(path)} bytes removed")
                seg.remove_files(directory, [sfile.name])
                continue
            if cut < size:
                os.truncate(path, cut)
                seg.fsync_file(path)
                torn += size - cut
                replay.note(f"{sfile.name} offset {cut}: a batch never acknowledged (a torn tail); "
                            f"{size - cut} bytes cut")
            infos.append(info)
    finally:
        if gc_was_enabled:
            gc.enable()
    for rid in replay.placeholders:
        del replay.live[rid]
        del replay.index[rid]
        del replay.where[rid]
        replay.bad += 1
        replay.note(f"record {rid}: a compacted file holds its place, but its content is in no file")
    prepared: list[LoadedTx] = []
    incomplete: list[int] = []
    views: list[PreparedTx] = []
    for txid, tx in replay.txs.items():
        if tx.xid is None:
            incomplete.append(txid)
        else:
            prepared.append(tx)
            views.append(prepared_view(txid, tx.xid, [(op, rid if op == DELETE else rec) for op, rid, _, _, rec in tx.ops]))
    _account(infos, replay.index, prepared)
    result = LoadResult(list(replay.live.values()), views, torn, replay.bad, replay.damage)
    return Loaded(result, replay.index, replay.where, prepared, incomplete, infos, replay.max_lsn)


def _replay_file(replay: _Replay, path: Path, sfile: seg.SegmentFile, newest: bool) -> tuple[SegmentInfo, int, int]:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < SEGMENT_RECORD_SIZE:
            raise StoreError(f"{path}: file header is incomplete ({size} bytes)")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        mm.madvise(mmap.MADV_SEQUENTIAL)
        buf = memoryview(mm)
        try:
            salt, lo, hi, base_lsn, end_lsn = decode_segment_header(buf, str(path))
            if (lo, hi) != (sfile.lo, sfile.hi):
                raise StoreError(f"{path}: header says segments {lo}-{hi}")
            # Compacted files (end_lsn set) were renamed into place complete: no torn tail.
            cut = tail_cut(mm, buf, size, salt) if newest and not end_lsn else size
            pos = released = SEGMENT_RECORD_SIZE
            while pos < cut:
                pos = replay.feed(mm, buf, pos, cut, salt, pos + WINDOW)
                released = release_pages(mm, released, pos)
        finally:
            buf.release()
    finally:
        mm.close()
    replay.max_lsn = max(replay.max_lsn, base_lsn, end_lsn)
    return SegmentInfo(lo, hi, base_lsn, cut, 0), cut, size


def _account(infos: list[SegmentInfo], index: dict[int, int], prepared: list[LoadedTx]) -> None:
    """Dead bytes per file: everything but the live records' content and prepared txs."""
    live = [0] * len(infos)
    if len(infos) == 1:
        live[0] = sum(v & SIZE_MASK for v in index.values())
    elif infos:
        bases = [info.base_lsn for info in infos]
        for v in index.values():
            live[bisect_left(bases, v >> 32) - 1] += v & SIZE_MASK
    if infos:
        bases = [info.base_lsn for info in infos]
        for tx in prepared:
            live[bisect_left(bases, tx.prepare_lsn) - 1] += tx.prepare_size
            for _op, _rid, lsn, value, _rec in tx.ops:
                live[bisect_left(bases, lsn) - 1] += value & SIZE_MASK
    for info, n in zip(infos, live, strict=True):
        info.dead = max(0, info.size - n)
