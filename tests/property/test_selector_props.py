"""Hypothesis: any text raises only SelectorError; generated selectors round-trip and evaluate safely."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.engine.selector import SelectorError, compile_selector
from ferrymq.engine.selector.evaluate import _MIRROR, compare
from ferrymq.engine.selector.parser import Lit, parse, unparse

ALPHABET = st.sampled_from([*list("ab() ='%_!,.<>+-*/0123456789xX\""), " AND ", " OR ", " NOT ", " LIKE ", " IN ", " BETWEEN ", " IS ", " NULL ", " ESCAPE ", " TRUE ", "1.5e3"])

names = st.sampled_from(["a", "b", "usr.c", "Root.MQMD.Priority"])
values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-10, 10),
                   st.text(max_size=4), st.binary(max_size=2))
scalar = st.one_of(names, st.integers(-1000, 1000).map(str), st.floats(0, 1e6).map(repr),
                   st.text("ab'%_", max_size=5).map(lambda s: "'" + s.replace("'", "''") + "'"),
                   st.sampled_from(["TRUE", "FALSE", "X'0aff'"]))


def _expr(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(["+", "-", "*", "/", "=", "<>", "<", ">=", "AND", "OR"]), children)
        .map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        children.map(lambda c: f"(NOT {c})"), children.map(lambda c: f"(-{c})"),
        st.tuples(names, st.booleans()).map(lambda t: f"{t[0]} IS {'NOT ' if t[1] else ''}NULL"),
        st.tuples(names, children, children).map(lambda t: f"({t[0]} BETWEEN {t[1]} AND {t[2]})"),
        names.map(lambda n: f"{n} LIKE 'a!%%' ESCAPE '!'"), names.map(lambda n: f"{n} NOT IN ('a', 'b')"))


exprs = st.recursive(scalar, _expr, max_leaves=6)


@given(st.lists(ALPHABET, max_size=30).map("".join))
@settings(max_examples=400)
def test_random_text_raises_only_selector_error(text: str) -> None:
    with contextlib.suppress(SelectorError):
        compile_selector(text)


@given(exprs, st.dictionaries(names, values))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_generated_selectors_round_trip_and_evaluate(text: str, props: dict[str, object]) -> None:
    try:
        tree = parse(text)
    except SelectorError:
        return
    assert parse(unparse(tree)) == tree
    try:
        s = compile_selector(text)
    except SelectorError:
        return
    result = s.evaluate(lambda n: props.get(n))  # type: ignore[arg-type, return-value]
    assert s.matches(lambda n: props.get(n)) is (result is True)  # type: ignore[arg-type, return-value]


literals = st.one_of(st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False), st.sampled_from(["a", "b"]),
                     st.sampled_from([b"\x01", b"\x02"]))


@given(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), values, literals, st.booleans())
def test_compiled_comparison_follows_the_type_rules(op: str, value: object, literal: object, mirrored: bool) -> None:
    """The comparison compiled for ``name op literal`` (or ``literal op name``) answers as
    the general ``compare`` does, for every pair of types."""
    lit = unparse(Lit(literal))  # type: ignore[arg-type]
    text = f"{lit} {_MIRROR[op]} a" if mirrored else f"a {op} {lit}"
    s = compile_selector(text)
    assert s.evaluate(lambda n: value) == compare(op, value, literal)  # type: ignore[arg-type, return-value]
