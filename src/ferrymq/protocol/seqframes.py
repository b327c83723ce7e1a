"""Frames for sequence-range access and prepared units of work (types 1150..1169).

They serve replayable readers and two-phase writers such as the Spark connector. Body
notation as in codec.py (big-endian; ``str`` = u16 length + UTF-8; ``xid`` = u16 length
+ bytes, 1..128; ``md`` = packed MQMD; ``props`` = u32 length + typed message
properties as ferrymq.properties.model writes them, length 0 for none). Failures are answered by the generic REPLY (1199).

| type | frame             | body                                                               |
|-----:|-------------------|--------------------------------------------------------------------|
| 1150 | SEQ_RANGE         | str queue                                                          |
| 1151 | SEQ_RANGE_REPLY   | str queue, i64 first_seq, i64 last_seq, i64 depth                  |
| 1152 | BROWSE_RANGE      | str queue, i64 from_seq, i64 to_seq, u32 max_msgs, u32 max_bytes   |
| 1153 | BROWSE_RANGE_REPLY| u32 n, n x (i64 seq, f64 put_at, u32 data_len, md, props, data)    |
| 1154 | REMOVE_UPTO       | str queue, i64 upto_seq, str reader                                |
| 1155 | REMOVE_UPTO_REPLY | i64 removed                                                        |
| 1156 | READERS           | str queue                                                          |
| 1157 | READERS_REPLY     | u16 n, n x (str reader, i64 acked, i64 lag)                         |
| 1158 | PREPARE           | xid                                                                |
| 1159 | PREPARE_REPLY     | u32 operations                                                     |
| 1160 | RESOLVE           | u8 commit, xid                                                     |
| 1161 | RESOLVE_REPLY     | u8 found                                                           |
| 1162 | IN_DOUBT          | —                                                                  |
| 1163 | IN_DOUBT_REPLY    | u16 n, n x xid                                                     |

Decoding never raises anything but DecodeError; every count and length is bounded
before anything is allocated for it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ferrymq.properties import model as props_model

if TYPE_CHECKING:
    from ferrymq.protocol.codec import Reader

T_SEQ_RANGE = 1150
T_SEQ_RANGE_REPLY = 1151
T_BROWSE_RANGE = 1152
T_BROWSE_RANGE_REPLY = 1153
T_REMOVE_UPTO = 1154
T_REMOVE_UPTO_REPLY = 1155
T_READERS = 1156
T_READERS_REPLY = 1157
T_PREPARE = 1158
T_PREPARE_REPLY = 1159
T_RESOLVE = 1160
T_RESOLVE_REPLY = 1161
T_IN_DOUBT = 1162
T_IN_DOUBT_REPLY = 1163

MAX_BROWSE = 100_000  # messages per BROWSE_RANGE_REPLY (the frame's size bounds it anyway)
MAX_XID = 128
MAX_LIST = 4096  # readers or in-doubt XIDs per reply

_Q = struct.Struct(">q")
_QQQ = struct.Struct(">qqq")
_BROWSE = struct.Struct(">qqII")
_ENTRY = struct.Struct(">qdI")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_U8 = struct.Struct(">B")
_QQ = struct.Struct(">qq")

Props = props_model.PropertySet


@dataclass(slots=True)
class SeqRange:
    corr: int
    queue: str


@dataclass(slots=True)
class SeqRangeReply:
    corr: int
    queue: str
    first_seq: int
    last_seq: int
    depth: int
    comp: int = 0
    reason: int = 0
    detail: str = ""


@dataclass(slots=True)
class BrowseRange:
    corr: int
    queue: str
    from_seq: int
    to_seq: int
    max_msgs: int = 0
    max_bytes: int = 0


@dataclass(frozen=True, slots=True)
class RangeEntry:
    """One browsed message: its sequence, put time (epoch seconds), MQMD bytes, properties, data."""

    seq: int
    put_at: float
    md: bytes
    properties: Props
    data: bytes


@dataclass(slots=True)
class BrowseRangeReply:
    corr: int
    entries: list[RangeEntry] = field(default_factory=list)
    comp: int = 0
    reason: int = 0
    detail: str = ""


@dataclass(slots=True)
class RemoveUpto:
    corr: int
    queue: str
    upto_seq: int
    reader: str


@dataclass(slots=True)
class RemoveUptoReply:
    corr: int
    removed: int
    comp: int = 0
    reason: int = 0
    detail: str = ""


@dataclass(slots=True)
class Readers:
    corr: int
    queue: str


@dataclass(slots=True)
class ReadersReply:
    corr: int
    readers: list[tuple[str, int, int]] = field(default_factory=list)
    comp: int = 0
    reason: int = 0
    detail: str = ""


@dataclass(slots=True)
class Prepare:
    corr: int
    xid: bytes


@dataclass(slots=True)
class PrepareReply:
    corr: int
    operations: int
    comp: int = 0
    reason: int = 0
    detail: str = ""


@dataclass(slots=True)
class Resolve:
    corr: int
    xid: bytes
    commit: bool


@dataclass(slots=True)
class ResolveReply:
    corr: int
    found: bool
    comp: int = 0
    reason: int = 0
    detail: str = ""


@dataclass(slots=True)
class InDoubt:
    corr: int


@dataclass(slots=True)
class InDoubtReply:
    corr: int
    xids: list[bytes] = field(default_factory=list)
    comp: int = 0
    reason: int = 0
    detail: str = ""


def _s(value: str) -> bytes:
    raw = value.encode("utf-8")
    if len(raw) > 0xFFFF:
        raise ValueError(f"a string field is {len(raw)} bytes; the limit is 65535")
    return _U16.pack(len(raw)) + raw


def _xid(xid: bytes) -> bytes:
    if not 1 <= len(xid) <= MAX_XID:
        raise ValueError(f"XID must be 1..{MAX_XID} bytes, got {len(xid)}")
    return _U16.pack(len(xid)) + xid


def _props(props: Props) -> bytes:
    if not props:
        return _U32.pack(0)
    raw = props_model.pack(props)
    return _U32.pack(len(raw)) + raw


def _enc_browse_reply(e: BrowseRangeReply) -> list[bytes]:
    parts = [_U32.pack(len(e.entries))]
    for x in e.entries:
        parts += [_ENTRY.pack(x.seq, x.put_at, len(x.data)), x.md, _props(x.properties), x.data]
    return parts


_R = 0x1  # a reply is expected

ENCODERS: dict[type, Callable[[Any], tuple[int, int, int, list[bytes]]]] = {
    SeqRange: lambda e: (T_SEQ_RANGE, _R, e.corr, [_s(e.queue)]),
    SeqRangeReply: lambda e: (T_SEQ_RANGE_REPLY, 0, e.corr, [_s(e.queue), _QQQ.pack(e.first_seq, e.last_seq, e.depth)]),
    BrowseRange: lambda e: (T_BROWSE_RANGE, _R, e.corr,
                            [_s(e.queue), _BROWSE.pack(e.from_seq, e.to_seq, e.max_msgs, e.max_bytes)]),
    BrowseRangeReply: lambda e: (T_BROWSE_RANGE_REPLY, 0, e.corr, _enc_browse_reply(e)),
    RemoveUpto: lambda e: (T_REMOVE_UPTO, _R, e.corr, [_s(e.queue), _Q.pack(e.upto_seq), _s(e.reader)]),
    RemoveUptoReply: lambda e: (T_REMOVE_UPTO_REPLY, 0, e.corr, [_Q.pack(e.removed)]),
    Readers: lambda e: (T_READERS, _R, e.corr, [_s(e.queue)]),
    ReadersReply: lambda e: (T_READERS_REPLY, 0, e.corr,
                             [_U16.pack(len(e.readers))] + [_s(r) + _QQ.pack(a, lag) for r, a, lag in e.readers]),
    Prepare: lambda e: (T_PREPARE, _R, e.corr, [_xid(e.xid)]),
    PrepareReply: lambda e: (T_PREPARE_REPLY, 0, e.corr, [_U32.pack(e.operations)]),
    Resolve: lambda e: (T_RESOLVE, _R, e.corr, [_U8.pack(1 if e.commit else 0), _xid(e.xid)]),
    ResolveReply: lambda e: (T_RESOLVE_REPLY, 0, e.corr, [_U8.pack(1 if e.found else 0)]),
    InDoubt: lambda e: (T_IN_DOUBT, _R, e.corr, []),
    InDoubtReply: lambda e: (T_IN_DOUBT_REPLY, 0, e.corr, [_U16.pack(len(e.xids))] + [_xid(x) for x in e.xids]),
}


def _r_xid(r: Reader) -> bytes:
    (n,) = r.unpack(_U16)
    if not 1 <= n <= MAX_XID:
        raise r.fail(f"XID of {n} bytes; must be 1..{MAX_XID}")
    return _take(r, n)


def _take(r: Reader, n: int) -> bytes:
    if len(r.buf) - r.pos < n:
        raise r.fail(f"needs {n} bytes, {len(r.buf) - r.pos} present")
    out = bytes(r.buf[r.pos : r.pos + n])
    r.pos += n
    return out


def _r_count(r: Reader, st: struct.Struct, limit: int, what: str) -> int:
    (n,) = r.unpack(st)
    if n > limit:
        raise r.fail(f"{n} {what}; the limit is {limit}")
    return int(n)


def _dec_browse_reply(r: Reader, corr: int) -> BrowseRangeReply:
    n = _r_count(r, _U32, MAX_BROWSE, "messages")
    out = []
    for _ in range(n):
        seq, put_at, length = r.unpack(_ENTRY)
        md = r.md_bytes()
        (plen,) = r.unpack(_U32)
        raw = _take(r, plen)
        props: Props = props_model.unpack(raw) if plen else props_model.PropertySet()
        out.append(RangeEntry(seq, put_at, md, props, _take(r, length)))
    return BrowseRangeReply(corr, out)


def _dec_readers_reply(r: Reader, corr: int) -> ReadersReply:
    n = _r_count(r, _U16, MAX_LIST, "readers")
    rows = []
    for _ in range(n):
        name = r.string()
        acked, lag = r.unpack(_QQ)
        rows.append((name, acked, lag))
    return ReadersReply(corr, rows)


def _dec_in_doubt_reply(r: Reader, corr: int) -> InDoubtReply:
    n = _r_count(r, _U16, MAX_LIST, "XIDs")
    return InDoubtReply(corr, [_r_xid(r) for _ in range(n)])


def _dec_browse(r: Reader, c: int) -> BrowseRange:
    queue = r.string()
    return BrowseRange(c, queue, *r.unpack(_BROWSE))


def _dec_remove(r: Reader, c: int) -> RemoveUpto:
    queue = r.string()
    (upto,) = r.unpack(_Q)
    return RemoveUpto(c, queue, upto, r.string())


def _dec_range_reply(r: Reader, c: int) -> SeqRangeReply:
    queue = r.string()
    return SeqRangeReply(c, queue, *r.unpack(_QQQ))


def _dec_resolve(r: Reader, c: int) -> Resolve:
    (commit,) = r.unpack(_U8)
    return Resolve(c, _r_xid(r), bool(commit))


Decoder = Callable[["Reader", int, int, Any], Any]

CLIENT_FRAMES: dict[int, Decoder] = {
    T_SEQ_RANGE: lambda r, c, f, p: SeqRange(c, r.string()),
    T_BROWSE_RANGE: lambda r, c, f, p: _dec_browse(r, c),
    T_REMOVE_UPTO: lambda r, c, f, p: _dec_remove(r, c),
    T_READERS: lambda r, c, f, p: Readers(c, r.string()),
    T_PREPARE: lambda r, c, f, p: Prepare(c, _r_xid(r)),
    T_RESOLVE: lambda r, c, f, p: _dec_resolve(r, c),
    T_IN_DOUBT: lambda r, c, f, p: InDoubt(c),
}

SERVER_FRAMES: dict[int, Decoder] = {
    T_SEQ_RANGE_REPLY: lambda r, c, f, p: _dec_range_reply(r, c),
    T_BROWSE_RANGE_REPLY: lambda r, c, f, p: _dec_browse_reply(r, c),
    T_REMOVE_UPTO_REPLY: lambda r, c, f, p: RemoveUptoReply(c, r.unpack(_Q)[0]),
    T_READERS_REPLY: lambda r, c, f, p: _dec_readers_reply(r, c),
    T_PREPARE_REPLY: lambda r, c, f, p: PrepareReply(c, r.unpack(_U32)[0]),
    T_RESOLVE_REPLY: lambda r, c, f, p: ResolveReply(c, bool(r.unpack(_U8)[0])),
    T_IN_DOUBT_REPLY: lambda r, c, f, p: _dec_in_doubt_reply(r, c),
}

ANSWERS: dict[type, tuple[type, ...]] = {
    SeqRange: (SeqRangeReply,),
    BrowseRange: (BrowseRangeReply,),
    RemoveUpto: (RemoveUptoReply,),
    Readers: (ReadersReply,),
    Prepare: (PrepareReply,),
    Resolve: (ResolveReply,),
    InDoubt: (InDoubtReply,),
}

NAMES = {v: k[2:] for k, v in globals().items() if k.startswith("T_") and isinstance(v, int)}
