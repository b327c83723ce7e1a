"""A message handle (MQCRTMH): the properties of one message as an application builds or
reads them with MQSETMP, MQINQMP and MQDLTMP, with IBM's reason codes.

ferrymq keeps message handles in the application's process: a handle's properties travel
with MQPUT (PMO NewMsgHandle / OriginalMsgHandle) and come back with MQGET (GMO MsgHandle),
so the property calls never cross the network. Every refusal raises MQError before the
handle changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties import rules
from ferrymq.properties.model import DEFAULT_PD, TYPES, Descriptor, Property, PropertySet, Value, coerce

_SMPO = (C.MQSMPO_SET_FIRST, C.MQSMPO_SET_PROP_UNDER_CURSOR, C.MQSMPO_SET_PROP_AFTER_CURSOR,
         C.MQSMPO_SET_PROP_BEFORE_CURSOR, C.MQSMPO_APPEND_PROPERTY)
_IMPO_KNOWN = (C.MQIMPO_CONVERT_TYPE | C.MQIMPO_CONVERT_VALUE | C.MQIMPO_INQ_NEXT | C.MQIMPO_INQ_PROP_UNDER_CURSOR
               | C.MQIMPO_QUERY_LENGTH)
_FIXED_LENGTH = {C.MQTYPE_NULL: 0, C.MQTYPE_BOOLEAN: 4, C.MQTYPE_INT8: 1, C.MQTYPE_INT16: 2, C.MQTYPE_INT32: 4,
                 C.MQTYPE_INT64: 8, C.MQTYPE_FLOAT32: 4, C.MQTYPE_FLOAT64: 8}


class ValueTooBig(MQError):
    """MQINQMP: the value does not fit the caller's Value area. IBM completes with
    MQCC_WARNING and MQRC_PROPERTY_VALUE_TOO_BIG, returns as much of the value as fits
    (``inquired``, whose ``data_length`` is the full length) and leaves the property under
    the cursor, so MQIMPO_INQ_PROP_UNDER_CURSOR with a bigger area reads it whole."""

    def __init__(self, inquired: Inquired, detail: str) -> None:
        super().__init__(C.MQCC_WARNING, C.MQRC_PROPERTY_VALUE_TOO_BIG, detail)
        self.inquired = inquired
        self.data_length = inquired.data_length


@dataclass(frozen=True, slots=True)
class Inquired:
    """What MQINQMP returns: the property's name (ReturnedName), type, value, descriptor
    and DataLength."""

    name: str
    type: int
    value: Value
    pd: Descriptor
    data_length: int


def value_length(ptype: int, value: Value) -> int:
    """DataLength: the bytes the value takes in the MQI (strings in UTF-8)."""
    if ptype in _FIXED_LENGTH:
        return _FIXED_LENGTH[ptype]
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    return len(value) if isinstance(value, bytes) else 0


class MessageHandleState:
    """The properties behind one message handle, with the inquiry cursor."""

    __slots__ = ("_cursor", "_pattern", "md_fields", "props", "validate")

    def __init__(self, options: int = C.MQCMHO_DEFAULT_VALIDATION) -> None:
        if options not in (C.MQCMHO_DEFAULT_VALIDATION, C.MQCMHO_VALIDATE, C.MQCMHO_NO_VALIDATION):
            raise failed(C.MQRC_CMHO_ERROR, f"MQCMHO Options {options} is not one of DEFAULT_VALIDATION, VALIDATE, "
                                            "NO_VALIDATION")
        self.validate = options != C.MQCMHO_NO_VALIDATION
        self.props = PropertySet()
        self.md_fields: dict[str, Value] = {}  # Root.MQMD.* of the message last got into the handle
        self._cursor: str | None = None  # the name of the property under the cursor
        self._pattern: str | None = None  # the name MQINQMP was last called with

    # -- MQSETMP ---------------------------------------------------------------------------
    def set(self, name: str, value: object, ptype: int, pd: Descriptor = DEFAULT_PD,
            options: int = C.MQSMPO_SET_FIRST) -> None:
        """MQSETMP.

        Raises:
            MQError: MQRC_SMPO_ERROR, MQRC_PD_ERROR (a Context IBM does not define),
                MQRC_PROPERTY_NAME_LENGTH_ERR, MQRC_PROPERTY_NAME_ERROR,
                MQRC_PROPERTY_TYPE_ERROR (a Type that is not an MQTYPE_*, a value not of
                that type, or the wrong type for a JMS or Root.MQMD. name),
                MQRC_PROPERTY_NOT_AVAILABLE (no property under the cursor).
        """
        if options not in _SMPO:
            raise failed(C.MQRC_SMPO_ERROR, f"MQSMPO Options {options} is not one option")
        if pd.context not in (C.MQPD_NO_CONTEXT, C.MQPD_USER_CONTEXT):
            raise failed(C.MQRC_PD_ERROR, f"MQPD Context {pd.context} is not NO_CONTEXT or USER_CONTEXT")
        rules.check_length(name)
        if self.validate:
            rules.check_name(name)
        if ptype not in TYPES:
            raise failed(C.MQRC_PROPERTY_TYPE_ERROR, f"Type {ptype} is not an MQTYPE_* value")
        need = rules.reserved_type(name)
        if need is not None and ptype != need:
            raise failed(C.MQRC_PROPERTY_TYPE_ERROR, f"{name} is set with type {need}, not {ptype}")
        try:
            v = coerce(ptype, value)
        except ValueError as exc:
            raise failed(C.MQRC_PROPERTY_TYPE_ERROR, f"{name}: {exc}") from None
        key = self.stored_name(name)
        prop = Property(ptype, v, pd)
        if options in (C.MQSMPO_SET_FIRST, C.MQSMPO_APPEND_PROPERTY):
            self.props.put(key, prop)
            return
        if self._cursor is None or self._cursor not in self.props:
            raise failed(C.MQRC_PROPERTY_NOT_AVAILABLE, "no property is under the cursor")
        if options == C.MQSMPO_SET_PROP_UNDER_CURSOR:
            if key != self._cursor:
                raise failed(C.MQRC_PROPERTY_NAME_ERROR, f"{name!r} is not the property under the cursor")
            self.props.put(key, prop)
            return
        items = [(k, p) for k, p in self.props.typed_items() if k != key]
        at = next(i for i, (k, _) in enumerate(items) if k == self._cursor)
        items.insert(at + 1 if options == C.MQSMPO_SET_PROP_AFTER_CURSOR else at, (key, prop))
        self.props = PropertySet()
        for k, p in items:
            self.props.put(k, p)

    @staticmethod
    def stored_name(name: str) -> str:
        """The name a property is kept under (a JMS header name or synonym resolved)."""
        jms = rules.JMS_NAMES.get(name)
        if jms is not None and jms[1] is not None:
            return jms[1]
        return rules.SYNONYMS.get(name) or rules.canonical(name)

    def forget_cursor(self) -> None:
        """The handle went with an MQPUT (or MQGET): IBM resets the property cursor."""
        self._cursor = self._pattern = None

    # -- MQINQMP ---------------------------------------------------------------------------
    def inquire(self, name: str, options: int = C.MQIMPO_INQ_FIRST, ptype: int = C.MQTYPE_AS_SET,
                value_buffer: int | None = None) -> Inquired:
        """MQINQMP. ``value_buffer`` is the Value area's length (None: unlimited).

        Raises:
            MQError: MQRC_IMPO_ERROR, MQRC_PROPERTY_NAME_LENGTH_ERR, MQRC_PROPERTY_NAME_ERROR,
                MQRC_PROPERTY_NOT_AVAILABLE (no (further) match), ValueTooBig (a warning:
                the value truncated, the property under the cursor), and the conversion reasons
                of rules.convert.
        """
        if options & ~_IMPO_KNOWN or (options & C.MQIMPO_INQ_NEXT and options & C.MQIMPO_INQ_PROP_UNDER_CURSOR):
            raise failed(C.MQRC_IMPO_ERROR, f"MQIMPO Options 0x{options:X} are not valid")
        rules.check_length(name)
        if name not in rules.SYNONYMS:  # MQTopicString is inquired, never set
            rules.check_name(name, wildcard=True)
        found: tuple[str, Property] | None = None
        if name.startswith(rules.ROOT_MQMD) and name[len(rules.ROOT_MQMD):] in rules.MQMD_FIELDS:
            field = name[len(rules.ROOT_MQMD):]
            if field in self.md_fields:
                found = (name, Property(rules.MQMD_FIELDS[field], self.md_fields[field]))
        elif options & C.MQIMPO_INQ_PROP_UNDER_CURSOR:
            if self._cursor is not None and self._cursor in self.props:
                found = (self._cursor, self.props.property(self._cursor))
        else:
            key = self.stored_name(name)
            names = list(self.props)
            start = 0
            if options & C.MQIMPO_INQ_NEXT and self._pattern == name and self._cursor in self.props:
                start = names.index(self._cursor) + 1  # type: ignore[arg-type]
            for k in names[start:]:
                if rules.matches(key, k):
                    found = (k, self.props.property(k))
                    break
        if found is None:
            raise failed(C.MQRC_PROPERTY_NOT_AVAILABLE, f"no {'further ' if options & C.MQIMPO_INQ_NEXT else ''}"
                                                        f"property matches {name!r}")
        pname, prop = found
        rtype, rvalue = prop.type, prop.value
        if options & C.MQIMPO_CONVERT_TYPE:
            rtype, rvalue = rules.convert(prop.type, prop.value, ptype)
        length = value_length(rtype, rvalue)
        if not pname.startswith(rules.ROOT_MQMD):
            self._cursor, self._pattern = pname, name
        returned = rules.RETURNED_NAMES.get(pname, pname)
        if value_buffer is not None and length > value_buffer and not options & C.MQIMPO_QUERY_LENGTH:
            part = Inquired(returned, rtype, _truncated(rvalue, value_buffer), prop.pd, length)
            raise ValueTooBig(part, f"{returned} needs {length} bytes, the Value area has {value_buffer}")
        return Inquired(returned, rtype, rvalue, prop.pd, length)

    # -- MQDLTMP ---------------------------------------------------------------------------
    def delete(self, name: str, options: int = C.MQDMPO_DEL_FIRST) -> MQError | None:
        """MQDLTMP. Returns the warning (MQRC_PROPERTY_NOT_AVAILABLE) when there was no
        such property.

        Raises:
            MQError: MQRC_DMPO_ERROR, MQRC_PROPERTY_NAME_LENGTH_ERR, MQRC_PROPERTY_NAME_ERROR.
        """
        if options not in (C.MQDMPO_DEL_FIRST, C.MQDMPO_DEL_PROP_UNDER_CURSOR):
            raise failed(C.MQRC_DMPO_ERROR, f"MQDMPO Options {options} is not valid")
        rules.check_length(name)
        if "%" in name:
            raise failed(C.MQRC_PROPERTY_NAME_ERROR, "wildcards are not allowed in MQDLTMP")
        if self.validate:
            rules.check_name(name)
        key = self.stored_name(name)
        if options == C.MQDMPO_DEL_PROP_UNDER_CURSOR and key != self._cursor:
            return MQError(C.MQCC_WARNING, C.MQRC_PROPERTY_NOT_AVAILABLE, f"{name!r} is not under the cursor")
        if key not in self.props:
            return MQError(C.MQCC_WARNING, C.MQRC_PROPERTY_NOT_AVAILABLE, f"the message has no property {name!r}")
        del self.props[key]
        return None

    # -- the message the handle travels with -------------------------------------------------
    def outgoing(self) -> PropertySet:
        """The properties a put carries: everything but the MQMD-derived names."""
        out = PropertySet()
        for k, p in self.props.typed_items():
            if not k.startswith(rules.ROOT_MQMD) and k not in rules.JMS_NAMES:
                out.put(k, p)
        return out

    def received(self, props: PropertySet | None, md_fields: dict[str, Value] | None = None) -> None:
        """A get filled the handle: its old properties and cursor are gone."""
        self.props = props.copy() if props is not None else PropertySet()
        self.md_fields = dict(md_fields or {})
        self._cursor = self._pattern = None


def _truncated(value: Value, room: int) -> Value:
    """As much of a value as fits ``room`` bytes of the Value area (strings cut on a
    character boundary); None when not even a fixed-size value fits."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")[: max(room, 0)].decode("utf-8", "ignore")
    if isinstance(value, bytes):
        return value[: max(room, 0)]
    return None


def md_fields_of(md: object) -> dict[str, Value]:
    """Root.MQMD.* values of an MQMD (any object with the snake_case MQMD attributes)."""
    out: dict[str, Value] = {}
    for field in rules.MQMD_FIELDS:
        attr = "".join("_" + c.lower() if c.isupper() else c for c in field).lstrip("_")
        value = getattr(md, attr, None)
        if value is not None:
            out[field] = value
    return out


