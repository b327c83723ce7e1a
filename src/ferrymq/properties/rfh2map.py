"""Message properties ↔ MQRFH2 folders: what a put's MQRFH2 holds as properties, and the
MQRFH2 a getter receives its properties in.

Property folders (their elements are properties): ``jms``, ``mcd``, ``mq_usr``, ``sib``,
``sib_context``, ``sib_usr``, ``usr``, the ungrouped ``mq``, ``mqema``, ``mqext``, ``mqps``,
``mq_svc``, ``mqtt``, and any folder with ``content='properties'``. Every other folder
(``psc``, a vendor's) is not properties: it stays in an MQRFH2 in the message data.

Names follow IBM's mapping (property name ↔ folder, group, element): a property in ``usr``
outside any group is named by its element alone (``<usr><color>`` is ``color``; MQSETMP of
``usr.color`` means the same); any other is ``folder.group….element``. That includes a group
in ``usr`` (``<usr><grp><x>`` is ``usr.grp.x``): JMS allows no groups there, but IBM's
mapping keeps the folder in the name, so such a property stays in ``usr`` both ways (and
counts for PROPCTL(COMPAT) as one in ``usr.``).
Types follow the dt attribute (``i1``→INT8 … ``r8``→FLOAT64, ``bin.hex``→BYTE_STRING,
``boolean``, none→STRING, ``int``→INT64, ``xsi:nil='true'``→NULL); an unknown dt is kept as
a string. ``context='user'`` and ``copy='…'`` carry the property descriptor.
"""

from __future__ import annotations

import math
import re

from ferrymq.errors import DecodeError, failed
from ferrymq.mq import constants as C
from ferrymq.properties import rules
from ferrymq.properties.model import DEFAULT_PD, Descriptor, Property, PropertySet, Value
from ferrymq.wire import rfh2_folders as F
from ferrymq.wire.rfh2 import FORMAT as RFH2_FORMAT
from ferrymq.wire.rfh2 import MQRFH2, unpack_chain

PROPERTY_FOLDERS = frozenset({"jms", "mcd", "mq_usr", "sib", "sib_context", "sib_usr", "usr", "mq", "mqema", "mqext",
                              "mqps", "mq_svc", "mqtt"})
COMPAT_FOLDERS = ("mcd.", "jms.", "usr.", "mqext.")
_FOLDER_ORDER = {"mcd": 0, "jms": 1, "usr": 2}  # where IBM's JMS writer puts them: first
_DT_TYPE = {"string": C.MQTYPE_STRING, "boolean": C.MQTYPE_BOOLEAN, "bin.hex": C.MQTYPE_BYTE_STRING,
            "i1": C.MQTYPE_INT8, "i2": C.MQTYPE_INT16, "i4": C.MQTYPE_INT32, "i8": C.MQTYPE_INT64,
            "int": C.MQTYPE_INT64, "r4": C.MQTYPE_FLOAT32, "r8": C.MQTYPE_FLOAT64}
_TYPE_DT = {C.MQTYPE_BOOLEAN: "boolean", C.MQTYPE_BYTE_STRING: "bin.hex", C.MQTYPE_INT8: "i1",
            C.MQTYPE_INT16: "i2", C.MQTYPE_INT32: "i4", C.MQTYPE_INT64: "i8", C.MQTYPE_FLOAT32: "r4",
            C.MQTYPE_FLOAT64: "r8"}
_COPY = {"forward": C.MQCOPY_FORWARD, "reply": C.MQCOPY_REPLY, "report": C.MQCOPY_REPORT,
         "publish": C.MQCOPY_PUBLISH, "all": C.MQCOPY_ALL, "none": C.MQCOPY_NONE}


def folder_of(name: str) -> str:
    return name.split(".", 1)[0] if "." in name else "usr"


def is_compat_name(name: str) -> bool:
    """Does the property count for PROPCTL(COMPAT): one in mcd, jms, usr or mqext."""
    return "." not in name or name.startswith(COMPAT_FOLDERS)


def _descriptor(attrs: dict[str, str]) -> Descriptor:
    if "context" not in attrs and "copy" not in attrs:
        return DEFAULT_PD
    context = C.MQPD_USER_CONTEXT if attrs.get("context") == "user" else C.MQPD_NO_CONTEXT
    copy = C.MQCOPY_DEFAULT
    if "copy" in attrs:
        copy = 0
        for word in attrs["copy"].split(","):
            copy |= _COPY.get(word.strip().lower(), 0)
    return Descriptor(C.MQPD_SUPPORT_OPTIONAL, context, copy)


def folder_properties(text: str) -> PropertySet | None:
    """The typed properties of one folder, or None when it is not a property folder.

    Raises:
        DecodeError: a malformed folder or a value that does not read as its dt.
    """
    return _folder(text, F.MAX_ELEMENTS)[0]


def _folder(text: str, max_elements: int) -> tuple[PropertySet | None, int]:
    """``folder_properties`` within a bound on elements, and the elements the folder holds."""
    root, count = F.read_folder(text, max_elements)
    if root.name not in PROPERTY_FOLDERS and root.attrs.get("content") != "properties":
        return None, count
    out = PropertySet()

    def walk(el: F.Element, prefix: str) -> None:
        for child in el.children:
            if "." in child.name:
                continue  # IBM: such an element is invisible to the property API
            name = f"{prefix}.{child.name}" if prefix else child.name
            if child.children:
                # A group directly in usr keeps its folder: <usr><grp><x> is usr.grp.x, not grp.x
                # (which would name folder grp).
                walk(child, name if prefix else f"usr.{name}")
                continue
            value = F.typed_value(child)
            dt = child.attrs.get("dt", "string")
            ptype = C.MQTYPE_NULL if value is None else _DT_TYPE.get(dt, C.MQTYPE_STRING)
            if ptype == C.MQTYPE_FLOAT32 and isinstance(value, float):
                ptype = C.MQTYPE_FLOAT32
            out.put(name, Property(ptype, value, _descriptor(child.attrs)))

    walk(root, "" if root.name == "usr" else root.name)
    return out, count


def _text(ptype: int, value: Value) -> tuple[str, str]:
    if value is None or ptype == C.MQTYPE_NULL:
        return " xsi:nil='true'", ""
    dt = _TYPE_DT.get(ptype)
    attr = f" dt='{dt}'" if dt else ""
    if ptype == C.MQTYPE_BOOLEAN:
        return attr, "1" if value else "0"
    if ptype == C.MQTYPE_BYTE_STRING:
        assert isinstance(value, bytes)
        return attr, value.hex().upper()
    if isinstance(value, float):
        if math.isnan(value):
            return attr, "NaN"
        if math.isinf(value):
            return attr, "INF" if value > 0 else "-INF"
        return attr, repr(value)
    return attr, F.escape(str(value))


def _pd_attrs(pd: Descriptor) -> str:
    out = ""
    if pd.context == C.MQPD_USER_CONTEXT:
        out += " context='user'"
    if pd.copy_options != C.MQCOPY_DEFAULT:
        words = [w for w, bit in _COPY.items() if bit and pd.copy_options & bit]
        out += f" copy='{','.join(words) or 'none'}'"
    return out


def build_folders(props: PropertySet) -> list[str]:
    """The MQRFH2 folders that carry ``props`` (mcd, jms, usr first; then others in the
    order their first property was set; groups for dotted names). A property whose name
    needs a group where another property has its value (``a.b`` and ``a.b.c``) goes in a
    second folder of the same name: every property is carried."""
    folders: dict[str, list[dict[str, object]]] = {}
    for name, prop in props.typed_items():
        folder = folder_of(name)
        path = [name] if folder == "usr" and "." not in name else name.split(".")[1:]
        trees = folders.setdefault(folder, [])
        tree = next((t for t in trees if _free(t, path)), None)
        if tree is None:
            tree = {}
            trees.append(tree)
        node = tree
        for part in path[:-1]:
            node = node.setdefault(part, {})  # type: ignore[assignment]
        node[path[-1]] = prop

    def render(tag: str, node: object) -> str:
        if isinstance(node, dict):
            return f"<{tag}>" + "".join(render(k, v) for k, v in node.items()) + f"</{tag}>"
        assert isinstance(node, Property)
        attr, text = _text(node.type, node.value)
        return f"<{tag}{attr}{_pd_attrs(node.pd)}>{text}</{tag}>"

    out = []
    for folder in sorted(folders, key=lambda f: _FOLDER_ORDER.get(f, 3)):
        attrs = "" if folder in PROPERTY_FOLDERS else " content='properties'"
        for tree in folders[folder]:
            body = "".join(render(k, v) for k, v in tree.items())
            out.append(f"<{folder}{attrs}>{body}</{folder}>")
    return out


def _free(tree: dict[str, object], path: list[str]) -> bool:
    """Can ``tree`` take a value at ``path``: groups (or nothing) along it, nothing at its end?"""
    node: object = tree
    for part in path[:-1]:
        assert isinstance(node, dict)
        node = node.get(part)
        if node is None:
            return True
        if not isinstance(node, dict):
            return False
    assert isinstance(node, dict)
    return path[-1] not in node


_SURROGATE = re.compile("[\ud800-\udfff]")


def carriable(props: PropertySet) -> tuple[PropertySet, int]:
    """The properties an MQRFH2 written for a getter carries, and the warning its get
    completes with (MQRC_NONE: ``props`` itself, all of it carried). A string that holds a
    lone surrogate is carried with U+FFFD in its place (MQRC_PROP_VALUE_NOT_CONVERTED); a
    property whose name no folder can hold (``rules.carried_name``) is left out
    (MQRC_PROP_NAME_NOT_CONVERTED, when no value was replaced). Puts refuse both
    (``rules.check_carried``); a message stored before they did may hold them."""
    bad = [name for name, prop in props.typed_items()
           if not rules.carried_name(name) or (isinstance(prop.value, str) and not rules.encodable(prop.value))]
    if not bad:
        return props, C.MQRC_NONE
    out = PropertySet()
    reason = C.MQRC_PROP_NAME_NOT_CONVERTED
    for name, prop in props.typed_items():
        if not rules.carried_name(name):
            continue
        value = prop.value
        if isinstance(value, str) and not rules.encodable(value):
            prop = Property(prop.type, _SURROGATE.sub("\ufffd", value), prop.pd)
            reason = C.MQRC_PROP_VALUE_NOT_CONVERTED
        out.put(name, prop)
    return out, reason


def _big(encoding: int) -> bool:
    return encoding & C.MQENC_INTEGER_MASK == C.MQENC_INTEGER_NORMAL


class Split:
    """A message body with its MQRFH2 property folders taken out (see ``absorb``)."""

    __slots__ = ("ccsid", "data", "encoding", "format", "props")

    def __init__(self, props: PropertySet, data: bytes, fmt: str, encoding: int, ccsid: int) -> None:
        self.props, self.data, self.format, self.encoding, self.ccsid = props, data, fmt, encoding, ccsid


def absorb(data: bytes, fmt: str, encoding: int, ccsid: int) -> Split | None:
    """Take the property folders out of the MQRFH2 chain at the start of ``data``: their
    properties, and the data with what remains (headers keeping only non-property folders,
    re-chained; headers left empty dropped), with the Format, Encoding and CodedCharSetId
    the descriptor must now carry. None when ``fmt`` is not MQHRF2.

    The folders of the chain hold at most ``rfh2_folders.MAX_ELEMENTS`` elements together
    (every folder is read, property folder or not): the bound keeps the time one put may
    take on the queue manager's loop small, and any more is refused before most are read.

    Raises:
        MQError: MQRC_RFH_ERROR for a malformed header, MQRC_RFH_FORMAT_ERROR for a
            folder that does not parse or more elements than the bound.
    """
    if fmt.rstrip() != RFH2_FORMAT:
        return None
    try:
        headers, end, _next_fmt, _next_enc = unpack_chain(data, fmt, encoding)
    except DecodeError as exc:
        raise failed(C.MQRC_RFH_ERROR, f"the MQRFH2 at the start of the message is not valid: {exc}") from None
    props = PropertySet()
    kept: list[MQRFH2] = []
    lead: tuple[str, int, int] = (fmt, encoding, ccsid)  # what the last structure kept says follows
    budget = F.MAX_ELEMENTS
    # Every element has one or two '<': far more than twice the bound is refused unread.
    if sum(text.count("<") for header in headers for text in header.folders) > 2 * budget:
        raise failed(C.MQRC_RFH_FORMAT_ERROR, f"the MQRFH2 folders of a message hold at most {budget} elements "
                                              "together; these hold more")
    for header in headers:
        rest: list[str] = []
        for text in header.folders:
            try:
                found, used = _folder(text, budget)
            except F.TooManyElements:
                raise failed(C.MQRC_RFH_FORMAT_ERROR, f"the MQRFH2 folders of a message hold at most "
                                                      f"{F.MAX_ELEMENTS} elements together; these hold more") from None
            except DecodeError as exc:
                raise failed(C.MQRC_RFH_FORMAT_ERROR, f"an MQRFH2 folder does not parse: {exc}") from None
            budget -= used
            if found is None:
                rest.append(text)
            else:
                for name, prop in found.typed_items():
                    props.put(name, prop)
        nxt_ccsid = lead[2] if header.coded_char_set_id == C.MQCCSI_INHERIT else header.coded_char_set_id
        if rest:
            if kept:
                kept[-1] = _chained(kept[-1], RFH2_FORMAT, lead[1], lead[2])
            kept.append(MQRFH2(tuple(rest), header.encoding, header.coded_char_set_id, header.format, header.flags,
                               header.name_value_ccsid))
        else:
            if kept:
                kept[-1] = _chained(kept[-1], header.format, header.encoding, header.coded_char_set_id)
        lead = (header.format.ljust(8), header.encoding, nxt_ccsid)  # the MQMD returns Format blank-padded
    parts = []
    enc = encoding
    for header in kept:
        parts.append(header.pack(big_endian=_big(enc)))
        enc = header.encoding
    if kept:
        return Split(props, b"".join(parts) + data[end:], C.MQFMT_RF_HEADER_2, encoding, ccsid)
    return Split(props, data[end:], lead[0], lead[1], lead[2])


def _chained(h: MQRFH2, fmt: str, encoding: int, ccsid: int) -> MQRFH2:
    return MQRFH2(h.folders, encoding, ccsid, fmt, h.flags, h.name_value_ccsid)


def with_rfh2(props: PropertySet, data: bytes, fmt: str, encoding: int, ccsid: int, *,
              merge: bool = True) -> tuple[bytes, str]:
    """The message data with ``props`` in an MQRFH2 at its start (merged into the first
    header when the data already starts with one and ``merge``), and the Format the
    descriptor carries.
    """
    folders = tuple(build_folders(props))
    big = _big(encoding)
    if merge and fmt.rstrip() == RFH2_FORMAT:
        try:
            first, end = MQRFH2.unpack_from(data, 0, big_endian=big)
        except DecodeError:
            first = None
        if first is not None:
            merged = MQRFH2(folders + first.folders, first.encoding, first.coded_char_set_id, first.format,
                            first.flags, first.name_value_ccsid)
            return merged.pack(big_endian=big) + data[end:], C.MQFMT_RF_HEADER_2
    header = MQRFH2(folders, encoding, ccsid, fmt)
    return header.pack(big_endian=big) + data, C.MQFMT_RF_HEADER_2
