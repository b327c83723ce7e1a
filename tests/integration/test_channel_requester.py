"""Requester channels (CHLTYPE RQSTR) between two real queue managers: the requester on QM1
starts QM2's server, which sends its transmission queue over the requester's connection;
a server without CONNAME, a sender calling back, and IBM's refusals when the pairing is
wrong (docs/distributed.md, "Requester channels")."""

from __future__ import annotations

import functools
from pathlib import Path

from channel_pair import setup_pair, wait_for
from qm_process import QueueManagerProcess
from test_channels import chstatus, chstatus_conname

import ferrymq.client as fc
from ferrymq.mq import cfc as F


def stopped(qm: QueueManagerProcess, channel: str) -> bool:
    return "STATUS(STOPPED)" in qm.mqsc(f"DISPLAY CHSTATUS({channel})")


def test_requester_starts_a_server_without_conname_and_receives_its_messages(tmp_path: Path) -> None:
    qm1, qm2 = setup_pair(tmp_path)
    try:
        qm2.mqsc("DEFINE QLOCAL(XQ.SVR) USAGE(XMITQ)\n"
                 "DEFINE CHANNEL(PULL.QM2) CHLTYPE(SVR) XMITQ(XQ.SVR) HBINT(1) DISCINT(0)\n"
                 "DEFINE QREMOTE(VIA.SVR) RNAME(APP.IN) RQMNAME(QM1) XMITQ(XQ.SVR)\n"
                 "DEFINE CHANNEL(WRONG.TYPE) CHLTYPE(RCVR)\n")
        # HBINT(1) at both ends (the larger is agreed): the idle server finds the requester gone at its next heartbeat
        qm1.mqsc(f"DEFINE CHANNEL(PULL.QM2) CHLTYPE(RQSTR) CONNAME('{chstatus_conname(qm2)}') HBINT(1)\n"
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
        # STOP CHANNEL at the requester ends the conversation; the server goes inactive
        qm1.mqsc("STOP CHANNEL(PULL.QM2)")
        wait_for(lambda: "STATUS(RUNNING)" not in qm2.mqsc("DISPLAY CHSTATUS(PULL.QM2)", check=False))
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
