"""What the hardware checker's run in the review costs, and that the savings change nothing
(issue 21: diagnostics for hand-written waits within 200 ms of an edit).

* The run on the file as written parses from the checker's parse of the previous version
  (review_proof.py `_parsed_as_written`): unchanged lines keep their objects, and the review
  equals the cold review on every edited version (tests/test_review_incremental.py pins the
  same on random edits of the corpus GEMMs; here one small edit, and the objects).
* A tensor DMA's side of an LDS pair is decoded once per instruction, not once per pair
  (validate/lds_overlap.py `AddressRegions._side`): on the gfx1250 GEMM ~10 tensor ops meet
  1.5k accesses; the verdicts are those of the decoding per pair.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.cache import AnalysisCache
from stinkywait_core.results import Options
from stinkywait_core.validate import lds_overlap

REPO = Path(__file__).resolve().parents[1]
ASM = REPO.parent / "shared" / "corpus" / "asm"
GEMM2 = ASM / "aiter_gfx1250_mxscale_gemm2_final_isa.s"
needs_shared = pytest.mark.skipif(not GEMM2.is_file(), reason="../shared corpus not present")


def _findings(diags) -> list[tuple]:
    return [(d.code, d.line, d.col, d.message, sorted(d.data.items())) for d in diags]


def _checker_module(cache: AnalysisCache, path: str):
    scratch = cache.review_scratch
    assert scratch is not None, "the review kept no scratch cache"
    return scratch.module(path, ("hwcheck", Options(), "asm"))


@needs_shared
def test_the_checker_parses_the_next_version_from_its_last_parse():
    path = str(GEMM2)
    lines = GEMM2.read_text().splitlines(keepends=True)
    cache = AnalysisCache()
    first = analyze("".join(lines), path, Options(), cache=cache).check_diagnostics()
    assert any(d.code in ("redundant-wait", "stricter-wait") for d in first), "nothing for the checker to prove"
    before = _checker_module(cache, path)
    assert before is not None, "the checker's parse of the file as written was not kept"
    kept = {id(i): i for f in before.functions for b in f.blocks for i in b.instrs}
    # rename one VALU destination, far from the waits
    k = [i for i, ln in enumerate(lines) if re.match(r"\tv_\w+ v\d+,", ln)][-40]
    lines[k] = re.sub(r"^(\tv_\w+ )v\d+", r"\g<1>v201", lines[k], count=1)
    text = "".join(lines)
    warm = analyze(text, path, Options(), cache=cache).check_diagnostics()
    after = _checker_module(cache, path)
    assert after is not None and after is not before
    same = sum(1 for f in after.functions for b in f.blocks for i in b.instrs if kept.get(id(i)) is i)
    total = sum(len(b.instrs) for f in after.functions for b in f.blocks)
    assert same >= total - 2, "the unchanged lines were parsed again"
    assert _findings(warm) == _findings(analyze(text, path, Options()).check_diagnostics())


@needs_shared
def test_a_tensor_side_is_decoded_once_per_instruction(monkeypatch):
    from stinkywait_core.analysis.lds_facts import module_facts
    from stinkywait_core.syntax import parse
    from stinkywait_core.validate.hwcheck import check_function
    module = parse(GEMM2.read_text(), str(GEMM2), "asm")
    func = module.functions[0]
    decoded: list[int] = []
    real = lds_overlap.tensor_bytes

    def counting(inst, flow):
        decoded.append(id(inst))
        return real(inst, flow)

    monkeypatch.setattr(lds_overlap, "tensor_bytes", counting)
    facts = module_facts(module, "gfx1250")[func]
    regions = lds_overlap.AddressRegions(facts)
    got = check_function(func, Options(), regions=regions)
    by_id = {id(i): i for b in func.blocks for i in b.instrs}
    tensor_pairs = [k for k in regions._pairs if lds_overlap.is_tensor(by_id[k[0]]) or lds_overlap.is_tensor(by_id[k[1]])]
    assert len(tensor_pairs) > len(set(decoded)), "no tensor op met more than one access"
    assert len(decoded) == len(set(decoded)), "a tensor's descriptor was decoded again"
    # the same verdicts as a decoding per pair
    fresh = lds_overlap.AddressRegions(facts)
    for a_id, b_id, same_trip in tensor_pairs:
        a, b = by_id[a_id], by_id[b_id]
        fresh._sides = {}  # (forgotten before each pair)
        assert fresh._tensor_pair(a, b) == regions._pairs[(a_id, b_id, same_trip)][0]
    assert got.steps > 0



@needs_shared
def test_the_checkers_facts_from_the_memo_are_the_facts_of_a_cold_parse():
    """Random one-line edits of a real kernel (a register renamed, a line deleted, duplicated,
    an `s_nop` typed, two lines swapped), each version parsed from the last as the review's
    runs on the file as written do, its facts made with the memo, against a cold parse's."""
    import random

    from stinkywait_core.syntax import parse
    from stinkywait_core.targets import get_target
    from stinkywait_core.validate.hwfacts import Facts, function_facts
    from test_incremental_regions import _edit

    target = get_target("gfx1250", "hw")
    regions = lds_overlap.TokenRegions()
    path = str(GEMM2)
    lines = GEMM2.read_text().splitlines(keepends=True)
    rng = random.Random(49)
    memo: dict = {}
    prev = None
    hits = 0
    fields = [s for s in Facts.__slots__ if s != "inst"]
    for step in range(8):
        if step:
            lines = _edit(lines, rng)
        text = "".join(lines)
        module = parse(text, path, "asm", previous=prev)
        prev = module
        kept = dict(memo.get((target.name, module.functions[0].name)) or {})
        warm = function_facts(module.functions[0], target, regions, memo)
        hits += sum(1 for k, f in warm.items() if kept.get(k, (None,))[0] is f.inst)
        cold_func = parse(text, path, "asm").functions[0]
        cold = function_facts(cold_func, target, regions)
        got = [tuple(getattr(f, s) for s in fields) for f in sorted(warm.values(), key=lambda f: f.sid)]
        want = [tuple(getattr(f, s) for s in fields) for f in sorted(cold.values(), key=lambda f: f.sid)]
        assert got == want, f"edit {step}"
    assert hits > 1000, "the memo was not used"
