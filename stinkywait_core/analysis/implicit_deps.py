"""StinkyBuildImplicitDependencyPass: memtokens become LDS pseudo-register defs and uses.

A `tensor_load_to_lds` writes an LDS region and a later `ds_load` of that region depends on
it, but no architectural register links them.  This pass turns each MemTokenData token `t`
into the pseudo register `LDS<t>` so the ordinary def-use builder threads those edges
(upstream-algorithm.md s.3.1):

* LDS writers (tensor loads, DS stores) define `LDS<t>`;
* DS reads use `LDS<t>`;
* fencing barriers (`s_barrier`, split barriers on id -1) use and re-define `LDS<t>`;
  other split barriers (cluster -3, named barriers) get nothing.

One divergence, recorded in docs/decisions.md: a tagged `global_store_async_from_lds_*`
reads LDS, so it *uses* `LDS<t>` (upstream's debug build asserts, release ignores it).
"""

from __future__ import annotations

from ..diagnostics import WARNING, Diagnostic
from ..ir import Block, Function, Imm, Instruction, Reg
from ..ir.block_names import block_name
from . import classify as K


def _add_unique(ops: list, reg: Reg) -> None:
    for op in ops:
        if isinstance(op, Reg) and op.kind == "LDS" and op.lo == reg.lo and op.hi == reg.hi:
            return
    ops.append(reg)


def _barrier_gets_lds(inst: Instruction) -> bool:
    if not K.is_barrier(inst):
        return False
    if K.is_barrier_signal(inst) or K.is_barrier_wait(inst):
        first = inst.srcs[0] if inst.srcs else None
        return isinstance(first, Imm) and first.value == -1
    return True


def build_implicit_dependencies(func: Function, memo=None, attach: bool = True) -> list[Diagnostic]:
    """Attach LDS pseudo registers; return warnings for blocks mixing tagged/untagged LDS ops.

    `memo` (waitcnt.incremental.FunctionMemo): blocks the edit did not touch keep their
    registers (attached to the same instruction objects last time) and, while no line
    moved, their warnings.  `attach` False (the hardware model, whose LDS hazards come from
    the memtokens directly, waitcnt/hazards.py): only the warnings.
    """
    diags: list[Diagnostic] = []
    reuse = memo is not None and memo.changed_blocks is not None and memo.layout_stable
    cache: dict = {}
    for block in func.blocks:
        if reuse and block not in memo.changed_blocks and block in memo.implicit:
            cache[block] = memo.implicit[block]
            diags.extend(cache[block])
            continue
        start = len(diags)
        _block_dependencies(func, block, diags, attach)
        cache[block] = diags[start:]
    if memo is not None:
        memo.implicit = cache
    return diags


def _block_dependencies(func: Function, block: Block, diags: list[Diagnostic], attach: bool = True) -> None:
    """One block: pseudo registers on its tagged LDS operations, and its warning."""
    tagged = untagged = 0
    first_untagged: Instruction | None = None
    for inst in block.instrs:
        toks = inst.tokens
        is_lds_op = K.is_tensor_load(inst) or K.is_ds_read(inst) or K.is_ds_store(inst)
        if is_lds_op:
            if toks:
                tagged += 1
            else:
                untagged += 1
                first_untagged = first_untagged or inst
        if not toks or not attach:
            continue
        regs = [Reg("LDS", t, t) for t in toks]
        if K.is_tensor_load(inst) or K.is_ds_store(inst):
            for r in regs:
                _add_unique(inst.dsts, r)
        elif K.is_ds_read(inst) or K.is_async_op(inst.mnemonic) and "store" in inst.mnemonic:
            for r in regs:
                _add_unique(inst.srcs, r)
        elif _barrier_gets_lds(inst):
            for r in regs:
                _add_unique(inst.dsts, r)
            for r in regs:
                _add_unique(inst.srcs, r)
    if tagged and untagged and first_untagged is not None:
        sp = first_untagged.span
        diags.append(Diagnostic(
            WARNING, "mixed-memtokens",
            f"{block_name(func, block)} mixes LDS operations with and without st.token tags; the untagged "
            f"ones are assumed to overlap everything",
            sp.line if sp else 1, sp.col if sp else 1, function=func.name))
