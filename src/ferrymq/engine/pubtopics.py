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
from ferrymq.engine.topics import TopicRegistry
from ferrymq.mq import constants as C

_ATTR_CACHE_LIMIT = 8192  # (topic string, attribute) answers remembered per epoch


class TopicView:
    """The topic tree as publish/subscribe sees it (see the module docstring): the topics
    registry's answers (engine.topics), attributes remembered per topic string until the
    epoch moves (a publication asks for three or four)."""

    def __init__(self, objects: ObjectRegistry, registry: TopicRegistry) -> None:
        self.objects, self.registry = objects, registry
        self._attrs: dict[tuple[str, str], int | str] = {}
        self._attrs_epoch = -1

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
        return self.registry.full_string(object_name, object_string)

    def effective(self, topic: str, attr: str) -> int | str:
        """A topic attribute as it resolves at ``topic`` (ASPARENT followed up the tree)."""
        if self._attrs_epoch != self.objects.epoch or len(self._attrs) >= _ATTR_CACHE_LIMIT:
            self._attrs.clear()
            self._attrs_epoch = self.objects.epoch
        key = (topic, attr)
        value = self._attrs.get(key)
        if value is None:
            value = self._attrs[key] = self.registry.effective(topic, attr)
        return value

    def receives(self, pattern: str, topic: str, wildcards: int) -> bool:
        """Whether a subscription to ``pattern`` receives a publication on ``topic``: it
        matches, and no WILDCARD(BLOCK) topic object between them hides it."""
        char = wildcards == C.MQWS_CHAR
        return (topicmatch.matches(pattern, topic, char_wildcards=char)
                and not self.registry.wildcard_blocked(pattern, topic, char_wildcards=char))


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


def has_wildcards(pattern: str, wildcards: int) -> bool:
    """Whether a subscription's pattern selects more than its own topic string."""
    return topicmatch.has_wildcards(pattern, char_wildcards=wildcards == C.MQWS_CHAR)
