"""finalizePlan: the dataflow replayed under the post-optimizer plan, with provenance.

Spec "finalizePlan": every anchor gets min(planned, computed) from a replay of the whole
dataflow with the plan applied, so later anchors see what will really be emitted.  When no
optimizer touched a converged plan, the solve's last walks already are that replay (fast
path).

The FIFO snapshot before every instruction (the hover's FIFO view, the review's drains,
LDS-ring provenance) is never kept for the whole function: a block's snapshots are made
when first asked for (`snapshot_at`), by replaying that block from its final entry state
under the applied plan, the same walk that finalize made.  Kept for every instruction, they
were most of the memory of a kernel with deep queues (94 of 145 MB on fmha v3 bwd: each
in-flight op pushed copies its 64-entry queues), and neither the incremental memo nor a
document nobody looks at needs them.
"""

from __future__ import annotations

from ..diagnostics import WARNING, Diagnostic
from ..ir import Block, Instruction
from ..targets.model import CK_COUNT, CK_TENSOR
from .contribution import Contribution
from .incremental import WalkRecord, emit_key
from .producer_join import join_by_producer
from .state import CounterEmitState, DataflowState, PerPredQueue, WaitInsertionPlan, new_spec, trim_queues


def final_record_holds(rec, entry: DataflowState, ep: list | None, sig: tuple) -> bool:
    """A block's finalize record of last time holds: the same entry state and solver plan
    objects (the sparse solve and the solve's memo hand an unchanged block's back as such), an
    equal signature (its instructions and facts); its LDS answers are checked by the caller."""
    return rec.entry is entry and rec.plan is ep and (rec.sig is sig or rec.sig == sig)


class Finalizer:
    """finalizePlan and the FIFO snapshots (see the module doc)."""

    @property
    def snapshots(self) -> dict[Instruction, tuple]:
        """The FIFO state before every instruction under the final plan (every block
        replayed; `snapshot_at` replays only the block asked about)."""
        if self._snapshots is None:
            snaps: dict[Instruction, tuple] = {}
            for bb in self.rpo:
                snaps.update(self._block_snapshots(bb))
            self._snapshots = snaps
        return self._snapshots

    def snapshot_at(self, inst: Instruction) -> tuple | None:
        """The FIFO state (per-counter lists of queues) right before `inst` under the final
        plan; None for an instruction finalize did not walk (a PHI, a label, an unreachable
        block's)."""
        if self._snapshots is not None:
            return self._snapshots.get(inst)
        bb = inst.block
        if bb is None:
            return self.snapshots.get(inst)
        return self._block_snapshots(bb).get(inst)

    def snapshot_lines(self) -> dict[int, Instruction]:
        """1-based line -> the first walked instruction written there (the FIFO view's
        index; no snapshot is made)."""
        out: dict[int, Instruction] = {}
        for bb in self.rpo:
            if bb in self.final_entry:
                for inst in bb.instrs:
                    if not (inst.is_phi or inst.is_label) and inst.span is not None:
                        out.setdefault(inst.span.line, inst)
        return out

    def _block_snapshots(self, bb: Block) -> dict[Instruction, tuple]:
        """The snapshots of one block: made on first use (one replay walk of the block from
        its final entry under the applied plan), then kept with the analysis.  A block whose
        finalize record of the last version held (`_finalize_with_memo`: the same entry state
        and solver plan objects, an equal signature, its LDS answers this version's) walks
        exactly as it did then, so the snapshots made then are this version's; they are kept
        in that record once made."""
        got = self._snap_blocks.get(bb)
        if got is None:
            rec = self._snap_records.get(bb) if self._snap_records is not None else None
            got = rec.parts[3] if rec is not None else None
            if not got:
                got = {}
                entry = self.final_entry.get(bb)
                if entry is not None:
                    emit = [CounterEmitState() for _ in range(CK_COUNT)]
                    self._replay(bb.instrs, entry.copy(), emit, self._snap_planned or {}, [], got)
                if rec is not None:
                    rec.parts = rec.parts[:3] + (got,)
            self._snap_blocks[bb] = got
        return got

    def _lazy_snapshots(self, planned: dict) -> None:
        """Forget the snapshots a walk recorded: they are made again per block when asked
        for (`snapshot_at`), from the final entries under `planned`."""
        self._snapshots = None
        self._snap_blocks = {}
        self._snap_planned = planned
        self._snap_records = None

    def finalize_plan(self, plan: WaitInsertionPlan, unchanged: bool = False) -> None:
        """Replay the whole dataflow with the post-optimizer plan (min of planned, computed).

        `unchanged`: no optimizer touched the converged (not cap-hit) plan.  The replay then
        runs the solver's own transfer from the same bottom, so it passes through the same
        states to the same fixed point; one recording walk from the converged entry states
        gives its result (provenance, FIFO snapshots, tensor tokens) without re-iterating.
        """
        memo = self.memo if not (self.widening or self.by_producer) else None
        if unchanged and not plan.tail_drains and not self.cap_hit and memo is not None:
            self._finalize_with_memo(plan, memo)
            return
        planned = {k: list(v) for k, v in plan.anchor_waits.items()}
        if unchanged and not plan.tail_drains and not self.cap_hit and self.memo is None \
                and all(bb in self.anchor_before and bb in self.walk_exit for bb in self.rpo):
            self._finalize_from_solve(plan, planned)
            return
        if unchanged and not plan.tail_drains and not self.cap_hit:
            new_anchors: dict[Instruction, list[int]] = {}
            tokens: dict[Instruction, list[int]] = {}
            why_all: dict = {}
            snaps: dict = {}
            self.final_entry, self.final_exit = {}, {}
            for bb in self.rpo:
                if self.pause is not None:
                    self.pause()  # (api.analyze's: a background document yields here)
                entry = self.final_entry[bb] = self.entry_state[bb]  # never mutated: shared
                st = entry.copy()
                self._replay_walk(bb, st, planned, new_anchors, tokens, why_all, snaps)
                self.final_exit[bb] = st
            self._one_walk_done(plan, planned, new_anchors, tokens, why_all)
            return
        tails: dict[Block, list[int]] = {}
        for td in plan.tail_drains:
            if td.pred not in tails and any(v != -1 for v in td.spec):
                tails[td.pred] = td.spec
        final_exit: dict[Block, DataflowState] = {}
        final_entry: dict[Block, DataflowState] = {}
        freeze = not self.loop_carried
        converged = False
        new_anchors: dict[Instruction, list[int]] = {}
        tokens: dict[Instruction, list[int]] = {}
        for it in range(self.cap):
            self.finalize_sweeps = it + 1
            changed = False
            new_anchors = {}
            tokens = {}
            why_all: dict[Instruction, list[list[Contribution]]] = {}
            snaps: dict[Instruction, list[list[PerPredQueue]]] = {}
            for bb in self.rpo:
                if self.pause is not None:
                    self.pause()
                keep = self.keep_live[bb]
                st = self.merge_from_predecessors(bb, final_exit, join=False)
                for p in bb.preds:
                    spec = tails.get(p)
                    if spec is None:
                        continue
                    for c in self.cks:
                        if spec[c] != -1:
                            keep_n = spec[c]
                            if keep_n > 0 and not self.in_order[c]:
                                continue
                            st.queues[c] = [q for q in st.queues[c] if q.pred is not p] + \
                                trim_queues([q for q in st.queues[c] if q.pred is p], keep_n, self.empties)
                if self.by_producer:  # (after the tail drains, which act on one path each)
                    join_by_producer(st.queues, self.producer_cks)
                if freeze and it > 0 and bb in final_entry:
                    self._restore_tensor(st, final_entry[bb], keep)
                final_entry[bb] = st.copy()
                self._replay_walk(bb, st, planned, new_anchors, tokens, why_all, snaps)
                if freeze and it > 0 and bb in final_exit:
                    self._restore_tensor(st, final_exit[bb], keep)
                if bb not in final_exit or final_exit[bb] != st:
                    final_exit[bb] = st
                    changed = True
            self.why = why_all
            if not changed:
                converged = True
                break
        self.final_entry = final_entry
        self.final_exit = final_exit
        self._lazy_snapshots(planned)
        self.finalize_converged = converged
        if not converged:
            sp = self.func.span
            self.diagnostics.append(Diagnostic(
                WARNING, "iteration-cap",
                (f"placing the waits of {self.func.name} did not settle within {self.cap} rounds: the waits "
                 f"shown are those of the last round (prove them with `stinkywait check --exhaustive`)")
                if self.hw else
                f"[WaitDataflow] finalizePlan iteration cap {self.cap} reached in @{self.func.name}",
                sp.line if sp else 1, sp.col if sp else 1, function=self.func.name))
        plan.anchor_waits = new_anchors
        plan.tensor_tokens = tokens

    def _finalize_with_memo(self, plan: WaitInsertionPlan, memo) -> None:
        """finalizePlan of a converged plan no optimizer touched, with the incremental memo: one
        recording walk per block from its converged entry (as `_finalize_from_solve`), each
        block's result reused whole while its entry state and its solver plan are the same
        objects as last time and its signature is equal (`FinalBlockRecord`); the planned waits
        are the solver's plan itself (no copy: this plan is replaced by the finalized one and
        nothing changes its lists after)."""
        planned = plan.anchor_waits
        new_anchors: dict[Instruction, list[int]] = {}
        tokens: dict[Instruction, list[int]] = {}
        why_all: dict = {}
        entry_state, block_sig, emit_get = self.entry_state, self.block_sig, self.emit_plan.get
        final_entry: dict = {}
        final_exit: dict = {}
        self.final_entry, self.final_exit = final_entry, final_exit
        old_get = memo._old_final_blocks.get
        now = memo.final_blocks
        pause = self.pause
        hits = 0
        held: dict = {}  # block -> its record this version (its snapshots, `_block_snapshots`)
        for bb in self.rpo:
            if pause is not None:
                pause()  # (api.analyze's: a background document yields here)
            entry = final_entry[bb] = entry_state[bb]  # never mutated: shared
            # the block's planned waits are its solver plan (same list object when the solve
            # reused the block), so identity decides here as in the solve
            ep = emit_get(bb)
            sig = block_sig[bb]
            rec = old_get(bb)
            if rec is not None and final_record_holds(rec, entry, ep, sig) \
                    and (not rec.queries or self.queries_hold(rec.queries)):
                hits += 1
                now[bb] = rec
            else:
                st = entry.copy()
                parts: tuple[dict, dict, dict, dict] = ({}, {}, {}, {})
                flog = self.recording()
                self._replay_walk(bb, st, planned, *parts)
                # (its snapshots are not stored: made again when asked for)
                rec = memo.store_final_block(bb, entry, sig, ep, st, parts[:3] + ({},), self.done(flog))
            held[bb] = rec
            final_exit[bb] = rec.exit
            anchors, toks, why = rec.parts[:3]
            if anchors:
                new_anchors.update(anchors)
                why_all.update(why)
                if toks:
                    tokens.update(toks)
        memo.hits += hits
        self._one_walk_done(plan, planned, new_anchors, tokens, why_all)
        self._snap_records = held

    def _one_walk_done(self, plan: WaitInsertionPlan, planned: dict, anchors: dict, tokens: dict,
                       why_all: dict) -> None:
        """The result of a finalize made of one recording walk per block (converged at once)."""
        self.why = why_all
        self._lazy_snapshots(planned)
        self.finalize_sweeps = 1
        self.finalize_converged = True
        plan.anchor_waits = anchors
        plan.tensor_tokens = tokens

    def _finalize_from_solve(self, plan: WaitInsertionPlan, planned: dict) -> None:
        """finalizePlan when no optimizer touched the converged plan and the solve ran without
        a memo: the replay from the converged entries would walk each block exactly as the
        solve's last walk of it did (same entry, the same requirement at every instruction, and
        min(planned, computed) is the planned wait itself), so its results are taken from that
        walk: the anchors as planned, their provenance and drained tensor tokens from the queues
        the walk saw right before each, the exits it reached.  The FIFO snapshots of every
        instruction are made only if asked (`snapshots`)."""
        why_all: dict = {}
        tokens: dict[Instruction, list[int]] = {}
        self.final_entry, self.final_exit = {}, {}
        for bb in self.rpo:
            self.final_entry[bb] = self.entry_state[bb]
            self.final_exit[bb] = self.walk_exit[bb]
            before = self.anchor_before[bb]
            for inst, spec in self.emit_plan.get(bb, ()):
                why_all[inst], toks = self._anchor_provenance(inst, before[inst], spec)
                if toks is not None:
                    tokens[inst] = toks
        self.why = why_all
        self._lazy_snapshots(planned)
        self.finalize_sweeps = 1
        self.finalize_converged = True
        plan.anchor_waits = {k: list(v) for k, v in planned.items()}  # later shaping edits the plan's own
        plan.tensor_tokens = tokens

    def _replay_walk(self, bb: Block, st: DataflowState, planned: dict, new_anchors: dict, tokens: dict,
                     why_all: dict, snaps: dict) -> None:
        """One finalize walk over a block: apply min(planned, computed), record provenance."""
        emit = [CounterEmitState() for _ in range(CK_COUNT)]
        memo = self.memo if not (self.widening or self.by_producer) else None
        cks = self.cks
        if memo is None:
            out: list = []
            self._replay(bb.instrs, st, emit, planned, out, snaps)
            self._record_applied(out, new_anchors, tokens, why_all)
            return
        for chunk in self.chunks[bb]:
            infos = self.chunk_infos[chunk]
            emit_in = emit_key(emit, cks)
            pl = tuple(None if (v := planned.get(i)) is None else tuple(v) for i in chunk)
            rec = memo.find_final(chunk, infos, st.queues, emit_in, pl)
            if rec is not None and not self.queries_hold(rec.queries):
                rec = None
            if rec is None:
                queues_in = list(st.queues)
                out = []
                part_snaps: dict = {}
                log = self.recording()
                self._replay(chunk, st, emit, planned, out, part_snaps)
                rec = WalkRecord(infos, queues_in, emit_in, list(st.queues), emit_key(emit, cks), out,
                                 [], pl, self.done(log))  # (no snapshots: made when asked for)
                memo.store(memo.final, chunk, rec)
            else:
                rec.restore(st.queues, emit, cks)
                self._relog(rec.queries)
            snaps.update(rec.extra)
            self._record_applied(rec.waits, new_anchors, tokens, why_all)

    @staticmethod
    def _record_applied(out: list, new_anchors: dict, tokens: dict, why_all: dict) -> None:
        for inst, apply, why, toks in out:
            new_anchors[inst] = list(apply)
            why_all[inst] = why
            if toks is not None:
                tokens[inst] = list(toks)

    def _replay(self, instrs, st: DataflowState, emit: list[CounterEmitState], planned: dict,
                out: list, snaps: dict) -> None:
        """The finalize walk proper; applied waits go to `out` as (inst, spec, why, tokens)."""
        last: tuple | None = None
        cks = self.cks
        for inst in instrs:
            if inst.is_phi or inst.is_label:
                continue
            inf = self.info[inst]
            snap = tuple(st.queues)  # lists are replaced, never mutated, from here on
            if snap == last:  # nothing changed since the previous instruction: share it
                snap = last
            snaps[inst] = last = snap
            if inf.is_wait:
                self._credit(inst, st, emit)
                continue
            pl = planned.get(inst)
            if pl is None and not inf.needs_check and inst not in self.forced_at:
                if inf.pushes or inf.control:
                    self._produce(inst, inf, st, emit, None)
                continue
            # provenance only where a wait is applied (a handful of anchors among thousands
            # of checked consumers): the same requirement, recomputed with recording then
            computed, _ = self.compute_required_waits(inst, st)
            want = new_spec()
            for c in cks:
                w = pl[c] if pl is not None else -1
                if computed[c] != -1:
                    w = computed[c] if w == -1 else min(w, computed[c])
                want[c] = w
            before = tuple(st.queues)
            apply = self._apply(want, emit, st)
            if apply is not None:
                out.append((inst, apply) + self._anchor_provenance(inst, before, apply))
            self._produce(inst, inf, st, emit, None)

    def _anchor_provenance(self, inst: Instruction, queues: tuple, spec: list[int]) -> tuple:
        """(contributions per timeline, tensor tokens drained or None) of the wait `spec`
        applied before `inst`, from the queues right before it."""
        why = self.compute_required_waits(inst, DataflowState(list(queues)), record=True)[1]
        # kept for the whole analysis and only read from now on: the timelines nothing
        # contributed to share one empty tuple instead of an empty list each (issue 21)
        why = [w or () for w in why]
        toks = self._drained_tokens(list(queues[CK_TENSOR]), spec[CK_TENSOR]) if spec[CK_TENSOR] != -1 else None
        return why, toks

    def _drained_tokens(self, queues: list[PerPredQueue], keep: int) -> list[int]:
        toks: set[int] = set()
        for q in queues:
            n = len(q.ops)
            for e in q.ops[:max(0, n - keep)]:
                t = self.info[e.op].tokens
                if t:
                    toks.update(t)
        return sorted(toks)
