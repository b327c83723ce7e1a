"""Certificates for development and tests: a CA, and certificates it signs, written as
key repositories (``keyrepo``). Not for production: keys are unencrypted RSA 2048 kept in
files (0600), and the CA is whoever holds its key file.

Uses the ``cryptography`` package (a dependency of ferrymq), imported only here.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import AuthorityInformationAccessOID, ExtendedKeyUsageOID, NameOID

from ferrymq.tls.keyrepo import KeyRepository

_ATTRS = {"CN": NameOID.COMMON_NAME, "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "O": NameOID.ORGANIZATION_NAME,
          "L": NameOID.LOCALITY_NAME, "ST": NameOID.STATE_OR_PROVINCE_NAME, "C": NameOID.COUNTRY_NAME}


@dataclass(frozen=True, slots=True)
class Issued:
    """A certificate and its private key."""

    cert: x509.Certificate
    key: rsa.RSAPrivateKey

    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def key_pem(self, password: bytes = b"") -> bytes:
        """The private key in PEM (PKCS#8), encrypted with ``password`` when one is given."""
        how: serialization.KeySerializationEncryption = (
            serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption())
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, how)


def name(dn: str) -> x509.Name:
    """``CN=app,OU=Payments,O=Bank`` (most specific first, IBM's order) as an x509 name
    (stored most general first, as certificates list it)."""
    parts = [p.strip().split("=", 1) for p in dn.split(",") if p.strip()]
    return x509.Name([x509.NameAttribute(_ATTRS[k.strip().upper()], v.strip()) for k, v in reversed(parts)])


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def new_ca(dn: str = "CN=ferrymq development CA,O=ferrymq", *, days: int = 365) -> Issued:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = name(dn)
    now = _now()
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return Issued(cert, key)


def issue(ca: Issued, dn: str, *, days: int = 365, hosts: Iterable[str] = (),
          not_before: dt.datetime | None = None, not_after: dt.datetime | None = None,
          ocsp_urls: Iterable[str] = ()) -> Issued:
    """A certificate for ``dn`` signed by ``ca``, good for both ends of a connection (a
    queue manager's certificate serves its listener and its sender channels). ``hosts``:
    subject alternative names. ``not_before``/``not_after`` override the validity (tests
    make expired certificates with them). ``ocsp_urls``: OCSP responders named in an
    AuthorityInfoAccess extension (checked by the other end, docs/security.md)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = _now()
    builder = (x509.CertificateBuilder().subject_name(name(dn)).issuer_name(ca.cert.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before or now - dt.timedelta(minutes=5))
               .not_valid_after(not_after or now + dt.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                     ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    aia = [x509.AccessDescription(AuthorityInformationAccessOID.OCSP, x509.UniformResourceIdentifier(url))
           for url in ocsp_urls]
    if aia:
        builder = builder.add_extension(x509.AuthorityInformationAccess(aia), critical=False)
    return Issued(builder.sign(ca.key, hashes.SHA256()), key)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT
        os.write(fd, data)
    finally:
        os.close(fd)


def write_signers(repo: KeyRepository, *signers: Issued) -> Path:
    """Write the certificates ``repo`` trusts (replacing what was there)."""
    _write(repo.signers, b"".join(s.cert_pem() for s in signers))
    return repo.signers


def write_personal(repo: KeyRepository, label: str, issued: Issued, *chain: Issued, password: bytes = b"") -> Path:
    """Write the personal certificate ``label``: ``issued``'s certificate, the ``chain``
    certificates above it, and its private key (0600), encrypted with ``password`` when one
    is given, which then goes in the repository's stash file (0600)."""
    path = repo.personal(label)
    _write(path, issued.cert_pem() + b"".join(c.cert_pem() for c in chain) + issued.key_pem(password))
    if password:
        _write(repo.stash, password + b"\n")
    return path


def crl(ca: Issued, *revoked: Issued, serials: Iterable[int] = (), days: int = 30) -> bytes:
    """A certificate revocation list, signed by ``ca``, revoking ``revoked`` and the
    certificates of ``serials`` (PEM)."""
    now = _now()
    builder = (x509.CertificateRevocationListBuilder().issuer_name(ca.cert.subject)
               .last_update(now - dt.timedelta(minutes=5)).next_update(now + dt.timedelta(days=days)))
    for serial in sorted({*serials, *(issued.cert.serial_number for issued in revoked)}):
        builder = builder.add_revoked_certificate(
            x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(now - dt.timedelta(minutes=5)).build())
    return builder.sign(ca.key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def revoked_by(pem: bytes, ca: Issued) -> set[int]:
    """The serial numbers ``ca``'s lists in ``pem`` (a ``.crl`` file) revoke.

    Raises: ValueError (not PEM CRLs)."""
    out: set[int] = set()
    marker = b"-----END X509 CRL-----"
    for part in pem.split(marker)[:-1]:
        listed = x509.load_pem_x509_crl(part + marker)
        if listed.issuer == ca.cert.subject:
            out |= {entry.serial_number for entry in listed}
    return out


def load_certificate(path: Path) -> x509.Certificate:
    """The first certificate of a PEM file (a personal certificate's own). Raises: OSError, ValueError."""
    return x509.load_pem_x509_certificate(path.read_bytes())


def write_crls(repo: KeyRepository, *crls: bytes) -> Path:
    """Write the revocation lists ``repo`` checks certificates against (replacing what was there)."""
    _write(repo.crls, b"".join(crls))
    return repo.crls


def save_ca(path: Path, ca: Issued) -> None:
    """The CA's certificate and key in one file (0600), for ``load_ca``."""
    _write(path, ca.cert_pem() + ca.key_pem())


def load_ca(path: Path) -> Issued:
    """Raises: OSError, ValueError (not a CA file ``save_ca`` wrote)."""
    data = path.read_bytes()
    cert = x509.load_pem_x509_certificate(data)
    key = serialization.load_pem_private_key(data, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError(f"{path}: not an RSA key")
    return Issued(cert, key)
