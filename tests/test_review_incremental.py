"""The review of a document's next version gives the cold review exactly (issue 21: the
review tier within 200 ms).

The review carries state across a document's versions: its trial re-plans run on a cache of
their own kept with the document's (`AnalysisCache.review_scratch`, so the next version's
trials re-plan incrementally), the verdicts per function (review_reuse.py), and the missing
waits' records.  None of that may change a finding: each step applies a random one-line edit
to a real kernel nobody here wrote, reviews the version with the document's cache and from
scratch, and compares every diagnostic.  The small kernels pin that a verdict an edit makes
wrong is not carried: a relaxation offered on one version is withdrawn on the next, where a
read it would leave unprotected appears, and offered again when the read goes.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.cache import AnalysisCache
from stinkywait_core.results import Options
from test_incremental_regions import _edit

REPO = Path(__file__).resolve().parents[1]
ASM = REPO.parent / "shared" / "corpus" / "asm"
needs_shared = pytest.mark.skipif(not ASM.is_dir(), reason="../shared corpus not present")


def _findings(diags) -> list[tuple]:
    return [(d.code, d.line, d.col, d.message, sorted(d.data.items())) for d in diags]


@needs_shared
@pytest.mark.parametrize("name,steps", [("aiter_gfx1250_mxscale_gemm2_final_isa.s", 5),
                                        ("aiter_gfx1250_mxscale_gemm1_final_isa.s", 3)])
def test_the_review_of_each_edited_version_equals_the_cold_review(name: str, steps: int):
    path = str(ASM / name)
    lines = (ASM / name).read_text().splitlines(keepends=True)
    rng = random.Random(21)
    cache = AnalysisCache()
    analyze("".join(lines), path, Options(), cache=cache).check_diagnostics()
    for step in range(steps):
        lines = _edit(lines, rng)
        text = "".join(lines)
        warm = _findings(analyze(text, path, Options(), cache=cache).check_diagnostics())
        cold = _findings(analyze(text, path, Options()).check_diagnostics())
        assert warm == cold, f"{name}, edit {step}"


_TARGET = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\nk:\n'
_COVERED = _TARGET + ("  ds_load_b32 v1, v0\n  ds_load_b32 v2, v0 offset:4\n  s_wait_dscnt 0x0\n"
                      "  v_add_f32 v3, v1, v1\n  s_wait_dscnt 0x0\n  v_add_f32 v4, v2, v2\n  s_endpgm\n")
#: the author's second wait replaced by a nop (lines stay put): nothing but line 5 covers v2
_UNCOVERED = _COVERED.replace("  s_wait_dscnt 0x0\n  v_add_f32 v4", "  s_nop 0\n  v_add_f32 v4")


def test_a_relaxation_an_edit_makes_wrong_is_withdrawn_and_offered_again():
    cache = AnalysisCache()
    offers = []
    for text in (_COVERED, _UNCOVERED, _COVERED):
        diags = analyze(text, "k.s", Options(), cache=cache).check_diagnostics()
        offers.append([(d.line, d.code) for d in diags if d.code in ("stricter-wait", "redundant-wait")])
    assert offers == [[(5, "stricter-wait"), (7, "redundant-wait")], [], [(5, "stricter-wait"), (7, "redundant-wait")]]
