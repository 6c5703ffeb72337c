"""The cold plan's shortcuts against the computations they stand for.

* The stall simulation's `Wave.fact` shares one fact among the instructions of one mnemonic
  and semantics (neither a wait nor an `s_nop`, whose facts read their operands): every
  instruction's shared fact must equal the one computed from it alone, and a whole
  simulation with the sharing must equal one that computes every fact afresh.
* `LdsFacts.may_overlap` asks `_verdict` for the verdict without its sentence: the verdict
  must be the one `_verdict` gives with the sentence, for every pair of LDS accesses.

Inputs: random programs of the property generators (several targets), the bundled examples,
and the real kernels of ../shared/corpus/asm and tests/data (skipped when absent).
"""

from __future__ import annotations

import glob
import gzip
import os

import pytest

from hwproggen import params_for, random_hw_program
from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.api import _effective_options, analyze, parse
from stinkywait_core.results import Options
from stinkywait_core.waitcnt import stall

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "..", "shared", "corpus", "asm")


def _kernels() -> list[str]:
    paths = sorted(glob.glob(os.path.join(ROOT, "examples", "*.s")))
    paths += sorted(glob.glob(os.path.join(CORPUS, "*.s")))
    paths += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "aiter_gfx1250", "*.s.gz")))[:3]
    return paths


def _read(path: str) -> str:
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as fh:
        return fh.read()


def _random_inputs() -> list[tuple[str, str, Options]]:
    out = []
    for arch in ("gfx1250", "gfx1200", "gfx942"):
        for seed in range(15):
            spec = random_hw_program(seed, params_for(arch))
            out.append((spec.to_stir(), f"hw{seed}.stir", spec.options(arch=arch)))
    return out


class _FreshWave(stall.Wave):
    """A wave that computes every instruction's fact from the instruction alone."""

    def fact(self, inst):
        return self._fact_of(inst, self.target.sem(inst))


def _run_json(run: stall.StallRun) -> tuple:
    return (run.total, run.cycles, run.truncated, sorted((k, p.to_json()) for k, p in run.points.items()))


def _check_stall(text: str, path: str, options: Options, monkeypatch) -> int:
    an = analyze(text, path, options)
    target, model = an.options.target, an.options.latency_model
    model = model or target.latency
    if model is None:
        return 0
    n = 0
    for po in an.outputs:
        func = po.func
        wave = stall.Wave(target, model)
        for b in func.blocks:
            for inst in b.instrs:
                if inst.is_label or inst.is_phi:
                    continue
                assert wave.fact(inst) == wave._fact_of(inst, target.sem(inst)), \
                    f"{path}: {inst.mnemonic} at line {inst.line}: shared stall fact differs"
                n += 1
        planned = stall.planned_points(po.result.waits, target)
        shared = stall.simulate(func, target, planned, model)
        with monkeypatch.context() as m:
            m.setattr(stall, "Wave", _FreshWave)
            fresh = stall.simulate(func, target, planned, model)
        assert _run_json(shared) == _run_json(fresh), f"{path} @{func.name}: the stall walk differs"
    return n


def test_stall_facts_shared_equal_fresh_on_random_programs(monkeypatch):
    n = sum(_check_stall(text, path, opts, monkeypatch) for text, path, opts in _random_inputs())
    assert n > 500


@pytest.mark.parametrize("path", _kernels(), ids=os.path.basename)
def test_stall_facts_shared_equal_fresh_on_kernels(path: str, monkeypatch):
    assert _check_stall(_read(path), path.removesuffix(".gz"), Options(), monkeypatch) > 0


def _check_verdicts(text: str, path: str, options: Options) -> int:
    module = parse(text, path)
    opts, err = _effective_options(module, options)
    assert err is None
    n = 0
    for func in module.functions:
        facts = lds_facts(func, module, opts.arch)
        accesses = [i for b in func.blocks for i in b.instrs
                    if not i.is_label and not i.is_phi and facts.access(i) is not None]
        for a in accesses[:60]:
            for b in accesses[:60]:
                for same_trip in (False, True):
                    full = facts._verdict(a, b, same_trip)
                    assert facts._verdict(a, b, same_trip, False)[0] == full[0], \
                        f"{path}: verdict of lines {a.line} and {b.line} differs without its sentence"
                    assert facts.may_overlap(a, b, same_trip) == full[0]
                    n += 1
    return n


def test_lds_verdict_without_sentence_on_random_programs():
    assert sum(_check_verdicts(text, path, opts) for text, path, opts in _random_inputs()) > 200


@pytest.mark.parametrize("path", _kernels(), ids=os.path.basename)
def test_lds_verdict_without_sentence_on_kernels(path: str):
    _check_verdicts(_read(path), path.removesuffix(".gz"), Options())
