"""Messages between two real queue managers through channels (127.0.0.1, separate processes):
remote puts, request/reply back through the other channel, dead letters with the MQDLH at the
receiver and the exception report coming back, channel status and control."""

from __future__ import annotations

import re
import time
from pathlib import Path

from channel_pair import ephemeral_range, free_port, setup_pair, wait_for
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQCFC
from ferrymq.wire.mqdlh import MQDLH


def test_channel_ports_are_never_ones_the_kernel_hands_out() -> None:
    """A listener port kept across restarts is outside the ephemeral range: one inside it
    can be taken by any outgoing connection while its queue manager is down, and the
    restarted listener cannot bind (channel_pair's docstring)."""
    low, high = ephemeral_range()
    for _ in range(50):
        port = free_port()
        assert not low <= port <= high, (port, low, high)


def test_remote_put_request_reply_and_dead_letter(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out = c1.open("TO.QM2.APP")
            for i in range(120):
                out.put(f"m{i}".encode(), persistent=i % 2 == 0, reply_to_q="APP.REPLY")
            inq = c2.open("APP.IN")
            got = [inq.get(wait=20.0) for _ in range(120)]
            # in order within each persistence: NPMSPEED(FAST) sends the non-persistent ones
            # outside the batches, so they may overtake the persistent ones (as IBM's)
            for parity in (0, 1):
                assert [m.data for m in got if int(m.data[1:]) % 2 == parity] == [
                    f"m{i}".encode() for i in range(parity, 120, 2)]
            got.sort(key=lambda m: int(m.data[1:]))
            assert got[0].md.reply_to_q_mgr.strip() == "QM1" and got[0].md.put_appl_type != C.MQAT_QMGR
            # the reply goes back: ReplyToQMgr QM1 resolves to QM2's transmission queue QM1
            c2.open("APP.REPLY", object_q_mgr_name="QM1").put(b"reply", correl_id=got[0].md.msg_id)
            reply = c1.open("APP.REPLY").get(wait=20.0)
            assert reply.data == b"reply" and reply.md.correl_id == got[0].md.msg_id
            # an unknown queue at QM2: dead letter there with the reason, exception report back
            c1.open("NO.SUCH.QUEUE", object_q_mgr_name="QM2").put(
                b"lost", persistent=True, reply_to_q="APP.REPLY", report=C.MQRO_EXCEPTION_WITH_DATA)
            dead = c2.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=20.0)
            dlh = MQDLH.unpack_from(dead.data)
            assert (dlh.reason, dlh.dest_q_name.strip()) == (C.MQRC_UNKNOWN_OBJECT_NAME, "NO.SUCH.QUEUE")
            assert dead.data.endswith(b"lost")
            report = c1.open("APP.REPLY").get(wait=20.0)
            assert (report.md.msg_type, report.md.feedback) == (C.MQMT_REPORT, C.MQRC_UNKNOWN_OBJECT_NAME)
            # properties cross; COA made at QM2 and COD at the get there come back to QM1
            sent = out.put(b"with properties", persistent=True, reply_to_q="APP.REPLY",
                           report=C.MQRO_COA | C.MQRO_COD, properties={"colour": "blue", "size": 7})
            arrived = inq.get(wait=20.0)
            assert arrived.data == b"with properties"
            assert dict(arrived.properties) == {"colour": "blue", "size": 7}
            reports = [c1.open("APP.REPLY").get(wait=20.0) for _ in range(2)]
            assert sorted(r.md.feedback for r in reports) == [C.MQFB_COA, C.MQFB_COD]
            assert all(r.md.correl_id == sent.msg_id for r in reports)
        status = qm1.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2) ALL")
        assert "STATUS(RUNNING)" in status and "RQMNAME(QM2)" in status and "INDOUBT(NO)" in status
        sent = re.search(r"\bMSGS\((\d+)\)", status)
        assert sent is not None and int(sent.group(1)) >= 120
        assert "STATUS(RUNNING)" in qm2.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2)")
        assert "AMQ8019I" in qm1.mqsc("STOP CHANNEL(QM1.TO.QM2)")
        wait_for(lambda: "STATUS(STOPPED)" in qm1.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2)"))
        # a message longer than the channel's MAXMSGL: the sender's dead-letter queue (2218)
        assert "AMQ8016I" in qm1.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) MAXMSGL(5000)")
        with fc.connect("QM1", qm1.conn_name) as c1:
            c1.open("TO.QM2.APP").put(b"L" * 6000, persistent=True)
            c1.open("TO.QM2.APP").put(b"waits while stopped", persistent=True)
        time.sleep(0.5)
        assert "CURDEPTH(2)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH")
        assert "AMQ8018I" in qm1.mqsc("START CHANNEL(QM1.TO.QM2)")
        with fc.connect("QM2", qm2.conn_name) as c2:
            assert c2.open("APP.IN").get(wait=20.0).data == b"waits while stopped"
        with fc.connect("QM1", qm1.conn_name) as c1:
            dead = c1.open("SYSTEM.DEAD.LETTER.QUEUE").get(wait=5.0)
            dlh = MQDLH.unpack_from(dead.data)
            assert (dlh.reason, dlh.dest_q_name.strip()) == (C.MQRC_MSG_TOO_BIG_FOR_CHANNEL, "APP.IN")
            assert dead.data.endswith(b"L" * 6000)
    finally:
        qm1.stop()
        qm2.stop()


def test_unknown_channel_is_refused_and_retried(tmp_path: Path) -> None:
    qm1 = QueueManagerProcess(tmp_path, "QM1")
    qm2 = QueueManagerProcess(tmp_path, "QM2")
    port = free_port()
    qm1.start()
    qm2.start()
    qm2.mqsc(f"DEFINE LISTENER(L) TRPTYPE(TCP) PORT({port}) CONTROL(QMGR)\nSTART LISTENER(L)\n")
    qm1.mqsc(f"DEFINE QLOCAL(QM2) USAGE(XMITQ)\nDEFINE CHANNEL(TO.QM2) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') "
             "XMITQ(QM2) SHORTRTY(4) SHORTTMR(2) LONGRTY(0)\n")  # RETRYING long enough to be seen
    try:
        assert "AMQ8018I" in qm1.mqsc("START CHANNEL(TO.QM2)")
        wait_for(lambda: "STATUS(RETRYING)" in qm1.mqsc("DISPLAY CHSTATUS(TO.QM2)"))
        wait_for(lambda: "STATUS(STOPPED)" in qm1.mqsc("DISPLAY CHSTATUS(TO.QM2)"))  # retries ran out
        qm2.mqsc("DEFINE CHANNEL(TO.QM2) CHLTYPE(RCVR)\n")
        qm1.mqsc("START CHANNEL(TO.QM2)")
        wait_for(lambda: "STATUS(RUNNING)" in qm1.mqsc("DISPLAY CHSTATUS(TO.QM2)"))
        assert "STATUS(RUNNING)" in qm2.mqsc("DISPLAY LSSTATUS(L)")
        # beyond loopback a listener takes unauthenticated channels: refused without the flag
        qm2.mqsc("DEFINE LISTENER(WIDE) TRPTYPE(TCP) IPADDR('0.0.0.0') PORT(0)\nSTART LISTENER(WIDE)\n")
        wait_for(lambda: "STATUS(STOPPED)" in qm2.mqsc("DISPLAY LSSTATUS(WIDE)"))
        logged = "".join(f.read_text() for f in tmp_path.glob("qmgrs/QM2/*.log"))
        assert "event=listener_refused listener=WIDE host=0.0.0.0 rule=remote_bind_unauthenticated" in logged
    finally:
        qm1.stop()
        qm2.stop()


def chstatus(qm: QueueManagerProcess, channel: str) -> dict[str, str]:
    out = qm.mqsc(f"DISPLAY CHSTATUS({channel}) ALL")
    return dict(re.findall(r"\b([A-Z]+)\(([^)]*)\)", out))


def send_nonpersistent(qm1: QueueManagerProcess, qm2: QueueManagerProcess, count: int) -> None:
    with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
        out, inq = c1.open("TO.QM2.APP"), c2.open("APP.IN")
        for i in range(count):
            out.put(b"np%d" % i, persistent=False)
        assert [inq.get(wait=20.0).data for _ in range(count)] == [b"np%d" % i for i in range(count)]


def test_npmspeed_fast_sends_nonpersistent_outside_the_batch(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        # FAST at both ends (IBM's default): non-persistent messages cross with no batch at all
        send_nonpersistent(qm1, qm2, 200)
        wait_for(lambda: chstatus(qm1, "QM1.TO.QM2").get("MSGS") == "200")
        st = chstatus(qm1, "QM1.TO.QM2")
        assert (st["NPMSPEED"], st["BATCHES"], st["LSTSEQNO"]) == ("FAST", "0", "0"), st
        assert chstatus(qm2, "QM1.TO.QM2")["NPMSPEED"] == "FAST"
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            c1.open("TO.QM2.APP").put(b"persistent", persistent=True)
            assert c2.open("APP.IN").get(wait=20.0).data == b"persistent"
        wait_for(lambda: chstatus(qm1, "QM1.TO.QM2").get("BATCHES") == "1")  # persistent: still in a batch
        # NORMAL at the receiver wins (FAST needs both ends): today's batches for every message
        qm1.mqsc("STOP CHANNEL(QM1.TO.QM2)")
        wait_for(lambda: chstatus(qm1, "QM1.TO.QM2").get("STATUS") == "STOPPED")
        qm2.mqsc("ALTER CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR) NPMSPEED(NORMAL)")
        qm1.mqsc("START CHANNEL(QM1.TO.QM2)")
        wait_for(lambda: chstatus(qm1, "QM1.TO.QM2").get("STATUS") == "RUNNING")
        send_nonpersistent(qm1, qm2, 200)
        wait_for(lambda: chstatus(qm1, "QM1.TO.QM2").get("MSGS") == "200")
        st = chstatus(qm1, "QM1.TO.QM2")
        assert st["NPMSPEED"] == "NORMAL" and int(st["BATCHES"]) >= 4, st  # BATCHSZ(50)
    finally:
        qm1.stop()
        qm2.stop()


def test_ping_channel_in_mqsc_and_pcf(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        assert "AMQ8020I" in qm1.mqsc("PING CHANNEL(QM1.TO.QM2) DATALEN(32768)")
        assert "AMQ8420I" in qm1.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2)", check=False)  # a ping starts no channel
        refused = {
            "PING CHANNEL(QM2.TO.QM1)": F.MQRCCF_PING_ERROR,  # a receiver: ping it from its partner
            "PING CHANNEL(QM1.TO.QM2) DATALEN(15)": F.MQRCCF_PING_DATA_COUNT_ERROR,
            "PING CHANNEL(NO.SUCH)": F.MQRCCF_CHANNEL_NOT_FOUND,
        }
        qm1.mqsc(f"""
DEFINE QLOCAL(PING.XQ) USAGE(XMITQ)
DEFINE CHANNEL(TO.NOWHERE) CHLTYPE(SDR) CONNAME('127.0.0.1({free_port()})') XMITQ(PING.XQ)
DEFINE CHANNEL(NOT.AT.QM2) CHLTYPE(SDR) CONNAME('{chstatus_conname(qm2)}') XMITQ(PING.XQ)
""")
        refused["PING CHANNEL(TO.NOWHERE)"] = F.MQRCCF_HOST_NOT_AVAILABLE
        refused["PING CHANNEL(NOT.AT.QM2)"] = F.MQRCCF_UNKNOWN_REMOTE_CHANNEL
        for command, reason in refused.items():
            out = qm1.mqsc(command, check=False)
            assert f"reason {reason} " in out, (command, out)
        # PCF, as a pymqi program sends it
        qm = pymqi.connect("QM1", "DEV.ADMIN.SVRCONN", qm1.conn_name, ADMIN_USER, ADMIN_PASSWORD)
        try:
            pcf = pymqi.PCFExecute(qm)
            pcf.MQCMD_PING_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: b"QM1.TO.QM2", CMQCFC.MQIACH_DATA_COUNT: 100})
            # running: IBM pings only a channel that is not
            with fc.connect("QM1", qm1.conn_name) as c1:
                c1.open("TO.QM2.APP").put(b"starts the channel")
            wait_for(lambda: chstatus(qm1, "QM1.TO.QM2").get("STATUS") == "RUNNING")
            try:
                pcf.MQCMD_PING_CHANNEL({CMQCFC.MQCACH_CHANNEL_NAME: b"QM1.TO.QM2"})
                raise AssertionError("a running channel was pinged")
            except pymqi.MQMIError as exc:
                assert (exc.comp, exc.reason) == (C.MQCC_FAILED, F.MQRCCF_CHANNEL_IN_USE)
        finally:
            qm.disconnect()
    finally:
        qm1.stop()
        qm2.stop()


def chstatus_conname(qm: QueueManagerProcess) -> str:
    """The address of ``qm``'s channel listener (CHL.LISTENER of channel_pair)."""
    port = re.search(r"\bPORT\((\d+)\)", qm.mqsc("DISPLAY LSSTATUS(CHL.LISTENER) PORT"))
    assert port is not None
    return f"127.0.0.1({port.group(1)})"


def test_a_transmission_queue_triggers_its_channel_through_the_initiation_queue(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        # TRIGTYPE(DEPTH) TRIGDPTH(3): a poll would start the channel at the first message;
        # the trigger message comes only with the third
        qm1.mqsc("ALTER QLOCAL(QM2) TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(3) INITQ(SYSTEM.CHANNEL.INITQ) "
                 "TRIGDATA(QM1.TO.QM2)\n")
        assert "IPPROCS(1)" in qm1.mqsc("DISPLAY QLOCAL(SYSTEM.CHANNEL.INITQ) IPPROCS")  # the initiator reads it
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out, inq = c1.open("TO.QM2.APP"), c2.open("APP.IN")
            out.put(b"one", persistent=True)
            out.put(b"two", persistent=True)
            time.sleep(1.0)
            assert "CURDEPTH(2)" in qm1.mqsc("DISPLAY QLOCAL(QM2) CURDEPTH")
            assert "AMQ8420I" in qm1.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2)", check=False)  # not started
            out.put(b"three", persistent=True)
            assert [inq.get(wait=20.0).data for _ in range(3)] == [b"one", b"two", b"three"]
            assert "CURDEPTH(0)" in qm1.mqsc("DISPLAY QLOCAL(SYSTEM.CHANNEL.INITQ) CURDEPTH")  # consumed
            # TRIGDATA blank: the channel whose XMITQ is the queue; FIRST after the channel ended
            qm1.mqsc("STOP CHANNEL(QM1.TO.QM2) STATUS(INACTIVE)\n"
                     "ALTER QLOCAL(QM2) TRIGGER TRIGTYPE(FIRST) TRIGDATA(' ')\n")
            wait_for(lambda: "STATUS(RUNNING)" not in qm1.mqsc("DISPLAY CHSTATUS(QM1.TO.QM2)", check=False))
            out.put(b"four", persistent=True)
            assert inq.get(wait=20.0).data == b"four"
    finally:
        qm1.stop()
        qm2.stop()
