"""A channel definition's TLS attributes applied to what a handshake agreed: one rule for
the queue manager's server-connection channels and for its receiving message channels.

- SSLCIPH blank: the connection must not use TLS; set: it must, with what the CipherSpec
  accepts (``cipherspecs.CipherSpec.accepts``), as IBM MQ checks at channel start;
- SSLCAUTH(REQUIRED): the caller must have sent a certificate (any certificate sent has
  already been checked against the signers by the handshake);
- SSLPEER: the caller's certificate subject must match the pattern.
"""

from __future__ import annotations

import errno
import ssl

from ferrymq.mq import cfc as F
from ferrymq.tls import cipherspecs, names
from ferrymq.tls.names import TLSPeer

# The Channel SSL Error event's ReasonQualifier for each rule ``refusal`` names.
QUALIFIER = {"SSLCIPH": F.MQRQ_SSL_CIPHER_SPEC_ERROR, "SSLCAUTH": F.MQRQ_SSL_CLIENT_AUTH_ERROR,
             "SSLPEER": F.MQRQ_SSL_PEER_NAME_ERROR}

HANDSHAKE_TIMED_OUT = "HANDSHAKE_TIMED_OUT"  # SSLHandshakeStage of a handshake the deadline ended


def handshake_failure(exc: BaseException) -> tuple[str, int]:
    """What a failed handshake tells a Channel SSL Error event: the stage (OpenSSL's reason,
    ``CERTIFICATE_VERIFY_FAILED``, where IBM names its TLS library's call) and a return code
    (the X.509 verification code for a certificate refused, such as 10 expired or 23 revoked;
    else OpenSSL's error number; a handshake not finished in time: ``HANDSHAKE_TIMED_OUT``
    and ETIMEDOUT)."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return str(exc.reason or "CERTIFICATE_VERIFY_FAILED"), int(exc.verify_code or 0)
    if isinstance(exc, ssl.SSLError):
        return str(exc.reason or type(exc).__name__), int(exc.errno or 0)
    if isinstance(exc, TimeoutError):  # the listener's handshake_timeout: ETIMEDOUT, as the OS says it
        return HANDSHAKE_TIMED_OUT, int(exc.errno or errno.ETIMEDOUT)
    return type(exc).__name__, 0


def refusal(channel: str, sslciph: str, sslcauth: int, sslpeer: str, peer: TLSPeer | None) -> tuple[str, str] | None:
    """(rule, why) when a connection over ``peer`` (None: plain TCP) may not run channel
    ``channel`` with these attributes; None when it may."""
    sslciph = sslciph.strip()
    if not sslciph:
        if peer is not None:
            return "SSLCIPH", f"channel {channel} does not use TLS (SSLCIPH is blank) but the caller connected with TLS"
        return None
    if peer is None:
        return "SSLCIPH", f"channel {channel} requires TLS (SSLCIPH({sslciph})) but the caller connected without it"
    spec = cipherspecs.lookup(sslciph)
    if spec is None or not spec.accepts(peer.version, peer.suite):
        return "SSLCIPH", (f"channel {channel} requires SSLCIPH({sslciph}); the caller negotiated "
                           f"{peer.suite} over {peer.version}")
    if not peer.dn and sslcauth == F.MQSCA_REQUIRED:
        return "SSLCAUTH", f"channel {channel} requires the caller's certificate (SSLCAUTH(REQUIRED)); none was sent"
    return peer_refusal(channel, sslpeer, peer)


def peer_refusal(channel: str, sslpeer: str, peer: TLSPeer) -> tuple[str, str] | None:
    """(``"SSLPEER"``, why) when the peer's certificate does not match ``sslpeer``."""
    try:
        pattern = names.parse(sslpeer)
    except names.PeerNameError as exc:  # a definition from before the rule: it protects nothing
        return "SSLPEER", f"channel {channel}: {exc}"
    if pattern is not None and not pattern.matches(list(peer.pairs)):
        return "SSLPEER", (f"channel {channel} accepts SSLPEER({sslpeer.strip()}); "
                           f"the peer's certificate is {peer.dn or 'absent'!r}")
    return None
