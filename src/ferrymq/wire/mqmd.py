"""MQMD, the message descriptor, versions 1 (324 bytes) and 2 (364 bytes), as packed bytes.

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

``MQMD`` is this structure's one form in ferrymq: it holds the packed bytes (little-endian,
always the 364 bytes of version 2, whatever its Version says, so that a version-1
descriptor keeps the version-2 fields a caller gave it, as IBM's C structure does) and reads
each field where it lies when asked. This module is the only one that knows the offsets.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final, Generic, TypedDict, TypeVar, Unpack, overload

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

FIELD_NAMES: tuple[str, ...] = tuple(attr for attr, _, _ in LAYOUT_V2.fields)
# IBM's names of the fields, in the same order (for people: dump files, the web console).
IBM_NAMES: tuple[str, ...] = (
    "StrucId", "Version", "Report", "MsgType", "Expiry", "Feedback", "Encoding", "CodedCharSetId", "Format",
    "Priority", "Persistence", "MsgId", "CorrelId", "BackoutCount", "ReplyToQ", "ReplyToQMgr", "UserIdentifier",
    "AccountingToken", "ApplIdentityData", "PutApplType", "PutApplName", "PutDate", "PutTime", "ApplOriginData",
    "GroupId", "MsgSeqNumber", "Offset", "MsgFlags", "OriginalLength")
"""The MQMD's fields in structure order, as ``MQMD``'s attribute names."""
# name -> (offset, kind, length), from the layout: the one table of where each field lies.
_SPEC: dict[str, tuple[int, str, int]] = {name: (LAYOUT_V2.offset_of(name), kind, length)
                                          for name, kind, length in LAYOUT_V2.fields}

# Field values repeat (queue names, formats, user and application names): memoise both
# directions, bounded so hostile input cannot grow the caches. Keys and values are immutable.
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
        if not isinstance(value, str):
            raise ValueError(f"MQMD {name} must be text, not {type(value).__name__}")
        raw = encode_chars(value, length, nul_if_empty=nul_if_empty, name=name)
        if len(_encoded) < _CACHE_LIMIT:
            _encoded[key] = raw
    return raw


V2_LE_HEAD = b"MD  \x02\x00\x00\x00"
"""StrucId and Version of a little-endian MQMD v2: how the stored and the clients' descriptors begin."""
V1_LE_HEAD = b"MD  \x01\x00\x00\x00"
"""StrucId and Version of a little-endian MQMD v1 (a pymqi MD's default)."""
_LE_HEADS = {V1_LE_HEAD: C.MQMD_VERSION_1, V2_LE_HEAD: C.MQMD_VERSION_2}
_VERSION_BYTES = {C.MQMD_VERSION_1: b"\x01\x00\x00\x00", C.MQMD_VERSION_2: b"\x02\x00\x00\x00"}

NONE_ID = bytes(24)
NONE_ACCOUNTING = bytes(32)

_LONG = struct.Struct("<i")
_unpack_long = _LONG.unpack_from
_TWO_LONGS = struct.Struct("<ii")
_V1 = C.MQMD_LENGTH_1
_V2 = C.MQMD_LENGTH_2
_AT = {name: at for name, (at, _, _) in _SPEC.items()}
_MSG_ID, _CORREL_ID, _CORREL_END = _AT["msg_id"], _AT["correl_id"], _AT["correl_id"] + 24
_PRIORITY, _BACKOUT, _REPLY_Q = _AT["priority"], _AT["backout_count"], _AT["reply_to_q"]
_REPLY_Q_MGR, _USER, _PUT_DATE, _PUT_TIME = _AT["reply_to_q_mgr"], _AT["user_identifier"], _AT["put_date"], _AT["put_time"]
_PUT_TIME_END = _PUT_TIME + 8
_FORMAT = _AT["format"]
FORMAT_OFFSET: Final = _FORMAT
"""Where Format lies in the structure (both versions): for a check of its bytes in place."""
assert _PRIORITY == _FORMAT + 8
assert _AT["persistence"] == _PRIORITY + 4 and _AT["msg_id"] == _PRIORITY + 8 and _REPLY_Q == _BACKOUT + 4
assert _USER == _REPLY_Q_MGR + 48 and _PUT_DATE + 8 == _PUT_TIME and _AT["group_id"] == _V1


_T = TypeVar("_T")


class _Field(property, Generic[_T]):
    """One field, read where it lies when asked (a property: its getter is called from C)."""

    if TYPE_CHECKING:
        @overload
        def __get__(self, md: None, owner: type[Any] | None = None, /) -> _Field[_T]: ...
        @overload
        def __get__(self, md: MQMD, owner: type[Any] | None = None, /) -> _T: ...
        def __get__(self, md: MQMD | None, owner: type[Any] | None = None, /) -> _T | _Field[_T]: ...


def _long(name: str) -> _Field[int]:
    """An MQLONG field."""
    at = _AT[name]
    return _Field(lambda md: _unpack_long(md._raw, at)[0])


def _chars(name: str) -> _Field[str]:
    """An MQCHARn field as text (trailing blanks and everything from a NUL on removed)."""
    at = _AT[name]
    end = at + _SPEC[name][2]
    return _Field(lambda md: _decode_cached(md._raw[at:end]))


def _bytes(name: str) -> _Field[bytes]:
    """An MQBYTEn field, exactly as it lies."""
    at = _AT[name]
    end = at + _SPEC[name][2]
    return _Field(lambda md: md._raw[at:end])


_new = object.__new__


class Fields(TypedDict, total=False):
    """MQMD fields by name, for ``MQMD(**fields)`` and ``replace``."""

    struc_id: str
    version: int
    report: int
    msg_type: int
    expiry: int
    feedback: int
    encoding: int
    coded_char_set_id: int
    format: str
    priority: int
    persistence: int
    msg_id: bytes
    correl_id: bytes
    backout_count: int
    reply_to_q: str
    reply_to_q_mgr: str
    user_identifier: str
    accounting_token: bytes
    appl_identity_data: str
    put_appl_type: int
    put_appl_name: str
    put_date: str
    put_time: str
    appl_origin_data: str
    group_id: bytes
    msg_seq_number: int
    offset: int
    msg_flags: int
    original_length: int


assert tuple(Fields.__annotations__) == FIELD_NAMES


class MQMD:
    """A message descriptor: immutable, its packed bytes behind named accessors.

    ``MQMD(**fields)`` builds one from MQMD_DEFAULT (version 1) with the fields given;
    ``MQMD.decode(buf)`` takes one off the wire in either byte order; ``pack()`` gives its
    bytes (for a little-endian version-2 descriptor, the very bytes it holds: no packing).
    Derived copies (``replace``, ``with_ids``, ``with_put_time``, ``with_put_context``) splice
    bytes. Each field is read from the bytes when asked (a few tenths of a microsecond); a
    hot loop that reads one field many times keeps it in a local.
    """

    __slots__ = ("_raw",)
    _raw: bytes

    struc_id = _chars("struc_id")
    version = _long("version")
    report = _long("report")
    msg_type = _long("msg_type")
    expiry = _long("expiry")
    feedback = _long("feedback")
    encoding = _long("encoding")
    coded_char_set_id = _long("coded_char_set_id")
    format = _chars("format")
    priority = _long("priority")
    persistence = _long("persistence")
    msg_id = _bytes("msg_id")
    correl_id = _bytes("correl_id")
    backout_count = _long("backout_count")
    reply_to_q = _chars("reply_to_q")
    reply_to_q_mgr = _chars("reply_to_q_mgr")
    user_identifier = _chars("user_identifier")
    accounting_token = _bytes("accounting_token")
    appl_identity_data = _chars("appl_identity_data")
    put_appl_type = _long("put_appl_type")
    put_appl_name = _chars("put_appl_name")
    put_date = _chars("put_date")
    put_time = _chars("put_time")
    appl_origin_data = _chars("appl_origin_data")
    group_id = _bytes("group_id")
    msg_seq_number = _long("msg_seq_number")
    offset = _long("offset")
    msg_flags = _long("msg_flags")
    original_length = _long("original_length")
    if TYPE_CHECKING:
        @property
        def image(self) -> bytes:
            """The 364 little-endian bytes it holds."""
    else:
        # The bytes themselves, read in C: for a version-2 descriptor (every stored one) they
        # are what ``pack()`` gives, and a hand-over's answer is written from them at once.
        image = property(attrgetter("_raw"), doc="The 364 little-endian bytes it holds.")

    def __init__(self, **fields: Unpack[Fields]) -> None:
        raw = _DEFAULT_RAW
        if fields:
            buf = bytearray(raw)
            for name, value in fields.items():
                spec = _SPEC.get(name)
                if spec is None:
                    raise TypeError(f"MQMD has no field {name!r}")
                _put(buf, name, spec, value)
            raw = bytes(buf)
        self._raw = raw

    @classmethod
    def _of(cls, raw: bytes) -> MQMD:
        """The descriptor whose little-endian v2 image is ``raw`` (trusted: no checks)."""
        md: MQMD = _new(cls)
        md._raw = raw
        return md

    # -- decoding and packing ------------------------------------------------------------
    @classmethod
    def decode(cls, buf: bytes | bytearray | memoryview, offset: int = 0, *,
               big_endian: bool | None = None) -> MQMD:
        """The MQMD at ``offset``, version 1 or 2; the byte order is detected from Version
        when not given. A little-endian one is taken as it is (one copy at most).

        Raises:
            DecodeError: wrong StrucId, unknown version, or too few bytes.
        """
        if type(buf) is bytes and len(buf) == _V2 and buf[:8] == V2_LE_HEAD and not offset and not big_endian:
            md: MQMD = _new(cls)  # the usual case, a whole little-endian v2 descriptor: _of, inline
            md._raw = buf
            return md
        head = buf[offset : offset + 8]
        if type(head) is not bytes:
            head = bytes(head)
        version = _LE_HEADS.get(head, 0) if not big_endian else 0
        if version:  # the common case, decided in one lookup
            size = _V2 if version == C.MQMD_VERSION_2 else _V1
            if len(buf) - offset < size:
                raise DecodeError("MQMD", offset, f"needs {size} bytes, {max(0, len(buf) - offset)} present")
            if size == _V2 and type(buf) is bytes and offset == 0 and len(buf) == _V2:
                return cls._of(buf)
            raw = buf[offset : offset + size]  # a copy already when buf is bytes
            if type(raw) is not bytes:
                raw = bytes(raw)
            return cls._of(raw if size == _V2 else raw + _V2_TAIL)
        LAYOUT_V1.check_struc_id(buf, offset, C.MQMD_STRUC_ID)
        if big_endian is None:
            big_endian = detect_big_endian(buf, offset, "MQMD", (1, 2))
        raw_version = bytes(buf[offset + 4 : offset + 8])
        version = int.from_bytes(raw_version, "big" if big_endian else "little", signed=True)
        if version not in (C.MQMD_VERSION_1, C.MQMD_VERSION_2):
            raise DecodeError("MQMD", offset + 4, f"Version {version} is not 1 or 2")
        layout = LAYOUT_V2 if version == C.MQMD_VERSION_2 else LAYOUT_V1
        if len(buf) - offset < layout.size:
            raise DecodeError("MQMD", offset, f"needs {layout.size} bytes, {max(0, len(buf) - offset)} present")
        if not big_endian:  # reached only with big_endian=False given and an unusual head
            raw = bytes(buf[offset : offset + layout.size])
        else:  # the integers turned round; text and bytes fields are the same in both
            raw = layout.little.pack(*layout.big.unpack_from(buf, offset))
        return cls._of(raw if version == C.MQMD_VERSION_2 else raw + _V2_TAIL)

    unpack_from = decode

    def pack(self, *, big_endian: bool = False, version: int | None = None) -> bytes:
        """The structure's bytes in the version given (default: its own ``version``)."""
        raw = self._raw
        v = _unpack_long(raw, 4)[0] if version is None else version
        if v == C.MQMD_VERSION_2:
            if raw[4] != 2:
                raw = raw[:4] + _VERSION_BYTES[v] + raw[8:]
            return _big_endian(raw, LAYOUT_V2) if big_endian else raw
        if v == C.MQMD_VERSION_1:
            raw = raw[:4] + _VERSION_BYTES[v] + raw[8:_V1] if raw[4] != 1 else raw[:_V1]
            return _big_endian(raw, LAYOUT_V1) if big_endian else raw
        raise ValueError(f"MQMD version must be 1 or 2, not {v}")

    def __bytes__(self) -> bytes:
        return self.pack()

    @staticmethod
    def length(version: int) -> int:
        return C.MQMD_LENGTH_2 if version == C.MQMD_VERSION_2 else C.MQMD_LENGTH_1

    # -- derived copies --------------------------------------------------------------------
    def replace(self, **changes: Any) -> MQMD:
        """A copy with some fields changed (the descriptor itself is immutable).

        Raises:
            TypeError: no such field.
            ValueError: a value that does not fit its field.
        """
        buf = bytearray(self._raw)
        for name, value in changes.items():
            spec = _SPEC.get(name)
            if spec is None:
                raise TypeError(f"MQMD has no field {name!r}")
            _put(buf, name, spec, value)
        return MQMD._of(bytes(buf))

    def with_ids(self, msg_id: bytes, correl_id: bytes, put_date: str | None = None,
                 put_time: str | None = None, *, stamp: bytes | None = None) -> MQMD:
        """``replace(msg_id=..., correl_id=...)``, spliced; with ``put_date`` and ``put_time``
        given, those too (one splice for what changes from one put to the next), or with
        ``stamp`` the two as they lie (another descriptor's ``put_stamp()``)."""
        if len(msg_id) != 24 or len(correl_id) != 24:
            raise ValueError(f"MQMD msg_id and correl_id must be 24 bytes, not {len(msg_id)} and {len(correl_id)}")
        raw = self._raw
        if stamp is None:
            if put_date is None or put_time is None:
                return MQMD._of(b"".join((raw[:_MSG_ID], msg_id, correl_id, raw[_CORREL_END:])))
            stamp = _put_stamps.get((put_date, put_time))  # one stamp serves every put of its 1/100 s
            if stamp is None:
                stamp = _put_stamp(put_date, put_time)
        elif len(stamp) != 16:
            raise ValueError(f"MQMD put stamp must be 16 bytes, not {len(stamp)}")
        md: MQMD = _new(MQMD)  # _of, inline: every planned put comes here before its answer is written
        md._raw = b"".join((raw[:_MSG_ID], msg_id, correl_id, raw[_CORREL_END:_PUT_DATE], stamp, raw[_PUT_TIME_END:]))
        return md

    def put_stamp(self) -> bytes:
        """PutDate and PutTime side by side (16 bytes) as ``with_ids(..., put_date, put_time)``
        writes this descriptor's own: its bytes as they lie when they are already so (no
        NUL, neither field blank: a channel passes on the sender's), without decoding them."""
        stamp = self._raw[_PUT_DATE:_PUT_TIME_END]
        if b"\0" in stamp or stamp[:8] == _BLANK_FIELD or stamp[8:] == _BLANK_FIELD:
            return _put_stamp(self.put_date, self.put_time)
        return stamp

    def with_msg_id(self, msg_id: bytes) -> MQMD:
        """``replace(msg_id=...)``, spliced."""
        return self.with_ids(msg_id, self._raw[_CORREL_ID:_CORREL_END])

    def with_put_time(self, put_date: str, put_time: str) -> MQMD:
        """``replace(put_date=..., put_time=...)``, spliced."""
        raw = self._raw
        return MQMD._of(b"".join((raw[:_PUT_DATE], _encode_cached(put_date, 8, True, "put_date"),
                                  _encode_cached(put_time, 8, True, "put_time"), raw[_PUT_TIME_END:])))

    def with_put_context(self, msg_id: bytes, correl_id: bytes, priority: int, persistence: int,
                         reply_to_q_mgr: str, context: tuple[str, bytes, str, int, str, str, str, str]) -> MQMD:
        """The descriptor a put stores: version 2, the given identifiers, priority and
        persistence, BackoutCount 0, and the eight identity and origin context fields
        (UserIdentifier to ApplOriginData, in MQMD order). Its text fields are written as a
        getter receives them (blank-padded, whatever followed a NUL in the putter's)."""
        user, token, appl_id, appl_type, appl_name, date, tod, origin = context
        if len(msg_id) != 24 or len(correl_id) != 24:
            raise ValueError(f"MQMD msg_id and correl_id must be 24 bytes, not {len(msg_id)} and {len(correl_id)}")
        raw = self._raw
        key = (user, token, appl_id, appl_type, appl_name, origin)
        identity = _contexts.get(key)  # one connection's context repeats from put to put
        if identity is None:
            identity = _pack_context(key)
            if len(_contexts) < _CACHE_LIMIT:
                _contexts[key] = identity
        try:
            numbers = _TWO_LONGS.pack(priority, persistence)
        except struct.error as exc:
            raise ValueError(f"MQMD: {exc}") from None
        return MQMD._of(b"".join((
            raw[:4], _VERSION_BYTES[C.MQMD_VERSION_2], raw[8:_FORMAT], _canonical(raw[_FORMAT:_PRIORITY], False),
            numbers, msg_id, correl_id, _ZERO_LONG, _canonical(raw[_REPLY_Q:_REPLY_Q_MGR], True),
            _encode_cached(reply_to_q_mgr, 48, True, "reply_to_q_mgr"), identity[0],
            _encode_cached(date, 8, True, "put_date"), _encode_cached(tod, 8, True, "put_time"), identity[1],
            raw[_V1:])))

    # -- questions about the whole ---------------------------------------------------------
    @property
    def has_v2_fields(self) -> bool:
        """True when a version-1 reader would need an MQMDE to see the v2 fields."""
        return self._raw[_V1:] != _V2_TAIL

    def with_ids_packed(self, msg_id: bytes, correl_id: bytes) -> tuple[MQMD, bytes]:
        """``with_ids(msg_id, correl_id)`` and its ``pack()``, from one splice: a get's
        descriptor of a message of a run (its template and its own identifiers, each 24
        bytes: trusted, as the engine stored them)."""
        raw = self._raw
        if raw[4] != C.MQMD_VERSION_2:  # packed in its own version: not the image as it is
            md = self.with_ids(msg_id, correl_id)
            return md, md.pack()
        raw = b"".join((raw[:_MSG_ID], msg_id, correl_id, raw[_CORREL_END:]))
        md = _new(MQMD)
        md._raw = raw
        return md, raw

    def v2_with_ids(self, msg_id: bytes, correl_id: bytes) -> bytes:
        """``with_ids(msg_id, correl_id).pack(version=2)`` without making the MQMD: the bytes
        a browse sends for a message of a run (its template and its own identifiers, each 24
        bytes: trusted, as the engine stored them)."""
        raw = self._raw
        head = raw[:_MSG_ID] if raw[4] == C.MQMD_VERSION_2 else raw[:4] + _VERSION_BYTES[C.MQMD_VERSION_2] + raw[8:_MSG_ID]
        return b"".join((head, msg_id, correl_id, raw[_CORREL_END:]))

    def v2_with_each_ids(self, msg_ids: Sequence[bytes], correl_ids: Sequence[bytes]) -> bytes:
        """``v2_with_ids`` of each pair of ``msg_ids`` and ``correl_ids`` (24 bytes each)
        back to back: a browse page's descriptors of one run, spliced by one join (the
        template's tail and head between each two messages' identifiers) rather than a call,
        or a concatenation, per message."""
        n = len(msg_ids)
        if not n:
            return b""
        head = self.v2_with_ids(msg_ids[0], correl_ids[0])[:_MSG_ID]
        tail = self._raw[_CORREL_END:]
        # The page's megabytes copied once: [head, id, id, tail+head, id, id, ..., tail].
        parts = [tail + head] * (3 * n + 1)
        parts[0], parts[-1] = head, tail
        parts[1::3], parts[2::3] = msg_ids, correl_ids
        return b"".join(parts)

    def steady_key(self) -> bytes:
        """The descriptor's bytes but MsgId, CorrelId, PutDate and PutTime: equal for two
        descriptors that differ only in those (what one sender changes from put to put)."""
        raw = self._raw
        return raw[:_MSG_ID] + raw[_CORREL_END:_PUT_DATE] + raw[_PUT_TIME_END:]

    def steady_ids(self) -> tuple[bytes, bytes, bytes]:
        """``steady_key()``, MsgId and CorrelId at once: what a put's plan compares and the
        identifiers it then stores."""
        return steady_ids(self._raw)

    def queue_fields(self) -> tuple[int, int, int, bytes, bytes]:
        """Expiry, Priority, Persistence, MsgId and CorrelId, read at once (``queue_fields``)."""
        return queue_fields(self._raw)

    def fields(self) -> tuple[Any, ...]:
        """Every field's value, in structure order (``FIELD_NAMES``)."""
        values = list(LAYOUT_V2.little.unpack(self._raw))
        for i, (_, kind, _) in enumerate(LAYOUT_V2.fields):
            if kind in "cf":
                values[i] = _decode_cached(values[i])
        return tuple(values)

    def asdict(self) -> dict[str, Any]:
        return dict(zip(FIELD_NAMES, self.fields(), strict=True))

    def __eq__(self, other: object) -> bool:
        if type(other) is not MQMD:
            return NotImplemented
        return self._raw == other._raw or self.fields() == other.fields()

    def __hash__(self) -> int:
        return hash(self.fields())

    def __repr__(self) -> str:
        changed = [f"{n}={v!r}" for n, v, d in zip(FIELD_NAMES, self.fields(), _DEFAULT_FIELDS, strict=True)
                   if v != d or n == "version"]
        return f"MQMD({', '.join(changed)})"

    def with_copy_identity(self, priority: int, persistence: int, user: str, token: bytes, appl_id: str) -> MQMD:
        """A stored descriptor (``with_put_context``'s) as a publication's copy stores it:
        no MsgId or CorrelId yet, this priority and persistence and this identity context
        (UserIdentifier, AccountingToken, ApplIdentityData); the rest, origin context
        included, as it is: what ``with_put_context`` gives from these, spliced."""
        key = (user, token, appl_id)
        identity = _identities.get(key)  # a subscription's identity repeats from copy to copy
        if identity is None:
            if not isinstance(token, bytes) or len(token) != 32:
                raise ValueError("MQMD accounting_token must be 32 bytes")
            identity = b"".join((encode_chars(user, 12, nul_if_empty=True, name="user_identifier"), token,
                                 encode_chars(appl_id, 32, nul_if_empty=True, name="appl_identity_data")))
            if len(_identities) < _CACHE_LIMIT:
                _identities[key] = identity
        try:
            numbers = _TWO_LONGS.pack(priority, persistence)
        except struct.error as exc:
            raise ValueError(f"MQMD: {exc}") from None
        raw = self._raw
        return MQMD._of(b"".join((raw[:_PRIORITY], numbers, _NO_IDS, _ZERO_LONG, raw[_REPLY_Q:_USER], identity,
                                  raw[_USER + _IDENTITY_LENGTH:])))

    def __reduce__(self) -> tuple[Any, ...]:
        return (MQMD._of, (self._raw,))

    def __copy__(self) -> MQMD:
        return self

    def __deepcopy__(self, memo: Any) -> MQMD:
        return self


_put_stamps: dict[tuple[str, str], bytes] = {}
_BLANK_FIELD = b" " * 8


def put_stamp_of(put_date: str, put_time: str) -> bytes:
    """PutDate and PutTime as ``with_ids`` writes them side by side (its ``stamp``)."""
    stamp = _put_stamps.get((put_date, put_time))
    return stamp if stamp is not None else _put_stamp(put_date, put_time)


def _put_stamp(put_date: str, put_time: str) -> bytes:
    """PutDate and PutTime as they lie side by side; the last few are kept."""
    stamp = _encode_cached(put_date, 8, True, "put_date") + _encode_cached(put_time, 8, True, "put_time")
    if len(_put_stamps) >= 64:
        _put_stamps.clear()
    _put_stamps[(put_date, put_time)] = stamp
    return stamp


_ZERO_LONG = bytes(4)
_NO_IDS = bytes(48)
_IDENTITY_LENGTH = 12 + 32 + 32  # UserIdentifier, AccountingToken, ApplIdentityData
_identities: dict[tuple[str, bytes, str], bytes] = {}
assert _BACKOUT == _CORREL_END and _AT["accounting_token"] == _USER + 12 and _AT["appl_identity_data"] == _USER + 44
_contexts: dict[tuple[str, bytes, str, int, str, str], tuple[bytes, bytes]] = {}
_canonicals: dict[tuple[bytes, bool], bytes] = {}


def _pack_context(context: tuple[str, bytes, str, int, str, str]) -> tuple[bytes, bytes]:
    """UserIdentifier to PutApplName, and ApplOriginData, packed (PutDate and PutTime lie between)."""
    user, token, appl_id, appl_type, appl_name, origin = context
    if not isinstance(token, bytes) or len(token) != 32:
        raise ValueError("MQMD accounting_token must be 32 bytes")
    try:
        appl = _LONG.pack(appl_type)
    except struct.error as exc:
        raise ValueError(f"MQMD put_appl_type: {exc}") from None
    return (b"".join((encode_chars(user, 12, nul_if_empty=True, name="user_identifier"), token,
                      encode_chars(appl_id, 32, nul_if_empty=True, name="appl_identity_data"), appl,
                      encode_chars(appl_name, 28, nul_if_empty=True, name="put_appl_name"))),
            encode_chars(origin, 4, nul_if_empty=True, name="appl_origin_data"))


def _canonical(raw: bytes, nul_if_empty: bool) -> bytes:
    """A text field's bytes as a getter receives them: blank-padded, nothing after a NUL."""
    key = (raw, nul_if_empty)
    out = _canonicals.get(key)
    if out is None:
        out = encode_chars(decode_chars(raw), len(raw), nul_if_empty=nul_if_empty, name="text")
        if len(_canonicals) < _CACHE_LIMIT:
            _canonicals[key] = out
    return out


def _big_endian(raw: bytes, layout: Layout) -> bytes:
    """A little-endian image with its integers turned round (text and bytes stay)."""
    return layout.big.pack(*layout.little.unpack(raw))


def _put(buf: bytearray, name: str, spec: tuple[int, str, int], value: Any) -> None:
    """Write one field's value into a little-endian image."""
    at, kind, length = spec
    if kind == "l":
        if name == "version" and value not in (C.MQMD_VERSION_1, C.MQMD_VERSION_2):
            raise ValueError(f"MQMD version must be 1 or 2, not {value}")
        try:
            _LONG.pack_into(buf, at, value)
        except struct.error as exc:
            raise ValueError(f"MQMD {name}: {exc}") from None
    elif kind == "b":
        if not isinstance(value, (bytes, bytearray)) or len(value) != length:
            got = len(value) if isinstance(value, (bytes, bytearray)) else type(value).__name__
            raise ValueError(f"MQMD {name} must be {length} bytes, not {got}")
        buf[at : at + length] = value
    else:
        buf[at : at + length] = _encode_cached(value, length, kind == "c", name)


_DEFAULT_RAW = LAYOUT_V2.little.pack(
    b"MD  ", C.MQMD_VERSION_1, C.MQRO_NONE, C.MQMT_DATAGRAM, C.MQEI_UNLIMITED, C.MQFB_NONE, C.MQENC_NATIVE,
    C.MQCCSI_Q_MGR, b" " * 8, C.MQPRI_PRIORITY_AS_Q_DEF, C.MQPER_PERSISTENCE_AS_Q_DEF, NONE_ID, NONE_ID, 0,
    b"", b"", b"", NONE_ACCOUNTING, b"", C.MQAT_NO_CONTEXT, b"", b"", b"", b"", NONE_ID, 1, 0, C.MQMF_NONE,
    C.MQOL_UNDEFINED)
"""MQMD_DEFAULT, with the version-2 fields' defaults after it (character fields NULs, as in C)."""
_DEFAULT = MQMD()
_V2_TAIL = _DEFAULT._raw[_V1:]
_DEFAULT_FIELDS = _DEFAULT.fields()


# StrucId and Version as writers send them, either byte order: the common case of framing,
# decided by one dictionary lookup (every Put, Get and reply frame carries an MQMD).
_PLAIN_HEADS = {**_LE_HEADS, b"MD  \x00\x00\x00\x01": C.MQMD_VERSION_1, b"MD  \x00\x00\x00\x02": C.MQMD_VERSION_2}
PLAIN_LENGTHS: Mapping[bytes, int] = {head: MQMD.length(v) for head, v in _PLAIN_HEADS.items()}
"""An MQMD's first 8 bytes -> its length, for a plain one (version 1 or 2, either byte order)."""


def plain_length(buf: bytes | bytearray | memoryview, offset: int = 0) -> int:
    """The length of the MQMD at ``offset`` when its StrucId and Version are what a writer
    sends, else 0 (``end_of`` then says what is wrong). The caller checks the bytes are there."""
    return PLAIN_LENGTHS.get(bytes(buf[offset : offset + 8]), 0)


def end_of(buf: bytes | bytearray | memoryview, offset: int = 0) -> int:
    """Where the MQMD at ``offset`` ends. Checks everything that can be wrong with one
    (StrucId, Version, length): any bytes are valid in the remaining fixed fields.

    Raises:
        DecodeError: truncated, wrong StrucId, or unknown version.
    """
    if len(buf) - offset < _V1:
        raise DecodeError("MQMD", offset, f"needs {_V1} bytes, {max(0, len(buf) - offset)} present")
    size = PLAIN_LENGTHS.get(bytes(buf[offset : offset + 8]))
    if size is None:
        if bytes(buf[offset : offset + 4]) != b"MD  ":
            raise DecodeError("MQMD", offset, "StrucId is not 'MD  '")
        raise DecodeError("MQMD", offset + 4, f"Version {bytes(buf[offset + 4 : offset + 8]).hex()} is not 1 or 2")
    if len(buf) - offset < size:
        raise DecodeError("MQMD", offset, f"needs {size} bytes, {len(buf) - offset} present")
    return offset + size


_QUEUE_FIELDS = struct.Struct(f"<{_AT['expiry']}xi{_PRIORITY - _AT['expiry'] - 4}xii24s24s")
QUEUE_FIELDS_END = _CORREL_END
"""How many bytes of a descriptor ``queue_fields`` reads."""


def queue_fields(buf: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int, int, bytes, bytes]:
    """Expiry, Priority, Persistence, MsgId and CorrelId of the little-endian MQMD at
    ``offset``, read in place: what a queue orders and finds its messages by, without an
    MQMD made (a restart reads these for every message it recovers)."""
    fields: tuple[int, int, int, bytes, bytes] = _QUEUE_FIELDS.unpack_from(buf, offset)
    return fields


def steady_ids(raw: bytes) -> tuple[bytes, bytes, bytes]:
    """``MQMD.steady_ids`` of a packed descriptor, without the MQMD: a put whose descriptor
    came as bytes is matched to its handle's plan before (or without) being decoded. Only a
    little-endian version-2 image can give the key of a plan's descriptor (StrucId and
    Version are part of it): any other gives a key no plan holds."""
    return (raw[:_MSG_ID] + raw[_CORREL_END:_PUT_DATE] + raw[_PUT_TIME_END:], raw[_MSG_ID:_CORREL_ID],
            raw[_CORREL_ID:_CORREL_END])


MSG_ID_BYTES = slice(_MSG_ID, _CORREL_ID)
"""Where MsgId lies in a packed MQMD, either version, either byte order (only the integers
turn round): ``raw[MSG_ID_BYTES]`` reads it without a call (a reply's every get asks it)."""
CORREL_ID_BYTES = slice(_CORREL_ID, _CORREL_END)
"""Where CorrelId lies, as ``MSG_ID_BYTES``."""


def v2_le(buf: bytes | bytearray | memoryview, offset: int) -> MQMD:
    """The MQMD whose little-endian version-2 image lies at ``offset`` in ``buf``: a
    decoder's way once it has seen that the descriptor starts with V2_LE_HEAD and that its
    364 bytes are there (nothing else can be wrong with one: see ``end_of``)."""
    raw = buf[offset : offset + _V2]
    md: MQMD = _new(MQMD)
    md._raw = raw if type(raw) is bytes else bytes(raw)
    return md


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
