"""Message channels over TLS between two real queue managers (separate processes): a sender
and a receiver whose SSLCIPH agree carry messages, each end checks the other's certificate
against its SSLPEER, and a receiver refuses a sender whose CipherSpec does not match, or that
comes without TLS, on the same listener that serves it plain channels."""

from __future__ import annotations

import re
from pathlib import Path

from channel_pair import free_port, wait_for
from pcf_events import decode_event
from qm_process import QueueManagerProcess

import ferrymq.client as fc
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.tls import devcerts
from ferrymq.tls.keyrepo import KeyRepository, default_label


def status(qm: QueueManagerProcess, channel: str) -> str:
    m = re.search(r"STATUS\((\w+)\)", qm.mqsc(f"DISPLAY CHSTATUS({channel})"))
    return m.group(1) if m else ""


def test_sender_and_receiver_over_tls(tmp_path: Path) -> None:
    qm1 = QueueManagerProcess(tmp_path, "QM1")
    qm2 = QueueManagerProcess(tmp_path, "QM2")
    ca = devcerts.new_ca()
    for qm in (qm1, qm2):  # each queue manager's default key repository: ssl/key in its data directory
        repo = KeyRepository(str(tmp_path / "qmgrs" / qm.name / "ssl" / "key"))
        devcerts.write_signers(repo, ca)
        devcerts.write_personal(repo, default_label(qm.name), devcerts.issue(ca, f"CN={qm.name},O=ferrymq"), ca)
    port = free_port()
    qm1.start()
    qm2.start()
    try:
        qm2.mqsc(f"""
ALTER QMGR SSLEV(ENABLED)
DEFINE LISTENER(L) TRPTYPE(TCP) PORT({port}) CONTROL(QMGR)
DEFINE CHANNEL(TLS.TO.QM2) CHLTYPE(RCVR) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLPEER('CN=QM1, O=ferrymq')
DEFINE CHANNEL(T13.TO.QM2) CHLTYPE(RCVR) SSLCIPH(ANY_TLS13)
DEFINE CHANNEL(PLAIN.TO.QM2) CHLTYPE(RCVR)
DEFINE CHANNEL(PING.TLS) CHLTYPE(RCVR) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLPEER('CN=QM1')
DEFINE QLOCAL(APP.IN)
START LISTENER(L)
""")
        retry = "SHORTRTY(1000) SHORTTMR(1) DISCINT(0) HBINT(5)"
        qm1.mqsc(f"""
ALTER QMGR SSLEV(ENABLED)
DEFINE QLOCAL(QM2) USAGE(XMITQ)
DEFINE QLOCAL(XQ.T13) USAGE(XMITQ)
DEFINE QLOCAL(XQ.PLAIN) USAGE(XMITQ)
DEFINE CHANNEL(TLS.TO.QM2) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(QM2) +
       SSLCIPH(ANY_TLS12_OR_HIGHER) SSLPEER('CN=QM2') {retry}
DEFINE CHANNEL(T13.TO.QM2) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(XQ.T13) +
       SSLCIPH(TLS_RSA_WITH_AES_256_GCM_SHA384) {retry}
DEFINE CHANNEL(PLAIN.TO.QM2) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(XQ.PLAIN) {retry}
DEFINE QREMOTE(TO.QM2.APP) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)
START CHANNEL(TLS.TO.QM2)
START CHANNEL(T13.TO.QM2)
START CHANNEL(PLAIN.TO.QM2)
""")
        # PING CHANNEL over TLS: the sender's definition, as it would run, against the receiver's.
        qm1.mqsc(f"""
DEFINE QLOCAL(PING.XQ) USAGE(XMITQ)
DEFINE CHANNEL(PING.TLS) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(PING.XQ) SSLCIPH(ANY_TLS13) SSLPEER('CN=QM2')
""")
        assert "AMQ8020I" in qm1.mqsc("PING CHANNEL(PING.TLS)")
        for change in ("SSLPEER('CN=QM9')", "SSLCIPH(' ')"):  # refused by the sender, then by the receiver
            qm1.mqsc(f"ALTER CHANNEL(PING.TLS) CHLTYPE(SDR) {change}\n")
            out = qm1.mqsc("PING CHANNEL(PING.TLS)", check=False)
            assert f"reason {C.MQRC_CHANNEL_SSL_ERROR} " in out, (change, out)
        with fc.connect("QM1", qm1.conn_name) as c1, fc.connect("QM2", qm2.conn_name) as c2:
            out = c1.open("TO.QM2.APP")
            for i in range(20):
                out.put(f"m{i}".encode(), persistent=i % 2 == 0)
            inq = c2.open("APP.IN")
            got = [inq.get(wait=30).data for _ in range(20)]  # NPMSPEED(FAST): non-persistent ones go ahead
            assert sorted(got) == sorted(f"m{i}".encode() for i in range(20))
        assert status(qm1, "TLS.TO.QM2") == "RUNNING"
        # Each end shows the other's certificate and what the handshake agreed.
        shown1 = qm1.mqsc("DISPLAY CHSTATUS(TLS.TO.QM2) SSLPEER SSLCERTI SSLCIPH SECPROT\n")
        shown2 = qm2.mqsc("DISPLAY CHSTATUS(TLS.TO.QM2) SSLPEER SSLCERTI SSLCIPH SECPROT\n")
        assert "SSLPEER(CN=QM2,O=ferrymq)" in shown1 and "SSLPEER(CN=QM1,O=ferrymq)" in shown2, (shown1, shown2)
        for shown in (shown1, shown2):
            assert "SSLCERTI(CN=ferrymq development CA,O=ferrymq)" in shown and "SECPROT(TLSV1" in shown, shown
        assert "SECPROT(NONE)" in qm1.mqsc("DISPLAY CHSTATUS(PLAIN.TO.QM2) SECPROT\n")
        wait_for(lambda: status(qm1, "PLAIN.TO.QM2") == "RUNNING")  # plain channels share the listener
        wait_for(lambda: status(qm1, "T13.TO.QM2") == "RETRYING")
        log2 = (tmp_path / "qmgrs" / "QM2" / "ferrymq.log").read_text()
        assert re.search(r"channel_refused channel=T13.TO.QM2 .*reason=2371 SSLCIPH: channel T13.TO.QM2 requires "
                         r"SSLCIPH\(ANY_TLS13\)", log2), log2[-3000:]
        # the sender's own check of the receiver's certificate
        out = qm1.mqsc("STOP CHANNEL(TLS.TO.QM2) MODE(FORCE)\nALTER CHANNEL(TLS.TO.QM2) CHLTYPE(SDR) SSLPEER('CN=QM3')\n")
        assert "AMQ8016I" in out, out  # altered
        wait_for(lambda: status(qm1, "TLS.TO.QM2") in ("STOPPED", ""))
        qm1.mqsc("START CHANNEL(TLS.TO.QM2)\n")
        with fc.connect("QM1", qm1.conn_name) as c1:
            c1.open("TO.QM2.APP").put(b"not for a stranger")
        wait_for(lambda: "accepts SSLPEER(CN=QM3)" in _log(tmp_path, "QM1"))
        assert status(qm1, "TLS.TO.QM2") != "RUNNING"
        # Channel SSL Error events (SSLEV): the receiver refused T13's CipherSpec; the sender
        # refused the receiver's certificate for its SSLPEER.
        qualifiers2 = [(e[F.MQCACH_CHANNEL_NAME], e[F.MQIACF_REASON_QUALIFIER]) for e in ssl_events(qm2)]
        assert (b"T13.TO.QM2", F.MQRQ_SSL_CIPHER_SPEC_ERROR) in qualifiers2, qualifiers2
        refused = [e for e in ssl_events(qm1) if e[F.MQIACF_REASON_QUALIFIER] == F.MQRQ_SSL_PEER_NAME_ERROR]
        assert refused and refused[0][F.MQCACH_CHANNEL_NAME] == b"TLS.TO.QM2", refused
        assert list(refused[0])[2:] == [F.MQCACH_CHANNEL_NAME, F.MQCACH_XMIT_Q_NAME, F.MQCACH_CONNECTION_NAME,
                                        F.MQCACH_SSL_PEER_NAME], refused
        assert refused[0][F.MQCACH_XMIT_Q_NAME] == b"QM2" and refused[0][F.MQCACH_SSL_PEER_NAME] == b"CN=QM2,O=ferrymq"
    finally:
        qm1.stop()
        qm2.stop()


def ssl_events(qm: QueueManagerProcess) -> list[dict[int, object]]:
    """The Channel SSL Error events on ``qm``'s SYSTEM.ADMIN.CHANNEL.EVENT."""
    out = []
    with fc.connect(qm.name, qm.conn_name) as c:
        q = c.open("SYSTEM.ADMIN.CHANNEL.EVENT")
        while True:
            try:
                header, params = decode_event(q.get(wait=0).data)
            except fc.NoMessageAvailable:
                return out
            if header.Reason == C.MQRC_CHANNEL_SSL_ERROR:
                out.append(params)


def _log(home: Path, name: str) -> str:
    return (home / "qmgrs" / name / "ferrymq.log").read_text()
