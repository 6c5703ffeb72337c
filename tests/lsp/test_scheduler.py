"""The scheduler in-process, on the real core: a burst of edits costs at most two analyses,
superseded results are discarded, waiting requests get the newest version, a cancelled
request leaves the shared job alone."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from stinkywait_core.api import analyze
from stinkywait_core.results import Options

from stinkywait_lsp.scheduler import Scheduler
from stinkywait_lsp.snapshot import Job, Snapshot

from .conftest import DATA

URI = "file:///burst.s"


@dataclass
class Harness:
    """A one-document workspace and the real `analyze`, gated so a job can be held open."""

    text: str
    version: int = 1
    gate: threading.Event = field(default_factory=threading.Event)
    analysed: list[str] = field(default_factory=list)
    published: list[int] = field(default_factory=list)

    def analyze(self, text, path, options, language=None):
        self.analysed.append(text)
        self.gate.wait(30)
        return analyze(text, path, options, language=language)

    def make_job(self, uri: str) -> Job:
        return Job(uri=uri, path="burst.s", version=self.version, generation=0, text=self.text,
                   language="amdgpu-asm", options=Options(), encoding="utf-16")

    def key(self, uri: str) -> tuple[int, int]:
        return (0, self.version)

    def publish(self, snap: Snapshot) -> None:
        self.published.append(snap.version)

    def edit(self, i: int) -> None:
        self.text = self.text.replace("\ts_endpgm", f"\tv_add_f32_e32 v{60 + i}, v8, v9\n\ts_endpgm", 1)
        self.version += 1


def _scheduler(h: Harness, pool: ThreadPoolExecutor) -> Scheduler:
    ready = asyncio.Event()
    ready.set()
    return Scheduler(executor=pool, analyze=h.analyze, make_job=h.make_job, current_key=h.key,
                     on_snapshot=h.publish, ready=ready, review_delay_s=0.0)


async def test_burst_costs_two_analyses_and_answers_the_newest():
    h = Harness((DATA / "sample.s").read_text())
    with ThreadPoolExecutor(max_workers=2) as pool:
        sched = _scheduler(h, pool)
        sched.opened(URI)
        await asyncio.sleep(0.05)            # job for v1 is running (held at the gate)
        for i in range(10):
            h.edit(i)
            sched.changed(URI)
        waiting = asyncio.ensure_future(sched.fresh(URI))
        doomed = asyncio.ensure_future(sched.fresh(URI))
        await asyncio.sleep(0.05)
        doomed.cancel()                      # a cancelled request drops only its waiter
        assert not waiting.done()            # never answered from v1 while v11 is pending
        h.gate.set()
        snap = await asyncio.wait_for(waiting, 30)
        assert snap.version == h.version == 11
        assert h.analysed[0] != h.analysed[-1] and h.analysed[-1] == h.text
        assert len(h.analysed) == 2, "superseded edits must coalesce into one job"
        expected = analyze(h.text, "burst.s", Options(), language="amdgpu-asm").waits()
        assert [(w.line, w.instruction) for w in snap.waits] == \
            [(w.line, w.instruction) for w in sorted(expected, key=lambda w: w.line)]
        for _ in range(100):                 # the review runs, then publishes v11 only
            if h.published:
                break
            await asyncio.sleep(0.05)
        assert h.published == [11]
        assert await sched.fresh(URI) is snap  # cached: no third analysis
        assert len(h.analysed) == 2
        sched.shutdown()


async def test_close_releases_waiting_requests():
    h = Harness((DATA / "sample.s").read_text())
    with ThreadPoolExecutor(max_workers=2) as pool:
        sched = _scheduler(h, pool)
        sched.opened(URI)
        waiting = asyncio.ensure_future(sched.fresh(URI))
        await asyncio.sleep(0.05)
        sched.closed(URI)
        assert await asyncio.wait_for(waiting, 5) is None
        h.gate.set()


def test_quiet_period_is_short_only_after_a_cheap_review():
    """The review's quiet period: 0.1 s once the document's last review was cheap, the
    configured one before any review, growing with a costly review up to the cap."""
    from stinkywait_lsp.scheduler import DocState
    h = Harness("")
    sched = Scheduler(executor=None, analyze=h.analyze, make_job=h.make_job, current_key=h.key,  # type: ignore[arg-type]
                      on_snapshot=h.publish, ready=asyncio.Event(), reviewer=object())  # type: ignore[arg-type]
    st = DocState(URI)
    assert sched.quiet_period(st) == sched.review_delay_s == 0.3          # nothing known yet
    st.review_cost = 0.012
    assert sched.quiet_period(st) == sched.cheap_review_delay_s == 0.1
    st.review_cost = 0.8
    assert sched.quiet_period(st) == 0.8
    st.review_cost = 7.0
    assert sched.quiet_period(st) == sched.max_review_delay_s

