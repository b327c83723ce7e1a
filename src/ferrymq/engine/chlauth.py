"""Channel authentication records (IBM's CHLAUTH): which inbound channels may start, from
where, as whom, and the user each one then runs as.

A record is keyed by a channel *profile* (a channel name, or a generic one where ``*``
stands for any characters, dots included), a TYPE and the value it matches:

| TYPE       | matches                                    | does                                  |
|------------|--------------------------------------------|---------------------------------------|
| BLOCKADDR  | ADDRLIST: partner address patterns         | refuses the connection (profile '*')  |
| BLOCKUSER  | USERLIST: user ids, ``*MQADMIN``           | refuses a SVRCONN that runs as one    |
| ADDRESSMAP | ADDRESS: the partner's address             | USERSRC(MAP/NOACCESS/CHANNEL)         |
| USERMAP    | CLNTUSER: the client's user (SVRCONN only) | USERSRC ..., CHCKCLNT                 |
| QMGRMAP    | QMNAME: the partner queue manager's name   | USERSRC ... (message channels only)   |
| SSLPEERMAP | SSLPEER: the partner certificate's DN      | USERSRC ...                           |

The mapping types may also carry ADDRESS, which then must match too. USERSRC(MAP) makes the
channel run as MCAUSER; NOACCESS refuses it; CHANNEL keeps the user the channel would have
had. WARN(YES) on a refusing record logs (and reports) the refusal without refusing.

Which record applies (``resolve``), as IBM's queue manager decides it:

1. BLOCKADDR first: an address that any BLOCKADDR pattern matches is refused.
2. Among the mapping records whose profile, value and ADDRESS all match: those of the most
   specific channel profile; among them an SSLPEERMAP before a USERMAP or QMGRMAP, before an
   ADDRESSMAP; then the most specific value (fewer wildcards, more literal characters), then
   the most specific ADDRESS. USERMAP applies only to SVRCONN channels, QMGRMAP only to the
   others.
3. BLOCKUSER last, against the user the channel will run as, from the BLOCKUSER record of the
   most specific profile that matches the channel (so ``SET CHLAUTH(APP.SVRCONN)
   TYPE(BLOCKUSER) USERLIST(nobody)`` lifts the ``*MQADMIN`` rule of profile '*' for that
   channel). It applies to SVRCONN channels only, as IBM's does.

Address patterns are IBM's: an IPv4 address in dotted parts, each a number, a range
``n-m`` or ``*``, a trailing ``*`` standing for every part after it (``9.20.1-30.*``,
``192.0.*``, ``*``); IPv6 the same with colon-separated hexadecimal parts. Host names are not
matched (IBM needs REVDNS for them; ferrymq never looks names up).

Everything here is pure: records in, a decision out, so the rules are tested as a table.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from ferrymq.errors import MQError, failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

BLOCKUSER, BLOCKADDR, SSLPEERMAP = F.MQCAUT_BLOCKUSER, F.MQCAUT_BLOCKADDR, F.MQCAUT_SSLPEERMAP
ADDRESSMAP, USERMAP, QMGRMAP = F.MQCAUT_ADDRESSMAP, F.MQCAUT_USERMAP, F.MQCAUT_QMGRMAP
TYPE_WORDS = {BLOCKUSER: "BLOCKUSER", BLOCKADDR: "BLOCKADDR", SSLPEERMAP: "SSLPEERMAP", ADDRESSMAP: "ADDRESSMAP",
              USERMAP: "USERMAP", QMGRMAP: "QMGRMAP"}
WORD_TYPES = {w: t for t, w in TYPE_WORDS.items()}
MAPPING = (SSLPEERMAP, ADDRESSMAP, USERMAP, QMGRMAP)
USERSRC_WORDS = {C.MQUSRC_MAP: "MAP", C.MQUSRC_NOACCESS: "NOACCESS", C.MQUSRC_CHANNEL: "CHANNEL"}
WORD_USERSRC = {w: v for v, w in USERSRC_WORDS.items()}
CHCKCLNT_WORDS = {F.MQCHK_AS_Q_MGR: "ASQMGR", F.MQCHK_REQUIRED: "REQUIRED", F.MQCHK_REQUIRED_ADMIN: "REQDADM"}
WORD_CHCKCLNT = {w: v for v, w in CHCKCLNT_WORDS.items()}
MQADMIN = "*MQADMIN"
MAX_LIST = 100  # USERLIST / ADDRLIST entries (IBM's limit)
MAX_RECORDS = 10_000  # records per queue manager: bounds a journal record and every connect's scan
# Type order within one channel profile: identity before address.
_TYPE_RANK = {SSLPEERMAP: 3, USERMAP: 2, QMGRMAP: 2, ADDRESSMAP: 1}

# IBM's default records of a new queue manager: no administrator over any client channel,
# no SYSTEM.* channel for anybody, except SYSTEM.ADMIN.SVRCONN (for non-administrators).
DEFAULT_RULES = (
    ("SYSTEM.ADMIN.SVRCONN", ADDRESSMAP, {"address": "*", "usersrc": C.MQUSRC_CHANNEL,
                                          "descr": "Default rule to allow MQ Explorer access"}),
    ("SYSTEM.*", ADDRESSMAP, {"address": "*", "usersrc": C.MQUSRC_NOACCESS,
                              "descr": "Default rule to disable all SYSTEM channels"}),
    ("*", BLOCKUSER, {"userlist": (MQADMIN,), "descr": "Default rule to disallow privileged users"}),
)


@dataclass(frozen=True, slots=True)
class Record:
    """One CHLAUTH record. ``profile`` and ``type`` with the value of its type (``address``
    for ADDRESSMAP, ``clntuser``, ``qmname``, ``sslpeer``; the lists for the blocking types)
    identify it; the rest is what it does."""

    profile: str
    type: int
    address: str = ""
    clntuser: str = ""
    qmname: str = ""
    sslpeer: str = ""
    sslcerti: str = ""
    usersrc: int = C.MQUSRC_MAP
    mcauser: str = ""
    userlist: tuple[str, ...] = ()
    addrlist: tuple[str, ...] = ()
    chckclnt: int = F.MQCHK_AS_Q_MGR
    warn: bool = False
    descr: str = ""
    altered: str = ""  # "YYYY-MM-DD HH.MM.SS" of its last SET

    def key(self) -> tuple[str, int, str, str]:
        """What identifies the record: two SETs with the same key are the same record."""
        value = {ADDRESSMAP: "", USERMAP: self.clntuser, QMGRMAP: self.qmname,
                 SSLPEERMAP: self.sslpeer + "\0" + self.sslcerti}.get(self.type, "")
        return (self.profile, self.type, value, self.address if self.type in MAPPING else "")


@dataclass(frozen=True, slots=True)
class Partner:
    """What an inbound channel shows when it starts: the channel's name and type (MQCHT_*),
    the partner's address (an IP address), the client's user (SVRCONN), the partner queue
    manager's name (message channels) and its certificate's DNs when TLS was used."""

    channel: str
    chltype: int = F.MQCHT_SVRCONN
    address: str = ""
    clntuser: str = ""
    qmname: str = ""
    peer_dn: str = ""
    issuer_dn: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """``refused``: the MQRQ_CHANNEL_BLOCKED_* qualifier (0: allowed); ``record``: the record
    that decided (None: no record matched); ``user``: the MCAUSER a USERSRC(MAP) record set
    (blank: the channel keeps its own); ``chckclnt``: the record's CHCKCLNT; ``warnings``:
    refusals of WARN(YES) records, (qualifier, record), that let the channel through."""

    refused: int = 0
    record: Record | None = None
    user: str = ""
    chckclnt: int = F.MQCHK_AS_Q_MGR
    warnings: tuple[tuple[int, Record], ...] = field(default_factory=tuple)


# -- patterns ----------------------------------------------------------------------------------

# Patterns are compiled once per distinct text: every CONNECT scans the records, and re's own
# cache (512 entries) would thrash on a table of thousands.
_CACHED = MAX_RECORDS * 2


@functools.lru_cache(maxsize=_CACHED)
def _generic(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if ch == "*" else re.escape(ch) for ch in pattern), re.DOTALL)


def name_matches(pattern: str, name: str, *, fold: bool = False) -> bool:
    """A channel profile, CLNTUSER or QMNAME pattern (``*`` any characters) against a name."""
    if fold:
        pattern, name = pattern.upper(), name.upper()
    if "*" not in pattern:
        return pattern == name
    return _generic(pattern).fullmatch(name) is not None


def specificity(pattern: str) -> tuple[int, int, int]:
    """Higher is more specific: no wildcard first; then the later the first ``*``, then the
    more literal characters (``SYSTEM.ADMIN.*`` beats ``SYSTEM.*``, which beats ``*``)."""
    star = pattern.find("*")
    return (1 if star < 0 else 0, len(pattern) if star < 0 else star, len(pattern) - pattern.count("*"))


@functools.lru_cache(maxsize=_CACHED)
def _parts(address: str) -> tuple[tuple[int, ...], int] | None:
    """An IP address as its parts (4 bytes, or 8 16-bit groups) and the base to print them."""
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]").split("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, ipaddress.IPv4Address):
        return tuple(ip.packed), 10
    packed = ip.packed
    return tuple(int.from_bytes(packed[i:i + 2], "big") for i in range(0, 16, 2)), 16


@functools.lru_cache(maxsize=_CACHED)
def _pattern_parts(pattern: str) -> tuple[tuple[tuple[int, int] | None, ...], str, bool]:
    """An address pattern as per-part (low, high) ranges (None: ``*``), its separator and
    whether a trailing ``*`` covers the parts after it.

    Raises:
        MQError: MQRCCF_ADDRESS_ERROR (3345) or MQRCCF_IPADDR_RANGE_ERROR (3346).
    """
    text = pattern.strip()
    sep = ":" if ":" in text else "."
    base, width, count = (16, 0xFFFF, 8) if sep == ":" else (10, 255, 4)
    pieces = text.split(sep)
    if not text or len(pieces) > count or any(p == "" for p in pieces):
        raise failed(F.MQRCCF_IPADDR_ERROR, f"address pattern {pattern!r}: parts separated by {sep!r}, each a "
                     "number, a range n-m or *")
    out: list[tuple[int, int] | None] = []
    for piece in pieces:
        if piece == "*":
            out.append(None)
            continue
        low_s, dash, high_s = piece.partition("-")
        try:
            low, high = int(low_s, base), int(high_s if dash else low_s, base)
        except ValueError:
            raise failed(F.MQRCCF_IPADDR_ERROR, f"address pattern {pattern!r}: {piece!r} is not a number, "
                         "a range n-m or *") from None
        if not 0 <= low <= high <= width:
            raise failed(F.MQRCCF_IPADDR_RANGE_ERROR, f"address pattern {pattern!r}: range {piece!r} is not "
                         f"low-high within 0..{width}")
        out.append((low, high))
    trailing = pieces[-1] == "*"
    if len(out) < count and not trailing:
        raise failed(F.MQRCCF_IPADDR_ERROR, f"address pattern {pattern!r}: {count} parts, or end with *")
    return tuple(out), sep, trailing


def _exact(pattern: str) -> tuple[tuple[int, ...], int] | None:
    """A pattern that is one address (IPv6 may then be written with ``::``), as its parts."""
    text = pattern.strip()
    return None if "*" in text or "-" in text else _parts(text)


def check_address(pattern: str) -> str:
    """A valid address pattern, stripped (raises MQError as ``_pattern_parts``)."""
    if _exact(pattern) is None:
        _pattern_parts(pattern)
    return pattern.strip()


def address_matches(pattern: str, address: str) -> bool:
    """IBM's generic IP address (see the module docstring) against a partner's address;
    an invalid pattern or an address that is no IP address matches nothing but ``*``."""
    if pattern.strip() == "*":
        return True
    parts = _parts(address)
    if parts is None:
        return False
    exact = _exact(pattern)
    if exact is not None:
        return exact == parts
    values, base = parts
    try:
        ranges, sep, trailing = _pattern_parts(pattern)
    except MQError:  # a stored pattern was checked when set; never raise at connect
        return False
    if (sep == ":") != (base == 16):
        return False
    if len(ranges) < len(values) and not trailing:
        return False
    if trailing:
        ranges = ranges + (None,) * (len(values) - len(ranges))
    return all(r is None or r[0] <= v <= r[1] for r, v in zip(ranges, values, strict=True))


def address_specificity(pattern: str) -> int:
    """Higher is more specific: minus how many addresses the pattern covers (a blank
    ADDRESS, or ``*``, covers them all)."""
    if not pattern or pattern.strip() == "*":
        return -(1 << 128)
    if _exact(pattern) is not None:
        return -1
    try:
        ranges, sep, _trailing = _pattern_parts(pattern)
    except MQError:
        return -(1 << 128)
    width, count = (0x10000, 8) if sep == ":" else (0x100, 4)
    covered = 1
    for r in ranges + (None,) * (count - len(ranges)):
        covered *= width if r is None else r[1] - r[0] + 1
    return -covered


def _dn_fields(dn: str) -> list[tuple[str, str]]:
    """A DN (``CN=alice,OU=apps,O=Example``) as (attribute, value) pairs, names upper-cased;
    a backslash-escaped or quoted comma stays in its value."""
    out: list[tuple[str, str]] = []
    buf, quoted, i = "", False, 0
    pieces: list[str] = []
    while i < len(dn):
        ch = dn[i]
        if ch == "\\" and i + 1 < len(dn):
            buf += dn[i:i + 2]
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch in ",;" and not quoted:
            pieces.append(buf)
            buf = ""
            i += 1
            continue
        buf += ch
        i += 1
    pieces.append(buf)
    for piece in pieces:
        name, eq, value = piece.partition("=")
        if eq:
            out.append((name.strip().upper(), value.strip().strip('"')))
    return out


def sslpeer_matches(pattern: str, dn: str) -> bool:
    """IBM's SSLPEER rule: every attribute the pattern names is in the DN with a value that
    matches (compared without case; a value ending in ``*`` matches any value it begins);
    attributes the pattern does not name may be anything. A blank DN matches nothing."""
    want = _dn_fields(pattern)
    have = _dn_fields(dn)
    if not want or not have:
        return False
    used = [False] * len(have)
    for name, value in want:
        for i, (hname, hvalue) in enumerate(have):
            if used[i] or hname != name:
                continue
            if name_matches(value, hvalue, fold=True):
                used[i] = True
                break
        else:
            return False
    return True


# -- which record ----------------------------------------------------------------------------------

def _value_of(rec: Record) -> str:
    return {USERMAP: rec.clntuser, QMGRMAP: rec.qmname, SSLPEERMAP: rec.sslpeer}.get(rec.type, "")


def _mapping_matches(rec: Record, p: Partner) -> bool:
    if rec.type == USERMAP and (p.chltype != F.MQCHT_SVRCONN or not name_matches(rec.clntuser, p.clntuser)):
        return False
    if rec.type == QMGRMAP and (p.chltype == F.MQCHT_SVRCONN or not name_matches(rec.qmname, p.qmname, fold=True)):
        return False
    if rec.type == SSLPEERMAP and not (sslpeer_matches(rec.sslpeer, p.peer_dn)
                                       and (not rec.sslcerti or sslpeer_matches(rec.sslcerti, p.issuer_dn))):
        return False
    return not rec.address or address_matches(rec.address, p.address)


def _rank(rec: Record) -> tuple[object, ...]:
    return (specificity(rec.profile), _TYPE_RANK[rec.type], specificity(_value_of(rec)),
            address_specificity(rec.address))


def blocked_address(records: Iterable[Record], address: str) -> Record | None:
    """The BLOCKADDR record whose ADDRLIST matches ``address`` (checked before anything
    else, as IBM's listener does), or None."""
    for rec in records:
        if rec.type == BLOCKADDR and any(address_matches(a, address) for a in rec.addrlist):
            return rec
    return None


def mapping(records: Iterable[Record], partner: Partner) -> Record | None:
    """The mapping record that applies to ``partner`` (rule 2 of the module docstring)."""
    best: Record | None = None
    for rec in records:
        if rec.type not in _TYPE_RANK or not name_matches(rec.profile, partner.channel):
            continue
        if _mapping_matches(rec, partner) and (best is None or _rank(rec) > _rank(best)):
            best = rec
    return best


def blockuser(records: Iterable[Record], channel: str) -> Record | None:
    """The BLOCKUSER record of the most specific profile matching ``channel``."""
    best: Record | None = None
    for rec in records:
        if rec.type == BLOCKUSER and name_matches(rec.profile, channel) and (
                best is None or specificity(rec.profile) > specificity(best.profile)):
            best = rec
    return best


def user_blocked(rec: Record, user: str, is_admin: Callable[[str], bool]) -> bool:
    """Whether ``user`` is on ``rec``'s USERLIST (``*MQADMIN``: any administrator)."""
    return any(u == user or (u.upper() == MQADMIN and is_admin(user)) for u in rec.userlist)


def resolve(records: Sequence[Record], partner: Partner, is_admin: Callable[[str], bool],
            channel_user: Callable[[str], str] | None = None) -> Decision:
    """Whether ``partner`` may start its channel, and as whom (the module docstring's rules).

    ``channel_user(mapped)``: the user the channel will run as, given the MCAUSER a
    USERSRC(MAP) record set (blank for none): the caller's rules of MCAUSER and ADOPTCTX;
    BLOCKUSER is checked against it. By default the mapped user, else the client's.
    """
    if channel_user is None:
        def channel_user(mapped: str) -> str:
            return mapped or partner.clntuser
    warnings: list[tuple[int, Record]] = []
    blocked = blocked_address(records, partner.address)
    if blocked is not None:
        if not blocked.warn:
            return Decision(F.MQRQ_CHANNEL_BLOCKED_ADDRESS, blocked)
        warnings.append((F.MQRQ_CHANNEL_BLOCKED_ADDRESS, blocked))
    rec = mapping(records, partner)
    mapped = ""
    chckclnt = F.MQCHK_AS_Q_MGR
    if rec is not None:
        chckclnt = rec.chckclnt if rec.type in (ADDRESSMAP, USERMAP) else F.MQCHK_AS_Q_MGR
        if rec.usersrc == C.MQUSRC_NOACCESS:
            if not rec.warn:
                return Decision(F.MQRQ_CHANNEL_BLOCKED_NOACCESS, rec, warnings=tuple(warnings))
            warnings.append((F.MQRQ_CHANNEL_BLOCKED_NOACCESS, rec))
        elif rec.usersrc == C.MQUSRC_MAP:
            mapped = rec.mcauser
    if partner.chltype == F.MQCHT_SVRCONN:
        block = blockuser(records, partner.channel)
        if block is not None and user_blocked(block, channel_user(mapped), is_admin):
            if not block.warn:
                return Decision(F.MQRQ_CHANNEL_BLOCKED_USERID, block, mapped, chckclnt, tuple(warnings))
            warnings.append((F.MQRQ_CHANNEL_BLOCKED_USERID, block))
    return Decision(0, rec, mapped, chckclnt, tuple(warnings))


def describe(rec: Record) -> str:
    """A record as the SET CHLAUTH that makes it (for log lines and messages)."""
    words = [f"CHLAUTH('{rec.profile}')", f"TYPE({TYPE_WORDS.get(rec.type, rec.type)})"]
    if rec.type == BLOCKUSER:
        words.append("USERLIST(" + ",".join(f"'{u}'" for u in rec.userlist) + ")")
    elif rec.type == BLOCKADDR:
        words.append("ADDRLIST(" + ",".join(f"'{a}'" for a in rec.addrlist) + ")")
    else:
        for name, value in (("SSLPEER", rec.sslpeer), ("CLNTUSER", rec.clntuser), ("QMNAME", rec.qmname),
                            ("ADDRESS", rec.address)):
            if value:
                words.append(f"{name}('{value}')")
        words.append(f"USERSRC({USERSRC_WORDS.get(rec.usersrc, rec.usersrc)})")
        if rec.mcauser:
            words.append(f"MCAUSER('{rec.mcauser}')")
    if rec.warn:
        words.append("WARN(YES)")
    return " ".join(words)


def altered_stamp(date: str, tod: str) -> str:
    """ALTDATE and ALTTIME as DISPLAY CHLAUTH shows them, from a PutDate/PutTime pair."""
    return f"{date[:4]}-{date[4:6]}-{date[6:8]} {tod[:2]}.{tod[2:4]}.{tod[4:6]}"


def with_defaults(altered: str) -> list[Record]:
    """IBM's default records of a new queue manager (DEFAULT_RULES)."""
    out = []
    for profile, kind, values in DEFAULT_RULES:
        out.append(replace(Record(profile, kind), altered=altered, **values))
    return out


# -- the records: SET CHLAUTH's actions, DISPLAY CHLAUTH's selection ------------------------------

_VALUE_FIELD = {ADDRESSMAP: "address", USERMAP: "clntuser", QMGRMAP: "qmname", SSLPEERMAP: "sslpeer",
                BLOCKUSER: "userlist", BLOCKADDR: "addrlist"}


def check(rec: Record, action: int) -> Record:
    """A record as SET CHLAUTH may store it (values stripped), or MQError with IBM's reason:
    MQRCCF_CHLAUTH_NAME_ERROR (BLOCKADDR not on '*', a bad profile), MQRCCF_PARM_MISSING (the
    type's value), MQRCCF_IPADDR_ERROR / _RANGE_ERROR, MQRCCF_CHLAUTH_USERSRC_ERROR (MAP
    without MCAUSER, or MCAUSER without MAP), MQRCCF_CHLAUTH_WARN_ERROR (WARN(YES) on a record
    that refuses nothing), MQRCCF_CHLAUTH_CHKCLI_ERROR (CHCKCLNT beside ADDRESSMAP/USERMAP),
    MQRCCF_PARM_VALUE_ERROR (a list longer than 100, a user longer than 12)."""
    profile = rec.profile.strip()
    if not 1 <= len(profile) <= C.MQ_CHANNEL_NAME_LENGTH:
        raise failed(F.MQRCCF_CHLAUTH_NAME_ERROR, f"channel profile {profile!r}: 1 to {C.MQ_CHANNEL_NAME_LENGTH} "
                     "characters")
    if rec.type not in TYPE_WORDS:
        raise failed(F.MQRCCF_CHLAUTH_TYPE_ERROR, f"TYPE {rec.type} is not one of {', '.join(WORD_TYPES)}")
    if rec.type == BLOCKADDR and profile != "*":
        raise failed(F.MQRCCF_CHLAUTH_NAME_ERROR, "TYPE(BLOCKADDR) is set on the profile '*' only")
    out = replace(rec, profile=profile, address=rec.address.strip(), clntuser=rec.clntuser.strip(),
                  qmname=rec.qmname.strip(), sslpeer=rec.sslpeer.strip(), sslcerti=rec.sslcerti.strip(),
                  mcauser=rec.mcauser.strip(), userlist=tuple(u.strip() for u in rec.userlist if u.strip()),
                  addrlist=tuple(a.strip() for a in rec.addrlist if a.strip()), descr=rec.descr.strip())
    if action == F.MQACT_REMOVEALL:
        return out
    field_name = _VALUE_FIELD[rec.type]
    if not getattr(out, field_name) and not (action == F.MQACT_REMOVE and rec.type in (BLOCKUSER, BLOCKADDR)):
        raise failed(F.MQRCCF_PARM_MISSING, f"TYPE({TYPE_WORDS[rec.type]}) needs {field_name.upper()}")
    for a in (out.address, *out.addrlist):
        if a:
            check_address(a)
    if len(out.userlist) > MAX_LIST or len(out.addrlist) > MAX_LIST:
        raise failed(F.MQRCCF_PARM_VALUE_ERROR, f"USERLIST and ADDRLIST hold at most {MAX_LIST} entries")
    if any(len(u) > C.MQ_USER_ID_LENGTH and u.upper() != MQADMIN for u in out.userlist) or \
            len(out.mcauser) > C.MQ_MCA_USER_ID_LENGTH:
        raise failed(F.MQRCCF_PARM_VALUE_ERROR, f"user ids are at most {C.MQ_USER_ID_LENGTH} characters")
    if action == F.MQACT_REMOVE:
        return out
    if rec.type in MAPPING:
        if out.usersrc not in USERSRC_WORDS:
            raise failed(F.MQRCCF_CHLAUTH_USERSRC_ERROR, f"USERSRC {out.usersrc} is not MAP, NOACCESS or CHANNEL")
        if (out.usersrc == C.MQUSRC_MAP) != bool(out.mcauser):
            raise failed(F.MQRCCF_CHLAUTH_USERSRC_ERROR, "MCAUSER is given with USERSRC(MAP), and only then")
        if out.warn and out.usersrc != C.MQUSRC_NOACCESS:
            raise failed(F.MQRCCF_CHLAUTH_WARN_ERROR, "WARN(YES) is for records that refuse: USERSRC(NOACCESS), "
                         "BLOCKUSER, BLOCKADDR")
    if out.chckclnt != F.MQCHK_AS_Q_MGR and (rec.type not in (ADDRESSMAP, USERMAP) or
                                             out.chckclnt not in CHCKCLNT_WORDS):
        raise failed(F.MQRCCF_CHLAUTH_CHKCLI_ERROR, "CHCKCLNT (ASQMGR, REQUIRED, REQDADM) is for ADDRESSMAP and "
                     "USERMAP records")
    return out


class ChannelAuthRecords:
    """The CHLAUTH records of one queue manager, in the order they were set."""

    def __init__(self, records: Iterable[Record] = ()) -> None:
        self.records: list[Record] = list(records)

    def set(self, rec: Record, action: int = F.MQACT_ADD) -> None:
        """SET CHLAUTH with ACTION(ADD/REPLACE/REMOVE/REMOVEALL), as IBM's: on the mapping
        types ADD fails when the record exists and REPLACE adds or replaces; on BLOCKUSER and
        BLOCKADDR ADD adds to the list, REPLACE replaces it and REMOVE takes entries out of it;
        REMOVE of a mapping record removes it; REMOVEALL removes every record of the type on
        the profile. Nothing changes when it raises.

        Raises:
            MQError: what ``check`` raises; MQRCCF_CHLAUTH_ALREADY_EXISTS, MQRCCF_CHLAUTH_NOT_FOUND,
                MQRCCF_CHLAUTH_ACTION_ERROR, MQRCCF_CHLAUTH_MAX_EXCEEDED.
        """
        if action not in (F.MQACT_ADD, F.MQACT_REPLACE, F.MQACT_REMOVE, F.MQACT_REMOVEALL):
            raise failed(F.MQRCCF_CHLAUTH_ACTION_ERROR, f"ACTION {action} is not ADD, REPLACE, REMOVE or REMOVEALL")
        rec = check(rec, action)
        same_type = [i for i, r in enumerate(self.records) if r.profile == rec.profile and r.type == rec.type]
        if action == F.MQACT_REMOVEALL:
            if not same_type:
                raise failed(F.MQRCCF_CHLAUTH_NOT_FOUND, f"no {TYPE_WORDS[rec.type]} record on {rec.profile!r}")
            self.records = [r for i, r in enumerate(self.records) if i not in same_type]
            return
        if rec.type in (BLOCKUSER, BLOCKADDR):
            self._set_list(rec, action, same_type[0] if same_type else None)
            return
        found = next((i for i in same_type if self.records[i].key() == rec.key()), None)
        if action == F.MQACT_REMOVE:
            if found is None:
                raise failed(F.MQRCCF_CHLAUTH_NOT_FOUND, f"no such {TYPE_WORDS[rec.type]} record on {rec.profile!r}")
            del self.records[found]
        elif found is None:
            self._add(rec)
        elif action == F.MQACT_ADD:
            raise failed(F.MQRCCF_CHLAUTH_ALREADY_EXISTS, f"that {TYPE_WORDS[rec.type]} record on {rec.profile!r} "
                         "exists (ACTION(REPLACE) changes it)")
        else:
            self.records[found] = rec

    def _set_list(self, rec: Record, action: int, at: int | None) -> None:
        name = "userlist" if rec.type == BLOCKUSER else "addrlist"
        given: tuple[str, ...] = getattr(rec, name)
        old: tuple[str, ...] = getattr(self.records[at], name) if at is not None else ()
        if action == F.MQACT_REMOVE:
            if at is None or not set(given) <= set(old):
                raise failed(F.MQRCCF_CHLAUTH_NOT_FOUND, f"{name.upper()} of {rec.profile!r} does not hold those")
            merged = tuple(x for x in old if x not in given)
        elif action == F.MQACT_ADD:
            merged = old + tuple(x for x in given if x not in old)
        else:
            merged = given
        if len(merged) > MAX_LIST:
            raise failed(F.MQRCCF_PARM_VALUE_ERROR, f"{name.upper()} holds at most {MAX_LIST} entries")
        # REMOVE keeps the record's other attributes; ADD and REPLACE take the command's.
        base = self.records[at] if at is not None and action == F.MQACT_REMOVE else rec
        new = replace(base, altered=rec.altered, **{name: merged})  # type: ignore[arg-type]
        if at is None:
            self._add(new)
        elif merged:
            self.records[at] = new
        else:
            del self.records[at]

    def _add(self, rec: Record) -> None:
        if len(self.records) >= MAX_RECORDS:
            raise failed(F.MQRCCF_CHLAUTH_MAX_EXCEEDED, f"at most {MAX_RECORDS} channel authentication records")
        self.records.append(rec)

    def select(self, profile: str = "*", kind: int = F.MQCAUT_ALL, match: int = F.MQMATCH_GENERIC) -> list[Record]:
        """DISPLAY CHLAUTH: MATCH(GENERIC) the records whose profile the (generic) name
        matches; MATCH(EXACT) the records of exactly that profile; MATCH(ALL) every record
        whose profile could apply to a channel of that name (``profile`` then names one)."""
        profile = profile.strip() or "*"
        out = []
        for rec in self.records:
            if kind not in (F.MQCAUT_ALL, rec.type):
                continue
            if match == F.MQMATCH_EXACT:
                ok = rec.profile == profile
            elif match == F.MQMATCH_ALL:
                ok = name_matches(rec.profile, profile)
            else:
                ok = name_matches(profile, rec.profile)
            if ok:
                out.append(rec)
        return sorted(out, key=lambda r: (r.profile, r.type))

    # -- the journal (inside the security record, engine.authority) -------------------------
    def encode(self) -> list[dict[str, object]]:
        return [{"profile": r.profile, "type": r.type, "address": r.address, "clntuser": r.clntuser,
                 "qmname": r.qmname, "sslpeer": r.sslpeer, "sslcerti": r.sslcerti, "usersrc": r.usersrc,
                 "mcauser": r.mcauser, "userlist": list(r.userlist), "addrlist": list(r.addrlist),
                 "chckclnt": r.chckclnt, "warn": r.warn, "descr": r.descr, "altered": r.altered}
                for r in self.records]

    @staticmethod
    def decode(items: object) -> ChannelAuthRecords:
        """Records from ``encode``'s list (a damaged one raises ValueError/KeyError/TypeError)."""
        if not isinstance(items, list):
            raise ValueError("chlauth records are a list")
        out = []
        for d in items:
            rec = Record(str(d["profile"]), int(d["type"]), str(d["address"]), str(d["clntuser"]), str(d["qmname"]),
                         str(d["sslpeer"]), str(d["sslcerti"]), int(d["usersrc"]), str(d["mcauser"]),
                         tuple(str(u) for u in d["userlist"]), tuple(str(a) for a in d["addrlist"]),
                         int(d["chckclnt"]), bool(d["warn"]), str(d["descr"]), str(d["altered"]))
            if rec.type not in TYPE_WORDS:
                raise ValueError(f"chlauth record type {rec.type}")
            out.append(rec)
        return ChannelAuthRecords(out)
