"""The two wildcard schemes against IBM's documented examples, and the topic string checks."""

from __future__ import annotations

import pytest

from ferrymq.engine.topicmatch import (
    check_pattern,
    check_topic_string,
    has_wildcards,
    literal_prefix,
    matches,
)
from ferrymq.errors import MQError
from ferrymq.mq import constants as C

TOPIC = False
CHAR = True

# (pattern, topic, scheme, expected)
CASES = [
    # IBM, "Topic-based wildcard scheme": '+' one level, '#' zero or more levels.
    ("IBM/+/Results", "IBM/Software/Results", TOPIC, True),
    ("IBM/+/Results", "IBM/Services/Results", TOPIC, True),
    ("IBM/+/Results", "IBM/Hardware/Results", TOPIC, True),
    ("IBM/+/Results", "IBM/Patents/Software/Results", TOPIC, False),
    ("USA/Alaska/#", "USA/Alaska", TOPIC, True),
    ("USA/Alaska/#", "USA/Alaska/Juneau", TOPIC, True),
    ("USA/#", "USA", TOPIC, True),  # '#' as zero levels: a parent matches its own '#'
    ("USA/+", "USA/Alabama", TOPIC, True),
    ("USA/+", "USA/Alabama/Auburn", TOPIC, False),
    ("USA/+", "USA", TOPIC, False),  # '+' is exactly one level
    ("#", "USA/Alaska/Juneau", TOPIC, True),
    ("#", "USA", TOPIC, True),
    ("+", "USA", TOPIC, True),
    ("+", "USA/Alaska", TOPIC, False),
    ("#/Results", "IBM/Software/Results", TOPIC, True),  # IBM, "Wildcard schemes" examples
    ("#/Results", "Results", TOPIC, True),
    ("#/Results", "IBM/Results/Other", TOPIC, False),
    ("x/#/y", "x/y", TOPIC, True),  # IBM, "Character-based wildcard scheme": x/*/y ~ x/#/y
    ("x/#/y", "x/a/b/y", TOPIC, True),
    ("x/#/y", "x/a/b/z", TOPIC, False),
    ("USA#", "USA#", TOPIC, True),  # '#' beside other characters is not a wildcard
    ("USA#", "USA", TOPIC, False),
    ("USA#", "USAX", TOPIC, False),
    ("a+/b", "a+/b", TOPIC, True),
    ("a+/b", "ab/b", TOPIC, False),
    ("++", "x", TOPIC, False),
    ("IBM/Software/Results", "IBM/Software/Results", TOPIC, True),
    ("IBM/Software/Results", "IBM/software/Results", TOPIC, False),  # case matters
    # IBM, "Topic strings": a leading '/' is an empty first level; "/Football" is not "Football".
    ("/Football", "Football", TOPIC, False),
    ("+/Football", "/Football", TOPIC, True),
    ("+", "/Football", TOPIC, False),
    ("#", "/Football", TOPIC, True),
    ("Football/+/Scores", "Football//Scores", TOPIC, True),  # an empty level is a level
    ("Football/#", "Football/", TOPIC, True),
    ("Football/+", "Football/", TOPIC, True),
    # A subscriber's wildcard level does not match a publication whose level is '#' only in
    # the topic-based scheme's sense: the publication's '#' is literal, matched by '+'/'#'.
    ("a/+", "a/#", TOPIC, True),
    ("a/#", "a/#", TOPIC, True),
    # IBM, "Character-based wildcard scheme": '*' crosses levels, '?' one character.
    ("IBM/*/Results", "IBM/Software/Results", CHAR, True),
    ("IBM/*/Results", "IBM/Patents/Software/Results", CHAR, True),
    ("IBM/*ware/Results", "IBM/Software/Results", CHAR, True),
    ("IBM/*ware/Results", "IBM/Hardware/Results", CHAR, True),
    ("IBM/*ware/Results", "IBM/Services/Results", CHAR, False),
    ("*", "USA/Alaska/Juneau", CHAR, True),
    ("*", "", CHAR, True),
    ("USA/?", "USA/A", CHAR, True),
    ("USA/?", "USA/AB", CHAR, False),
    ("USA?Alaska", "USA/Alaska", CHAR, True),  # '?' is any one character, '/' included
    ("x/*/y", "x/y", CHAR, False),  # '*' is characters: "x//y" would need the two '/'
    ("x/*/y", "x//y", CHAR, True),
    # '%' escapes '*', '?' and '%' (IBM's character-based syntax diagram).
    ("ABC%*D", "ABC*D", CHAR, True),
    ("ABC%*D", "ABCXD", CHAR, False),
    ("ABC%?D", "ABC?D", CHAR, True),
    ("ABC%?D", "ABCXD", CHAR, False),
    ("ABC%%D", "ABC%D", CHAR, True),
    ("ABC?D", "ABC*D", CHAR, True),
    ("ABC%D", "ABC%D", CHAR, False),  # a dangling '%' is refused: it selects nothing
    # Topic-scheme wildcards are literal in the character scheme, and the reverse.
    ("USA/#", "USA/Alaska", CHAR, False),
    ("USA/#", "USA/#", CHAR, True),
    ("USA/*", "USA/Alaska", TOPIC, False),
    ("USA/*", "USA/*", TOPIC, True),
]


@pytest.mark.parametrize(("pattern", "topic", "char", "expected"), CASES)
def test_documented_matches(pattern: str, topic: str, char: bool, expected: bool) -> None:
    assert matches(pattern, topic, char_wildcards=char) is expected


@pytest.mark.parametrize(("pattern", "char", "expected"), [
    ("a/b", TOPIC, False), ("a/#", TOPIC, True), ("+", TOPIC, True), ("a#/b+", TOPIC, False),
    ("a/*", TOPIC, False), ("a/*", CHAR, True), ("a?", CHAR, True), ("a%*", CHAR, False),
    ("a/#", CHAR, False), ("a%%*", CHAR, True),
])
def test_has_wildcards(pattern: str, char: bool, expected: bool) -> None:
    assert has_wildcards(pattern, char_wildcards=char) is expected


@pytest.mark.parametrize(("pattern", "char", "prefix"), [
    ("a/b/#", TOPIC, "a/b"), ("a/+/c", TOPIC, "a"), ("#", TOPIC, ""), ("a/b", TOPIC, "a/b"),
    ("a/b*", CHAR, "a/b"), ("a%*b?", CHAR, "a*b"), ("*", CHAR, ""),
])
def test_literal_prefix(pattern: str, char: bool, prefix: str) -> None:
    assert literal_prefix(pattern, char_wildcards=char) == prefix


def test_many_multilevel_wildcards_do_not_recurse() -> None:
    pattern = "/".join(["#"] * 5000) + "/z"
    assert not matches(pattern, "a/" * 3000 + "y", char_wildcards=False)
    assert matches(pattern, "a/" * 3000 + "z", char_wildcards=False)
    assert not matches("*a" * 2000 + "b", "a" * 5000, char_wildcards=True)


@pytest.mark.parametrize("bad", ["", "x" * (C.MQ_TOPIC_STR_LENGTH + 1), "a\0b"])
def test_topic_string_refusals(bad: str) -> None:
    with pytest.raises(MQError) as err:
        check_topic_string(bad)
    assert (err.value.comp, err.value.reason) == (C.MQCC_FAILED, C.MQRC_TOPIC_STRING_ERROR)


@pytest.mark.parametrize("good", ["a", "/", "a//b", "x" * C.MQ_TOPIC_STR_LENGTH, "a/#", "a/+/b", "a*?"])
def test_topic_strings_accepted(good: str) -> None:
    assert check_topic_string(good) == good


@pytest.mark.parametrize("bad", ["ABC%D", "ABC%", "%"])
def test_dangling_escape_is_refused_in_the_character_scheme(bad: str) -> None:
    with pytest.raises(MQError) as err:
        check_pattern(bad, char_wildcards=True)
    assert err.value.reason == C.MQRC_TOPIC_STRING_ERROR
    assert check_pattern(bad, char_wildcards=False) == bad
