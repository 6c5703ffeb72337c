"""One wave's view of a function: the per-path wave-index restriction.

Kernels specialised by wave index branch on it (aiter's gfx1250 f4gemm: ``s_bfe_u32 s22,
ttmp8, 0x50019`` then ``s_cmp_eq_u32 s22, k; s_cbranch_scc1 role_k`` for k = 0..3); each role
sets up its own tensor descriptors and LDS bases and then jumps into a loop two roles share.
The value analysis is path-insensitive: at the shared loop's head a descriptor is the join of
the roles' values, and a tile width joined over 0x80 / 0x100 / 0x800 elements reaches past the
LDS, so every fill there is drained at once.  A real wave has one index and takes only the
paths that index allows; its own addresses are one role's.

For each wave index w of the workgroup (at most `MAX_WAVES`), `WaveRole` is the function as
wave w runs it:

* the wave index is the constant w (TTMP8[29:25] on gfx12/gfx1250; v0's lanes
  w*wave_size .. +wave_size-1 in a one-dimensional workgroup);
* a conditional branch ``s_cbranch_scc0/1`` whose SCC the value analysis, with w fixed,
  finds constant goes one way only: the other edge is never taken by this wave;
* a return of a local subroutine goes back only after calls this wave can reach (the CFG's
  return edges go after every call of the subroutine);
* the blocks this wave can reach (`live`) from the entry over the edges it can take.

The value analysis of that view (`ValueFlow(role=...)`) leaves the edges out of every join.
Sound: a wave with index w executes only paths of the pruned CFG (each edge left out is one
the wave's own values forbid), and the analysis with w fixed over-approximates its values on
those paths.  A property two accesses have in every wave's view (disjoint bytes) therefore
holds for every wave; an instruction outside a wave's `live` set is never run by that wave.

The decisions are made by one value analysis with w fixed and the full CFG (a branch decided
there is decided on every path of the wave); the views' analyses are separate objects, made on
demand (a query the path-insensitive analysis already answers never builds them).
"""

from __future__ import annotations

from ..ir import Block, Function, Reg
from .boundaries import local_transfers
from .wave_vcc import exec_dead_edges, two_way_jump, vcc_branch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .cfg import CfgInfo
    from .launch import LaunchInfo
    from .ssa import UseDefChains

#: most wave indices given their own view (more: the path-insensitive analysis alone)
MAX_WAVES = 16


class WaveRestriction:
    """The wave index `wave`, the blocks `live` it reaches and the edges it takes."""

    __slots__ = ("wave", "live", "dead")

    def __init__(self, wave: int, live: frozenset, dead: frozenset) -> None:
        self.wave = wave
        self.live = live
        self.dead = dead

    def takes(self, src: Block, dst: Block) -> bool:
        """May this wave go from `src` to `dst`?"""
        return src in self.live and (src, dst) not in self.dead


def has_wave_index(launch: "LaunchInfo | None") -> bool:
    """Does the value analysis name the wave's index for this launch (so fixing it means
    something)?"""
    if launch is None or not 2 <= launch.waves_per_group <= MAX_WAVES:
        return False
    return launch.arch.startswith("gfx12") or launch.one_dimensional()


def restrictions(func: Function, cfg: "CfgInfo", launch: "LaunchInfo", chains: "UseDefChains | None",
                 text: str | None, keys: set | None = None) -> list[WaveRestriction] | None:
    """Each wave index's view of `func`, or None when no wave's view differs from the whole
    CFG (no branch is decided by the wave index: the views would add nothing).  `keys`, when
    given, collects the register units the probes' value analyses asked about."""
    from .value_flow import ValueFlow
    if not func.blocks or not has_wave_index(launch):
        return None
    index_units = _index_units(func)
    branches = [b for b in cfg.rpo if _scc_branch(b) is not None and _compares_index(b, index_units)]
    branches += [b for b in cfg.rpo if _scc_branch(b) is None and vcc_branch(b, index_units) is not None]
    if not branches:
        return None
    calls, _ = local_transfers(func)
    blocks = func.blocks
    # the block each local call returns to: the one after the call's block
    after_call: dict[Block, Block] = {}
    for i, b in enumerate(blocks):
        if b.terminator() in calls and i + 1 < len(blocks):
            after_call[blocks[i + 1]] = b
    out = []
    differs = False
    execs: set | None = None  # (the same in every wave's view: EXEC at launch is not the index's)
    for w in range(launch.waves_per_group):
        probe = ValueFlow(func, cfg, launch, chains, text, WaveRestriction(w, frozenset(cfg.rpo), frozenset()))
        if keys is not None:
            probe.read_keys = keys
        dead: set = set()
        for b in branches:
            got = _scc_branch(b)
            if got is not None:
                term, on, target = got
                at = term
            else:
                at, on, target = vcc_branch(b, index_units)  # type: ignore[misc]
            try:
                v = probe.value_at(at, ("SCC", 0))
            except (RecursionError, ArithmeticError, LookupError, TypeError, ValueError, AttributeError):
                return None  # an analysis bug costs the views, never the pass
            flag = None if v.bottom else v.const()
            if flag is None:
                continue
            taken = (flag != 0) == (on == 1)
            for s in b.succs:
                if (s.label == target) != taken:
                    dead.add((b, s))
        if execs is None:
            execs = set()
            for b in cfg.rpo:
                execs |= exec_dead_edges(b, probe)
        dead |= execs
        live = _reach(blocks[0], dead, after_call, cfg)
        if dead or len(live) < len(cfg.rpo):
            differs = True
        # edges out of blocks this wave never reaches are not taken either (`takes`)
        out.append(WaveRestriction(w, frozenset(live), frozenset(dead | _returns_not_taken(live, after_call))))
    return out if differs else None


def _units(ops) -> list:
    return [(r.kind, u) for r in ops if type(r) is Reg and r.kind not in ("v", "a", "null")
            for u in range(r.lo, r.hi + 1)]


def _index_units(func: Function) -> set:
    """Scalar register units that may hold a value computed from the wave index anywhere in
    the function (flow-insensitive: TTMP8, a lane read, and whatever a scalar instruction
    computes from them).  Only branches on these are worth deciding per wave (a cheap filter:
    the decision itself is the value analysis')."""
    found: set = {("ttmp", 8)}
    insts = [i for b in func.blocks for i in b.instrs if not i.is_label and not i.is_phi]
    grown = True
    while grown:
        grown = False
        for inst in insts:
            mn = inst.mnemonic
            if mn.startswith("v_readfirstlane") or mn.startswith("v_readlane") or \
                    (mn.startswith("s_") and any(u in found for u in _units(inst.srcs))):
                for u in _units(inst.dsts):
                    if u not in found:
                        found.add(u)
                        grown = True
    return found


def _compares_index(b: Block, index_units: set) -> bool:
    """Does the last SCC writer before `b`'s branch read a wave-index unit?"""
    for inst in reversed(b.instrs[:-1]):
        if inst.is_label or inst.is_phi:
            continue
        if any(type(r) is Reg and r.kind == "SCC" for r in inst.dsts):
            return any(u in index_units for u in _units(inst.srcs))
    return True  # SCC from before the block: let the analysis decide


def _scc_branch(b: Block) -> tuple | None:
    """(the branch, the SCC value it jumps on, its target label) for ``s_cbranch_scc0/1 L``
    with two distinct successors."""
    got = two_way_jump(b, ("s_cbranch_scc0", "s_cbranch_scc1"))
    if got is None:
        return None
    t, lab = got
    return t, int(t.mnemonic[-1]), lab


def _returns_not_taken(live: set, after_call: dict) -> set:
    """Return edges into the code after a call the wave never reaches."""
    out = set()
    for rp, call_block in after_call.items():
        if call_block not in live:
            for p in rp.preds:
                out.add((p, rp))
    return out


def _reach(entry: Block, dead: set, after_call: dict, cfg: "CfgInfo") -> set:
    """Blocks reached from `entry` over edges not `dead`, a return going back only after
    calls already reached (repeated until no more calls are reached)."""
    idx = cfg.rpo_index
    live: set = set()
    while True:
        seen = {entry}
        work = [entry]
        while work:
            b = work.pop()
            for s in b.succs:
                if s in seen or s not in idx or (b, s) in dead:
                    continue
                caller = after_call.get(s)
                if caller is not None and caller not in live and caller is not b:
                    continue  # a return to after a call not (yet) known to run
                seen.add(s)
                work.append(s)
        if seen == live:
            return live
        live = seen
