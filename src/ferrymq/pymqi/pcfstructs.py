"""pymqi's PCF parameter structures (``CFH``, ``CFST``, ``CFIN``, ``CFIL``, ``CFSL``,
``CFBS``, ``CFGR``, ``CFIF``, ``CFSF``, ``CFBF``, ``CFIN64``, ``CFIL64``) and the decoding of
a whole PCF message into pymqi's dictionary (``PCFExecute.unpack``).

As in pymqi, each structure is built with keyword fields, its variable part sized when it is
made (``CFST(Parameter=..., String=b"QM1")`` has StringLength 3 and StrucLength 24), and packs
as the application's native 64-bit little-endian layout with strings NUL-padded to a multiple
of 4. Decoding keeps character values as the bytes that arrived (blank- or NUL-padded), the way
pymqi hands them to programs; groups (MQCFGR) become lists of dictionaries and filters
(MQCFIF/MQCFSF/MQCFBF) ``(operator, value)`` pairs.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pymqi.errors import MQMIError, PYIFError

# One field: (name, default, struct format, repeat). A name starting with "_" is padding.
Spec = tuple[str, Any, str, int]


def padded_count(count: int, boundary: int = 4) -> int:
    """``count`` rounded up to a multiple of ``boundary`` (pymqi's helper of the same name)."""
    return count + (-count % boundary)


def _chars(value: Any) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


class PCFStructure:
    """The common behaviour: fields as attributes and items, ``get``/``set``, ``pack``,
    ``unpack`` and ``get_length``, over a layout fixed when the structure is made."""

    _fields: list[Spec]

    def __init__(self, fields: list[Spec], **kw: Any) -> None:
        object.__setattr__(self, "_fields", fields)
        for name, default, _, _ in fields:
            if not name.startswith("_"):
                object.__setattr__(self, name, list(default) if isinstance(default, list) else default)
        self.set(**kw)

    def _format(self, order: str = "<") -> str:
        return order + "".join(fmt * repeat for _, _, fmt, repeat in self._fields)

    def get_length(self) -> int:
        """The length of the packed structure."""
        return struct.calcsize(self._format())

    def set(self, **kw: Any) -> None:
        """Set fields by name.

        Raises:
            AttributeError: a name that is not a field of this structure (as pymqi).
        """
        names = {name for name, _, _, _ in self._fields}
        for name, value in kw.items():
            if name not in names or name.startswith("_"):
                raise AttributeError(f"{type(self).__name__} has no field {name!r}")
            object.__setattr__(self, name, value)

    def get(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name, _, _, _ in self._fields if not name.startswith("_")}

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __setitem__(self, name: str, value: Any) -> None:
        self.set(**{name: value})

    def __iter__(self) -> Iterator[str]:
        return iter(self.get())

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not fields; lets type checkers accept the fields.
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get().items())})"

    def _values(self) -> list[Any]:
        out: list[Any] = []
        for name, _, fmt, repeat in self._fields:
            if name.startswith("_"):
                continue
            value = getattr(self, name)
            items = value if isinstance(value, list) else [value]
            if len(items) != repeat:
                raise PYIFError(f"{type(self).__name__}.{name} holds {len(items)} values; the structure was made "
                                f"for {repeat}")
            out.extend(_chars(v) if fmt.endswith("s") else v for v in items)
        return out

    def pack(self, order: str = "<") -> bytes:
        """The structure's bytes (``order`` ``>`` for a big-endian receiver).

        Raises:
            PYIFError: a value that does not fit its field.
        """
        try:
            return struct.pack(self._format(order), *self._values())
        except struct.error as exc:
            raise PYIFError(f"{type(self).__name__}: {exc}") from None

    def unpack(self, buff: bytes, order: str = "<") -> None:
        """Fill the fields from ``buff`` (a shorter buffer is read as if NUL-padded, as pymqi does)."""
        fmt = self._format(order)
        size = struct.calcsize(fmt)
        values = iter(struct.unpack(fmt, bytes(buff[:size]).ljust(size, b"\0")))
        for name, default, _, repeat in self._fields:
            if name.startswith("_"):
                continue
            got = [next(values) for _ in range(repeat)]
            object.__setattr__(self, name, got if isinstance(default, list) else got[0])


class CFH(PCFStructure):
    """MQCFH, the PCF header."""

    def __init__(self, **kw: Any) -> None:
        super().__init__([("Type", F.MQCFT_COMMAND, "i", 1), ("StrucLength", F.MQCFH_STRUC_LENGTH, "i", 1),
                          ("Version", F.MQCFH_VERSION_1, "i", 1), ("Command", F.MQCMD_NONE, "i", 1),
                          ("MsgSeqNumber", 1, "i", 1), ("Control", F.MQCFC_LAST, "i", 1),
                          ("CompCode", C.MQCC_OK, "i", 1), ("Reason", C.MQRC_NONE, "i", 1),
                          ("ParameterCount", 0, "i", 1)], **kw)


class CFIN(PCFStructure):
    """MQCFIN, an integer parameter."""

    def __init__(self, **kw: Any) -> None:
        super().__init__([("Type", F.MQCFT_INTEGER, "i", 1), ("StrucLength", F.MQCFIN_STRUC_LENGTH, "i", 1),
                          ("Parameter", 0, "i", 1), ("Value", 0, "i", 1)], **kw)


class CFIN64(PCFStructure):
    """MQCFIN64, a 64-bit integer parameter."""

    def __init__(self, **kw: Any) -> None:
        super().__init__([("Type", F.MQCFT_INTEGER64, "i", 1), ("StrucLength", F.MQCFIN64_STRUC_LENGTH, "i", 1),
                          ("Parameter", 0, "i", 1), ("_Reserved", 0, "4x", 1), ("Value", 0, "q", 1)], **kw)


class CFIF(PCFStructure):
    """MQCFIF, an integer filter: WHERE(Parameter Operator FilterValue)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__([("Type", F.MQCFT_INTEGER_FILTER, "i", 1), ("StrucLength", F.MQCFIF_STRUC_LENGTH, "i", 1),
                          ("Parameter", 0, "i", 1), ("Operator", 0, "i", 1), ("FilterValue", 0, "i", 1)], **kw)


class CFGR(PCFStructure):
    """MQCFGR, a group owning the next ParameterCount parameters."""

    def __init__(self, **kw: Any) -> None:
        super().__init__([("Type", F.MQCFT_GROUP, "i", 1), ("StrucLength", F.MQCFGR_STRUC_LENGTH, "i", 1),
                          ("Parameter", 0, "i", 1), ("ParameterCount", 0, "i", 1)], **kw)


class CFIL(PCFStructure):
    """MQCFIL, an integer list (``Values``)."""

    def __init__(self, **kw: Any) -> None:
        values = list(kw.pop("Values", []))
        count = kw.pop("Count", len(values))
        super().__init__([("Type", F.MQCFT_INTEGER_LIST, "i", 1),
                          ("StrucLength", F.MQCFIL_STRUC_LENGTH_FIXED + 4 * count, "i", 1),
                          ("Parameter", 0, "i", 1), ("Count", count, "i", 1), ("Values", values, "i", count)], **kw)


class CFIL64(PCFStructure):
    """MQCFIL64, a 64-bit integer list (``Values``)."""

    def __init__(self, **kw: Any) -> None:
        values = list(kw.pop("Values", []))
        count = kw.pop("Count", len(values))
        super().__init__([("Type", F.MQCFT_INTEGER64_LIST, "i", 1),
                          ("StrucLength", F.MQCFIL64_STRUC_LENGTH_FIXED + 8 * count, "i", 1),
                          ("Parameter", 0, "i", 1), ("Count", count, "i", 1), ("Values", values, "q", count)], **kw)


class CFST(PCFStructure):
    """MQCFST, a string parameter (``String``, bytes; str is sent as UTF-8)."""

    def __init__(self, **kw: Any) -> None:
        string = _chars(kw.pop("String", b""))
        length = kw.pop("StringLength", len(string))
        width = padded_count(length)
        super().__init__([("Type", F.MQCFT_STRING, "i", 1), ("StrucLength", F.MQCFST_STRUC_LENGTH_FIXED + width, "i", 1),
                          ("Parameter", 0, "i", 1), ("CodedCharSetId", C.MQCCSI_DEFAULT, "i", 1),
                          ("StringLength", length, "i", 1), ("String", string, f"{width}s", 1)], **kw)


class CFSL(PCFStructure):
    """MQCFSL, a string list (``Strings``), each string padded to the longest (rounded to 4)."""

    def __init__(self, **kw: Any) -> None:
        strings = [_chars(s) for s in kw.pop("Strings", [])]
        length = kw.pop("StringLength", max((len(s) for s in strings), default=0))
        count = kw.pop("Count", len(strings))
        width = padded_count(length) if count else 0
        super().__init__([("Type", F.MQCFT_STRING_LIST, "i", 1),
                          ("StrucLength", F.MQCFSL_STRUC_LENGTH_FIXED + width * len(strings), "i", 1),
                          ("Parameter", 0, "i", 1), ("CodedCharSetId", C.MQCCSI_DEFAULT, "i", 1),
                          ("Count", count, "i", 1), ("StringLength", width, "i", 1),
                          ("Strings", strings or [b""], f"{width}s", count or 1)], **kw)


class CFBS(PCFStructure):
    """MQCFBS, a byte-string parameter (``String``)."""

    def __init__(self, **kw: Any) -> None:
        string = _chars(kw.pop("String", b""))
        length = kw.pop("StringLength", len(string))
        width = padded_count(length)
        super().__init__([("Type", F.MQCFT_BYTE_STRING, "i", 1),
                          ("StrucLength", F.MQCFBS_STRUC_LENGTH_FIXED + width, "i", 1), ("Parameter", 0, "i", 1),
                          ("StringLength", length, "i", 1), ("String", string, f"{width}s", 1)], **kw)


class CFSF(PCFStructure):
    """MQCFSF, a string filter: WHERE(Parameter Operator FilterValue)."""

    def __init__(self, **kw: Any) -> None:
        value = _chars(kw.pop("FilterValue", b""))
        length = kw.pop("FilterValueLength", len(value))
        width = padded_count(length)
        super().__init__([("Type", F.MQCFT_STRING_FILTER, "i", 1),
                          ("StrucLength", F.MQCFSF_STRUC_LENGTH_FIXED + width, "i", 1), ("Parameter", 0, "i", 1),
                          ("Operator", 0, "i", 1), ("CodedCharSetId", C.MQCCSI_DEFAULT, "i", 1),
                          ("FilterValueLength", length, "i", 1), ("FilterValue", value, f"{width}s", 1)], **kw)


class CFBF(PCFStructure):
    """MQCFBF, a byte-string filter: WHERE(Parameter Operator FilterValue)."""

    def __init__(self, **kw: Any) -> None:
        value = _chars(kw.pop("FilterValue", b""))
        length = kw.pop("FilterValueLength", len(value))
        width = padded_count(length)
        super().__init__([("Type", F.MQCFT_BYTE_STRING_FILTER, "i", 1),
                          ("StrucLength", F.MQCFBF_STRUC_LENGTH_FIXED + width, "i", 1), ("Parameter", 0, "i", 1),
                          ("Operator", 0, "i", 1), ("FilterValueLength", length, "i", 1),
                          ("FilterValue", value, f"{width}s", 1)], **kw)


def _int(message: bytes, at: int, order: str) -> int:
    if len(message) < at + 4:
        raise PYIFError(f"PCF message ends at {len(message)} inside a parameter at offset {at}")
    (value,) = struct.unpack_from(order + "i", message, at)
    return int(value)


def _sized(message: bytes, at: int, order: str) -> PCFStructure:
    """An empty structure of the type at ``at``, sized by the lengths its fixed part gives."""
    kind = _int(message, at, order)
    if kind == F.MQCFT_STRING:
        return CFST(StringLength=_int(message, at + 16, order))
    if kind == F.MQCFT_STRING_LIST:
        return CFSL(Count=_int(message, at + 16, order), StringLength=_int(message, at + 20, order),
                    StrucLength=_int(message, at + 4, order))
    if kind == F.MQCFT_INTEGER_LIST:
        return CFIL(Count=_int(message, at + 12, order))
    if kind == F.MQCFT_INTEGER64_LIST:
        return CFIL64(Count=_int(message, at + 12, order))
    if kind == F.MQCFT_BYTE_STRING:
        return CFBS(StringLength=_int(message, at + 12, order))
    if kind == F.MQCFT_STRING_FILTER:
        return CFSF(FilterValueLength=_int(message, at + 20, order))
    if kind == F.MQCFT_BYTE_STRING_FILTER:
        return CFBF(FilterValueLength=_int(message, at + 16, order))
    fixed = {F.MQCFT_INTEGER: CFIN, F.MQCFT_INTEGER64: CFIN64, F.MQCFT_GROUP: CFGR, F.MQCFT_INTEGER_FILTER: CFIF}
    if kind not in fixed:
        raise NotImplementedError(f"Unpack for type ({kind},) not implemented")
    return fixed[kind]()


def _value(p: PCFStructure) -> Any:
    """The value pymqi reports for a parameter."""
    if isinstance(p, (CFST, CFBS)):
        return p.String
    if isinstance(p, CFSL):
        return p.Strings
    if isinstance(p, (CFIF, CFSF, CFBF)):
        return (p.Operator, p.FilterValue)
    if isinstance(p, (CFIL, CFIL64)):
        return p.Values
    return p.Value


def unpack(message: bytes, order: str = "<") -> tuple[dict[int, Any], CFH]:
    """A PCF message as pymqi's ``PCFExecute.unpack`` gives it: ``({parameter: value}, CFH)``.

    Raises:
        MQMIError: the header carries a CompCode other than MQCC_OK (a failed response).
        NotImplementedError: a parameter type pymqi does not decode either.
    """
    header = CFH()
    header.unpack(message[: F.MQCFH_STRUC_LENGTH], order)
    if header.CompCode:
        raise MQMIError(header.CompCode, header.Reason)
    result: dict[int, Any] = {}
    remaining, cursor = header.ParameterCount, F.MQCFH_STRUC_LENGTH
    group: dict[int, Any] | None = None
    in_group = 0
    while remaining > 0:
        if in_group == 0:
            group = None
        if group is not None:
            in_group -= 1
        param = _sized(message, cursor, order)
        param.unpack(message[cursor:], order)
        remaining -= 1
        cursor += param.StrucLength
        if isinstance(param, CFGR):
            in_group = param.ParameterCount
            remaining += in_group
            group = {}
            result.setdefault(param.Parameter, []).append(group)
            continue
        (group if group is not None else result)[param.Parameter] = _value(param)
    return result, header
