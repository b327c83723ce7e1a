"""TLS for client connections: IBM MQ's MQCD SSLCipherSpec and SSLPeerName and MQSCO
KeyRepository and CertificateLabel, as ``ClientTLS``.

The client offers only what its CipherSpec allows and checks the queue manager's
certificate against the signer certificates of its key repository (``ferrymq.tls.keyrepo``;
host names are not checked: the peer name is MQ's check). It presents the personal
certificate of its label when the repository has one (the queue manager's channel decides
whether it needs one: SSLCAUTH, SSLPEER). Failures get IBM's reasons:

| what | reason |
|---|---|
| no key repository, a file that does not load, a private key others can read | 2381 MQRC_KEY_REPOSITORY_ERROR |
| an unknown or refused CipherSpec, a named certificate label missing, the queue manager's certificate not trusted or expired, a TLS 1.3 suite other than the one named | 2393 MQRC_SSL_INITIALIZATION_ERROR |
| an SSLPeerName that does not parse | 2399 MQRC_SSL_PEER_NAME_ERROR |
| the queue manager's certificate does not match SSLPeerName | 2398 MQRC_SSL_PEER_NAME_MISMATCH |
| the queue manager's certificate is revoked by a CRL in the client's key repository (``<stem>.crl``), or by the OCSP responder it names | 2401 MQRC_SSL_CERTIFICATE_REVOKED |
| the OCSP responder the queue manager's certificate names cannot say whether it is revoked, and ``ocsp_authentication`` is REQUIRED (IBM's default) | 2393 MQRC_SSL_INITIALIZATION_ERROR |
| the queue manager ended the handshake or the connection before answering the connect (it did not trust this client's certificate, no suite in common, no TLS there) | 2059 MQRC_Q_MGR_NOT_AVAILABLE |
"""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.tls import cipherspecs, names, ocsp
from ferrymq.tls.keyrepo import ContextCache, KeyRepository, default_label

log = logging.getLogger("ferrymq.client")
_CONTEXTS = ContextCache()
T = TypeVar("T")
X509_V_ERR_CERT_REVOKED = 23  # OpenSSL's verification code for a certificate a CRL revokes


def _failed(reason: int, detail: str) -> MQError:
    return MQError(C.MQCC_FAILED, reason, detail)


class TLSSocket(ssl.SSLSocket):
    """An SSLSocket that takes the blocking client's receive flags: MSG_DONTWAIT (a poll
    for what has arrived), and a receive bounded by SO_RCVTIMEO that ends without data
    raises BlockingIOError as a plain socket's does (client.sockwait)."""

    def recv(self, buflen: int = 1024, flags: int = 0) -> bytes:
        return self._taking(flags, lambda: super(TLSSocket, self).recv(buflen))

    def recv_into(self, buffer: Any, nbytes: int | None = None, flags: int = 0) -> int:
        """``recv``'s flags, reading into ``buffer`` (the rest of a large frame)."""
        return self._taking(flags, lambda: super(TLSSocket, self).recv_into(buffer, nbytes))

    def _taking(self, flags: int, read: Callable[[], T]) -> T:
        try:
            if flags & socket.MSG_DONTWAIT and not self.pending():
                self.setblocking(False)
                try:
                    return read()
                finally:
                    self.setblocking(True)
            return read()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise BlockingIOError("no TLS record complete yet") from None


@dataclass(frozen=True, slots=True)
class ClientTLS:
    """TLS settings of a client connection.

    ``key_repository``: the stem of the key repository (``~/ssl/client`` for
    ``~/ssl/client.pem`` and ``~/ssl/client.<label>.pem``); ``cipher_spec``: an IBM
    CipherSpec (default: any of TLS 1.2 and 1.3); ``certificate_label``: the personal
    certificate to present (blank: ``ibmwebspheremq<user>``, if there is one);
    ``peer_name``: an SSLPEER pattern the queue manager's certificate must match;
    ``key_repo_password``: the password of an encrypted private key (the MQSCO's
    KeyRepoPassword; blank: ``$MQKEYRPWD``, else the repository's stash file), never shown
    in the repr; ``ocsp_check_extensions``, ``ocsp_authentication``: IBM's mqclient.ini SSL
    stanza OCSPCheckExtensions (ask the OCSP responder the queue manager's certificate names)
    and OCSPAuthentication (REQUIRED, WARN: a log line, OPTIONAL) when it cannot say.
    """

    key_repository: str
    cipher_spec: str = "ANY_TLS12_OR_HIGHER"
    certificate_label: str = ""
    peer_name: str = ""
    key_repo_password: str = field(default="", repr=False)
    ocsp_check_extensions: bool = True
    ocsp_authentication: str = ocsp.REQUIRED

    def context(self, user: str = "") -> ssl.SSLContext:
        """Raises: MQError 2381, 2393 or 2399 (see the module docstring)."""
        spec = cipherspecs.lookup(self.cipher_spec)
        if spec is None:
            raise _failed(C.MQRC_SSL_INITIALIZATION_ERROR, cipherspecs.problem(self.cipher_spec) or "no CipherSpec")
        why = names.problem(self.peer_name)
        if why is not None:
            raise _failed(C.MQRC_SSL_PEER_NAME_ERROR, why)
        label = self.certificate_label.strip()
        repo = KeyRepository.at(self.key_repository)
        ctx = _CONTEXTS.client(repo, label or default_label(user), spec, label_required=bool(label),
                               password=self.key_repo_password.encode())
        ctx.sslsocket_class = TLSSocket
        return ctx

    def check(self, tls: object) -> names.TLSPeer:
        """After the handshake: the suite against a TLS 1.3 CipherSpec, the queue manager's
        certificate against ``peer_name``.

        Raises:
            MQError: 2393, 2398.
        """
        peer = names.peer_of(tls)
        spec = cipherspecs.lookup(self.cipher_spec)
        if spec is not None and not spec.accepts(peer.version, peer.suite):
            raise _failed(C.MQRC_SSL_INITIALIZATION_ERROR, f"CipherSpec {spec.name}: the queue manager "
                                                           f"negotiated {peer.suite} over {peer.version}")
        pattern = names.parse(self.peer_name)
        if pattern is not None and not pattern.matches(list(peer.pairs)):
            raise _failed(C.MQRC_SSL_PEER_NAME_MISMATCH, f"the queue manager's certificate {peer.dn!r} does not "
                                                         f"match SSLPeerName {self.peer_name.strip()!r}")
        return peer

    def wants_revocation_check(self, tls: ssl.SSLObject | ssl.SSLSocket) -> bool:
        """Whether ``revocation`` would ask an OCSP responder (the async client then asks
        on a thread)."""
        cert = tls.getpeercert(binary_form=True)
        return bool(cert) and self.ocsp_check_extensions and ocsp.may_name_responder(cert or b"")

    def revocation(self, tls: ssl.SSLObject | ssl.SSLSocket) -> None:
        """The queue manager's certificate's revocation status by OCSP (``tls.ocsp``), when it
        names a responder. Blocks for the look-up.

        Raises:
            MQError: 2401 revoked; 2393 not known under OCSPAuthentication REQUIRED.
        """
        cert = tls.getpeercert(binary_form=True)
        if not cert or not self.wants_revocation_check(tls):
            return
        # A value IBM does not know is its default, silently, as mqclient.ini's SSL stanza is read.
        chosen = self.ocsp_authentication.strip().upper()
        policy = ocsp.OCSPPolicy(True, chosen if chosen in ocsp.AUTHENTICATION else ocsp.REQUIRED)
        verdict = ocsp.check(cert, KeyRepository.at(self.key_repository).signers, policy)
        if verdict is None or verdict.status == ocsp.GOOD:
            return
        if verdict.status == ocsp.REVOKED:
            raise _failed(C.MQRC_SSL_CERTIFICATE_REVOKED, f"the queue manager's certificate is revoked "
                                                          f"(OCSP, {verdict.url}): {verdict.detail}")
        if policy.authentication == ocsp.REQUIRED:
            raise _failed(C.MQRC_SSL_INITIALIZATION_ERROR, "the queue manager's certificate's revocation status "
                                                           f"is not known (OCSPAuthentication REQUIRED): {verdict.detail}")
        if policy.authentication == ocsp.WARN:
            log.warning("event=tls_revocation_unknown peer_dn=%r detail=%r", names.peer_of(tls).dn, verdict.detail)

    def wrap(self, sock: socket.socket, host: str, user: str = "") -> socket.socket:
        """The TLS handshake over a connected socket (within its timeout), checked; the
        socket to use from then on. ``sock`` is closed when it fails.

        Raises:
            MQError: see the module docstring.
        """
        try:
            tls = self.context(user).wrap_socket(sock, server_hostname=host or None)
        except MQError:
            sock.close()
            raise
        except (OSError, ValueError) as exc:
            sock.close()
            raise handshake_failed(exc) from None
        try:
            self.check(tls)
            self.revocation(tls)
        except MQError:
            tls.close()
            raise
        return tls


def handshake_failed(exc: BaseException) -> MQError:
    """A failed handshake as the reason an IBM MQ client gives."""
    if isinstance(exc, ssl.SSLCertVerificationError) and exc.verify_code == X509_V_ERR_CERT_REVOKED:
        return _failed(C.MQRC_SSL_CERTIFICATE_REVOKED, f"the queue manager's certificate is revoked: {exc.verify_message}")
    if isinstance(exc, ssl.SSLCertVerificationError):
        return _failed(C.MQRC_SSL_INITIALIZATION_ERROR,
                       f"the queue manager's certificate is not accepted: {exc.verify_message or exc}")
    return _failed(C.MQRC_Q_MGR_NOT_AVAILABLE, f"the queue manager ended the TLS handshake: {exc!r}")


def connect_lost(exc: MQError) -> MQError:
    """The connection ended before the CONNECT was answered, after a TLS handshake the client
    thought complete: with TLS 1.3 the queue manager checks the client's certificate after
    the client has finished, so that refusal arrives as the end of the connection."""
    return _failed(C.MQRC_Q_MGR_NOT_AVAILABLE, f"the queue manager ended the TLS connection before answering "
                                               f"the connect (it may not accept this client's certificate): "
                                               f"{exc.detail}")
