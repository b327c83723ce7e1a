"""Java modified UTF-8 (cluster-protocol.md §1.5, the cases of vector v14)."""

from __future__ import annotations

import pytest

from ferrymq.errors import DecodeError
from ferrymq.wire.mutf8 import decode, encode, read_utf, write_utf


@pytest.mark.parametrize(
    ("text", "hex_bytes"),
    [
        ("", ""),
        ("abc", "616263"),
        ("\0", "c080"),  # never a raw 00
        ("\x7f", "7f"),
        ("\x80", "c280"),
        ("\u07ff", "dfbf"),
        ("\u0800", "e0a080"),
        ("\uffff", "efbfbf"),
        ("中", "e4b8ad"),
        ("ключ", "d0bad0bbd18ed187"),
        ("\U0001f600", "eda0bdedb880"),  # a surrogate pair, each half in 3 bytes
        ("\ud800", "eda080"),  # a lone surrogate passes unchanged
        ("a\0b\U0001f600", "61c08062eda0bdedb880"),
    ],
)
def test_encoding(text: str, hex_bytes: str) -> None:
    raw = bytes.fromhex(hex_bytes)
    assert encode(text) == raw
    assert decode(raw) == text
    assert write_utf(text) == len(raw).to_bytes(2, "big") + raw
    assert read_utf(write_utf(text)) == (text, 2 + len(raw))


@pytest.mark.parametrize(
    ("hex_bytes", "text"),
    [("00", "\0"), ("c181", "A"), ("e08080", "\0"), ("c0 80 00", "\0\0")],
)
def test_decoder_accepts_what_java_accepts(hex_bytes: str, text: str) -> None:
    """Java's readUTF takes a raw 00 and overlong forms."""
    assert decode(bytes.fromhex(hex_bytes)) == text


@pytest.mark.parametrize(
    "hex_bytes",
    ["80", "bf", "f09f9880", "ff", "c2", "e0a0", "c241", "e0a041", "e041a0", "61 62 f8"],
)
def test_decoder_rejects_what_java_rejects(hex_bytes: str) -> None:
    with pytest.raises(DecodeError):
        decode(bytes.fromhex(hex_bytes))


def test_length_limit() -> None:
    assert len(write_utf("x" * 65535)) == 65537
    with pytest.raises(ValueError):
        write_utf("x" * 65536)
    with pytest.raises(ValueError):
        write_utf("\u0800" * 21846)  # 65 538 encoded bytes from fewer characters


def test_read_utf_bounds() -> None:
    raw = write_utf("hello") + b"rest"
    assert read_utf(raw) == ("hello", 7)
    assert read_utf(b"..." + raw, 3) == ("hello", 10)
    with pytest.raises(DecodeError):
        read_utf(raw, 0, 6)  # the string runs past the given end
    with pytest.raises(DecodeError):
        read_utf(b"\x00")
    with pytest.raises(DecodeError):
        read_utf(b"\xff\xff" + b"a" * 10)
