"""Issue 19 item 6: the per-producer join, and widening never raising an alarm it did not prove.

* the per-producer join (`Options(producer_join="always")`, waitcnt/producer_join.py) plans
  exactly the waits of the exact per-predecessor solve: every corpus file, aiter's gfx1250
  kernels, random programs of tests/proggen.py and tests/hwproggen.py on four targets;
* a chain of exec-masked diamonds holding global atomics (the shape of aiter's gfx950 MoE
  epilogues, compiler style) explodes the exact state: the default analysis now solves it by
  producer, exactly, and `check` finds the hand-written waits correct (no widening error);
* where widening still happens (`producer_join="never"` here), `check` reports its forced
  drains as unproven warnings that say they are an approximation, never as errors, and the
  `widened` diagnostics are warnings that name the block.
"""

from __future__ import annotations

import glob
import gzip
import os
import subprocess
import sys

import pytest

from hwplan import planned
from hwproggen import params_for, random_hw_program
from proggen import GenParams, random_program
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.validate.hwcheck import check_function

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(HERE, "..", "..", "shared")
ALWAYS = Options(producer_join="always")
EXACT = Options(bounded=False)


def _waits(an) -> list[tuple]:
    return [(w.line, w.insert_line, w.instruction, w.tail_drain) for w in an.waits()]


def _same(text: str, path: str, base: Options = Options(), strict: bool = True) -> bool:
    """The join forced from the start plans what the exact solve plans.  `strict` False: a
    program whose join gave up (an op pushed out of a joined timeline's 64-op window, where
    the join is not proven exact, so the function is widened) is not compared (False)."""
    joined = analyze(text, path, base.replace(producer_join="always"))
    if not strict and any(po.df.widening and po.df.join_overflowed for po in joined.outputs):
        return False
    exact = analyze(text, path, base.replace(bounded=False))
    assert not any(f.widened for f in joined.functions)
    assert _waits(joined) == _waits(exact)
    assert joined.inserted_text() == exact.inserted_text()
    return True


def _files() -> list[str]:
    out = sorted(glob.glob(os.path.join(SHARED, "corpus", "asm", "*.s")))
    out += sorted(glob.glob(os.path.join(SHARED, "conformance", "upstream", "*.stir")))
    return out + sorted(glob.glob(os.path.join(HERE, "data", "aiter_gfx1250", "*.s.gz")))


@pytest.mark.parametrize("path", _files(), ids=os.path.basename)
def test_producer_join_equals_exact_on_real_kernels(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            text = f.read()
        path = path[:-3]
    else:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    if not _same(text, path, strict=not path.endswith(".s")):
        # the join gave up on this kernel (more than 64 ops in flight on a joined timeline:
        # the publish rule, decision 45, lets LDS traffic run across barriers), so the forced
        # join widened: an approximation, which is never an error
        joined = analyze(text, path, Options(producer_join="always"))
        assert any(f.widened for f in joined.functions)
        assert not [d for d in joined.diagnostics if d.severity == "error"]
    if path.endswith(".stir"):  # (the spec's own files: every NumWaves the conformance uses)
        _same(text, path, Options(num_waves=1, replace_waits=True))


LOOPY = GenParams(shapes=("loop", "self_loop", "diamond", "early_exit", "loop"), max_depth=2,
                  max_regions=3, max_ops=5)


def _exact_finishes(text: str, path: str, options: Options) -> bool:
    """The exact attempt stays within the bounded mode's work budget (beyond it the exact
    solve may take minutes; those programs are the ones the join is for, tested below)."""
    an = analyze(text, path, options)
    return not any(po.df.join_reason or po.df.widening for po in an.outputs)


@pytest.mark.parametrize("params", [GenParams(), LOOPY], ids=["proggen", "loopy"])
def test_producer_join_equals_exact_on_random_programs(params):
    compared = 0
    for seed in range(60):
        spec = random_program(seed, params)
        text, opts = spec.to_stir(), spec.options()
        if _exact_finishes(text, "p.stir", opts):
            compared += _same(text, "p.stir", opts, strict=False)
    assert compared >= 20


@pytest.mark.parametrize("arch", ["gfx1250", "gfx1200", "gfx942", "gfx1100"])
def test_producer_join_equals_exact_on_hardware_programs(arch):
    compared = 0
    for seed in range(40):
        spec = random_hw_program(seed, params_for(arch))
        text, opts = spec.to_stir(), spec.options(arch=arch)
        if _exact_finishes(text, "hw.stir", opts):
            compared += _same(text, "hw.stir", opts, strict=False)
    assert compared >= 20


def moe_chain(k: int, waits: bool = True) -> str:
    """Two loads, `k` exec-masked diamonds each holding a global atomic (2^k paths), three
    more loads, then the hand-written waits a compiler gives: vmcnt(3) for the first two
    (on the path without atomics three loads are younger), vmcnt(0) for the rest."""
    out = ['\t.amdgcn_target "amdgcn-amd-amdhsa--gfx950"', "\t.text", "\t.globl chain", "\t.p2align 8",
           "\t.type chain,@function", "chain:",
           "\tglobal_load_dword v1, v[2:3], off", "\tglobal_load_dword v6, v[2:3], off offset:4"]
    for i in range(k):
        out += [f"\tv_cmp_gt_u32_e32 vcc, {i + 1}, v0", "\ts_and_saveexec_b64 s[4:5], vcc",
                f"\ts_cbranch_execz .LBB0_{i}", f"\tglobal_atomic_add v[10:11], v{12 + i % 8}, off",
                f".LBB0_{i}:", "\ts_or_b64 exec, exec, s[4:5]"]
    out += ["\tglobal_load_dword v7, v[8:9], off", "\tglobal_load_dword v20, v[8:9], off offset:8",
            "\tglobal_load_dword v21, v[8:9], off offset:16"]
    if waits:
        out.append("\ts_waitcnt vmcnt(3)")
    out.append("\tv_add_u32_e32 v5, v1, v6")
    if waits:
        out.append("\ts_waitcnt vmcnt(0)")
    out += ["\tv_add_u32_e32 v5, v7, v5", "\tv_add_u32_e32 v5, v20, v5", "\tv_add_u32_e32 v5, v21, v5",
            "\tglobal_store_dword v[2:3], v5, off", "\ts_endpgm"]
    return "\n".join(out) + "\n"


#: each wait right before its first consumer (CoalesceWaits would fold the vmcnt(3) into the
#: vmcnt(0) a few lines on, and a forced vmcnt 0 would look the same)
SPEC_PLACEMENT = Options(coalesce_window=0)


def test_small_chain_needs_no_join_and_agrees():
    text = moe_chain(6, waits=False)
    an = analyze(text, "c.s", SPEC_PLACEMENT)
    assert not an.functions[0].widened
    assert not any(d.code in ("widened", "joined-by-producer") for d in an.diagnostics)
    _same(text, "c.s")
    assert [w.instruction for w in an.waits()] == [f"s_waitcnt vmcnt({n})" for n in (3, 2, 1, 0)]


def test_exploding_chain_is_joined_by_producer_exactly():
    text = moe_chain(12, waits=False)
    an = analyze(text, "c.s", SPEC_PLACEMENT)
    f = an.functions[0]
    assert not f.widened
    assert any(d.code == "joined-by-producer" and d.severity == "info" for d in an.diagnostics)
    assert not any(d.code == "widened" for d in an.diagnostics)
    # the exact waits (what the small chain and the exact solve give), not a forced vmcnt 0
    assert [(w.instruction, w.rule) for w in an.waits()] == [(f"s_waitcnt vmcnt({n})", "RAW") for n in (3, 2, 1, 0)]
    exact = analyze(text, "c.s", SPEC_PLACEMENT.replace(bounded=False))  # (2^12 paths: under a second)
    assert _waits(an) == _waits(exact) and an.inserted_text() == exact.inserted_text()
    _same(text, "c.s", SPEC_PLACEMENT)
    # and the hardware checker, which shares no reasoning with the pass, proves them
    p = planned(text, SPEC_PLACEMENT.replace(arch="gfx950"), "c.s")
    res = check_function(p.func, Options(arch="gfx950"), max_trips=2)
    assert not res.violations, [str(v) for v in res.violations][:3]


def test_exploding_chain_hand_written_waits_are_correct():
    an = analyze(moe_chain(12), "c.s", Options(replace_waits=False))
    assert [d for d in an.check_diagnostics() if d.severity == "error"] == []


def _check(path: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stinkywait_core.cli.main", "check", *args, path],
                          capture_output=True, text=True, cwd=ROOT)


def test_check_reports_no_error_on_the_exploding_chain(tmp_path):
    path = tmp_path / "chain.s"
    path.write_text(moe_chain(12))
    r = _check(str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "error:" not in r.stdout
    assert "widening" not in r.stdout


def test_widening_is_a_warning_that_says_approximation():
    """Widening forced (the per-producer join off): the forced drains are unproven findings,
    warnings naming the approximation, never errors."""
    never = Options(producer_join="never")
    an = analyze(moe_chain(12), "c.s", never)
    assert an.functions[0].widened
    widened = [d for d in an.diagnostics if d.code == "widened"]
    assert widened and all(d.severity == "warning" for d in widened)
    assert any("approximation" in d.message and "meet at" in d.message for d in widened)  # names the block
    from stinkywait_core.findings import present, planned_wait_of, waits_by_key
    by_key = waits_by_key(an.waits())
    shown = [present(d, planned_wait_of(d, by_key)) for d in an.check_diagnostics()]
    shown = [d for d in shown if d is not None]
    assert not [d for d in shown if d.severity == "error"], [d.message for d in shown]
    forced = [d for d in shown if "widening" in d.message]
    assert forced and all(d.severity == "warning" and "approximated" in d.message for d in forced)
