"""Frame bodies of ferrymq's client protocol: event ↔ (packet type, flags, payload).

Packets are GPackets (ferrymq.wire.gpacket, cluster-protocol.md §1). The client protocol
uses packet types 1100..1199 (the cluster uses 1..76 and additions just above 26, so the
ranges never meet). Header use: ``sequence`` = the correlation id, flag A (bit 0) = a
reply is expected, flag H (bit 1, GET only) = the getter has a message handle,
``timestamp`` = 0 (informational in GPacket; never read). Everything is in the payload;
``props`` = u32 length + typed message properties (ferrymq.properties.model; length 0 =
none), which GPacket's properties section cannot carry (byte strings, nulls, MQ types).

Body notation (all integers big-endian; ``str`` = uint16 byte length + UTF-8; ``md`` =
the MQMD bytes in its own version, see mdcodec; ``status`` = int32 comp, int32 reason,
str detail; ``rest`` = the remaining payload bytes):

| type | frame          | body                                                                    |
|-----:|----------------|-------------------------------------------------------------------------|
| 1100 | CONNECT        | u16 min_ver, u16 max_ver, u32 max_msg_len, u32 heartbeat_ms, i32 options, i32 appl_type, str qmgr, str appl, str user |
| 1101 | CONNECT_REPLY  | status, u16 version, u32 max_msg_len, u32 heartbeat_ms, 24 connection_id, str qmgr |
| 1102 | DISCONNECT     | —                                                                       |
| 1104 | OPEN           | i32 options, i32 object_type, str name, str qmgr, str dynamic, str altuser, str selection |
| 1105 | OPEN_REPLY     | status, u32 hobj, str name, str resolved_q, str resolved_qmgr          |
| 1106 | CLOSE          | u32 hobj, i32 options                                                   |
| 1108 | PUT            | u32 hobj, i32 pmo_options, u32 context, md, props, rest = data          |
| 1109 | PUT_REPLY      | status, str resolved_q, str resolved_qmgr, md                           |
| 1110 | PUT1           | i32 pmo_options, i32 object_type, u32 context, str name, str qmgr, str altuser, md, props, rest = data |
| 1112 | GET            | u32 hobj, i32 gmo_options, i32 wait_ms, i32 match_options, u32 buffer_length, 16 msg_token, md |
| 1113 | GET_REPLY      | status, u32 data_length, 16 msg_token, str resolved_q, md, props, rest = data |
| 1114 | COMMIT         | —                                                                       |
| 1116 | BACKOUT        | —                                                                       |
| 1118 | INQUIRE        | u32 hobj, u16 n, n x i32, u16 m, m x i32                                |
| 1119 | INQUIRE_REPLY  | status, u16 n, n x i32, u16 m, m x str                                  |
| 1120 | SET            | u32 hobj, u16 n, n x (i32 selector, i32 value), u16 m, m x (i32 selector, str value) |
| 1122 | HEARTBEAT      | — (flag A: answer with HEARTBEAT_REPLY)                                 |
| 1123 | HEARTBEAT_REPLY| —                                                                       |
| 1124 | STAT           | i32 stat_type                                                           |
| 1125 | STAT_REPLY     | status, u32 successes, u32 warnings, u32 failures, i32 first_comp, i32 first_reason, str first_detail |
| 1126 | CONSUME        | u32 hobj, u32 window, i32 gmo_options                                   |
| 1127 | CREDIT         | u32 hobj, u32 count                                                     |
| 1128 | PUSHED         | u32 hobj, u32 data_length, 16 msg_token, md, props, rest = data         |
| 1129 | ENDING         | i32 reason, str detail                                                  |
| 1130 | PUT_BATCH      | u32 hobj, i32 pmo_options, u32 context, u32 n, md, n x (24 msg_id, u32 len, len bytes data) |
| 1132 | GET_BATCH      | u32 hobj, i32 gmo_options, i32 wait_ms, u32 max_messages, u32 max_bytes, u32 buffer_length |
| 1133 | GET_BATCH_REPLY| status, u32 n, n x (u32 data_length, 16 msg_token, u32 len, md, props, len bytes data) |
| 1131 | PUSHED_BATCH   | u32 hobj, u32 n, n x (u32 data_length, 16 msg_token, u32 len, md, len bytes data) |
| 1199 | REPLY          | status                                                                  |

Decoding never raises anything but DecodeError.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.protocol import body, columnframes, seqframes
from ferrymq.protocol import events as E
from ferrymq.protocol.body import Reader
from ferrymq.protocol.mdcodec import PLAIN_MD_LENGTHS as _PLAIN_MD_LENGTHS
from ferrymq.protocol.mdcodec import plain_md_length
from ferrymq.wire import gpacket
from ferrymq.wire.mqmd import MQMD, V2_LE_HEAD

T_CONNECT = 1100
T_CONNECT_REPLY = 1101
T_DISCONNECT = 1102
T_PERSISTENT_NEXT = 1103
T_OPEN = 1104
T_OPEN_REPLY = 1105
T_CLOSE = 1106
T_PUT = 1108
T_PUT_REPLY = 1109
T_PUT1 = 1110
T_GET = 1112
T_GET_REPLY = 1113
T_COMMIT = 1114
T_BACKOUT = 1116
T_INQUIRE = 1118
T_INQUIRE_REPLY = 1119
T_SET = 1120
T_HEARTBEAT = 1122
T_HEARTBEAT_REPLY = 1123
T_STAT = 1124
T_STAT_REPLY = 1125
T_CONSUME = 1126
T_CREDIT = 1127
T_PUSHED = 1128
T_ENDING = 1129
T_PUT_BATCH = 1130
T_PUSHED_BATCH = 1131
T_GET_BATCH = 1132
T_GET_BATCH_REPLY = 1133
T_REPLY = 1199

FLAG_REPLY_EXPECTED = 0x1  # GPacket A bit
FLAG_MSG_HANDLE = 0x2  # GET: the getter has a message handle

MAX_LIST = body.MAX_LIST
C_OK = 0  # MQCC_OK
MAX_BATCH = body.MAX_BATCH

_I = struct.Struct(">i")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_STATUS = struct.Struct(">ii")
_CONNECT = struct.Struct(">HHIIii")
_CONNECT_REPLY = struct.Struct(">HII24s")
_OPEN = struct.Struct(">ii")
_HOBJ_OPT = struct.Struct(">Ii")
_PUT = struct.Struct(">IiI")
_PUT1 = struct.Struct(">iiI")
_GET = struct.Struct(">IiiiI16s")
_GET_REPLY = struct.Struct(">I16s")
_STAT_REPLY = struct.Struct(">IIIii")
_UU = struct.Struct(">II")
_CONSUME = struct.Struct(">IIi")
_PUSHED = struct.Struct(">II16s")
_II = struct.Struct(">ii")
_PUT_BATCH = struct.Struct(">IiII")
_PUT_ITEM = struct.Struct(">24sI")
_PUSHED_BATCH = struct.Struct(">II")
_PUSHED_ITEM = struct.Struct(">I16sI")
_GET_BATCH = struct.Struct(">IiiIII")


_s = body.string
_name = body.name
_md = body.md
_props = body.props
_status = body.status
short_detail = body.short_detail
DETAIL_LIMIT = body.DETAIL_LIMIT
OK_STATUS = body.OK_STATUS
_OK = body.OK_STATUS
_NO_PROPS = body.NO_PROPS


# --- encoders: event -> (type, flags, payload parts) ------------------------------------

Encoded = tuple[int, int, int, list[bytes]]  # type, flags, corr, payload parts


def encode(ev: E.Event | columnframes.PutColumns) -> Encoded:
    """The packet type, flags, correlation id and payload parts of an event.

    Raises:
        ValueError: a field cannot be represented (string too long, bad MQMD field).
    """
    fn = _ENCODERS.get(type(ev))
    if fn is None:
        raise TypeError(f"not a protocol event: {ev!r}")
    return fn(ev)


_R = FLAG_REPLY_EXPECTED


def _enc_connect(e: Any) -> Encoded:
    head = _CONNECT.pack(e.min_version, e.max_version, e.max_msg_length, e.heartbeat_ms, e.options, e.appl_type)
    return T_CONNECT, _R, e.corr, [head, _s(e.qmgr_name), _s(e.appl_name), _s(e.user)]


def _enc_connect_reply(e: Any) -> Encoded:
    if len(e.connection_id) != 24:
        raise ValueError("connection_id must be 24 bytes")
    body = _CONNECT_REPLY.pack(e.version, e.max_msg_length, e.heartbeat_ms, e.connection_id)
    return T_CONNECT_REPLY, 0, e.corr, [_status(e.comp, e.reason, e.detail), body, _s(e.qmgr_name)]


def _enc_open(e: Any) -> Encoded:
    parts = [_OPEN.pack(e.options, e.object_type), _s(e.object_name), _s(e.object_q_mgr_name)]
    parts += [_s(e.dynamic_q_name), _s(e.alternate_user_id), _s(e.selection_string)]
    return T_OPEN, _R, e.corr, parts


def _enc_open_reply(e: Any) -> Encoded:
    parts = [_status(e.comp, e.reason, e.detail), _U32.pack(e.hobj)]
    parts += [_s(e.object_name), _s(e.resolved_q_name), _s(e.resolved_q_mgr_name)]
    return T_OPEN_REPLY, 0, e.corr, parts


def _enc_put(e: Any) -> Encoded:
    flags = _R if e.reply else 0
    return T_PUT, flags, e.corr, [_PUT.pack(e.hobj, e.options, e.context), _md(e.md), _props(e.properties), e.data]


# The GPacket header (ferrymq.protocol.framing) and a PUT's or GET's fixed body as one struct:
# a client writes one of each per request/reply round trip.
_PUT_FRAME = struct.Struct(">hhiiiqqIIiI")
_GET_FRAME = struct.Struct(">hhiiiqqIIiiiI16s")


def put_frame(e: Any) -> bytes:
    """A Put's whole packet, as ``pack_packet(*encode(e), None)`` makes it, in one pack and one join.

    Raises:
        ValueError, OverflowError, TypeError, struct.error: as ``encode`` may (the caller then asks
            ``encode`` itself, so that the error is the one it raises).
    """
    md = e.md
    if type(md) is not bytes or len(md) != C.MQMD_LENGTH_2 or not md.startswith(V2_LE_HEAD):  # _md's fast case first
        md = _md(md)
    props = _props(e.properties)
    data = e.data
    size = _PUT_FRAME.size + len(md) + len(props) + len(data)
    return b"".join((_PUT_FRAME.pack(gpacket.VERSION, T_PUT, size, gpacket.MAGIC, 0, 0, e.corr, _R if e.reply else 0,
                                     e.hobj, e.options, e.context), md, props, data))


def get_frame(e: Any) -> bytes:
    """A Get's whole packet, as ``pack_packet(*encode(e), None)`` makes it, in one pack.

    Raises:
        ValueError, OverflowError, TypeError, struct.error: as ``put_frame``.
    """
    if len(e.msg_token) != 16:
        raise ValueError("msg_token must be 16 bytes")
    md = e.md
    if type(md) is not bytes or len(md) != C.MQMD_LENGTH_2 or not md.startswith(V2_LE_HEAD):
        md = _md(md)
    return _GET_FRAME.pack(gpacket.VERSION, T_GET, _GET_FRAME.size + len(md), gpacket.MAGIC, 0, 0, e.corr,
                           _R | (FLAG_MSG_HANDLE if e.msg_handle else 0), e.hobj, e.options, e.wait_interval,
                           e.match_options, e.buffer_length, e.msg_token) + md


def put_get_frames(put: Any, get: Any) -> bytes:
    """``put_frame(put) + get_frame(get)`` in one join: a request/reply loop's asynchronous
    put leaves with the get that follows it, and the three copies of its data (each frame's
    own, then the write's) become one.

    Raises:
        ValueError, OverflowError, TypeError, struct.error: as ``put_frame`` or ``get_frame``.
    """
    md = put.md
    if type(md) is not bytes or len(md) != C.MQMD_LENGTH_2 or not md.startswith(V2_LE_HEAD):
        md = _md(md)
    props = _props(put.properties) if put.properties else _NO_PROPS  # _props' usual case, inline
    data = put.data
    if len(get.msg_token) != 16:
        raise ValueError("msg_token must be 16 bytes")
    get_md = get.md
    if type(get_md) is not bytes or len(get_md) != C.MQMD_LENGTH_2 or not get_md.startswith(V2_LE_HEAD):
        get_md = _md(get_md)
    size = _PUT_FRAME.size + len(md) + len(props) + len(data)
    return b"".join((
        _PUT_FRAME.pack(gpacket.VERSION, T_PUT, size, gpacket.MAGIC, 0, 0, put.corr, _R if put.reply else 0,
                        put.hobj, put.options, put.context), md, props, data,
        _GET_FRAME.pack(gpacket.VERSION, T_GET, _GET_FRAME.size + len(get_md), gpacket.MAGIC, 0, 0, get.corr,
                        _R | (FLAG_MSG_HANDLE if get.msg_handle else 0), get.hobj, get.options, get.wait_interval,
                        get.match_options, get.buffer_length, get.msg_token), get_md))


# A GetReply's GPacket header and fixed body start (an OK status, data length, MsgToken) as
# one struct: the server writes one per waiting get answered.
_GET_REPLY_FRAME = struct.Struct(">hhiiiqqI10sI16s")


def get_reply_frame(e: Any) -> bytes | None:
    """A GetReply's whole packet, as ``pack_packet(*encode(e), None)`` makes it, when it is
    the usual one (OK, no message properties); None for any other, which ``encode`` packs.

    Raises:
        ValueError, OverflowError, struct.error: as ``encode`` may (the caller then asks
            ``encode`` itself, so that the error is the one it raises).
    """
    if e.comp or e.reason or e.detail or e.properties:
        return None
    return ok_get_reply_frame(e.corr, e.md_bytes, e.data, e.data_length, e.msg_token, e.resolved_q_name)


def ok_get_reply_frame(corr: int, md: bytes, data: bytes, data_length: int, token: bytes, q_name: str) -> bytes:
    """``get_reply_frame`` of ``GetReply(corr, md, data, data_length, token, q_name)`` (OK, no
    properties), from its fields: a message handed to a waiting get goes out without the event.

    Raises:
        ValueError, OverflowError, struct.error: as ``get_reply_frame``.
    """
    name = _name(q_name)
    size = _GET_REPLY_FRAME.size + len(name) + len(md) + 4 + len(data)
    return b"".join((_GET_REPLY_FRAME.pack(gpacket.VERSION, T_GET_REPLY, size, gpacket.MAGIC, 0, 0, corr, 0, _OK,
                                           data_length, token), name, md, _NO_PROPS, data))


def _enc_put1(e: Any) -> Encoded:
    flags = _R if e.reply else 0
    parts = [_PUT1.pack(e.options, e.object_type, e.context), _s(e.object_name), _s(e.object_q_mgr_name)]
    parts += [_s(e.alternate_user_id), _md(e.md), _props(e.properties), e.data]
    return T_PUT1, flags, e.corr, parts


def _enc_put_reply(e: Any) -> Encoded:
    parts = [_status(e.comp, e.reason, e.detail), _s(e.resolved_q_name), _s(e.resolved_q_mgr_name), _md(e.md)]
    return T_PUT_REPLY, 0, e.corr, parts


def _enc_get(e: Any) -> Encoded:
    if len(e.msg_token) != 16:
        raise ValueError("msg_token must be 16 bytes")
    head = _GET.pack(e.hobj, e.options, e.wait_interval, e.match_options, e.buffer_length, e.msg_token)
    return T_GET, _R | (FLAG_MSG_HANDLE if e.msg_handle else 0), e.corr, [head, _md(e.md)]


def _enc_get_reply(e: Any) -> Encoded:
    parts = [_status(e.comp, e.reason, e.detail), _GET_REPLY.pack(e.data_length, e.msg_token)]
    parts += [_name(e.resolved_q_name), e.md_bytes, _props(e.properties), e.data]
    return T_GET_REPLY, 0, e.corr, parts


def _enc_inquire(e: Any) -> Encoded:
    if len(e.int_selectors) > MAX_LIST or len(e.char_selectors) > MAX_LIST:
        raise ValueError(f"at most {MAX_LIST} selectors of each kind")
    n, m = len(e.int_selectors), len(e.char_selectors)
    body = struct.pack(f">IH{n}iH{m}i", e.hobj, n, *e.int_selectors, m, *e.char_selectors)
    return T_INQUIRE, _R, e.corr, [body]


def _enc_inquire_reply(e: Any) -> Encoded:
    n = len(e.ints)
    parts = [_status(e.comp, e.reason, e.detail), struct.pack(f">H{n}iH", n, *e.ints, len(e.chars))]
    parts += [_s(c) for c in e.chars]
    return T_INQUIRE_REPLY, 0, e.corr, parts


def _enc_set(e: Any) -> Encoded:
    if len(e.ints) > MAX_LIST or len(e.chars) > MAX_LIST:
        raise ValueError(f"at most {MAX_LIST} selectors of each kind")
    parts = [struct.pack(">IH", e.hobj, len(e.ints))]
    parts += [_II.pack(k, v) for k, v in e.ints.items()]
    parts.append(_U16.pack(len(e.chars)))
    for k, v in e.chars.items():
        parts += [_I.pack(k), _s(v)]
    return T_SET, _R, e.corr, parts


def _enc_stat_reply(e: Any) -> Encoded:
    body = _STAT_REPLY.pack(e.put_success, e.put_warning, e.put_failure, e.first_comp, e.first_reason)
    return T_STAT_REPLY, 0, e.corr, [_status(e.comp, e.reason, e.detail), body, _s(short_detail(e.first_detail))]


def _enc_pushed(e: Any) -> Encoded:
    return T_PUSHED, 0, 0, [_PUSHED.pack(e.hobj, e.data_length, e.msg_token), e.md_bytes, _props(e.properties), e.data]


def _batch_size(n: int) -> None:
    if not 0 < n <= MAX_BATCH:
        raise ValueError(f"a batch holds 1..{MAX_BATCH} items, not {n}")


def _enc_put_batch(e: Any) -> Encoded:
    _batch_size(len(e.items))
    parts = [_PUT_BATCH.pack(e.hobj, e.options, e.context, len(e.items)), _md(e.md)]
    item = _PUT_ITEM.pack
    for msg_id, data in e.items:
        if len(msg_id) != 24:
            raise ValueError("msg_id must be 24 bytes")
        parts += (item(msg_id, len(data)), data)
    return T_PUT_BATCH, 0, 0, parts


def _enc_pushed_batch(e: Any) -> Encoded:
    _batch_size(len(e.items))
    parts = [_PUSHED_BATCH.pack(e.hobj, len(e.items))]
    item = _PUSHED_ITEM.pack
    for md_bytes, data, data_length, token in e.items:
        parts += (item(data_length, token, len(data)), md_bytes, data)
    return T_PUSHED_BATCH, 0, 0, parts


def _enc_get_batch(e: Any) -> Encoded:
    if not 0 < e.max_messages <= MAX_BATCH:
        raise ValueError(f"max_messages must be 1..{MAX_BATCH}, not {e.max_messages}")
    body = _GET_BATCH.pack(e.hobj, e.options, e.wait_interval, e.max_messages, e.max_bytes, e.buffer_length)
    return T_GET_BATCH, _R, e.corr, [body]


def _enc_get_batch_reply(e: Any) -> Encoded:
    _batch_size(len(e.items))
    parts = [_status(C_OK, 0, ""), _U32.pack(len(e.items))]
    item = _PUSHED_ITEM.pack
    for md_bytes, data, data_length, token, props in e.items:
        parts += (item(data_length, token, len(data)), md_bytes, _props(props), data)
    return T_GET_BATCH_REPLY, 0, e.corr, parts


_ENCODERS: dict[type, Callable[[Any], Encoded]] = {
    E.Connect: _enc_connect,
    E.ConnectReply: _enc_connect_reply,
    E.Disconnect: lambda e: (T_DISCONNECT, _R, e.corr, []),
    E.Open: _enc_open,
    E.OpenReply: _enc_open_reply,
    E.Close: lambda e: (T_CLOSE, _R, e.corr, [_HOBJ_OPT.pack(e.hobj, e.options)]),
    E.Put: _enc_put,
    E.Put1: _enc_put1,
    E.PutReply: _enc_put_reply,
    E.Get: _enc_get,
    E.GetReply: _enc_get_reply,
    E.Commit: lambda e: (T_COMMIT, _R, e.corr, []),
    E.Backout: lambda e: (T_BACKOUT, _R, e.corr, []),
    E.Inquire: _enc_inquire,
    E.InquireReply: _enc_inquire_reply,
    E.Set: _enc_set,
    E.Heartbeat: lambda e: (T_HEARTBEAT, _R if e.reply else 0, e.corr, []),
    E.HeartbeatReply: lambda e: (T_HEARTBEAT_REPLY, 0, e.corr, []),
    E.Stat: lambda e: (T_STAT, _R, e.corr, [_I.pack(e.stat_type)]),
    E.StatReply: _enc_stat_reply,
    E.Consume: lambda e: (T_CONSUME, _R, e.corr, [_CONSUME.pack(e.hobj, e.window, e.options)]),
    E.Credit: lambda e: (T_CREDIT, 0, 0, [_UU.pack(e.hobj, e.count)]),
    E.Pushed: _enc_pushed,
    E.PutBatch: _enc_put_batch,
    E.PushedBatch: _enc_pushed_batch,
    E.GetBatch: _enc_get_batch,
    E.GetBatchReply: _enc_get_batch_reply,
    E.PersistentNext: lambda e: (T_PERSISTENT_NEXT, 0, 0, [_I.pack(e.hobj)]),
    E.Ending: lambda e: (T_ENDING, 0, 0, [_I.pack(e.reason), _s(short_detail(e.detail))]),
    E.Reply: lambda e: (T_REPLY, 0, e.corr, [_status(e.comp, e.reason, e.detail)]),
}


# --- decoders: (type, flags, corr, payload, properties) -> event ------------------------


def _dec_connect(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    lo, hi, maxlen, hb, options, appl_type = r.unpack(_CONNECT)
    return E.Connect(corr, r.string(), r.string(), r.string(), appl_type, lo, hi, maxlen, hb, options)


def _dec_connect_reply(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    comp, reason, detail = r.status()
    version, maxlen, hb, cid = r.unpack(_CONNECT_REPLY)
    return E.ConnectReply(corr, comp, reason, detail, version, maxlen, hb, r.string(), cid)


def _dec_open(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    options, otype = r.unpack(_OPEN)
    name, qmgr, dyn, alt, sel = r.string(), r.string(), r.string(), r.string(), r.string()
    return E.Open(corr, name, options, otype, qmgr, dyn, alt, sel)


def _dec_open_reply(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    comp, reason, detail = r.status()
    (hobj,) = r.unpack(_U32)
    return E.OpenReply(corr, hobj, r.string(), r.string(), r.string(), comp, reason, detail)


def _dec_close(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    hobj, options = r.unpack(_HOBJ_OPT)
    return E.Close(corr, hobj, options)


def _dec_put(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    hobj, options, context = r.unpack(_PUT)
    md = r.md()
    props = r.props()
    return E.Put(corr, hobj, md, r.rest(), options, context, props, bool(flags & _R))


_MD_V2_LENGTH = C.MQMD_LENGTH_2
# Bodies up to this are copied by slicing: out of a bytearray that is two copies, cheaper to
# set up than a view for a small body; a large one (a 64 KiB body included) is copied once.
_COPY_BY_SLICE = 4096


def _body(buf: bytes | bytearray, start: int, end: int) -> bytes:
    """The bytes buf[start:end] as bytes, copied once for a large body."""
    if end - start <= _COPY_BY_SLICE:
        return bytes(buf[start:end])
    with memoryview(buf) as view:
        return bytes(view[start:end])


def _fast_put(buf: bytes | bytearray, at: int, end: int, corr: int, flags: int) -> E.Event | None:
    """``_dec_put`` for a Put frame still in the receive buffer at [at, end), when it is the
    usual one: a complete MQMD a writer sends and no message properties. None otherwise,
    and ``_dec_put`` decodes the frame (or says what is wrong with it)."""
    ev = _fast_put_raw(buf, at, end, corr, flags)
    if ev is not None:
        ev.md = MQMD.unpack_from(ev.md)  # type: ignore[arg-type, union-attr]
    return ev


def _fast_put_raw(buf: bytes | bytearray, at: int, end: int, corr: int, flags: int) -> E.Event | None:
    """``_fast_put`` but for the event's ``md``: the MQMD's bytes, not decoded (decoding a
    descriptor whose StrucId and Version are plain cannot fail; a queue manager puts one it
    has seen before, but for MsgId and CorrelId, without decoding it: Messaging.put_raw)."""
    md_at = at + _PUT.size
    # plain_md_length, inline; the usual head compared in place (no 8-byte copy to look up)
    if buf.startswith(V2_LE_HEAD, md_at):
        props_at = md_at + _MD_V2_LENGTH
    else:
        props_at = md_at + _PLAIN_MD_LENGTHS.get(bytes(buf[md_at : md_at + 8]), 0)
    if props_at == md_at or end - props_at < 4 or not buf.startswith(_NO_PROPS, props_at):
        return None
    hobj, options, context = _PUT.unpack_from(buf, at)
    at = props_at + 4
    data = bytes(buf[at:end]) if end - at <= _COPY_BY_SLICE else _body(buf, at, end)
    return E.Put(corr, hobj, bytes(buf[md_at:props_at]), data, options, context, None, flags & _R != 0)


def _fast_get(buf: bytes | bytearray, at: int, end: int, corr: int, flags: int) -> E.Event | None:
    """``_dec_get`` for a Get frame in the receive buffer whose MQMD is one a writer sends and
    ends the frame; None otherwise (``_dec_get`` then decodes it or says what is wrong)."""
    md_at = at + _GET.size
    if not (end - md_at == _MD_V2_LENGTH and buf.startswith(V2_LE_HEAD, md_at)) and (
            end - md_at < 8 or plain_md_length(buf, md_at) != end - md_at):  # the usual head compared in place first
        return None
    hobj, options, wait, match, buflen, token = _GET.unpack_from(buf, at)
    return E.Get(corr, hobj, MQMD.unpack_from(buf, md_at), options, wait, match, buflen, token,
                 bool(flags & FLAG_MSG_HANDLE))


def _dec_put1(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    options, otype, context = r.unpack(_PUT1)
    name, qmgr, alt = r.string(), r.string(), r.string()
    md = r.md()
    props = r.props()
    return E.Put1(corr, name, md, r.rest(), options, otype, qmgr, alt, context, props, bool(flags & _R))


def _dec_put_reply(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    comp, reason, detail = r.status()
    q, qm = r.string(), r.string()
    return E.PutReply(corr, r.md_bytes(), q, qm, comp, reason, detail)


def _dec_get(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    hobj, options, wait, match, buflen, token = r.unpack(_GET)
    return E.Get(corr, hobj, r.md(), options, wait, match, buflen, token, bool(flags & FLAG_MSG_HANDLE))


def _dec_get_reply(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    comp, reason, detail = r.status()
    length, token = r.unpack(_GET_REPLY)
    q = r.string()
    md = r.md_bytes()
    props = r.props()
    return E.GetReply(corr, md, r.rest(), length, token, q, props, comp, reason, detail)


def _ints(r: Reader, n: int) -> tuple[int, ...]:
    return r.unpack(struct.Struct(f">{n}i")) if n else ()


def _dec_inquire(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    (hobj,) = r.unpack(_U32)
    ints = _ints(r, r.count())
    return E.Inquire(corr, hobj, ints, _ints(r, r.count()))


def _dec_inquire_reply(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    comp, reason, detail = r.status()
    ints = _ints(r, r.count())
    chars = tuple(r.string() for _ in range(r.count()))
    return E.InquireReply(corr, ints, chars, comp, reason, detail)


def _dec_set(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    (hobj,) = r.unpack(_U32)
    ints = dict(r.unpack(_II) for _ in range(r.count()))
    chars: dict[int, str] = {}
    for _ in range(r.count()):
        (k,) = r.unpack(_I)
        chars[k] = r.string()
    return E.Set(corr, hobj, ints, chars)


def _dec_stat_reply(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    comp, reason, detail = r.status()
    ok, warn, fail, fcomp, freason = r.unpack(_STAT_REPLY)
    return E.StatReply(corr, ok, warn, fail, fcomp, freason, r.string(), comp, reason, detail)


def _dec_pushed(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    hobj, length, token = r.unpack(_PUSHED)
    md = r.md_bytes()
    props = r.props()
    return E.Pushed(hobj, md, r.rest(), length, token, props)


def _dec_put_batch(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    if props is not None:
        raise r.fail("a PUT_BATCH carries no properties (messages with properties travel as PUT)")
    hobj, options, context, n = r.unpack(_PUT_BATCH)
    r.batch_count(n)
    md = r.md()
    buf, pos, end = r.buf, r.pos, len(r.buf)
    items: list[tuple[bytes, bytes]] = []
    item = _PUT_ITEM.unpack_from
    for _ in range(n):
        if end - pos < 28:
            r.pos = pos
            raise r.fail(f"item {len(items)}: needs 28 bytes, {end - pos} present")
        msg_id, length = item(buf, pos)
        pos += 28
        if end - pos < length:
            r.pos = pos
            raise r.fail(f"item {len(items)}: data of {length} bytes, {end - pos} present")
        items.append((msg_id, bytes(buf[pos : pos + length])))
        pos += length
    r.pos = pos
    return E.PutBatch(hobj, md, items, options, context)


def _dec_pushed_batch(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    if props is not None:
        raise r.fail("a PUSHED_BATCH carries no properties")
    hobj, n = r.unpack(_PUSHED_BATCH)
    r.batch_count(n)
    items: list[tuple[bytes, bytes, int, bytes]] = []
    for _ in range(n):
        data_length, token, length = r.unpack(_PUSHED_ITEM)
        md = r.md_bytes()
        if len(r.buf) - r.pos < length:
            raise r.fail(f"item {len(items)}: data of {length} bytes, {len(r.buf) - r.pos} present")
        items.append((md, bytes(r.buf[r.pos : r.pos + length]), data_length, token))
        r.pos += length
    return E.PushedBatch(hobj, items)


def _dec_get_batch(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    hobj, options, wait, count, max_bytes, buflen = r.unpack(_GET_BATCH)
    r.batch_count(count)
    return E.GetBatch(corr, hobj, options, wait, count, max_bytes, buflen)


def _dec_get_batch_reply(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    comp, _, _ = r.status()
    if comp != C_OK:  # failures come as REPLY frames
        raise r.fail(f"GET_BATCH_REPLY with completion code {comp}")
    (n,) = r.unpack(_U32)
    r.batch_count(n)
    items: list[tuple[bytes, bytes, int, bytes, Any]] = []
    for _ in range(n):
        data_length, token, length = r.unpack(_PUSHED_ITEM)
        md = r.md_bytes()
        item_props = r.props()
        if len(r.buf) - r.pos < length:
            raise r.fail(f"item {len(items)}: data of {length} bytes, {len(r.buf) - r.pos} present")
        items.append((md, bytes(r.buf[r.pos : r.pos + length]), data_length, token, item_props))
        r.pos += length
    return E.GetBatchReply(corr, items)


def _dec_reply(r: Reader, corr: int, flags: int, props: Any) -> E.Event:
    return E.Reply(corr, *r.status())


Decoder = Callable[[Reader, int, int, Any], E.Event]
FastDecoder = Callable[[bytes | bytearray, int, int, int, int], E.Event | None]
"""(buffer, start, end, corr, flags) -> the event, or None to leave the frame to its Decoder."""

CLIENT_FRAMES: dict[int, Decoder] = {
    T_CONNECT: _dec_connect,
    T_DISCONNECT: lambda r, c, f, p: E.Disconnect(c),
    T_OPEN: _dec_open,
    T_CLOSE: _dec_close,
    T_PUT: _dec_put,
    T_PUT1: _dec_put1,
    T_GET: _dec_get,
    T_COMMIT: lambda r, c, f, p: E.Commit(c),
    T_BACKOUT: lambda r, c, f, p: E.Backout(c),
    T_INQUIRE: _dec_inquire,
    T_SET: _dec_set,
    T_HEARTBEAT: lambda r, c, f, p: E.Heartbeat(c, bool(f & _R)),
    T_HEARTBEAT_REPLY: lambda r, c, f, p: E.HeartbeatReply(c),
    T_STAT: lambda r, c, f, p: E.Stat(c, r.unpack(_I)[0]),
    T_CONSUME: lambda r, c, f, p: E.Consume(c, *r.unpack(_CONSUME)),
    T_CREDIT: lambda r, c, f, p: E.Credit(*r.unpack(_UU)),
    T_PUT_BATCH: _dec_put_batch,
    T_GET_BATCH: _dec_get_batch,
}
"""Frames a server accepts (sent by clients)."""

SERVER_FRAMES: dict[int, Decoder] = {
    T_CONNECT_REPLY: _dec_connect_reply,
    T_OPEN_REPLY: _dec_open_reply,
    T_PUT_REPLY: _dec_put_reply,
    T_GET_REPLY: _dec_get_reply,
    T_INQUIRE_REPLY: _dec_inquire_reply,
    T_STAT_REPLY: _dec_stat_reply,
    T_HEARTBEAT: lambda r, c, f, p: E.Heartbeat(c, bool(f & _R)),
    T_HEARTBEAT_REPLY: lambda r, c, f, p: E.HeartbeatReply(c),
    T_PUSHED: _dec_pushed,
    T_PUSHED_BATCH: _dec_pushed_batch,
    T_GET_BATCH_REPLY: _dec_get_batch_reply,
    T_PERSISTENT_NEXT: lambda r, c, f, p: E.PersistentNext(r.unpack(_I)[0]),
    T_ENDING: lambda r, c, f, p: E.Ending(r.unpack(_I)[0], r.string()),
    T_REPLY: _dec_reply,
}
"""Frames a client accepts (sent by servers)."""

NAMES = {v: k[2:] for k, v in globals().items() if k.startswith("T_") and isinstance(v, int)}

# Sequence-range access and prepared units of work (1150..1169) live in their own module.
_ENCODERS.update(seqframes.ENCODERS)
CLIENT_FRAMES.update(seqframes.CLIENT_FRAMES)
SERVER_FRAMES.update(seqframes.SERVER_FRAMES)
NAMES.update(seqframes.NAMES)
# The columnar put (1180) too.
_ENCODERS.update(columnframes.ENCODERS)
CLIENT_FRAMES.update(columnframes.CLIENT_FRAMES)
NAMES.update(columnframes.NAMES)
# The two requests of every request/reply hop, decoded where they lie in the receive buffer.
FAST_CLIENT_FRAMES: dict[int, FastDecoder] = {T_PUT: _fast_put, T_GET: _fast_get}
FAST_CLIENT_FRAMES_RAW_MD: dict[int, FastDecoder] = {T_PUT: _fast_put_raw, T_GET: _fast_get}
"""FAST_CLIENT_FRAMES, but a Put's ``md`` left as its bytes (ServerConnection(raw_put_md=True))."""


def _in_place(ptype: int) -> FastDecoder:
    """The ordinary decoder of ``ptype`` run over a view of the frame where it lies in the
    receive buffer: what it keeps it copies once (a batch of large bodies is not copied out
    whole first). None on a DecodeError: the ordinary path then reads the frame and says
    what is wrong with it."""
    decode = SERVER_FRAMES[ptype]

    def run(buf: bytes | bytearray, start: int, end: int, corr: int, flags: int) -> E.Event | None:
        # Every slice the decoder takes of the view is gone by the time it returns (it keeps
        # bytes only), so the views are released before the reader compacts its buffer.
        with memoryview(buf) as whole, whole[start:end] as view:
            r = Reader(view, NAMES.get(ptype, str(ptype)))
            try:
                ev = decode(r, corr, flags, None)
            except DecodeError:
                return None
            # Bytes after the body's last field: the general decoder names them.
            return ev if r.pos == r.end else None

    return run


FAST_SERVER_FRAMES: dict[int, FastDecoder] = {T_GET_BATCH_REPLY: _in_place(T_GET_BATCH_REPLY)}
"""Server frames a client decodes in place: a persistent consumer's batches, megabytes each."""


def decode(table: dict[int, Decoder], ptype: int, flags: int, corr: int, payload: bytes, props: Any) -> E.Event:
    """One frame's event.

    Raises:
        DecodeError: unknown type for this direction, or a malformed body.
    """
    fn = table.get(ptype)
    if fn is None:
        raise DecodeError("frame", 0, f"packet type {ptype} is not valid in this direction")
    r = Reader(payload, NAMES.get(ptype, str(ptype)))
    ev = fn(r, corr, flags, props)
    if r.pos != len(payload):
        r.done()
    return ev
