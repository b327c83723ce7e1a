"""Selection strings up to MQ_SELECTOR_LENGTH, however deep or long, are compiled or refused
with MQRC_SELECTOR_SYNTAX_ERROR (2459), and a compiled one evaluates every message without
raising (issue 24: ~1,000 AND terms raised RecursionError and dropped the connection).

Shapes generated: AND/OR chains, nested parentheses, NOT and sign chains, arithmetic chains,
long IN lists, long LIKE patterns (evaluated against long values: the matcher must not
backtrack), all within 10,240 characters. CI runs a few seconds; the full-size run:

    FERRYMQ_SELECTOR_EXAMPLES=5000 .venv/bin/pytest -q tests/property/test_selector_limits.py
"""

from __future__ import annotations

import os
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.engine.selector import SelectorError, compile_selector
from ferrymq.engine.selector.evaluate import like_matcher, like_regex
from ferrymq.engine.selector.parser import MAX_DEPTH, MAX_NESTING
from ferrymq.mq import constants as C

EXAMPLES = int(os.environ.get("FERRYMQ_SELECTOR_EXAMPLES", "60"))
LIMIT = C.MQ_SELECTOR_LENGTH
REFUSED = (C.MQRC_SELECTOR_SYNTAX_ERROR, C.MQRC_SELECTOR_ALWAYS_FALSE)

terms = st.sampled_from(["a = 1", "b <> 'x'", "c > 2.5", "d IS NULL", "e LIKE 'a%'", "f IN ('p', 'q')",
                         "TRUE", "g BETWEEN 1 AND 3", "(h = 1)"])


def _chain(draw: st.DrawFn) -> str:
    op = draw(st.sampled_from([" AND ", " OR ", " + ", " * ", " - "]))
    term = draw(terms) if op in (" AND ", " OR ") else draw(st.sampled_from(["a", "1", "2.5", "(b)"]))
    most = LIMIT // len(term + op)  # within the length limit, often near it
    n = draw(st.integers(1, most) | st.integers(most * 3 // 4, most))
    body = op.join([term] * n)
    return body if op in (" AND ", " OR ") else f"{body} > 0"


def _nested(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 2000))
    kind = draw(st.sampled_from(["paren", "not", "sign", "mixed"]))
    if kind == "paren":
        return "(" * n + "a = 1" + ")" * n
    if kind == "not":
        return "NOT " * n + "a = 1"
    if kind == "sign":
        return "- " * n + "a > 0"
    return "(NOT -" * n + "a > 0" + ")" * n


def _in_list(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 1500))
    return "f IN (" + ", ".join(f"'v{i}'" for i in range(n)) + ")"


def _like(draw: st.DrawFn) -> str:
    pattern = draw(st.text("a%_!'", min_size=0, max_size=draw(st.integers(0, 10_000))))
    escape = draw(st.sampled_from(["", " ESCAPE '!'"]))
    return "e LIKE '" + pattern.replace("'", "''") + "'" + escape


@st.composite
def selectors(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from([_chain, _nested, _in_list, _like]))
    text = shape(draw)
    if draw(st.booleans()):
        text = f"({text}) AND {draw(terms)}"
    return text[:LIMIT] if draw(st.booleans()) else text


values = st.one_of(st.none(), st.integers(-3, 3), st.floats(-3, 3), st.text("ab%_!", max_size=20),
                   st.text("a", min_size=5000, max_size=20_000), st.booleans())


@given(selectors(), st.dictionaries(st.sampled_from("abcdefgh"), values))
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
def test_any_selector_compiles_or_is_refused_with_2459_and_evaluates_safely(text: str, props: dict[str, object]) -> None:
    try:
        sel = compile_selector(text)
    except SelectorError as exc:
        assert exc.reason in REFUSED or (exc.reason == C.MQRC_SELECTION_STRING_ERROR and len(text) > LIMIT)
        return
    t0 = time.process_time()
    result = sel.evaluate(lambda n: props.get(n))  # type: ignore[arg-type, return-value]
    assert result in (True, False, None)
    # Not a performance assertion: a backtracking matcher takes minutes, a linear one
    # microseconds; the bound only turns a hang into a failure that names the selector.
    assert time.process_time() - t0 < 5, text[:200]


@pytest.mark.parametrize("text", [
    " AND ".join(["a = 1"] * 1000),  # the report's selector: under 10,240 bytes
    " OR ".join(["a = 1"] * 1100),
    "(" * (MAX_NESTING + 1) + "a = 1" + ")" * (MAX_NESTING + 1),
    "NOT " * (MAX_NESTING + 1) + "a = 1",
    "-" * (MAX_NESTING + 1) + "a > 0",
    " + ".join(["a"] * 2000) + " > 0",
])
def test_too_deep_is_2459_whatever_the_stack_already_holds(text: str) -> None:
    assert len(text) <= LIMIT
    for spare in (0, 150):  # called with 150 frames already on the stack, as a server's loop may be
        with pytest.raises(SelectorError) as exc:
            _at_depth(spare, lambda: compile_selector(text))
        assert exc.value.reason == C.MQRC_SELECTOR_SYNTAX_ERROR
        assert str(MAX_DEPTH) in exc.value.detail or str(MAX_NESTING) in exc.value.detail


def _at_depth(frames: int, fn: object) -> object:
    if frames:
        return _at_depth(frames - 1, fn)
    return fn()  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    " AND ".join(["a = 1"] * (MAX_DEPTH - 2)),
    "(" * MAX_NESTING + "a = 1" + ")" * MAX_NESTING,
    "NOT " * MAX_NESTING + "a = 1",
    "f IN (" + ", ".join(f"'v{i}'" for i in range(1200)) + ")",
    "e LIKE '" + "%a" * 4000 + "%b'",
])
def test_within_the_bounds_compiles_and_evaluates_at_any_stack_depth(text: str) -> None:
    assert len(text) <= LIMIT
    limit = sys.getrecursionlimit()
    sel = _at_depth(limit - 400, lambda: compile_selector(text))
    props = {"a": 1, "f": "v7", "e": "a" * 20_000}
    assert _at_depth(limit - 400, lambda: sel.evaluate(props.get)) in (True, False, None)  # type: ignore[attr-defined]


@given(st.text("ab%_!", max_size=12), st.text("ab%_!\n", max_size=14), st.sampled_from([None, "!"]))
@settings(max_examples=max(EXAMPLES * 5, 300))
def test_the_like_matcher_agrees_with_the_pattern_as_a_regular_expression(pattern: str, value: str,
                                                                        escape: str | None) -> None:
    try:
        matches = like_matcher(pattern, escape)
    except SelectorError:
        assert escape is not None and pattern.endswith(escape)
        return
    assert matches(value) is (like_regex(pattern, escape).fullmatch(value) is not None)
