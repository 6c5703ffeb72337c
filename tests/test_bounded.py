"""Issue 7: bounded, always-safe analysis on loop-heavy code.

* loop-heavy random programs: the pass's output passes the independent path checker and the
  solve stays within its documented bound;
* bounded and exact modes agree wherever the exact solve needs no widening (all conformance
  files, every real kernel, random programs);
* the program that makes the exact solve explode finishes with a `widened` diagnostic;
* after an iteration-cap fallback nothing relaxes the forced zeros.
"""

from __future__ import annotations

import glob
import os

import pytest
from hypothesis import HealthCheck, given, settings

from stinkywait_core.analysis.implicit_deps import build_implicit_dependencies
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.validate.exhaustive import check_function
from stinkywait_core.waitcnt import dataflow as D
from stinkywait_core.waitcnt.pipeline import emit_waits, plan_function

from proggen import DIAMOND, GenParams, programs, random_program

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared")
LOOPY = GenParams(shapes=("loop", "self_loop", "diamond", "early_exit", "loop"), max_depth=2,
                  max_regions=3, max_ops=5)


def _run(spec, options: Options):
    func = spec.to_function()
    build_implicit_dependencies(func)
    po = plan_function(func, options)
    emit_waits(po)
    return func, po


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(LOOPY))
def test_loop_heavy_programs_are_safe_and_bounded(spec):
    # Tensor state crosses back edges only with enableLoopCarriedTokenDeps (upstream's default
    # freezes it after sweep 0 and leaves loop-carried tensor RAW to `mod.loopcarriedraw`).
    # (validate.exhaustive proves upstream's spec: the upstream model's plan is what it checks)
    opts = spec.options().replace(bounded=True, enable_loop_carried_token_deps=True, model="upstream")
    func, po = _run(spec, opts)
    assert po.df.sweeps <= po.df.cap
    for qs in (st.queues for st in po.df.exit_state.values()):
        for c_queues in qs:
            assert all(len(q.ops) <= 64 for q in c_queues)
    res = check_function(func, opts, max_trips=2)
    assert not res.violations, (spec.to_stir(), [str(v) for v in res.violations])


def _corpus_files() -> list[str]:
    stir = sorted(glob.glob(os.path.join(SHARED, "conformance", "upstream", "*.stir")))
    asm = sorted(glob.glob(os.path.join(SHARED, "corpus", "asm", "*.s")))
    return stir + asm


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared is absent")
@pytest.mark.parametrize("path", _corpus_files(), ids=os.path.basename)
def test_bounded_equals_exact_on_corpus(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    for nw in (0, 1, 4):
        for replace_waits in (False, True):
            base = Options(num_waves=nw, replace_waits=replace_waits)
            bounded = analyze(text, path, base)
            exact = analyze(text, path, base.replace(bounded=False))
            assert not any(f.widened for f in bounded.functions)
            assert bounded.inserted_text() == exact.inserted_text()


def test_bounded_equals_exact_when_no_widening_was_needed():
    compared = 0
    for seed in range(150):
        spec = random_program(seed, LOOPY)
        _, po = _run(spec, spec.options().replace(bounded=True))
        if po.df.widening:
            continue
        text = spec.to_stir()
        a = analyze(text, "p.stir", spec.options().replace(bounded=True)).inserted_text()
        b = analyze(text, "p.stir", spec.options().replace(bounded=False)).inserted_text()
        assert a == b, text
        compared += 1
    assert compared >= 20


EXPLODE = """st.func @explode() {
^entry:
  v[0:3] = "st.global_load_b128"(v[40:41], off)
  "st.s_branch"("outer")
  Successors: ^outer
^outer:
  v[4:7] = "st.global_load_b128"(v[42:43], off)
  SCC0 = "st.s_cmp_eq_u32"(s13, 0x1)
  "st.s_cbranch_scc1"("inner", SCC0)
  Successors: ^inner, ^a1
^a1:
  v[8:9] = "st.ds_load_b64"(v10)
  "st.s_branch"("inner")
  Successors: ^inner
^inner:
  v[12:15] = "st.global_load_b128"(v[44:45], off)
  SCC0 = "st.s_cmp_eq_u32"(s14, 0x1)
  "st.s_cbranch_scc1"("d1", SCC0)
  Successors: ^d1, ^d2
^d1:
  v[16:17] = "st.ds_load_b64"(v11)
  v[18:21] = "st.global_load_b128"(v[46:47], off)
  "st.s_branch"("j")
  Successors: ^j
^d2:
  v[22:23] = "st.ds_load_b64"(v32)
  "st.s_branch"("j")
  Successors: ^j
^j:
  SCC0 = "st.s_cmp_eq_u32"(s15, 0x1)
  "st.s_cbranch_scc1"("inner", SCC0)
  Successors: ^inner, ^olatch
^olatch:
  v[24:25] = "st.ds_load_b64"(v13)
  SCC0 = "st.s_cmp_eq_u32"(s16, 0x1)
  "st.s_cbranch_scc1"("outer", SCC0)
  Successors: ^outer, ^exit
^exit:
  v30 = "st.v_add_f32"(v0, v4)
  v31 = "st.v_add_f32"(v12, v18)
  v33 = "st.v_add_f32"(v22, v24)
}
"""


def test_exploding_program_is_widened_and_safe():
    up = Options(model="upstream")  # (the spec-level checker proves the upstream model's plan)
    an = analyze(EXPLODE, "x.stir", up)
    assert any(d.code == "widened" for d in an.diagnostics)
    assert an.functions[0].widened
    out = analyze(an.inserted_text(), "x.stir", up)
    res = check_function(out.module.functions[0], up, max_trips=2)
    assert not res.violations
    # running the pass on its own output changes nothing
    assert out.waits() == []


def test_loop_that_only_produces_converges_without_the_cap():
    text = """st.func @produce() {
^entry:
  "st.s_branch"("loop")
  Successors: ^loop
^loop:
  v[0:3] = "st.global_load_b128"(v[40:41], off)
  v[4:7] = "st.global_load_b128"(v[42:43], off)
  SCC0 = "st.s_cmp_eq_u32"(s13, 0x1)
  "st.s_cbranch_scc1"("loop", SCC0)
  Successors: ^loop, ^exit
^exit:
  v30 = "st.v_add_f32"(v0, v4)
}
"""
    an = analyze(text, "p.stir", Options())
    assert all(f.converged for f in an.functions)
    # each load waits for its own previous trip (gfx12+ VMEM may write VGPRs out of order: WAW,
    # as LLVM), the exit for both
    assert [(w.instruction, w.rule) for w in an.waits()] == [
        ("s_wait_loadcnt 1", "WAW"), ("s_wait_loadcnt 1", "WAW"), ("s_wait_loadcnt 0", "RAW")]


def test_no_relaxation_after_cap_fallback(monkeypatch):
    """Force the cap: the all-zero plan must survive (ShallowPredPromotion skipped)."""
    text = DIAMOND
    relaxed = [w.instruction for w in analyze(text, "d.stir", Options()).waits()]
    # (the merge also overwrites the address of a load in flight on ^p_deep: xcnt)
    assert relaxed == ["s_wait_loadcnt 1", "s_wait_loadcnt 3", "s_wait_xcnt 1"]
    real_init = D.WaitDataflow.__init__

    def tiny_cap(self, *a, **kw):
        real_init(self, *a, **kw)
        self.cap = 1

    monkeypatch.setattr(D.WaitDataflow, "__init__", tiny_cap)
    an = analyze(text, "d.stir", Options())
    assert not an.functions[0].converged
    # (loadcnt 0 retires every load, translation included: no xcnt wait is left)
    assert [w.instruction for w in an.waits()] == ["s_wait_loadcnt 0"]
    assert any(d.code == "iteration-cap" for d in an.diagnostics)
    # upstream's exact mode runs the optimizer on the forced plan and relaxes it
    up = analyze(text, "d.stir", Options.upstream())
    assert [w.instruction for w in up.waits()] == ["s_wait_loadcnt 1", "s_wait_loadcnt 3"]
