"""L1: the on-disk framing of journal records, and the scanner that finds them again.

Every record is a 40-byte header followed by its payload; integers are little-endian.

| Off | Len | Field      | Meaning                                                           |
|----:|----:|------------|-------------------------------------------------------------------|
|   0 |   4 | crc        | CRC32C of bytes 4 .. end of payload, seeded with the file's salt  |
|   4 |   2 | magic      | 0x4D46 (b"FM")                                                    |
|   6 |   1 | type       | SEGMENT, ADD, UPDATE, DELETE, PREPARE, COMMIT, ROLLBACK, BATCH,   |
|     |     |            | PAD                                                               |
|   7 |   1 | flags      | FLAG_PLACEHOLDER: an ADD whose content comes in a later record;   |
|     |     |            | FLAG_PADDED: a BATCH followed by its batch's PAD                  |
|   8 |   4 | length     | payload length, at most MAX_PAYLOAD                               |
|  12 |   1 | kind       | the caller's record kind (0..255)                                 |
|  13 |   3 | reserved   | zero                                                              |
|  16 |   8 | lsn        | the operation's log sequence number                               |
|  24 |   8 | record_id  | ADD / UPDATE / DELETE; else 0                                     |
|  32 |   8 | txid       | the transaction, 0 for an immediate operation                     |
|  40 |   n | payload    | record content (ADD/UPDATE), the XA xid (PREPARE), file header,   |
|     |     |            | zeros (PAD)                                                       |

A file starts with a SEGMENT record (crc seeded with 0) whose 48-byte payload is:

| Off | Len | Field    | Meaning                                                              |
|----:|----:|----------|----------------------------------------------------------------------|
|   0 |   8 | magic    | b"FERRYMQJ"                                                          |
|   8 |   2 | version  | 1                                                                    |
|  10 |   2 | reserved | zero                                                                 |
|  12 |   4 | salt     | random per file; seeds every later record's crc                      |
|  16 |   8 | lo       | first segment number this file covers                                |
|  24 |   8 | hi       | last segment number (lo < hi after compaction merged files)          |
|  32 |   8 | base_lsn | every record in the file has an LSN above this                       |
|  40 |   8 | end_lsn  | compacted files: the highest LSN the merged files covered; else 0    |

Each batch the writer syncs ends with a BATCH record (lsn = the batch's last operation),
which is how recovery tells an acknowledged batch from a torn one. The file journal writes
each batch without the page cache (store/direct.py), so a batch must end on a BLOCK boundary
of its file: its BATCH record carries FLAG_PADDED and is followed by a PAD record (lsn = the
BATCH's, payload zeros) that fills the batch up to the boundary (``pad_size``). Such a
batch is complete only with its PAD intact (store/replay.py). Files written before PAD
existed have unpadded batches (BATCH without the flag), and read the same.

Why a salted checksum: when a record in the middle is damaged, the scanner looks for the
next magic number to resynchronise. A payload could contain bytes that look like a record
(a message body is caller-controlled); without the file's random salt its checksum fails.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final, Protocol

from crc32c import crc32c

from ferrymq.errors import StoreError

SEGMENT: Final = 1
ADD: Final = 2
UPDATE: Final = 3
DELETE: Final = 4
PREPARE: Final = 5
COMMIT: Final = 6
ROLLBACK: Final = 7
BATCH: Final = 8
PAD: Final = 9
BAD: Final = 0  # scanner only: a damaged region, never written
TYPE_NAMES: Final = {SEGMENT: "SEGMENT", ADD: "ADD", UPDATE: "UPDATE", DELETE: "DELETE", PREPARE: "PREPARE",
                     COMMIT: "COMMIT", ROLLBACK: "ROLLBACK", BATCH: "BATCH", PAD: "PAD", BAD: "BAD"}

FLAG_PLACEHOLDER: Final = 0x01
FLAG_PADDED: Final = 0x02

BLOCK: Final = 4096
"""Batches end on multiples of this in their file: the largest logical block size of the
devices a direct write must be aligned to (512 or 4096 bytes), and the page size."""

MAGIC: Final = 0x4D46
MAGIC_BYTES: Final = MAGIC.to_bytes(2, "little")
FILE_MAGIC: Final = b"FERRYMQJ"
VERSION: Final = 1
MAX_PAYLOAD: Final = 256 * 1024 * 1024  # above MQ's 100 MB message limit plus descriptors
MAX_XID: Final = 1024  # an XA XID is at most 140 bytes; leave room, but bound it
MAX_ID: Final = (1 << 64) - 1

HEADER: Final = struct.Struct("<IHBBIB3xQQQ")
TAIL: Final = struct.Struct("<HBBIB3xQQQ")  # HEADER without the crc, packed before the crc is known
CRC: Final = struct.Struct("<I")
FILE_HEADER: Final = struct.Struct("<8sHHIQQQQ")
HEADER_SIZE: Final = HEADER.size  # 40
SEGMENT_RECORD_SIZE: Final = HEADER_SIZE + FILE_HEADER.size  # 88

KNOWN_TYPES: Final = frozenset({ADD, UPDATE, DELETE, PREPARE, COMMIT, ROLLBACK, BATCH, PAD})

Payload = bytes | bytearray | memoryview

# One scanned record: (start, end, type, flags, kind, lsn, record_id, txid); payload is
# buf[start + HEADER_SIZE : end]. A BAD entry covers a damaged region [start, end).
Entry = tuple[int, int, int, int, int, int, int, int]


class Findable(Protocol):
    """A buffer that can search for bytes (bytes, bytearray, mmap)."""

    def find(self, sub: bytes, start: int = ..., end: int = ..., /) -> int: ...


def encode(salt: int, rtype: int, flags: int, kind: int, lsn: int, record_id: int, txid: int,
           payload: Payload = b"") -> bytes:
    """One record, checksummed with ``salt``. The caller has validated the fields."""
    tail = TAIL.pack(MAGIC, rtype, flags, len(payload), kind, lsn, record_id, txid)
    crc = crc32c(payload, crc32c(tail, salt))
    return b"".join((CRC.pack(crc), tail, payload))


def append(buf: bytearray, salt: int, rtype: int, flags: int, kind: int, lsn: int, record_id: int, txid: int,
           payload: Payload = b"") -> int:
    """Like ``encode`` but appends to ``buf`` (no intermediate copy); returns the record size."""
    tail = TAIL.pack(MAGIC, rtype, flags, len(payload), kind, lsn, record_id, txid)
    buf += CRC.pack(crc32c(payload, crc32c(tail, salt)))
    buf += tail
    buf += payload
    return HEADER_SIZE + len(payload)


BY_REFERENCE: Final = 4096
"""A payload at least this long is written from where it lies, as a part of its own in the
batch's vectored write, rather than copied into the batch buffer: a large body copied into
a growing buffer and out of it again costs more than its write (the buffer is megabytes,
the memory fresh each time)."""


class Gather:
    """The records of one write: headers and small payloads gathered as pieces and joined
    once when taken (one copy of each byte, into a buffer of the exact size: a bytearray
    grown record by record copied the batch again at each reallocation), large payloads
    kept as they are (the caller never changes a payload it handed over). A payload may
    come as a tuple of parts, each treated so."""

    __slots__ = ("_parts", "_pieces", "size")

    def __init__(self) -> None:
        self._pieces: list[Payload] = []  # small pieces, in order, since the last large part
        self._parts: list[Payload] = []
        self.size = 0

    def __bool__(self) -> bool:
        return self.size > 0

    def add(self, salt: int, rtype: int, flags: int, kind: int, lsn: int, record_id: int, txid: int,
            payload: Payload | tuple[bytes, ...] = b"") -> int:
        """One record, as ``append`` frames it; returns its size."""
        return self.add_run(salt, rtype, flags, kind, lsn, txid, ((record_id, payload),))[0]

    def add_run(self, salt: int, rtype: int, flags: int, kind: int, lsn: int, txid: int,
                items: Sequence[tuple[int, Payload | tuple[bytes, ...]]]) -> list[int]:
        """A record for each ``(record_id, payload)``, as ``add`` frames it, LSNs from
        ``lsn`` on; their sizes."""
        pieces = self._pieces
        sizes = []
        pack, crc_pack = TAIL.pack, CRC.pack
        for record_id, payload in items:
            parts = payload if isinstance(payload, tuple) else (payload,)
            n = sum(map(len, parts))
            tail = pack(MAGIC, rtype, flags, n, kind, lsn, record_id, txid)
            if n < BY_REFERENCE:  # small: the record joined, checksummed with one call
                framed = b"".join((tail, *parts))
                pieces += (crc_pack(crc32c(framed, salt)), framed)
            else:
                crc = crc32c(tail, salt)
                for part in parts:
                    crc = crc32c(part, crc)
                pieces += (crc_pack(crc), tail)
                for part in parts:
                    if len(part) < BY_REFERENCE:
                        pieces.append(part)
                    else:  # written from where it lies, between the joined pieces
                        self._parts += (b"".join(pieces), part)
                        pieces.clear()
            sizes.append(n + HEADER_SIZE)
            lsn += 1
        self.size += sum(sizes)
        return sizes

    def add_pad(self, salt: int, lsn: int, end: int) -> int:
        """The PAD record that takes a batch ending at file offset ``end`` to the next BLOCK
        boundary; returns its size."""
        size = pad_size(end)
        return self.add(salt, PAD, 0, 0, lsn, 0, 0, _ZEROS[: size - HEADER_SIZE])

    def add_encoded(self, data: bytes) -> None:
        """Bytes already framed (a file's SEGMENT record)."""
        self._pieces.append(data)
        self.size += len(data)

    def take(self) -> list[Payload]:
        """The parts in write order; the gather starts empty again."""
        parts = self._parts
        if self._pieces:
            parts.append(b"".join(self._pieces))
        self._pieces, self._parts, self.size = [], [], 0
        return parts


def pad_size(end: int) -> int:
    """The size of the PAD record that takes a batch ending at ``end`` to a BLOCK boundary
    (from HEADER_SIZE to BLOCK + HEADER_SIZE - 1 bytes: a PAD holds at least its header)."""
    gap = -end % BLOCK
    return gap if gap >= HEADER_SIZE else gap + BLOCK


_ZEROS: Final = memoryview(bytes(BLOCK + HEADER_SIZE))


def encode_segment_header(salt: int, lo: int, hi: int, base_lsn: int, end_lsn: int = 0) -> bytes:
    """The SEGMENT record that opens every file (crc seeded with 0: the salt is inside)."""
    body = FILE_HEADER.pack(FILE_MAGIC, VERSION, 0, salt, lo, hi, base_lsn, end_lsn)
    return encode(0, SEGMENT, 0, 0, base_lsn, 0, 0, body)


def decode_segment_header(buf: memoryview, name: str) -> tuple[int, int, int, int, int]:
    """``(salt, lo, hi, base_lsn, end_lsn)`` from the start of a file.

    Raises:
        StoreError: the header is missing, damaged, or of another version.
    """
    if len(buf) < SEGMENT_RECORD_SIZE:
        raise StoreError(f"{name}: file header is incomplete ({len(buf)} bytes)")
    crc, magic, rtype, _flags, length, _kind, _lsn, _rid, _txid = HEADER.unpack_from(buf, 0)
    if magic != MAGIC or rtype != SEGMENT or length != FILE_HEADER.size:
        raise StoreError(f"{name}: not a ferrymq journal file")
    if crc32c(buf[4:SEGMENT_RECORD_SIZE]) != crc:
        raise StoreError(f"{name}: file header fails its checksum")
    fmagic, version, _res, salt, lo, hi, base_lsn, end_lsn = FILE_HEADER.unpack_from(buf, HEADER_SIZE)
    if fmagic != FILE_MAGIC:
        raise StoreError(f"{name}: not a ferrymq journal file")
    if version != VERSION:
        raise StoreError(f"{name}: journal format version {version}, this build reads {VERSION}")
    return salt, lo, hi, base_lsn, end_lsn


def valid_at(buf: memoryview, pos: int, end: int, salt: int) -> int:
    """End offset of the intact record at ``pos``, or -1 (incomplete, damaged, unknown type)."""
    if pos + HEADER_SIZE > end:
        return -1
    crc, magic, rtype, _flags, length, _kind, _lsn, _rid, _txid = HEADER.unpack_from(buf, pos)
    stop: int = pos + HEADER_SIZE + length
    if magic != MAGIC or length > MAX_PAYLOAD or stop > end or rtype not in KNOWN_TYPES:
        return -1
    if crc32c(buf[pos + 4:stop], salt) != crc:
        return -1
    return stop


def resync(raw: Findable, buf: memoryview, pos: int, end: int, salt: int) -> int:
    """The start of the next intact record after ``pos`` (exclusive), or ``end`` if none."""
    search = pos + 5  # the magic sits 4 bytes into a record; a record after pos has it at pos+5 or later
    while True:
        hit = raw.find(MAGIC_BYTES, search, end)
        if hit < 0:
            return end
        start = hit - 4
        if valid_at(buf, start, end, salt) >= 0:
            return start
        search = hit + 1


def scan(raw: Findable, buf: memoryview, pos: int, end: int, salt: int, stop: int | None = None) -> tuple[list[Entry], int]:
    """Parse records from ``pos``; returns the entries and where scanning stopped.

    Scanning stops at ``end`` or at the first record that starts at or after ``stop`` (so a
    caller can work through a large file in slices). A damaged region becomes one BAD entry
    covering the bytes up to the next intact record; the salt makes a forged record inside a
    payload fail its checksum, so resynchronisation cannot be steered by message content.
    """
    limit = end if stop is None else min(stop, end)
    unpack = HEADER.unpack_from
    entries: list[Entry] = []
    add = entries.append
    while pos < limit:
        if pos + HEADER_SIZE <= end:
            crc, magic, rtype, flags, length, kind, lsn, rid, txid = unpack(buf, pos)
            nxt = pos + HEADER_SIZE + length
            if (magic == MAGIC and length <= MAX_PAYLOAD and nxt <= end and rtype in KNOWN_TYPES
                    and crc32c(buf[pos + 4:nxt], salt) == crc):
                add((pos, nxt, rtype, flags, kind, lsn, rid, txid))
                pos = nxt
                continue
        nxt = resync(raw, buf, pos, end, salt)
        add((pos, nxt, BAD, 0, 0, 0, 0, 0))
        pos = nxt
    return entries, pos
