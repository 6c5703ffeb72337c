"""Integer expressions of AMDGPU assembly (register indices, `.set` values) and the `.set`
symbol table they are evaluated in.

The evaluator follows the assembler's (llvm-mc's GNU) rules: C division, a leading 0 is
octal, the GNU precedences (``||`` < ``&&`` < comparisons < ``+ -`` < ``| ^ & !`` <
``* / % << >>``; so ``3 + 1 & 4`` is 3), a true comparison is -1 and a logical operator
gives 0 or 1.  It gives up, returning None, on anything that is not a constant integer
expression.
"""

from __future__ import annotations

from functools import lru_cache

from .asm_lex import _Pattern

class Symbols:
    """An immutable `.set` symbol table, hashable in O(1) so it can key the line cache.

    Each `.set` produces a new table (copy on write); identical tables compare equal, so a
    line re-parsed under an unchanged table is a cache hit.
    """

    __slots__ = ("items", "_map", "_hash")

    def __init__(self, items: tuple[tuple[str, int], ...] = ()) -> None:
        self.items = items
        self._map = dict(items)
        self._hash = hash(items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Symbols) and self.items == other.items)

    def get(self, name: str) -> int | None:
        return self._map.get(name)

    def __len__(self) -> int:
        return len(self.items)

    def with_value(self, name: str, value: int) -> "Symbols":
        if self._map.get(name) == value:
            return self
        d = dict(self._map)
        d[name] = value
        return Symbols(tuple(d.items()))


EMPTY_SYMBOLS = Symbols()


_EXPR_TOKEN = _Pattern(r'\s*(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+|[A-Za-z_.$][\w.$@]*|<<|>>|==|!=|<>|<=|>=|&&|\|\||'
                       r'[-+*/%&|^~()!<>])')
_MAX_EXPR_DEPTH = 64
_MAX_ABS = 1 << 64
#: llvm-mc's GNU precedences (AsmParser getGNUBinopPrecedence); "!" between operands is or-not
_BINARY_PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<>": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4,
                "|": 5, "^": 5, "&": 5, "!": 5, "*": 6, "/": 6, "%": 6, "<<": 6, ">>": 6}
_COMPARE = {"==": int.__eq__, "!=": int.__ne__, "<>": int.__ne__, "<": int.__lt__, "<=": int.__le__,
            ">": int.__gt__, ">=": int.__ge__}


class _ExprError(Exception):
    """Internal: the expression is not a constant integer expression we can evaluate."""


def _expr_tokens(text: str) -> list[str]:
    toks: list[str] = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _EXPR_TOKEN.match(text, pos)
        if m is None:
            if text[pos:].strip() == "":
                break
            raise _ExprError(text)
        toks.append(m.group(1))
        pos = m.end()
    return toks


def _eval_tokens(toks: list[str], symbols: Symbols) -> int:
    """Precedence climbing over `toks`; every failure is an `_ExprError`."""
    pos = 0

    def primary(depth: int) -> int:
        nonlocal pos
        if depth > _MAX_EXPR_DEPTH or pos >= len(toks):
            raise _ExprError("depth")
        t = toks[pos]
        pos += 1
        if t == "(":
            v = binary(0, depth + 1)
            if pos >= len(toks) or toks[pos] != ")":
                raise _ExprError("paren")
            pos += 1
            return v
        if t == "-":
            return -primary(depth + 1)
        if t == "+":
            return primary(depth + 1)
        if t == "~":
            return ~primary(depth + 1)
        if t == "!":
            return int(not primary(depth + 1))
        if t[0].isdigit():
            return _int_value(t)
        v = symbols.get(t)
        if v is None:
            raise _ExprError(t)
        return v

    def binary(min_prec: int, depth: int) -> int:
        nonlocal pos
        lhs = primary(depth)
        while pos < len(toks) and toks[pos] in _BINARY_PREC and _BINARY_PREC[toks[pos]] > min_prec:
            op = toks[pos]
            pos += 1
            rhs = binary(_BINARY_PREC[op], depth + 1)
            lhs = _apply(op, lhs, rhs)
            if abs(lhs) > _MAX_ABS:
                raise _ExprError("overflow")
        return lhs

    value = binary(0, 0)
    if pos != len(toks):
        raise _ExprError("trailing")
    return value


def _apply(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise _ExprError("division by zero")
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q  # C semantics, as the assembler
        return q if op == "/" else a - q * b
    if op in ("<<", ">>"):
        if b < 0 or b > 64:
            raise _ExprError("shift")
        return a << b if op == "<<" else a >> b
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "&":
        return a & b
    if op in _COMPARE:
        return -1 if _COMPARE[op](a, b) else 0  # the assembler's "true" is all ones
    if op == "&&":
        return int(bool(a) and bool(b))
    if op == "||":
        return int(bool(a) or bool(b))
    if op == "!":
        return a | ~b
    if op == "|":
        return a | b
    return a ^ b


def _int_value(tok: str) -> int:
    neg = tok.startswith("-")
    body = tok[1:] if neg else tok
    low = body.lower()
    if low.startswith("0x"):
        v = int(low[2:], 16)
    elif low.startswith("0b"):
        v = int(low[2:], 2)
    elif len(low) > 1 and low.startswith("0") and all(c in "01234567" for c in low):
        v = int(low, 8)  # the assembler reads a leading 0 as octal
    else:
        v = int(low, 10)
    return -v if neg else v


@lru_cache(maxsize=16384)
def eval_expr(text: str, symbols: Symbols = EMPTY_SYMBOLS) -> int | None:
    """The value of an integer expression over `.set` symbols, or None when not constant."""
    if len(text) > 4096:
        return None
    try:
        toks = _expr_tokens(text)
        if not toks:
            return None
        return _eval_tokens(toks, symbols)
    except (_ExprError, ValueError):
        return None


def _define(args: str, symbols: Symbols) -> Symbols:
    name, _, expr = args.partition(",")
    name = name.strip()
    value = eval_expr(expr.strip(), symbols)
    if not name or value is None:
        return symbols
    return symbols.with_value(name, value)
