"""MQSC: the command language, parsed into the engine's command model.

Syntax as runmqsc reads it: keywords in any case (unquoted values are upper-cased, quoted
ones kept, ``''`` is a quote inside quotes), ``KEYWORD(value)`` or a bare keyword, a
trailing ``+`` (continue, dropping the next line's leading blanks) or ``-`` (continue
as is), ``*`` starting a comment line. Verbs, object types and attribute names accept
IBM's abbreviations and synonyms. Attribute names and values come from the one catalog
(ferrymq.engine.attrs), so MQSC, PCF and Python share every rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ferrymq.admin import Keyword, ListValueError, single
from ferrymq.admin import mqsc_channels as CH
from ferrymq.admin import mqsc_security as Z
from ferrymq.engine import attrs as A
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter, Value

TOPICSTR = "TOPICSTR"  # CLEAR TOPICSTR('string'): the object of a CLEAR of retained publications
VERBS = {"DEFINE": "DEFINE", "DEF": "DEFINE", "ALTER": "ALTER", "ALT": "ALTER", "DELETE": "DELETE",
         "DISPLAY": "DISPLAY", "DIS": "DISPLAY", "CLEAR": "CLEAR", "PING": "PING", "END": "END", "SET": "SET",
         **CH.VERBS}
TYPES = {"QLOCAL": A.QLOCAL, "QL": A.QLOCAL, "QALIAS": A.QALIAS, "QA": A.QALIAS, "QMODEL": A.QMODEL,
         "QREMOTE": A.QREMOTE, "QR": A.QREMOTE,
         "QM": A.QMODEL, "QUEUE": "QUEUE", "Q": "QUEUE", "QMGR": A.QMGR, "QSTATUS": A.QSTATUS, "QS": A.QSTATUS,
         "CONN": A.CONN, "TOPIC": A.TOPIC, "TPSTATUS": A.TPSTATUS, "TPS": A.TPSTATUS, "SUB": A.SUB,
         "SBSTATUS": A.SBSTATUS, "SBS": A.SBSTATUS, "TOPICSTR": TOPICSTR, "NAMELIST": A.NAMELIST, "NL": A.NAMELIST,
         "PROCESS": A.PROCESS, "PRO": A.PROCESS, **CH.TYPES, **Z.TYPES}
QTYPE_CODE = {A.QLOCAL: C.MQQT_LOCAL, A.QALIAS: C.MQQT_ALIAS, A.QMODEL: C.MQQT_MODEL, A.QREMOTE: C.MQQT_REMOTE}
OPERATORS = {"LT": F.MQCFOP_LESS, "GT": F.MQCFOP_GREATER, "EQ": F.MQCFOP_EQUAL, "NE": F.MQCFOP_NOT_EQUAL,
             "LE": F.MQCFOP_NOT_GREATER, "GE": F.MQCFOP_NOT_LESS, "LK": F.MQCFOP_LIKE, "NL": F.MQCFOP_NOT_LIKE,
             "CT": F.MQCFOP_CONTAINS, "EX": F.MQCFOP_EXCLUDES, "CTG": F.MQCFOP_CONTAINS_GEN,
             "EXG": F.MQCFOP_EXCLUDES_GEN}
# Verbs x object types that exist (the order completion offers them).
ALLOWED = {"DEFINE": (A.QLOCAL, A.QALIAS, A.QMODEL, A.QREMOTE, A.TOPIC, A.SUB, A.NAMELIST, A.PROCESS),
           "ALTER": (A.QLOCAL, A.QALIAS, A.QMODEL, A.QREMOTE, A.QMGR, A.TOPIC, A.SUB, A.NAMELIST, A.PROCESS),
           "DELETE": (A.QLOCAL, A.QALIAS, A.QMODEL, A.QREMOTE, A.TOPIC, A.SUB, A.NAMELIST, A.PROCESS),
           "DISPLAY": ("QUEUE", A.QLOCAL, A.QALIAS, A.QMODEL, A.QREMOTE, A.QMGR, A.QSTATUS, A.CONN, A.TOPIC, A.TPSTATUS, A.SUB,
                       A.SBSTATUS, A.NAMELIST, A.PROCESS),
           "CLEAR": (A.QLOCAL, TOPICSTR), "PING": (A.QMGR,), "RESET": (A.QMGR,), "END": ()}
for _verb, _types in Z.ALLOWED.items():  # authority records, AUTHINFO (admin.mqsc_security)
    ALLOWED[_verb] = ALLOWED.get(_verb, ()) + _types
for _verb, _types in CH.ALLOWED.items():  # channels and listeners (admin.mqsc_channels)
    ALLOWED[_verb] = ALLOWED.get(_verb, ()) + _types
MAX_COMMAND = 32_768  # MQ_COMMAND_MQSC_LENGTH: longer commands are refused, not read on
MQLONG = (-(2**31), 2**31 - 1)  # every MQSC number travels as a PCF MQLONG
_NUMBER = re.compile(r"[+-]?[0-9]+")  # ASCII digits only: int() would also take "1_0" and other scripts' digits


class MqscSyntaxError(ValueError):
    """A command that does not parse; the message says where and why (AMQ8405E)."""


@dataclass(slots=True)
class Parsed:
    """One MQSC command: verb, object type, the name in parentheses, keywords in order."""

    verb: str
    objtype: str = ""
    name: str | None = None
    keywords: list[Keyword] = field(default_factory=list)
    text: str = ""


_TOKEN = re.compile(r"\s*([A-Za-z0-9_.*%/\-]+)\s*(\()?")


def _value(text: str, pos: int) -> tuple[str | tuple[str, ...], int]:
    """The value inside parentheses starting at ``pos``; returns it and the index after ')'.

    A list of quoted items (MSGEXIT('a','b'), USERLIST('a' 'b')) is a tuple of its items,
    as IBM reads one: items separated by a comma, blanks or both, blanks around an item
    dropped, ``''`` a quote inside an item, an unquoted item upper-cased; commas inside a
    quoted item are its own. One quoted item alone is a string.
    """
    out: list[str] = []
    i = pos
    while i < len(text) and text[i] == " ":
        i += 1
    if i < len(text) and text[i] == "'":
        first, i = _quoted(text, i)
        items = [first]
        while True:
            while i < len(text) and text[i] == " ":
                i += 1
            separated = i < len(text) and text[i] == ","
            if separated:
                i += 1
                while i < len(text) and text[i] == " ":
                    i += 1
            if i < len(text) and text[i] == "'":
                item, i = _quoted(text, i)
            elif separated:
                start = i
                while i < len(text) and text[i] not in ",) ":
                    i += 1
                item = text[start:i].upper()
                if not item:
                    raise MqscSyntaxError(f"a list item is missing after the ',' at position {start}")
            else:
                break
            items.append(item)
        value: str | tuple[str, ...] = items[0] if len(items) == 1 else tuple(items)
    else:
        # Unquoted text is upper-cased; quoted parts inside it (WHERE values) keep their case.
        # No value holds an unquoted '(': meeting one means the '(' before it was never closed
        # (DEFINE QLOCAL(APP.Q MAXDEPTH(5)), which must not pass for a strange name.
        quoted = False
        while i < len(text) and (quoted or text[i] != ")"):
            if not quoted and text[i] == "(":
                raise MqscSyntaxError(f"unbalanced parentheses: the '(' at position {pos} is not closed "
                                      f"before the '(' at position {i + 1}")
            quoted ^= text[i] == "'"
            out.append(text[i] if quoted or text[i] == "'" else text[i].upper())
            i += 1
        if i >= len(text):
            raise MqscSyntaxError(f"unbalanced parentheses: the '(' at position {pos} is not closed")
        value = "".join(out).strip()
    if i >= len(text) or text[i] != ")":
        raise MqscSyntaxError(f"expected ')' at position {i + 1}")
    return value, i + 1


def _quoted(text: str, i: int) -> tuple[str, int]:
    """The quoted string whose opening quote is at ``i`` ('' inside is one quote), and the
    index after its closing quote."""
    out: list[str] = []
    i += 1
    while True:
        if i >= len(text):
            raise MqscSyntaxError("a quoted string is not closed")
        if text[i] == "'":
            if i + 1 < len(text) and text[i + 1] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), i + 1
        out.append(text[i])
        i += 1


def tokens(text: str) -> Iterator[Keyword]:
    """``KEYWORD`` / ``KEYWORD(value)`` pairs of one command."""
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            return
        m = _TOKEN.match(text, pos)
        if m is None:
            raise MqscSyntaxError(f"unexpected {text[pos:].strip()[:20]!r} at position {pos + 1}")
        word = m.group(1).upper()
        if m.group(2):
            value, pos = _value(text, m.end())
            yield word, value
        else:
            pos = m.end()
            yield word, None


def parse(text: str) -> Parsed:
    """One command (continuations already joined).

    Raises:
        MqscSyntaxError: unknown verb or object type, a bad keyword or value form.
    """
    if len(text) > MAX_COMMAND:
        raise MqscSyntaxError(f"command is {len(text)} characters; MQSC allows {MAX_COMMAND}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # e.g. undecodable input bytes kept as lone surrogates
        raise MqscSyntaxError(f"character U+{ord(text[exc.start]):04X} at position {exc.start + 1} is not text "
                              f"(the command must be valid UTF-8)") from None
    toks = list(tokens(text))
    if not toks:
        raise MqscSyntaxError("empty command")
    verb = VERBS.get(toks[0][0])
    if verb is None or toks[0][1] is not None:
        raise MqscSyntaxError(f"{toks[0][0]} is not an MQSC verb (DEFINE, ALTER, DELETE, DISPLAY, CLEAR, PING, SET)")
    parsed = Parsed(verb, text=text.strip())
    if verb == "END":
        return parsed
    if len(toks) < 2 or toks[1][0] not in TYPES:
        raise MqscSyntaxError(f"{verb} needs an object type: {', '.join(ALLOWED[verb])}")
    parsed.objtype = TYPES[toks[1][0]]
    if parsed.objtype not in ALLOWED[verb]:
        raise MqscSyntaxError(f"{verb} {toks[1][0]} is not a valid command")
    if isinstance(toks[1][1], tuple):
        raise MqscSyntaxError(f"{verb} {toks[1][0]} takes one name, not a list")
    parsed.name = toks[1][1]
    if parsed.objtype in Z.NAMELESS:
        if parsed.name is not None:
            raise MqscSyntaxError(f"{parsed.objtype} takes no name in parentheses (PROFILE(...), OBJNAME(...))")
        parsed.keywords = toks[2:]
        return parsed
    if parsed.objtype != A.QMGR and parsed.name in (None, ""):
        raise MqscSyntaxError(f"{verb} {toks[1][0]} needs a name in parentheses")
    if parsed.objtype == A.QMGR and parsed.name is not None:
        raise MqscSyntaxError("QMGR takes no name")
    parsed.keywords = toks[2:]
    return parsed


def _flags(objtype: str) -> dict[str, tuple[A.Attr, int]]:
    """Bare keywords that set an attribute (SHARE/NOSHARE, TRIGGER/NOTRIGGER ...)."""
    out: dict[str, tuple[A.Attr, int]] = {}
    for attr in A.QUEUE_ATTRS:
        if objtype in attr.types:
            for word, value in attr.words.items():
                if word in (attr.name, "NO" + attr.name):
                    out[word] = (attr, value)
    return out


def _table(objtype: str) -> dict[str, A.Attr]:
    if objtype == A.QMGR:
        return A.QMGR_BY_NAME
    if objtype == A.TOPIC:
        return A.TOPIC_BY_NAME
    if objtype == A.TPSTATUS:
        return A.TOPIC_BY_NAME | A.TPSTATUS_BY_NAME
    if objtype in (A.SUB, A.SBSTATUS):
        return A.SUB_BY_NAME
    if objtype == A.NAMELIST:
        return A.NAMELIST_BY_NAME
    if objtype == A.PROCESS:
        return A.PROCESS_BY_NAME
    return A.QUEUE_BY_NAME


def _attr(objtype: str, word: str) -> A.Attr:
    attr = _table(objtype).get(word) or A.STATUS_BY_NAME.get(word)
    if attr is None:
        raise MqscSyntaxError(f"{word} is not an attribute of {objtype}")
    return attr


def _setting(objtype: str, word: str, value: str) -> tuple[int, Value]:
    attr = _attr(objtype, word)
    if objtype not in attr.types or attr.readonly:
        raise MqscSyntaxError(f"{word} is not a settable attribute of {objtype}")
    if attr.kind == "str":
        return attr.selector, value
    if attr.kind == "bytes":
        return attr.selector, _hex(value, word)
    if value in attr.words:
        return attr.selector, attr.words[value]
    if not _NUMBER.fullmatch(value):
        choices = "|".join(attr.words) or f"{attr.low}..{attr.high}"
        raise MqscSyntaxError(f"{word}({value}) must be {choices}")
    return attr.selector, _int(word, value)


def _where(objtype: str, value: str | None) -> Filter:
    m = re.fullmatch(r"\s*([A-Z0-9]+)\s+([A-Z]+)\s+(.+?)\s*", value or "")
    if m is None or m.group(2) not in OPERATORS:
        raise MqscSyntaxError("WHERE takes (attribute operator value), operator one of " + " ".join(OPERATORS))
    word, op, raw = m.group(1), OPERATORS[m.group(2)], m.group(3).strip("'")
    own = objtype in (A.QMGR, A.TOPIC, A.TPSTATUS, A.SUB, A.SBSTATUS, A.NAMELIST, A.PROCESS)
    attr = _attr(objtype if own else A.QLOCAL, word) if word not in ("QUEUE", "QNAME") else None
    selector = C.MQCA_Q_NAME if attr is None else attr.selector
    if attr is not None and attr.kind == "bytes":
        return Filter(selector, op, raw.upper())
    if attr is not None and attr.kind != "str":
        number = attr.words.get(raw, None)
        return Filter(selector, op, number if number is not None else _int(word, raw))
    return Filter(selector, op, raw)


def _int(word: str, raw: str) -> int:
    if not _NUMBER.fullmatch(raw):
        raise MqscSyntaxError(f"WHERE({word} ...) compares with a number, not {raw!r}")
    number = int(raw)
    if not MQLONG[0] <= number <= MQLONG[1]:
        raise MqscSyntaxError(f"{word} value {raw} is outside the MQLONG range {MQLONG[0]}..{MQLONG[1]}")
    return number


_RESET_TYPES = {"STATISTICS": F.MQACT_COLLECT_STATISTICS, "ADVANCELOG": F.MQACT_ADVANCE_LOG, "PUBSUB": F.MQACT_PUBSUB}


def _reset_qmgr(p: Parsed) -> Command:
    """RESET QMGR TYPE(STATISTICS | ADVANCELOG | PUBSUB): the PCF Reset Queue Manager."""
    action = None
    for word, value in _scalars(p.keywords):
        if word != "TYPE" or value not in _RESET_TYPES:
            raise MqscSyntaxError(f"RESET QMGR takes TYPE({'|'.join(_RESET_TYPES)}), not {word}({value or ''})")
        action = _RESET_TYPES[value]
    if action is None:
        raise MqscSyntaxError("RESET QMGR needs TYPE(STATISTICS)")
    return Command(F.MQCMD_RESET_Q_MGR, {F.MQIACF_ACTION: action})


def to_command(p: Parsed) -> Command:
    """The PCF-level Command for a parsed MQSC command (DISPLAY names what to show).

    Raises:
        MqscSyntaxError: a keyword or value the command does not take (a list where one
            value is taken among them).
    """
    try:
        return _to_command(p)
    except ListValueError as exc:
        raise MqscSyntaxError(str(exc)) from None


def _scalars(keywords: list[Keyword]) -> list[tuple[str, str | None]]:
    """The keywords of a command whose keywords each take one value.

    Raises:
        ListValueError: one was given a list.
    """
    return [(word, single(word, value)) for word, value in keywords]


def _to_command(p: Parsed) -> Command:
    verb, ot = p.verb, p.objtype
    name = p.name or ""
    if verb == "END":
        raise MqscSyntaxError("END ends the session; it is not a command for the queue manager")
    if verb == "PING" and ot == A.QMGR:
        return Command(F.MQCMD_PING_Q_MGR)
    if verb == "RESET" and ot == A.QMGR:
        return _reset_qmgr(p)
    if ot in Z.TITLE:
        try:
            return Z.to_command(verb, ot, p.name, p.keywords)
        except Z.SecuritySyntaxError as exc:
            raise MqscSyntaxError(str(exc)) from None
    if verb == "CLEAR" and ot == TOPICSTR:
        return _clear_topic(p)
    if verb == "CLEAR":
        return Command(F.MQCMD_CLEAR_Q, {C.MQCA_Q_NAME: name})
    if ot in CH.ALLOWED["DISPLAY"]:
        try:
            return CH.to_command(verb, ot, name, p.keywords)
        except CH.ChannelSyntaxError as exc:
            raise MqscSyntaxError(str(exc)) from None
    if verb == "DISPLAY":
        return _display(p)
    if ot in (A.TOPIC, A.SUB, A.NAMELIST, A.PROCESS):
        return _named_object(p)
    params: dict[int, Value] = {} if ot == A.QMGR else {C.MQCA_Q_NAME: name, C.MQIA_Q_TYPE: QTYPE_CODE[ot]}
    command = {"DEFINE": F.MQCMD_CREATE_Q, "ALTER": F.MQCMD_CHANGE_Q, "DELETE": F.MQCMD_DELETE_Q}[verb]
    if ot == A.QMGR:
        command = F.MQCMD_CHANGE_Q_MGR
    flags = _flags(ot) if ot != A.QMGR else {}
    for word, value in _scalars(p.keywords):
        if verb == "DEFINE" and word in ("REPLACE", "NOREPLACE") and value is None:
            params[F.MQIACF_REPLACE] = F.MQRP_YES if word == "REPLACE" else F.MQRP_NO
        elif verb == "DELETE" and word in ("PURGE", "NOPURGE") and value is None:
            params[F.MQIACF_PURGE] = F.MQPO_YES if word == "PURGE" else F.MQPO_NO
        elif verb == "DEFINE" and word == "LIKE" and value:
            command = F.MQCMD_COPY_Q
            params[F.MQCACF_FROM_Q_NAME] = value
        elif verb == "ALTER" and word == "FORCE" and value is None:
            params[F.MQIACF_FORCE] = F.MQFC_YES
        elif verb == "DELETE":
            raise MqscSyntaxError(f"DELETE does not take {word}")
        elif value is None and word in flags:
            attr, number = flags[word]
            params[attr.selector] = number
        elif value is None:
            raise MqscSyntaxError(f"{word} needs a value in parentheses")
        else:
            sel, v = _setting(ot, word, value)
            if sel == C.MQIA_DEFINITION_TYPE and ot != A.QMODEL:
                raise MqscSyntaxError("DEFTYPE is an attribute of QMODEL")
            params[sel] = v
    if command == F.MQCMD_COPY_Q:
        params[F.MQCACF_TO_Q_NAME] = params.pop(C.MQCA_Q_NAME)
    return Command(command, params)


def _display(p: Parsed) -> Command:
    ot, name = p.objtype, p.name or ""
    wanted: list[int] = []
    filters: list[Filter] = []
    kind = ""
    own = ot in (A.QMGR, A.TOPIC, A.TPSTATUS, A.SUB, A.SBSTATUS, A.NAMELIST, A.PROCESS)  # its own catalog
    selections: list[tuple[str, str]] = []  # DISPLAY SUB/SBSTATUS: SUBID(x) DURABLE(x) SUBTYPE(x)
    for word, value in _scalars(p.keywords):
        if word == "WHERE":
            filters.append(_where(ot, value))
        elif word == "ALL" and value is None:
            wanted.append(F.MQIACF_ALL)
        elif word == "TYPE" and value is not None:
            kind = value
        elif ((ot in (A.SUB, A.SBSTATUS) and word in ("SUBID", "DURABLE", "SUBTYPE"))
              or (ot == A.NAMELIST and word == "NLTYPE")) and value is not None:
            selections.append((word, value))
        elif value is None:
            wanted.append(_attr(ot if own else A.QLOCAL, word).selector)
        else:
            raise MqscSyntaxError(f"DISPLAY does not take {word}({value})")
    if len(filters) > 1:
        raise MqscSyntaxError("only one WHERE clause is allowed")
    attrs = tuple(wanted)
    if ot == A.QMGR:
        return Command(F.MQCMD_INQUIRE_Q_MGR, {F.MQIACF_Q_MGR_ATTRS: attrs or (F.MQIACF_ALL,)}, filters)
    if ot == A.QSTATUS:
        if kind not in ("", "QUEUE", "HANDLE"):
            raise MqscSyntaxError("QSTATUS TYPE is QUEUE or HANDLE")
        status = F.MQIACF_Q_HANDLE if kind == "HANDLE" else F.MQIACF_Q_STATUS
        return Command(F.MQCMD_INQUIRE_Q_STATUS, {C.MQCA_Q_NAME: name, F.MQIACF_Q_STATUS_TYPE: status,
                                                  F.MQIACF_Q_STATUS_ATTRS: attrs or (F.MQIACF_ALL,)}, filters)
    if ot in (A.TOPIC, A.TPSTATUS, A.SUB, A.SBSTATUS):
        return _pubsub_display(p, attrs, filters, kind, selections)
    if ot == A.NAMELIST:
        if kind:
            raise MqscSyntaxError("DISPLAY NAMELIST selects by NLTYPE(...), not TYPE")
        listed: dict[int, Value] = {C.MQCA_NAMELIST_NAME: name,
                                    F.MQIACF_NAMELIST_ATTRS: attrs or (C.MQCA_NAMELIST_NAME, *(f.parameter for f in filters))}
        for _, value in selections:
            if value not in _NLTYPES:
                raise MqscSyntaxError("NLTYPE is ALL, NONE, QUEUE, CLUSTER or AUTHINFO")
            listed[C.MQIA_NAMELIST_TYPE] = _NLTYPES[value]
        return Command(F.MQCMD_INQUIRE_NAMELIST, listed, filters)
    if ot == A.PROCESS:
        if kind:
            raise MqscSyntaxError("DISPLAY PROCESS takes no TYPE")
        shown = attrs or (C.MQCA_PROCESS_NAME, *(f.parameter for f in filters))
        return Command(F.MQCMD_INQUIRE_PROCESS, {C.MQCA_PROCESS_NAME: name, F.MQIACF_PROCESS_ATTRS: shown}, filters)
    if ot == A.CONN:
        info = {"": F.MQIACF_CONN_INFO_CONN, "CONN": F.MQIACF_CONN_INFO_CONN, "HANDLE": F.MQIACF_CONN_INFO_HANDLE,
                "ALL": F.MQIACF_CONN_INFO_ALL}.get(kind)
        if info is None:
            raise MqscSyntaxError("CONN TYPE is CONN, HANDLE or ALL")
        generic = b"" if name in ("*", "") else _hex(name)
        return Command(F.MQCMD_INQUIRE_CONNECTION, {F.MQBACF_GENERIC_CONNECTION_ID: generic,
                                                    F.MQIACF_CONN_INFO_TYPE: info,
                                                    F.MQIACF_CONNECTION_ATTRS: attrs or (F.MQIACF_ALL,)}, filters)
    # Without ALL or attribute names runmqsc shows a queue's name and type, and what WHERE tested.
    shown = attrs or (C.MQCA_Q_NAME, *(f.parameter for f in filters))
    params: dict[int, Value] = {C.MQCA_Q_NAME: name, F.MQIACF_Q_ATTRS: shown}
    if ot != "QUEUE":
        params[C.MQIA_Q_TYPE] = QTYPE_CODE[ot]
    return Command(F.MQCMD_INQUIRE_Q, params, filters)


def _hex(name: str, word: str = "CONN") -> bytes:
    try:
        return bytes.fromhex(name.rstrip("*"))
    except ValueError:
        raise MqscSyntaxError(f"{word}({name}) takes an identifier in hex" + (", or *" if word == "CONN" else "")) from None


# -- topics, subscriptions and namelists ---------------------------------------------------------
_NAME_PARAM = {A.TOPIC: C.MQCA_TOPIC_NAME, A.SUB: F.MQCACF_SUB_NAME, A.NAMELIST: C.MQCA_NAMELIST_NAME,
               A.PROCESS: C.MQCA_PROCESS_NAME}
_COMMANDS = {(A.TOPIC, "DEFINE"): F.MQCMD_CREATE_TOPIC, (A.TOPIC, "ALTER"): F.MQCMD_CHANGE_TOPIC,
             (A.TOPIC, "DELETE"): F.MQCMD_DELETE_TOPIC, (A.SUB, "DEFINE"): F.MQCMD_CREATE_SUBSCRIPTION,
             (A.SUB, "ALTER"): F.MQCMD_CHANGE_SUBSCRIPTION, (A.SUB, "DELETE"): F.MQCMD_DELETE_SUBSCRIPTION,
             (A.NAMELIST, "DEFINE"): F.MQCMD_CREATE_NAMELIST, (A.NAMELIST, "ALTER"): F.MQCMD_CHANGE_NAMELIST,
             (A.NAMELIST, "DELETE"): F.MQCMD_DELETE_NAMELIST, (A.PROCESS, "DEFINE"): F.MQCMD_CREATE_PROCESS,
             (A.PROCESS, "ALTER"): F.MQCMD_CHANGE_PROCESS, (A.PROCESS, "DELETE"): F.MQCMD_DELETE_PROCESS}
_COPY = {A.TOPIC: (F.MQCMD_COPY_TOPIC, F.MQCACF_FROM_TOPIC_NAME, F.MQCACF_TO_TOPIC_NAME),
         A.SUB: (F.MQCMD_COPY_SUBSCRIPTION, F.MQCACF_FROM_SUB_NAME, F.MQCACF_TO_SUB_NAME),
         A.NAMELIST: (F.MQCMD_COPY_NAMELIST, F.MQCACF_FROM_NAMELIST_NAME, F.MQCACF_TO_NAMELIST_NAME),
         A.PROCESS: (F.MQCMD_COPY_PROCESS, F.MQCACF_FROM_PROCESS_NAME, F.MQCACF_TO_PROCESS_NAME)}
_NLTYPES = {"ALL": C.MQNT_ALL, "NONE": C.MQNT_NONE, "QUEUE": C.MQNT_Q, "Q": C.MQNT_Q, "CLUSTER": C.MQNT_CLUSTER,
            "AUTHINFO": C.MQNT_AUTH_INFO}


def _name_list(value: str | tuple[str, ...]) -> tuple[str, ...]:
    """NAMES(A, B, C) or NAMES('A', 'B'): the names, blanks around each dropped; NAMES() is
    the empty list."""
    if isinstance(value, tuple):
        return tuple(n.strip() for n in value)
    return tuple(n.strip() for n in value.split(",")) if value.strip() else ()


def _named_object(p: Parsed) -> Command:
    """DEFINE/ALTER/DELETE TOPIC, SUB and NAMELIST (LIKE makes a COPY, as for queues)."""
    ot, verb = p.objtype, p.verb
    command = _COMMANDS[(ot, verb)]
    params: dict[int, Value] = {_NAME_PARAM[ot]: p.name or ""}
    keywords = p.keywords
    if ot == A.NAMELIST and verb != "DELETE":
        for word, names in keywords:
            if word == "NAMES" and names is not None:
                params[C.MQCA_NAMES] = _name_list(names)
        keywords = [(w, v) for w, v in keywords if w != "NAMES" or v is None]
    for word, value in _scalars(keywords):
        if verb == "DEFINE" and word in ("REPLACE", "NOREPLACE") and value is None:
            params[F.MQIACF_REPLACE] = F.MQRP_YES if word == "REPLACE" else F.MQRP_NO
        elif verb == "DEFINE" and word == "LIKE" and value:
            command, from_param, _ = _COPY[ot]
            params[from_param] = value
        elif ot == A.SUB and word == "SUBID" and value is not None and verb != "DEFINE":
            params[F.MQBACF_SUB_ID] = _hex(value, word)
        elif verb == "DELETE":
            raise MqscSyntaxError(f"DELETE {ot} does not take {word}")
        elif value is None:
            raise MqscSyntaxError(f"{word} needs a value in parentheses")
        else:
            sel, v = _setting(ot, word, value)
            params[sel] = v
    if command in (F.MQCMD_COPY_TOPIC, F.MQCMD_COPY_SUBSCRIPTION, F.MQCMD_COPY_NAMELIST, F.MQCMD_COPY_PROCESS):
        params[_COPY[ot][2]] = params.pop(_NAME_PARAM[ot])
    return Command(command, params)


def _clear_topic(p: Parsed) -> Command:
    """CLEAR TOPICSTR('string') CLRTYPE(RETAINED) [SCOPE(LOCAL)]."""
    params: dict[int, Value] = {C.MQCA_TOPIC_STRING: p.name or ""}
    for word, value in _scalars(p.keywords):
        if word == "CLRTYPE" and value == "RETAINED":
            params[F.MQIACF_CLEAR_TYPE] = F.MQCLRT_RETAINED
        elif word == "SCOPE" and value in ("LOCAL", "GLOBAL"):
            params[F.MQIACF_CLEAR_SCOPE] = F.MQCLRS_LOCAL if value == "LOCAL" else F.MQCLRS_GLOBAL
        else:
            raise MqscSyntaxError(f"CLEAR TOPICSTR takes CLRTYPE(RETAINED) and SCOPE(LOCAL|GLOBAL), not {word}")
    if F.MQIACF_CLEAR_TYPE not in params:
        raise MqscSyntaxError("CLEAR TOPICSTR needs CLRTYPE(RETAINED)")
    return Command(F.MQCMD_CLEAR_TOPIC_STRING, params)


_TOPIC_TYPES = {"": C.MQTOPT_ALL, "ALL": C.MQTOPT_ALL, "LOCAL": C.MQTOPT_LOCAL, "CLUSTER": C.MQTOPT_CLUSTER}
_TPSTATUS_TYPES = {"": F.MQIACF_TOPIC_STATUS, "TOPIC": F.MQIACF_TOPIC_STATUS, "SUB": F.MQIACF_TOPIC_SUB,
                   "PUB": F.MQIACF_TOPIC_PUB}
_DURABLE = {"ALL": C.MQSUB_DURABLE_ALL, "YES": C.MQSUB_DURABLE_YES, "NO": C.MQSUB_DURABLE_NO}
_SUBTYPES = {"USER": -2, "ALL": -1, "API": 1, "ADMIN": 2, "PROXY": 3}


def _pubsub_display(p: Parsed, attrs: tuple[int, ...], filters: list[Filter], kind: str,
                    selections: list[tuple[str, str]]) -> Command:
    ot, name = p.objtype, p.name or ""
    if ot == A.TOPIC:
        if kind not in _TOPIC_TYPES:
            raise MqscSyntaxError("TOPIC TYPE is LOCAL, CLUSTER or ALL")
        shown = attrs or (C.MQCA_TOPIC_NAME, *(f.parameter for f in filters))
        return Command(F.MQCMD_INQUIRE_TOPIC, {C.MQCA_TOPIC_NAME: name, C.MQIA_TOPIC_TYPE: _TOPIC_TYPES[kind],
                                               F.MQIACF_TOPIC_ATTRS: shown}, filters)
    if ot == A.TPSTATUS:
        if kind not in _TPSTATUS_TYPES:
            raise MqscSyntaxError("TPSTATUS TYPE is TOPIC, SUB or PUB")
        return Command(F.MQCMD_INQUIRE_TOPIC_STATUS, {C.MQCA_TOPIC_STRING: name,
                                                      F.MQIACF_TOPIC_STATUS_TYPE: _TPSTATUS_TYPES[kind],
                                                      F.MQIACF_TOPIC_STATUS_ATTRS: attrs or (F.MQIACF_ALL,)}, filters)
    params: dict[int, Value] = {F.MQCACF_SUB_NAME: name}
    for word, value in selections:
        if word == "SUBID":
            params[F.MQBACF_SUB_ID] = _hex(value, word)
        elif word == "DURABLE" and value in _DURABLE:
            params[F.MQIACF_DURABLE_SUBSCRIPTION] = _DURABLE[value]
        elif word == "SUBTYPE" and value in _SUBTYPES:
            params[F.MQIACF_SUB_TYPE] = _SUBTYPES[value]
        else:
            raise MqscSyntaxError(f"DISPLAY {ot} does not take {word}({value})")
    if ot == A.SUB:
        params[F.MQIACF_SUB_ATTRS] = attrs or (F.MQCACF_SUB_NAME, *(f.parameter for f in filters))
        return Command(F.MQCMD_INQUIRE_SUBSCRIPTION, params, filters)
    params[F.MQIACF_SUB_STATUS_ATTRS] = attrs or (F.MQIACF_ALL,)
    return Command(F.MQCMD_INQUIRE_SUB_STATUS, params, filters)


def commands(lines: Iterator[str]) -> Iterator[str]:
    """Whole commands from script lines: comments dropped, continuations joined."""
    buf = ""
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not buf and (not line.strip() or line.lstrip().startswith("*")):
            continue
        stripped = line.rstrip()
        if stripped.endswith("+"):
            buf += stripped[:-1]
            continue
        if stripped.endswith("-"):
            buf += stripped[:-1]
            continue
        yield (buf + (line.lstrip() if buf else line)).strip()
        buf = ""
    if buf.strip():
        yield buf.strip()
