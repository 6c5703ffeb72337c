"""The destination/source split of an instruction's explicit operands.

The layout of a mnemonic (`asm_tables.layout_for`) says how many leading operands are
destinations; some splits also depend on the operands themselves (a VOPC's SGPR destination,
a carry-out) or on modifiers (a returning atomic, gfx9 LDS DMA).
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import Operand, Reg
from .asm_tables import Layout, atomic_returns, layout_for

def _is_scalar_reg(op: Operand) -> bool:
    return isinstance(op, Reg) and op.kind in ("s", "vcc", "ttmp", "null", "exec")


_SPECIAL_FAMILIES = frozenset({"vmem_load", "vcmp", "vcmpx", "vswap", "vsdwa"})


@lru_cache(maxsize=8192)
def _simple_split(mn: str) -> tuple[int, tuple[Reg, ...], tuple[Reg, ...], bool] | None:
    """(destinations, implicit defs, implicit uses, tied) when the mnemonic's split does not
    depend on its operands or modifiers; None when it does (see `_split_dst_src`)."""
    lay = layout_for(mn)
    if lay.returning or lay.carry_out or lay.family in _SPECIAL_FAMILIES:
        return None
    return lay.n_dst, tuple(lay.implicit_defs), tuple(lay.implicit_uses), lay.tied


def _split_dst_src(mn: str, ops: list[Operand], modifiers: tuple[str, ...]) -> tuple[tuple[Operand, ...], tuple[Operand, ...]]:
    """Apply the encoding layout: leading destinations, then sources, then implicit regs."""
    simple = _simple_split(mn)
    if simple is not None:  # most mnemonics: a fixed number of leading destinations
        n, defs, uses, tied = simple
        n = min(n, len(ops))
        dsts = tuple(ops[:n])
        srcs = tuple(ops[n:])
        if tied and n and isinstance(ops[0], Reg):
            srcs += (ops[0],)
        return dsts + defs, srcs + uses
    lay = layout_for(mn)
    n = _special_dst_count(lay, mn, ops, modifiers)
    dsts = list(ops[:n])
    srcs = list(ops[n:])
    if lay.family == "vswap":
        srcs = list(ops)
    elif lay.tied or (lay.family == "vsdwa" and any(x.lower() == "dst_unused:unused_preserve" for x in modifiers)):
        srcs.extend(op for op in dsts[:1] if isinstance(op, Reg))
    defs = list(lay.implicit_defs)
    if lay.family == "vcmp" and n == 0:
        defs.append(Reg("vcc", 0, 1))
    dsts.extend(defs)
    srcs.extend(lay.implicit_uses)
    return tuple(dsts), tuple(srcs)



def _special_dst_count(lay: Layout, mn: str, ops: list[Operand] | tuple[Operand, ...],
                       modifiers: tuple[str, ...]) -> int:
    """The number of leading destinations when it depends on the operands or modifiers."""
    n = lay.n_dst
    if lay.returning and not atomic_returns(mn, modifiers):
        n = 0
    elif lay.family == "vmem_load" and any(x.lower() == "lds" for x in modifiers):
        n = 0  # gfx9 LDS DMA: the data goes to LDS, the first operand is an address
    elif lay.family == "vcmp":
        if not (ops and _is_scalar_reg(ops[0]) and len(ops) >= 3):
            n = 0  # `v_cmp_*_e32 src0, src1` writes VCC implicitly
    elif lay.family == "vcmpx":
        if ops and _is_scalar_reg(ops[0]) and len(ops) >= 3:
            n = 1  # gfx9 `v_cmpx_*_e64 s[0:1], ...` also has an SGPR destination
    elif lay.carry_out and len(ops) >= 3 and _is_scalar_reg(ops[1]):
        n = 2
    return min(n, len(ops))


def explicit_dst_count(mn: str, ops: list[Operand] | tuple[Operand, ...], modifiers: tuple[str, ...]) -> int:
    """How many of the explicit operands (in text order) `_split_dst_src` makes destinations."""
    simple = _simple_split(mn)
    if simple is not None:
        return min(simple[0], len(ops))
    return _special_dst_count(layout_for(mn), mn, ops, modifiers)
