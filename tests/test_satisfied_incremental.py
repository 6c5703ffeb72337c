"""The satisfied-wait drop across versions (waitcnt/satisfied.py, satisfied_solve.py): what a
version finds from the last one's block records and bounds is what a drop from scratch finds.

Two levels.  The fixed point alone: random CFGs (loops, joins, blocks no root reaches) with
random per-block transfers, some changed at random, solved from the last solution and from
scratch: every entry and exit bound equal.  The whole drop, on every version of random edit
sequences (lines deleted, duplicated, swapped, hand-written waits and nops typed) of bench_lsp's
synthetic kernel, a kernel of branch diamonds and loops made here, and real kernels: each time
the pipeline drops satisfied waits with the function's memo, the same drop runs again from
scratch on copies of its inputs, and the plans, CoalesceWaits' records, the blocks touched,
the count and every solved bound must agree.
"""

from __future__ import annotations

import gzip
import random
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from stinkywait_core import api
from stinkywait_core.results import Options
from stinkywait_core.targets.latency import MEMORY_KINDS
from stinkywait_core.waitcnt import pipeline, satisfied
from stinkywait_core.waitcnt.satisfied_blocks import UNKNOWN
from stinkywait_core.waitcnt.satisfied_solve import Topology, solve_cold, solve_warm

REPO = Path(__file__).resolve().parents[1]
AITER = REPO / "tests" / "data" / "aiter_gfx1250"
ASM = REPO.parent / "shared" / "corpus" / "asm"
needs_shared = pytest.mark.skipif(not ASM.is_dir(), reason="../shared corpus not present")


class _Block:
    def __init__(self, name: str) -> None:
        self.name, self.preds, self.succs = name, [], []


def _random_cfg(rng: random.Random, n: int) -> list[_Block]:
    blocks = [_Block(f"b{i}") for i in range(n)]
    for i, b in enumerate(blocks):
        targets = []
        if i + 1 < n and rng.random() < 0.85:
            targets.append(blocks[i + 1])  # (fall through)
        if rng.random() < 0.5:
            targets.append(rng.choice(blocks))  # (a branch: forward, back, to itself)
        for t in targets:
            b.succs.append(t)
            t.preds.append(b)
    return blocks


def _random_trans(rng: random.Random) -> tuple[int, int]:
    add = rng.choice((0, 0, 1, 1, 2, 3, UNKNOWN))
    top = rng.choice((0, 1, 2, 3, 5, UNKNOWN, UNKNOWN))
    return add, top


def test_warm_bounds_equal_cold_on_random_cfgs():
    rng = random.Random(21)
    warm_runs = lowered = 0
    for case in range(600):
        blocks = _random_cfg(rng, rng.randrange(2, 14))
        topo = Topology(object(), blocks)
        cap = rng.choice((4, 7, 64))
        trans = [_random_trans(rng) for _ in blocks]
        entry, exit_ = solve_cold(topo, trans, cap)
        for _version in range(4):
            new = list(trans)
            for i in rng.sample(range(len(blocks)), rng.randrange(1, min(4, len(blocks)) + 1)):
                new[i] = _random_trans(rng)
            changed = [i for i in range(len(blocks)) if new[i] != trans[i]]
            w_entry, w_exit, moved = solve_warm(topo, trans, new, changed, cap, entry, exit_)
            c_entry, c_exit = solve_cold(topo, new, cap)
            assert (w_entry, w_exit) == (c_entry, c_exit), (case, trans, new)
            assert sorted(i for i in range(len(blocks)) if c_entry[i] != entry[i]) == sorted(moved)
            warm_runs += 1
            lowered += any(a < b for a, b in zip(c_entry, entry))
            trans, entry, exit_ = new, c_entry, c_exit
    assert warm_runs == 2400 and lowered > 200  # (the edits did lower bounds, often)


# -- the whole drop on edit sequences ------------------------------------------------------------

#: every op back at once (test_satisfied's): CoalesceWaits folds whatever it may
FREE = tuple((f"latency.{k}", 0) for k in MEMORY_KINDS)
INSTR = re.compile(r"^\s+[sv]_\w+|^\s+(ds|buffer|global|flat|tensor|scratch)_\w+")


def _edit(lines: list[str], rng: random.Random, gfx12: bool) -> list[str]:
    """One random edit of an instruction line: deleted, duplicated, swapped with the next, or a
    hand-written wait or an `s_nop` typed before it."""
    lines = list(lines)
    body = [i for i, ln in enumerate(lines) if INSTR.match(ln) and "branch" not in ln]
    i = rng.choice(body)
    kind = rng.randrange(5)
    if kind == 0:
        del lines[i]
    elif kind == 1:
        lines.insert(i, lines[i])
    elif kind == 2:
        if gfx12:
            lines.insert(i, f"\ts_wait_{rng.choice(('dscnt', 'loadcnt', 'kmcnt'))} {rng.randrange(4)}\n")
        else:
            lines.insert(i, f"\ts_waitcnt {rng.choice(('vmcnt', 'lgkmcnt'))}({rng.randrange(4)})\n")
    elif kind == 3:
        lines.insert(i, "\ts_nop 0\n")
    elif i + 1 < len(lines) and INSTR.match(lines[i + 1]):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return lines


def _branchy(n: int) -> str:
    """A gfx1250 kernel of `n` sections, each test_satisfied's diamond (four LDS loads, a use
    of the first, a branch over a use of the second, a join that uses it again: under FREE the
    fall-through's wait folds up and the join's is satisfied), now and then a loop back."""
    out = ['\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"', "\t.text", "k:"]
    for k in range(n):
        r = 10 + (k % 3) * 10
        out += [f".Ls{k}:"] + [f"\tds_load_b32 v{r + i}, v0 offset:{4 * i}" for i in range(4)]
        out += [f"\tv_mov_b32 v{r + 5}, v{r}", f"\ts_cmp_eq_u32 s{k % 4}, 0", f"\ts_cbranch_scc1 .Lj{k}",
                f"\tv_mov_b32 v{r + 6}, v{r + 1}", f".Lj{k}:", f"\tv_mov_b32 v{r + 7}, v{r + 1}"]
        if k % 7 == 6:
            out += [f"\ts_cmp_lt_u32 s5, {k}", f"\ts_cbranch_scc0 .Ls{k - 2}"]
    out.append("\ts_endpgm")
    return "\n".join(out) + "\n"


def _synthetic(n: int) -> str:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_lsp import synthetic_kernel
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return synthetic_kernel(n)


def _checked_sequence(monkeypatch, text: str, name: str, steps: int, seed: int, opts: Options | None = None) -> dict:
    """Analyse `steps` random edits of `text` with one cache, checking every drop against one
    from scratch; returns counts of what the warm drops did."""
    real = pipeline.drop_satisfied
    seen = {"calls": 0, "warm_solves": 0, "dropped": 0, "reused_records": 0}
    real_warm = satisfied.solve_warm

    def counting_warm(*a, **k):
        seen["warm_solves"] += 1
        return real_warm(*a, **k)

    def checked(plan, df, coalesced=None, touched=None, memo=None):
        anchors0 = {k: list(v) for k, v in plan.anchor_waits.items()}
        coalesced0 = dict(coalesced) if coalesced is not None else None
        before = memo.satisfied if memo is not None else None
        old_records = dict(before.records) if before is not None else {}
        got = real(plan, df, coalesced, touched, memo)
        holder = SimpleNamespace(satisfied=None)
        cold_touched: set = set()
        cold_plan = SimpleNamespace(anchor_waits=anchors0)
        want = real(cold_plan, df, coalesced0, cold_touched, holder)
        assert got == want
        assert list(plan.anchor_waits.items()) == list(anchors0.items())
        assert coalesced == coalesced0
        if touched is not None:
            assert touched == cold_touched
        if memo is not None and holder.satisfied is not None:
            warm_state, cold_state = memo.satisfied, holder.satisfied
            assert warm_state is not None
            assert {gi: b[1:] for gi, b in warm_state.bounds.items()} == \
                {gi: b[1:] for gi, b in cold_state.bounds.items()}
            assert warm_state.drops == cold_state.drops
            seen["reused_records"] += sum(1 for b, r in warm_state.records.items() if old_records.get(b) is r)
        seen["calls"] += 1
        seen["dropped"] += got
        return got

    monkeypatch.setattr(pipeline, "drop_satisfied", checked)
    monkeypatch.setattr(satisfied, "solve_warm", counting_warm)
    gfx12 = "gfx12" in text
    rng = random.Random(seed)
    cache = api.AnalysisCache()
    opts = opts or Options()
    lines = text.splitlines(keepends=True)
    api.analyze(text, name, opts, cache=cache)
    for _ in range(steps):
        lines = _edit(lines, rng, gfx12)
        api.analyze("".join(lines), name, opts, cache=cache)
    return seen


def test_warm_drop_equals_cold_on_the_synthetic_kernel(monkeypatch):
    seen = _checked_sequence(monkeypatch, _synthetic(60), "synthetic.s", steps=14, seed=5)
    assert seen["calls"] == 15 and seen["warm_solves"] > 0 and seen["reused_records"] > 14 * 50


def test_warm_drop_equals_cold_on_branch_diamonds_and_loops(monkeypatch):
    seen = _checked_sequence(monkeypatch, _branchy(30), "branchy.s", steps=30, seed=11,
                             opts=Options(latency_overrides=FREE))
    assert seen["warm_solves"] > 0 and seen["reused_records"] > 0
    assert seen["dropped"] > 0  # (joins whose wait every path satisfies: the drop is exercised)


@pytest.mark.parametrize("kernel", ["fmha_v3_bwd__bwd_hd128_bf16_a32_pssk.s.gz", "f4gemm_mxfp4_256x256_apre0.s.gz"])
def test_warm_drop_equals_cold_on_real_gfx1250_kernels(monkeypatch, kernel):
    text = gzip.open(AITER / kernel, "rt").read()
    seen = _checked_sequence(monkeypatch, text, kernel[:-3], steps=4, seed=len(kernel))
    assert seen["calls"] >= 3 and seen["reused_records"] > 0


@needs_shared
def test_warm_drop_equals_cold_on_a_gfx942_kernel(monkeypatch):
    text = (ASM / "aiter_gfx942_flatmm_uk_f16f8_128x256x128.s").read_text()
    # (its own waits stripped: the plan's are all the pass's)
    seen = _checked_sequence(monkeypatch, text, "flatmm.s", steps=4, seed=2, opts=Options(replace_waits=True))
    assert seen["calls"] >= 3 and seen["reused_records"] > 0


def test_warm_drop_equals_cold_when_only_planned_waits_change():
    # the same blocks, instructions and facts in every version (one analysis's dataflow), only
    # the planned waits before the drop differ: some go, come back, wait less or more; a
    # block's record must follow its waits although its signature is the same object
    text = _branchy(24)
    an = api.analyze(text, "branchy.s", Options(latency_overrides=FREE), cache=api.AnalysisCache())
    po = an.outputs[0]
    df = po.df
    assert df.block_sig, "the dataflow keeps block signatures (else nothing is reused)"
    base = {k: list(v) for k, v in po.plan.anchor_waits.items()}
    insts = list(base)
    rng = random.Random(7)
    holder = SimpleNamespace(satisfied=None)
    current = dict(base)
    reused = 0
    for version in range(60):
        for inst in rng.sample(insts, 3):
            kind = rng.randrange(3)
            if kind == 0:
                current.pop(inst, None)
            elif kind == 1:
                current[inst] = list(base[inst])
            else:
                spec = list(base[inst])
                for c, v in enumerate(spec):
                    if v != -1:
                        spec[c] = rng.randrange(v + 2)
                current[inst] = spec
        before = dict(holder.satisfied.records) if holder.satisfied is not None else {}
        warm = SimpleNamespace(anchor_waits={k: list(v) for k, v in current.items()})
        cold = SimpleNamespace(anchor_waits={k: list(v) for k, v in current.items()})
        fresh = SimpleNamespace(satisfied=None)
        t_warm: set = set()
        t_cold: set = set()
        got = satisfied.drop_satisfied(warm, df, None, t_warm, holder)
        want = satisfied.drop_satisfied(cold, df, None, t_cold, fresh)
        assert (got, list(warm.anchor_waits.items()), t_warm) == (want, list(cold.anchor_waits.items()), t_cold), version
        assert {gi: b[1:] for gi, b in holder.satisfied.bounds.items()} == \
            {gi: b[1:] for gi, b in fresh.satisfied.bounds.items()}
        reused += sum(1 for b, r in holder.satisfied.records.items() if before.get(b) is r)
    assert reused > 59 * 40  # (most blocks' records were reused, version after version)
