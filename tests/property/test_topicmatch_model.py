"""Both wildcard schemes against a reference built another way (regular expressions), on
topic strings and patterns drawn from a small alphabet so that matches are frequent."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ferrymq.engine.topicmatch import has_wildcards, matches

LEVEL = st.text(alphabet="ab#+", max_size=2)
TOPICS = st.lists(LEVEL, min_size=1, max_size=5).map("/".join)
CHAR_PATTERNS = st.text(alphabet="ab/*?%", max_size=8)


def topic_regex(pattern: str) -> re.Pattern[str]:
    """Topic scheme, for the topic written with each level behind its own '/' ("a/b" as
    "/a/b", "" as "/"): a '#' level is any run of "/level", '+' one "/level"."""
    parts = []
    for level in pattern.split("/"):
        parts.append("(?:/[^/]*)*" if level == "#" else "/[^/]*" if level == "+" else re.escape("/" + level))
    return re.compile("".join(parts), re.DOTALL)


def char_regex(pattern: str) -> tuple[re.Pattern[str], bool] | None:
    """The character scheme as a regex, and whether the pattern has a wildcard (None: a
    dangling '%')."""
    out, i, wild = "", 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "%":
            if i + 1 >= len(pattern) or pattern[i + 1] not in "*?%":
                return None
            out += re.escape(pattern[i + 1])
            i += 2
            continue
        out += ".*" if c == "*" else "." if c == "?" else re.escape(c)
        wild = wild or c in "*?"
        i += 1
    return re.compile(out, re.DOTALL), wild


def topic_reference(pattern: str, topic: str) -> bool:
    return topic_regex(pattern).fullmatch("/" + topic) is not None


@settings(max_examples=3000)
@given(TOPICS, TOPICS)
def test_topic_scheme_against_a_regex(pattern: str, topic: str) -> None:
    assert matches(pattern, topic, char_wildcards=False) == topic_reference(pattern, topic)


@settings(max_examples=3000)
@given(CHAR_PATTERNS, st.text(alphabet="ab/*?%", max_size=8))
def test_character_scheme_against_a_regex(pattern: str, topic: str) -> None:
    ref = char_regex(pattern)
    assert matches(pattern, topic, char_wildcards=True) == (ref is not None and ref[0].fullmatch(topic) is not None)
    if ref is not None:
        assert has_wildcards(pattern, char_wildcards=True) == ref[1]


@given(TOPICS)
def test_a_pattern_without_wildcards_matches_only_itself(topic: str) -> None:
    if not has_wildcards(topic, char_wildcards=False):
        assert matches(topic, topic, char_wildcards=False)
        assert not matches(topic, topic + "/x", char_wildcards=False)
