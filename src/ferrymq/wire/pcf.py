"""PCF (Programmable Command Format): the MQCFH header and its parameter structures.

A PCF message is an MQCFH followed by ParameterCount parameters: MQCFIN (integer),
MQCFIN64, MQCFST (string), MQCFIL (integer list), MQCFIL64, MQCFSL (string list), MQCFBS (byte
string), MQCFGR (a group owning the next N parameters), MQCFIF/MQCFSF (integer/string
filters). Integers follow MQMD Encoding (normal = big-endian, reversed = little-endian);
strings follow their CodedCharSetId. Every length is checked against what remains in the
buffer before anything is read, so a hostile message fails with DecodeError only.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ferrymq.errors import DecodeError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

MAX_PARAMETERS = 4096  # per message, groups included: far above any command IBM defines
MAX_LIST = 65536  # values in one MQCFIL / MQCFSL
MAX_DEPTH = 8  # nesting of MQCFGR groups

NATIVE = C.MQENC_INTEGER_NORMAL | C.MQENC_DECIMAL_NORMAL | C.MQENC_FLOAT_IEEE_NORMAL
REVERSED = C.MQENC_INTEGER_REVERSED | C.MQENC_DECIMAL_REVERSED | C.MQENC_FLOAT_IEEE_REVERSED


def order(encoding: int) -> str:
    """The struct byte order of an MQMD Encoding: ``<`` for reversed integers, else ``>``."""
    return "<" if encoding & C.MQENC_INTEGER_MASK == C.MQENC_INTEGER_REVERSED else ">"


def _codec(ccsid: int) -> str:
    # CCSID 0 means "the queue manager's", which is 1208 here.
    return "latin-1" if ccsid in (819, 850, 437, 1252, 923) else "utf-8"


def encode_text(text: str, ccsid: int) -> bytes:
    return text.encode(_codec(ccsid), "replace")


def decode_text(raw: bytes, ccsid: int) -> str:
    try:
        return raw.decode(_codec(ccsid))
    except UnicodeDecodeError as exc:
        raise DecodeError("PCF string", 0, f"PCF string is not valid in CCSID {ccsid}: {exc}") from None


def _pad4(n: int) -> int:
    return (n + 3) & ~3


@dataclass(frozen=True, slots=True)
class CFH:
    """MQCFH, 36 bytes: Type, StrucLength, Version, Command, MsgSeqNumber, Control,
    CompCode, Reason, ParameterCount."""

    type: int = F.MQCFT_COMMAND
    command: int = F.MQCMD_NONE
    msg_seq_number: int = 1
    control: int = F.MQCFC_LAST
    comp_code: int = C.MQCC_OK
    reason: int = C.MQRC_NONE
    parameter_count: int = 0
    version: int = F.MQCFH_VERSION_1
    struc_length: int = F.MQCFH_STRUC_LENGTH

    def pack(self, bo: str = ">") -> bytes:
        return struct.pack(bo + "9i", self.type, self.struc_length, self.version, self.command, self.msg_seq_number,
                           self.control, self.comp_code, self.reason, self.parameter_count)

    @classmethod
    def unpack_from(cls, buf: bytes, offset: int = 0, bo: str = ">") -> CFH:
        if len(buf) - offset < F.MQCFH_STRUC_LENGTH:
            raise DecodeError("MQCFH", 0, f"MQCFH needs {F.MQCFH_STRUC_LENGTH} bytes, {len(buf) - offset} remain")
        t, sl, ver, cmd, seq, ctl, cc, rc, count = struct.unpack_from(bo + "9i", buf, offset)
        if sl != F.MQCFH_STRUC_LENGTH:
            raise DecodeError("MQCFH", 0, f"MQCFH StrucLength {sl} is not {F.MQCFH_STRUC_LENGTH}")
        if ver not in (1, 2, 3):
            raise DecodeError("MQCFH", 0, f"MQCFH Version {ver} is not 1..3")
        if not 0 <= count <= MAX_PARAMETERS:
            raise DecodeError("MQCFH", 0, f"MQCFH ParameterCount {count} is outside 0..{MAX_PARAMETERS}")
        return cls(t, cmd, seq, ctl, cc, rc, count, ver, sl)


@dataclass(frozen=True, slots=True)
class CFIN:
    parameter: int
    value: int


@dataclass(frozen=True, slots=True)
class CFIN64:
    parameter: int
    value: int


@dataclass(frozen=True, slots=True)
class CFST:
    parameter: int
    value: str
    ccsid: int = 1208


@dataclass(frozen=True, slots=True)
class CFIL:
    parameter: int
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CFIL64:
    parameter: int
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CFSL:
    parameter: int
    values: tuple[str, ...]
    ccsid: int = 1208


@dataclass(frozen=True, slots=True)
class CFBS:
    parameter: int
    value: bytes


@dataclass(frozen=True, slots=True)
class CFIF:
    """Integer filter: WHERE(parameter operator value)."""

    parameter: int
    operator: int
    value: int


@dataclass(frozen=True, slots=True)
class CFSF:
    """String filter: WHERE(parameter operator 'value')."""

    parameter: int
    operator: int
    value: str
    ccsid: int = 1208


@dataclass(frozen=True, slots=True)
class CFGR:
    """A group: its parameters follow it in the message (ParameterCount of them)."""

    parameter: int
    params: tuple[Param, ...] = ()


Param = CFIN | CFIN64 | CFST | CFIL | CFIL64 | CFSL | CFBS | CFIF | CFSF | CFGR


def pack_param(p: Param, bo: str = ">") -> bytes:
    """One parameter structure (a group with its members) in byte order ``bo``."""
    if isinstance(p, CFIN):
        return struct.pack(bo + "4i", F.MQCFT_INTEGER, F.MQCFIN_STRUC_LENGTH, p.parameter, p.value)
    if isinstance(p, CFIN64):
        return struct.pack(bo + "4iq", F.MQCFT_INTEGER64, F.MQCFIN64_STRUC_LENGTH, p.parameter, 0, p.value)
    if isinstance(p, CFST):
        raw = encode_text(p.value, p.ccsid)
        length = F.MQCFST_STRUC_LENGTH_FIXED + _pad4(len(raw))
        return struct.pack(bo + "5i", F.MQCFT_STRING, length, p.parameter, p.ccsid, len(raw)) + raw.ljust(_pad4(len(raw)), b"\0")
    if isinstance(p, CFIL):
        length = F.MQCFIL_STRUC_LENGTH_FIXED + 4 * len(p.values)
        return struct.pack(bo + f"4i{len(p.values)}i", F.MQCFT_INTEGER_LIST, length, p.parameter, len(p.values), *p.values)
    if isinstance(p, CFIL64):
        length = F.MQCFIL64_STRUC_LENGTH_FIXED + 8 * len(p.values)
        return struct.pack(bo + f"4i{len(p.values)}q", F.MQCFT_INTEGER64_LIST, length, p.parameter, len(p.values),
                           *p.values)
    if isinstance(p, CFSL):
        raws = [encode_text(v, p.ccsid) for v in p.values]
        # Each string blank-padded to a width that is a multiple of 4, as IBM's fixed-length
        # names are (48): pymqi's MQCFSL reader rounds StringLength up to 4 for every string.
        width = _pad4(max((len(r) for r in raws), default=0))
        body = b"".join(r.ljust(width, b" ") for r in raws)
        length = F.MQCFSL_STRUC_LENGTH_FIXED + _pad4(len(body))
        return struct.pack(bo + "6i", F.MQCFT_STRING_LIST, length, p.parameter, p.ccsid, len(raws), width) + body.ljust(_pad4(len(body)), b"\0")
    if isinstance(p, CFBS):
        length = F.MQCFBS_STRUC_LENGTH_FIXED + _pad4(len(p.value))
        return struct.pack(bo + "4i", F.MQCFT_BYTE_STRING, length, p.parameter, len(p.value)) + p.value.ljust(_pad4(len(p.value)), b"\0")
    if isinstance(p, CFIF):
        return struct.pack(bo + "5i", F.MQCFT_INTEGER_FILTER, F.MQCFIF_STRUC_LENGTH, p.parameter, p.operator, p.value)
    if isinstance(p, CFSF):
        raw = encode_text(p.value, p.ccsid)
        length = F.MQCFSF_STRUC_LENGTH_FIXED + _pad4(len(raw))
        return struct.pack(bo + "6i", F.MQCFT_STRING_FILTER, length, p.parameter, p.operator, p.ccsid, len(raw)) + raw.ljust(_pad4(len(raw)), b"\0")
    head = struct.pack(bo + "4i", F.MQCFT_GROUP, F.MQCFGR_STRUC_LENGTH, p.parameter, len(p.params))
    return head + b"".join(pack_param(m, bo) for m in p.params)


@dataclass(frozen=True, slots=True)
class PCFMessage:
    """An MQCFH and its parameters (groups hold their members)."""

    header: CFH
    params: tuple[Param, ...] = field(default_factory=tuple)

    def pack(self, encoding: int = NATIVE) -> bytes:
        bo = order(encoding)
        hdr = self.header if self.header.parameter_count == len(self.params) else _with_count(self.header, len(self.params))
        return hdr.pack(bo) + b"".join(pack_param(p, bo) for p in self.params)

    @classmethod
    def unpack(cls, buf: bytes, encoding: int = NATIVE) -> PCFMessage:
        """Decode a whole message; trailing bytes after the last parameter are refused."""
        bo = order(encoding)
        header = CFH.unpack_from(buf, 0, bo)
        reader = _Reader(buf, F.MQCFH_STRUC_LENGTH, bo)
        params = tuple(reader.param(0) for _ in range(header.parameter_count))
        if reader.offset != len(buf):
            raise DecodeError("MQCFH", 0, f"{len(buf) - reader.offset} bytes follow the last of {header.parameter_count} PCF parameters")
        return cls(header, params)


def _with_count(h: CFH, n: int) -> CFH:
    return CFH(h.type, h.command, h.msg_seq_number, h.control, h.comp_code, h.reason, n, h.version, h.struc_length)


class _Reader:
    def __init__(self, buf: bytes, offset: int, bo: str) -> None:
        self.buf, self.offset, self.bo, self.count = buf, offset, bo, 0

    def ints(self, n: int, at: int) -> tuple[int, ...]:
        return struct.unpack_from(f"{self.bo}{n}i", self.buf, at)

    def param(self, depth: int) -> Param:
        self.count += 1
        if self.count > MAX_PARAMETERS:
            raise DecodeError("PCF", self.offset, f"more than {MAX_PARAMETERS} PCF parameters")
        start, remain = self.offset, len(self.buf) - self.offset
        if remain < 12:
            raise DecodeError("PCF parameter", start, f"PCF parameter at offset {start} needs 12 bytes, {remain} remain")
        typ, length, parameter = self.ints(3, start)
        if length < 12 or length > remain or length % 4:
            raise DecodeError("PCF parameter", start, f"PCF parameter type {typ} at offset {start}: StrucLength {length} is not a multiple of 4 within {remain} bytes")
        self.offset = start + length
        if typ == F.MQCFT_INTEGER:
            _fixed(typ, length, F.MQCFIN_STRUC_LENGTH)
            return CFIN(parameter, self.ints(1, start + 12)[0])
        if typ == F.MQCFT_INTEGER64:
            _fixed(typ, length, F.MQCFIN64_STRUC_LENGTH)
            return CFIN64(parameter, struct.unpack_from(self.bo + "q", self.buf, start + 16)[0])
        if typ == F.MQCFT_INTEGER_FILTER:
            _fixed(typ, length, F.MQCFIF_STRUC_LENGTH)
            op, value = self.ints(2, start + 12)
            return CFIF(parameter, op, value)
        if typ in (F.MQCFT_STRING, F.MQCFT_STRING_FILTER):
            fixed = F.MQCFST_STRUC_LENGTH_FIXED if typ == F.MQCFT_STRING else F.MQCFSF_STRUC_LENGTH_FIXED
            _at_least(typ, length, fixed)
            if typ == F.MQCFT_STRING:
                ccsid, n = self.ints(2, start + 12)
                op = 0
            else:
                op, ccsid, n = self.ints(3, start + 12)
            if not 0 <= n <= length - fixed:
                raise DecodeError("PCF parameter", start, f"PCF string length {n} does not fit StrucLength {length}")
            text = decode_text(self.buf[start + fixed:start + fixed + n], ccsid).rstrip(" \0")
            return CFST(parameter, text, ccsid) if typ == F.MQCFT_STRING else CFSF(parameter, op, text, ccsid)
        if typ == F.MQCFT_INTEGER_LIST:
            _at_least(typ, length, F.MQCFIL_STRUC_LENGTH_FIXED)
            n = self.ints(1, start + 12)[0]
            if not 0 <= n <= MAX_LIST or F.MQCFIL_STRUC_LENGTH_FIXED + 4 * n != length:
                raise DecodeError("PCF parameter", start, f"MQCFIL Count {n} does not match StrucLength {length}")
            return CFIL(parameter, self.ints(n, start + 16))
        if typ == F.MQCFT_INTEGER64_LIST:
            _at_least(typ, length, F.MQCFIL64_STRUC_LENGTH_FIXED)
            n = self.ints(1, start + 12)[0]
            if not 0 <= n <= MAX_LIST or F.MQCFIL64_STRUC_LENGTH_FIXED + 8 * n != length:
                raise DecodeError("PCF parameter", start, f"MQCFIL64 Count {n} does not match StrucLength {length}")
            return CFIL64(parameter, struct.unpack_from(f"{self.bo}{n}q", self.buf, start + 16))
        if typ == F.MQCFT_STRING_LIST:
            _at_least(typ, length, F.MQCFSL_STRUC_LENGTH_FIXED)
            ccsid, n, width = self.ints(3, start + 12)
            if not 0 <= n <= MAX_LIST or width < 0 or n * width > length - F.MQCFSL_STRUC_LENGTH_FIXED:
                raise DecodeError("PCF parameter", start, f"MQCFSL Count {n} x StringLength {width} does not fit StrucLength {length}")
            base = start + F.MQCFSL_STRUC_LENGTH_FIXED
            return CFSL(parameter, tuple(decode_text(self.buf[base + i * width:base + (i + 1) * width], ccsid).rstrip(" \0")
                                         for i in range(n)), ccsid)
        if typ == F.MQCFT_BYTE_STRING:
            _at_least(typ, length, F.MQCFBS_STRUC_LENGTH_FIXED)
            n = self.ints(1, start + 12)[0]
            if not 0 <= n <= length - F.MQCFBS_STRUC_LENGTH_FIXED:
                raise DecodeError("PCF parameter", start, f"MQCFBS StringLength {n} does not fit StrucLength {length}")
            return CFBS(parameter, bytes(self.buf[start + 16:start + 16 + n]))
        if typ == F.MQCFT_GROUP:
            _fixed(typ, length, F.MQCFGR_STRUC_LENGTH)
            if depth >= MAX_DEPTH:
                raise DecodeError("PCF parameter", start, f"MQCFGR groups nest deeper than {MAX_DEPTH}")
            n = self.ints(1, start + 12)[0]
            if not 0 <= n <= MAX_PARAMETERS:
                raise DecodeError("PCF parameter", start, f"MQCFGR ParameterCount {n} is outside 0..{MAX_PARAMETERS}")
            return CFGR(parameter, tuple(self.param(depth + 1) for _ in range(n)))
        raise DecodeError("PCF parameter", start, f"PCF parameter at offset {start} has unknown Type {typ}")


def _fixed(typ: int, length: int, want: int) -> None:
    if length != want:
        raise DecodeError("PCF parameter", 0, f"PCF parameter type {typ}: StrucLength {length} is not {want}")


def _at_least(typ: int, length: int, want: int) -> None:
    if length < want:
        raise DecodeError("PCF parameter", 0, f"PCF parameter type {typ}: StrucLength {length} is below its fixed part {want}")
