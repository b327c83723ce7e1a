"""A key repository of PEM files, and the ``ssl.SSLContext`` each end makes from it.

IBM MQ names a key repository by a stem (SSLKEYR ``/var/mqm/qmgrs/QM1/ssl/key``, the
MQSCO's KeyRepository): its files are the stem plus an extension. ferrymq's are PEM:

- ``<stem>.pem``: the signer certificates this end trusts (CA certificates, or a peer's
  self-signed certificate), as IBM's key database holds signer certificates;
- ``<stem>.<label>.pem``: a personal certificate, named by its label (CERTLABL, the MQSCO's
  CertificateLabel): the certificate, any intermediate certificates, and its private key
  (unencrypted, or encrypted with the stash file's password). It must be its owner's alone (mode 0600): a group- or world-readable one is
  refused, as ssh refuses a private key anyone can read;
- ``<stem>.crl`` (optional, as IBM's CMS key database has its ``.crl``): certificate
  revocation lists in PEM. When it is there, every certificate this end is shown (the
  partner's, not the chain's CAs) is checked against it and a revoked one fails the
  handshake (X.509 error 23); it must then hold a current CRL of every CA whose
  certificates this end accepts, as OpenSSL refuses a certificate whose issuer has none.

- ``<stem>.sth`` (optional, as IBM's stash file): the password of encrypted private keys
  (PEM ``ENCRYPTED PRIVATE KEY``), its first line. Like a key it must be its owner's alone:
  one readable by others is refused. The environment variable ``MQKEYRPWD`` (IBM's name)
  gives the password instead. A key that the password does not decrypt, or an encrypted
  key with no password, fails with 2381 (MQRC_KEY_REPOSITORY_ERROR); nothing ever prompts.

Without a label the default is IBM's: ``ibmwebspheremq`` and the queue manager's name (for a
queue manager) or the user's (for a client), in lower case.
"""

from __future__ import annotations

import hashlib
import os
import ssl
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.tls.cipherspecs import TLS12_CIPHERS, CipherSpec, narrow

DEFAULT_LABEL_PREFIX = "ibmwebspheremq"
PASSWORD_ENV = "MQKEYRPWD"  # IBM's variable for the key repository's password
MAX_STASH = 4096


def default_label(owner: str) -> str:
    """IBM's default certificate label for a queue manager or user named ``owner``."""
    return DEFAULT_LABEL_PREFIX + owner.strip().lower()


def repository_error(detail: str) -> MQError:
    return MQError(C.MQCC_FAILED, C.MQRC_KEY_REPOSITORY_ERROR, detail)


@dataclass(frozen=True, slots=True)
class KeyRepository:
    """The files of the key repository ``stem`` (see the module docstring)."""

    stem: str

    @classmethod
    def at(cls, stem: str) -> KeyRepository:
        """``stem`` with ``~`` expanded; a ``.kdb`` or ``.pem`` given by habit is dropped."""
        path = os.path.expanduser(stem.strip())
        for ext in (".kdb", ".pem"):
            if path.endswith(ext):
                path = path[: -len(ext)]
        return cls(path)

    @property
    def signers(self) -> Path:
        return Path(self.stem + ".pem")

    def personal(self, label: str) -> Path:
        return Path(f"{self.stem}.{label}.pem")

    @property
    def crls(self) -> Path:
        return Path(self.stem + ".crl")

    @property
    def stash(self) -> Path:
        return Path(self.stem + ".sth")

    def password(self, given: bytes = b"") -> bytes:
        """The private keys' password: ``given`` (a client's MQSCO KeyRepoPassword, which
        IBM puts before the others), else MQKEYRPWD, else the stash file's first line, else
        none (b"": an encrypted key then fails to load, and never prompts).

        Raises:
            MQError: 2381 for a stash file others can read, or one that cannot be read.
        """
        if given:
            return given
        env = os.environ.get(PASSWORD_ENV)
        if env:
            return env.encode()
        try:
            # Not through a symbolic link, and never blocking on a FIFO put in its place.
            fd = os.open(self.stash, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise repository_error(f"stash file {self.stash} cannot be read: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise repository_error(f"stash file {self.stash} is not a regular file")
            mode = stat.S_IMODE(st.st_mode)
            if mode & 0o077:
                raise repository_error(f"stash file {self.stash} holds the key password and is readable by "
                                       f"others (mode {mode:04o}): chmod 600 it")
            data = f.read(MAX_STASH)
        return data.splitlines()[0] if data.strip() else b""

    def has_personal(self, label: str) -> bool:
        return self.personal(label).is_file()

    def stamp(self, label: str) -> tuple[int, ...]:
        """Changes when either file changes (modification time in ns and size)."""
        out: list[int] = []
        for path in (self.signers, self.personal(label), self.crls, self.stash):
            try:
                st = path.stat()
                out += [st.st_mtime_ns, st.st_size]
            except OSError:
                out += [0, -1]
        return tuple(out)

    def _load_personal(self, ctx: ssl.SSLContext, label: str, given_password: bytes = b"") -> None:
        path = self.personal(label)
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            raise MQError(C.MQCC_FAILED, C.MQRC_SSL_INITIALIZATION_ERROR,
                          f"no personal certificate labelled {label!r} in key repository {self.stem} "
                          f"({path}: {exc.strerror})") from None
        if stat.S_IMODE(mode) & 0o077:
            raise repository_error(f"{path} holds a private key and is readable by others "
                                   f"(mode {stat.S_IMODE(mode):04o}): chmod 600 it")
        password = self.password(given_password)
        try:
            ctx.load_cert_chain(str(path), password=lambda: password)
        except (OSError, ssl.SSLError) as exc:
            source = "the KeyRepoPassword given" if given_password else f"the password from {PASSWORD_ENV} or {self.stash}"
            hint = (f" (if its key is encrypted: {source} is wrong or missing)" if isinstance(exc, ssl.SSLError) else "")
            raise repository_error(f"{path} is not a PEM certificate with its private key{hint}: {exc}") from None

    def _load_signers(self, ctx: ssl.SSLContext) -> bool:
        if not self.signers.is_file():
            return False
        try:
            ctx.load_verify_locations(str(self.signers))
        except (OSError, ssl.SSLError) as exc:
            raise repository_error(f"{self.signers} is not a PEM file of certificates: {exc}") from None
        if self.crls.is_file():
            try:
                ctx.load_verify_locations(str(self.crls))
            except (OSError, ssl.SSLError) as exc:
                raise repository_error(f"{self.crls} is not a PEM file of certificate revocation lists: {exc}") \
                    from None
            ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
        return True

    def server_context(self, label: str) -> ssl.SSLContext:
        """The responding end's context: TLS 1.2 and 1.3, every suite ferrymq speaks (the
        channel's SSLCIPH is compared with what was negotiated afterwards), this label's
        certificate, and a client certificate asked for and checked against the signers
        when there are signers (whether one is required is the channel's SSLCAUTH).

        Raises:
            MQError: 2381 (MQRC_KEY_REPOSITORY_ERROR) or 2393 for a missing certificate.
        """
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version, ctx.maximum_version = ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3
        ctx.set_ciphers(TLS12_CIPHERS)
        ctx.options |= ssl.OP_NO_RENEGOTIATION
        self._load_personal(ctx, label)
        ctx.verify_mode = ssl.CERT_OPTIONAL if self._load_signers(ctx) else ssl.CERT_NONE
        return ctx

    def client_context(self, label: str, spec: CipherSpec, *, label_required: bool,
                       password: bytes = b"") -> ssl.SSLContext:
        """The calling end's context: only what ``spec`` allows, the peer's certificate
        checked against the signers (host names are not: SSLPEER is MQ's check), and this
        label's certificate when there is one (``label_required``: it must be there), its
        key decrypted with ``password`` when given (see ``password``).

        Raises:
            MQError: 2381 (MQRC_KEY_REPOSITORY_ERROR): no signers, a file that does not
                load; 2393: a required certificate missing.
        """
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_REQUIRED
        narrow(ctx, spec)
        if not self._load_signers(ctx):
            raise repository_error(f"key repository {self.stem}: no signer certificates ({self.signers} is missing)")
        if label_required or self.has_personal(label):
            self._load_personal(ctx, label, password)
        return ctx


class ContextCache:
    """Contexts made from key repositories, made again when a file changes: making one
    reads and parses the files (a millisecond or so), a connect should not pay that."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the blocking client may connect from many threads
        self._made: dict[tuple[object, ...], tuple[tuple[int, ...], ssl.SSLContext]] = {}

    def server(self, repo: KeyRepository, label: str) -> ssl.SSLContext:
        """``repo.server_context(label)``, cached. Raises: as that does."""
        return self._get(("server", repo.stem, label), repo.stamp(label), lambda: repo.server_context(label))

    def client(self, repo: KeyRepository, label: str, spec: CipherSpec, *, label_required: bool,
               password: bytes = b"") -> ssl.SSLContext:
        """``repo.client_context(...)``, cached. Raises: as that does."""
        # Keyed by the password's digest: another password must load (or fail) afresh, and
        # the cache's keys should not hold the password itself.
        secret = hashlib.sha256(password).digest() if password else b""
        return self._get(("client", repo.stem, label, spec.name, label_required, secret), repo.stamp(label),
                         lambda: repo.client_context(label, spec, label_required=label_required, password=password))

    def _get(self, key: tuple[object, ...], stamp: tuple[int, ...], make: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
        with self._lock:
            hit = self._made.get(key)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        ctx = make()
        with self._lock:
            if len(self._made) > 64:
                self._made.clear()
            self._made[key] = (stamp, ctx)
        return ctx
