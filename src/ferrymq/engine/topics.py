"""TOPIC objects and the topic tree they administer.

A topic object names a point of the topic tree (its TOPICSTR) and sets attributes there;
a topic string with no object of its own takes each attribute from the closest object
above it (``a/b/c`` from ``a/b``, then ``a``, then SYSTEM.BASE.TOPIC at the root), and an
object's ASPARENT value (or a blank model queue, cluster or COMMINFO name) defers to the
next one up, as IBM resolves them. The registry here owns the objects, the rules of
DEFINE/ALTER/DELETE TOPIC, how MQOD/MQSD ObjectName and ObjectString combine into a full
topic string, and WILDCARD(BLOCK).

Definitions live in journal records (kind TOPIC, JSON payload: our own file, never
evaluated), written through Staging like queue definitions, and replayed at restart.
Every change moves ``ObjectRegistry.epoch``, so what a put worked out and kept is stale.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping

from ferrymq.engine import attrs as A
from ferrymq.engine.definitions import Definition, Definitions, kept_values
from ferrymq.engine.objects import ObjectRegistry, check_name
from ferrymq.engine.topicmatch import SEPARATOR, check_topic_string, has_wildcards, literal_prefix
from ferrymq.errors import DecodeError, MQError, failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C

KIND_TOPIC = 6  # journal record kind: one topic object's definition

BASE_TOPIC = "SYSTEM.BASE.TOPIC"
DEFAULT_TOPIC = "SYSTEM.DEFAULT.TOPIC"
# SYSTEM.BASE.TOPIC as IBM ships it: the root of ASPARENT resolution, so none of its values
# is ASPARENT. Also what the root resolves to while it is not defined.
BASE_VALUES: dict[str, int | str] = {
    "DESCR": "Base topic for ASPARENT resolution", "PUB": C.MQTA_PUB_ALLOWED, "SUB": C.MQTA_SUB_ALLOWED,
    "DEFPSIST": C.MQPER_NOT_PERSISTENT, "DEFPRTY": 0, "DEFPRESP": C.MQPRT_SYNC_RESPONSE,
    "DURSUB": C.MQSUB_DURABLE_ALLOWED, "PMSGDLV": C.MQDLV_ALL_DUR, "NPMSGDLV": C.MQDLV_ALL_AVAIL,
    "MDURMDL": "SYSTEM.DURABLE.MODEL.QUEUE", "MNDURMDL": "SYSTEM.NDURABLE.MODEL.QUEUE",
    "WILDCARD": C.MQTA_PASSTHRU, "USEDLQ": C.MQUSEDLQ_YES, "PUBSCOPE": C.MQSCOPE_ALL, "SUBSCOPE": C.MQSCOPE_ALL,
    "PROXYSUB": C.MQTA_PROXY_SUB_FIRSTUSE, "COMMINFO": "SYSTEM.DEFAULT.COMMINFO.MULTICAST",
    "MCAST": C.MQMC_DISABLED,
}
SYSTEM_TOPICS: tuple[tuple[str, dict[str, int | str]], ...] = (
    (BASE_TOPIC, BASE_VALUES),
    (DEFAULT_TOPIC, {}),
)
# Blank at the root means "none", not "as parent": no cluster, no COMMINFO object.
_BLANK_AT_ROOT_OK = frozenset({"CLUSTER", "COMMINFO"})
# Topic objects whose TOPICSTR may be blank (IBM ships both so): every other needs one.
_BLANK_STRING_OK = frozenset({BASE_TOPIC, DEFAULT_TOPIC})


class TopicObject(Definition):
    """One TOPIC definition."""

    __slots__ = ()

    @property
    def topic_string(self) -> str:
        return str(self.attrs.get("TOPICSTR", ""))

    def status(self, name: str) -> int | str:
        """A definition attribute as defined (ASPARENT kept), or TOPIC/CRDATE/... ."""
        if name == "TOPIC":
            return self.name
        stamped = self.stamp_of(name)
        if stamped is not None:
            return stamped
        return self.attrs.get(name, A.TOPIC_BY_NAME[name].default)


def decode_topic(payload: bytes, now: float) -> TopicObject:
    """A topic object from its journal record; attributes this version does not know are
    dropped.

    Raises:
        DecodeError: the record is not a topic definition (the caller logs and skips it).
    """
    try:
        doc = json.loads(payload)
        obj = TopicObject(check_name(str(doc["name"])), kept_values(A.TOPIC_BY_NAME, doc["attrs"]), now)
        obj.restore_stamps(doc)
    except (ValueError, KeyError, TypeError, IndexError, MQError) as exc:
        raise DecodeError("topic record", 0, f"not a topic definition: {exc}") from None
    return obj


def parents(topic_string: str) -> Iterator[str]:
    """The topic string and each one above it, closest first (``a/b``, ``a``), the root not
    included. A leading ``/`` is an empty first level: ``/a`` goes to ``""``, the root."""
    s = topic_string
    while s:
        yield s
        cut = s.rfind(SEPARATOR)
        s = s[:cut] if cut > 0 else ""


class TopicRegistry(Definitions[TopicObject]):
    """Every TOPIC object, by name and by topic string; the admin verbs over them."""

    def __init__(self, objects: ObjectRegistry, now: Callable[[], float]) -> None:
        super().__init__(objects, now, "topic object", KIND_TOPIC)
        self.topics = self.by_name
        self.by_string: dict[str, TopicObject] = {}  # non-blank TOPICSTR -> its object
        # The root while SYSTEM.BASE.TOPIC is not defined: IBM resolves to its shipped values.
        self._shipped_base = TopicObject(BASE_TOPIC, A.defaults_for(A.TOPIC) | BASE_VALUES, now())

    # -- lookups ---------------------------------------------------------------------------
    def full_string(self, object_name: str, object_string: str) -> str:
        """The full topic string of an MQOD or MQSD (IBM, "Combining topic strings"): the
        named object's TOPICSTR, ``/`` and ObjectString when both are present; either alone
        when only one is. A field is present when its first character is neither blank nor
        null. The string is not checked for wildcards (the caller knows whether it is a
        subscription's).

        Raises:
            MQError: MQRC_OBJECT_STRING_ERROR (2441) for an ObjectString longer than
                MQ_TOPIC_STR_LENGTH; MQRC_UNKNOWN_OBJECT_NAME (2085) when neither is present
                or ObjectName names no topic object; MQRC_TOPIC_STRING_ERROR (2425) when the
                result is empty (a blank TOPICSTR alone) or too long.
        """
        if len(object_string) > C.MQ_TOPIC_STR_LENGTH:
            raise failed(C.MQRC_OBJECT_STRING_ERROR,
                         f"ObjectString is {len(object_string)} characters; at most {C.MQ_TOPIC_STR_LENGTH}")
        name_present = bool(object_name) and object_name[0] not in " \0"
        string_present = bool(object_string) and object_string[0] not in " \0"
        if not name_present and not string_present:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, "neither ObjectName nor ObjectString names a topic")
        base = self.require(object_name.rstrip(" \0")).topic_string if name_present else ""
        if base and string_present:
            full = base + SEPARATOR + object_string
        else:
            full = base or (object_string if string_present else "")
        return check_topic_string(full)

    def node_for(self, topic_string: str) -> TopicObject:
        """The administered topic object at or closest above ``topic_string``: SYSTEM.BASE.TOPIC
        at the root (its shipped values while it is not defined)."""
        for s in parents(topic_string):
            obj = self.by_string.get(s)
            if obj is not None:
                return obj
        return self.topics.get(BASE_TOPIC) or self._shipped_base

    def effective(self, topic_string: str, name: str) -> int | str:
        """An attribute of ``topic_string`` as IBM resolves it: the closest topic object's
        value, or while that is ASPARENT (blank for the INHERITED_BLANK names) the next one's
        up to SYSTEM.BASE.TOPIC. Attributes that are not inherited (DESCR, WILDCARD ...) are
        the closest object's own.

        Raises:
            MQError: MQRC_SELECTOR_ERROR for a name that is no topic attribute.
        """
        attr = A.lookup(A.TOPIC, name)
        for s in parents(topic_string):
            obj = self.by_string.get(s)
            if obj is None:
                continue
            value = obj.status(attr.name)
            if not A.as_parent(attr, value):
                return value
        # The root holds no ASPARENT value (a rule of define/alter); a blank name there means
        # none (CLUSTER(' '): in no cluster).
        return (self.topics.get(BASE_TOPIC) or self._shipped_base).status(attr.name)

    def wildcard_blocked(self, pattern: str, topic_string: str, *, char_wildcards: bool) -> bool:
        """Whether a WILDCARD(BLOCK) topic object hides ``topic_string`` from a subscription
        to ``pattern`` (IBM: a subscription whose wildcards begin above a BLOCK node receives
        no publication on topics at or below it; a subscription made at or below the node,
        or without wildcards, is not affected)."""
        if not has_wildcards(pattern, char_wildcards=char_wildcards):
            return False
        prefix = literal_prefix(pattern, char_wildcards=char_wildcards)
        for s in parents(topic_string):
            obj = self.by_string.get(s)
            if obj is None or obj.attrs.get("WILDCARD") != C.MQTA_BLOCK:
                continue
            # The wildcards begin above the node unless the literal part reaches it: whole
            # levels in the topic scheme, characters in the character scheme.
            if char_wildcards:
                reaches = prefix.startswith(s)
            else:
                reaches = prefix == s or prefix.startswith(s + SEPARATOR)
            if not reaches:
                return True
        return False

    # -- admin verbs -----------------------------------------------------------------------
    def define(self, name: str, attrs: Mapping[str, object] | None = None, *, like: str | None = None,
               replace: bool = False) -> TopicObject:
        """DEFINE TOPIC: a new topic object from SYSTEM.DEFAULT.TOPIC (or LIKE another).

        Raises:
            MQError: MQRC_OBJECT_NAME_ERROR (2152), MQRC_OBJECT_ALREADY_EXISTS (2100) without
                REPLACE, MQRC_UNKNOWN_OBJECT_NAME for a missing LIKE, MQRCCF_PARM_MISSING
                (3228) without a TOPICSTR, MQRCCF_TOPICSTR_ALREADY_EXISTS (3300) for a
                TOPICSTR another object has, MQRC_TOPIC_NOT_ALTERABLE (2510) for REPLACE with
                another TOPICSTR, MQRC_TOPIC_STRING_ERROR (2425) for a string too long, and
                the attribute rules of attrs.py. Nothing changes when one is raised.
        """
        name = check_name(name)
        existing = self.topics.get(name)
        if existing is not None and not replace:
            raise failed(C.MQRC_OBJECT_ALREADY_EXISTS, f"TOPIC({name}) already exists; use REPLACE to redefine it")
        given = self._checked(attrs or {})
        if like is not None:
            base = self.topics.get(like.rstrip())
            if base is None:
                raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"LIKE({like.rstrip()}) is not a topic object")
            values = dict(base.attrs)  # its TOPICSTR too: taken, unless the command gives another
        else:
            default = self.topics.get(DEFAULT_TOPIC)
            values = dict(default.attrs) if default is not None else A.defaults_for(A.TOPIC)
        values.update(given)
        self._check_rules(name, values, existing)
        if existing is not None:
            existing.attrs = values
            return self.changed(existing)
        return self.added(TopicObject(name, values, self.now()))

    def alter(self, name: str, attrs: Mapping[str, object]) -> TopicObject:
        """ALTER TOPIC: change definition attributes; TOPICSTR is not alterable.

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME, MQRC_TOPIC_NOT_ALTERABLE (2510) for another
                TOPICSTR, and the rules of ``define``. Nothing changes when one is raised.
        """
        obj = self.require(name)
        values = dict(obj.attrs)
        values.update(self._checked(attrs))
        self._check_rules(obj.name, values, obj)
        obj.attrs = values
        return self.changed(obj)

    def delete(self, name: str) -> None:
        """DELETE TOPIC. Topic strings below it resolve from the next object up from then on.

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME (2085).
        """
        obj = self.require(name)
        if self.by_string.get(obj.topic_string) is obj:
            del self.by_string[obj.topic_string]
        self.removed(obj)

    def display(self, name: str, attrs: Iterable[str] = ("ALL",)) -> list[dict[str, int | str]]:
        """DISPLAY TOPIC(name) with generic names: one dict per object, keywords to values
        as defined (ASPARENT kept; DISPLAY TPSTATUS shows resolved values)."""
        wanted = [a.upper() for a in attrs]
        out = []
        for n in self.names(name):
            obj = self.topics[n]
            row: dict[str, int | str] = {"TOPIC": obj.name, "TYPE": obj.status("TYPE")}
            for attr in A.TOPIC_ATTRS + A.TOPIC_STATUS_ATTRS:
                if "ALL" in wanted or attr.name in wanted:
                    row[attr.name] = obj.status(attr.name)
            out.append(row)
        return out

    def define_system(self) -> None:
        """SYSTEM.BASE.TOPIC and SYSTEM.DEFAULT.TOPIC, where they are not defined yet."""
        for name, values in SYSTEM_TOPICS:
            if name not in self.topics:
                self.define(name, values)

    def added(self, obj: TopicObject) -> TopicObject:
        self._index(obj)
        return super().added(obj)

    def load(self, obj: TopicObject) -> None:
        self._index(obj)
        super().load(obj)

    # -- rules -----------------------------------------------------------------------------
    def _index(self, obj: TopicObject) -> None:
        if obj.topic_string:
            self.by_string[obj.topic_string] = obj

    def _checked(self, attrs: Mapping[str, object]) -> dict[str, int | str]:
        out: dict[str, int | str] = {}
        for key, value in attrs.items():
            attr = A.lookup(A.TOPIC, key)
            if attr.readonly:
                raise failed(C.MQRC_SELECTOR_ERROR, f"{attr.name} is status, not a definition attribute of TOPIC")
            out[attr.name] = attr.check(value)
        return out

    def _check_rules(self, name: str, values: Mapping[str, int | str], existing: TopicObject | None) -> None:
        topic_string = str(values.get("TOPICSTR", ""))
        if existing is not None and topic_string != existing.topic_string:
            raise failed(C.MQRC_TOPIC_NOT_ALTERABLE,
                         f"TOPICSTR of {name} is {existing.topic_string!r}; a topic object's string cannot change")
        if not topic_string and name not in _BLANK_STRING_OK:
            raise failed(F.MQRCCF_PARM_MISSING, f"TOPIC({name}) needs a TOPICSTR")
        if topic_string:
            check_topic_string(topic_string)
            holder = self.by_string.get(topic_string)
            if holder is not None and holder.name != name:
                raise failed(F.MQRCCF_TOPICSTR_ALREADY_EXISTS,
                             f"topic string {topic_string!r} is already TOPIC({holder.name})'s")
        if name == BASE_TOPIC:
            for attr in A.TOPIC_ATTRS:
                if attr.name not in _BLANK_AT_ROOT_OK and A.as_parent(attr, values.get(attr.name, attr.default)):
                    raise failed(C.MQRC_INHIBIT_VALUE_ERROR,
                                 f"{attr.name} of {BASE_TOPIC} cannot defer to a parent: it is the root")
