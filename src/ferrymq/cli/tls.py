"""``ferrymq tls create-dev-certs``: a development CA and certificates for a queue manager
and its clients, written as key repositories (docs/security.md, "TLS"). Not for production.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ferrymq.cli.errors import CliError, Exit
from ferrymq.cli.home import QmgrDir
from ferrymq.tls.keyrepo import KeyRepository, default_label

CA_FILE = "devca.pem"


def _password(encrypt: bool) -> bytes:
    """A new random password for one repository's keys (none unless --encrypt)."""
    return secrets.token_urlsafe(24).encode() if encrypt else b""


def register(group: click.Group, command: Callable[[Any], Any]) -> None:
    """Add the ``tls`` commands to ``ferrymq`` (``command``: main's decorator)."""

    @group.group(name="tls")
    def tls() -> None:
        """TLS key repositories and certificates.

        \b
          ferrymq tls create-dev-certs QM1 --client app --client ops
          ferrymq tls create-dev-certs QM1 --client app --out ~/ssl --output json
          ferrymq tls revoke-dev-cert QM1 --client app
        """

    @tls.command(name="create-dev-certs")
    @click.argument("qmgr")
    @click.option("--client", "clients", multiple=True, help="A client (user) to make a certificate for (repeat).")
    @click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                  help="Where the clients' key repositories go (default: ssl/clients in the data directory).")
    @click.option("--days", type=click.IntRange(1, 3650), default=365, show_default=True,
                  help="How long the certificates are valid.")
    @click.option("--host", "hosts", multiple=True,
                  help="A host name or address for the queue manager's certificate (repeat; default localhost, "
                       "127.0.0.1).")
    @click.option("--new-ca", is_flag=True, help="Make a new CA even if there is one (older certificates then fail).")
    @click.option("--encrypt", is_flag=True, help="Encrypt each private key with a random password kept in its "
                  "repository's stash file (<stem>.sth, 0600).")
    @click.option("--ocsp-url", "ocsp_urls", multiple=True,
                  help="An OCSP responder (http://...) to name in each certificate's AuthorityInfoAccess "
                       "extension (repeat); the other end then asks it whether the certificate is revoked.")
    @command
    def create_dev_certs(home: Path, out: Any, qmgr: str, clients: tuple[str, ...], out_dir: Path | None,
                         days: int, hosts: tuple[str, ...], new_ca: bool, encrypt: bool,
                         ocsp_urls: tuple[str, ...]) -> None:
        """A development CA (kept in the queue manager's ssl directory), the queue manager's
        certificate in its default key repository (ssl/key, label ibmwebspheremq<qmgr>) and a
        key repository per --client (<out>/<client>, label ibmwebspheremq<client>). Files are
        0600, directories 0700. A running queue manager uses new files at its next TLS
        connection."""
        try:
            from ferrymq.tls import devcerts
        except ImportError as exc:  # pragma: no cover - a dependency of ferrymq
            raise CliError(Exit.USAGE, "cryptography_missing", f"the cryptography package is needed: {exc}") from None
        qdir = QmgrDir(home, qmgr).require()
        ssl_dir = qdir.path / "ssl"
        ssl_dir.mkdir(mode=0o700, exist_ok=True)
        ca_path = ssl_dir / CA_FILE
        if ca_path.is_file() and not new_ca:
            try:
                ca = devcerts.load_ca(ca_path)
            except (OSError, ValueError) as exc:
                raise CliError(Exit.USAGE, "dev_ca_unreadable", f"{ca_path}: {exc}; give --new-ca to replace it") from None
        else:
            ca = devcerts.new_ca(f"CN=ferrymq development CA {qmgr},O=ferrymq", days=days)
            devcerts.save_ca(ca_path, ca)
        repo = KeyRepository(str(ssl_dir / "key"))
        label = default_label(qmgr)
        devcerts.write_signers(repo, ca)
        for url in ocsp_urls:
            if not url.lower().startswith(("http://", "https://")):
                raise CliError(Exit.USAGE, "ocsp_url", f"--ocsp-url {url!r}: an OCSP responder is an http:// or "
                               "https:// URL")
        server = devcerts.issue(ca, f"CN={qmgr},O=ferrymq", days=days, hosts=hosts or ("localhost", "127.0.0.1"),
                                ocsp_urls=ocsp_urls)
        devcerts.write_personal(repo, label, server, ca, password=_password(encrypt))
        made: list[dict[str, str]] = []
        where = out_dir if out_dir is not None else ssl_dir / "clients"
        for name in clients:
            if not name or "/" in name or name.startswith("."):
                raise CliError(Exit.USAGE, "client_name", f"client name {name!r} must be a plain name (no '/')")
            crepo = KeyRepository(str(where / name))
            clabel = default_label(name)
            devcerts.write_signers(crepo, ca)
            devcerts.write_personal(crepo, clabel, devcerts.issue(ca, f"CN={name},O=ferrymq", days=days,
                                                                  ocsp_urls=ocsp_urls), ca,
                                    password=_password(encrypt))
            made.append({"client": name, "key_repository": crepo.stem, "certificate_label": clabel,
                         "dn": f"CN={name},O=ferrymq"})
        lines = [f"CA: {ca_path}", f"queue manager {qmgr}: key repository {repo.stem} (label {label}, "
                                   f"DN CN={qmgr},O=ferrymq)"]
        lines += [f"client {m['client']}: key repository {m['key_repository']} (label {m['certificate_label']})"
                  for m in made]
        out.result({"qmgr": qmgr, "ca": str(ca_path), "key_repository": repo.stem, "certificate_label": label,
                    "dn": f"CN={qmgr},O=ferrymq", "clients": made}, "\n".join(lines))

    @tls.command(name="revoke-dev-cert")
    @click.argument("qmgr")
    @click.option("--client", "clients", multiple=True, required=True,
                  help="A client whose development certificate to revoke (repeat).")
    @click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                  help="Where the clients' key repositories are (default: ssl/clients in the data directory).")
    @command
    def revoke_dev_cert(home: Path, out: Any, qmgr: str, clients: tuple[str, ...], out_dir: Path | None) -> None:
        """Revoke clients' development certificates: the development CA signs a revocation
        list of them (and of those revoked before) into the queue manager's default key
        repository (ssl/key.crl, 0600). The queue manager refuses them from its next TLS
        connection."""
        from ferrymq.tls import devcerts

        ssl_dir = QmgrDir(home, qmgr).require().path / "ssl"
        ca_path = ssl_dir / CA_FILE
        try:
            ca = devcerts.load_ca(ca_path)
        except (OSError, ValueError) as exc:
            raise CliError(Exit.USAGE, "dev_ca_unreadable",
                           f"{ca_path}: {exc}; make it with ferrymq tls create-dev-certs") from None
        repo = KeyRepository(str(ssl_dir / "key"))
        where = out_dir if out_dir is not None else ssl_dir / "clients"
        try:
            serials = devcerts.revoked_by(repo.crls.read_bytes(), ca) if repo.crls.is_file() else set()
        except (OSError, ValueError) as exc:
            raise CliError(Exit.USAGE, "crl_unreadable", f"{repo.crls}: {exc}") from None
        revoked: list[dict[str, str]] = []
        for name in clients:
            path = KeyRepository(str(where / name)).personal(default_label(name))
            try:
                cert = devcerts.load_certificate(path)
            except (OSError, ValueError) as exc:
                raise CliError(Exit.USAGE, "client_certificate", f"client {name}: {path}: {exc}") from None
            serials.add(cert.serial_number)
            revoked.append({"client": name, "serial": f"{cert.serial_number:x}"})
        devcerts.write_crls(repo, devcerts.crl(ca, serials=serials))
        out.result({"qmgr": qmgr, "crl": str(repo.crls), "revoked": revoked, "count": len(serials)},
                   f"{repo.crls}: {len(serials)} certificate(s) revoked, now {', '.join(clients)}")
