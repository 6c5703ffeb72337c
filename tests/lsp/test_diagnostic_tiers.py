"""Diagnostics in two tiers per version (issue 21, "diagnostics within 200 ms"; scheduler.py).

The plan tier (parse and pass diagnostics, the review's missing-wait errors) is pushed right
after the plan; the review tier (the full set: redundant and stricter waits too) after the
review.  These tests check the order of the pushes and what each holds, never their timing:
the plan tier comes first, holds exactly the review tier's missing and unproven waits, and is
pushed while the review has not even started (a review held forever does not hold it).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types as T

from stinkywait_core.api import analyze
from stinkywait_core.results import Options

from stinkywait_lsp.scheduler import Scheduler
from stinkywait_lsp.snapshot import Snapshot

from .conftest import DATA, core, expected_findings
from .test_pipeline import HeldReviewer
from .test_scheduler import URI, Harness

#: what a missing or unproven wait is, as the user sees it
_PLAN_CODES = ("missing-wait", "unproven-wait")


def _seen(d: T.Diagnostic) -> tuple:
    return (d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character,
            d.severity, d.message, d.data)


async def test_the_plan_tier_comes_first_and_the_review_keeps_it(nvim):
    uri, text = nvim.open_file(DATA / "checked.s")
    a = core(text, DATA / "checked.s")
    full = await nvim.diagnostics(uri, 1)
    first, *rest = nvim.pushes_of(uri, 1)
    assert len(rest) == 1 and rest[0] == list(full)          # two pushes: the plan's, then the review's
    assert [(d.code, d.range.start.line, d.severity) for d in full] == expected_findings(a)
    assert {d.code for d in full} >= {"missing-wait", "redundant-wait", "stricter-wait"}
    # the plan tier: the plan's diagnostics and missing waits, and nothing of the review's own
    assert [_seen(d) for d in first] == [_seen(d) for d in full if d.code not in ("redundant-wait", "stricter-wait")]
    assert [d for d in first if d.code in _PLAN_CODES]
    record = await nvim.record(uri, 1)
    assert record["plan_published"] <= record["review_start"] <= record["published"]


async def test_an_edit_gets_both_tiers_in_order_with_the_same_errors(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    await nvim.diagnostics(uri, 1)
    # an earlier consumer of the buffer load: its missing wait moves up
    v = nvim.replace_range(uri, T.Range(start=T.Position(line=13, character=0), end=T.Position(line=13, character=0)),
                           "\tv_add_f32_e32 v6, v2, v2\n")
    full = await nvim.diagnostics(uri, v)
    pushes = nvim.pushes_of(uri, v)
    assert len(pushes) == 2 and pushes[1] == list(full)
    a = analyze(nvim.text(uri), str(DATA / "sample.s"), Options())
    want = [(d.line - 1, d.message) for d in a.check_diagnostics() if d.code == "missing-wait"]
    for push in pushes:
        assert [(d.range.start.line, d.message.split(" (")[0]) for d in push if d.code in _PLAN_CODES] == \
            [(line, msg.split(" (")[0]) for line, msg in want]
    assert [_seen(d) for d in pushes[0] if d.code in _PLAN_CODES] == \
        [_seen(d) for d in pushes[1] if d.code in _PLAN_CODES]
    # every push of an earlier version came before the first of this one
    order = [(u, ver) for u, ver, _ in nvim.client.pushes if u == uri]
    assert order.index((uri, v)) > max(i for i, k in enumerate(order) if k[1] < v)


async def test_the_plan_tier_does_not_wait_for_the_review():
    """The review is held until released: the plan tier must be pushed meanwhile, the review
    tier only after it, holding the same missing waits first."""
    h = Harness((DATA / "checked.s").read_text())
    h.gate.set()
    plan_pushes: list[Snapshot] = []
    reviewer = HeldReviewer()
    ready = asyncio.Event()
    ready.set()
    with ThreadPoolExecutor(max_workers=2) as pool:
        sched = Scheduler(executor=pool, analyze=h.analyze, make_job=h.make_job, current_key=h.key,
                          on_snapshot=h.publish, on_plan=plan_pushes.append, ready=ready,
                          review_delay_s=0.0, reviewer=reviewer)
        sched.opened(URI)
        for _ in range(3000):
            if plan_pushes and reviewer.started:
                break
            await asyncio.sleep(0.01)
        assert plan_pushes and reviewer.started     # the review is running, held
        assert h.published == []
        snap = plan_pushes[0]
        assert snap.checks is None and snap.pushed == 1
        want = analyze(h.text, "burst.s", Options(), language="amdgpu-asm").check_diagnostics()
        missing = [(d.code, d.line, d.message) for d in want if d.code == "missing-wait"]
        assert missing and [(d.code, d.line, d.message) for d in snap.plan_checks] == missing
        reviewer.release.set()
        for _ in range(3000):
            if h.published:
                break
            await asyncio.sleep(0.01)
        assert h.published == [1] and snap.pushed == 2
        assert [(d.code, d.line, d.message) for d in snap.checks] == [(d.code, d.line, d.message) for d in want]
        sched.shutdown()
