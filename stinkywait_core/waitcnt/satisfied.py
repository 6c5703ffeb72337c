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
"""

from __future__ import annotations

from collections import deque

from ..targets.model import CTL_CALL
from .state import WaitInsertionPlan

#: no bound known (the entry, a call, more than the counter can hold)
UNKNOWN = 1 << 30


def drop_satisfied(plan: WaitInsertionPlan, df, coalesced: dict | None = None, touched: set | None = None) -> int:
    """Drop, in place, the planned waits (per counter of each anchor) whose counter is already
    at most their value on every path into them; returns how many counters were dropped.
    `coalesced`: CoalesceWaits' record of what each anchor took over, pruned to match;
    `touched`, when given, receives the blocks where a wait was dropped."""
    anchors = plan.anchor_waits
    if not anchors:
        return 0
    target = df.target
    groups, group_of, by_name = counter_groups(target)
    if not groups:
        return 0
    blocks = list(df.func.blocks)
    # (the bound is a count: more than the counter's largest value is as good as unknown)
    caps = [max(target.max_wait[c] for c in g) + 1 for g in groups]
    summary = {b: _summary(b, anchors, df, groups, group_of, by_name) for b in blocks}
    entry = _fixpoint(blocks, summary, len(groups), caps)
    dropped = 0
    for b in blocks:
        if not any(inst in anchors for inst in b.instrs):
            continue
        bound = entry.get(b)
        if bound is None:
            continue  # (not reached from the entry: left as planned)
        bound = list(bound)
        for inst in b.instrs:
            spec = anchors.get(inst)
            if spec is not None:
                new = None
                for gi, g in enumerate(groups):
                    v = _value(spec, g)
                    if v == -1:
                        continue
                    if bound[gi] <= v:
                        if new is None:
                            new = list(spec)
                        for c in g:
                            new[c] = -1
                        dropped += 1
                        if coalesced and inst in coalesced:
                            # (a copy: the incremental memo's fold records share these dicts)
                            coalesced[inst] = {c: lst for c, lst in coalesced[inst].items() if c not in g}
                    else:
                        bound[gi] = v
                if new is not None:
                    if touched is not None:
                        touched.add(b)
                    if all(x == -1 for x in new):
                        del anchors[inst]
                        if coalesced:
                            coalesced.pop(inst, None)
                    else:
                        anchors[inst] = new
            _step(inst, df, group_of, by_name, bound, caps)
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


def _value(spec: list[int], g: tuple[int, ...]) -> int:
    """The value a spec waits its counter `g` down to (-1: it does not wait on it)."""
    vals = [spec[c] for c in g if c < len(spec) and spec[c] != -1]
    return min(vals) if vals else -1


def _step(inst, df, group_of: dict, by_name: dict, bound: list[int], caps: list[int]) -> None:
    """`bound` after `inst` itself (its hand-written wait, its pushes, a call)."""
    if inst.is_label or inst.is_phi:
        return
    inf = df.info.get(inst)
    if inf is None or inf.control == CTL_CALL:
        bound[:] = [UNKNOWN] * len(bound)
        return
    if inf.is_wait:
        for cn, v in df.target.decode_wait(inst).items():
            gi = by_name.get(cn)
            if v >= 0 and gi is not None:
                bound[gi] = min(bound[gi], v)
    for c in inf.pushes:
        gi = group_of.get(c)
        if gi is not None and bound[gi] < UNKNOWN:
            bound[gi] = bound[gi] + 1 if bound[gi] + 1 < caps[gi] else UNKNOWN


def _summary(b, anchors: dict, df, groups: list, group_of: dict, by_name: dict) -> list[tuple[int, int]]:
    """Per counter, the block as a function of its entry bound x: x -> min(x + add, top)
    (`top` UNKNOWN when no wait in the block bounds it; a call makes add UNKNOWN too)."""
    n = len(groups)
    add, top = [0] * n, [UNKNOWN] * n
    info = df.info
    for inst in b.instrs:
        spec = anchors.get(inst)
        if spec is not None:
            for gi, g in enumerate(groups):
                v = _value(spec, g)
                if v != -1 and v < top[gi]:
                    top[gi] = v  # (min(min(x + add, top), v))
        if inst.is_label or inst.is_phi:
            continue
        inf = info.get(inst)
        if inf is None or inf.control == CTL_CALL:
            add, top = [UNKNOWN] * n, [UNKNOWN] * n
            continue
        if inf.is_wait:
            for cn, w in df.target.decode_wait(inst).items():
                gi = by_name.get(cn)
                if w >= 0 and gi is not None:
                    top[gi] = min(top[gi], w)
        for c in inf.pushes:
            gi = group_of.get(c)
            if gi is not None:
                add[gi] = min(UNKNOWN, add[gi] + 1)
                top[gi] = min(UNKNOWN, top[gi] + 1)
    return list(zip(add, top))


def _fixpoint(blocks: list, summary: dict, n: int, caps: list[int]) -> dict:
    """Each reached block's entry bounds (the largest over its predecessors' exits; the first
    block, and a block with no predecessor, know nothing), to a fixed point (bounds only
    grow, and each is capped: it ends)."""
    entry: dict = {}
    exits: dict = {}
    first = blocks[0] if blocks else None
    # (a predecessor no path from a root reaches is unknown: an edge the CFG may lack leads in)
    reached: set = set()
    stack = [b for b in blocks if b is first or not b.preds]
    while stack:
        b = stack.pop()
        if b in reached:
            continue
        reached.add(b)
        stack.extend(s for s in b.succs if s in summary)
    unknown = [UNKNOWN] * n
    work = deque(blocks)
    queued = set(work)
    while work:
        b = work.popleft()
        queued.discard(b)
        if b is first or not b.preds:
            new = [UNKNOWN] * n
        else:
            seen = [exits[p] if p in reached else unknown for p in b.preds if p in exits or p not in reached]
            if not seen:
                continue  # (no predecessor reached yet)
            new = [max(e[i] for e in seen) for i in range(n)]
        old = entry.get(b)
        if old is not None:
            new = [max(a, c) for a, c in zip(old, new)]
            if new == old:
                continue
        entry[b] = new
        out = []
        for i, (add, top) in enumerate(summary[b]):
            x = new[i]
            y = UNKNOWN if x >= UNKNOWN or add >= UNKNOWN else x + add
            y = min(y, top)
            out.append(y if y < caps[i] else UNKNOWN)
        exits[b] = out
        for s in b.succs:
            if s not in queued and s in summary:
                work.append(s)
                queued.add(s)
    return entry
