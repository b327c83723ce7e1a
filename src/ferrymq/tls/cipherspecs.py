"""IBM MQ CipherSpecs: the names SSLCIPH and the MQCD's SSLCipherSpec take, mapped onto
OpenSSL (through Python's ``ssl``).

ferrymq speaks TLS 1.2 and 1.3 only: IBM's SSL 3.0, TLS 1.0 and 1.1 CipherSpecs, and its
NULL (unencrypted) ones, are not accepted anywhere (a channel definition naming one is
refused with MQRCCF_SSL_CIPHER_SPEC_ERROR, a client naming one gets 2393).

A CipherSpec is either one cipher suite (``TLS_RSA_WITH_AES_256_GCM_SHA384``: exactly that
suite, at its protocol version) or an alias (IBM's ``ANY``, ``ANY_TLS12``, ``ANY_TLS13``,
``ANY_TLS12_OR_HIGHER``, ``ANY_TLS13_OR_HIGHER``: any suite of the versions it names). The
calling end (a client, a sender channel) offers only what its CipherSpec allows; the
responding end (the queue manager's listener) accepts any suite ferrymq supports, then
compares what was negotiated with the channel definition's SSLCIPH (``accepts``), as IBM MQ
does at channel start-up: a mismatch ends the channel (IBM's AMQ9631).

Python's ``ssl`` cannot narrow the TLS 1.3 suites a context offers (``set_ciphers`` governs
TLS 1.2 and below), so a single TLS 1.3 CipherSpec pins the version and is checked after
the handshake by both ends.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

TLS12, TLS13 = "TLSv1.2", "TLSv1.3"


@dataclass(frozen=True, slots=True)
class CipherSpec:
    """``name``: IBM's; ``versions``: the protocol versions it allows; ``suite``: the one
    cipher suite (OpenSSL's name, or IANA's for TLS 1.3) or blank for an alias."""

    name: str
    versions: tuple[str, ...]
    suite: str = ""

    @property
    def minimum(self) -> ssl.TLSVersion:
        return ssl.TLSVersion.TLSv1_2 if TLS12 in self.versions else ssl.TLSVersion.TLSv1_3

    @property
    def maximum(self) -> ssl.TLSVersion:
        return ssl.TLSVersion.TLSv1_3 if TLS13 in self.versions else ssl.TLSVersion.TLSv1_2

    def accepts(self, version: str, suite: str) -> bool:
        """Whether a connection that negotiated ``version`` and ``suite`` (what
        ``SSLObject.version()`` and ``cipher()[0]`` say) satisfies this CipherSpec."""
        return version in self.versions and (not self.suite or suite == self.suite)


_TLS12_SUITES = {
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA256": "AES256-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "ECDHE_RSA_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "ECDHE_RSA_AES_256_CBC_SHA384": "ECDHE-RSA-AES256-SHA384",
    "ECDHE_RSA_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE_RSA_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE_RSA_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "ECDHE_ECDSA_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "ECDHE_ECDSA_AES_256_CBC_SHA384": "ECDHE-ECDSA-AES256-SHA384",
    "ECDHE_ECDSA_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE_ECDSA_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE_ECDSA_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}
_TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
_ALIASES = {
    "ANY": (TLS12, TLS13),
    "ANY_TLS12": (TLS12,),
    "ANY_TLS12_OR_HIGHER": (TLS12, TLS13),
    "ANY_TLS13": (TLS13,),
    "ANY_TLS13_OR_HIGHER": (TLS13,),
}

CIPHER_SPECS: dict[str, CipherSpec] = {
    **{name: CipherSpec(name, versions) for name, versions in _ALIASES.items()},
    **{name: CipherSpec(name, (TLS12,), suite) for name, suite in _TLS12_SUITES.items()},
    **{name: CipherSpec(name, (TLS13,), name) for name in _TLS13_SUITES},
}

TLS12_CIPHERS = ":".join(_TLS12_SUITES.values())
"""Every TLS 1.2 suite ferrymq speaks, for ``SSLContext.set_ciphers`` (the responding end)."""


_BY_SUITE = {suite: name for name, suite in _TLS12_SUITES.items()} | {name: name for name in _TLS13_SUITES}


def negotiated(suite: str) -> str:
    """IBM's CipherSpec name for a suite a handshake agreed (OpenSSL's name for TLS 1.2,
    IANA's for 1.3): what DISPLAY CHSTATUS's SSLCIPH shows; the suite itself if unnamed."""
    return _BY_SUITE.get(suite, suite)


def lookup(name: str) -> CipherSpec | None:
    """The CipherSpec an SSLCIPH value names (blanks and case ignored); None if ferrymq has
    no such CipherSpec (an unknown name, or a protocol or cipher it refuses)."""
    return CIPHER_SPECS.get(name.strip().upper())


def problem(name: str) -> str | None:
    """Why ``name`` cannot be an SSLCIPH value (None: blank, or a CipherSpec ferrymq has)."""
    if not name.strip() or lookup(name) is not None:
        return None
    return (f"SSLCIPH({name.strip()}) is not a CipherSpec ferrymq supports: TLS 1.2 and 1.3 only, "
            f"for example ANY_TLS12_OR_HIGHER, ANY_TLS13, TLS_AES_256_GCM_SHA384, "
            f"TLS_RSA_WITH_AES_256_GCM_SHA384 (docs/security.md has the list)")


def narrow(context: ssl.SSLContext, spec: CipherSpec) -> None:
    """Make ``context`` (the calling end's) offer only what ``spec`` allows."""
    context.minimum_version, context.maximum_version = spec.minimum, spec.maximum
    if TLS12 in spec.versions:
        context.set_ciphers(spec.suite if spec.suite and spec.versions == (TLS12,) else TLS12_CIPHERS)
