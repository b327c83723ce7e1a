"""Statistics and accounting messages read as a pymqi monitoring program reads them on IBM
MQ: switched on with PCF (STATINT of one second), got over TCP from
SYSTEM.ADMIN.STATISTICS.QUEUE and SYSTEM.ADMIN.ACCOUNTING.QUEUE with ``ferrymq.pymqi``, and
decoded with pymqi's PCF support and with ferrymq's codec; the counts are the operations a
second connection did."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.pymqi import CMQC, CMQCFC
from ferrymq.wire import pcf as P


@pytest.fixture
def qmgr(pymqi_admin: pymqi.QueueManager) -> pymqi.QueueManager:
    return pymqi_admin


def text(value: bytes) -> str:
    """A PCF string as pymqi gives it: padded to a multiple of four bytes."""
    return value.rstrip(b"\0 ").decode()


def take(qmgr: pymqi.QueueManager, queue: bytes, until: float,
         drain: bool = False) -> list[tuple[dict[int, Any], pymqi.CFH, bytes]]:
    """Every message on ``queue`` until ``until`` (monotonic; ``drain``: or until it is
    empty), decoded by pymqi's PCF support."""
    q = pymqi.Queue(qmgr, queue, CMQC.MQOO_INPUT_AS_Q_DEF)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_WAIT | CMQC.MQGMO_FAIL_IF_QUIESCING, WaitInterval=200)
    out = []
    try:
        while time.monotonic() < until:
            md = pymqi.MD()
            try:
                data = q.get(None, md, gmo)
            except pymqi.MQMIError as e:
                if e.reason == CMQC.MQRC_NO_MSG_AVAILABLE:
                    if drain:
                        break
                    continue
                raise
            assert md.Format == CMQC.MQFMT_ADMIN and md.MsgType == CMQC.MQMT_DATAGRAM
            params, header = pymqi.PCFExecute.unpack(data)
            ours = P.PCFMessage.unpack(data, md.Encoding)  # the same bytes through ferrymq's codec
            assert (ours.header.command, len(ours.params)) == (header.Command, header.ParameterCount)
            out.append((params, header, data))
    finally:
        q.close()
    return out


def test_a_monitor_reads_statistics_and_accounting_of_what_an_application_did(
        qmgr: pymqi.QueueManager, embedded: EmbeddedQueueManager) -> None:
    pcf = pymqi.PCFExecute(qmgr)
    pcf.MQCMD_CHANGE_Q_MGR({CMQC.MQIA_STATISTICS_MQI: CMQC.MQMON_ON, CMQC.MQIA_STATISTICS_Q: CMQC.MQMON_ON,
                            CMQC.MQIA_STATISTICS_INTERVAL: 1, CMQC.MQIA_ACCOUNTING_MQI: CMQC.MQMON_ON,
                            CMQC.MQIA_ACCOUNTING_Q: CMQC.MQMON_ON})
    [shown] = pcf.MQCMD_INQUIRE_Q_MGR({CMQCFC.MQIACF_Q_MGR_ATTRS: [CMQC.MQIA_STATISTICS_INTERVAL,
                                                                    CMQC.MQIA_ACCOUNTING_Q]})
    assert shown[CMQC.MQIA_STATISTICS_INTERVAL] == 1 and shown[CMQC.MQIA_ACCOUNTING_Q] == CMQC.MQMON_ON
    pcf.MQCMD_CREATE_Q({CMQC.MQCA_Q_NAME: b"STATS.Q", CMQC.MQIA_Q_TYPE: CMQC.MQQT_LOCAL})

    app = pymqi.connect("QM1", "DEV.ADMIN.SVRCONN", f"127.0.0.1({embedded.port})")
    q = pymqi.Queue(app, b"STATS.Q", CMQC.MQOO_OUTPUT | CMQC.MQOO_INPUT_AS_Q_DEF)
    for _ in range(3):
        q.put(b"n" * 10)
    for _ in range(2):
        q.put(b"p" * 100, pymqi.MD(Persistence=CMQC.MQPER_PERSISTENT))
    for _ in range(4):  # three non-persistent, then one persistent
        q.get()
    q.close()
    app.disconnect()

    # written at the application's MQDISC, before its reply
    accounting = take(qmgr, b"SYSTEM.ADMIN.ACCOUNTING.QUEUE", time.monotonic() + 4, drain=True)
    mine = [(p, h) for p, h, _ in accounting if p.get(CMQCFC.MQIAMO_PUTS) == [3, 2]
            or any(text(g[CMQC.MQCA_Q_NAME]) == "STATS.Q" for g in p.get(CMQCFC.MQGACF_Q_ACCOUNTING_DATA, []))]
    [(mqi, mqi_h), (qa, qa_h)] = mine
    assert (mqi_h.Type, mqi_h.Command, qa_h.Command) == (CMQCFC.MQCFT_ACCOUNTING, CMQCFC.MQCMD_ACCOUNTING_MQI,
                                                         CMQCFC.MQCMD_ACCOUNTING_Q)
    assert mqi[CMQCFC.MQIAMO_GETS] == [3, 1] and mqi[CMQCFC.MQIAMO64_PUT_BYTES] == [30, 200]
    assert mqi[CMQCFC.MQIAMO_DISC_TYPE] == CMQCFC.MQDISCONNECT_NORMAL and mqi[CMQCFC.MQCACH_CONNECTION_NAME]
    [group] = qa[CMQCFC.MQGACF_Q_ACCOUNTING_DATA]
    assert group[CMQCFC.MQIAMO_PUTS] == [3, 2] and group[CMQCFC.MQIAMO_GETS] == [3, 1]
    assert (group[CMQCFC.MQIAMO_PUT_MIN_BYTES], group[CMQCFC.MQIAMO_PUT_MAX_BYTES]) == (10, 100)

    # Statistics arrive every second: the intervals' counts for STATS.Q add up to what was done.
    statistics = take(qmgr, b"SYSTEM.ADMIN.STATISTICS.QUEUE", time.monotonic() + 2.5)
    kinds = {h.Command for _, h, _ in statistics}
    assert kinds == {CMQCFC.MQCMD_STATISTICS_MQI, CMQCFC.MQCMD_STATISTICS_Q}
    puts, gets, deepest = [0, 0], [0, 0], 0
    for params, header, _ in statistics:
        for g in params.get(CMQCFC.MQGACF_Q_STATISTICS_DATA, []) if header.Command == CMQCFC.MQCMD_STATISTICS_Q else []:
            if text(g[CMQC.MQCA_Q_NAME]) == "STATS.Q":
                puts = [a + b for a, b in zip(puts, g[CMQCFC.MQIAMO_PUTS], strict=True)]
                gets = [a + b for a, b in zip(gets, g[CMQCFC.MQIAMO_GETS], strict=True)]
                deepest = max(deepest, g[CMQCFC.MQIAMO_Q_MAX_DEPTH])
    assert (puts, gets, deepest) == ([3, 2], [3, 1], 5)
    mqi_puts = sum(p[CMQCFC.MQIAMO_PUTS][0] + p[CMQCFC.MQIAMO_PUTS][1] for p, h, _ in statistics
                   if h.Command == CMQCFC.MQCMD_STATISTICS_MQI)
    assert mqi_puts >= 5  # the administrator's own PCF requests are puts too

    pcf.MQCMD_RESET_Q_MGR({CMQCFC.MQIACF_ACTION: CMQCFC.MQACT_COLLECT_STATISTICS})
    now = take(qmgr, b"SYSTEM.ADMIN.STATISTICS.QUEUE", time.monotonic() + 0.5, drain=True)
    assert any(h.Command == CMQCFC.MQCMD_STATISTICS_MQI for _, h, _ in now)


def test_mqconnx_options_switch_accounting_on_and_publications_are_counted(
        qmgr: pymqi.QueueManager, embedded: EmbeddedQueueManager) -> None:
    """ACCTCONO(ENABLED): an application's MQCNO_ACCOUNTING_MQI_ENABLED gives it MQI
    accounting though ACCTMQI is OFF; the record names its process and connecting thread.
    Its publications and subscriptions are in the MQI statistics and its accounting."""
    pcf = pymqi.PCFExecute(qmgr)
    pcf.MQCMD_CHANGE_Q_MGR({CMQC.MQIA_ACCOUNTING_CONN_OVERRIDE: CMQC.MQMON_ENABLED,
                            CMQC.MQIA_STATISTICS_MQI: CMQC.MQMON_ON, CMQC.MQIA_STATISTICS_INTERVAL: 1})
    [shown] = pcf.MQCMD_INQUIRE_Q_MGR({CMQCFC.MQIACF_Q_MGR_ATTRS: [CMQC.MQIA_ACCOUNTING_CONN_OVERRIDE]})
    assert shown[CMQC.MQIA_ACCOUNTING_CONN_OVERRIDE] == CMQC.MQMON_ENABLED
    cd = pymqi.CD(ChannelName=b"DEV.ADMIN.SVRCONN", ConnectionName=f"127.0.0.1({embedded.port})".encode(),
                  ChannelType=pymqi.CMQXC.MQCHT_CLNTCONN, TransportType=pymqi.CMQXC.MQXPT_TCP)
    app = pymqi.QueueManager(None)
    app.connect_with_options("QM1", cd=cd, opts=CMQC.MQCNO_ACCOUNTING_MQI_ENABLED)
    sd = pymqi.SD(Options=CMQC.MQSO_CREATE | CMQC.MQSO_MANAGED | CMQC.MQSO_NON_DURABLE)
    sd.set_vs("ObjectString", b"stats/prices")
    sub = pymqi.Subscription(app)
    sub.sub(sub_desc=sd)
    topic = pymqi.Topic(app, topic_string=b"stats/prices")
    topic.open(open_opts=CMQC.MQOO_OUTPUT)
    topic.pub(b"12345678")
    topic.close()
    sub.close()
    app.disconnect()

    with pytest.raises(pymqi.MQMIError) as refused:  # both enabled and disabled: MQRC_OPTIONS_ERROR
        pymqi.QueueManager(None).connect_with_options(
            "QM1", cd=cd, opts=CMQC.MQCNO_ACCOUNTING_MQI_ENABLED | CMQC.MQCNO_ACCOUNTING_MQI_DISABLED)
    assert refused.value.reason == CMQC.MQRC_OPTIONS_ERROR

    accounting = take(qmgr, b"SYSTEM.ADMIN.ACCOUNTING.QUEUE", time.monotonic() + 4, drain=True)
    [mqi] = [p for p, h, _ in accounting if h.Command == CMQCFC.MQCMD_ACCOUNTING_MQI]  # ACCTMQI is OFF: only it
    assert (mqi[CMQCFC.MQIACF_PROCESS_ID], mqi[CMQCFC.MQIACF_THREAD_ID]) == (
        os.getpid(), threading.get_native_id() & 0x7FFFFFFF)
    assert mqi[CMQCFC.MQIAMO_TOPIC_PUTS] == [1, 0] and mqi[CMQCFC.MQIAMO64_TOPIC_PUT_BYTES] == [8, 0]
    assert mqi[CMQCFC.MQIAMO_SUBS_NDUR] == [1, 0, 0] and mqi[CMQCFC.MQIAMO_UNSUBS_NDUR] == [0, 1]
    assert time.strftime("%Y-%m-%d") in (text(mqi[CMQCFC.MQCAMO_CONN_DATE]),  # local time, as IBM writes it
                                         text(mqi[CMQCFC.MQCAMO_DISC_DATE]))

    statistics = take(qmgr, b"SYSTEM.ADMIN.STATISTICS.QUEUE", time.monotonic() + 2.5)
    published = [0, 0]
    for params, header, _ in statistics:
        if header.Command == CMQCFC.MQCMD_STATISTICS_MQI:
            published = [a + b for a, b in zip(published, params[CMQCFC.MQIAMO_PUBLISH_MSG_COUNT], strict=True)]
    assert published == [1, 0]
