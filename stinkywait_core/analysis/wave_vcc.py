"""A VCC branch of LLVM's uniform-branch idiom, read as the SCC its mask instruction set (for
the per-wave views of `wave_roles`).

LLVM lowers a uniform ``if`` on a scalar boolean ``s`` (0 or -1 in every lane) to
``s_and_b64 vcc, exec, s`` (or ``s_andn2_b64 vcc, exec, s`` for its negation) and
``s_cbranch_vccz`` / ``s_cbranch_vccnz``.  aiter's gfx950 a8w8 cktile GEMM selects its two
wave groups so (``s_cmpk_gt_u32 s19, 0xff; s_cselect_b64 s[26:27], -1, 0`` on the wave's first
lane id): the per-wave views, which decide only SCC branches, gave no view at all, and the
path-insensitive analysis joined the two groups' LDS bases (``0`` and ``0x10800``), so no fill
of one group was apart from the other's.

A scalar ALU instruction that writes VCC also writes SCC = (result != 0), so when nothing after
it in the block writes VCC or SCC before the branch, ``vccnz`` is taken exactly when that SCC
is 1 and ``vccz`` when it is 0: the value analysis's SCC just after the writer decides the
branch (with the launch mask in EXEC, ``s_and_b64 vcc, exec, s`` has SCC = s's flag,
`value_ops._mask_and_exec_flag`).
"""

from __future__ import annotations

from ..ir import Block, Instruction, Reg

_WRITERS = ("s_and_b", "s_andn2_b", "s_or_b", "s_orn2_b", "s_xor_b", "s_nand_b", "s_nor_b", "s_xnor_b",
            "s_and_not1_b", "s_or_not1_b")


def _units(ops) -> list:
    return [(r.kind, u) for r in ops if type(r) is Reg and r.kind not in ("v", "a", "null")
            for u in range(r.lo, r.hi + 1)]


def two_way_jump(b: Block, mnemonics: tuple) -> tuple[Instruction, str] | None:
    """(the branch, its target label) when `b` ends in a branch of `mnemonics` to a label
    that is exactly one of its two distinct successors; None otherwise."""
    t = b.terminator()
    if t is None or t.mnemonic not in mnemonics or not t.srcs:
        return None
    lab = getattr(t.srcs[0], "value", None)
    if not isinstance(lab, str) or len(b.succs) != 2 or b.succs[0] is b.succs[1]:
        return None
    if sum(1 for s in b.succs if s.label == lab) != 1:
        return None
    return t, lab


def vcc_branch(b: Block, index_units: set) -> tuple[Instruction, int, str] | None:
    """(the instruction whose SCC before it decides the branch, the SCC value the branch jumps
    on, its target label) for a ``s_cbranch_vccz/vccnz L`` with two distinct successors whose
    VCC is set in the block by a scalar bitwise instruction writing all of VCC and SCC, reading
    a unit of `index_units` (values computed from the wave index), with no VCC or SCC write
    between it and the branch; None otherwise."""
    got = two_way_jump(b, ("s_cbranch_vccz", "s_cbranch_vccnz"))
    if got is None:
        return None
    t, lab = got
    body = [i for i in b.instrs if not i.is_label and not i.is_phi]
    after = t
    for inst in reversed(body[:-1]):
        dsts = _units(inst.dsts)
        if ("vcc", 0) in dsts or ("vcc", 1) in dsts or ("SCC", 0) in dsts:
            if not (inst.mnemonic.startswith(_WRITERS) and inst.mnemonic.endswith("_b64")
                    and ("vcc", 0) in dsts and ("vcc", 1) in dsts and ("SCC", 0) in dsts):
                return None
            if not any(u in index_units for u in _units(inst.srcs)):
                return None
            return after, 1 if t.mnemonic == "s_cbranch_vccnz" else 0, lab
        after = inst
    return None


def exec_dead_edges(b: Block, flow) -> set:
    """The edge out of `b` no wave takes when `b` ends in ``s_cbranch_execz/execnz`` with EXEC
    still the launch mask there (`flow.exec_is_launch_mask`): a wave is launched for at least
    one work-item, so that EXEC is never zero; execz falls through, execnz jumps.  LLVM writes
    ``s_mov_b64 vcc, exec; s_cbranch_execz`` after a uniform ``if`` it folded (aiter's cktile
    GEMM, right after its wave-group branch: read as taken, each group's view also ran the
    other group's set-up and joined the two groups' LDS offsets)."""
    got = two_way_jump(b, ("s_cbranch_execz", "s_cbranch_execnz"))
    if got is None:
        return set()
    term, lab = got
    try:
        launch = flow.exec_is_launch_mask(term)
    except (RecursionError, ArithmeticError, LookupError, TypeError, ValueError, AttributeError):
        return set()
    if not launch:
        return set()
    jumps = term.mnemonic == "s_cbranch_execnz"
    return {(b, s) for s in b.succs if (s.label == lab) != jumps}
