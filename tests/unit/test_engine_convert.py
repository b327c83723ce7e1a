"""MQGET with MQGMO_CONVERT in the engine: IBM's rules for what is converted and the warnings."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.engine.api import GetOptions, PutOptions, Waiting
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD

CONVERT = C.MQGMO_CONVERT | C.MQGMO_NO_WAIT
TEXT = "Grüße, ¿qué tal? [x] ^ ¬"


@pytest.fixture
def q(env: Env) -> int:
    env.define("Q1")
    return env.open("Q1")


def test_utf8_little_endian_got_as_ebcdic_big_endian(env: Env, q: int) -> None:
    env.put(q, TEXT.encode("utf-8"), format="MQSTR", coded_char_set_id=1208, encoding=C.MQENC_REVERSED)
    res = env.get(q, CONVERT, coded_char_set_id=37, encoding=C.MQENC_NORMAL)
    assert (res.comp, res.reason) == (C.MQCC_OK, C.MQRC_NONE)
    assert res.data == TEXT.encode("cp037")
    assert (res.md.coded_char_set_id, res.md.encoding, res.md.format) == (37, C.MQENC_NORMAL, "MQSTR")
    assert res.data_length == len(res.data)
    assert env.depth("Q1") == 0


def test_without_convert_the_message_comes_as_put(env: Env, q: int) -> None:
    env.put(q, TEXT.encode("utf-8"), format="MQSTR", coded_char_set_id=1208)
    res = env.get(q, coded_char_set_id=37, encoding=C.MQENC_NORMAL)
    assert res.data == TEXT.encode("utf-8") and res.md.coded_char_set_id == 1208


def test_qmgr_ccsid_is_the_target_for_mqccsi_q_mgr(env: Env, q: int) -> None:
    env.qm.objects.alter_qmgr({"CCSID": 500})
    assert env.qm.qmgr_attr("CCSID") == 500
    env.put(q, "[abc]".encode("cp037"), format="MQSTR", coded_char_set_id=37)
    res = env.get(q, CONVERT, coded_char_set_id=C.MQCCSI_Q_MGR)
    assert (res.md.coded_char_set_id, res.data) == (500, "[abc]".encode("cp500"))


def test_nothing_to_convert_completes_ok(env: Env, q: int) -> None:
    env.put(q, b"\x01\x02", format="", coded_char_set_id=1208)  # MQFMT_NONE, but already as asked
    res = env.get(q, CONVERT, coded_char_set_id=1208)
    assert (res.reason, res.data) == (C.MQRC_NONE, b"\x01\x02")
    env.put(q, b"", format="", coded_char_set_id=1208)  # no data
    res = env.get(q, CONVERT, coded_char_set_id=37)
    assert (res.reason, res.md.coded_char_set_id) == (C.MQRC_NONE, 1208)


@pytest.mark.parametrize(("md", "want", "reason"), [
    ({"format": ""}, {"coded_char_set_id": 37}, C.MQRC_FORMAT_ERROR),
    ({"format": "MYAPP"}, {"coded_char_set_id": 37}, C.MQRC_FORMAT_ERROR),
    ({"format": "MQSTR", "coded_char_set_id": 4321}, {"coded_char_set_id": 37}, C.MQRC_SOURCE_CCSID_ERROR),
    ({"format": "MQSTR"}, {"coded_char_set_id": 4321}, C.MQRC_TARGET_CCSID_ERROR),
    ({"format": "MQSTR"}, {"coded_char_set_id": 819}, C.MQRC_NOT_CONVERTED),  # "€" is not in Latin-1
])
def test_warnings_return_the_message_unconverted(env: Env, q: int, md: dict[str, object], want: dict[str, object],
                                                 reason: int) -> None:
    data = "price: 5 €".encode()
    md.setdefault("coded_char_set_id", 1208)
    env.put(q, data, **md)
    res = env.get(q, CONVERT, **want)
    assert (res.comp, res.reason) == (C.MQCC_WARNING, reason)
    assert res.data == data
    assert res.md.coded_char_set_id == md["coded_char_set_id"]
    assert env.depth("Q1") == 0  # taken all the same, as IBM does


def test_converted_message_too_big_is_taken_and_returned_unconverted(env: Env, q: int) -> None:
    data = b"abcdef"
    env.put(q, data, format="MQSTR", coded_char_set_id=1208)
    res = env.get(q, CONVERT, buffer=8, coded_char_set_id=1200, encoding=C.MQENC_NORMAL)  # needs 12 bytes
    assert (res.comp, res.reason) == (C.MQCC_WARNING, C.MQRC_CONVERTED_MSG_TOO_BIG)
    assert (res.data, res.md.coded_char_set_id, res.data_length) == (data, 1208, 6)
    assert env.depth("Q1") == 0


def test_accept_truncated_converts_and_cuts_at_a_character(env: Env, q: int) -> None:
    env.put(q, b"abcdef", format="MQSTR", coded_char_set_id=1208)
    res = env.get(q, CONVERT | C.MQGMO_ACCEPT_TRUNCATED_MSG, buffer=7, coded_char_set_id=1200,
                  encoding=C.MQENC_REVERSED)
    assert (res.comp, res.reason) == (C.MQCC_WARNING, C.MQRC_TRUNCATED_MSG_ACCEPTED)
    assert res.data == "abc".encode("utf-16-le") and res.data_length == 12
    assert res.md.coded_char_set_id == 1200


def test_too_long_before_conversion_stays_on_the_queue_unconverted(env: Env, q: int) -> None:
    env.put(q, b"abcdef", format="MQSTR", coded_char_set_id=819)
    res = env.get(q, CONVERT, buffer=3, coded_char_set_id=37)
    assert (res.reason, res.data, res.md.coded_char_set_id) == (C.MQRC_TRUNCATED_MSG_FAILED, b"abc", 819)
    assert env.depth("Q1") == 1


def test_dead_letter_header_chain_is_converted_header_by_header(env: Env, q: int) -> None:
    dlh = MQDLH(reason=C.MQRC_Q_FULL, dest_q_name="TARGET", dest_q_mgr_name="QM2", encoding=C.MQENC_REVERSED,
                coded_char_set_id=1208, format="MQSTR", put_appl_name="app").pack()
    env.put(q, dlh + TEXT.encode(), format="MQDEAD", coded_char_set_id=1208, encoding=C.MQENC_REVERSED)
    res = env.get(q, CONVERT, coded_char_set_id=500, encoding=C.MQENC_NORMAL)
    assert res.reason == C.MQRC_NONE and res.md.coded_char_set_id == 500
    assert res.data[:4] == "DLH ".encode("cp500")
    assert res.data[8:12] == C.MQRC_Q_FULL.to_bytes(4, "big")
    assert res.data[12:18] == "TARGET".encode("cp500")
    assert int.from_bytes(res.data[108:112], "big") == C.MQENC_NORMAL
    assert int.from_bytes(res.data[112:116], "big") == 500
    assert res.data[172:] == TEXT.encode("cp500")


def test_browse_converts_and_leaves_the_message(env: Env, q: int) -> None:
    env.put(q, b"hello", format="MQSTR", coded_char_set_id=819)
    res = env.get(q, CONVERT | C.MQGMO_BROWSE_FIRST, coded_char_set_id=1047)
    assert res.data == bytes.fromhex("8885939396")
    assert env.get(q).data == b"hello"


def test_a_waiting_get_converts_what_arrives(env: Env, q: int) -> None:
    w = env.qm.get(env.hconn, q, MQMD(coded_char_set_id=37, encoding=C.MQENC_NORMAL),
                   GetOptions(C.MQGMO_CONVERT | C.MQGMO_WAIT, 5000, 0), 1 << 20)
    assert isinstance(w, Waiting)
    other = env.qm.connect(appl_name="putter", user="tester")
    h2 = env.open("Q1", C.MQOO_OUTPUT, hconn=other)
    env.put(h2, b"late", hconn=other, format="MQSTR", coded_char_set_id=1208)
    delivered = env.qm.waits.deliveries
    assert [d.result.data for d in delivered if d.result is not None] == ["late".encode("cp037")]


def test_get_many_converts_each_message(env: Env, q: int) -> None:
    for text in ("one", "two", "three"):
        env.put(q, text.encode(), format="MQSTR", coded_char_set_id=1208)
    got, _ = env.qm.get_many(env.hconn, q, MQMD(coded_char_set_id=500), GetOptions(CONVERT), 1 << 20, 10, 1 << 20)
    assert [r.data for r in got] == [t.encode("cp500") for t in ("one", "two", "three")]


def test_properties_given_as_an_mqrfh2_are_converted_with_the_data(env: Env) -> None:
    env.define("QP", PROPCTL="FORCE")
    h = env.open("QP")
    props = PropertySet()
    props.set("colour", "blue")
    env.qm.put(env.hconn, h, MQMD(format="MQSTR", coded_char_set_id=1208), PutOptions(), TEXT.encode(), props)
    res = env.get(h, CONVERT, coded_char_set_id=37, encoding=C.MQENC_NORMAL)
    assert res.reason == C.MQRC_NONE and res.md.format == "MQHRF2" and res.md.coded_char_set_id == 37
    assert res.data[:4] == "RFH ".encode("cp037")
    length = int.from_bytes(res.data[8:12], "big")
    assert b"<colour>blue</colour>" in res.data[36:length]  # the folder stays UTF-8 (NameValueCCSID 1208)
    assert res.data[length:] == TEXT.encode("cp037")
