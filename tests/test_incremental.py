"""Incremental re-planning gives exactly what a from-scratch analysis gives.

An `AnalysisCache` carries each function from one version of a document to the next
(adopted instructions, per-unit SSA, memoised chunk walks).  Every test here edits a text
step by step, analyses each version with the cache and without, and compares everything a
user can see: the JSON plan (waits, reasons, producers, diagnostics), the inserted text, the
FIFO views of every line and the review of hand-written waits.
"""

from __future__ import annotations

import random
import re
import zlib
from pathlib import Path

import pytest

from stinkywait_core import api
from stinkywait_core.results import Options
from stinkywait_core.waitcnt import incremental
from tests.proggen import GenParams, random_program


@pytest.fixture(autouse=True)
def _small_proof_budget(monkeypatch):
    """The review's hardware-checker proof (review_proof.py) is deterministic, counted in
    checker steps, so incremental and fresh reviews must agree under any budget; a tenth of
    the server's keeps these edit sequences from spending minutes in proofs of random loop
    nests (which seldom finish anyway), and the proof still runs and offers edits."""
    from stinkywait_core import review_proof
    monkeypatch.setattr(review_proof, "STEP_BUDGET", review_proof.STEP_BUDGET // 10)
    monkeypatch.setattr(review_proof, "RUN_STEPS", review_proof.RUN_STEPS // 10)

SHARED = Path(__file__).resolve().parents[2] / "shared"
ASM = SHARED / "corpus" / "asm"
CORPUS = SHARED / "conformance" / "upstream"
needs_shared = pytest.mark.skipif(not ASM.is_dir(), reason="../shared corpus not present")

REG = re.compile(r"\b([vs])(\d+)\b")


def _fingerprint(an: api.Analysis) -> tuple:
    """Everything observable about an analysis, as plain data."""
    fifo = []
    for f in an.functions:
        for line in f.fifo.keys():
            fifo.append((f.name, line, repr(f.fifo[line])))
    producers = [(f.name, ln, f.producers[ln]) for f in an.functions for ln in f.producers.keys()]
    return (an.to_json(), an.inserted_text(explain=True), fifo, producers,
            [d.to_json() for d in an.check_diagnostics()])


def _edit(lines: list[str], rng: random.Random, stir: bool) -> list[str]:
    """One random local edit: a register renamed, a line deleted, duplicated or moved down
    by a blank line, a comment typed.  Labels and branches may break too (a CFG change)."""
    lines = list(lines)
    body = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith((".", "//", ";"))]
    if not body:
        return lines
    i = rng.choice(body)
    kind = rng.randrange(6)
    if kind == 0 and REG.search(lines[i]):
        ms = list(REG.finditer(lines[i]))
        m = rng.choice(ms)
        lines[i] = lines[i][:m.start(2)] + str(int(m.group(2)) ^ rng.choice((1, 2, 4))) + lines[i][m.end(2):]
    elif kind == 1:
        del lines[i]
    elif kind == 2:
        lines.insert(i, lines[i])
    elif kind == 3:
        lines.insert(i, "\n")
    elif kind == 4:
        lines[i] = lines[i].rstrip("\n") + ("  // typed\n")
    else:
        j = rng.choice(body)
        lines[i], lines[j] = lines[j], lines[i]
    return lines


def _run_sequence(text: str, path: str, options: Options, steps: int, seed: int, stir: bool) -> int:
    rng = random.Random(seed)
    cache = api.AnalysisCache()
    lines = text.splitlines(keepends=True)
    reused = 0
    for _ in range(steps):
        lines = _edit(lines, rng, stir)
        t = "".join(lines)
        warm = api.analyze(t, path, options, cache=cache)
        cold = api.analyze(t, path, options)
        assert _fingerprint(warm) == _fingerprint(cold)
        reused += sum(ch.memo.hits for ch in cache._d.values() if ch.memo is not None)
    return reused


@needs_shared
@pytest.mark.parametrize("options", [Options(), Options(replace_waits=True), Options.upstream(),
                                     Options(arch="gfx1250:xnack+")],
                         ids=["safe", "replace-waits", "upstream", "xnack"])
def test_gemm_edit_sequence(options: Options) -> None:
    text = (ASM / "aiter_gfx1250_mxscale_gemm1_final_isa.s").read_text()
    reused = _run_sequence(text, "gemm1.s", options, steps=6, seed=7, stir=False)
    assert reused > 0, "the memo never answered: the test would not see a stale reuse"


@needs_shared
@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.stir"))[::4] if CORPUS.is_dir() else [],
                         ids=lambda p: p.stem)
def test_corpus_edit_sequences(path: Path) -> None:
    _run_sequence(path.read_text(), path.name, Options(), steps=8, seed=zlib.crc32(path.stem.encode()), stir=True)


@pytest.mark.parametrize("seed", range(24))
def test_random_program_edit_sequences(seed: int) -> None:
    spec = random_program(seed, GenParams())
    _run_sequence(spec.to_stir(), f"gen{seed}.stir", spec.options(), steps=6, seed=seed, stir=True)


def test_small_chunks_are_compared_not_trusted(monkeypatch) -> None:
    """With one-instruction chunks every walk goes through the memo's comparisons."""
    monkeypatch.setattr(incremental, "CHUNK_MASK", 0)
    for seed in range(6):
        spec = random_program(100 + seed, GenParams())
        _run_sequence(spec.to_stir(), f"small{seed}.stir", spec.options(), steps=5, seed=seed, stir=True)


def test_unchanged_and_layout_only_versions() -> None:
    """Same text again: the plan object is reused; a blank line above: positions move."""
    spec = random_program(3, GenParams())
    text = spec.to_stir()
    cache = api.AnalysisCache()
    a = api.analyze(text, "x.stir", spec.options(), cache=cache)
    b = api.analyze(text, "x.stir", spec.options(), cache=cache)
    assert a.outputs[0] is b.outputs[0]
    moved = "\n" + text
    c = api.analyze(moved, "x.stir", spec.options(), cache=cache)
    assert _fingerprint(c) == _fingerprint(api.analyze(moved, "x.stir", spec.options()))
    assert [w.line for w in c.waits()] == [w.line + 1 for w in a.waits()]


def test_chains_of_vanished_functions_are_dropped() -> None:
    """A renamed kernel's old chain (a whole plan) does not linger in the document's cache."""
    spec = random_program(5, GenParams())
    text = spec.to_stir()
    cache = api.AnalysisCache()
    api.analyze(text, "x.stir", spec.options(), cache=cache)
    old = {k[1] for k in cache._d}
    renamed = text.replace("st.func @gen", "st.func @renamed", 1)
    assert renamed != text
    an = api.analyze(renamed, "x.stir", spec.options(), cache=cache)
    assert {k[1] for k in cache._d} == {f.name for f in an.functions} != old
