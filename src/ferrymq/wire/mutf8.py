"""Java's "modified UTF-8" (DataOutput.writeUTF / DataInput.readUTF).

| Bytes | Form                         | Used for                                           |
|------:|------------------------------|----------------------------------------------------|
|     2 | uint16 big-endian            | length prefix: encoded bytes, not characters       |
|     1 | 0xxxxxxx                     | U+0001..U+007F                                     |
|     2 | 110xxxxx 10xxxxxx            | U+0000 (as C0 80, never a raw 00), U+0080..U+07FF  |
|     3 | 1110xxxx 10xxxxxx 10xxxxxx   | U+0800..U+FFFF, and each half of a surrogate pair  |

Java strings are UTF-16, so characters above U+FFFF travel as two 3-byte surrogates
(U+1F600 -> ED A0 BD ED B8 80) and lone surrogates pass through unchanged. The reader
accepts exactly what Java's readUTF accepts: 1/2/3-byte forms (overlong ones too) and a
raw 00; a 4-byte lead (F0..FF), a stray continuation byte or a truncated form is an error.
"""

from __future__ import annotations

import re

from ferrymq.errors import DecodeError

MAX_LENGTH = 0xFFFF
_SUPPLEMENTARY = re.compile("[\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _as_pair(match: re.Match[str]) -> str:
    cp = ord(match.group()) - 0x10000
    return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))


def encode(text: str) -> bytes:
    """The modified UTF-8 bytes of ``text``, without the length prefix."""
    if text.isascii() and "\0" not in text:
        return text.encode("ascii")
    # Split supplementary characters into UTF-16 surrogates first: Python's UTF-8 codec with
    # surrogatepass then writes every surrogate as its own 3-byte form, as Java does.
    units = _SUPPLEMENTARY.sub(_as_pair, text)
    return units.encode("utf-8", "surrogatepass").replace(b"\0", b"\xc0\x80")


def decode(raw: bytes | bytearray | memoryview, *, structure: str = "modified UTF-8", at: int = 0) -> str:
    """The text of modified UTF-8 bytes (no length prefix); ``structure``/``at`` locate errors.

    Raises:
        DecodeError: a byte sequence Java's readUTF would reject.
    """
    data = bytes(raw)
    if data.isascii():
        return data.decode("ascii")
    units: list[str] = []
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        kind = c >> 4
        if kind < 8:
            units.append(chr(c))
            i += 1
        elif kind in (12, 13):
            if i + 1 >= n or data[i + 1] & 0xC0 != 0x80:
                raise DecodeError(structure, at + i, f"malformed 2-byte form at byte {i}")
            units.append(chr(((c & 0x1F) << 6) | (data[i + 1] & 0x3F)))
            i += 2
        elif kind == 14:
            if i + 2 >= n or data[i + 1] & 0xC0 != 0x80 or data[i + 2] & 0xC0 != 0x80:
                raise DecodeError(structure, at + i, f"malformed 3-byte form at byte {i}")
            units.append(chr(((c & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F)))
            i += 3
        else:
            raise DecodeError(structure, at + i, f"byte {c:#04x} cannot start a character")
    text = "".join(units)
    if _SURROGATE.search(text):
        # Join valid surrogate pairs into one character, as a Java String would be read;
        # lone surrogates stay as they are.
        text = text.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")
    return text


def write_utf(text: str) -> bytes:
    """``text`` as writeUTF writes it: a uint16 byte count, then the bytes.

    Raises:
        ValueError: the encoding is longer than 65 535 bytes.
    """
    raw = encode(text)
    if len(raw) > MAX_LENGTH:
        raise ValueError(f"string encodes to {len(raw)} bytes; modified UTF-8 holds at most {MAX_LENGTH}")
    return len(raw).to_bytes(2, "big") + raw


def read_utf(
    buf: bytes | bytearray | memoryview, offset: int = 0, end: int | None = None, *, structure: str = "modified UTF-8"
) -> tuple[str, int]:
    """Read a length-prefixed string at ``offset`` that must end by ``end`` (default: ``len(buf)``).

    Returns the text and the offset just after it.

    Raises:
        DecodeError: the prefix or the bytes run past ``end``, or the bytes are malformed.
    """
    limit = len(buf) if end is None else min(end, len(buf))
    if offset + 2 > limit:
        raise DecodeError(structure, offset, "truncated string length")
    length = int.from_bytes(buf[offset : offset + 2], "big")
    start = offset + 2
    if start + length > limit:
        raise DecodeError(structure, offset, f"string of {length} bytes runs past the end ({limit - start} left)")
    return decode(buf[start : start + length], structure=structure, at=start), start + length
