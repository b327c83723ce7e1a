"""CHANNEL and LISTENER objects: the definitions, with IBM's DEFINE/ALTER/DELETE rules.

A channel definition names its type (CHLTYPE: SDR, SVR, RCVR, RQSTR, SVRCONN) and holds
only the attributes of that type (engine.chlattrs); new definitions start from IBM's
default objects SYSTEM.DEF.SENDER, .SERVER, .RECEIVER, .REQUESTER, .SVRCONN (and
SYSTEM.AUTO.SVRCONN, SYSTEM.AUTO.RECEIVER), or from LIKE. A listener holds a TCP port,
an address, a backlog and CONTROL (MANUAL, QMGR: started and stopped with the queue
manager, STARTONLY); SYSTEM.DEFAULT.LISTENER.TCP is its default object.

What a channel does at run time is the channel initiator's (ferrymq.channels, L3); the
engine keeps only the definitions and the status table both sides read
(engine.chlcontrol). Definitions are journaled (kinds 10 and 11, JSON: our own file,
never evaluated) through Staging, as namelists are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from ferrymq.engine import chlattrs as K
from ferrymq.engine.attrs import Attr
from ferrymq.engine.definitions import Definition, Definitions, kept_values
from ferrymq.engine.objects import ObjectRegistry
from ferrymq.errors import MQError, failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import ParameterError
from ferrymq.tls import cipherspecs, names

KIND_CHANNEL = 10  # journal record kind: one channel definition
KIND_LISTENER = 11  # journal record kind: one listener definition
DEFAULT_CHANNEL = {K.SDR: "SYSTEM.DEF.SENDER", K.SVR: "SYSTEM.DEF.SERVER", K.RCVR: "SYSTEM.DEF.RECEIVER",
                   K.RQSTR: "SYSTEM.DEF.REQUESTER", K.SVRCONN: "SYSTEM.DEF.SVRCONN"}
# SYSTEM.ADMIN.SVRCONN: IBM's channel for remote administration, the one SYSTEM.* channel
# that IBM's default channel authentication records leave open (to non-administrators).
SYSTEM_CHANNELS = (*((n, t) for t, n in DEFAULT_CHANNEL.items()), ("SYSTEM.AUTO.SVRCONN", K.SVRCONN),
                   ("SYSTEM.ADMIN.SVRCONN", K.SVRCONN),
                   ("SYSTEM.AUTO.RECEIVER", K.RCVR))
# Made once, with a new queue manager (deleting them is the operator's choice): the
# server-connection channels of IBM MQ's developer configuration, which pymqi programs and
# IBM's samples name, so that they connect unchanged.
DEVELOPER_CHANNELS = (("DEV.APP.SVRCONN", "Server-connection channel for applications"),
                      ("DEV.ADMIN.SVRCONN", "Server-connection channel for administrators"))
DEFAULT_LISTENER = "SYSTEM.DEFAULT.LISTENER.TCP"
_NAME = re.compile(r"[A-Za-z0-9./_%]+")
# One CONNAME entry: a host name or address, the port in parentheses (IPv6 in brackets or bare).
_CONN_ENTRY = re.compile(r"([A-Za-z0-9._:\-\[\]]+)(?:\((\d{1,5})\))?")
DEFAULT_PORT = 1414


def check_channel_name(name: str) -> str:
    """A channel name as IBM allows it: 1..20 of A-Z a-z 0-9 . / _ %.

    Raises:
        MQError: MQRCCF_CHANNEL_NAME_ERROR.
    """
    name = name.rstrip()
    if not 1 <= len(name) <= C.MQ_CHANNEL_NAME_LENGTH or not _NAME.fullmatch(name):
        raise failed(F.MQRCCF_CHANNEL_NAME_ERROR, f"channel name {name!r} must be 1..20 of A-Z a-z 0-9 . / _ %")
    return name


def connection_names(conname: str) -> list[tuple[str, int]]:
    """CONNAME's addresses in order: ``host(port)`` entries separated by commas; a missing
    port is 1414 (IBM's default).

    Raises:
        MQError: MQRCCF_CONN_NAME_ERROR naming the entry that does not parse.
    """
    out: list[tuple[str, int]] = []
    for entry in conname.split(","):
        entry = entry.strip()
        m = _CONN_ENTRY.fullmatch(entry)
        port = int(m.group(2)) if m is not None and m.group(2) else DEFAULT_PORT
        if m is None or not 1 <= port <= 65535:
            raise failed(F.MQRCCF_CONN_NAME_ERROR, f"CONNAME entry {entry!r} is not host or host(port)")
        out.append((m.group(1).strip("[]"), port))
    return out


Lists = dict[str, tuple[str, ...]]


class ChannelObject(Definition):
    """One channel definition: its type and the attributes of that type; the exit lists
    (MSGEXIT, MSGDATA ..., chlattrs.EXIT_ITEMS) in ``lists``, each a tuple of items."""

    __slots__ = ("chltype", "lists")

    def __init__(self, name: str, chltype: str, attrs: dict[str, int | str], now: float,
                 lists: Lists | None = None) -> None:
        super().__init__(name, attrs, now)
        self.chltype = chltype
        self.lists: Lists = dict(lists or {})

    def get(self, name: str) -> int | str | tuple[str, ...]:
        """An attribute by its MQSC keyword."""
        if name == "CHLTYPE":
            return K.CHLTYPES[self.chltype]
        if name in ("ALTDATE", "ALTTIME"):
            return self.altered[name == "ALTTIME"]
        if name in K.EXIT_ITEMS:
            return self.items(name)
        return self.attrs.get(name, K.CHANNEL_BY_NAME[name].default)

    def items(self, name: str) -> tuple[str, ...]:
        """An exit list (MSGEXIT, MSGDATA ...): its items in order, () when blank."""
        return self.lists.get(name, ())

    def number(self, name: str) -> int:
        value = self.get(name)
        assert isinstance(value, int)
        return value

    def text(self, name: str) -> str:
        value = self.get(name)
        assert not isinstance(value, tuple), f"{name} is a list: read it with items()"
        return str(value)

    def document(self) -> dict[str, object]:
        return {**super().document(), "chltype": self.chltype, "lists": {k: list(v) for k, v in self.lists.items()}}


class ListenerObject(Definition):
    """One listener definition."""

    __slots__ = ()

    def get(self, name: str) -> int | str:
        if name in ("ALTDATE", "ALTTIME"):
            return self.altered[name == "ALTTIME"]
        return self.attrs.get(name, K.LISTENER_BY_NAME[name].default)


def decode_channel(payload: bytes, now: float) -> ChannelObject:
    """A channel from its journal record (a record that is not one raises ValueError,
    KeyError or TypeError: the caller logs and skips it)."""
    doc = json.loads(payload)
    chltype = str(doc["chltype"])
    if chltype not in K.CHLTYPES:
        raise ValueError(f"unknown channel type {chltype!r}")
    attrs = kept_values(K.CHANNEL_BY_NAME, doc["attrs"])
    lists = doc.get("lists")
    if lists is None:  # written when the exit lists were comma-joined text
        found = K.legacy_exit_lists(doc["attrs"])
    elif isinstance(lists, dict):
        found = {k: _stored_items(v) for k, v in lists.items() if k in K.EXIT_ITEMS}
    else:
        raise TypeError("lists is not an object")
    obj = ChannelObject(str(doc["name"]), chltype, {k: v for k, v in attrs.items() if k not in K.EXIT_ITEMS}, now,
                        {k: v for k, v in found.items() if chltype in K.CHANNEL_BY_NAME[k].types and v})
    obj.restore_stamps(doc)
    return obj


def _stored_items(value: object) -> tuple[str, ...]:
    """A list as its record holds it (a JSON array of strings).

    Raises:
        TypeError: anything else.
    """
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("an exit list is not an array of strings")
    return tuple(value)


def decode_listener(payload: bytes, now: float) -> ListenerObject:
    doc = json.loads(payload)
    obj = ListenerObject(str(doc["name"]), kept_values(K.LISTENER_BY_NAME, doc["attrs"]), now)
    obj.restore_stamps(doc)
    return obj


def _checked(table: Mapping[str, Attr], what: str, kind: str,
             attrs: Mapping[str, object]) -> tuple[dict[str, int | str], Lists]:
    """Catalog names and values checked by their rules, and against ``kind`` (a channel
    type, or LISTENER): the attributes, and the exit lists apart.

    Raises:
        ParameterError: MQRCCF_WRONG_CHANNEL_TYPE for an attribute another channel type
            has; the attribute's own reason (chlattrs.REASON, ``exit_items``) or
            MQRCCF_ATTR_VALUE_ERROR.
    """
    out: dict[str, int | str] = {}
    lists: Lists = {}
    for key, value in attrs.items():
        attr = table.get(key.upper())
        if attr is None or attr.readonly or attr.name == "CHLTYPE":
            raise ParameterError(F.MQRCCF_PARM_SYNTAX_ERROR, 0, f"{key.upper()} is not an attribute of {what}")
        if kind not in attr.types:
            raise ParameterError(F.MQRCCF_WRONG_CHANNEL_TYPE, attr.selector,
                                   f"{attr.name} is not an attribute of a {kind} {what.lower()}")
        if attr.kind == "strings":
            lists[attr.name] = exit_items(attr, value)
            continue
        try:
            out[attr.name] = checked = attr.check(value)
        except MQError as exc:
            raise ParameterError(K.REASON.get(attr.name, F.MQRCCF_ATTR_VALUE_ERROR), attr.selector,
                                   exc.detail) from None
        rule = _RULES.get(attr.name)
        why = rule(str(checked)) if rule is not None else None
        if why is not None:
            raise ParameterError(K.REASON.get(attr.name, F.MQRCCF_ATTR_VALUE_ERROR), attr.selector, why)
    return out, lists


# Values the catalog's kinds cannot judge: a CipherSpec name, an SSLPEER pattern.
_RULES: dict[str, Callable[[str], str | None]] = {"SSLCIPH": cipherspecs.problem, "SSLPEER": names.problem}


def exit_items(attr: Attr, value: object) -> tuple[str, ...]:
    """An exit list (MSGEXIT, MSGDATA ...) as PCF gives it, an MQCFSL (a tuple or list of
    items) or an MQCFST (one item), and MQSC (a quoted list arrives as a tuple): its items,
    trailing blanks dropped (an exit name's leading ones too); blank items only is the
    empty list. Data items may hold commas and quotes: they are never split.

    Raises:
        ParameterError: MQRCCF_CFSL_STRING_LENGTH_ERR (3069; MQRCCF_CFST_STRING_LENGTH_ERR,
            3011, for a single string) for an exit name over MQ_EXIT_NAME_LENGTH or a data
            item over MQ_EXIT_DATA_LENGTH; MQRCCF_CFSL_TOTAL_LENGTH_ERROR (3067) for items
            over MQ_TOTAL_EXIT_NAME_LENGTH / MQ_TOTAL_EXIT_DATA_LENGTH together;
            MQRCCF_ATTR_VALUE_ERROR for an item that is not text, or a blank exit name
            among others.
    """
    listed = isinstance(value, tuple | list)
    raw = tuple(value) if isinstance(value, tuple | list) else (value,)
    if not all(isinstance(v, str) for v in raw):
        raise ParameterError(F.MQRCCF_ATTR_VALUE_ERROR, attr.selector, f"{attr.name} takes text items, not {value!r}")
    naming = attr.name in K.EXIT_LISTS
    items = tuple(str(v).strip() if naming else str(v).rstrip() for v in raw)
    if not any(items):
        return ()
    long = [i for i in items if len(i) > attr.length]
    if long:
        raise ParameterError(F.MQRCCF_CFSL_STRING_LENGTH_ERR if listed else F.MQRCCF_CFST_STRING_LENGTH_ERR,
                             attr.selector, f"{attr.name}: {'an exit name' if naming else 'an exit data item'} holds "
                             f"at most {attr.length} characters, not {len(long[0])} ({long[0][:40]!r}...)")
    total = sum(len(i) for i in items)
    if total > K.EXIT_TOTAL[attr.name]:
        raise ParameterError(F.MQRCCF_CFSL_TOTAL_LENGTH_ERROR, attr.selector,
                             f"{attr.name}: its items hold {total} characters together, at most "
                             f"{K.EXIT_TOTAL[attr.name]}")
    if naming and not all(items):
        raise ParameterError(F.MQRCCF_ATTR_VALUE_ERROR, attr.selector, f"{attr.name} names a blank exit in its list")
    return items


def _complete(name: str, chltype: str, values: Mapping[str, int | str]) -> None:
    """The rules that need the whole definition: a sender names where it connects and
    the transmission queue it serves; a requester names where it connects.

    Raises:
        ParameterError: MQRCCF_MISSING_CONN_NAME, MQRCCF_CONN_NAME_ERROR,
            MQRCCF_XMIT_Q_NAME_ERROR.
    """
    if name.startswith("SYSTEM."):  # IBM's default objects leave both blank
        return
    conname = str(values.get("CONNAME", ""))
    if chltype in (K.SDR, K.RQSTR) and not conname.strip():
        raise ParameterError(F.MQRCCF_MISSING_CONN_NAME, F.MQCACH_CONNECTION_NAME,
                               f"a {chltype} channel needs CONNAME (where to connect)")
    if conname.strip():
        try:
            connection_names(conname)
        except MQError as exc:
            raise ParameterError(exc.reason, F.MQCACH_CONNECTION_NAME, exc.detail) from None
    xmitq = str(values.get("XMITQ", ""))
    if chltype in K.SENDING and (not xmitq.strip() or not _NAME.fullmatch(xmitq.strip())):
        raise ParameterError(F.MQRCCF_XMIT_Q_NAME_ERROR, F.MQCACH_XMIT_Q_NAME,
                               f"a {chltype} channel needs XMITQ, a queue name (it is {xmitq.strip()!r})")


class ChannelRegistry(Definitions[ChannelObject]):
    """Every CHANNEL definition, by name; the admin verbs over them. ``in_use`` (set by the
    engine's channel control) says whether a channel is active and may not be deleted."""

    def __init__(self, objects: ObjectRegistry, now: Callable[[], float]) -> None:
        super().__init__(objects, now, "channel", KIND_CHANNEL)
        self.in_use: Callable[[str], bool] = lambda name: False

    def require(self, name: str) -> ChannelObject:
        """Raises: MQError MQRCCF_CHANNEL_NOT_FOUND (4032)."""
        obj = self.find(name)
        if obj is None:
            raise failed(F.MQRCCF_CHANNEL_NOT_FOUND, f"channel {name.rstrip()!r} is not defined")
        return obj

    def define(self, name: str, chltype: str, attrs: Mapping[str, object] | None = None, *,
               like: str | None = None, replace: bool = False) -> ChannelObject:
        """DEFINE CHANNEL: from SYSTEM.DEF.<type> (or LIKE another of the same type).

        Raises:
            MQError: MQRCCF_CHANNEL_NAME_ERROR, MQRCCF_CHANNEL_TYPE_ERROR, MQRCCF_OBJECT_ALREADY_EXISTS
                without REPLACE, MQRCCF_OBJECT_WRONG_TYPE replacing a channel of another type,
                MQRCCF_CHANNEL_NOT_FOUND / MQRCCF_LIKE_OBJECT_WRONG_TYPE for LIKE, and the
                attribute rules (ParameterError). Nothing changes when one is raised.
        """
        name = check_channel_name(name)
        if chltype not in K.CHLTYPES:
            raise ParameterError(F.MQRCCF_CHANNEL_TYPE_ERROR, F.MQIACH_CHANNEL_TYPE,
                                   f"CHLTYPE({chltype}) is not one of {', '.join(K.CHLTYPES)}")
        existing = self.find(name)
        if existing is not None and not replace:
            raise failed(F.MQRCCF_OBJECT_ALREADY_EXISTS, f"CHANNEL({name}) already exists; use REPLACE to redefine it")
        if existing is not None and existing.chltype != chltype:
            raise failed(F.MQRCCF_OBJECT_WRONG_TYPE, f"CHANNEL({name}) exists as a {existing.chltype} channel")
        given, given_lists = _checked(K.CHANNEL_BY_NAME, "CHANNEL", chltype, attrs or {})
        base = self.find(like if like is not None else DEFAULT_CHANNEL[chltype])
        if like is not None and base is None:
            raise failed(F.MQRCCF_CHANNEL_NOT_FOUND, f"LIKE({like.rstrip()}) is not a channel")
        if base is not None and base.chltype != chltype:
            raise failed(F.MQRCCF_LIKE_OBJECT_WRONG_TYPE, f"LIKE({base.name}) is a {base.chltype} channel")
        values = dict(base.attrs) if base is not None else defaults(chltype)
        values.update(given)
        lists = {**(base.lists if base is not None else {}), **given_lists}
        _complete(name, chltype, values)
        if existing is not None:
            existing.attrs, existing.lists = values, _kept(lists)
            return self.changed(existing)
        return self.added(ChannelObject(name, chltype, values, self.now(), _kept(lists)))

    def alter(self, name: str, chltype: str | None, attrs: Mapping[str, object]) -> ChannelObject:
        """ALTER CHANNEL (CHLTYPE, when given, must be the channel's).

        Raises:
            MQError: MQRCCF_CHANNEL_NOT_FOUND, MQRCCF_OBJECT_WRONG_TYPE and the rules of
                ``define``; nothing changes then.
        """
        obj = self.require(name)
        if chltype is not None and chltype != obj.chltype:
            raise failed(F.MQRCCF_OBJECT_WRONG_TYPE, f"CHANNEL({obj.name}) is a {obj.chltype} channel, not {chltype}")
        values = dict(obj.attrs)
        given, given_lists = _checked(K.CHANNEL_BY_NAME, "CHANNEL", obj.chltype, attrs)
        values.update(given)
        _complete(obj.name, obj.chltype, values)
        obj.attrs, obj.lists = values, _kept({**obj.lists, **given_lists})
        return self.changed(obj)

    def delete(self, name: str) -> None:
        """DELETE CHANNEL.

        Raises:
            MQError: MQRCCF_CHANNEL_NOT_FOUND; MQRCCF_CHANNEL_IN_USE while it runs.
        """
        obj = self.require(name)
        if self.in_use(obj.name):
            raise failed(F.MQRCCF_CHANNEL_IN_USE, f"channel {obj.name} is active; stop it first")
        self.removed(obj)

    def define_system(self, *, new: bool = False) -> None:
        """IBM's default channel objects, where they are not defined yet; for a ``new``
        queue manager the developer channels too."""
        for name, chltype in SYSTEM_CHANNELS:
            if name not in self.by_name:
                self.define(name, chltype, {})
        for name, descr in DEVELOPER_CHANNELS if new else ():
            if name not in self.by_name:
                self.define(name, K.SVRCONN, {"DESCR": descr})


def defaults(chltype: str) -> dict[str, int | str]:
    """IBM's default values of a channel type's attributes (the exit lists start empty)."""
    return {a.name: a.default for a in K.CHANNEL_ATTRS
            if chltype in a.types and a.name != "CHLTYPE" and a.kind != "strings"}


def _kept(lists: Lists) -> Lists:
    """The exit lists that hold something (a blank one is no list)."""
    return {k: v for k, v in lists.items() if v}


class ListenerRegistry(Definitions[ListenerObject]):
    """Every LISTENER definition, by name. ``in_use`` says whether one is running."""

    def __init__(self, objects: ObjectRegistry, now: Callable[[], float]) -> None:
        super().__init__(objects, now, "listener", KIND_LISTENER)
        self.in_use: Callable[[str], bool] = lambda name: False

    def define(self, name: str, attrs: Mapping[str, object] | None = None, *, like: str | None = None,
               replace: bool = False) -> ListenerObject:
        """DEFINE LISTENER: from SYSTEM.DEFAULT.LISTENER.TCP (or LIKE another).

        Raises:
            MQError: MQRCCF_OBJECT_NAME_ERROR, MQRCCF_OBJECT_ALREADY_EXISTS without REPLACE,
                MQRC_UNKNOWN_OBJECT_NAME for LIKE, the attribute rules (ParameterError).
        """
        name = name.rstrip()
        if not 1 <= len(name) <= C.MQ_LISTENER_NAME_LENGTH or not _NAME.fullmatch(name):
            raise failed(F.MQRCCF_OBJECT_NAME_ERROR, f"listener name {name!r} must be 1..48 of A-Z a-z 0-9 . / _ %")
        existing = self.find(name)
        if existing is not None and not replace:
            raise failed(F.MQRCCF_OBJECT_ALREADY_EXISTS, f"LISTENER({name}) already exists; use REPLACE to redefine it")
        given = _checked(K.LISTENER_BY_NAME, "LISTENER", K.LISTENER, attrs or {})[0]
        base = self.find(like if like is not None else DEFAULT_LISTENER)
        if like is not None and base is None:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"LIKE({like.rstrip()}) is not a listener")
        values = dict(base.attrs) if base is not None else {
            a.name: a.default for a in K.LISTENER_ATTRS if not a.readonly}
        values.update(given)
        if existing is not None:
            existing.attrs = values
            return self.changed(existing)
        return self.added(ListenerObject(name, values, self.now()))

    def alter(self, name: str, attrs: Mapping[str, object]) -> ListenerObject:
        """ALTER LISTENER (a running listener keeps its socket until restarted, as IBM's).

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME and the attribute rules.
        """
        obj = self.require(name)
        values = dict(obj.attrs)
        values.update(_checked(K.LISTENER_BY_NAME, "LISTENER", K.LISTENER, attrs)[0])
        obj.attrs = values
        return self.changed(obj)

    def delete(self, name: str) -> None:
        """DELETE LISTENER.

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME; MQRCCF_OBJECT_IN_USE while it runs.
        """
        obj = self.require(name)
        if self.in_use(obj.name):
            raise failed(F.MQRCCF_OBJECT_IN_USE, f"listener {obj.name} is running; stop it first")
        self.removed(obj)

    def define_system(self) -> None:
        if DEFAULT_LISTENER not in self.by_name:
            self.define(DEFAULT_LISTENER, {})
