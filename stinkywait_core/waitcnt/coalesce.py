"""CoalesceWaits: fewer waits, each serving the next few consumers (a WaitPlanOptimizer).

The pass places each wait right before the first instruction that needs it, as weak as that
instruction allows, so a run of WMMAs fed by a run of LDS loads gets one wait per WMMA
(`s_wait_dscnt 18`, `16`, `14`, ...).  Hand-written kernels wait once for the group: every
wait instruction costs an issue slot, and loads issued together arrive together anyway.

Merging a later wait B (value b) into an earlier wait A of the same counter in the same run of
blocks (a block whose only predecessor is the block laid out before it continues that block's
run: `fall_through_runs`; an epilogue's chain of `s_cbranch` exits is one run) is exact: a wait guarantees only "at most n ops of this counter outstanding", and with k ops
pushed on the counter between A and B, at most a' + k are outstanding at B when A leaves a'.
So A takes a' = min(a, b - k) and B goes: whatever B's "at most b" retired is retired by then,
on every timeline of the counter, in order or not (gfx9 vmcnt: loads and stores; gfx9-11
lgkmcnt: LDS beside SMEM), and A only waits more.  It needs b - k >= 0 (B must not wait for an
op issued after A) and B at most `window` instructions after A; A then waits earlier for what
B needed, the price of the saved instruction.  gfx1250's xcnt folds the same way: its
translations also retire implicitly when their ops complete, which only lowers the count.

Whether to fold is the latency model's call (docs/decisions.md 42, docs/latency-model.md): the
fold saves B's wait instruction but makes A wait for what B waited for, earlier.  A one-wave
walk of the function in layout order (`stall.Wave`, the clock the stall prediction uses)
prices it: B is folded only when the fold adds no stall, or (A and B of one counter in one
block) less than the wait instruction costs to issue.  So a wait whose ops are long back by A folds, and a pipelined run of exact
counts (LDS reads consumed as they arrive, a mixed SMEM+LDS `lgkmcnt(3)`, `(2)`, ... on gfx9)
keeps its counts.  The model only chooses among these safe forms.

It runs on the finalized plan: after B the same ops are retired as before, so the exit state
of B's block is unchanged; the blocks between A and B of a run exit with more retired than the
plan says, which only makes what was planned from their exits (tail drains, the incremental
memo's states) conservative, never too weak.
"""

from __future__ import annotations

from ..ir import Instruction
from .dataflow import WaitDataflow
from ..targets.model import CK_DS, CTL_BRANCH, CTL_CBRANCH, CTL_JUMP, CTL_NONE
from .coalesce_memo import fold_with_memo, run_layout
from .stall import Wave, ready_at
from .state import WaitInsertionPlan

#: anchor -> timeline -> [(later anchor whose wait it took over, ops pushed in between)]
Coalesced = dict[Instruction, dict[int, list[tuple[Instruction, int]]]]


def coalesce_waits(plan: WaitInsertionPlan, df: WaitDataflow, window: int, model=None,
                   facts: dict | None = None, folds: dict | None = None) -> Coalesced:
    """Merge close waits of one counter in place where `model` (a `LatencyModel`; None: every
    exact fold) says it pays; returns what each kept anchor took over.  `facts`: the
    incremental memo's per-instruction costs, reused across versions (pruned to this one).
    `folds`: the memo's per-block records of the last version (`BlockFold`), replaced by this
    version's: a block with the same instructions, the same planned waits and the same wave
    state at its start (relative to the clock) folds as it did, so after an edit only the
    blocks from the edit up to where the wave's state is the old one again are walked
    (coalesce_memo.py, which also keeps the runs and the loops)."""
    merged: Coalesced = {}
    if window <= 0 or not plan.anchor_waits:
        return merged
    anchors = plan.anchor_waits
    groups = _counters(df)
    if not groups:
        return merged
    wave = Wave(df.target, model, facts) if model is not None else None
    prev = None
    if folds is not None and wave is not None and _integral(model):
        prev = dict(folds)
        folds.clear()
    # (the runs and the loops kept from the last version while the CFG and the blocks are: coalesce_memo.py)
    runs, looped = run_layout(df, df.memo if prev is not None else None, lambda b: _falls_on(b, df.info),
                              lambda falls: fall_through_runs(df.func.blocks, df.info, falls),
                              lambda: _in_loops(df.func.blocks))
    fold = _BlockFolder(df, window, groups, anchors, wave, merged, looped)
    if prev is None:
        by_block: dict = {}
        for inst, spec in anchors.items():
            if inst.block is not None:
                by_block.setdefault(inst.block, []).append((inst, spec))
        for run in runs:  # (layout order: the clock runs through the function as the wave does)
            mine = [by_block[b] for b in run if b in by_block]
            if mine or wave is not None:
                fold.run(run, by_block)
    else:
        fold_with_memo(fold, runs, df, prev, folds)
    if facts:
        live = sum(len(b.instrs) for b in df.func.blocks)
        if len(facts) > live + live // 4 + 64:  # (an edit leaves its old instructions' facts)
            keep = {inst for b in df.func.blocks for inst in b.instrs}
            for inst in [i for i in facts if i not in keep]:
                del facts[inst]
    return merged


def fall_through_runs(blocks: list, info: dict, falls: list | None = None) -> list[list]:
    """The blocks in layout order, cut into runs a fold may cross: a block joins the run of the
    block laid out before it when that block is its only predecessor and ends in neither a call
    nor a return.  Every path into a later block of a run then comes through the earlier ones,
    in layout order, so the ops pushed between a wait and a later one of the run are exactly
    those the walk counts (a fold into a join could miss another predecessor's ops).  `falls`:
    `_falls_on` of every block, when known (coalesce_memo.run_layout keeps it per block)."""
    runs: list[list] = []
    for k, b in enumerate(blocks):
        if runs:
            p = runs[-1][-1]
            if len(b.preds) == 1 and b.preds[0] is p and p is not b and \
                    (falls[k - 1] if falls is not None else _falls_on(p, info)):
                runs[-1].append(b)
                continue
        runs.append([b])
    return runs


def _falls_on(p, info: dict) -> bool:
    """`p` ends in a plain instruction or a branch (not a call, return, trap or end of program)."""
    term = p.terminator()
    inf = info.get(term) if term is not None else None
    return inf is None or inf.control in (CTL_NONE, CTL_BRANCH, CTL_CBRANCH, CTL_JUMP)


def _integral(model) -> bool:
    """Every cost of the model is a whole number of cycles: the wave's clock then only adds
    and compares whole numbers (exact in floating point), so a walk shifted in time is the
    same walk, and a block's record holds wherever the clock stands."""
    vals = list(model.issue.values()) + list(model.latency.values()) + [n for _, n in model.matrix_passes] \
        + [model.matrix_pass_cycles, model.lds_queue_depth, model.barrier_cycles]
    return all(isinstance(v, int) for v in vals)


class _BlockFolder:
    """The walk of one block (`block`): folds its waits, moving the wave through it."""

    __slots__ = ("window", "groups", "anchors", "wave", "merged", "info", "wait_cost", "by_name", "in_order_ds",
                 "target", "looped")

    def __init__(self, df: WaitDataflow, window: int, groups: list, anchors: dict, wave: Wave | None,
                 merged: Coalesced, looped: set | None = None) -> None:
        target = self.target = df.target
        self.looped = _in_loops(df.func.blocks) if looped is None else looped
        self.window, self.groups, self.anchors, self.wave, self.merged = window, groups, anchors, wave, merged
        self.info = df.info
        self.wait_cost = wave.model.issue["wait"] if wave is not None else 0
        self.by_name = {name: tuple(ck for ck in target.timelines if target.counter_of[ck] == name)
                        for name in target.counter_names}
        self.in_order_ds = target.in_order.get(CK_DS, True)

    def run(self, run: list, by_block: dict) -> None:
        """Fold the waits of one run of blocks (`fall_through_runs`), in layout order."""
        # counter (its timelines) -> [anchor, ops pushed on the counter since it, instructions
        # since it, pending completions at it, the cycle its waiting ends]: `last` the latest
        # anchor waiting on the counter, `near` the latest kept anchor (of the run) that does not
        last: dict[tuple[int, ...], list] = {}
        near: dict[tuple[int, ...], list] = {}
        for b in run:
            if b in by_block or self.wave is not None:
                self.block(b, b in by_block, last, near)

    def _joins(self, a_spec: list[int], g: tuple[int, ...]) -> bool:
        """Whether anchor A (`a_spec`, not waiting on `g`) can take a wait on counter `g` in its
        wait instructions as spelled: on gfx9-11 one `s_waitcnt` holds every counter; on gfx12
        only the pairs with a combined form (`s_wait_loadcnt_dscnt`) do."""
        names = self.target.counter_of
        vals = {names[tls[0]]: v for tls in self.groups if (v := _value(a_spec, tls)) != -1}
        before = len(self.target.encode_waits(vals))
        vals[names[g[0]]] = 0
        return len(self.target.encode_waits(vals)) == before

    def _fold(self, inst, b, spec: list[int], g: tuple[int, ...], w: int, prev: list, cross: bool, t_b: float,
              last: dict, near: dict, later_box: list) -> bool:
        """Fold B's (`inst`, `spec`) wait `w` on counter `g` into the anchor of `prev` if the
        model lets it (see `coalesce_waits`); `cross`: that anchor does not wait on `g` yet."""
        anchors, wave, merged = self.anchors, self.wave, self.merged
        a_inst, k = prev[0], prev[1]
        a_spec = anchors[a_inst]  # a copy made when it was met
        v = w - k if cross else min(_value(a_spec, g), w - k)
        wider = cross or a_inst.block is not b
        if wider and b in self.looped:
            # (the walk does not see a loop's previous trip: an earlier wait there may find
            # ops in flight the walk thinks are back)
            return False
        if wave is not None:
            # no fold: B waits until b_ready, then issues its wait instruction; fold: A waits
            # `delta` longer for what B needed, and B's slot goes.  Across blocks or into
            # another counter's wait, only a fold that adds no stall at all
            b_ready = wave.ready(g, w)
            a_ready = max(prev[4], ready_at(prev[3], v))
            folded_at = t_b + (a_ready - prev[4])
            added = folded_at - b_ready
            if added > 0 and (wider or added >= self.wait_cost):
                return False
            prev[4] = a_ready
            later_box[0] = max(later_box[0], folded_at)
        if cross:
            # A waits on this counter now: it is the counter's latest anchor
            last[g] = list(prev)
            del near[g]
        for c in g:
            a_spec[c] = v
            if spec[c] != -1:
                merged.setdefault(a_inst, {}).setdefault(c, []).append((inst, k))
            spec[c] = -1
        return True

    def block(self, b, has_anchors: bool, last: dict, near: dict) -> None:
        anchors, wave, groups, window = self.anchors, self.wave, self.groups, self.window
        wait_cost, by_name, info = self.wait_cost, self.by_name, self.info
        for inst in b.instrs:
            if inst.is_phi or inst.is_label:
                continue
            spec = anchors.get(inst) if has_anchors else None
            if spec is not None:
                # (the finalized plan's lists may be the incremental memo's own: copied first)
                spec = anchors[inst] = list(spec)
                touched = False
                t_b = wave.t if wave is not None else 0.0
                later = t_b
                later_box = [later]
                met = []
                for g in groups:
                    w = _value(spec, g)
                    if w == -1:
                        continue
                    prev = last.get(g)
                    # the nearest earlier anchor first, though it waits on other counters only:
                    # it takes this counter into its own wait instruction (gfx9's `s_waitcnt
                    # vmcnt(32) lgkmcnt(0)` before a barrier, where the vmcnt was needed a few
                    # instructions on); then the latest one waiting on this counter
                    other = near.get(g)
                    cands = []
                    if other is not None and (prev is None or other[2] < prev[2]) and \
                            self._joins(anchors[other[0]], g):
                        cands.append(other)
                    if prev is not None:
                        cands.append(prev)
                    if any(self._fold(inst, b, spec, g, w, cand, cand is other, t_b, last, near, later_box)
                           for cand in cands if cand[2] <= window and w - cand[1] >= 0):
                        later = max(later, later_box[0])
                        touched = True
                        continue
                    last[g] = met_entry = [inst, 0, 0, wave.pending(g) if wave is not None else (), 0.0]
                    met.append(met_entry)
                    if wave is not None:
                        later = max(later, wave.ready(g, w))
                if touched and all(v == -1 for v in spec):
                    del anchors[inst]
                kept = inst in anchors
                if kept:
                    for g in groups:
                        if _value(spec, g) == -1:
                            near[g] = e = [inst, 0, 0, wave.pending(g) if wave is not None else (), 0.0]
                            met.append(e)
                        else:
                            near.pop(g, None)
                if wave is not None:
                    wave.advance(later)
                    for e in met:
                        e[4] = wave.t  # (when its waiting ends: before the wait's own issue slot)
                    if kept:
                        wave.t += wait_cost
            if wave is not None:
                handwritten = wave.fact(inst)[1]
                if handwritten:
                    wave.advance(max([wave.t] + [wave.ready(by_name.get(n, ()), v)
                                                 for n, v in handwritten.items() if v >= 0]))
                wave.issue(inst)
            inf = info.get(inst)
            pushes = inf.pushes if inf is not None else ()
            for table in (last, near):
                for g, st in table.items():
                    for c in g:
                        if c in pushes:
                            st[1] += 1  # (one instruction pushing two timelines of a counter counts twice)
                    st[2] += 1


def _in_loops(blocks: list) -> set:
    """The blocks laid out between a back edge's target and its source (inclusive)."""
    pos = {id(b): i for i, b in enumerate(blocks)}
    out: set = set()
    for i, b in enumerate(blocks):
        for s in b.succs:
            j = pos.get(id(s))
            if j is not None and j <= i:
                out.update(blocks[j:i + 1])
    return out


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
