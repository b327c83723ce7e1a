"""Distribution lists between two real queue managers (127.0.0.1, separate processes): one
MQOPEN with object records for queues at QM1 and QM2, per-destination put-message records,
one copy for QM2 crossing the channel behind an MQDH that QM2's agent splits, and a
destination QM2 does not have dead-lettered there with its own MQDLH."""

from __future__ import annotations

from pathlib import Path

import pytest
from channel_pair import setup_pair

import ferrymq.client as fc
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
    finally:
        qm1.stop()
        qm2.stop()
