"""Distribution lists between two real queue managers (127.0.0.1, separate processes): one
MQOPEN with object records for queues at QM1 and QM2, per-destination put-message records,
one copy for QM2 crossing the channel behind an MQDH that QM2's agent splits, and a
destination QM2 does not have dead-lettered there with its own MQDLH."""

from __future__ import annotations

from pathlib import Path

import pytest
from channel_pair import setup_pair
from qm_process import ADMIN_PASSWORD, ADMIN_USER

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH

OK, WARNING, FAILED = C.MQCC_OK, C.MQCC_WARNING, C.MQCC_FAILED


def test_distribution_list_across_a_channel(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        qm1.mqsc("DEFINE QLOCAL(LOCAL.A)\nDEFINE QLOCAL(LOCAL.B)")
        qm2.mqsc("DEFINE QLOCAL(APP.OTHER)")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            names = [("LOCAL.A", ""), ("APP.IN", "QM2"), ("NOT.HERE", ""), ("APP.OTHER", "QM2"), ("LOCAL.B", ""),
                     ("NO.SUCH", "QM2")]
            with c1.open_list(names) as dl:
                assert (dl.opened.comp, dl.opened.reason) == (WARNING, C.MQRC_MULTIPLE_REASONS)
                assert (dl.opened.known, dl.opened.unknown, dl.opened.invalid) == (2, 3, 1)
                assert [r.reason for r in dl.opened.responses] == [0, 0, C.MQRC_UNKNOWN_OBJECT_NAME, 0, 0, 0]
                records = [fc.PutRecord(correl_id=bytes([65 + i]) * 24, feedback=500 + i) for i in range(6)]
                sent = dl.put(b"to many", persistent=True, records=records)
            assert (sent.comp, sent.reason, sent.known, sent.unknown, sent.invalid) == (
                WARNING, C.MQRC_MULTIPLE_REASONS, 2, 3, 1)
            assert len({r.msg_id for r in sent.responses if r.ok}) == 5
            for i, queue in ((0, "LOCAL.A"), (4, "LOCAL.B")):
                got = c1.open(queue).get(wait=5.0)
                assert (got.data, got.md.correl_id, got.md.feedback, got.msg_id) == (
                    b"to many", bytes([65 + i]) * 24, 500 + i, sent.responses[i].msg_id)
            for i, queue in ((1, "APP.IN"), (3, "APP.OTHER")):
                got = c2.open(queue).get(wait=20.0)
                assert (got.data, got.md.correl_id, got.md.feedback, got.msg_id, got.persistent) == (
                    b"to many", bytes([65 + i]) * 24, 500 + i, sent.responses[i].msg_id, True)
                assert got.md.format.strip() == "" and got.md.reply_to_q_mgr.strip() == "QM1"
            # NO.SUCH does not exist at QM2: its copy alone is dead-lettered there
            dead = c2.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=20.0)
            dlh = MQDLH.unpack_from(dead.data)
            assert (dlh.reason, dlh.dest_q_name.strip(), dlh.dest_q_mgr_name.strip()) == (
                C.MQRC_UNKNOWN_OBJECT_NAME, "NO.SUCH", "QM2")
            assert dead.data.endswith(b"to many") and dead.md.msg_id == sent.responses[5].msg_id
            # MQPUT1 to a list: nothing stays open; every destination fails alike: that reason
            one = c1.put1_list(["LOCAL.A", ("APP.IN", "QM2")], "once")
            assert (one.comp, one.reason, one.known, one.unknown) == (OK, 0, 1, 1)
            assert c1.open("LOCAL.A").get(wait=5.0).data == b"once"
            assert c2.open("APP.IN").get(wait=20.0).data == b"once"
            with pytest.raises(fc.DistributionListError) as e:
                c1.put1_list(["NOPE.1", "NOPE.2"], b"x")
            assert (e.value.reason, e.value.result.invalid) == (C.MQRC_UNKNOWN_OBJECT_NAME, 2)
            with pytest.raises(fc.MQError) as e2:
                c1.open_list([])
            assert e2.value.reason == C.MQRC_RECS_PRESENT_ERROR
            with pytest.raises(fc.MQError) as e2:
                c1.open_list(["LOCAL.A"], options=C.MQOO_OUTPUT | C.MQOO_BROWSE)
            assert e2.value.reason == C.MQRC_OPTION_NOT_VALID_FOR_TYPE
            assert "CURDEPTH(0)" in qm1.mqsc("DISPLAY QLOCAL(LOCAL.A) CURDEPTH")
            pymqi_list(qm1.conn_name, c1, c2)
    finally:
        qm1.stop()
        qm2.stop()


def pymqi_list(conn_name: str, c1: fc.Client, c2: fc.Client) -> None:
    """The same through ferrymq.pymqi's DistributionList (docs/pymqi.md): counts in the OD and
    PMO, RR per destination, generated MsgIds written back into the PMRs."""
    qm = pymqi.connect("QM1", "DEV.ADMIN.SVRCONN", conn_name, ADMIN_USER, ADMIN_PASSWORD)
    try:
        dl = pymqi.DistributionList(qm, [pymqi.OR(ObjectName=b"LOCAL.A"),
                                         pymqi.OR(ObjectName="APP.IN", ObjectQMgrName="QM2"),
                                         pymqi.OR(ObjectName="APP.OTHER", ObjectQMgrName="QM2")])
        dl.open(C.MQOO_OUTPUT)
        assert (dl.od.KnownDestCount, dl.od.UnknownDestCount, dl.od.InvalidDestCount) == (1, 2, 0)
        pmo = pymqi.PMO(Version=C.MQPMO_VERSION_2, Options=C.MQPMO_NEW_MSG_ID,
                        PutMsgRecFields=C.MQPMRF_MSG_ID | C.MQPMRF_CORREL_ID)
        recs = [pymqi.PMR(CorrelId=bytes([49 + i]) * 24) for i in range(3)]
        dl.put(b"from pymqi", pymqi.MD(), pmo, recs)
        assert (pmo.KnownDestCount, pmo.UnknownDestCount) == (1, 2)
        assert [(r.CompCode, r.Reason) for r in dl.response_records] == [(OK, 0)] * 3
        assert len({r.MsgId for r in recs}) == 3 and all(r.MsgId != bytes(24) for r in recs)
        got = c1.open("LOCAL.A").get(wait=5.0)
        assert (got.data, got.md.correl_id, got.msg_id) == (b"from pymqi", b"1" * 24, recs[0].MsgId)
        for i, queue in ((1, "APP.IN"), (2, "APP.OTHER")):
            got = c2.open(queue).get(wait=20.0)
            assert (got.data, got.md.correl_id, got.msg_id) == (b"from pymqi", bytes([49 + i]) * 24, recs[i].MsgId)
        # IBM's reasons for records a program gets wrong; nothing is put
        for bad, expected in ((pymqi.PMO(Version=2, RecsPresent=-1), C.MQRC_RECS_PRESENT_ERROR),
                              (pymqi.PMO(Version=2, PutMsgRecFields=0x100), C.MQRC_PMO_RECORD_FLAGS_ERROR),
                              (pymqi.PMO(Version=2, PutMsgRecFields=1, PutMsgRecPtr=64), C.MQRC_PUT_MSG_RECORDS_ERROR),
                              (pymqi.PMO(Version=2, PutMsgRecFields=1, RecsPresent=4), C.MQRC_PUT_MSG_RECORDS_ERROR),
                              (pymqi.PMO(Version=2, ResponseRecPtr=64), C.MQRC_RESPONSE_RECORDS_ERROR),
                              (pymqi.PMO(Version=2, PutMsgRecFields=C.MQPMRF_ACCOUNTING_TOKEN),
                               C.MQRC_PMO_RECORD_FLAGS_ERROR)):
            with pytest.raises(pymqi.MQMIError) as e:
                dl.put(b"never", pymqi.MD(), bad, [pymqi.PMR()] * 3)
            assert (e.value.comp, e.value.reason) == (FAILED, expected)
        dl.close()
        with pytest.raises(fc.NoMessageAvailable):
            c1.open("LOCAL.A").get(wait=0.2)
        with pytest.raises(pymqi.MQMIError) as e:
            pymqi.DistributionList(qm, [pymqi.OR(ObjectName="LOCAL.A")], pymqi.OD(Version=2, ObjectRecPtr=64)).open()
        assert e.value.reason == C.MQRC_OBJECT_RECORDS_ERROR
        with pytest.raises(pymqi.MQMIError) as e:
            pymqi.DistributionList(qm, [pymqi.OR(ObjectName="LOCAL.A")], pymqi.OD(Version=2, RecsPresent=-2)).open()
        assert e.value.reason == C.MQRC_RECS_PRESENT_ERROR
        mixed = pymqi.DistributionList(qm, [pymqi.OR(ObjectName="LOCAL.A"), pymqi.OR(ObjectName="NOPE")])
        with pytest.raises(pymqi.MQMIError) as e:
            mixed.put1(b"put1")
        assert (e.value.comp, e.value.reason) == (WARNING, C.MQRC_MULTIPLE_REASONS)
        assert [(r.CompCode, r.Reason) for r in mixed.response_records] == [
            (OK, 0), (FAILED, C.MQRC_UNKNOWN_OBJECT_NAME)]
        assert c1.open("LOCAL.A").get(wait=5.0).data == b"put1"
    finally:
        qm.disconnect()
