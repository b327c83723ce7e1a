"""Fuzz of the MQRFH2 decoder and the property folder reader: random bytes, and valid
MQRFH2 chains (random typed properties, both byte orders, UTF-8 and UTF-16 folders) with
bytes flipped, cut, inserted or repeated. The only outcomes allowed: a decoded result, a
DecodeError (the codec), an MQError (a put's absorb: MQRC_RFH_ERROR, MQRC_RFH_FORMAT_ERROR);
never another exception, never memory out of proportion to the input (tracemalloc). What a
put accepts is written back as a getter's MQRFH2 that a put accepts again.

CI runs a few seconds on the same examples every time; the full-size run, on fresh random
examples (FERRYMQ_RFH2_FUZZ_RANDOM=1):

    FERRYMQ_RFH2_FUZZ_EXAMPLES=20000 FERRYMQ_RFH2_FUZZ_RANDOM=1 .venv/bin/pytest -q tests/property/test_rfh2_fuzz.py
"""

from __future__ import annotations

import contextlib
import os
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.properties.rfh2map import absorb, build_folders, carriable, folder_properties, with_rfh2
from ferrymq.wire.rfh2 import MQRFH2, unpack_chain
from ferrymq.wire.rfh2_folders import parse_folder

EXAMPLES = int(os.environ.get("FERRYMQ_RFH2_FUZZ_EXAMPLES", "80"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="FERRYMQ_RFH2_FUZZ_RANDOM" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
REFUSALS = (C.MQRC_RFH_ERROR, C.MQRC_RFH_FORMAT_ERROR, C.MQRC_PROPERTIES_TOO_BIG)
# Bytes of the decoder's working copies (folder text as str, a list of folders, properties)
# per input byte: generous, but far below what an unbounded length field would take.
ALLOC_PER_BYTE, ALLOC_FIXED = 64, 2 << 20

parts = st.text("abcXYZ_é$-:0", min_size=1, max_size=6).filter(lambda p: p[0] not in "-:0")
names = st.lists(parts, min_size=1, max_size=4).map(".".join)
values = (st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats()
          | st.text(st.characters(exclude_categories=("Cs",)), max_size=12) | st.binary(max_size=8))


@st.composite
def chains(draw: st.DrawFn) -> tuple[bytes, int]:
    """A valid MQRFH2 chain (one or two headers) and the Encoding of the MQMD before it."""
    big = draw(st.booleans())
    encoding = C.MQENC_INTEGER_NORMAL if big else C.MQENC_NATIVE
    headers = []
    count = draw(st.integers(1, 2))
    for i in range(count):
        props = PropertySet()
        for name, value in draw(st.dictionaries(names, values, max_size=6)).items():
            props[name] = value
        folders = tuple(build_folders(props)) + tuple(draw(st.lists(st.sampled_from(
            ["<psc><Command>Publish</Command></psc>", "<acme a='1'><x/></acme>"]), max_size=1)))
        ccsid = draw(st.sampled_from([1208, 1200]))
        last = i == count - 1
        headers.append(MQRFH2(folders, encoding, 1208, C.MQFMT_STRING if last else C.MQFMT_RF_HEADER_2, 0, ccsid)
                       .pack(big_endian=big))
    return b"".join(headers) + b"payload", encoding


@st.composite
def mutated(draw: st.DrawFn) -> tuple[bytes, int]:
    data, encoding = draw(chains())
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        if not buf:
            break
        at = draw(st.integers(0, len(buf) - 1))
        how = draw(st.sampled_from(["flip", "cut", "insert", "repeat", "truncate", "length"]))
        if how == "flip":
            buf[at] ^= 1 << draw(st.integers(0, 7))
        elif how == "cut":
            del buf[at : at + draw(st.integers(1, 8))]
        elif how == "insert":
            buf[at:at] = draw(st.sampled_from([b"<", b"</", b">", b"/>", b"&", b"&#xD800;", b"'", b"\0", b"\xed\xa0\x80",
                                               b"<a>", b"</usr>", b"\xff\xff\xff\x7f", b" dt='i1'"]))
        elif how == "repeat":
            buf[at:at] = bytes(buf[at : at + draw(st.integers(1, 40))]) * draw(st.integers(2, 50))
        elif how == "truncate":
            del buf[at:]
        else:  # a length field (StrucLength or a NameValueLength) given any value
            buf[at : at + 4] = draw(st.integers(-(2**31), 2**31 - 1)).to_bytes(4, "little", signed=True)
    return bytes(buf), encoding


def _bounded(fn: object, size: int) -> None:
    tracemalloc.start()
    try:
        fn()  # type: ignore[operator]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= ALLOC_FIXED + ALLOC_PER_BYTE * size, (peak, size)


def _put_and_get_back(data: bytes, encoding: int) -> None:
    try:
        split = absorb(data, C.MQFMT_RF_HEADER_2, encoding, 1208)
    except MQError as exc:
        assert exc.comp == C.MQCC_FAILED and exc.reason in REFUSALS, exc
        return
    assert split is not None
    props, warning = carriable(split.props)
    assert warning == C.MQRC_NONE  # nothing a put accepts needs replacing at get
    if not props:
        return
    body, fmt = with_rfh2(props, split.data, split.format, split.encoding, split.ccsid)
    again = absorb(body, fmt, split.encoding, split.ccsid)  # a getter's MQRFH2 is put again as it is
    assert again is not None and set(again.props) == set(props)


@given(chains())
@FUZZ
def test_valid_chains_are_read(chain: tuple[bytes, int]) -> None:
    data, encoding = chain
    _bounded(lambda: _put_and_get_back(data, encoding), len(data))


@given(mutated())
@FUZZ
def test_mutated_chains_decode_or_are_refused(chain: tuple[bytes, int]) -> None:
    data, encoding = chain

    def decode() -> None:
        with contextlib.suppress(DecodeError):
            headers, _, _, _ = unpack_chain(data, C.MQFMT_RF_HEADER_2, encoding)
            for header in headers:
                for text in header.folders:
                    with contextlib.suppress(DecodeError):
                        folder_properties(text)
        _put_and_get_back(data, encoding)
    _bounded(decode, len(data))


@given(st.binary(max_size=400), st.booleans())
@FUZZ
def test_random_bytes_decode_or_are_refused(raw: bytes, big: bool) -> None:
    data = (MQRFH2().pack(big_endian=big)[:8] + raw) if raw[:1] == b"R" else raw
    encoding = C.MQENC_INTEGER_NORMAL if big else C.MQENC_NATIVE
    _bounded(lambda: _put_and_get_back(data, encoding), len(data))


tags = st.sampled_from(["<", "</", ">", "/>", "usr", "a", "g", " ", "'", '"', "=", "dt", "&amp;", "&#65;", "&x;",
                        "i4", "1", "xsi:nil", "\n", "\0", "é", "$"])


@given(st.lists(tags, max_size=60).map("".join))
@FUZZ
def test_folder_text_parses_or_is_a_decode_error(text: str) -> None:
    with contextlib.suppress(DecodeError):
        parse_folder(text)
    with contextlib.suppress(DecodeError):
        folder_properties(text)
