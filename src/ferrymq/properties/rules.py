"""IBM's rules for property names (MQSETMP, MQINQMP, MQDLTMP) and for converting a
property's type on MQINQMP with MQIMPO_CONVERT_TYPE.

Names: 1..4095 characters (else MQRC_PROPERTY_NAME_LENGTH_ERR); dot-separated parts, each
a Java identifier; only characters of the Basic Multilingual Plane (IBM: no surrogates, no
4-byte UTF-8); not an SQL keyword in the last part; nothing starting ``mq`` in any case
(reserved to the queue manager) except ``mq_usr.``; nothing starting ``usr.JMS``; ``JMS*``
only for the JMS header names IBM maps, ``Root.MQMD.*`` only for MQMD fields, each with its
own type (else MQRC_PROPERTY_TYPE_ERROR); no first part ``Body`` or ``Root`` otherwise.
Everything else is MQRC_PROPERTY_NAME_ERROR.

What a put accepts (``check_carried``) is less: IBM validates names at MQSETMP (unless the
handle was made with MQCMHO_NO_VALIDATION) and puts what a handle holds, so a put refuses
only what no message can carry, the property folders of an MQRFH2 being the form every
getter without a handle receives: an empty name, a part that is not a folder, group or
element name (``rfh2_folders.ELEMENT_NAME``), more than 16 parts (a folder's nesting), a character
outside the Basic Multilingual Plane or a lone surrogate (MQRC_PROPERTY_NAME_ERROR; a name
past 4095 characters MQRC_PROPERTY_NAME_LENGTH_ERR), and a string value UTF-8 cannot encode
(a lone surrogate: MQRC_PROP_VALUE_NOT_CONVERTED), which MQSETMP accepts as IBM does (it
keeps a value in the CCSID it was given, and converts it only when the message is put).

Conversions (MQIMPO_CONVERT_TYPE; anything not listed is MQRC_PROP_CONV_NOT_SUPPORTED, a
string that does not read as the requested type is MQRC_PROP_NUMBER_FORMAT_ERROR):

| property | may be returned as |
|---|---|
| BOOLEAN | STRING ("TRUE"/"FALSE"), INT8..INT64 (1/0) |
| INT8 / INT16 / INT32 | any wider integer, STRING (decimal) |
| INT64 | STRING |
| FLOAT32 | FLOAT64, STRING |
| FLOAT64 | STRING |
| STRING | BOOLEAN ("TRUE"/"FALSE" any case, "1"/"0"), INT8..INT64, FLOAT32, FLOAT64 |
| BYTE_STRING | — |
| NULL | returned as NULL whatever is requested (there is no value to convert) |
"""

from __future__ import annotations

import re

from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties.model import INT_BITS, Property, Value, coerce
from ferrymq.wire.rfh2_folders import ELEMENT_NAME, MAX_DEPTH, MAX_ELEMENTS

SQL_WORDS = frozenset({"NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE"})

# JMS header names an application may set as properties, their type and where they live.
JMS_NAMES: dict[str, tuple[int, str | None]] = {
    "JMSType": (C.MQTYPE_STRING, "mcd.Type"),
    "JMSDestination": (C.MQTYPE_STRING, "jms.Dst"),
    "JMSReplyTo": (C.MQTYPE_STRING, "jms.Rto"),
    "JMSCorrelationID": (C.MQTYPE_STRING, "jms.Cid"),
    "JMSDeliveryMode": (C.MQTYPE_INT32, "jms.Dlv"),
    "JMSPriority": (C.MQTYPE_INT32, "jms.Pri"),
    "JMSExpiration": (C.MQTYPE_INT64, "jms.Exp"),
    "JMSTimestamp": (C.MQTYPE_INT64, "jms.Tms"),
    "JMSXGroupID": (C.MQTYPE_STRING, "jms.Gid"),
    "JMSXGroupSeq": (C.MQTYPE_INT32, "jms.Seq"),
    # Taken from the MQMD by the receiver: accepted on a handle, never sent as properties.
    "JMSRedelivered": (C.MQTYPE_BOOLEAN, None),
    "JMSXAppID": (C.MQTYPE_STRING, None),
    "JMSXDeliveryCount": (C.MQTYPE_INT32, None),
    "JMSXUserID": (C.MQTYPE_STRING, None),
}

# MQINQMP returns a property that has a well-known synonym under that synonym (once): the
# JMS header name for jms./mcd. fields, and the publish/subscribe names for the mqps folder
# the queue manager writes on a publication's copy: MQTopicString (mqps.Top), MQSubUserData
# (mqps.Sud), MQIsRetained (mqps.Ret). (usr.x comes back as x.)
RETURNED_NAMES: dict[str, str] = {stored: jms for jms, (_t, stored) in JMS_NAMES.items() if stored is not None}
RETURNED_NAMES.update({"mqps.Top": "MQTopicString", "mqps.Sud": "MQSubUserData", "mqps.Ret": "MQIsRetained"})
SYNONYMS: dict[str, str] = {v: k for k, v in RETURNED_NAMES.items()}

_S, _I, _B = C.MQTYPE_STRING, C.MQTYPE_INT32, C.MQTYPE_BYTE_STRING
MQMD_FIELDS: dict[str, int] = {
    "Report": _I, "MsgType": _I, "Expiry": _I, "Feedback": _I, "Encoding": _I, "CodedCharSetId": _I,
    "Format": _S, "Priority": _I, "Persistence": _I, "MsgId": _B, "CorrelId": _B, "BackoutCount": _I,
    "ReplyToQ": _S, "ReplyToQMgr": _S, "UserIdentifier": _S, "AccountingToken": _B, "ApplIdentityData": _S,
    "PutApplType": _I, "PutApplName": _S, "PutDate": _S, "PutTime": _S, "ApplOriginData": _S, "GroupId": _B,
    "MsgSeqNumber": _I, "Offset": _I, "MsgFlags": _I, "OriginalLength": _I,
}
ROOT_MQMD = "Root.MQMD."


def _identifier(part: str) -> bool:
    if not part or not (part[0].isalpha() or part[0] in "_$"):
        return False
    return all(c.isalnum() or c in "_$" for c in part[1:])


MAX_MESSAGE_PROPERTIES = MAX_ELEMENTS
"""At most this many properties a message (a handle's and an MQRFH2's together), as many as
the folders of one MQRFH2 chain may hold elements: the bound keeps what one put or get
costs the queue manager's loop small (MQRC_PROPERTIES_TOO_BIG past it)."""

# Surrogate code points (Python keeps a lone one in a str) and everything past U+FFFF.
_NOT_BMP = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")


def encodable(text: str) -> bool:
    """Can UTF-8 carry ``text``? Not when it holds a lone surrogate."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _bmp(name: str) -> bool:
    return name.isascii() or _NOT_BMP.search(name) is None


def check_carried(name: str, prop: Property) -> None:
    """What a put refuses of a property a handle (or a caller's mapping) brings: see the
    module docstring.

    Raises:
        MQError: MQRC_PROPERTY_NAME_ERROR, MQRC_PROPERTY_NAME_LENGTH_ERR or
            MQRC_PROP_VALUE_NOT_CONVERTED.
    """
    if len(name) > C.MQ_MAX_PROPERTY_NAME_LENGTH:
        raise failed(C.MQRC_PROPERTY_NAME_LENGTH_ERR,
                     f"a property name is at most {C.MQ_MAX_PROPERTY_NAME_LENGTH} characters, not {len(name)}")
    if not carried_name(name):
        shown = name[:40].encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
        raise failed(C.MQRC_PROPERTY_NAME_ERROR,
                     f"{shown!r} is no property name a message carries (non-empty dot-separated folder, group and "
                     f"element names, at most {MAX_DEPTH} parts, characters of the Basic Multilingual Plane)")
    value = prop.value
    if isinstance(value, str) and not encodable(value):
        raise failed(C.MQRC_PROP_VALUE_NOT_CONVERTED,
                     f"the value of property {name!r} holds a lone surrogate, which UTF-8 cannot encode")


_CARRIED = re.compile(f"{ELEMENT_NAME.pattern}(?:\\.{ELEMENT_NAME.pattern}){{0,{MAX_DEPTH - 1}}}")


def carried_name(name: str) -> bool:
    """Can an MQRFH2 carry a property of this name (see ``check_carried``)?"""
    return _CARRIED.fullmatch(name) is not None and _bmp(name)


def check_length(name: str) -> None:
    if not 0 < len(name) <= C.MQ_MAX_PROPERTY_NAME_LENGTH:
        raise failed(C.MQRC_PROPERTY_NAME_LENGTH_ERR,
                     f"a property name is 1..{C.MQ_MAX_PROPERTY_NAME_LENGTH} characters, not {len(name)}")


def reserved_type(name: str) -> int | None:
    """The type a reserved-but-settable name (a JMS header or an MQMD field) must have."""
    if name.startswith(ROOT_MQMD):
        return MQMD_FIELDS.get(name[len(ROOT_MQMD):])
    jms = JMS_NAMES.get(name)
    return None if jms is None else jms[0]


def check_name(name: str, *, wildcard: bool = False) -> None:
    """IBM's property-name rules (``wildcard``: MQINQMP's, a trailing ``%`` allowed and the
    queue manager's mq* names readable).

    Raises:
        MQError: MQRC_PROPERTY_NAME_LENGTH_ERR or MQRC_PROPERTY_NAME_ERROR.
    """
    check_length(name)
    if not _bmp(name):
        raise failed(C.MQRC_PROPERTY_NAME_ERROR,
                     f"{name!r}: property names hold only characters of the Basic Multilingual Plane")
    body = name[:-1] if wildcard and name.endswith("%") else name
    if "%" in body:
        raise failed(C.MQRC_PROPERTY_NAME_ERROR, f"{name!r}: '%' is a wildcard only at the end of an inquiry")
    if not body:
        return  # "%" alone: every property
    if reserved_type(body) is not None:
        return
    stem = body.rstrip(".") if wildcard else body
    parts = stem.split(".")
    if not all(_identifier(p) for p in parts) or (wildcard and body.endswith("..")):
        raise failed(C.MQRC_PROPERTY_NAME_ERROR, f"{name!r} is not a property name (dot-separated identifiers)")
    if body.startswith(("JMS", "usr.JMS", ROOT_MQMD)) or (not wildcard and parts[0] in ("Body", "Root")):
        raise failed(C.MQRC_PROPERTY_NAME_ERROR, f"{name!r}: names starting JMS, Body or Root are reserved")
    # The queue manager's own mq* properties (mqps.Top, mqext.Dly from an MQRFH2) may be
    # inquired; only setting and deleting them is refused.
    if body[:2].lower() == "mq" and not body.startswith("mq_usr.") and not wildcard:
        raise failed(C.MQRC_PROPERTY_NAME_ERROR, f"{name!r}: names starting 'mq' are reserved to the queue manager")
    if not wildcard and parts[-1].upper() in SQL_WORDS:
        raise failed(C.MQRC_PROPERTY_NAME_ERROR, f"{name!r}: {parts[-1]} is a selector keyword")


def canonical(name: str) -> str:
    """``usr.color`` and ``color`` are one property (a name without a folder is in usr):
    the name it is kept under."""
    if name.startswith("usr.") and "." not in name[4:] and name != "usr.%":
        return name[4:]
    return name


def matches(pattern: str, name: str) -> bool:
    """MQINQMP name matching: exact, or a prefix when the pattern ends with ``%``; a
    pattern in ``usr.`` also sees the folderless names kept for usr properties, and one
    that names a synonym (``JMS%``, ``MQTopicString``) sees the property it stands for."""
    full = name if "." in name else "usr." + name
    other = RETURNED_NAMES.get(name, full)
    if pattern.endswith("%"):
        stem = pattern[:-1]
        return name.startswith(stem) or full.startswith(stem) or other.startswith(stem)
    return pattern in (name, full, other)


_TO_INT = {C.MQTYPE_INT8, C.MQTYPE_INT16, C.MQTYPE_INT32, C.MQTYPE_INT64}
_TO_FLOAT = {C.MQTYPE_FLOAT32, C.MQTYPE_FLOAT64}


def convert(ptype: int, value: Value, want: int) -> tuple[int, Value]:
    """A property value as type ``want`` (MQIMPO_CONVERT_TYPE): the type and value returned.

    Raises:
        MQError: MQRC_PROP_CONV_NOT_SUPPORTED, MQRC_PROP_NUMBER_FORMAT_ERROR, or
            MQRC_PROPERTY_TYPE_ERROR for a Type that is not an MQTYPE_*.
    """
    if want == C.MQTYPE_AS_SET or want == ptype or ptype == C.MQTYPE_NULL:
        return ptype, value
    if want not in INT_BITS and want not in _TO_FLOAT and want not in (
            C.MQTYPE_STRING, C.MQTYPE_BOOLEAN, C.MQTYPE_BYTE_STRING, C.MQTYPE_NULL):
        raise failed(C.MQRC_PROPERTY_TYPE_ERROR, f"Type {want} is not an MQTYPE_* value")
    if ptype == C.MQTYPE_STRING:
        assert isinstance(value, str)
        return want, _from_string(value, want)
    if want == C.MQTYPE_STRING:
        if ptype == C.MQTYPE_BOOLEAN:
            return want, "TRUE" if value else "FALSE"
        if ptype in INT_BITS or ptype in _TO_FLOAT:
            return want, str(value) if ptype in INT_BITS else repr(value)
    if ptype == C.MQTYPE_BOOLEAN and want in _TO_INT:
        return want, 1 if value else 0
    if ptype in INT_BITS and want in INT_BITS and INT_BITS[want] > INT_BITS[ptype]:
        return want, value
    if ptype == C.MQTYPE_FLOAT32 and want == C.MQTYPE_FLOAT64:
        return want, value
    raise MQError(C.MQCC_FAILED, C.MQRC_PROP_CONV_NOT_SUPPORTED, f"a property of type {ptype} is not returned as {want}")


def _from_string(text: str, want: int) -> Value:
    t = text.strip()
    try:
        if want == C.MQTYPE_BOOLEAN:
            low = t.upper()
            if low in ("TRUE", "1"):
                return True
            if low in ("FALSE", "0"):
                return False
            raise ValueError(text)
        if want in INT_BITS:
            return coerce(want, int(t, 10))
        if want in _TO_FLOAT:
            return coerce(want, float(t))
    except ValueError:
        raise failed(C.MQRC_PROP_NUMBER_FORMAT_ERROR, f"{text[:40]!r} is not a value of type {want}") from None
    raise failed(C.MQRC_PROP_CONV_NOT_SUPPORTED, f"a string property is not returned as type {want}")
