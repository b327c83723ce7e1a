"""Certificate revocation by OCSP (RFC 6960), as IBM MQ checks a partner's certificate.

IBM MQ asks the OCSP responder a certificate's AuthorityInfoAccess extension names, unless
the SSL stanza of qm.ini says ``OCSPCheckExtensions=NO``; what happens when the answer is
neither GOOD nor REVOKED (the responder says UNKNOWN, cannot be reached, or its answer cannot
be verified: IBM's AMQ9716) is ``OCSPAuthentication``: REQUIRED (the default) refuses the
connection, WARN lets it run with a Channel SSL Warning event, OPTIONAL lets it run.

``check`` does one look-up and never raises: it builds the request (SHA-1 certificate ID,
as responders expect, and a nonce), posts it over HTTP (``http://`` and ``https://`` URLs
only, a bounded answer, a time-out), and believes the answer only when it is signed by the
certificate's issuer or by a responder certificate that issuer gave the OCSPSigning purpose,
is about this certificate, is current, and echoes the nonce when it carries one. The issuer
must be among the key repository's signer certificates (``<stem>.pem``): Python's ``ssl``
does not show the chain the partner sent. It blocks: the server runs it on a thread.

Verdicts carry OpenSSL's X.509 verification codes, as Channel SSL Error events do for
other certificate failures: 23 revoked, 75 the responder does not know it, 74 no usable
answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REQUIRED, WARN, OPTIONAL = "REQUIRED", "WARN", "OPTIONAL"
AUTHENTICATION = (REQUIRED, WARN, OPTIONAL)  # IBM's OCSPAuthentication values
GOOD, REVOKED, UNKNOWN = "GOOD", "REVOKED", "UNKNOWN"
X509_V_ERR_CERT_REVOKED = 23
X509_V_ERR_OCSP_VERIFY_FAILED = 74
X509_V_ERR_OCSP_CERT_UNKNOWN = 75
STAGE = "OCSP_CHECK"  # the Channel SSL Error event's SSLHandshakeStage for a refusal by OCSP


@dataclass(frozen=True, slots=True)
class OCSPPolicy:
    """IBM's SSL stanza settings: ``check_extensions`` (OCSPCheckExtensions YES/NO) and
    ``authentication`` (OCSPAuthentication), with the look-up's time-out in seconds."""

    check_extensions: bool = True
    authentication: str = REQUIRED
    timeout: float = 5.0

    def __post_init__(self) -> None:
        if self.authentication not in AUTHENTICATION:
            raise ValueError(f"OCSPAuthentication is REQUIRED, WARN or OPTIONAL, not {self.authentication!r}")


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str  # GOOD, REVOKED or UNKNOWN (UNKNOWN also: no usable answer)
    code: int  # 0 for GOOD, else an X.509 verification code (module docstring)
    detail: str
    url: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a queue manager does about a verdict that is not GOOD: ``refuse`` the partner
    (REVOKED, or not known under REQUIRED), else let it on, with a Channel SSL Warning event
    when ``warn`` (WARN)."""

    verdict: Verdict
    refuse: bool
    warn: bool


def outcome(verdict: Verdict | None, policy: OCSPPolicy) -> Outcome | None:
    """None when the partner goes on without a word (nothing asked, or GOOD)."""
    if verdict is None or verdict.status == GOOD:
        return None
    if verdict.status == REVOKED or policy.authentication == REQUIRED:
        return Outcome(verdict, refuse=True, warn=False)
    return Outcome(verdict, refuse=False, warn=policy.authentication == WARN)


# DER of the AuthorityInfoAccess extension's OID (1.3.6.1.5.5.7.1.1): a certificate without
# these bytes names no responder, and is not parsed or sent to a thread at all.
_AIA_OID = bytes.fromhex("06082b06010505070101")


def may_name_responder(cert_der: bytes) -> bool:
    return _AIA_OID in cert_der


def check(cert_der: bytes, signers: Path, policy: OCSPPolicy) -> Verdict | None:
    """The revocation status of the DER certificate ``cert_der`` by OCSP; None when there is
    nothing to ask (no responder named, or ``check_extensions`` off). Blocks (a look-up);
    never raises."""
    if not policy.check_extensions:
        return None
    from ferrymq.tls import ocsp_lookup  # cryptography's x509 costs 0.1 s to import: only when asked

    return ocsp_lookup.check(cert_der, signers, policy)
