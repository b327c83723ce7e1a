"""IBM's SSL stanza OCSP settings as queue-manager options: spelled as IBM spells them, any
case on the command line, checked when read back from config.json."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from ferrymq.cli import server_options
from ferrymq.tls import ocsp


def test_ocsp_options_are_checked_and_make_the_policy() -> None:
    options = server_options.check({"ocsp_authentication": "warn", "ocsp_check_extensions": "No"})
    assert options == {"ocsp_authentication": "WARN", "ocsp_check_extensions": "NO"}
    assert server_options.server_keywords(options) == {}  # ServerTLS's, not QueueManagerServer's
    assert server_options.ocsp_policy(options) == ocsp.OCSPPolicy(check_extensions=False, authentication="WARN")
    assert server_options.ocsp_policy({}) == ocsp.OCSPPolicy(check_extensions=True, authentication="REQUIRED")
    assert server_options.as_args(options) == ["--ocsp-authentication", "WARN", "--ocsp-check-extensions", "NO"]
    for bad in ({"ocsp_authentication": "SOMETIMES"}, {"ocsp_check_extensions": 1}):
        with pytest.raises(ValueError):
            server_options.check(bad)


def test_a_certificate_without_authority_info_access_is_never_asked_about() -> None:
    from ferrymq.tls import devcerts

    ca = devcerts.new_ca()
    plain = devcerts.issue(ca, "CN=app").cert.public_bytes(Encoding.DER)
    named = devcerts.issue(ca, "CN=app", ocsp_urls=["http://127.0.0.1:9/"]).cert.public_bytes(
        Encoding.DER)
    assert not ocsp.may_name_responder(plain) and ocsp.may_name_responder(named)
    assert ocsp.check(named, Path("/nonexistent"), ocsp.OCSPPolicy(check_extensions=False)) is None
    unknown = ocsp.check(named, Path("/nonexistent"), ocsp.OCSPPolicy())
    assert unknown is not None and (unknown.status, unknown.code) == (ocsp.UNKNOWN, ocsp.X509_V_ERR_OCSP_VERIFY_FAILED)
    assert "signer certificates" in unknown.detail
