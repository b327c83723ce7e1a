"""Topic strings and IBM MQ's two wildcard schemes: which topics a subscription's pattern
selects, and which strings MQOPEN/MQSUB refuse. Pure functions of strings.

- Topic-based (MQSO_WILDCARD_TOPIC, the default): a topic string is levels separated by
  ``/``. A level that is exactly ``#`` matches zero or more levels (so ``a/#`` matches
  ``a`` itself, and ``#/b`` matches ``b``); a level that is exactly ``+`` matches one
  level. ``#`` or ``+`` beside other characters in a level (``a#``, ``++``) is literal.
  Levels may be empty: a leading ``/`` makes an empty first level, ``a//b`` has an empty
  second one, and ``+`` matches an empty level like any other.
- Character-based (MQSO_WILDCARD_CHAR, the version 6 scheme): ``*`` matches zero or more
  characters, ``/`` included; ``?`` matches exactly one character; ``%`` escapes the
  next character, which must be ``*``, ``?`` or ``%``.

Published topic strings have no wildcards: ``#``, ``+``, ``*`` and ``?`` in a publication's
topic are ordinary characters (IBM, "Topic-based wildcard scheme": "When used in a
publication it is treated as a literal"). Which subscriptions a WILDCARD(BLOCK) topic
object hides a topic from is a matter of the topic tree (engine.topics), not of matching.
"""

from __future__ import annotations

from functools import lru_cache

from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C

SEPARATOR = "/"
MULTI_LEVEL = "#"
SINGLE_LEVEL = "+"
MAX_LENGTH = C.MQ_TOPIC_STR_LENGTH  # 10240 characters


def check_topic_string(s: str) -> str:
    """A full topic string as MQOPEN, MQPUT1 and MQSUB accept it; returns it unchanged.

    Wildcard characters are allowed (a publisher's are literal, a subscriber's are the
    pattern); empty levels are allowed (IBM advises against them, but accepts them).

    Raises:
        MQError: MQRC_TOPIC_STRING_ERROR (2425) for an empty string (the TOPICSTR of a topic
            object opened with no ObjectString, SYSTEM.BASE.TOPIC's among them), one longer
            than MQ_TOPIC_STR_LENGTH, or one holding a null character (MQCHARV ends there).
    """
    if not s:
        raise failed(C.MQRC_TOPIC_STRING_ERROR, "the full topic string is empty")
    if len(s) > MAX_LENGTH:
        raise failed(C.MQRC_TOPIC_STRING_ERROR, f"the full topic string is {len(s)} characters; at most {MAX_LENGTH}")
    if "\0" in s:
        raise failed(C.MQRC_TOPIC_STRING_ERROR, f"the topic string has a null character at position {s.index(chr(0)) + 1}")
    return s


def check_pattern(pattern: str, *, char_wildcards: bool) -> str:
    """A subscription's full topic string: ``check_topic_string`` and, in the character
    scheme, every ``%`` followed by ``*``, ``?`` or ``%``; returns it unchanged.

    Raises:
        MQError: MQRC_TOPIC_STRING_ERROR (2425), as IBM gives it for a dangling ``%`` on an
            MQSUB with MQSO_WILDCARD_CHAR.
    """
    check_topic_string(pattern)
    if char_wildcards:
        _char_tokens(pattern)
    return pattern


def has_wildcards(pattern: str, *, char_wildcards: bool) -> bool:
    """Whether a pattern selects more than the one topic spelled as it is."""
    if char_wildcards:
        return any(kind != "lit" for kind, _ in _char_tokens(pattern))
    return any(level in (MULTI_LEVEL, SINGLE_LEVEL) for level in pattern.split(SEPARATOR))


def literal_prefix(pattern: str, *, char_wildcards: bool) -> str:
    """The part of a pattern before its first wildcard: in the topic scheme the whole levels
    before the first wildcard level (joined by ``/``), in the character scheme the
    characters before the first ``*`` or ``?`` (``%`` escapes resolved). The whole (escapes
    resolved) when there is no wildcard. WILDCARD(BLOCK) compares it with a topic node."""
    if char_wildcards:
        out = []
        for kind, ch in _char_tokens(pattern):
            if kind != "lit":
                break
            out.append(ch)
        return "".join(out)
    levels = pattern.split(SEPARATOR)
    for i, level in enumerate(levels):
        if level in (MULTI_LEVEL, SINGLE_LEVEL):
            return SEPARATOR.join(levels[:i])
    return pattern


def matches(pattern: str, topic: str, *, char_wildcards: bool) -> bool:
    """Whether a subscription's pattern selects a published topic string.

    ``char_wildcards``: MQSO_WILDCARD_CHAR; otherwise the topic-based scheme. A pattern the
    character scheme refuses (a dangling ``%``) matches nothing.
    """
    if char_wildcards:
        try:
            tokens = _char_tokens(pattern)
        except MQError:  # an invalid pattern selects no topic
            return False
        return _glob(tokens, topic)
    if MULTI_LEVEL not in pattern and SINGLE_LEVEL not in pattern:
        return pattern == topic
    return _levels(tuple(pattern.split(SEPARATOR)), tuple(topic.split(SEPARATOR)))


def _levels(pattern: tuple[str, ...], topic: tuple[str, ...]) -> bool:
    """Topic-based matching, level by level: the set of topic positions the pattern so far
    can have consumed up to. Iterative, at most len(pattern) x len(topic) steps, however
    many ``#`` levels there are."""
    nt = len(topic)
    reach = {0}
    for level in pattern:
        if level == MULTI_LEVEL:
            reach = set(range(min(reach), nt + 1))
        elif level == SINGLE_LEVEL:
            reach = {j + 1 for j in reach if j < nt}
        else:
            reach = {j + 1 for j in reach if j < nt and topic[j] == level}
        if not reach:
            return False
    return nt in reach


@lru_cache(maxsize=1024)
def _char_tokens(pattern: str) -> tuple[tuple[str, str], ...]:
    """The character scheme's tokens: ("lit", c), ("any", "*") or ("one", "?").

    Raises:
        MQError: MQRC_TOPIC_STRING_ERROR for ``%`` not followed by ``*``, ``?`` or ``%``.
    """
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "%":
            nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
            if not nxt or nxt not in "*?%":
                raise failed(C.MQRC_TOPIC_STRING_ERROR,
                             f"'%' at position {i + 1} must be followed by '*', '?' or '%' (character wildcards)")
            out.append(("lit", nxt))
            i += 2
            continue
        out.append(("any", ch) if ch == "*" else ("one", ch) if ch == "?" else ("lit", ch))
        i += 1
    return tuple(out)


def _glob(tokens: tuple[tuple[str, str], ...], topic: str) -> bool:
    """Character-based matching: the two-pointer glob (back to the last ``*`` on a miss),
    linear in practice and never exponential."""
    t = p = 0
    star_p, star_t = -1, 0
    while t < len(topic):
        if p < len(tokens) and tokens[p][0] == "any":
            star_p, star_t = p, t
            p += 1
        elif p < len(tokens) and (tokens[p][0] == "one" or tokens[p][1] == topic[t]):
            p += 1
            t += 1
        elif star_p >= 0:
            p = star_p + 1
            star_t += 1
            t = star_t
        else:
            return False
    while p < len(tokens) and tokens[p][0] == "any":
        p += 1
    return p == len(tokens)
