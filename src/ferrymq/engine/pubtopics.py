"""What publish/subscribe asks of the topic tree, in one place.

MQOPEN of a topic, MQPUT to it and MQSUB need four answers from the topic tree: the full
topic string an MQOD or MQSD names (a TOPIC object's string combined with ObjectString),
a topic attribute as it resolves at a topic string (ASPARENT followed up the tree), whether
a subscription's pattern matches a publication's topic string under its wildcard scheme,
and the ``epoch`` that moves whenever a topic definition changes (what was resolved from
them is then stale). ``TopicView`` gives them to engine.subscribing and engine.publishing.
"""

from __future__ import annotations

from ferrymq.engine import topicmatch
from ferrymq.engine.objects import ObjectRegistry
from ferrymq.errors import failed
from ferrymq.mq import constants as C

# What every topic string resolves to while no TOPIC object says otherwise
# (SYSTEM.BASE.TOPIC's values as IBM ships it).
BASE_ATTRS: dict[str, int | str] = {
    "PUB": C.MQTA_PUB_ALLOWED, "SUB": C.MQTA_SUB_ALLOWED, "DEFPSIST": C.MQPER_NOT_PERSISTENT, "DEFPRTY": 0,
    "DURSUB": C.MQSUB_DURABLE_ALLOWED, "PMSGDLV": C.MQDLV_ALL_DUR, "NPMSGDLV": C.MQDLV_ALL_AVAIL,
    "MDURMDL": "SYSTEM.DURABLE.MODEL.QUEUE", "MNDURMDL": "SYSTEM.NDURABLE.MODEL.QUEUE",
    "USEDLQ": C.MQUSEDLQ_YES, "WILDCARD": C.MQTA_PASSTHRU,
}
_BASE_OBJECTS = {"SYSTEM.BASE.TOPIC": "", "SYSTEM.DEFAULT.TOPIC": ""}


class TopicView:
    """The topic tree as publish/subscribe sees it (see the module docstring)."""

    def __init__(self, objects: ObjectRegistry) -> None:
        self.objects = objects

    @property
    def epoch(self) -> int:
        """Moves with every change of a definition publish/subscribe resolves."""
        return self.objects.epoch

    def full_string(self, object_name: str, object_string: str) -> str:
        """The topic string an MQOD or MQSD names: the TOPIC object's TOPICSTR, then ``/``
        and ObjectString when both are given (IBM's combination).

        Raises:
            MQError: MQRC_UNKNOWN_OBJECT_NAME (no such TOPIC object, or neither given),
                MQRC_TOPIC_STRING_ERROR (a string IBM refuses).
        """
        name = object_name.rstrip()
        if name:
            base = _BASE_OBJECTS.get(name)
            if base is None:
                raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"TOPIC object {name!r} is not defined")
            full = f"{base}/{object_string}" if base and object_string else base or object_string
        elif object_string:
            full = object_string
        else:
            raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, "neither ObjectName nor ObjectString names a topic")
        return check_topic_string(full)

    def effective(self, topic: str, attr: str) -> int | str:
        """A topic attribute as it resolves at ``topic``."""
        return BASE_ATTRS[attr]

    def blocked(self, pattern: str, topic: str) -> bool:
        """True when a wildcard subscription ``pattern`` may not see ``topic`` because a
        TOPIC object between them has WILDCARD(BLOCK)."""
        return False


def check_topic_string(topic: str) -> str:
    """``topic`` if IBM accepts it as a full topic string (engine.topicmatch).

    Raises:
        MQError: MQRC_TOPIC_STRING_ERROR.
    """
    return topicmatch.check_topic_string(topic)


def check_pattern(pattern: str, wildcards: int) -> str:
    """A subscription's topic string under its wildcard scheme (engine.topicmatch).

    Raises:
        MQError: MQRC_TOPIC_STRING_ERROR.
    """
    return topicmatch.check_pattern(pattern, char_wildcards=wildcards == C.MQWS_CHAR)


def matches(pattern: str, topic: str, wildcards: int) -> bool:
    """Whether a subscription to ``pattern`` (wildcards MQWS_TOPIC or MQWS_CHAR) receives a
    publication on ``topic`` (engine.topicmatch)."""
    return topicmatch.matches(pattern, topic, char_wildcards=wildcards == C.MQWS_CHAR)
