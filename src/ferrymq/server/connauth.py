"""Connection authentication (IBM's CONNAUTH with an AUTHINFO of type IDPWOS): who a
connecting application is.

The AUTHINFO settings live in the engine (engine.authority: CHCKCLNT for client
connections, CHCKLOCL for local ones, ADOPTCTX, FAILDELAY); the users and their password
hashes in the queue manager's registry (store.users). ``decide`` applies IBM's rules:

| setting | no password given | a user and password given |
|---|---|---|
| NONE | the asserted user | the asserted user (the password is not checked) |
| OPTIONAL | the asserted user | checked: the user it names, or 2035 |
| REQUIRED | 2035 | checked |
| REQDADM (clients only; the default) | the asserted user, 2035 if an administrator | checked |

The asserted user is the local socket's OS user (SO_PEERCRED) for a local connection and
the user the CONNECT names for a client; a client naming none runs as its channel's MCAUSER
when that is set (IBM's MCAUSER replaces the client's user), else it is refused. Whatever
the setting, a client (TCP) connection never becomes an administrator without a checked
password (server.ops checks this too for the user a channel record maps a client to): IBM's default
channel rule blocks privileged users on client channels the same way. With ADOPTCTX(YES) a checked
user becomes the connection's identity (authority checks and the messages'
UserIdentifier); with ADOPTCTX(NO) the asserted one stays.

A refused connection is answered 2035 (MQRC_NOT_AUTHORIZED) after FAILDELAY seconds and
logged with the user and the reason, never the password. Checking a password costs one
scrypt (some 40 ms, run off the event loop); a password that passed is remembered as an
HMAC under a key of this process, so the same user connecting again costs a hash.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from ferrymq.engine.authority import Authorities
from ferrymq.mq import cfc as F
from ferrymq.store.users import MAX_PASSWORD, UserRegistry

_CACHE_MAX = 1024
_STRICTNESS = {F.MQCHK_NONE: 0, F.MQCHK_OPTIONAL: 1, F.MQCHK_REQUIRED_ADMIN: 2, F.MQCHK_REQUIRED: 3}


def stricter(authinfo: int, record: int) -> int:
    """The CHCKCLNT that applies: a channel authentication record's REQDADM or REQUIRED
    when stricter than the AUTHINFO's (ASQMGR: the AUTHINFO's)."""
    if record not in _STRICTNESS or _STRICTNESS[record] <= _STRICTNESS.get(authinfo, 0):
        return authinfo
    return record


@dataclass(frozen=True, slots=True)
class Decision:
    """``user``: the connection's identity; ``verify``: a (user, password) still to check
    (the identity is only granted if it passes); ``refusal``: why it is refused (2035)."""

    user: str = ""
    verify: tuple[str, str] | None = None
    refusal: str = ""


def unchecked_admin(user: str) -> Decision:
    """The refusal of a client connection that would run as administrator ``user`` without
    a checked password."""
    return Decision(refusal=f"administrator {user!r} must give a password over a client connection")


class Authenticator:
    """CONNAUTH for one queue manager's server."""

    def __init__(self, registry: UserRegistry, oam: Authorities, connauth: Callable[[], str] = lambda: "x") -> None:
        """``connauth``: the queue manager's CONNAUTH attribute (blank: passwords are not
        checked, as CHCKCLNT/CHCKLOCL(NONE))."""
        self.registry = registry
        self.oam = oam
        self.connauth = connauth
        self._key = secrets.token_bytes(32)
        self._passed: set[bytes] = set()

    @property
    def enabled(self) -> bool:
        return self.oam.enabled

    @property
    def faildelay(self) -> float:
        return float(self.oam.authinfo.faildelay)

    def decide(self, *, local_user: str, user: str, password: str, chckclnt: int = F.MQCHK_AS_Q_MGR,
               channel_user: str = "") -> Decision:
        """Who a CONNECT is (see the module docstring); ``local_user``: the OS user of a
        local-socket peer, blank for a client over TCP; ``chckclnt``: the CHCKCLNT of the
        channel authentication record that matched the client (engine.chlauth), which
        applies when it is stricter than the AUTHINFO's; ``channel_user``: the MCAUSER of
        the client's channel."""
        if self.registry.refresh():
            self._passed.clear()
        info = self.oam.authinfo
        local = bool(local_user)
        check = (info.chcklocl if local else stricter(info.chckclnt, chckclnt)) if self.connauth().strip() \
            else F.MQCHK_NONE
        asserted = local_user if local else user.strip()
        given = bool(password)
        if len(password.encode("utf-8", "surrogatepass")) > MAX_PASSWORD:
            return Decision(refusal=f"password longer than {MAX_PASSWORD} bytes")
        if check == F.MQCHK_REQUIRED and not (given and user.strip()):
            return Decision(refusal="a user and password are required (CHCKCLNT/CHCKLOCL REQUIRED)")
        if given and user.strip() and check != F.MQCHK_NONE:
            adopted = user.strip() if info.adoptctx or not local else asserted
            return Decision(adopted, verify=(user.strip(), password))
        if not local:
            for who in (asserted, channel_user.strip()):
                if who and self.oam.is_admin(who):
                    return unchecked_admin(who)
            asserted = asserted or channel_user.strip()
        if not asserted:
            return Decision(refusal="no user given")
        return Decision(asserted)

    def cached(self, user: str, password: str) -> bool:
        """True when this (user, password) passed before, and the registry has not changed."""
        return self._tag(user, password) in self._passed

    def verify(self, user: str, password: str) -> bool:
        """The password check itself (scrypt: call it off the event loop)."""
        ok = self.registry.verify(user, password)
        if ok:
            if len(self._passed) >= _CACHE_MAX:
                self._passed.clear()
            self._passed.add(self._tag(user, password))
        return ok

    def _tag(self, user: str, password: str) -> bytes:
        return hmac.new(self._key, user.encode() + b"\0" + password.encode("utf-8", "surrogatepass"),
                        hashlib.sha256).digest()
