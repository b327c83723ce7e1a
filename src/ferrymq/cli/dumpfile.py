"""The dump file of ``ferrymq dump`` and ``ferrymq load``: messages as lines of text.

Line-based and readable, in the spirit of IBM dmpmqmsg's text format (docs/cli.md has the
full description)::

    FERRYMQ-DUMP 1                                   magic and version: the first line
    # queue_manager=QM1 queue=Q1 created=...         comments (ignored) between messages
    MSG 1                                            message 1 begins (numbered from 1)
    MD Report 0                                      every MQMD field, once, in MQMD order:
    MD Format "MQSTR"                                  MQLONG decimal, MQCHAR a JSON string,
    MD MsgId 414d5120...                               MQBYTE lower-case hex of the whole field
    PROP STRING 1,0,0 "usr.color" "red"              a property: type, MQPD, name, value
    DATA 11                                          the body's length in bytes
    X 48656c6c6f20776f726c64                         the body in hex, 64 bytes a line
    END 1 3610a686                                   CRC-32 of the message's lines, MSG to X
    TOTAL 1                                          the last line: how many messages

Reading never evaluates anything: each line is split and checked against its own rule,
JSON is used only for quoted strings, and every length is bounded before a buffer grows
(a line at most ``MAX_LINE`` bytes, a body at most ``MAX_DATA``). Any defect — a
truncated file, a changed byte, a field missing or twice — raises ``DumpFileError``
naming the line.
"""

from __future__ import annotations

import binascii
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from ferrymq.mq import constants as C
from ferrymq.properties.model import INT_BITS, MAX_PROPERTIES, TYPE_NAMES, Descriptor, Property, PropertySet
from ferrymq.wire.mqmd import IBM_NAMES, LAYOUT_V2, MQMD

MAGIC = b"FERRYMQ-DUMP 1"
MAX_LINE = 1024 * 1024 + 256  # a property value of up to 512 KiB in hex, with its name
MAX_DATA = 104_857_600  # MQ's largest MaxMsgLength
CHUNK = 64  # body bytes per X line written (any length up to the line limit is read)

# The MQMD fields in structure order, by IBM's names, with (attribute, kind, length).
FIELDS: dict[str, tuple[str, str, int]] = {
    ibm: (attr, kind, length) for ibm, (attr, kind, length) in zip(IBM_NAMES, LAYOUT_V2.fields, strict=True)
    if ibm != "StrucId"}  # always "MD  ": nothing to keep
_TYPE_BY_NAME = {name: t for t, name in TYPE_NAMES.items()}
_HEX = re.compile(rb"[0-9a-fA-F]*")
_NUMBER = re.compile(r"-?[0-9]{1,20}")


class DumpFileError(Exception):
    """A dump file that is not what ``DumpWriter`` writes: ``line`` is where (1-based);
    ``truncated`` when the defect is only that the file ends there (a writer killed)."""

    def __init__(self, line: int, message: str, *, truncated: bool = False) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message
        self.truncated = truncated


@dataclass(frozen=True, slots=True)
class DumpedMessage:
    """One message read back: its descriptor, properties and body; ``line`` of its MSG."""

    md: MQMD
    properties: PropertySet
    data: bytes
    line: int


# -- writing ---------------------------------------------------------------------------------

def _text(value: str) -> str:
    return json.dumps(value)  # ASCII only: a lone surrogate or a control character travels escaped


def _md_lines(md: MQMD) -> list[str]:
    out = []
    for ibm, (attr, kind, _length) in FIELDS.items():
        value = getattr(md, attr)
        if kind == "b":
            out.append(f"MD {ibm} {value.hex()}\n")
        elif kind in "cf":
            out.append(f"MD {ibm} {_text(value)}\n")
        else:
            out.append(f"MD {ibm} {value}\n")
    return out


def _value_text(p: Property) -> str:
    v = p.value
    if p.type == C.MQTYPE_NULL:
        return ""
    if p.type == C.MQTYPE_BOOLEAN:
        return "true" if v else "false"
    if p.type in (C.MQTYPE_FLOAT32, C.MQTYPE_FLOAT64):
        return float(v).hex()  # type: ignore[arg-type]  # exact, unlike a decimal rendering
    if p.type == C.MQTYPE_STRING:
        return _text(str(v))
    if p.type == C.MQTYPE_BYTE_STRING:
        return bytes(v).hex()  # type: ignore[arg-type]
    return str(int(v))  # type: ignore[arg-type]


def _property_lines(props: PropertySet) -> list[str]:
    out = []
    for name, p in props.typed_items():
        value = _value_text(p)
        line = (f"PROP {TYPE_NAMES[p.type]} {p.pd.support},{p.pd.context},{p.pd.copy_options} {_text(name)}"
                f"{' ' + value if value else ''}\n")
        if len(line) > MAX_LINE:
            raise ValueError(f"property {name!r} needs a line of {len(line)} bytes; a dump line holds at most "
                             f"{MAX_LINE} (MAX_LINE)")
        out.append(line)
    return out


class DumpWriter:
    """Writes a dump file to ``f`` (binary): the header now, each message with ``write``,
    the TOTAL line with ``finish``. The caller flushes and fsyncs."""

    def __init__(self, f: IO[bytes], header: dict[str, Any]) -> None:
        self.f = f
        self.count = 0
        self.bytes = 0
        comment = " ".join(f"{k}={v}" for k, v in header.items())
        f.write(MAGIC + b"\n# " + comment.encode("utf-8", "replace").replace(b"\n", b" ") + b"\n")

    def write(self, md: MQMD, properties: PropertySet | None, data: bytes) -> None:
        """Raises ValueError: a body over MAX_DATA or a property too long for a line."""
        if len(data) > MAX_DATA:
            raise ValueError(f"a body of {len(data)} bytes is over the dump's limit of {MAX_DATA} (MAX_DATA)")
        self.count += 1
        lines = [f"MSG {self.count}\n", *_md_lines(md), *(_property_lines(properties) if properties else ()),
                 f"DATA {len(data)}\n"]
        body = "".join(lines).encode("ascii")
        hexed = data.hex()
        step = 2 * CHUNK
        body += b"".join(b"X " + hexed[i:i + step].encode("ascii") + b"\n" for i in range(0, len(hexed), step))
        self.f.write(body + f"END {self.count} {zlib.crc32(body):08x}\n".encode("ascii"))
        self.bytes += len(data)

    def finish(self) -> None:
        self.f.write(f"TOTAL {self.count}\n".encode("ascii"))


# -- reading ---------------------------------------------------------------------------------

class _Lines:
    """The file's lines with their numbers, each bounded to MAX_LINE bytes."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.number = 0

    def next(self, wanted: str) -> bytes:
        """The next line without its newline.

        Raises:
            DumpFileError: the file ends (``wanted`` says what was expected), or the line
                is too long or has no newline.
        """
        raw = self.f.readline(MAX_LINE + 1)
        self.number += 1
        if not raw:
            raise DumpFileError(self.number, f"the file ends here, truncated: {wanted} expected", truncated=True)
        if not raw.endswith(b"\n"):
            if len(raw) > MAX_LINE:
                raise DumpFileError(self.number, f"line longer than {MAX_LINE} bytes (MAX_LINE)")
            raise DumpFileError(self.number, "the file ends in the middle of this line, truncated", truncated=True)
        return raw[:-1]


def _fail(lines: _Lines, message: str) -> DumpFileError:
    return DumpFileError(lines.number, message)


def _int(lines: _Lines, text: str, what: str, low: int, high: int) -> int:
    if not _NUMBER.fullmatch(text):
        raise _fail(lines, f"{what} {text[:40]!r} is not an integer")
    value = int(text)
    if not low <= value <= high:
        raise _fail(lines, f"{what} {value} is out of range ({low} to {high})")
    return value


def _hex(lines: _Lines, text: bytes, what: str) -> bytes:
    if len(text) % 2 or not _HEX.fullmatch(text):
        raise _fail(lines, f"{what} is not hexadecimal digits in pairs")
    return binascii.unhexlify(text)


_JSON = json.JSONDecoder()


def _string(lines: _Lines, text: str, what: str) -> tuple[str, int]:
    """A JSON string at the start of ``text``: its value and where it ends."""
    if not text.startswith('"'):
        raise _fail(lines, f"{what} must be a quoted string")
    close = text.find('"', 1)
    if close > 0 and "\\" not in text[1:close]:  # nothing escaped: the string is what lies between
        value = text[1:close]
        if value.isprintable():  # JSON allows no control character unescaped
            return value, close + 1
    try:
        value, end = _JSON.raw_decode(text)
    except ValueError as exc:
        raise _fail(lines, f"{what} is not a valid quoted string ({exc.args[0].split(':')[0]})") from None
    if not isinstance(value, str):
        raise _fail(lines, f"{what} must be a quoted string")
    return value, end


def _md_field(lines: _Lines, fields: dict[str, Any], raw: bytes) -> None:
    parts = raw.decode("ascii", "replace").split(" ", 2)
    if len(parts) != 3 or parts[1] not in FIELDS:
        raise _fail(lines, f"not an MQMD field line: {raw[:60]!r}")
    ibm, text = parts[1], parts[2]
    attr, kind, length = FIELDS[ibm]
    if attr in fields:
        raise _fail(lines, f"MQMD field {ibm} appears twice")
    if kind == "b":
        value: Any = _hex(lines, text.encode("ascii", "replace"), f"MQMD {ibm}")
        if len(value) != length:
            raise _fail(lines, f"MQMD {ibm} must be {length} bytes, not {len(value)}")
    elif kind in "cf":
        value, end = _string(lines, text, f"MQMD {ibm}")
        if end != len(text):
            raise _fail(lines, f"MQMD {ibm}: something follows the string")
        try:
            encoded = value.encode("latin-1")
        except UnicodeEncodeError:
            raise _fail(lines, f"MQMD {ibm} holds a character beyond Latin-1") from None
        if len(encoded) > length:
            raise _fail(lines, f"MQMD {ibm} is {len(encoded)} characters; the field holds {length}")
    else:
        value = _int(lines, text, f"MQMD {ibm}", -(1 << 31), (1 << 31) - 1)
    fields[attr] = value


def _property(lines: _Lines, props: PropertySet, raw: bytes) -> None:
    text = raw.decode("utf-8", "replace")
    parts = text.split(" ", 3)
    if len(parts) != 4:
        raise _fail(lines, "a PROP line is: PROP TYPE SUPPORT,CONTEXT,COPYOPTIONS NAME VALUE")
    _, type_name, pd_text, rest = parts
    ptype = _TYPE_BY_NAME.get(type_name)
    if ptype is None:
        raise _fail(lines, f"unknown property type {type_name[:20]!r} (one of {', '.join(_TYPE_BY_NAME)})")
    pd_parts = pd_text.split(",")
    if len(pd_parts) != 3:
        raise _fail(lines, f"property descriptor {pd_text[:40]!r} is not SUPPORT,CONTEXT,COPYOPTIONS")
    pd = Descriptor(*(_int(lines, p, "property descriptor", -(1 << 31), (1 << 31) - 1) for p in pd_parts))
    name, end = _string(lines, rest, "property name")
    if name in props:
        raise _fail(lines, f"property {name!r} appears twice")
    if end == len(rest):
        value_text = ""  # NULL, or an empty BYTE_STRING (a STRING is always quoted)
    elif rest[end] == " ":
        value_text = rest[end + 1:]
    else:
        raise _fail(lines, f"property {name!r}: a space and its value must follow the name")
    props.put(name, Property(ptype, _property_value(lines, ptype, value_text, name), pd))


def _property_value(lines: _Lines, ptype: int, text: str, name: str) -> Any:
    what = f"property {name!r}"
    if ptype == C.MQTYPE_NULL:
        if text:
            raise _fail(lines, f"{what} is NULL: it has no value")
        return None
    if ptype == C.MQTYPE_BOOLEAN:
        if text not in ("true", "false"):
            raise _fail(lines, f"{what}: a BOOLEAN is true or false, not {text[:20]!r}")
        return text == "true"
    if ptype in INT_BITS:
        bits = INT_BITS[ptype]
        return _int(lines, text, what, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if ptype in (C.MQTYPE_FLOAT32, C.MQTYPE_FLOAT64):
        if len(text) > 40:
            raise _fail(lines, f"{what}: a float of {len(text)} characters")
        try:
            return float.fromhex(text)
        except (ValueError, OverflowError):
            raise _fail(lines, f"{what}: {text!r} is not a hexadecimal float") from None
    if ptype == C.MQTYPE_STRING:
        value, end = _string(lines, text, what)
        if end != len(text):
            raise _fail(lines, f"{what}: something follows the string")
        return value
    return _hex(lines, text.encode("ascii", "replace"), what)


def _message(lines: _Lines, number: int, first: bytes) -> DumpedMessage:
    at = lines.number
    crc = zlib.crc32(first + b"\n")
    fields: dict[str, Any] = {}
    props = PropertySet()
    while True:
        raw = lines.next("an MD, PROP or DATA line")
        if raw.startswith(b"MD "):
            _md_field(lines, fields, raw)
        elif raw.startswith(b"PROP "):
            if len(props) >= MAX_PROPERTIES:
                raise _fail(lines, f"more than {MAX_PROPERTIES} properties (MAX_PROPERTIES)")
            _property(lines, props, raw)
        elif raw.startswith(b"DATA "):
            break
        else:
            raise _fail(lines, f"an MD, PROP or DATA line expected, not {raw[:60]!r}")
        crc = zlib.crc32(raw + b"\n", crc)
    crc = zlib.crc32(raw + b"\n", crc)
    missing = [ibm for ibm, (attr, _, _) in FIELDS.items() if attr not in fields]
    if missing:
        raise _fail(lines, f"message {number} lacks MQMD field(s) {', '.join(missing)}")
    length = _int(lines, raw[5:].decode("ascii", "replace"), "DATA length", 0, MAX_DATA)
    data = bytearray()
    while len(data) < length:
        raw = lines.next(f"X lines for the {length - len(data)} bytes of body left")
        if not raw.startswith(b"X "):
            raise _fail(lines, f"an X line expected ({length - len(data)} bytes of body left), not {raw[:60]!r}")
        chunk = _hex(lines, raw[2:], "body")
        if len(data) + len(chunk) > length:
            raise _fail(lines, f"the body runs past its DATA length of {length}")
        data += chunk
        crc = zlib.crc32(raw + b"\n", crc)
    raw = lines.next(f"END {number}")
    if raw != f"END {number} {crc:08x}".encode("ascii"):
        if raw.startswith(f"END {number} ".encode("ascii")):
            raise _fail(lines, f"message {number} (line {at}) does not match its checksum: the file was changed "
                               "or damaged")
        raise _fail(lines, f"END {number} expected, not {raw[:60]!r}")
    md = MQMD(**fields)
    return DumpedMessage(md, props, bytes(data), at)


def read(f: IO[bytes], *, partial: bool = False) -> Iterator[DumpedMessage]:
    """The messages of a dump file, in order; with ``partial``, a file that merely ends
    early (no TOTAL line, its last message or line cut: a dump killed while writing) gives
    its whole messages before the cut instead of failing.

    Raises:
        DumpFileError: the file is not a whole, intact dump (naming the line), raised when
            the iteration reaches the defect; with ``partial``, only a defect other than
            the file's end.
    """
    try:
        yield from _read(f)
    except DumpFileError as exc:
        if not (partial and exc.truncated):
            raise


def _read(f: IO[bytes]) -> Iterator[DumpedMessage]:
    lines = _Lines(f)
    first = lines.next("the FERRYMQ-DUMP line")
    if first != MAGIC:
        raise _fail(lines, f"not a ferrymq dump file: it must begin with {MAGIC.decode()!r}")
    number = 0
    while True:
        raw = lines.next(f"MSG {number + 1} or TOTAL {number}")
        if raw.startswith(b"#") or not raw:
            continue
        if raw.startswith(b"TOTAL "):
            if raw != f"TOTAL {number}".encode("ascii"):
                raise _fail(lines, f"TOTAL {number} expected (the messages read), not {raw[:40]!r}")
            if f.read(1):
                raise _fail(lines, "something follows the TOTAL line")
            return
        if raw != f"MSG {number + 1}".encode("ascii"):
            raise _fail(lines, f"MSG {number + 1} expected, not {raw[:60]!r}")
        number += 1
        yield _message(lines, number, raw)
