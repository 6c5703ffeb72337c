"""Property: on random kernels with barriers, LDS stores, loads and tensor fills
(tests/pubproggen.py), the pass's output (publish rule on) has no violation under the hardware
checker with the LDS address analysis (whose barrier rule is written apart:
validate/hwpublish.py), and the checker finds the barrier violations once every wait is
stripped (so the property can fail)."""

from __future__ import annotations

import os

import pytest

from pubproggen import random_publish_program
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module

N = int(os.environ.get("PUBLISH_PROGRAMS", "120"))
TRIPS = 3


def check(text: str) -> list:
    mod = parse_asm(text, "p.s")
    return [v for r in check_module(mod, Options(), lds_addresses=True, max_trips=TRIPS) for v in r.violations]


@pytest.fixture(scope="module")
def outcomes():
    out = []
    for seed in range(N):
        text = random_publish_program(seed)
        an = analyze(text, "p.s", Options())
        assert not [d for d in an.diagnostics if d.severity == "error"], (seed, an.diagnostics)
        out.append((seed, text, an.inserted_text()))
    return out


def test_pass_output_has_no_violation(outcomes):
    bad = [(seed, check(planned)) for seed, _, planned in outcomes]
    bad = [(seed, vs) for seed, vs in bad if vs]
    assert not bad, bad[:3]


def test_stripped_programs_have_barrier_violations(outcomes):
    """Without waits the checker reports barrier hazards on many programs."""
    hits = sum(any(v.rule == "barrier" for v in check(text)) for _, text, _ in outcomes[:40])
    assert hits >= 5


def test_the_rule_applies(outcomes, monkeypatch):
    """On some programs the rule removes a barrier's drain (fewer waits than with every
    publish answer "no"), and on some it keeps one."""
    import stinkywait_core.waitcnt.publish as publish
    on = [len(analyze(text, "p.s", Options()).waits()) for _, text, _ in outcomes[:60]]
    monkeypatch.setattr(publish.Publish, "published", lambda self, p, b, same: False)
    off = [len(analyze(text, "p.s", Options()).waits()) for _, text, _ in outcomes[:60]]
    assert sum(a < b for a, b in zip(on, off)) >= 3
    assert sum(a == b for a, b in zip(on, off)) >= 3
