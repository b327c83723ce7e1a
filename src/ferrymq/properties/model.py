"""Message properties as the queue manager and the clients hold them: typed values with
their property descriptors, in the order they were set, and their binary form.

A ``PropertySet`` is a mutable mapping of property names to plain Python values (so
``props["usr.color"]`` is ``"red"``) that also keeps each property's MQ type (MQTYPE_*)
and descriptor (MQPD Support, Context, CopyOptions). Assigning a plain value infers the
type: bool → BOOLEAN, int → INT32 (INT64 outside 32 bits), float → FLOAT64, str → STRING,
bytes → BYTE_STRING, None → NULL; ``set`` names the type explicitly.

Binary form (journal records, client protocol), big-endian:

| field | form |
|---|---|
| count | u32 |
| per property | u16 name length, name (UTF-8), u16 MQTYPE, u8 has_pd, [i32 Support, i32 Context, i32 CopyOptions], value |
| value | NULL: none; BOOLEAN: u8; INT8/16/32/64: i8/i16/i32/i64; FLOAT32/64: IEEE; STRING: u32 length + UTF-8; BYTE_STRING: u32 length + bytes |

Names and strings are UTF-8 with surrogatepass: a lone surrogate travels (and is stored) as
it is, so the queue manager, not a client's encoder, is what refuses it at put
(``rules.check_carried``), and a record written before that check still loads.

Decoding never raises anything but DecodeError and never allocates more than the input.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C

Value = bool | int | float | str | bytes | None

TYPES = (C.MQTYPE_NULL, C.MQTYPE_BOOLEAN, C.MQTYPE_BYTE_STRING, C.MQTYPE_INT8, C.MQTYPE_INT16, C.MQTYPE_INT32,
         C.MQTYPE_INT64, C.MQTYPE_FLOAT32, C.MQTYPE_FLOAT64, C.MQTYPE_STRING)
INT_BITS = {C.MQTYPE_INT8: 8, C.MQTYPE_INT16: 16, C.MQTYPE_INT32: 32, C.MQTYPE_INT64: 64}
TYPE_NAMES = {C.MQTYPE_NULL: "NULL", C.MQTYPE_BOOLEAN: "BOOLEAN", C.MQTYPE_BYTE_STRING: "BYTE_STRING",
              C.MQTYPE_INT8: "INT8", C.MQTYPE_INT16: "INT16", C.MQTYPE_INT32: "INT32", C.MQTYPE_INT64: "INT64",
              C.MQTYPE_FLOAT32: "FLOAT32", C.MQTYPE_FLOAT64: "FLOAT64", C.MQTYPE_STRING: "STRING"}
MAX_PROPERTIES = 100_000
_F32 = struct.Struct(">f")


@dataclass(frozen=True, slots=True)
class Descriptor:
    """MQPD: what a property promises (Support), its context and where copies of the
    message carry it (CopyOptions)."""

    support: int = C.MQPD_SUPPORT_OPTIONAL
    context: int = C.MQPD_NO_CONTEXT
    copy_options: int = C.MQCOPY_DEFAULT


DEFAULT_PD = Descriptor()


@dataclass(frozen=True, slots=True)
class Property:
    """One typed property value and its descriptor."""

    type: int
    value: Value
    pd: Descriptor = DEFAULT_PD


def infer_type(value: object) -> int:
    """The MQTYPE a plain Python value gets when no type is named.

    Raises:
        TypeError: a value no property type holds.
    """
    if value is None:
        return C.MQTYPE_NULL
    if isinstance(value, bool):
        return C.MQTYPE_BOOLEAN
    if isinstance(value, int):
        return C.MQTYPE_INT32 if -(1 << 31) <= value < 1 << 31 else C.MQTYPE_INT64
    if isinstance(value, float):
        return C.MQTYPE_FLOAT64
    if isinstance(value, str):
        return C.MQTYPE_STRING
    if isinstance(value, (bytes, bytearray, memoryview)):
        return C.MQTYPE_BYTE_STRING
    raise TypeError(f"no message property type holds a {type(value).__name__}")


def coerce(ptype: int, value: object) -> Value:
    """``value`` as a value of MQ type ``ptype`` (a FLOAT32 is rounded to 32 bits, as the
    queue manager would store it).

    Raises:
        ValueError: the value is not of that type, or does not fit it.
    """
    if ptype == C.MQTYPE_NULL:
        if value is not None:
            raise ValueError(f"a NULL property has no value, not {value!r}")
        return None
    if ptype == C.MQTYPE_BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, int):  # MQBOOL: 0 is false, anything else true
            return value != 0
    elif ptype in INT_BITS:
        if isinstance(value, int) and not isinstance(value, bool):
            bits = INT_BITS[ptype]
            if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
                raise ValueError(f"{value} does not fit {TYPE_NAMES[ptype]}")
            return value
    elif ptype in (C.MQTYPE_FLOAT32, C.MQTYPE_FLOAT64):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            f = float(value)
            if ptype == C.MQTYPE_FLOAT32 and not math.isnan(f) and not math.isinf(f):
                try:
                    f = _F32.unpack(_F32.pack(f))[0]
                except (OverflowError, struct.error):
                    raise ValueError(f"{value} does not fit FLOAT32") from None
            return f
    elif ptype == C.MQTYPE_STRING:
        if isinstance(value, str):
            return value
    elif ptype == C.MQTYPE_BYTE_STRING:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
    else:
        raise ValueError(f"{ptype} is not a property type")
    raise ValueError(f"{value!r} is not a {TYPE_NAMES[ptype]} value")


_new_set = object.__new__  # PropertySet.copy: a set made without __init__


class PropertySet(MutableMapping[str, Value]):
    """Message properties: name → value, with each property's type and descriptor kept."""

    # ``_packed`` keeps the binary form once made (``pack``), until the set next changes:
    # a publication's copies share one set, which each copy's journal record, reply frame
    # and size check would otherwise pack again. ``_framed``: the same after its length, as
    # a frame's ``props`` field carries it (``framed``), kept alike: each copy of a
    # publication pushed to its subscriber sends it. ``_shared``: ``_items`` is another
    # set's too (``copy``), so the first change makes a dict of this set's own.
    __slots__ = ("_framed", "_items", "_packed", "_shared")

    def __init__(self, items: Mapping[str, object] | None = None) -> None:
        self._items: dict[str, Property] = {}
        self._packed: bytes | None = None
        self._framed: bytes | None = None
        self._shared = False
        if items:
            self.update_from(items)

    @classmethod
    def of(cls, items: Mapping[str, object] | None) -> PropertySet | None:
        """A PropertySet from any mapping (types kept when it is one); None for nothing."""
        if items is None:
            return None
        if isinstance(items, PropertySet):
            return items
        return cls(items)

    def update_from(self, items: Mapping[str, object]) -> None:
        if isinstance(items, PropertySet):
            self._own().update(items._items)
            return
        for key, value in items.items():
            self[key] = value  # type: ignore[assignment]

    # -- mapping ---------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Value:
        return self._items[name].value

    def __setitem__(self, name: str, value: Value) -> None:
        self.set(name, value)

    def __delitem__(self, name: str) -> None:
        del self._own()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k!r}: {TYPE_NAMES.get(p.type, p.type)}({p.value!r})" for k, p in self._items.items())
        return f"PropertySet({{{inner}}})"

    # -- typed access ----------------------------------------------------------------------
    def set(self, name: str, value: object, ptype: int | None = None, pd: Descriptor = DEFAULT_PD) -> None:
        """Set a property; ``ptype`` None infers the type from the value.

        Raises:
            TypeError: no type holds the value; ValueError: it is not of ``ptype``.
        """
        t = infer_type(value) if ptype is None else ptype
        self._own()[name] = Property(t, coerce(t, value), pd)

    def put(self, name: str, prop: Property) -> None:
        self._own()[name] = prop

    def _own(self) -> dict[str, Property]:
        """The items, about to change: a dict of this set's own (see ``copy``), and the
        packed form dropped."""
        self._packed = self._framed = None
        if self._shared:
            self._items = dict(self._items)
            self._shared = False
        return self._items

    def property(self, name: str) -> Property:
        return self._items[name]

    def find(self, name: str) -> Property | None:
        """The property, or None: one dict lookup (selectors read properties per message)."""
        return self._items.get(name)

    def type_of(self, name: str) -> int:
        return self._items[name].type

    def typed_items(self) -> Iterator[tuple[str, Property]]:
        return iter(self._items.items())

    def copy(self) -> PropertySet:
        """A set of its own with the same properties. The items are shared until either
        set changes (``_own``): a getter's copy of a publication's set, made per message,
        is seldom changed."""
        out = _new_set(PropertySet)  # without __init__
        out._items = self._items
        out._packed, out._framed = self._packed, self._framed
        out._shared = self._shared = True
        return out


# -- binary form ---------------------------------------------------------------------------

_U16, _U32 = struct.Struct(">H"), struct.Struct(">I")
_PD = struct.Struct(">iii")
_FIXED = {C.MQTYPE_BOOLEAN: struct.Struct(">B"), C.MQTYPE_INT8: struct.Struct(">b"),
          C.MQTYPE_INT16: struct.Struct(">h"), C.MQTYPE_INT32: struct.Struct(">i"),
          C.MQTYPE_INT64: struct.Struct(">q"), C.MQTYPE_FLOAT32: _F32, C.MQTYPE_FLOAT64: struct.Struct(">d")}


def pack(props: PropertySet | Mapping[str, object]) -> bytes:
    """The binary form of a property set.

    Raises:
        ValueError: a name longer than 65535 bytes or a value that does not fit its type.
    """
    ps = props if isinstance(props, PropertySet) else PropertySet(props)
    if ps._packed is not None:
        return ps._packed
    out = [_U32.pack(len(ps))]
    for name, p in ps.typed_items():
        raw = name.encode("utf-8", "surrogatepass")
        if len(raw) > 0xFFFF:
            raise ValueError(f"property name of {len(raw)} bytes")
        has_pd = p.pd != DEFAULT_PD
        out += [_U16.pack(len(raw)), raw, _U16.pack(p.type), b"\x01" if has_pd else b"\x00"]
        if has_pd:
            out.append(_PD.pack(p.pd.support, p.pd.context, p.pd.copy_options))
        v = p.value
        if p.type == C.MQTYPE_NULL:
            continue
        if p.type in _FIXED:
            try:
                out.append(_FIXED[p.type].pack(int(bool(v)) if p.type == C.MQTYPE_BOOLEAN else v))
            except struct.error as exc:
                raise ValueError(f"{name}: {exc}") from None
        else:
            data = v.encode("utf-8", "surrogatepass") if isinstance(v, str) else bytes(v)  # type: ignore[arg-type]
            out += [_U32.pack(len(data)), data]
    ps._packed = packed = b"".join(out)
    # Framed now too, while the set may still be the one its copies are made from: a copy
    # made later carries both (``copy``), a copy framing itself would keep it alone.
    ps._framed = _U32.pack(len(packed)) + packed
    return packed


def framed(props: PropertySet | Mapping[str, object]) -> bytes:
    """``pack(props)`` after its length (big-endian, 4 bytes): a frame's ``props`` field,
    kept with the set's packed form until the set changes."""
    if not isinstance(props, PropertySet):
        raw = pack(props)
        return _U32.pack(len(raw)) + raw
    out = props._framed
    if out is None:
        raw = pack(props)  # frames it as it packs it
        out = props._framed
        if out is None:
            out = props._framed = _U32.pack(len(raw)) + raw
    return out


def unpack(buf: bytes | bytearray | memoryview, start: int = 0, end: int | None = None) -> PropertySet:
    """Decode the binary form in ``buf[start:end]``.

    Raises:
        DecodeError: truncated or malformed input.
    """
    stop = len(buf) if end is None else end
    pos = start
    name_ = "message properties"

    def take(n: int) -> bytes:
        nonlocal pos
        if n < 0 or stop - pos < n:
            raise DecodeError(name_, pos, f"needs {n} bytes, {stop - pos} present")
        raw = bytes(buf[pos : pos + n])
        pos += n
        return raw

    (count,) = _U32.unpack(take(4))
    if count > MAX_PROPERTIES or count * 5 > stop - pos:
        raise DecodeError(name_, start, f"count {count} does not fit the input")
    ps = PropertySet()
    for _ in range(count):
        at = pos
        (n,) = _U16.unpack(take(2))
        try:
            key = take(n).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise DecodeError(name_, at, "property name is not UTF-8") from None
        (ptype,) = _U16.unpack(take(2))
        if ptype not in TYPE_NAMES:
            raise DecodeError(name_, pos - 2, f"unknown property type {ptype} for {key!r}")
        flag = take(1)[0]
        pd = Descriptor(*_PD.unpack(take(_PD.size))) if flag else DEFAULT_PD
        value: Value
        if ptype == C.MQTYPE_NULL:
            value = None
        elif ptype in _FIXED:
            st = _FIXED[ptype]
            (value,) = st.unpack(take(st.size))
            if ptype == C.MQTYPE_BOOLEAN:
                value = bool(value)
        else:
            (length,) = _U32.unpack(take(4))
            raw = take(length)
            if ptype == C.MQTYPE_STRING:
                try:
                    value = raw.decode("utf-8", "surrogatepass")
                except UnicodeDecodeError:
                    raise DecodeError(name_, pos - length, f"{key!r} is not UTF-8") from None
            else:
                value = raw
        ps.put(key, Property(ptype, value, pd))
    if pos != stop:
        raise DecodeError(name_, pos, f"{stop - pos} bytes after the last property")
    return ps
