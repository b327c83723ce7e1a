"""Client connections through server-connection channels, as IBM's clients make them.

A TCP client names a SVRCONN channel (MQCD ChannelName; blank is SYSTEM.DEF.SVRCONN): one
that is not defined, or not a SVRCONN, is refused with 2540 MQRC_UNKNOWN_CHANNEL_NAME; the
channel's MAXMSGL bounds the connection's maximum message length and its HBINT the
heartbeat (the larger of the two ends'), and DISPLAY CONN shows the channel. A connection
through the local socket (IBM's bindings) uses no channel. A real queue-manager process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from qm_process import QueueManagerProcess

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.errors import MQError
from ferrymq.mq import constants as C


@pytest.fixture(scope="module")
def qm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueueManagerProcess]:
    proc = QueueManagerProcess(Path(tmp_path_factory.mktemp("svrconn"))).start()
    proc.mqsc("DEFINE QLOCAL(APP.Q)\n"
              "DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN) MAXMSGL(40000) HBINT(7)\n"
              "DEFINE CHANNEL(TO.ELSEWHERE) CHLTYPE(SDR) CONNAME('127.0.0.1(1)') XMITQ(APP.Q)\n")
    yield proc
    proc.stop()


@pytest.mark.parametrize("channel", ["NOT.DEFINED", "TO.ELSEWHERE"])
def test_a_channel_that_is_not_a_defined_svrconn_is_refused_with_2540(qm: QueueManagerProcess, channel: str) -> None:
    with pytest.raises(MQError) as exc:
        fc.connect("QM1", qm.conn_name, channel=channel)
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, C.MQRC_UNKNOWN_CHANNEL_NAME)
    assert channel in str(exc.value)  # names the channel it did not find
    with pytest.raises(pymqi.MQMIError) as pexc:
        pymqi.connect("QM1", channel, qm.conn_name)
    assert pexc.value.reason == C.MQRC_UNKNOWN_CHANNEL_NAME


def test_the_channel_bounds_message_length_and_heartbeat(qm: QueueManagerProcess) -> None:
    with fc.connect("QM1", qm.conn_name, channel="APP.SVRCONN", heartbeat=2.0) as c:
        assert c._s.max_msg_length == 40000  # min(client 4 MiB, channel MAXMSGL)
        assert c._s.heartbeat_ms == 7000  # the larger of the client's 2 s and HBINT(7)
        q = c.open("APP.Q")
        with pytest.raises(MQError) as exc:
            q.put(b"x" * 40001)
        assert exc.value.reason == C.MQRC_DATA_LENGTH_ERROR and "40000" in str(exc.value)
        q.put(b"y" * 40000)
        assert "CHANNEL(APP.SVRCONN)" in qm.mqsc("DISPLAY CONN(*) TYPE(CONN) CHANNEL")
        assert c.open("APP.Q").get().data == b"y" * 40000


def test_a_new_queue_manager_has_ibms_developer_channels(qm: QueueManagerProcess) -> None:
    for channel in ("DEV.APP.SVRCONN", "DEV.ADMIN.SVRCONN"):
        qmgr = pymqi.connect("QM1", channel, qm.conn_name)
        assert qmgr.is_connected
        qmgr.disconnect()


def test_blank_is_the_default_svrconn_and_hbint_0_means_none(qm: QueueManagerProcess) -> None:
    with fc.connect("QM1", qm.conn_name) as c:
        assert c._s.heartbeat_ms == 300_000  # SYSTEM.DEF.SVRCONN: IBM's HBINT(300)
        assert c._s.max_msg_length == 4 * 1024 * 1024
    qm.mqsc("DEFINE CHANNEL(QUIET.SVRCONN) CHLTYPE(SVRCONN) HBINT(0)\n")
    with fc.connect("QM1", qm.conn_name, channel="QUIET.SVRCONN") as c:
        assert c._s.heartbeat_ms == 0


def test_a_deleted_default_channel_refuses_clients_but_not_local_bindings(qm: QueueManagerProcess,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERRYMQ_HOME", str(qm.home))
    qm.mqsc("DEFINE CHANNEL(KEEP.SVRCONN) CHLTYPE(SVRCONN) LIKE(SYSTEM.DEF.SVRCONN)\n"
            "DELETE CHANNEL(SYSTEM.DEF.SVRCONN)\n")
    try:
        with pytest.raises(MQError) as exc:
            fc.connect("QM1", qm.conn_name)
        assert exc.value.reason == C.MQRC_UNKNOWN_CHANNEL_NAME
        with fc.connect("QM1") as c:  # the local socket, from this home
            assert c._s.max_msg_length > 0
    finally:
        qm.mqsc("DEFINE CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) LIKE(KEEP.SVRCONN)\n")
