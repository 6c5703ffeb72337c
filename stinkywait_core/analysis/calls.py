"""Subroutine calls and returns inside one function, for the value analysis.

Hand-written kernels call code of their own (``s_call_i64 s[100:101], .Lepilogue`` ...
``s_set_pc_i64 s[100:101]``).  The CFG the pass works on has no call or return edges, so a
value analysis that trusted it would carry values across a call as if the callee did not run,
and would give the callee the state of whatever happens to precede it in the text.  This
module finds what the CFG misses:

* each call and the units it may clobber: everything the local callee (the blocks reachable
  from its entry label, stopping at returns) writes, transitively through nested calls; every
  unit when the callee is not a label of this function (``s_swappc_b64`` through a register,
  another function);
* the callee entry blocks (their register state comes from the call sites), and the callee
  region's blocks (code that may run more than once between two instructions of the caller
  without any loop back edge);
* the returns (``s_setpc_b64``/``s_set_pc_i64``).

The value analysis treats a call as a definition of every clobbered unit with an unknown
value, a callee entry as an unknown state, and symbols defined in a callee region as a new
instance at every execution.
"""

from __future__ import annotations

from ..ir import Block, Function, Instruction, Reg, Str

CALLS = ("s_call_b64", "s_call_i64", "s_swappc_b64", "s_swap_pc_i64")
RETURNS = ("s_setpc_b64", "s_set_pc_i64")
_ANY = CALLS + RETURNS


class CallInfo:
    """`clobbers`: call -> the units it may change (None: any); `entries`: callee entry
    block -> its calls; `region`: the blocks of local callees; `returns`: return
    instructions."""

    __slots__ = ("clobbers", "entries", "region", "returns")

    def __init__(self) -> None:
        self.clobbers: dict = {}
        self.entries: dict = {}
        self.region: set = set()
        self.returns: list = []


def _target(inst: Instruction) -> str | None:
    for op in inst.srcs:
        if type(op) is Str:
            return op.value
    return None


def _units(inst: Instruction) -> set:
    out = set()
    for op in inst.dsts:
        if type(op) is Reg and op.kind not in ("null", "LDS"):
            out.update((op.kind, u) for u in range(op.lo, op.hi + 1))
    return out


def call_info(func: Function) -> CallInfo | None:
    """The calls and returns of `func`, or None when it has neither."""
    calls: list = []
    info = CallInfo()
    for b in func.blocks:
        for inst in b.instrs:
            mn = inst.mnemonic
            if mn.startswith(_ANY):
                if mn.startswith(CALLS):
                    calls.append(inst)
                else:
                    info.returns.append(inst)
    if not calls and not info.returns:
        return None
    by_label = {b.label: b for b in func.blocks if b.label}
    entry_of = {}
    for c in calls:
        t = _target(c) if c.mnemonic.startswith(("s_call_b64", "s_call_i64")) else None
        e = by_label.get(t) if t else None
        entry_of[c] = e
        if e is not None:
            info.entries.setdefault(e, []).append(c)
    regions: dict = {}
    for e in info.entries:
        regions[e] = _region(e)
        info.region |= regions[e][0]
    # clobbered units, to a fixed point through nested calls
    mods: dict = {e: set(regions[e][1]) for e in info.entries}
    open_ended = {e for e in info.entries if regions[e][2]}
    changed = True
    while changed:
        changed = False
        for e in info.entries:
            if e in open_ended:
                continue
            for c in regions[e][3]:
                ce = entry_of.get(c)
                if ce is None or ce in open_ended:
                    open_ended.add(e)
                    changed = True
                    break
                if not mods[ce] <= mods[e]:
                    mods[e] |= mods[ce]
                    changed = True
    for c in calls:
        e = entry_of[c]
        info.clobbers[c] = None if e is None or e in open_ended else frozenset(mods[e] | _units(c))
    return info


def _region(entry: Block) -> tuple[set, set, bool, list]:
    """(blocks, units written, calls an unknown callee, calls) of the code reachable from a
    callee entry up to its returns."""
    blocks: set = set()
    units: set = set()
    nested: list = []
    unknown = False
    work = [entry]
    while work:
        b = work.pop()
        if b in blocks:
            continue
        blocks.add(b)
        ended = False
        for inst in b.instrs:
            if inst.is_label or inst.is_phi:
                continue
            mn = inst.mnemonic
            if mn.startswith(RETURNS):
                ended = True
                break
            units |= _units(inst)
            if mn.startswith(CALLS):
                nested.append(inst)
                if _target(inst) is None:
                    unknown = True
        if not ended:
            work.extend(b.succs)
    return blocks, units, unknown, nested
