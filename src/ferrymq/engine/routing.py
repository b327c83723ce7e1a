"""Where a name opened for putting or getting leads: the resolver step of MQOPEN.

``resolve`` maps the ObjectName and ObjectQMgrName of an MQOD to the local queue its
messages go to and come from, through an alias; MQOPEN keeps the answer in the Handle, so
every put and get through it (and the put memo) uses it without resolving again.

This is the seam where what comes next plugs in (docs/architecture.md, "Extension
points"): a topic object resolves to the queues of its subscriptions (a topic tree), a
queue on another queue manager to the transmission queue a channel's message agent serves,
and a cluster queue to the transmission queue of a cluster link. Today a name leads to
one local queue (directly, through an alias, or through a queue-manager alias or remote
queue definition that names this queue manager), or to a transmission queue and the names
its MQXQH will carry (a ``Route``: an ObjectQMgrName naming another queue manager, a QREMOTE,
an alias of a QREMOTE; the rules are engine.remote's); a topic (MQOT_TOPIC) to its full
topic string (``resolve_topic``), which the put entry hands to engine.publishing.
"""

from __future__ import annotations

from ferrymq.engine import attrs as A
from ferrymq.engine.objects import ObjectRegistry, QueueObject
from ferrymq.engine.pubtopics import TopicView
from ferrymq.engine.remote import RemoteNames, Route
from ferrymq.errors import failed
from ferrymq.mq import constants as C


class Resolver:
    """Resolves opened names for one queue manager."""

    def __init__(self, qmgr_name: str, objects: ObjectRegistry, topics: TopicView) -> None:
        self.qmgr_name, self.objects, self.topics = qmgr_name, objects, topics
        self.remote = RemoteNames(qmgr_name, objects)

    def resolve_topic(self, name: str, topic_string: str, qmgr: str = "") -> str:
        """The full topic string a topic MQOD names (a TOPIC object's, ObjectString, or both).

        Raises:
            MQError: MQRC_UNKNOWN_REMOTE_Q_MGR, MQRC_UNKNOWN_OBJECT_NAME, MQRC_TOPIC_STRING_ERROR.
        """
        if qmgr.strip() not in ("", self.qmgr_name):
            raise failed(C.MQRC_UNKNOWN_REMOTE_Q_MGR, f"no route to queue manager {qmgr.strip()}")
        return self.topics.full_string(name, topic_string)

    def resolve(self, name: str, qmgr: str) -> tuple[QueueObject, QueueObject | None, Route | None]:
        """Where ``name`` at ``qmgr`` leads: the queue object (a local or model queue, or the
        transmission queue of a remote destination), the first definition the name was
        reached through (an alias or a remote queue definition; None: named directly) and,
        for a queue on another queue manager, its Route.

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME, MQRC_UNKNOWN_ALIAS_BASE_Q,
                MQRC_ALIAS_BASE_Q_TYPE_ERROR, and engine.remote's (2087, 2091, 2092, 2184,
                2196-2199).
        """
        if not name.strip():
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, "ObjectName is blank")
        if not self.remote.is_local(qmgr):
            route = self.remote.for_qmgr(name.strip(), qmgr)
            if route is not None:
                return route.xmitq, None, route
        obj = self.objects.require(name)
        if obj.qtype == A.QREMOTE:
            return self._through_remote(obj, obj)
        if obj.qtype != A.QALIAS:
            return obj, None, None
        target = self.objects.find(str(obj["TARGET"]))
        if target is None:
            raise failed(C.MQRC_UNKNOWN_ALIAS_BASE_Q, f"alias {obj.name} targets {obj['TARGET']!r}, which is not defined")
        if target.qtype == A.QREMOTE:
            return self._through_remote(target, obj)
        if not target.is_local:
            raise failed(C.MQRC_ALIAS_BASE_Q_TYPE_ERROR, f"alias {obj.name} targets {target.qtype} {target.name}")
        return target, obj, None

    def _through_remote(self, remote: QueueObject, first: QueueObject) -> tuple[QueueObject, QueueObject | None, Route | None]:
        route = self.remote.through(remote)
        if route is not None:
            return route.xmitq, first, route
        local = self.objects.require(str(remote["RNAME"]))  # RQMNAME names this queue manager
        if not local.is_local:
            raise failed(C.MQRC_ALIAS_BASE_Q_TYPE_ERROR, f"{remote.name} names {local.qtype} {local.name} here, not a local queue")
        return local, first, None
