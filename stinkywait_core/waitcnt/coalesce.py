"""CoalesceWaits: fewer waits, each serving the next few consumers (a WaitPlanOptimizer).

The pass places each wait right before the first instruction that needs it, as weak as that
instruction allows, so a run of WMMAs fed by a run of LDS loads gets one wait per WMMA
(`s_wait_dscnt 18`, `16`, `14`, ...).  Hand-written kernels wait once for the group: every
wait instruction costs an issue slot, and loads issued together arrive together anyway.

Merging a later wait B (value b) into an earlier wait A of the same counter in the same block
is exact: a wait guarantees only "at most n ops of this counter outstanding", and with k ops
pushed on the counter between A and B, at most a' + k are outstanding at B when A leaves a'.
So A takes a' = min(a, b - k) and B goes: whatever B's "at most b" retired is retired by then,
on every timeline of the counter, in order or not (gfx9 vmcnt: loads and stores; gfx9-11
lgkmcnt: LDS beside SMEM), and A only waits more.  It needs b - k >= 0 (B must not wait for an
op issued after A) and B at most `window` instructions after A; A then waits earlier for what
B needed, the price of the saved instruction.  gfx1250's xcnt folds the same way: its
translations also retire implicitly when their ops complete, which only lowers the count.

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
    groups = _counters(df)
    if not groups:
        return merged
    blocks = {inst.block for inst in anchors if inst.block is not None}
    for b in df.rpo:
        if b not in blocks:
            continue
        # counter (its timelines) -> [anchor, ops pushed on the counter since it, instructions since it]
        last: dict[tuple[int, ...], list] = {}
        for inst in b.instrs:
            if inst.is_phi or inst.is_label:
                continue
            spec = anchors.get(inst)
            if spec is not None:
                # (the finalized plan's lists may be the incremental memo's own: copied first)
                spec = anchors[inst] = list(spec)
                touched = False
                for g in groups:
                    w = _value(spec, g)
                    if w == -1:
                        continue
                    prev = last.get(g)
                    if prev is not None and prev[2] <= window and w - prev[1] >= 0:
                        a_inst, k = prev[0], prev[1]
                        a_spec = anchors[a_inst]  # a copy made when it was met
                        v = min(_value(a_spec, g), w - k)
                        for c in g:
                            a_spec[c] = v
                            if spec[c] != -1:
                                merged.setdefault(a_inst, {}).setdefault(c, []).append((inst, k))
                            spec[c] = -1
                        touched = True
                        continue
                    last[g] = [inst, 0, 0]
                if touched and all(v == -1 for v in spec):
                    del anchors[inst]
            inf = info.get(inst)
            pushes = inf.pushes if inf is not None else ()
            for g, st in last.items():
                for c in g:
                    if c in pushes:
                        st[1] += 1  # (one instruction pushing two timelines of a counter counts twice)
                st[2] += 1
    return merged


def _counters(df: WaitDataflow) -> list[tuple[int, ...]]:
    """The hardware counters, each as the group of its timelines."""
    seen: dict[tuple[int, ...], None] = {}
    for c in df.cks:
        g = tuple(sorted(df.siblings[c]))
        seen.setdefault(g, None)
    return list(seen)


def _value(spec: list[int], g: tuple[int, ...]) -> int:
    """The wait value of counter `g` in `spec` (every timeline of a waited counter carries it)."""
    vals = [spec[c] for c in g if spec[c] != -1]
    return min(vals) if vals else -1
