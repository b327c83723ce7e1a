"""Channel events between two real queue managers, read as a pymqi monitoring program reads
them on IBM MQ: CHLEV(ENABLED) makes Channel Started at both ends, STOP CHANNEL makes
Channel Stopped By User and Channel Stopped (disabled) where it was issued and Channel
Stopped (OK) at the partner; CHLEV(DISABLED) makes none."""

from __future__ import annotations

from pathlib import Path

from channel_pair import running_pair, wait_for
from pcf_events import checked_event, decode_event
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.pymqi import CMQC, CMQCFC
from ferrymq.wire.mqmd import MQMD

EVENTS = b"SYSTEM.ADMIN.CHANNEL.EVENT"


def take_events(qm: QueueManagerProcess, count: int, wait_ms: int = 20_000) -> list[tuple[pymqi.CFH, dict[int, object]]]:
    """``count`` channel events from ``qm``'s event queue (waiting for each), then none more."""
    conn = pymqi.connect(qm.name, "DEV.ADMIN.SVRCONN", qm.conn_name, ADMIN_USER, ADMIN_PASSWORD)
    q = pymqi.Queue(conn, EVENTS, CMQC.MQOO_INPUT_AS_Q_DEF)
    out = []
    try:
        for n in range(count + 1):
            md, gmo = pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_WAIT, WaitInterval=wait_ms if n < count else 300)
            try:
                data = q.get(None, md, gmo)
            except pymqi.MQMIError as e:
                assert e.reason == CMQC.MQRC_NO_MSG_AVAILABLE and n == count, f"{n} of {count} events"
                break
            assert n < count, f"an event more than {count}: {decode_event(data)}"
            out.append(checked_event(md, data))
    finally:
        q.close()
        conn.disconnect()
    return out


def move_one(qm1: QueueManagerProcess, qm2: QueueManagerProcess, text: bytes) -> None:
    with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
        c1.open("TO.QM2.APP").put(text, persistent=True)
        assert c2.open("APP.IN").get(wait=20.0).data == text


def stop_channel(qm1: QueueManagerProcess, qm2: QueueManagerProcess) -> None:
    assert "AMQ8019I" in qm1.mqsc("STOP CHANNEL(QM1.TO.QM2)")
    wait_for(lambda: "STATUS(STOPPED)" in qm1.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2)"))
    wait_for(lambda: "STATUS(RUNNING)" not in qm2.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2)", check=False))


def test_chlev_enabled_reports_start_and_stops_and_disabled_reports_none(tmp_path: Path) -> None:
    with running_pair(tmp_path) as (qm1, qm2):
        assert "CHLEV(DISABLED)" in qm1.mqsc("DISPLAY QMGR CHLEV")  # IBM's default
        qm1.mqsc("ALTER QMGR CHLEV(ENABLED)")
        conn = pymqi.connect("QM2", "DEV.ADMIN.SVRCONN", qm2.conn_name, ADMIN_USER, ADMIN_PASSWORD)
        try:  # QM2 switched on with PCF, as a pymqi program does it
            pymqi.PCFExecute(conn).MQCMD_CHANGE_Q_MGR({CMQC.MQIA_CHANNEL_EVENT: CMQCFC.MQEVR_ENABLED})
        finally:
            conn.disconnect()
        assert "CHLEV(ENABLED)" in qm2.mqsc("DISPLAY QMGR CHLEV")
        move_one(qm1, qm2, b"first")
        stop_channel(qm1, qm2)

        started, by_user, stopped = take_events(qm1, 3)
        assert [h.Command for h in (started[0], by_user[0], stopped[0])] == [CMQCFC.MQCMD_CHANNEL_EVENT] * 3
        assert [h.Reason for h in (started[0], by_user[0], stopped[0])] == [
            CMQC.MQRC_CHANNEL_STARTED, CMQC.MQRC_CHANNEL_STOPPED_BY_USER, CMQC.MQRC_CHANNEL_STOPPED]
        params = started[1]
        assert params[CMQC.MQCA_Q_MGR_NAME] == b"QM1" and params[CMQCFC.MQCACH_CHANNEL_NAME] == b"QM1.TO.QM2"
        assert params[CMQCFC.MQCACH_XMIT_Q_NAME] == b"QM2"
        conn_name = params[CMQCFC.MQCACH_CONNECTION_NAME]
        assert isinstance(conn_name, bytes) and conn_name.startswith(b"127.0.0.1(")
        assert by_user[1][CMQCFC.MQIACF_REASON_QUALIFIER] == CMQCFC.MQRQ_CHANNEL_STOPPED_DISABLED
        assert by_user[1][CMQCFC.MQCACH_CHANNEL_NAME] == b"QM1.TO.QM2"
        assert stopped[1][CMQCFC.MQIACF_REASON_QUALIFIER] == CMQCFC.MQRQ_CHANNEL_STOPPED_DISABLED
        assert stopped[1][CMQCFC.MQIACF_ERROR_IDENTIFIER] == 0

        # the receiving end: started with the sender's address, stopped OK by the sender's close
        received, ended = take_events(qm2, 2)
        assert [received[0].Reason, ended[0].Reason] == [CMQC.MQRC_CHANNEL_STARTED, CMQC.MQRC_CHANNEL_STOPPED]
        assert received[1][CMQCFC.MQCACH_CHANNEL_NAME] == b"QM1.TO.QM2"
        assert CMQCFC.MQCACH_XMIT_Q_NAME not in received[1]  # a receiver has none
        assert ended[1][CMQCFC.MQIACF_REASON_QUALIFIER] == CMQCFC.MQRQ_CHANNEL_STOPPED_OK

        # switched off at both ends: the same start and stop make no event
        qm1.mqsc("ALTER QMGR CHLEV(DISABLED)")
        qm2.mqsc("ALTER QMGR CHLEV(DISABLED)")
        assert "AMQ8018I" in qm1.mqsc("START CHANNEL(QM1.TO.QM2)")
        move_one(qm1, qm2, b"second")
        stop_channel(qm1, qm2)
        assert take_events(qm1, 0) == [] and take_events(qm2, 0) == []


def test_chlev_exception_reports_a_conversion_error_and_the_stop_but_not_the_start(tmp_path: Path) -> None:
    with running_pair(tmp_path) as (qm1, qm2):
        assert "AMQ8005I" in qm2.mqsc("ALTER QMGR CCSID(500)")
        assert "AMQ8016I" in qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) CONVERT(YES)")
        qm1.mqsc("ALTER QMGR CHLEV(EXCEPTION)")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            # a format of the application's own has no conversion: it crosses as it was put
            c1.open("TO.QM2.APP").put(b"own format", md=MQMD(format="APPFMT", coded_char_set_id=1208))
            got = c2.open("APP.IN").get(wait=20.0)
            assert (got.data, got.md.coded_char_set_id) == (b"own format", 1208)
        stop_channel(qm1, qm2)
        conversion, by_user, stopped = take_events(qm1, 3)
        assert [conversion[0].Reason, by_user[0].Reason, stopped[0].Reason] == [
            CMQC.MQRC_CHANNEL_CONV_ERROR, CMQC.MQRC_CHANNEL_STOPPED_BY_USER, CMQC.MQRC_CHANNEL_STOPPED]
        params = conversion[1]
        assert params[CMQCFC.MQIACF_CONV_REASON_CODE] == CMQC.MQRC_FORMAT_ERROR
        assert params[CMQCFC.MQCACH_FORMAT_NAME] == b"APPFMT" and params[CMQCFC.MQCACH_XMIT_Q_NAME] == b"QM2"
        assert params[CMQCFC.MQCACH_CHANNEL_NAME] == b"QM1.TO.QM2"
        assert stopped[1][CMQCFC.MQIACF_REASON_QUALIFIER] == CMQCFC.MQRQ_CHANNEL_STOPPED_DISABLED
        assert take_events(qm2, 0) == []  # CHLEV(DISABLED) there, IBM's default
