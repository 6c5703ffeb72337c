"""Where EXEC is the launch mask: the value analysis's EXEC tracking.

A VALU write under a partial EXEC keeps the old value in the inactive lanes, so the value
analysis (`value_flow`) must know, per instruction, whether EXEC may be narrower than the
mask the wave was launched with.  That is a must property over the CFG (the greatest
fixpoint from "the launch mask everywhere"), with saves by ``s_*_saveexec`` and their
restores recognised; it reads reaching definitions through the flow that owns it.
Assumed (and said in `value_flow`'s docstring): kernels are launched with whole waves, so a
move of -1 restores the launch mask.
"""

from __future__ import annotations

from bisect import bisect_left

from ..ir import Block, Imm, Instruction, Reg
from .value_defs import ENTRY, VPhi

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .value_flow import ValueFlow


class ExecMask:
    """EXEC states of one function, computed on the first question."""

    def __init__(self, flow: "ValueFlow") -> None:
        self.flow = flow
        #: block -> EXEC is the launch mask at its entry (None: not computed yet)
        self._entry: dict | None = None
        #: block -> (change positions, states), see `_block_exec`
        self._inside: dict = {}
        #: block -> indices of its EXEC-writing instructions
        self._events_at: dict = {}

    def partial(self, inst: Instruction) -> bool:
        """EXEC may be narrower than the launch mask when `inst` runs."""
        if self._entry is None:
            self._entry = self._states()
        if not self._entry:
            return False
        b = inst.block
        per = self._inside.get(b)
        if per is None:
            per = self._inside[b] = self._block_exec(b, self._entry.get(b, False))
        pos = self.flow._block_defs(b)[0]
        i = pos.get(inst, 0)
        return not per[1][bisect_left(per[0], i + 1) - 1] if per[0] else not per[1][0]

    def _events(self) -> dict:
        """Block -> indices of the instructions that write EXEC (in order)."""
        out: dict = {}
        for b in self.flow.func.blocks:
            for i, inst in enumerate(b.instrs):
                if inst.is_label or inst.is_phi:
                    continue
                mn = inst.mnemonic
                if "saveexec" in mn or mn.startswith("v_cmpx") or (
                        "exec" in inst.text and any(type(op) is Reg and op.kind == "exec" for op in inst.dsts)):
                    out.setdefault(b, []).append(i)
        return out

    def _block_exec(self, b: Block, full: bool) -> tuple[list, list]:
        """(change positions, state from each) within one block: position 0 holds the entry
        state; after event i the state is the second list's entry."""
        positions = [0]
        states = [full]
        for i in self._events_at.get(b, ()):
            full = self._step(b.instrs[i], full)
            positions.append(i + 1)
            states.append(full)
        return positions, states

    def _states(self) -> dict:
        """Block -> EXEC is the launch mask at its entry (a must property: the greatest
        fixpoint, starting from "yes"); empty when nothing in the function writes EXEC."""
        if self.flow.text_hint is not None and "exec" not in self.flow.text_hint and "cmpx" not in self.flow.text_hint:
            self._events_at = {}
            return {}
        self._events_at = self._events()
        if not self._events_at:
            return {}
        rpo = self.flow.cfg.rpo
        states: dict = {b: True for b in rpo}
        self._entry = states
        for _ in range(len(rpo) + 2):
            changed = False
            for b in rpo:
                preds = self.flow._preds(b)
                full = all(self._state_before(p, len(p.instrs)) for p in preds)
                if states[b] != full:
                    states[b] = full
                    changed = True
            if not changed:
                break
        return states

    def _state_before(self, b: Block, idx: int) -> bool:
        full = self._entry.get(b, False)
        for j in self._events_at.get(b, ()):
            if j >= idx:
                break
            full = self._step(b.instrs[j], full)
        return full

    def _all_ones(self, inst: Instruction, unit: int) -> bool:
        """SGPR `unit` holds 0xffffffff at `inst`: its one reaching definition is a move of
        -1 (``s_mov_b32`` of the unit, or ``s_mov_b64`` of the pair)."""
        d = self.flow._before(inst, ("s", unit))
        while type(d) is VPhi and d.forward is not None:
            d = d.forward
        if d is ENTRY or type(d) is VPhi or d.is_phi or not d.mnemonic.startswith("s_mov_b"):
            return False
        return bool(d.srcs) and _is_minus_one(d.srcs[0]) and bool(d.dsts) and type(d.dsts[0]) is Reg \
            and d.dsts[0].kind == "s" and d.dsts[0].lo <= unit <= d.dsts[0].hi

    def _step(self, inst: Instruction, full: bool) -> bool:
        """EXEC after one EXEC-writing instruction."""
        mn = inst.mnemonic
        if mn.startswith("v_cmpx"):
            return False
        srcs = [op for op in inst.srcs if type(op) in (Reg, Imm)]
        if "saveexec" in mn:
            return mn.startswith("s_or_saveexec") and any(self._holds_launch_mask(inst, op) for op in srcs)
        if mn.startswith("s_mov_b"):
            s = srcs[0] if srcs else None
            if type(s) is Imm and s.value in (-1, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF):
                return True  # assumed: kernels are launched with whole waves
            return s is not None and self._holds_launch_mask(inst, s)
        if mn.startswith("s_or_b"):
            return any(self._holds_launch_mask(inst, op) for op in srcs)
        return False

    def _holds_launch_mask(self, inst: Instruction, op) -> bool:
        """`op` holds the launch EXEC mask at `inst`: saved from EXEC (by an ``s_*_saveexec``
        or a move from EXEC) where EXEC was the launch mask, or all ones, each half moved
        from -1 (aiter's ``s_mov_b32 s98, -1; s_mov_b32 s99, -1; ...; s_mov_b64 exec,
        s[98:99]``: the same assumption as a move of -1, whole waves launched)."""
        if type(op) is not Reg or op.kind != "s":
            return False
        if all(self._all_ones(inst, u) for u in range(op.lo, op.hi + 1)):
            return True
        for u in range(op.lo, op.hi + 1):
            d = self.flow._before(inst, ("s", u))
            while type(d) is VPhi and d.forward is not None:
                d = d.forward
            if d is ENTRY or type(d) is VPhi or d.is_phi:
                return False
            saves = "saveexec" in d.mnemonic or (d.mnemonic.startswith("s_mov_b") and d.srcs and type(d.srcs[0]) is Reg
                                                 and d.srcs[0].kind == "exec")
            if not saves or not d.dsts or type(d.dsts[0]) is not Reg or d.dsts[0].kind != "s":
                return False
            pos = self.flow._block_defs(d.block)[0]
            if not self._state_before(d.block, pos.get(d, 0)):
                return False
        return True


def _is_minus_one(op) -> bool:
    return type(op) is Imm and op.value in (-1, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF)
