"""Compile a syntax tree once into a tree of closures; evaluate with SQL three-valued logic.

``None`` is SQL unknown. Type rules follow JMS: arithmetic and ordering only between numbers
(booleans are not numbers); strings, booleans and byte strings compare only with ``=``/``<>``
and only with their own type; any other mix is unknown, so the message is not selected.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

from ferrymq.engine.selector.errors import SelectorError
from ferrymq.engine.selector.parser import (
    Between,
    Binary,
    Ident,
    In,
    IsNull,
    Like,
    Lit,
    Node,
    Unary,
    Value,
    children,
    parse,
)
from ferrymq.mq import constants as C

Lookup = Callable[[str], Value]
Fn = Callable[[Lookup], Value]

_ORDER = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}
_EQ = {"=": operator.eq, "<>": operator.ne}


def _num(v: Value) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def compare(op: str, a: Value, b: Value) -> bool | None:
    if a is None or b is None:
        return None
    if _num(a) and _num(b):
        return bool((_ORDER.get(op) or _EQ[op])(a, b))
    if type(a) is type(b) and op in _EQ:  # str, bool, bytes: equality only
        return bool(_EQ[op](a, b))
    return None


def arith(op: str, a: Value, b: Value) -> Value:
    if not (_num(a) and _num(b)):
        return None
    assert isinstance(a, int | float) and isinstance(b, int | float)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        return None  # division by zero is unknown, never an exception
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)  # Java long division truncates toward zero
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _truth(v: Value) -> bool | None:
    return v if isinstance(v, bool) else None


def like_regex(pattern: str, escape: str | None) -> re.Pattern[str]:
    """The LIKE pattern as one regular expression (for reading; matching uses
    ``like_matcher``, which cannot backtrack)."""
    out = []
    for segment in _segments(pattern, escape):
        out.append("".join("." if ch is None else re.escape(ch) for ch in segment))
    return re.compile(".*".join(out), re.DOTALL)


def _segments(pattern: str, escape: str | None) -> list[list[str | None]]:
    """The pattern cut at each ``%``: each part's characters, None for ``_``.

    Raises:
        SelectorError: the pattern ends with its escape character.
    """
    segments: list[list[str | None]] = [[]]
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape:
            if i + 1 >= len(pattern):
                raise SelectorError("LIKE pattern ends with its escape character", 0)
            segments[-1].append(pattern[i + 1])
            i += 2
            continue
        if ch == "%":
            segments.append([])
        else:
            segments[-1].append(None if ch == "_" else ch)
        i += 1
    return segments


class _Part:
    """One part of a LIKE pattern between ``%``s: fixed length, found with ``str.find`` or,
    when it holds ``_``, a regular expression without repetition (nothing to backtrack)."""

    __slots__ = ("length", "literal", "rx")

    def __init__(self, chars: list[str | None]) -> None:
        self.length = len(chars)
        self.literal: str | None = None if None in chars else "".join(c for c in chars if c is not None)
        self.rx = None if self.literal is not None else re.compile(
            "".join("." if c is None else re.escape(c) for c in chars), re.DOTALL)

    def at(self, s: str, pos: int) -> bool:
        if self.literal is not None:
            return s.startswith(self.literal, pos)
        assert self.rx is not None
        return self.rx.match(s, pos) is not None

    def find(self, s: str, pos: int, end: int) -> int:
        if self.literal is not None:
            return s.find(self.literal, pos, end)
        assert self.rx is not None
        m = self.rx.search(s, pos, end)
        return -1 if m is None else m.start()


def like_matcher(pattern: str, escape: str | None) -> Callable[[str], bool]:
    """A test of whole strings against a LIKE pattern. The parts between ``%``s are found
    leftmost first, one after the other (for ``%`` that choice never loses a match), so a
    test costs about one pass over the string, whatever the pattern: a regular expression
    with thousands of ``.*`` backtracks without end on a long value.

    Raises:
        SelectorError: the pattern ends with its escape character.
    """
    parts = [_Part(seg) for seg in _segments(pattern, escape)]
    first, last, middle = parts[0], parts[-1], parts[1:-1]
    if len(parts) == 1:
        return lambda s: len(s) == first.length and first.at(s, 0)
    fixed = first.length + last.length

    def test(s: str) -> bool:
        end = len(s) - last.length
        if end < first.length or not first.at(s, 0) or not last.at(s, end):
            return False
        pos = first.length
        for part in middle:
            found = part.find(s, pos, end)
            if found < 0:
                return False
            pos = found + part.length
        return len(s) >= fixed
    return test


_NUMBERS = (int, float)  # exact types: a bool is no number
_MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "=", "<>": "<>"}


def _comparison(op: str, left: Node, right: Node) -> Fn:
    """``compare`` specialised at compile time: the test every message of a selective get
    runs. The common ``name op literal`` reads the property and tests the literal's type
    once; exact types decide the JMS rules without further calls (``compare`` keeps the
    general rule for anything else, such as subclasses of int)."""
    if isinstance(left, Lit) and isinstance(right, Ident):
        left, right, op = right, left, _MIRROR[op]
    fn = _ORDER.get(op) or _EQ[op]
    equality = op in _EQ
    if isinstance(left, Ident) and isinstance(right, Lit) and right.value is not None:
        name, const = left.name, right.value
        tc = type(const)
        const_number = tc in _NUMBERS

        def name_vs_literal(get: Lookup) -> Value:
            a = get(name)
            if a is None:
                return None
            ta = type(a)
            if (const_number and ta in _NUMBERS) or (equality and ta is tc):
                return bool(fn(a, const))
            return compare(op, a, const)
        return name_vs_literal
    lf, rf = _compile(left), _compile(right)

    def general(get: Lookup) -> Value:
        a = lf(get)
        if a is None:
            return None
        b = rf(get)
        if b is None:
            return None
        ta, tb = type(a), type(b)
        if (ta in _NUMBERS and tb in _NUMBERS) or (equality and ta is tb):
            return bool(fn(a, b))
        return compare(op, a, b)
    return general


def _compile(node: Node) -> Fn:
    if isinstance(node, Lit):
        value = node.value
        return lambda get: value
    if isinstance(node, Ident):
        name = node.name
        return lambda get: get(name)
    if isinstance(node, Unary):
        inner = _compile(node.operand)
        if node.op == "NOT":
            def not_(get: Lookup) -> Value:
                v = _truth(inner(get))
                return None if v is None else not v
            return not_
        sign = -1 if node.op == "-" else 1
        return lambda get: (sign * v if _num(v := inner(get)) else None)  # type: ignore[operator]
    if isinstance(node, Binary):
        op = node.op
        if op in _ORDER or op in _EQ:
            return _comparison(op, node.left, node.right)
        if op in ("AND", "OR"):
            return _logic(op, _chain(node, op))
        left, right = _compile(node.left), _compile(node.right)
        return lambda get: arith(op, left(get), right(get))
    if isinstance(node, Between):
        x, lo, hi, neg = _compile(node.operand), _compile(node.low), _compile(node.high), node.negated

        def between(get: Lookup) -> Value:
            v = x(get)
            a, b = compare(">=", v, lo(get)), compare("<=", v, hi(get))
            r = False if a is False or b is False else (None if a is None or b is None else True)
            return None if r is None else (r != neg)
        return between
    if isinstance(node, Like):
        matches, name, neg = like_matcher(node.pattern, node.escape), node.operand.name, node.negated

        def like(get: Lookup) -> Value:
            v = get(name)
            return matches(v) != neg if isinstance(v, str) else None
        return like
    if isinstance(node, In):
        values, name, neg = frozenset(node.values), node.operand.name, node.negated

        def in_(get: Lookup) -> Value:
            v = get(name)
            return (v in values) != neg if isinstance(v, str) else None
        return in_
    assert isinstance(node, IsNull)
    name, neg = node.operand.name, node.negated
    return lambda get: (get(name) is None) != neg


def _chain(node: Binary, op: str) -> list[Node]:
    """The operands of a chain of one logical operator (``a AND b AND (c OR d)``: a, b and
    the OR), left to right, gathered without recursion."""
    out: list[Node] = []
    todo: list[Node] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Binary) and n.op == op:
            todo += (n.right, n.left)
        else:
            out.append(n)
    return out


def _logic(op: str, operands: list[Node]) -> Fn:
    """AND or OR over a chain as one loop (SQL's three values: a FALSE operand makes AND
    FALSE and a TRUE one OR TRUE, whatever else is unknown), so a long chain is one call
    deep when a message is tested."""
    fns = [_compile(n) for n in operands]
    decisive = op == "OR"  # the value that decides the chain at once

    def chain(get: Lookup) -> Value:
        unknown = False
        for fn in fns:
            v = _truth(fn(get))
            if v is None:
                unknown = True
            elif v is decisive:
                return decisive
        return None if unknown else not decisive
    return chain


def _names(node: Node) -> set[str]:
    out: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Ident):
            out.add(n.name)
        todo.extend(children(n))
    return out


def _equalities(node: Node) -> dict[str, Value]:
    """Name = literal facts every match must satisfy (top-level AND chain): index hints."""
    out: dict[str, Value] = {}
    for n in _chain(node, "AND") if isinstance(node, Binary) else [node]:
        if isinstance(n, Binary) and n.op == "=":
            if isinstance(n.left, Ident) and isinstance(n.right, Lit):
                out[n.left.name] = n.right.value
            elif isinstance(n.right, Ident) and isinstance(n.left, Lit):
                out[n.right.name] = n.left.value
    return out


class Selector:
    """A compiled selection string. ``matches`` is true only when the condition is TRUE."""

    __slots__ = ("_fn", "equalities", "names", "text", "tree")

    def __init__(self, text: str, tree: Node) -> None:
        self.text, self.tree = text, tree
        self._fn = _compile(tree)
        self.names = frozenset(_names(tree))
        self.equalities = _equalities(tree)

    def evaluate(self, lookup: Lookup) -> bool | None:
        """TRUE, FALSE or unknown (None); a non-boolean result is unknown."""
        return _truth(self._fn(lookup))

    def matches(self, lookup: Lookup) -> bool:
        return self._fn(lookup) is True


def _no_props(name: str) -> Value:
    return None


def compile_selector(text: str, max_length: int = C.MQ_SELECTOR_LENGTH) -> Selector:
    """Parse and compile; refuse with IBM's reason codes (SelectorError.reason)."""
    if len(text) > max_length:
        raise SelectorError(f"selection string is {len(text)} characters, MQ_SELECTOR_LENGTH is {max_length}",
                            max_length, C.MQRC_SELECTION_STRING_ERROR)
    sel = Selector(text, parse(text))
    # IBM: a string that is FALSE before any property is looked at is refused on the call.
    if not sel.names and not sel.matches(_no_props):
            raise SelectorError("selection string is never true", 0, C.MQRC_SELECTOR_ALWAYS_FALSE)
    return sel
