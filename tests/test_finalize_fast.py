"""The solve's same-entry skip and finalizePlan's fast path against the walks they stand for.

When no optimizer touched the converged plan and the solve ran without a memo, finalize takes
its results from the solve's last walk of each block instead of replaying the dataflow, and
makes the per-instruction FIFO snapshots only when they are asked for.  That is exact only if
the solve's last walk of every block saw the converged entry (the solve skips a block whose
merged entry equals its last walk's).  These tests plan the same function twice, once with
the fast path and once with it refused (the solve's per-block records dropped, so finalize
replays) and the solve walking every dirty block again (no same-entry skip), and compare
every finalize output: the applied waits, their provenance, the drained
tensor tokens, the exits and the snapshots.  Inputs: random programs of the property
generators (several targets, loops, calls, LDS traffic) and the bundled examples.
"""

from __future__ import annotations

import glob
import os

import pytest

from hwproggen import params_for, random_hw_program
from proggen import random_program
from stinkywait_core.analysis.cfg import compute_cfg
from stinkywait_core.analysis.ssa import build_use_def_chain
from stinkywait_core.api import _effective_options, parse
from stinkywait_core.results import Options
from stinkywait_core.waitcnt.dataflow import WaitDataflow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _loc(inst) -> tuple:
    return (inst.span.line, inst.span.col) if inst.span is not None else (inst.mnemonic, id(inst))


def _queues(qs) -> list:
    return [(q.pred.name if q.pred is not None else None,
             [(_loc(e.op), e.trips, e.deltas) for e in q.ops], sorted(_loc(s) for s in q.sat), q.ring_sat)
            for q in qs]


class _WalkEveryTime(WaitDataflow):
    """The solve without its same-entry skip: every dirty block is walked again."""

    def _same_entry(self, bb, entry) -> bool:
        return False


class _FastPath(WaitDataflow):
    """The plain solve, noting whether finalize took its fast path."""

    took_fast_path = False

    def _finalize_from_solve(self, plan, planned) -> None:
        self.took_fast_path = True
        super()._finalize_from_solve(plan, planned)


def _finalized(func, options: Options, fast: bool) -> dict:
    cfg = compute_cfg(func)
    build_use_def_chain(func, cfg, include_pseudo=options.model == "upstream")
    df = (_FastPath if fast else _WalkEveryTime)(func, cfg, options)
    df.solve()
    plan = df.materialize_plan()
    if not fast:
        df.anchor_before.clear()  # refuses the fast path: finalize replays
    df.finalize_plan(plan, unchanged=True)
    assert getattr(df, "took_fast_path", False) == fast, "the path under test did not run"
    cks = df.cks
    return {
        "anchors": [(_loc(i), list(s)) for i, s in plan.anchor_waits.items()],
        "tokens": sorted((_loc(i), t) for i, t in plan.tensor_tokens.items()),
        "why": sorted((_loc(i), [[(c.rule, c.wait, _loc(c.op) if c.op is not None else None, c.count_from, c.trips)
                                  for c in w[k]] for k in cks]) for i, w in df.why.items() if w is not None),
        "exit": [(b.name, [_queues(st.queues[k]) for k in cks]) for b, st in df.final_exit.items()],
        "entry": [(b.name, [_queues(st.queues[k]) for k in cks]) for b, st in df.final_entry.items()],
        "snapshots": sorted((_loc(i), [_queues(s[k]) for k in cks]) for i, s in df.snapshots.items()),
        "converged": (df.finalize_converged, df.cap_hit),
    }


def _compare(text: str, path: str, options: Options) -> int:
    module = parse(text, path)
    opts, err = _effective_options(module, options)
    assert err is None
    n = 0
    for func in module.functions:
        fast = _finalized(func, opts, True)
        module2 = parse(text, path)
        func2 = next(f for f in module2.functions if f.name == func.name)
        slow = _finalized(func2, opts, False)
        for key in fast:
            assert fast[key] == slow[key], f"{path} @{func.name}: finalize {key} differs from the replay"
        n += len(fast["anchors"])
    return n


@pytest.mark.parametrize("arch", ["gfx1250", "gfx1200", "gfx942"])
def test_fast_finalize_equals_replay_on_random_programs(arch: str):
    anchors = 0
    for seed in range(40):
        spec = random_hw_program(seed, params_for(arch))
        anchors += _compare(spec.to_stir(), "hw.stir", spec.options(arch=arch))
    assert anchors > 100  # the programs do need waits


def test_fast_finalize_equals_replay_under_upstream_choices():
    for seed in range(40):
        spec = random_program(seed)
        _compare(spec.to_stir(), "gen.stir", spec.options().replace(model="upstream"))


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "examples", "*.s"))
                                        + glob.glob(os.path.join(ROOT, "examples", "*.stir"))),
                         ids=os.path.basename)
def test_fast_finalize_equals_replay_on_examples(path: str):
    with open(path) as fh:
        _compare(fh.read(), path, Options())
