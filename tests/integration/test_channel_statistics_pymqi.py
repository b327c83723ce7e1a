"""Channel statistics (STATCHL) between two real queue managers, read as a pymqi monitoring
program reads them on IBM MQ: MQCMD_STATISTICS_CHANNEL messages on each end's
SYSTEM.ADMIN.STATISTICS.QUEUE every STATINT, one ChlStatisticsData group per channel, whose
counts add up to what crossed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from channel_pair import running_pair
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC, CMQCFC

MESSAGES, SIZE = 12, 300
CMQXC_SENDER, CMQXC_RECEIVER = pymqi.CMQXC.MQCHT_SENDER, pymqi.CMQXC.MQCHT_RECEIVER


def channel_groups(qm: QueueManagerProcess, name: str, want: int, timeout: float = 30.0) -> list[dict[int, Any]]:
    """The groups for channel ``name`` in ``qm``'s channel statistics until their MsgCount
    adds up to ``want`` (each interval's statistics arrive as its STATINT ends)."""
    conn = pymqi.connect(qm.name, "DEV.ADMIN.SVRCONN", qm.conn_name, ADMIN_USER, ADMIN_PASSWORD)
    q = pymqi.Queue(conn, b"SYSTEM.ADMIN.STATISTICS.QUEUE", CMQC.MQOO_INPUT_AS_Q_DEF)
    groups: list[dict[int, Any]] = []
    deadline = time.monotonic() + timeout
    try:
        while sum(g[CMQCFC.MQIAMO_MSGS] for g in groups) < want and time.monotonic() < deadline:
            md = pymqi.MD()
            try:
                data = q.get(None, md, pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=500))
            except pymqi.MQMIError as e:
                assert e.reason == CMQC.MQRC_NO_MSG_AVAILABLE
                continue
            params, header = pymqi.PCFExecute.unpack(data)
            if header.Command != CMQCFC.MQCMD_STATISTICS_CHANNEL:
                continue
            assert header.Type == CMQCFC.MQCFT_STATISTICS and md.Format == CMQC.MQFMT_ADMIN
            assert params[CMQCFC.MQIAMO_OBJECT_COUNT] == len(params[CMQCFC.MQGACF_CHL_STATISTICS_DATA])
            groups += [g for g in params[CMQCFC.MQGACF_CHL_STATISTICS_DATA]
                       if g[CMQCFC.MQCACH_CHANNEL_NAME].rstrip(b"\0 ") == name.encode()]
    finally:
        q.close()
        conn.disconnect()
    return groups


def test_both_ends_count_the_messages_and_batches_that_crossed(tmp_path: Path) -> None:
    with running_pair(tmp_path) as (qm1, qm2):
        qm1.mqsc("ALTER QMGR STATCHL(MEDIUM) STATINT(1)")
        qm2.mqsc("ALTER QMGR STATINT(1)\nALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) STATCHL(HIGH)")  # its own level
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out = c1.open("TO.QM2.APP")
            for i in range(MESSAGES):
                out.put(bytes([65 + i]) * SIZE, persistent=True)
            inq = c2.open("APP.IN")
            for _ in range(MESSAGES):
                assert len(inq.get(wait=20.0).data) == SIZE
        sent = channel_groups(qm1, "QM1.TO.QM2", MESSAGES)
        received = channel_groups(qm2, "QM1.TO.QM2", MESSAGES)
    for groups, kind, partner in ((sent, CMQXC_SENDER, b"QM2"), (received, CMQXC_RECEIVER, b"QM1")):
        assert sum(g[CMQCFC.MQIAMO_MSGS] for g in groups) == MESSAGES
        assert {g[CMQCFC.MQIACH_CHANNEL_TYPE] for g in groups} == {kind}
        assert {g[CMQC.MQCA_REMOTE_Q_MGR_NAME].rstrip(b"\0 ") for g in groups} == {partner}
        assert sum(g[CMQCFC.MQIAMO64_BYTES] for g in groups) > MESSAGES * SIZE  # the messages and their headers
        batches = sum(g[CMQCFC.MQIAMO_FULL_BATCHES] + g[CMQCFC.MQIAMO_INCOMPLETE_BATCHES] for g in groups)
        assert 1 <= batches <= MESSAGES
        assert all(g[CMQCFC.MQIAMO_PUT_RETRIES] == 0 for g in groups)
    timed = [g for g in sent if g[CMQCFC.MQIAMO_MSGS]]
    assert timed and all(0 < g[CMQCFC.MQIAMO_NET_TIME_MIN] <= g[CMQCFC.MQIAMO_NET_TIME_AVG]
                         <= g[CMQCFC.MQIAMO_NET_TIME_MAX] for g in timed)
    assert all(CMQCFC.MQIAMO_NET_TIME_AVG not in g for g in received)  # a sending end measures round trips

