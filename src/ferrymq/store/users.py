"""A queue manager's user registry: its users, their password hashes and their groups.

The file is ``users.json`` in the queue manager's data directory, created 0600 and replaced
whole (temporary file, fsync, rename), so a reader sees the old registry or the new one,
never half of one. It holds no password: only an scrypt hash per user, each with its own
random salt and the cost it was made with (so the cost can rise later without a
migration). ``ferrymq user ...`` writes it, with the queue manager running or not; the
server reads it again whenever the file changes (``refresh``), so a new user or password
counts from the next connection.

The queue manager's administrators are the members of ``mqm`` (IBM's administrators'
group) and the operating-system user that owns the data directory: the one who created
the queue manager and runs its server (``creator``).

Layout (JSON, never evaluated)::

    {"version": 1,
     "users": {"app": {"scrypt": {"n": 16384, "r": 8, "p": 1, "salt": "<b64>", "hash": "<b64>"},
                       "groups": ["apps"]}}}
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILE_NAME = "users.json"
ADMIN_GROUP = "mqm"
MAX_PASSWORD = 256  # bytes (MQ_CSP_PASSWORD_LENGTH): longer ones are refused before hashing
MAX_USER = 12  # MQMD.UserIdentifier holds 12 characters: an identity must fit it unchanged
MAX_GROUP = 64
# scrypt's cost: 2**14 x 8 x 128 bytes = 16 MiB and some 40 ms a check on this machine's cores.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 16384, 8, 1
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]*")
RESERVED = frozenset({"ferrymq"})  # the command server's own identity (server.cmdserver.USER)


class RegistryError(ValueError):
    """A refused change: a bad name, an unknown user, an existing one, a bad password."""


def check_user_name(name: str) -> str:
    if not 1 <= len(name) <= MAX_USER or not _NAME.fullmatch(name):
        raise RegistryError(f"user name {name!r}: 1 to {MAX_USER} of letters, digits, '_', '.', '@', '-'")
    if name in RESERVED:
        raise RegistryError(f"user name {name!r} is the queue manager's own")
    return name


def check_group_name(name: str) -> str:
    if not 1 <= len(name) <= MAX_GROUP or not _NAME.fullmatch(name):
        raise RegistryError(f"group name {name!r}: 1 to {MAX_GROUP} of letters, digits, '_', '.', '@', '-'")
    return name


def check_password(password: str) -> bytes:
    raw = password.encode("utf-8")
    if not raw:
        raise RegistryError("the password is empty")
    if len(raw) > MAX_PASSWORD:
        raise RegistryError(f"the password is longer than {MAX_PASSWORD} bytes")
    return raw


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _scrypt(raw: bytes, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(raw, salt=salt, n=n, r=r, p=p, maxmem=256 * 1024 * 1024, dklen=32)


@dataclass(slots=True)
class User:
    name: str
    hash: dict[str, Any]
    groups: set[str] = field(default_factory=set)

    def as_json(self) -> dict[str, Any]:
        return {"scrypt": self.hash, "groups": sorted(self.groups)}


def hash_password(password: str) -> dict[str, Any]:
    """A new scrypt hash of ``password`` with a fresh random salt."""
    raw = check_password(password)
    salt = secrets.token_bytes(16)
    return {"n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P, "salt": _b64(salt),
            "hash": _b64(_scrypt(raw, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P))}


# A check for an unknown user hashes against this, so it costs what a known user's does.
_DUMMY = {"n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P, "salt": _b64(bytes(16)), "hash": _b64(bytes(32))}


def _matches(stored: dict[str, Any], password: str) -> bool:
    raw = password.encode("utf-8")
    if not raw or len(raw) > MAX_PASSWORD:
        return False
    try:
        salt = base64.b64decode(stored["salt"], validate=True)
        want = base64.b64decode(stored["hash"], validate=True)
        n, r, p = int(stored["n"]), int(stored["r"]), int(stored["p"])
    except (KeyError, ValueError, TypeError):
        return False
    if not (2 <= n <= 2**20 and 1 <= r <= 32 and 1 <= p <= 16):  # bounded: the file is data
        return False
    return hmac.compare_digest(_scrypt(raw, salt, n, r, p), want)


class UserRegistry:
    """The users of one queue manager, as read from (and written to) its ``users.json``."""

    def __init__(self, data_dir: Path, creator: str = "") -> None:
        self.path = Path(data_dir) / FILE_NAME
        self.creator = creator
        self.users: dict[str, User] = {}
        self._stamp: tuple[int, int, int] | None = None
        self.refresh()

    # -- reading ----------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Read the file again if it changed since last read; True when it did."""
        try:
            st = self.path.stat()
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = (0, 0, 0)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        self.users = self._read() if stamp != (0, 0, 0) else {}
        return True

    def _read(self) -> dict[str, User]:
        doc = json.loads(self.path.read_text(encoding="utf-8"))
        users: dict[str, User] = {}
        for name, entry in dict(doc.get("users", {})).items():
            users[str(name)] = User(str(name), dict(entry.get("scrypt", {})), {str(g) for g in entry.get("groups", [])})
        return users

    def verify(self, name: str, password: str) -> bool:
        """Whether ``password`` is ``name``'s; as slow for an unknown user as for a known one."""
        user = self.users.get(name)
        ok = _matches(user.hash if user is not None else _DUMMY, password)
        return ok and user is not None

    def known(self, name: str) -> bool:
        return name in self.users

    def groups_of(self, name: str) -> frozenset[str]:
        user = self.users.get(name)
        groups = set(user.groups) if user is not None else set()
        if name and name == self.creator:
            groups.add(ADMIN_GROUP)
        return frozenset(groups)

    def is_admin(self, name: str) -> bool:
        return ADMIN_GROUP in self.groups_of(name)

    def listing(self) -> list[dict[str, Any]]:
        """Users and their groups (never a hash)."""
        return [{"user": u.name, "groups": sorted(u.groups), "admin": ADMIN_GROUP in u.groups}
                for u in sorted(self.users.values(), key=lambda u: u.name)]

    # -- changing (the CLI) -------------------------------------------------------------------

    def add(self, name: str, password: str, groups: Iterable[str] = ()) -> None:
        self.refresh()
        check_user_name(name)
        if name in self.users:
            raise RegistryError(f"user {name} exists (change its password with: ferrymq user passwd)")
        self.users[name] = User(name, hash_password(password), {check_group_name(g) for g in groups})
        self._write()

    def passwd(self, name: str, password: str) -> None:
        self._require(name).hash = hash_password(password)
        self._write()

    def delete(self, name: str) -> None:
        self._require(name)
        del self.users[name]
        self._write()

    def set_groups(self, name: str, add: Iterable[str] = (), remove: Iterable[str] = ()) -> list[str]:
        user = self._require(name)
        user.groups |= {check_group_name(g) for g in add}
        user.groups -= set(remove)
        self._write()
        return sorted(user.groups)

    def _require(self, name: str) -> User:
        self.refresh()
        user = self.users.get(name)
        if user is None:
            raise RegistryError(f"no user {name} in this queue manager's registry")
        return user

    def _write(self) -> None:
        doc = {"version": 1, "users": {u.name: u.as_json() for u in sorted(self.users.values(), key=lambda u: u.name)}}
        tmp = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            raise
        dfd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        self._stamp = None
        self.refresh()
