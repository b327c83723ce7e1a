"""PCF structures byte for byte (MQCFH 36 bytes and every parameter type), both encodings."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrymq.errors import DecodeError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.wire import pcf as P

ENCODINGS = [(P.NATIVE, ">"), (P.REVERSED, "<")]


@pytest.mark.parametrize(("encoding", "bo"), ENCODINGS)
def test_cfh_is_36_bytes_in_ibm_field_order(encoding: int, bo: str) -> None:
    hdr = P.CFH(F.MQCFT_RESPONSE, F.MQCMD_INQUIRE_Q, 3, F.MQCFC_NOT_LAST, C.MQCC_FAILED, 2085, 0, F.MQCFH_VERSION_3)
    raw = P.PCFMessage(hdr).pack(encoding)
    assert len(raw) == 36 == F.MQCFH_STRUC_LENGTH
    assert raw == struct.pack(bo + "9i", 2, 36, 3, 13, 3, 0, 2, 2085, 0)
    assert P.PCFMessage.unpack(raw, encoding).header == hdr


@pytest.mark.parametrize(("encoding", "bo"), ENCODINGS)
def test_each_parameter_structure_layout(encoding: int, bo: str) -> None:
    cases: list[tuple[P.Param, bytes]] = [
        (P.CFIN(C.MQIA_Q_TYPE, 1), struct.pack(bo + "4i", 3, 16, 20, 1)),
        (P.CFIN64(F.MQIACF_Q_ATTRS, 2**40), struct.pack(bo + "4iq", 23, 24, 1002, 0, 2**40)),
        (P.CFST(C.MQCA_Q_NAME, "Q1", 1208), struct.pack(bo + "5i", 4, 24, 2016, 1208, 2) + b"Q1\0\0"),
        (P.CFIL(F.MQIACF_Q_ATTRS, (15, 3)), struct.pack(bo + "6i", 5, 24, 1002, 2, 15, 3)),
        # each string blank-padded to a multiple of 4 (pymqi reads MQCFSL strings so)
        (P.CFSL(F.MQCACF_Q_NAMES, ("A", "BCD"), 1208), struct.pack(bo + "6i", 6, 32, 3011, 1208, 2, 4) + b"A   BCD "),
        (P.CFBS(F.MQBACF_CONNECTION_ID, b"\x01\x02\x03\x04\x05"), struct.pack(bo + "4i", 9, 24, 7006, 5) + b"\x01\x02\x03\x04\x05\0\0\0"),
        (P.CFIF(C.MQIA_CURRENT_Q_DEPTH, F.MQCFOP_GREATER, 5), struct.pack(bo + "5i", 13, 20, 3, 4, 5)),
        (P.CFSF(C.MQCA_Q_DESC, F.MQCFOP_LIKE, "X*", 1208), struct.pack(bo + "6i", 14, 28, 2013, 18, 1208, 2) + b"X*\0\0"),
        (P.CFGR(F.MQGACF_COMMAND_CONTEXT, (P.CFIN(1, 2),)), struct.pack(bo + "4i", 20, 16, 8001, 1) + struct.pack(bo + "4i", 3, 16, 1, 2)),
    ]
    for param, want in cases:
        assert P.pack_param(param, bo) == want, param
        msg = P.PCFMessage(P.CFH(parameter_count=1), (param,))
        assert P.PCFMessage.unpack(msg.pack(encoding), encoding).params == (param,)


def test_header_parameter_count_follows_the_parameters() -> None:
    raw = P.PCFMessage(P.CFH(command=F.MQCMD_PING_Q_MGR), (P.CFIN(1, 1), P.CFST(2, "x"))).pack()
    assert struct.unpack_from(">i", raw, 32)[0] == 2


@pytest.mark.parametrize("bad", [
    b"",  # nothing
    struct.pack(">9i", 1, 35, 1, 40, 1, 1, 0, 0, 0),  # StrucLength not 36
    struct.pack(">9i", 1, 36, 9, 40, 1, 1, 0, 0, 0),  # Version 9
    struct.pack(">9i", 1, 36, 1, 40, 1, 1, 0, 0, 1),  # one parameter promised, none there
    struct.pack(">9i", 1, 36, 1, 40, 1, 1, 0, 0, 1) + struct.pack(">4i", 3, 15, 1, 1),  # StrucLength 15
    struct.pack(">9i", 1, 36, 1, 40, 1, 1, 0, 0, 1) + struct.pack(">4i", 5, 16, 1, 1000),  # list count lies
    struct.pack(">9i", 1, 36, 1, 40, 1, 1, 0, 0, 1) + struct.pack(">5i", 4, 20, 1, 1208, 99),  # string too long
    struct.pack(">9i", 1, 36, 1, 40, 1, 1, 0, 0, 1) + struct.pack(">4i", 99, 16, 1, 1),  # unknown type
    struct.pack(">9i", 1, 36, 1, 40, 1, 1, 0, 0, 0) + b"junk",  # trailing bytes
    struct.pack(">9i", 1, 36, 1, 40, 1, 1, 0, 0, 1) + struct.pack(">6i", 6, 24, 1, 1208, 70000, 4),  # CFSL count
])
def test_malformed_messages_raise_decode_error(bad: bytes) -> None:
    with pytest.raises(DecodeError):
        P.PCFMessage.unpack(bad)


def test_groups_nest_only_so_deep() -> None:
    inner: P.Param = P.CFIN(1, 1)
    for _ in range(P.MAX_DEPTH + 1):
        inner = P.CFGR(8001, (inner,))
    raw = P.PCFMessage(P.CFH(), (inner,)).pack()
    with pytest.raises(DecodeError, match="nest"):
        P.PCFMessage.unpack(raw)


names = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._", max_size=48)
ints = st.integers(min_value=-(2**31), max_value=2**31 - 1)
params = st.one_of(
    st.builds(P.CFIN, ints, ints),
    st.builds(P.CFST, ints, names),
    st.builds(P.CFIL, ints, st.lists(ints, max_size=8).map(tuple)),
    st.builds(P.CFSL, ints, st.lists(names.filter(lambda s: s == s.rstrip()), max_size=5).map(tuple)),
    st.builds(P.CFBS, ints, st.binary(max_size=40)),
    st.builds(P.CFIF, ints, ints, ints),
)


@given(st.lists(params, max_size=6), st.sampled_from([P.NATIVE, P.REVERSED]))
def test_round_trip(plist: list[P.Param], encoding: int) -> None:
    msg = P.PCFMessage(P.CFH(parameter_count=len(plist)), tuple(plist))
    back = P.PCFMessage.unpack(msg.pack(encoding), encoding)
    assert back == msg


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_escape_as_other_errors(raw: bytes) -> None:
    with contextlib.suppress(DecodeError):
        P.PCFMessage.unpack(raw)


@given(st.lists(params, min_size=1, max_size=4), st.integers(min_value=0, max_value=400))
def test_truncated_messages_fail_cleanly(plist: list[P.Param], cut: int) -> None:
    raw = P.PCFMessage(P.CFH(parameter_count=len(plist)), tuple(plist)).pack()
    if cut < len(raw):
        with pytest.raises(DecodeError):
            P.PCFMessage.unpack(raw[:cut])
