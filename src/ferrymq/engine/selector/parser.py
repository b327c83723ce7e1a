"""Recursive-descent parser: selection string -> syntax tree, errors with exact positions.

Precedence, lowest first (JMS 1.1 §3.8.1.1): OR, AND, NOT, comparison / LIKE / IN / BETWEEN /
IS NULL, additive, multiplicative, unary sign. ``unparse`` writes a tree back as text that
parses to the same tree (tested as a round trip).

Bounds, each refused with MQRC_SELECTOR_SYNTAX_ERROR as IBM refuses a selector of a
thousand ANDs: parentheses, NOT and signs nest at most MAX_NESTING deep (the parser
recurses only there, a few frames a level), and the tree is at most MAX_DEPTH deep (a
chain of n ANDs, ORs or arithmetic operators is n deep: chains are loops here, so this is
what bounds the compiled selector's own recursion). Nothing here depends on how deep the
caller's stack already is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ferrymq.engine.selector.errors import SelectorError
from ferrymq.engine.selector.lexer import Token, tokenize

Value = bool | int | float | str | bytes | None


@dataclass(frozen=True, slots=True)
class Lit:
    value: Value


@dataclass(frozen=True, slots=True)
class Ident:
    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # "-", "+", "NOT"
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary:
    op: str  # arithmetic, comparison, AND, OR
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Between:
    operand: Node
    low: Node
    high: Node
    negated: bool


@dataclass(frozen=True, slots=True)
class Like:
    operand: Ident
    pattern: str
    escape: str | None
    negated: bool


@dataclass(frozen=True, slots=True)
class In:
    operand: Ident
    values: tuple[str, ...]
    negated: bool


@dataclass(frozen=True, slots=True)
class IsNull:
    operand: Ident
    negated: bool


Node = Lit | Ident | Unary | Binary | Between | Like | In | IsNull

COMPARISONS = ("=", "<>", "<", ">", "<=", ">=")
MAX_NESTING = 32
MAX_DEPTH = 256


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = tokenize(text)
        self.i = 0
        self.nesting = 0

    def enter(self) -> None:
        """One more level of parentheses, NOT or sign."""
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise SelectorError(f"parentheses, NOT and signs nest at most {MAX_NESTING} deep", self.tok.pos)

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def take(self) -> Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, kind: str, value: object = None) -> bool:
        t = self.tok
        return t.kind == kind and (value is None or t.value == value)

    def expect(self, kind: str, value: object, what: str) -> Token:
        if not self.at(kind, value):
            raise self.error(f"expected {what}")
        return self.take()

    def error(self, message: str) -> SelectorError:
        t = self.tok
        found = "end of string" if t.kind == "EOF" else repr(t.value)
        return SelectorError(f"{message}, found {found}", t.pos)

    def parse(self) -> Node:
        if self.at("EOF"):
            raise self.error("expected a condition")
        node = self.or_expr()
        if not self.at("EOF"):
            raise self.error("expected end of selection string")
        return node

    def or_expr(self) -> Node:
        node = self.and_expr()
        while self.at("KW", "OR"):
            self.take()
            node = Binary("OR", node, self.and_expr())
        return node

    def and_expr(self) -> Node:
        node = self.not_expr()
        while self.at("KW", "AND"):
            self.take()
            node = Binary("AND", node, self.not_expr())
        return node

    def not_expr(self) -> Node:
        if self.at("KW", "NOT"):
            self.take()
            self.enter()
            node = Unary("NOT", self.not_expr())
            self.nesting -= 1
            return node
        return self.predicate()

    def predicate(self) -> Node:
        start = self.tok
        left = self.additive()
        negated = False
        if self.at("KW", "NOT") and self.toks[self.i + 1].kind == "KW" and self.toks[self.i + 1].value in (
                "LIKE", "IN", "BETWEEN"):
            self.take()
            negated = True
        t = self.tok
        if t.kind == "OP" and t.value in COMPARISONS and not negated:
            self.take()
            return Binary(str(t.value), left, self.additive())
        if t.kind != "KW" or t.value not in ("LIKE", "IN", "BETWEEN", "IS"):
            return left
        self.take()
        if t.value == "BETWEEN":
            low = self.additive()
            self.expect("KW", "AND", "AND in BETWEEN")
            return Between(left, low, self.additive(), negated)
        if not isinstance(left, Ident):
            raise SelectorError(f"{t.value} needs a property name on its left", start.pos)
        if t.value == "IS":
            neg = bool(self.at("KW", "NOT") and self.take())
            self.expect("KW", "NULL", "NULL after IS")
            return IsNull(left, neg)
        if t.value == "LIKE":
            pattern = self.expect("STR", None, "a string pattern after LIKE").value
            escape = None
            if self.at("KW", "ESCAPE"):
                self.take()
                e = self.expect("STR", None, "a string after ESCAPE")
                if len(str(e.value)) != 1:
                    raise SelectorError("ESCAPE needs exactly one character", e.pos)
                escape = str(e.value)
            return Like(left, str(pattern), escape, negated)
        self.expect("OP", "(", "( after IN")
        values = [str(self.expect("STR", None, "a string literal in IN").value)]
        while self.at("OP", ","):
            self.take()
            values.append(str(self.expect("STR", None, "a string literal in IN").value))
        self.expect("OP", ")", ") closing IN")
        return In(left, tuple(values), negated)

    def additive(self) -> Node:
        node = self.multiplicative()
        while self.tok.kind == "OP" and self.tok.value in ("+", "-"):
            node = Binary(str(self.take().value), node, self.multiplicative())
        return node

    def multiplicative(self) -> Node:
        node = self.unary()
        while self.tok.kind == "OP" and self.tok.value in ("*", "/"):
            node = Binary(str(self.take().value), node, self.unary())
        return node

    def unary(self) -> Node:
        if self.tok.kind == "OP" and self.tok.value in ("+", "-"):
            op = str(self.take().value)
            self.enter()
            node = Unary(op, self.unary())
            self.nesting -= 1
            return node
        return self.primary()

    def primary(self) -> Node:
        t = self.tok
        if t.kind == "OP" and t.value == "(":
            self.take()
            self.enter()
            node = self.or_expr()
            self.expect("OP", ")", ")")
            self.nesting -= 1
            return node
        if t.kind in ("STR", "INT", "FLOAT", "BYTES"):
            self.take()
            return Lit(t.value)  # type: ignore[arg-type]
        if t.kind == "KW" and t.value in ("TRUE", "FALSE"):
            self.take()
            return Lit(t.value == "TRUE")
        if t.kind == "ID":
            self.take()
            return Ident(str(t.value), t.pos)
        raise self.error("expected a value, a property name or (")


def parse(text: str) -> Node:
    """Parse a selection string; raises only ``SelectorError`` (see the bounds above)."""
    tree = _Parser(text).parse()
    deepest = depth(tree)
    if deepest > MAX_DEPTH:
        raise SelectorError(f"the selection string's conditions and operators are {deepest} deep, at most "
                            f"{MAX_DEPTH} (a chain of n ANDs is n deep)", 0)
    return tree


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return node.left, node.right
    if isinstance(node, Between):
        return node.operand, node.low, node.high
    if isinstance(node, (Like, In, IsNull)):
        return (node.operand,)
    return ()


def depth(node: Node) -> int:
    """The number of nodes on the tree's longest path (a literal alone is 1), found without
    recursion."""
    deepest, todo = 0, [(node, 1)]
    while todo:
        n, d = todo.pop()
        deepest = max(deepest, d)
        todo.extend((c, d + 1) for c in children(n))
    return deepest


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def unparse(node: Node) -> str:
    """Fully parenthesised text that parses back to ``node``."""
    if isinstance(node, Lit):
        v = node.value
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, str):
            return _quote(v)
        if isinstance(v, bytes):
            return "X'" + v.hex() + "'"
        if isinstance(v, float):
            return repr(v) if "e" in repr(v) or "." in repr(v) else repr(v) + ".0"
        return str(v)
    if isinstance(node, Ident):
        return node.name
    if isinstance(node, Unary):
        sep = " " if node.op == "NOT" else ""
        return f"({node.op}{sep}{unparse(node.operand)})"
    if isinstance(node, Binary):
        return f"({unparse(node.left)} {node.op} {unparse(node.right)})"
    neg = "NOT " if getattr(node, "negated", False) else ""
    if isinstance(node, Between):
        return f"({unparse(node.operand)} {neg}BETWEEN {unparse(node.low)} AND {unparse(node.high)})"
    if isinstance(node, Like):
        esc = f" ESCAPE {_quote(node.escape)}" if node.escape is not None else ""
        return f"({node.operand.name} {neg}LIKE {_quote(node.pattern)}{esc})"
    if isinstance(node, In):
        return f"({node.operand.name} {neg}IN ({', '.join(_quote(v) for v in node.values)}))"
    return f"({node.operand.name} IS {'NOT ' if node.negated else ''}NULL)"
