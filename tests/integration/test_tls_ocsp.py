"""Certificate revocation by OCSP at the queue manager's listener, with IBM's SSL stanza
settings (OCSPCheckExtensions, OCSPAuthentication) and its Channel SSL Error and Channel SSL
Warning events; an OCSP responder run here on 127.0.0.1 port 0, certificates naming it in
their AuthorityInfoAccess extension (ferrymq.tls.devcerts, and `ferrymq tls create-dev-certs
--ocsp-url` for the queue-manager process)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from channel_pair import free_port, wait_for
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp
from pcf_events import decode_event, drain_events
from qm_process import ADMIN_PASSWORD, ADMIN_USER, QueueManagerProcess

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.client.tls import ClientTLS
from ferrymq.engine.api import SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.server import QueueManagerServer
from ferrymq.server.tls import ServerTLS
from ferrymq.store.memory import MemoryJournal
from ferrymq.tls import devcerts
from ferrymq.tls.keyrepo import KeyRepository, default_label
from ferrymq.tls.ocsp import OCSPPolicy

ANY = "ANY_TLS12_OR_HIGHER"


class Responder:
    """An OCSP responder for one CA: each certificate's answer is what ``status`` says
    (GOOD, REVOKED; anything else, or a certificate it was not told of: UNKNOWN); ``mode``
    "garbage" answers something that is not OCSP, "forged" signs with a stranger's key."""

    def __init__(self, ca: devcerts.Issued) -> None:
        self.ca = ca
        self.status: dict[int, tuple[x509.Certificate, str]] = {}
        self.mode = ""
        self.asked = 0
        self.stranger = devcerts.new_ca("CN=not the CA")
        responder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = min(int(self.headers.get("Content-Length", "0")), 65536)
                body = responder.answer(self.rfile.read(length))
                self.send_response(200)
                self.send_header("Content-Type", "application/ocsp-response")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/ocsp"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def set(self, cert: x509.Certificate, status: str) -> None:
        self.status[cert.serial_number] = (cert, status)

    def answer(self, der: bytes) -> bytes:
        self.asked += 1
        if self.mode == "garbage":
            return b"not an OCSP response"
        request = ocsp.load_der_ocsp_request(der)
        known = self.status.get(request.serial_number)
        now = dt.datetime.now(dt.UTC)
        if known is None:  # the builder needs the certificate: answer about one it knows, as UNKNOWN
            return ocsp.OCSPResponseBuilder.build_unsuccessful(ocsp.OCSPResponseStatus.UNAUTHORIZED).public_bytes(
                serialization.Encoding.DER)
        cert, status = known
        cert_status = {"GOOD": ocsp.OCSPCertStatus.GOOD, "REVOKED": ocsp.OCSPCertStatus.REVOKED}.get(
            status, ocsp.OCSPCertStatus.UNKNOWN)
        builder = ocsp.OCSPResponseBuilder().add_response(
            cert=cert, issuer=self.ca.cert, algorithm=hashes.SHA1(), cert_status=cert_status, this_update=now,
            next_update=now + dt.timedelta(hours=1),
            revocation_time=now - dt.timedelta(hours=1) if status == "REVOKED" else None,
            revocation_reason=x509.ReasonFlags.key_compromise if status == "REVOKED" else None,
        ).responder_id(ocsp.OCSPResponderEncoding.HASH, self.ca.cert)
        for ext in request.extensions:  # echo the nonce, as a live responder does
            builder = builder.add_extension(ext.value, critical=ext.critical)
        key = self.stranger.key if self.mode == "forged" else self.ca.key
        return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture(scope="module")
def ca() -> devcerts.Issued:
    return devcerts.new_ca()


@pytest.fixture
def responder(ca: devcerts.Issued) -> Iterator[Responder]:
    r = Responder(ca)
    yield r
    r.close()


def unused_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/ocsp"


@contextlib.asynccontextmanager
async def serving(data: Path, ca: devcerts.Issued, policy: OCSPPolicy,
                  qm_cert: devcerts.Issued | None = None) -> AsyncIterator[QueueManagerServer]:
    repo = KeyRepository(str(data / "ssl" / "key"))
    devcerts.write_signers(repo, ca)
    devcerts.write_personal(repo, default_label("QM1"), qm_cert or devcerts.issue(ca, "CN=QM1,O=ferrymq"), ca)
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "Q1")
    qm.state.channels.define("TLS.REQ", "SVRCONN", {"SSLCIPH": ANY})
    qm.objects.alter_qmgr({"SSLEV": "ENABLED"})
    srv = QueueManagerServer(qm, "127.0.0.1", 0, tick_interval=0.1, tls=ServerTLS(qm, data, policy))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(quiesce=False)


def client(data: Path, ca: devcerts.Issued, name: str, *ocsp_urls: str) -> tuple[ClientTLS, x509.Certificate]:
    repo = KeyRepository(str(data / "clients" / name))
    devcerts.write_signers(repo, ca)
    issued = devcerts.issue(ca, f"CN={name},O=ferrymq", ocsp_urls=ocsp_urls)
    devcerts.write_personal(repo, name, issued, ca)
    return ClientTLS(repo.stem, ANY, name), issued.cert


async def connects(srv: QueueManagerServer, tls: ClientTLS) -> int:
    """0 when the client connects and puts, else its reason."""
    try:
        async with await fc.connect_async("QM1", f"127.0.0.1({srv.port})", channel="TLS.REQ", tls=tls,
                                          timeout=20) as c:
            await (await c.open("Q1")).put(b"in")
    except fc.MQError as exc:
        return exc.reason
    return 0


async def events(srv: QueueManagerServer) -> list[tuple[int, dict[int, object]]]:
    """(Reason, parameters) of each event on SYSTEM.ADMIN.CHANNEL.EVENT, taken off it."""
    got = await drain_events("QM1", f"127.0.0.1({srv.port})")
    assert all((header.Type, header.Command) == (F.MQCFT_EVENT, F.MQCMD_CHANNEL_EVENT) for header, _ in got)
    return [(header.Reason, params) for header, params in got]


def refusal(params: dict[int, object]) -> tuple[object, ...]:
    return (params[F.MQIACF_REASON_QUALIFIER], params[F.MQCACH_SSL_HANDSHAKE_STAGE], params[F.MQIACH_SSL_RETURN_CODE])


async def test_ocsp_required_refuses_revoked_and_unknown(tmp_path: Path, ca: devcerts.Issued,
                                                        responder: Responder) -> None:
    good, good_cert = client(tmp_path, ca, "good", responder.url)
    revoked, revoked_cert = client(tmp_path, ca, "revoked", responder.url)
    unknown, unknown_cert = client(tmp_path, ca, "unknown", responder.url)
    unreachable, _ = client(tmp_path, ca, "unreachable", unused_url())
    untold, _ = client(tmp_path, ca, "untold", responder.url)  # the responder refuses to answer
    plain, _ = client(tmp_path, ca, "plain")  # names no responder: not asked
    responder.set(good_cert, "GOOD")
    responder.set(revoked_cert, "REVOKED")
    responder.set(unknown_cert, "UNKNOWN")
    async with serving(tmp_path, ca, OCSPPolicy()) as srv:  # IBM's defaults: YES, REQUIRED
        assert await connects(srv, good) == 0
        asked = responder.asked
        assert await connects(srv, plain) == 0
        assert responder.asked == asked
        for tls in (revoked, unknown, unreachable, untold):
            assert await connects(srv, tls) == C.MQRC_Q_MGR_NOT_AVAILABLE
        responder.mode = "forged"  # an answer not signed by the CA is no answer
        assert await connects(srv, good) == C.MQRC_Q_MGR_NOT_AVAILABLE
        responder.mode = "garbage"
        assert await connects(srv, good) == C.MQRC_Q_MGR_NOT_AVAILABLE
        got = await events(srv)
    assert [reason for reason, _ in got] == [C.MQRC_CHANNEL_SSL_ERROR] * 6
    assert [refusal(p) for _, p in got] == [(F.MQRQ_SSL_HANDSHAKE_ERROR, b"OCSP_CHECK", code)
                                            for code in (23, 75, 74, 74, 74, 74)]
    assert list(got[0][1]) == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER, F.MQCACH_CONNECTION_NAME,
                               F.MQCACH_SSL_HANDSHAKE_STAGE, F.MQIACH_SSL_RETURN_CODE]


async def test_ocsp_warn_and_optional_let_unknown_on(tmp_path: Path, ca: devcerts.Issued,
                                                     responder: Responder) -> None:
    unknown, unknown_cert = client(tmp_path, ca, "unknown", responder.url)
    revoked, revoked_cert = client(tmp_path, ca, "revoked", responder.url)
    responder.set(unknown_cert, "UNKNOWN")
    responder.set(revoked_cert, "REVOKED")
    async with serving(tmp_path, ca, OCSPPolicy(authentication="WARN")) as srv:
        assert await connects(srv, unknown) == 0
        assert await connects(srv, revoked) == C.MQRC_Q_MGR_NOT_AVAILABLE  # revoked is never let on
        got = await events(srv)
    assert [(reason, p[F.MQIACF_REASON_QUALIFIER]) for reason, p in got] == [
        (C.MQRC_CHANNEL_SSL_WARNING, F.MQRQ_SSL_UNKNOWN_REVOCATION), (C.MQRC_CHANNEL_SSL_ERROR, F.MQRQ_SSL_HANDSHAKE_ERROR)]
    # IBM's Channel SSL Warning: no ChannelName before the channel is named, as at the listener.
    assert list(got[0][1]) == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER, F.MQCACH_CONNECTION_NAME]
    assert got[0][1][F.MQCACH_CONNECTION_NAME] == b"127.0.0.1"
    async with serving(tmp_path, ca, OCSPPolicy(authentication="OPTIONAL")) as srv:
        assert await connects(srv, unknown) == 0
        assert await connects(srv, revoked) == C.MQRC_Q_MGR_NOT_AVAILABLE
        assert [reason for reason, _ in await events(srv)] == [C.MQRC_CHANNEL_SSL_ERROR]
    asked = responder.asked
    async with serving(tmp_path, ca, OCSPPolicy(check_extensions=False)) as srv:  # OCSPCheckExtensions=NO
        assert await connects(srv, revoked) == 0
        assert await events(srv) == []
    assert responder.asked == asked


def test_ocsp_in_a_queue_manager_process_with_events_read_by_another(tmp_path: Path, responder: Responder) -> None:
    """`ferrymq create --ocsp-authentication WARN`, `create-dev-certs --ocsp-url`: an unknown
    status lets the client on with a Channel SSL Warning event, a revoked one is refused with
    a Channel SSL Error event, and so is a handshake left unfinished past the deadline; this
    process reads the three with pymqi."""
    qm = QueueManagerProcess(tmp_path, "QM1", create_args=("--ocsp-authentication", "warn",
                                                           "--handshake-timeout", "1.5"))
    doc = json.loads(qm._cli("tls", "create-dev-certs", "QM1", "--client", "app", "--ocsp-url", responder.url,
                             "--output", "json"))
    (app,) = doc["clients"]
    responder.ca = devcerts.load_ca(Path(doc["ca"]))
    cert = devcerts.load_certificate(KeyRepository(app["key_repository"]).personal(app["certificate_label"]))
    assert responder.url in str(cert.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value)
    responder.set(cert, "UNKNOWN")
    # The queue manager's certificate names the responder too: the client asks about it.
    responder.set(devcerts.load_certificate(Path(f"{doc['key_repository']}.{doc['certificate_label']}.pem")), "GOOD")
    qm.start()
    try:
        qm.mqsc("DEFINE CHANNEL(APP.TLS) CHLTYPE(SVRCONN) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLPEER('CN=app')\n"
                "DEFINE QLOCAL(Q1)\nALTER QMGR SSLEV(ENABLED)\n")
        tls = ClientTLS(app["key_repository"], "ANY_TLS13", app["certificate_label"])
        with fc.connect("QM1", qm.conn_name, channel="APP.TLS", tls=tls, user=ADMIN_USER,
                        password=ADMIN_PASSWORD) as c:
            c.open("Q1").put(b"let on with a warning")
        responder.set(cert, "REVOKED")
        with pytest.raises(fc.MQError) as info:
            fc.connect("QM1", qm.conn_name, channel="APP.TLS", tls=tls, user=ADMIN_USER, password=ADMIN_PASSWORD)
        assert info.value.reason == C.MQRC_Q_MGR_NOT_AVAILABLE
        with socket.create_connection(("127.0.0.1", qm.port), timeout=10) as stalled:  # half a ClientHello
            stalled.sendall(b"\x16\x03\x01\x02\x00\x01")
            assert stalled.recv(100) == b""  # ended at the handshake deadline
        qmgr = pymqi.connect("QM1", "SYSTEM.DEF.SVRCONN", qm.conn_name, ADMIN_USER, ADMIN_PASSWORD)
        try:
            q = pymqi.Queue(qmgr, "SYSTEM.ADMIN.CHANNEL.EVENT")
            got = [decode_event(q.get(None, pymqi.MD(), pymqi.GMO(Options=C.MQGMO_WAIT, WaitInterval=5000)))
                   for _ in range(3)]
        finally:
            qmgr.disconnect()
        (warn_head, warn), (err_head, err), (late_head, late) = got
        assert (late_head.Reason, late[F.MQCACH_SSL_HANDSHAKE_STAGE], late[F.MQIACH_SSL_RETURN_CODE]) == (
            C.MQRC_CHANNEL_SSL_ERROR, b"HANDSHAKE_TIMED_OUT", 110)
        assert (warn_head.Reason, warn[F.MQIACF_REASON_QUALIFIER]) == (C.MQRC_CHANNEL_SSL_WARNING,
                                                                       F.MQRQ_SSL_UNKNOWN_REVOCATION)
        assert warn_head.CompCode == C.MQCC_WARNING
        assert (err_head.Reason, err[F.MQIACF_REASON_QUALIFIER], err[F.MQIACH_SSL_RETURN_CODE]) == (
            C.MQRC_CHANNEL_SSL_ERROR, F.MQRQ_SSL_HANDSHAKE_ERROR, 23)
        log = (tmp_path / "qmgrs" / "QM1" / "ferrymq.log").read_text()
        assert "event=tls_revocation_unknown" in log and "event=tls_refused_revocation" in log
    finally:
        qm.stop()


async def test_a_slow_responder_holds_only_its_own_connection(tmp_path: Path, ca: devcerts.Issued) -> None:
    """The look-up runs off the event loop: while it waits for a responder that accepts and
    says nothing, other clients are served; then the policy's time-out refuses it (74)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        slow, _ = client(tmp_path, ca, "slow", f"http://127.0.0.1:{silent.getsockname()[1]}/ocsp")
        plain, _ = client(tmp_path, ca, "plain")
        async with serving(tmp_path, ca, OCSPPolicy(timeout=1.0)) as srv:
            waiting = asyncio.create_task(connects(srv, slow))
            await asyncio.sleep(0.2)
            assert await connects(srv, plain) == 0
            assert not waiting.done()
            assert await waiting == C.MQRC_Q_MGR_NOT_AVAILABLE
            (got,) = await events(srv)
        assert refusal(got[1]) == (F.MQRQ_SSL_HANDSHAKE_ERROR, b"OCSP_CHECK", 74)
    finally:
        silent.close()


async def test_a_client_asks_about_the_queue_managers_certificate(tmp_path: Path, ca: devcerts.Issued,
                                                                 responder: Responder) -> None:
    """The calling end checks too (IBM's mqclient.ini SSL stanza): the queue manager's
    certificate names the responder; revoked 2401 (the async and blocking clients, pymqi),
    not known 2393 under REQUIRED, let on under WARN and OPTIONAL or with the check off."""
    qm_cert = devcerts.issue(ca, "CN=QM1,O=ferrymq", ocsp_urls=[responder.url])
    tls, _ = client(tmp_path, ca, "app")
    async with serving(tmp_path, ca, OCSPPolicy(), qm_cert) as srv:
        responder.set(qm_cert.cert, "GOOD")
        assert await connects(srv, tls) == 0
        responder.set(qm_cert.cert, "REVOKED")
        assert await connects(srv, tls) == C.MQRC_SSL_CERTIFICATE_REVOKED

        def blocking() -> int:
            try:
                fc.connect("QM1", f"127.0.0.1({srv.port})", channel="TLS.REQ", tls=tls).close()
            except fc.MQError as exc:
                return exc.reason
            return 0

        def with_pymqi() -> int:
            cd = pymqi.CD(ChannelName=b"TLS.REQ", ConnectionName=f"127.0.0.1({srv.port})".encode(),
                          SSLCipherSpec=ANY.encode())
            sco = pymqi.SCO(KeyRepository=tls.key_repository.encode(), CertificateLabel=b"app")
            try:
                pymqi.QueueManager(None).connect_with_options("QM1", cd, sco)
            except pymqi.MQMIError as exc:
                return int(exc.reason)
            return 0

        assert await asyncio.to_thread(blocking) == C.MQRC_SSL_CERTIFICATE_REVOKED
        assert await asyncio.to_thread(with_pymqi) == C.MQRC_SSL_CERTIFICATE_REVOKED
        responder.set(qm_cert.cert, "UNKNOWN")
        assert await connects(srv, tls) == C.MQRC_SSL_INITIALIZATION_ERROR
        for authentication in ("WARN", "OPTIONAL"):
            assert await connects(srv, dataclasses.replace(tls, ocsp_authentication=authentication)) == 0
        responder.set(qm_cert.cert, "REVOKED")
        asked = responder.asked
        assert await connects(srv, dataclasses.replace(tls, ocsp_check_extensions=False)) == 0
        assert responder.asked == asked


def test_a_sender_asks_about_its_receivers_certificate(tmp_path: Path, ca: devcerts.Issued,
                                                      responder: Responder) -> None:
    """A sender channel checks the receiver's certificate by OCSP as the listener checks its
    callers: revoked, the channel fails with 2371 and a Channel SSL Error event at the sender
    (ChannelName, XmitQName, stage OCSP_CHECK, 23), and retries; once the responder says GOOD
    it runs and carries the message. Two queue-manager processes."""
    qm1, qm2 = QueueManagerProcess(tmp_path, "QM1"), QueueManagerProcess(tmp_path, "QM2")
    certs = {"QM1": devcerts.issue(ca, "CN=QM1,O=ferrymq"),
             "QM2": devcerts.issue(ca, "CN=QM2,O=ferrymq", ocsp_urls=[responder.url])}
    for name, issued in certs.items():
        repo = KeyRepository(str(tmp_path / "qmgrs" / name / "ssl" / "key"))
        devcerts.write_signers(repo, ca)
        devcerts.write_personal(repo, default_label(name), issued, ca)
    responder.set(certs["QM2"].cert, "REVOKED")
    port = free_port()
    qm1.start()
    qm2.start()
    try:
        qm2.mqsc(f"DEFINE LISTENER(L) TRPTYPE(TCP) PORT({port}) CONTROL(QMGR)\n"
                 "DEFINE CHANNEL(TLS.TO.QM2) CHLTYPE(RCVR) SSLCIPH(ANY_TLS12_OR_HIGHER)\n"
                 "DEFINE QLOCAL(APP.IN)\nSTART LISTENER(L)\n")
        qm1.mqsc("ALTER QMGR SSLEV(ENABLED)\nDEFINE QLOCAL(QM2) USAGE(XMITQ)\n"
                 f"DEFINE CHANNEL(TLS.TO.QM2) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(QM2) +\n"
                 "       SSLCIPH(ANY_TLS12_OR_HIGHER) SHORTRTY(1000) SHORTTMR(1) DISCINT(0)\n"
                 "DEFINE QREMOTE(TO.QM2.APP) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)\nSTART CHANNEL(TLS.TO.QM2)\n")
        with fc.connect("QM1", qm1.conn_name) as c1:
            c1.open("TO.QM2.APP").put(b"after the all-clear")
        log1 = tmp_path / "qmgrs" / "QM1" / "ferrymq.log"
        wait_for(lambda: "the receiver's certificate: OCSP REVOKED" in log1.read_text())
        responder.set(certs["QM2"].cert, "GOOD")
        with fc.connect("QM2", qm2.conn_name) as c2:
            assert c2.open("APP.IN").get(wait=30).data == b"after the all-clear"
        with fc.connect("QM1", qm1.conn_name) as c1:
            q = c1.open("SYSTEM.ADMIN.CHANNEL.EVENT")
            refused = []
            while True:
                try:
                    header, params = decode_event(q.get(wait=0).data)
                except fc.NoMessageAvailable:
                    break
                if header.Reason == C.MQRC_CHANNEL_SSL_ERROR:
                    refused.append(params)
        assert refused, "no Channel SSL Error event at the sender"
        first = refused[0]
        assert (first[F.MQCACH_CHANNEL_NAME], first[F.MQCACH_XMIT_Q_NAME]) == (b"TLS.TO.QM2", b"QM2")
        assert (first[F.MQCACH_SSL_HANDSHAKE_STAGE], first[F.MQIACH_SSL_RETURN_CODE]) == (b"OCSP_CHECK", 23)
    finally:
        qm1.stop()
        qm2.stop()
