"""WaitDataflow: the forward fixed point over per-predecessor FIFOs, and finalizePlan.

Spec: stinky-waitcnt-insertion-pass.md "WaitDataflow solver" / "finalizePlan";
upstream-algorithm.md s.6-12 and s.15 (loop-carried and LDS-ring branches).

`solve()` sweeps the RPO until no block's exit state changes (or the iteration cap), each
block's `transfer` both *plans* waits (computeRequiredWaits + redundancy elision) and
*simulates* them (trimQueues).  `finalize_plan()` re-runs the same walk driven by the
post-optimizer plan so later anchors see what will really be emitted.
"""

from __future__ import annotations

from functools import lru_cache

from ..analysis import classify as K
from ..analysis.cfg import CfgInfo
from ..analysis.ssa import flatten_sources
from ..diagnostics import WARNING, Diagnostic, Related
from ..ir import Block, Function, Instruction, Reg
from ..ir.records import Record
from ..results import Options
from .incremental import FunctionMemo, WalkRecord, chunks_of, emit_key
from .state import (EMPTY, K_MAX_TRIPS_BACK, CounterEmitState, DataflowState, PerPredQueue, QOp,
                    WaitInsertionPlan, any_in_flight, append_to_all_paths, count_from, new_spec,
                    trim_queues, wait_to_drain)

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

CK_DS, CK_LOAD, CK_KM, CK_TENSOR, CK_ASYNC, CK_COUNT = (K.CK_DS, K.CK_LOAD, K.CK_KM, K.CK_TENSOR,
                                                        K.CK_ASYNC, K.CK_COUNT)
RING_READ, RING_WRITE, RING_PUBLISH, RING_PROTECT = 0, 1, 2, 3


class Contribution(Record):
    """Why a counter needs a wait at an anchor: one producer `op` (or a fallback, None) and
    its depth: `rule`, the `wait` it asks for, the predecessor queue `pred` it was found in,
    its `count_from` and `trips` back."""

    __slots__ = ("rule", "wait", "op", "pred", "count_from", "trips")

    def __init__(self, rule: str, wait: int, op: Instruction | None = None, pred: Block | None = None,
                 count_from: int = 0, trips: int = 0):
        self.rule, self.wait, self.op, self.pred, self.count_from, self.trips = rule, wait, op, pred, count_from, trips


class InstInfo(Record):
    """Per-instruction facts computed once per solve (classification is hot).

    `mem_srcs`: (source, counter) for memop sources, through PHIs (set after all infos
    exist); `needs_check`: False when no rule can ever ask for a wait here (most ALU code:
    skipped outright); `linked`: mem_srcs/needs_check are set (a reused InstInfo is
    re-linked by comparison).  Compared by value (the incremental memo's keys).
    """

    __slots__ = ("counter", "tokens", "ring", "advances", "lc_war", "lc_raw", "is_wait", "tensor_anchor",
                 "lds_writer", "fence", "ds_read_or_atomic", "tensor_raw", "mem_srcs", "needs_check", "linked")

    def __init__(self, counter: int, tokens: tuple[int, ...] | None, ring: list, advances: list,
                 lc_war: tuple | None, lc_raw: tuple | None, is_wait: bool, tensor_anchor: bool,
                 lds_writer: bool, fence: bool, ds_read_or_atomic: bool, tensor_raw: bool,
                 mem_srcs: tuple = (), needs_check: bool = True, linked: bool = False):
        self.counter, self.tokens, self.ring, self.advances = counter, tokens, ring, advances
        self.lc_war, self.lc_raw, self.is_wait, self.tensor_anchor = lc_war, lc_raw, is_wait, tensor_anchor
        self.lds_writer, self.fence, self.ds_read_or_atomic = lds_writer, fence, ds_read_or_atomic
        self.tensor_raw, self.mem_srcs, self.needs_check, self.linked = tensor_raw, mem_srcs, needs_check, linked

    def with_sources(self, mem_srcs: tuple) -> "InstInfo":
        """A copy with other memop sources (shared facts are never mutated)."""
        return InstInfo(*self._key(self)[:12], mem_srcs, self.needs_check, self.linked)


def _has_trips(inf: InstInfo) -> bool:
    """LDS-ring or loop-carried annotations: queued ops then carry trips and ring deltas."""
    return bool(inf.ring or inf.advances or inf.lc_war or inf.lc_raw)


@lru_cache(maxsize=8192)
def _plain_facts(mnemonic: str, tensor_raw: bool) -> tuple:
    """InstInfo's arguments but the tokens (counter, then the fields after the tokens) for an
    instruction whose mnemonic decides everything (no ring or loop-carried annotation, not an atomic or a
    barrier): the common case, so a cold run classifies each mnemonic once."""
    counter, anchor = _static_info(mnemonic)
    dk = K.ds_kind(mnemonic)
    is_wait = mnemonic in K.WAITCNT_MNEMONICS or mnemonic == "s_wait_tensorcnt"
    return counter, ((), (), None, None, is_wait, anchor,
                     dk == "store" or mnemonic.startswith("tensor_load_to_lds"), False,
                     dk in ("read", "atomic"), tensor_raw)

@lru_cache(maxsize=8192)
def _static_info(mnemonic: str) -> tuple[int, bool]:
    """(counter, tensor anchor) for mnemonics whose operands do not matter."""
    probe = Instruction(mnemonic)
    return K.classify_mem_op(probe), K.is_tensor_anchor(probe)


def _int_list(v) -> list[int]:
    if isinstance(v, list):
        return [x for x in v if isinstance(x, int)]
    if isinstance(v, int):
        return [v]
    return []


def _lc(inst: Instruction, kind: str) -> tuple[tuple[int, ...], int] | None:
    m = inst.mods.get(kind)
    if m is None:
        return None
    d = m.fields.get("distance", 1)
    return tuple(_int_list(m.fields.get("tokens", []))), d if isinstance(d, int) else 1


def _ring(inst: Instruction) -> tuple[list, list]:
    m = inst.mods.get("lds_ring")
    if m is None:
        return [], []
    acc = _int_list(m.fields.get("accesses", []))
    adv = _int_list(m.fields.get("advances", []))
    return ([tuple(acc[i:i + 5]) for i in range(0, len(acc) - 4, 5)],
            [tuple(adv[i:i + 2]) for i in range(0, len(adv) - 1, 2)])


class WaitDataflow:
    """The solver for one function.  Counters are indexed CK_DS .. CK_ASYNC."""

    def __init__(self, func: Function, cfg: CfgInfo, options: Options, memo: FunctionMemo | None = None):
        self.func = func
        self.cfg = cfg
        self.rpo = cfg.rpo
        self.options = options
        self.loop_carried = options.enable_loop_carried_token_deps
        self.newest = options.count_from_instance == "newest"
        self.keep_empty = options.represent_empty_paths
        self.cap = min(256, max(K.K_MAX_IN_FLIGHT + 8, 2 * len(self.rpo)))
        self.info: dict[Instruction, InstInfo] = {}
        self.track_trips = False
        self.memo = memo
        self.chunks: dict[Block, list[tuple]] = {}
        self.chunk_infos: dict[tuple, tuple] = {}
        self.block_sig: dict[Block, tuple] = {}
        #: blocks holding an instruction whose facts were re-derived (their signature changes)
        self._relinked: set[Block] = set()
        if memo is not None and memo.infos and memo.changed_blocks is not None \
                and memo.ssa.touched is not None:
            self._init_incremental(memo)
        else:
            self._init_full(memo)
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
        self.snapshots: dict[Instruction, list[list[PerPredQueue]]] = {}
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

    # --- per-instruction facts ---------------------------------------------------------
    def _init_full(self, memo: FunctionMemo | None) -> None:
        known = memo.infos if memo is not None else {}
        for b in self.rpo:
            for inst in b.instrs:
                inf = known.get(inst)
                if inf is None:
                    inf = self._make_info(inst)
                self.info[inst] = inf
        self.track_trips = any(_has_trips(inf) for inf in self.info.values())
        touched = memo.ssa.touched if memo is not None else None
        for inst, inf in list(self.info.items()):
            # an unchanged instruction whose sources the SSA update left alone keeps its links
            if touched is None or not inf.linked or inst in touched:
                self._link_sources(inst, inf)
        self.keep_live = {b: self._needs_live_tensor_state(b) for b in self.rpo}
        if memo is not None:
            for b in self.rpo:
                self._chunk_block(b)
            self._remember(memo)

    def _init_incremental(self, memo: FunctionMemo) -> None:
        """The previous version's facts, minus what is gone, plus what is new or re-linked:
        work proportional to the edit, not to the function."""
        info = self.info = dict(memo.infos)
        gone = False
        for inst in list(memo.dropped) + memo.ssa.old_phis:
            inf = info.pop(inst, None)
            gone = gone or (inf is not None and _has_trips(inf))
        fresh: list[Instruction] = []
        changed = [b for b in self.rpo if b in memo.changed_blocks]
        for b in changed:
            for inst in b.instrs:
                if inst not in info:
                    info[inst] = self._make_info(inst)
                    fresh.append(inst)
        for phi in memo.ssa.new_phis:
            if phi not in info:
                info[phi] = self._make_info(phi)
                fresh.append(phi)
        if gone:
            self.track_trips = any(_has_trips(inf) for inf in info.values())
        else:
            self.track_trips = memo.track_trips or any(_has_trips(info[i]) for i in fresh)
        for inst in fresh:
            self._link_sources(inst, info[inst])
        linked = set(fresh)
        for inst in memo.ssa.touched:  # kept instructions whose sources the SSA re-solved
            inf = info.get(inst)
            if inf is not None and inst not in linked:
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

    def _make_info(self, inst: Instruction) -> InstInfo:
        mods = inst.mods
        if mods and ("lds_ring" in mods or "loopcarriedwar" in mods or "loopcarriedraw" in mods):
            ring, adv = _ring(inst)
            lc_war = _lc(inst, "loopcarriedwar")
            lc_raw = _lc(inst, "loopcarriedraw")
        else:
            ring, adv, lc_war, lc_raw = [], [], None, None
        mn = inst.mnemonic
        if mn.startswith(("buffer_atomic", "flat_atomic", "global_atomic", "s_barrier")) or inst.is_phi \
                or inst.is_label:
            counter, barrier, fence = (K.classify_mem_op(inst), K.is_barrier(inst),
                                       K.is_lds_fence_barrier(inst))
            anchor = K.is_tensor_anchor(inst)
            tensor_raw = (barrier and not K.is_cluster_split_barrier(inst)) or self.options.num_waves == 1
        else:  # the mnemonic alone decides
            if not ring and not adv and lc_war is None and lc_raw is None:
                counter, rest = _plain_facts(mn, self.options.num_waves == 1)
                return InstInfo(counter, inst.tokens, *rest)
            counter, anchor = _static_info(mn)
            fence = False
            tensor_raw = self.options.num_waves == 1
        dk = K.ds_kind(mn)
        return InstInfo(counter, inst.tokens, ring, adv, lc_war, lc_raw, K.is_wait(inst), anchor,
                        dk == "store" or mn.startswith("tensor_load_to_lds"), fence, dk in ("read", "atomic"),
                        tensor_raw)

    def _link_sources(self, inst: Instruction, inf: InstInfo) -> None:
        """Flatten the SSA sources to (memop, counter) pairs.

        phiCurrentQueueWait recurses through PHI inputs and folds every concrete memop of the
        counter against the live queues, exactly as a direct source is folded, so the PHIs
        are resolved once here instead of at every sweep.
        """
        mem: list[tuple[Instruction, int]] = []
        for src in flatten_sources(inst):
            c = self.info[src].counter if src in self.info else K.classify_mem_op(src)
            if c != CK_COUNT:
                mem.append((src, c))
        mem_srcs = tuple(mem)
        if inf.linked:
            if inf.mem_srcs == mem_srcs:
                return  # a previous version's facts, still exact
            # shared with the previous version's memo records: never mutate, replace
            inf = self.info[inst] = inf.with_sources(mem_srcs)
            if inst.block is not None:
                self._relinked.add(inst.block)
        inf.linked = True
        inf.mem_srcs = mem_srcs
        inf.needs_check = bool(
            mem or inf.tensor_anchor or inf.lds_writer or inf.fence or inf.ring
            or inf.lc_war is not None or inf.lc_raw is not None
            or (self.options.enable_tensor_descriptor_war and not inf.is_wait and inst.dsts))

    def _needs_live_tensor_state(self, b: Block) -> bool:
        """Blocks that keep live (unfrozen) tensor queues: untagged tensor anchors,
        loop-carried RAW readers and LDS-ring annotated instructions."""
        for inst in b.instrs:
            if inst.is_phi or inst.is_label:
                continue
            inf = self.info[inst]
            if inf.tensor_anchor and inf.tokens is None and not K.is_cluster_split_barrier(inst):
                return True
            if inf.lc_raw is not None or inf.ring:
                return True
        return False

    def raw_needs_wait(self, c: int, inf: InstInfo) -> bool:
        return inf.tensor_raw if c == CK_TENSOR else True

    # --- join ------------------------------------------------------------------------------
    def merge_from_predecessors(self, bb: Block, exits: dict[Block, DataflowState]) -> DataflowState:
        entry = DataflowState()
        seen: list[set] = [set() for _ in range(CK_COUNT)]
        work = 0
        for p in bb.preds:
            ps = exits.get(p)
            if ps is None:
                continue
            back = self.track_trips and self.cfg.is_back_edge(p, bb)
            advances = self._advances(p) if back else []
            for c in range(CK_COUNT):
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
            for c in range(CK_COUNT):
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
            self.widened_blocks[bb] = (f"{n} distinct {K.COUNTER_NAMES[c]} paths meet at ^{bb.name}: "
                                       f"forced {K.WAIT_MNEMONIC[c]} 0 at its first instruction")

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
        req = new_spec()
        queues = state.queues
        newest = self.newest
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
                        w = wait_to_drain(c, n)
                        if w >= 0 and (req[c] == -1 or w < req[c]):
                            req[c] = w
            return req, None
        why: list[list[Contribution]] | None = [[] for _ in range(CK_COUNT)] if record else None

        def tighten(c: int, w: int, rule: str, op=None, pred=None, n=0, trips=0) -> None:
            if w < 0:
                return
            if req[c] == -1 or w < req[c]:
                req[c] = w
            if why is not None:
                why[c].append(Contribution(rule, w, op, pred, n, trips))

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
                    tighten(c, wait_to_drain(c, n), "raw", src, q.pred, n, self._trips(q, src))
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
                    if et is None or K.has_token_overlap(et, rtoks):
                        tighten(CK_TENSOR, wait_to_drain(CK_TENSOR, n - idx), "loop-carried-raw", e.op, q.pred, n - idx, e.trips)
                        break
        # 4. untagged tensor producers at tagged tensor anchors
        if inf.tensor_anchor and toks:
            for q in queues[CK_TENSOR]:
                n = len(q.ops)
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is not inst and self.info[e.op].tokens is None:
                        tighten(CK_TENSOR, wait_to_drain(CK_TENSOR, n - idx), "untagged-tensor", e.op, q.pred, n - idx, e.trips)
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
                    if et is None or K.has_token_overlap(et, toks):
                        tighten(CK_ASYNC, wait_to_drain(CK_ASYNC, n - idx), "async-war", e.op, q.pred, n - idx, e.trips)
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
        if inf.lds_writer and toks is None and any_in_flight(queues[CK_DS]) and not K.is_ds_store(inst):
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

    def _trips(self, q: PerPredQueue, op: Instruction) -> int:
        for e in q.ops:
            if e.op is op:
                return e.trips
        return 0

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
                if oi.tokens is None or K.has_token_overlap(oi.tokens, toks):
                    tighten(CK_DS, wait_to_drain(CK_DS, n - idx), rule, e.op, q.pred, n - idx, e.trips)
                    break

    def _descriptor_war(self, inst: Instruction, queues: list[PerPredQueue], tighten) -> None:
        dregs = [r for r in inst.dsts if isinstance(r, Reg)]
        for q in queues:
            n = len(q.ops)
            for idx in range(n - 1, -1, -1):
                op = q.ops[idx].op
                if op is inst or not K.is_tensor_load(op):
                    continue
                if any(d.overlaps(s) for d in dregs for s in op.srcs if isinstance(s, Reg)):
                    tighten(CK_TENSOR, min(n - idx - 1, K.K_MAX_WAIT_COUNT), "descriptor-war", op, q.pred, n - idx)
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
                                tighten(c, wait_to_drain(c, n - idx), "lds-ring", e.op, q.pred, n - idx, e.trips)
                                hit = True
                                break
                        if hit:
                            break
                    if hit:
                        break

    # --- transfer --------------------------------------------------------------------------
    def _credit(self, inst: Instruction, state: DataflowState, emit: list[CounterEmitState]) -> None:
        for c, w in credited_waits(inst):
            if w < 0 or (c == CK_KM and w != 0):
                continue
            state.queues[c] = trim_queues(state.queues[c], w)
            emit[c].record_emitted(w)

    def _produce(self, inst: Instruction, inf: InstInfo, state: DataflowState,
                 emit: list[CounterEmitState], events: list | None) -> None:
        c = inf.counter
        if c == CK_COUNT:
            return
        qop = QOp(inst, 0, (0,) * len(inf.ring))
        state.queues[c], sat = append_to_all_paths(state.queues[c], qop)
        if sat is not None and events is not None:
            events.append((c, inst, sat))
        emit[c].since += 1

    def transfer_block(self, bb: Block, state: DataflowState) -> list[tuple[Instruction, list[int]]]:
        """Plan and simulate one block; chunk walks are memoised when a memo is attached."""
        plan: list[tuple[Instruction, list[int]]] = []
        emit = [CounterEmitState() for _ in range(CK_COUNT)]
        sites = self.overflow_sites
        memo = self.memo if not self.widening else None
        if memo is None:
            events: list = []
            self._walk(bb.instrs, state, emit, plan, events)
            for c, inst, sat in events:
                self._site(sites, bb, c, inst, sat)
            return plan
        for chunk in self.chunks[bb]:
            infos = self.chunk_infos[chunk]
            emit_in = emit_key(emit)
            rec = memo.find_solve(chunk, infos, state.queues, emit_in)
            if rec is None:
                queues_in = list(state.queues)
                part: list = []
                events = []
                self._walk(chunk, state, emit, part, events)
                rec = WalkRecord(infos, queues_in, emit_in, list(state.queues), emit_key(emit), part, events)
                memo.store(memo.solve, chunk, rec)
            else:
                rec.restore(state.queues, emit)
            plan.extend(rec.waits)
            for c, inst, sat in rec.extra:
                self._site(sites, bb, c, inst, sat)
        return plan

    @staticmethod
    def _site(sites: dict, bb: Block, c: int, inst: Instruction, sat: Instruction) -> None:
        """An overflow event (the first per block and counter wins)."""
        sites.setdefault((bb, c), (inst, sat))

    def _walk(self, instrs, state: DataflowState, emit: list[CounterEmitState],
              plan: list[tuple[Instruction, list[int]]], events: list) -> None:
        """The solver's walk (computeRequiredWaits, redundancy elision, trimQueues)."""
        for inst in instrs:
            if inst.is_phi or inst.is_label:
                continue
            inf = self.info[inst]
            if inf.is_wait:
                self._credit(inst, state, emit)
                continue
            if not inf.needs_check and inst not in self.forced_at:
                if inf.counter != CK_COUNT:
                    self._produce(inst, inf, state, emit, events)
                continue
            req, _ = self.compute_required_waits(inst, state)
            spec = None
            for c in range(CK_COUNT):
                r = req[c]
                if r == -1 or not emit[c].needs_new_wait(r):
                    continue
                if spec is None:
                    spec = new_spec()
                spec[c] = r
                emit[c].record_emitted(r)
                state.queues[c] = trim_queues(state.queues[c], r)
            if spec is not None:
                plan.append((inst, spec))
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
                    if rec is not None:  # same block, same input objects: same outputs
                        self.work += rec.work
                        if self.work > self.budget:
                            self.exploded = True
                            if self.options.bounded:
                                return False
                        entry, work = rec.entry, rec.exit
                        self.emit_plan[bb] = rec.plan
                        self.block_sites[bb] = rec.sites
                        step = None
                if step is not None or memo is None:
                    keep = self.keep_live[bb]
                    work_before = self.work
                    entry = self.merge_from_predecessors(bb, self.exit_state)
                    if self.exploded and self.options.bounded and not self.widening:
                        return False
                    if frozen:
                        self._restore_tensor(entry, self.entry_state[bb], keep)
                    work = entry.copy()
                    self.overflow_sites = {}
                    self.emit_plan[bb] = self.transfer_block(bb, work)
                    self.block_sites[bb] = self.overflow_sites
                    if frozen:
                        self._restore_tensor(work, self.exit_state[bb], keep)
                    if step is not None:
                        entry, work = memo.store_block(step, entry, work, self.emit_plan[bb],
                                                       self.overflow_sites, self.work - work_before)
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

    def _report_overflow(self) -> None:
        """One warning per (block, in-order counter): the op pushed out and the one that did it."""
        self.overflow_sites = {k: v for bb in self.rpo for k, v in self.block_sites.get(bb, {}).items()}
        for (bb, c), (inst, pushed) in self.overflow_sites.items():
            if c == CK_KM:
                continue
            sp = inst.span
            psp = pushed.span
            related = [Related(psp.line, psp.col, f"{pushed.mnemonic} pushed out of the window; "
                               f"now tracked at depth {K.K_MAX_IN_FLIGHT}")] if psp else []
            self.diagnostics.append(Diagnostic(
                WARNING, "overflow",
                f"[WaitDataflow] warning: block ^{bb.name} counter {K.COUNTER_DIAG_NAMES[c]} exceeds "
                f"kMaxInFlight={K.K_MAX_IN_FLIGHT}: {pushed.mnemonic}"
                f"{f' (line {psp.line})' if psp else ''} is tracked at the maximum wait count "
                f"{K.K_MAX_WAIT_COUNT} (confirm no deeper drain is needed)",
                sp.line if sp else 1, sp.col if sp else 1, related=related, function=self.func.name,
                data={"block": bb.name, "counter": K.COUNTER_NAMES[c],
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
                if rec is None:
                    st = entry.copy()
                    parts: tuple[dict, dict, dict, dict] = ({}, {}, {}, {})
                    self._replay_walk(bb, st, planned, *parts)
                    if memo is not None:
                        rec = memo.store_final_block(bb, entry, self.block_sig[bb], self.emit_plan.get(bb),
                                                     st, parts)
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
                    for c in range(CK_COUNT):
                        if spec[c] != -1:
                            st.queues[c] = [q for q in st.queues[c] if q.pred is not p] + \
                                trim_queues([q for q in st.queues[c] if q.pred is p], spec[c])
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

    def _replay_walk(self, bb: Block, st: DataflowState, planned: dict, new_anchors: dict, tokens: dict,
                     why_all: dict, snaps: dict) -> None:
        """One finalize walk over a block: apply min(planned, computed), record provenance."""
        emit = [CounterEmitState() for _ in range(CK_COUNT)]
        memo = self.memo if not self.widening else None
        if memo is None:
            out: list = []
            self._replay(bb.instrs, st, emit, planned, out, snaps)
            self._record_applied(out, new_anchors, tokens, why_all)
            return
        for chunk in self.chunks[bb]:
            infos = self.chunk_infos[chunk]
            emit_in = emit_key(emit)
            pl = tuple(None if (v := planned.get(i)) is None else tuple(v) for i in chunk)
            rec = memo.find_final(chunk, infos, st.queues, emit_in, pl)
            if rec is None:
                queues_in = list(st.queues)
                out = []
                part_snaps: dict = {}
                self._replay(chunk, st, emit, planned, out, part_snaps)
                rec = WalkRecord(infos, queues_in, emit_in, list(st.queues), emit_key(emit), out,
                                 list(part_snaps.items()), pl)
                memo.store(memo.final, chunk, rec)
            else:
                rec.restore(st.queues, emit)
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
                if inf.counter != CK_COUNT:
                    self._produce(inst, inf, st, emit, None)
                continue
            # provenance only where a wait is applied (a handful of anchors among thousands
            # of checked consumers): the same requirement, recomputed with recording then
            computed, _ = self.compute_required_waits(inst, st)
            apply = None
            for c in range(CK_COUNT):
                w = pl[c] if pl is not None else -1
                if computed[c] != -1:
                    w = computed[c] if w == -1 else min(w, computed[c])
                if w == -1 or not emit[c].needs_new_wait(w):
                    continue
                if apply is None:
                    apply = new_spec()
                apply[c] = w
                emit[c].record_emitted(w)
            if apply is not None:
                why = self.compute_required_waits(inst, st, record=True)[1]
                toks = None
                if apply[CK_TENSOR] != -1:
                    toks = self._drained_tokens(st.queues[CK_TENSOR], apply[CK_TENSOR])
                for c in range(CK_COUNT):
                    if apply[c] != -1:
                        st.queues[c] = trim_queues(st.queues[c], apply[c])
                out.append((inst, apply, why, toks))
            self._produce(inst, inf, st, emit, None)

    def _drained_tokens(self, queues: list[PerPredQueue], keep: int) -> list[int]:
        toks: set[int] = set()
        for q in queues:
            n = len(q.ops)
            for e in q.ops[:max(0, n - keep)]:
                t = self.info[e.op].tokens
                if t:
                    toks.update(t)
        return sorted(toks)


def credited_waits(inst: Instruction) -> list[tuple[int, int]]:
    """What a pre-existing wait drains: [(counter, value)] (upstream-algorithm.md s.9)."""
    mn = inst.mnemonic
    lit = inst.first_literal()
    sw = inst.mods.get("swaitcnt")

    def field_val(*names: str) -> int:
        vals = []
        for src in (sw, inst.mods.get("swaittensorcnt"), inst.mods.get("swaitasynccnt")):
            if src is None:
                continue
            for nm in names:
                v = src.fields.get(nm)
                if isinstance(v, int) and v >= 0:
                    vals.append(v)
        return min(vals) if vals else -1

    def value(*names: str) -> int:
        return lit if lit is not None else field_val(*names)

    if mn == "s_wait_dscnt":
        return [(CK_DS, value("dlcnt", "dscnt"))]
    if mn == "s_wait_loadcnt":
        return [(CK_LOAD, value("vlcnt"))]
    if mn == "s_wait_kmcnt":
        return [(CK_KM, value("kmcnt"))]
    if mn == "s_wait_tensorcnt":
        return [(CK_TENSOR, value("tlcnt"))]
    if mn == "s_wait_asynccnt":
        return [(CK_ASYNC, value("asynccnt"))]
    if mn == "s_wait_loadcnt_dscnt" and lit is not None:
        return [(CK_DS, lit & 0x3F), (CK_LOAD, (lit >> 8) & 0x3F)]
    if mn == "s_wait_storecnt_dscnt" and lit is not None:
        return [(CK_DS, lit & 0x3F)]
    if mn == "s_waitcnt" and sw is not None and lit is None:
        # legacy gfx9 form decoded by the asm front end (vmcnt/lgkmcnt); see docs/decisions.md
        out = []
        for c, nm in ((CK_DS, "dlcnt"), (CK_LOAD, "vlcnt"), (CK_KM, "kmcnt")):
            v = sw.fields.get(nm)
            if isinstance(v, int) and v >= 0:
                out.append((c, v))
        return out
    return []
