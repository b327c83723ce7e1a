"""Topic administration commands: CREATE/CHANGE/COPY/DELETE/INQUIRE_TOPIC,
INQUIRE_TOPIC_NAMES, INQUIRE_TOPIC_STATUS (DISPLAY TPSTATUS) and CLEAR_TOPIC_STRING.

The object rules are the topic registry's (engine.topics) and the attribute catalog's;
this module maps PCF parameters to them and topics back to parameters. The topic tree
DISPLAY TPSTATUS walks is every string something stands at (a topic object, a
subscription, a publisher's open handle, a retained publication) and the levels above it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ferrymq.engine import attrs as A
from ferrymq.engine.commands.params import settable
from ferrymq.engine.commands.verbs import Codes, definition_handlers
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.session import connection_id
from ferrymq.engine.topicmatch import has_wildcards, matches
from ferrymq.engine.topics import TopicObject, parents
from ferrymq.errors import failed
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command, Filter, ParameterError, Response, Value

# Parameters a topic command reads itself: never treated as topic attributes.
_CONTROL = {C.MQCA_TOPIC_NAME, F.MQIACF_REPLACE, F.MQCACF_FROM_TOPIC_NAME, F.MQCACF_TO_TOPIC_NAME,
            F.MQIACF_TOPIC_ATTRS, F.MQIACF_QSG_DISPS, F.MQCACF_COMMAND_SCOPE}


def topic_attributes(cmd: Command) -> dict[str, object]:
    """The definition attributes a CREATE/CHANGE/COPY_TOPIC carries, as catalog names.

    Raises:
        ParameterError: as params.settable.
    """
    return settable(cmd, A.TOPIC_BY_SELECTOR.get, _CONTROL, "TOPIC")


_VERBS = definition_handlers(lambda qm: qm.state.topics, topic_attributes, Codes(
    C.MQCA_TOPIC_NAME, F.MQCACF_FROM_TOPIC_NAME, F.MQCACF_TO_TOPIC_NAME, F.MQCMD_CREATE_TOPIC,
    F.MQCMD_COPY_TOPIC, F.MQCMD_CHANGE_TOPIC, F.MQCMD_DELETE_TOPIC))


def _check_type(cmd: Command) -> int:
    kind = cmd.number(C.MQIA_TOPIC_TYPE, C.MQTOPT_ALL)
    if kind not in (C.MQTOPT_ALL, C.MQTOPT_LOCAL, C.MQTOPT_CLUSTER):
        raise failed(F.MQRCCF_TOPIC_TYPE_ERROR, f"TopicType {kind} is not MQTOPT_LOCAL, MQTOPT_CLUSTER or MQTOPT_ALL")
    return kind


def topic_params(obj: TopicObject, wanted: Iterable[int]) -> dict[int, Value]:
    """A topic object as INQUIRE_TOPIC answers: name, type, then the asked-for attributes
    (as defined: ASPARENT values are kept; INQUIRE_TOPIC_STATUS shows them resolved)."""
    want = set(wanted)
    every = F.MQIACF_ALL in want
    out: dict[int, Value] = {C.MQCA_TOPIC_NAME: obj.name, C.MQIA_TOPIC_TYPE: int(obj.status("TYPE"))}
    for attr in A.TOPIC_ATTRS + A.TOPIC_STATUS_ATTRS:
        if attr.selector in out:
            continue
        if every or attr.selector in want:
            out[attr.selector] = obj.status(attr.name)
    return out


def _name_of(selector: int) -> str:
    attr = A.TOPIC_BY_SELECTOR.get(selector)
    if attr is None:
        raise failed(F.MQRCCF_FILTER_ERROR, f"filter parameter {selector} is not a topic attribute")
    return attr.name


def _passes(obj: TopicObject, filters: list[Filter]) -> bool:
    return all(f.matches(obj.status(_name_of(f.parameter))) for f in filters)


def _matching(qm: QueueManager, cmd: Command) -> list[TopicObject]:
    kind = _check_type(cmd)
    name = cmd.text(C.MQCA_TOPIC_NAME)
    reg = qm.state.topics
    found = [reg.topics[n] for n in reg.names(name)]
    if not found and "*" not in name:
        raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"topic object {name!r} is not defined")
    # Every topic object here is a local definition; cluster topics come with the cluster.
    return [] if kind == C.MQTOPT_CLUSTER else found


def _inquire(qm: QueueManager, cmd: Command) -> list[Response]:
    # As IBM: the attribute a filter tests is returned whether or not it was asked for.
    wanted = cmd.selectors(F.MQIACF_TOPIC_ATTRS) + tuple(f.parameter for f in cmd.filters)
    return [Response(topic_params(obj, wanted)) for obj in _matching(qm, cmd) if _passes(obj, cmd.filters)]


def _inquire_names(qm: QueueManager, cmd: Command) -> list[Response]:
    names = tuple(o.name for o in _matching(qm, cmd))
    return [Response({F.MQCACF_TOPIC_NAMES: names})]


# -- the topic tree and its status ----------------------------------------------------------
def tree(qm: QueueManager) -> list[str]:
    """Every topic string of the tree, sorted: each a topic object, a subscription, an open
    publisher, a retained publication stands at, and every level above one."""
    points: set[str] = {t.topic_string for t in qm.state.topics if t.topic_string}
    points.update(s.topic for s in qm.subscriptions)
    points.update(h.topic for h in qm.handles.values() if h.topic and h.subscription is None)
    points.update(qm.retained.by_topic)
    nodes: set[str] = set()
    for p in points:
        nodes.update(parents(p))
    return sorted(nodes)


def topic_status(qm: QueueManager, topic: str) -> dict[str, int | str]:
    """DISPLAY TPSTATUS TYPE(TOPIC): a topic string's attributes resolved (engine.topics)
    and its counts (publishers with it open, subscriptions made to it, a retained
    publication)."""
    reg = qm.state.topics
    values: dict[str, int | str] = {"ADMIN": "" if reg.by_string.get(topic) is None else reg.by_string[topic].name}
    for attr in A.TOPIC_ATTRS:
        if attr.name not in ("TOPICSTR", "DESCR", "TYPE", "WILDCARD", "PROXYSUB"):
            values[attr.name] = reg.effective(topic, attr.name)
    counts = qm.subscriber.topic_status(topic)
    values["PUBCOUNT"] = int(counts["PUBCOUNT"])
    values["SUBCOUNT"] = int(counts["SUBCOUNT"])
    values["RETAINED"] = F.MQQSO_YES if counts["RETAINED"] == "YES" else F.MQQSO_NO
    return values


def _selected(qm: QueueManager, pattern: str) -> list[str]:
    """The tree's topic strings a TPSTATUS string names (topic-based wildcards).

    Raises:
        MQError: MQRCCF_TOPIC_STRING_NOT_FOUND (3308) when it names none.
    """
    if not has_wildcards(pattern, char_wildcards=False):
        found = [pattern] if pattern in set(tree(qm)) else []
    else:
        found = [t for t in tree(qm) if matches(pattern, t, char_wildcards=False)
                 and not qm.state.topics.wildcard_blocked(pattern, t, char_wildcards=False)]
    if not found:
        raise failed(F.MQRCCF_TOPIC_STRING_NOT_FOUND, f"no topic node matches {pattern!r}")
    return found


def _pick(values: dict[str, int | str | bytes], table: dict[str, A.Attr], wanted: tuple[int, ...]) -> dict[int, Value]:
    every = F.MQIACF_ALL in wanted
    out: dict[int, Value] = {}
    for name, value in values.items():
        attr = table.get(name)
        if attr is not None and (every or attr.selector in wanted):
            out[attr.selector] = value
    return out


_RESOLVED = {a.name: a for a in A.TOPIC_ATTRS} | A.TPSTATUS_BY_NAME


def _inquire_status(qm: QueueManager, cmd: Command) -> list[Response]:
    pattern = cmd.params.get(C.MQCA_TOPIC_STRING)
    if not isinstance(pattern, str) or not pattern:
        raise ParameterError(F.MQRCCF_PARM_MISSING, C.MQCA_TOPIC_STRING, "INQUIRE_TOPIC_STATUS needs a TopicString")
    kind = cmd.number(F.MQIACF_TOPIC_STATUS_TYPE, F.MQIACF_TOPIC_STATUS)
    if kind not in (F.MQIACF_TOPIC_STATUS, F.MQIACF_TOPIC_SUB, F.MQIACF_TOPIC_PUB):
        raise ParameterError(F.MQRCCF_PARM_VALUE_ERROR, F.MQIACF_TOPIC_STATUS_TYPE,
                             f"TopicStatusType {kind} is not MQIACF_TOPIC_STATUS, _SUB or _PUB")
    wanted = cmd.selectors(F.MQIACF_TOPIC_STATUS_ATTRS)
    out = []
    for topic in _selected(qm, pattern):
        head: dict[int, Value] = {C.MQCA_TOPIC_STRING: topic}
        if kind == F.MQIACF_TOPIC_STATUS:
            values: dict[str, int | str | bytes] = dict(topic_status(qm, topic))
            # A filter tests the resolved attributes, whether or not they were asked for.
            every = head | _pick(values, _RESOLVED, (F.MQIACF_ALL,))
            if all(f.matches(every.get(f.parameter)) for f in cmd.filters):
                out.append(Response(head | _pick(values, _RESOLVED, wanted)))
            continue
        for values in (_subscribers(qm, topic) if kind == F.MQIACF_TOPIC_SUB else _publishers(qm, topic)):
            params = head | _pick(values, A.SUB_BY_NAME, wanted)
            if all(f.matches(params.get(f.parameter)) for f in cmd.filters):
                out.append(Response(params))
    return out


def _subscribers(qm: QueueManager, topic: str) -> list[dict[str, int | str | bytes]]:
    """TPSTATUS TYPE(SUB): one row per subscription made to ``topic``."""
    rows: list[dict[str, int | str | bytes]] = []
    for sub in qm.subscriptions.on_topic(topic):
        rows.append({"SUBID": sub.sub_id, "SUBUSER": sub.user,
                     "DURABLE": C.MQSUB_DURABLE_YES if sub.durable else C.MQSUB_DURABLE_NO,
                     "SUBTYPE": sub.sub_type, "RESMDATE": sub.resumed[0], "RESMTIME": sub.resumed[1],
                     "LMSGDATE": sub.last_msg[0], "LMSGTIME": sub.last_msg[1], "NUMMSGS": sub.delivered,
                     "ACTCONN": connection_id(qm.name, sub.hconn) if sub.hconn else bytes(24)})
    return rows


def _publishers(qm: QueueManager, topic: str) -> list[dict[str, int | str | bytes]]:
    """TPSTATUS TYPE(PUB): one row per handle open to publish on ``topic``."""
    return [{"ACTCONN": connection_id(qm.name, h.hconn)}
            for _, h in sorted(qm.handles.items()) if h.topic == topic and h.subscription is None]


def _clear(qm: QueueManager, cmd: Command) -> list[Response]:
    """CLEAR_TOPIC_STRING CLRTYPE(RETAINED): the retained publication of one topic string."""
    topic = cmd.params.get(C.MQCA_TOPIC_STRING)
    if not isinstance(topic, str) or not topic:
        raise ParameterError(F.MQRCCF_PARM_MISSING, C.MQCA_TOPIC_STRING, "CLEAR_TOPIC_STRING needs a TopicString")
    clear_type = cmd.number(F.MQIACF_CLEAR_TYPE, F.MQCLRT_RETAINED)
    if clear_type != F.MQCLRT_RETAINED:
        raise ParameterError(F.MQRCCF_PARM_VALUE_ERROR, F.MQIACF_CLEAR_TYPE, f"ClearType {clear_type} is not MQCLRT_RETAINED")
    scope = cmd.number(F.MQIACF_CLEAR_SCOPE, F.MQCLRS_LOCAL)
    if scope not in (F.MQCLRS_LOCAL, F.MQCLRS_GLOBAL):
        raise ParameterError(F.MQRCCF_PARM_VALUE_ERROR, F.MQIACF_CLEAR_SCOPE, f"Scope {scope} is not LOCAL or GLOBAL")
    if topic not in set(tree(qm)):
        raise failed(F.MQRCCF_TOPIC_STRING_NOT_FOUND, f"no topic node is {topic!r}")
    # IBM: clearing a node that holds no retained publication is not an error.
    qm.subscriber.clear_retained(topic)
    qm.need_sync()
    return [Response()]


HANDLERS = {
    **_VERBS,
    F.MQCMD_INQUIRE_TOPIC: _inquire,
    F.MQCMD_INQUIRE_TOPIC_NAMES: _inquire_names,
    F.MQCMD_INQUIRE_TOPIC_STATUS: _inquire_status,
    F.MQCMD_CLEAR_TOPIC_STRING: _clear,
}
