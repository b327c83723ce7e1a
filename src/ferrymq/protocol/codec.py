"""The frames of ferrymq's client protocol, each declared once (ferrymq.protocol.layout):
its packet type, event, flags and body. The packers and in-place decoders are generated
from these declarations; the machines (ferrymq.protocol.connection) use nothing else.

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
| 1100 | CONNECT        | u16 min_ver, u16 max_ver, u32 max_msg_len, u32 heartbeat_ms, i32 options, i32 appl_type, str qmgr, str appl, str user, str password, str channel, [u32 pid, u32 tid] |
| 1101 | CONNECT_REPLY  | status, u16 version, u32 max_msg_len, u32 heartbeat_ms, 24 connection_id, str qmgr |
| 1102 | DISCONNECT     | —                                                                       |
| 1104 | OPEN           | i32 options, i32 object_type, str name, str qmgr, str dynamic, str altuser, str selection, charv object_string |
| 1105 | OPEN_REPLY     | status, u32 hobj, str name, str resolved_q, str resolved_qmgr, charv res_object_string |
| 1106 | CLOSE          | u32 hobj, i32 options                                                   |
| 1108 | PUT            | u32 hobj, i32 pmo_options, u32 context, md, props, rest = data          |
| 1109 | PUT_REPLY      | status, str resolved_q, str resolved_qmgr, md                           |
| 1110 | PUT1           | i32 pmo_options, i32 object_type, u32 context, str name, str qmgr, str altuser, charv object_string, md, props, rest = data |
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
| 1131 | PUSHED_BATCH   | u32 hobj, u32 n, n x (u32 data_length, 16 msg_token, u32 len, md, props, len bytes data) |
| 1134 | SUB            | i32 options, u32 hobj, i32 pub_priority, i32 sub_expiry, i32 sub_level, 24 sub_correl_id, 32 pub_accounting_token, str object_name, charv object_string, charv sub_name, charv sub_user_data, str pub_appl_identity_data, charv selection_string, str altuser |
| 1135 | SUB_REPLY      | status, u32 hsub, u32 hobj, u8 described, i32 options, i32 pub_priority, i32 sub_expiry, i32 sub_level, 24 sub_correl_id, 32 pub_accounting_token, str queue_name, charv res_object_string, str object_name, charv sub_user_data, str pub_appl_identity_data, charv selection_string |
| 1136 | SUBRQ          | u32 hsub, i32 action, i32 sro_options                                   |
| 1137 | SUBRQ_REPLY    | status, u32 num_pubs                                                    |
| 1138 | GET_AHEAD      | u32 hobj, i32 gmo_options, i32 wait_ms, u32 max_messages, u32 max_bytes, u32 buffer_length (v5) |
| 1140 | RETURN_AHEAD   | u32 hobj, u32 n, n x 16 msg_token (v5)                                  |
| 1142 | OPEN_LIST      | i32 options, str altuser, u16 n, n x (str name, str qmgr)               |
| 1143 | LIST_REPLY     | u16 n, n x (i32 comp, i32 reason, 24 msg_id, 24 correl_id), status, u32 hobj, i32 known, i32 unknown, i32 invalid |
| 1144 | PUT_LIST       | u32 hobj, i32 pmo_options, u32 context, i32 put_msg_rec_fields, str altuser, u16 n, n x (str name, str qmgr), u16 m, m x (24 msg_id, 24 correl_id, 24 group_id, i32 feedback, 32 accounting_token), md, props, rest = data |
| 1199 | REPLY          | status                                                                  |

A distribution list (OPEN_LIST, PUT_LIST with hobj 0 for MQPUT1) names at most 256 (MAX_LIST)
object records; LIST_REPLY answers both, with the records' responses even when the call failed.

CONNECT's last 8 bytes (the client's process and thread ids, for accounting messages'
ApplicationPid and ApplicationTid) may be absent (an older client): both are then 0; each
is at most 2**31 - 1 (an MQCFIN), anything else is a protocol error.

``charv`` = a ``str`` of at most 10240 characters (MQ_TOPIC_STR_LENGTH): an MQCHARV's text.
Decoding never raises anything but DecodeError. Sequence-range access and prepared units
(1150..1169) are declared in ferrymq.protocol.seqframes, the columnar put (1180) in
ferrymq.protocol.columnframes; this module gathers every frame into the tables.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any

from ferrymq.errors import DecodeError
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import body, columnframes, layout, seqframes
from ferrymq.protocol import events as E
from ferrymq.protocol.body import DETAIL_LIMIT, MAX_BATCH, MAX_LIST, OK_STATUS, Reader, short_detail
from ferrymq.protocol.layout import FLAG_MSG_HANDLE, FLAG_REPLY_EXPECTED, Frame, Part

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
T_SUB = 1134
T_SUB_REPLY = 1135
T_SUBRQ = 1136
T_SUBRQ_REPLY = 1137
T_GET_AHEAD = 1138
T_RETURN_AHEAD = 1140
T_OPEN_LIST = 1142
T_LIST_REPLY = 1143
T_PUT_LIST = 1144
T_REPLY = 1199

C_OK = 0  # MQCC_OK
_R = FLAG_REPLY_EXPECTED
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_I = struct.Struct(">i")
_II = struct.Struct(">ii")
_PUT_ITEM = struct.Struct(">24sI")
_PUSHED_ITEM = struct.Struct(">I16sI")
_PMR_ITEM = struct.Struct(">24s24s24si32s")
_RESPONSE_ITEM = struct.Struct(">ii24s24s")

__all__ = ["DETAIL_LIMIT", "FLAG_MSG_HANDLE", "FLAG_REPLY_EXPECTED", "MAX_BATCH", "MAX_LIST", "OK_STATUS",
           "short_detail"]


# --- fields of their own shape ------------------------------------------------------------


def _ints(r: Reader) -> tuple[int, ...]:
    n = r.count()
    return r.unpack(struct.Struct(f">{n}i")) if n else ()


def _selector_lists(ints: tuple[int, ...], chars: tuple[int, ...]) -> list[bytes]:
    if len(ints) > MAX_LIST or len(chars) > MAX_LIST:
        raise ValueError(f"at most {MAX_LIST} selectors of each kind")
    n, m = len(ints), len(chars)
    return [struct.pack(f">H{n}iH{m}i", n, *ints, m, *chars)]


INQUIRE_SELECTORS: Part[E.Inquire] = Part(
    ("int_selectors", "char_selectors"),
    lambda e: _selector_lists(e.int_selectors, e.char_selectors),
    lambda r: (_ints(r), _ints(r)))


def _enc_inquired(e: E.InquireReply) -> list[bytes]:
    n = len(e.ints)
    return [struct.pack(f">H{n}iH", n, *e.ints, len(e.chars)), *map(body.string, e.chars)]


def _dec_inquired(r: Reader) -> tuple[tuple[int, ...], tuple[str, ...]]:
    ints = _ints(r)
    return ints, tuple(r.string() for _ in range(r.count()))


def _enc_set_values(e: E.Set) -> list[bytes]:
    if len(e.ints) > MAX_LIST or len(e.chars) > MAX_LIST:
        raise ValueError(f"at most {MAX_LIST} selectors of each kind")
    parts = [_U16.pack(len(e.ints)), *(_II.pack(k, v) for k, v in e.ints.items()), _U16.pack(len(e.chars))]
    for k, v in e.chars.items():
        parts += [_I.pack(k), body.string(v)]
    return parts


def _dec_set_values(r: Reader) -> tuple[dict[int, int], dict[int, str]]:
    ints = dict(r.unpack(_II) for _ in range(r.count()))
    chars: dict[int, str] = {}
    for _ in range(r.count()):
        (k,) = r.unpack(_I)
        chars[k] = r.string()
    return ints, chars


def _item_data(r: Reader, n: int, i: int) -> bytes:
    if r.left < n:
        raise r.fail(f"item {i}: data of {n} bytes, {r.left} present")
    return r.take(n)


def _batch_size(n: int) -> int:
    if not 0 < n <= MAX_BATCH:
        raise ValueError(f"a batch holds 1..{MAX_BATCH} items, not {n}")
    return n


def _enc_put_items(e: E.PutBatch) -> list[bytes]:
    parts = [_U32.pack(_batch_size(len(e.items))), body.md(e.md)]
    item = _PUT_ITEM.pack
    for msg_id, data in e.items:
        if len(msg_id) != 24:
            raise ValueError("msg_id must be 24 bytes")
        parts += (item(msg_id, len(data)), data)
    return parts


def _dec_put_items(r: Reader) -> tuple[object, list[tuple[bytes, bytes]]]:
    (n,) = r.unpack(_U32)
    r.batch_count(n)
    return r.md(), r.sized_items(_PUT_ITEM, n)


MessageItem = tuple[bytes, bytes, int, bytes, PropertySet | None]
"""A message in a PUSHED_BATCH or GET_BATCH_REPLY: MQMD, data, data length, token, properties."""


def _enc_message_items(items: list[MessageItem], parts: list[bytes]) -> list[bytes]:
    parts.append(_U32.pack(_batch_size(len(items))))
    item, props = _PUSHED_ITEM.pack, body.props
    for md_bytes, data, data_length, token, p in items:
        parts += (item(data_length, token, len(data)), md_bytes, props(p), data)
    return parts


def _dec_message_items(r: Reader) -> list[MessageItem]:
    (n,) = r.unpack(_U32)
    r.batch_count(n)
    items: list[MessageItem] = []
    for _ in range(n):
        data_length, token, length = r.unpack(_PUSHED_ITEM)
        md = r.md_bytes()
        props = r.props()
        items.append((md, _item_data(r, length, len(items)), data_length, token, props))
    return items


def _enc_pushed_items(e: E.PushedBatch) -> list[bytes]:
    return _enc_message_items(e.items, [])


def _dec_pushed_items(r: Reader) -> tuple[list[MessageItem]]:
    return (_dec_message_items(r),)


def _enc_got_items(e: E.GetBatchReply) -> list[bytes]:
    return _enc_message_items(e.items, [OK_STATUS])


def _dec_got_items(r: Reader) -> tuple[list[MessageItem]]:
    comp, _, _ = r.status()
    if comp != C_OK:  # failures come as REPLY frames
        raise r.fail(f"GET_BATCH_REPLY with completion code {comp}")
    items = _dec_message_items(r)
    return (items,)


def _enc_tokens(e: E.ReturnAhead) -> list[bytes]:
    tokens = e.tokens
    if any(len(t) != 16 for t in tokens):
        raise ValueError("a MsgToken is 16 bytes")
    return [_U32.pack(_batch_size(len(tokens))), *tokens]


def _dec_tokens(r: Reader) -> tuple[list[bytes]]:
    (n,) = r.unpack(_U32)
    r.batch_count(n)
    if r.left != 16 * n:
        raise r.fail(f"{n} MsgTokens need {16 * n} bytes, {r.left} present")
    return ([bytes(r.take(16)) for _ in range(n)],)


def _list_count(n: int) -> bytes:
    if n > MAX_LIST:
        raise ValueError(f"a distribution list holds at most {MAX_LIST} object records, not {n}")
    return _U16.pack(n)


def _enc_objects(e: E.OpenList | E.PutList) -> list[bytes]:
    parts = [_list_count(len(e.objects))]
    for name, qmgr in e.objects:
        parts += [body.string(name), body.string(qmgr)]
    return parts


def _dec_objects(r: Reader) -> tuple[list[tuple[str, str]]]:
    return ([(r.string(), r.string()) for _ in range(r.count())],)


def _enc_pmrs(e: E.PutList) -> list[bytes]:
    return [_list_count(len(e.records)), *(_PMR_ITEM.pack(*rec) for rec in e.records)]


def _dec_pmrs(r: Reader) -> tuple[list[tuple[bytes, bytes, bytes, int, bytes]]]:
    return ([r.unpack(_PMR_ITEM) for _ in range(r.count())],)


def _enc_responses(e: E.ListReply) -> list[bytes]:
    return [_list_count(len(e.responses)), *(_RESPONSE_ITEM.pack(*rec) for rec in e.responses)]


def _dec_responses(r: Reader) -> tuple[list[tuple[int, int, bytes, bytes]]]:
    return ([r.unpack(_RESPONSE_ITEM) for _ in range(r.count())],)


_OBJECTS: Part[Any] = Part(("objects",), _enc_objects, _dec_objects)


PROCESS_ID_LIMIT = 0x7FFFFFFF  # ApplicationPid/Tid are MQCFIN (signed 32-bit) values
_PROCESS = struct.Struct(">II")


def _enc_process(e: E.Connect) -> list[bytes]:
    if not (0 <= e.pid <= PROCESS_ID_LIMIT and 0 <= e.tid <= PROCESS_ID_LIMIT):
        raise ValueError("a process or thread id is 0..2**31-1")
    return [_PROCESS.pack(e.pid, e.tid)]


def _dec_process(r: Reader) -> tuple[int, int]:
    if not r.left:  # a client from before the ids were sent
        return (0, 0)
    if r.left != 8:
        raise r.fail(f"a process and a thread id are 8 bytes, {r.left} present")
    pid, tid = r.unpack(_PROCESS)
    if pid > PROCESS_ID_LIMIT or tid > PROCESS_ID_LIMIT:
        raise r.fail("a process or thread id above 2**31-1")
    return (pid, tid)


# --- the frames -----------------------------------------------------------------------------

_STATUS = ("status", "status")

CLIENT_SENDS: list[Frame[Any]] = [
    Frame(T_CONNECT, "CONNECT", E.Connect, [
        ("min_version", "H"), ("max_version", "H"), ("max_msg_length", "I"), ("heartbeat_ms", "I"),
        ("options", "i"), ("appl_type", "i"), ("qmgr_name", "str"), ("appl_name", "str"), ("user", "str"),
        ("password", "str"), ("channel", "str"), ("process", Part(("pid", "tid"), _enc_process, _dec_process))],
        flags=[(_R, "")]),
    Frame(T_DISCONNECT, "DISCONNECT", E.Disconnect, [], flags=[(_R, "")]),
    Frame(T_OPEN, "OPEN", E.Open, [
        ("options", "i"), ("object_type", "i"), ("object_name", "str"), ("object_q_mgr_name", "str"),
        ("dynamic_q_name", "str"), ("alternate_user_id", "str"), ("selection_string", "str"),
        ("object_string", "charv")], flags=[(_R, "")]),
    Frame(T_OPEN_LIST, "OPEN_LIST", E.OpenList, [
        ("options", "i"), ("alternate_user_id", "str"), ("objects", _OBJECTS)], flags=[(_R, "")]),
    Frame(T_PUT_LIST, "PUT_LIST", E.PutList, [
        ("hobj", "I"), ("options", "i"), ("context", "I"), ("fields", "i"), ("alternate_user_id", "str"),
        ("objects", _OBJECTS), ("records", Part(("records",), _enc_pmrs, _dec_pmrs)), ("md", "md"),
        ("properties", "props"), ("data", "rest")], flags=[(_R, "")]),
    Frame(T_CLOSE, "CLOSE", E.Close, [("hobj", "I"), ("options", "i")], flags=[(_R, "")]),
    Frame(T_PUT, "PUT", E.Put, [
        ("hobj", "I"), ("options", "i"), ("context", "I"), ("md", "md"), ("properties", "props"), ("data", "rest")],
        flags=[(_R, "reply")]),
    Frame(T_PUT1, "PUT1", E.Put1, [
        ("options", "i"), ("object_type", "i"), ("context", "I"), ("object_name", "str"),
        ("object_q_mgr_name", "str"), ("alternate_user_id", "str"), ("object_string", "charv"), ("md", "md"),
        ("properties", "props"), ("data", "rest")], flags=[(_R, "reply")]),
    Frame(T_GET, "GET", E.Get, [
        ("hobj", "I"), ("options", "i"), ("wait_interval", "i"), ("match_options", "i"), ("buffer_length", "I"),
        ("msg_token", "16s"), ("md", "md")], flags=[(_R, ""), (FLAG_MSG_HANDLE, "msg_handle")]),
    Frame(T_COMMIT, "COMMIT", E.Commit, [], flags=[(_R, "")]),
    Frame(T_BACKOUT, "BACKOUT", E.Backout, [], flags=[(_R, "")]),
    Frame(T_INQUIRE, "INQUIRE", E.Inquire, [("hobj", "I"), ("selectors", INQUIRE_SELECTORS)], flags=[(_R, "")]),
    Frame(T_SET, "SET", E.Set, [("hobj", "I"), ("values", Part(("ints", "chars"), _enc_set_values, _dec_set_values))],
          flags=[(_R, "")]),
    Frame(T_STAT, "STAT", E.Stat, [("stat_type", "i")], flags=[(_R, "")]),
    Frame(T_CONSUME, "CONSUME", E.Consume, [("hobj", "I"), ("window", "I"), ("options", "i")], flags=[(_R, "")]),
    Frame(T_CREDIT, "CREDIT", E.Credit, [("hobj", "I"), ("count", "I")], corr=False),
    Frame(T_PUT_BATCH, "PUT_BATCH", E.PutBatch, [
        ("hobj", "I"), ("options", "i"), ("context", "I"),
        ("items", Part(("md", "items"), _enc_put_items, _dec_put_items))], corr=False),
    Frame(T_GET_BATCH, "GET_BATCH", E.GetBatch, [
        ("hobj", "I"), ("options", "i"), ("wait_interval", "i"), ("max_messages", "batch"), ("max_bytes", "I"),
        ("buffer_length", "I")], flags=[(_R, "")]),
    Frame(T_GET_AHEAD, "GET_AHEAD", E.GetAhead, [
        ("hobj", "I"), ("options", "i"), ("wait_interval", "i"), ("max_messages", "batch"), ("max_bytes", "I"),
        ("buffer_length", "I")], flags=[(_R, "")]),
    Frame(T_RETURN_AHEAD, "RETURN_AHEAD", E.ReturnAhead, [
        ("hobj", "I"), ("tokens", Part(("tokens",), _enc_tokens, _dec_tokens))], flags=[(_R, "")]),
    Frame(T_SUB, "SUB", E.Sub, [
        ("options", "i"), ("hobj", "I"), ("pub_priority", "i"), ("sub_expiry", "i"), ("sub_level", "i"),
        ("sub_correl_id", "24s"), ("pub_accounting_token", "32s"), ("object_name", "str"),
        ("object_string", "charv"), ("sub_name", "charv"), ("sub_user_data", "charv"),
        ("pub_appl_identity_data", "str"), ("selection_string", "charv"), ("alternate_user_id", "str")],
        flags=[(_R, "")]),
    Frame(T_SUBRQ, "SUBRQ", E.SubRequest, [("hsub", "I"), ("action", "i"), ("options", "i")], flags=[(_R, "")]),
]
"""Frames only a client sends."""

SERVER_SENDS: list[Frame[Any]] = [
    Frame(T_CONNECT_REPLY, "CONNECT_REPLY", E.ConnectReply, [
        _STATUS, ("version", "H"), ("max_msg_length", "I"), ("heartbeat_ms", "I"), ("connection_id", "24s"),
        ("qmgr_name", "str")]),
    Frame(T_OPEN_REPLY, "OPEN_REPLY", E.OpenReply, [
        _STATUS, ("hobj", "I"), ("object_name", "str"), ("resolved_q_name", "str"), ("resolved_q_mgr_name", "str"),
        ("res_object_string", "charv")]),
    Frame(T_LIST_REPLY, "LIST_REPLY", E.ListReply, [  # the responses first: its status is not folded
        ("responses", Part(("responses",), _enc_responses, _dec_responses)), _STATUS, ("hobj", "I"),
        ("known", "i"), ("unknown", "i"), ("invalid", "i")]),
    Frame(T_PUT_REPLY, "PUT_REPLY", E.PutReply, [
        _STATUS, ("resolved_q_name", "str"), ("resolved_q_mgr_name", "str"), ("md", "md_bytes")]),
    Frame(T_GET_REPLY, "GET_REPLY", E.GetReply, [
        _STATUS, ("data_length", "I"), ("msg_token", "16s"), ("resolved_q_name", "name"), ("md_bytes", "md_bytes"),
        ("properties", "props"), ("data", "rest")]),
    Frame(T_INQUIRE_REPLY, "INQUIRE_REPLY", E.InquireReply, [
        _STATUS, ("lists", Part(("ints", "chars"), _enc_inquired, _dec_inquired))]),
    Frame(T_STAT_REPLY, "STAT_REPLY", E.StatReply, [
        _STATUS, ("put_success", "I"), ("put_warning", "I"), ("put_failure", "I"), ("first_comp", "i"),
        ("first_reason", "i"), ("first_detail", "detail")]),
    Frame(T_PUSHED, "PUSHED", E.Pushed, [
        ("hobj", "I"), ("data_length", "I"), ("msg_token", "16s"), ("md_bytes", "md_bytes"), ("properties", "props"),
        ("data", "rest")], corr=False),
    Frame(T_PUSHED_BATCH, "PUSHED_BATCH", E.PushedBatch, [
        ("hobj", "I"), ("items", Part(("items",), _enc_pushed_items, _dec_pushed_items))], corr=False),
    Frame(T_GET_BATCH_REPLY, "GET_BATCH_REPLY", E.GetBatchReply, [
        ("items", Part(("items",), _enc_got_items, _dec_got_items))]),
    Frame(T_PERSISTENT_NEXT, "PERSISTENT_NEXT", E.PersistentNext, [("hobj", "i")], corr=False),
    Frame(T_ENDING, "ENDING", E.Ending, [("reason", "i"), ("detail", "detail")], corr=False),
    Frame(T_SUB_REPLY, "SUB_REPLY", E.SubReply, [
        _STATUS, ("hsub", "I"), ("hobj", "I"), ("described", "?"), ("options", "i"), ("pub_priority", "i"),
        ("sub_expiry", "i"), ("sub_level", "i"), ("sub_correl_id", "24s"), ("pub_accounting_token", "32s"),
        ("queue_name", "str"), ("res_object_string", "charv"), ("object_name", "str"), ("sub_user_data", "charv"),
        ("pub_appl_identity_data", "str"), ("selection_string", "charv")]),
    Frame(T_SUBRQ_REPLY, "SUBRQ_REPLY", E.SubRequestReply, [_STATUS, ("num_pubs", "I")]),
    Frame(T_REPLY, "REPLY", E.Reply, [_STATUS]),
]
"""Frames only a server sends."""

BOTH_SEND: list[Frame[Any]] = [
    Frame(T_HEARTBEAT, "HEARTBEAT", E.Heartbeat, [], flags=[(_R, "reply")]),
    Frame(T_HEARTBEAT_REPLY, "HEARTBEAT_REPLY", E.HeartbeatReply, []),
]

_CLIENT_SIDE = [*CLIENT_SENDS, *BOTH_SEND, *seqframes.CLIENT_SENDS, *columnframes.CLIENT_SENDS]
_SERVER_SIDE = [*SERVER_SENDS, *BOTH_SEND, *seqframes.SERVER_SENDS]
FRAMES: dict[type, Frame[Any]] = {f.event: f for f in (*_CLIENT_SIDE, *_SERVER_SIDE)}
"""Every frame by its event's class."""

Packer = Callable[..., list[bytes]]
"""A frame's generated packer: its event -> the whole packet as pieces (header first)."""
PACKERS: dict[type, Packer] = {t: f.pack for t, f in FRAMES.items()}

Decoder = Callable[[bytes | memoryview, int, int, int, int], object]
"""A frame's generated decoder: (buffer, body start, body end, correlation id, flags) -> its event."""
CLIENT_FRAMES: dict[int, Decoder] = {f.ptype: f.decode for f in _CLIENT_SIDE}
"""Frames a server accepts (sent by clients)."""
CLIENT_FRAMES_MD_BYTES: dict[int, Decoder] = {**CLIENT_FRAMES, T_PUT: FRAMES[E.Put].decoder(md_as_bytes=True)}
"""CLIENT_FRAMES, but a Put's ``md`` kept as its bytes (ServerConnection(raw_put_md=True))."""
SERVER_FRAMES: dict[int, Decoder] = {f.ptype: f.decode for f in _SERVER_SIDE}
"""Frames a client accepts (sent by servers)."""

PacketDecoder = Callable[[bytes | bytearray, int, int, int], "tuple[object, int] | None"]
"""A frame's generated packet decoder: (buffer, packet start, end of the bytes buffered,
largest packet) -> its event and the packet's end, or None (ferrymq.protocol.layout)."""
CLIENT_PACKETS: dict[int, PacketDecoder] = {f.ptype: f.decode_packet for f in _CLIENT_SIDE}
CLIENT_PACKETS_MD_BYTES: dict[int, PacketDecoder] = {
    **CLIENT_PACKETS, T_PUT: FRAMES[E.Put].packet_decoder(md_as_bytes=True)}
SERVER_PACKETS: dict[int, PacketDecoder] = {f.ptype: f.decode_packet for f in _SERVER_SIDE}
layout.CODE.save()  # every frame's functions are made: keep their code for the next process
NAMES: dict[int, str] = {f.ptype: f.name for f in FRAMES.values()}
EVENTS: dict[int, type] = {f.ptype: f.event for f in FRAMES.values()}
"""Every frame's event class by its packet type."""


def pack(ev: object) -> list[bytes]:
    """The whole packet of an event, as pieces (the header with its frame's fixed fields first).

    Raises:
        TypeError: not a protocol event.
        ValueError, OverflowError, struct.error: a field cannot be represented.
    """
    fn = PACKERS.get(type(ev))
    if fn is None:
        raise TypeError(f"not a protocol event: {ev!r}")
    return fn(ev)


Encoded = tuple[int, int, int, list[bytes]]  # type, flags, corr, body pieces


def encode(ev: object) -> Encoded:
    """The packet type, flags, correlation id and body of an event (``pack`` without its header).

    Raises:
        as ``pack``.
    """
    parts = pack(ev)
    head = parts[0]
    _, ptype, _, _, _, _, corr, flags = struct.unpack_from(">hhiiiqqI", head)
    return ptype, flags, corr, [head[36:], *parts[1:]]


def decode(table: dict[int, Decoder], ptype: int, flags: int, corr: int, payload: bytes,
           props: Iterable[object] | None = None) -> Any:
    """One frame's event from its body.

    Raises:
        DecodeError: unknown type for this direction, a GPacket properties section, or a
            malformed body.
    """
    fn = table.get(ptype)
    if fn is None:
        raise DecodeError("frame", 0, f"packet type {ptype} is not valid in this direction")
    if props is not None:
        raise DecodeError(NAMES[ptype], 0, "this protocol's frames carry no properties in a GPacket section")
    return fn(payload, 0, len(payload), corr, flags)
