"""pymqi's SD and SRO: field names, defaults, MQCHARV access and the byte image of IBM's
MQSD version 1 on 64-bit platforms; the wire MQSD's default is IBM's MQSD_DEFAULT."""

from __future__ import annotations

import struct

import pytest

from ferrymq.mq import constants as C
from ferrymq.pymqi import SD, SRO, MQMIError, PYIFError
from ferrymq.pymqi.pubsub import sub_request_of
from ferrymq.wire.api_structs import MQSD, layout

# MQSD as a C compiler lays it out on a 64-bit platform, which is how pymqi packs it (native
# alignment: each MQCHARV's pointer on 8 bytes, hence the padding after SubExpiry,
# PubApplIdentityData and SubLevel).
CHARV = "P4i"
NATIVE = struct.Struct("@4si i 48s 12s 40s i" + CHARV * 3 + "24s i 32s 32s" + CHARV + "i" + CHARV)
NUL = b"\0"


def image(priority: int, level: int, ccsid: int) -> bytes:
    charv = (0, 0, 0, 0, ccsid)
    return NATIVE.pack(b"SD  ", 1, 0, NUL * 48, NUL * 12, NUL * 40, -1, *charv, *charv, *charv, NUL * 24, priority,
                       NUL * 32, NUL * 32, *charv, level, *charv)


def test_the_layout_is_ibms_64_bit_mqsd() -> None:
    assert NATIVE.size == C.MQSD_LENGTH_1 == 344
    lay = layout(MQSD, 1)
    assert (lay.offset_of("object_string.vs_ptr"), lay.offset_of("sub_correl_id"),
            lay.offset_of("selection_string.vs_ptr"), lay.offset_of("res_object_string.vs_ptr")) == (120, 192, 288, 320)


def test_pymqis_default_sd_packs_byte_for_byte() -> None:
    assert SD().pack() == image(C.MQPRI_PRIORITY_AS_Q_DEF, 0, 0)


def test_the_wire_default_is_mqsd_default() -> None:
    assert MQSD().pack() == image(C.MQPRI_PRIORITY_AS_PUBLISHED, 1, C.MQCCSI_APPL)


def test_pymqi_field_names_and_defaults() -> None:
    sd = SD()
    assert (sd["Options"], sd.SubExpiry, sd.PubPriority, sd.SubLevel) == (C.MQSO_NON_DURABLE, -1, -1, 0)
    for base in ("ObjectString", "SubName", "SubUserData", "SelectionString", "ResObjectString"):
        assert [sd[base + s] for s in ("VSOffset", "VSBufSize", "VSLength", "VSCCSID")] == [0, 0, 0, 0]
    assert sd.SubCorrelId == bytes(24) and sd.PubAccountingToken == bytes(32)


def test_set_vs_and_get_vs() -> None:
    sd = SD(Options=C.MQSO_CREATE)
    sd.set_vs("SubName", "my sub")
    sd.set_vs("ObjectString", b"/a/b")
    assert sd.get_vs("SubName") == b"my sub" and sd.SubNameVSLength == 6
    assert sd.get_vs("SubUserData") is None
    with pytest.raises(PYIFError):
        sd.set_vs("NoSuchString", b"x")


def test_pack_unpack_round_trip() -> None:
    sd = SD(Options=C.MQSO_CREATE | C.MQSO_DURABLE, ObjectName=b"SPORTS", SubExpiry=600, SubLevel=3,
            SubCorrelId=b"C" * 24, PubPriority=5)
    sd.set_vs("ObjectString", b"/football")
    raw = sd.pack()
    assert len(raw) == 344 and raw[120:128] == bytes(8)  # pointers pack as 0
    back = SD()
    back.unpack(raw)
    assert (back.Options, back.ObjectName[:6], back.SubExpiry, back.SubLevel, back.SubCorrelId, back.PubPriority,
            back.ObjectStringVSLength) == (sd.Options, b"SPORTS", 600, 3, b"C" * 24, 5, 9)


def test_the_mqsub_an_sd_stands_for() -> None:
    sd = SD(Options=C.MQSO_CREATE | C.MQSO_MANAGED, PubApplIdentityData=b"app")
    sd.set_vs("ObjectString", "/a")
    sd.set_vs("SubName", "n")
    sd.set_vs("SelectionString", "x = 1")
    ev = sub_request_of(sd, 0)
    assert (ev.options, ev.object_string, ev.sub_name, ev.selection_string, ev.pub_appl_identity_data,
            ev.pub_priority, ev.sub_level) == (C.MQSO_CREATE | C.MQSO_MANAGED, "/a", "n", "x = 1", "app", -1, 0)


@pytest.mark.parametrize(("change", "reason"), [
    ({"Version": 2}, C.MQRC_SD_ERROR),
    ({"StrucId": b"XX  "}, C.MQRC_SD_ERROR),
    ({"ObjectStringVSLength": 5}, C.MQRC_OBJECT_STRING_ERROR),  # a length and no string
    ({"SubNameVSLength": -7}, C.MQRC_SUB_NAME_ERROR),
])
def test_a_malformed_sd_gets_ibms_reason(change: dict[str, object], reason: int) -> None:
    sd = SD(Options=C.MQSO_CREATE, **change)
    with pytest.raises(MQMIError) as info:
        sub_request_of(sd, 0)
    assert (info.value.comp, info.value.reason) == (C.MQCC_FAILED, reason)


def test_sro() -> None:
    sro = SRO()
    assert (sro.Options, sro.NumPubs) == (C.MQSRO_FAIL_IF_QUIESCING, 0)
    assert sro.pack() == struct.pack("<4siii", b"SRO ", 1, C.MQSRO_FAIL_IF_QUIESCING, 0)
