"""The document the user works on is reviewed right after its plan, and an edit stops that
review at once (issue 21: diagnostics for hand-written waits within 200 ms of an edit; the
server never waits on the client).

The quiet period here is set to a minute, so a review that waited for it would not start
within the test's guard; and the held review steps until it is told to stop, so a newer
version whose plan waited for it (the in-process review holds the document's core lock) would
not be analysed within the guard either.  Another document keeps the quiet period."""

from __future__ import annotations

import asyncio
import threading
import time

from stinkywait_core.api import analyze
from stinkywait_core.interrupt import ReviewInterrupted
from stinkywait_core.results import Options
from stinkywait_lsp.lanes import LaneExecutor
from stinkywait_lsp.review import ThreadReviewer
from stinkywait_lsp.scheduler import DocState, Scheduler
from stinkywait_lsp.snapshot import Job, Snapshot

from .conftest import DATA

URI = "file:///typed.s"
GUARD_S = 20.0


class _Held:
    """Stands for the analysis of one version whose review steps until asked to stop."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()

    def check_diagnostics(self, stop=None, pause=None):
        self.started.set()
        for _ in range(20_000):  # (at most ~40 s: the guard fails first)
            if stop is not None and stop():
                self.stopped.set()
                raise ReviewInterrupted("held")
            time.sleep(0.002)
        return []


class _Reviewer(ThreadReviewer):
    """Reviews in-process; the versions in `held` get a `_Held` review instead."""

    def __init__(self, executor, held: dict[int, _Held], versions: list[int]) -> None:
        super().__init__(executor)
        self.held, self.versions = held, versions

    async def review(self, uri, text, path, options, language, analysis=None):
        version = self.versions[-1]
        return await super().review(uri, text, path, options, language,
                                    analysis=self.held.get(version, analysis))


class _Doc:
    def __init__(self) -> None:
        self.text = (DATA / "sample.s").read_text()
        self.version = 1
        self.published: list[int] = []

    def make_job(self, uri: str) -> Job:
        return Job(uri=uri, path="typed.s", version=self.version, generation=0, text=self.text,
                   language="amdgpu-asm", options=Options(), encoding="utf-16")

    def key(self, uri: str) -> tuple[int, int]:
        return (0, self.version)

    def analyze(self, text, path, options, language=None, **kw):
        return analyze(text, path, options, language=language)

    def edit(self) -> None:
        self.text = self.text.replace("\ts_endpgm", f"\tv_add_f32_e32 v{60 + self.version}, v8, v9\n\ts_endpgm", 1)
        self.version += 1


async def test_the_focus_is_reviewed_at_once_and_an_edit_stops_its_review():
    doc = _Doc()
    pool = LaneExecutor(2)
    ready = asyncio.Event()
    ready.set()
    held = {2: _Held()}
    versions: list[int] = []
    reviewer = _Reviewer(pool, held, versions)

    def make_job(uri: str) -> Job:
        versions.append(doc.version)
        return doc.make_job(uri)

    sched = Scheduler(executor=pool, analyze=doc.analyze, make_job=make_job, current_key=doc.key,
                      on_snapshot=lambda snap: doc.published.append(snap.version), ready=ready,
                      reviewer=reviewer, review_delay_s=60.0, max_review_delay_s=60.0)
    try:
        sched.opened(URI)
        await asyncio.wait_for(sched.fresh(URI), GUARD_S)  # (a request: the focus now)
        doc.edit()
        sched.changed(URI)
        snap2 = await asyncio.wait_for(sched.fresh(URI), GUARD_S)
        assert snap2.version == 2
        # no quiet period for the focus: its review starts right after the plan
        assert await asyncio.wait_for(asyncio.to_thread(held[2].started.wait, GUARD_S), GUARD_S + 1)
        # typed on while it runs: the review stops, the new version is planned and reviewed
        doc.edit()
        sched.changed(URI)
        snap3 = await asyncio.wait_for(sched.fresh(URI), GUARD_S)
        assert snap3.version == 3 and held[2].stopped.is_set()
        checked = await asyncio.wait_for(sched.checked(snap3), GUARD_S)
        assert checked.checks is not None
        for _ in range(400):
            if 3 in doc.published:
                break
            await asyncio.sleep(0.05)
        assert 3 in doc.published and 2 not in doc.published  # v2's review tier never came
    finally:
        sched.shutdown()
        pool.shutdown()


def test_other_documents_keep_the_quiet_period_and_typing_waits_one_keystroke():
    pool = LaneExecutor(1)
    try:
        sched = Scheduler(executor=pool, analyze=None, make_job=None, current_key=None,  # type: ignore[arg-type]
                          on_snapshot=None, ready=asyncio.Event(), reviewer=object())  # type: ignore[arg-type]
        pool.focus = "file:///focus.s"
        focus = DocState("file:///focus.s")
        assert sched.quiet_period(focus) == 0.0
        assert sched.quiet_period(DocState("file:///other.s")) == sched.review_delay_s
        focus.edit_gap = 0.1  # typing: about one more keystroke's gap
        assert sched.quiet_period(focus) == sched.typing_delay_factor * 0.1
        focus.edit_gap = 0.29
        assert sched.quiet_period(focus) == sched.review_delay_s
        focus.edit_gap = 2.0  # an edit after a pause
        assert sched.quiet_period(focus) == 0.0
    finally:
        pool.shutdown()


class _Collector:
    """Records when the version-end collection runs, against the pushes."""

    full_wanted = False

    def __init__(self, events: list[str], full: bool) -> None:
        self.events, self.full = events, full

    def due(self) -> bool:
        return False

    def worth_it(self) -> bool:
        return True

    def full_due(self) -> bool:
        return self.full

    def want_full(self) -> None:
        pass

    def collect(self, reason: str, full: bool | None = None):
        self.events.append("full" if (self.full if full is None else full) else "young")
        return None


async def _version_end(full: bool) -> list[str]:
    from concurrent.futures import ThreadPoolExecutor
    doc = _Doc()
    events: list[str] = []
    ready = asyncio.Event()
    ready.set()
    with ThreadPoolExecutor(max_workers=2) as pool:
        sched = Scheduler(executor=pool, analyze=doc.analyze, make_job=doc.make_job, current_key=doc.key,
                          on_snapshot=lambda snap: events.append("push"), ready=ready, review_delay_s=0.0,
                          collector=_Collector(events, full))  # type: ignore[arg-type]
        try:
            sched.opened(URI)
            for _ in range(400):
                if "push" in events and len(events) >= 2:
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.05)
        finally:
            sched.shutdown()
    return events


async def test_a_young_version_end_collection_follows_the_push_and_a_full_one_precedes_it():
    assert await _version_end(full=False) == ["push", "young"]
    assert await _version_end(full=True) == ["full", "push"]
