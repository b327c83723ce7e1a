"""Message exits in two real queue managers: an exit from the sender's ExitPath changes and
suppresses messages (dead letter, MQFB_STOPPED_BY_MSG_EXIT); a name outside ExitPath does
not load; an exit that raises, at either end, stops the channel and loses nothing."""

from __future__ import annotations

import time
from pathlib import Path

from channel_pair import setup_pair, wait_for
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQC, CMQCFC
from ferrymq.wire.mqdlh import MQDLH

AUDIT = """
from ferrymq.mq import cxc as X

def msg(p):
    if p.exit_reason != X.MQXR_MSG:
        return X.MQXCC_OK
    if p.data.endswith(b"suppress-me"):
        return X.MQXCC_SUPPRESS_FUNCTION
    if p.data.endswith(b"explode"):
        raise RuntimeError("the audit exit exploded")
    p.exit_user_area[0] += 1
    p.data = p.data + b" [audited %d by %s]" % (p.exit_user_area[0], p.exit_data.encode())
    return X.MQXCC_OK
"""


# A send exit and its receive exit: each frame's payload XORed, so the wire never carries
# the message as it is; one side alone leaves frames its partner cannot read.
SCRAMBLE = """
from ferrymq.mq import cxc as X

def xor(p):
    if p.exit_reason == X.MQXR_XMIT:
        p.exit_user_area[1] = 1
        p.data = bytes(b ^ 0x5A for b in p.data)
    return X.MQXCC_OK
"""


# Security exits: the receiver's challenges, the sender's answers with its SCYDATA.
GUARD = """
from ferrymq.mq import cxc as X

def challenge(p):
    if p.exit_reason == X.MQXR_INIT_SEC:
        p.data = b"challenge"
        return X.MQXCC_SEND_AND_REQUEST_SEC_MSG
    if p.exit_reason == X.MQXR_SEC_MSG:
        if p.data == b"password:" + p.exit_data.encode():
            p.exit_user_area[0] = 1
            return X.MQXCC_OK
        if p.data == b"" and p.exit_user_area[0]:
            return X.MQXCC_OK
        return X.MQXCC_SUPPRESS_FUNCTION
    return X.MQXCC_OK

def answer(p):
    if p.exit_reason == X.MQXR_SEC_MSG and p.data == b"challenge":
        p.data = b"password:" + p.exit_data.encode()
        return X.MQXCC_SEND_SEC_MSG
    return X.MQXCC_OK
"""


def exit_dirs(tmp_path: Path) -> dict[str, tuple[str, ...]]:
    out = {}
    for name in ("QM1", "QM2"):
        d = tmp_path / f"exits-{name}"
        d.mkdir()
        (d / "audit.py").write_text(AUDIT)
        (d / "audit.py").chmod(0o600)
        (d / "scramble.py").write_text(SCRAMBLE)
        (d / "guard.py").write_text(GUARD)
        out[name] = ("--exit-path", str(d))
    (tmp_path / "elsewhere.py").write_text(AUDIT)
    return out


def log_of(qm: QueueManagerProcess) -> str:
    return (qm.home / "qmgrs" / qm.name / "ferrymq.log").read_text(errors="replace")


def stopped(qm: QueueManagerProcess, channel: str = "QM1.TO.QM2") -> bool:
    return "STATUS(STOPPED)" in qm.mqsc(f"DISPLAY CHSTATUS({channel})")


def test_sender_exit_changes_suppresses_and_stops_without_loss(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path / "home", create_args=exit_dirs(tmp_path))
    try:
        # a name outside ExitPath does not load: the channel stops and says why
        qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) MSGEXIT('elsewhere:msg') MSGDATA(QM1)")
        with fc.connect("QM1", qm1.conn_name) as c1:
            c1.open("TO.QM2.APP").put(b"one", persistent=True)
        wait_for(lambda: stopped(qm1))
        assert "no file" in log_of(qm1) and "elsewhere" in log_of(qm1)
        assert "CURDEPTH(1)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH")
        qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) MSGEXIT('audit:msg')\nSTART CHANNEL(QM1.TO.QM2)")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out = c1.open("TO.QM2.APP")
            out.put(b"suppress-me", persistent=True, reply_to_q="APP.REPLY")
            out.put(b"two", persistent=True)
            inq = c2.open("APP.IN")
            assert inq.get(wait=30.0).data == b"one [audited 1 by QM1]"
            assert inq.get(wait=30.0).data == b"two [audited 2 by QM1]"  # ExitUserArea kept between calls
            dead = c1.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=10.0)
            dlh = MQDLH.unpack_from(dead.data)
            assert dlh.reason == C.MQFB_STOPPED_BY_MSG_EXIT and dead.data.endswith(b"suppress-me")
            assert dlh.dest_q_name.strip() == "APP.IN"
            # an exit that raises: STOPPED, the message stays on the transmission queue
            out.put(b"explode", persistent=True)
            wait_for(lambda: stopped(qm1))
            assert "event=channel_exit_failed" in log_of(qm1) and "the audit exit exploded" in log_of(qm1)
            time.sleep(0.5)
            assert "CURDEPTH(1)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH")
            qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) MSGEXIT(' ')\nSTART CHANNEL(QM1.TO.QM2)")
            assert inq.get(wait=30.0).data == b"explode"
    finally:
        qm1.stop()
        qm2.stop()


def test_a_chain_of_message_exits_defined_by_mqsc_and_pcf(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path / "home", create_args=exit_dirs(tmp_path))
    try:
        # two message exits, each with its own MSGDATA item (commas and quotes its own), in order
        qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) MSGEXIT('audit:msg', 'audit:msg') MSGDATA('A,1', 'B''s')")
        shown = qm1.mqsc("DISPLAY CHANNEL(QM1.TO.QM2) MSGEXIT MSGDATA")
        assert "MSGEXIT('audit:msg','audit:msg')" in shown and "MSGDATA('A,1','B''s')" in shown
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out = c1.open("TO.QM2.APP")
            out.put(b"one", persistent=True)
            out.put(b"suppress-me", persistent=True)  # the first exit suppresses it: the second never sees it
            out.put(b"two", persistent=True)
            inq = c2.open("APP.IN")
            # each exit keeps its own ExitUserArea: the second saw one message fewer
            assert inq.get(wait=30.0).data == b"one [audited 1 by A,1] [audited 1 by B's]"
            assert inq.get(wait=30.0).data == b"two [audited 2 by A,1] [audited 2 by B's]"
            dead = c1.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=10.0)
            assert MQDLH.unpack_from(dead.data).reason == C.MQFB_STOPPED_BY_MSG_EXIT
            assert dead.data.endswith(b"suppress-me")
        # PCF: the lists travel as MQCFSL both ways, as IBM's
        conn = pymqi.connect("QM1", "DEV.ADMIN.SVRCONN", qm1.conn_name, ADMIN_USER, ADMIN_PASSWORD)
        try:
            pcf = pymqi.PCFExecute(conn)
            pcf.MQCMD_CHANGE_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: b"QM1.TO.QM2",
                                      CMQCFC.MQIACH_CHANNEL_TYPE: CMQC.MQCHT_SENDER,
                                      CMQCFC.MQCACH_MSG_EXIT_NAME: [b"audit:msg", b"audit:msg", b"audit:msg"],
                                      CMQCFC.MQCACH_MSG_EXIT_USER_DATA: [b"X", b"Y,y", b"Z"]})
            (found,) = pcf.MQCMD_INQUIRE_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: b"QM1.TO.QM2"})
            assert [n.strip() for n in found[CMQCFC.MQCACH_MSG_EXIT_NAME]] == [b"audit:msg"] * 3
            assert [d.strip() for d in found[CMQCFC.MQCACH_MSG_EXIT_USER_DATA]] == [b"X", b"Y,y", b"Z"]
        finally:
            conn.disconnect()
        # kept across a restart
        qm1.stop()
        qm1.start()
        assert "MSGDATA('X','Y,y','Z')" in qm1.mqsc("DISPLAY CHANNEL(QM1.TO.QM2) MSGDATA")
        qm1.mqsc("START CHANNEL(QM1.TO.QM2)")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            c1.open("TO.QM2.APP").put(b"three", persistent=True)
            assert c2.open("APP.IN").get(wait=30.0).data == \
                b"three [audited 1 by X] [audited 1 by Y,y] [audited 1 by Z]"
    finally:
        qm1.stop()
        qm2.stop()


def test_receiver_exit_that_raises_stops_the_channel_and_loses_nothing(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path / "home", create_args=exit_dirs(tmp_path))
    try:
        qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) MSGEXIT('audit:msg') MSGDATA(QM2)")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out = c1.open("TO.QM2.APP")
            out.put(b"first", persistent=True)
            inq = c2.open("APP.IN")
            assert inq.get(wait=30.0).data == b"first [audited 1 by QM2]"
            out.put(b"explode", persistent=True)
            wait_for(lambda: stopped(qm2))
            assert "the audit exit exploded" in log_of(qm2)
            time.sleep(1.0)
            assert "CURDEPTH(0)" in qm2.mqsc("DISPLAY QLOCAL(APP.IN) CURDEPTH")
            assert "CURDEPTH(0)" in qm2.mqsc("DISPLAY QLOCAL(SYSTEM.DEAD.LETTER.QUEUE) CURDEPTH")
            assert "CURDEPTH(1)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH")  # in the batch in doubt or back
            qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) MSGEXIT(' ')\nSTART CHANNEL(QM1.TO.QM2)")
            qm1.mqsc("START CHANNEL(QM1.TO.QM2)")
            assert inq.get(wait=30.0).data == b"explode"
            time.sleep(0.5)
            assert "CURDEPTH(0)" in qm2.mqsc("DISPLAY QLOCAL(APP.IN) CURDEPTH")  # once, not twice
    finally:
        qm1.stop()
        qm2.stop()


def test_send_and_receive_exits_carry_every_frame(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path / "home", create_args=exit_dirs(tmp_path))
    try:
        both = "SENDEXIT('scramble:xor') RCVEXIT('scramble:xor')"
        qm1.mqsc(f"ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) {both}")
        qm2.mqsc(f"ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) {both}")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out = c1.open("TO.QM2.APP")
            for i in range(20):
                out.put(f"scrambled {i}".encode(), persistent=i % 2 == 0, properties={"n": i})
            inq = c2.open("APP.IN")
            got = [inq.get(wait=30.0) for _ in range(20)]
            # NPMSPEED(FAST): the non-persistent ones cross outside batches and may overtake
            assert sorted((dict(m.properties)["n"], m.data) for m in got) == [
                (i, f"scrambled {i}".encode()) for i in range(20)]
            # the receiver without its receive exit cannot read the sender's frames: nothing arrives
            qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) RCVEXIT(' ')")
            qm1.mqsc("STOP CHANNEL(QM1.TO.QM2)")
            wait_for(lambda: stopped(qm1))
            out.put(b"unreadable", persistent=True)
            seen = len(log_of(qm1))
            qm1.mqsc("START CHANNEL(QM1.TO.QM2)")
            wait_for(lambda: "event=channel_failed" in log_of(qm1)[seen:])
            assert "CURDEPTH(0)" in qm2.mqsc("DISPLAY QLOCAL(APP.IN) CURDEPTH")
            assert "CURDEPTH(1)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH")
            qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) RCVEXIT('scramble:xor')")
            assert inq.get(wait=30.0).data == b"unreadable"
    finally:
        qm1.stop()
        qm2.stop()


def test_security_exits_admit_and_refuse(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path / "home", create_args=exit_dirs(tmp_path))
    try:
        qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) SCYEXIT('guard:challenge') SCYDATA(opensesame)")
        qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) SCYEXIT('guard:answer') SCYDATA(opensesame)")
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out, inq = c1.open("TO.QM2.APP"), c2.open("APP.IN")
            out.put(b"admitted", persistent=True)
            assert inq.get(wait=30.0).data == b"admitted"
            # a wrong password: the receiver's exit refuses; the sender stops, nothing is lost
            qm1.mqsc("STOP CHANNEL(QM1.TO.QM2)")
            wait_for(lambda: stopped(qm1))
            qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) SCYDATA(guess)\nSTART CHANNEL(QM1.TO.QM2)")
            out.put(b"refused", persistent=True)
            wait_for(lambda: "refused the channel in the security exchange" in log_of(qm1))
            wait_for(lambda: stopped(qm1))
            assert "refused the channel" in log_of(qm2)
            assert "CURDEPTH(1)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH")
            # no security exit at the sender, while the receiver's asks for a reply: refused too
            seen = len(log_of(qm1))
            qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) SCYEXIT(' ')\nSTART CHANNEL(QM1.TO.QM2)")
            wait_for(lambda: "has no SCYEXIT" in log_of(qm1)[seen:])
            assert "CURDEPTH(0)" in qm2.mqsc("DISPLAY QLOCAL(APP.IN) CURDEPTH")
            qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) SCYEXIT('guard:answer') SCYDATA(opensesame)\n"
                     "START CHANNEL(QM1.TO.QM2)")
            assert inq.get(wait=30.0).data == b"refused"
    finally:
        qm1.stop()
        qm2.stop()
