"""MQMHBUF / MQBUFMH (handle <-> MQRFH2 buffer) and the MQPD checks of MQSETMP, through the
pymqi MessageHandle."""

from __future__ import annotations

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.mq import constants as C
from ferrymq.properties.rfh2map import folder_properties
from ferrymq.wire.rfh2 import MQRFH2, unpack_chain


def _handle(**items: object) -> pymqi.MessageHandle:
    h = pymqi.MessageHandle()
    for name, value in items.items():
        h.properties.set(name.replace("__", "."), value, C.MQTYPE_INT32 if isinstance(value, int) else C.MQTYPE_STRING)
    return h


def _reason(exc: pytest.ExceptionInfo[pymqi.MQMIError]) -> tuple[int, int]:
    return exc.value.comp, exc.value.reason


def test_mhbuf_writes_the_matching_properties_as_an_mqrfh2_and_bufmh_reads_them_back() -> None:
    h = _handle(color="red", n=7, acme__x="1")
    md = pymqi.MD(Format=C.MQFMT_STRING.encode(), CodedCharSetId=1208)
    raw = h.mhbuf("%", md)
    assert (md.Format, md.Encoding, md.CodedCharSetId) == (C.MQFMT_RF_HEADER_2.encode(), 546, 1208)
    header, end = MQRFH2.unpack_from(raw)
    assert end == len(raw) and header.format.rstrip() == "MQSTR" and header.coded_char_set_id == 1208
    found: dict[str, object] = {}
    for text in header.folders:
        found.update(folder_properties(text) or {})
    assert found == {"color": "red", "n": 7, "acme.x": "1"}
    assert h.properties.get("n") == 7  # MQMHBO_DELETE_PROPERTIES not given: still there

    back = pymqi.MessageHandle()
    rest = back.bufmh(raw + b"body", md)
    assert rest == b"body" and md.Format == C.MQFMT_STRING.encode() and md.CodedCharSetId == 1208
    assert back.properties.items() == [("color", "red"), ("n", 7), ("acme.x", "1")]


def test_mhbuf_selects_by_name_and_deletes_on_request() -> None:
    h = _handle(color="red", n=7, acme__x="1")
    md = pymqi.MD(Format=C.MQFMT_STRING.encode(), Encoding=273)
    raw = h.mhbuf("acme.%", md, C.MQMHBO_PROPERTIES_IN_MQRFH2 | C.MQMHBO_DELETE_PROPERTIES)
    header, _ = MQRFH2.unpack_from(raw, big_endian=True)  # in the descriptor's byte order
    assert header.folders == ("<acme content='properties'><x>1</x></acme>",)
    assert [k for k, _ in h.properties.items()] == ["color", "n"]
    with pytest.raises(pymqi.MQMIError) as exc:
        h.mhbuf("acme.%")
    assert _reason(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NOT_AVAILABLE)


def test_mhbuf_refusals_change_nothing() -> None:
    h = _handle(color="red" * 20)
    with pytest.raises(pymqi.MQMIError) as exc:
        h.mhbuf("%", buffer_length=40, options=C.MQMHBO_PROPERTIES_IN_MQRFH2 | C.MQMHBO_DELETE_PROPERTIES)
    assert _reason(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTY_VALUE_TOO_BIG)
    assert exc.value.data_length == len(h.mhbuf("%")) > 40
    assert h.properties.get("color") == "red" * 20  # not deleted by the failed call
    with pytest.raises(pymqi.MQMIError) as exc:
        h.mhbuf("%", options=0x10)
    assert _reason(exc) == (C.MQCC_FAILED, C.MQRC_OPTIONS_ERROR)
    with pytest.raises(pymqi.MQMIError) as exc:
        h.mhbuf("a%b")
    assert _reason(exc) == (C.MQCC_FAILED, C.MQRC_PROPERTY_NAME_ERROR)
    h.dlt()
    with pytest.raises(pymqi.MQMIError) as exc:
        h.mhbuf("%")
    assert _reason(exc) == (C.MQCC_FAILED, C.MQRC_HMSG_ERROR)


def test_bufmh_keeps_other_folders_and_the_buffer_without_delete() -> None:
    data = (MQRFH2(("<usr><a>1</a></usr>", "<psc><Command>x</Command></psc>"), 546, 1208, C.MQFMT_STRING).pack()
            + b"body")
    h = pymqi.MessageHandle()
    md = pymqi.MD(Format=C.MQFMT_RF_HEADER_2.encode())
    assert h.bufmh(data, md, options=C.MQBMHO_NONE) == data and md.Format == C.MQFMT_RF_HEADER_2.encode()
    assert h.properties.get("a") == "1"
    rest = h.bufmh(data, md)
    headers, end, fmt, _ = unpack_chain(rest, "MQHRF2", 546)
    assert [x.folders for x in headers] == [("<psc><Command>x</Command></psc>",)] and rest[end:] == b"body"
    assert md.Format == C.MQFMT_RF_HEADER_2.encode() and fmt.rstrip() == "MQSTR"
    plain = pymqi.MD(Format=C.MQFMT_STRING.encode())
    assert h.bufmh(b"no header", plain) == b"no header"


@pytest.mark.parametrize(("data", "reason"), [
    (b"RFH \x02\0\0\0\x10\0\0\0", C.MQRC_RFH_ERROR),
    (MQRFH2(("<usr><a>1</usr>",)).pack(), C.MQRC_RFH_FORMAT_ERROR),
])
def test_bufmh_refuses_malformed_headers_and_changes_nothing(data: bytes, reason: int) -> None:
    h = _handle(keep="me")
    md = pymqi.MD(Format=C.MQFMT_RF_HEADER_2.encode())
    with pytest.raises(pymqi.MQMIError) as exc:
        h.bufmh(data, md)
    assert _reason(exc) == (C.MQCC_FAILED, reason)
    assert h.properties.items() == [("keep", "me")] and md.Format == C.MQFMT_RF_HEADER_2.encode()
    with pytest.raises(pymqi.MQMIError) as exc:
        h.bufmh(data, md, options=4)
    assert _reason(exc) == (C.MQCC_FAILED, C.MQRC_OPTIONS_ERROR)


def test_setmp_refuses_a_property_descriptor_ibm_does_not_define() -> None:
    h = pymqi.MessageHandle()
    for pd in (pymqi.PD(Context=2), pymqi.PD(Version=2), pymqi.PD(StrucId=b"XX  ")):
        with pytest.raises(pymqi.MQMIError) as exc:
            h.properties.set("a", "1", pd=pd)
        assert _reason(exc) == (C.MQCC_FAILED, C.MQRC_PD_ERROR)
    assert h.properties.items() == []
    h.properties.set("a", "1", pd=pymqi.PD(Context=C.MQPD_USER_CONTEXT))
    got = pymqi.PD()
    h.properties.get("a", pd=got)
    assert got.Context == C.MQPD_USER_CONTEXT
