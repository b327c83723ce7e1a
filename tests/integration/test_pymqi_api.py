"""pymqi-style programs against a live queue manager over TCP on 127.0.0.1 (and bindings mode)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.errors import MQError
from ferrymq.pymqi import CMQC, CMQCFC, CMQXC
from ferrymq.wire.mqmd import MQMD


@pytest.fixture
def conn_info(embedded: EmbeddedQueueManager) -> str:
    return f"127.0.0.1({embedded.port})"


@pytest.fixture
def qmgr(conn_info: str) -> Iterator[pymqi.QueueManager]:
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", conn_info)
    yield qm
    if qm.is_connected:
        qm.disconnect()


def depth(qmgr: pymqi.QueueManager, name: str) -> int:
    q = pymqi.Queue(qmgr, name, CMQC.MQOO_INQUIRE)
    try:
        value = q.inquire(CMQC.MQIA_CURRENT_Q_DEPTH)
        assert isinstance(value, int)
        return value
    finally:
        q.close()


def test_put_then_get_updates_md_in_place(qmgr: pymqi.QueueManager) -> None:
    queue = pymqi.Queue(qmgr, "Q1")
    put_md = pymqi.MD(Format=CMQC.MQFMT_STRING, Persistence=CMQC.MQPER_PERSISTENT, ReplyToQ=b"REPLY")
    queue.put(b"Hello from Python!", put_md)
    assert put_md.MsgId != CMQC.MQMI_NONE and len(put_md.MsgId) == 24
    queue.close()

    queue = pymqi.Queue(qmgr, "Q1")
    md, gmo = pymqi.MD(), pymqi.GMO()
    assert queue.get(None, md, gmo) == b"Hello from Python!"
    assert md.MsgId == put_md.MsgId
    assert md.Format == CMQC.MQFMT_STRING
    assert md.Persistence == CMQC.MQPER_PERSISTENT
    assert md.ReplyToQ.rstrip() == b"REPLY"
    assert len(md.PutDate) == 8 and md.PutDate.isdigit()
    assert gmo.ReturnedLength == len(b"Hello from Python!")
    queue.close()


def test_str_message_and_queue_opened_on_first_use(qmgr: pymqi.QueueManager) -> None:
    out = pymqi.Queue(qmgr, "Q2")
    assert out.get_handle() == 0
    out.put("text is encoded as UTF-8")
    assert out.get_handle() != 0
    out.close()
    assert pymqi.Queue(qmgr, "Q2").get() == b"text is encoded as UTF-8"


def test_str_message_is_described_as_text(qmgr: pymqi.QueueManager) -> None:
    md = pymqi.MD()
    pymqi.Queue(qmgr, "Q2").put("тест", md)  # as pymqi: Format MQSTR, CCSID default_ccsid, encoded with bytes_encoding
    assert (md.Format, md.CodedCharSetId) == (CMQC.MQFMT_STRING, 1208)
    got = pymqi.MD()
    assert pymqi.Queue(qmgr, "Q2").get(None, got) == "тест".encode()
    assert (got.Format, got.CodedCharSetId) == (CMQC.MQFMT_STRING, 1208)


def test_a_put_that_warns_raises_as_pymqi(qmgr: pymqi.QueueManager) -> None:
    queue = pymqi.Queue(qmgr, "Q2")
    md = pymqi.MD(Priority=42)
    with pytest.raises(pymqi.MQMIError) as ei:  # pymqi raises for any completion code but MQCC_OK
        queue.put(b"too high", md)
    assert (ei.value.comp, ei.value.reason) == (CMQC.MQCC_WARNING, CMQC.MQRC_PRIORITY_EXCEEDS_MAXIMUM)
    assert ei.value.errorAsString() == "WARNING: MQRC_PRIORITY_EXCEEDS_MAXIMUM"
    with pytest.raises(pymqi.MQMIError):
        qmgr.put1("Q2", b"too high as well", pymqi.MD(Priority=42))
    got = pymqi.MD()
    assert queue.get(None, got) == b"too high"  # the message was put all the same


def test_pymqi_names_handles_and_errors(qmgr: pymqi.QueueManager) -> None:
    assert (pymqi.md, pymqi.gmo, pymqi.pmo, pymqi.od, pymqi.cd, pymqi.sco) == (
        pymqi.MD, pymqi.GMO, pymqi.PMO, pymqi.OD, pymqi.CD, pymqi.SCO)
    assert pymqi.__mqbuild__ == "client" and pymqi.QueueManager.getHandle is pymqi.QueueManager.get_handle
    assert isinstance(qmgr.get_handle(), int) and qmgr.get_handle() > 0
    with pytest.raises(pymqi.PYIFError) as ei:
        pymqi.QueueManager(None).get_handle()
    assert ei.value.message == "not connected" and str(ei.value) == "PYMQI Error: not connected"
    assert str(pymqi.MQMIError(2, 4004)) == "MQI Error. Comp: 2, Reason 4004: FAILED: MQRCCF_OBJECT_OPEN"
    assert pymqi.MQMIError(2, 1).errorAsString() == "FAILED: Error code 1 not defined"
    assert pymqi.CMQZC.MQZAO_CONNECT == 1 and pymqi.CMQCFC.MQCACH_DESC == 3502


def test_get_with_wait(qmgr: pymqi.QueueManager, conn_info: str) -> None:
    queue = pymqi.Queue(qmgr, "Q1", CMQC.MQOO_INPUT_AS_Q_DEF)

    def later() -> None:
        time.sleep(0.3)
        other = pymqi.connect("QM1", "DEV.APP.SVRCONN", conn_info)
        other.put1("Q1", b"late")
        other.disconnect()

    t = threading.Thread(target=later)
    t.start()
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_FAIL_IF_QUIESCING, WaitInterval=5000)
    started = time.monotonic()
    assert queue.get(None, pymqi.MD(), gmo) == b"late"
    assert 0.2 < time.monotonic() - started < 4
    t.join()

    gmo.WaitInterval = 200
    started = time.monotonic()
    with pytest.raises(pymqi.MQMIError) as info:
        queue.get(None, pymqi.MD(), gmo)
    assert time.monotonic() - started >= 0.15
    assert (info.value.comp, info.value.reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_NO_MSG_AVAILABLE)


def test_truncated_failed_2080_leaves_the_message(qmgr: pymqi.QueueManager) -> None:
    queue = pymqi.Queue(qmgr, "Q1")
    queue.put(b"0123456789")
    md = pymqi.MD()
    with pytest.raises(pymqi.MQMIError) as info:
        queue.get(4, md)
    err = info.value
    assert err.reason == CMQC.MQRC_TRUNCATED_MSG_FAILED
    assert err.comp == CMQC.MQCC_WARNING
    assert err.original_length == 10  # type: ignore[attr-defined]
    assert err.message == b"0123"  # type: ignore[attr-defined]
    assert depth(qmgr, "Q1") == 1
    assert queue.get() == b"0123456789"


def test_truncated_accepted_2079_removes_the_message(qmgr: pymqi.QueueManager) -> None:
    queue = pymqi.Queue(qmgr, "Q1")
    queue.put(b"0123456789")
    gmo = pymqi.GMO(Options=CMQC.MQGMO_ACCEPT_TRUNCATED_MSG)
    with pytest.raises(pymqi.MQMIError) as info:
        queue.get(3, pymqi.MD(), gmo)
    err = info.value
    assert (err.comp, err.reason) == (CMQC.MQCC_WARNING, CMQC.MQRC_TRUNCATED_MSG_ACCEPTED)
    assert err.message == b"012"  # type: ignore[attr-defined]
    assert err.original_length == 10  # type: ignore[attr-defined]
    assert depth(qmgr, "Q1") == 0


def test_browse_first_then_next(qmgr: pymqi.QueueManager) -> None:
    for text in (b"one", b"two", b"three"):
        qmgr.put1("Q3", text)
    queue = pymqi.Queue(qmgr, "Q3", CMQC.MQOO_BROWSE | CMQC.MQOO_INQUIRE)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_BROWSE_FIRST)
    seen = []
    while True:
        md = pymqi.MD()
        try:
            seen.append(queue.get(None, md, gmo))
        except pymqi.MQMIError as e:
            assert e.reason == CMQC.MQRC_NO_MSG_AVAILABLE
            break
        gmo.Options = CMQC.MQGMO_BROWSE_NEXT
    assert seen == [b"one", b"two", b"three"]
    assert queue.inquire(CMQC.MQIA_CURRENT_Q_DEPTH) == 3
    queue.close()


def test_inquire_queue_and_queue_manager(qmgr: pymqi.QueueManager) -> None:
    qmgr.put1("Q2", b"a")
    qmgr.put1(pymqi.OD(ObjectName=b"Q2"), b"b", pymqi.MD(), pymqi.PMO())
    queue = pymqi.Queue(qmgr, "Q2")
    assert queue.inquire(CMQC.MQIA_CURRENT_Q_DEPTH) == 2
    assert queue.inquire(CMQC.MQCA_Q_NAME) == b"Q2".ljust(48)
    name = qmgr.inquire(CMQC.MQCA_Q_MGR_NAME)
    assert isinstance(name, bytes) and name.strip() == b"QM1"


def test_set_inhibit_put(qmgr: pymqi.QueueManager) -> None:
    queue = pymqi.Queue(qmgr, "Q3", CMQC.MQOO_SET | CMQC.MQOO_OUTPUT | CMQC.MQOO_INQUIRE)
    queue.set(CMQC.MQIA_INHIBIT_PUT, CMQC.MQQA_PUT_INHIBITED)
    with pytest.raises(pymqi.MQMIError) as info:
        queue.put(b"x")
    assert info.value.reason == CMQC.MQRC_PUT_INHIBITED
    queue.set(CMQC.MQIA_INHIBIT_PUT, CMQC.MQQA_PUT_ALLOWED)
    queue.put(b"x")


def test_commit_and_backout(qmgr: pymqi.QueueManager, conn_info: str) -> None:
    other = pymqi.connect("QM1", "DEV.APP.SVRCONN", conn_info)
    seen_by_other = pymqi.Queue(other, "Q1", CMQC.MQOO_INPUT_SHARED | CMQC.MQOO_BROWSE)

    def visible() -> list[bytes]:
        gmo = pymqi.GMO(Options=CMQC.MQGMO_BROWSE_FIRST)
        found = []
        while True:
            try:
                found.append(seen_by_other.get(None, pymqi.MD(), gmo))
            except pymqi.MQMIError as e:
                assert e.reason == CMQC.MQRC_NO_MSG_AVAILABLE
                return found
            gmo.Options = CMQC.MQGMO_BROWSE_NEXT

    queue = pymqi.Queue(qmgr, "Q1")
    pmo = pymqi.PMO(Options=CMQC.MQPMO_SYNCPOINT)
    qmgr.begin()
    queue.put(b"kept", None, pmo)
    assert visible() == []
    qmgr.commit()
    assert visible() == [b"kept"]
    queue.put(b"dropped", None, pmo)
    qmgr.backout()
    assert visible() == [b"kept"]

    gmo = pymqi.GMO(Options=CMQC.MQGMO_SYNCPOINT)
    assert queue.get(None, pymqi.MD(), gmo) == b"kept"
    assert visible() == []
    qmgr.backout()
    md = pymqi.MD()
    assert queue.get(None, md, gmo) == b"kept"
    assert md.BackoutCount == 1
    qmgr.commit()
    assert visible() == []
    other.disconnect()


def test_mqmierror_fields(qmgr: pymqi.QueueManager) -> None:
    with pytest.raises(pymqi.MQMIError) as info:
        pymqi.Queue(qmgr, "NO.SUCH.QUEUE", CMQC.MQOO_OUTPUT)
    err = info.value
    assert (err.comp, err.reason) == (2, 2085)
    assert err.errorAsString() == "FAILED: MQRC_UNKNOWN_OBJECT_NAME"
    assert str(err) == "MQI Error. Comp: 2, Reason 2085: FAILED: MQRC_UNKNOWN_OBJECT_NAME"
    assert isinstance(err, MQError)
    empty = pymqi.Queue(qmgr, "Q3")
    with pytest.raises(pymqi.MQMIError) as info:
        empty.get()
    assert str(info.value) == "MQI Error. Comp: 2, Reason 2033: FAILED: MQRC_NO_MSG_AVAILABLE"
    assert pymqi.MQMIError(1, 2079).errorAsString() == "WARNING: MQRC_TRUNCATED_MSG_ACCEPTED"
    assert pymqi.MQMIError(0, 0).errorAsString() == "OK"


def test_interface_errors(qmgr: pymqi.QueueManager) -> None:
    queue = pymqi.Queue(qmgr, "Q1")
    with pytest.raises(pymqi.PYIFError):
        queue.close()
    with pytest.raises(pymqi.PYIFError):
        pymqi.MD(NoSuchField=1)
    queue.open("Q1", CMQC.MQOO_OUTPUT)
    with pytest.raises(pymqi.PYIFError):
        queue.open("Q1")
    with pytest.raises(pymqi.MQMIError) as info:
        qmgr.connect_tcp_client("QM1", pymqi.CD(), "CH", "127.0.0.1(1)")
    assert info.value.reason == CMQC.MQRC_ALREADY_CONNECTED
    qmgr.disconnect()
    with pytest.raises(pymqi.PYIFError):
        qmgr.disconnect()


def test_connect_tcp_client_and_bad_addresses(conn_info: str) -> None:
    qm = pymqi.QueueManager(None)
    qm.connectTCPClient("QM1", pymqi.CD(), b"DEV.APP.SVRCONN", conn_info.encode(), "app", "secret")
    assert qm.is_connected
    qm.disconnect()
    with pytest.raises(pymqi.MQMIError) as info:
        pymqi.connect("QM1", "CH", "127.0.0.1(1)")
    assert info.value.reason == CMQC.MQRC_HOST_NOT_AVAILABLE
    with pytest.raises(pymqi.MQMIError) as info:
        pymqi.connect("QM9", "CH", conn_info)
    assert info.value.reason == CMQC.MQRC_Q_MGR_NAME_ERROR


def test_dynamic_queue_from_model(qmgr: pymqi.QueueManager, conn_info: str) -> None:
    od = pymqi.OD(ObjectName=b"SYSTEM.DEFAULT.MODEL.QUEUE", DynamicQName=b"PYMQI.*")
    dyn = pymqi.Queue(qmgr, od, CMQC.MQOO_INPUT_EXCLUSIVE | CMQC.MQOO_INQUIRE)
    name = od.ObjectName.strip()
    assert name.startswith(b"PYMQI.") and dyn.name == name.decode()
    other = pymqi.connect("QM1", "DEV.APP.SVRCONN", conn_info)
    other.put1(name.decode(), b"to the dynamic queue")
    other.disconnect()
    assert dyn.get() == b"to the dynamic queue"
    dyn.close()
    with pytest.raises(pymqi.MQMIError) as info:
        qmgr.put1(name.decode(), b"gone with its creator's handle")
    assert info.value.reason == CMQC.MQRC_UNKNOWN_OBJECT_NAME


def test_bindings_mode(embedded: EmbeddedQueueManager) -> None:
    pymqi.register_bindings(embedded)
    try:
        qm = pymqi.connect("QM1")
        pymqi.Queue(qm, "Q1").put(b"local")
        assert pymqi.Queue(qm, "Q1").get() == b"local"
        qm.disconnect()
        with pymqi.QueueManager("QM1") as qm2:
            assert qm2.is_connected
        assert not qm2.is_connected
    finally:
        pymqi.unregister_bindings("QM1")
    with pytest.raises(pymqi.MQMIError) as info:
        pymqi.QueueManager("QM1")
    assert info.value.reason == CMQC.MQRC_Q_MGR_NOT_AVAILABLE


def test_md_pack_unpack_round_trip() -> None:
    md = pymqi.MD(Version=CMQC.MQMD_VERSION_2, Report=CMQC.MQRO_COA, MsgType=CMQC.MQMT_REQUEST, Expiry=600, Format=CMQC.MQFMT_STRING,
                  Priority=7, Persistence=CMQC.MQPER_PERSISTENT, MsgId=b"m" * 24, CorrelId=b"c" * 24,
                  ReplyToQ=b"REPLY", ReplyToQMgr=b"QM1", PutApplName=b"app", GroupId=b"g" * 24, MsgSeqNumber=3,
                  OriginalLength=99)
    raw = md.pack()
    assert len(raw) == CMQC.MQMD_LENGTH_2
    back = pymqi.MD()
    back.unpack(raw)
    assert back.pack() == raw
    assert back.MsgId == b"m" * 24 and back.Priority == 7 and back.ReplyToQ.rstrip(b"\0") == b"REPLY"
    wire = MQMD.unpack_from(raw)  # the reference codec reads the same bytes
    assert (wire.reply_to_q, wire.format, wire.msg_seq_number) == ("REPLY", "MQSTR", 3)
    # As pymqi: MD() is version 1 yet packs all 364 bytes; a frame carries the version's own length.
    assert pymqi.MD().Version == CMQC.MQMD_VERSION_1
    full = pymqi.MD().pack()
    assert full[:8] == b"MD  \x01\x00\x00\x00" and full[8:] == MQMD(version=2).pack()[8:]
    assert pymqi.MD().wire() == MQMD(version=1).pack() and len(pymqi.MD().wire()) == CMQC.MQMD_LENGTH_1
    v1 = pymqi.MD(GroupId=b"g" * 24)
    v1.unpack(MQMD(version=1, priority=3).pack())  # 324 bytes leave the version 2 fields as they were
    assert (v1.Priority, v1.GroupId) == (3, b"g" * 24)
    assert md["Priority"] == 7 and md.get()["Expiry"] == 600
    md.set(Priority=2)
    md["Expiry"] = 1
    assert (md.Priority, md.Expiry) == (2, 1)


def test_option_structures_pack_to_ibm_lengths() -> None:
    assert len(pymqi.GMO().pack()) == CMQC.MQGMO_LENGTH_4
    assert len(pymqi.PMO().pack()) == CMQC.MQPMO_LENGTH_3
    assert len(pymqi.OD().pack()) == CMQC.MQOD_LENGTH_4
    assert len(pymqi.CNO().pack()) == CMQC.MQCNO_LENGTH_1
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=5000, Version=CMQC.MQGMO_VERSION_2)
    back = pymqi.GMO()
    back.unpack(gmo.pack())
    assert (back.Version, back.Options, back.WaitInterval, back.MatchOptions) == (2, CMQC.MQGMO_WAIT, 5000, 3)
    od = pymqi.OD()
    assert od.DynamicQName == b"AMQ.*" and od.ObjectType == CMQC.MQOT_Q
    with pytest.raises(pymqi.PYIFError):
        pymqi.CD().pack()
    with pytest.raises(pymqi.PYIFError):
        pymqi.GMO().unpack(b"XXXX" + bytes(200))


def test_constant_modules() -> None:
    assert CMQC.MQFMT_STRING == b"MQSTR   "
    assert CMQC.MQRC_NO_MSG_AVAILABLE == 2033 and CMQC.MQGMO_WAIT == 1
    assert CMQXC.MQXPT_TCP == 2 and CMQXC.MQCHT_CLNTCONN == 6
    assert CMQCFC.MQCMD_INQUIRE_Q == 13 and CMQCFC.MQCFT_COMMAND == 1
    assert CMQCFC.MQIACF_Q_STATUS_ATTRS == 1026 and CMQCFC.MQCACF_Q_NAMES == 3011
    assert CMQC.MQGS_LAST_MSG_IN_GROUP == b"L" and bytes(24) == CMQC.MQMI_NONE
    assert "MQOO_OUTPUT" in dir(CMQC)
    with pytest.raises(AttributeError):
        CMQC.NOT_A_CONSTANT  # noqa: B018
