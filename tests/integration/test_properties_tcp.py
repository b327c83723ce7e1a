"""Message properties over TCP: pymqi message handles and RFH2, the Pythonic typed mapping,
and PROPCTL deciding what each kind of getter receives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from propctl_queues import define_propctl_queues

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.pymqi import CMQC


@pytest.fixture
def emb(embedded: EmbeddedQueueManager) -> EmbeddedQueueManager:
    return define_propctl_queues(embedded, {"P.COMPAT": C.MQPROP_COMPATIBILITY, "P.ALL": C.MQPROP_ALL,
                                            "P.NONE": C.MQPROP_NONE, "P.FORCE": C.MQPROP_FORCE_MQRFH2})


@pytest.fixture
def qmgr(emb: EmbeddedQueueManager) -> Iterator[pymqi.QueueManager]:
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", f"127.0.0.1({emb.port})")
    yield qm
    qm.disconnect()


def test_pymqi_message_handles_carry_every_type(qmgr: pymqi.QueueManager) -> None:
    q = pymqi.Queue(qmgr, "P.COMPAT")
    put_h = pymqi.MessageHandle(qmgr)
    put_h.properties.set("colour", "red")
    put_h.properties.set("flag", True, CMQC.MQTYPE_BOOLEAN)
    put_h.properties.set("i8", -5, CMQC.MQTYPE_INT8)
    put_h.properties.set("i64", 1 << 40, CMQC.MQTYPE_INT64)
    put_h.properties.set("f32", 1.5, CMQC.MQTYPE_FLOAT32)
    put_h.properties.set("raw", b"\x00\x01", CMQC.MQTYPE_BYTE_STRING)
    put_h.properties.set("nothing", None, CMQC.MQTYPE_NULL)
    put_h.properties["app.g.e"] = "grouped"
    q.put(b"hello", pymqi.MD(), pymqi.PMO(NewMsgHandle=put_h.msg_handle))

    get_h = pymqi.MessageHandle(qmgr)
    md = pymqi.MD()
    assert q.get(None, md, pymqi.GMO(MsgHandle=get_h.msg_handle)) == b"hello"  # no MQRFH2 in the data
    p = get_h.properties
    assert (p.get("colour"), p.get("flag"), p.get("i8"), p.get("i64")) == ("red", True, -5, 1 << 40)
    assert (p.get("f32"), p.get("raw"), p.get("nothing"), p["app.g.e"]) == (1.5, b"\x00\x01", None, "grouped")
    assert p.get("i8", property_type=CMQC.MQTYPE_STRING, impo_options=CMQC.MQIMPO_CONVERT_TYPE) == "-5"
    assert p.get("%")[1] == b"colour"
    with pytest.raises(pymqi.MQMIError) as exc:
        p.get("absent", default="dflt")
    assert (exc.value.reason, exc.value.value) == (CMQC.MQRC_PROPERTY_NOT_AVAILABLE, "dflt")
    with pytest.raises(KeyError):
        p["absent"]
    put_h.properties.set("long", "x" * 100)
    with pytest.raises(pymqi.MQMIError) as exc:
        put_h.properties.get("long")  # pymqi's default Value area is 64 bytes
    assert (exc.value.comp, exc.value.reason, exc.value.data_length, exc.value.value) == (
        CMQC.MQCC_WARNING, CMQC.MQRC_PROPERTY_VALUE_TOO_BIG, 100, "x" * 64)
    assert put_h.properties.get("long", max_value_length=100) == "x" * 100
    assert p.get("Root.MQMD.Format") == md.Format.decode().rstrip() or p.get("Root.MQMD.Format").rstrip() == "MQSTR"
    q.close()


def test_pymqi_handle_errors(qmgr: pymqi.QueueManager) -> None:
    q = pymqi.Queue(qmgr, "P.COMPAT")
    q.put(b"x")
    with pytest.raises(pymqi.MQMIError) as exc:
        q.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_PROPERTIES_IN_HANDLE))
    assert (exc.value.comp, exc.value.reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_HMSG_ERROR)
    h = pymqi.MessageHandle(qmgr)
    h.dlt()
    with pytest.raises(pymqi.MQMIError) as exc:
        q.get(None, pymqi.MD(), pymqi.GMO(MsgHandle=h.msg_handle))
    assert exc.value.reason == CMQC.MQRC_HMSG_ERROR
    with pytest.raises(pymqi.MQMIError) as exc:
        pymqi.MessageHandle(qmgr, pymqi.CMHO(Options=7))
    assert exc.value.reason == CMQC.MQRC_CMHO_ERROR
    h2 = pymqi.MessageHandle(qmgr)
    with pytest.raises(pymqi.MQMIError) as exc:
        h2.properties.dlt("nothere")
    assert (exc.value.comp, exc.value.reason) == (CMQC.MQCC_WARNING, CMQC.MQRC_PROPERTY_NOT_AVAILABLE)
    assert q.get() == b"x"  # nothing was taken by the refused gets
    q.close()


def _rfh2(*folders: bytes) -> pymqi.RFH2:
    r = pymqi.RFH2()
    r["Format"] = CMQC.MQFMT_STRING
    for f in folders:
        r.add_folder(f)
    return r


def test_rfh2_put_is_the_same_message_as_a_handle_put(qmgr: pymqi.QueueManager, emb: EmbeddedQueueManager) -> None:
    q = pymqi.Queue(qmgr, "P.COMPAT")
    md = pymqi.MD(Format=CMQC.MQFMT_RF_HEADER_2, CodedCharSetId=1208)
    q.put_rfh2(b"body", md, pymqi.PMO(), [_rfh2(b"<usr><colour>red</colour><n dt='i4'>7</n></usr>",
                                               b"<acme><x>1</x></acme>")])
    h = pymqi.MessageHandle(qmgr)
    handle_put = pymqi.MessageHandle(qmgr)
    handle_put.properties.set("colour", "red")
    handle_put.properties.set("n", 7, CMQC.MQTYPE_INT32)
    q.put(b"body", pymqi.MD(Format=CMQC.MQFMT_STRING), pymqi.PMO(NewMsgHandle=handle_put.msg_handle))
    with fc.connect("QM1", f"127.0.0.1({emb.port})") as client:
        pq = client.open("P.COMPAT")
        first, second = pq.get(), pq.get()
    # Properties from the MQRFH2 and from the handle are one typed mapping; the folder that is
    # not properties stays in an MQRFH2 in the data.
    assert first.properties == second.properties == {"colour": "red", "n": 7}
    assert first.properties.type_of("n") == second.properties.type_of("n") == C.MQTYPE_INT32
    assert second.data == b"body" and second.format.rstrip() == "MQSTR"
    assert first.format.rstrip() == "MQHRF2" and first.data.endswith(b"body") and b"<acme>" in first.data
    assert b"colour" not in first.data
    del h
    q.close()


def test_getter_without_a_handle_reads_the_mqrfh2(qmgr: pymqi.QueueManager, emb: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", f"127.0.0.1({emb.port})") as client:
        for name in ("P.COMPAT", "P.ALL", "P.NONE", "P.FORCE"):
            client.open(name).put(b"body", properties={"colour": "red", "n": 7, "raw": b"\x01"})
    for name, in_rfh2 in (("P.COMPAT", True), ("P.ALL", True), ("P.NONE", False), ("P.FORCE", True)):
        q = pymqi.Queue(qmgr, name)
        md, headers = pymqi.MD(), []  # type: ignore[var-annotated]
        body = q.get_rfh2(None, md, pymqi.GMO(), headers)
        assert body == b"body"
        if in_rfh2:
            assert len(headers) == 1 and headers[0]["Format"].rstrip() == b""  # the data's own Format (none)
            assert headers[0]["usr"].rstrip() == b"<usr><colour>red</colour><n dt='i4'>7</n>" \
                                                 b"<raw dt='bin.hex'>01</raw></usr>"
        else:
            assert headers == [] and md.Format.rstrip() == b""
        q.close()


async def test_async_client_typed_mapping(emb: EmbeddedQueueManager) -> None:
    props = PropertySet()
    props.set("small", 3, C.MQTYPE_INT16)
    props["text"] = "t"
    props["none"] = None
    async with await fc.connect_async("QM1", f"127.0.0.1({emb.port})") as qm:
        q = await qm.open("P.ALL")
        await q.put(b"x", properties=props)
        m = await q.get()
    assert m.properties == {"small": 3, "text": "t", "none": None}
    assert m.properties.type_of("small") == C.MQTYPE_INT16 and m.data == b"x"


@pytest.mark.parametrize("props, reason", [({"colour": "a\ud800b"}, C.MQRC_PROP_VALUE_NOT_CONVERTED),
                                           ({"\ud800": 1}, C.MQRC_PROPERTY_NAME_ERROR),
                                           ({"": 1}, C.MQRC_PROPERTY_NAME_ERROR)])
def test_what_no_message_carries_is_refused_and_the_connection_serves_on(
        qmgr: pymqi.QueueManager, emb: EmbeddedQueueManager, props: dict[str, object], reason: int) -> None:
    # Issue 24: such a put raised UnicodeEncodeError in the server and dropped the connection.
    with fc.connect("QM1", f"127.0.0.1({emb.port})") as client:
        q = client.open("P.COMPAT")
        with pytest.raises(fc.MQError) as exc:
            q.put(b"x", properties=props, async_put=False)
        assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, reason)
        q.put(b"after", properties={"colour": "red"})
        assert q.get().data == b"after"
    md = pymqi.MD()
    with pytest.raises(pymqi.MQMIError):
        pymqi.Queue(qmgr, "P.COMPAT").get(None, md, pymqi.GMO())  # nothing else was stored
