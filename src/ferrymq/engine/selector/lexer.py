"""Tokens of a selection string: literals, identifiers, keywords, operators, with positions."""

from __future__ import annotations

from dataclasses import dataclass

from ferrymq.engine.selector.errors import SelectorError

KEYWORDS = frozenset({"NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "NULL", "TRUE", "FALSE", "ESCAPE"})
_OPERATORS = ("<>", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "(", ")", ",")


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # KW, ID, STR, INT, FLOAT, BYTES, OP, EOF
    value: object
    pos: int


def _ident_start(ch: str) -> bool:
    return ch.isalpha() or ch in "_$"


def _ident_part(ch: str) -> bool:
    # Dots join the parts of Root.MQMD.Priority and of dotted property names (usr.colour).
    return ch.isalnum() or ch in "_$."


def tokenize(text: str) -> list[Token]:
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        start = i
        if ch in "'\"":
            i, value = _string(text, i)
            out.append(Token("STR", value, start))
        elif (ch in "xX") and i + 1 < n and text[i + 1] == "'":
            end = text.find("'", i + 2)
            if end < 0:
                raise SelectorError("unterminated byte-string literal", start)
            out.append(Token("BYTES", _hex(text[i + 2 : end], start), start))
            i = end + 1
        elif _ident_start(ch):
            while i < n and _ident_part(text[i]):
                i += 1
            word = text[start:i]
            if word.endswith("."):
                raise SelectorError(f"identifier {word!r} ends with a dot", i - 1)
            if word.upper() in KEYWORDS:
                out.append(Token("KW", word.upper(), start))
            else:
                out.append(Token("ID", word, start))
        elif ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isdigit()):
            i, tok = _number(text, i)
            out.append(tok)
        else:
            for op in _OPERATORS:
                if text.startswith(op, i):
                    out.append(Token("OP", op, start))
                    i += len(op)
                    break
            else:
                raise SelectorError(f"unexpected character {ch!r}", start)
    out.append(Token("EOF", None, n))
    return out


def _string(text: str, i: int) -> tuple[int, str]:
    quote, start, parts = text[i], i, []
    i += 1
    while True:
        end = text.find(quote, i)
        if end < 0:
            raise SelectorError("unterminated string literal", start)
        parts.append(text[i:end])
        if end + 1 < len(text) and text[end + 1] == quote:  # '' stands for one quote
            parts.append(quote)
            i = end + 2
            continue
        return end + 1, "".join(parts)


def _hex(digits: str, pos: int) -> bytes:
    if len(digits) % 2:
        raise SelectorError("byte-string literal needs an even number of hex digits", pos)
    try:
        return bytes.fromhex(digits)
    except ValueError:
        raise SelectorError("byte-string literal holds a non-hex digit", pos) from None


def _number(text: str, i: int) -> tuple[int, Token]:
    start, n = i, len(text)
    if text.startswith(("0x", "0X"), i):
        i += 2
        while i < n and text[i] in "0123456789abcdefABCDEF":
            i += 1
        if i == start + 2:
            raise SelectorError("hexadecimal literal has no digits", start)
        value = int(text[start + 2 : i], 16)
        if i < n and text[i] in "lL":
            i += 1
        return i, Token("INT", value, start)
    while i < n and text[i].isdigit():
        i += 1
    approx = False
    if i < n and text[i] == ".":
        approx = True
        i += 1
        while i < n and text[i].isdigit():
            i += 1
    if i < n and text[i] in "eE":
        j = i + 1
        if j < n and text[j] in "+-":
            j += 1
        if j < n and text[j].isdigit():
            approx = True
            i = j
            while i < n and text[i].isdigit():
                i += 1
        else:
            raise SelectorError("exponent has no digits", i)
    body = text[start:i]
    if i < n and text[i] in "fFdD":
        approx = True
        i += 1
    elif i < n and text[i] in "lL" and not approx:
        i += 1
    if i < n and _ident_start(text[i]):
        raise SelectorError(f"malformed number {text[start:i + 1]!r}", start)
    if approx:
        return i, Token("FLOAT", float(body), start)
    return i, Token("INT", int(body), start)
