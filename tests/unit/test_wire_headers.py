"""The MQ header chain walk (ibmmq-reference.md §4.4 chaining rule, §6 report data)."""

from __future__ import annotations

import struct

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.headers import HeaderRef, is_header_format, report_data, walk_headers
from ferrymq.wire.mqdh import MQDH, MQOR
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqmde import MQMDE
from ferrymq.wire.mqrmh import MQRMH
from ferrymq.wire.mqxqh import pack_xmit


def rfh2(fmt: str, folders: list[str], *, big_endian: bool = False, ccsid: int = 1208, encoding: int = 546) -> bytes:
    """An MQRFH2 built from the spec's §2.1/2.2 rules: folders blank-padded to 4 bytes."""
    e = ">" if big_endian else "<"
    body = b""
    for folder in folders:
        raw = folder.encode()
        raw += b" " * (-len(raw) % 4)
        body += struct.pack(e + "i", len(raw)) + raw
    head = b"RFH " + struct.pack(e + "iiii", 2, 36 + len(body), encoding, ccsid) + fmt.encode().ljust(8)
    return head + struct.pack(e + "ii", 0, 1208) + body


def test_spec_worked_example_rfh2() -> None:
    """ibmmq-reference.md §2.5: three folders, StrucLength 200, then 'hello'."""
    folders = ["<mcd><Msd>jms_text</Msd></mcd>",
               "<jms><Dst>queue:///Q1</Dst><Tms>1700000000000</Tms><Dlv>2</Dlv></jms>",
               "<usr><color>red</color><n dt='i4'>7</n></usr>"]
    assert [len(f) for f in folders] == [30, 69, 45]
    body = rfh2("MQSTR", folders) + b"hello"
    assert body[:0x28] == bytes.fromhex("52464820 02000000 c8000000 22020000 b8040000 4d515354 52202020 00000000"
                                        "b8040000 20000000")
    assert body[0xC8:] == b"hello"
    chain = walk_headers(body, "MQHRF2", 546, 1208)
    assert (chain.length, chain.format, chain.encoding, chain.coded_char_set_id) == (200, "MQSTR", 546, 1208)
    assert chain.headers == (HeaderRef("MQHRF2", 0, 200),)


def test_no_headers() -> None:
    chain = walk_headers(b"plain data", "MQSTR", 546, 819)
    assert (chain.length, chain.format, chain.encoding, chain.coded_char_set_id, chain.headers) == (
        0, "MQSTR", 546, 819, ())
    assert walk_headers(b"", "", 546, 0).length == 0


@pytest.mark.parametrize("big_endian", [False, True])
def test_dead_letter_then_rfh2(big_endian: bool) -> None:
    enc = 273 if big_endian else 546
    dlh = MQDLH(reason=C.MQRC_Q_FULL, encoding=enc, coded_char_set_id=1208, format="MQHRF2")
    body = dlh.pack(big_endian=big_endian) + rfh2("MQSTR", ["<usr><a>1</a></usr>"], big_endian=big_endian,
                                                 ccsid=C.MQCCSI_INHERIT, encoding=enc) + b"x" * 300
    chain = walk_headers(body, "MQDEAD  ", enc, 819)
    assert [h.format for h in chain.headers] == ["MQDEAD", "MQHRF2"]
    assert chain.length == 172 + 36 + 4 + 20
    # CCSID -2 in the RFH2 inherits the RFH2's own (the DLH's 1208).
    assert (chain.format, chain.encoding, chain.coded_char_set_id) == ("MQSTR", enc, 1208)
    assert report_data(body, "MQDEAD", enc, 819) == body[: chain.length + 100]
    assert report_data(body, "MQDEAD", enc, 819, None) == body
    assert report_data(body, "MQDEAD", enc, 819, 0) == body[: chain.length]


def test_xmit_with_mde_and_dist_and_ref_headers() -> None:
    md = MQMD(version=2, format="MQHDIST", encoding=546, coded_char_set_id=819, group_id=b"G" * 24)
    dh = MQDH(format="MQHREF", encoding=546, coded_char_set_id=1208, objects=(MQOR("A"), MQOR("B")))
    rmh = MQRMH(format="MQSTR", encoding=546, coded_char_set_id=500, src_name="file")
    body = pack_xmit("Q", "QM", md) + dh.pack() + rmh.pack() + b"bulk"
    chain = walk_headers(body, "MQXMIT", 546, 819)
    assert [(h.format, h.length) for h in chain.headers] == [
        ("MQXMIT", 428), ("MQHMDE", 72), ("MQHDIST", 48 + 192), ("MQHREF", 112)]
    assert (chain.length, chain.format, chain.coded_char_set_id) == (len(body) - 4, "MQSTR", 500)


def test_unknown_mqh_header_uses_the_generic_rule() -> None:
    hdr = b"ZZZ " + struct.pack("<iiii", 1, 40, 546, 437) + b"MQSTR   " + bytes(12)
    chain = walk_headers(hdr + b"data", "MQHZZZ", 546, 0)
    assert (chain.length, chain.format, chain.coded_char_set_id) == (40, "MQSTR", 437)


def test_is_header_format() -> None:
    for fmt in ("MQHMDE  ", "MQDEAD", "MQXMIT", "MQIMS", "MQCICS", "MQHRF2", "MQHWIH", "MQHSOMETHING"):
        assert is_header_format(fmt)
    for fmt in ("", "MQSTR", "MQIMSVS", "MQADMIN", "MQPCF", "MQTRIG"):
        assert not is_header_format(fmt)


def mde_with(struc_length: int, struc_id: bytes = b"MDE ") -> bytes:
    raw = bytearray(MQMDE(format="MQSTR").pack())
    raw[0:4] = struc_id
    raw[8:12] = struct.pack("<i", struc_length)
    return bytes(raw)


@pytest.mark.parametrize(
    ("body", "fmt"),
    [
        (mde_with(72)[:60], "MQHMDE"),  # truncated
        (mde_with(500) + bytes(100), "MQHMDE"),  # StrucLength beyond the body
        (mde_with(64), "MQHMDE"),  # shorter than an MQMDE
        (mde_with(-8), "MQHMDE"),
        (mde_with(2**31 - 1), "MQHMDE"),
        (mde_with(72, b"RFH "), "MQHMDE"),  # wrong StrucId
        (b"XQH " + bytes(300), "MQXMIT"),  # truncated fixed header
        (MQDLH().pack().replace(b"DLH ", b"DLX "), "MQDEAD"),
        (b"ZZZ " + struct.pack("<ii", 1, 20) + bytes(20), "MQHZZZ"),  # below the 28-byte minimum
        (b"ZZZ " + bytes(10), "MQHZZZ"),
    ],
)
def test_malformed_chains(body: bytes, fmt: str) -> None:
    with pytest.raises(DecodeError):
        walk_headers(body, fmt, 546, 0)


def test_too_many_headers() -> None:
    one = rfh2("MQHRF2", [])
    assert walk_headers(one * 3 + rfh2("MQSTR", []), "MQHRF2", 546, 0).length == 4 * 36
    with pytest.raises(DecodeError):
        walk_headers(one * 70, "MQHRF2", 546, 0)
    with pytest.raises(DecodeError):
        walk_headers(one * 5, "MQHRF2", 546, 0, max_headers=4)
