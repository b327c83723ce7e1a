"""pymqi-style administration programs, written as they are for IBM MQ, run unchanged
through ``ferrymq.pymqi`` against a live queue manager over TCP (and in bindings mode)."""

from __future__ import annotations

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import cfc as F
from ferrymq.pymqi import CMQC, CMQCFC


@pytest.fixture
def qmgr(pymqi_admin: pymqi.QueueManager) -> pymqi.QueueManager:
    return pymqi_admin


def test_define_display_delete_queues_the_pymqi_way(qmgr: pymqi.QueueManager) -> None:
    pcf = pymqi.PCFExecute(qmgr)
    for name in (b"PYMQI.A", b"PYMQI.B"):
        args = {CMQC.MQCA_Q_NAME: name, CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL, CMQC.MQIA_MAX_Q_DEPTH: 250,
                CMQC.MQCA_Q_DESC: b"made by pymqi"}
        pcf.MQCMD_CREATE_Q(args)
    with pytest.raises(pymqi.MQMIError) as ei:
        pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"PYMQI.A", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
    assert (ei.value.comp, ei.value.reason) == (CMQC.MQCC_FAILED, CMQCFC.MQRCCF_OBJECT_ALREADY_EXISTS)

    response = pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"PYMQI.*", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
    names = [q[CMQC.MQCA_Q_NAME].strip() for q in response]
    assert names == [b"PYMQI.A", b"PYMQI.B"]
    assert all(q[CMQC.MQIA_MAX_Q_DEPTH] == 250 and q[CMQC.MQCA_Q_DESC].strip() == b"made by pymqi" for q in response)

    deep = pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"*"}, [pymqi.Filter(CMQC.MQIA_MAX_Q_DEPTH).less(300)])
    assert [q[CMQC.MQCA_Q_NAME].strip() for q in deep] == [b"PYMQI.A", b"PYMQI.B"]

    pcf.MQCMD_CHANGE_Q({CMQC.MQCA_Q_NAME: b"PYMQI.B", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL,
                        CMQC.MQIA_INHIBIT_PUT: CMQC.MQQA_PUT_INHIBITED})
    pcf.MQCMD_COPY_Q({CMQCFC.MQCACF_FROM_Q_NAME: b"PYMQI.B", CMQCFC.MQCACF_TO_Q_NAME: b"PYMQI.C",
                      CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
    copy = pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"PYMQI.C", CMQCFC.MQIACF_Q_ATTRS: [CMQC.MQIA_INHIBIT_PUT]})
    assert copy[0][CMQC.MQIA_INHIBIT_PUT] == CMQC.MQQA_PUT_INHIBITED

    names_only = pcf.MQCMD_INQUIRE_Q_NAMES({CMQC.MQCA_Q_NAME: b"PYMQI.*", CMQC.MQIA_Q_TYPE: CMQC.MQQT_ALL})
    assert [n.strip() for n in names_only[0][CMQCFC.MQCACF_Q_NAMES]] == [b"PYMQI.A", b"PYMQI.B", b"PYMQI.C"]

    for name in (b"PYMQI.A", b"PYMQI.B", b"PYMQI.C"):
        pcf.MQCMD_DELETE_Q({CMQC.MQCA_Q_NAME: name})
    with pytest.raises(pymqi.MQMIError) as ei:
        pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"PYMQI.*"})
    assert ei.value.reason == CMQC.MQRC_UNKNOWN_OBJECT_NAME
    pcf.disconnect()


def test_queue_status_and_connections_the_pymqi_way(qmgr: pymqi.QueueManager) -> None:
    pcf = pymqi.PCFExecute(qmgr, convert=True)
    pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: "STATUS.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
    q = pymqi.Queue(qmgr, "STATUS.Q")
    q.put(b"one")
    q.put(b"two")
    status = pcf.MQCMD_INQUIRE_Q_STATUS({CMQC.MQCA_Q_NAME: "STATUS.Q"})
    assert status[0][CMQC.MQIA_CURRENT_Q_DEPTH] == 2 and status[0][CMQC.MQIA_OPEN_OUTPUT_COUNT] == 1
    handles = pcf.MQCMD_INQUIRE_Q_STATUS({CMQC.MQCA_Q_NAME: "STATUS.Q",
                                          CMQCFC.MQIACF_Q_STATUS_TYPE: CMQCFC.MQIACF_Q_HANDLE})
    assert [h[CMQCFC.MQCACF_APPL_TAG].strip() for h in handles] == ["pymqi"]
    assert handles[0][CMQCFC.MQIACF_OPEN_OUTPUT] == F.MQQSO_YES
    conns = pcf.MQCMD_INQUIRE_CONNECTION({CMQCFC.MQBACF_GENERIC_CONNECTION_ID: pymqi.ByteString(b""),
                                          CMQCFC.MQIACF_CONNECTION_ATTRS: [CMQCFC.MQIACF_ALL]})
    assert any(c[CMQCFC.MQCACF_APPL_TAG].strip() == "pymqi" for c in conns)
    qm = pcf.MQCMD_INQUIRE_Q_MGR({CMQCFC.MQIACF_Q_MGR_ATTRS: [CMQC.MQCA_Q_MGR_NAME, CMQC.MQIA_PLATFORM]})
    assert qm[0][CMQC.MQCA_Q_MGR_NAME].strip() == "QM1" and qm[0][CMQC.MQIA_PLATFORM] == CMQC.MQPL_UNIX
    pcf.MQCMD_PING_Q_MGR()
    q.close()
    pcf.MQCMD_CLEAR_Q({CMQC.MQCA_Q_NAME: "STATUS.Q"})
    pcf.MQCMD_DELETE_Q({CMQC.MQCA_Q_NAME: "STATUS.Q"})
    with pytest.raises(AttributeError):
        pcf.NOT_A_COMMAND  # noqa: B018
    pcf.disconnect()


def test_pcf_in_bindings_mode(embedded: EmbeddedQueueManager) -> None:
    pymqi.register_bindings(embedded)
    try:
        qm = pymqi.QueueManager("QM1")
        pcf = pymqi.PCFExecute(qm)
        pcf.MQCMD_CHANGE_Q_MGR({CMQC.MQCA_Q_MGR_DESC: b"administered from python"})
        got = pcf.MQCMD_INQUIRE_Q_MGR()
        assert got[0][CMQC.MQCA_Q_MGR_DESC].strip() == b"administered from python"
        pcf.disconnect()
        qm.disconnect()
    finally:
        pymqi.unregister_bindings("QM1")


def test_alias_and_model_queues_through_pcfexecute(qmgr: pymqi.QueueManager) -> None:
    pcf = pymqi.PCFExecute(qmgr)
    pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"REAL.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})
    pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"ALIAS.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_ALIAS,
                        CMQC.MQCA_BASE_Q_NAME: b"REAL.Q"})
    pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"MODEL.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_MODEL,
                        CMQC.MQIA_DEFINITION_TYPE: CMQC.MQQDT_PERMANENT_DYNAMIC})
    alias = pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"ALIAS.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_ALIAS})[0]
    assert alias[CMQC.MQCA_BASE_Q_NAME].strip() == b"REAL.Q" and alias[CMQC.MQIA_Q_TYPE] == CMQC.MQQT_ALIAS
    model = pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"MODEL.Q", CMQCFC.MQIACF_Q_ATTRS: [CMQC.MQIA_DEFINITION_TYPE]})[0]
    assert model[CMQC.MQIA_DEFINITION_TYPE] == CMQC.MQQDT_PERMANENT_DYNAMIC
    with pytest.raises(pymqi.MQMIError) as ei:  # an alias has no depth to clear
        pcf.MQCMD_CLEAR_Q({CMQC.MQCA_Q_NAME: b"ALIAS.Q"})
    assert ei.value.reason == CMQCFC.MQRCCF_Q_WRONG_TYPE
    with pytest.raises(pymqi.MQMIError) as ei:
        pcf.MQCMD_CHANGE_Q({CMQC.MQCA_Q_NAME: b"ALIAS.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_ALIAS, CMQC.MQIA_MAX_Q_DEPTH: 5})
    assert ei.value.reason == CMQCFC.MQRCCF_CFIN_PARM_ID_ERROR
    for name in (b"ALIAS.Q", b"MODEL.Q", b"REAL.Q"):
        pcf.MQCMD_DELETE_Q({CMQC.MQCA_Q_NAME: name})
    pcf.disconnect()


def test_pcf_structures_and_padded_values(qmgr: pymqi.QueueManager) -> None:
    pcf = pymqi.PCFExecute(qmgr)
    assert pcf.reply_queue_name and pcf.is_connected
    created = pcf.MQCMD_CREATE_Q([pymqi.CFST(Parameter=CMQC.MQCA_Q_NAME, String=b"PYMQI.LIST"),
                                  pymqi.CFIN(Parameter=CMQC.MQIA_Q_TYPE, Value=CMQC.MQQT_LOCAL),
                                  pymqi.CFIN(Parameter=CMQCFC.MQIACF_REPLACE, Value=CMQCFC.MQRP_YES)])
    assert created == [{}]  # as pymqi: one response, no parameters
    pymqi.Queue(qmgr, "PYMQI.LIST").put(b"one")
    found = pcf.MQCMD_INQUIRE_Q([pymqi.CFST(Parameter=CMQC.MQCA_Q_NAME, String=b"PYMQI.*"),
                                 pymqi.CFIL(Parameter=CMQCFC.MQIACF_Q_ATTRS,
                                            Values=[CMQC.MQIA_CURRENT_Q_DEPTH, CMQC.MQCA_Q_DESC])],
                                [pymqi.CFIF(Parameter=CMQC.MQIA_CURRENT_Q_DEPTH, Operator=CMQCFC.MQCFOP_GREATER,
                                            FilterValue=0)])
    # Character values come back as the queue manager sent them: blank-padded to their length.
    assert [(q[CMQC.MQCA_Q_NAME], q[CMQC.MQCA_Q_DESC]) for q in found] == [(b"PYMQI.LIST".ljust(48), b" " * 64)]
    described = pcf.MQCMD_INQUIRE_Q({CMQC.MQCA_Q_NAME: b"PYMQI.*", CMQCFC.MQIACF_Q_ATTRS: CMQC.MQCA_Q_DESC},
                                    [pymqi.Filter(CMQC.MQIA_CURRENT_Q_DEPTH).greater(0)])
    assert [q[CMQC.MQIA_CURRENT_Q_DEPTH] for q in described] == [1]  # the filtered attribute comes back too
    conns = pcf.MQCMD_INQUIRE_CONNECTION([pymqi.CFBS(Parameter=CMQCFC.MQBACF_GENERIC_CONNECTION_ID, String=b""),
                                          pymqi.CFIL(Parameter=CMQCFC.MQIACF_CONNECTION_ATTRS,
                                                     Values=[CMQCFC.MQCACH_CONNECTION_NAME])],
                                         [pymqi.Filter(CMQC.MQIA_APPL_TYPE).equal(CMQC.MQAT_USER)])
    # The filter tests an attribute that was not asked for; user programs are MQAT_USER.
    assert conns and all(CMQCFC.MQCACH_CONNECTION_NAME in c for c in conns)
    pcf.MQCMD_DELETE_Q({CMQC.MQCA_Q_NAME: b"PYMQI.LIST", CMQCFC.MQIACF_PURGE: CMQCFC.MQPO_YES})
    pcf.disconnect()
    assert not pcf.reply_queue and not pcf.is_connected and qmgr.is_connected


def test_pcf_unpack_groups_and_filters() -> None:
    message = pymqi.CFH(Type=CMQCFC.MQCFT_STATISTICS, Command=CMQCFC.MQCMD_STATISTICS_Q, ParameterCount=3).pack()
    message += pymqi.CFST(Parameter=CMQC.MQCA_Q_MGR_NAME, String=b"QM1").pack()
    message += pymqi.CFGR(Parameter=CMQCFC.MQGACF_Q_STATISTICS_DATA, ParameterCount=2).pack()
    message += pymqi.CFIN64(Parameter=CMQCFC.MQIAMO_Q_MIN_DEPTH, Value=1 << 40).pack()
    message += pymqi.CFSF(Parameter=CMQC.MQCA_Q_DESC, Operator=CMQCFC.MQCFOP_LIKE, FilterValue=b"x*").pack()
    message += pymqi.CFSL(Parameter=CMQC.MQCA_NAMES, Strings=[b"A", b"BCDEF"]).pack()
    values, header = pymqi.PCFExecute.unpack(message)
    assert (header.Type, header.Command) == (CMQCFC.MQCFT_STATISTICS, CMQCFC.MQCMD_STATISTICS_Q)
    assert values == {CMQC.MQCA_Q_MGR_NAME: b"QM1\0",
                      CMQCFC.MQGACF_Q_STATISTICS_DATA: [{CMQCFC.MQIAMO_Q_MIN_DEPTH: 1 << 40,
                                                        CMQC.MQCA_Q_DESC: (CMQCFC.MQCFOP_LIKE, b"x*\0\0")}],
                      CMQC.MQCA_NAMES: [b"A".ljust(8, b"\0"), b"BCDEF".ljust(8, b"\0")]}
    failed = pymqi.CFH(Type=CMQCFC.MQCFT_RESPONSE, CompCode=2, Reason=CMQCFC.MQRCCF_OBJECT_OPEN).pack()
    with pytest.raises(pymqi.MQMIError) as ei:
        pymqi.PCFExecute.unpack(failed)
    assert ei.value.reason == CMQCFC.MQRCCF_OBJECT_OPEN
