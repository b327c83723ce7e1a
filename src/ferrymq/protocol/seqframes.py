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
| 1164 | BROWSE_COLUMNS    | as BROWSE_RANGE                                                    |
| 1165 | BROWSE_COLUMNS_REPLY | u32 n, then little-endian columns: n x i64 seq, n x f64 put_at, n x 364 MQMD v2, (n+1) x u32 property offsets, property blob, (n+1) x u32 data offsets, data blob |

BROWSE_COLUMNS answers what BROWSE_RANGE would, as columns rather than entries, so that
a reader turns a page into arrays with a few vectorised operations (ferrymq.spark) and
the server builds it with a few joins of bytes each message already holds. Its arrays are
little-endian, like the MQMDs, which are always version 2 as the queue manager stores
them (StrucId and Version checked for each). Offsets start at 0, never decrease and end
at their blob's length; message i's properties are ``blob[off[i]:off[i+1]]`` in the
ferrymq.properties.model form (empty for none), and so is its data.

Decoding never raises anything but DecodeError; every count and length is bounded
before anything is allocated for it.
"""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.protocol import body
from ferrymq.protocol.body import Reader
from ferrymq.protocol.layout import FLAG_REPLY_EXPECTED, Frame, Part
from ferrymq.wire.mqmd import V2_LE_HEAD

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
T_BROWSE_COLUMNS = 1164
T_BROWSE_COLUMNS_REPLY = 1165

MAX_BROWSE = 100_000  # messages per BROWSE_RANGE_REPLY (the frame's size bounds it anyway)
MAX_XID = 128
MAX_LIST = 4096  # readers or in-doubt XIDs per reply
MD_SIZE = C.MQMD_LENGTH_2  # each MQMD of a BROWSE_COLUMNS_REPLY
MD_HEAD = V2_LE_HEAD  # StrucId and Version 2, little-endian
MAX_BLOB = (1 << 31) - 1  # a column's bytes: readers hand them to Arrow, whose offsets are 32-bit signed
_BIG_HOST = sys.byteorder == "big"

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
class BrowseColumns(BrowseRange):
    """BROWSE_RANGE's request, answered as columns (BrowseColumnsReply)."""


@dataclass(slots=True)
class BrowseColumnsReply:
    """One browsed page as columns: ``count`` messages in sequence order.

    ``seqs``/``put_ats`` hold little-endian i64/f64 values, ``mds`` the MQMDs (version 2,
    little-endian, MD_SIZE bytes each), ``data_offsets`` count + 1 little-endian u32 offsets
    into ``data``. ``properties`` holds the property sets of the messages that have any,
    by index on the page. The byte fields may be views of the frame (not copied).
    """

    corr: int
    count: int = 0
    seqs: bytes | memoryview = b""
    put_ats: bytes | memoryview = b""
    mds: bytes | memoryview = b""
    properties: dict[int, Props] = field(default_factory=dict)
    data_offsets: bytes | memoryview = b"\0\0\0\0"
    data: bytes | memoryview = b""
    comp: int = 0
    reason: int = 0
    detail: str = ""
    # The sender's packed form of ``properties``, one per message (b"" for none), when it
    # has it already (the server packs them to size the page); not part of the value.
    packed_properties: list[bytes] | None = field(default=None, compare=False, repr=False)
    # The sender's data as each message's bytes, in place of ``data`` (the server sends them
    # as they are rather than joining megabytes); not part of the value.
    data_parts: list[bytes] | None = field(default=None, compare=False, repr=False)


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


def _xid(xid: bytes) -> list[bytes]:
    if not 1 <= len(xid) <= MAX_XID:
        raise ValueError(f"XID must be 1..{MAX_XID} bytes, got {len(xid)}")
    return [_U16.pack(len(xid)), xid]


def _enc_browse_reply(e: BrowseRangeReply) -> list[bytes]:
    parts = [_U32.pack(len(e.entries))]
    for x in e.entries:
        parts += [_ENTRY.pack(x.seq, x.put_at, len(x.data)), x.md, body.props(x.properties), x.data]
    return parts


def pack_le(kind: str, values: list[int] | list[float]) -> bytes:
    out = array(kind, values)
    if _BIG_HOST:
        out.byteswap()
    return out.tobytes()


def _le_array(kind: str, raw: bytes | memoryview) -> array[int]:
    out = array(kind)
    out.frombytes(raw)
    if _BIG_HOST:
        out.byteswap()
    return out


def column_offsets(lengths: list[int]) -> bytes:
    """``len(lengths) + 1`` little-endian u32 offsets of consecutive items of these lengths."""
    return pack_le("I", list(accumulate(lengths, initial=0)))


def _bytes(raw: bytes | memoryview) -> bytes:
    # A server's reply holds bytes; only a decoded reply sent on again holds views.
    return raw if isinstance(raw, bytes) else bytes(raw)


def _enc_columns_reply(e: BrowseColumnsReply) -> list[bytes]:
    packed = e.packed_properties
    if packed is None and e.properties:
        packed = [props_model.pack(p) if p else b"" for p in map(e.properties.get, range(e.count))]
    prop_offsets = column_offsets(list(map(len, packed))) if packed else bytes(4 * (e.count + 1))
    head = [_U32.pack(e.count), *map(_bytes, (e.seqs, e.put_ats, e.mds)), prop_offsets, *(packed or ()),
            _bytes(e.data_offsets)]
    return head + e.data_parts if e.data_parts is not None else [*head, _bytes(e.data)]


def _r_xid(r: Reader) -> tuple[bytes]:
    (n,) = r.unpack(_U16)
    if not 1 <= n <= MAX_XID:
        raise r.fail(f"XID of {n} bytes; must be 1..{MAX_XID}")
    return (r.take(n),)


def _r_count(r: Reader, st: struct.Struct, limit: int, what: str) -> int:
    (n,) = r.unpack(st)
    if n > limit:
        raise r.fail(f"{n} {what}; the limit is {limit}")
    return int(n)


def _dec_browse_reply(r: Reader) -> tuple[list[RangeEntry]]:
    n = _r_count(r, _U32, MAX_BROWSE, "messages")
    out = []
    for _ in range(n):
        seq, put_at, length = r.unpack(_ENTRY)
        md = r.md_bytes()
        (plen,) = r.unpack(_U32)
        raw = r.take(plen)
        props: Props = props_model.unpack(raw) if plen else props_model.PropertySet()
        out.append(RangeEntry(seq, put_at, md, props, r.take(length)))
    return (out,)


def _r_offsets(r: Reader, n: int, what: str) -> tuple[memoryview, array[int]]:
    """``n + 1`` offsets, checked to start at 0, never decrease and fit a blob that follows."""
    raw = r.view(4 * (n + 1))
    offs = _le_array("I", raw)
    last = offs[-1]
    if offs[0] != 0 or last > min(MAX_BLOB, r.left):
        raise r.fail(f"{what} offsets run from {offs[0]} to {last}; {r.left} bytes follow")
    if sorted(offs) != offs.tolist():
        raise r.fail(f"{what} offsets decrease")
    return raw, offs


ColumnFields = tuple[int, memoryview, memoryview, memoryview, dict[int, Props], memoryview, memoryview]


def _dec_columns_reply(r: Reader) -> ColumnFields:
    # Everything a count sizes is checked against what is left of the frame before it is read.
    n = _r_count(r, _U32, min(MAX_BROWSE, r.left // (16 + MD_SIZE + 8)), "messages")
    seqs, put_ats, mds = r.view(8 * n), r.view(8 * n), r.view(MD_SIZE * n)
    for i, b in enumerate(MD_HEAD):  # every MQMD's head at once: one strided comparison per byte
        if mds[i::MD_SIZE] != bytes((b,)) * n:
            raise r.fail("an MQMD is not a little-endian version-2 MQMD (StrucId 'MD  ', Version 2)")
    _, poffs = _r_offsets(r, n, "property")
    blob = r.view(poffs[-1])
    props: dict[int, Props] = {}
    if poffs[-1]:
        for i in range(n):
            a, b = poffs[i], poffs[i + 1]
            if a != b:
                props[i] = props_model.unpack(blob, a, b)
    raw, doffs = _r_offsets(r, n, "data")
    if doffs[-1] != r.left:
        raise r.fail(f"data offsets end at {doffs[-1]}; {r.left} bytes of data follow")
    return n, seqs, put_ats, mds, props, raw, r.view(doffs[-1])


def _enc_readers(e: ReadersReply) -> list[bytes]:
    return [_U16.pack(len(e.readers)), *(body.string(name) + _QQ.pack(a, lag) for name, a, lag in e.readers)]


def _dec_readers_reply(r: Reader) -> tuple[list[tuple[str, int, int]]]:
    n = _r_count(r, _U16, MAX_LIST, "readers")
    rows = []
    for _ in range(n):
        name = r.string()
        acked, lag = r.unpack(_QQ)
        rows.append((name, acked, lag))
    return (rows,)


def _enc_xids(e: InDoubtReply) -> list[bytes]:
    return [_U16.pack(len(e.xids)), *(b"".join(_xid(x)) for x in e.xids)]


def _dec_in_doubt_reply(r: Reader) -> tuple[list[bytes]]:
    n = _r_count(r, _U16, MAX_LIST, "XIDs")
    return ([_r_xid(r)[0] for _ in range(n)],)


_R = FLAG_REPLY_EXPECTED
_RANGE = [("queue", "str"), ("from_seq", "q"), ("to_seq", "q"), ("max_msgs", "I"), ("max_bytes", "I")]
XID: Part[Prepare | Resolve] = Part(("xid",), lambda e: _xid(e.xid), _r_xid)

CLIENT_SENDS: list[Frame[Any]] = [
    Frame(T_SEQ_RANGE, "SEQ_RANGE", SeqRange, [("queue", "str")], flags=[(_R, "")]),
    Frame(T_BROWSE_RANGE, "BROWSE_RANGE", BrowseRange, _RANGE, flags=[(_R, "")]),
    Frame(T_BROWSE_COLUMNS, "BROWSE_COLUMNS", BrowseColumns, _RANGE, flags=[(_R, "")]),
    Frame(T_REMOVE_UPTO, "REMOVE_UPTO", RemoveUpto, [("queue", "str"), ("upto_seq", "q"), ("reader", "str")],
          flags=[(_R, "")]),
    Frame(T_READERS, "READERS", Readers, [("queue", "str")], flags=[(_R, "")]),
    Frame(T_PREPARE, "PREPARE", Prepare, [("xid", XID)], flags=[(_R, "")]),
    Frame(T_RESOLVE, "RESOLVE", Resolve, [("commit", "?"), ("xid", XID)], flags=[(_R, "")]),
    Frame(T_IN_DOUBT, "IN_DOUBT", InDoubt, [], flags=[(_R, "")]),
]
"""The requests of this module's frames (sent by clients)."""

SERVER_SENDS: list[Frame[Any]] = [
    Frame(T_SEQ_RANGE_REPLY, "SEQ_RANGE_REPLY", SeqRangeReply,
          [("queue", "str"), ("first_seq", "q"), ("last_seq", "q"), ("depth", "q")]),
    Frame(T_BROWSE_RANGE_REPLY, "BROWSE_RANGE_REPLY", BrowseRangeReply,
          [("entries", Part(("entries",), _enc_browse_reply, _dec_browse_reply))]),
    Frame(T_BROWSE_COLUMNS_REPLY, "BROWSE_COLUMNS_REPLY", BrowseColumnsReply,
          [("columns", Part(("count", "seqs", "put_ats", "mds", "properties", "data_offsets", "data"),
                            _enc_columns_reply, _dec_columns_reply))]),
    Frame(T_REMOVE_UPTO_REPLY, "REMOVE_UPTO_REPLY", RemoveUptoReply, [("removed", "q")]),
    Frame(T_READERS_REPLY, "READERS_REPLY", ReadersReply,
          [("readers", Part(("readers",), _enc_readers, _dec_readers_reply))]),
    Frame(T_PREPARE_REPLY, "PREPARE_REPLY", PrepareReply, [("operations", "I")]),
    Frame(T_RESOLVE_REPLY, "RESOLVE_REPLY", ResolveReply, [("found", "?")]),
    Frame(T_IN_DOUBT_REPLY, "IN_DOUBT_REPLY", InDoubtReply, [("xids", Part(("xids",), _enc_xids, _dec_in_doubt_reply))]),
]
"""The replies of this module's frames (sent by servers)."""

ANSWERS: dict[type, tuple[type, ...]] = {
    SeqRange: (SeqRangeReply,),
    BrowseRange: (BrowseRangeReply,),
    BrowseColumns: (BrowseColumnsReply,),
    RemoveUpto: (RemoveUptoReply,),
    Readers: (ReadersReply,),
    Prepare: (PrepareReply,),
    Resolve: (ResolveReply,),
    InDoubt: (InDoubtReply,),
}

SeqRequest = SeqRange | BrowseRange | RemoveUpto | Readers | Prepare | Resolve | InDoubt
SeqReply = (SeqRangeReply | BrowseRangeReply | BrowseColumnsReply | RemoveUptoReply | ReadersReply | PrepareReply
            | ResolveReply | InDoubtReply)
