"""Data conversion on any input: it never raises (a failure is a reason), a failure leaves the
data as it was up to the part that failed, and text with headers in front round-trips between
any two CCSIDs and byte orders that can both hold it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ferrymq.mq import constants as C
from ferrymq.wire import ccsid as CS
from ferrymq.wire.convert import convert, convert_xmit
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqxqh import pack_xmit
from ferrymq.wire.rfh2 import MQRFH2

CCSIDS = [*sorted(CS.SUPPORTED), 0, 4321, C.MQCCSI_INHERIT]
ENCODINGS = [C.MQENC_NORMAL, C.MQENC_REVERSED, C.MQENC_INTEGER_UNDEFINED, 0x7FFF]
FORMATS = ["MQSTR", "", "MQDEAD", "MQXMIT", "MQHMDE", "MQHRF2", "MQHREF", "MQHDIST", "MQTRIG", "MQHRF", "MQHWIH", "APPFMT"]
REASONS = {C.MQRC_NONE, C.MQRC_FORMAT_ERROR, C.MQRC_SOURCE_CCSID_ERROR, C.MQRC_SOURCE_INTEGER_ENC_ERROR,
           C.MQRC_TARGET_CCSID_ERROR, C.MQRC_TARGET_INTEGER_ENC_ERROR, C.MQRC_NOT_CONVERTED,
           C.MQRC_CONVERTED_STRING_TOO_BIG}
SBCS = [37, 500, 819, 850, 1047, 1140]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.sampled_from(FORMATS), st.sampled_from(ENCODINGS), st.sampled_from(CCSIDS),
       st.sampled_from(ENCODINGS), st.sampled_from(CCSIDS))
def test_any_bytes_never_raise(data: bytes, fmt: str, enc: int, ccsid: int, to_enc: int, to_ccsid: int) -> None:
    got = convert(data, fmt, enc, ccsid, to_enc, to_ccsid, qmgr_ccsid=1208)
    assert got.reason in REASONS
    if got.reason and (got.encoding, got.ccsid) == (enc, ccsid):
        assert got.data == data  # nothing converted: all as it was
    out, reason = convert_xmit(data, to_enc, to_ccsid, qmgr_ccsid=1208)
    assert reason in REASONS and (reason or out == data or out[:4] == b"XQH ")


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_chains_never_raise(draw: st.DataObject) -> None:
    body = MQDLH(encoding=C.MQENC_REVERSED, coded_char_set_id=1208, format="MQHRF2").pack() + MQRFH2(
        folders=("<usr><a>1</a></usr>",), encoding=C.MQENC_REVERSED, coded_char_set_id=819,
        format="MQSTR").pack() + b"text"
    xmit = pack_xmit("Q", "QM", MQMD(format="MQDEAD", encoding=C.MQENC_REVERSED, coded_char_set_id=1208,
                                     group_id=b"g" * 24)) + body
    raw = bytearray(draw.draw(st.sampled_from([body, xmit])))
    for _ in range(draw.draw(st.integers(1, 6))):
        raw[draw.draw(st.integers(0, len(raw) - 1))] = draw.draw(st.integers(0, 255))
    fmt = "MQDEAD" if len(raw) == len(body) else "MQXMIT"
    got = convert(bytes(raw), fmt, C.MQENC_REVERSED, 1208, draw.draw(st.sampled_from(ENCODINGS)),
                  draw.draw(st.sampled_from(CCSIDS)), qmgr_ccsid=1208)
    assert got.reason in REASONS
    assert convert_xmit(bytes(raw), C.MQENC_NORMAL, 500, qmgr_ccsid=1208)[1] in REASONS


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FF), max_size=80), st.sampled_from(sorted(CS.SUPPORTED)),
       st.sampled_from(sorted(CS.SUPPORTED)), st.sampled_from([C.MQENC_NORMAL, C.MQENC_REVERSED]),
       st.sampled_from([C.MQENC_NORMAL, C.MQENC_REVERSED]))
def test_text_round_trips_between_ccsids_that_hold_it(text: str, a: int, b: int, ea: int, eb: int) -> None:
    try:
        CS.encode(text, a)
        CS.encode(text, b)
    except UnicodeEncodeError:
        return  # not text both can hold: 2119 is the right answer, tested elsewhere
    raw = CS.encode(text, a, big_endian=ea == C.MQENC_NORMAL)
    there = convert(raw, "MQSTR", ea, a, eb, b, qmgr_ccsid=1208)
    assert there.reason == C.MQRC_NONE and (there.encoding, there.ccsid) == (eb, b)
    assert CS.decode(there.data, b, big_endian=eb == C.MQENC_NORMAL) == text
    back = convert(there.data, "MQSTR", eb, b, ea, a, qmgr_ccsid=1208)
    assert back.data == raw


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=40),
       st.sampled_from([*SBCS, 1208]), st.sampled_from([*SBCS, 1208]),
       st.sampled_from([C.MQENC_NORMAL, C.MQENC_REVERSED]), st.sampled_from([C.MQENC_NORMAL, C.MQENC_REVERSED]))
def test_header_chains_round_trip(text: str, a: int, b: int, ea: int, eb: int) -> None:
    try:
        CS.encode(text, a)
        CS.encode(text, b)
    except UnicodeEncodeError:
        return
    big = ea == C.MQENC_NORMAL
    headers = MQDLH(reason=C.MQRC_Q_FULL, dest_q_name="DEST.Q", encoding=ea, coded_char_set_id=819,
                    format="MQHRF2").pack(big_endian=big) + MQRFH2(
        folders=("<usr><k>v</k></usr>",), encoding=ea, coded_char_set_id=C.MQCCSI_INHERIT,
        format="MQSTR").pack(big_endian=big)
    # The chain written in Latin-1 first, then brought to CCSID ``a``: the original.
    original = convert(headers + CS.encode(text, 819), "MQDEAD", ea, 819, ea, a, qmgr_ccsid=1208)
    assert original.reason == C.MQRC_NONE
    there = convert(original.data, "MQDEAD", ea, a, eb, b, qmgr_ccsid=1208)
    assert there.reason == C.MQRC_NONE
    tail = CS.encode(text, b)
    assert there.data.endswith(tail) and CS.decode(there.data[len(there.data) - len(tail):], b) == text
    assert convert(there.data, "MQDEAD", eb, b, ea, a, qmgr_ccsid=1208).data == original.data
