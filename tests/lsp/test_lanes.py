"""The edited document never waits behind other files' work (issue 21): `LaneExecutor`
alone, then the scheduler with many documents whose analyses are held on an event.

Deterministic: the other documents' work blocks on an event that the test sets only after
it has seen the focused document's answer; the `wait_for` timeouts only keep a broken
build from hanging the suite."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field

from stinkywait_core.api import analyze
from stinkywait_core.results import Options

from stinkywait_lsp.lanes import PLAN, REVIEW, LaneExecutor
from stinkywait_lsp.scheduler import Scheduler
from stinkywait_lsp.snapshot import Job

from .conftest import DATA

GUARD_S = 30


def test_foreground_runs_while_background_holds_a_thread_and_more_is_queued():
    gate = threading.Event()
    started: list[str] = []
    pool = LaneExecutor(2)
    try:
        pool.focus = "file:///edited.s"

        def held(name: str) -> str:
            started.append(name)
            gate.wait(GUARD_S)
            return name

        first = pool.submit_for("file:///a.s", PLAN, held, "a")
        second = pool.submit_for("file:///b.s", PLAN, held, "b")
        # one background item holds a thread; the other may not take the last free one
        edited = pool.submit_for("file:///edited.s", PLAN, lambda: "edited")
        assert edited.result(GUARD_S) == "edited"
        assert not gate.is_set() and started == ["a"]
        assert pool.pending() == [("file:///b.s", PLAN)]
        assert not first.done() and not second.done()
        gate.set()
        assert (first.result(GUARD_S), second.result(GUARD_S)) == ("a", "b")
    finally:
        gate.set()
        pool.shutdown()


def test_foreground_order_and_promotion_when_the_focus_moves():
    """Plans before reviews within the focus; queued work of a document becomes foreground
    when the user turns to it, ahead of work queued earlier for others."""
    gate = threading.Event()
    order: list[str] = []
    pool = LaneExecutor(1)  # one thread: the order things start in is the whole story
    try:
        blocker = pool.submit_for(None, PLAN, gate.wait, GUARD_S)
        futs = [pool.submit_for("file:///x.s", PLAN, order.append, "x plan"),
                pool.submit_for("file:///y.s", REVIEW, order.append, "y review"),
                pool.submit_for("file:///y.s", PLAN, order.append, "y plan"),
                pool.submit_for("file:///z.s", PLAN, order.append, "z plan")]
        pool.focus = "file:///y.s"
        gate.set()
        wait_futures([blocker, *futs], GUARD_S)
        assert order == ["y plan", "y review", "x plan", "z plan"]
    finally:
        gate.set()
        pool.shutdown()


def test_running_background_work_pauses_while_the_focus_works():
    """A background item already running yields at its pause points while foreground work
    is queued or running, and goes on once that is done; the focus's own pauses return."""
    fg_gate, bg_at_pause = threading.Event(), threading.Event()
    log: list[str] = []
    pool = LaneExecutor(2)
    try:
        pool.focus = "file:///edited.s"
        pause = pool.pause_for("file:///other.s")

        def background() -> None:
            pause()  # nothing waits: returns at once
            log.append("bg before")
            bg_at_pause.set()
            while not fg_running.is_set():
                pass
            pause()  # the focus's item runs: waits until it is done
            log.append("bg after")

        fg_running = threading.Event()

        def foreground() -> None:
            fg_running.set()
            pool.pause_for("file:///edited.s")()  # (the focus never pauses)
            fg_gate.wait(GUARD_S)
            log.append("fg done")

        bg = pool.submit_for("file:///other.s", PLAN, background)
        assert bg_at_pause.wait(GUARD_S)
        fg = pool.submit_for("file:///edited.s", PLAN, foreground)
        assert fg_running.wait(GUARD_S)
        threading.Event().wait(0.2)
        assert log == ["bg before"]  # paused, not finished
        fg_gate.set()
        wait_futures([bg, fg], GUARD_S)
        assert log == ["bg before", "fg done", "bg after"] and pool.pauses == 1
        # an edit of the focus announced before its plan is queued pauses the background too
        pool.expect_focus(0.3)
        t = threading.Thread(target=pause)
        t.start()
        t.join(0.1)
        assert t.is_alive()
        t.join(GUARD_S)
        assert not t.is_alive()
        # never longer than max_pause_s at a time
        pool.max_pause_s = 0.1
        hold = pool.submit_for(None, PLAN, fg_gate.clear)
        hold.result(GUARD_S)
        blocker = pool.submit_for(None, PLAN, fg_gate.wait, GUARD_S)
        threading.Event().wait(0.05)
        pause()  # the ownerless item runs until fg_gate is set: the pause gives up
        assert not blocker.done()
        fg_gate.set()
        blocker.result(GUARD_S)
    finally:
        fg_gate.set()
        pool.shutdown()


def test_exceptions_and_cancelled_items_reach_their_futures():
    pool = LaneExecutor(2)
    try:
        def boom() -> None:
            raise ValueError("core failure")

        fut = pool.submit_for("file:///a.s", PLAN, boom)
        try:
            fut.result(GUARD_S)
            raise AssertionError("the exception was lost")
        except ValueError as exc:
            assert str(exc) == "core failure"
        assert pool.submit(lambda x: x + 1, 41).result(GUARD_S) == 42
    finally:
        pool.shutdown()
    try:
        pool.submit(print)
        raise AssertionError("submit after shutdown must fail")
    except RuntimeError:
        pass


@dataclass
class Workspace:
    """Several documents on the real core; analyses of `held` URIs wait on `gate`."""

    texts: dict[str, str]
    held: set[str]
    gate: threading.Event = field(default_factory=threading.Event)
    versions: dict[str, int] = field(default_factory=dict)
    started: list[str] = field(default_factory=list)

    def analyze(self, text, path, options, language=None, **kw):
        self.started.append(path)
        if path in self.held:
            self.gate.wait(GUARD_S)
        return analyze(text, path, options, language=language)

    def make_job(self, uri: str) -> Job | None:
        if uri not in self.texts:
            return None
        return Job(uri=uri, path=uri, version=self.versions.setdefault(uri, 1), generation=0,
                   text=self.texts[uri], language="amdgpu-asm", options=Options(), encoding="utf-16")

    def key(self, uri: str) -> tuple[int, int] | None:
        return (0, self.versions.setdefault(uri, 1)) if uri in self.texts else None

    def edit(self, uri: str) -> None:
        self.texts[uri] = self.texts[uri].replace("\ts_endpgm", "\tv_add_f32_e32 v61, v8, v9\n\ts_endpgm", 1)
        self.versions[uri] = self.versions.setdefault(uri, 1) + 1


async def test_an_edit_gets_its_hints_while_other_documents_analyses_are_queued():
    sample = (DATA / "sample.s").read_text()
    others = [f"file:///other{i}.s" for i in range(4)]
    edited = "file:///edited.s"
    ws = Workspace({u: sample for u in [*others, edited]}, held=set(others))
    pool = LaneExecutor(2)
    ready = asyncio.Event()
    ready.set()
    published: list[str] = []
    sched = Scheduler(executor=pool, analyze=ws.analyze, make_job=ws.make_job, current_key=ws.key,
                      on_snapshot=lambda snap: published.append(snap.uri), ready=ready,
                      review_delay_s=0.0)
    try:
        sched.opened(edited)
        first = await asyncio.wait_for(sched.fresh(edited), GUARD_S)
        assert first.version == 1
        for uri in others:  # a user's kernel repository, opened at once
            sched.opened(uri)
        # the first other document holds the background thread; the rest are queued
        while not pool.pending() or others[0] not in ws.started:
            await asyncio.sleep(0)
        ws.edit(edited)
        sched.changed(edited)
        snap = await asyncio.wait_for(sched.fresh(edited), GUARD_S)
        assert snap.version == 2 and snap.valid
        expected = analyze(ws.texts[edited], edited, Options(), language="amdgpu-asm").waits()
        assert [(w.line, w.instruction) for w in snap.waits] == [(w.line, w.instruction) for w in expected]
        # and its review (the diagnostics) did not wait for them either
        await asyncio.wait_for(sched.checked(snap), GUARD_S)
        assert not ws.gate.is_set()
        assert ws.started.count(others[0]) == 1 and not set(others[1:]) & set(ws.started)
        # queued behind it: as many as may be unfinished at once (the rest wait to be
        # admitted, so their analyses are not all alive together: `Scheduler.max_unfinished`)
        # (the edited document's own pipeline counts among them while it is not pushed)
        assert {owner for owner, _ in pool.pending()} - {edited} <= set(others[1:sched.max_unfinished])
        # released, the others all get analysed and published
        ws.gate.set()
        for uri in others:
            other = await asyncio.wait_for(sched.fresh(uri), GUARD_S)
            assert other.version == 1 and other.analysis is not None
    finally:
        ws.gate.set()
        sched.shutdown()
        pool.shutdown()
