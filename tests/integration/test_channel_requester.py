"""Requester channels (CHLTYPE RQSTR) between two real queue managers: the requester on QM1
starts QM2's server, which sends its transmission queue over the requester's connection;
a server without CONNAME, a sender calling back, and IBM's refusals when the pairing is
wrong (docs/distributed.md, "Requester channels")."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import pytest
from channel_pair import setup_pair, wait_for
from pcf_events import decode_event
from qm_process import QueueManagerProcess
from test_channels import chstatus, chstatus_conname

import ferrymq.client as fc
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQCFC


def stopped(qm: QueueManagerProcess, channel: str) -> bool:
    return "STATUS(STOPPED)" in qm.mqsc(f"DISPLAY CHSTATUS({channel})")


def test_requester_starts_a_server_without_conname_and_receives_its_messages(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        qm2.mqsc("DEFINE QLOCAL(XQ.SVR) USAGE(XMITQ)\n"
                 "DEFINE CHANNEL(PULL.QM2) CHLTYPE(SVR) XMITQ(XQ.SVR) HBINT(300) DISCINT(0)\n"
                 "DEFINE QREMOTE(VIA.SVR) RNAME(APP.IN) RQMNAME(QM1) XMITQ(XQ.SVR)\n"
                 "DEFINE CHANNEL(WRONG.TYPE) CHLTYPE(RCVR)\n")
        # HBINT(300) at both ends: the idle server must find the requester gone without a heartbeat
        qm1.mqsc(f"DEFINE CHANNEL(PULL.QM2) CHLTYPE(RQSTR) CONNAME('{chstatus_conname(qm2)}') HBINT(300)\n"
                 f"DEFINE CHANNEL(WRONG.TYPE) CHLTYPE(RQSTR) CONNAME('{chstatus_conname(qm2)}')\n"
                 f"DEFINE CHANNEL(NOT.THERE) CHLTYPE(RQSTR) CONNAME('{chstatus_conname(qm2)}')\n")
        with fc.connect("QM2", qm2.conn_name) as c2:
            out = c2.open("VIA.SVR")
            for i in range(30):
                out.put(b"r%d" % i, persistent=i % 3 != 0)
        # a server without CONNAME waits for its requester: nothing moves until it asks
        assert "AMQ8420I" in qm2.mqsc("DISPLAY CHSTATUS(PULL.QM2)", check=False)
        assert "AMQ8018I" in qm1.mqsc("START CHANNEL(PULL.QM2)")
        with fc.connect("QM1", qm1.conn_name) as c1:
            inq = c1.open("APP.IN")
            got = [inq.get(wait=20.0).data for _ in range(30)]  # NPMSPEED(FAST): the non-persistent ones may overtake
            assert sorted(got) == sorted(b"r%d" % i for i in range(30))
            wait_for(lambda: chstatus(qm2, "PULL.QM2").get("STATUS") == "RUNNING")
            server, requester = chstatus(qm2, "PULL.QM2"), chstatus(qm1, "PULL.QM2")
            assert server["CHLTYPE"] == "SVR" and server["RQMNAME"] == "QM1"
            assert requester["CHLTYPE"] == "RQSTR" and requester["STATUS"] == "RUNNING"
            # the conversation stays: later messages follow over it
            with fc.connect("QM2", qm2.conn_name) as c2:
                c2.open("VIA.SVR").put(b"later", persistent=True)
            assert inq.get(wait=20.0).data == b"later"
        # the wrong pairings: refused by the partner, the requester STOPPED with its reason
        for name, reason in (("WRONG.TYPE", F.MQRCCF_CHANNEL_TYPE_ERROR),
                             ("NOT.THERE", F.MQRCCF_UNKNOWN_REMOTE_CHANNEL)):
            qm1.mqsc(f"START CHANNEL({name})")
            wait_for(functools.partial(stopped, qm1, name))
            assert f"event=channel_request_failed channel={name} reason={reason}" in qm1.log_tail(
                200, having=("channel_request_failed",))
        # STOP CHANNEL at the requester ends the conversation; the idle server sees its end of
        # the stream and goes inactive in far less than its 300 s heartbeat
        qm1.mqsc("STOP CHANNEL(PULL.QM2)")
        wait_for(lambda: "STATUS(RUNNING)" not in qm2.mqsc("DISPLAY CHSTATUS(PULL.QM2)", check=False), 60.0)
    finally:
        qm1.stop()
        qm2.stop()


def test_requester_and_sender_call_back(tmp_path: Path) -> None:
    """A requester starting a sender: the sender closes the requester's connection and
    connects to its own CONNAME, the requester's queue manager, as IBM's callback."""
    qm1, qm2 = setup_pair(tmp_path)
    try:
        qm2.mqsc("DEFINE QLOCAL(XQ.CB) USAGE(XMITQ)\n"
                 f"DEFINE CHANNEL(CB.QM2) CHLTYPE(SDR) CONNAME('{chstatus_conname(qm1)}') XMITQ(XQ.CB) HBINT(5) "
                 "DISCINT(0)\n"
                 "DEFINE QREMOTE(VIA.CB) RNAME(APP.IN) RQMNAME(QM1) XMITQ(XQ.CB)\n")
        qm1.mqsc(f"DEFINE CHANNEL(CB.QM2) CHLTYPE(RQSTR) CONNAME('{chstatus_conname(qm2)}')\n"
                 "START CHANNEL(CB.QM2)\n")
        # its transmission queue is empty: only the requester's callback starts the sender
        wait_for(lambda: chstatus(qm2, "CB.QM2").get("STATUS") == "RUNNING")
        wait_for(lambda: chstatus(qm1, "CB.QM2").get("STATUS") == "RUNNING")
        assert chstatus(qm1, "CB.QM2")["CHLTYPE"] == "RQSTR"
        assert "event=channel_callback channel=CB.QM2" in qm2.log_tail(200, having=("channel_callback",))
        with fc.connect("QM2", qm2.conn_name) as c2:
            c2.open("VIA.CB").put(b"cb", persistent=True)
        with fc.connect("QM1", qm1.conn_name) as c1:
            assert c1.open("APP.IN").get(wait=20.0).data == b"cb"
    finally:
        qm1.stop()
        qm2.stop()


def refusals(qm: QueueManagerProcess) -> int:
    """How many times the requester PULL.QM2 was refused with 2035, by its log."""
    return qm.log_tail(400, having=("channel_request_failed",)).count(
        f"channel=PULL.QM2 reason={C.MQRC_NOT_AUTHORIZED}")


def refused_since(qm: QueueManagerProcess, before: int) -> bool:
    return refusals(qm) > before


def test_a_request_meets_the_servers_channel_authentication_records(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """QM2's CHLAUTH records refuse QM1's REQUEST as they refuse a sender's HELLO at a
    receiver (QMGRMAP and ADDRESSMAP with USERSRC(NOACCESS), BLOCKADDR): the requester is
    left STOPPED with 2035 and QM2 puts a Channel Blocked event; once allowed, it runs."""
    monkeypatch.setenv("FERRYMQ_HOME", str(tmp_path))  # connect("QM2"): its local socket
    qm1, qm2 = setup_pair(tmp_path, create_args={"QM2": ("--chlauth", "enabled")})
    try:
        qm2.mqsc("DEFINE QLOCAL(XQ.SVR) USAGE(XMITQ)\n"
                 "DEFINE CHANNEL(PULL.QM2) CHLTYPE(SVR) XMITQ(XQ.SVR) HBINT(1) DISCINT(0)\n"
                 "DEFINE QREMOTE(VIA.SVR) RNAME(APP.IN) RQMNAME(QM1) XMITQ(XQ.SVR)\n"
                 "ALTER QMGR CHLEV(ENABLED)\n")
        qm1.mqsc(f"DEFINE CHANNEL(PULL.QM2) CHLTYPE(RQSTR) CONNAME('{chstatus_conname(qm2)}') HBINT(1)\n")
        rules = ("SET CHLAUTH('PULL.QM2') TYPE(QMGRMAP) QMNAME('QM1') USERSRC(NOACCESS)",
                 "SET CHLAUTH('PULL.QM2') TYPE(ADDRESSMAP) ADDRESS('127.0.0.1') USERSRC(NOACCESS)",
                 "SET CHLAUTH('*') TYPE(BLOCKADDR) ADDRLIST('127.0.0.1')")
        removals = ("SET CHLAUTH('PULL.QM2') TYPE(QMGRMAP) QMNAME('QM1') ACTION(REMOVE)",
                    "SET CHLAUTH('PULL.QM2') TYPE(ADDRESSMAP) ADDRESS('127.0.0.1') ACTION(REMOVE)",
                    "SET CHLAUTH('*') TYPE(BLOCKADDR) ACTION(REMOVEALL)")
        undo = ""
        for rule, removal in zip(rules, removals, strict=True):
            before = refusals(qm1)
            qm2.mqsc(f"{undo}{rule}\n")  # one rule at a time
            qm1.mqsc("START CHANNEL(PULL.QM2)\n")
            wait_for(functools.partial(refused_since, qm1, before))
            undo = removal + "\n"
        assert stopped(qm1, "PULL.QM2")
        qm2.mqsc(undo)
        with fc.connect("QM2") as c2:
            events = c2.open("SYSTEM.ADMIN.CHANNEL.EVENT")
            blocked = [decode_event(events.get(wait=5.0).data) for _ in rules]
        assert [h.Reason for h, _ in blocked] == [C.MQRC_CHANNEL_BLOCKED] * 3
        assert [p[CMQCFC.MQIACF_REASON_QUALIFIER] for _, p in blocked] == [
            F.MQRQ_CHANNEL_BLOCKED_NOACCESS, F.MQRQ_CHANNEL_BLOCKED_NOACCESS, F.MQRQ_CHANNEL_BLOCKED_ADDRESS]
        assert blocked[0][1][C.MQCA_REMOTE_Q_MGR_NAME] == b"QM1"
        with fc.connect("QM2") as c2:
            c2.open("VIA.SVR").put(b"allowed", persistent=True)
        qm1.mqsc("START CHANNEL(PULL.QM2)\n")  # nothing blocks it now
        with fc.connect("QM1", qm1.conn_name) as c1:
            assert c1.open("APP.IN").get(wait=20.0).data == b"allowed"
    finally:
        qm1.stop()
        qm2.stop()


def test_a_server_filling_a_batch_notices_its_requester_gone(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        # BATCHINT(60000): a batch of one message stays open a minute, waiting for more
        qm2.mqsc("DEFINE QLOCAL(XQ.SVR) USAGE(XMITQ)\n"
                 "DEFINE CHANNEL(PULL.QM2) CHLTYPE(SVR) XMITQ(XQ.SVR) BATCHINT(60000) HBINT(300) DISCINT(0)\n"
                 "DEFINE QREMOTE(VIA.SVR) RNAME(APP.IN) RQMNAME(QM1) XMITQ(XQ.SVR)\n")
        qm1.mqsc(f"DEFINE CHANNEL(PULL.QM2) CHLTYPE(RQSTR) CONNAME('{chstatus_conname(qm2)}') HBINT(300)\n")
        qm1.mqsc("START CHANNEL(PULL.QM2)")
        wait_for(lambda: chstatus(qm2, "PULL.QM2").get("STATUS") == "RUNNING")
        with fc.connect("QM2", qm2.conn_name) as c2:
            c2.open("VIA.SVR").put(b"held", persistent=True)
        time.sleep(2)  # the server takes it into a batch within a poll, then waits for more
        qm1.mqsc("STOP CHANNEL(PULL.QM2)")
        # seen within a poll, not when BATCHINT ends the batch a minute later
        wait_for(lambda: "STATUS(RUNNING)" not in qm2.mqsc("DISPLAY CHSTATUS(PULL.QM2)", check=False), 15.0)
        # the batch backed out: the message is still to send, and arrives once asked for again
        assert "CURDEPTH(1)" in qm2.mqsc("DISPLAY QLOCAL(XQ.SVR) CURDEPTH")
        qm2.mqsc("ALTER CHANNEL(PULL.QM2) CHLTYPE(SVR) BATCHINT(0)")
        qm1.mqsc("START CHANNEL(PULL.QM2)")
        with fc.connect("QM1", qm1.conn_name) as c1:
            assert c1.open("APP.IN").get(wait=20.0).data == b"held"
    finally:
        qm1.stop()
        qm2.stop()
