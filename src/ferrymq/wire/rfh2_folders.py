"""The XML-like language of MQRFH2 folders, and the typed properties folders carry.

A folder is ``<name attr='v'>…</name>``: elements ``<e dt='i4'>7</e>`` and groups of
elements nested inside; values escaped with ``&lt; &gt; &amp; &apos; &quot;`` (character
references ``&#60;`` ``&#x3C;`` are read too); attribute
values in single or double quotes; ``<e xsi:nil='true'></e>`` for null (``<e/>`` is empty). The
``dt`` attribute types a value (absent: string):

| dt | Python value | | dt | Python value |
|---|---|---|---|---|
| string | str | | i1, i2, i4, i8, int | int (range-checked; int is i8) |
| boolean | bool (0/1, also true/false) | | r4, r8 | float |
| bin.hex | bytes | | xsi:nil='true' | None |

A property ``a.b.c`` lives in folder ``a``, group ``b``, element ``c``. Parsing is a
scanner over the text driven by regular expressions (no XML library, nothing evaluated, no
recursion), bounded in depth and in the number of elements; anything it cannot read is a
DecodeError with the offset. No XML library fits: expat (the one in the standard library)
folds line ends and blanks in values (``a\r\nb`` comes back ``a\nb``) and refuses
control characters that property values may hold.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ferrymq.errors import DecodeError

Value = str | bool | int | float | bytes | None
MAX_DEPTH = 16
MAX_ELEMENTS = 10_000

_INT_RANGE = {"i1": 8, "i2": 16, "i4": 32, "i8": 64, "int": 64}
_ESCAPES = {"lt": "<", "gt": ">", "amp": "&", "apos": "'", "quot": '"'}
# Names as XML reads them (any letter, "_" first; letters, digits, "_-.:" after), with "$",
# which Java identifiers (and so IBM's property names) may hold. Possessive: a name is
# never cut short to let what follows it match.
_NAME = r"(?:[^\W\d]|\$)[\w\-.:$]*+"
ELEMENT_NAME = re.compile(r"(?:[^\W\d]|\$)[\w\-:$]*")
"""One part of a property name: a folder, group or element name without a dot."""
_BLANKS = "[ \t\r\n]*"
_OPEN = re.compile("<(" + _NAME + ")")
_ATTR = re.compile(_BLANKS + "(" + _NAME + ")" + _BLANKS + "=" + _BLANKS + "(?:'([^']*)'|\"([^\"]*)\")")
_ATTRS = "(?:" + _BLANKS + _NAME + _BLANKS + "=" + _BLANKS + "(?:'[^']*'|\"[^\"]*\"))*+"
# An element holding text, whole, its first attribute apart: most of a folder, read in one
# match.
_LEAF = re.compile("<(" + _NAME + ")(?:" + _BLANKS + "(" + _NAME + ")" + _BLANKS + "=" + _BLANKS
                   + "(?:'([^']*)'|\"([^\"]*)\"))?(" + _ATTRS + ")" + _BLANKS + ">([^<]*)</(" + _NAME + ")"
                   + _BLANKS + ">")
_TAG_END = re.compile(_BLANKS + "(/?>)")
_CLOSE = re.compile("</(" + _NAME + ")" + _BLANKS + ">")
_SKIP = re.compile(_BLANKS)
_TEXT_BLANKS = re.compile("[ \t\r\n]*\\Z")


@dataclass(slots=True)
class Element:
    """One element or group: its name, attributes, text (elements) or children (groups)."""

    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    text: str = ""
    children: list[Element] = field(default_factory=list)


class TooManyElements(DecodeError):
    """A folder (or the folders of one message) holds more elements than the bound."""

    def __init__(self, offset: int, limit: int) -> None:
        super().__init__("RFH2 folder", offset, f"more than {limit} elements")
        self.limit = limit


def _fail(pos: int, message: str) -> DecodeError:
    return DecodeError("RFH2 folder", pos, message)


def _leaf(m: re.Match[str]) -> Element | None:
    """The element ``_LEAF`` matched; None when its end tag names another element."""
    name, first, single, double, _rest, text, closing = m.groups()
    if closing != name:
        return None
    el = Element(name, text=unescape(text, m.start(6)) if "&" in text else text)
    if first is not None:
        value = single if single is not None else double
        el.attrs[first] = unescape(value, m.start(3)) if "&" in value else value
        pos = m.start(5)
        while (a := _ATTR.match(m.string, pos, m.end(5))) is not None:
            quoted = 2 if a.group(2) is not None else 3
            el.attrs[a.group(1)] = unescape(a.group(quoted), a.start(quoted))
            pos = a.end()
    return el


def _start_tag(text: str, pos: int, depth: int) -> tuple[Element, int, bool]:
    """The start tag at ``pos``: the element, where its content starts and whether it was
    ``<e/>`` (no content)."""
    if depth > MAX_DEPTH:
        raise _fail(pos, f"groups nested deeper than {MAX_DEPTH}")
    m = _OPEN.match(text, pos)
    if m is None:
        raise _fail(pos, "expected '<' and an element name")
    el = Element(m.group(1))
    pos = m.end()
    while True:
        end = _TAG_END.match(text, pos)
        if end is not None:
            return el, end.end(), end.group(1) == "/>"
        a = _ATTR.match(text, pos)
        if a is None:
            raise _fail(pos, f"expected an attribute, '>' or '/>' in <{el.name}>")
        quoted = 2 if a.group(2) is not None else 3
        el.attrs[a.group(1)] = unescape(a.group(quoted), a.start(quoted))
        pos = a.end()


def _end_tag(text: str, pos: int, el: Element) -> int:
    m = _CLOSE.match(text, pos)
    if m is None:
        raise _fail(pos, f"expected </{el.name}>")
    if m.group(1) != el.name:
        raise _fail(pos, f"<{el.name}> closed by </{m.group(1)}>")
    return m.end()


def _parse(text: str, max_elements: int) -> tuple[Element, int, int]:
    """The root element at the start of ``text`` (after blanks), where it ends and how many
    elements it holds (itself included). The scanner: regular expressions find each tag (the per-character work is done in C)
    and open groups are kept on a list, so nothing recurses however the text nests."""
    pos = _SKIP.match(text).end()  # type: ignore[union-attr]
    count = 0
    open_groups: list[Element] = []
    root: Element | None = None
    while True:
        count += 1
        if count > max_elements:
            raise TooManyElements(pos, max_elements)
        m = _LEAF.match(text, pos) if len(open_groups) <= MAX_DEPTH else None
        leaf = None if m is None else _leaf(m)
        if leaf is not None:
            el, pos, empty = leaf, m.end(), True  # type: ignore[union-attr]
        else:
            el, pos, empty = _start_tag(text, pos, len(open_groups))
        if open_groups:
            open_groups[-1].children.append(el)
        else:
            root = el
        if not empty:
            lt = text.find("<", pos)
            if lt < 0:
                raise _fail(pos, f"no closing tag for <{el.name}>")
            if not text.startswith("</", lt):  # a group: its first child is next
                if _TEXT_BLANKS.match(text, pos, lt) is None:
                    raise _fail(pos, f"text mixed with elements in <{el.name}>")
                open_groups.append(el)
                pos = lt
                continue
            el.text = unescape(text[pos:lt], pos)
            pos = _end_tag(text, lt, el)
        # An element ended: close the groups that end here, then the next sibling.
        while open_groups:
            pos = _SKIP.match(text, pos).end()  # type: ignore[union-attr]
            if not text.startswith("</", pos):
                break
            pos = _end_tag(text, pos, open_groups.pop())
        if not open_groups:
            assert root is not None
            return root, pos, count


def unescape(raw: str, offset: int = 0) -> str:
    if "&" not in raw:
        return raw
    out, pos = [], 0
    while (amp := raw.find("&", pos)) >= 0:
        semi = raw.find(";", amp)
        name = raw[amp + 1 : semi] if semi > 0 else ""
        char = _ESCAPES.get(name) or _char_reference(name)
        if char is None:
            raise DecodeError("RFH2 folder", offset + amp, f"unknown escape &{name[:10]};")
        out.append(raw[pos:amp])
        out.append(char)
        pos = semi + 1
    out.append(raw[pos:])
    return "".join(out)


def _char_reference(name: str) -> str | None:
    """``&#65;`` / ``&#x41;``: XML character references, which some producers write for
    characters they do not put literally; None when ``name`` is not one (or names a
    surrogate or a number past U+10FFFF)."""
    if not name.startswith("#") or len(name) > 10:
        return None
    digits, base = (name[2:], 16) if name[1:2] in ("x", "X") else (name[1:], 10)
    if not digits or not all(c in "0123456789abcdefABCDEF"[: base + (6 if base == 16 else 0)] for c in digits):
        return None
    code = int(digits, base)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code)


def escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&apos;")
            .replace('"', "&quot;"))


def parse_folder(text: str) -> Element:
    """The folder element of one NameValueData (trailing blanks and NULs allowed).

    Raises:
        DecodeError: the text is not one well-formed folder (TooManyElements: more than
            MAX_ELEMENTS elements).
    """
    return read_folder(text, MAX_ELEMENTS)[0]


def read_folder(text: str, max_elements: int) -> tuple[Element, int]:
    """``parse_folder`` with a bound of its own: the folder element and how many elements
    it holds (itself included). Text with more ``<`` than twice the bound is refused before
    anything is read (every element has one or two).

    Raises:
        DecodeError: the text is not one well-formed folder (TooManyElements: more than
            ``max_elements`` elements).
    """
    text = text.rstrip(" \0")
    if text.count("<") > 2 * max_elements:
        raise TooManyElements(0, max_elements)
    root, end, count = _parse(text, max_elements)
    if _SKIP.match(text, end).end() != len(text):  # type: ignore[union-attr]
        raise _fail(end, "text after the folder's closing tag")
    return root, count


def typed_value(el: Element) -> Value:
    """An element's value as its dt attribute types it.

    Raises:
        DecodeError: the text is not a value of that type (the offset is unknown: 0).
    """
    if el.attrs.get("xsi:nil") == "true":
        return None
    dt = el.attrs.get("dt", "string")
    text = el.text
    try:
        if dt == "string":
            return text
        if dt == "boolean":
            low = text.strip().lower()
            if low in ("1", "true"):
                return True
            if low in ("0", "false"):
                return False
            raise ValueError(text)
        if dt in _INT_RANGE:
            n = int(text.strip())
            bits = _INT_RANGE[dt]
            if not -(1 << (bits - 1)) <= n < 1 << (bits - 1):
                raise ValueError(f"{n} does not fit {dt}")
            return n
        if dt in ("r4", "r8"):
            return float(text.strip())
        if dt == "bin.hex":
            return bytes.fromhex(text.strip())
    except ValueError as exc:
        raise DecodeError("RFH2 folder", 0, f"<{el.name} dt='{dt}'> holds {text[:40]!r}: {exc}") from None
    return text  # an unknown dt: kept as text (IBM reports it through MQIMPO.TypeString)


def properties(folder_text: str) -> dict[str, Value]:
    """The properties of one folder: ``folder.group.element`` names to typed values.

    Raises:
        DecodeError: a malformed folder or value.
    """
    root = parse_folder(folder_text)
    out: dict[str, Value] = {}

    def walk(el: Element, prefix: str) -> None:
        for child in el.children:
            name = f"{prefix}.{child.name}"
            if child.children:
                walk(child, name)
            else:
                out[name] = typed_value(child)

    walk(root, root.name)
    return out


def _dt_and_text(value: Value) -> tuple[str, str]:
    if value is None:
        return " xsi:nil='true'", ""
    if isinstance(value, bool):
        return " dt='boolean'", "1" if value else "0"
    if isinstance(value, int):
        return (" dt='i4'" if -(1 << 31) <= value < 1 << 31 else " dt='i8'"), str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return " dt='r8'", "NaN" if math.isnan(value) else ("INF" if value > 0 else "-INF")
        return " dt='r8'", repr(value)
    if isinstance(value, bytes):
        return " dt='bin.hex'", value.hex().upper()
    return "", escape(value)


def build_folder(name: str, props: dict[str, Value], attrs: str = "") -> str:
    """The text of folder ``name`` holding ``props`` (names relative to the folder; a dotted
    name makes groups), typed with dt attributes as IBM's writers do.

    Raises:
        ValueError: a name that is not an XML name.
    """
    tree: dict[str, object] = {}
    for key, value in props.items():
        parts = key.split(".")
        node = tree
        for part in parts[:-1]:
            sub = node.setdefault(part, {})
            if not isinstance(sub, dict):
                raise ValueError(f"property {key!r} uses {part!r} both as a value and as a group")
            node = sub
        node[parts[-1]] = value

    def render(tag: str, node: object) -> str:
        if not ELEMENT_NAME.fullmatch(tag):
            raise ValueError(f"{tag!r} is not a folder, group or element name")
        if isinstance(node, dict):
            return f"<{tag}>" + "".join(render(k, v) for k, v in node.items()) + f"</{tag}>"
        dt, text = _dt_and_text(node)  # type: ignore[arg-type]
        return f"<{tag}{dt}>{text}</{tag}>"

    body = "".join(render(k, v) for k, v in tree.items())
    if not ELEMENT_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a folder name")
    return f"<{name}{attrs}>{body}</{name}>"
