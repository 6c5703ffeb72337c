"""The st.token quick fix of an unproven wait (stinkywait_core/separate.py) on a real aiter
gfx1250 kernel nobody here wrote: the pair it names is the pair the pass could not separate,
and applying its edits never adds a proven missing wait and never leaves that same pair
unproven."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from stinkywait_core import findings
from stinkywait_core.api import AnalysisCache, analyze
from stinkywait_core.results import Options
from stinkywait_core.separate import separation_fixes, unproven_pairs

FMHA = Path(__file__).parent / "data" / "aiter_gfx1250" / "fmha_fwd_bf16__fmha_bf16_pertokenBf16_hd128_128x256.s.gz"


def review(an):
    """[(kind, line, wait instruction, planned wait)] of the review findings."""
    by_key = findings.waits_by_key(an.waits())
    out = []
    for d in an.check_diagnostics():
        w = findings.planned_wait_of(d, by_key)
        out.append((findings.kind_of(d, w), d.line, (d.data or {}).get("instruction"), w))
    return out


def apply(text: str, edits) -> str:
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.line, -e.col)):
        s = lines[e.line - 1]
        lines[e.line - 1] = s[:e.col - 1] + e.text + s[e.col - 1:]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def fmha():
    text = gzip.decompress(FMHA.read_bytes()).decode()
    # the fixed versions share one cache (incremental re-analysis); the original keeps none, so
    # their analyses never move its instructions
    return text, AnalysisCache(), analyze(text, "fmha.s", Options())


def test_pairs_are_the_producers_the_diagnostic_names(fmha):
    text, _, an = fmha
    unproven = [r for r in review(an) if r[0] == findings.UNPROVEN]
    assert len(unproven) > 10
    for _, line, _, w in unproven:
        pairs = unproven_pairs(an, w)
        assert pairs, f"line {line}: no pair for {w.instruction} ({w.reason})"
        dep_lines = {d.line for d in w.deps}
        for producer, consumer in pairs:
            assert producer.line in dep_lines
            # the consumer is the anchor or one CoalesceWaits folded into it, never before it
            assert consumer.line >= line
    # a proven wait has no token fix
    proven = next(r for r in review(an) if r[0] == findings.MISSING)
    assert unproven_pairs(an, proven[3]) is None and separation_fixes(an, proven[3]) == []


def test_applying_a_fix_separates_its_pair_and_adds_no_error(fmha):
    text, cache, an = fmha
    before = review(an)
    errors = {(line, ins) for kind, line, ins, _ in before if kind == findings.MISSING}
    unproven = [r for r in before if r[0] == findings.UNPROVEN]
    gone = 0
    for _, line, ins, w in unproven[::6]:
        fix = separation_fixes(an, w)[0]
        assert fix.edits, fix.description
        assert {e.line for e in fix.edits} == {fix.producer_line, fix.consumer_line}
        assert all("// st.token:" in e.text for e in fix.edits)
        after_text = apply(text, fix.edits)
        after = analyze(after_text, "fmha.s", Options(), cache=cache)
        now = review(after)
        assert {(l, i) for k, l, i, _ in now if k == findings.MISSING} <= errors
        assert not any(d.severity == "error" for d in after.diagnostics)
        same = [r for r in now if r[1] == line and r[2] == ins and r[0] == findings.UNPROVEN]
        if not same:
            gone += 1
            continue
        # the wait can stay for an older operation the pass had not named yet, never for this pair
        left = {(p.line, c.line) for p, c in unproven_pairs(after, same[0][3]) or ()}
        assert (fix.producer_line, fix.consumer_line) not in left
    # the pass names one producer per queue (the youngest); where a fallback wait has just
    # that one, tagging it removes the wait (on this kernel, since the joined tensor bases keep
    # their wave terms, the easy ones are proven already: of the two sampled, one goes)
    assert gone >= 1


def test_complete_fix_tags_pair_after_pair(fmha):
    """An s_wait_dscnt 0 with many ds_loads still in flight before a tensor fill or barrier:
    the pass names only the youngest overlapping load, so each round tags one more.  Checked
    here independently: every round makes progress (the first pair no longer asks for the wait),
    no proven wait appears, and a barrier-free tensor wait goes entirely."""
    from stinkywait_core.findings import rule_is_proven
    from stinkywait_core.separate import complete_fix
    text, _, an = fmha
    proven = {(x.line, x.instruction) for x in an.waits() if rule_is_proven(x.rule)}
    unproven = [x for x in an.waits() if not rule_is_proven(x.rule) and x.placement == "before"]
    ds = next(x for x in unproven if x.counter == "ds")
    first = unproven_pairs(an, ds)[0]
    fix = complete_fix(text, "fmha.s", Options(), None, ds.line, ds.counter, max_rounds=4)
    assert fix.rounds == 4 and len({e.line for e in fix.edits}) == len(fix.edits) == 5
    after = analyze(apply(text, fix.edits), "fmha.s", Options())
    assert {(x.line, x.instruction) for x in after.waits() if rule_is_proven(x.rule)} <= proven
    assert not any(d.severity == "error" for d in after.diagnostics)
    left = [x for x in after.waits() if x.line == ds.line and x.counter == "ds" and not rule_is_proven(x.rule)]
    for x in left:
        assert (first[0].line, first[1].line) not in {(p.line, c.line) for p, c in unproven_pairs(after, x) or ()}
    tensor = next(x for x in unproven if x.counter == "tensor")
    fix = complete_fix(text, "fmha.s", Options(), None, tensor.line, tensor.counter)
    assert fix.removed and fix.edits
    after = analyze(apply(text, fix.edits), "fmha.s", Options())
    assert not any(x.line == tensor.line and x.counter == "tensor" and not rule_is_proven(x.rule) for x in after.waits())
    assert {(x.line, x.instruction) for x in after.waits() if rule_is_proven(x.rule)} <= proven
    # a proven wait is left alone
    p = next(x for x in an.waits() if rule_is_proven(x.rule))
    assert complete_fix(text, "fmha.s", Options(), None, p.line, p.counter).edits == ()
