"""Vector values that are the same in every lane of two waves, for the wave pairing (wave_match.py).

Kernels compute wave-uniform scalars in the vector unit: aiter's gfx942 split-k GEMM divides
two kernel arguments with ``v_rcp_iflag_f32`` / ``v_mul_hi_u32`` / ``v_cndmask_b32`` and takes the
quotient back with ``v_readfirstlane_b32 s32, v7``; its loop bound follows from it.  Two waves
of a workgroup compute the same quotient, so their loops run the same number of trips; if
the pairing read every ``v_readfirstlane`` as "differs", the two waves' barriers could pair
across loop exits and every fill would have to drain at every barrier.

When the value is the same.  A VGPR holds, in every lane either wave runs, one value equal in
both waves when the instruction that wrote it is *lane-local* (each lane's result depends on
that lane's operands only, and on nothing hidden: see `lane_local`) and each operand is a
constant, a scalar register equal in both waves, or a VGPR of this kind; and for an operand
read as a lane mask (the condition of ``v_cndmask``, a carry in), a mask written by a
lane-local compare of such operands (each lane's bit is then the same boolean).  This needs
EXEC to be the launch mask where the value is written and read (no EXEC write on any path
from the entry there: every write since the entry then wrote exactly the lanes the wave was
launched with, a wave runs at least lane 0, so ``v_readfirstlane`` reads a lane that the last
write wrote, and no lane keeps an older value; a point after an EXEC write is never equal).  The scalar result of a compare (the mask
as a 64-bit value) still differs: it holds the EXEC bits, which need not be equal.

Only the VGPRs that may reach a ``v_readfirstlane`` are followed (a flow-insensitive backward
slice over register units), so the pairing walks no more than it needs.
"""

from __future__ import annotations

from ..ir import Function, Instruction, Reg

#: vector instructions whose lanes see other lanes, hidden state or their destination's old
#: value (a 16-bit result may keep its upper half; SDWA may keep unselected bits)
_NOT_LANE_LOCAL = ("v_mbcnt", "v_readlane", "v_writelane", "v_permlane", "v_movrel", "v_swap", "v_interp",
                   "v_mfma", "v_smfmac", "v_wmma", "v_swmmac", "v_dual_", "v_mac_", "v_fmac_", "v_div_fmas",
                   "v_div_scale", "v_readfirstlane", "v_cmpx", "v_bpermute", "v_pk_fmac", "v_dot2c", "v_dot4c",
                   "v_dot8c", "v_cvt_pk_", "v_prng", "v_sat_pk")
_SHUFFLES = ("row_", "quad_perm", "dpp", "bound_ctrl", "wave_", "op_sel", "fi:", "dst_unused", "_sel:")
_HALF_TYPES = ("u16", "i16", "b16", "f16", "bf16", "u8", "i8")
#: operations whose last scalar operand is a lane mask (a condition or a carry in)
_MASK_LAST = ("v_cndmask", "v_addc", "v_subb", "v_add_co_ci", "v_sub_co_ci", "v_subrev_co_ci")


def lane_local(inst: Instruction) -> bool:
    """A vector instruction whose lane i result is a function of lane i's operands alone."""
    mn = inst.mnemonic
    if not mn.startswith("v_") or mn.startswith(_NOT_LANE_LOCAL) or mn.endswith(("_dpp", "_sdwa", "_dpp8")):
        return False
    if inst.suffix and any(s in inst.suffix for s in _SHUFFLES):
        return False
    return not any(t in mn.split("_") for t in _HALF_TYPES)


def mask_operand(inst: Instruction) -> int | None:
    """Index in `inst.srcs` of the operand read as a lane mask, or None."""
    if not inst.mnemonic.startswith(_MASK_LAST):
        return None
    for i in range(len(inst.srcs) - 1, -1, -1):
        r = inst.srcs[i]
        if type(r) is Reg and r.kind not in ("v", "a"):
            return i
    return None


def vector_units(r: Reg) -> list[tuple]:
    return [(r.kind, u) for u in range(r.lo, r.hi + 1)]


class LaneSlice:
    """The VGPR units that may reach a ``v_readfirstlane`` (`units`), the scalar units read as
    lane masks on the way (`masks`, as the pairing names scalar units), the vector
    instructions that may write them (`writers`), and the instructions an EXEC write may
    precede (`late`: nothing they write or read is equal)."""

    __slots__ = ("units", "masks", "writers", "late")

    def __init__(self, units: set, masks: set, writers: set, late: set) -> None:
        self.units, self.masks, self.writers, self.late = units, masks, writers, late


def _writes_exec(i: Instruction) -> bool:
    mn = i.mnemonic
    return ("saveexec" in mn or "wrexec" in mn or mn.startswith("v_cmpx")
            or any(type(r) is Reg and r.kind == "exec" for r in i.dsts))


def _after_exec_writes(func: Function) -> set:
    """The instructions some EXEC write may precede (on a path from it): everywhere else
    EXEC is still the launch mask."""
    out: set = set()
    work = []
    for b in func.blocks:
        for k, i in enumerate(b.instrs):
            if not i.is_label and not i.is_phi and _writes_exec(i):
                out.update(b.instrs[k + 1:])
                work.extend(b.succs)
                break
    seen: set = set()
    while work:
        b = work.pop()
        if b in seen:
            continue
        seen.add(b)
        out.update(b.instrs)
        work.extend(b.succs)
    return out


def lane_slice(func: Function, unit_keys) -> LaneSlice:
    """The slice of `func` (`unit_keys(reg)`: the pairing's names of a scalar register's
    units): the vector definitions a lane read may take (by the SSA's reaching definitions,
    `inst.sources`, when they are built; else every vector writer of a unit in the slice),
    the units they write, and the instructions after an EXEC write (nothing they write or
    read is equal)."""
    insts = [i for b in func.blocks for i in b.instrs if not i.is_label and not i.is_phi]
    late = _after_exec_writes(func)
    reads = [i for i in insts if i.mnemonic.startswith("v_readfirstlane") and i not in late]
    if not reads:
        return LaneSlice(set(), set(), set(), late)
    if all(i.sources for i in reads):
        writers = _writers_by_ssa(reads, late)
    else:
        writers = _writers_by_units(insts, reads, late, unit_keys)
    units = {u for i in reads for r in i.srcs if type(r) is Reg and r.kind in ("v", "a") for u in vector_units(r)}
    masks: set = set()
    for i in writers:
        units.update(u for r in i.dsts if type(r) is Reg and r.kind in ("v", "a") for u in vector_units(r))
        m = mask_operand(i)
        if m is not None:
            masks.update(unit_keys(i.srcs[m]))
    return LaneSlice(units, masks, writers, late)


def _writers_by_ssa(reads: list, late: set) -> set:
    """The vector definitions reaching the lane reads, through vector instructions and PHIs."""
    writers: set = set()
    seen: set = set()
    work = [d for i in reads for d in i.sources if d is not None]
    while work:
        d = work.pop()
        if d in seen:
            continue
        seen.add(d)
        if d.is_phi:
            work.extend(x for x in d.sources if x is not None)
        elif d.mnemonic.startswith("v_") and d not in late:
            writers.add(d)
            work.extend(x for x in d.sources if x is not None)
    return writers


def _writers_by_units(insts: list, reads: list, late: set, unit_keys) -> set:
    """Without reaching definitions: every vector writer of a unit the lane reads (or their
    operands, or a mask among them) may take, flow-insensitively."""
    units = {u for i in reads for r in i.srcs if type(r) is Reg and r.kind in ("v", "a") for u in vector_units(r)}
    masks: set = set()
    writers: set = set()
    changed = True
    while changed:
        changed = False
        for i in insts:
            if i in writers or not i.mnemonic.startswith("v_") or i in late:
                continue
            vd = [u for r in i.dsts if type(r) is Reg and r.kind in ("v", "a") for u in vector_units(r)]
            sd = [k for r in i.dsts if type(r) is Reg and r.kind not in ("v", "a") for k in unit_keys(r)]
            if not (units.intersection(vd) or masks.intersection(sd)):
                continue
            writers.add(i)
            changed = True
            m = mask_operand(i)
            for n, r in enumerate(i.srcs):
                if type(r) is not Reg:
                    continue
                if r.kind in ("v", "a"):
                    units.update(vector_units(r))
                elif n == m:
                    masks.update(unit_keys(r))
    return writers


__all__ = ["LaneSlice", "lane_slice", "lane_local", "mask_operand", "vector_units"]
