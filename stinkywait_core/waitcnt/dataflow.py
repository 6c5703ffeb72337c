"""WaitDataflow: the forward fixed point over per-predecessor FIFOs, and finalizePlan.

Spec: stinky-waitcnt-insertion-pass.md "WaitDataflow solver" / "finalizePlan";
upstream-algorithm.md s.6-12 and s.15 (loop-carried and LDS-ring branches).

`solve()` sweeps the RPO until no block's exit state changes (or the iteration cap), each
block's `transfer` both *plans* waits (computeRequiredWaits + redundancy elision) and
*simulates* them (trimQueues).  `finalize_plan()` re-runs the same walk driven by the
post-optimizer plan so later anchors see what will really be emitted.

The FIFOs are per *timeline* (targets/model.py): the target says which timelines exist, which
hardware counter each is counted on and which complete out of order.  A wait is decided per
timeline and then per counter: the value a counter gets is the smallest any of its timelines
needs, and the one wait instruction trims every timeline counted on it.  Under the upstream
model the timelines are upstream's five counters, one each, and everything reads as upstream.

The solver is split by concern, as SIInsertWaitcnts keeps WaitcntBrackets apart from the
pass: the state's transfer (brackets.py), computeRequiredWaits (rules.py, with the hardware
model's hazards in hazards.py), the function's instruction facts (function_facts.py) and
hazard candidates (candidates.py), LDS disjointness questions (lds_queries.py), the work
budget and widening (budget.py), overflow reports (overflow.py) and finalizePlan
(finalize.py).  This module is the fixed point itself: the join, the block walk, the sweeps.
"""

from __future__ import annotations

from ..analysis.cfg import CfgInfo
from ..diagnostics import WARNING, Diagnostic
from ..ir import Block, Function, Instruction
from ..results import Options
from ..targets.model import CK_COUNT, CK_STORE, CK_XS, CK_XV
from .brackets import XCNT_TIMELINES, Brackets
from .budget import MAX_QUEUES_BOUNDED, WORK_BUDGET_EXACT, WORK_PER_EDGE, Widening
from .candidates import HazardCandidates
from .contribution import Contribution
from .facts import HazardMaps, InstInfo
from .finalize import Finalizer
from .function_facts import FunctionFacts
from .incremental import FunctionMemo, WalkRecord, emit_key
from .lds_queries import LdsQueries
from .overflow import OverflowReports
from .producer_join import MAX_JOIN_SWEEPS, WHOLE_PATH_TIMELINES, join_by_producer
from .rules import RequiredWaits
from .sparse_solve import STEP_CHANGED, STEP_WALKED, SolveTrace, SparseSolve
from .state import (EMPTY, K_MAX_TRIPS_BACK, CounterEmitState, DataflowState, PerPredQueue, QOp,
                    WaitInsertionPlan, new_spec, share_equal_lists, shared_empty)


class WaitDataflow(FunctionFacts, HazardCandidates, LdsQueries, Brackets, RequiredWaits, Widening,
                   OverflowReports, Finalizer, SparseSolve):
    """The solver for one function, under one target and model."""

    def __init__(self, func: Function, cfg: CfgInfo, options: Options, memo: FunctionMemo | None = None,
                 units: dict | None = None, pause=None):
        """`units`: the SSA's (source, destination) register units per instruction, built
        without memtoken pseudo registers (`UseDefChains.units`), reused for the hazard maps."""
        self.func = func
        self.cfg = cfg
        self.rpo = cfg.rpo
        self.options = options
        self.target = options.target
        self.hw = self.target.model == "hw"
        #: the active timelines, in index order (every per-timeline loop runs over these)
        self.cks = self.target.timelines
        self.siblings = self.target.siblings
        self.in_order = [self.target.in_order.get(c, True) for c in range(CK_COUNT)]
        self.max_wait = self.target.max_wait
        self.xcnt_cks = XCNT_TIMELINES
        #: timelines a call leaves drained (the callee waits on entry and before it returns)
        self.call_clears = tuple(c for c in self.cks if c != CK_STORE)
        #: pushing one xcnt kind drains the other (the hardware never has both pending)
        self.implicit_drain = {CK_XV: CK_XS, CK_XS: CK_XV} if CK_XV in self.cks else {}
        self.loop_carried = options.enable_loop_carried_token_deps
        self.newest = options.count_from_instance == "newest"
        self.keep_empty = options.represent_empty_paths
        #: the loop exits whose stage-count dispatch is proven (analysis/exit_dispatch.py): a
        #: queue that came through one is dropped at an epilogue its dispatch does not select
        #: (the hardware model only; the spec's model keeps every edge)
        self.routes: dict = {}
        if self.hw:
            from ..analysis.exit_dispatch import DispatchBlocks, dispatch_narrowing
            known = None
            if memo is not None:  # (the blocks with a jump or a dispatch head, kept by the chain)
                known = memo.dispatch_blocks
                if known is None or memo.changed_blocks is None:
                    known = memo.dispatch_blocks = DispatchBlocks()
                    known.update(func.blocks)
                else:
                    known.update(memo.changed_blocks)
            self.routes = {} if known is not None and known.none() else dispatch_narrowing(func)
        self.route_sig = tuple(sorted(((id(e), id(h)), w) for (e, h), w in self.routes.items()))
        self.cap = min(256, max(64 + 8, 2 * len(self.rpo)))
        self.info: dict[Instruction, InstInfo] = {}
        self.track_trips = False
        self.memo = memo
        self.chunks: dict[Block, list[tuple]] = {}
        #: block -> (its instruction list, position by id): candidates.py's `_ahead`
        self._ahead_pos: dict = {}
        self.chunk_infos: dict[tuple, tuple] = {}
        self.block_sig: dict[Block, tuple] = {}
        #: timelines whose ops may carry an LDS effect (the LDS scan looks only there)
        self.lds_cks: tuple = ()
        #: blocks holding an instruction whose facts were re-derived (their signature changes)
        self._relinked: set[Block] = set()
        self.maps = HazardMaps()
        #: one object per value of a queue with nothing in flight (state.py `shared_empty`):
        #: most queues a join makes and a wait drains are empty, and the states kept per
        #: block, the memo's records and the replays would otherwise each hold a copy
        self.empties: dict[PerPredQueue, PerPredQueue] = memo.empties if memo is not None else {}
        #: WAW/WAR candidate sets by (block, destination ranges, order class, VMEM)
        self._cands: dict[tuple, tuple] = {}
        #: the candidate sets before the liveness filter, by (destination ranges, order
        #: class, filtered by block): shared by every block (waitcnt/candidates.py)
        self._cand_base: dict[tuple, tuple] = {}
        #: the units with a candidate at all (`_unit_masks`), made when the first instruction
        #: is linked (the hazard maps are complete by then)
        self._hazard_masks: dict[str, int] | None = None
        #: LDS address facts of this version (analysis/lds_facts.py), made on first question:
        #: `lds_source` is the callable that makes them (None: no address analysis)
        self.lds_source = None
        self._lds = None
        #: (a, b, same_trip) -> `_disjoint`'s answer for this version's facts
        self._pairs: dict = {}
        #: the previous version's answers that hold on this one (waitcnt/lds_reuse.py), and
        #: the instructions the edit added or removed (None: not an adopted version)
        self._reused: dict = {}
        self._edited: list | None = None
        #: the publish answers of this version (waitcnt/publish.py), made on first question
        self._publish = None
        #: the logs of the memoised walks being recorded (each gets every disjointness answer)
        self._qlogs: list[list] = []
        #: called between blocks of the facts, the solve and finalize (api.analyze's `pause`)
        self.pause = pause
        if memo is not None and memo.infos and memo.changed_blocks is not None \
                and memo.ssa.touched is not None and memo.target is self.target:
            self._init_incremental(memo)
        else:
            self._init_full(memo, units)
        self.entry_state: dict[Block, DataflowState] = {}
        self.exit_state: dict[Block, DataflowState] = {}
        self.emit_plan: dict[Block, list[tuple[Instruction, list[int]]]] = {}
        self.cap_hit = False
        self.sweeps = 0
        self.overflow_sites: dict[tuple[Block, int], tuple[Instruction, Instruction]] = {}
        self.diagnostics: list[Diagnostic] = []
        #: finalize outputs
        self.final_entry: dict[Block, DataflowState] = {}
        self.why: dict[Instruction, list[list[Contribution]]] = {}
        self._snapshots: dict[Instruction, tuple] | None = {}
        #: what a lazy snapshot replay needs (see finalize.py): the applied plan, and the
        #: blocks replayed so far
        self._snap_planned: dict[Instruction, list[int]] | None = None
        self._snap_blocks: dict[Block, dict[Instruction, tuple]] = {}
        #: block -> its finalize record, when the last finalize reused or made one per block
        #: (its snapshots are kept there: finalize.Finalizer._block_snapshots)
        self._snap_records: dict | None = None
        #: the solve's last walk of each block (cold solve, no memo): the queues right before
        #: each anchor, and the exit before the tensor freeze restores it
        self.anchor_before: dict[Block, dict[Instruction, tuple]] = {}
        self.walk_exit: dict[Block, DataflowState] = {}
        self.finalize_sweeps = 0
        self.finalize_converged = True
        #: bounded analysis (issue 7): widening switched on after the exact attempt failed
        self.widening = False
        self.widen_reason = ""
        #: the per-producer join (producer_join.py): the hardware model's in-order and
        #: out-of-order timelines keep only the queues that witness a producer's minimum
        #: distance; "always" from the start, "auto" once the exact attempt explodes
        self.producer_cks = tuple(c for c in self.cks if c not in WHOLE_PATH_TIMELINES)
        self.by_producer = (self.hw and not self.track_trips and options.producer_join == "always")
        #: why the function was joined by producer ("" when it was not, or from the start)
        self.join_reason = ""
        #: a solve joined by producer pushed an op out of a joined timeline's window
        self.join_overflowed = False
        self.exploded = False
        self.forced_at: dict[Instruction, set[int]] = {}
        self.widened_blocks: dict[Block, str] = {}
        self.work = 0
        self.budget = WORK_BUDGET_EXACT + WORK_PER_EDGE * sum(len(b.preds) for b in self.rpo)
        #: overflow events of each block's latest transfer
        self.block_sites: dict[Block, dict] = {}

    def merge_from_predecessors(self, bb: Block, exits: dict[Block, DataflowState],
                                join: bool = True) -> DataflowState:
        """The entry of `bb`: every predecessor's queues, tagged with it (`join` False: not yet
        joined by producer, for finalize's tail drains, which act on one predecessor's queues)."""
        entry = DataflowState()
        cks = self.cks
        seen: list[set] = [set() for _ in range(CK_COUNT)]
        work = 0
        routes = self.routes if not self.by_producer else None
        empties = self.empties
        for p in bb.preds:
            ps = exits.get(p)
            if ps is None:
                continue
            enter = routes.get((p, bb)) if routes else None
            back = self.track_trips and self.cfg.is_back_edge(p, bb)
            advances = self._advances(p) if back else []
            for c in cks:
                dst = entry.queues[c]
                have = seen[c]
                if self.keep_empty and not ps.queues[c]:
                    q = PerPredQueue(p, (), EMPTY, False, True, (), (p, bb) if enter is not None else None)
                    if q not in have:
                        q = shared_empty(empties, q)
                        have.add(q)
                        dst.append(q)
                    continue
                work += len(ps.queues[c])
                for pq in ps.queues[c]:
                    route = (p, bb) if enter is not None else None
                    if pq.route is not None and routes and enter is None:
                        way = routes.get(pq.route)
                        if way is None or bb in way[0]:
                            route = pq.route if way is not None else None  # (still in the dispatch)
                        elif bb not in way[1]:
                            continue  # an epilogue this path's exit cannot lead to
                    ops, insts = pq.ops, pq.insts
                    if back:
                        ops = tuple(self._age(e, advances) for e in ops)
                    if self.widening:
                        deduped = self._dedupe_instances(ops)
                        if deduped is not ops:
                            ops, insts = deduped, tuple(e.op for e in deduped)
                    q = PerPredQueue(p, ops, pq.sat, pq.ring_sat, False, insts, route)
                    if q not in have:
                        if not ops:
                            q = shared_empty(empties, q)
                        have.add(q)
                        dst.append(q)
        self.work += work
        if self.work > self.budget:
            self.exploded = True
        if self.widening:
            for c in cks:
                n = len(entry.queues[c])
                if n > MAX_QUEUES_BOUNDED:
                    self._force_entry_drain(bb, c, n)
        elif self.by_producer and join:
            join_by_producer(entry.queues, self.producer_cks)
        share_equal_lists(entry.queues)
        return entry

    def _advances(self, p: Block) -> list[tuple[int, int]]:
        term = p.terminator()
        return self.info[term].advances if term is not None and term in self.info else []

    def _age(self, e: QOp, advances: list[tuple[int, int]]) -> QOp:
        deltas = e.deltas
        if advances and deltas:
            ring = self.info[e.op].ring
            nd = list(deltas)
            for i, acc in enumerate(ring):
                for frame, amount in advances:
                    if acc[1] == frame and acc[2] > 0:
                        nd[i] = (nd[i] - amount) % acc[2]
            deltas = tuple(nd)
        return QOp(e.op, min(e.trips + 1, K_MAX_TRIPS_BACK), deltas)

    def transfer_block(self, bb: Block, state: DataflowState) -> list[tuple[Instruction, list[int]]]:
        """Plan and simulate one block; chunk walks are memoised when a memo is attached."""
        plan: list[tuple[Instruction, list[int]]] = []
        emit = [CounterEmitState() for _ in range(CK_COUNT)]
        sites = self.overflow_sites
        memo = self.memo if not (self.widening or self.by_producer) else None
        cks = self.cks
        if memo is None:
            events: list = []
            before: dict[Instruction, tuple] = {}
            self._walk(bb.instrs, state, emit, plan, events, before)
            self.anchor_before[bb] = before
            for c, inst, sat in events:
                self._site(sites, bb, c, inst, sat)
            return plan
        for chunk in self.chunks[bb]:
            infos = self.chunk_infos[chunk]
            emit_in = emit_key(emit, cks)
            rec = memo.find_solve(chunk, infos, state.queues, emit_in)
            if rec is not None and not self.queries_hold(rec.queries):
                rec = None
            if rec is None:
                queues_in = list(state.queues)
                part: list = []
                events = []
                log = self.recording()
                self._walk(chunk, state, emit, part, events)
                rec = WalkRecord(infos, queues_in, emit_in, list(state.queues), emit_key(emit, cks), part, events,
                                 queries=self.done(log))
                memo.store(memo.solve, chunk, rec)
            else:
                rec.restore(state.queues, emit, cks)
                self._relog(rec.queries)
            plan.extend(rec.waits)
            for c, inst, sat in rec.extra:
                self._site(sites, bb, c, inst, sat)
        return plan

    def _walk(self, instrs, state: DataflowState, emit: list[CounterEmitState],
              plan: list[tuple[Instruction, list[int]]], events: list, before: dict | None = None) -> None:
        """The solver's walk (computeRequiredWaits, redundancy elision, trimQueues); `before`
        gets the queues right before each anchor (for finalize's fast path)."""
        nothing = new_spec()
        for inst in instrs:
            if inst.is_phi or inst.is_label:
                continue
            inf = self.info[inst]
            if inf.is_wait:
                self._credit(inst, state, emit)
                continue
            if not inf.needs_check and inst not in self.forced_at:
                if inf.pushes or inf.control:
                    self._produce(inst, inf, state, emit, events)
                continue
            req, _ = self.compute_required_waits(inst, state)
            queues = tuple(state.queues) if before is not None and req != nothing else None
            spec = self._apply(req, emit, state)
            if spec is not None:
                plan.append((inst, spec))
                if queues is not None:
                    before[inst] = queues
            self._produce(inst, inf, state, emit, events)

    def solve(self) -> bool:
        """Exact solve; in bounded mode, re-solve with widening if the exact one explodes or
        hits the iteration cap (docs/decisions.md "Bounded analysis")."""
        ok = self._solve()
        if self.options.bounded and (self.exploded or self.cap_hit):
            reason = ("the exact per-predecessor state exploded"
                      if self.exploded else f"the exact solve hit the iteration cap {self.cap}")
            if self.hw and not self.track_trips and not self.by_producer \
                    and self.options.producer_join != "never":
                # the per-producer join: exact for every wait, with as many queues per join
                # as producers in flight (producer_join.py)
                self.by_producer = True
                self.cap_hit = False
                self.diagnostics = [d for d in self.diagnostics if d.code != "iteration-cap"]
                cap, self.cap = self.cap, min(self.cap, MAX_JOIN_SWEEPS)
                ok = self._solve()
                self.cap = cap
                overflow = self.join_overflowed or self._producer_overflow()
                if not (self.exploded or self.cap_hit or overflow):
                    self.join_reason = reason
                    return ok
                self.by_producer = False
                reason = (f"{reason}, and the per-producer join overflowed the 64-op window" if overflow
                          else f"{reason}, and so did the per-producer join")
            self.widen_reason = reason
            self.by_producer = False
            self.widening = True
            self.cap_hit = False
            self.diagnostics = [d for d in self.diagnostics if d.code != "iteration-cap"]
            ok = self._solve()
        return ok

    def _producer_overflow(self) -> bool:
        """A solve joined by producer pushed an op out of the 64-entry window of a timeline it
        joins: past that point a witness may stop being the minimum (producer_join.py)."""
        if not self.by_producer:
            return False
        joined = set(self.producer_cks)
        return any(c in joined for sites in self.block_sites.values() for (_, c) in sites)

    def _solve(self) -> bool:
        self.exploded = False
        self.work = 0
        # Exit states start absent, not empty: a predecessor not yet computed contributes
        # nothing, while one computed with nothing in flight contributes an empty queue
        # (represent_empty_paths).  For upstream's choices both are the same bottom.
        self.exit_state = {}
        self.block_sites = {}
        self._step_queries = False
        freeze = not self.loop_carried
        # whole-block reuse across versions needs identical input objects; ring/trip kernels
        # also read their predecessors' terminators at the join, so they walk chunks only
        memo = self.memo if not (self.widening or self.by_producer or self.track_trips) else None
        if memo is not None:
            trace = memo.trace
            memo.trace = None
            if trace is not None and trace.applies(self):
                done = self._solve_sparse(trace, memo)  # (sparse_solve.py)
                if done is not None:
                    return done
                # (it could not: the full solve below gives the same answer)
                self.exploded = False
                self.work = 0
                self.exit_state, self.block_sites = {}, {}
                self._step_queries = False
                memo.blocks = {}
        for b in self.rpo:
            self.entry_state[b] = DataflowState()
        # From sweep 2 on, a block runs only if a predecessor's exit changed since its last
        # merge: with the same inputs (and the tensor freeze already applied in sweep >= 1)
        # it would compute the same entry, plan and exit again.
        dirty: set[Block] = set()
        # A block whose merged entry equals the entry of its last walk in this solve would
        # walk to the same plan and exit (the walk is a function of the entry; widening also
        # reads the join, so it always walks): it is not walked again.  Without this, every
        # block of a loop nest walks once more only to confirm its exit.
        walked: set[Block] = set()
        #: what the next version's sparse solve replays (sparse_solve.py): each block's steps
        hist: dict[Block, list] | None = {b: [] for b in self.rpo} if memo is not None else None
        changed_at: list[set[Block]] = []
        for it in range(self.cap):
            self.sweeps = it + 1
            changed = False
            if self.exploded and self.options.bounded and not self.widening:
                return False
            frozen = freeze and it > 0
            pause, steps = self.pause, 0
            if hist is not None:
                changed_at.append(set())
            for bb in self.rpo:
                if it >= 2 and bb not in dirty:
                    continue
                dirty.discard(bb)
                if pause is not None:
                    steps += 1
                    if not steps & 15:
                        pause()
                w0 = self.work
                r = self._block_step(bb, it, frozen, memo, walked)
                if r < 0:
                    return False
                if r & STEP_CHANGED:
                    dirty.update(bb.succs)
                    changed = True
                if hist is not None:
                    hist[bb].append(self._trace_entry(bb, it, r, walked, self.work - w0))
                    if r & STEP_CHANGED:
                        changed_at[-1].add(bb)
            if not changed:
                self._report_overflow()
                if hist is not None and memo is not None:
                    memo.trace = SolveTrace(self, hist, changed_at)
                return True
        self.cap_hit = True
        anchor = self.func.blocks[0].instrs[0] if self.func.blocks and self.func.blocks[0].instrs else None
        sp = anchor.span if anchor is not None else self.func.span
        self.diagnostics.append(Diagnostic(
            WARNING, "iteration-cap",
            (f"the analysis of {self.func.name} did not settle within {self.cap} rounds: every wait planned "
             f"in it waits for 0 (safe, but maybe slower than needed)") if self.hw else
            (f"[WaitDataflow] iteration cap {self.cap} reached without convergence in @{self.func.name}; "
             f"every anchor falls back to s_wait_* 0"),
            sp.line if sp else 1, sp.col if sp else 1, function=self.func.name))
        return False

    def _block_step(self, bb: Block, it: int, frozen: bool, memo, walked: set) -> int:
        """One block of one sweep: the join, the tensor freeze, the walk (or the memoised
        record of it), on `self.entry_state`/`self.exit_state`.  Returns STEP_WALKED when
        the block's plan was (re)set, | STEP_CHANGED when its exit changed; -1: the exact
        attempt exploded (bounded mode gives up)."""
        exit_state, entry_state = self.exit_state, self.entry_state
        step = None
        if memo is not None:
            # (the join also reads the dispatch routes: an edit of scalar code elsewhere may
            # change them while every input object stays the same)
            sig = self.block_sig[bb] if not self.route_sig else (self.block_sig[bb], self.route_sig)
            step = (bb, it, sig, tuple([exit_state.get(p) for p in bb.preds]),
                    entry_state[bb] if frozen else None, exit_state.get(bb) if frozen else None)
            rec = memo.find_block(step)
            if rec is not None and (rec.queries and not self.queries_hold(rec.queries)
                                    # a skip (store_skip) holds from the same last walk
                                    or rec.entry is None and rec.exit is not entry_state[bb]):
                rec = None
            if rec is not None:  # same block, same input objects: same outputs
                self.work += rec.work
                if self.work > self.budget:
                    self.exploded = True
                    if self.options.bounded:
                        return -1
                if rec.queries:
                    self._step_queries = True
                if rec.entry is None:  # the join gives its last walk's entry: left alone
                    if rec.queries:
                        self._relog(rec.queries)
                    return 0
                entry, work = rec.entry, rec.exit
                self.emit_plan[bb] = rec.plan
                self.block_sites[bb] = rec.sites
                if rec.queries:
                    self._relog(rec.queries)
                walked.add(bb)
                step = None
                memo = None  # (reused: nothing to store)
        else:
            entry = work = None
        if step is not None or entry is None:
            keep = self.keep_live[bb]
            work_before = self.work
            blog = self.recording() if step is not None else None
            entry = self.merge_from_predecessors(bb, exit_state)
            if self.exploded and self.options.bounded and not self.widening:
                return -1
            if frozen:
                self._restore_tensor(entry, entry_state[bb], keep)
            if bb in walked and self._same_entry(bb, entry):
                if step is not None:
                    # remembered too: the next version, given the same inputs and the
                    # same last-walk entry, skips the join as well (a loop's
                    # confirming sweep is a whole sweep of joins)
                    queries = self.done(blog)
                    if queries:
                        self._step_queries = True
                    memo.store_skip(step, entry_state[bb], self.work - work_before, queries)
                elif blog is not None:
                    self.done(blog)
                return 0  # same entry as its last walk: same plan, same exit
            walked.add(bb)
            work = entry.copy()
            self.overflow_sites = {}
            self.emit_plan[bb] = self.transfer_block(bb, work)
            self.block_sites[bb] = self.overflow_sites
            if step is None:
                self.walk_exit[bb] = work.copy()
            if frozen:
                self._restore_tensor(work, exit_state[bb], keep)
            if step is not None:
                queries = self.done(blog)
                if queries:
                    self._step_queries = True
                entry, work = memo.store_block(step, entry, work, self.emit_plan[bb],
                                               self.overflow_sites, self.work - work_before, queries)
            elif blog is not None:
                self.done(blog)
        entry_state[bb] = entry
        old_exit = exit_state.get(bb)
        if work is not old_exit and work != old_exit:
            exit_state[bb] = work
            return STEP_WALKED | STEP_CHANGED
        return STEP_WALKED

    def _same_entry(self, bb: Block, entry: DataflowState) -> bool:
        """The solve need not walk `bb` again: its merged entry is the one its last walk
        started from (widening reads the join itself, so it always walks)."""
        return not self.widening and entry == self.entry_state[bb]

    def materialize_plan(self) -> WaitInsertionPlan:
        """The solver's plan as one dict (fresh lists: the optimizers change them in place)."""
        plan = WaitInsertionPlan()
        anchors = plan.anchor_waits
        get = self.emit_plan.get
        cap_hit = self.cap_hit
        for bb in self.rpo:
            ep = get(bb)
            if not ep:
                continue
            if cap_hit:
                for inst, spec in ep:
                    anchors[inst] = [0 if v != -1 else -1 for v in spec]
            else:
                for inst, spec in ep:
                    anchors[inst] = list(spec)
        return plan
