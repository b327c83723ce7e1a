"""GPacket, the S1MQ 3.5 / OpenMQ cluster packet (byte-exact with cluster-protocol.md §1).

Fixed header, 36 bytes, big-endian:

| Off | Len | Field         | Notes                                              |
|----:|----:|---------------|----------------------------------------------------|
|   0 |   2 | version int16 | always 350                                         |
|   2 |   2 | type int16    | packet type                                        |
|   4 |   4 | size int32    | whole packet: 36 + properties + payload            |
|   8 |   4 | magic int32   | 2147476418 = 0x7FFFE3C2                            |
|  12 |   4 | propsSize     | length of the properties section; 0 = no section   |
|  16 |   8 | timestamp     | ms since the epoch (informational)                 |
|  24 |   8 | sequence      | informational                                      |
|  32 |   4 | bitFlags      | 32 one-bit flags, unsigned (A = reply expected)    |
|  36 |   P | properties    | see below                                          |
|36+P |   * | payload       | opaque, size - 36 - P bytes                        |

Properties section: int32 version (1), int32 count, then per entry a modified-UTF-8 key
(uint16 length + bytes), an int16 type code and the value:

| Code | Type    | Value                          | Code | Type   | Value                     |
|-----:|---------|--------------------------------|-----:|--------|---------------------------|
|    1 | BOOLEAN | 1 byte, non-zero = true        |    6 | FLOAT  | IEEE binary32             |
|    2 | BYTE    | int8                           |    7 | DOUBLE | IEEE binary64             |
|    3 | SHORT   | int16                          |    8 | STRING | modified UTF-8            |
|    4 | INTEGER | int32                          |    9 | OBJECT | Java serialization:       |
|    5 | LONG    | int64                          |      |        | always refused here       |

An absent section (``properties is None``) and an empty one (8 bytes ``00000001 00000000``)
are different on the wire. Java keeps properties in a ``Hashtable``; ``java_properties``
reproduces its iteration order so that ferrymq's packets are byte-identical to Java's.
Every length is checked against a limit before anything is allocated.
"""

from __future__ import annotations

import struct
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple, TypeVar

from ferrymq.errors import DecodeError
from ferrymq.wire import mutf8

VERSION = 350
MAGIC = 2147476418
HEADER_SIZE = 36
PROPS_VERSION = 1
DEFAULT_MAX_SIZE = 100 * 1024 * 1024
DEFAULT_MAX_PROPERTIES = 10_000

A_BIT = 1 << 0  # reply expected
B_BIT = 1 << 1  # sent as a broadcast
F_BIT = 1 << 5  # flow-controllable (message data)

_HEADER = struct.Struct(">hhiiiqqI")
_SECTION_HEAD = struct.Struct(">ii")
assert _HEADER.size == HEADER_SIZE


class PropType(IntEnum):
    """The type codes of PacketProperties values."""

    BOOLEAN = 1
    BYTE = 2
    SHORT = 3
    INTEGER = 4
    LONG = 5
    FLOAT = 6
    DOUBLE = 7
    STRING = 8
    OBJECT = 9


_FIXED = {
    PropType.BYTE: struct.Struct(">b"),
    PropType.SHORT: struct.Struct(">h"),
    PropType.INTEGER: struct.Struct(">i"),
    PropType.LONG: struct.Struct(">q"),
    PropType.FLOAT: struct.Struct(">f"),
    PropType.DOUBLE: struct.Struct(">d"),
}
_INT_BITS = {PropType.BYTE: 8, PropType.SHORT: 16, PropType.INTEGER: 32, PropType.LONG: 64}

Value = bool | int | float | str


@dataclass(frozen=True, slots=True)
class Prop:
    """A typed property value; OBJECT is not representable (ferrymq never deserializes)."""

    type: PropType
    value: Value

    def __post_init__(self) -> None:
        t, v = self.type, self.value
        if t == PropType.BOOLEAN:
            ok = isinstance(v, bool)
        elif t in _INT_BITS:
            bits = _INT_BITS[t]
            ok = isinstance(v, int) and not isinstance(v, bool) and -(1 << (bits - 1)) <= v < 1 << (bits - 1)
        elif t == PropType.FLOAT:
            ok = isinstance(v, float)
            if ok:
                # Hold the value a Java float would hold, so that a decoded FLOAT equals the
                # one that was encoded; too large a value has no float32 form at all.
                try:
                    object.__setattr__(self, "value", _FIXED[PropType.FLOAT].unpack(_FIXED[PropType.FLOAT].pack(v))[0])
                except OverflowError:
                    ok = False
        elif t == PropType.DOUBLE:
            ok = isinstance(v, float)
        elif t == PropType.STRING:
            ok = isinstance(v, str)
        else:
            raise ValueError(f"{t!r} properties are not supported: ferrymq never uses Java serialization")
        if not ok:
            raise ValueError(f"{v!r} is not a valid {PropType(t).name} value")

    @classmethod
    def boolean(cls, value: bool) -> Prop:
        return cls(PropType.BOOLEAN, value)

    @classmethod
    def byte(cls, value: int) -> Prop:
        return cls(PropType.BYTE, value)

    @classmethod
    def short(cls, value: int) -> Prop:
        return cls(PropType.SHORT, value)

    @classmethod
    def int32(cls, value: int) -> Prop:
        return cls(PropType.INTEGER, value)

    @classmethod
    def int64(cls, value: int) -> Prop:
        return cls(PropType.LONG, value)

    @classmethod
    def float32(cls, value: float) -> Prop:
        return cls(PropType.FLOAT, float(value))

    @classmethod
    def float64(cls, value: float) -> Prop:
        return cls(PropType.DOUBLE, float(value))

    @classmethod
    def string(cls, value: str) -> Prop:
        return cls(PropType.STRING, value)

    def pack(self) -> bytes:
        """The type code and the value, as PacketProperties writes them."""
        code = self.type.to_bytes(2, "big")
        if self.type == PropType.BOOLEAN:
            return code + (b"\x01" if self.value else b"\x00")
        if self.type == PropType.STRING:
            assert isinstance(self.value, str)
            return code + mutf8.write_utf(self.value)
        return code + _FIXED[self.type].pack(self.value)


Properties = tuple[tuple[str, Prop], ...]
V = TypeVar("V")
T = TypeVar("T")


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode()`` (over UTF-16 code units), as an unsigned 32-bit value."""
    h = 0
    raw = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(raw), 2):
        h = (31 * h + (raw[i] << 8 | raw[i + 1])) & 0xFFFFFFFF
    return h


def hashtable_order(items: Iterable[tuple[str, V]]) -> list[tuple[str, V]]:
    """The iteration order of a ``java.util.Hashtable()`` after ``put`` of ``items`` in order.

    Default capacity 11 and load factor 0.75; a new key goes to the head of its bucket;
    re-putting a key replaces the value in place; before adding a key at ``count >=
    threshold`` the table grows to ``2n+1``, re-inserting old buckets from the highest down.
    Iteration runs from the highest bucket down, each chain head first.
    """
    capacity, threshold = 11, 8
    buckets: list[list[str]] = [[] for _ in range(capacity)]  # each chain head first
    values: dict[str, V] = {}
    for key, value in items:
        if key not in values:
            if len(values) >= threshold:
                grown: list[list[str]] = [[] for _ in range(2 * capacity + 1)]
                for chain in reversed(buckets):
                    for old in chain:
                        grown[(java_string_hash(old) & 0x7FFFFFFF) % len(grown)].insert(0, old)
                buckets, capacity = grown, len(grown)
                threshold = int(capacity * 0.75)
            buckets[(java_string_hash(key) & 0x7FFFFFFF) % capacity].insert(0, key)
        values[key] = value
    return [(key, values[key]) for chain in reversed(buckets) for key in chain]


def java_properties(items: Iterable[tuple[str, Prop]]) -> Properties:
    """Properties in the order a Java writer that ``put`` them in this order would send them."""
    return tuple(hashtable_order(items))


def pack_properties(props: Properties) -> bytes:
    """The properties section: version 1, the count, then the entries in the order given.

    Raises:
        ValueError: an empty key (Java's reader stops at one, losing the rest) or a string
            longer than modified UTF-8 allows.
    """
    out = [_SECTION_HEAD.pack(PROPS_VERSION, len(props))]
    for key, prop in props:
        if not key:
            raise ValueError("an empty property key would end the Java reader's parsing")
        out.append(mutf8.write_utf(key))
        out.append(prop.pack())
    return b"".join(out)


def unpack_properties(
    buf: bytes | bytearray | memoryview, start: int, end: int, *, max_properties: int = DEFAULT_MAX_PROPERTIES
) -> Properties:
    """Decode the properties section in ``buf[start:end]``.

    As Java's reader does, an empty key ends the parsing (later entries are ignored) and
    bytes after the last entry are ignored.

    Raises:
        DecodeError: version other than 1, a negative or too large count, a value of type
            OBJECT or of an unknown type, or an entry that runs past ``end``.
    """
    name = "GPacket properties"
    if end - start < _SECTION_HEAD.size:
        raise DecodeError(name, start, f"section of {end - start} bytes is shorter than its 8-byte head")
    version, count = _SECTION_HEAD.unpack_from(buf, start)
    if version != PROPS_VERSION:
        raise DecodeError(name, start, f"version {version} is not {PROPS_VERSION}")
    if not 0 <= count <= max_properties:
        raise DecodeError(name, start + 4, f"count {count} outside 0..{max_properties}")
    pos = start + _SECTION_HEAD.size
    props: list[tuple[str, Prop]] = []
    for _ in range(count):
        key, pos = mutf8.read_utf(buf, pos, end, structure=name)
        if not key:
            break
        if pos + 2 > end:
            raise DecodeError(name, pos, f"type code of {key!r} runs past the section")
        code = int.from_bytes(buf[pos : pos + 2], "big", signed=True)
        pos += 2
        if code == PropType.BOOLEAN:
            if pos + 1 > end:
                raise DecodeError(name, pos, f"value of {key!r} runs past the section")
            prop = Prop(PropType.BOOLEAN, buf[pos] != 0)
            pos += 1
        elif code == PropType.STRING:
            text, pos = mutf8.read_utf(buf, pos, end, structure=name)
            prop = Prop(PropType.STRING, text)
        elif code == PropType.OBJECT:
            raise DecodeError(name, pos - 2, f"{key!r} is a Java-serialized OBJECT; ferrymq never deserializes")
        elif code in _FIXED:
            fixed = _FIXED[PropType(code)]
            if pos + fixed.size > end:
                raise DecodeError(name, pos, f"value of {key!r} runs past the section")
            prop = Prop(PropType(code), fixed.unpack_from(buf, pos)[0])
            pos += fixed.size
        else:
            raise DecodeError(name, pos - 2, f"unknown type code {code} for {key!r}")
        props.append((key, prop))
    return tuple(props)


def as_prop(value: Value | Prop) -> Prop:
    """A plain Python value as a typed property: bool -> BOOLEAN, int -> LONG, float -> DOUBLE, str -> STRING.

    Raises:
        ValueError: an int outside 64 bits or an unsupported value type.
    """
    if isinstance(value, Prop):
        return value
    if isinstance(value, bool):
        return Prop(PropType.BOOLEAN, value)
    if isinstance(value, int):
        return Prop(PropType.LONG, value)
    if isinstance(value, float):
        return Prop(PropType.DOUBLE, value)
    if isinstance(value, str):
        return Prop(PropType.STRING, value)
    raise ValueError(f"no GPacket property type for {type(value).__name__}")


def encode_properties(props: Mapping[str, Value | Prop]) -> bytes:
    """A properties section from a mapping, in its iteration order (see ``as_prop`` for types).

    Use ``java_properties`` + ``pack_properties`` for Java's byte-identical order.

    Raises:
        ValueError: as ``as_prop`` and ``pack_properties``.
    """
    return pack_properties(tuple((key, as_prop(value)) for key, value in props.items()))


def decode_properties(
    raw: bytes | bytearray | memoryview, *, max_properties: int = DEFAULT_MAX_PROPERTIES
) -> dict[str, Value]:
    """The values of a whole properties section (a repeated key keeps its last value).

    Raises:
        DecodeError: as ``unpack_properties``.
    """
    return {key: prop.value for key, prop in unpack_properties(raw, 0, len(raw), max_properties=max_properties)}


class GPacketHeader(NamedTuple):
    """The fixed 36 bytes of a GPacket, checked."""

    type: int
    size: int
    props_size: int
    timestamp: int
    sequence: int
    flags: int


def unpack_header(
    buf: bytes | bytearray | memoryview, offset: int = 0, *, max_size: int = DEFAULT_MAX_SIZE
) -> GPacketHeader:
    """Decode and check a GPacket's fixed header (the rest of the packet need not be there).

    Raises:
        DecodeError: fewer than 36 bytes, bad magic (checked first, as Java does), version
            other than 350, size below 36 or above ``max_size``, or a properties size that
            does not fit in the packet.
    """
    if len(buf) - offset < HEADER_SIZE:
        raise DecodeError("GPacket", offset, f"needs {HEADER_SIZE} header bytes, {max(0, len(buf) - offset)} present")
    version, ptype, size, magic, props_size, timestamp, sequence, flags = _HEADER.unpack_from(buf, offset)
    if magic != MAGIC:
        raise DecodeError("GPacket", offset + 8, f"magic {magic & 0xFFFFFFFF:#010x} is not {MAGIC:#010x}")
    if version != VERSION:
        raise DecodeError("GPacket", offset, f"version {version} is not {VERSION}")
    if not HEADER_SIZE <= size <= max_size:
        raise DecodeError("GPacket", offset + 4, f"size {size} outside {HEADER_SIZE}..{max_size}")
    if not 0 <= props_size <= size - HEADER_SIZE:
        raise DecodeError("GPacket", offset + 12, f"properties size {props_size} outside 0..{size - HEADER_SIZE}")
    return GPacketHeader(ptype, size, props_size, timestamp, sequence, flags)


@dataclass(frozen=True, slots=True)
class GPacket:
    """One GPacket. ``properties`` is None when the packet has no properties section."""

    type: int
    properties: Properties | None = None
    payload: bytes = b""
    timestamp: int = 0
    sequence: int = 0
    flags: int = 0

    def prop(self, key: str) -> Value | None:
        """The value of a property (the last one if the key repeats), or None."""
        for k, p in reversed(self.properties or ()):
            if k == key:
                return p.value
        return None

    def pack(self) -> bytes:
        """The packet's bytes.

        Raises:
            ValueError: a field out of its Java range, an empty property key or an
                over-long string.
        """
        section = b"" if self.properties is None else pack_properties(self.properties)
        size = HEADER_SIZE + len(section) + len(self.payload)
        try:
            head = _HEADER.pack(
                VERSION, self.type, size, MAGIC, len(section), self.timestamp, self.sequence, self.flags
            )
        except struct.error as exc:
            raise ValueError(f"GPacket: {exc}") from None
        return b"".join((head, section, self.payload))

    @classmethod
    def unpack_from(
        cls,
        buf: bytes | bytearray | memoryview,
        offset: int = 0,
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        max_properties: int = DEFAULT_MAX_PROPERTIES,
    ) -> GPacket:
        """Decode the GPacket at ``offset``; ``buf`` must hold all of it (``header.size`` bytes).

        Raises:
            DecodeError: a bad header (see ``unpack_header``), a truncated packet, or a
                malformed properties section (see ``unpack_properties``).
        """
        header = unpack_header(buf, offset, max_size=max_size)
        if len(buf) - offset < header.size:
            raise DecodeError("GPacket", offset, f"size {header.size} but only {len(buf) - offset} bytes present")
        return cls._from_header(buf, offset, header, max_properties)

    @classmethod
    def _from_header(
        cls, buf: bytes | bytearray | memoryview, offset: int, header: GPacketHeader, max_properties: int
    ) -> GPacket:
        props_start = offset + HEADER_SIZE
        props_end = props_start + header.props_size
        props = (
            None
            if header.props_size == 0
            else unpack_properties(buf, props_start, props_end, max_properties=max_properties)
        )
        payload = bytes(buf[props_end : offset + header.size])
        return cls(header.type, props, payload, header.timestamp, header.sequence, header.flags)


RX_INITIAL = 64 * 1024
"""The first size of a reader's own receive buffer (``get_buffer``)."""
RX_MIN_ROOM = 16 * 1024
"""Less free room than this at the end of the receive buffer, and it is compacted or grown."""
RX_BUSY = 256 * 1024
"""A read that fills all the room offered makes the buffer grow, up to this: a busy
connection reads this much per system call (as uvloop does on its own), an idle one keeps
only RX_INITIAL."""
RX_KEEP = 1024 * 1024
"""A receive buffer grown past this (for larger packets) is let go once it is empty."""


class GPacketReader:
    """Sans-IO framer: bytes in as they arrive, then iterate over the complete packets.

    Two ways in. ``feed()`` takes bytes a driver read. ``get_buffer()`` and
    ``buffer_updated()`` (the shape of ``asyncio.BufferedProtocol``) let the driver read
    straight into the reader's own buffer: no bytes object per read and no join of a packet
    that spans reads, the buffer being reused from read to read. Once ``get_buffer`` was
    called, fed bytes are copied into that buffer too.

    The buffer never holds more than one packet's ``max_size`` plus what was fed at once,
    because a header's size is checked as soon as its 36 bytes are in. After a
    DecodeError the stream is unusable (as in Java, where the link is dropped) and every
    later call raises the same error.
    """

    def __init__(self, *, max_size: int = DEFAULT_MAX_SIZE, max_properties: int = DEFAULT_MAX_PROPERTIES) -> None:
        # What was received and not yet returned is _buf[_pos:_end], then _more. Fed bytes:
        # a read is kept as it came when it is bytes (immutable; a read is usually whole
        # packets), so its packets are sliced from it without a copy into a buffer first.
        # A packet that spans reads is made contiguous once it is all here, by one join of
        # what is buffered (growing a buffer read by read would copy its bytes again at
        # every reallocation, and a large packet spans several reads). Reads into the
        # reader's buffer (_rx, then _buf itself; _more stays empty) need neither.
        self._buf: bytes | bytearray = b""
        self._pos = 0
        self._end = 0
        self._more: list[bytes] = []
        self._more_len = 0
        self._rx: bytearray | None = None
        self._offered = 0  # the room the last get_buffer gave
        self._header: GPacketHeader | None = None
        self._error: DecodeError | None = None
        self.max_size = max_size
        self.max_properties = max_properties
        self.drained = True
        """Every byte fed has been returned in packets (none is begun): the next ``next_in_place``
        would return None. False when not known, and after an error."""

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned as packets."""
        return self._end - self._pos + self._more_len

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Add received bytes (bytes are kept as they are; anything else is copied, so the
        caller may reuse it).

        Raises:
            DecodeError: an earlier packet was malformed.
        """
        if self._error is not None:
            raise self._error
        if data:
            self.drained = False
        if self._rx is not None:
            with memoryview(data) as view:
                done = 0
                while done < len(view):
                    with self.get_buffer() as room:
                        n = min(len(room), len(view) - done)
                        room[:n] = view[done : done + n]
                    self.buffer_updated(n)
                    done += n
            return
        if type(data) is not bytes:
            data = bytes(data)
        if self._pos == self._end and not self._more:
            self._buf, self._pos, self._end = data, 0, len(data)
        elif data:
            self._more.append(data)
            self._more_len += len(data)

    def get_buffer(self, sizehint: int = -1) -> memoryview:
        """Free room at the end of the reader's own buffer, for the next read to go into
        (``sizehint`` is not needed: the room offered is at least RX_MIN_ROOM); then call
        ``buffer_updated`` with the bytes read. What is buffered is moved to the front when
        the room runs low, and into a buffer twice as large when it fills more than half, or
        when the last read filled all its room (up to RX_BUSY)."""
        rx = self._rx
        if rx is None:  # the first read this way: what was fed and is still here moves in
            fed = b"".join([self._buf[self._pos : self._end], *self._more])
            rx = self._rx = bytearray(max(RX_INITIAL, 2 * len(fed)))
            rx[: len(fed)] = fed
            self._buf, self._pos, self._end, self._more, self._more_len = rx, 0, len(fed), [], 0
        pos, end = self._pos, self._end
        cap = len(rx)
        grow = self._offered == -1 and cap < RX_BUSY
        if pos == end:
            pos = end = 0
            if cap > RX_KEEP:
                rx = self._rx = self._buf = bytearray(RX_INITIAL)
            elif grow:
                rx = self._rx = self._buf = bytearray(2 * cap)  # empty: nothing to copy
        elif grow or cap - end < RX_MIN_ROOM:
            held = end - pos
            if grow or held > cap // 2:
                grown = bytearray(2 * cap)
                grown[:held] = memoryview(rx)[pos:end]
                rx = self._rx = self._buf = grown
            else:
                with memoryview(rx) as view:  # overlapping ranges are moved as memmove would
                    view[:held] = view[pos:end]
            pos, end = 0, held
        self._pos, self._end = pos, end
        self._offered = len(rx) - end
        return memoryview(rx)[end:]

    def packet_room(self, least: int, types: Container[int]) -> memoryview | None:
        """The missing rest of a packet of ``least`` bytes or more, of one of ``types``,
        whose header is in (and checked) and whose body is not, for the driver to read into
        (``recv_into``), then ``packet_filled``; None for any other state, and when reading
        into the reader's own buffer (``get_buffer``). The first call moves what is buffered
        of the packet into a buffer of the packet's size, which is the packet's alone: a
        packet of megabytes costs no bytes object per read and no join, and what its
        decoder keeps of it (views) is never overwritten by a later read. The buffer is a
        bytearray, not bytes: ``types`` are those whose decoders copy or view what they keep."""
        header = self._header
        if header is None or self._rx is not None or header.size < least or header.type not in types:
            return None
        buf = self._buf
        if type(buf) is not bytearray:  # the first read into it: the packet's bytes so far move in
            have = self.buffered
            if have >= header.size:
                return None
            buf = bytearray(header.size)  # the size was checked against max_size with the header
            with memoryview(buf) as view:
                view[: self._end - self._pos] = memoryview(self._buf)[self._pos : self._end]
                at = self._end - self._pos
                for part in self._more:
                    view[at : at + len(part)] = part
                    at += len(part)
            self._buf, self._pos, self._end, self._more, self._more_len = buf, 0, have, [], 0
        if self._more or self._end >= header.size:  # bytes fed meanwhile go the usual way
            return None
        return memoryview(buf)[self._end :]

    def packet_filled(self, nbytes: int) -> None:
        """``nbytes`` were read into the room the last ``packet_room`` gave."""
        self._end += nbytes

    def buffer_updated(self, nbytes: int) -> None:
        """``nbytes`` were read into the room the last ``get_buffer`` gave."""
        self._end += nbytes
        if nbytes:
            self.drained = False
        if nbytes >= self._offered:
            self._offered = -1  # the socket had more: a larger buffer for the next read

    def _gather(self, n: int) -> bool:
        """Whether ``n`` bytes are buffered; they are then contiguous in ``_buf`` from ``_pos``
        (joined with as few of the later reads as it takes)."""
        have = self._end - self._pos
        if have >= n:
            return True
        if have + self._more_len < n:
            return False
        more = self._more
        k = 0
        while have < n:
            have += len(more[k])
            k += 1
        moved = sum(map(len, more[:k]))
        with memoryview(self._buf) as view, view[self._pos : self._end] as rest:
            self._buf = b"".join([rest, *more[:k]])
        self._more_len -= moved
        del more[:k]
        self._pos, self._end = 0, len(self._buf)
        return True

    def _head(self) -> tuple[bytes | bytearray, int] | None:
        """The buffer and offset where the next HEADER_SIZE bytes can be read, or None while
        fewer are here. A header that spans reads is copied alone, not with its packet."""
        buf, pos = self._buf, self._pos
        if self._end - pos >= HEADER_SIZE:
            return buf, pos
        if self._end - pos + self._more_len < HEADER_SIZE:
            return None
        head = bytes(buf[pos : self._end])
        for part in self._more:
            head += part[: HEADER_SIZE - len(head)]
            if len(head) == HEADER_SIZE:
                break
        return head, 0

    def next_packet(self) -> GPacket | None:
        """The next complete packet, or None until more bytes arrive.

        Raises:
            DecodeError: the stream holds a malformed packet.
        """
        frame = self.next_frame()
        if frame is None:
            return None
        header, props, payload = frame
        return GPacket(header.type, props, payload, header.timestamp, header.sequence, header.flags)

    def next_frame(self) -> tuple[GPacketHeader, Properties | None, bytes] | None:
        """The next complete packet as its checked header, properties and payload, or None
        until more bytes arrive: ``next_packet`` without building the GPacket.

        Raises:
            DecodeError: the stream holds a malformed packet.
        """
        header = self._whole_packet()
        if header is None:
            return None
        buf, pos = self._buf, self._pos
        start = pos + HEADER_SIZE + header.props_size
        try:
            with memoryview(buf) as view:  # the payload copied once
                props = (None if header.props_size == 0
                         else unpack_properties(view, pos + HEADER_SIZE, start, max_properties=self.max_properties))
                payload = bytes(view[start : pos + header.size])
        except DecodeError as exc:
            self._error = exc
            raise
        self._header = None
        self.consume(pos + header.size)
        return header, props, payload

    def _whole_packet(self) -> GPacketHeader | None:
        """The next packet's checked header once all of the packet is buffered (contiguous
        in ``_buf`` from ``_pos``), else None.

        Raises:
            DecodeError: the stream holds a malformed header (also on every later call).
        """
        if self._error is not None:
            raise self._error
        try:
            header = self._header
            if header is None:
                at = self._head()
                if at is None:
                    return None
                header = self._header = unpack_header(*at, max_size=self.max_size)
        except DecodeError as exc:
            self._error = exc
            raise
        return header if self._gather(header.size) else None

    def next_in_place(self) -> tuple[int, int, int, int, bytes | bytearray, int, int] | None:
        """The next complete packet where it lies, or None until more bytes arrive: its type,
        flags, sequence and properties size (its header checked as ``next_frame`` checks it),
        the buffer holding it, and where in it the packet's properties section (then payload)
        starts and the packet ends. The packet is taken: the buffer is bytes, which stay as
        they are, so the caller reads the packet there without copying it out first.

        The protocol machine (ferrymq.protocol.connection, this method's one caller) takes
        the usual packet itself (header and body whole in ``_buf`` from ``_pos``, no header
        held from an earlier read), so that a frame costs it no call here; it comes here for
        every other case, and this method reads every case.

        Raises:
            DecodeError: the stream holds a malformed header.
        """
        if self._pos == self._end and not self._more and self._error is None:  # nothing buffered
            return None
        header = self._whole_packet()
        if header is None:
            return None
        buf, pos = self._buf, self._pos
        self._header = None
        self.consume(pos + header.size)
        return header.type, header.flags, header.sequence, header.props_size, buf, pos + HEADER_SIZE, pos + header.size

    def consume(self, end: int) -> None:
        """Drop the buffered bytes before ``end`` (the end of a packet just taken)."""
        # A read is never compacted: slicing off its rest would copy it once per packet taken;
        # it is dropped whole once taken. The reader's own buffer is compacted by get_buffer.
        if end == self._end and self._rx is None:
            if self._more:
                self._buf = self._more.pop(0)
                self._more_len -= len(self._buf)
            else:
                self._buf = b""
            self._pos, self._end = 0, len(self._buf)
        else:
            self._pos = end
        self.drained = self._pos == self._end and not self._more

    def __iter__(self) -> Iterator[GPacket]:
        while (packet := self.next_packet()) is not None:
            yield packet
