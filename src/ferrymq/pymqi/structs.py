"""pymqi's MQI structures: ``MD``, ``GMO``, ``PMO``, ``OD``, ``CNO`` (packable) and ``CD``, ``SCO``.

Each is a mutable bag of pymqi-named attributes (``MsgId``, ``Options``, ``ObjectName``)
with IBM's default values, ``set(**kw)``, ``get()``, item access, and — for the
structures ferrymq.wire lays out — ``pack()``/``unpack(buf)`` in the 64-bit little-endian
layout of the structure's ``Version``. The byte layouts are not restated here: they come
from ``ferrymq.wire.mqmd`` and ``ferrymq.wire.api_structs``.

As in pymqi, character fields hold ``bytes``: a shorter value is NUL-padded when packed,
and unpacking keeps the field's bytes as they are (a queue manager blank-pads names).
Assigning ``str`` is accepted too (encoded as Latin-1). Pointer fields always pack as 0.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQXC
from ferrymq.pymqi.errors import PYIFError
from ferrymq.wire import api_structs as A
from ferrymq.wire.mqmd import LAYOUT_V1, LAYOUT_V2, MQMD

# A packable field: (pymqi name, kind, size). Kinds: l int32, q int64, s chars, b bytes,
# p pointer (packs 0; the attribute is kept but not sent), x padding (no attribute).
Field = tuple[str, str, int]
_FMT = {"l": "i", "q": "q", "p": "q"}
# pymqi spells an MQCHARV's fields ObjectStringVSPtr, ObjectStringVSOffset...
_CHARV_SUFFIX = {"vs_ptr": "VSPtr", "vs_offset": "VSOffset", "vs_buf_size": "VSBufSize", "vs_length": "VSLength",
                 "vs_ccsid": "VSCCSID"}


def _camel(snake: str) -> str:
    out = "".join(part[:1].upper() + part[1:] for part in snake.split("_"))
    return out[:-5] + "CCSID" if out.endswith("Ccsid") else out  # pymqi spells RequestedCCSID


def _pymqi_name(attr: str) -> str:
    head, _, sub = attr.partition(".")
    return _camel(head) + _CHARV_SUFFIX[sub] if sub else _camel(attr)


def as_bytes(value: bytes | bytearray | str) -> bytes:
    """A character value as bytes (str is encoded as Latin-1, as MQ names are single-byte)."""
    if isinstance(value, str):
        return value.encode("latin-1", errors="replace")
    return bytes(value)


class _Layouts:
    """Per-version field lists and struct formats of one packable structure."""

    def __init__(self, name: str, versions: dict[int, list[Field]]) -> None:
        self.name = name
        self.versions = versions
        self.structs = {v: struct.Struct("<" + "".join(_FMT.get(k, f"{n}s") for _, k, n in fs))
                        for v, fs in versions.items()}
        self.all_fields: list[Field] = max(versions.values(), key=len)


def _from_md() -> _Layouts:
    kinds = {"l": "l", "c": "s", "f": "s", "b": "b"}
    v2 = [(_camel(a), kinds[k], n) for a, k, n in LAYOUT_V2.fields]
    return _Layouts("MD", {1: v2[: len(LAYOUT_V1.fields)], 2: v2})


def _from_api(cls: type[A._ApiStruct]) -> _Layouts:
    kinds = {"l": "l", "q": "q", "f": "s", "z": "s", "1": "s", "b": "b", "p": "p", "x": "x"}
    plan = cls._plan
    versions = {v: [(_pymqi_name(a), kinds[k], n) for a, k, n in spec] for v, (_, spec) in plan.layouts.items()}
    return _Layouts(plan.name, versions)


def _defaults_of(obj: Any) -> dict[str, Any]:
    """pymqi defaults from a wire dataclass's defaults (characters as bytes)."""
    out: dict[str, Any] = {}
    for attr_path, kind, _ in _wire_fields(obj):
        name = _pymqi_name(attr_path)
        if kind == "x" or attr_path == "struc_id":
            continue
        if kind == "p":
            out[name] = b"" if attr_path.endswith(".vs_ptr") else 0
            continue
        head, _, sub = attr_path.partition(".")
        value = getattr(getattr(obj, head), sub) if sub else getattr(obj, attr_path)
        out[name] = as_bytes(value) if isinstance(value, str) else value
    return out


def _wire_fields(obj: Any) -> list[Field]:
    if isinstance(obj, MQMD):
        return [(a, "s" if k in "cf" else k, n) for a, k, n in LAYOUT_V2.fields]
    spec = max((s for _, s in type(obj)._plan.layouts.values()), key=len)
    return [(a, "s" if k in "zf1" else k, n) for a, k, n in spec]


class MQOpts:
    """The common behaviour of pymqi's structure classes."""

    _layouts: ClassVar[_Layouts | None] = None
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **kw: Any) -> None:
        for name, value in self._defaults.items():
            object.__setattr__(self, name, list(value) if isinstance(value, list) else value)
        self.set(**kw)

    def set(self, **kw: Any) -> None:
        """Set fields by name.

        Raises:
            PYIFError: a name that is not a field of this structure.
        """
        for name, value in kw.items():
            if name not in self._defaults:
                raise PYIFError(f"{type(self).__name__} has no field {name!r}")
            setattr(self, name, value)

    def get(self) -> dict[str, Any]:
        """All fields as a dict."""
        return {name: getattr(self, name) for name in self._defaults}

    if TYPE_CHECKING:  # the fields, set from ``_defaults``, for type checkers only:
        # a class with a __getattr__ or __setattr__ of its own has every attribute read or
        # write taken the slow way by the interpreter (no specialization), and a put or get
        # reads a dozen GMO and PMO fields.
        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __setitem__(self, name: str, value: Any) -> None:
        self.set(**{name: value})

    def __iter__(self) -> Iterator[str]:
        return iter(self._defaults)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MQOpts) and type(other) is type(self) and self.get() == other.get()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def _shown(self) -> dict[str, Any]:
        """The fields as printed: a password (CD, SCO, CSP) only as whether it is set."""
        return {k: ("<hidden>" if v else v) if "Password" in k else v for k, v in self.get().items()}

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._shown().items())
        return f"{type(self).__name__}({fields})"

    def __str__(self) -> str:
        return "\n".join(f"{k}: {v!r}" for k, v in self._shown().items())

    # -- variable-length strings (MQCHARV) ------------------------------------------------

    def set_vs(self, vs_name: str, vs_value: bytes | str | None = None, vs_offset: int = 0, vs_buffer_size: int = 0,
               vs_ccsid: int = 0) -> None:
        """Set an MQCHARV field (``ObjectString``, ``SelectionString``...) as pymqi does:
        ``<name>VSLength`` becomes the value's length. Where pymqi keeps the string's address,
        ``<name>VSPtr`` keeps the bytes themselves (an address means nothing to another
        process); ``str`` is encoded as UTF-8.

        Raises:
            PYIFError: the structure has no such MQCHARV field.
        """
        base = vs_name.removesuffix("VSPtr")
        if base + "VSPtr" not in self._defaults:
            raise PYIFError(f"{type(self).__name__} has no MQCHARV field {base!r}")
        raw = b"" if vs_value is None else vs_value.encode("utf-8") if isinstance(vs_value, str) else bytes(vs_value)
        self.set(**{base + "VSPtr": raw, base + "VSOffset": vs_offset, base + "VSBufSize": vs_buffer_size,
                    base + "VSLength": len(raw), base + "VSCCSID": vs_ccsid})

    def get_vs(self, vs_name: str) -> bytes | None:
        """The string an MQCHARV field points at (up to a NUL, as pymqi reads it), or None."""
        ptr = getattr(self, vs_name.removesuffix("VSPtr") + "VSPtr")
        return bytes(ptr).split(b"\0", 1)[0] if ptr else None

    # -- binary form -------------------------------------------------------------------

    def pack(self) -> bytes:
        """The structure's bytes in the layout of its ``Version``.

        Raises:
            PYIFError: no binary form, an unknown Version, or a value that does not fit.
        """
        return self._pack_layout(getattr(self, "Version", 1))

    def _pack_layout(self, version: int) -> bytes:
        """The fields of ``version``'s layout (the Version field keeps its own value)."""
        lay = self._layouts
        if lay is None:
            raise PYIFError(f"{type(self).__name__} has no binary form in ferrymq")
        fields = lay.versions.get(version)
        if fields is None:
            raise PYIFError(f"{lay.name} Version must be one of {sorted(lay.versions)}, not {version}")
        values: list[Any] = []
        for name, kind, size in fields:
            if kind == "p":
                values.append(0)
            elif kind == "x":
                values.append(bytes(size))
            elif kind in "sb":
                raw = as_bytes(getattr(self, name))
                if len(raw) > size:
                    raise PYIFError(f"{lay.name}.{name} is {len(raw)} bytes; the field holds {size}")
                values.append(raw)
            else:
                values.append(getattr(self, name))
        try:
            return lay.structs[version].pack(*values)
        except struct.error as exc:
            raise PYIFError(f"{lay.name}: {exc}") from None

    def _layout_for(self, version: int, length: int) -> int:
        """The layout to read ``length`` bytes that declare ``version`` with."""
        return version

    def unpack(self, buf: bytes | bytearray | memoryview) -> None:
        """Fill the fields from bytes (little-endian) of the version they declare.

        Raises:
            PYIFError: no binary form, a wrong StrucId or Version, or too few bytes.
        """
        lay = self._layouts
        if lay is None:
            raise PYIFError(f"{type(self).__name__} has no binary form in ferrymq")
        raw = bytes(buf)
        if len(raw) < 8:
            raise PYIFError(f"{lay.name}: {len(raw)} bytes is too short")
        version = self._layout_for(int.from_bytes(raw[4:8], "little", signed=True), len(raw))
        fields = lay.versions.get(version)
        if fields is None:
            raise PYIFError(f"{lay.name}: Version {version} is not one of {sorted(lay.versions)}")
        if raw[:4] != as_bytes(self._defaults["StrucId"]):
            raise PYIFError(f"{lay.name}: StrucId is {raw[:4]!r}")
        st = lay.structs[version]
        if len(raw) < st.size:
            raise PYIFError(f"{lay.name} version {version} needs {st.size} bytes, {len(raw)} given")
        for (name, kind, _), value in zip(fields, st.unpack_from(raw), strict=True):
            if kind not in "px":
                setattr(self, name, value)


def _setup(cls: type[MQOpts], layouts: _Layouts, wire_default: Any, **overrides: Any) -> None:
    defaults = _defaults_of(wire_default)
    defaults.update(overrides)
    cls._layouts = layouts
    cls._defaults = defaults


MSG_ID_AT, CORREL_ID_AT, _ID_LEN = 48, 72, 24  # the identifiers' offsets and length in a packed MQMD
_KW_WIRE: dict[tuple[Any, ...], bytes] = {}  # MD(**fields)'s wire, by fields (ids aside)
_UNSET = object()  # MD(**kw) without an identifier
_HELD = ("Version", "MsgId", "CorrelId", "GroupId")  # MD's class attributes (with _w): a new MD's values


class MD(MQOpts):
    """The message descriptor. As in pymqi, Version defaults to MQMD_VERSION_1 and ``pack()``
    gives all 364 bytes (every field of version 2) whatever Version says; the queue manager
    reads the fields of the Version declared. ``wire()`` is the version's own length, as a
    frame carries it.

    A put or get sends ``wire()`` on every call, so the MD keeps it packed (``_w``) until a
    field changes; the MsgId and CorrelId an asynchronous put writes back, and a program
    sets before a get, are spliced into it rather than packing all 39 fields again.

    A new MD holds nothing of its own: the fields every get reads (``_HELD``) and the
    default ``_w`` are class attributes (set below), read without ``__getattr__``, and the
    rest read as their defaults through it. A get's answer (``received``) puts its own
    values of them in the MD's dict, so that they hide the class's."""

    _w: bytes | None  # the packed wire(); None: to be packed again

    def __init__(self, *, MsgId: Any = _UNSET, CorrelId: Any = _UNSET, **kw: Any) -> None:
        # MsgId and CorrelId: per message, so spliced, never part of the key (named here: no
        # pop from kw, and MD(CorrelId=...) finds kw empty)
        # MD() sets nothing: most MDs are made for a get, whose answer replaces them whole
        # (``received``), and a get reads the class's defaults of the fields it needs.
        if kw:
            d = self.__dict__
            key: tuple[Any, ...] | None = (type(self), *kw.items())
            try:
                cached = _KW_WIRE.get(key)  # type: ignore[arg-type]
            except TypeError:  # an unhashable value: packed as it is
                cached = key = None
            if cached is not None:  # the same fields as an MD made before: names known good
                d.update(kw)
                d["_w"] = cached
            else:
                self.set(**kw)
                if key is not None and d["_w"] is not None and len(_KW_WIRE) < 256:
                    _KW_WIRE[key] = d["_w"]
        if MsgId is not _UNSET:
            set_id(self, "MsgId", MSG_ID_AT, MsgId)
        if CorrelId is not _UNSET:  # set_id's work for a new MD, inline: a reply's MD and a matching get's name one
            d = self.__dict__
            w = self._w
            if w is not None and type(CorrelId) is bytes and len(CorrelId) == _ID_LEN:
                d["CorrelId"] = CorrelId
                d["_w"] = b"".join((w[:CORREL_ID_AT], CorrelId, w[CORREL_ID_AT + _ID_LEN:]))
            else:
                self.CorrelId = CorrelId

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if "_raw" in d:
            self._decode()
        d[name] = value
        w = self._w
        if w is not None:
            d["_w"] = _spliced(w, name, value)

    def __getattr__(self, name: str) -> Any:
        # Reached for a field only while the MD holds a got message's MQMD undecoded (the
        # field is read from the bytes: a reply's CorrelId=md.MsgId decodes nothing else), or
        # one not set since the MD was made (its default).
        d = self.__dict__
        raw = d.get("_raw")
        if raw is not None:
            at = _MD_AT.get(name)
            if at is not None:
                start, size, kind = at
                if kind == "l":
                    return int.from_bytes(raw[start:start + 4], "little", signed=True)
                return raw[start:start + size]
            if name == "StrucId":
                return raw[:4]
        else:  # a field not set since the MD was made (__init__) reads as its default
            try:
                return self._defaults[name]
            except KeyError:
                pass
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def received(self, raw: bytes, version: int) -> None:
        """Become the MQMD a get brought (a whole MQMD v2, as ``unpack`` reads it) with
        Version ``version``: its fields are decoded when one is first read or set, so a
        program that reads only the data never pays for the 39 of them. The class's
        attributes (``_HELD``, ``_w``) are given their values here, to hide the defaults:
        MsgId and CorrelId a responder reads for its reply, GroupId a get under syncpoint."""
        # the MD's own dict cleared and filled: cheaper than giving it a new one
        d = self.__dict__
        d.clear()
        d["_raw"] = raw
        if version != C.MQMD_VERSION_1:  # the class's Version: five entries fit a dict's first table
            d["Version"] = version
        d["_w"] = None
        d["MsgId"] = raw[_MSG_ID]
        d["CorrelId"] = raw[_CORREL_ID]
        d["GroupId"] = raw[_GROUP_ID]

    def _decode(self) -> None:
        d = self.__dict__
        raw = d.pop("_raw")
        version = self.Version
        lay = self._layouts
        assert lay is not None
        d.update(zip(_V2_NAMES, lay.structs[C.MQMD_VERSION_2].unpack_from(raw), strict=True))
        d["Version"] = version

    def pack(self) -> bytes:
        return self._pack_layout(C.MQMD_VERSION_2)

    def wire(self) -> bytes:
        """The MQMD in its own version's length (324 bytes for version 1, 364 for version 2)."""
        w = self._w
        if w is None:
            w = self._pack_layout(self.Version) if self.Version == C.MQMD_VERSION_1 else self.pack()
            self.__dict__["_w"] = w
        return w

    def unpack(self, buf: bytes | bytearray | memoryview) -> None:
        raw = buf if type(buf) is bytes else bytes(buf)
        if len(raw) >= C.MQMD_LENGTH_2 and raw[4:8] in _V1_V2 and raw[:4] == _MD_ID:
            # what a get brings (a whole MQMD v2): every field at once, MQOpts.unpack's result
            lay = self._layouts
            assert lay is not None
            d = self.__dict__
            d.update(zip(_V2_NAMES, lay.structs[C.MQMD_VERSION_2].unpack_from(raw), strict=True))
            d["_w"] = None
            return
        super().unpack(raw)
        self.__dict__["_w"] = None

    def _layout_for(self, version: int, length: int) -> int:
        # A full-length buffer is read whole, as pymqi unpacks all 364 bytes; a version 1
        # descriptor of 324 leaves the version 2 fields as they were.
        return C.MQMD_VERSION_2 if version in (1, 2) and length >= C.MQMD_LENGTH_2 else version


class GMO(MQOpts):
    """Get-message options (MQGMO version 4 by default, as in pymqi)."""


class PMO(MQOpts):
    """Put-message options (MQPMO version 3 by default, as in pymqi)."""


class OD(MQOpts):
    """Object descriptor (MQOD version 4 by default, as in pymqi)."""


class CNO(MQOpts):
    """Connect options (version 1: Options only)."""


def set_id(md: MD, name: str, at: int, value: Any) -> bytes | None:
    """``md.<name> = value`` for identifier ``name`` (MsgId, CorrelId) at offset ``at``: a
    program sets one per message, so a whole 24 bytes goes straight into the kept wire
    bytes; anything else takes ``__setattr__``'s way. Returns the MD's kept ``wire()``
    bytes (None: to be packed again)."""
    d = md.__dict__
    w = md._w
    if w is None or type(value) is not bytes or len(value) != _ID_LEN or "_raw" in d:
        setattr(md, name, value)
        return md._w
    d[name] = value
    w = d["_w"] = b"".join((w[:at], value, w[at + _ID_LEN:]))
    return w


def _spliced(w: bytes, name: str, value: Any) -> bytes | None:
    """``w`` (an MD's wire bytes) with field ``name`` set to ``value``; None when it cannot
    be done in place (Version, which changes the length; a value that does not fit, which
    ``pack`` then reports)."""
    at = _MD_AT.get(name)
    if at is None:
        return None
    start, size, kind = at
    if type(value) is bytes and len(value) == size and start + size <= len(w):  # an identifier, as a program sets one
        return w[:start] + value + w[start + size:]
    if kind == "l":
        if type(value) is not int or not -0x80000000 <= value <= 0x7FFFFFFF:
            return None
        raw = _I32(value)
    else:
        raw = value if type(value) is bytes else as_bytes(value)
        if len(raw) > size:
            return None
        if len(raw) < size:
            raw = raw.ljust(size, b"\0")
    if start + size > len(w):  # a version 2 field of a version 1 MD's 324 bytes
        return w
    return b"".join((w[:start], raw, w[start + size:]))


_I32 = struct.Struct("<i").pack


def _offsets() -> dict[str, tuple[int, int, str]]:
    out: dict[str, tuple[int, int, str]] = {}
    at = 0
    lay = MD._layouts
    assert lay is not None
    for name, kind, size in lay.versions[C.MQMD_VERSION_2]:
        width = 4 if kind == "l" else size
        if name not in ("Version", "StrucId"):
            out[name] = (at, width, kind)
        at += width
    return out


_V1_V2 = (C.MQMD_VERSION_1.to_bytes(4, "little"), C.MQMD_VERSION_2.to_bytes(4, "little"))
_MD_ID = as_bytes(C.MQMD_STRUC_ID)
_setup(MD, _from_md(), MQMD(), StrucId=as_bytes(C.MQMD_STRUC_ID), Version=C.MQMD_VERSION_1,
       Format=as_bytes(C.MQFMT_NONE))
_V2_NAMES = tuple(name for name, _, _ in MD._layouts.versions[C.MQMD_VERSION_2])  # type: ignore[union-attr]
_MD_AT = _offsets()
GROUP_ID_AT = _MD_AT["GroupId"][0]
# the identifiers' slices of a packed MQMD, made once (received takes three per get)
_MSG_ID, _CORREL_ID, _GROUP_ID = (slice(at, at + _ID_LEN) for at in (MSG_ID_AT, CORREL_ID_AT, GROUP_ID_AT))
for _name in _HELD:
    setattr(MD, _name, MD._defaults[_name])
MD._w = MD()._pack_layout(C.MQMD_VERSION_1)
MSG_FLAGS_AT = _MD_AT["MsgFlags"][0]  # MsgFlags's offset in a packed MQMD v2
_setup(GMO, _from_api(A.MQGMO), A.MQGMO(), StrucId=as_bytes(C.MQGMO_STRUC_ID), Version=C.MQGMO_VERSION_4)
_setup(PMO, _from_api(A.MQPMO), A.MQPMO(), StrucId=as_bytes(C.MQPMO_STRUC_ID), Version=C.MQPMO_VERSION_3)
_setup(OD, _from_api(A.MQOD), A.MQOD(), StrucId=as_bytes(C.MQOD_STRUC_ID), Version=C.MQOD_VERSION_4)
_setup(CNO, _from_api(A.MQCNO), A.MQCNO(), StrucId=as_bytes(C.MQCNO_STRUC_ID))


class SD(MQOpts):
    """Subscription descriptor (MQSD version 1), with pymqi's defaults: PubPriority
    MQPRI_PRIORITY_AS_Q_DEF, SubLevel 0 and MQCHARV CCSIDs 0 where IBM's MQSD_DEFAULT has
    MQPRI_PRIORITY_AS_PUBLISHED, 1 and MQCCSI_APPL. Its MQCHARV fields (ObjectString,
    SubName, SubUserData, SelectionString, ResObjectString) are set with ``set_vs`` and
    read with ``get_vs``."""


class SRO(MQOpts):
    """Subscription request options (MQSRO) for ``Subscription.sub_request`` (MQSUBRQ)."""


class CMHO(MQOpts):
    """Create-message-handle options (MQCMHO)."""


class DMHO(MQOpts):
    """Delete-message-handle options (MQDMHO)."""


class SMPO(MQOpts):
    """Set-message-property options (MQSMPO)."""


class IMPO(MQOpts):
    """Inquire-message-property options (MQIMPO)."""


class DMPO(MQOpts):
    """Delete-message-property options (MQDMPO)."""


class PD(MQOpts):
    """Property descriptor (MQPD)."""


_setup(SD, _from_api(A.MQSD), A.MQSD(), StrucId=as_bytes(C.MQSD_STRUC_ID), PubPriority=C.MQPRI_PRIORITY_AS_Q_DEF,
       SubLevel=0, **{f"{v}VSCCSID": 0 for v in ("ObjectString", "SubName", "SubUserData", "SelectionString",
                                                 "ResObjectString")})
_setup(SRO, _from_api(A.MQSRO), A.MQSRO(), StrucId=as_bytes(C.MQSRO_STRUC_ID))
_setup(CMHO, _from_api(A.MQCMHO), A.MQCMHO(), StrucId=as_bytes(C.MQCMHO_STRUC_ID))
_setup(DMHO, _from_api(A.MQDMHO), A.MQDMHO(), StrucId=as_bytes(C.MQDMHO_STRUC_ID))
_setup(SMPO, _from_api(A.MQSMPO), A.MQSMPO(), StrucId=as_bytes(C.MQSMPO_STRUC_ID))
_setup(IMPO, _from_api(A.MQIMPO), A.MQIMPO(), StrucId=as_bytes(C.MQIMPO_STRUC_ID))
_setup(DMPO, _from_api(A.MQDMPO), A.MQDMPO(), StrucId=as_bytes(C.MQDMPO_STRUC_ID))
_setup(PD, _from_api(A.MQPD), A.MQPD(), StrucId=as_bytes(C.MQPD_STRUC_ID))


class CD(MQOpts):
    """Channel definition (MQCD) for client connections: attributes only, no binary form.

    ferrymq reads ``ChannelName``, ``ConnectionName``, ``MaxMsgLength`` and
    ``HeartbeatInterval``; the others are kept for programs that set them.
    """

    _defaults: ClassVar[dict[str, Any]] = {
        "StrucId": b"CD  ", "ChannelName": b"", "Version": CMQXC.MQCD_CURRENT_VERSION,
        "ChannelType": CMQXC.MQCHT_SENDER, "TransportType": CMQXC.MQXPT_LU62, "Desc": b"", "QMgrName": b"",
        "XmitQName": b"", "ShortConnectionName": b"", "MCAName": b"", "ModeName": b"", "TpName": b"",
        "BatchSize": 50, "DiscInterval": 6000, "ShortRetryCount": 10, "ShortRetryInterval": 60,
        "LongRetryCount": 999_999_999, "LongRetryInterval": 1200, "SecurityExit": b"", "MsgExit": b"",
        "SendExit": b"", "ReceiveExit": b"", "SeqNumberWrap": 999_999_999, "MaxMsgLength": 4 * 1024 * 1024,
        "PutAuthority": CMQXC.MQPA_DEFAULT, "DataConversion": CMQXC.MQCDC_NO_SENDER_CONVERSION,
        "SecurityUserData": b"", "MsgUserData": b"", "SendUserData": b"", "ReceiveUserData": b"",
        "UserIdentifier": b"", "Password": b"", "MCAUserIdentifier": b"", "MCAType": CMQXC.MQMCAT_PROCESS,
        "ConnectionName": b"", "RemoteUserIdentifier": b"", "RemotePassword": b"", "MsgRetryExit": b"",
        "MsgRetryUserData": b"", "MsgRetryCount": 10, "MsgRetryInterval": 1000, "HeartbeatInterval": 300,
        "BatchInterval": 0, "NonPersistentMsgSpeed": CMQXC.MQNPMS_FAST, "LocalAddress": b"",
        "SSLCipherSpec": b"", "SSLPeerName": b"", "SSLClientAuth": CMQXC.MQSCA_REQUIRED,
        "KeepAliveInterval": -1, "BatchHeartbeat": 0,
        "HdrCompList": [CMQXC.MQCOMPRESS_NONE, CMQXC.MQCOMPRESS_NOT_AVAILABLE],
        "MsgCompList": [CMQXC.MQCOMPRESS_NONE] + [CMQXC.MQCOMPRESS_NOT_AVAILABLE] * 15,
        "CLWLChannelRank": 0, "CLWLChannelPriority": 0, "CLWLChannelWeight": 50, "ChannelMonitoring": 0,
        "ChannelStatistics": 0, "SharingConversations": 10, "PropertyControl": 0, "MaxInstances": 999_999_999,
        "MaxInstancesPerClient": 999_999_999, "ClientChannelWeight": 0, "ConnectionAffinity": 1,
        "BatchDataLimit": 5000, "UseDLQ": 2, "DefReconnect": 0, "CertificateLabel": b"",
    }


class SCO(MQOpts):
    """TLS configuration options (MQSCO): KeyRepository, CertificateLabel and KeyRepoPassword
    are used (docs/security.md, "TLS")."""

    _defaults: ClassVar[dict[str, Any]] = {
        "StrucId": as_bytes(C.MQSCO_STRUC_ID), "Version": C.MQSCO_VERSION_1, "KeyRepository": b"",
        "CryptoHardware": b"", "AuthInfoRecCount": 0, "AuthInfoRecOffset": 0, "KeyResetCount": 0,
        "FipsRequired": 0, "EncryptionPolicySuiteB": [1, 0, 0, 0], "CertificateValPolicy": 0,
        "CertificateLabel": b"", "KeyRepoPassword": b"",
    }


class STS(MQOpts):
    """Status information (MQSTS) that MQSTAT fills (``QueueManager.stat``, a ferrymq extra:
    pymqi has no MQSTAT): attributes only, no binary form."""

    _defaults: ClassVar[dict[str, Any]] = {
        "StrucId": as_bytes(C.MQSTS_STRUC_ID), "Version": C.MQSTS_VERSION_2, "CompCode": C.MQCC_OK,
        "Reason": C.MQRC_NONE, "PutSuccessCount": 0, "PutWarningCount": 0, "PutFailureCount": 0,
        "ObjectType": C.MQOT_Q, "ObjectName": b"", "ObjectQMgrName": b"", "ResolvedObjectName": b"",
        "ResolvedQMgrName": b"", "ObjectString": b"", "SubName": b"", "OpenOptions": 0, "SubOptions": 0,
    }


def text(value: bytes | bytearray | str) -> str:
    """A character field as text: up to the first NUL, trailing blanks dropped."""
    raw = as_bytes(value)
    nul = raw.find(b"\0")
    if nul >= 0:
        raw = raw[:nul]
    return raw.rstrip(b" ").decode("latin-1")
