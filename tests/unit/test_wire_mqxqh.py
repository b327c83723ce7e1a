"""MQXQH against shared/specs/ibmmq-reference.md §4.2 (and the MQMD1_DEFAULT image of §1)."""

from __future__ import annotations

import pytest

from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqmde import MQMDE
from ferrymq.wire.mqxqh import MQXQH, pack_xmit, unpack_xmit


def md1_default_image() -> bytes:
    img = bytearray(324)
    img[0x00:0x10] = bytes.fromhex("4d442020 01000000 00000000 08000000")
    img[0x10:0x20] = bytes.fromhex("ffffffff 00000000 22020000 00000000")
    img[0x20:0x30] = b" " * 8 + bytes.fromhex("ffffffff 02000000")
    return bytes(img)


def default_image() -> bytes:
    return b"XQH " + bytes.fromhex("01000000") + bytes(96) + md1_default_image()


def test_default_image() -> None:
    assert len(default_image()) == C.MQXQH_LENGTH_1 == 428
    assert MQXQH().pack() == default_image()


def test_embedded_md_offsets() -> None:
    xqh = MQXQH("RQ", "RQM", MQMD(msg_id=b"M" * 24, format="MQSTR"))
    raw = xqh.pack()
    assert raw[8:56] == b"RQ" + b" " * 46 and raw[56:104] == b"RQM" + b" " * 45
    assert raw[104:108] == b"MD  "
    assert raw[136:144] == b"MQSTR   "  # embedded Format at 104 + 32
    assert raw[152:176] == b"M" * 24  # embedded MsgId at 104 + 48


@pytest.mark.parametrize("big_endian", [False, True])
def test_round_trip(big_endian: bool) -> None:
    xqh = MQXQH("TARGET.Q", "QM2", MQMD(priority=4, reply_to_q="R", report=C.MQRO_COA, put_date="20240101"))
    raw = xqh.pack(big_endian=big_endian)
    assert raw[4:8] == (1).to_bytes(4, "big" if big_endian else "little")
    assert MQXQH.unpack_from(raw) == xqh


def test_embedded_md_is_always_version_1() -> None:
    raw = MQXQH(msg_desc=MQMD(version=2, msg_seq_number=5)).pack()
    assert len(raw) == 428 and raw[108] == 1
    assert MQXQH.unpack_from(raw).msg_desc.version == 1


def test_bad_input() -> None:
    with pytest.raises(DecodeError):
        MQXQH.unpack_from(default_image()[:427])
    bad = bytearray(default_image())
    bad[108] = 2  # an embedded v2 MD would swallow 40 bytes of what follows
    with pytest.raises(DecodeError):
        MQXQH.unpack_from(bytes(bad) + bytes(40))
    bad = bytearray(default_image())
    bad[104:108] = b"XX  "
    with pytest.raises(DecodeError):
        MQXQH.unpack_from(bytes(bad))


@pytest.mark.parametrize("big_endian", [False, True])
def test_xmit_with_mde(big_endian: bool) -> None:
    md = MQMD(version=2, format="MQSTR", msg_id=b"I" * 24, group_id=b"G" * 24, msg_seq_number=3,
              msg_flags=C.MQMF_MSG_IN_GROUP)
    raw = pack_xmit("Q", "QM", md, big_endian=big_endian) + b"payload"
    assert len(raw) == 428 + 72 + 7
    assert raw[136:144] == b"MQHMDE  " and raw[428:432] == b"MDE "
    assert MQMDE.unpack_from(raw, 428).format == "MQSTR"
    xqh, full, at = unpack_xmit(raw)
    assert (xqh.remote_q_name, xqh.remote_q_mgr_name) == ("Q", "QM")
    assert full.replace(encoding=md.encoding, coded_char_set_id=md.coded_char_set_id) == md
    assert raw[at:] == b"payload"


def test_xmit_without_mde() -> None:
    md = MQMD(format="MQSTR", priority=1)
    raw = pack_xmit("Q", "QM", md) + b"x"
    assert len(raw) == 429
    _, full, at = unpack_xmit(raw)
    assert full == md and at == 428
    with pytest.raises(DecodeError):
        unpack_xmit(pack_xmit("Q", "QM", md.replace(version=2, offset=4))[:450])


@pytest.mark.parametrize("fmt", [b"MQHMDE  ", b"MQHMDE\0\0", b"MQHMDEX ", b"MQSTR   "])
def test_the_embedded_format_alone_says_whether_an_mqmde_follows(fmt: bytes) -> None:
    """The little-endian header of a queue manager here is read without decoding its
    Format when it cannot announce an MQMDE; any Format that reads as MQHMDE still does."""
    md = MQMD(version=2, format="MQSTR", group_id=b"G" * 24, msg_flags=C.MQMF_MSG_IN_GROUP)
    raw = bytearray(pack_xmit("Q", "QM", md) + b"payload")
    raw[136:144] = fmt
    xqh, full, at = unpack_xmit(bytes(raw))
    if fmt.rstrip(b" \0") == b"MQHMDE":
        assert full.group_id == b"G" * 24 and full.format == "MQSTR" and raw[at:] == b"payload"
    else:
        assert full is xqh.msg_desc and at == 428 and full.format == fmt.decode().rstrip()
