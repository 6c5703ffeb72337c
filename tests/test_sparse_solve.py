"""The sparse solve (waitcnt/sparse_solve.py) visits only the edit's region and gives the
cold plan: chains of blocks whose state flows from one to the next (self loops, straight
fall-throughs, a loop around them), edited so that the change reaches blocks below (a load
whose consumer is a later block), dies out, or reaches them a sweep later (over a back edge).

Mutation checks: with the spread of a changed step to its successors switched off, some edit
here gives a different plan than the cold one; with the clean blocks' changes left out of a
sweep's convergence test, a different number of sweeps.  So the comparisons see such bugs."""

from __future__ import annotations

import random

import pytest

from stinkywait_core import api
from stinkywait_core.results import Options
from stinkywait_core.waitcnt import sparse_solve
from stinkywait_core.waitcnt.sparse_solve import SparseSolve

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n\t.text\n\t.globl k\n\t.type k,@function\nk:\n' \
       "\ts_load_b64 s[4:5], s[0:1], 0x0\n"


def _kernel(n: int, extra: dict[int, str], loop: bool) -> str:
    """`n` blocks: even ones from the fifth on self loops, the others straight; block b loads into registers
    that block b+1 reads (so a block's exit matters below it); `extra`: the line at the end
    of a block instead of its `s_nop 0` (no line moves: only the edited block's signature
    changes); `loop`: an outer loop back to the first block."""
    out = [HEAD]
    for b in range(n):
        r = (b % 6) * 8
        out.append(f".LBB0_{b}:\n")
        out.append(f"\tds_load_b64 v[{r}:{r + 1}], v100 offset:{(b % 32) * 8}\n"
                   f"\tbuffer_load_b32 v{r + 4}, v102, s[4:7], null offen\n"
                   f"\tv_add_f32_e32 v{r + 5}, v{r}, v{(r + 40) % 48 + 4}\n" + extra.get(b, "\ts_nop 0\n"))
        if b % 2 == 0 and b >= 4:
            out.append(f"\ts_cmp_lt_u32 s10, {b}\n\ts_cbranch_scc1 .LBB0_{b}\n")
    if loop:
        out.append("\ts_add_co_i32 s11, s11, -1\n\ts_cmp_lg_u32 s11, 0\n\ts_cbranch_scc1 .LBB0_0\n")
    out.append("\ts_endpgm\n")
    return "".join(out)


EDITS = [
    {},  # (the first version)
    {5: "\tbuffer_load_b32 v200, v102, s[4:7], null offen\n"},  # an op in flight below block 5
    {5: "\tbuffer_load_b32 v200, v102, s[4:7], null offen\n", 6: "\tv_add_f32_e32 v201, v200, v200\n"},
    {6: "\tv_add_f32_e32 v201, v200, v200\n"},  # its producer gone
    {12: "\ts_wait_loadcnt 0\n"},  # a drain: what is in flight below changes
    {5: "\ts_wait_loadcnt 0\n", 12: "\ts_wait_loadcnt 0\n"},
    {2: "\tds_load_b32 v210, v100\n", 20: "\tv_mov_b32 v211, v210\n"},  # far reach
    {},
    {1: "\ts_nop 3\n"},  # above the loops, changing no state: the loops' changes decide the sweeps
]


def _plan(an: api.Analysis) -> tuple:
    return an.to_json(), an.inserted_text(explain=True)


def _run(loop: bool, edits: list[dict], options: Options = Options()) -> tuple[list[bool], list[int]]:
    """Each version through the document's cache; returns per edited version whether it
    equals the cold plan, and how many blocks the sparse solve visited (-1: not sparse)."""
    cache = api.AnalysisCache()
    same, visited = [], []
    for v, extra in enumerate(edits):
        text = _kernel(24, extra, loop)
        warm = api.analyze(text, "k.s", options, cache=cache)
        if v:
            cold = api.analyze(text, "k.s", options)
            # (the sweeps too: a sparse solve that stopped early would still have the
            # previous version's final states for its clean blocks)
            same.append(_plan(warm) == _plan(cold) and [po.df.sweeps for po in warm.outputs]
                        == [po.df.sweeps for po in cold.outputs])
            visited.append(getattr(warm.outputs[0].df, "visited", -1))
    return same, visited


@pytest.mark.parametrize("loop", [False, True], ids=["chain", "outer-loop"])
def test_sparse_solve_gives_the_cold_plan_and_visits_the_region(loop: bool) -> None:
    same, visited = _run(loop, EDITS)
    assert all(same), same
    assert all(v >= 0 for v in visited), f"the sparse solve did not run: {visited}"
    if not loop:  # (an outer loop carries an edit's state to every block a sweep later)
        assert min(visited) < 24 // 2, visited


def test_random_edits_of_the_chain() -> None:
    rng = random.Random(7)
    edits: list[dict] = [{}]
    lines = ["\tbuffer_load_b32 v220, v102, s[4:7], null offen\n", "\tv_add_f32_e32 v221, v220, v220\n",
             "\ts_wait_loadcnt 0\n", "\tds_load_b32 v222, v100\n", "\tv_mov_b32 v223, v222\n", "\ts_nop 3\n"]
    for _ in range(10):
        prev = dict(edits[-1])
        b = rng.randrange(24)
        if prev.get(b) and rng.random() < 0.4:
            del prev[b]
        else:
            prev[b] = rng.choice(lines)
        edits.append(prev)
    for loop in (False, True):
        same, visited = _run(loop, edits)
        assert all(same), (loop, same, visited)


def test_mutations_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sparse solve that does not spread a changed step, or drops the clean blocks'
    changes from a sweep's test, gives a plan other than the cold one on these edits.
    (Without CoalesceWaits: the plan is then the solve's own, where a fold and the drop of
    the waits it leaves satisfied could hide a stale solve's extra wait.)"""
    raw = Options(coalesce_window=0)
    monkeypatch.setattr(SparseSolve, "_spread", staticmethod(lambda *a: None))
    same, _ = _run(False, EDITS, raw)
    assert not all(same), "a sparse solve that never spreads went unnoticed"
    monkeypatch.undo()

    original = SparseSolve._solve_sparse

    def no_clean_changes(self, trace, memo):
        trace.changed_at = [set() for _ in trace.changed_at]
        return original(self, trace, memo)
    monkeypatch.setattr(SparseSolve, "_solve_sparse", no_clean_changes)
    same, _ = _run(False, EDITS, raw)
    assert not all(same), "a sweep test without the clean blocks' changes went unnoticed"
    assert sparse_solve.STEP_CHANGED  # (the module under test)
