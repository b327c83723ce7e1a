"""The field kinds of frame bodies: how a ``str``, an ``md``, a ``props``, a ``status`` are
written, and ``Reader``, which reads them back from a frame where it lies in the receive
buffer.

Notation (docs/protocol.md): integers big-endian; ``str`` = u16 byte length + UTF-8;
``charv`` = a ``str`` holding an MQCHARV's text (a topic string, a subscription name, user
data, a selection string), at most MAX_CHARV characters;
``md`` = the MQMD in its own version (ferrymq.protocol.mdcodec); ``props`` = u32 length +
typed message properties (ferrymq.properties.model; length 0 = none); ``status`` = i32
comp, i32 reason, str detail; ``rest`` = the remaining payload bytes. Reading never raises
anything but DecodeError.
"""

from __future__ import annotations

import struct
from typing import Any, TypeVar

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.protocol.mdcodec import PLAIN_MD_LENGTHS, md_end, pack_md
from ferrymq.wire.mqmd import MQMD, V1_LE_HEAD, V2_LE_HEAD

_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_STATUS = struct.Struct(">ii")

OK_STATUS = _STATUS.pack(0, 0) + b"\0\0"
"""The status of most replies (MQCC_OK, MQRC_NONE, no detail) as its 10 bytes."""
NO_PROPS = b"\0\0\0\0"
"""A properties field of length 0: most messages."""

_WHOLE_LE = {V2_LE_HEAD: C.MQMD_LENGTH_2, V1_LE_HEAD: C.MQMD_LENGTH_1}
"""An MQMD's first 8 bytes (StrucId, Version little-endian) -> its whole length."""

_DECODED_KEPT = 256
"""Distinct property sets whose decoding a process keeps (cleared whole beyond)."""
_DECODED_MAX = 1024
"""Bytes: a larger property set is decoded each time it comes."""
_decoded: dict[bytes, props_model.PropertySet] = {}
"""Decoded property sets by their binary form. The copies of one publication (and most
messages of one sender) carry the same properties, which a receiver would otherwise decode
again for every message; each receiver gets a copy, the kept one is never handed out."""

MAX_LIST = 256
"""Selectors per INQUIRE/SET (MQ's own limits are far lower)."""
MAX_BATCH = 4096
"""Items per PUT_BATCH / PUSHED_BATCH / GET_BATCH_REPLY (the frame's size bounds the bytes)."""

DETAIL_LIMIT = 4096
"""Bytes of a status's detail that travel; the rest is cut. A detail is informational and
may quote what a request carried (a name of 65535 bytes, say): however long, it must not
stop the reply with the reason from being sent."""


def string(value: str) -> bytes:
    """A ``str`` field.

    Raises:
        ValueError: longer than 65535 bytes of UTF-8.
    """
    raw = value.encode("utf-8")
    if len(raw) > 0xFFFF:
        raise ValueError(f"a string field is {len(raw)} bytes; the limit is 65535")
    return _U16.pack(len(raw)) + raw


# Object names repeat in every reply (a GetReply carries its queue's name): encoded and
# decoded once. Names are at most 48 characters; each table is bounded and starts again when full.
_NAMES_LIMIT = 1024
NAME_TABLE: dict[str, bytes] = {}
"""The object names encoded so far (``name``'s table, read by generated packers)."""
NAME_STRS: dict[bytes, str] = {}
"""The object names decoded so far, by their bytes (``name_str``'s table, read by
generated decoders: a getter's replies name one queue again and again)."""

_K = TypeVar("_K", str, bytes)
_V = TypeVar("_V")


def _remember(table: dict[_K, _V], key: _K, value: _V) -> None:
    """Keep a name's other form in one of the bounded tables above."""
    if len(key) <= 48:
        if len(table) >= _NAMES_LIMIT:
            table.clear()
        table[key] = value


def name(value: str) -> bytes:
    """``string(value)`` for an object name, from a bounded table of the names seen."""
    raw = NAME_TABLE.get(value)
    if raw is None:
        raw = string(value)
        _remember(NAME_TABLE, value, raw)
    return raw


def name_str(raw: bytes | bytearray | memoryview) -> str | None:
    """The text of an object name's bytes when they are ASCII (else None: a Reader reads
    them), kept in a bounded table of the names seen."""
    try:
        value = str(raw, "ascii")
    except UnicodeDecodeError:
        return None
    _remember(NAME_STRS, bytes(raw), value)
    return value


MAX_CHARV = C.MQ_TOPIC_STR_LENGTH
"""Characters of a ``charv`` field: MQ_TOPIC_STR_LENGTH (10240), which is also IBM's
longest subscription name, user data and selection string (MQ_SUB_NAME_LENGTH,
MQ_USER_DATA_LENGTH... are all 10240)."""


def charv(value: str) -> bytes:
    """A ``charv`` field.

    Raises:
        ValueError: longer than MAX_CHARV characters.
    """
    if len(value) > MAX_CHARV:
        raise ValueError(f"a variable-length string field is {len(value)} characters; the limit is {MAX_CHARV}")
    return string(value)


def short_detail(detail: str, limit: int = DETAIL_LIMIT) -> str:
    """``detail`` cut to at most ``limit`` bytes of UTF-8 (on a character boundary, marked)."""
    if len(detail) * 4 <= limit:  # UTF-8 takes at most 4 bytes a character
        return detail
    raw = detail.encode("utf-8")
    if len(raw) <= limit:
        return detail
    return raw[: limit - 16].decode("utf-8", "ignore") + f" ... ({len(raw)} B)"


def detail(value: str) -> bytes:
    """A ``str`` field holding a detail (cut to DETAIL_LIMIT)."""
    return string(short_detail(value))


def status(comp: int, reason: int, text: str) -> bytes:
    """A ``status`` field."""
    if not (comp or reason or text):
        return OK_STATUS
    return _STATUS.pack(comp, reason) + detail(text)


def md(value: MQMD | bytes) -> bytes:
    """An ``md`` field: an MQMD packed, or the bytes of one checked to be one whole MQMD.

    Raises:
        ValueError: a field does not fit, or the bytes are not one MQMD.
    """
    if type(value) is bytes:
        # complete, as md_end would find: a version 2 or (a pymqi MD's default) version 1 as x86-64 writes it
        if _WHOLE_LE.get(value[:8]) == len(value):
            return value
        try:
            if md_end(value) != len(value):
                raise ValueError("packed MQMD has trailing bytes")
        except DecodeError as exc:
            raise ValueError(str(exc)) from None
        return value
    if not isinstance(value, MQMD):
        raise TypeError(f"an MQMD or its bytes, not {type(value).__name__}")
    return pack_md(value)


def props(value: props_model.PropertySet | None) -> bytes:
    """A ``props`` field (None or an empty set: length 0)."""
    if not value:
        return NO_PROPS
    return props_model.framed(value)


def read_string(buf: bytes | memoryview, pos: int, end: int) -> tuple[str, int] | None:
    """The ``str`` field at ``pos`` and the offset after it, or None for a malformed one
    (a Reader then says what is wrong): a generated decoder's usual way, without a Reader."""
    if end - pos >= 2:
        stop = pos + 2 + (buf[pos] << 8 | buf[pos + 1])
        if stop <= end:
            try:
                return str(buf[pos + 2 : stop], "utf-8"), stop
            except UnicodeDecodeError:
                return None
    return None


class Reader:
    """Bounds-checked reads of one frame's body, ``buf[pos:end]``, where it lies (the
    receive buffer, not a copy of the body); every failure is a DecodeError naming the frame
    and the offset in its body."""

    __slots__ = ("buf", "end", "frame", "pos", "start")

    def __init__(self, buf: bytes | memoryview, frame: str, pos: int = 0, end: int = -1) -> None:
        self.buf = buf
        self.frame = frame
        self.start = self.pos = pos
        self.end = len(buf) if end < 0 else end

    @property
    def left(self) -> int:
        """Bytes of the body not read yet."""
        return self.end - self.pos

    def fail(self, message: str) -> DecodeError:
        return DecodeError(self.frame, self.pos - self.start, message)

    def unpack(self, st: struct.Struct) -> tuple[Any, ...]:
        pos = self.pos
        if self.end - pos < st.size:
            raise self.fail(f"needs {st.size} bytes, {self.end - pos} present")
        self.pos = pos + st.size
        return st.unpack_from(self.buf, pos)

    def take(self, n: int, what: str = "") -> bytes:
        """The next ``n`` bytes, copied."""
        pos = self.pos
        if self.end - pos < n:
            raise self.fail(f"{what}{': ' if what else ''}needs {n} bytes, {self.end - pos} present")
        self.pos = pos + n
        return bytes(self.buf[pos : pos + n])

    def sized_items(self, head: struct.Struct, n: int) -> list[tuple[Any, ...]]:
        """``n`` items, each ``head`` whose last field is the length of the data that follows
        it: each item's other fields and its data (copied). One call for a batch's items
        rather than a read of each part of each (a PutBatch's 1 KiB puts spent as long in
        those calls as in the rest of their decoding)."""
        buf, pos, end = self.buf, self.pos, self.end
        unpack, size = head.unpack_from, head.size
        items: list[tuple[Any, ...]] = []
        for i in range(n):
            if end - pos < size:
                self.pos = pos
                raise self.fail(f"needs {size} bytes, {end - pos} present")
            fields = unpack(buf, pos)
            length = fields[-1]
            pos += size
            if end - pos < length:
                self.pos = pos
                raise self.fail(f"item {i}: data of {length} bytes, {end - pos} present")
            items.append((*fields[:-1], bytes(buf[pos : pos + length])))
            pos += length
        self.pos = pos
        return items

    def view(self, n: int) -> memoryview:
        """The next ``n`` bytes as a view of the frame (a page of megabytes is not copied)."""
        pos = self.pos
        if self.end - pos < n:
            raise self.fail(f"needs {n} bytes, {self.end - pos} present")
        self.pos = pos + n
        return memoryview(self.buf)[pos : pos + n]

    def string(self) -> str:
        pos = self.pos
        if self.end - pos < 2:
            raise self.fail(f"needs 2 bytes, {self.end - pos} present")
        (n,) = _U16.unpack_from(self.buf, pos)
        pos += 2
        if self.end - pos < n:
            self.pos = pos
            raise self.fail(f"string of {n} bytes, {self.end - pos} present")
        self.pos = pos + n
        try:
            return str(self.buf[pos : pos + n], "utf-8")
        except UnicodeDecodeError:
            self.pos = pos
            raise self.fail("string is not UTF-8") from None

    def charv(self) -> str:
        """A ``charv`` field (a ``str`` of at most MAX_CHARV characters)."""
        start = self.pos
        value = self.string()
        if len(value) > MAX_CHARV:
            self.pos = start
            raise self.fail(f"variable-length string of {len(value)} characters; the limit is {MAX_CHARV}")
        return value

    def status(self) -> tuple[int, int, str]:
        pos = self.pos
        if self.buf[pos : pos + 10] == OK_STATUS:
            self.pos = pos + 10
            return 0, 0, ""
        comp, reason = self.unpack(_STATUS)
        return comp, reason, self.string()

    def _md_length(self) -> int:
        """The length of the ``md`` field at ``pos``, checked to be an MQMD within the body."""
        pos, buf = self.pos, self.buf
        if buf[pos : pos + 8] == V2_LE_HEAD:  # what writers send, compared first
            n = C.MQMD_LENGTH_2
        else:
            n = PLAIN_MD_LENGTHS.get(bytes(buf[pos : pos + 8]), 0)
        if not n or self.end - pos < n:
            try:  # mdcodec says what is wrong, over this body's bytes only
                md_end(bytes(buf[pos : self.end]))
            except DecodeError as exc:
                raise self.fail(str(exc)) from None
        return n

    def md_bytes(self) -> bytes:
        """An ``md`` field as its bytes (checked to be an MQMD; a client decodes it lazily)."""
        pos = self.pos
        self.pos = end = pos + self._md_length()
        return bytes(self.buf[pos:end])

    def md(self) -> MQMD:
        """An ``md`` field decoded."""
        pos = self.pos
        self.pos = pos + self._md_length()
        return MQMD.decode(self.buf, pos)

    def props(self) -> props_model.PropertySet | None:
        pos = self.pos
        if self.end - pos >= 4 and self.buf[pos : pos + 4] == NO_PROPS:
            self.pos = pos + 4
            return None
        (n,) = self.unpack(_U32)
        if not n:
            return None
        if self.end - self.pos < n:
            raise self.fail(f"properties of {n} bytes, {self.end - self.pos} present")
        start, self.pos = self.pos, self.pos + n
        if n > _DECODED_MAX:
            return props_model.unpack(self.buf, start, self.pos)
        raw = bytes(self.buf[start : self.pos])
        kept = _decoded.get(raw)
        if kept is None:
            try:
                kept = props_model.unpack(raw)
            except DecodeError:  # again where it lies, for the offset in the frame
                return props_model.unpack(self.buf, start, self.pos)
            if len(_decoded) >= _DECODED_KEPT:
                _decoded.clear()
            _decoded[raw] = kept
        return kept.copy()

    def rest(self) -> bytes:
        """The rest of the body, copied once."""
        pos, self.pos = self.pos, self.end
        return self.buf[pos : self.end] if type(self.buf) is bytes else bytes(self.buf[pos : self.end])

    def count(self) -> int:
        """A u16 list length, at most MAX_LIST."""
        (n,) = self.unpack(_U16)
        if n > MAX_LIST:
            raise self.fail(f"list of {n} entries; the limit is {MAX_LIST}")
        return int(n)

    def batch_count(self, n: int) -> int:
        """``n``, checked to be a batch's count (1..MAX_BATCH)."""
        if not 0 < n <= MAX_BATCH:
            raise self.fail(f"batch of {n} items; 1..{MAX_BATCH} allowed")
        return n

    def done(self) -> None:
        """Raises DecodeError when bytes are left after the body's last field."""
        if self.pos != self.end:
            raise self.fail(f"{self.end - self.pos} bytes after the end of the body")
