"""One instruction's operands as the value transfer functions (`value_ops`) read them.

Kept apart from `value_flow` so that the transfer functions see a small interface (a source's
value, a constant, the destination's old value, EXEC) rather than the whole analysis.
"""

from __future__ import annotations

import re

from ..ir import FloatImm, Imm, Instruction, Reg
from . import intervals as I
from .values import Val, atom_val, const_val, top_val, v_and

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .loop_values import LoopTrip
    from .value_flow import ValueFlow

Key = tuple
#: register kinds whose values are wave-uniform
SCALAR_KINDS = ("s", "ttmp", "m")


class Operands:
    """One instruction's (or one VOPD half's) operands, as `value_ops` reads them."""

    __slots__ = ("flow", "inst", "ctx", "mnemonic", "srcs", "defs", "dsts", "suffix")

    def __init__(self, flow: "ValueFlow", inst: Instruction, ctx: LoopTrip | None, mnemonic: str, srcs: list,
                 defs: list, dsts: list, suffix: str) -> None:
        self.flow = flow
        self.inst = inst
        self.ctx = ctx
        self.mnemonic = mnemonic
        self.srcs = srcs
        self.defs = defs
        self.dsts = dsts
        self.suffix = suffix

    @property
    def nsrc(self) -> int:
        return len(self.srcs)

    def dst_key(self, n: int) -> Key:
        for op in self.dsts:
            if type(op) is Reg:
                return (op.kind, op.lo + n)
        return ("none", n)

    def src(self, i: int) -> Val:
        return self.src_unit(i, 0)

    def src_unit(self, i: int, j: int) -> Val:
        if i >= len(self.srcs):
            return top_val(True, f"{self.mnemonic}: missing operand")
        op = self.srcs[i]
        t = type(op)
        if t is Imm:
            v = op.value
            if j == 1 and 0x80000000 <= v <= 0xFFFFFFFF:
                return top_val(True, None)  # zero- or sign-extended: not needed for addresses
            return Val((((), I.const((v >> (32 * j)) & I.MASK32)),), True)
        if t is Reg:
            if op.kind == "null":
                return Val((((), (0, 0, 0)),), True)
            if op.neg or j > op.hi - op.lo:
                return top_val(False, f"{op.text()} in {self.mnemonic} at line {self.inst.line}")
            d = self.defs[i]
            if d is None:
                return top_val(False, None)
            return self.flow._def_val(d[j], (op.kind, op.lo + j), self.ctx)
        if t is FloatImm:
            return top_val(True, None)
        return top_val(False, f"operand {op.text()} of {self.mnemonic} at line {self.inst.line}")

    def const(self, i: int) -> int | None:
        return self.src(i).const()

    def src_low16(self, i: int) -> Val:
        """The low 16 bits of source `i` (zero-extended): exact for a 16-bit result whose
        upper half is not known (`value_sdwa`), else the value masked."""
        v = self.src(i)
        op = self.srcs[i] if i < len(self.srcs) else None
        if type(op) is Reg and op.kind not in ("null",) and not op.neg:
            d = self.defs[i]
            if d is not None:
                low = self.flow._low16(d[0], (op.kind, op.lo), self.ctx)
                if low is not None:
                    return low
        return v_and(v, const_val(0xFFFF))

    def exec_is_launch_mask(self) -> bool:
        """EXEC is the launch mask when this instruction runs (so not empty)."""
        return not self.flow.exec_mask.partial(self.inst)

    def new_flag(self) -> Val:
        """A new wave-uniform symbol in {0, 1}: this instruction's condition."""
        f = self.flow
        return atom_val(f.new_atom(I.make(0, 1, 1), f.variant(self.inst.block),
                                   f"the condition of {self.mnemonic} at line {self.inst.line}"))

    def old(self, key: Key) -> Val:
        return self.flow.value_at(self.inst, key, self.ctx)

    def uniform_of(self, v: Val) -> Val:
        """What a lane read returns: one lane's value, the same in every lane."""
        return Val(v.lins, True, v.phase, v.why)

    def unknown(self, what: str) -> Val:
        return top_val(self.dst_key(0)[0] in SCALAR_KINDS, f"{what} ({self.mnemonic} at line {self.inst.line})")

    def clamped(self) -> bool:
        return "clamp" in self.suffix

    def has_op_sel(self) -> bool:
        return "op_sel" in self.suffix

    def modifier_int(self, name: str) -> int | None:
        m = re.search(name + r':\s*(0x[0-9a-fA-F]+|\d+)', self.suffix)
        return int(m.group(1), 0) if m else None
