"""Instrumentation events read as a pymqi monitoring program reads them on IBM MQ: switched
on with PCF, got from the SYSTEM.ADMIN.*.EVENT queues with ``ferrymq.pymqi`` over TCP, and
decoded with pymqi's PCF structures."""

from __future__ import annotations

import pytest
from pcf_events import checked_event

import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC, CMQCFC


@pytest.fixture
def qmgr(pymqi_admin: pymqi.QueueManager) -> pymqi.QueueManager:
    return pymqi_admin


def take_events(qmgr: pymqi.QueueManager, queue: bytes) -> list[tuple[pymqi.CFH, dict[int, object]]]:
    q = pymqi.Queue(qmgr, queue, CMQC.MQOO_INPUT_AS_Q_DEF)
    out: list[tuple[pymqi.CFH, dict[int, object]]] = []
    try:
        while True:
            md = pymqi.MD()
            try:
                data = q.get(None, md)
            except pymqi.MQMIError as e:
                if e.reason == CMQC.MQRC_NO_MSG_AVAILABLE:
                    return out
                raise
            out.append(checked_event(md, data))
    finally:
        q.close()


def test_queue_depth_high_and_put_inhibited_reach_a_pymqi_monitor(qmgr: pymqi.QueueManager) -> None:
    pcf = pymqi.PCFExecute(qmgr)
    pcf.MQCMD_CHANGE_Q_MGR({CMQC.MQIA_PERFORMANCE_EVENT: CMQCFC.MQEVR_ENABLED,
                            CMQC.MQIA_INHIBIT_EVENT: CMQCFC.MQEVR_ENABLED})
    pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"EVENTS.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL, CMQC.MQIA_MAX_Q_DEPTH: 5,
                        CMQC.MQIA_Q_DEPTH_HIGH_LIMIT: 60, CMQC.MQIA_Q_DEPTH_HIGH_EVENT: CMQCFC.MQEVR_ENABLED})
    q = pymqi.Queue(qmgr, b"EVENTS.Q", CMQC.MQOO_OUTPUT)
    for i in range(3):
        q.put(b"m%d" % i)
    q.close()
    [(header, params)] = take_events(qmgr, b"SYSTEM.ADMIN.PERFM.EVENT")
    assert (header.Type, header.Command, header.Reason) == (CMQCFC.MQCFT_EVENT, CMQCFC.MQCMD_PERFM_EVENT,
                                                            CMQC.MQRC_Q_DEPTH_HIGH)
    assert params[CMQC.MQCA_BASE_OBJECT_NAME] == b"EVENTS.Q" and params[CMQC.MQIA_HIGH_Q_DEPTH] == 3
    assert params[CMQC.MQIA_MSG_ENQ_COUNT] == 3

    pcf.MQCMD_CHANGE_Q({CMQC.MQCA_Q_NAME: b"EVENTS.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL,
                        CMQC.MQIA_INHIBIT_PUT: CMQC.MQQA_PUT_INHIBITED})
    with pytest.raises(pymqi.MQMIError):
        pymqi.Queue(qmgr, b"EVENTS.Q", CMQC.MQOO_OUTPUT).put(b"refused")
    started, *rest = take_events(qmgr, b"SYSTEM.ADMIN.QMGR.EVENT")
    assert started[0].Reason == CMQC.MQRC_Q_MGR_ACTIVE  # the server announced its start
    [(header, params)] = rest
    assert (header.Command, header.Reason) == (CMQCFC.MQCMD_Q_MGR_EVENT, CMQC.MQRC_PUT_INHIBITED)
    assert params[CMQC.MQCA_Q_NAME] == b"EVENTS.Q" and params[CMQC.MQCA_Q_MGR_NAME] == b"QM1"
