"""Waits that folding left satisfied on every path: dropped from the plan (issue 22).

CoalesceWaits moves a wait's counts into an earlier wait of its run of blocks.  The run stops
at a join, so a block after a branch diamond may keep a wait its predecessors now already
satisfy: aiter's gfx942 fmha bwd zeroes a register block when a tile is out of range,

    s_waitcnt vmcnt(32) lgkmcnt(0)    ; the barrier's wait, which took vmcnt(32) from the
    s_barrier                         ; fall-through block's first v_mov (its WAW)
    s_cbranch_scc1 .Ljoin
    v_mov_b32 v168, 0 ...             ; no VMEM op
  .Ljoin:
    s_waitcnt vmcnt(32)               ; planned for the taken edge, when the barrier had no vmcnt
    v_perm_b32 v200, v169, v168, ...

On both paths into `.Ljoin` at most 32 VMEM ops are in flight, so its wait does nothing.

The proof is a count bound, not the pass's queues: for each hardware counter, an upper bound
on the ops in flight at every point, from the plan as it stands -- a wait of value v leaves at
most v (what a wait guarantees, the fact decision 42's exact fold uses), each op pushed on one
of the counter's timelines adds one, a join takes the largest bound of its predecessors, the
function's entry, a call and an instruction without facts know nothing.  A planned wait whose
counter is bounded by its value where it stands already is dropped: the hardware would pass
it without waiting, on every path, whatever the ops are.  Dropping such a wait changes no bound
(min(x, v) = x when x <= v), so every wait found is dropped at once.  The hardware checker
proves the result on its own (`check --exhaustive`).

Across versions (issue 21, the 30k edit) the work follows what the edit changed: each block's
transfer and wait tests are a record reused while its instructions, facts and planned waits
are the same (satisfied_blocks.py), the fixed point starts from the last version's bounds and
re-solves only the bounds the edit can lower (satisfied_solve.py), and a block's drops are
decided again only where its record or an entry bound it reads is new.  Only the counter
groups some planned wait asks about are solved.  The result is the from-scratch one
(tests/test_satisfied.py compares every version of random edit sequences).
"""

from __future__ import annotations

from .satisfied_blocks import UNKNOWN, BlockBounds, apply, block_bounds
from .satisfied_solve import Topology, solve_cold, solve_warm
from .state import WaitInsertionPlan

__all__ = ["UNKNOWN", "SatisfiedState", "counter_groups", "drop_satisfied"]


class SatisfiedState:
    """What one version's drop leaves for the next (`FunctionMemo.satisfied`): the target it
    decoded waits for, the CFG topology, each block's record, per solved group the transfers
    it was solved with and its entry and exit bounds (by block index), and the drops per block
    ({block: [(instruction, groups dropped)]}, blocks with a drop only)."""

    __slots__ = ("target", "topo", "records", "bounds", "drops")

    def __init__(self, target) -> None:
        self.target = target
        self.topo: Topology | None = None
        self.records: dict = {}
        self.bounds: dict[int, tuple[list, list, list]] = {}
        self.drops: dict = {}


def drop_satisfied(plan: WaitInsertionPlan, df, coalesced: dict | None = None, touched: set | None = None,
                   memo=None) -> int:
    """Drop, in place, the planned waits (per counter of each anchor) whose counter is already
    at most their value on every path into them; returns how many counters were dropped.
    `coalesced`: CoalesceWaits' record of what each anchor took over, pruned to match;
    `touched`, when given, receives the blocks where a wait was dropped; `memo` (a
    FunctionMemo, or None): where the last version's state is read and this one's kept."""
    anchors = plan.anchor_waits
    if not anchors:
        return 0
    target = df.target
    groups, group_of, by_name = counter_groups(target)
    if not groups:
        return 0
    n = len(groups)
    # (the bound is a count: more than the counter's largest value is as good as unknown)
    caps = [max(target.max_wait[c] for c in g) + 1 for g in groups]
    blocks = list(df.func.blocks)
    state = memo.satisfied if memo is not None else None
    if memo is not None:
        memo.satisfied = None  # (put back when this version's state is whole)
    if state is None or state.target is not target:
        state = SatisfiedState(target)
    cfg = getattr(df, "cfg", None)
    warm = state.topo is not None and state.topo.same(cfg, blocks)
    topo = state.topo if warm else Topology(cfg, blocks)
    records, fresh = _records(blocks, anchors, df, n, group_of, by_name, state.records)
    asks: set = set()
    for rec in records:
        asks |= rec.asks
    bounds: dict[int, tuple[list, list, list]] = {}
    entries: list = [None] * n
    moved: set = set()
    redo_all = not warm
    for gi in sorted(asks):
        old = state.bounds.get(gi) if warm else None
        if old is None:
            trans = [rec.trans[gi] for rec in records]
            entry, exit_ = solve_cold(topo, trans, caps[gi])
            redo_all = True
        else:
            # (a record not made again is the one these bounds were solved with)
            old_trans, old_entry, old_exit = old
            trans = list(old_trans)
            changed = []
            for i in fresh:
                t = trans[i] = records[i].trans[gi]
                if t != old_trans[i]:
                    changed.append(i)
            if changed:
                entry, exit_, mv = solve_warm(topo, old_trans, trans, changed, caps[gi], old_entry, old_exit)
                moved.update(mv)
            else:
                entry, exit_ = old_entry, old_exit
        bounds[gi] = (trans, entry, exit_)
        entries[gi] = entry
    drops = {} if redo_all else dict(state.drops)
    redo = range(len(blocks)) if redo_all else sorted(moved | set(fresh))
    for i in redo:
        b = blocks[i]
        got = _decide(records[i], i, entries, caps)
        if got:
            drops[b] = got
        else:
            drops.pop(b, None)
    dropped = _apply(drops, anchors, groups, coalesced, touched)
    if memo is not None:
        state.topo = topo
        state.records = {b: rec for b, rec in zip(blocks, records)}
        state.bounds = bounds
        state.drops = drops
        memo.satisfied = state
    return dropped


def counter_groups(target) -> tuple[list[tuple[int, ...]], dict[int, int], dict[str, int]]:
    """The target's timelines grouped by hardware counter (counters without timelines left
    out), and each timeline's and each counter name's group index (made once per plan:
    every block and every wait asks)."""
    groups = [tuple(c for c in target.timelines if target.counter_of[c] == cn) for cn in target.counter_names]
    groups = [g for g in groups if g]
    group_of = {c: gi for gi, g in enumerate(groups) for c in g}
    by_name = {target.counter_of[g[0]]: gi for gi, g in enumerate(groups)}
    return groups, group_of, by_name


def _records(blocks: list, anchors: dict, df, n: int, group_of: dict, by_name: dict,
             old: dict) -> tuple[list[BlockBounds], list[int]]:
    """Each block's record (the last version's where it holds) and the indices of the blocks
    whose record was made again."""
    # the records whose block has the same signature object; of those, the blocks whose
    # planned waits are not the record's: a spec that differs or is new, and, when fewer of
    # the records' waits are still planned than they hold, one that is gone
    sig_get = df.block_sig.get
    sigs = [sig_get(b) for b in blocks]
    kept: dict = {}
    for b, sig in zip(blocks, sigs):
        rec = old.get(b)
        if rec is not None and sig is not None and rec.sig is sig:
            kept[b] = rec
    dirty: set = set()
    present = 0
    kept_get = kept.get
    for inst, spec in anchors.items():
        b = inst.block
        rec = kept_get(b)
        if rec is None:
            continue  # (made again, or not a block of this function)
        was = rec.specs.get(inst)
        if was is None:
            dirty.add(b)
            continue
        present += 1
        if was != spec:
            dirty.add(b)
    if present != sum(len(r.specs) for r in kept.values()):
        for b, r in kept.items():
            if any(inst not in anchors for inst in r.specs):
                dirty.add(b)
    recs = []
    fresh = []
    shared: tuple[dict, dict] = ({}, {})
    for i, b in enumerate(blocks):
        rec = kept_get(b)
        if rec is None or b in dirty:
            rec = block_bounds(b, anchors, df, n, group_of, by_name, sigs[i], shared)
            fresh.append(i)
        recs.append(rec)
    return recs, fresh


def _decide(rec: BlockBounds, i: int, entries: list, caps: list[int]) -> list:
    """[(instruction, groups)] whose wait block `rec` (index `i`) no longer needs, from the
    entry bounds of the groups it asks about."""
    out = []
    for inst, tests in rec.checks:
        gone = []
        for gi, add, top, v in tests:
            x = apply(entries[gi][i], add, top, caps[gi])
            if 0 <= x <= v:
                gone.append(gi)
        if gone:
            out.append((inst, tuple(gone)))
    return out


def _apply(drops: dict, anchors: dict, groups: list, coalesced: dict | None, touched: set | None) -> int:
    """Take the decided drops out of the plan (and CoalesceWaits' record); returns how many
    counters went."""
    dropped = 0
    for b, decs in drops.items():
        if touched is not None:
            touched.add(b)
        for inst, gone in decs:
            new = list(anchors[inst])
            cs = set()
            for gi in gone:
                for c in groups[gi]:
                    new[c] = -1
                cs.update(groups[gi])
            dropped += len(gone)
            if coalesced and inst in coalesced:
                # (a copy: the incremental memo's fold records share these dicts)
                coalesced[inst] = {c: lst for c, lst in coalesced[inst].items() if c not in cs}
            if all(x == -1 for x in new):
                del anchors[inst]
                if coalesced:
                    coalesced.pop(inst, None)
            else:
                anchors[inst] = new
    return dropped
