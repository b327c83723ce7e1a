"""The object authority manager (OAM): who may do what to which object, and the
connection-authentication settings (the AUTHINFO object CONNAUTH names).

Authority records are IBM's: a *profile* (an object name, or a generic one with ``?``
one character, ``*`` any characters within a qualifier, ``**`` any qualifiers), an object
type (MQOT_Q, MQOT_Q_MGR, MQOT_TOPIC, MQOT_NAMELIST ...), an entity (a principal — a user —
or a group) and a set of authorities (MQAUTH_* values: connect, inq, put ...). A user's
authority on an object is the union, over the user and each of its groups, of the
authorities in the most specific profile that matches the object's name and names that
entity (an exact name beats every generic one; among generic ones the one with more
literal characters, then fewer ``**``). Administrators (group ``mqm``, the queue manager's
own user) have every authority and need no record; nobody else has any until granted, so
SYSTEM.* objects are administrators' only unless a record says otherwise.

Nothing is checked while ``enabled`` is false: a queue manager embedded in a program, or
made before security came, behaves as before. ``ferrymq create`` turns it on for a new one.

Everything here, and the channel authentication records (engine.chlauth), is kept in one
journal record (kind 13, JSON, never evaluated), rewritten on each change, so records and settings survive restarts as definitions do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ferrymq.engine.chlauth import ChannelAuthRecords
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

KIND_SECURITY = 13  # journal record kind: the OAM's records and the AUTHINFO settings (JSON)
ADMIN_GROUP = "mqm"
DEFAULT_AUTHINFO = "SYSTEM.DEFAULT.AUTHINFO.IDPWOS"
PRINCIPAL, GROUP = "principal", "group"

# MQAUTH_* value -> MQSC word (SET AUTHREC AUTHADD(...), DISPLAY AUTHREC) and setmqaut's.
AUTH_WORDS: dict[int, str] = {
    F.MQAUTH_ALT_USER_AUTHORITY: "ALTUSR", F.MQAUTH_BROWSE: "BROWSE", F.MQAUTH_CHANGE: "CHG",
    F.MQAUTH_CLEAR: "CLR", F.MQAUTH_CONNECT: "CONNECT", F.MQAUTH_CREATE: "CRT", F.MQAUTH_DELETE: "DLT",
    F.MQAUTH_DISPLAY: "DSP", F.MQAUTH_INPUT: "GET", F.MQAUTH_INQUIRE: "INQ", F.MQAUTH_OUTPUT: "PUT",
    F.MQAUTH_PASS_ALL_CONTEXT: "PASSALL", F.MQAUTH_PASS_IDENTITY_CONTEXT: "PASSID", F.MQAUTH_SET: "SET",
    F.MQAUTH_SET_ALL_CONTEXT: "SETALL", F.MQAUTH_SET_IDENTITY_CONTEXT: "SETID", F.MQAUTH_CONTROL: "CTRL",
    F.MQAUTH_CONTROL_EXTENDED: "CTRLX", F.MQAUTH_PUBLISH: "PUB", F.MQAUTH_SUBSCRIBE: "SUB",
    F.MQAUTH_RESUME: "RESUME", F.MQAUTH_SYSTEM: "SYSTEM"}
WORD_AUTHS = {w: a for a, w in AUTH_WORDS.items()} | {"INQUIRE": F.MQAUTH_INQUIRE, "OUTPUT": F.MQAUTH_OUTPUT,
                                                    "INPUT": F.MQAUTH_INPUT}
_MQI = frozenset({F.MQAUTH_ALT_USER_AUTHORITY, F.MQAUTH_BROWSE, F.MQAUTH_CONNECT, F.MQAUTH_INPUT,
                  F.MQAUTH_INQUIRE, F.MQAUTH_OUTPUT, F.MQAUTH_PASS_ALL_CONTEXT, F.MQAUTH_PASS_IDENTITY_CONTEXT,
                  F.MQAUTH_SET, F.MQAUTH_SET_ALL_CONTEXT, F.MQAUTH_SET_IDENTITY_CONTEXT, F.MQAUTH_PUBLISH,
                  F.MQAUTH_SUBSCRIBE, F.MQAUTH_RESUME})
_ADMIN = frozenset({F.MQAUTH_CHANGE, F.MQAUTH_CLEAR, F.MQAUTH_CREATE, F.MQAUTH_DELETE, F.MQAUTH_DISPLAY,
                    F.MQAUTH_CONTROL, F.MQAUTH_CONTROL_EXTENDED})
ALL_AUTHS = frozenset(AUTH_WORDS)
GROUPS = {F.MQAUTH_ALL: ALL_AUTHS, F.MQAUTH_ALL_MQI: _MQI, F.MQAUTH_ALL_ADMIN: _ADMIN}
GROUP_WORDS = {"ALL": F.MQAUTH_ALL, "ALLMQI": F.MQAUTH_ALL_MQI, "ALLADM": F.MQAUTH_ALL_ADMIN,
               "NONE": F.MQAUTH_NONE}

# Object types authority records are kept for, and their MQSC OBJTYPE words.
OBJTYPE_WORDS = {C.MQOT_Q: "QUEUE", C.MQOT_Q_MGR: "QMGR", C.MQOT_TOPIC: "TOPIC", C.MQOT_NAMELIST: "NAMELIST",
                 C.MQOT_AUTH_INFO: "AUTHINFO", C.MQOT_PROCESS: "PROCESS", C.MQOT_CHANNEL: "CHANNEL",
                 C.MQOT_LISTENER: "LISTENER", C.MQOT_SERVICE: "SERVICE", C.MQOT_COMM_INFO: "COMMINFO"}
WORD_OBJTYPES = {w: t for t, w in OBJTYPE_WORDS.items()} | {"Q": C.MQOT_Q}

# MQOO_* option -> the authority MQOPEN needs for it on the object.
OPEN_AUTHS = ((C.MQOO_INPUT_AS_Q_DEF | C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE, F.MQAUTH_INPUT),
              (C.MQOO_BROWSE, F.MQAUTH_BROWSE), (C.MQOO_OUTPUT, F.MQAUTH_OUTPUT),
              (C.MQOO_INQUIRE, F.MQAUTH_INQUIRE), (C.MQOO_SET, F.MQAUTH_SET),
              (C.MQOO_PASS_IDENTITY_CONTEXT, F.MQAUTH_PASS_IDENTITY_CONTEXT),
              (C.MQOO_PASS_ALL_CONTEXT, F.MQAUTH_PASS_ALL_CONTEXT),
              (C.MQOO_SET_IDENTITY_CONTEXT, F.MQAUTH_SET_IDENTITY_CONTEXT),
              (C.MQOO_SET_ALL_CONTEXT, F.MQAUTH_SET_ALL_CONTEXT))
# MQPMO_* context option -> the MQOO_* an MQPUT1 opens with for it.
PUT1_CONTEXT = ((C.MQPMO_PASS_IDENTITY_CONTEXT, C.MQOO_PASS_IDENTITY_CONTEXT),
                (C.MQPMO_PASS_ALL_CONTEXT, C.MQOO_PASS_ALL_CONTEXT),
                (C.MQPMO_SET_IDENTITY_CONTEXT, C.MQOO_SET_IDENTITY_CONTEXT),
                (C.MQPMO_SET_ALL_CONTEXT, C.MQOO_SET_ALL_CONTEXT))
CHCK_VALUES = (F.MQCHK_NONE, F.MQCHK_OPTIONAL, F.MQCHK_REQUIRED, F.MQCHK_REQUIRED_ADMIN)
MAX_FAILDELAY = 60


def open_auths(options: int) -> frozenset[int]:
    return frozenset(auth for bits, auth in OPEN_AUTHS if options & bits)


def expand(auths: Iterable[int]) -> frozenset[int]:
    """MQAUTH values with ALL, ALLMQI and ALLADM spelled out.

    Raises:
        MQError: MQRCCF_AUTH_VALUE_ERROR for a value that is no authority.
    """
    out: set[int] = set()
    for a in auths:
        if a in GROUPS:
            out |= GROUPS[a]
        elif a in AUTH_WORDS:
            out.add(a)
        elif a != F.MQAUTH_NONE:
            raise failed(F.MQRCCF_AUTH_VALUE_ERROR, f"{a} is not an MQAUTH_* authority")
    return frozenset(out)


def check_profile(profile: str) -> str:
    profile = profile.strip()
    if not 1 <= len(profile) <= C.MQ_OBJECT_NAME_LENGTH or "***" in profile:
        raise failed(F.MQRCCF_PROFILE_NAME_ERROR, f"profile {profile!r}: 1 to 48 characters, at most ** in a row")
    return profile


def is_generic(profile: str) -> bool:
    return any(ch in profile for ch in "*?")


def _compile(profile: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(profile):
        if profile.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        ch = profile[i]
        out.append("[^.]*" if ch == "*" else "[^.]" if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out))


def _specificity(profile: str) -> tuple[int, int, int]:
    """Higher is more specific: an exact name first, then literal characters, then fewer **."""
    generic = is_generic(profile)
    literal = sum(1 for ch in profile if ch not in "*?")
    return (0 if generic else 1, literal, -profile.count("**"))


@dataclass(slots=True)
class AuthInfo:
    """The AUTHINFO object of type IDPWOS that CONNAUTH names (connection authentication)."""

    name: str = DEFAULT_AUTHINFO
    # IBM's default for a new queue manager: administrators give a password, others need
    # not (server.connauth; the default channel records and loopback binding bound the rest).
    chckclnt: int = F.MQCHK_REQUIRED_ADMIN
    chcklocl: int = F.MQCHK_OPTIONAL
    adoptctx: bool = True
    faildelay: int = 1  # seconds before a failed authentication is answered
    descr: str = ""


@dataclass(slots=True)
class Profile:
    objtype: int
    name: str
    pattern: re.Pattern[str]
    entities: dict[tuple[str, str], frozenset[int]] = field(default_factory=dict)


def _no_groups(user: str) -> frozenset[str]:
    return frozenset()


def _not_attached() -> None:
    """Before the queue manager binds its journal write (tests of the rules alone)."""


class Authorities:
    """The OAM: authority records, the checks of the MQI and of commands, AUTHINFO."""

    def __init__(self) -> None:
        self.enabled = False
        self.authinfo = AuthInfo()
        self.profiles: dict[tuple[int, str], Profile] = {}
        self.chlauth = ChannelAuthRecords()  # SET CHLAUTH's records (engine.chlauth), kept in the same record
        self.groups_of: Callable[[str], frozenset[str]] = _no_groups  # the user registry's (set by the server)
        self.superusers: set[str] = set()  # the queue manager's own identities (its OS user, its command server)
        self.record_id = 0
        self.persist: Callable[[], None] = _not_attached  # bound by the queue manager to a journal write

    # -- who may -----------------------------------------------------------------------------

    def is_admin(self, user: str) -> bool:
        return user in self.superusers or ADMIN_GROUP in self.groups_of(user)

    def granted(self, user: str, objtype: int, name: str) -> frozenset[int]:
        """The authorities ``user`` has on object ``name`` of ``objtype`` (every one for an
        administrator)."""
        if self.is_admin(user):
            return ALL_AUTHS
        entities = [(PRINCIPAL, user)] + [(GROUP, g) for g in sorted(self.groups_of(user))]
        out: set[int] = set()
        for entity in entities:
            best: Profile | None = None
            for prof in self.profiles.values():
                if prof.objtype != objtype or entity not in prof.entities or not prof.pattern.fullmatch(name):
                    continue
                if best is None or _specificity(prof.name) > _specificity(best.name):
                    best = prof
            if best is not None:
                out |= best.entities[entity]
        return frozenset(out)

    def check(self, user: str, objtype: int, name: str, needed: Iterable[int], what: str) -> None:
        """Raises MQError MQRC_NOT_AUTHORIZED (2035) unless ``user`` has every authority in
        ``needed`` on the object (nothing is checked while the OAM is off)."""
        if not self.enabled:
            return
        want = frozenset(needed)
        missing = want - self.granted(user, objtype, name)
        if missing:
            words = ",".join(AUTH_WORDS[a].lower() for a in sorted(missing))
            raise failed(C.MQRC_NOT_AUTHORIZED, f"user {user!r} is not authorized to {what} "
                         f"{OBJTYPE_WORDS.get(objtype, str(objtype)).lower()} {name!r} (needs +{words})")

    # -- the records (SET/DELETE/DISPLAY AUTHREC) -------------------------------------------------

    def set_record(self, profile: str, objtype: int, entities: Iterable[tuple[str, str]], add: Iterable[int] = (),
                   remove: Iterable[int] = ()) -> None:
        """SET AUTHREC: add and remove authorities for each entity on a profile (made when
        missing; an entity left with none stays listed with none, as IBM's does).

        Raises:
            MQError: MQRCCF_PROFILE_NAME_ERROR, MQRCCF_OBJECT_TYPE_MISSING, MQRCCF_AUTH_VALUE_ERROR,
                MQRCCF_ENTITY_NAME_MISSING; nothing changes then.
        """
        profile = check_profile(profile)
        if objtype not in OBJTYPE_WORDS:
            raise failed(F.MQRCCF_OBJECT_TYPE_MISSING, f"object type {objtype} takes no authority records")
        plus, minus = expand(add), expand(remove)
        chosen = list(entities)
        if not chosen:
            raise failed(F.MQRCCF_ENTITY_NAME_MISSING, "name a PRINCIPAL or a GROUP")
        key = (objtype, profile)
        prof = self.profiles.get(key) or Profile(objtype, profile, _compile(profile))
        for entity in chosen:
            prof.entities[entity] = (prof.entities.get(entity, frozenset()) | plus) - minus
        self.profiles[key] = prof
        self.persist()

    def delete_record(self, profile: str, objtype: int, entities: Iterable[tuple[str, str]]) -> None:
        """DELETE AUTHREC: the entities' records on the profile (all of them if none named).

        Raises:
            MQError: MQRC_UNKNOWN_ENTITY... as MQRCCF_AUTH_REC_NOT_FOUND when nothing matches.
        """
        key = (objtype, profile.strip())
        prof = self.profiles.get(key)
        chosen = list(entities)
        if prof is None or any(e not in prof.entities for e in chosen):
            raise failed(C.MQRC_UNKNOWN_ENTITY if chosen else F.MQRCCF_PROFILE_NAME_ERROR,
                         f"no authority record for profile {profile.strip()!r} and those entities")
        for e in chosen or list(prof.entities):
            del prof.entities[e]
        if not prof.entities:
            del self.profiles[key]
        self.persist()

    def rename_qmgr(self, old: str, new: str) -> int:
        """The queue manager took name ``new`` (a restore under another name): its own
        QMGR profile, which names it exactly, follows, so that the same principals may
        connect (an entity in both keeps the union). Generic profiles are left as they are.
        Returns how many profiles moved."""
        if old == new or (C.MQOT_Q_MGR, old) not in self.profiles:
            return 0
        prof = self.profiles.pop((C.MQOT_Q_MGR, old))
        into = self.profiles.get((C.MQOT_Q_MGR, new)) or Profile(C.MQOT_Q_MGR, new, _compile(new))
        for entity, auths in prof.entities.items():
            into.entities[entity] = into.entities.get(entity, frozenset()) | auths
        self.profiles[(C.MQOT_Q_MGR, new)] = into
        self.persist()
        return 1

    def records(self, profile: str = "", objtype: int = C.MQOT_ALL,
                entity: tuple[str, str] | None = None) -> Iterator[tuple[Profile, tuple[str, str], frozenset[int]]]:
        """DISPLAY AUTHREC: records by profile name (exact; blank = all), type and entity."""
        for key in sorted(self.profiles):
            prof = self.profiles[key]
            if objtype not in (C.MQOT_ALL, prof.objtype) or (profile and profile.strip() != prof.name):
                continue
            for ent in sorted(prof.entities):
                if entity is None or entity == ent:
                    yield prof, ent, prof.entities[ent]

    # -- AUTHINFO ------------------------------------------------------------------------------

    def alter_authinfo(self, *, chckclnt: int | None = None, chcklocl: int | None = None,
                       adoptctx: bool | None = None, faildelay: int | None = None, descr: str | None = None) -> None:
        """ALTER AUTHINFO of the one IDPWOS object.

        Raises:
            MQError: MQRCCF_PARM_VALUE_ERROR for a value out of range; nothing changes then.
        """
        for value in (chckclnt, chcklocl):
            if value is not None and value not in CHCK_VALUES:
                raise failed(F.MQRCCF_ATTR_VALUE_ERROR, f"{value} is not MQCHK_NONE, OPTIONAL, REQUIRED or REQDADM")
        if chcklocl == F.MQCHK_REQUIRED_ADMIN or (faildelay is not None and not 0 <= faildelay <= MAX_FAILDELAY):
            raise failed(F.MQRCCF_ATTR_VALUE_ERROR, f"CHCKLOCL takes NONE, OPTIONAL or REQUIRED; FAILDELAY 0 to "
                         f"{MAX_FAILDELAY} seconds")
        a = self.authinfo
        a.chckclnt = a.chckclnt if chckclnt is None else chckclnt
        a.chcklocl = a.chcklocl if chcklocl is None else chcklocl
        a.adoptctx = a.adoptctx if adoptctx is None else adoptctx
        a.faildelay = a.faildelay if faildelay is None else faildelay
        a.descr = a.descr if descr is None else descr[:C.MQ_AUTH_INFO_DESC_LENGTH]
        self.persist()

    # -- the journal record ---------------------------------------------------------------------

    def encode(self) -> bytes:
        a = self.authinfo
        return json.dumps({
            "enabled": self.enabled,
            "authinfo": {"name": a.name, "chckclnt": a.chckclnt, "chcklocl": a.chcklocl, "adoptctx": a.adoptctx,
                         "faildelay": a.faildelay, "descr": a.descr},
            "records": [{"objtype": p.objtype, "profile": p.name,
                         "entities": [[kind, name, sorted(auths)] for (kind, name), auths in sorted(p.entities.items())]}
                        for p in self.profiles.values()],
            "chlauth": self.chlauth.encode()}).encode()

    def load(self, payload: bytes) -> None:
        """The record replayed at restart (a damaged one raises ValueError/KeyError/TypeError)."""
        doc = json.loads(payload)
        a = doc["authinfo"]
        info = AuthInfo(str(a["name"]), int(a["chckclnt"]), int(a["chcklocl"]), bool(a["adoptctx"]),
                        int(a["faildelay"]), str(a.get("descr", "")))
        profiles: dict[tuple[int, str], Profile] = {}
        for r in doc["records"]:
            prof = Profile(int(r["objtype"]), str(r["profile"]), _compile(str(r["profile"])))
            for kind, name, auths in r["entities"]:
                if kind not in (PRINCIPAL, GROUP):
                    raise ValueError(f"entity type {kind!r}")
                prof.entities[(str(kind), str(name))] = expand(int(x) for x in auths)
            profiles[(prof.objtype, prof.name)] = prof
        # A record written before channel authentication came holds none (IBM's migrated
        # queue managers start without CHLAUTH records too).
        chlauth = ChannelAuthRecords.decode(doc.get("chlauth", []))
        self.enabled, self.authinfo, self.profiles, self.chlauth = bool(doc["enabled"]), info, profiles, chlauth
