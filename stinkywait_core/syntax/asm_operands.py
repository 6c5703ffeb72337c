"""Operands of AMDGPU assembly: one operand-text item -> IR operands, and the classification of
items into operands and modifiers (memoised per item: the same spellings recur on thousands of
lines).
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import FloatImm, Imm, Operand, Reg, Special, Str
from ..ir.operands import NAMED_SPECIALS, PAIR_SPECIALS
from .asm_expr import EMPTY_SYMBOLS, Symbols, _int_value, eval_expr
from .asm_lex import (_EXPR_CHARS, _FLOAT, _FUNC_LIKE, _IDENT, _INT, _MOD_KEY, _OPERATOR_END, _OPERATOR_START,
                      _REG_RANGE, _REG_SINGLE, _WRAPPER, LINE_CACHE_SIZE, _clip, _Pattern, _split_list)
from .asm_tables import BARE_MODIFIERS, MAX_REG_INDEX, MAX_REG_WIDTH, REG_PREFIXES, UNTRACKED_NAMED_REGS

def _is_modifier(item: str) -> bool:
    return item.lower() in BARE_MODIFIERS or (":" in item and _MOD_KEY.match(item) is not None)


def _register(core: str, symbols: Symbols) -> tuple[tuple[str, int, int] | None, str | None]:
    """(kind, lo, hi) for a register spelling, or (None, error) / (None, None) if not one."""
    low = core.lower()
    m = _REG_SINGLE.fullmatch(low) if low.startswith(_REG_STARTS) else None
    if m:
        idx = int(m.group(2))
        if idx > MAX_REG_INDEX:
            return None, f"register index out of range in '{core}'"
        return (REG_PREFIXES[m.group(1)], idx, idx), None
    m = _REG_RANGE.fullmatch(low) if m is None and low.startswith(_REG_STARTS) else None
    if m:
        inner = core[core.index("[") + 1:core.rindex("]")]
        parts = inner.split(":")
        if len(parts) > 2 or not inner.strip():
            return None, f"bad register range '{core}'"
        vals = [eval_expr(p.strip(), symbols) for p in parts]
        for p, v in zip(parts, vals):
            if v is None:
                return None, f"cannot evaluate register index '{p.strip()}' in '{core}'"
        lo, hi = vals[0], vals[-1]
        assert lo is not None and hi is not None
        if lo > hi or lo < 0:
            return None, f"bad register range '{core}'"
        if hi > MAX_REG_INDEX or hi - lo >= MAX_REG_WIDTH:
            return None, f"register range out of range '{core}'"
        return (REG_PREFIXES[m.group(1)], lo, hi), None
    if low in PAIR_SPECIALS:
        return PAIR_SPECIALS[low], None
    if low in NAMED_SPECIALS:
        return NAMED_SPECIALS[low], None
    return None, None


#: the common operand spellings: ``v7``, ``s[4:7]`` (decimal, no leading zeros), integers
_PLAIN_OPERAND = _Pattern(r'(v|s|a|acc|ttmp)(?:(0|[1-9]\d{0,5})|\[(0|[1-9]\d{0,5}):(0|[1-9]\d{0,5})\])'
                            r'|(-?(?:0[xX][0-9a-fA-F]{1,16}|0|[1-9]\d{0,17}))')
_NAMED_REGS = {**PAIR_SPECIALS, **NAMED_SPECIALS}


@lru_cache(maxsize=LINE_CACHE_SIZE)
def _operand(item: str, symbols: Symbols, annotation: tuple[str, int, int] | None,
             allow_list: bool = True) -> tuple[tuple[Operand, ...], str | None]:
    """Parse one operand item into IR operands (a ``[v1, v2]`` address list gives several).

    Pure and memoised: the same operand spellings recur on thousands of lines.  Plain
    registers, named registers and integer literals take a fast path giving what the general
    path below gives; anything unusual (and every error) goes the general way.
    """
    m = _PLAIN_OPERAND.fullmatch(item)
    if m is not None:
        prefix, single, lo_s, hi_s, number = m.groups()
        if number is not None:
            return (Imm(int(number, 0), item),), None
        if single is not None:
            lo = hi = int(single)
        else:
            lo, hi = int(lo_s), int(hi_s)
        if lo <= hi <= MAX_REG_INDEX and hi - lo < MAX_REG_WIDTH:
            kind = REG_PREFIXES[prefix]
            if annotation is not None and annotation[0] == kind and annotation[2] - annotation[1] == hi - lo:
                lo, hi = annotation[1], annotation[2]
            return (Reg(kind, lo, hi, False, item),), None
    else:
        named = _NAMED_REGS.get(item)
        if named is not None:
            kind, lo, hi = named
            if annotation is not None and annotation[0] == kind and annotation[2] - annotation[1] == hi - lo:
                lo, hi = annotation[1], annotation[2]
            return (Reg(kind, lo, hi, False, item),), None
    if item.startswith("["):
        if not allow_list or not item.endswith("]"):
            return (), f"malformed operand '{_clip(item)}'"
        out: list[Operand] = []
        for p in _split_list(item[1:-1]):
            ops, err = _operand(p, symbols, None, allow_list=False)
            if err:
                return (), err
            out.extend(ops)
        return tuple(out), None
    core = item
    neg = False
    if core.startswith("-") and len(core) > 1 and not core[1].isdigit() and core[1] != ".":
        neg = True
        core = core[1:]
    if len(core) >= 2 and core.startswith("|") and core.endswith("|"):
        core = core[1:-1]
    wm = _WRAPPER.fullmatch(core) if "(" in core else None
    if wm:
        core = wm.group(2).strip()
        if core.startswith("-"):
            neg = not neg
            core = core[1:]
    reg, err = _register(core, symbols)
    if err:
        return (), err
    if reg is not None:
        kind, lo, hi = reg
        if annotation is not None and annotation[0] == kind and annotation[2] - annotation[1] == hi - lo:
            lo, hi = annotation[1], annotation[2]
        return (Reg(kind, lo, hi, neg, item),), None
    if core.lower() in UNTRACKED_NAMED_REGS:
        return (Special(item),), None
    if neg:
        core = item  # not a register: `-sym`, `-(1+2)` are expressions
    if _INT.fullmatch(item):
        if len(item) > 40:
            return (), f"integer literal too long '{_clip(item)}'"
        return (Imm(_int_value(item), item),), None
    if _FLOAT.fullmatch(item):
        try:
            return (FloatImm(float(item), item),), None
        except ValueError:
            return (Special(item),), None
    if "(" in item and _FUNC_LIKE.fullmatch(item):
        return (Special(item),), None
    if _IDENT.fullmatch(item):
        if item.lower() == "off":
            return (Special(item),), None
        v = symbols.get(item)
        return ((Imm(v, item),) if v is not None else (Str(item, item),)), None
    if _EXPR_CHARS.fullmatch(item):
        v = eval_expr(item, symbols)
        return ((Imm(v, item),) if v is not None else (Special(item),)), None
    return (), f"malformed operand '{_clip(item)}'"


def _looks_like_operand(t: str) -> bool:
    if ":" in t and "[" not in t:  # no integer or register spelling has a colon outside brackets
        return False
    if t[:1] in _INT_STARTS and _INT.fullmatch(t):
        return True
    low = t.lower()
    return low.startswith(_REG_STARTS) and bool(_REG_SINGLE.fullmatch(low) or _REG_RANGE.fullmatch(low))


#: what `_REG_SINGLE` / `_REG_RANGE` and `_INT` spellings start with (the regexes are tried,
#: and compiled, only then)
_REG_STARTS = ("v", "s", "a", "ttmp")
_INT_STARTS = frozenset("-0123456789")


# --- item classification (shared by the fast and the general line paths) ----------------------

_BRACKETED = _Pattern(r'[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*')
#: `_item_kind` bits.  _PLAIN: in an operand position, an operand (not a modifier, no
#: brackets or operators to resolve)
_IS_MODIFIER, _LOOKS_LIKE_OPERAND, _VALID_MODIFIER, _NEEDS_GENERAL, _PLAIN = 1, 2, 4, 8, 16
_ITEM_KINDS: dict[str, int] = {}
#: `_operand(item, EMPTY_SYMBOLS, None)` by item (a dict lookup is cheaper than the lru call)
_PLAIN_OPERANDS: dict[str, tuple[tuple[Operand, ...], str | None]] = {}
#: ... and, for the _PLAIN items that give exactly one operand, that operand
_SINGLE_OPERANDS: dict[str, Operand] = {}
#: items that are modifiers wherever they stand (no operator at an edge, valid spelling)
_SIMPLE_MODIFIERS: set[str] = set()
#: `_annotated_operand` by (item, note)
_ANNOTATED: dict[tuple[str, tuple[str, int, int]], Operand] = {}


def _item_kind(t: str) -> int:
    """The `_IS_MODIFIER`... bits of an operand-text item (memoised)."""
    kind = _ITEM_KINDS.get(t)
    if kind is None:
        if len(_ITEM_KINDS) >= LINE_CACHE_SIZE:
            _ITEM_KINDS.clear()
            _SIMPLE_MODIFIERS.clear()
        m = _PLAIN_OPERAND.fullmatch(t)
        if m is not None:
            # a plain register or integer (the common case): it looks like an operand, is no
            # modifier, has balanced brackets and no operator at an edge; it is an identifier
            # when it is a single register (``v7``: letters and digits only)
            prefix, single, lo_s, hi_s, number = m.groups()
            kind = _LOOKS_LIKE_OPERAND | _PLAIN | (_VALID_MODIFIER if single is not None else 0)
            _ITEM_KINDS[t] = kind
            # its operand, as `_operand(t, EMPTY_SYMBOLS, None)` makes it, from the same match
            # (the first sight of an item costs one regex, not three)
            if number is not None:
                op: Operand = Imm(int(number, 0), t)
            else:
                lo, hi = (int(single), int(single)) if single is not None else (int(lo_s), int(hi_s))
                if not (lo <= hi <= MAX_REG_INDEX and hi - lo < MAX_REG_WIDTH):
                    return kind
                op = Reg(REG_PREFIXES[prefix], lo, hi, False, t)
            if t not in _PLAIN_OPERANDS:
                if len(_PLAIN_OPERANDS) >= LINE_CACHE_SIZE:
                    _PLAIN_OPERANDS.clear()
                    _SINGLE_OPERANDS.clear()
                _PLAIN_OPERANDS[t] = ((op,), None)
                _SINGLE_OPERANDS[t] = op
            return kind
        kind = ((_IS_MODIFIER if _is_modifier(t) else 0) | (_LOOKS_LIKE_OPERAND if _looks_like_operand(t) else 0)
                | (_VALID_MODIFIER if _MOD_KEY.match(t) or _IDENT.fullmatch(t) else 0)
                | (_NEEDS_GENERAL if ("(" in t or ")" in t or "::" in t
                                      or (("[" in t or "]" in t) and _BRACKETED.fullmatch(t) is None)) else 0))
        plain_edges = t[0] not in _OPERATOR_START and t[-1] not in _OPERATOR_END and t != "-"
        if not kind & (_IS_MODIFIER | _NEEDS_GENERAL) and plain_edges:
            kind |= _PLAIN
        _ITEM_KINDS[t] = kind
        if kind & (_IS_MODIFIER | _VALID_MODIFIER | _NEEDS_GENERAL) == _IS_MODIFIER | _VALID_MODIFIER and plain_edges:
            _SIMPLE_MODIFIERS.add(t)
    return kind


def _plain_operand(t: str, symbols: Symbols, annotation: tuple[str, int, int] | None
                   ) -> tuple[tuple[Operand, ...], str | None]:
    if annotation is None and symbols is EMPTY_SYMBOLS:
        r = _PLAIN_OPERANDS.get(t)
        if r is None:
            if t not in _ITEM_KINDS:  # classifying a plain spelling records its operand
                _item_kind(t)
                r = _PLAIN_OPERANDS.get(t)
                if r is not None:
                    return r
            if len(_PLAIN_OPERANDS) >= LINE_CACHE_SIZE:
                _PLAIN_OPERANDS.clear()
                _SINGLE_OPERANDS.clear()
            r = _PLAIN_OPERANDS[t] = _operand(t, symbols, None)
            if len(r[0]) == 1 and not r[1] and _item_kind(t) & _PLAIN:
                _SINGLE_OPERANDS[t] = r[0][0]
        return r
    return _operand(t, symbols, annotation)



def _annotated_operand(item: str, annotation: tuple[str, int, int]) -> Operand | None:
    """The single plain operand `item` with a VGPR note applied, or None.

    What `_operand(item, EMPTY_SYMBOLS, annotation)` gives: the note replaces the register
    when it names one of the same kind and width, and changes nothing else, so it is made
    from the item's plain operand (memoised per item and note)."""
    key = (item, annotation)
    op = _ANNOTATED.get(key)
    if op is not None:
        return op
    op = _SINGLE_OPERANDS.get(item)
    if op is None:
        if not _item_kind(item) & _PLAIN:
            return None
        _plain_operand(item, EMPTY_SYMBOLS, None)
        op = _SINGLE_OPERANDS.get(item)
        if op is None:
            return None
    kind, lo, hi = annotation
    if op.__class__ is Reg and op.kind == kind and hi - lo == op.hi - op.lo:  # type: ignore[union-attr]
        op = Reg(kind, lo, hi, op.neg, op.spelling)  # type: ignore[union-attr]
    if len(_ANNOTATED) >= LINE_CACHE_SIZE:
        _ANNOTATED.clear()
    _ANNOTATED[key] = op
    return op
