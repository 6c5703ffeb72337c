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
"""

from __future__ import annotations

from ..analysis.cfg import CfgInfo
from ..analysis.ssa import flatten_sources
from ..diagnostics import WARNING, Diagnostic, Related
from ..ir import Block, Function, Instruction, Reg
from ..ir.records import Record
from ..results import Options
from ..targets.model import (CK_ASYNC, CK_COUNT, CK_DS, CK_KM, CK_STORE, CK_TENSOR, CK_XS, CK_XV, CTL_CALL, CTL_JUMP,
                             TIMELINE_NAMES)
from .facts import HazardMaps, InstInfo, block_structure, has_trips, make_info, unit_keys
from .hazards import hw_required

#: calls and returns: whether one is a boundary depends on the whole function (`block_structure`)
_TRANSFERS = ("s_swappc_b64", "s_swap_pc_i64", "s_call_b64", "s_call_i64", "s_setpc_b64", "s_set_pc_i64")
from .incremental import FunctionMemo, WalkRecord, chunks_of, emit_key
from .state import (EMPTY, K_MAX_TRIPS_BACK, CounterEmitState, DataflowState, PerPredQueue, QOp,
                    WaitInsertionPlan, any_in_flight, append_to_all_paths, count_from, new_spec,
                    trim_queues)

#: the bounded mode's exact attempt gives up (and re-solves with widening) once the joins of
#: one solve have copied this many per-predecessor queues: a deterministic work budget
#: (a few tenths of a second of Python); exact solves that need less are kept as they are
WORK_BUDGET_EXACT = 20_000
#: ... plus this many per CFG edge: a long kernel whose joins each copy a few queues per sweep
#: does that much honest work without exploding (the 30k-line editor benchmark kernel has
#: 7,500 edges and needs ~70,000 copies over its three sweeps)
WORK_PER_EDGE = 128
#: widening keeps at most this many queues per (block, counter) past a block's first instruction
MAX_QUEUES_BOUNDED = 16

RING_READ, RING_WRITE, RING_PUBLISH, RING_PROTECT = 0, 1, 2, 3
XCNT_TIMELINES = frozenset({CK_XV, CK_XS})
_NO_CANDIDATES = (frozenset(), (), frozenset(), ())


class Contribution(Record):
    """Why a timeline needs a wait at an anchor: one producer `op` (or a fallback, None) and
    its depth: `rule`, the `wait` it asks for, the predecessor queue `pred` it was found in,
    its `count_from` and `trips` back."""

    __slots__ = ("rule", "wait", "op", "pred", "count_from", "trips")

    def __init__(self, rule: str, wait: int, op: Instruction | None = None, pred: Block | None = None,
                 count_from: int = 0, trips: int = 0):
        self.rule, self.wait, self.op, self.pred, self.count_from, self.trips = rule, wait, op, pred, count_from, trips


class WaitDataflow:
    """The solver for one function, under one target and model."""

    def __init__(self, func: Function, cfg: CfgInfo, options: Options, memo: FunctionMemo | None = None,
                 units: dict | None = None):
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
        self.cap = min(256, max(64 + 8, 2 * len(self.rpo)))
        self.info: dict[Instruction, InstInfo] = {}
        self.track_trips = False
        self.memo = memo
        self.chunks: dict[Block, list[tuple]] = {}
        self.chunk_infos: dict[tuple, tuple] = {}
        self.block_sig: dict[Block, tuple] = {}
        #: timelines whose ops may carry an LDS effect (the LDS scan looks only there)
        self.lds_cks: tuple = ()
        #: blocks holding an instruction whose facts were re-derived (their signature changes)
        self._relinked: set[Block] = set()
        self.maps = HazardMaps()
        #: WAW/WAR candidate sets by (block, destination ranges, order class, VMEM)
        self._cands: dict[tuple, tuple] = {}
        #: the units with a candidate at all (`_unit_masks`), made when the first instruction
        #: is linked (the hazard maps are complete by then)
        self._hazard_masks: dict[str, int] | None = None
        #: block -> {block: it is the block or reaches it} (the candidates' liveness test)
        self._live_into: dict = {}
        #: LDS address facts of this version (analysis/lds_facts.py), made on first question:
        #: `lds_source` is the callable that makes them (None: no address analysis)
        self.lds_source = None
        self._lds = None
        #: (a, b, same_trip) -> `_disjoint`'s answer for this version's facts
        self._pairs: dict = {}
        #: the logs of the memoised walks being recorded (each gets every disjointness answer)
        self._qlogs: list[list] = []
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
        #: what a lazy snapshot replay needs (finalize's fast path): the applied plan
        self._snap_planned: dict[Instruction, list[int]] | None = None
        #: the solve's last walk of each block (cold solve, no memo): the queues right before
        #: each anchor, and the exit before the tensor freeze restores it
        self.anchor_before: dict[Block, dict[Instruction, tuple]] = {}
        self.walk_exit: dict[Block, DataflowState] = {}
        self.finalize_sweeps = 0
        self.finalize_converged = True
        #: bounded analysis (issue 7): widening switched on after the exact attempt failed
        self.widening = False
        self.widen_reason = ""
        self.exploded = False
        self.forced_at: dict[Instruction, set[int]] = {}
        self.widened_blocks: dict[Block, str] = {}
        self.work = 0
        self.budget = WORK_BUDGET_EXACT + WORK_PER_EDGE * sum(len(b.preds) for b in self.rpo)
        #: overflow events of each block's latest transfer
        self.block_sites: dict[Block, dict] = {}

    @property
    def snapshots(self) -> dict[Instruction, tuple]:
        """The FIFO state before every instruction under the final plan (hover, review,
        LDS-ring provenance).  Finalize's fast path leaves them to be made on first use: a
        cold plan that never shows a FIFO does not pay for the walk that records them."""
        if self._snapshots is None:
            snaps: dict[Instruction, tuple] = {}
            planned = self._snap_planned or {}
            for bb in self.rpo:
                entry = self.final_entry.get(bb)
                if entry is not None:
                    self._replay_walk(bb, entry.copy(), planned, {}, {}, {}, snaps)
            self._snapshots = snaps
        return self._snapshots

    @snapshots.setter
    def snapshots(self, value: dict[Instruction, tuple]) -> None:
        self._snapshots = value

    # --- per-instruction facts ---------------------------------------------------------
    def drain(self, c: int, n: int) -> int:
        """The immediate that retires an op with countFrom n on timeline c (-1: nothing)."""
        if n <= 0:
            return -1
        if not self.in_order[c]:
            return 0
        w = n - 1
        m = self.max_wait[c]
        return w if w < m else m

    @staticmethod
    def contribution(rule: str, w: int, op=None, pred=None, n: int = 0, trips: int = 0) -> Contribution:
        return Contribution(rule, w, op, pred, n, trips)

    def _fresh_info(self, inst: Instruction) -> InstInfo:
        return make_info(inst, self.target, self.options.num_waves)

    def _init_full(self, memo: FunctionMemo | None, units: dict | None = None) -> None:
        known = memo.infos if memo is not None and memo.target is self.target else {}
        for b in self.rpo:
            for inst in b.instrs:
                inf = known.get(inst)
                if inf is None:
                    inf = self._fresh_info(inst)
                self.info[inst] = inf
        self._structure(self.rpo)
        self.track_trips = any(has_trips(inf) for inf in self.info.values())
        if self.hw:
            add, got = self.maps.add, (units or {}).get
            for inst, inf in self.info.items():
                if (inf.late and inf.results) or inf.locks:
                    add(inst, inf, got(inst))
        self._lds_timelines()
        touched = memo.ssa.touched if memo is not None else None
        for inst, inf in list(self.info.items()):
            # an unchanged instruction whose sources the SSA update left alone keeps its links
            if touched is None or not inf.linked or inst in touched or self.hw:
                self._link_sources(inst, self.info[inst])
        self.keep_live = {b: self._needs_live_tensor_state(b) for b in self.rpo}
        if memo is not None:
            memo.target = self.target
            for b in self.rpo:
                self._chunk_block(b)
            self._remember(memo)

    def _init_incremental(self, memo: FunctionMemo) -> None:
        """The previous version's facts, minus what is gone, plus what is new or re-linked:
        work proportional to the edit, not to the function (the hazard maps are updated with
        the same instructions; an instruction whose WAW/WAR candidates changed is re-linked)."""
        info = self.info = dict(memo.infos)
        self.maps = maps = memo.hazard_maps if memo.hazard_maps is not None else HazardMaps()
        gone = False
        units: set = set()
        for inst in list(memo.dropped) + memo.ssa.old_phis:
            inf = info.pop(inst, None)
            gone = gone or (inf is not None and has_trips(inf))
            if inf is not None and self.hw and _hazard_relevant(inf):
                maps.discard(inst)
                units.update(unit_keys(inst.dsts))
                units.update(unit_keys(inst.srcs))
        fresh: list[Instruction] = []
        changed = [b for b in self.rpo if b in memo.changed_blocks]
        for b in changed:
            for inst in b.instrs:
                if inst not in info:
                    info[inst] = self._fresh_info(inst)
                    fresh.append(inst)
        for phi in memo.ssa.new_phis:
            if phi not in info:
                info[phi] = self._fresh_info(phi)
                fresh.append(phi)
        restructured = self._structure(changed)
        if gone:
            self.track_trips = any(has_trips(inf) for inf in info.values())
        else:
            self.track_trips = memo.track_trips or any(has_trips(info[i]) for i in fresh)
        if self.hw:
            for inst in fresh:
                if _hazard_relevant(info[inst]):
                    maps.add(inst, info[inst])
                    units.update(unit_keys(inst.dsts))
                    units.update(unit_keys(inst.srcs))
        self._lds_timelines()
        linked = set()
        for inst in fresh:
            self._link_sources(inst, info[inst])
            linked.add(inst)
        # kept instructions whose sources the SSA re-solved, or whose neighbour-dependent facts
        # changed (`_structure`: their fast-path flags are derived when linked)
        for inst in list(memo.ssa.touched) + restructured:
            inf = info.get(inst)
            if inf is not None and inst not in linked:
                self._link_sources(inst, inf)
                linked.add(inst)
        if units:  # candidates of the units an edit added or removed a writer/locker of
            for inst, inf in list(info.items()):
                if inst in linked or inst.is_phi or inst.is_label:
                    continue
                if not units.isdisjoint(unit_keys(inst.dsts)):
                    self._link_sources(inst, inf)
        self.keep_live = dict(memo.keep_live)
        self.chunks = dict(memo.chunks)
        self.chunk_infos = dict(memo.chunk_infos)
        self.block_sig = dict(memo.block_sig)
        for b in changed:
            self.keep_live[b] = self._needs_live_tensor_state(b)
        for b in set(changed) | self._relinked:
            self._chunk_block(b)
        self._remember(memo)

    def _structure(self, blocks) -> list[Instruction]:
        """Clause groups, drains-after and next-instruction drains of `blocks` (neighbour-
        dependent facts: `block_structure`); an info whose fields change is replaced by an
        unlinked copy (shared facts are never mutated).  Returns the instructions replaced."""
        out: list[Instruction] = []
        if not self.hw:
            return out
        info = self.info
        # (the function's boundaries depend on its entry and jumps: their blocks always go)
        ends = [b for b in self.func.blocks
                if not b.succs or ((t := b.terminator()) is not None and t.mnemonic.startswith(_TRANSFERS))]
        blocks = list(blocks) + [b for b in self.func.blocks[:1] + ends if b not in blocks]
        want = block_structure(blocks, info, self.target, self.func)
        for b in blocks:
            for inst in b.instrs:
                inf = info.get(inst)
                if inf is None:
                    continue
                w = want.get(inst)
                table_control = self.target.sem(inst).control if inf.control == CTL_JUMP else inf.control
                if w is None:
                    if not inf.after and inf.clause is None and inf.in_clause is None and not inf.entry \
                            and table_control == inf.control:
                        continue  # no neighbour-dependent fact before or now (most instructions)
                    w = ((), None, None, None, None, ())
                after, clause, in_clause, drain, control, entry = w
                if drain is None:
                    drain = inf.drain  # (not neighbour-dependent: the table's)
                if control is None:
                    control = table_control
                if (inf.after, inf.clause, inf.in_clause, inf.drain, inf.control, inf.entry) != \
                        (after, clause, in_clause, drain, control, entry):
                    nc = inf.copy()
                    nc.after, nc.clause, nc.in_clause, nc.drain = after, clause, in_clause, drain
                    nc.control, nc.entry = control, entry
                    nc.linked = False
                    info[inst] = nc
                    out.append(inst)
                    if inst.block is not None:
                        self._relinked.add(inst.block)
        return out

    def _lds_timelines(self) -> None:
        if not self.hw:
            return
        engines: dict[int, set[str]] = {}
        for inf in self.info.values():
            if inf.lds:
                for c in inf.results:
                    engines.setdefault(c, set()).add(inf.engine)
        self.lds_cks = tuple(c for c in self.cks if c in engines)
        #: the LDS engines whose ops each of those timelines carries (a scan for an access of
        #: engine e skips a timeline that carries e only: one engine is ordered with itself)
        self.lds_engines = {c: frozenset(e) for c, e in engines.items()}

    def _chunk_block(self, b: Block) -> None:
        for ch in self.chunks.get(b, ()):
            self.chunk_infos.pop(ch, None)
        cs = self.chunks[b] = chunks_of(b)
        for ch in cs:
            self.chunk_infos[ch] = tuple(self.info[i] for i in ch)
        self.block_sig[b] = (tuple(cs), tuple(self.chunk_infos[ch] for ch in cs))

    def _remember(self, memo: FunctionMemo) -> None:
        memo.infos = self.info
        memo.track_trips = self.track_trips
        memo.keep_live = self.keep_live
        memo.chunks = self.chunks
        memo.chunk_infos = self.chunk_infos
        memo.block_sig = self.block_sig
        memo.hazard_maps = self.maps

    def _link_sources(self, inst: Instruction, inf: InstInfo) -> None:
        """Flatten the SSA sources to (memop, timeline) pairs; the WAW/WAR candidates.

        phiCurrentQueueWait recurses through PHI inputs and folds every concrete memop of the
        counter against the live queues, exactly as a direct source is folded, so the PHIs
        are resolved once here instead of at every sweep.  A producer is waited for on every
        timeline its result completes on.
        """
        mem: list[tuple[Instruction, int]] = []
        info = self.info
        for src in flatten_sources(inst):
            si = info.get(src)
            if si is None:
                si = self._fresh_info(src)
            for c in si.results:
                mem.append((src, c))
        mem_srcs = tuple(mem)
        waw: frozenset = frozenset()
        war: frozenset = frozenset()
        waw_cks: tuple = ()
        war_cks: tuple = ()
        if self.hw and inst.dsts and not inst.is_phi:
            waw, waw_cks, war, war_cks = self._hazard_candidates(inst, inf)
        if inf.linked:
            if (inf.mem_srcs, inf.waw, inf.war) == (mem_srcs, waw, war):
                return  # a previous version's facts, still exact
            # shared with the previous version's memo records: never mutate, replace
            inf = self.info[inst] = inf.copy()
            if inst.block is not None:
                self._relinked.add(inst.block)
        inf.linked = True
        inf.mem_srcs = mem_srcs
        inf.waw, inf.waw_cks, inf.war, inf.war_cks = waw, waw_cks, war, war_cks
        if self.hw:
            inf.simple = not (waw or war or inf.lds or inf.fence or inf.drain or inf.after or inf.control or inf.entry
                              or inf.ring or inf.lc_war is not None or inf.lc_raw is not None
                              or self.options.enable_tensor_descriptor_war)
            inf.needs_check = bool(mem or not inf.simple or inf.clause) and not inf.is_wait
        else:
            inf.needs_check = bool(
                mem or inf.tensor_anchor or inf.lds_writer or inf.fence or inf.ring
                or inf.lc_war is not None or inf.lc_raw is not None
                or (self.options.enable_tensor_descriptor_war and not inf.is_wait and inst.dsts))

    def _hazard_candidates(self, inst: Instruction, inf: InstInfo) -> tuple:
        """(WAW writers, their timelines, WAR lockers, their lock timelines) for the
        registers `inst` writes; writes that land in order with `inst`'s own are exempt, and
        so is an older VMEM translation when `inst` is VMEM itself.  Only ops that can be in
        flight here count (in this block, or a block that reaches it); the sets are shared by
        the instructions of a block that write the same registers."""
        writers, lockers = self.maps.writers, self.maps.lockers
        if not writers and not lockers:
            return _NO_CANDIDATES
        masks = self._hazard_masks
        if masks is None:
            masks = self._hazard_masks = _unit_masks(writers, lockers)
        dkey = []
        hit_unit = False
        for op in inst.dsts:
            if type(op) is Reg:
                kind, lo, hi = op.kind, op.lo, op.hi
                dkey.append((kind, lo, hi))
                if not hit_unit:
                    m = masks.get(kind)
                    hit_unit = m is not None and (lo < 0 or (m >> lo) & ((1 << (hi - lo + 1)) - 1) != 0)
        if not hit_unit:  # no unit it writes has a late writer or a source lock anywhere
            return _NO_CANDIDATES
        dkey = tuple(dkey)
        order = inf.order if inf.late else None
        vmem = CK_XV in inf.pushes
        key = (inst.block, dkey, order, vmem)
        hit = self._cands.get(key)
        if hit is None:
            hit = self._cands[key] = self._candidates(inst.block, dkey, order, vmem)
        waw, waw_cks, war, war_cks = hit
        if inst in waw or inst in war:
            # its own earlier instance (last trip) is a WAW writer when its writes may land out
            # of order and its block lies on a cycle: the next trip's write may otherwise be
            # overtaken by the previous one (SMEM, gfx12+ VMEM; LLVM waits there too).  As a
            # WAR locker it never is: it reads its sources before it writes.
            own = (inst in waw and order is None and inst.block is not None
                   and self.cfg.reaches(inst.block, inst.block))
            waw, war = (waw if own else waw - {inst}), war - {inst}
            if not war:
                war_cks = ()
        return waw, waw_cks, war, war_cks

    def _candidates(self, home: Block | None, dkey: tuple, order, vmem: bool) -> tuple:
        writers, lockers = self.maps.writers, self.maps.lockers
        waw: set[Instruction] = set()
        war: set[Instruction] = set()
        for kind, lo, hi in dkey:
            for i in range(lo, hi + 1):
                k = (kind, i)
                w = writers.get(k)
                if w:
                    waw.update(w)
                lk = lockers.get(k)
                if lk:
                    war.update(lk)
        if not waw and not war:
            return _NO_CANDIDATES
        info = self.info
        if home is not None:
            reaches = self.cfg.reaches
            live_blocks = self._live_into.get(home)
            if live_blocks is None:
                live_blocks = self._live_into[home] = {}

            def live(p: Instruction) -> bool:
                pb = p.block
                v = live_blocks.get(pb)
                if v is None:
                    v = live_blocks[pb] = pb is home or (pb is not None and reaches(pb, home))
                return v
            waw = {p for p in waw if live(p) and (order is None or info[p].order != order)}
            war = {p for p in war if live(p)}
        elif order is not None:
            waw = {p for p in waw if info[p].order != order}
        waw_cks = tuple(sorted({c for p in waw for c in info[p].results}))
        war_cks = tuple(sorted({c for p in war for c in info[p].locks if not (vmem and c == CK_XV)}))
        if not war_cks:
            war = set()
        return frozenset(waw), waw_cks, frozenset(war), war_cks

    def _needs_live_tensor_state(self, b: Block) -> bool:
        """Blocks that keep live (unfrozen) tensor queues: untagged tensor anchors (under the
        hardware model: untagged LDS accesses and barriers), loop-carried RAW readers and
        LDS-ring annotated instructions."""
        for inst in b.instrs:
            if inst.is_phi or inst.is_label:
                continue
            inf = self.info[inst]
            if inf.tokens is None and (inf.tensor_anchor or (self.hw and (inf.lds or inf.fence))):
                return True
            if inf.lc_raw is not None or inf.ring:
                return True
        return False

    def raw_needs_wait(self, c: int, inf: InstInfo) -> bool:
        return inf.tensor_raw if c == CK_TENSOR else True

    def still_in_flight(self, op: Instruction, queues: list) -> bool:
        """`op` is still in flight on one of its result timelines on some path (an op with no
        result timeline, e.g. a prefetch, is retired only where it is held: True)."""
        results = self.info[op].results
        if not results:
            return True
        for c in results:
            for q in queues[c]:
                if op in q.insts or op in q.sat:
                    return True
        return False

    def _facts(self):
        if self._lds is None and self.lds_source is not None:
            self._lds = self.lds_source() or False
        return self._lds or None

    def lds_disjoint(self, a: Instruction, b: Instruction, same_trip: bool) -> bool:
        """The address analysis proves the LDS accesses of `a` and `b` disjoint (the answer is
        logged for the walks being memoised)."""
        ans = self._disjoint(a, b, same_trip)
        if self._qlogs:
            q = (a, b, same_trip, ans)
            for log in self._qlogs:
                log.append(q)
        return ans

    def lds_why(self, a: Instruction, b: Instruction, same_trip: bool) -> str:
        """Why `a` and `b` could not be proven disjoint ("" without an address analysis)."""
        facts = self._facts()
        return facts.why_not_proven(a, b, same_trip) if facts is not None else ""

    def _disjoint(self, a: Instruction, b: Instruction, same_trip: bool) -> bool:
        """The analysis' answer for the pair, asked once per version (`_pairs`)."""
        key = (a, b, same_trip)
        ans = self._pairs.get(key)
        if ans is None:
            facts = self._facts()
            # the machine model says both touch LDS: an access the address analysis does not
            # recognise is unknown, never "no LDS memory"
            ans = self._pairs[key] = (facts is not None and facts.access(a) is not None
                                      and facts.access(b) is not None and not facts.may_overlap(a, b, same_trip))
        return ans

    def queries_hold(self, queries) -> bool:
        """A memoised walk's disjointness answers are still this version's."""
        if not queries:
            return True
        for a, b, same_trip, ans in queries:
            if ans != self._disjoint(a, b, same_trip):
                return False
        return True

    def recording(self) -> list:
        """Start logging disjointness answers for a walk being memoised (see `done`)."""
        log: list = []
        self._qlogs.append(log)
        return log

    def done(self, log: list) -> tuple:
        for i, active in enumerate(self._qlogs):
            if active is log:  # (by identity: two logs with equal contents are different walks)
                del self._qlogs[i]
                break
        return tuple(log)

    def _relog(self, queries) -> None:
        """A reused walk's answers belong to the enclosing walks being recorded too."""
        if queries and self._qlogs:
            for log in self._qlogs:
                log.extend(queries)

    @staticmethod
    def trips_of(q: PerPredQueue, op: Instruction) -> int:
        for e in q.ops:
            if e.op is op:
                return e.trips
        return 0

    # --- join ------------------------------------------------------------------------------
    def merge_from_predecessors(self, bb: Block, exits: dict[Block, DataflowState]) -> DataflowState:
        entry = DataflowState()
        cks = self.cks
        seen: list[set] = [set() for _ in range(CK_COUNT)]
        work = 0
        for p in bb.preds:
            ps = exits.get(p)
            if ps is None:
                continue
            back = self.track_trips and self.cfg.is_back_edge(p, bb)
            advances = self._advances(p) if back else []
            for c in cks:
                dst = entry.queues[c]
                have = seen[c]
                if self.keep_empty and not ps.queues[c]:
                    q = PerPredQueue(p, (), EMPTY, False, True, ())
                    if q not in have:
                        have.add(q)
                        dst.append(q)
                    continue
                work += len(ps.queues[c])
                for pq in ps.queues[c]:
                    ops, insts = pq.ops, pq.insts
                    if back:
                        ops = tuple(self._age(e, advances) for e in ops)
                    if self.widening:
                        deduped = self._dedupe_instances(ops)
                        if deduped is not ops:
                            ops, insts = deduped, tuple(e.op for e in deduped)
                    q = PerPredQueue(p, ops, pq.sat, pq.ring_sat, False, insts)
                    if q not in have:
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
        return entry

    def _dedupe_instances(self, ops: tuple[QOp, ...]) -> tuple[QOp, ...]:
        """Widening: keep only the newest dynamic instance of each (non-ring) instruction.

        Sound in newest-instance mode: the newest instance decides every RAW and anti-dep
        wait, and dropping an older copy can only lower the depth of older ops (a stronger
        wait).  Trips take the maximum so loop-carried scans still see the old instance.
        """
        if len(ops) < 2:
            return ops
        seen: dict[Instruction, int] = {}
        out: list[QOp] = []
        for e in reversed(ops):
            if e.deltas:  # ring instances alias different slots: keep them all
                out.append(e)
                continue
            j = seen.get(e.op)
            if j is None:
                seen[e.op] = len(out)
                out.append(e)
            elif e.trips > out[j].trips:
                out[j] = QOp(e.op, e.trips, e.deltas)
        if len(out) == len(ops):
            return ops
        out.reverse()
        return tuple(out)

    def _force_entry_drain(self, bb: Block, c: int, n: int) -> None:
        """Widening: too many distinct paths meet here; drain counter c at the block's first
        instruction so the state collapses (a stronger wait, never a weaker one)."""
        first = next((i for i in bb.instrs if not i.is_phi and not i.is_label
                      and not self.info[i].is_wait), None)
        if first is None:
            return
        cs = self.forced_at.setdefault(first, set())
        if c not in cs:
            cs.add(c)
            self.widened_blocks[bb] = (f"{n} distinct {TIMELINE_NAMES[c]} paths meet at ^{bb.name}: "
                                       f"forced {self.target.counter_of[c]} 0 at its first instruction")

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

    # --- dependencies ----------------------------------------------------------------------
    def compute_required_waits(self, inst: Instruction, state: DataflowState,
                               record: bool = False) -> tuple[list[int], list[list[Contribution]] | None]:
        inf = self.info[inst]
        queues = state.queues
        if self.hw:
            if not inf.needs_check and inst not in self.forced_at and not record:
                return new_spec(), None
            req, why = hw_required(self, inst, inf, queues, record)
            if inf.clause:
                for m in inf.clause:
                    mr, mw = hw_required(self, m, self.info[m], queues, record)
                    for c in self.cks:
                        if mr[c] != -1 and (req[c] == -1 or mr[c] < req[c]):
                            req[c] = mr[c]
                        if why is not None and mw is not None:
                            why[c].extend(mw[c])
            if inf.ring or inf.lc_war is not None or inf.lc_raw is not None:
                self._annotated_rules(inst, inf, queues, req, why)
            if self.options.enable_tensor_descriptor_war and not inf.is_wait and inst.dsts:
                self._descriptor_war(inst, queues[CK_TENSOR], self._tightener(req, why))
            forced = self.forced_at.get(inst)
            if forced:
                for c in forced:
                    if any_in_flight(queues[c]):
                        self._force_zero(req, why, c, "widening")
            return req, why
        return self._upstream_required(inst, inf, queues, record)

    def _tightener(self, req: list[int], why):
        def tighten(c: int, w: int, rule: str, op=None, pred=None, n=0, trips=0) -> None:
            if w < 0:
                return
            if req[c] == -1 or w < req[c]:
                req[c] = w
            if why is not None:
                why[c].append(Contribution(rule, w, op, pred, n, trips))
        return tighten

    def _annotated_rules(self, inst: Instruction, inf: InstInfo, queues, req, why) -> None:
        """Branches B1/B2 (LDS-ring and loop-carried annotations) under the hardware model."""
        tighten = self._tightener(req, why)
        if inf.ring:
            self._ring_scans(inst, inf, queues, tighten)
        self._loop_carried(inst, inf, queues, tighten)

    def _loop_carried(self, inst: Instruction, inf: InstInfo, queues, tighten) -> None:
        """Branch B1: loop-carried WAR (DS readers of earlier trips) and RAW (tensor fills)."""
        if inf.lc_war is not None:
            wtoks, dist = inf.lc_war
            self._scan_ds_anti(inst, wtoks, queues[CK_DS], False, tighten, max(1, dist), "loop-carried-war")
        if inf.lc_raw is not None:
            rtoks, dist = inf.lc_raw
            need = max(1, dist)
            for q in queues[CK_TENSOR]:
                n = len(q.ops)
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is inst or e.trips < need:
                        continue
                    et = self.info[e.op].tokens
                    if et is None or _overlaps(et, rtoks):
                        tighten(CK_TENSOR, self.drain(CK_TENSOR, n - idx), "loop-carried-raw", e.op, q.pred,
                                n - idx, e.trips)
                        break

    def _upstream_required(self, inst: Instruction, inf: InstInfo, queues: list, record: bool):
        """computeRequiredWaits under upstream's model (upstream-algorithm.md s.7)."""
        req = new_spec()
        newest = self.newest
        drain = self.drain
        if not record and not (inf.tensor_anchor or inf.lds_writer or inf.fence or inf.ring
                               or inf.lc_war is not None or inf.lc_raw is not None
                               or self.options.enable_tensor_descriptor_war or inst in self.forced_at):
            # register RAW only (most consumers), no provenance asked: rule 1 alone, inline
            for src, c in inf.mem_srcs:
                if c == CK_TENSOR and not inf.tensor_raw:
                    continue
                for q in queues[c]:
                    n = count_from(q, src, newest)
                    if n > 0:
                        w = drain(c, n)
                        if w >= 0 and (req[c] == -1 or w < req[c]):
                            req[c] = w
            return req, None
        why: list[list[Contribution]] | None = [[] for _ in range(CK_COUNT)] if record else None
        tighten = self._tightener(req, why)
        if not inf.needs_check and inst not in self.forced_at:
            return req, why
        # 1. RAW from SSA sources, PHIs flattened once (phiCurrentQueueWait folds every
        #    concrete input against the live queues, as for a direct source); ring-annotated
        #    anchors rely on the ring scans for tensors
        for src, c in inf.mem_srcs:
            if not self.raw_needs_wait(c, inf) or (c == CK_TENSOR and inf.ring):
                continue
            for q in queues[c]:
                n = count_from(q, src, newest)
                if n > 0:
                    tighten(c, drain(c, n), "raw", src, q.pred, n, self.trips_of(q, src))
        # 2. tensor-descriptor WAR (opt-in)
        if self.options.enable_tensor_descriptor_war and not inf.is_wait and inst.dsts:
            self._descriptor_war(inst, queues[CK_TENSOR], tighten)
        # B2 ring scans (before the DS anti-dep scan; not gated by rawNeedsWait)
        if inf.ring:
            self._ring_scans(inst, inf, queues, tighten)
        # 3. DS anti-dependencies
        toks = inf.tokens
        if toks:
            if inf.lds_writer:
                self._scan_ds_anti(inst, toks, queues[CK_DS], False, tighten, 0)
            if inf.fence:
                self._scan_ds_anti(inst, toks, queues[CK_DS], True, tighten, 0)
        # B1 loop-carried hazards
        self._loop_carried(inst, inf, queues, tighten)
        # 4. untagged tensor producers at tagged tensor anchors
        if inf.tensor_anchor and toks:
            for q in queues[CK_TENSOR]:
                n = len(q.ops)
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is not inst and self.info[e.op].tokens is None:
                        tighten(CK_TENSOR, drain(CK_TENSOR, n - idx), "untagged-tensor", e.op, q.pred, n - idx,
                                e.trips)
                        break
        # 5. async anti-dependencies
        if (inf.lds_writer or inf.fence) and toks:
            for q in queues[CK_ASYNC]:
                n = len(q.ops)
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is inst:
                        continue
                    et = self.info[e.op].tokens
                    if et is None or _overlaps(et, toks):
                        tighten(CK_ASYNC, drain(CK_ASYNC, n - idx), "async-war", e.op, q.pred, n - idx, e.trips)
                        break
        # widening: forced entry drains (bounded mode only)
        forced = self.forced_at.get(inst)
        if forced:
            for c in forced:
                if any_in_flight(queues[c]):
                    self._force_zero(req, why, c, "widening")
        # 6. conservative fallbacks
        if inf.tensor_anchor and toks is None and any_in_flight(queues[CK_TENSOR]):
            self._force_zero(req, why, CK_TENSOR, "fallback-untagged-tensor-anchor")
        if (inf.lds_writer or inf.fence) and toks is None and any_in_flight(queues[CK_ASYNC]):
            self._force_zero(req, why, CK_ASYNC, "fallback-untagged-lds-writer")
        if inf.lds_writer and toks is None and any_in_flight(queues[CK_DS]) and not _is_ds(inf):
            self._force_zero(req, why, CK_DS, "fallback-untagged-lds-writer")
        if inf.fence and any_in_flight(queues[CK_DS]):
            if toks is None or any(self.info[e.op].tokens is None for q in queues[CK_DS] for e in q.ops):
                self._force_zero(req, why, CK_DS, "fallback-barrier")
        return req, why

    @staticmethod
    def _force_zero(req: list[int], why, c: int, rule: str) -> None:
        req[c] = 0
        if why is not None:
            why[c].append(Contribution(rule, 0))

    def _scan_ds_anti(self, inst: Instruction, toks, queues: list[PerPredQueue], barrier_mode: bool,
                      tighten, min_trips: int, rule: str | None = None) -> None:
        inst_is_ds = self.info[inst].counter == CK_DS
        rule = rule or ("barrier" if barrier_mode else "lds-war")
        for q in queues:
            n = len(q.ops)
            for idx in range(n - 1, -1, -1):
                e = q.ops[idx]
                if e.op is inst or e.trips < min_trips:
                    continue
                oi = self.info[e.op]
                if not barrier_mode and not oi.ds_read_or_atomic:
                    continue
                if inst_is_ds:  # same pipeline: ordered by the DS FIFO
                    continue
                if oi.tokens is None or _overlaps(oi.tokens, toks):
                    tighten(CK_DS, self.drain(CK_DS, n - idx), rule, e.op, q.pred, n - idx, e.trips)
                    break

    def _descriptor_war(self, inst: Instruction, queues: list[PerPredQueue], tighten) -> None:
        dregs = [r for r in inst.dsts if isinstance(r, Reg)]
        for q in queues:
            n = len(q.ops)
            for idx in range(n - 1, -1, -1):
                op = q.ops[idx].op
                if op is inst or not op.mnemonic.startswith("tensor_load_to_lds"):
                    continue
                if any(d.overlaps(s) for d in dregs for s in op.srcs if isinstance(s, Reg)):
                    tighten(CK_TENSOR, min(n - idx - 1, self.max_wait[CK_TENSOR]), "descriptor-war", op, q.pred,
                            n - idx)
                    break

    def _ring_scans(self, inst: Instruction, inf: InstInfo, queues, tighten) -> None:
        """Branch B2: rotating LDS-ring alias scans (anchor kind vs producer kind)."""
        pairs = ((CK_TENSOR, RING_PUBLISH, RING_WRITE), (CK_DS, RING_PROTECT, RING_READ),
                 (CK_TENSOR, RING_READ, RING_WRITE), (CK_DS, RING_WRITE, RING_READ))
        for c, akind, pkind in pairs:
            anchors = [a for a in inf.ring if a[4] == akind]
            if not anchors:
                continue
            for q in queues[c]:
                if q.ring_sat:
                    tighten(c, 0, "ring-saturated", None, q.pred)
                    continue
                n = len(q.ops)
                hit = False
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is inst:
                        continue
                    pring = self.info[e.op].ring
                    for ai, pa in enumerate(pring):
                        if pa[4] != pkind:
                            continue
                        delta = e.deltas[ai] if ai < len(e.deltas) else 0
                        for ca in anchors:
                            if (pa[0] == ca[0] and pa[1] == ca[1] and pa[2] == ca[2] and pa[2] > 0
                                    and (delta + pa[3]) % pa[2] == ca[3] % pa[2]):
                                tighten(c, self.drain(c, n - idx), "lds-ring", e.op, q.pred, n - idx, e.trips)
                                hit = True
                                break
                        if hit:
                            break
                    if hit:
                        break

    # --- transfer --------------------------------------------------------------------------
    def trim(self, state: DataflowState, c: int, keep: int) -> None:
        """Model ``<counter of c> <= keep`` on timeline c (out of order: only 0 retires)."""
        if keep > 0 and not self.in_order[c]:
            return
        qs = state.queues[c]
        if qs:
            state.queues[c] = trim_queues(qs, keep)

    def credited(self, inst: Instruction) -> list[tuple[int, int]]:
        """[(timeline, value)] a pre-existing wait enforces (every timeline of each counter)."""
        return credited_waits(self.target, inst)

    def _credit(self, inst: Instruction, state: DataflowState, emit: list[CounterEmitState]) -> None:
        credited = False
        for c, w in self.credited(inst):
            if w < 0 or (not self.in_order[c] and w != 0):
                continue
            self.trim(state, c, w)
            emit[c].record_emitted(w)
            credited = True
        if credited and self.implicit_drain:
            self.sync_translations(state)

    def sync_translations(self, state: DataflowState) -> None:
        """An op retired on its result counter has been translated: drop it from the xcnt
        timelines (on the in-order VMEM one, every older entry with it; AMDGPUUsage GFX125x:
        waiting on a memory counter also waits on xcnt)."""
        queues = state.queues
        for c in (CK_XV, CK_XS):
            qs = queues[c]
            if not qs or not any(q.ops for q in qs):
                continue
            out = []
            changed = False
            for q in qs:
                ops = q.ops
                keep = ops
                if c == CK_XV:
                    for idx in range(len(ops) - 1, -1, -1):
                        if not self.still_in_flight(ops[idx].op, queues):
                            keep = ops[idx + 1:]
                            break
                else:
                    keep = tuple(e for e in ops if self.still_in_flight(e.op, queues))
                if keep is not ops and len(keep) != len(ops):
                    changed = True
                    out.append(PerPredQueue(q.pred, keep, q.sat, q.ring_sat, q.empty_origin,
                                            tuple(e.op for e in keep)))
                else:
                    out.append(q)
            if changed:
                queues[c] = out

    def _produce(self, inst: Instruction, inf: InstInfo, state: DataflowState,
                 emit: list[CounterEmitState], events: list | None) -> None:
        if inf.control == CTL_CALL:
            for c in self.call_clears:
                self.trim(state, c, 0)
        pushes = inf.pushes
        if not pushes:
            return
        qop = QOp(inst, 0, (0,) * len(inf.ring))
        for c in pushes:
            other = self.implicit_drain.get(c)
            if other is not None and state.queues[other]:
                self.trim(state, other, 0)
            state.queues[c], sat = append_to_all_paths(state.queues[c], qop)
            if sat is not None and events is not None:
                events.append((c, inst, sat))
            emit[c].since += 1

    def _apply(self, req: list[int], emit: list[CounterEmitState], state: DataflowState) -> list[int] | None:
        """Redundancy elision and counter folding of one requirement: the spec to emit (every
        timeline of a waited counter carries the counter's value) or None; trims the queues."""
        spec = None
        siblings = self.siblings
        for c in self.cks:
            r = req[c]
            if r == -1 or not emit[c].needs_new_wait(r):
                continue
            if spec is None:
                spec = new_spec()
            sib = siblings[c]
            if len(sib) > 1:
                v = r if spec[c] == -1 else min(r, spec[c])
                for s in sib:
                    if req[s] != -1 and emit[s].needs_new_wait(req[s]) and req[s] < v:
                        v = req[s]
                for s in sib:
                    spec[s] = v
            else:
                spec[c] = r
        if spec is None:
            return None
        xcnt = self.implicit_drain and (spec[CK_XV] != -1 or spec[CK_XS] != -1)
        for c in self.cks:
            v = spec[c]
            if v != -1 and not (xcnt and c in XCNT_TIMELINES):
                emit[c].record_emitted(v)
                self.trim(state, c, v)
        if self.implicit_drain:
            self.sync_translations(state)
        if xcnt:
            if not any(q.ops or q.sat for c in XCNT_TIMELINES for q in state.queues[c]):
                spec[CK_XV] = spec[CK_XS] = -1  # the other waits of this point retired them all
                if all(v == -1 for v in spec):
                    return None
            else:
                for c in XCNT_TIMELINES:
                    v = spec[c]
                    if v != -1:
                        emit[c].record_emitted(v)
                        self.trim(state, c, v)
        return spec

    def transfer_block(self, bb: Block, state: DataflowState) -> list[tuple[Instruction, list[int]]]:
        """Plan and simulate one block; chunk walks are memoised when a memo is attached."""
        plan: list[tuple[Instruction, list[int]]] = []
        emit = [CounterEmitState() for _ in range(CK_COUNT)]
        sites = self.overflow_sites
        memo = self.memo if not self.widening else None
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

    @staticmethod
    def _site(sites: dict, bb: Block, c: int, inst: Instruction, sat: Instruction) -> None:
        """An overflow event (the first per block and counter wins)."""
        sites.setdefault((bb, c), (inst, sat))

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

    def _restore_tensor(self, state: DataflowState, frozen: DataflowState | None, keep_live: bool) -> None:
        if keep_live or frozen is None:
            return
        state.queues[CK_TENSOR] = list(frozen.queues[CK_TENSOR])

    # --- solve -----------------------------------------------------------------------------
    def solve(self) -> bool:
        """Exact solve; in bounded mode, re-solve with widening if the exact one explodes or
        hits the iteration cap (docs/decisions.md "Bounded analysis")."""
        ok = self._solve()
        if self.options.bounded and (self.exploded or self.cap_hit):
            self.widen_reason = ("the exact per-predecessor state exploded"
                                 if self.exploded else f"the exact solve hit the iteration cap {self.cap}")
            self.widening = True
            self.cap_hit = False
            self.diagnostics = [d for d in self.diagnostics if d.code != "iteration-cap"]
            ok = self._solve()
        return ok

    def _solve(self) -> bool:
        self.exploded = False
        self.work = 0
        # Exit states start absent, not empty: a predecessor not yet computed contributes
        # nothing, while one computed with nothing in flight contributes an empty queue
        # (represent_empty_paths).  For upstream's choices both are the same bottom.
        self.exit_state = {}
        self.block_sites = {}
        for b in self.rpo:
            self.entry_state[b] = DataflowState()
        freeze = not self.loop_carried
        # From sweep 2 on, a block runs only if a predecessor's exit changed since its last
        # merge: with the same inputs (and the tensor freeze already applied in sweep >= 1)
        # it would compute the same entry, plan and exit again.
        dirty: set[Block] = set()
        # whole-block reuse across versions needs identical input objects; ring/trip kernels
        # also read their predecessors' terminators at the join, so they walk chunks only
        memo = self.memo if not self.widening and not self.track_trips else None
        # A block whose merged entry equals the entry of its last walk in this solve would
        # walk to the same plan and exit (the walk is a function of the entry; widening also
        # reads the join, so it always walks): it is not walked again.  Without this, every
        # block of a loop nest walks once more only to confirm its exit.
        walked: set[Block] = set()
        for it in range(self.cap):
            self.sweeps = it + 1
            changed = False
            if self.exploded and self.options.bounded and not self.widening:
                return False
            frozen = freeze and it > 0
            exit_state, entry_state = self.exit_state, self.entry_state
            for bb in self.rpo:
                if it >= 2 and bb not in dirty:
                    continue
                dirty.discard(bb)
                step = None
                if memo is not None:
                    step = (bb, it, self.block_sig[bb], tuple([exit_state.get(p) for p in bb.preds]),
                            entry_state[bb] if frozen else None, exit_state.get(bb) if frozen else None)
                    rec = memo.find_block(step)
                    if rec is not None and not self.queries_hold(rec.queries):
                        rec = None
                    if rec is not None:  # same block, same input objects: same outputs
                        self.work += rec.work
                        if self.work > self.budget:
                            self.exploded = True
                            if self.options.bounded:
                                return False
                        entry, work = rec.entry, rec.exit
                        self.emit_plan[bb] = rec.plan
                        self.block_sites[bb] = rec.sites
                        self._relog(rec.queries)
                        walked.add(bb)
                        step = None
                if step is not None or memo is None:
                    keep = self.keep_live[bb]
                    work_before = self.work
                    blog = self.recording() if step is not None else None
                    entry = self.merge_from_predecessors(bb, self.exit_state)
                    if self.exploded and self.options.bounded and not self.widening:
                        return False
                    if frozen:
                        self._restore_tensor(entry, self.entry_state[bb], keep)
                    if bb in walked and self._same_entry(bb, entry):
                        if blog is not None:
                            self.done(blog)
                        continue  # same entry as its last walk: same plan, same exit
                    walked.add(bb)
                    work = entry.copy()
                    self.overflow_sites = {}
                    self.emit_plan[bb] = self.transfer_block(bb, work)
                    self.block_sites[bb] = self.overflow_sites
                    if memo is None:
                        self.walk_exit[bb] = work.copy()
                    if frozen:
                        self._restore_tensor(work, self.exit_state[bb], keep)
                    if step is not None:
                        entry, work = memo.store_block(step, entry, work, self.emit_plan[bb],
                                                       self.overflow_sites, self.work - work_before,
                                                       self.done(blog))
                    elif blog is not None:
                        self.done(blog)
                if work != self.exit_state.get(bb):
                    self.exit_state[bb] = work
                    dirty.update(bb.succs)
                    changed = True
                self.entry_state[bb] = entry
            if not changed:
                self._report_overflow()
                return True
        self.cap_hit = True
        anchor = self.func.blocks[0].instrs[0] if self.func.blocks and self.func.blocks[0].instrs else None
        sp = anchor.span if anchor is not None else self.func.span
        self.diagnostics.append(Diagnostic(
            WARNING, "iteration-cap",
            f"[WaitDataflow] iteration cap {self.cap} reached without convergence in @{self.func.name}; "
            f"every anchor falls back to s_wait_* 0",
            sp.line if sp else 1, sp.col if sp else 1, function=self.func.name))
        return False

    def _same_entry(self, bb: Block, entry: DataflowState) -> bool:
        """The solve need not walk `bb` again: its merged entry is the one its last walk
        started from (widening reads the join itself, so it always walks)."""
        return not self.widening and entry == self.entry_state[bb]

    def _report_overflow(self) -> None:
        """One warning per (block, in-order timeline): the op pushed out and the one that did it."""
        self.overflow_sites = {k: v for bb in self.rpo for k, v in self.block_sites.get(bb, {}).items()}
        for (bb, c), (inst, pushed) in self.overflow_sites.items():
            if not self.in_order[c]:
                continue
            sp = inst.span
            psp = pushed.span
            related = [Related(psp.line, psp.col, f"{pushed.mnemonic} pushed out of the window; "
                               f"now tracked at depth 64")] if psp else []
            self.diagnostics.append(Diagnostic(
                WARNING, "overflow",
                f"[WaitDataflow] warning: block ^{bb.name} counter {counter_diag_name(self.target, c)} exceeds "
                f"kMaxInFlight=64: {pushed.mnemonic}"
                f"{f' (line {psp.line})' if psp else ''} is tracked at the maximum wait count "
                f"{self.max_wait[c]} (confirm no deeper drain is needed)",
                sp.line if sp else 1, sp.col if sp else 1, related=related, function=self.func.name,
                data={"block": bb.name, "counter": counter_short_name(self.target, c),
                      "pushed_out_line": psp.line if psp else None}))

    def materialize_plan(self) -> WaitInsertionPlan:
        plan = WaitInsertionPlan()
        for bb in self.rpo:
            for inst, spec in self.emit_plan.get(bb, []):
                s = list(spec)
                if self.cap_hit:
                    s = [0 if v != -1 else -1 for v in s]
                plan.anchor_waits[inst] = s
        return plan

    # --- finalize --------------------------------------------------------------------------
    def finalize_plan(self, plan: WaitInsertionPlan, unchanged: bool = False) -> None:
        """Replay the whole dataflow with the post-optimizer plan (min of planned, computed).

        `unchanged`: no optimizer touched the converged (not cap-hit) plan.  The replay then
        runs the solver's own transfer from the same bottom, so it passes through the same
        states to the same fixed point; one recording walk from the converged entry states
        gives its result (provenance, FIFO snapshots, tensor tokens) without re-iterating.
        """
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
            memo = self.memo if not self.widening else None
            for bb in self.rpo:
                entry = self.final_entry[bb] = self.entry_state[bb]  # never mutated: shared
                rec = None
                if memo is not None:
                    # the block's planned waits are its solver plan (same list object when the
                    # solve reused the block), so identity decides here as in the solve
                    rec = memo.find_final_block(bb, entry, self.block_sig[bb], self.emit_plan.get(bb))
                    if rec is not None and not self.queries_hold(rec.queries):
                        rec = None
                if rec is None:
                    st = entry.copy()
                    parts: tuple[dict, dict, dict, dict] = ({}, {}, {}, {})
                    flog = self.recording() if memo is not None else None
                    self._replay_walk(bb, st, planned, *parts)
                    if memo is not None:
                        rec = memo.store_final_block(bb, entry, self.block_sig[bb], self.emit_plan.get(bb),
                                                     st, parts, self.done(flog))
                    else:
                        self.final_exit[bb] = st
                        for mine, whole in zip(parts, (new_anchors, tokens, why_all, snaps)):
                            whole.update(mine)
                        continue
                self.final_exit[bb] = rec.exit
                for mine, whole in zip(rec.parts, (new_anchors, tokens, why_all, snaps)):
                    whole.update(mine)
            self.why, self.snapshots = why_all, snaps
            self.finalize_sweeps = 1
            self.finalize_converged = True
            plan.anchor_waits = new_anchors
            plan.tensor_tokens = tokens
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
                keep = self.keep_live[bb]
                st = self.merge_from_predecessors(bb, final_exit)
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
                                trim_queues([q for q in st.queues[c] if q.pred is p], keep_n)
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
            self.snapshots = snaps
            if not changed:
                converged = True
                break
        self.final_entry = final_entry
        self.final_exit = final_exit
        self.finalize_converged = converged
        if not converged:
            sp = self.func.span
            self.diagnostics.append(Diagnostic(
                WARNING, "iteration-cap",
                f"[WaitDataflow] finalizePlan iteration cap {self.cap} reached in @{self.func.name}",
                sp.line if sp else 1, sp.col if sp else 1, function=self.func.name))
        plan.anchor_waits = new_anchors
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
        self._snapshots = None
        self._snap_planned = planned
        self.finalize_sweeps = 1
        self.finalize_converged = True
        plan.anchor_waits = {k: list(v) for k, v in planned.items()}  # later shaping edits the plan's own
        plan.tensor_tokens = tokens

    def _replay_walk(self, bb: Block, st: DataflowState, planned: dict, new_anchors: dict, tokens: dict,
                     why_all: dict, snaps: dict) -> None:
        """One finalize walk over a block: apply min(planned, computed), record provenance."""
        emit = [CounterEmitState() for _ in range(CK_COUNT)]
        memo = self.memo if not self.widening else None
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
                                 list(part_snaps.items()), pl, self.done(log))
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


def _unit_masks(*tables: dict) -> dict[str, int]:
    """Register kind -> a bit mask of the unit indices that are keys of any of `tables` (a
    quick test that an instruction's destinations meet no WAW/WAR candidate at all)."""
    masks: dict[str, int] = {}
    for table in tables:
        for kind, i in table:
            masks[kind] = (masks.get(kind, 0) | (1 << i)) if i >= 0 else -1
    return masks


def _overlaps(a, b) -> bool:
    for t in a:
        if t in b:
            return True
    return False


def _hazard_relevant(inf: InstInfo) -> bool:
    """The instruction is a WAW or WAR candidate of the registers it touches."""
    return bool((inf.late and inf.results) or inf.locks)


def _is_ds(inf: InstInfo) -> bool:
    return inf.counter == CK_DS


def counter_short_name(target, c: int) -> str:
    """A timeline's counter as the JSON and the editor name it ("ds", "load", "x", "lgkm")."""
    name = target.counter_of.get(c, TIMELINE_NAMES[c])
    return name[:-3] if name.endswith("cnt") else name


def counter_diag_name(target, c: int) -> str:
    """Upstream's diagnostic spelling ("ds (dscnt)", "buffer (loadcnt)")."""
    upstream = {CK_DS: "ds (dscnt)", 1: "buffer (loadcnt)", CK_KM: "km (kmcnt)", CK_TENSOR: "tensor (tlcnt)",
                CK_ASYNC: "async (asynccnt)"}
    if target.model == "upstream" and c in upstream:
        return upstream[c]
    return f"{TIMELINE_NAMES[c]} ({target.counter_of.get(c, '?')})"


def credited_waits(target, inst: Instruction) -> list[tuple[int, int]]:
    """What a pre-existing wait drains: [(timeline, value)] for every timeline of every
    counter it names (upstream-algorithm.md s.9 under the upstream model)."""
    values = target.decode_wait(inst)
    if not values:
        return []
    out = []
    for c in target.timelines:
        v = values.get(target.counter_of[c])
        if v is not None:
            out.append((c, v))
    return out
