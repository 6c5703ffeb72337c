"""The incremental solve that visits only the blocks an edit reaches (issue 21, the 30k edit).

Why: after a one-line edit of a long kernel the memoised solve (incremental.py) reuses every
block's walk, but it still runs every sweep over every block to find that out: 3 sweeps x
3,750 identity-checked steps on bench_lsp's 30k-line kernel, a quarter of the edit's CPU.

What makes skipping exact: the solve is a deterministic sequence of block steps (sweep, block
in RPO order), and a step's outputs are a function of its inputs: the block's instructions
and facts (its signature), its predecessors' exits as of that moment, its own previous entry
and exit, and whether it was walked before in this solve.  A block all of whose steps so far
had the same inputs as in the previous version's solve had the same outputs, so its whole
history so far is the previous one: such a block is *clean*.  The previous version leaves its
history (`SolveTrace`: per block, each step's sweep, entry, exit, walked flag, whether the exit
changed, plan, overflow sites and join work); the sparse solve then runs the same sweeps over
the *unclean* blocks only:

  * unclean to begin with: the blocks whose signature changed;
  * a step of an unclean block whose outcome differs from the previous version's step at the
    same sweep (entry, exit or plan objects, walked or changed flags, or whether the block ran
    at all) makes its successors unclean from that moment on;
  * an unclean block reads a clean predecessor's exit, and its own state, from the history as
    of that moment, and decides whether it runs in sweep >= 2 as the full solve does (a
    predecessor's exit changed since it last ran);
  * a sweep changed something if an unclean step did or a clean block's previous step did;
  * at the end, clean blocks keep the previous final states, unclean ones their own.

The memo's block records (FunctionMemo.blocks) are carried over for the clean blocks, so the
next version finds every record it would have found after a full solve.  Where the sparse
solve cannot answer exactly as the full one would (the work budget, an explosion, LDS
disjointness answers in a reused record), it gives up and the full solve runs
(`_solve_sparse` returns None).  tests/test_incremental_regions.py compares every edited
version with a cold plan; tests/test_sparse_solve.py also checks that the sparse solve ran
and visited only the edit's region.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush

TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from typing import Any

#: `_block_step` outcome bits: the block's plan was (re)set; its exit changed
STEP_WALKED = 1
STEP_CHANGED = 2

# a history entry: (sweep, entry, exit, walked, outcome, plan, sites, work)
_IT, _ENTRY, _EXIT, _WALKED, _OUT, _PLAN, _SITES, _WORK = range(8)


class SolveTrace:
    """One converged memoised solve, as the next version's sparse solve replays it."""

    __slots__ = ("rpo", "pos", "sig", "hist", "changed_at", "entry", "exit", "plan", "sites", "work",
                 "sweeps", "cap", "freeze", "blocks", "routes")

    def __init__(self, df: Any, hist: dict, changed_at: list) -> None:
        self.rpo = df.rpo
        prev = getattr(df, "_trace_pos", None)
        self.pos = prev if prev is not None else {b: i for i, b in enumerate(df.rpo)}
        self.sig = dict(df.block_sig)
        self.hist = hist
        self.changed_at = changed_at
        self.entry, self.exit = dict(df.entry_state), dict(df.exit_state)
        self.plan, self.sites = dict(df.emit_plan), dict(df.block_sites)
        self.work = df.work
        self.sweeps = df.sweeps
        self.cap = df.cap
        self.freeze = not df.loop_carried
        #: the dispatch routes the merges filtered by (an edit of scalar code may change them)
        self.routes = df.route_sig
        # the memo's block records of that solve (with LDS answers in one, never sparse:
        # a reused record's answers are re-checked on every version)
        self.blocks = df.memo.blocks
        if df._step_queries:
            self.rpo = None

    def applies(self, df: Any) -> bool:
        """The same CFG (an adopted function keeps its RPO list), cap, freeze and dispatch
        routes."""
        return (self.rpo is not None and self.rpo is df.rpo and self.cap == df.cap
                and self.freeze == (not df.loop_carried) and not df.exploded and self.routes == df.route_sig)


def _at(hist: list, t: tuple, pos: int) -> tuple | None:
    """The last entry of a block's history (the block at RPO position `pos`) before time `t`
    = (sweep, position)."""
    for h in reversed(hist):
        if (h[_IT], pos) < t:
            return h
    return None


class SparseSolve:
    """The sparse solve (a mixin of WaitDataflow; see the module doc)."""

    def _trace_entry(self, bb: Any, it: int, r: int, walked: set, work: int) -> tuple:
        if r & STEP_WALKED:
            return (it, self.entry_state[bb], self.exit_state.get(bb), bb in walked, r,
                    self.emit_plan.get(bb), self.block_sites.get(bb), work)
        return (it, self.entry_state[bb], self.exit_state.get(bb), bb in walked, r, None, None, work)

    def _solve_sparse(self, trace: SolveTrace, memo: Any) -> bool | None:
        rpo, pos, old_hist = self.rpo, trace.pos, trace.hist
        self._trace_pos = pos
        sig, old_sig = self.block_sig, trace.sig
        hist = dict(old_hist)
        since: dict = {}  # unclean block -> the time it became so
        memo.blocks = dict(trace.blocks)
        blocks = memo.blocks

        def unclean(b: Any, t: tuple) -> None:
            since[b] = t
            # its history up to `t` is the previous one; its later records are redone
            old = old_hist[b]
            h = hist[b] = [e for e in old if (e[_IT], pos[b]) < t]
            for e in old[len(h):]:
                blocks.pop((b, e[_IT]), None)

        for b in rpo:
            s = sig[b]
            o = old_sig.get(b)
            if s is not o and s != o:
                unclean(b, (0, -1))
        walked: set = set()
        freeze = trace.freeze
        entry_state, exit_state = self.entry_state, self.exit_state
        changed_at: list[set] = []
        old_changed = trace.changed_at
        pause, steps = self.pause, 0
        self.work = 0  # (the unclean steps' join work; the whole solve's is summed below)
        for it in range(self.cap):
            self.sweeps = it + 1
            frozen = freeze and it > 0
            heap = [pos[b] for b in since]
            heapify(heap)
            seen: set = set()
            mine: set = set()
            changed = False
            while heap:
                i = heappop(heap)
                if i in seen:
                    continue
                seen.add(i)
                bb = rpo[i]
                now = (it, i)
                h = hist[bb]
                last = h[-1] if h else None
                old_step = next((e for e in old_hist[bb] if e[_IT] == it), None)
                if it >= 2:
                    # runs only if a predecessor's exit changed since it last ran
                    t0 = (last[_IT], i) if last is not None else (-1, -1)
                    if not any(self._changed_between(hist[p], pos[p], t0, now) for p in bb.preds):
                        if old_step is not None:  # it ran in the previous version
                            self._spread(bb, now, since, unclean, heap, pos)
                        continue
                if pause is not None:
                    steps += 1
                    if not steps & 15:
                        pause()
                # this block's and its predecessors' state as of now
                for p in bb.preds:
                    e = _at(hist[p], now, pos[p])
                    if e is None:
                        exit_state.pop(p, None)
                    else:
                        exit_state[p] = e[_EXIT]
                if last is not None:
                    entry_state[bb], exit_state[bb] = last[_ENTRY], last[_EXIT]
                    if last[_WALKED]:
                        walked.add(bb)
                    else:
                        walked.discard(bb)
                else:
                    exit_state.pop(bb, None)
                    walked.discard(bb)
                w0 = self.work
                r = self._block_step(bb, it, frozen, memo, walked)
                if r < 0 or self.exploded:
                    return None
                e = self._trace_entry(bb, it, r, walked, self.work - w0)
                h.append(e)
                if r & STEP_CHANGED:
                    changed = True
                    mine.add(bb)
                # what a successor reads of it: its exit, and whether that changed
                if old_step is None or e[_EXIT] is not old_step[_EXIT] \
                        or (r ^ old_step[_OUT]) & STEP_CHANGED:
                    self._spread(bb, now, since, unclean, heap, pos)
            # the clean blocks' changes of this sweep happened as before (a block unclean
            # only after its step of this sweep was still clean at it)
            if it < len(old_changed):
                redone = {b for b, t in since.items() if t <= (it, pos[b])}
                clean = old_changed[it] - redone if redone else old_changed[it]
                if clean:
                    changed = True
                    mine = mine | clean if mine else set(clean)
            changed_at.append(mine)
            if not changed:
                break
        else:
            return None  # (the cap: the full solve reports it)
        work = trace.work
        for b, t in since.items():
            p = pos[b]
            work -= sum(e[_WORK] for e in old_hist[b] if (e[_IT], p) >= t)
            work += sum(e[_WORK] for e in hist[b] if (e[_IT], p) >= t)
        if work > self.budget:
            return None  # (the full solve explodes where it does)
        self.work = work
        entry_state.update(trace.entry)
        self.exit_state = exit_state = dict(trace.exit)
        self.emit_plan.update(trace.plan)
        self.block_sites = dict(trace.sites)
        for b in since:
            h = hist[b]
            if h:
                entry_state[b] = h[-1][_ENTRY]
                ex = h[-1][_EXIT]
                if ex is None:
                    exit_state.pop(b, None)
                else:
                    exit_state[b] = ex
            for e in reversed(h):
                if e[_OUT] & STEP_WALKED:
                    self.emit_plan[b] = e[_PLAN]
                    self.block_sites[b] = e[_SITES]
                    break
        self.visited = len(since)
        memo.hits += len(blocks)
        self._report_overflow()
        memo.trace = SolveTrace(self, hist, changed_at)
        return True

    @staticmethod
    def _changed_between(hist: list, pos: int, t0: tuple, now: tuple) -> bool:
        """The block's exit changed at a step in [t0, now)."""
        for e in reversed(hist):
            t = (e[_IT], pos)
            if t < t0:
                return False
            if t < now and e[_OUT] & STEP_CHANGED:
                return True
        return False

    @staticmethod
    def _spread(bb: Any, now: tuple, since: dict, unclean: Any, heap: list, pos: dict) -> None:
        """`bb`'s step differs from the previous version's: its successors are unclean from
        now on (a successor later in the RPO is visited later in this sweep)."""
        i = now[1]
        for s in bb.succs:
            if s not in since:
                unclean(s, now)
                if pos[s] > i:
                    heappush(heap, pos[s])
