"""MQRFH2: the default image and the reference's worked example byte for byte, both byte
orders and every NameValueCCSID, chains, the folder language, and malformed input."""

from __future__ import annotations

import contextlib
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrymq.errors import DecodeError
from ferrymq.wire.rfh2 import MQRFH2, unpack_chain
from ferrymq.wire.rfh2_folders import build_folder, parse_folder, properties

DEFAULT_IMAGE = bytes.fromhex("52464820 02000000 24000000 22020000 feffffff") + b" " * 8 + bytes.fromhex(
    "00000000 b8040000")
MCD = "<mcd><Msd>jms_text</Msd></mcd>"
JMS = "<jms><Dst>queue:///Q1</Dst><Tms>1700000000000</Tms><Dlv>2</Dlv></jms>"
USR = "<usr><color>red</color><n dt='i4'>7</n></usr>"


def test_default_image() -> None:
    assert MQRFH2().pack() == DEFAULT_IMAGE
    assert MQRFH2.unpack_from(DEFAULT_IMAGE) == (MQRFH2(), 36)


def test_worked_example_byte_for_byte() -> None:
    assert (len(MCD), len(JMS), len(USR)) == (30, 69, 45)
    header = MQRFH2((MCD, JMS, USR), encoding=546, coded_char_set_id=1208, format="MQSTR")
    raw = header.pack() + b"hello"
    assert raw[:0x30] == bytes.fromhex(
        "52464820 02000000 c8000000 22020000 b8040000 4d515354 52202020 00000000"
        "b8040000 20000000 3c6d6364 3e3c4d73")
    assert raw[0x30:0x50] == bytes.fromhex("643e6a6d 735f7465 78743c2f 4d73643e 3c2f6d63 643e2020 48000000 3c6a6d73")
    assert raw[0x4C:0x94] == b"<jms" + JMS.encode()[4:] + b"   "
    assert raw[0x94:0x98] == bytes.fromhex("30000000") and raw[0x98:0xC8] == USR.encode() + b"   "
    assert raw[0xC8:] == b"hello" and header.struc_length() == 200
    back, end = MQRFH2.unpack_from(raw)
    assert back == header and end == 200
    java = MQRFH2((MCD, JMS, USR), encoding=273, coded_char_set_id=1208, format="MQSTR").pack(big_endian=True)
    assert java[4:16] == bytes.fromhex("00000002 000000c8 00000111")


def test_folder_properties() -> None:
    assert properties(USR) == {"usr.color": "red", "usr.n": 7}
    assert properties(JMS)["jms.Tms"] == "1700000000000"  # jms values are untyped text
    assert properties("<mcd><msgbody xsi:nil='true'></msgbody></mcd>") == {"mcd.msgbody": None}
    typed = ("<usr><b dt='boolean'>1</b><h dt='bin.hex'>0AFF</h><f dt='r8'>2.5</f><e></e><s/>"
             "<g><x dt='i8'>-9</x></g><q>a&lt;b&amp;&apos;c&apos;</q></usr>")
    assert properties(typed) == {"usr.b": True, "usr.h": b"\x0a\xff", "usr.f": 2.5, "usr.e": "", "usr.s": "",
                                 "usr.g.x": -9, "usr.q": "a<b&'c'"}
    assert parse_folder('<psc  a="1" ><Command>Publish</Command></psc>   \0\0').attrs == {"a": "1"}


@pytest.mark.parametrize("ccsid", [1208, 1200, 13488, 17584])
@pytest.mark.parametrize("big_endian", [False, True])
def test_round_trip_every_ccsid_and_byte_order(ccsid: int, big_endian: bool) -> None:
    folder = build_folder("usr", {"price": "12 €", "qty": 3, "ok": True})
    header = MQRFH2((folder, "<mcd><Msd>jms_bytes</Msd></mcd>"), name_value_ccsid=ccsid, format="MQSTR")
    raw = header.pack(big_endian=big_endian)
    assert len(raw) % 4 == 0
    back, end = MQRFH2.unpack_from(raw, big_endian=big_endian)
    assert back == header and end == len(raw)
    assert properties(back.folders[0]) == {"usr.price": "12 €", "usr.qty": 3, "usr.ok": True}


def test_chain_of_two_headers() -> None:
    inner = MQRFH2((USR,), format="MQSTR")
    outer = MQRFH2((MCD,), format="MQHRF2")
    body = outer.pack() + inner.pack() + b"data"
    headers, start, fmt, _ = unpack_chain(body, "MQHRF2  ", 546)
    assert headers == [outer, inner] and body[start:] == b"data" and fmt == "MQSTR"


@pytest.mark.parametrize(("raw", "where"), [
    (b"RFX " + DEFAULT_IMAGE[4:], 0),
    (DEFAULT_IMAGE[:4] + b"\x03\0\0\0" + DEFAULT_IMAGE[8:], 4),
    (DEFAULT_IMAGE[:8] + b"\x40\0\0\0" + DEFAULT_IMAGE[12:], 8),
    (DEFAULT_IMAGE[:32] + b"\x25\x03\0\0", 32),
    (DEFAULT_IMAGE[:8] + b"\x28\0\0\0" + DEFAULT_IMAGE[12:] + b"\x08\0\0\0", 36),
    (DEFAULT_IMAGE[:8] + b"\x2c\0\0\0" + DEFAULT_IMAGE[12:] + b"\x04\0\0\0\xff\xfe\xfd\xfc", 40),
])
def test_malformed_headers(raw: bytes, where: int) -> None:
    with pytest.raises(DecodeError) as ei:
        MQRFH2.unpack_from(raw)
    assert ei.value.offset == where


@pytest.mark.parametrize("text", ["<usr>", "<usr><a>1</b></usr>", "<usr><a>1</a>x</usr>", "<usr a=1></usr>",
                                  "<usr><a>&bogus;</a></usr>", "<usr></usr><more/>", "plain"])
def test_malformed_folders(text: str) -> None:
    with pytest.raises(DecodeError):
        parse_folder(text)


names = st.text(string.ascii_letters + "_", min_size=1, max_size=8)
values = (st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20)
          | st.binary(max_size=10) | st.floats(allow_nan=False))


@given(st.dictionaries(names, values, max_size=6))
def test_random_properties_round_trip(props: dict[str, object]) -> None:
    folder = build_folder("usr", props)  # type: ignore[arg-type]
    header = MQRFH2((folder,))
    back, _ = MQRFH2.unpack_from(header.pack())
    assert properties(back.folders[0]) == {f"usr.{k}": v for k, v in props.items()}


@given(st.binary(max_size=200))
def test_random_bytes_raise_only_decode_error(raw: bytes) -> None:
    for data in (raw, DEFAULT_IMAGE[:8] + raw[:4] + DEFAULT_IMAGE[12:] + raw):
        with contextlib.suppress(DecodeError):
            header, _ = MQRFH2.unpack_from(data)
            for f in header.folders:
                properties(f)


@given(st.text(max_size=120))
def test_random_text_raises_only_decode_error(text: str) -> None:
    with contextlib.suppress(DecodeError):
        properties(text)


def test_what_real_producers_write_is_read() -> None:
    # older JMS: a self-closed nil with a dummy namespace; double quotes; line breaks and
    # indentation between elements; NUL padding; character references; .NET's dt='char'.
    text = ('<mcd>\n  <Msd>jms_text</Msd>\n  <msgbody xmlns:xsi="dummy" xsi:nil="true"/>\n</mcd>  \0\0')
    assert properties(text) == {"mcd.Msd": "jms_text", "mcd.msgbody": None}
    assert properties("<usr><a>&#60;b&#x3E;</a><c dt='char'>x</c><d xsi:nil='false'>v</d></usr>") == {
        "usr.a": "<b>", "usr.c": "x", "usr.d": "v"}


def test_a_utf16_header_byte_for_byte() -> None:
    folder = "<usr><n dt='i4'>7</n></usr>"  # 27 characters: 54 bytes, one blank more makes 56
    assert len(folder) == 27
    header = MQRFH2((folder,), 546, 1208, "MQSTR", name_value_ccsid=1200)
    le = header.pack()
    assert le[:36] == bytes.fromhex("52464820 02000000 60000000 22020000 b8040000") + b"MQSTR   " + bytes.fromhex(
        "00000000 b0040000")
    assert le[36:40] == bytes.fromhex("38000000") and le[40:] == b"".join(bytes((ord(c), 0)) for c in folder + " ")
    be = header.pack(big_endian=True)
    assert be[8:12] == bytes.fromhex("00000060") and be[36:40] == bytes.fromhex("00000038")
    assert be[40:] == b"".join(bytes((0, ord(c))) for c in folder + " ")
    assert MQRFH2.unpack_from(le)[0] == header == MQRFH2.unpack_from(be, big_endian=True)[0]
