"""Who is signed in to the web console: sessions held in the queue manager's memory.

A session is named by 32 random bytes carried in one cookie (``COOKIE``): HttpOnly (no page
can read it), SameSite=Strict (no other site's page sends it), Secure (browsers send it
only over HTTPS, or to the loopback addresses the console listens on), Path=/. Nothing
about the user is in the cookie; a restart of the queue manager ends every session.

Each session has its own CSRF token, put in every form as a hidden field and required by
every POST (compared in constant time); the sign-in form, before any session exists, is
protected the same way by a token in a short-lived cookie of its own (``LOGIN_COOKIE``,
double submit). A session ends after ``IDLE`` seconds without a request, at sign-out, or
when its user is no longer in the registry.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

COOKIE = "ferrymq_console"
LOGIN_COOKIE = "ferrymq_console_login"
IDLE = 30 * 60.0
MAX_SESSIONS = 256  # beyond it the least recently used session ends


@dataclass(slots=True)
class Session:
    token: str
    user: str
    csrf: str
    last_seen: float


def cookie(name: str, value: str, max_age: int | None = None) -> str:
    """A Set-Cookie value with the attributes of the module docstring."""
    age = f"; Max-Age={max_age}" if max_age is not None else ""
    return f"{name}={value}; Path=/; HttpOnly; Secure; SameSite=Strict{age}"


def same_token(given: str, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


class Sessions:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._by_token: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._by_token)

    def open(self, user: str) -> Session:
        if len(self._by_token) >= MAX_SESSIONS:
            oldest = min(self._by_token.values(), key=lambda s: s.last_seen)
            del self._by_token[oldest.token]
        s = Session(secrets.token_urlsafe(32), user, secrets.token_urlsafe(32), self.clock())
        self._by_token[s.token] = s
        return s

    def find(self, token: str | None) -> Session | None:
        """The live session ``token`` names (its idle time restarted), else None."""
        s = self._by_token.get(token or "")
        if s is None:
            return None
        now = self.clock()
        if now - s.last_seen > IDLE:
            del self._by_token[s.token]
            return None
        s.last_seen = now
        return s

    def close(self, token: str) -> None:
        self._by_token.pop(token, None)
