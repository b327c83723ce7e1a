"""MQMD, the message descriptor, versions 1 (324 bytes) and 2 (364 bytes).

| Off | Len | Field            | Off | Len | Field                      |
|----:|----:|------------------|----:|----:|----------------------------|
|   0 |   4 | StrucId "MD  "   | 148 |  48 | ReplyToQMgr                |
|   4 |   4 | Version          | 196 |  12 | UserIdentifier             |
|   8 |   4 | Report           | 208 |  32 | AccountingToken (bytes)    |
|  12 |   4 | MsgType          | 240 |  32 | ApplIdentityData           |
|  16 |   4 | Expiry           | 272 |   4 | PutApplType                |
|  20 |   4 | Feedback         | 276 |  28 | PutApplName                |
|  24 |   4 | Encoding         | 304 |   8 | PutDate  YYYYMMDD (GMT)    |
|  28 |   4 | CodedCharSetId   | 312 |   8 | PutTime  HHMMSSTH (GMT)    |
|  32 |   8 | Format           | 320 |   4 | ApplOriginData             |
|  40 |   4 | Priority         |     |     | -- end of version 1 (324)  |
|  44 |   4 | Persistence      | 324 |  24 | GroupId (bytes)            |
|  48 |  24 | MsgId (bytes)    | 348 |   4 | MsgSeqNumber               |
|  72 |  24 | CorrelId (bytes) | 352 |   4 | Offset                     |
|  96 |   4 | BackoutCount     | 356 |   4 | MsgFlags                   |
| 100 |  48 | ReplyToQ         | 360 |   4 | OriginalLength             |

The structure's own integers are in the writer's byte order (little-endian on x86-64);
the Encoding field describes the data that follows, not the MQMD itself.
"""

from __future__ import annotations

import operator
import struct
from typing import Any, NamedTuple

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.layout import Layout, decode_chars, encode_chars

_V1_FIELDS = [
    ("struc_id", "f", 4),
    ("version", "l", 4),
    ("report", "l", 4),
    ("msg_type", "l", 4),
    ("expiry", "l", 4),
    ("feedback", "l", 4),
    ("encoding", "l", 4),
    ("coded_char_set_id", "l", 4),
    ("format", "f", 8),
    ("priority", "l", 4),
    ("persistence", "l", 4),
    ("msg_id", "b", 24),
    ("correl_id", "b", 24),
    ("backout_count", "l", 4),
    ("reply_to_q", "c", 48),
    ("reply_to_q_mgr", "c", 48),
    ("user_identifier", "c", 12),
    ("accounting_token", "b", 32),
    ("appl_identity_data", "c", 32),
    ("put_appl_type", "l", 4),
    ("put_appl_name", "c", 28),
    ("put_date", "c", 8),
    ("put_time", "c", 8),
    ("appl_origin_data", "c", 4),
]
_V2_FIELDS = [
    ("group_id", "b", 24),
    ("msg_seq_number", "l", 4),
    ("offset", "l", 4),
    ("msg_flags", "l", 4),
    ("original_length", "l", 4),
]

LAYOUT_V1 = Layout.of("MQMD", _V1_FIELDS)
LAYOUT_V2 = Layout.of("MQMD", _V1_FIELDS + _V2_FIELDS)
assert LAYOUT_V1.size == C.MQMD_LENGTH_1 and LAYOUT_V2.size == C.MQMD_LENGTH_2

_NAMES_V2 = tuple(attr for attr, _, _ in LAYOUT_V2.fields)
_NAMES_V1 = _NAMES_V2[: len(LAYOUT_V1.fields)]
_V1_COUNT = len(_NAMES_V1)
_INDEX = {name: i for i, name in enumerate(_NAMES_V2)}
# (index, length, "" packs as NULs) of each character field: the only fields that need work
# beyond struct, so pack/unpack touch just these (every put and get crosses this codec).
_CHARS_V2 = tuple((i, n, kind == "c") for i, (_, kind, n) in enumerate(LAYOUT_V2.fields) if kind in "cf")
_CHARS_V1 = tuple(t for t in _CHARS_V2 if t[0] < len(LAYOUT_V1.fields))
_BYTES_V2 = tuple((i, n) for i, (_, kind, n) in enumerate(LAYOUT_V2.fields) if kind == "b")
_BYTES_V1 = tuple(t for t in _BYTES_V2 if t[0] < len(LAYOUT_V1.fields))
# Field values repeat (queue names, formats, user and application names): memoise both
# directions, bounded so hostile input cannot grow the caches.
_CACHE_LIMIT = 4096
_decoded: dict[bytes, str] = {}
_encoded: dict[tuple[str, int, bool], bytes] = {}


def _decode_cached(raw: bytes) -> str:
    text = _decoded.get(raw)
    if text is None:
        text = decode_chars(raw)
        if len(_decoded) < _CACHE_LIMIT:
            _decoded[raw] = text
    return text


def _encode_cached(value: str, length: int, nul_if_empty: bool, name: str) -> bytes:
    key = (value, length, nul_if_empty)
    raw = _encoded.get(key)
    if raw is None:
        raw = encode_chars(value, length, nul_if_empty=nul_if_empty, name=name)
        if len(_encoded) < _CACHE_LIMIT:
            _encoded[key] = raw
    return raw


V2_LE_HEAD = b"MD  \x02\x00\x00\x00"
"""StrucId and Version of a little-endian MQMD v2: how the stored and the clients' descriptors begin."""
_LE_HEADS = {b"MD  \x01\x00\x00\x00": C.MQMD_VERSION_1, V2_LE_HEAD: C.MQMD_VERSION_2}
_tuple_new = tuple.__new__

NONE_ID = bytes(24)
NONE_ACCOUNTING = bytes(32)


class MQMD(NamedTuple):
    """A message descriptor; the defaults are MQMD_DEFAULT (version 1).

    A NamedTuple rather than the frozen dataclass the other codecs use: every put and get
    builds two or three of these, and a tuple of 29 fields is made in one C call (0.3 µs)
    where a frozen dataclass sets each field through object.__setattr__ (2.8 µs).
    Immutable and compared field by field all the same. (In hypothesis tests, build one
    through a function: st.builds on a NamedTuple also draws its defaulted fields.)
    """

    struc_id: str = "MD"
    version: int = C.MQMD_VERSION_1
    report: int = C.MQRO_NONE
    msg_type: int = C.MQMT_DATAGRAM
    expiry: int = C.MQEI_UNLIMITED
    feedback: int = C.MQFB_NONE
    encoding: int = C.MQENC_NATIVE
    coded_char_set_id: int = C.MQCCSI_Q_MGR
    format: str = ""
    priority: int = C.MQPRI_PRIORITY_AS_Q_DEF
    persistence: int = C.MQPER_PERSISTENCE_AS_Q_DEF
    msg_id: bytes = NONE_ID
    correl_id: bytes = NONE_ID
    backout_count: int = 0
    reply_to_q: str = ""
    reply_to_q_mgr: str = ""
    user_identifier: str = ""
    accounting_token: bytes = NONE_ACCOUNTING
    appl_identity_data: str = ""
    put_appl_type: int = C.MQAT_NO_CONTEXT
    put_appl_name: str = ""
    put_date: str = ""
    put_time: str = ""
    appl_origin_data: str = ""
    group_id: bytes = NONE_ID
    msg_seq_number: int = 1
    offset: int = 0
    msg_flags: int = C.MQMF_NONE
    original_length: int = C.MQOL_UNDEFINED

    def replace(self, **changes: Any) -> MQMD:
        """A copy with some fields changed (the descriptor itself is immutable).

        The queue manager calls this on every put and get, so it copies the tuple once.
        """
        values = list(self)
        for name, value in changes.items():
            i = _INDEX.get(name)
            if i is None:
                raise TypeError(f"MQMD has no field {name!r}")
            values[i] = value
        return _tuple_new(MQMD, values)

    @property
    def has_v2_fields(self) -> bool:
        """True when a version-1 reader would need an MQMDE to see the v2 fields."""
        return (
            self.group_id != NONE_ID
            or self.msg_seq_number != 1
            or self.offset != 0
            or self.msg_flags != C.MQMF_NONE
            or self.original_length != C.MQOL_UNDEFINED
        )

    def pack(self, *, big_endian: bool = False, version: int | None = None) -> bytes:
        """The structure's bytes, in the version given (default: its own ``version``)."""
        v = self.version if version is None else version
        if v == C.MQMD_VERSION_2:
            names, layout = _NAMES_V2, LAYOUT_V2
        elif v == C.MQMD_VERSION_1:
            names, layout = _NAMES_V1, LAYOUT_V1
        else:
            raise ValueError(f"MQMD version must be 1 or 2, not {v}")
        # As in unpack_from: the steady character fields are encoded as one cached group.
        steady = _STEADY_RAW(self)
        raw = _encoded_groups.get(steady)
        if raw is None:
            raw = tuple(_encode_cached(value, length, nul, name)
                        for value, (length, nul, name) in zip(steady, _STEADY_SPEC, strict=True))
            if len(_encoded_groups) < _CACHE_LIMIT:
                _encoded_groups[steady] = raw
        sid, fmt, rq, rqm, user, aid, pan, aod = raw
        if not len(self[11]) == len(self[12]) == 24 or len(self[17]) != 32 or (v == 2 and len(self[24]) != 24):
            for i, length in _BYTES_V2 if v == C.MQMD_VERSION_2 else _BYTES_V1:
                field: bytes = self[i]  # type: ignore[assignment]
                if len(field) != length:
                    raise ValueError(f"MQMD {names[i]} must be {length} bytes, not {len(field)}")
        values = (sid, v, *self[2:8], fmt, *self[9:14], rq, rqm, user, self[17], aid, self[19], pan,
                  _encode_cached(self[21], 8, True, "put_date"), _encode_cached(self[22], 8, True, "put_time"), aod,
                  *(self[_V1_COUNT:] if v == C.MQMD_VERSION_2 else ()))
        try:
            return (layout.big if big_endian else layout.little).pack(*values)
        except struct.error as exc:
            raise ValueError(f"MQMD: {exc}") from None

    @classmethod
    def unpack_from(cls, buf: bytes | bytearray | memoryview, offset: int = 0, *, big_endian: bool | None = None) -> MQMD:
        """Decode an MQMD at ``offset``; the byte order is detected from Version when not given.

        Raises:
            DecodeError: wrong StrucId, unknown version, or too few bytes.
        """
        head = bytes(buf[offset : offset + 8])
        version = _LE_HEADS.get(head, 0) if not big_endian else 0
        if version:  # the common case, decided in one lookup
            big_endian = False
            split = _SPLIT_V2 if version == C.MQMD_VERSION_2 else _SPLIT_V1
            if len(buf) - offset >= split.size:
                # One sender's descriptors differ from each other mostly in MsgId and CorrelId:
                # everything else is looked up whole (decoding is a function of the bytes).
                before, msg_id, correl_id, after = split.unpack_from(buf, offset)
                key = before + after
                seen = _whole.get(key)
                if seen is not None:
                    # The entry is the decoded fields as a list: the two identifiers are set in
                    # place and the whole copied once (no slicing and joining of the rest).
                    seen[_I_MSG_ID] = msg_id
                    seen[_I_MSG_ID + 1] = correl_id
                    return _tuple_new(cls, seen)
                md = cls._unpack_checked(buf, offset, version, False)
                if len(_whole) >= _WHOLE_LIMIT:
                    _whole.clear()  # bounded: a stream of ever-new descriptors only costs the decode
                _whole[key] = list(md)
                return md
        else:
            LAYOUT_V1.check_struc_id(buf, offset, C.MQMD_STRUC_ID)
            if big_endian is None:
                big_endian = detect_big_endian(buf, offset, "MQMD", (1, 2))
            version = int.from_bytes(head[4:8], "big" if big_endian else "little", signed=True)
            if version not in (C.MQMD_VERSION_1, C.MQMD_VERSION_2):
                raise DecodeError("MQMD", offset + 4, f"Version {version} is not 1 or 2")
        return cls._unpack_checked(buf, offset, version, big_endian)

    @classmethod
    def _unpack_checked(cls, buf: bytes | bytearray | memoryview, offset: int, version: int, big_endian: bool) -> MQMD:
        """Decode an MQMD whose StrucId, Version and byte order have been checked."""
        layout = LAYOUT_V2 if version == C.MQMD_VERSION_2 else LAYOUT_V1
        if len(buf) - offset < layout.size:
            raise DecodeError("MQMD", offset, f"needs {layout.size} bytes, {max(0, len(buf) - offset)} present")
        v = (layout.big if big_endian else layout.little).unpack_from(buf, offset)
        # The character fields but PutDate/PutTime repeat from message to message (one
        # producer, one format, one reply queue): decode them as one cached group.
        raws = _STEADY_RAW(v)
        steady = _decoded_groups.get(raws)
        if steady is None:
            steady = tuple(map(_decode_cached, raws))
            if len(_decoded_groups) < _CACHE_LIMIT:
                _decoded_groups[raws] = steady
        sid, fmt, rq, rqm, user, aid, pan, aod = steady
        tail = v[_V1_COUNT:] if version == C.MQMD_VERSION_2 else _V2_DEFAULTS
        return _tuple_new(cls, (sid, *v[1:8], fmt, *v[9:14], rq, rqm, user, v[17], aid, v[19], pan,
                                _decode_cached(v[21]), _decode_cached(v[22]), aod, *tail))

    @staticmethod
    def length(version: int) -> int:
        return C.MQMD_LENGTH_2 if version == C.MQMD_VERSION_2 else C.MQMD_LENGTH_1


_V2_DEFAULTS = tuple(MQMD())[_V1_COUNT:]
# unpack_from assembles the tuple by position: these are the character fields' places.
_STEADY = ("struc_id", "format", "reply_to_q", "reply_to_q_mgr", "user_identifier", "appl_identity_data",
           "put_appl_name", "appl_origin_data")
assert tuple(_INDEX[n] for n in _STEADY) == (0, 8, 14, 15, 16, 18, 20, 23)
assert (_INDEX["put_date"], _INDEX["put_time"]) == (21, 22) and _V1_COUNT == 24
assert {i for i, _, _ in _CHARS_V2} == {0, 8, 14, 15, 16, 18, 20, 21, 22, 23}
_STEADY_RAW = operator.itemgetter(*(_INDEX[n] for n in _STEADY))
_STEADY_SPEC = tuple((n, nul, _NAMES_V2[i]) for i, n, nul in _CHARS_V2 if _NAMES_V2[i] in _STEADY)
assert [i for i, _, _ in _CHARS_V2 if _NAMES_V2[i] in _STEADY] == [_INDEX[n] for n in _STEADY]
assert {i for i, _ in _BYTES_V2} == {11, 12, 17, 24}
assert [nul for i, _, nul in _CHARS_V2 if i in (21, 22)] == [True, True]
_encoded_groups: dict[tuple[str, ...], tuple[bytes, ...]] = {}
_decoded_groups: dict[tuple[bytes, ...], tuple[str, ...]] = {}
_I_PRIORITY, _I_BACKOUT, _I_REPLY_Q_MGR, _I_USER, _I_GROUP = (
    _INDEX["priority"], _INDEX["backout_count"], _INDEX["reply_to_q_mgr"], _INDEX["user_identifier"], _INDEX["group_id"])
assert _I_BACKOUT == _I_PRIORITY + 4 and _I_REPLY_Q_MGR == _I_BACKOUT + 2 and _I_USER == _I_REPLY_Q_MGR + 1
assert _I_GROUP == _I_USER + 8
_I_MSG_ID = _INDEX["msg_id"]
assert _INDEX["correl_id"] == _I_MSG_ID + 1
# Byte offsets of the fields that change from one message to the next, for splicing packed
# descriptors and for keying decodes (the table at the top of this module).
MSG_ID_AT = LAYOUT_V2.offset_of("msg_id")
CORREL_ID_AT = LAYOUT_V2.offset_of("correl_id")
CORREL_ID_END = CORREL_ID_AT + 24
PUT_DATE_AT = LAYOUT_V2.offset_of("put_date")
PUT_TIME_END = LAYOUT_V2.offset_of("put_time") + 8
assert (MSG_ID_AT, CORREL_ID_AT, CORREL_ID_END, PUT_DATE_AT, PUT_TIME_END) == (48, 72, 96, 304, 320)
# Whole descriptors by their bytes but MsgId and CorrelId (see MQMD.unpack_from).
_WHOLE_LIMIT = 1024
_whole: dict[bytes, list[Any]] = {}
# A descriptor in its four parts: the bytes before MsgId, MsgId, CorrelId, the bytes after.
_SPLIT_V1, _SPLIT_V2 = (struct.Struct(f"{MSG_ID_AT}s24s24s{length - CORREL_ID_END}s")
                        for length in (C.MQMD_LENGTH_1, C.MQMD_LENGTH_2))


def with_put_context(md: MQMD, msg_id: bytes, correl_id: bytes, priority: int, persistence: int,
                     reply_to_q_mgr: str, context: tuple[str, bytes, str, int, str, str, str, str]) -> MQMD:
    """The descriptor a put stores: version 2, the given identifiers, priority and persistence,
    BackoutCount 0, and the eight identity and origin context fields (UserIdentifier to
    ApplOriginData, in MQMD order).

    The same as ``md.replace(...)`` with those fields, built from slices of the tuple
    because the queue manager does this on every put.
    """
    return _tuple_new(MQMD, (*md[:1], C.MQMD_VERSION_2, *md[2:_I_PRIORITY], priority, persistence, msg_id,
                             correl_id, 0, md[_I_BACKOUT + 1], reply_to_q_mgr, *context, *md[_I_GROUP:]))


def with_msg_id(md: MQMD, msg_id: bytes) -> MQMD:
    """``md.replace(msg_id=...)`` for the batch put path, without keyword handling."""
    return _tuple_new(MQMD, (*md[:_I_MSG_ID], msg_id, *md[_I_MSG_ID + 1 :]))


def with_ids(md: MQMD, msg_id: bytes, correl_id: bytes) -> MQMD:
    """``md.replace(msg_id=..., correl_id=...)``, without keyword handling."""
    return _tuple_new(MQMD, (*md[:_I_MSG_ID], msg_id, correl_id, *md[_I_MSG_ID + 2 :]))


def detect_big_endian(buf: bytes | bytearray | memoryview, offset: int, name: str, versions: tuple[int, ...]) -> bool:
    """Tell the byte order of a structure from its Version field (the first integer).

    Raises:
        DecodeError: the Version is none of ``versions`` in either byte order.
    """
    raw = bytes(buf[offset + 4 : offset + 8])
    if len(raw) < 4:
        raise DecodeError(name, offset, "truncated before Version")
    if int.from_bytes(raw, "little", signed=True) in versions:
        return False
    if int.from_bytes(raw, "big", signed=True) in versions:
        return True
    raise DecodeError(name, offset + 4, f"Version {raw.hex()} is not one of {versions} in either byte order")
