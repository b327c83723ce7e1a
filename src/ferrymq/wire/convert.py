"""Data conversion: a message's header chain and its MQFMT_STRING data from one CCSID and
integer encoding to another (MQGET with MQGMO_CONVERT; a sender channel with CONVERT(YES)).

The MQMD's Encoding and CodedCharSetId describe the first part of the data; each header's
own Encoding and CodedCharSetId (MQCCSI_INHERIT: the header's) describe the part after it.
A header is converted field by field from the part before it: integers to the target byte
order, character fields (StrucId, Format, names) to the target CCSID in their fixed width,
bytes (identifiers) as they are. Its Encoding and CodedCharSetId then say the target too,
because the next part is converted in its turn.

| Format   | header     | converted here                                                       |
|----------|------------|----------------------------------------------------------------------|
| MQDEAD   | MQDLH      | every field                                                          |
| MQXMIT   | MQXQH      | every field, the embedded version-1 MQMD's included                  |
| MQHMDE   | MQMDE      | every field                                                          |
| MQHRF2   | MQRFH2     | the fixed part and each NameValueLength; NameValueData stays in its NameValueCCSID (UTF-16 folders follow the integers' byte order) |
| MQHRF    | MQRFH      | the fixed part and its NameValueString (in the header's CCSID)      |
| MQHREF   | MQRMH      | the fixed part and its four strings (re-laid out when a length changes) |
| MQHDIST  | MQDH       | the fixed part, each MQOR's names and each MQPMR's Feedback          |
| MQSTR    | (data)     | the text                                                             |
| MQTRIG   | (data)     | the MQTM, every field                                                |

Anything else (MQFMT_NONE, an application's format, another header) cannot be converted:
MQRC_FORMAT_ERROR, as IBM MQ answers for a format without a conversion exit. A part that
fails stays as it was, and what describes it (the MQMD, or the header before it) keeps its
original Encoding and CCSID: the parts before it are converted, the rest not, and the
fields always say which (IBM's rule for MQRC_NOT_CONVERTED and its kin).

| failure                                                        | reason                          |
|----------------------------------------------------------------|---------------------------------|
| an unknown format, a malformed or truncated header             | MQRC_FORMAT_ERROR 2110          |
| a source CCSID ferrymq does not convert (ccsid.SUPPORTED)      | MQRC_SOURCE_CCSID_ERROR 2111    |
| a source integer encoding neither NORMAL nor REVERSED          | MQRC_SOURCE_INTEGER_ENC_ERROR 2112 |
| a target CCSID ferrymq does not convert                        | MQRC_TARGET_CCSID_ERROR 2115    |
| a target integer encoding neither NORMAL nor REVERSED          | MQRC_TARGET_INTEGER_ENC_ERROR 2116 |
| text that is not text in its CCSID, a character the target lacks | MQRC_NOT_CONVERTED 2119       |
| a character field too long for its width once converted (after dropping trailing blanks) | MQRC_CONVERTED_STRING_TOO_BIG 2190 |

A header's character fields cannot be in UTF-16 (1200): a header met in it, or to be
converted to it, fails with the source or target CCSID error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire import ccsid as CS
from ferrymq.wire import mqdh, mqdlh, mqmde, mqrmh, mqtm, mqxqh
from ferrymq.wire.headers import MAX_HEADERS
from ferrymq.wire.layout import HEADER_PREFIX, Field, Layout
from ferrymq.wire.mqmd import LAYOUT_V1 as MD_V1
from ferrymq.wire.mqmd import detect_big_endian

Order = Literal["big", "little"]
_STRING = C.MQFMT_STRING.rstrip()
_UTF16_FOLDERS = frozenset({1200, 13488, 17584})
_RFH2_FIXED = Layout.of("MQRFH2", [*HEADER_PREFIX, ("name_value_ccsid", "l", 4)])
_RFH1_FIXED = Layout.of("MQRFH", HEADER_PREFIX)


class _Refused(Exception):
    def __init__(self, reason: int, detail: str) -> None:
        super().__init__(detail)
        self.reason, self.detail = reason, detail


class _Side:
    """The integer encoding and CCSID one part of a message is in (``source``) or is to be
    converted to."""

    __slots__ = ("ccsid", "encoding", "source")

    def __init__(self, encoding: int, ccsid: int, source: bool) -> None:
        self.encoding, self.ccsid, self.source = encoding, ccsid, source

    def order(self) -> Order:
        bits = self.encoding & C.MQENC_INTEGER_MASK
        if bits == C.MQENC_INTEGER_NORMAL:
            return "big"
        if bits == C.MQENC_INTEGER_REVERSED:
            return "little"
        if self.source:
            raise _Refused(C.MQRC_SOURCE_INTEGER_ENC_ERROR, f"the data's Encoding {self.encoding} names no byte order")
        raise _Refused(C.MQRC_TARGET_INTEGER_ENC_ERROR, f"the requested Encoding {self.encoding} names no byte order")

    def check(self, structures: bool) -> None:
        ok = CS.fits_structures(self.ccsid) if structures else CS.is_supported(self.ccsid)
        if ok:
            return
        what = "an MQ header's character fields" if structures and CS.is_supported(self.ccsid) else "conversion"
        if self.source:
            raise _Refused(C.MQRC_SOURCE_CCSID_ERROR, f"CCSID {self.ccsid} of the data is not supported for {what}")
        raise _Refused(C.MQRC_TARGET_CCSID_ERROR, f"the requested CCSID {self.ccsid} is not supported for {what}")

    def utf16_big(self) -> bool:
        return self.order() == "big" if self.ccsid == CS.UTF16 else True


@dataclass(frozen=True, slots=True)
class Converted:
    """The data after conversion and the Encoding and CCSID that describe its first part
    (the original's when nothing could be converted); ``reason`` is MQRC_NONE or the
    warning that stopped the conversion. ``text_at``: where MQFMT_STRING text begins in
    ``data`` (-1: none), for ``fitting``."""

    data: bytes
    encoding: int
    ccsid: int
    reason: int = C.MQRC_NONE
    detail: str = ""
    text_at: int = -1
    text_ccsid: int = 0
    text_big: bool = True

    def fitting(self, limit: int) -> int:
        """How many bytes of ``data`` a buffer of ``limit`` bytes returns: ``limit`` or a
        little less, so that no character of the text is cut in two."""
        data, start = self.data, self.text_at
        if limit >= len(data) or start < 0 or limit <= start:
            return min(limit, len(data))
        n = limit
        if self.text_ccsid == CS.UTF8:
            while n > start and data[n] & 0xC0 == 0x80:  # data[n] continues the character before it
                n -= 1
        elif self.text_ccsid == CS.UTF16:
            n -= (n - start) % 2
            if n - 2 >= start:
                unit = int.from_bytes(data[n - 2 : n], "big" if self.text_big else "little")
                if 0xD800 <= unit < 0xDC00:  # a high surrogate whose partner is cut off
                    n -= 2
        return n


@dataclass(frozen=True, slots=True)
class _Part:
    data: bytes
    length: int  # bytes of the source it took
    link: int  # where its Encoding, CCSID and Format lie (within data and source alike)
    next_format: str
    next_encoding: int
    next_ccsid: int


_Handler = Callable[[bytes, int, _Side, _Side], _Part]


def convert(data: bytes, fmt: str, encoding: int, ccsid: int, to_encoding: int, to_ccsid: int, *,
            qmgr_ccsid: int) -> Converted:
    """``data`` (Format ``fmt``, in ``encoding`` and ``ccsid``) in ``to_encoding`` and
    ``to_ccsid``, part by part (see the module docstring). A CodedCharSetId of
    MQCCSI_Q_MGR (0) anywhere means ``qmgr_ccsid``. Never raises for what the data holds:
    a failure is the result's reason."""
    dst = _Side(to_encoding, to_ccsid or qmgr_ccsid, False)
    src = _Side(encoding, ccsid or qmgr_ccsid, True)
    out = bytearray()
    pos, link, count, text_at = 0, -1, 0, -1
    fmt = fmt.rstrip(" \0")
    try:
        while pos < len(data):
            handler = _HEADERS.get(fmt)
            if handler is None:
                if fmt == _STRING:
                    text_at = len(out)
                    out += _text(data[pos:], src, dst)
                elif fmt == mqtm.FORMAT:
                    out += _trigger(data, pos, src, dst)
                else:
                    raise _Refused(C.MQRC_FORMAT_ERROR, f"format {fmt!r} has no conversion")
                pos = len(data)
                break
            if count >= MAX_HEADERS:
                raise _Refused(C.MQRC_FORMAT_ERROR, f"more than {MAX_HEADERS} headers")
            src.check(True)
            dst.check(True)
            part = handler(data, pos, src, dst)
            link = len(out) + part.link
            out += part.data
            order = dst.order()
            out[link : link + 4] = to_encoding.to_bytes(4, order, signed=True)
            inherit = part.next_ccsid == C.MQCCSI_INHERIT
            if not inherit:  # INHERIT stays true: the next part will be in the header's CCSID
                out[link + 4 : link + 8] = dst.ccsid.to_bytes(4, order, signed=True)
            pos += part.length
            count += 1
            src = _Side(part.next_encoding, src.ccsid if inherit else part.next_ccsid or qmgr_ccsid, True)
            fmt = part.next_format
        big = dst.utf16_big() if text_at >= 0 else True
    except _Refused as refused:
        if link < 0:
            return Converted(bytes(data), encoding, ccsid, refused.reason, refused.detail)
        # The part at ``pos`` stays as it was: the header before it says what it is in.
        order = dst.order()
        out[link : link + 4] = src.encoding.to_bytes(4, order, signed=True)
        out[link + 4 : link + 8] = src.ccsid.to_bytes(4, order, signed=True)
        out += data[pos:]
        return Converted(bytes(out), to_encoding, dst.ccsid, refused.reason, refused.detail)
    return Converted(bytes(out), to_encoding, dst.ccsid, text_at=text_at, text_ccsid=dst.ccsid, text_big=big)


def convert_xmit(data: bytes, to_encoding: int, to_ccsid: int, *, qmgr_ccsid: int) -> tuple[bytes, int]:
    """A transmission-queue message (MQXQH, then the message) with the message converted
    and the MQXQH as it was (it is the channel's, not the application's); the embedded
    MQMD's Encoding and CodedCharSetId then say what the message is in. A segment of a
    logical message is not converted (IBM's sending agent leaves them too).

    Returns the bytes and MQRC_NONE, or the reason the message is (partly) as it was.
    """
    try:
        xqh, full, _ = mqxqh.unpack_xmit(data)
        big = detect_big_endian(data, 0, "MQXQH", (C.MQXQH_VERSION_1,))
    except DecodeError:
        return data, C.MQRC_FORMAT_ERROR
    md = xqh.msg_desc
    if full.msg_flags & (C.MQMF_SEGMENT | C.MQMF_LAST_SEGMENT) or (
            md.encoding == to_encoding and (md.coded_char_set_id or qmgr_ccsid) == (to_ccsid or qmgr_ccsid)):
        return data, C.MQRC_NONE
    at = C.MQXQH_LENGTH_1
    conv = convert(data[at:], md.format, md.encoding, md.coded_char_set_id, to_encoding, to_ccsid,
                   qmgr_ccsid=qmgr_ccsid)
    link = mqxqh.MSG_DESC_OFFSET + MD_V1.offset_of("encoding")
    order: Order = "big" if big else "little"
    head = bytearray(data[:at])
    head[link : link + 8] = conv.encoding.to_bytes(4, order, signed=True) + conv.ccsid.to_bytes(4, order, signed=True)
    return bytes(head) + conv.data, conv.reason


def _text(raw: bytes, src: _Side, dst: _Side) -> bytes:
    """MQFMT_STRING data in the target CCSID (in UTF-16, the target byte order)."""
    src.check(False)
    dst.check(False)
    src_big, dst_big = src.utf16_big(), dst.utf16_big()
    if src.ccsid == dst.ccsid and src_big == dst_big:
        return raw
    try:
        return CS.encode(CS.decode(raw, src.ccsid, big_endian=src_big), dst.ccsid, big_endian=dst_big)
    except UnicodeDecodeError as exc:
        raise _Refused(C.MQRC_NOT_CONVERTED, f"byte {exc.start} of the text is not text in CCSID {src.ccsid}") from None
    except UnicodeEncodeError as exc:
        raise _Refused(C.MQRC_NOT_CONVERTED,
                       f"character {exc.object[exc.start]!r} has no code in CCSID {dst.ccsid}") from None


def _string(raw: bytes, src: _Side, dst: _Side) -> bytes:
    """A header's character string in the target CCSID (both are structure CCSIDs)."""
    if src.ccsid == dst.ccsid:
        return raw
    try:
        return CS.encode(CS.decode(raw, src.ccsid), dst.ccsid)
    except UnicodeError:
        raise _Refused(C.MQRC_NOT_CONVERTED, f"a header string does not convert from CCSID {src.ccsid} "
                                             f"to {dst.ccsid}") from None


def _chars(raw: bytes, width: int, src: _Side, dst: _Side) -> bytes:
    """A fixed-width character field in the target CCSID. Too long once converted, it loses
    what IBM lets go (what follows a NUL, trailing blanks) or fails."""
    out = _string(raw, src, dst)
    if len(out) == width:
        return out
    if len(out) > width:
        text = CS.decode(raw, src.ccsid).split("\0", 1)[0].rstrip(" ")
        out = _string(CS.encode(text, src.ccsid), src, dst)
        if len(out) > width:
            raise _Refused(C.MQRC_CONVERTED_STRING_TOO_BIG,
                           f"a {width}-byte field needs {len(out)} bytes in CCSID {dst.ccsid}")
    return out + CS.encode(" ", dst.ccsid) * (width - len(out))


def _fields(out: bytearray, buf: bytes, pos: int, fields: Sequence[Field], src: _Side, dst: _Side) -> int:
    """Convert a run of fixed fields at ``pos`` into ``out``; the position after them."""
    so, do = src.order(), dst.order()
    for _, kind, length in fields:
        if kind == "l" or kind == "q":
            size = 4 if kind == "l" else 8
            out += int.from_bytes(buf[pos : pos + size], so, signed=True).to_bytes(size, do, signed=True)
            pos += size
        elif kind == "b":
            out += buf[pos : pos + length]
            pos += length
        else:
            out += _chars(buf[pos : pos + length], length, src, dst)
            pos += length
    return pos


def _int(buf: bytes, pos: int, order: Order) -> int:
    return int.from_bytes(buf[pos : pos + 4], order, signed=True)


def _start(buf: bytes, pos: int, name: str, struc_id: str, size: int, src: _Side) -> None:
    """A header's StrucId (in the source CCSID) and room for its fixed part."""
    if len(buf) - pos < size:
        raise _Refused(C.MQRC_FORMAT_ERROR, f"{name} at {pos} needs {size} bytes, {len(buf) - pos} present")
    try:
        got = CS.decode(buf[pos : pos + 4], src.ccsid)
    except UnicodeDecodeError:
        got = repr(buf[pos : pos + 4])
    if got != struc_id:
        raise _Refused(C.MQRC_FORMAT_ERROR, f"{name} at {pos}: StrucId {got!r} is not {struc_id!r}")


def _struc_length(buf: bytes, pos: int, name: str, fixed: int, src: _Side) -> int:
    length = _int(buf, pos + 8, src.order())
    if not fixed <= length <= len(buf) - pos:
        raise _Refused(C.MQRC_FORMAT_ERROR, f"{name} at {pos}: StrucLength {length} outside {fixed}..{len(buf) - pos}")
    return length


def _part(buf: bytes, pos: int, out: bytes, length: int, link: int, src: _Side) -> _Part:
    """A converted header and the next link, read from its source bytes."""
    order = src.order()
    raw_fmt = buf[pos + link + 8 : pos + link + 16]
    try:
        fmt = CS.decode(raw_fmt, src.ccsid).split("\0", 1)[0].rstrip(" ")
    except UnicodeDecodeError:
        raise _Refused(C.MQRC_FORMAT_ERROR, f"the Format at {pos + link + 8} is not text") from None
    return _Part(out, length, link, fmt, _int(buf, pos + link, order), _int(buf, pos + link + 4, order))


def _fixed(layout_name: str, struc_id: str, fields: Sequence[Field], link: int, *,
           struc_length: bool = False) -> _Handler:
    """A header of one fixed size (MQDLH, MQXQH; MQMDE, whose StrucLength must say it)."""
    size = Layout.of(layout_name, fields).size

    def handle(buf: bytes, pos: int, src: _Side, dst: _Side) -> _Part:
        _start(buf, pos, layout_name, struc_id, size, src)
        if struc_length and _int(buf, pos + 8, src.order()) != size:
            raise _Refused(C.MQRC_FORMAT_ERROR, f"{layout_name} at {pos}: StrucLength is not {size}")
        out = bytearray()
        _fields(out, buf, pos, fields, src, dst)
        return _part(buf, pos, bytes(out), size, link, src)

    return handle


def _trigger(buf: bytes, pos: int, src: _Side, dst: _Side) -> bytes:
    """MQFMT_TRIGGER data: one MQTM, nothing after it."""
    src.check(True)
    dst.check(True)
    size = mqtm.LAYOUT.size
    _start(buf, pos, "MQTM", C.MQTM_STRUC_ID, size, src)
    if len(buf) - pos != size:
        raise _Refused(C.MQRC_FORMAT_ERROR, f"MQTRIG data is {len(buf) - pos} bytes, not an MQTM's {size}")
    out = bytearray()
    _fields(out, buf, pos, mqtm.LAYOUT.fields, src, dst)
    return bytes(out)


def _variable(buf: bytes, pos: int, layout: Layout, struc_id: str, src: _Side, dst: _Side) -> tuple[int, bytearray]:
    """A header whose StrucLength covers a variable part: its StrucLength, checked, and its
    fixed part converted."""
    _start(buf, pos, layout.name, struc_id, layout.size, src)
    length = _struc_length(buf, pos, layout.name, layout.size, src)
    out = bytearray()
    _fields(out, buf, pos, layout.fields, src, dst)
    return length, out


def _rfh2(buf: bytes, pos: int, src: _Side, dst: _Side) -> _Part:
    length, out = _variable(buf, pos, _RFH2_FIXED, C.MQRFH_STRUC_ID, src, dst)
    fixed, so, do = _RFH2_FIXED.size, src.order(), dst.order()
    swap = _int(buf, pos + 32, so) in _UTF16_FOLDERS and so != do
    at, end = pos + fixed, pos + length
    while at < end:
        n = _int(buf, at, so) if end - at >= 4 else -1
        if n < 0 or at + 4 + n > end or (swap and n % 2):
            raise _Refused(C.MQRC_FORMAT_ERROR, f"MQRFH2 at {pos}: a NameValueLength at {at} does not fit")
        out += n.to_bytes(4, do, signed=True)
        folder = buf[at + 4 : at + 4 + n]
        if swap:
            swapped = bytearray(n)
            swapped[0::2], swapped[1::2] = folder[1::2], folder[0::2]
            folder = bytes(swapped)
        out += folder
        at += 4 + n
    return _part(buf, pos, bytes(out), length, 12, src)


def _rfh1(buf: bytes, pos: int, src: _Side, dst: _Side) -> _Part:
    """MQRFH version 1: its NameValueString is in the header's own CCSID, so it is converted
    too; a string whose length changes is padded with blanks to a multiple of 4."""
    length, out = _variable(buf, pos, _RFH1_FIXED, C.MQRFH_STRUC_ID, src, dst)
    if _int(buf, pos + 4, src.order()) != C.MQRFH_VERSION_1:
        raise _Refused(C.MQRC_FORMAT_ERROR, f"MQRFH at {pos}: Version is not 1")
    raw = buf[pos + _RFH1_FIXED.size : pos + length]
    text = _string(raw, src, dst)
    if len(text) != len(raw):
        text += CS.encode(" ", dst.ccsid) * (-len(text) % 4)
        out[8:12] = (_RFH1_FIXED.size + len(text)).to_bytes(4, dst.order(), signed=True)
    return _part(buf, pos, bytes(out + text), length, 12, src)


_RMH_PAIRS = mqrmh.LAYOUT.offset_of("src_env_length")


def _rmh(buf: bytes, pos: int, src: _Side, dst: _Side) -> _Part:
    length, out = _variable(buf, pos, mqrmh.LAYOUT, C.MQRMH_STRUC_ID, src, dst)
    fixed, so, do = mqrmh.LAYOUT.size, src.order(), dst.order()
    strings: list[tuple[int, int, bytes]] = []
    for i in range(4):
        n, at = _int(buf, pos + _RMH_PAIRS + 8 * i, so), _int(buf, pos + _RMH_PAIRS + 8 * i + 4, so)
        if n == 0:
            strings.append((0, 0, b""))
            continue
        if n < 0 or at < fixed or at + n > length:
            raise _Refused(C.MQRC_FORMAT_ERROR, f"MQRMH at {pos}: string {i} of {n} bytes at {at} is outside it")
        strings.append((at, n, _string(buf[pos + at : pos + at + n], src, dst)))
    if all(len(text) == n for _, n, text in strings):
        rest = bytearray(buf[pos + fixed : pos + length])
        for at, n, text in strings:
            rest[at - fixed : at - fixed + n] = text
        return _part(buf, pos, bytes(out + rest), length, 12, src)
    # A length changed (UTF-8 on one side): the strings laid out again after the fixed part.
    at = fixed
    tail = bytearray()
    for i, (_, _, text) in enumerate(strings):
        pair = _RMH_PAIRS + 8 * i
        out[pair : pair + 8] = len(text).to_bytes(4, do, signed=True) + (at if text else 0).to_bytes(4, do, signed=True)
        tail += text
        at += len(text)
    out[8:12] = at.to_bytes(4, do, signed=True)
    return _part(buf, pos, bytes(out + tail), length, 12, src)


def _dh(buf: bytes, pos: int, src: _Side, dst: _Side) -> _Part:
    length, out = _variable(buf, pos, mqdh.LAYOUT, C.MQDH_STRUC_ID, src, dst)
    fixed, so = mqdh.LAYOUT.size, src.order()
    flags, recs, or_at, pmr_at = (_int(buf, pos + off, so) for off in (32, 36, 40, 44))
    if flags & ~mqdh.PMRF_ALL or recs < 0:
        raise _Refused(C.MQRC_FORMAT_ERROR, f"MQDH at {pos}: PutMsgRecFields {flags:#x}, RecsPresent {recs}")
    rest = bytearray(buf[pos + fixed : pos + length])
    records = [(or_at, mqdh.OR_LAYOUT)]
    pmr = mqdh.pmr_layout(flags)
    if pmr.size:
        records.append((pmr_at, pmr))
    for at, layout in records:
        if recs and (at < fixed or at + recs * layout.size > length):
            raise _Refused(C.MQRC_FORMAT_ERROR, f"MQDH at {pos}: {recs} records at {at} run past StrucLength {length}")
        for i in range(recs):
            record = bytearray()
            _fields(record, buf, pos + at + i * layout.size, layout.fields, src, dst)
            start = at - fixed + i * layout.size
            rest[start : start + layout.size] = record
    return _part(buf, pos, bytes(out + rest), length, 12, src)


_HEADERS: dict[str, _Handler] = {
    mqdlh.FORMAT: _fixed("MQDLH", C.MQDLH_STRUC_ID, mqdlh.LAYOUT.fields, 108),
    mqxqh.FORMAT: _fixed("MQXQH", C.MQXQH_STRUC_ID, (*mqxqh.LAYOUT.fields, *MD_V1.fields),
                         mqxqh.MSG_DESC_OFFSET + MD_V1.offset_of("encoding")),
    mqmde.FORMAT: _fixed("MQMDE", C.MQMDE_STRUC_ID, mqmde.LAYOUT.fields, 12, struc_length=True),
    C.MQFMT_RF_HEADER_2.rstrip(): _rfh2,
    C.MQFMT_RF_HEADER.rstrip(): _rfh1,
    mqrmh.FORMAT: _rmh,
    mqdh.FORMAT: _dh,
}
