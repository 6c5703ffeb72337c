"""CoalesceWaits: fewer waits, each serving the next few consumers (a WaitPlanOptimizer).

The pass places each wait right before the first instruction that needs it, as weak as that
instruction allows, so a run of WMMAs fed by a run of LDS loads gets one wait per WMMA
(`s_wait_dscnt 18`, `16`, `14`, ...).  Hand-written kernels wait once for the group: every
wait instruction costs an issue slot, and loads issued together arrive together anyway.

Merging a later wait B (value b) into an earlier wait A of the same counter in the same block
is exact: with k ops pushed on that counter between A and B, "keep b newest at B" retires
precisely the ops "keep b - k newest at A" retires (the counter completes in order), so A
takes min(a, b - k) and B goes.  It needs b - k >= 0 (B must not wait for an op issued after
A) and B at most `window` instructions after A; A then waits earlier for what B needed, the
price of the saved instruction.  Counters shared by several timelines (gfx9-11 lgkmcnt,
gfx1250 xcnt) and out-of-order ones are left alone.

It runs on the finalized plan: after B the same ops are retired as before, so every block's
exit state (what the incremental memo and the tail drains read) is unchanged.
"""

from __future__ import annotations

from ..ir import Instruction
from .dataflow import WaitDataflow
from .state import WaitInsertionPlan

#: anchor -> timeline -> [(later anchor whose wait it took over, ops pushed in between)]
Coalesced = dict[Instruction, dict[int, list[tuple[Instruction, int]]]]


def coalesce_waits(plan: WaitInsertionPlan, df: WaitDataflow, window: int) -> Coalesced:
    """Merge close waits of one counter in place; returns what each kept anchor took over."""
    merged: Coalesced = {}
    if window <= 0 or not plan.anchor_waits:
        return merged
    anchors = plan.anchor_waits
    info = df.info
    singles = [c for c in df.cks if len(df.siblings[c]) == 1 and df.in_order[c]]
    if not singles:
        return merged
    blocks = {inst.block for inst in anchors if inst.block is not None}
    for b in df.rpo:
        if b not in blocks:
            continue
        # timeline -> [anchor, ops pushed since it, instructions since it]
        last: dict[int, list] = {}
        for inst in b.instrs:
            if inst.is_phi or inst.is_label:
                continue
            spec = anchors.get(inst)
            if spec is not None:
                # (the finalized plan's lists may be the incremental memo's own: copied first)
                spec = anchors[inst] = list(spec)
                touched = False
                for c in singles:
                    w = spec[c]
                    if w == -1:
                        continue
                    prev = last.get(c)
                    if prev is not None and prev[2] <= window and w - prev[1] >= 0:
                        a_inst, k = prev[0], prev[1]
                        a_spec = anchors[a_inst]  # a copy made when it was met
                        if w - k < a_spec[c]:
                            a_spec[c] = w - k
                        spec[c] = -1
                        touched = True
                        merged.setdefault(a_inst, {}).setdefault(c, []).append((inst, k))
                        continue
                    last[c] = [inst, 0, 0]
                if touched and all(v == -1 for v in spec):
                    del anchors[inst]
            inf = info.get(inst)
            pushes = inf.pushes if inf is not None else ()
            for c, st in last.items():
                if c in pushes:
                    st[1] += 1
                st[2] += 1
    return merged
