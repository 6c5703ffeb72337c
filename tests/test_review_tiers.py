"""The review in two tiers and carried across versions (issue 21, "diagnostics within 200 ms").

* `Analysis.missing_diagnostics` (what the language server pushes with the hints, before the
  review) is exactly the review's first records: the review tier only adds to it.
* A function whose text, the text around every function and the options are unchanged keeps
  the previous review's verdict on its offered changes (review_reuse.py): an edit in one
  kernel of a file re-proves only that kernel, and the result is the cold review's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stinkywait_core import review as review_module
from stinkywait_core.api import AnalysisCache, analyze
from stinkywait_core.results import Options

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "lsp" / "data"
SHARED = ROOT.parent / "shared" / "corpus" / "asm"


def _key(d) -> tuple:
    return (d.code, d.severity, d.line, d.col, d.end_line, d.end_col, d.message, sorted(d.data.items()),
            d.function, [(r.line, r.col, r.message) for r in d.related])


def _inputs() -> list[Path]:
    out = sorted(ROOT.glob("examples/*.s")) + sorted(DATA.glob("*.s"))
    if SHARED.is_dir():
        out.append(SHARED / "aiter_gfx942_flatmm_uk_f16f8_128x256x128.s")
    return out


@pytest.mark.parametrize("path", _inputs(), ids=lambda p: p.name)
def test_the_plan_tier_is_the_reviews_first_records(path: Path):
    text = path.read_text()
    an = analyze(text, str(path), Options())
    missing = [_key(d) for d in an.missing_diagnostics()]
    full = [_key(d) for d in an.check_diagnostics()]
    assert full[:len(missing)] == missing
    assert not [k for k in full[len(missing):] if k[0] == "missing-wait"]
    # a fresh analysis of the same text (the review worker's) gives the same records
    assert [_key(d) for d in analyze(text, str(path), Options()).missing_diagnostics()] == missing


def _kernel(name: str) -> list[str]:
    """checked.s's kernel under another name: a missing wait, a stricter and two redundant
    hand-written waits."""
    body = (DATA / "checked.s").read_text().split("lsp_checked:\n", 1)[1]
    return [f"\t.globl\t{name}\n", f"\t.type\t{name},@function\n", f"{name}:\n", body]


def _two_kernels() -> str:
    return "".join(['\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n', "\t.text\n",
                    *_kernel("k_first"), *_kernel("k_second")])


class Verified:
    """Records which functions' changes the review verified (re-planned or proved)."""

    def __init__(self, monkeypatch):
        self.functions: list[set[str]] = []
        plan_verified = review_module._plan_verified

        def spy(an, lines, usable, analyze_fn):
            self.functions.append({c.function for c in usable})
            return plan_verified(an, lines, usable, analyze_fn)

        monkeypatch.setattr(review_module, "_plan_verified", spy)


def test_an_edit_in_one_kernel_reproves_only_that_kernel(monkeypatch):
    spy = Verified(monkeypatch)
    text = _two_kernels()
    cache = AnalysisCache()
    first = analyze(text, "two.s", Options(), cache=cache).check_diagnostics()
    assert spy.functions == [{"k_first", "k_second"}]
    offered = {(d.function, d.code) for d in first}
    assert {("k_second", "redundant-wait"), ("k_second", "stricter-wait")} <= offered
    # a new instruction in the first kernel: the second one moves down a line
    edited = text.replace("\tv_mov_b32_e32 v1, s4\n", "\tv_mov_b32_e32 v1, s4\n\tv_mov_b32_e32 v2, s5\n", 1)
    spy.functions.clear()
    again = analyze(edited, "two.s", Options(), cache=cache).check_diagnostics()
    assert spy.functions == [{"k_first"}]
    cold = analyze(edited, "two.s", Options()).check_diagnostics()
    assert [_key(d) for d in again] == [_key(d) for d in cold]
    moved = [d.line for d in again if d.function == "k_second" and d.code != "missing-wait"]
    assert moved == [d.line + 1 for d in first if d.function == "k_second" and d.code != "missing-wait"]


def test_the_text_around_the_kernels_is_part_of_every_verdict(monkeypatch):
    """A directive between the kernels may change what any of them needs (launch facts, LDS
    regions): nothing is reused then."""
    spy = Verified(monkeypatch)
    text = _two_kernels()
    cache = AnalysisCache()
    analyze(text, "two.s", Options(), cache=cache).check_diagnostics()
    edited = text.replace("\t.globl\tk_second\n", "\t.p2align\t8\n\t.globl\tk_second\n", 1)
    spy.functions.clear()
    again = analyze(edited, "two.s", Options(), cache=cache).check_diagnostics()
    assert spy.functions == [{"k_first", "k_second"}]
    assert [_key(d) for d in again] == [_key(d) for d in analyze(edited, "two.s", Options()).check_diagnostics()]
