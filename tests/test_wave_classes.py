"""The publish rule paired per class of wave views (issue 22; waitcnt/wave_classes.py for the
pass, validate/hwpublish.WaveView.classes for the checker) on aiter's gfx950 a8w8 cktile GEMM
with its launch declared one-dimensional (the corpus copy has no ``reqd_workgroup_size``, so no
wave index is named from v0 without the declaration): waves 0-3 and 4-7 run one barrier apart
and each group fills its own half of the B tile, so the loop's fills run across the loop's
barriers as the authors' ``vmcnt(4)`` lets them.  Near miss: group 4-7's B offset made group
0-3's, so the two groups' fills meet at one barrier instance: the drains come back, and the
checker reports the barrier when one is removed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module

NAME = "aiter_gfx950_a8w8_cktile_gemm_256x256x128.s"
DECLARE = "; stinkywait: workgroup-size 512 1 1\n"
#: group 4-7's B-tile offset (its second half of the rows: + 0x4200)
OWN_HALF = "\ts_add_i32 s47, s5, s3\n\ts_add_i32 s3, s46, s47\n"
SAME_HALF = "\ts_mov_b32 s47, s5\n\ts_add_i32 s3, s46, s47\n"


def _kernel() -> str:
    here = Path(__file__).resolve()
    for root in (here.parents[2], here.parents[3]):
        path = root / "shared" / "corpus" / "asm" / NAME
        if path.exists():
            return DECLARE + path.read_text()
    pytest.skip("../shared/corpus/asm not available")


def _loop_lines(text: str) -> range:
    lines = text.split("\n")
    head = next(i for i, ln in enumerate(lines) if ln.startswith(".LBB9_25:"))
    tail = next(i for i, ln in enumerate(lines) if "s_cbranch_scc1 .LBB9_25" in ln)
    return range(head + 1, tail + 2)


def _fills_left(text: str) -> tuple:
    """(the analysis, the vmcnt our plan leaves at the loop's second and fourth barriers,
    where the authors wait for vmcnt(4): None when no vmcnt wait is planned there)."""
    an = analyze(text, NAME, Options(replace_waits=True))
    lines = text.split("\n")
    bars = [i + 1 for i in _loop_lines(text) if lines[i].strip() == "s_barrier"]
    left = []
    for line in (bars[1], bars[3]):
        counts = [int(w.insert_text.split("vmcnt(")[1].split(")")[0]) for w in an.waits()
                  if w.line == line and "vmcnt(" in w.insert_text]
        left.append(min(counts) if counts else None)
    return an, left


def _violations(text: str) -> list:
    mod = parse_asm(text, NAME)
    return [v for r in check_module(mod, Options(arch=mod.target or "gfx950"), lds_addresses=True, max_trips=2)
            for v in r.violations]


def test_each_groups_fills_run_across_the_loop_barriers():
    text = _kernel()
    an, left = _fills_left(text)
    assert all(n is None or n >= 4 for n in left), left  # (the newest four fills stay in flight)
    assert _violations(an.inserted_text()) == []


def test_near_miss_groups_filling_the_same_rows_drain_and_the_checker_sees_it():
    text = _kernel()
    assert text.count(OWN_HALF) == 1
    text = text.replace(OWN_HALF, SAME_HALF)
    an, left = _fills_left(text)
    assert 0 in left, left  # (the two groups' B fills meet at one barrier instance: drained)
    out = an.inserted_text()
    assert _violations(out) == []
    # the drain the near miss added made the authors' vmcnt(4) by hand: the checker's own
    # class pairing reports the barrier
    lines = out.split("\n")
    bars = [i for i in _loop_lines(out) if lines[i].strip() == "s_barrier"]
    k = next(i for i in (bars[1], bars[3]) if "vmcnt(0)" in lines[i - 1])
    lines[k - 1] = lines[k - 1].replace("vmcnt(0)", "vmcnt(4)")
    assert any(v.rule == "barrier" for v in _violations("\n".join(lines)))
