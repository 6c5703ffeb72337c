"""ShallowPredPromotion: relax a join's wait to the deepest correctable path, drain the rest.

At a join the solver's wait is sized for the shallowest constrained path (min over paths),
which over-drains deeper paths.  For every anchor wait at a block with >= 2 predecessors this
optimizer measures, per predecessor exit state, the wait that path alone needs; predecessors
that are not the block itself and have this block as their only successor are *correctable*:
they get a tail drain before their terminator so the anchor can relax to the deepest path's
value (spec "ShallowPredPromotion"; upstream-algorithm.md s.11).
"""

from __future__ import annotations

from operator import is_

from ..ir import Block, Instruction
from .dataflow import WaitDataflow
from .state import DataflowState, TailDrain, WaitInsertionPlan, count_from, new_spec


class ShallowPredPromotion:
    """The only shipped WaitPlanOptimizer."""

    name = "ShallowPredPromotion"

    def rewrite(self, plan: WaitInsertionPlan, df: WaitDataflow) -> dict[Instruction, list[int]]:
        """Relax anchors in place, set plan.tail_drains; returns {anchor: counters relaxed}.

        Each anchor's decision is a function of its spec, its facts and its predecessors'
        exit states; with an incremental memo it is reused while those compare equal (the
        states are shared objects between versions, so this is mostly identity).  A whole
        block's decisions are reused at once while its signature (instructions and facts),
        its solver plan (the specs of its anchors) and its predecessors' exits are the same
        objects as last time and none of them rests on an LDS answer: an edit elsewhere then
        costs one look-up per block, not one per anchor.
        """
        tail_min: dict[Block, list[int]] = {}
        relaxed: dict[Instruction, list[int]] = {}
        memo = df.memo if not (df.widening or df.by_producer) else None
        known = memo.promotion if memo is not None else {}
        decided: dict[Block, tuple] = {}
        exits = df.exit_state
        info = df.info
        anchors = plan.anchor_waits
        cap_hit = df.cap_hit

        def apply(consumer: Instruction, decision: list) -> None:
            spec = anchors[consumer]
            for c, anchor, tails in decision:
                for p, w in tails:
                    cur = tail_min.setdefault(p, new_spec())
                    cur[c] = w if cur[c] == -1 else min(cur[c], w)
                spec[c] = anchor
                relaxed.setdefault(consumer, []).append(c)

        emit_get, sig_get, known_get, exit_get = df.emit_plan.get, df.block_sig.get, known.get, exits.get
        for bb in df.rpo:
            preds = bb.preds
            if len(preds) < 2:
                continue
            ep = emit_get(bb)
            if not ep:
                continue
            sig = sig_get(bb)
            old = known_get(bb)
            if old is not None and _same_block_inputs(old, sig, ep, cap_hit, preds, exit_get):
                for consumer, decision in old[4]:
                    apply(consumer, decision)
                decided[bb] = old
                continue
            pe = tuple([exit_get(p) for p in preds])
            per_anchor = old[6] if old is not None else {}
            mine: dict[Instruction, tuple] = {}
            applied: list = []
            any_queries = False
            for consumer, _ in ep:
                spec = anchors.get(consumer)
                if spec is None or consumer.block is not bb:
                    continue
                key = (tuple(spec), info[consumer], pe)
                prev = per_anchor.get(consumer)
                if prev is not None and prev[0] == key and (not prev[2] or df.queries_hold(prev[2])):
                    decision, queries = prev[1], prev[2]
                else:
                    log = df.recording()
                    decision = _decide(consumer, spec, df)
                    queries = df.done(log)
                mine[consumer] = (key, decision, queries)
                any_queries = any_queries or bool(queries)
                if decision:
                    applied.append((consumer, decision))
                    apply(consumer, decision)
            if memo is not None:
                decided[bb] = (sig, ep, cap_hit, pe, applied, any_queries, mine)
        if memo is not None:
            memo.promotion = decided
        plan.tail_drains = [TailDrain(p, tail_min[p])
                            for p in sorted(tail_min, key=lambda b: (b.label, b.index))]
        return relaxed

    def rewrite_added(self, plan: WaitInsertionPlan, df: WaitDataflow,
                      promoted: dict[Instruction, list[int]]) -> dict[Instruction, list[int]]:
        """The second round, after `finalize_plan` replayed a promoted plan: the waits the
        replay added at joins (not in `promoted`, the plan it replayed) are relaxed the same
        way, from the replay's states; the new tail drains join the first round's (the
        stricter wait per predecessor and counter).  Why: a relaxed wait leaves an op in
        flight longer, and the replay may then need a wait at a later join for the one path
        that did not issue the ops after it (aiter's gfx1250 fmha fwd: a tensor fill read
        after a barrier, where one predecessor skipped the next fills); at its own join that
        wait is the shallow path's alone, and the kernel writer drains that path instead.
        The caller replays again (`finalize_plan`), which keeps every wait safe.  Not
        memoised: it runs only when the first round relaxed something and the replay added a
        wait at a join (decision 48).  Joined by producer too (a solve whose exact join
        exploded), as the first round is: `_per_pred_hw` reads a predecessor's own exit there,
        so whether the round runs does not hang on the waits elsewhere that kept the exact
        join small (fmha fwd bf16 without the scalar prefetches' xcnt lock)."""
        states = (df.final_entry, df.final_exit)
        tail_min: dict[Block, list[int]] = {td.pred: list(td.spec) for td in plan.tail_drains
                                            if td.rule == "tail-drain"}
        relaxed: dict[Instruction, list[int]] = {}
        for consumer, spec in plan.anchor_waits.items():
            bb = consumer.block
            if bb is None or len(bb.preds) < 2:
                continue
            old = promoted.get(consumer)
            added = {c for c in df.cks if spec[c] != -1 and (old is None or old[c] == -1)}
            if not added:
                continue
            for c, anchor, tails in _decide(consumer, spec, df, states, added):
                for p, w in tails:
                    cur = tail_min.setdefault(p, new_spec())
                    cur[c] = w if cur[c] == -1 else min(cur[c], w)
                spec[c] = anchor
                relaxed.setdefault(consumer, []).append(c)
        if relaxed:
            others = [td for td in plan.tail_drains if td.rule != "tail-drain"]
            plan.tail_drains = [TailDrain(p, tail_min[p])
                                for p in sorted(tail_min, key=lambda b: (b.label, b.index))] + others
        return relaxed

def _same_block_inputs(old: tuple, sig: tuple | None, ep: list, cap_hit: bool, preds: list, exit_get) -> bool:
    """The block's decisions of last time hold: the same signature and solver plan objects,
    the same cap, the same predecessor exit objects (`exit_get(pred)`, compared in one C-level
    pass), and no decision rested on an LDS answer (those are re-checked per anchor)."""
    pe = old[3]
    return (old[0] is sig and old[1] is ep and old[2] == cap_hit and not old[5]
            and len(pe) == len(preds) and all(map(is_, pe, map(exit_get, preds))))


def _per_pred_hw(consumer: Instruction, df: WaitDataflow, states: tuple | None = None) -> dict[Block, list[int]]:
    """Under the hardware model: what each predecessor's path alone requires at the anchor,
    by every rule (its queues of the converged join state, the others left out).  `states`:
    the (entry, exit) states per block it reads (default: the solve's)."""
    bb = consumer.block
    entries, exit_of = states if states is not None else (df.entry_state, df.exit_state)
    entry = entries.get(bb)
    out: dict[Block, list[int]] = {}
    if entry is None:
        return out
    for p in bb.preds:
        if p in out or exit_of.get(p) is None:
            continue
        if df.by_producer:
            # the join kept only witness queues, perhaps none of p's: p's own exit is its
            # paths' state (joined by producer itself), as the exact join would tag it
            joined = set(df.producer_cks)
            ps = exit_of[p].queues
            st = DataflowState([[q._replace(pred=p, empty_origin=False) for q in ps[c]] if c in joined
                                else [q for q in qs if q.pred is p] for c, qs in enumerate(entry.queues)])
        else:
            st = DataflowState([[q for q in qs if q.pred is p] for qs in entry.queues])
        out[p] = df.compute_required_waits(consumer, st)[0]
    return out


def _decide(consumer: Instruction, spec: list[int], df: WaitDataflow, states: tuple | None = None,
            only: set[int] | None = None) -> list[tuple[int, int, list]]:
    """[(timeline, relaxed wait, [(shallow predecessor, its tail drain)])] for one anchor;
    `states` as `_per_pred_hw` reads them, `only`: these timelines alone.

    A timeline that shares its hardware counter with another (gfx9 lgkmcnt, gfx1250 xcnt) is
    left alone: one wait instruction serves them all."""
    bb = consumer.block
    out: list[tuple[int, int, list]] = []
    per_pred = _per_pred_hw(consumer, df, states) if df.hw else None
    exit_of = states[1] if states is not None else df.exit_state
    for c in df.cks:
        if spec[c] == -1 or len(df.siblings[c]) > 1 or (only is not None and c not in only):
            continue
        if per_pred is not None:
            infos = [(p, req[c], p is not bb and len(p.succs) == 1) for p, req in per_pred.items() if req[c] >= 0]
            _choose(c, spec, infos, out)
            continue
        # the solver's flattened memop sources (collectMemOpDeps, computed once)
        deps = [src for src, sc in df.info[consumer].mem_srcs if sc == c]
        if not deps:
            continue
        infos: list[tuple[Block, int, bool]] = []
        for p in bb.preds:
            ps = exit_of.get(p)
            if ps is None:
                continue
            w = -1
            for q in ps.queues[c]:
                for d in deps:
                    n = count_from(q, d, df.newest)
                    if n > 0:
                        v = df.drain(c, n)
                        w = v if w == -1 else min(w, v)
            if w < 0:
                continue
            infos.append((p, w, p is not bb and len(p.succs) == 1))
        _choose(c, spec, infos, out)
    return out


def _choose(c: int, spec: list[int], infos: list[tuple[Block, int, bool]], out: list) -> None:
    """The relaxed anchor wait from the per-predecessor needs (spec "ShallowPredPromotion")."""
    if infos:
        corr = [w for _, w, ok in infos if ok]
        unc = [w for _, w, ok in infos if not ok]
        if not corr:
            anchor = min(unc)
        elif not unc:
            anchor = max(corr)
        else:
            anchor = min(max(corr), min(unc))
        if anchor > spec[c]:
            out.append((c, anchor, [(p, w) for p, w, ok in infos if ok and w < anchor]))
