"""The OCSP look-up itself (``ferrymq.tls.ocsp`` describes the rules): request, answer,
and whether to believe it."""

from __future__ import annotations

import datetime as dt
import os
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509 import ocsp
from cryptography.x509.oid import AuthorityInformationAccessOID, ExtendedKeyUsageOID

from ferrymq.tls.ocsp import (
    GOOD,
    REVOKED,
    UNKNOWN,
    X509_V_ERR_CERT_REVOKED,
    X509_V_ERR_OCSP_CERT_UNKNOWN,
    X509_V_ERR_OCSP_VERIFY_FAILED,
    OCSPPolicy,
    Verdict,
)

MAX_RESPONSE = 64 * 1024  # an OCSP answer for one certificate is a few KiB; more is not read
CLOCK_SKEW = dt.timedelta(minutes=5)
# No proxy from the environment (http_proxy): IBM's responder look-ups go through a proxy
# only when SSLHTTPProxyName names one, which ferrymq does not offer.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def responder_urls(cert: x509.Certificate) -> list[str]:
    """The OCSP responders the certificate's AuthorityInfoAccess extension names."""
    try:
        aia = cert.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
    except x509.ExtensionNotFound:
        return []
    return [d.access_location.value for d in aia
            if d.access_method == AuthorityInformationAccessOID.OCSP
            and isinstance(d.access_location, x509.UniformResourceIdentifier)
            and d.access_location.value.lower().startswith(("http://", "https://"))]


def issuer_of(cert: x509.Certificate, signers: Iterable[x509.Certificate]) -> x509.Certificate | None:
    for candidate in signers:
        if candidate.subject == cert.issuer:
            try:
                cert.verify_directly_issued_by(candidate)
            except (ValueError, TypeError, InvalidSignature):
                continue
            return candidate
    return None


def load_signers(path: Path) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(path.read_bytes())
    except (OSError, ValueError):
        return []


def check(cert_der: bytes, signers: Path, policy: OCSPPolicy) -> Verdict | None:
    """``ferrymq.tls.ocsp.check``."""
    try:
        cert = x509.load_der_x509_certificate(cert_der)
    except ValueError:
        return None
    urls = responder_urls(cert)
    if not urls:
        return None
    issuer = issuer_of(cert, load_signers(signers))
    if issuer is None:
        return Verdict(UNKNOWN, X509_V_ERR_OCSP_VERIFY_FAILED,
                       f"the issuer of {cert.subject.rfc4514_string()} is not among the key repository's "
                       f"signer certificates ({signers})", urls[0])
    last = Verdict(UNKNOWN, X509_V_ERR_OCSP_VERIFY_FAILED, "no responder", urls[0])
    for url in urls:  # the first one that gives a usable answer decides
        last = _ask(url, cert, issuer, policy.timeout)
        if last.status != UNKNOWN or last.code == X509_V_ERR_OCSP_CERT_UNKNOWN:
            return last
    return last


def _ask(url: str, cert: x509.Certificate, issuer: x509.Certificate, timeout: float) -> Verdict:
    nonce = os.urandom(16)
    request = (ocsp.OCSPRequestBuilder().add_certificate(cert, issuer, hashes.SHA1())
               .add_extension(x509.OCSPNonce(nonce), critical=False).build())
    http = urllib.request.Request(url, data=request.public_bytes(serialization.Encoding.DER), method="POST",
                                  headers={"Content-Type": "application/ocsp-request",
                                           "Accept": "application/ocsp-response"})

    def failed(why: str) -> Verdict:
        return Verdict(UNKNOWN, X509_V_ERR_OCSP_VERIFY_FAILED, why, url)

    try:
        with _OPENER.open(http, timeout=timeout) as answer:
            body = answer.read(MAX_RESPONSE + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return failed(f"OCSP responder {url} not reached: {exc}")
    if len(body) > MAX_RESPONSE:
        return failed(f"OCSP responder {url} answered more than {MAX_RESPONSE} bytes")
    try:
        response = ocsp.load_der_ocsp_response(body)
    except ValueError as exc:
        return failed(f"OCSP responder {url} answered something that is not an OCSP response: {exc}")
    if response.response_status != ocsp.OCSPResponseStatus.SUCCESSFUL:
        return failed(f"OCSP responder {url} answered {response.response_status.name}")
    why = _unverified(response, cert, issuer, nonce)
    if why is not None:
        return failed(f"OCSP responder {url}: {why}")
    status = response.certificate_status
    if status == ocsp.OCSPCertStatus.GOOD:
        return Verdict(GOOD, 0, "good", url)
    if status == ocsp.OCSPCertStatus.REVOKED:
        return Verdict(REVOKED, X509_V_ERR_CERT_REVOKED,
                       f"revoked at {response.revocation_time_utc:%Y-%m-%d %H:%M:%S} UTC", url)
    return Verdict(UNKNOWN, X509_V_ERR_OCSP_CERT_UNKNOWN, f"OCSP responder {url} does not know the certificate", url)


def _unverified(response: ocsp.OCSPResponse, cert: x509.Certificate, issuer: x509.Certificate,
                nonce: bytes) -> str | None:
    """Why ``response`` is not to be believed about ``cert``; None when it is."""
    signer = issuer
    if response.certificates and response.certificates[0].subject != issuer.subject:
        signer = response.certificates[0]  # a delegated responder: the issuer must have made it one
        try:
            signer.verify_directly_issued_by(issuer)
            purposes = signer.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
            return "signed by a certificate the issuer did not make an OCSP responder"
        if ExtendedKeyUsageOID.OCSP_SIGNING not in purposes:
            return "signed by a certificate without the OCSPSigning purpose"
    key = signer.public_key()
    algorithm = response.signature_hash_algorithm
    try:
        if isinstance(key, rsa.RSAPublicKey) and algorithm is not None:
            key.verify(response.signature, response.tbs_response_bytes, padding.PKCS1v15(), algorithm)
        elif isinstance(key, ec.EllipticCurvePublicKey) and algorithm is not None:
            key.verify(response.signature, response.tbs_response_bytes, ec.ECDSA(algorithm))
        else:
            return "signed with a key or algorithm not supported"
    except InvalidSignature:
        return "the signature does not verify"
    if response.serial_number != cert.serial_number:
        return "the answer is about another certificate"
    expect = ocsp.OCSPRequestBuilder().add_certificate(cert, issuer, response.hash_algorithm).build()
    if (response.issuer_key_hash, response.issuer_name_hash) != (expect.issuer_key_hash, expect.issuer_name_hash):
        return "the answer is about another issuer's certificate"
    now = dt.datetime.now(dt.UTC)
    if response.this_update_utc > now + CLOCK_SKEW:
        return "the answer is dated in the future"
    if response.next_update_utc is not None and response.next_update_utc < now - CLOCK_SKEW:
        return "the answer is out of date"
    try:
        echoed = response.extensions.get_extension_for_class(x509.OCSPNonce).value.nonce
    except x509.ExtensionNotFound:
        return None  # many responders do not echo nonces (they answer from a cache): allowed
    return None if echoed == nonce else "the nonce does not match the request's"
