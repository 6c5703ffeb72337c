"""An in-process review stops at its next step when its document moves on (interrupt.py): a
newer version waits one review step, not the whole review, and the review's coroutine ends only
once the thread has let go of the analysis (the scheduler's core lock covers the thread)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.interrupt import ReviewInterrupted
from stinkywait_core.results import Options
from stinkywait_lsp.lanes import LaneExecutor
from stinkywait_lsp.review import ReviewCancelled, ThreadReviewer

from .conftest import DATA


class _Stepper:
    """Stands for an Analysis whose review takes steps until it is asked to stop."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.ended = threading.Event()
        self.steps = 0

    def check_diagnostics(self, stop=None, pause=None):
        self.started.set()
        try:
            while True:
                self.steps += 1
                if stop is not None and stop():
                    raise ReviewInterrupted("stepper")
                self.started.wait(0.001)  # one review step (a re-plan, a checker run)
        finally:
            self.ended.set()


@pytest.mark.parametrize("make", [lambda: ThreadPoolExecutor(1), lambda: LaneExecutor(2)])
async def test_a_cancelled_review_returns_after_the_thread_stopped(make):
    executor = make()
    reviewer = ThreadReviewer(executor)
    fake = _Stepper()
    task = asyncio.create_task(reviewer.review("file:///k.s", "", "k.s", Options(), None, analysis=fake))
    assert await asyncio.to_thread(fake.started.wait, 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fake.ended.is_set(), "the coroutine ended while the thread still read the analysis"
    executor.shutdown(wait=True)


async def test_cancel_by_document_raises_review_cancelled():
    executor = ThreadPoolExecutor(1)
    reviewer = ThreadReviewer(executor)
    fake = _Stepper()
    task = asyncio.create_task(reviewer.review("file:///k.s", "", "k.s", Options(), None, analysis=fake))
    assert await asyncio.to_thread(fake.started.wait, 30)
    reviewer.cancel("file:///other.s")  # another document's cancel does not stop this one
    reviewer.cancel("file:///k.s")
    with pytest.raises(ReviewCancelled):
        await task
    assert fake.ended.is_set() and fake.steps >= 1
    executor.shutdown(wait=True)


def test_core_review_stops_and_starts_over():
    """A stopped review keeps nothing: the next call reviews in full and gives what a fresh
    analysis gives."""
    text = (DATA / "checked.s").read_text()
    an = analyze(text, "checked.s", Options())
    with pytest.raises(ReviewInterrupted):
        an.check_diagnostics(lambda: True)
    got = [(d.code, d.line, d.message) for d in an.check_diagnostics()]
    want = [(d.code, d.line, d.message) for d in analyze(text, "checked.s", Options()).check_diagnostics()]
    assert got == want and got


def test_the_checker_stops_when_asked():
    """A checker run inside a review ends at its next path state once its caller moves on:
    bounded, proving nothing (the review then ends at its checkpoint)."""
    from stinkywait_core.syntax import parse
    from stinkywait_core.validate.hwcheck import check_function
    text = (DATA / "diamond.s").read_text()
    func = parse(text, "diamond.s", "asm").functions[0]
    full = check_function(func, Options())
    assert not full.bounded and full.states > 1
    calls = []
    stopped = check_function(func, Options(), stop=lambda: calls.append(1) or True)
    assert stopped.bounded and stopped.states == 1 and calls == [1]
