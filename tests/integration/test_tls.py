"""TLS end to end: a queue manager's listener with a key repository, the ferrymq clients and
pymqi over real sockets on 127.0.0.1 port 0, certificates made here by ferrymq.tls.devcerts.

Each refusal is checked for IBM's reason on the client side and for the connection being
gone on the server's (nothing left waiting or in a handshake)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import errno
import json
import os
import shutil
import socket
import stat
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pcf_events import drain_events
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

ANY = "ANY_TLS12_OR_HIGHER"
APP_DN = "CN=app,OU=Payments,O=ferrymq"


@dataclass
class Certs:
    """A CA, the queue manager's key repository (ssl/key in ``data``), and client ones."""

    data: Path
    ca: devcerts.Issued
    app: str  # a client repository holding APP_DN's certificate under label "app"

    def client(self, name: str, dn: str | None = None, *, ca: devcerts.Issued | None = None,
               trust: devcerts.Issued | None = None, expired: bool = False) -> str:
        """A client key repository: its certificate for ``dn`` signed by ``ca`` (None: no
        certificate), trusting ``trust`` (default: this CA)."""
        repo = KeyRepository(str(self.data / "clients" / name))
        devcerts.write_signers(repo, trust or self.ca)
        if dn is not None:
            now = dt.datetime.now(dt.UTC)
            issued = devcerts.issue(ca or self.ca, dn, not_before=now - dt.timedelta(days=30) if expired else None,
                                    not_after=now - dt.timedelta(days=1) if expired else None)
            devcerts.write_personal(repo, name, issued, ca or self.ca)
        return repo.stem

    def server(self, dn: str = "CN=QM1,O=ferrymq", *, ca: devcerts.Issued | None = None, expired: bool = False) -> None:
        """(Re)write the queue manager's certificate."""
        repo = KeyRepository(str(self.data / "ssl" / "key"))
        devcerts.write_signers(repo, self.ca)
        now = dt.datetime.now(dt.UTC)
        issued = devcerts.issue(ca or self.ca, dn, not_before=now - dt.timedelta(days=30) if expired else None,
                                not_after=now - dt.timedelta(days=1) if expired else None)
        devcerts.write_personal(repo, default_label("QM1"), issued, ca or self.ca)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    data = tmp_path_factory.mktemp("qm1")
    c = Certs(data, devcerts.new_ca(), "")
    c.server()
    c.app = c.client("app", APP_DN)
    return c


@contextlib.asynccontextmanager
async def serving(certs: Certs, *, tls: bool = True, handshake_timeout: float = 10.0) -> AsyncIterator[QueueManagerServer]:
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    qm.objects.define("QLOCAL", "Q1")
    channels = qm.state.channels
    channels.define("TLS.REQ", "SVRCONN", {"SSLCIPH": ANY})
    channels.define("TLS.OPT", "SVRCONN", {"SSLCIPH": ANY, "SSLCAUTH": "OPTIONAL"})
    channels.define("TLS.PEER", "SVRCONN", {"SSLCIPH": ANY, "SSLPEER": "CN=app, OU=Pay*"})
    channels.define("TLS.AES", "SVRCONN", {"SSLCIPH": "TLS_RSA_WITH_AES_256_GCM_SHA384"})
    channels.define("TLS.13", "SVRCONN", {"SSLCIPH": "ANY_TLS13"})
    srv = QueueManagerServer(qm, "127.0.0.1", 0, tick_interval=0.1, handshake_timeout=handshake_timeout,
                             tls=ServerTLS(qm, certs.data) if tls else None)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(quiesce=False)


def addr(srv: QueueManagerServer) -> str:
    return f"127.0.0.1({srv.port})"


async def refused(srv: QueueManagerServer, reason: int, channel: str, tls: ClientTLS | None) -> str:
    """Connect, expect ``reason``; the server keeps nothing of the connection."""
    with pytest.raises(fc.MQError) as info:
        await fc.connect_async("QM1", addr(srv), channel=channel, tls=tls, timeout=10)
    assert info.value.reason == reason, info.value
    await settled(srv)
    return info.value.detail


async def settled(srv: QueueManagerServer) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lst = srv.listener
        assert lst is not None
        if not lst.waiting and not lst.handshaking and not any(h.hconn for h in srv.handlers):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"still held: {lst.waiting} {lst.handshaking} {srv.handlers}")


async def test_tls_client_puts_and_gets_and_the_server_knows_its_dn(certs: Certs) -> None:
    async with serving(certs) as srv:
        async with await fc.connect_async("QM1", addr(srv), channel="TLS.REQ",
                                          tls=ClientTLS(certs.app, ANY, "app")) as c:
            q = await c.open("Q1")
            await q.put(b"over tls")
            assert (await q.get(wait=5)).data == b"over tls"
            (h,) = [h for h in srv.handlers if h.hconn]
            assert h.peer_dn == APP_DN and h.peer_issuer_dn == "CN=ferrymq development CA,O=ferrymq"
            assert h.tls_peer is not None and h.tls_peer.version in ("TLSv1.2", "TLSv1.3")

        def blocking() -> bytes:  # the blocking client's receives go through TLSSocket
            with fc.connect("QM1", addr(srv), channel="TLS.REQ", tls=ClientTLS(certs.app, ANY, "app")) as c:
                q = c.open("Q1")
                with pytest.raises(fc.NoMessageAvailable):
                    q.get(wait=0.3)
                for i in range(50):
                    q.put(b"m%d" % i)
                got = b"".join(q.get(wait=5).data for _ in range(50))
                for i in range(400):  # a browse page of 800 KiB: read into its own buffer (TLSSocket.recv_into)
                    q.put(bytes([i % 256]) * 2048)
                r = c.queue_range("Q1")
                page = c.browse_columns("Q1", r.first_seq, r.last_seq + 1)
                assert len(page) == 400 and type(page.columns.data.obj) is bytearray
                assert bytes(page.columns.data) == b"".join(bytes([i % 256]) * 2048 for i in range(400))
                return got

        assert await asyncio.to_thread(blocking) == b"".join(b"m%d" % i for i in range(50))


async def test_plain_to_a_tls_channel_and_tls_to_a_plain_one_are_refused(certs: Certs) -> None:
    async with serving(certs) as srv:
        detail = await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", None)
        assert "requires TLS" in detail
        detail = await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "SYSTEM.DEF.SVRCONN", ClientTLS(certs.app, ANY, "app"))
        assert "does not use TLS" in detail
        async with await fc.connect_async("QM1", addr(srv)) as c:  # plain, on the plain channel: served
            await (await c.open("Q1")).put(b"plain")


async def test_tls_to_a_queue_manager_without_a_key_repository_is_refused(certs: Certs) -> None:
    async with serving(certs, tls=False) as srv:
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", ClientTLS(certs.app, ANY, "app"))


async def test_untrusted_and_expired_certificates_are_refused(certs: Certs) -> None:
    other = devcerts.new_ca("CN=someone else's CA")
    async with serving(certs) as srv:
        # the client does not trust the queue manager's certificate
        distrust = certs.client("distrust", APP_DN, trust=other)
        detail = await refused(srv, C.MQRC_SSL_INITIALIZATION_ERROR, "TLS.REQ", ClientTLS(distrust, ANY, "distrust"))
        assert "not accepted" in detail
        # the queue manager does not trust the client's, or it has expired
        foreign = certs.client("foreign", "CN=app,OU=Payments", ca=other)
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", ClientTLS(foreign, ANY, "foreign"))
        stale = certs.client("stale", APP_DN, expired=True)
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", ClientTLS(stale, ANY, "stale"))
    certs.server(expired=True)
    try:
        async with serving(certs) as srv:
            detail = await refused(srv, C.MQRC_SSL_INITIALIZATION_ERROR, "TLS.REQ", ClientTLS(certs.app, ANY, "app"))
            assert "expired" in detail
    finally:
        certs.server()


async def test_sslpeer_and_client_authentication(certs: Certs) -> None:
    anonymous = certs.client("anonymous")  # trusts the CA, has no certificate of its own
    other = certs.client("other", "CN=other,OU=Payments,O=ferrymq")
    async with serving(certs) as srv:
        async with await fc.connect_async("QM1", addr(srv), channel="TLS.PEER", tls=ClientTLS(certs.app, ANY, "app")):
            pass
        detail = await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.PEER", ClientTLS(other, ANY, "other"))
        assert "SSLPEER" in detail and "CN=other" in detail
        detail = await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", ClientTLS(anonymous, ANY))
        assert "SSLCAUTH(REQUIRED)" in detail
        async with await fc.connect_async("QM1", addr(srv), channel="TLS.OPT", tls=ClientTLS(anonymous, ANY)):
            (h,) = [h for h in srv.handlers if h.hconn]
            assert h.tls_peer is not None and h.peer_dn == ""
        # the client's own check of the queue manager's certificate
        async with await fc.connect_async("QM1", addr(srv), channel="TLS.REQ",
                                          tls=ClientTLS(certs.app, ANY, "app", peer_name="CN=QM1, O=ferry*")):
            pass
        await refused(srv, C.MQRC_SSL_PEER_NAME_MISMATCH, "TLS.REQ", ClientTLS(certs.app, ANY, "app", peer_name="CN=QM2"))
        await refused(srv, C.MQRC_SSL_PEER_NAME_ERROR, "TLS.REQ", ClientTLS(certs.app, ANY, "app", peer_name="CN"))


async def channel_events(srv: QueueManagerServer) -> list[dict[int, object]]:
    """Every event on SYSTEM.ADMIN.CHANNEL.EVENT, taken apart as a pymqi monitor would."""
    out = []
    for header, params in await drain_events("QM1", addr(srv)):
        assert (header.Type, header.Command, header.Reason) == (F.MQCFT_EVENT, F.MQCMD_CHANNEL_EVENT,
                                                                 C.MQRC_CHANNEL_SSL_ERROR)
        assert list(params)[:2] == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER]
        out.append(params)
    return out


async def test_channel_ssl_error_events(certs: Certs) -> None:
    other = devcerts.new_ca("CN=someone else's CA")
    foreign = certs.client("foreign2", "CN=app,OU=Payments", ca=other)
    anonymous = certs.client("anonymous2")
    stranger = certs.client("stranger2", "CN=other,OU=Payments,O=ferrymq")
    async with serving(certs) as srv:
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", None)  # SSLEV(DISABLED), IBM's default: none
        assert await channel_events(srv) == []
        srv.qmgr.objects.alter_qmgr({"SSLEV": "ENABLED"})
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", None)
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", ClientTLS(anonymous, ANY))
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.PEER", ClientTLS(stranger, ANY, "stranger2"))
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", ClientTLS(foreign, ANY, "foreign2"))
        async with await fc.connect_async("QM1", addr(srv), channel="TLS.REQ", tls=ClientTLS(certs.app, ANY, "app")):
            pass  # a channel that starts makes none
        events = await channel_events(srv)
    assert [e[F.MQIACF_REASON_QUALIFIER] for e in events] == [
        F.MQRQ_SSL_CIPHER_SPEC_ERROR, F.MQRQ_SSL_CLIENT_AUTH_ERROR, F.MQRQ_SSL_PEER_NAME_ERROR,
        F.MQRQ_SSL_HANDSHAKE_ERROR]
    cipher, cauth, peer, handshake = events
    assert list(cipher) == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER, F.MQCACH_CHANNEL_NAME,
                            F.MQCACH_CONNECTION_NAME]
    assert cipher[F.MQCACH_CHANNEL_NAME] == b"TLS.REQ" and cipher[F.MQCACH_CONNECTION_NAME] == b"127.0.0.1"
    assert cauth[F.MQCACH_CHANNEL_NAME] == b"TLS.REQ"
    assert list(peer)[-1] == F.MQCACH_SSL_PEER_NAME and peer[F.MQCACH_SSL_PEER_NAME] == b"CN=other,OU=Payments,O=ferrymq"
    # The queue manager refused the foreign certificate in the handshake: no channel named yet.
    assert list(handshake) == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER, F.MQCACH_CONNECTION_NAME,
                               F.MQCACH_SSL_HANDSHAKE_STAGE, F.MQIACH_SSL_RETURN_CODE]
    assert handshake[F.MQCACH_SSL_HANDSHAKE_STAGE] == b"CERTIFICATE_VERIFY_FAILED", handshake
    assert handshake[F.MQIACH_SSL_RETURN_CODE] == 19, handshake  # X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN


async def test_a_revoked_certificate_is_refused_at_either_end(certs: Certs) -> None:
    def client_repo(name: str, issued: devcerts.Issued) -> KeyRepository:
        repo = KeyRepository(str(certs.data / "clients" / name))
        devcerts.write_signers(repo, certs.ca)
        devcerts.write_personal(repo, name, issued, certs.ca)
        return repo

    revoked = devcerts.issue(certs.ca, "CN=revoked,OU=Payments,O=ferrymq")
    kept = devcerts.issue(certs.ca, "CN=kept,OU=Payments,O=ferrymq")
    revoked_repo, kept_repo = client_repo("revoked", revoked), client_repo("kept", kept)
    server_repo = KeyRepository(str(certs.data / "ssl" / "key"))
    async with serving(certs) as srv:
        srv.qmgr.objects.alter_qmgr({"SSLEV": "ENABLED"})
        # Before the CRL: both connect.
        for repo, label in ((revoked_repo, "revoked"), (kept_repo, "kept")):
            async with await fc.connect_async("QM1", addr(srv), channel="TLS.REQ", tls=ClientTLS(repo.stem, ANY, label)):
                pass
        devcerts.write_crls(server_repo, devcerts.crl(certs.ca, revoked))
        try:
            detail = await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.REQ", ClientTLS(revoked_repo.stem, ANY,
                                                                                           "revoked"))
            assert "certificate" in detail, detail
            async with await fc.connect_async("QM1", addr(srv), channel="TLS.REQ",
                                              tls=ClientTLS(kept_repo.stem, ANY, "kept")):
                pass
            (event,) = await channel_events(srv)
            assert event[F.MQIACF_REASON_QUALIFIER] == F.MQRQ_SSL_HANDSHAKE_ERROR
            assert event[F.MQIACH_SSL_RETURN_CODE] == 23, event  # X509_V_ERR_CERT_REVOKED
        finally:
            server_repo.crls.unlink()
        # The client's own CRL revoking the queue manager's certificate: 2401.
        qm_cert = devcerts.issue(certs.ca, "CN=QM1,O=ferrymq")
        devcerts.write_personal(server_repo, default_label("QM1"), qm_cert, certs.ca)
        devcerts.write_crls(kept_repo, devcerts.crl(certs.ca, qm_cert))
        try:
            await refused(srv, C.MQRC_SSL_CERTIFICATE_REVOKED, "TLS.REQ", ClientTLS(kept_repo.stem, ANY, "kept"))
        finally:
            kept_repo.crls.unlink()
            certs.server()
        # A CRL file that is not one: the key repository is refused (2381 at the client).
        devcerts.write_crls(kept_repo, b"not a CRL")
        with pytest.raises(fc.MQError) as info:
            await fc.connect_async("QM1", addr(srv), channel="TLS.REQ", tls=ClientTLS(kept_repo.stem, ANY, "kept"))
        assert info.value.reason == C.MQRC_KEY_REPOSITORY_ERROR


async def test_cipherspecs_must_agree(certs: Certs) -> None:
    async with serving(certs) as srv:
        async with await fc.connect_async("QM1", addr(srv), channel="TLS.AES",
                                          tls=ClientTLS(certs.app, "TLS_RSA_WITH_AES_256_GCM_SHA384", "app")):
            (h,) = [h for h in srv.handlers if h.hconn]
            assert h.tls_peer is not None and h.tls_peer.suite == "AES256-GCM-SHA384"
        detail = await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.AES", ClientTLS(certs.app, "ANY_TLS13", "app"))
        assert "SSLCIPH(TLS_RSA_WITH_AES_256_GCM_SHA384)" in detail
        await refused(srv, C.MQRC_Q_MGR_NOT_AVAILABLE, "TLS.13", ClientTLS(certs.app, "ANY_TLS12", "app"))
        async with await fc.connect_async("QM1", addr(srv), channel="TLS.13", tls=ClientTLS(certs.app, "ANY_TLS13", "app")):
            pass
        await refused(srv, C.MQRC_SSL_INITIALIZATION_ERROR, "TLS.REQ", ClientTLS(certs.app, "TLS_RSA_WITH_RC4_128_MD5"))


async def test_key_repository_problems_are_2381(certs: Certs, tmp_path: Path) -> None:
    async with serving(certs) as srv:
        await refused(srv, C.MQRC_KEY_REPOSITORY_ERROR, "TLS.REQ", ClientTLS(str(tmp_path / "nothing"), ANY))
        loose = certs.client("loose", APP_DN)
        os.chmod(KeyRepository(loose).personal("loose"), 0o644)
        detail = await refused(srv, C.MQRC_KEY_REPOSITORY_ERROR, "TLS.REQ", ClientTLS(loose, ANY, "loose"))
        assert "chmod 600" in detail
        await refused(srv, C.MQRC_SSL_INITIALIZATION_ERROR, "TLS.REQ", ClientTLS(certs.app, ANY, "no-such-label"))


async def test_a_stalled_handshake_is_timed_out_and_freed(certs: Certs) -> None:
    async with serving(certs, handshake_timeout=0.5) as srv:
        srv.qmgr.objects.alter_qmgr({"SSLEV": "ENABLED"})
        loop = asyncio.get_running_loop()
        socks = []
        for first in (b"\x16\x03\x01\x02\x00\x01", b""):  # half a ClientHello; nothing at all
            sock = socket.socket()
            sock.setblocking(False)
            await loop.sock_connect(sock, ("127.0.0.1", srv.port))
            if first:
                await loop.sock_sendall(sock, first)
            socks.append(sock)
        await asyncio.sleep(0.2)
        lst = srv.listener
        assert lst is not None and len(lst.waiting) + len(lst.handshaking) + len(srv.handlers) == 2
        for sock in socks:  # each is ended by the server within the deadline and a tick
            started = time.monotonic()
            while True:
                try:
                    data = await asyncio.wait_for(loop.sock_recv(sock, 65536), 3)
                except ConnectionResetError:
                    break
                if not data:
                    break
            assert time.monotonic() - started < 3
            sock.close()
        await asyncio.sleep(0.1)
        assert not lst.waiting and not lst.handshaking and not srv.handlers
        # The half ClientHello is a TLS handshake the deadline ended: a Channel SSL Error
        # event (the silent socket never began TLS: none). A partner that gives up within
        # the deadline is not a time-out: none either.
        sock = socket.socket()
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", srv.port))
        await loop.sock_sendall(sock, b"\x16\x03\x01\x02\x00\x01")
        await asyncio.sleep(0.1)
        sock.close()
        await settled(srv)
        (timed_out,) = await channel_events(srv)
    assert list(timed_out) == [C.MQCA_Q_MGR_NAME, F.MQIACF_REASON_QUALIFIER, F.MQCACH_CONNECTION_NAME,
                               F.MQCACH_SSL_HANDSHAKE_STAGE, F.MQIACH_SSL_RETURN_CODE]
    assert timed_out[F.MQIACF_REASON_QUALIFIER] == F.MQRQ_SSL_HANDSHAKE_ERROR
    assert timed_out[F.MQCACH_SSL_HANDSHAKE_STAGE] == b"HANDSHAKE_TIMED_OUT"
    assert timed_out[F.MQIACH_SSL_RETURN_CODE] == errno.ETIMEDOUT
    assert timed_out[F.MQCACH_CONNECTION_NAME] == b"127.0.0.1"


async def test_pymqi_connects_over_tls_with_cd_and_sco(certs: Certs) -> None:
    async with serving(certs) as srv:

        def run() -> bytes:
            cd = pymqi.CD(ChannelName=b"TLS.PEER", ConnectionName=addr(srv).encode(), SSLCipherSpec=b"ANY_TLS12",
                          SSLPeerName=b"CN=QM1")
            sco = pymqi.SCO(KeyRepository=certs.app.encode(), CertificateLabel=b"app")
            qmgr = pymqi.QueueManager(None)
            qmgr.connect_with_options("QM1", cd, sco)
            try:
                q = pymqi.Queue(qmgr, "Q1")
                q.put(b"from pymqi")
                return bytes(q.get())
            finally:
                qmgr.disconnect()

        assert await asyncio.to_thread(run) == b"from pymqi"

        def no_repository() -> int:
            cd = pymqi.CD(ChannelName=b"TLS.REQ", ConnectionName=addr(srv).encode(), SSLCipherSpec=b"ANY_TLS12")
            try:
                pymqi.QueueManager(None).connect_with_options("QM1", cd)
            except pymqi.MQMIError as exc:
                return int(exc.reason)
            return 0

        os.environ.pop("MQSSLKEYR", None)
        assert await asyncio.to_thread(no_repository) == C.MQRC_KEY_REPOSITORY_ERROR


def test_dev_certs_from_the_cli_serve_a_queue_manager_process(tmp_path: Path) -> None:
    """``ferrymq tls create-dev-certs``: the files and their modes, then a TLS client of a real
    queue manager process on a channel with SSLCIPH, and SSLKEYR/CERTLABL set through MQSC."""
    qm = QueueManagerProcess(tmp_path, "QM1")
    doc = json.loads(qm._cli("tls", "create-dev-certs", "QM1", "--client", "app", "--output", "json"))
    ssl_dir = tmp_path / "qmgrs" / "QM1" / "ssl"
    assert doc["key_repository"] == str(ssl_dir / "key") and doc["certificate_label"] == "ibmwebspheremqqm1"
    assert stat.S_IMODE(ssl_dir.stat().st_mode) == 0o700
    for path in ssl_dir.rglob("*.pem"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    (client,) = doc["clients"]
    qm.start()
    try:
        qm.mqsc("DEFINE CHANNEL(APP.TLS) CHLTYPE(SVRCONN) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLPEER('CN=app')\n"
                "DEFINE QLOCAL(Q1)\n")
        tls = ClientTLS(client["key_repository"], "ANY_TLS13", client["certificate_label"])
        with fc.connect("QM1", qm.conn_name, channel="APP.TLS", tls=tls, user=ADMIN_USER, password=ADMIN_PASSWORD,
                        appl_name="app") as c:
            c.open("Q1").put(b"to a process")
        revoked = json.loads(qm._cli("tls", "revoke-dev-cert", "QM1", "--client", "app", "--output", "json"))
        assert revoked["crl"] == str(ssl_dir / "key.crl") and revoked["count"] == 1
        assert stat.S_IMODE((ssl_dir / "key.crl").stat().st_mode) == 0o600
        with pytest.raises(fc.MQError) as info:
            fc.connect("QM1", qm.conn_name, channel="APP.TLS", tls=tls, user=ADMIN_USER, password=ADMIN_PASSWORD)
        assert info.value.reason == C.MQRC_Q_MGR_NOT_AVAILABLE
        # Over TLS 1.3 the client has finished its handshake before the queue manager judges
        # the client's certificate: the refusal can reach the client before the log line is out.
        log = tmp_path / "qmgrs" / "QM1" / "ferrymq.log"
        deadline = time.monotonic() + 10
        while "certificate revoked" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "certificate revoked" in log.read_text()
        moved = tmp_path / "elsewhere" / "qm"
        moved.parent.mkdir()
        shutil.copy(ssl_dir / "key.pem", moved.with_suffix(".pem"))
        shutil.copy(ssl_dir / "key.ibmwebspheremqqm1.pem", moved.parent / "qm.mine.pem")
        out = qm.mqsc(f"ALTER QMGR SSLKEYR('{moved}') CERTLABL('mine')\nDISPLAY QMGR SSLKEYR CERTLABL\n")
        assert f"SSLKEYR({moved})" in out and "CERTLABL(mine)" in out
        with fc.connect("QM1", qm.conn_name, channel="APP.TLS", tls=tls, user=ADMIN_USER,
                        password=ADMIN_PASSWORD) as c:
            assert c.open("Q1").get(wait=5).data == b"to a process"
        qm.mqsc("ALTER QMGR CERTLABL(missing)\n")
        with pytest.raises(fc.MQError) as info:
            fc.connect("QM1", qm.conn_name, channel="APP.TLS", tls=tls, user=ADMIN_USER, password=ADMIN_PASSWORD)
        assert info.value.reason == C.MQRC_Q_MGR_NOT_AVAILABLE
        assert "event=tls_refused" in (tmp_path / "qmgrs" / "QM1" / "ferrymq.log").read_text()
    finally:
        qm.stop()


def test_encrypted_keys_at_both_ends_over_tcp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``create-dev-certs --encrypt``: a queue manager process whose key is encrypted (its stash
    file), a client whose key is too: by its stash file, by ClientTLS's key_repo_password and
    pymqi's MQSCO KeyRepoPassword (ahead of a wrong $MQKEYRPWD, as IBM's); wrong or missing: 2381,
    never the password in the reason; the queue manager's stash file gone: refused, back when
    it is."""
    monkeypatch.delenv("MQKEYRPWD", raising=False)
    qm = QueueManagerProcess(tmp_path, "QM1")
    doc = json.loads(qm._cli("tls", "create-dev-certs", "QM1", "--client", "app", "--encrypt", "--output", "json"))
    server_key = Path(doc["key_repository"] + "." + doc["certificate_label"] + ".pem")
    server_stash = Path(doc["key_repository"] + ".sth")
    (client,) = doc["clients"]
    repo = KeyRepository(client["key_repository"])
    assert b"ENCRYPTED PRIVATE KEY" in server_key.read_bytes()
    assert b"ENCRYPTED PRIVATE KEY" in repo.personal(client["certificate_label"]).read_bytes()
    password = repo.stash.read_bytes().splitlines()[0].decode()
    qm.start()
    try:
        qm.mqsc("DEFINE CHANNEL(APP.TLS) CHLTYPE(SVRCONN) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLPEER('CN=app')\n"
                "DEFINE QLOCAL(Q1)\n")

        def put(tls: ClientTLS, body: bytes) -> None:
            with fc.connect("QM1", qm.conn_name, channel="APP.TLS", tls=tls, user=ADMIN_USER,
                            password=ADMIN_PASSWORD) as c:
                c.open("Q1").put(body)

        def refused_with(tls: ClientTLS) -> fc.MQError:
            with pytest.raises(fc.MQError) as info:
                put(tls, b"never")
            return info.value

        tls = ClientTLS(repo.stem, "ANY_TLS13", client["certificate_label"])
        put(tls, b"by the stash file")
        repo.stash.unlink()  # the client's key can no longer be decrypted ...
        missing = refused_with(tls)
        assert missing.reason == C.MQRC_KEY_REPOSITORY_ERROR, missing
        wrong = refused_with(ClientTLS(repo.stem, "ANY_TLS13", client["certificate_label"], key_repo_password="nope"))
        assert wrong.reason == C.MQRC_KEY_REPOSITORY_ERROR and "nope" not in str(wrong) and "KeyRepoPassword" in str(wrong)
        given = ClientTLS(repo.stem, "ANY_TLS13", client["certificate_label"], key_repo_password=password)
        assert password not in repr(given)
        put(given, b"by key_repo_password")  # ... unless the program gives its password

        monkeypatch.setenv("MQKEYRPWD", "wrong")  # the MQSCO's password comes first

        def pymqi_put(sco_password: bytes) -> int:
            cd = pymqi.CD(ChannelName=b"APP.TLS", ConnectionName=qm.conn_name.encode(), SSLCipherSpec=b"ANY_TLS12")
            sco = pymqi.SCO(KeyRepository=repo.stem.encode(), CertificateLabel=client["certificate_label"].encode(),
                            KeyRepoPassword=sco_password)
            qmgr = pymqi.QueueManager(None)
            try:
                qmgr.connect_with_options("QM1", cd, sco, user=ADMIN_USER, password=ADMIN_PASSWORD)
            except pymqi.MQMIError as exc:
                return int(exc.reason)
            try:
                pymqi.Queue(qmgr, "Q1").put(b"by KeyRepoPassword")
            finally:
                qmgr.disconnect()
            return 0

        assert pymqi_put(password.encode()) == 0
        assert pymqi_put(b"") == C.MQRC_KEY_REPOSITORY_ERROR  # $MQKEYRPWD's wrong password
        monkeypatch.delenv("MQKEYRPWD")

        hidden = server_stash.with_suffix(".moved")
        server_stash.rename(hidden)  # the queue manager's key can no longer be decrypted
        assert refused_with(given).reason == C.MQRC_Q_MGR_NOT_AVAILABLE
        log = (tmp_path / "qmgrs" / "QM1" / "ferrymq.log").read_text()
        assert "event=tls_refused" in log and f"reason={C.MQRC_KEY_REPOSITORY_ERROR}" in log
        hidden.rename(server_stash)  # counted from the next connection, no restart
        put(given, b"stash file back")
        with fc.connect("QM1", qm.conn_name, channel="APP.TLS", tls=given, user=ADMIN_USER,
                        password=ADMIN_PASSWORD) as c:
            q = c.open("Q1")
            got = [q.get(wait=5).data for _ in range(4)]
        assert got == [b"by the stash file", b"by key_repo_password", b"by KeyRepoPassword", b"stash file back"]
    finally:
        qm.stop()
