"""Frame layouts, each declared once, and the packer and in-place decoder made from it.

A frame is declared by its packet type, its event class, its flags and its body's fields
in wire order, each ``(attribute, kind)``:

- a struct code (``I``, ``i``, ``H``, ``q``, ``d``, ``B``, ``?``, ``16s``, ``24s``): a
  fixed field. Consecutive fixed fields are one precompiled ``struct``; the fields right
  after the GPacket header are packed with the header, in one ``pack``.
- ``str``, ``name`` (a ``str`` of an object name, through bounded tables of the names seen),
  ``detail`` (a ``str`` cut to body.DETAIL_LIMIT), ``md`` (an MQMD, decoded),
  ``md_bytes`` (an MQMD checked and kept as its bytes), ``props``, ``rest`` (the
  remaining bytes), ``status`` (the attributes ``comp``, ``reason``, ``detail``), or
  ``batch`` (a u32 count of 1..body.MAX_BATCH): the kinds of ferrymq.protocol.body.
- a ``Part``: a field of its own shape (a list, a batch's items), with its encoder and
  decoder.

From a declaration ``Frame`` generates, as ``dataclasses`` generates ``__init__``, two
straight-line functions with no loop over the fields and no dict per frame:
``pack(event) -> list[bytes]`` (the whole packet, header first) and ``decode(buf, start,
end, corr, flags) -> event`` (reading the body ``buf[start:end]`` where it lies in the
receive buffer). Each writes and reads the usual value of a kind inline (an OK status, an
MQMD version 2 as x86-64 writes it, no properties) and leaves the rest, and every error,
to ferrymq.protocol.body. ``decode`` reads each run of fields of known size (fixed fields,
a status, an MQMD, a properties field, a string's length) with one ``unpack`` and tests the
usual values among them at once; a body with any other value goes, from its start, to
``decode_general``, which reads field by field. A ``name`` field whose bytes are those of
the last name the decoder read is read with the runs before and after it in that one
``unpack`` too (a struct per name length, made from the same declaration). ``pack`` packs a reply's OK status with the
header and the fixed fields after it, in one ``pack``; ``pack_general`` packs the status
on its own (tests/property/test_codec_usual_decoders.py holds each pair to the same
results). Their source is kept on the Frame (``pack_source``, ``decode_source``).

A third function, ``decode_packet(buf, at, have, limit) -> (event, end) | None``, is
``decode`` for a whole packet: the GPacket header is read in the ``unpack`` of the body's
first run and checked there (type, version, magic, no properties section, size within the
limit and within what is buffered), so that a usual frame costs the protocol machine one
call and one ``unpack`` more than its body's. Any header it does not take, it leaves (None)
to ferrymq.wire.gpacket.GPacketReader and ``decode``, which read every case
(tests/property/test_codec_usual_decoders.py holds it to the general decoder too).

A protocol machine takes and sends frames through two more, each made from the same
declaration with its event's rule inline (the lines of the rule's usual case,
ferrymq.protocol.rules.USUAL): ``taker`` gives ``take(c, buf, pos, have, limit)``,
``decode_packet`` that also applies the rule to the machine's conversation ``c`` (a reply
decoded and matched to its request in one step; anything else left to the general way,
having changed nothing), and ``sender`` gives ``send(c, e, parts)``, ``pack`` that applies
the rule once the packet is made and adds its pieces to ``parts``
(tests/property/test_protocol_fused_steps.py holds each to the decoder or packer and the rule).
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar, cast

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.protocol import body
from ferrymq.protocol.body import Reader
from ferrymq.protocol.codecache import CodeCache
from ferrymq.wire import gpacket
from ferrymq.wire.mqmd import MQMD, V1_LE_HEAD, V2_LE_HEAD, v2_le

Ev = TypeVar("Ev")

CODE = CodeCache()
"""The generated functions' compiled code, kept between processes (ferrymq.protocol.codecache);
the module that declares the frames saves it once they are all made."""

HEADER = ">hhiiiqqI"  # GPacket's header (ferrymq.wire.gpacket): version, type, size, magic, props, timestamp, seq, flags
HEADER_SIZE = struct.calcsize(HEADER)
assert HEADER_SIZE == gpacket.HEADER_SIZE
PACK_HEADER = ">Iiq8xqI"
"""The header as a generated packer writes it: the version and type as one constant, the
size, the magic and the (empty) properties section's length as one constant, the timestamp
as zero bytes, the sequence and the flags: the same bytes as HEADER with three values fewer."""
assert struct.pack(PACK_HEADER, gpacket.VERSION << 16 | 1113, -5, gpacket.MAGIC << 32, -7, 9) == struct.pack(
    HEADER, gpacket.VERSION, 1113, -5, gpacket.MAGIC, 0, 0, -7, 9)
_TYPE = struct.Struct(">I")  # the header's version and type, read as one int by generated decoders
assert not any(body.OK_STATUS) and len(body.OK_STATUS) == 10 and not any(body.NO_PROPS)  # read as ints of 0

FLAG_REPLY_EXPECTED = 0x1  # GPacket A bit
FLAG_MSG_HANDLE = 0x2  # GET: the getter has a message handle

_VARIABLE = {  # kind -> (the encoder of one value, the Reader method that reads it)
    "str": ("_string", "string"),
    "name": ("_name", "string"),
    "charv": ("_charv", "charv"),
    "detail": ("_detail", "string"),
    "md": ("_md", "md"),
    "md_bytes": ("_md", "md_bytes"),
    "props": ("_props", "props"),
}


@dataclasses.dataclass(frozen=True, slots=True)
class Part(Generic[Ev]):
    """A field of its own shape: ``encode(event)`` gives its bytes (one or more pieces) from
    the event's ``attrs``; ``decode(reader)`` reads it and gives their values, in order."""

    attrs: tuple[str, ...]
    encode: Callable[[Ev], list[bytes]]
    decode: Callable[[Reader], tuple[object, ...]]


Field = tuple[str, "str | Part[Ev]"]
Decode = Callable[[bytes | memoryview, int, int, int, int], Ev]
"""A generated decoder: (buffer, body start, body end, correlation id, flags) -> the event."""
Take = Callable[[object, bytes | bytearray, int, int, int], tuple[Ev, int] | None]
"""A generated taker (``Frame.taker``): (the machine's conversation, buffer, packet start,
end of the bytes buffered, largest packet allowed) -> the event and the packet's end, its
rule applied, or None when the packet is not the usual one (nothing changed)."""
Send = Callable[[object, Ev, list[bytes]], None]
"""A generated sender (``Frame.sender``): (the machine's conversation, the event, the list
its packet's pieces are added to)."""
DecodePacket = Callable[[bytes | bytearray, int, int, int], tuple[Ev, int] | None]
"""A generated packet decoder: (buffer, packet start, end of the bytes buffered, largest
packet allowed) -> the event and the packet's end, or None when the bytes at the start are
not a whole packet of this frame with a good header and no properties section."""


_MD_V2_CODE = f"8s{C.MQMD_LENGTH_2 - 8}x"
"""An MQMD version 2 in a generated decoder's run: its head (StrucId and Version) and the rest skipped."""

_NAMED_MAX = 48
"""The longest name a generated decoder keeps with its struct (an object name is at most 48)."""

_GENERAL = "#general "
"""Marks a packer's line that only a reply with another status than the usual one runs."""


def _is_fixed(kind: object) -> bool:
    if kind == "batch":
        return True
    if not isinstance(kind, str) or kind in _VARIABLE or kind in ("rest", "status"):
        return False
    struct.calcsize(">" + kind)  # a struct code, or the declaration is wrong
    return True


def _code(kind: str) -> str:
    return "I" if kind == "batch" else kind


def _codes(fields: list[tuple[str, str]]) -> str:
    return "".join(_code(kind) for _, kind in fields)


class Frame(Generic[Ev]):
    """One frame's layout and what is generated from it.

    ``flags``: the GPacket flag bits, each ``(bit, attribute)``; an attribute of "" means
    the bit is always set, else the bit carries that boolean attribute both ways.
    ``corr``: whether the event has a correlation id (the header's sequence); else 0.
    """

    def __init__(self, ptype: int, name: str, event: type[Ev], fields: Sequence[Field[Ev]], *,
                 flags: Sequence[tuple[int, str]] = (), corr: bool = True) -> None:
        self.ptype = ptype
        self.name = name
        self.event = event
        self.fields = tuple(fields)
        self.flags = tuple(flags)
        self.corr = corr
        self._ns: dict[str, object] = {"_E": event, "_string": body.string, "_name": body.name,
                                       "_NAMES": body.NAME_TABLE,
                                       "_NAME_STRS": body.NAME_STRS, "_name_str": body.name_str, "_detail": body.detail, "_charv": body.charv, "_md": body.md,
                                       "_props": body.props, "_status": body.status, "_MAX_BATCH": body.MAX_BATCH,
                                       "_OK": body.OK_STATUS, "_NO_PROPS": body.NO_PROPS, "_V2": V2_LE_HEAD,
                                       "_V2_LENGTH": C.MQMD_LENGTH_2, "_V1": V1_LE_HEAD, "_V1_LENGTH": C.MQMD_LENGTH_1,
                                       "_MQMD": MQMD, "_v2_le": v2_le, "_Reader": Reader,
                                       "_DecodeError": DecodeError, "_NAME": name,
                                       "_str": body.read_string}
        self.pack_source = self._pack_source(fold_status=True)
        self.pack = cast(Callable[[Ev], list[bytes]], self._compile(self.pack_source, "pack"))
        self.pack_general = self.pack if not self._folds_status() else cast(
            Callable[[Ev], list[bytes]], self._compile(self._pack_source(fold_status=False), "pack"))
        self.decode_general, self.decode, self.decode_source = self._decoders(md_as_bytes=False)
        self.decode_packet = self._packet_decoder(md_as_bytes=False)

    def decoder(self, *, md_as_bytes: bool) -> Decode[Ev]:
        """``decode``, or with ``md_as_bytes`` one that keeps every ``md`` field as its bytes
        (checked to be an MQMD: a driver that decodes it only when it must)."""
        return self.decode if not md_as_bytes else self._decoders(md_as_bytes=True)[1]

    def packet_decoder(self, *, md_as_bytes: bool = False) -> DecodePacket[Ev]:
        """``decode_packet``, or with ``md_as_bytes`` as ``decoder`` says."""
        return self.decode_packet if not md_as_bytes else self._packet_decoder(md_as_bytes=True)

    def _decoders(self, *, md_as_bytes: bool) -> tuple[Decode[Ev], Decode[Ev], str]:
        """The general decoder; ``decode``, the usual values' decoder, which hands every
        other body to the general one (the general one itself when the frame has a field
        only it reads); and the source of ``decode``."""
        source = self._decode_source(md_as_bytes=md_as_bytes)
        general = cast(Decode[Ev], self._compile(source, "decode"))
        usual = self._usual_decode_source(md_as_bytes=md_as_bytes)
        if usual is None:
            return general, general, source
        return general, cast(Decode[Ev], self._compile(usual, "decode", general)), usual

    def _packet_decoder(self, *, md_as_bytes: bool) -> DecodePacket[Ev]:
        general = self._decoders(md_as_bytes=md_as_bytes)[0]
        source = self._usual_decode_source(md_as_bytes=md_as_bytes, packet=True)
        assert source is not None
        return cast(DecodePacket[Ev], self._compile(source, "decode_packet", general))

    def taker(self, rule: Sequence[str] | None, names: dict[str, object], *,
              md_as_bytes: bool = False) -> Take[Ev] | None:
        """The step that takes this frame's usual packet for a protocol machine:
        ``decode_packet`` and the rule of its event at once, ``take(c, buf, pos, have, limit)
        -> (event, end) | None`` with ``c`` the machine's conversation. ``rule``: the lines of
        the rule's usual case, over ``c`` and the event ``e`` (ferrymq.protocol.rules.USUAL),
        with ``{unusual}`` where it finds the case is not the usual one (it has changed
        nothing then); None: the rule, ``names``' ``_rule``, is called on the event. Whatever is not the usual packet with its rule
        kept (a header, a body or a rule the general decoder and the rule must read or
        refuse) returns None, having changed nothing. None for a frame with a field only the
        general decoder reads."""
        source = self._usual_decode_source(md_as_bytes=md_as_bytes, packet=True, take=True, rule=rule)
        if source is None:
            return None
        ns = dict(self._ns)
        ns.update(names)
        exec(CODE.compile(source, f"<frame {self.name} take>"), ns)  # the code generated from our own declaration
        return cast(Take[Ev], ns["take"])

    def sender(self, rule: Sequence[str] | None, names: dict[str, object]) -> Send[Ev]:
        """The step that sends this frame for a protocol machine: ``pack`` and the rule of
        its event at once, ``send(c, e, parts)`` with ``c`` the machine's conversation,
        which adds the packet's pieces to the list ``parts`` once the rule has allowed the
        event and applied it (an event that cannot be encoded raises what ``pack`` raises,
        and changes nothing). ``rule``: the lines of the rule's usual case, as for
        ``taker``, whose ``{unusual}`` calls the whole rule, ``names``' ``_full``; None:
        the rule, ``names``' ``_rule``, is called."""
        source = self._pack_source(fold_status=True, rule=list(rule) if rule is not None else ["_rule(c, e)"])
        ns = dict(self._ns)
        ns.update(names)
        exec(CODE.compile(source, f"<frame {self.name} send>"), ns)  # the code generated from our own declaration
        return cast(Send[Ev], ns["send"])

    def _compile(self, source: str, fn: str, general: object = None) -> object:
        ns = dict(self._ns)
        ns["_general"] = general
        exec(CODE.compile(source, f"<frame {self.name} {fn}>"), ns)  # the code generated from our own declaration
        return ns[fn]

    def _segments(self) -> list[tuple[str, list[tuple[str, str]]] | tuple[str, tuple[str, object]]]:
        """The fields as runs: ("fixed", [(attr, code), ...]) or ("one", (attr, kind))."""
        out: list[tuple[str, list[tuple[str, str]]] | tuple[str, tuple[str, object]]] = []
        for attr, kind in self.fields:
            if _is_fixed(kind):
                assert isinstance(kind, str)
                if out and out[-1][0] == "fixed":
                    cast(list[tuple[str, str]], out[-1][1]).append((attr, kind))
                else:
                    out.append(("fixed", [(attr, kind)]))
            else:
                out.append(("one", (attr, kind)))
        return out

    def _struct(self, prefix: str, fields: list[tuple[str, str]]) -> str:
        name = f"_S{len(self._ns)}"
        self._ns[name] = struct.Struct(prefix + _codes(fields))
        return name

    # -- the packer --------------------------------------------------------------------

    def _folds_status(self) -> bool:
        """A reply whose status has fixed fields after it: its usual status (OK) is packed
        with the header and them."""
        segments = self._segments()
        return (len(segments) > 1 and segments[0] == ("one", ("status", "status")) and segments[1][0] == "fixed")

    def _pack_source(self, *, fold_status: bool, rule: list[str] | None = None) -> str:
        """``pack``'s source; with ``rule``, ``sender``'s: the rule's lines run where the
        packet is made, and its pieces are added to ``parts``."""
        lines: list[str] = []
        pieces: list[str] = []  # expressions of the packet's pieces after the first
        sizes: list[str] = []  # expressions of the pieces' lengths
        fixed_size = HEADER_SIZE
        head_fields: list[tuple[str, str]] = []
        segments = self._segments()
        if segments and segments[0][0] == "fixed":
            head_fields = cast(list[tuple[str, str]], segments.pop(0)[1])
            fixed_size += struct.calcsize(">" + _codes(head_fields))
        # A reply's status, when it is the usual one (OK), is packed with the header and the
        # fixed fields after it; any other is its own piece, as below.
        status_head: list[tuple[str, str]] | None = None
        if fold_status and self._folds_status():
            status_head = cast(list[tuple[str, str]], segments[1][1])
            lines.append(_GENERAL + "p0 = _status(e.comp, e.reason, e.detail)")
        for i, (what, spec) in enumerate(segments):
            var = f"p{i}"
            if what == "fixed":
                fields = cast(list[tuple[str, str]], spec)
                lines += self._checks(fields)
                st = self._struct(">", fields)
                packed = f"{var} = {st}.pack({', '.join(f'e.{a}' for a, _ in fields)})"
                lines.append(_GENERAL + packed if i == 1 and status_head is not None else packed)
                fixed_size += struct.calcsize(">" + _codes(fields))
                pieces.append(var)
                continue
            attr, kind = cast(tuple[str, object], spec)
            if isinstance(kind, Part):
                fn = f"_P{i}"
                self._ns[fn] = kind.encode
                lines.append(f"{var} = {fn}(e)")
                pieces.append(f"*{var}")
                sizes.append(f"sum(map(len, {var}))")
                continue
            # The usual value of each kind is written inline; the rest (and every check) is body's.
            if kind == "status":
                if status_head is None:
                    lines.append(f"{var} = _OK if not (e.comp or e.reason or e.detail) else "
                                 f"_status(e.comp, e.reason, e.detail)")
            elif kind == "rest":  # bytes, or any buffer (copied here: refused here if it is none)
                lines.append(f"{var} = e.{attr}")
                lines.append(f"if type({var}) is not bytes: {var} = memoryview({var}).tobytes()")
            elif kind in ("md", "md_bytes"):
                lines.append(f"{var} = e.{attr}")
                # a whole version 2, or a version 1 (a pymqi MD's default), as x86-64 writes them
                lines.append(f"if type({var}) is not bytes or (len({var}) != _V2_LENGTH or {var}[:8] != _V2) and "
                             f"(len({var}) != _V1_LENGTH or {var}[:8] != _V1): {var} = _md({var})")
            elif kind == "props":
                lines.append(f"{var} = _props(e.{attr}) if e.{attr} else _NO_PROPS")
            elif kind == "name":
                lines.append(f"{var} = _NAMES.get(e.{attr}) or _name(e.{attr})")
            else:
                lines.append(f"{var} = {_VARIABLE[cast(str, kind)][0]}(e.{attr})")
            pieces.append(var)
            sizes.append(f"len({var})")
        lines = self._checks(head_fields) + lines
        flags = " | ".join(str(bit) if not attr else f"({bit} if e.{attr} else 0)" for bit, attr in self.flags) or "0"
        args = [str(gpacket.VERSION << 16 | self.ptype), "", str(gpacket.MAGIC << 32),
                "e.corr" if self.corr else "0", flags]

        def packet(head: str, head_args: list[str], size: int, rest: list[str], rest_sizes: list[str]) -> list[str]:
            args[1] = " + ".join([str(size), *rest_sizes])
            packed = f"{head}.pack({', '.join(args + head_args)})"
            if rule is None:
                return [f"return [{packed}, {', '.join(rest)}]" if rest else f"return [{packed}]"]
            made = [f"h = {packed}", *(line.format(unusual="_full(c, e)") for line in rule)]
            # One append a piece (a step the interpreter specialises), not ``parts += (...)``:
            # that makes a tuple and goes the generic way of ``+=`` to list.extend.
            return [*made, *(f"parts += {p[1:]}" if p.startswith("*") else f"parts.append({p})" for p in ["h", *rest])]

        if status_head is not None:
            # The usual status first, as a branch of its own: the general lines after it
            # are the same but for the status and the fixed fields packed on their own.
            usual_head = self._struct(PACK_HEADER + "10x", status_head)  # OK: 10 zero bytes
            usual = [line for line in lines if not line.startswith(_GENERAL)]
            usual += packet(usual_head, [f"e.{a}" for a, _ in status_head],
                            fixed_size + len(body.OK_STATUS), pieces[2:], sizes[1:])
            if rule is not None:
                usual.append("return")
            lines = ["if not (e.comp or e.reason or e.detail):", *(f"    {line}" for line in usual),
                     *(line.removeprefix(_GENERAL) for line in lines)]
        head = self._struct(PACK_HEADER, head_fields)
        lines += packet(head, [f"e.{a}" for a, _ in head_fields], fixed_size, pieces, sizes)
        if rule is not None:
            return "def send(c, e, parts):\n" + "".join(f"    {line}\n" for line in lines)
        return "def pack(e):\n" + "".join(f"    {line}\n" for line in lines)

    def _checks(self, fields: list[tuple[str, str]]) -> list[str]:
        """A fixed byte field must have its exact length (a struct would pad or cut it); a
        batch's count must be 1..MAX_BATCH."""
        out = []
        for attr, kind in fields:
            if kind == "batch":
                out.append(f"if not 0 < e.{attr} <= _MAX_BATCH: "
                           f"raise ValueError(f'{attr} must be 1..{{_MAX_BATCH}}, not {{e.{attr}}}')")
            elif kind.endswith("s"):
                n = int(kind[:-1])
                out.append(f"if len(e.{attr}) != {n}: raise ValueError('{attr} must be {n} bytes')")
        return out

    # -- the decoder -------------------------------------------------------------------

    def _decode_source(self, *, md_as_bytes: bool) -> str:
        # The body is read at a local ``pos``; the usual value of each kind is read inline, and
        # anything else (and every error) by a body.Reader made at that point.
        lines: list[str] = ["pos = start"]
        values: dict[str, str] = {}  # event attribute -> the expression of its value
        if self.corr:
            values["corr"] = "corr"
        for bit, attr in self.flags:
            if attr:
                values[attr] = f"flags & {bit} != 0"

        def by_reader(call: str) -> list[str]:
            return ["r = _Reader(buf, _NAME, start, end)", "r.pos = pos", call, "pos = r.pos"]

        for i, (what, spec) in enumerate(self._segments()):
            if what == "fixed":
                fields = cast(list[tuple[str, str]], spec)
                st = self._struct(">", fields)
                size = struct.calcsize(">" + _codes(fields))
                names = [f"v_{a}" for a, _ in fields]
                lines.append(f"if end - pos < {size}:")
                lines += ["    " + line for line in by_reader(f"r.unpack({st})")]
                lines.append(f"{', '.join(names)}, = {st}.unpack_from(buf, pos)")
                lines.append(f"pos += {size}")
                for a, code in fields:
                    if code == "batch":
                        lines.append(f"if not 0 < v_{a} <= _MAX_BATCH:")
                        lines += ["    " + line for line in by_reader(f"r.batch_count(v_{a})")]
                values.update((a, f"v_{a}") for a, _ in fields)
                continue
            attr, one = cast(tuple[str, object], spec)
            if isinstance(one, Part):
                fn = f"_D{i}"
                self._ns[fn] = one.decode
                names = [f"v_{a}" for a in one.attrs]
                lines += by_reader(f"{', '.join(names)}, = {fn}(r)")
                values.update((a, f"v_{a}") for a in one.attrs)
                continue
            kind = cast(str, one)
            if kind == "status":
                lines.append("if buf.startswith(_OK, pos) and end - pos >= 10:")
                lines.append("    v_comp = v_reason = 0; v_detail = ''; pos += 10")
                lines.append("else:")
                lines += ["    " + line for line in by_reader("v_comp, v_reason, v_detail = r.status()")]
                values.update(comp="v_comp", reason="v_reason", detail="v_detail")
                continue
            v = f"v_{attr}"
            values[attr] = v
            if kind == "rest":
                lines += [f"{v} = buf[pos:end]", f"if type({v}) is not bytes: {v} = bytes({v})", "pos = end"]
            elif kind in ("md", "md_bytes"):
                as_bytes = kind == "md_bytes" or md_as_bytes
                lines.append("if end - pos >= _V2_LENGTH and buf.startswith(_V2, pos):")
                lines.append(f"    {v} = " + ("bytes(buf[pos:pos + _V2_LENGTH])" if as_bytes else "_MQMD.decode(buf, pos)"))
                lines.append("    pos += _V2_LENGTH")
                lines.append("else:")
                lines += ["    " + line for line in by_reader(f"{v} = r.{'md_bytes' if as_bytes else 'md'}()")]
            elif kind == "props":
                lines.append(f"if end - pos >= 4 and buf.startswith(_NO_PROPS, pos): {v} = None; pos += 4")
                lines.append("else:")
                lines += ["    " + line for line in by_reader(f"{v} = r.props()")]
            elif _VARIABLE[kind][1] == "string":  # the usual one, whole and ASCII, inline; any other by the Reader
                lines.append("n = buf[pos] << 8 | buf[pos + 1] if end - pos >= 2 else end")
                lines.append("if n <= end - pos - 2:")
                lines.append("    try:")
                lines.append(f"        {v} = str(buf[pos + 2:pos + 2 + n], 'ascii'); pos += 2 + n; n = -1")
                lines.append("    except UnicodeDecodeError:")
                lines.append("        pass")
                lines.append("if n >= 0:")
                lines += ["    " + line for line in by_reader(f"{v} = r.string()")]
            else:
                lines += by_reader(f"{v} = r.{_VARIABLE[kind][1]}()")
        if not any(kind == "rest" for _, kind in self.fields):
            lines.append("if pos != end:")
            lines.append("    raise _DecodeError(_NAME, pos - start, f'{end - pos} bytes after the end of the body')")
        lines.append(f"return _E({self._arguments(values)})")
        return "def decode(buf, start, end, corr, flags):\n" + "".join(f"    {line}\n" for line in lines)

    def _usual_decode_source(self, *, md_as_bytes: bool, packet: bool = False, take: bool = False,
                             rule: Sequence[str] | None = None) -> str | None:
        """A decoder of bodies whose every field has its usual value (an OK status, an MQMD
        version 2 in little-endian, no properties, ASCII text), reading each run of fields
        of known size with one ``unpack`` and testing the usual values among them at once;
        any other body goes to the general decoder (``_general``), from its start. None when
        a field is read only by the general decoder (a Part, a charv).

        With ``packet``, ``decode_packet``: the same decoder of a whole packet, whose header
        is read and checked in the ``unpack`` of the body's first run (its fixed fields up to
        its first variable one); a packet with the header checked goes whole to the general
        decoder when its body is not the usual one, and every other case returns None (and
        is read by ferrymq.wire.gpacket.GPacketReader, which says what is wrong). A frame
        with a field only the general decoder reads has the header read so, and the body
        read by the general decoder."""
        own_fields = any(isinstance(kind, Part) or kind == "charv" for _, kind in self.fields)
        if own_fields and (not packet or take):
            return None
        lines: list[str]
        if take:  # the taker's: nothing but the usual packet, with its rule kept (its
            # packet's start is read where it is passed, ``pos``)
            general = "return None"
            lines = []
        elif not packet:
            general = "return _general(buf, start, end, corr, flags)"
            lines = ["pos = start"]
        else:
            general = f"return _general(buf, at + {HEADER_SIZE}, end, corr, flags), end"
            lines = ["pos = at"]
        values: dict[str, str] = {}
        if self.corr:
            values["corr"] = "corr"
        for bit, attr in self.flags:
            if attr:
                values[attr] = f"flags & {bit} != 0"
        codes: list[str] = []  # the run's struct codes
        names: list[str] = []  # the variables its unpack assigns
        unusual: list[str] = []  # the tests that its values are not the usual ones
        after: list[str] = []  # lines that read the run's fields, ``pos`` still at its start
        slices: list[str] = []  # the variables of bytes fields, slices of ``buf``
        size = 0

        if packet:  # the header opens the first run: version and type (one int), size, magic,
            # an empty properties section, (the timestamp skipped), sequence, flags
            # (the magic and the properties' length read as one int: the magic's, shifted,
            # when there are none; the flags skipped where nothing reads them)
            read_flags = not take or any(attr for _, attr in self.flags)
            codes.append("Iiq8xq" + ("I" if read_flags else "4x"))
            names.extend(["h_type", "h_size", "h_magic", "corr", *(["flags"] if read_flags else [])])
            self._ns["_TYPE"] = _TYPE.unpack(struct.pack(">hh", gpacket.VERSION, self.ptype))[0]
            self._ns["_MAGIC"] = gpacket.MAGIC << 32
            size = HEADER_SIZE
        first = packet
        named: list[tuple[str, int, list[str], list[str], list[str], list[str], int, bool]] = []
        # a name field waiting for the run after it: (attribute, the index of its run's first
        # line, that run's codes, names, tests, reads and size, whether it was the first)

        def flush() -> None:
            if named:  # the run after a name: read with it when it is the last name read
                run2 = (list(codes), list(names), list(unusual), list(after), size)
                run_flush()
                self._fuse_name(lines, named.pop(), *run2, general)
            else:
                run_flush()

        def run_flush() -> None:
            nonlocal size, first
            if not codes:
                return
            st = f"_S{len(self._ns)}"
            self._ns[st] = struct.Struct(">" + "".join(codes))
            assert self._ns[st].size == size  # type: ignore[attr-defined]
            if first:  # the header's checks (a packet shorter than the run: not the usual one)
                lines.append(f"if have - pos < {size}: return None")
                lines.append(f"{', '.join(names)}, = {st}.unpack_from(buf, pos)")
                lines.append("end = pos + h_size")
                checks = f"h_type != _TYPE or h_magic != _MAGIC or not {size} <= h_size <= limit or end > have"
                if take:  # an unusual body is left as a bad header is: one test
                    checks = " or ".join([checks, *unusual])
                    unusual.clear()
                lines.append(f"if {checks}: return None")
                first = False
            else:
                lines.append(f"if end - pos < {size}: {general}")
                lines.append(f"{', '.join(names)}, = {st}.unpack_from(buf, pos)")
            if unusual:
                lines.append(f"if {' or '.join(unusual)}: {general}")
            lines.extend(after)
            lines.append(f"pos += {size}")
            for done in (codes, names, unusual, after):
                done.clear()
            size = 0

        if own_fields:  # the header only; the body is the general decoder's
            flush()
            lines.append(general)
            return "def decode_packet(buf, at, have, limit):\n" + "".join(f"    {line}\n" for line in lines)

        for attr, kind in self.fields:
            assert isinstance(kind, str)
            v = f"v_{attr}"
            if _is_fixed(kind):
                codes.append(_code(kind))
                names.append(v)
                if kind == "batch":
                    unusual.append(f"not 0 < {v} <= _MAX_BATCH")
                size += struct.calcsize(">" + _code(kind))
                values[attr] = v
            elif kind == "status":  # the usual one (OK) is 10 zero bytes: read as two ints
                codes.append("QH")
                names.extend(["h_status", "h_status_end"])
                unusual.append("h_status or h_status_end")
                size += 10
                values.update(comp="0", reason="0", detail="''")
            elif kind in ("md", "md_bytes"):
                codes.append(_MD_V2_CODE)
                names.append(f"h_{attr}")
                unusual.append(f"h_{attr} != _V2")
                at = f"pos + {size}" if size else "pos"
                if kind == "md_bytes" or md_as_bytes:
                    after.append(f"{v} = buf[{at}:pos + {size + C.MQMD_LENGTH_2}]")
                    slices.append(v)
                else:
                    after.append(f"{v} = _v2_le(buf, {at})")
                size += C.MQMD_LENGTH_2
                values[attr] = v
            elif kind == "props":  # the usual one: a length of 0
                codes.append("I")
                names.append(f"h_{attr}")
                unusual.append(f"h_{attr}")
                size += 4
                values[attr] = "None"
            elif kind == "rest":
                flush()
                lines.append(f"{v} = buf[pos:end]")
                if (attr, kind) != self.fields[-1]:  # else nothing reads ``pos`` again
                    lines.append("pos = end")
                slices.append(v)
                values[attr] = v
            else:  # a string: its length ends the run, its text follows
                assert _VARIABLE[kind][1] == "string"
                codes.append("H")
                names.append(f"n_{attr}")
                size += 2
                if kind == "name":  # its run, for _fuse_name once the run after it is known
                    run = (attr, len(lines), list(codes), list(names), list(unusual), list(after), size, first)
                    flush()
                    named.append(run)
                else:
                    flush()
                lines.append(f"if n_{attr} > end - pos: {general}")
                if kind == "name":  # an object name: decoded once, then found by its bytes
                    lines.append(f"{v} = _NAME_STRS.get(buf[pos:pos + n_{attr}]) if type(buf) is bytes else None")
                    lines.append(f"if {v} is None:")
                    lines.append(f"    {v} = _name_str(buf[pos:pos + n_{attr}])")
                    lines.append(f"    if {v} is None: {general}")
                    lines.append(f"if {v} is not k_{attr} and n_{attr} <= _NAMED_MAX: "
                                 f"_K_{attr} = _named_{attr}(bytes(buf[pos:pos + n_{attr}]), {v})")
                else:
                    lines.append("try:")
                    lines.append(f"    {v} = str(buf[pos:pos + n_{attr}], 'ascii')")
                    lines.append("except UnicodeDecodeError:")
                    lines.append(f"    {general}")
                lines.append(f"pos += n_{attr}")
                values[attr] = v
        flush()
        assert not named
        lines[:0] = [f"global _K_{attr}" for attr, kind in self.fields if kind == "name"]
        if not any(kind == "rest" for _, kind in self.fields):
            lines.append(f"if pos != end: {general}")
        if slices:  # a slice of a bytes buffer is bytes; of any other, made bytes
            lines.append(f"if type(buf) is not bytes: {'; '.join(f'{v} = bytes({v})' for v in slices)}")
        if take:
            lines.append(f"e = _E({self._arguments(values)})")
            if rule is None:
                lines += ["try:", "    _rule(c, e)", "except _LocalProtocolError:", f"    {general}"]
            else:
                lines += (line.format(unusual=general) for line in rule)
            lines.append("return e, end")
            return "def take(c, buf, pos, have, limit):\n" + "".join(f"    {line}\n" for line in lines)
        if packet:
            lines.append(f"return _E({self._arguments(values)}), end")
            return "def decode_packet(buf, at, have, limit):\n" + "".join(f"    {line}\n" for line in lines)
        lines.append(f"return _E({self._arguments(values)})")
        return "def decode(buf, start, end, corr, flags):\n" + "".join(f"    {line}\n" for line in lines)

    def _fuse_name(self, lines: list[str], run: tuple[str, int, list[str], list[str], list[str], list[str], int, bool],
                   codes: list[str], names: list[str], unusual: list[str], after: list[str], size: int,
                   general: str) -> None:
        """Read a ``name`` field with the run of fields before it and the run after it in one
        ``unpack``, when its bytes are those of the last name this decoder read (a getter's
        replies name one queue again and again): a struct per name length, made from the
        declaration, reads the name's length and bytes as one field, compared with the last
        name's. ``lines[start:]`` (both runs and the name, read as any string is) are kept
        for any other body, and keep the last name (one of at most _NAMED_MAX bytes) with
        its struct in ``_K_<attr>``: (the three parts' size, their struct, the length and
        bytes of the name, its text)."""
        attr, start, codes1, names1, unusual1, after1, size1, first1 = run
        head, tail = ">" + "".join(codes1[:-1]), "".join(codes)
        md_head = b""  # an MQMD right after the name: its head (version 2) compared with it
        if codes and codes[0] == _MD_V2_CODE and unusual and unusual[0] == f"{names[0]} != _V2":
            md_head, tail = V2_LE_HEAD, tail[len("8s"):]
            names, unusual = names[1:], unusual[1:]
        shapes: dict[int, struct.Struct] = {}

        def named(raw: bytes, text: str) -> tuple[int, struct.Struct | None, bytes, str]:
            n = len(raw)
            shape = shapes.get(n)
            if shape is None:
                shape = shapes[n] = struct.Struct(f"{head}{2 + n + len(md_head)}s{tail}")
            return size1 + n + size, shape, n.to_bytes(2, "big") + raw + md_head, text

        self._ns[f"_named_{attr}"] = named
        self._ns[f"_K_{attr}"] = (1 << 62, None, b"", "")  # no name read yet: never fits
        self._ns["_NAMED_MAX"] = _NAMED_MAX
        fast = [f"k_size, k_st, k_named, k_{attr} = _K_{attr}"]
        fast.append(f"if {'have' if first1 else 'end'} - pos >= k_size:")
        fast.append(f"    {', '.join([*names1[:-1], f'h_{attr}', *names])}, = k_st.unpack_from(buf, pos)")
        checks = [f"h_{attr} != k_named", *unusual1, *unusual]
        if first1:  # the header's checks, as the first run's
            fast.append("    end = pos + h_size")
            checks[:0] = ["h_type != _TYPE or h_magic != _MAGIC or not k_size <= h_size <= limit or end > have"]
        fast.append(f"    if {' or '.join(checks)}:")
        fast.append("        k_size = 0")
        fast.append("    else:")
        fast += ["        " + line for line in after1]
        fast.append(f"        v_{attr} = k_{attr}")
        fast.append(f"        pos += k_size - {size}")
        fast += ["        " + line for line in after]
        fast.append(f"        pos += {size}")
        fast.append("else:")
        fast.append("    k_size = 0")
        fast.append("if not k_size:")
        lines[start:] = fast + ["    " + line for line in lines[start:]]

    def _arguments(self, values: dict[str, str]) -> str:
        """The event's constructor arguments: positional while every field in order has a
        value from the frame (cheaper to bind), by keyword after the first that has not."""
        args: list[str] = []
        keyword = False
        assert dataclasses.is_dataclass(self.event)
        for f in dataclasses.fields(self.event):
            if not f.init:
                continue
            if f.name not in values:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise TypeError(f"{self.name}: the frame gives no value for {self.event.__name__}.{f.name}")
                keyword = True
                continue
            args.append(f"{f.name}={values.pop(f.name)}" if keyword else values.pop(f.name))
        if values:
            raise TypeError(f"{self.name}: {self.event.__name__} has no field {', '.join(values)}")
        return ", ".join(args)


__all__ = ["FLAG_MSG_HANDLE", "FLAG_REPLY_EXPECTED", "HEADER_SIZE", "Frame", "Part"]
