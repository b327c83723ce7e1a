"""Subscriptions: the records, their journal form, and the registry that finds them.

A ``Subscription`` is what MQSUB (or DEFINE SUB) makes: a topic string (a pattern when it
has wildcards), where its publications go (a managed queue made for it, or a queue named
by the application or the administrator), and what each publication's copy carries (the
subscription's CorrelId, user data, priority and identity context). Durable ones are
journaled (kind ``KIND_SUBSCRIPTION``, a JSON document: our own file, never evaluated) and
live until removed; non-durable ones live in memory until their handle or connection ends.

``SubscriptionRegistry`` holds them by SubName (the one namespace IBM gives them; a
non-durable subscription made without a name is registered under its SUBID) and answers
which subscriptions a publication's topic string matches, from a cache per topic string
that any change of a subscription or of the topic definitions (``epoch``) makes stale.
Its ``display`` and ``status`` give the attributes DISPLAY SUB and DISPLAY SBSTATUS show.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ferrymq.engine.selector import Selector
from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C

KIND_SUBSCRIPTION = 7  # journal record kind: one durable subscription's definition (JSON)

# DISPLAY SUB SUBTYPE: IBM's MQSUBTYPE_* values (not in the generated constants).
SUBTYPE_API = 1
SUBTYPE_ADMIN = 2
SUBTYPE_PROXY = 3
SUBTYPE_NAMES = {SUBTYPE_API: "API", SUBTYPE_ADMIN: "ADMIN", SUBTYPE_PROXY: "PROXY"}

_MATCH_CACHE_LIMIT = 4096  # topic strings whose matching subscriptions are remembered


def stamp(now: float) -> tuple[str, str]:
    """IBM's attribute date and time forms: ``YYYY-MM-DD`` and ``HH.MM.SS`` (GMT)."""
    t = time.gmtime(now)
    return time.strftime("%Y-%m-%d", t), time.strftime("%H.%M.%S", t)


@dataclass(slots=True, eq=False)
class Subscription:
    """One subscription (see the module docstring). ``topic`` is the full topic string
    subscribed to; ``wildcards`` how its wildcards read (MQWS_TOPIC, MQWS_CHAR)."""

    name: str
    sub_id: bytes
    topic: str
    topic_object: str
    destination: str
    managed: bool
    durable: bool
    wildcards: int = C.MQWS_TOPIC
    dest_qmgr: str = ""
    selector_text: str = ""
    user_data: str = ""
    correl_id: bytes = bytes(24)  # the CorrelId every copy carries (MQCI_NONE: the publication's own)
    pub_priority: int = C.MQPRI_PRIORITY_AS_PUBLISHED
    pub_accounting_token: bytes = bytes(32)
    pub_appl_identity_data: str = ""
    set_identity: bool = False  # MQSO_SET_IDENTITY_CONTEXT: the Pub* identity fields are the caller's
    expiry: int = C.MQEI_UNLIMITED  # tenths of a second from creation (or its last ALTER)
    on_request: bool = False  # MQSO_PUBLICATIONS_ON_REQUEST: retained publications by MQSUBRQ only
    any_user: bool = False  # MQSO_ANY_USERID (VARUSER(ANY)): any user may resume it
    user: str = ""  # SUBUSER: the user that made it; copies carry it as UserIdentifier
    sub_type: int = SUBTYPE_API
    sub_level: int = 1
    sub_scope: int = C.MQTSCOPE_ALL
    created: tuple[str, str] = ("", "")
    altered: tuple[str, str] = ("", "")
    created_at: float = 0.0
    expires_at: float | None = None
    record_id: int = 0
    # Status (DISPLAY SBSTATUS): the handle and connection using it, when it was last
    # resumed, when it last received a publication and how many.
    hsub: int = 0
    hconn: int = 0
    resumed: tuple[str, str] = ("", "")
    last_msg_at: float = 0.0  # when it last received a publication (0: never)
    delivered: int = 0
    selector: Selector | None = field(default=None, repr=False)

    @property
    def last_msg(self) -> tuple[str, str]:
        """LMSGDATE and LMSGTIME (blank: never)."""
        return stamp(self.last_msg_at) if self.last_msg_at else ("", "")

    @property
    def key(self) -> str:
        """Its name in the registry: the SubName, else the SUBID in hex."""
        return self.name or self.sub_id.hex().upper()

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def set_expiry(self, expiry: int, now: float) -> None:
        self.expiry = expiry
        self.expires_at = None if expiry in (C.MQEI_UNLIMITED, 0) or expiry < 0 else now + expiry / 10.0

    # -- journal form ----------------------------------------------------------------------
    def encode(self) -> bytes:
        return json.dumps({
            "name": self.name, "id": self.sub_id.hex(), "topic": self.topic, "tobj": self.topic_object,
            "dest": self.destination, "managed": self.managed, "durable": self.durable, "ws": self.wildcards,
            "destqm": self.dest_qmgr, "selector": self.selector_text, "userdata": self.user_data,
            "correl": self.correl_id.hex(), "prty": self.pub_priority, "acct": self.pub_accounting_token.hex(),
            "applid": self.pub_appl_identity_data, "setid": self.set_identity, "expiry": self.expiry,
            "reqonly": self.on_request, "anyuser": self.any_user, "user": self.user, "type": self.sub_type,
            "level": self.sub_level, "scope": self.sub_scope, "created": self.created, "altered": self.altered,
            "created_at": self.created_at, "expires_at": self.expires_at,
        }).encode()


def decode_subscription(payload: bytes) -> Subscription:
    """A subscription from its journal record.

    Raises:
        DecodeError: the record is not a subscription document this version reads.
    """
    try:
        doc = json.loads(payload)
        sub = Subscription(
            str(doc["name"]), bytes.fromhex(doc["id"]), str(doc["topic"]), str(doc["tobj"]), str(doc["dest"]),
            bool(doc["managed"]), bool(doc["durable"]), int(doc["ws"]), str(doc["destqm"]), str(doc["selector"]),
            str(doc["userdata"]), bytes.fromhex(doc["correl"]), int(doc["prty"]), bytes.fromhex(doc["acct"]),
            str(doc["applid"]), bool(doc["setid"]), int(doc["expiry"]), bool(doc["reqonly"]), bool(doc["anyuser"]),
            str(doc["user"]), int(doc["type"]), int(doc["level"]), int(doc["scope"]),
            (str(doc["created"][0]), str(doc["created"][1])), (str(doc["altered"][0]), str(doc["altered"][1])),
            float(doc["created_at"]), None if doc["expires_at"] is None else float(doc["expires_at"]))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise DecodeError("subscription record", 0, f"not a subscription document: {exc}") from None
    if len(sub.sub_id) != 24 or len(sub.correl_id) != 24 or len(sub.pub_accounting_token) != 32:
        raise DecodeError("subscription record", 0, "an identifier has the wrong length")
    return sub


class SubscriptionRegistry:
    """Every subscription of one queue manager (see the module docstring).

    ``persist(sub)`` and ``unpersist(sub)`` write and delete a durable subscription's
    record; the composition binds them to the journal (the registry never sees it).
    ``matches(pattern, topic, wildcards)`` is the topic tree's rule for a pattern with
    wildcards (``has_wildcards(pattern, wildcards)``); a subscription without wildcards
    receives the publications on its own topic string, found by a dict lookup."""

    def __init__(self, matches: Callable[[str, str, int], bool], has_wildcards: Callable[[str, int], bool]) -> None:
        self.by_key: dict[str, Subscription] = {}
        self.by_id: dict[bytes, Subscription] = {}
        self._matches, self._has_wildcards = matches, has_wildcards
        # By topic string (no wildcards), and those with wildcards, matched topic by topic.
        self._exact: dict[str, list[Subscription]] = {}
        self._wild: dict[bytes, Subscription] = {}
        self.version = 0  # moved by every add, change and removal: the match cache is stale
        self._expiring, self._expiring_version = False, -1
        self._cache: dict[str, tuple[Subscription, ...]] = {}
        self._cache_stamp: tuple[int, int] = (-1, -1)
        self.persist: Callable[[Subscription], None] = lambda sub: None
        self.unpersist: Callable[[Subscription], None] = lambda sub: None

    def __len__(self) -> int:
        return len(self.by_key)

    @property
    def expiring(self) -> bool:
        """Whether any subscription has a SubExpiry (the periodic work looks only then;
        worked out again only after a change)."""
        if self._expiring_version != self.version:
            self._expiring = any(s.expires_at is not None for s in self.by_key.values())
            self._expiring_version = self.version
        return self._expiring

    def __iter__(self) -> Iterator[Subscription]:
        return iter(list(self.by_key.values()))

    def find(self, name: str) -> Subscription | None:
        return self.by_key.get(name)

    def find_id(self, sub_id: bytes) -> Subscription | None:
        return self.by_id.get(sub_id)

    def add(self, sub: Subscription) -> None:
        self._index(sub)
        if sub.durable:
            self.persist(sub)

    def _index(self, sub: Subscription) -> None:
        self.by_key[sub.key] = sub
        self.by_id[sub.sub_id] = sub
        if self._has_wildcards(sub.topic, sub.wildcards):
            self._wild[sub.sub_id] = sub
        else:
            self._exact.setdefault(sub.topic, []).append(sub)
        self.version += 1

    def changed(self, sub: Subscription) -> None:
        """``sub``'s definition changed: journal it (when durable) and forget matches."""
        self.version += 1
        if sub.durable:
            self.persist(sub)

    def remove(self, sub: Subscription) -> None:
        if self.by_key.get(sub.key) is sub:
            del self.by_key[sub.key]
            self.by_id.pop(sub.sub_id, None)
            if self._wild.pop(sub.sub_id, None) is None:
                same = self._exact.get(sub.topic, [])
                same[:] = [s for s in same if s is not sub]
                if not same:
                    self._exact.pop(sub.topic, None)
            self.version += 1
            if sub.durable and sub.record_id:
                self.unpersist(sub)

    def load(self, sub: Subscription) -> None:
        """A durable subscription read back at restart (nothing is journaled)."""
        self._index(sub)

    def matching(self, topic: str, epoch: int) -> tuple[Subscription, ...]:
        """The subscriptions whose topic matches ``topic`` (expiry and selectors are the
        caller's to apply), from the cache unless a subscription or, by ``epoch``, a topic
        definition changed since."""
        stamp_now = (self.version, epoch)
        if stamp_now != self._cache_stamp:
            self._cache.clear()
            self._cache_stamp = stamp_now
        found = self._cache.get(topic)
        if found is None:
            match = self._matches
            found = (*self._exact.get(topic, ()),
                     *(s for s in self._wild.values() if match(s.topic, topic, s.wildcards)))
            if len(self._cache) >= _MATCH_CACHE_LIMIT:
                self._cache.clear()
            self._cache[topic] = found
        return found

    def on_topic(self, topic: str) -> list[Subscription]:
        """Subscriptions made to exactly this topic string (DISPLAY TPSTATUS SUBCOUNT)."""
        return [*self._exact.get(topic, ()), *(s for s in self._wild.values() if s.topic == topic)]
