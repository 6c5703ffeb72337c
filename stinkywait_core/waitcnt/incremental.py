"""Incremental re-planning: memoised block-walk chunks shared between versions of a function.

Why: an editor re-plans a kernel on every keystroke, and a 3k-instruction loop body costs a
whole-function solve (several sweeps plus the finalize replay) even when the edit cannot
change anything but a few waits around it.

How, without changing a single result: the solver's block walk is a pure function of
(the instructions walked, their per-instruction facts, the queues and the redundancy-elision
state at the start).  Each block is cut into *chunks* at content-defined boundaries (an
instruction whose text hashes to 0 mod `CHUNK_MASK + 1`, or `CHUNK_MAX` instructions), so an
inserted or deleted line only changes the chunk it lands in.  For every chunk the memo keeps
the last few walks: inputs (facts, queues, emit state) and outputs (queues, emit state, the
waits it planned, overflow events, and for the finalize replay the provenance and FIFO
snapshots).  A walk whose inputs compare equal to a stored one reuses its outputs; the
sweeps, the joins and the convergence test run exactly as before, so the fixed point, the
plan and every diagnostic are those of a from-scratch solve (tests/test_incremental.py
compares them on random edit sequences).

LDS disjointness (the address analysis of analysis/lds_facts.py) is asked lazily, per version;
a walk records the answers it used and a reuse holds only while the current version gives the
same answers (WaitDataflow.queries_hold).

Reuse across versions needs stable identities: the instructions of the new version that did
not change are the *same* objects as in the previous one (api's adoption step), so queues
built in the previous version compare equal, element by element, to the new ones.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from typing import Any

from ..analysis.ssa import UseDefChains
from ..ir import Block, Instruction

#: a chunk ends after an instruction whose text hash has these low bits clear (mean length 32)
CHUNK_MASK = 31
#: ... or after this many instructions (identical repeated lines never hash to a boundary)
CHUNK_MAX = 96
#: walks remembered per chunk: enough for the sweeps of a loop (entry-only, then with the
#: back edge, then the confirming sweep) and the previous version's ones
ENTRIES_PER_CHUNK = 4

Chunk = tuple  # tuple[Instruction, ...]


def chunks_of(block: Block) -> list[Chunk]:
    """The block's walked instructions (no PHIs, no labels) in content-defined chunks."""
    out: list[Chunk] = []
    cur: list[Instruction] = []
    for inst in block.instrs:
        if inst.is_phi or inst.is_label:
            continue
        cur.append(inst)
        if len(cur) >= CHUNK_MAX or not (hash(inst.text) & CHUNK_MASK):
            out.append(tuple(cur))
            cur = []
    if cur:
        out.append(tuple(cur))
    return out


class WalkRecord:
    """One memoised chunk walk: what went in and what came out.

    `infos`, `queues_in`, `emit_in`: the chunk's facts, queues and emit state at its start;
    `queues_out`, `emit_out`: at its end; `waits`: solve [(inst, spec)], finalize
    [(inst, apply, why, tokens or None)]; `extra`: solve overflow events
    [(counter, inst, pushed_out)], finalize [(inst, FIFO snapshot)]; `planned` (finalize
    only): the planned specs of the chunk's instructions (None when not planned).
    """

    __slots__ = ("infos", "queues_in", "emit_in", "queues_out", "emit_out", "waits", "extra", "planned",
                 "queries")

    def __init__(self, infos: tuple, queues_in: list, emit_in: tuple, queues_out: list, emit_out: tuple,
                 waits: list, extra: list, planned: tuple = (), queries: tuple = ()):
        self.infos, self.queues_in, self.emit_in = infos, queues_in, emit_in
        self.queues_out, self.emit_out = queues_out, emit_out
        self.waits, self.extra, self.planned = waits, extra, planned
        #: the LDS disjointness answers the walk relied on (re-checked before a reuse)
        self.queries = queries

    def restore(self, queues: list, emit: list, cks: tuple) -> None:
        """Put the walk's outputs into the live state (queues list, CounterEmitStates of the
        active timelines `cks`)."""
        queues[:] = self.queues_out
        out = self.emit_out
        for n, c in enumerate(cks):
            e = emit[c]
            e.last, e.since = out[2 * n], out[2 * n + 1]


def emit_key(emit: list, cks: tuple) -> tuple:
    """The redundancy-elision state of every active timeline as one flat value: last wait, ops
    since (small ints, so the tuple is the only object a record keeps for it)."""
    out: list[int] = []
    for c in cks:
        e = emit[c]
        out.append(e.last)
        out.append(e.since)
    return tuple(out)


class BlockRecord:
    """One sweep's processing of one block (join, transfer, tensor freeze), by its inputs:
    signature, predecessor exits and its own previous entry and exit; outputs: entry, exit,
    planned waits, overflow sites, join work."""

    __slots__ = ("sig", "preds", "prev_entry", "prev_exit", "entry", "exit", "plan", "sites", "work", "queries")

    def __init__(self, sig: tuple, preds: tuple, prev_entry: Any, prev_exit: Any, entry: Any, exit_: Any,
                 plan: list, sites: dict, work: int, queries: tuple = ()):
        self.sig, self.preds, self.prev_entry, self.prev_exit = sig, preds, prev_entry, prev_exit
        self.entry, self.exit, self.plan, self.sites, self.work = entry, exit_, plan, sites, work
        self.queries = queries


class FinalBlockRecord:
    """One block's finalize replay (fast path) by its inputs: entry state, block, plan;
    `parts`: (anchors, tokens, provenance, FIFO snapshots) of the block's instructions."""

    __slots__ = ("entry", "sig", "plan", "exit", "parts", "queries")

    def __init__(self, entry: Any, sig: tuple, plan: Any, exit_: Any, parts: tuple, queries: tuple = ()):
        self.entry, self.sig, self.plan, self.exit, self.parts = entry, sig, plan, exit_, parts
        self.queries = queries


class FunctionMemo:
    """Everything one function's previous analysis leaves for the next one.

    Lives in `api.AnalysisCache` next to the function it belongs to.  Each analysis moves
    the entries it looks up into fresh dicts (`begin`/`end`), so entries of chunks that no
    longer exist are dropped and memory stays proportional to the current function.
    """

    def __init__(self) -> None:
        #: per-instruction facts (waitcnt.facts.InstInfo) by instruction object
        self.infos: dict[Instruction, Any] = {}
        #: CoalesceWaits' latency-model costs (waitcnt.stall.Wave.fact) by instruction object
        self.stall_facts: dict[Instruction, tuple] = {}
        #: CoalesceWaits' walk of each run of blocks by its inputs (waitcnt.coalesce_memo.BlockFold)
        self.folds: dict[Block, Any] = {}
        #: CoalesceWaits' runs and loops, with the CFG and signatures they come from (coalesce_memo.RunLayout)
        self.coalesce_layout: Any = None
        #: this version's CoalesceWaits filled `folds` (and `coalesce_layout` is this version's)
        self.folds_made = False
        #: the solver's pool of queues with nothing in flight (waitcnt/state.py
        #: `shared_empty`), kept across versions: a re-plan's drained queues are then the
        #: previous version's objects, which the records both versions hold share
        self.empties: dict = {}
        #: the def-use chains, re-solved only for the register units an edit touches
        self.ssa = UseDefChains()
        self.solve: dict[Chunk, list[WalkRecord]] = {}
        self.final: dict[Chunk, list[WalkRecord]] = {}
        #: (block, sweep) -> BlockRecord of the previous version (looked up) and of this one
        self.blocks: dict[tuple, BlockRecord] = {}
        self._old_blocks: dict[tuple, BlockRecord] = {}
        self.final_blocks: dict[Block, FinalBlockRecord] = {}
        self._old_final_blocks: dict[Block, FinalBlockRecord] = {}
        self._old_solve: dict[Chunk, list[WalkRecord]] = {}
        self._old_final: dict[Chunk, list[WalkRecord]] = {}
        #: first block of a run -> the run's waits and each anchor's (span, block name, spec,
        #: provenance lists, promotion, cap, folds, its PlannedWaits) of the last result
        #: (pipeline `_build_result`, `_RunResult`)
        self.results: dict[Block, Any] = {}
        #: set by the caller: no instruction, block or function moved since the last version
        self.layout_stable = False
        #: set by the caller: blocks whose instructions changed since the last version (None:
        #: unknown, everything), and the instructions that are gone
        self.changed_blocks: set | None = None
        self.dropped: list = []
        #: block -> its implicit-dependency warnings (analysis/implicit_deps.py)
        self.implicit: dict = {}
        #: the CFG orders and dominators (valid while the chain keeps its blocks and edges)
        self.cfg: Any = None
        #: ShallowPredPromotion's decision per anchor, by its inputs
        self.promotion: dict = {}
        #: the solver's per-block derived data of the last version (WaitDataflow._remember)
        self.track_trips = False
        self.keep_live: dict = {}
        self.chunks: dict = {}
        self.chunk_infos: dict = {}
        self.block_sig: dict = {}
        #: register unit -> late writers / source lockers (waitcnt.facts.HazardMaps)
        self.hazard_maps: Any = None
        #: the blocks with a jump or a dispatch head (analysis/exit_dispatch.DispatchBlocks)
        self.dispatch_blocks: Any = None
        #: (callable, end blocks, as a set, function_transfers) of the last version's facts
        #: (waitcnt/function_facts.py `_boundaries`)
        self.boundaries: Any = None
        #: (the facts dict, {(timeline, LDS engine): how many of its ops carry it}) of the last
        #: version (waitcnt/lds_queries.py `_lds_timelines`)
        self.lds_counts: Any = None
        #: the target the facts were derived for (a different target starts afresh)
        self.target: Any = None
        #: barrier publish answers and segments by what they rest on (waitcnt/publish.py)
        self.publish: Any = None
        #: the LDS disjointness answers of the last version (waitcnt/lds_reuse.LdsAnswers)
        self.lds_answers: Any = None
        #: the last converged memoised solve, for the next version's sparse solve
        #: (waitcnt/sparse_solve.SolveTrace; None: the next solve visits every block)
        self.trace: Any = None
        #: statistics of the last analysis (benchmarks and tests): walks reused / walked
        self.hits = 0
        self.misses = 0
        #: runs whose CoalesceWaits record held by identity, and whose result waits were reused whole
        self.reused_folds = 0
        self.reused_results = 0
        #: blocks where `satisfied.drop_satisfied` dropped a wait, this version and the last:
        #: a drop there depends on bounds from other runs, which a run's CoalesceWaits record
        #: does not see, so such a run's waits are never reused whole (`pipeline._build_result`)
        self.satisfied_blocks: set = set()
        self.satisfied_before: set = set()
        #: the drop's state for the next version: block records, bounds, drops
        #: (`satisfied.SatisfiedState`; None: the next drop starts from scratch)
        self.satisfied: Any = None

    def begin(self) -> None:
        self._old_solve, self.solve = self.solve, {}
        self._old_final, self.final = self.final, {}
        self._old_blocks, self.blocks = self.blocks, {}
        self._old_final_blocks, self.final_blocks = self.final_blocks, {}
        self.folds_made = False
        self.satisfied_before, self.satisfied_blocks = self.satisfied_blocks, set()
        self.hits = self.misses = 0
        self.reused_folds = self.reused_results = 0

    def end(self) -> None:
        self._old_solve = {}
        self._old_final = {}
        self._old_blocks = {}
        self._old_final_blocks = {}

    def find_final_block(self, bb: Block, entry: Any, sig: tuple, plan: Any) -> FinalBlockRecord | None:
        rec = self._old_final_blocks.get(bb)
        if rec is None or rec.entry is not entry or rec.plan is not plan or rec.sig != sig:
            return None
        self.hits += 1
        self.final_blocks[bb] = rec
        return rec

    def store_final_block(self, bb: Block, entry: Any, sig: tuple, plan: Any, exit_: Any,
                          parts: tuple, queries: tuple = ()) -> FinalBlockRecord:
        rec = self.final_blocks[bb] = FinalBlockRecord(entry, sig, plan, exit_, parts, queries)
        return rec

    def find_block(self, step: tuple) -> BlockRecord | None:
        """The previous version's processing of this block in this sweep, if every input is
        the same object (predecessor exits, the block's own previous entry and exit) and its
        instructions and facts are equal.  `step` = (block, sweep, signature, predecessor
        exits, previous entry, previous exit) (WaitDataflow._solve).  Identity is what makes this cheap: states are only
        shared between versions through `store_block`'s substitution below."""
        bb, it, sig, preds, prev_entry, prev_exit = step
        rec = self._old_blocks.get((bb, it))
        if rec is None or rec.prev_entry is not prev_entry or rec.prev_exit is not prev_exit:
            return None
        old = rec.preds
        if len(old) != len(preds):
            return None
        for a, b in zip(old, preds):
            if a is not b:
                return None
        if rec.sig is not sig and rec.sig != sig:
            return None
        self.hits += 1
        self.blocks[(bb, it)] = rec
        return rec

    def store_block(self, step: tuple, entry: Any, exit_: Any, plan: list, sites: dict,
                    work: int, queries: tuple = ()) -> tuple[Any, Any]:
        """Record a computed block step; states equal to the previous version's are replaced
        by those objects, so that the blocks downstream find identical inputs."""
        bb, it, sig, preds, prev_entry, prev_exit = step
        old = self._old_blocks.get((bb, it))
        if old is not None:
            if old.entry == entry:
                entry = old.entry
            if old.exit == exit_:
                exit_ = old.exit
        self.blocks[(bb, it)] = BlockRecord(sig, preds, prev_entry, prev_exit, entry, exit_, plan, sites, work,
                                            queries)
        return entry, exit_

    def store_skip(self, step: tuple, last_entry: Any, work: int, queries: tuple = ()) -> None:
        """Record that this block's join, in this sweep, gave `last_entry`, the entry of its
        last walk (so the solve left the block alone): an entry of None, `last_entry` kept as
        the exit.  Given the same inputs next time and the same last-walk entry object, the
        join would give that entry again, and the solve skips the block without joining."""
        bb, it, sig, preds, prev_entry, prev_exit = step
        self.blocks[(bb, it)] = BlockRecord(sig, preds, prev_entry, prev_exit, None, last_entry, [], {}, work,
                                            queries)

    @staticmethod
    def _records(new: dict, old: dict, chunk: Chunk) -> list[WalkRecord]:
        recs = new.get(chunk)
        if recs is None:
            recs = old.pop(chunk, None) or []
            new[chunk] = recs
        return recs

    def find_solve(self, chunk: Chunk, infos: tuple, queues: list, emit_in: tuple) -> WalkRecord | None:
        return self._find(self.solve, self._old_solve, chunk, infos, queues, emit_in, ())

    def find_final(self, chunk: Chunk, infos: tuple, queues: list, emit_in: tuple,
                   planned: tuple) -> WalkRecord | None:
        return self._find(self.final, self._old_final, chunk, infos, queues, emit_in, planned)

    def _find(self, new: dict, old: dict, chunk: Chunk, infos: tuple, queues: list, emit_in: tuple,
              planned: tuple) -> WalkRecord | None:
        """A remembered walk of `chunk` with equal inputs (solve records have no plan)."""
        for r in self._records(new, old, chunk):
            if (r.emit_in == emit_in and r.planned == planned and r.infos == infos
                    and r.queues_in == queues):
                self.hits += 1
                return r
        self.misses += 1
        return None

    def store(self, table: dict, chunk: Chunk, record: WalkRecord) -> None:
        recs = table.setdefault(chunk, [])
        recs.insert(0, record)
        del recs[ENTRIES_PER_CHUNK:]
