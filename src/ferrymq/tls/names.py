"""Distinguished names as IBM MQ shows them, and its SSLPEER patterns.

A certificate's subject (as ``SSLObject.getpeercert()`` gives it) is shown most specific
first, attributes by IBM's short names, joined by commas: ``CN=app1,OU=Payments,O=Bank,C=GB``
(what DISPLAY CHSTATUS's SSLPEER shows and what SSLPEERMAP rules match).

An SSLPEER value (the channel's SSLPEER, the MQCD's SSLPeerName) is a list of
``ATTR=value`` separated by commas or semicolons; values may be "quoted", and a ``*`` in a
value stands for any characters (IBM allows it at either end or as the whole value; ferrymq
allows it anywhere). Attribute names are IBM's (CN, T, OU, O, L, ST (or SP, S), C,
SERIALNUMBER, MAIL (or E, EMAIL), UID (or USERID), DC, POSTALCODE, STREET, DNQ).
A DN matches when every attribute the pattern names is in the DN with a matching value,
case ignored; an attribute the pattern repeats (OU, DC) matches the DN's values of that
attribute in order, from the most specific. Attributes the pattern does not name are free.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass

# OpenSSL's long names (getpeercert's) to IBM's short ones.
_SHORT = {
    "commonName": "CN", "title": "T", "organizationalUnitName": "OU", "organizationName": "O",
    "localityName": "L", "stateOrProvinceName": "ST", "countryName": "C", "serialNumber": "SERIALNUMBER",
    "emailAddress": "E", "userId": "UID", "domainComponent": "DC", "postalCode": "POSTALCODE",
    "streetAddress": "STREET", "dnQualifier": "DNQ",
}
# IBM's synonyms in SSLPEER patterns.
_SYNONYMS = {"SP": "ST", "S": "ST", "MAIL": "E", "EMAIL": "E", "USERID": "UID"}
KNOWN = frozenset(_SHORT.values())

Subject = Iterable[Iterable[tuple[str, str]]]
"""A name as ``getpeercert()`` gives it: relative names, each of (attribute, value) pairs."""


class PeerNameError(ValueError):
    """An SSLPEER pattern that does not parse (IBM's MQRC_SSL_PEER_NAME_ERROR / MQRCCF_SSL_PEER_NAME_ERROR)."""


def attributes(subject: Subject) -> list[tuple[str, str]]:
    """(IBM short name, value) pairs, most specific first (a certificate lists C first)."""
    pairs = [(_SHORT.get(key, key), value) for rdn in subject for key, value in rdn]
    pairs.reverse()
    return pairs


def _quoted(value: str) -> str:
    return f'"{value}"' if any(ch in value for ch in ',;+"=') else value


def render(subject: Subject) -> str:
    """``CN=app1,OU=Payments,O=Bank,C=GB`` (blank for no subject)."""
    return ",".join(f"{key}={_quoted(value)}" for key, value in attributes(subject))


_TOKEN = re.compile(r'\s*([A-Za-z][A-Za-z0-9.]*)\s*=\s*("(?:[^"]|"")*"|[^,;]*?)\s*(?:[,;]|$)')


@dataclass(frozen=True, slots=True)
class PeerPattern:
    """A parsed SSLPEER value: (attribute, value pattern) pairs in the order given."""

    terms: tuple[tuple[str, str], ...]

    def matches(self, pairs: list[tuple[str, str]]) -> bool:
        """Whether a DN (``attributes()``'s pairs) satisfies every term."""
        wanted: dict[str, list[str]] = {}
        for key, value in self.terms:
            wanted.setdefault(key, []).append(value)
        have: dict[str, list[str]] = {}
        for key, value in pairs:
            have.setdefault(key, []).append(value)
        for key, patterns in wanted.items():
            values = have.get(key, [])
            if len(values) < len(patterns):
                return False
            for pattern, value in zip(patterns, values, strict=False):
                if not fnmatch.fnmatchcase(value.upper(), pattern.upper().replace("[", "[[]").replace("?", "[?]")):
                    return False
        return True


def parse(text: str) -> PeerPattern | None:
    """The pattern of an SSLPEER value; None for a blank one (anyone).

    Raises:
        PeerNameError: it does not parse, or names an attribute IBM's SSLPEER does not have.
    """
    text = text.strip()
    if not text:
        return None
    terms: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise PeerNameError(f"SSLPEER {text!r}: expected ATTR=value at offset {pos}")
        key = m.group(1).upper()
        key = _SYNONYMS.get(key, key)
        if key not in KNOWN:
            raise PeerNameError(f"SSLPEER {text!r}: {m.group(1)} is not a distinguished-name attribute")
        value = m.group(2)
        if value.startswith('"'):
            value = value[1:-1].replace('""', '"')
        if not value:
            raise PeerNameError(f"SSLPEER {text!r}: {m.group(1)} has no value")
        terms.append((key, value))
        pos = m.end()
    return PeerPattern(tuple(terms))


def problem(text: str) -> str | None:
    """Why ``text`` cannot be an SSLPEER value (None when it can)."""
    try:
        parse(text)
    except PeerNameError as exc:
        return str(exc)
    return None


@dataclass(frozen=True, slots=True)
class TLSPeer:
    """What one end learnt of the other in a TLS handshake: the protocol ``version`` and
    cipher ``suite`` negotiated, the peer certificate's subject ``dn`` and ``issuer_dn``
    (``render``'s form; blank when the peer sent no certificate) and the subject's
    ``pairs`` (``attributes``'s form, for SSLPEER matching)."""

    version: str
    suite: str
    dn: str = ""
    issuer_dn: str = ""
    pairs: tuple[tuple[str, str], ...] = ()


def peer_of(tls: object) -> TLSPeer:
    """The ``TLSPeer`` of a finished handshake (an ``ssl.SSLObject`` or ``ssl.SSLSocket``)."""
    cipher = getattr(tls, "cipher")()  # noqa: B009 - both classes have it, no common base
    version = getattr(tls, "version")() or ""  # noqa: B009
    cert = getattr(tls, "getpeercert")() or {}  # noqa: B009
    subject = cert.get("subject", ())
    return TLSPeer(version, cipher[0] if cipher else "", render(subject), render(cert.get("issuer", ())),
                   tuple(attributes(subject)))
