"""pymqi's RFH2 class: byte order kept from unpack to pack, and pymqi's error texts."""

from __future__ import annotations

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC

PSC = b"<psc><Command>RegSub</Command></psc>"


def _big_endian_header() -> bytes:
    rfh2 = pymqi.RFH2(Encoding=273, CodedCharSetId=1208, Format=CMQC.MQFMT_STRING)
    rfh2.add_folder(PSC)
    return rfh2.pack(encoding=CMQC.MQENC_INTEGER_NORMAL)


def test_a_big_endian_header_packs_back_as_it_came() -> None:
    raw = _big_endian_header()
    assert raw[4:8] == b"\x00\x00\x00\x02"
    rfh2 = pymqi.RFH2()
    rfh2.unpack(raw + b"payload")  # no encoding: the Version bytes say big-endian
    assert rfh2.pack() == raw
    assert rfh2.pack(encoding=CMQC.MQENC_NATIVE)[4:8] == b"\x02\x00\x00\x00"


def test_the_fixed_part_alone_and_pymqi_texts() -> None:
    raw = _big_endian_header()
    rfh2 = pymqi.RFH2()
    rfh2.unpack(raw[:36])  # enough to read StrucLength, as pymqi allows
    assert len(rfh2.get()) == 8 and rfh2["StrucLength"] == len(raw)
    with pytest.raises(pymqi.PYIFError) as ei:
        rfh2.unpack(raw[:32])
    assert str(ei.value) == "PYMQI Error: RFH2 - Buffer too short. Should be 36+ bytes instead of 32"
    with pytest.raises(pymqi.PYIFError) as ei:
        rfh2.unpack(raw[:40])
    assert str(ei.value) == f"PYMQI Error: RFH2 - Buffer too short. Expected: {len(raw)} Buffer Length: 40"
