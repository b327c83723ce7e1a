"""The data directory: ``$FERRYMQ_HOME/qmgrs/<name>/`` and what lives in it.

Layout of one queue manager's directory::

    config.json   name, host, port (0 = pick a free port at each start), exit_path and
                  bulk_data_dir (channel exits, docs/distributed.md)       — written by create
    journal/      the FileJournal                                          — the messages
    run.lock      flock'ed by the server process for its whole life        — "is it running?"
    ferrymq.pid   the server's pid while it runs
    status.json   last known state: running (pid, bound port) / quiescing / ended (how, when)
    health.json   the running server's journal health, rewritten in place (see HealthFile)
    qmgr.sock     the local socket applications reach it by name through (0600, while it runs)
    ferrymq.log   the detached server's log, its stdout and stderr (rotated: ferrymq.log.1 ...)

All of it is private to the queue manager's user: directories 0700, files 0600
(``cli.private`` says how and why).

Whether a queue manager runs is decided by the lock, not by the pid: a pid can be reused
after a crash, a lock held by a dead process cannot. A status file that still says
``running`` while nobody holds the lock means the server ended without cleaning up.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import ipaddress
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from ferrymq.cli import logsetup, private, server_options
from ferrymq.cli.errors import CliError, Exit
from ferrymq.client.local import SOCKET_NAME

DEFAULT_PORT = 1414
DEFAULT_DISK_RESERVE = 8 * 1024 * 1024  # store.file.DEFAULT_RESERVE, without importing the store here
MAX_DISK_RESERVE = 1 << 40
DEFAULT_HOST = "127.0.0.1"
CONFIG_VERSION = 1

# IBM MQ allows A-Z a-z 0-9 . / _ % in 48 characters; "/" would make a path, so it is left out.
_NAME = re.compile(r"^[A-Za-z0-9._%]{1,48}$")


def check_name(name: str) -> str:
    """Raises CliError(NAME_ERROR) unless ``name`` is a valid queue manager name."""
    if not _NAME.match(name) or set(name) == {"."}:
        raise CliError(Exit.NAME_ERROR, "qmgr_name_invalid",
                       f"{name!r} is not a valid queue manager name: 1 to 48 of A-Z a-z 0-9 . _ %", name=name)
    return name


ALLOW_REMOTE_FLAG = "--allow-unauthenticated-remote"
DEFAULT_EXPOSURE = ("CHCKCLNT(REQDADM): clients naming a user who is not an administrator give no password; "
                    "TLS OFF (no certificate yet): messages and passwords cross the network in clear text")
"""What a new queue manager beyond loopback is open to, until its owner changes it."""


def is_loopback(host: str) -> bool:
    """Does listening on ``host`` keep the queue manager to this machine? Only a loopback
    address or ``localhost`` does: a wildcard (0.0.0.0, ::), any other address or a host
    name is reachable from elsewhere (or may be)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_binding(name: str, host: str, allow_remote: bool) -> None:
    """Refuse a listener beyond loopback unless explicitly allowed: a new queue manager
    checks passwords of administrators only (IBM's default CHCKCLNT(REQDADM)) and has no
    TLS until it is given a certificate, so reaching other machines is the owner's decision.

    Raises:
        CliError(USAGE, remote_bind_unauthenticated): ``host`` is not loopback and not allowed.
    """
    if is_loopback(host) or allow_remote:
        return
    raise CliError(Exit.USAGE, "remote_bind_unauthenticated",
                   f"queue manager {name}: listening on {host!r}, beyond loopback (127.0.0.1, ::1, localhost), "
                   "must be asked for: by default a client naming a user who is not an administrator is not "
                   "asked for a password (CHCKCLNT(REQDADM), IBM's default connection authentication) and "
                   "messages and passwords cross the network in clear text until TLS is set up. Add "
                   f"{ALLOW_REMOTE_FLAG} to accept that on a network you trust, and see docs/security.md "
                   "for CHCKCLNT(REQUIRED), channel authentication records and TLS", qmgr=name, host=host)


def remote_warning(name: str, host: str, port: int, exposure: Sequence[str] = (DEFAULT_EXPOSURE,)) -> str:
    """What every start of a queue manager allowed beyond loopback says; ``exposure``: what
    lets a client in weakly or in clear text (``exposure`` of ferrymq.cli.runner; before
    the queue manager runs, a new one's defaults)."""
    if not exposure:
        return (f"queue manager {name} listens on {host}({port}), beyond loopback: every client gives a checked "
                "password and every server-connection channel requires TLS")
    return (f"WARNING: queue manager {name} listens on {host}({port}), beyond loopback ({ALLOW_REMOTE_FLAG}), "
            f"with {'; '.join(exposure)} (docs/security.md)")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` atomically (a reader never sees half a file)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with os.fdopen(private.open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass(frozen=True, slots=True)
class LogConfig:
    """How the server writes ferrymq.log (cli.logsetup): rotation and line format."""

    max_bytes: int = logsetup.DEFAULT_MAX_BYTES
    backups: int = logsetup.DEFAULT_BACKUPS
    format: str = "text"

    def as_dict(self) -> dict[str, Any]:
        return {"max_bytes": self.max_bytes, "backups": self.backups, "format": self.format}

    @classmethod
    def from_dict(cls, raw: object) -> LogConfig:
        """Raises TypeError or ValueError naming the rule broken."""
        if not isinstance(raw, dict):
            raise TypeError(f"log must be an object, not {raw!r}")
        unknown = set(raw) - {"max_bytes", "backups", "format"}
        if unknown:
            raise ValueError(f"log has unknown keys {sorted(unknown)}")
        out = cls(raw.get("max_bytes", logsetup.DEFAULT_MAX_BYTES), raw.get("backups", logsetup.DEFAULT_BACKUPS),
                  raw.get("format", "text"))
        if not (isinstance(out.max_bytes, int) and isinstance(out.backups, int) and isinstance(out.format, str)):
            raise TypeError("log max_bytes and backups must be integers, format a string")
        logsetup.check(out.max_bytes, out.backups, out.format)
        return out


@dataclass(frozen=True, slots=True)
class Config:
    name: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    disk_reserve_bytes: int = DEFAULT_DISK_RESERVE
    server: dict[str, Any] = field(default_factory=dict)  # QueueManagerServer knobs given at create
    allow_remote: bool = False  # --allow-unauthenticated-remote: a host beyond loopback accepted
    log: LogConfig = field(default_factory=lambda: LogConfig())
    exit_path: str = ""  # IBM's ExitPath: the only place channel exits of users load from ("": none)
    bulk_data_dir: str = ""  # where the reference-message exits read and write bulk data ("": refused)

    def as_dict(self) -> dict[str, Any]:
        return {"version": CONFIG_VERSION, "name": self.name, "host": self.host, "port": self.port,
                "disk_reserve_bytes": self.disk_reserve_bytes, "server": self.server,
                "allow_unauthenticated_remote": self.allow_remote, "log": self.log.as_dict(),
                "exit_path": self.exit_path, "bulk_data_dir": self.bulk_data_dir}


class QmgrDir:
    """One queue manager's data directory (it may not exist yet)."""

    def __init__(self, home: Path, name: str) -> None:
        self.name = check_name(name)
        self.path = home / "qmgrs" / name

    @property
    def config_file(self) -> Path:
        return self.path / "config.json"

    @property
    def journal_dir(self) -> Path:
        return self.path / "journal"

    @property
    def lock_file(self) -> Path:
        return self.path / "run.lock"

    @property
    def pid_file(self) -> Path:
        return self.path / "ferrymq.pid"

    @property
    def status_file(self) -> Path:
        return self.path / "status.json"

    @property
    def log_file(self) -> Path:
        return self.path / "ferrymq.log"

    @property
    def health_file(self) -> Path:
        return self.path / "health.json"

    @property
    def socket_file(self) -> Path:
        """The local (bindings) socket while the server runs (ferrymq.client.local)."""
        return self.path / SOCKET_NAME

    def exists(self) -> bool:
        return self.path.is_dir()

    def require(self) -> QmgrDir:
        """Raises CliError(UNKNOWN_QMGR) unless the queue manager was created."""
        if not self.exists():
            raise CliError(Exit.UNKNOWN_QMGR, "qmgr_unknown", f"queue manager {self.name} does not exist "
                           f"(no {self.path}); create it with: ferrymq create {self.name}", qmgr=self.name)
        return self

    # -- config ------------------------------------------------------------------------------

    def load_config(self) -> Config:
        """Raises CliError(DAMAGED) when config.json is missing or not what create wrote."""
        try:
            raw = json.loads(self.config_file.read_text(encoding="utf-8"))
            name, host, port = raw["name"], raw["host"], raw["port"]
            if not (isinstance(name, str) and isinstance(host, str) and isinstance(port, int)):
                raise TypeError("name and host must be strings, port an integer")
            if not 0 <= port < 65536:
                raise ValueError(f"port {port} is out of range")
            if name != self.name:
                raise ValueError(f"it names queue manager {name!r}, the directory {self.name!r}")
            reserve = raw.get("disk_reserve_bytes", DEFAULT_DISK_RESERVE)  # absent before it existed
            if not isinstance(reserve, int) or not 0 <= reserve <= MAX_DISK_RESERVE:
                raise ValueError(f"disk_reserve_bytes {reserve!r} is not an integer from 0 to {MAX_DISK_RESERVE}")
            server = raw.get("server", {})  # absent before it existed
            if not isinstance(server, dict):
                raise TypeError(f"server must be an object, not {server!r}")
            server = server_options.check(server)
            allow_remote = raw.get("allow_unauthenticated_remote", False)  # absent before it existed
            if not isinstance(allow_remote, bool):
                raise TypeError(f"allow_unauthenticated_remote must be true or false, not {allow_remote!r}")
            log_config = LogConfig.from_dict(raw.get("log", {}))  # absent before it existed
            dirs = [raw.get(key, "") for key in ("exit_path", "bulk_data_dir")]  # absent before they existed
            if not all(isinstance(d, str) for d in dirs):
                raise TypeError(f"exit_path and bulk_data_dir must be strings, not {dirs!r}")
        except FileNotFoundError:
            raise CliError(Exit.DAMAGED, "data_damaged", f"queue manager {self.name}: {self.config_file} is "
                           "missing (damaged data directory)", qmgr=self.name) from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CliError(Exit.DAMAGED, "data_damaged", f"queue manager {self.name}: {self.config_file} "
                           f"is damaged: {exc}", qmgr=self.name) from None
        return Config(name, host, port, reserve, server, allow_remote, log_config, *dirs)

    def save_config(self, config: Config) -> None:
        write_json(self.config_file, config.as_dict())

    # -- run state ---------------------------------------------------------------------------

    def is_locked(self) -> bool:
        """True while a server process holds the run lock (it runs, starts or ends)."""
        try:
            fd = os.open(self.lock_file, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return True
            raise
        finally:
            os.close(fd)  # closing drops a lock we took
        return False

    def acquire_lock(self, patience: float = 0.5) -> IO[bytes] | None:
        """Take the run lock for this process; None if another process holds it.

        ``patience`` covers a ``list`` or ``stop`` that probes the lock at the same moment.
        """
        f = private.append_file(self.lock_file)  # held for the life of the process
        deadline = time.monotonic() + patience
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return f
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    f.close()
                    raise
            if time.monotonic() >= deadline:
                f.close()
                return None
            time.sleep(0.02)

    def read_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def read_status(self) -> dict[str, Any]:
        """The last status the server wrote ({} if none or unreadable)."""
        try:
            raw = json.loads(self.status_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return raw if isinstance(raw, dict) else {}

    def write_status(self, **status: Any) -> None:
        write_json(self.status_file, status)

    def read_health(self) -> dict[str, Any] | None:
        """The journal health the running server last wrote (None if none or unreadable)."""
        for _ in range(3):  # rewritten in place: a read may meet a write half done
            try:
                raw = json.loads(self.health_file.read_bytes())
            except OSError:
                return None
            except ValueError:
                time.sleep(0.01)
                continue
            return raw if isinstance(raw, dict) else None
        return None

    def remove_pid(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.pid_file.unlink()


class HealthFile:
    """``health.json``, kept writable on a full disk: its bytes are allocated when the
    server starts (one block of spaces) and every report overwrites them in place, so that
    no write of it needs space that a full disk no longer has (status.json, replaced
    through a new file, could not be)."""

    SIZE = 4096

    def __init__(self, path: Path) -> None:
        self.path = path
        fd = private.open_private(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
        try:
            os.write(fd, b" " * (self.SIZE - 1) + b"\n")
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def write(self, doc: dict[str, Any]) -> None:
        data = json.dumps(doc, sort_keys=True).encode()
        if len(data) >= self.SIZE:
            data = json.dumps({k: doc[k] for k in doc if k != "detail"}, sort_keys=True).encode()
        os.pwrite(self._fd, data.ljust(self.SIZE - 1) + b"\n", 0)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)
        with contextlib.suppress(OSError):
            self.path.unlink()


_ANY_HOST = ("0.0.0.0", "::", "")


def _same_address(a: str, b: str) -> bool:
    """Would listeners on hosts ``a`` and ``b`` (same port) collide?"""
    loopback = {"localhost": "127.0.0.1"}
    return a in _ANY_HOST or b in _ANY_HOST or loopback.get(a, a) == loopback.get(b, b)


def port_owner(home: Path, host: str, port: int, other_than: str) -> str | None:
    """The queue manager of ``home`` (not ``other_than``) that owns ``host``(``port``): by
    its config, or, while it runs, by the port it listens on. None for port 0 (any free
    port, chosen at each start) or when nobody does."""
    if port == 0:
        return None
    for name in list_names(home):
        if name == other_than:
            continue
        qdir = QmgrDir(home, name)
        try:
            config = qdir.load_config()
        except CliError:
            continue  # a damaged one owns nothing we can read
        ports = {config.port}
        status = qdir.read_status()
        bound = status.get("port")
        if status.get("state") in ("running", "quiescing", "ending") and isinstance(bound, int) and qdir.is_locked():
            ports.add(bound)
        if port in ports and _same_address(host, config.host):
            return name
    return None


def list_names(home: Path) -> list[str]:
    """Names of the queue managers under ``home``, sorted."""
    root = home / "qmgrs"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and _NAME.match(p.name))
