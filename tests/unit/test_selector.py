"""Selection strings: grammar and precedence, errors with positions, type rules, null logic, LIKE."""

from __future__ import annotations

import pytest

from ferrymq.engine.selector import SelectorError, compile_selector
from ferrymq.engine.selector.parser import Binary, Ident, Lit, parse, unparse
from ferrymq.mq import constants as C

Props = dict[str, object]


def ev(text: str, **props: object) -> object:
    return compile_selector(text).evaluate(lambda n: props.get(n))  # type: ignore[arg-type, return-value]


def sel(text: str, **props: object) -> bool:
    return compile_selector(text).matches(lambda n: props.get(n))  # type: ignore[arg-type, return-value]


def test_precedence_arithmetic_and_logic() -> None:
    assert ev("a + b * c = 7", a=1, b=2, c=3) is True
    assert ev("(a + b) * c = 9", a=1, b=2, c=3) is True
    assert ev("a - b - c = -4", a=1, b=2, c=3) is True  # left associative
    assert ev("-a * -b = 2", a=1, b=2) is True
    assert ev("x OR y AND z", x=True, y=True, z=False) is True  # AND binds tighter
    assert ev("NOT x AND y", x=False, y=True) is True
    assert parse("a OR b AND c") == Binary("OR", Ident("a"), Binary("AND", Ident("b"), Ident("c")))
    assert parse("1 + 2 * 3 = 7") == Binary("=", Binary("+", Lit(1), Binary("*", Lit(2), Lit(3))), Lit(7))


def test_literals() -> None:
    assert ev("s = 'it''s'", s="it's") is True
    assert ev('s = "dq"', s="dq") is True
    assert ev("n = 0x1F", n=31) is True
    assert ev("n = 10L", n=10) is True
    assert ev("f = 1.5e2", f=150.0) is True
    assert ev("f = .5", f=0.5) is True
    assert ev("f = 2F", f=2.0) is True
    assert ev("b = true", b=True) is True
    assert ev("b = FALSE", b=False) is True
    assert ev("k = X'0A0b'", k=b"\n\x0b") is True


def test_case_insensitive_keywords_but_case_sensitive_names() -> None:
    assert sel("colour in ('red') and NOT size between 1 and 3", colour="red", size=5)
    assert not sel("Colour = 'red'", colour="red")


@pytest.mark.parametrize(("text", "pos", "fragment"), [
    ("", 0, "expected a condition"),
    ("a =", 3, "expected a value"),
    ("a = 'x", 4, "unterminated string"),
    ("a = 1 b", 6, "expected end"),
    ("(a = 1", 6, "expected )"),
    ("a # 1", 2, "unexpected character"),
    ("a IN (1)", 6, "string literal in IN"),
    ("a LIKE 5", 7, "string pattern"),
    ("1 LIKE 'x'", 0, "property name"),
    ("a BETWEEN 1 OR 2", 12, "AND in BETWEEN"),
    ("a IS 5", 5, "NULL after IS"),
    ("a LIKE 'x' ESCAPE 'ab'", 18, "exactly one character"),
    ("a = 1e", 5, "exponent"),
    ("a = 12abc", 4, "malformed number"),
    ("a = X'123'", 4, "even number"),
    ("a NOT = 1", 2, "expected end"),
    ("usr. = 1", 3, "ends with a dot"),
])
def test_syntax_errors_name_the_position(text: str, pos: int, fragment: str) -> None:
    with pytest.raises(SelectorError) as err:
        compile_selector(text)
    assert err.value.reason == C.MQRC_SELECTOR_SYNTAX_ERROR
    assert err.value.position == pos
    assert fragment in str(err.value)


def test_too_long_and_always_false() -> None:
    with pytest.raises(SelectorError) as err:
        compile_selector("a = 1" + " " * C.MQ_SELECTOR_LENGTH)
    assert err.value.reason == C.MQRC_SELECTION_STRING_ERROR
    with pytest.raises(SelectorError) as err:
        compile_selector("1 = 2")
    assert err.value.reason == C.MQRC_SELECTOR_ALWAYS_FALSE
    assert compile_selector("TRUE <> FALSE").matches(lambda n: None)


def test_type_rules() -> None:
    assert ev("n = 1.0", n=1) is True  # numeric promotion
    assert ev("n < 2.5", n=2) is True
    assert ev("s = 1", s="1") is None  # string vs number: unknown
    assert ev("s > 'a'", s="b") is None  # strings compare only with = and <>
    assert ev("b = 1", b=True) is None  # booleans are not numbers
    assert ev("b + 1 = 2", b=True) is None
    assert ev("n / 0 = 1", n=1) is None  # no exception, unknown
    assert ev("n / 2 = 3", n=7) is True  # integer division
    assert ev("n / 2 = -3", n=-7) is True  # truncates toward zero like Java
    assert ev("n / 2.0 = 3.5", n=7) is True
    assert ev("s", s="TRUE") is None  # a bare name must be a boolean
    assert ev("b", b=True) is True
    assert ev("k = X'01'", k=b"\x01") is True
    assert ev("k = '01'", k=b"\x01") is None


def test_null_three_valued_logic() -> None:
    assert ev("missing = 1") is None
    assert ev("NOT missing = 1") is None
    assert ev("missing = 1 AND FALSE") is False
    assert ev("missing = 1 AND TRUE") is None
    assert ev("missing = 1 OR TRUE") is True
    assert ev("missing = 1 OR FALSE") is None
    assert ev("missing IS NULL") is True
    assert ev("n IS NOT NULL", n=0) is True
    assert ev("missing BETWEEN 1 AND 2") is None
    assert ev("missing NOT BETWEEN 1 AND 2") is None
    assert ev("missing IN ('a')") is None
    assert ev("missing NOT IN ('a')") is None
    assert ev("missing LIKE 'a%'") is None
    assert ev("missing NOT LIKE 'a%'") is None
    assert ev("n BETWEEN 1 AND missing", n=5) is None
    assert ev("n BETWEEN 6 AND missing", n=5) is False
    assert not sel("missing <> 1")


def test_between_in_like() -> None:
    assert sel("n BETWEEN 1 AND 3", n=3) and not sel("n BETWEEN 1 AND 3", n=4)
    assert sel("n NOT BETWEEN 1 AND 3", n=4)
    assert sel("n + 1 BETWEEN 2 * 1 AND 3", n=1)
    assert sel("c IN ('UK', 'US')", c="US") and not sel("c NOT IN ('UK', 'US')", c="US")
    assert sel("p LIKE '12%3'", p="123") and sel("p LIKE '12%3'", p="12993")
    assert not sel("p LIKE '12%3'", p="1234")
    assert sel("w LIKE 'l_se'", w="lose") and not sel("w LIKE 'l_se'", w="loose")
    assert sel("u LIKE '\\_%' ESCAPE '\\'", u="_foo") and not sel("u LIKE '\\_%' ESCAPE '\\'", u="bar")
    assert sel("u LIKE '!%!!' ESCAPE '!'", u="%!")
    assert sel("u LIKE 'a.c'", u="a.c") and not sel("u LIKE 'a.c'", u="abc")  # regex characters are literal
    assert sel("u LIKE '%'", u="line1\nline2")
    assert ev("n LIKE '1'", n=1) is None


def test_like_pattern_ending_in_escape_is_refused() -> None:
    with pytest.raises(SelectorError):
        compile_selector("u LIKE 'ab!' ESCAPE '!'")


def test_unparse_round_trip() -> None:
    for text in ["a = 1 AND NOT (b <> 'x''y') OR c IS NOT NULL", "n NOT BETWEEN -1 AND 2.5e3",
                 "u NOT LIKE '%!_' ESCAPE '!'", "c IN ('a', 'b')", "k = X'00ff'", "-(-n) * 2 / 3 >= +4"]:
        tree = parse(text)
        assert parse(unparse(tree)) == tree


def test_equality_hints() -> None:
    s = compile_selector("Root.MQMD.CorrelId = X'41' AND colour = 'red' OR x = 1")
    assert s.equalities == {}  # an OR at the top gives no fact every match must satisfy
    s = compile_selector("Root.MQMD.CorrelId = X'41' AND 'red' = colour")
    assert s.equalities == {"Root.MQMD.CorrelId": b"A", "colour": "red"}
    assert s.names == {"Root.MQMD.CorrelId", "colour"}


def test_deep_nesting_is_a_selector_error() -> None:
    with pytest.raises(SelectorError):
        compile_selector("(" * 5000 + "a = 1" + ")" * 5000, max_length=20000)
