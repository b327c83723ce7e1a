"""Data conversion of header chains and MQFMT_STRING data (ferrymq.wire.convert)."""

from __future__ import annotations

from typing import Literal

import pytest

from ferrymq.mq import constants as C
from ferrymq.wire.convert import Converted, convert, convert_xmit
from ferrymq.wire.mqdh import MQDH, MQOR, MQPMR
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqmde import MQMDE
from ferrymq.wire.mqrmh import MQRMH
from ferrymq.wire.mqtm import MQTM
from ferrymq.wire.mqxqh import pack_xmit, unpack_xmit
from ferrymq.wire.rfh2 import MQRFH2

LE, BE = C.MQENC_REVERSED, C.MQENC_NORMAL
TEXT = "Zürich [1] ^ ¬ café"


def conv(data: bytes, fmt: str, enc: int, ccsid: int, to_enc: int, to_ccsid: int) -> Converted:
    return convert(data, fmt, enc, ccsid, to_enc, to_ccsid, qmgr_ccsid=1208)


@pytest.mark.parametrize("to_ccsid", [37, 500, 819, 850, 1047, 1200, 1208])
@pytest.mark.parametrize("to_enc", [LE, BE])
def test_string_round_trips_through_every_ccsid_and_encoding(to_ccsid: int, to_enc: int) -> None:
    there = conv(TEXT.encode(), "MQSTR", LE, 1208, to_enc, to_ccsid)
    assert (there.reason, there.ccsid, there.encoding) == (C.MQRC_NONE, to_ccsid, to_enc)
    codec = {37: "cp037", 500: "cp500", 819: "latin-1", 850: "cp850", 1208: "utf-8"}.get(to_ccsid)
    if codec is not None:
        assert there.data == TEXT.encode(codec)
    elif to_ccsid == 1200:
        assert there.data == TEXT.encode("utf-16-be" if to_enc == BE else "utf-16-le")
    back = conv(there.data, "MQSTR", to_enc, to_ccsid, LE, 1208)
    assert back.data == TEXT.encode()


def test_rfh2_then_string_both_converted_and_back() -> None:
    rfh2 = MQRFH2(folders=("<usr><k>v</k></usr>",), encoding=LE, coded_char_set_id=1208, format="MQSTR").pack()
    body = rfh2 + TEXT.encode()
    there = conv(body, "MQHRF2", LE, 1208, BE, 37)
    assert there.reason == C.MQRC_NONE
    assert there.data[:4] == "RFH ".encode("cp037")
    assert there.data[12:20] == BE.to_bytes(4, "big") + (37).to_bytes(4, "big")
    assert there.data[20:28] == "MQSTR   ".encode("cp037")
    assert there.data[36:40] == (20).to_bytes(4, "big")  # NameValueLength now big-endian
    assert there.data[40:60] == rfh2[40:60]  # the folder stays UTF-8 (its NameValueCCSID)
    assert there.data[60:] == TEXT.encode("cp037")
    assert conv(there.data, "MQHRF2", BE, 37, LE, 1208).data == body


def test_rfh2_utf16_folders_follow_the_integer_byte_order() -> None:
    rfh2 = MQRFH2(folders=("<usr><k>é</k></usr>",), encoding=LE, coded_char_set_id=1208, format="MQSTR",
                  name_value_ccsid=1200).pack(big_endian=False)
    there = conv(rfh2 + b"x", "MQHRF2", LE, 1208, BE, 1208)
    header, end = MQRFH2.unpack_from(there.data, 0, big_endian=True)
    assert header.folders == ("<usr><k>é</k></usr>",) and there.data[end:] == b"x"


def test_inherit_stays_inherit() -> None:
    rfh2 = MQRFH2(folders=(), encoding=LE, coded_char_set_id=C.MQCCSI_INHERIT, format="MQSTR").pack()
    there = conv(rfh2 + b"abc", "MQHRF2", LE, 819, LE, 500)
    assert int.from_bytes(there.data[16:20], "little", signed=True) == C.MQCCSI_INHERIT
    assert there.data[36:] == "abc".encode("cp500")


def test_xmit_header_with_mde_then_dead_letter_then_string() -> None:
    dlh = MQDLH(reason=2085, dest_q_name="Q", encoding=LE, coded_char_set_id=850, format="MQSTR").pack()
    md = MQMD(format="MQDEAD", encoding=LE, coded_char_set_id=819, group_id=b"g" * 24, msg_seq_number=2,
              reply_to_q="REPLY")
    body = pack_xmit("RQ", "RQM", md, ccsid=819) + dlh + "é".encode("cp850")
    there = conv(body, "MQXMIT", LE, 819, BE, 1047)
    assert there.reason == C.MQRC_NONE
    assert there.data[:4] == "XQH ".encode("cp037")
    back = conv(there.data, "MQXMIT", BE, 1047, LE, 819)
    xqh, full, at = unpack_xmit(back.data)
    assert (xqh.remote_q_name, full.reply_to_q, full.msg_seq_number, full.group_id) == ("RQ", "REPLY", 2, b"g" * 24)
    assert full.coded_char_set_id == 819 and full.encoding == LE
    assert MQDLH.unpack_from(back.data, at).coded_char_set_id == 819
    assert back.data[at + 172:] == "é".encode("latin-1")


def test_mde_alone() -> None:
    mde = MQMDE(encoding=LE, coded_char_set_id=1208, format="MQSTR", msg_seq_number=7).pack()
    there = conv(mde + b"hi", "MQHMDE", LE, 1208, BE, 819)
    assert MQMDE.unpack_from(there.data, big_endian=True).msg_seq_number == 7
    assert MQMDE.unpack_from(there.data, big_endian=True).coded_char_set_id == 819
    there = conv(mde + b"hi", "MQHMDE", LE, 1208, BE, 37)
    assert there.data[:4] == "MDE ".encode("cp037") and there.data[72:] == "hi".encode("cp037")


def test_rmh_strings_converted_and_laid_out_again_when_lengths_change() -> None:
    rmh = MQRMH(encoding=LE, coded_char_set_id=1208, format="MQSTR", src_name="café", dest_name="dest").pack()
    body = rmh + b"bulk"
    # Latin-1 source to 37: same lengths, the strings converted in place.
    latin = MQRMH(encoding=LE, coded_char_set_id=819, format="MQSTR", src_name="abc", dest_name="xyz").pack()
    there = conv(latin + b"bulk", "MQHREF", LE, 819, LE, 37)
    assert there.data[108:114] == "abcxyz".encode("cp037") and there.data[114:] == "bulk".encode("cp037")
    # UTF-8 source ("é": 2 bytes) to Latin-1: the strings move.
    there = conv(body, "MQHREF", LE, 1208, LE, 819)
    got = MQRMH.unpack_from(there.data)
    assert (got.src_name, got.dest_name, got.struc_length) == ("café", "dest", 108 + 8)
    assert there.data[got.struc_length:] == b"bulk"


def test_dh_records_converted() -> None:
    fields = C.MQPMRF_MSG_ID | C.MQPMRF_FEEDBACK
    dh = MQDH(encoding=LE, coded_char_set_id=819, format="MQSTR", put_msg_rec_fields=fields,
              objects=(MQOR("QA", "QMA"), MQOR("QB", "")),
              put_msg_recs=(MQPMR(msg_id=b"m" * 24, feedback=5), MQPMR(msg_id=b"n" * 24, feedback=6)))
    raw = dh.pack()
    there = conv(raw + b"z", "MQHDIST", LE, 819, BE, 500)
    assert there.reason == C.MQRC_NONE
    back = MQDH.unpack_from(conv(there.data, "MQHDIST", BE, 500, LE, 819).data)
    assert back == MQDH.unpack_from(raw)
    assert "QA".encode("cp500") in there.data and there.data[-1:] == "z".encode("cp500")


def test_a_part_that_fails_stays_as_it_was_and_the_header_before_says_so() -> None:
    dlh = MQDLH(reason=1, encoding=LE, coded_char_set_id=1208, format="MYFMT").pack()
    there = conv(dlh + b"\x01\x02\x03", "MQDEAD", LE, 1208, BE, 37)
    assert (there.reason, there.ccsid, there.encoding) == (C.MQRC_FORMAT_ERROR, 37, BE)  # the DLH is converted
    assert there.data[:4] == "DLH ".encode("cp037")
    assert int.from_bytes(there.data[108:112], "big") == LE  # describing the data, as it still is
    assert int.from_bytes(there.data[112:116], "big") == 1208
    assert there.data[172:] == b"\x01\x02\x03"


@pytest.mark.parametrize(("data", "fmt", "enc", "ccsid", "to_enc", "to_ccsid", "reason"), [
    (b"abc", "", LE, 1208, LE, 37, C.MQRC_FORMAT_ERROR),
    (b"abc", "MQHWIH", LE, 1208, LE, 37, C.MQRC_FORMAT_ERROR),  # a header ferrymq does not convert
    (b"DLH short", "MQDEAD", LE, 1208, LE, 37, C.MQRC_FORMAT_ERROR),  # truncated header
    (b"abc", "MQSTR", LE, 4321, LE, 37, C.MQRC_SOURCE_CCSID_ERROR),
    (b"abc", "MQSTR", LE, 1208, LE, 4321, C.MQRC_TARGET_CCSID_ERROR),
    (b"\x00a", "MQSTR", 0, 1200, LE, 1208, C.MQRC_SOURCE_INTEGER_ENC_ERROR),
    (b"abc", "MQSTR", LE, 1208, 0, 1200, C.MQRC_TARGET_INTEGER_ENC_ERROR),
    (b"\xc3", "MQSTR", LE, 1208, LE, 37, C.MQRC_NOT_CONVERTED),  # not UTF-8
    ("€".encode(), "MQSTR", LE, 1208, LE, 850, C.MQRC_NOT_CONVERTED),  # no € in 850
])
def test_each_warning_leaves_the_data_as_it_was(data: bytes, fmt: str, enc: int, ccsid: int, to_enc: int,
                                                to_ccsid: int, reason: int) -> None:
    got = conv(data, fmt, enc, ccsid, to_enc, to_ccsid)
    assert (got.reason, got.data, got.encoding, got.ccsid) == (reason, data, enc, ccsid)
    assert got.detail


def test_headers_cannot_be_in_utf16() -> None:
    rfh2 = MQRFH2(encoding=LE, coded_char_set_id=1208, format="MQSTR").pack()
    assert conv(rfh2, "MQHRF2", LE, 1208, LE, 1200).reason == C.MQRC_TARGET_CCSID_ERROR
    assert conv(rfh2, "MQHRF2", LE, 1200, LE, 1208).reason == C.MQRC_SOURCE_CCSID_ERROR


def test_a_field_too_long_once_converted() -> None:
    # "é" takes two bytes in UTF-8: a 48-byte name of 48 é's cannot be written in 48 bytes.
    dlh = bytearray(MQDLH(encoding=LE, coded_char_set_id=819, format="MQSTR").pack())
    dlh[12:60] = "é".encode("latin-1") * 48
    assert conv(bytes(dlh), "MQDEAD", LE, 819, LE, 1208).reason == C.MQRC_CONVERTED_STRING_TOO_BIG
    # Trailing blanks may go: "é" and 47 blanks fit in 48 bytes of UTF-8.
    dlh[12:60] = "é".encode("latin-1") + b" " * 47
    there = conv(bytes(dlh), "MQDEAD", LE, 819, LE, 1208)
    assert there.reason == C.MQRC_NONE and there.data[12:60] == "é".encode() + b" " * 46


def test_fitting_never_cuts_a_character() -> None:
    there = conv("aé€😀".encode(), "MQSTR", LE, 1208, LE, 1200)
    assert [there.fitting(n) for n in range(11)] == [0, 0, 2, 2, 4, 4, 6, 6, 6, 6, 10]
    as_utf8 = Converted("aé€😀".encode(), LE, 1208, text_at=0, text_ccsid=1208)
    assert [as_utf8.fitting(n) for n in range(11)] == [0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10]


def test_xmit_message_converted_behind_its_transmission_header() -> None:
    md = MQMD(format="MQSTR", encoding=LE, coded_char_set_id=1208, reply_to_q="R")
    xmit = pack_xmit("APP.IN", "QM2", md)
    data, reason = convert_xmit(xmit + TEXT.encode(), BE, 500, qmgr_ccsid=1208)
    assert reason == C.MQRC_NONE
    assert data[:428] != xmit and data[:4] == b"XQH "  # the header stays the channel's (ASCII, little-endian)
    xqh, full, at = unpack_xmit(data)
    assert (xqh.remote_q_name, full.coded_char_set_id, full.encoding, full.reply_to_q) == ("APP.IN", 500, BE, "R")
    assert data[at:] == TEXT.encode("cp500")
    # Already as the receiver wants it, a segment, a format without conversion, or no MQXQH.
    assert convert_xmit(xmit + b"x", LE, 1208, qmgr_ccsid=1208) == (xmit + b"x", C.MQRC_NONE)
    segment = pack_xmit("Q", "QM2", md.replace(msg_flags=C.MQMF_SEGMENT, version=2))
    assert convert_xmit(segment + b"x", BE, 500, qmgr_ccsid=1208) == (segment + b"x", C.MQRC_NONE)
    opaque = pack_xmit("Q", "QM2", md.replace(format=""))
    assert convert_xmit(opaque + b"x", BE, 500, qmgr_ccsid=1208) == (opaque + b"x", C.MQRC_FORMAT_ERROR)
    assert convert_xmit(b"nope", BE, 500, qmgr_ccsid=1208) == (b"nope", C.MQRC_FORMAT_ERROR)


def test_trigger_message_converted_field_by_field() -> None:
    tm = MQTM(q_name="APP.Q", process_name="PROC", trigger_data="data", appl_type=C.MQAT_UNIX,
              appl_id="/bin/prog", env_data="env", user_data="user")
    raw = tm.pack()
    there = conv(raw, "MQTRIG", LE, 819, BE, 1047)
    assert there.reason == C.MQRC_NONE and there.data[:4] == "TM  ".encode("cp037")
    assert there.data[168:172] == C.MQAT_UNIX.to_bytes(4, "big") and there.data[8:13] == "APP.Q".encode("cp037")
    assert conv(there.data, "MQTRIG", BE, 1047, LE, 819).data == raw
    assert conv(raw + b"x", "MQTRIG", LE, 819, BE, 37).reason == C.MQRC_FORMAT_ERROR


def test_rfh_version_1_converts_its_name_value_string() -> None:
    def rfh1(names: bytes, order: Literal["big", "little"], ccsid: int, fmt: bytes) -> bytes:
        head = b"RFH " if ccsid == 819 else "RFH ".encode("cp500")
        ints = [C.MQRFH_VERSION_1, 32 + len(names), LE if order == "little" else BE, ccsid]
        packed = b"".join(i.to_bytes(4, order) for i in ints)
        return head + packed + fmt + bytes(4) + names

    names = b"OPT1 caf\xe9 OPT2 xyz  "  # Latin-1, 20 bytes
    raw = rfh1(names, "little", 819, b"MQSTR   ") + b"data"
    there = conv(raw, "MQHRF", LE, 819, BE, 500)
    assert there.reason == C.MQRC_NONE
    assert there.data == rfh1(names.decode("latin-1").encode("cp500"), "big", 500, "MQSTR   ".encode("cp500")) \
        + "data".encode("cp500")
    # Into UTF-8 "é" takes two bytes: the string is padded to a multiple of 4 and StrucLength follows.
    utf8 = conv(raw, "MQHRF", LE, 819, LE, 1208)
    length = int.from_bytes(utf8.data[8:12], "little")
    assert length == 32 + 24 and utf8.data[32:length] == "OPT1 café OPT2 xyz".encode() + b" " * 5
    assert utf8.data[length:] == b"data"
