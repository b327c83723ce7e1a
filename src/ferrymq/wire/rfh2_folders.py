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
hand-written scanner over the text (no XML library, nothing evaluated), bounded in depth and
in the number of elements; anything it cannot read is a DecodeError with the offset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ferrymq.errors import DecodeError

Value = str | bool | int | float | bytes | None
MAX_DEPTH = 16
MAX_ELEMENTS = 10_000

_INT_RANGE = {"i1": 8, "i2": 16, "i4": 32, "i8": 64, "int": 64}
_ESCAPES = {"lt": "<", "gt": ">", "amp": "&", "apos": "'", "quot": '"'}
_NAME_START = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | set("0123456789-.:")


@dataclass(slots=True)
class Element:
    """One element or group: its name, attributes, text (elements) or children (groups)."""

    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    text: str = ""
    children: list[Element] = field(default_factory=list)


class _Scanner:
    __slots__ = ("count", "pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.count = 0

    def fail(self, message: str) -> DecodeError:
        return DecodeError("RFH2 folder", self.pos, message)

    def skip_blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def expect(self, s: str) -> None:
        if not self.text.startswith(s, self.pos):
            raise self.fail(f"expected {s!r}")
        self.pos += len(s)

    def name(self) -> str:
        start = self.pos
        if self.pos >= len(self.text) or self.text[self.pos] not in _NAME_START:
            raise self.fail("expected a name")
        while self.pos < len(self.text) and self.text[self.pos] in _NAME_CHARS:
            self.pos += 1
        return self.text[start : self.pos]

    def until(self, stop: str) -> str:
        end = self.text.find(stop, self.pos)
        if end < 0:
            raise self.fail(f"no closing {stop!r}")
        raw, self.pos = self.text[self.pos : end], end
        return unescape(raw, self.pos - len(raw))

    def element(self, depth: int) -> Element:
        if depth > MAX_DEPTH:
            raise self.fail(f"groups nested deeper than {MAX_DEPTH}")
        self.count += 1
        if self.count > MAX_ELEMENTS:
            raise self.fail(f"more than {MAX_ELEMENTS} elements")
        self.expect("<")
        el = Element(self.name())
        while True:
            self.skip_blanks()
            if self.text.startswith("/>", self.pos):
                self.pos += 2
                return el  # <e/> is <e></e>: empty (null only with xsi:nil='true')
            if self.text.startswith(">", self.pos):
                self.pos += 1
                break
            attr = self.name()
            self.skip_blanks()
            self.expect("=")
            self.skip_blanks()
            quote = self.text[self.pos : self.pos + 1]
            if quote not in ("'", '"'):
                raise self.fail("attribute value must be quoted")
            self.pos += 1
            el.attrs[attr] = self.until(quote)
            self.pos += 1
        # Content: text, or child elements (a group), then the closing tag.
        start = self.pos
        lt = self.text.find("<", self.pos)
        if lt < 0:
            raise self.fail(f"no closing tag for <{el.name}>")
        if self.text.startswith("</", lt):
            el.text = unescape(self.text[start:lt], start)
            self.pos = lt
        else:
            if self.text[start:lt].strip():
                raise self.fail(f"text mixed with elements in <{el.name}>")
            self.pos = lt
            while True:
                self.skip_blanks()
                if self.text.startswith("</", self.pos):
                    break
                el.children.append(self.element(depth + 1))
        self.expect("</")
        closing = self.name()
        if closing != el.name:
            raise self.fail(f"<{el.name}> closed by </{closing}>")
        self.skip_blanks()
        self.expect(">")
        return el


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
        DecodeError: the text is not one well-formed folder.
    """
    s = _Scanner(text.rstrip(" \0"))
    s.skip_blanks()
    el = s.element(0)
    s.skip_blanks()
    if s.pos != len(s.text):
        raise s.fail("text after the folder's closing tag")
    return el


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
        if not tag or tag[0] not in _NAME_START or any(c not in _NAME_CHARS or c == "." for c in tag):
            raise ValueError(f"{tag!r} is not a folder, group or element name")
        if isinstance(node, dict):
            return f"<{tag}>" + "".join(render(k, v) for k, v in node.items()) + f"</{tag}>"
        dt, text = _dt_and_text(node)  # type: ignore[arg-type]
        return f"<{tag}{dt}>{text}</{tag}>"

    body = "".join(render(k, v) for k, v in tree.items())
    if not name or name[0] not in _NAME_START:
        raise ValueError(f"{name!r} is not a folder name")
    return f"<{name}{attrs}>{body}</{name}>"
