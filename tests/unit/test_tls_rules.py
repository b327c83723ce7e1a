"""The TLS rules without sockets: CipherSpec names and what they accept, SSLPEER patterns,
revocation lists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.tls import cipherspecs, devcerts, names
from ferrymq.tls.keyrepo import PASSWORD_ENV, KeyRepository

SUBJECT = ((("countryName", "GB"),), (("organizationName", "Bank"),), (("organizationalUnitName", "Payments"),),
           (("organizationalUnitName", "Team A"),), (("commonName", "app1"),))


def test_cipherspecs_accept_what_they_name() -> None:
    aes = cipherspecs.lookup(" tls_rsa_with_aes_256_gcm_sha384 ")
    assert aes is not None and aes.accepts("TLSv1.2", "AES256-GCM-SHA384")
    assert not aes.accepts("TLSv1.2", "AES128-GCM-SHA256") and not aes.accepts("TLSv1.3", "TLS_AES_256_GCM_SHA384")
    t13 = cipherspecs.lookup("TLS_AES_128_GCM_SHA256")
    assert t13 is not None and t13.accepts("TLSv1.3", "TLS_AES_128_GCM_SHA256")
    assert not t13.accepts("TLSv1.3", "TLS_AES_256_GCM_SHA384")
    for alias, v12, v13 in (("ANY_TLS12", True, False), ("ANY_TLS13", False, True),
                            ("ANY_TLS12_OR_HIGHER", True, True), ("ANY_TLS13_OR_HIGHER", False, True), ("ANY", True, True)):
        spec = cipherspecs.lookup(alias)
        assert spec is not None
        assert spec.accepts("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384") is v12
        assert spec.accepts("TLSv1.3", "TLS_AES_256_GCM_SHA384") is v13
        assert not spec.accepts("TLSv1.1", "AES256-SHA")


@pytest.mark.parametrize("name", ["TLS_RSA_WITH_AES_128_CBC_SHA", "RC4_MD5_US", "TLS_RSA_WITH_NULL_SHA256", "NONSENSE"])
def test_old_null_and_unknown_cipherspecs_are_refused(name: str) -> None:
    assert cipherspecs.lookup(name) is None
    why = cipherspecs.problem(name)
    assert why is not None and name in why and "TLS 1.2 and 1.3" in why
    assert cipherspecs.problem("  ") is None


def test_a_dn_is_shown_most_specific_first() -> None:
    assert names.render(SUBJECT) == "CN=app1,OU=Team A,OU=Payments,O=Bank,C=GB"
    assert names.render(((('commonName', 'a,b'),),)) == 'CN="a,b"'


@pytest.mark.parametrize(("pattern", "ok"), [
    ("CN=app1", True), ("cn=APP1", True), ("CN=app*", True), ("CN=*1", True), ("CN=*", True),
    ("CN=app2", False), ("CN=app1, O=Bank", True), ("CN=app1; O=Other", False),
    ("OU=Team A, OU=Payments", True), ("OU=Payments", False), ("OU=Team*,OU=Pay*", True),
    ('O="Bank"', True), ("L=London", False), ("SP=x", False), ("CN=a?p1", False),
])
def test_sslpeer_patterns(pattern: str, ok: bool) -> None:
    parsed = names.parse(pattern)
    assert parsed is not None and parsed.matches(names.attributes(SUBJECT)) is ok


@pytest.mark.parametrize("bad", ["CN", "CN=", "XX=1", "=x", "CN=a,,"])
def test_sslpeer_syntax_errors(bad: str) -> None:
    assert names.problem(bad) is not None
    with pytest.raises(names.PeerNameError):
        names.parse(bad)
    assert names.parse("  ") is None


def test_revocation_lists_keep_what_was_revoked_and_a_repository_watches_its_crl(tmp_path: Path) -> None:
    ca, other = devcerts.new_ca(), devcerts.new_ca("CN=other CA")
    a, b = devcerts.issue(ca, "CN=a"), devcerts.issue(ca, "CN=b")
    first = devcerts.crl(ca, a)
    assert devcerts.revoked_by(first, ca) == {a.cert.serial_number}
    both = devcerts.crl(ca, b, serials=devcerts.revoked_by(first, ca))
    pem = both + devcerts.crl(other, devcerts.issue(other, "CN=c"))  # another CA's list beside it
    assert devcerts.revoked_by(pem, ca) == {a.cert.serial_number, b.cert.serial_number}
    repo = KeyRepository(str(tmp_path / "key"))
    before = repo.stamp("x")
    devcerts.write_crls(repo, pem)
    assert repo.stamp("x") != before  # a cached context is made again
    with pytest.raises(ValueError):
        devcerts.revoked_by(b"-----BEGIN X509 CRL-----\nnot\n-----END X509 CRL-----", ca)


def test_an_encrypted_key_loads_with_its_stash_file_or_mqkeyrpwd(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    ca = devcerts.new_ca()
    repo = KeyRepository(str(tmp_path / "key"))
    devcerts.write_signers(repo, ca)
    path = devcerts.write_personal(repo, "qm", devcerts.issue(ca, "CN=QM1"), ca, password=b"s3cret")
    assert b"ENCRYPTED PRIVATE KEY" in path.read_bytes() and repo.stash.stat().st_mode & 0o777 == 0o600
    repo.server_context("qm")  # the stash file's password decrypts it
    repo.stash.write_bytes(b"wrong\n")
    with pytest.raises(MQError) as wrong:
        repo.server_context("qm")
    assert wrong.value.reason == C.MQRC_KEY_REPOSITORY_ERROR and "s3cret" not in str(wrong.value)
    monkeypatch.setenv(PASSWORD_ENV, "s3cret")  # the environment's password comes first
    repo.server_context("qm")
    monkeypatch.delenv(PASSWORD_ENV)
    repo.stash.write_bytes(b"s3cret\n")
    repo.stash.chmod(0o644)
    with pytest.raises(MQError) as readable:
        repo.server_context("qm")
    assert readable.value.reason == C.MQRC_KEY_REPOSITORY_ERROR and "readable by others" in str(readable.value)
    repo.stash.unlink()
    os.mkfifo(repo.stash, 0o600)  # a FIFO in its place: refused at once, not waited on
    with pytest.raises(MQError) as fifo:
        repo.server_context("qm")
    assert fifo.value.reason == C.MQRC_KEY_REPOSITORY_ERROR and "not a regular file" in str(fifo.value)
    repo.stash.unlink()
    elsewhere = tmp_path / "elsewhere.sth"
    elsewhere.write_bytes(b"s3cret\n")
    elsewhere.chmod(0o600)
    repo.stash.symlink_to(elsewhere)  # nor through a symbolic link
    with pytest.raises(MQError) as link:
        repo.server_context("qm")
    assert link.value.reason == C.MQRC_KEY_REPOSITORY_ERROR
    repo.stash.unlink()
    with pytest.raises(MQError) as missing:  # no password: refused, never a prompt
        repo.server_context("qm")
    assert missing.value.reason == C.MQRC_KEY_REPOSITORY_ERROR
