"""The message-retry exit (MREXIT, MRDATA) at a receiving agent between two real queue
managers: called with MQXR_INIT when the channel starts, MQXR_RETRY for each failed put
of a message (any reason, MsgRetryCount counting up), MQXR_TERM when it ends; MQXCC_OK
with a MsgRetryInterval tries again, MQXCC_SUPPRESS_FUNCTION dead-letters the message."""

from __future__ import annotations

from pathlib import Path

from channel_pair import setup_pair, wait_for

import ferrymq.client as fc
from ferrymq.mq import constants as C
from ferrymq.wire.mqdlh import MQDLH

RETRY_EXIT = """
from pathlib import Path

from ferrymq.mq import cxc as X
from ferrymq.wire.mqxqh import unpack_xmit

LOG = Path(__file__).with_name("calls.log")


def decide(p):
    if p.exit_reason == X.MQXR_RETRY:
        xqh, md, at = unpack_xmit(p.data)
        line = f"retry {p.msg_retry_count} {p.msg_retry_reason} {xqh.remote_q_name.strip()} {p.exit_data.strip()}"
    else:
        line = {X.MQXR_INIT: "init", X.MQXR_TERM: "term"}.get(p.exit_reason, str(p.exit_reason))
    with LOG.open("a") as f:
        f.write(line + "\\n")
    if p.exit_reason != X.MQXR_RETRY:
        return X.MQXCC_OK
    if p.msg_retry_count >= (600 if xqh.remote_q_name.strip() == "APP.HOLD" else 3):
        return X.MQXCC_SUPPRESS_FUNCTION
    p.msg_retry_interval = 100
    return X.MQXCC_OK
"""


def test_message_retry_exit_decides_retries_for_any_reason(tmp_path: Path) -> None:
    exits = tmp_path / "exits"
    exits.mkdir()
    (exits / "retry.py").write_text(RETRY_EXIT)
    calls = exits / "calls.log"
    qm1, qm2 = setup_pair(tmp_path / "home", create_args={"QM2": ("--exit-path", str(exits))})
    try:
        # MRRTY(0): without the exit nothing would be retried; with it, the exit decides
        qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) MRRTY(0) MREXIT('retry:decide') MRDATA(ON.QM2)\n"
                 "DEFINE QLOCAL(APP.HOLD) PUT(DISABLED)\n")
        assert "MREXIT(retry:decide)" in qm2.mqsc("DISPLAY CHANNEL(QM1.TO.QM2) MREXIT MRDATA")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            # an unknown queue (2085, which MRRTY never retries): offered three times, then dead-lettered
            c1.open("NO.SUCH", object_q_mgr_name="QM2").put(b"nowhere", persistent=True)
            dead = c2.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=30.0)
            dlh = MQDLH.unpack_from(dead.data)
            assert (dlh.reason, dlh.dest_q_name.strip()) == (C.MQRC_UNKNOWN_OBJECT_NAME, "NO.SUCH")
            lines = calls.read_text().splitlines()
            assert lines[0] == "init"
            assert lines[1:] == [f"retry {n} 2085 NO.SUCH ON.QM2" for n in (1, 2, 3)]
            # a put-inhibited queue enabled while the exit keeps the message trying: it arrives
            c1.open("APP.HOLD", object_q_mgr_name="QM2").put(b"held", persistent=True)
            wait_for(lambda: "retry 2 2051 APP.HOLD" in calls.read_text(), timeout=30.0)
            qm2.mqsc("ALTER QLOCAL(APP.HOLD) PUT(ENABLED)")
            got = c2.open("APP.HOLD").get(wait=30.0)
            assert got.data == b"held"
        qm1.mqsc("STOP CHANNEL(QM1.TO.QM2)")
        wait_for(lambda: calls.read_text().splitlines()[-1] == "term", timeout=30.0)
        assert calls.read_text().count("init") == 1 and calls.read_text().count("term") == 1
    finally:
        qm1.stop()
        qm2.stop()
