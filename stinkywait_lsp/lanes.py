"""The analysis threads: the focused document's work first, and never behind other files'.

With many kernels open, opening them (or a settings change) queues seconds of plans and
reviews of documents nobody is editing.  On a plain thread pool the edited document's next
plan queues behind them (an edit of the GEMM waited up to 3.8 s with 42 kernels open).  A
worker thread cannot be interrupted, so the order work *starts* in is what can be chosen:

  * every item names its owner (a document URI) and a rank (plan before review);
  * the *focus* is the document being edited or asked about (the scheduler sets it); work
    of the focus, and work with no owner (a request's own computation), is *foreground*;
  * foreground work starts first, in (rank, arrival) order;
  * background work starts only when no foreground work is queued or running, and on at
    most `workers - 1` threads at a time, so a thread is always free when the focus edits
    (the one a background item already holds keeps running: it only shares the GIL).

Which items are foreground is decided when a thread picks its next item, not at submit:
work queued for a document becomes foreground the moment the user turns to it.

A background item already running when the focus's work arrives would still share the GIL
with it (with 40 kernels open a GEMM edit took twice as long as alone).  So background work
*yields*: the core asks a `pause` callable between functions, stages and solver blocks, and
the review between its steps (`pause_for(owner)`); while foreground work is queued or
running (or the focus was just edited and its plan is on the way, `expect_focus`), a
background caller waits on the executor's condition, which releases the GIL.  A pause lasts
at most `max_pause_s` at a time, so work that a foreground item might wait on (a lock the
paused item holds) is never stuck, only slowed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

#: ranks within a lane: a plan (what hints need) before a review (diagnostics)
PLAN = 0
REVIEW = 1


@dataclass(slots=True)
class _Item:
    owner: str | None
    rank: int
    seq: int
    future: Future
    fn: Callable[..., Any]
    args: tuple
    kwargs: dict = field(default_factory=dict)


class LaneExecutor(Executor):
    """A thread pool that runs the focused document's work first (see the module doc)."""

    def __init__(self, workers: int = 2, name: str = "stinkywait-analysis"):
        self.workers = max(1, workers)
        #: background work may hold at most this many threads at once
        self.background_limit = max(1, self.workers - 1)
        self._cond = threading.Condition()
        self._queue: list[_Item] = []
        self._seq = 0
        self._focus: str | None = None
        self._running_fg = 0
        self._running_bg = 0
        self._closed = False
        #: monotonic time until which the focus's work is expected (set on an edit of the
        #: focus, before its plan is queued: background callers of `pause_for` wait meanwhile)
        self._expect_until = 0.0
        #: longest single pause of a background item (see the module doc)
        self.max_pause_s = 2.0
        #: pauses made and their total (tests, stats)
        self.pauses = 0
        self.paused_s = 0.0
        self._threads = [threading.Thread(target=self._work, name=f"{name}_{i}", daemon=True)
                         for i in range(self.workers)]
        for t in self._threads:
            t.start()

    # -- what the scheduler sets -----------------------------------------------------------

    @property
    def focus(self) -> str | None:
        return self._focus

    @focus.setter
    def focus(self, owner: str | None) -> None:
        with self._cond:
            if owner != self._focus:
                self._focus = owner
                self._cond.notify_all()

    def expect_focus(self, within_s: float = 0.25) -> None:
        """The focus was just edited: its plan will be queued within `within_s`; background
        work pauses until then (or until that work has run)."""
        with self._cond:
            self._expect_until = time.monotonic() + within_s

    def pause_for(self, owner: str | None) -> Callable[[], None]:
        """The `pause` callable for work of `owner` (see the module doc): it returns at once
        for foreground work and while no foreground work waits."""
        def pause() -> None:
            if owner is None or owner == self._focus:
                return
            if not self._running_fg and self._expect_until == 0.0 and not self._queue:
                return  # (lock-free fast path: nothing at all is waiting)
            self._yield(owner)
        return pause

    def _foreground_waiting(self) -> bool:
        """(lock held) Foreground work is queued or running, or the focus's is on its way."""
        if self._running_fg:
            return True
        if self._expect_until:
            if time.monotonic() < self._expect_until:
                return True
            self._expect_until = 0.0
        return any(self._foreground(it) and not it.future.cancelled() for it in self._queue)

    def _yield(self, owner: str) -> None:
        t0 = time.monotonic()
        with self._cond:
            waited = False
            while owner != self._focus and not self._closed and self._foreground_waiting():
                left = self.max_pause_s - (time.monotonic() - t0)
                if left <= 0:
                    break
                waited = True
                self._cond.wait(min(left, 0.05))
            if waited:
                self.pauses += 1
                self.paused_s += time.monotonic() - t0

    # -- submitting ------------------------------------------------------------------------

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        """Ownerless work (a request's own computation): foreground, rank PLAN."""
        return self.submit_for(None, PLAN, fn, *args, **kwargs)

    def submit_for(self, owner: str | None, rank: int, fn: Callable[..., Any], /, *args: Any,
                   **kwargs: Any) -> Future:
        """Run `fn(*args, **kwargs)` as work of document `owner` at `rank`."""
        fut: Future = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._seq += 1
            self._queue.append(_Item(owner, rank, self._seq, fut, fn, args, kwargs))
            self._cond.notify()
        return fut

    def pending(self) -> list[tuple[str | None, int]]:
        """(owner, rank) of the queued items, in arrival order (for tests and stats)."""
        with self._cond:
            return [(it.owner, it.rank) for it in self._queue]

    # -- the threads -----------------------------------------------------------------------

    def _foreground(self, item: _Item) -> bool:
        return item.owner is None or item.owner == self._focus

    def _pick(self) -> tuple[_Item, bool] | None:
        """The next item a free thread may start (with the lock held), or None."""
        best: _Item | None = None
        best_bg: _Item | None = None
        for it in self._queue:
            if it.future.cancelled():
                continue
            if self._foreground(it):
                if best is None or (it.rank, it.seq) < (best.rank, best.seq):
                    best = it
            elif best_bg is None or (it.rank, it.seq) < (best_bg.rank, best_bg.seq):
                best_bg = it
        if best is not None:
            return best, True
        if best_bg is not None and self._running_fg == 0 and self._running_bg < self.background_limit:
            return best_bg, False
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                while True:
                    self._queue = [it for it in self._queue if not it.future.cancelled()]
                    picked = self._pick()
                    if picked is not None or (self._closed and not self._queue):
                        break
                    self._cond.wait()
                if picked is None:
                    return
                item, fg = picked
                self._queue.remove(item)
                if fg:
                    self._running_fg += 1
                    self._expect_until = 0.0  # (what was expected has arrived)
                else:
                    self._running_bg += 1
            try:
                if item.future.set_running_or_notify_cancel():
                    try:
                        result = item.fn(*item.args, **item.kwargs)
                    except BaseException as exc:  # noqa: BLE001 - handed to the waiter
                        item.future.set_exception(exc)
                    else:
                        item.future.set_result(result)
            finally:
                del item
                with self._cond:
                    if fg:
                        self._running_fg -= 1
                    else:
                        self._running_bg -= 1
                    self._cond.notify_all()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._cond:
            self._closed = True
            if cancel_futures:
                for it in self._queue:
                    it.future.cancel()
                self._queue.clear()
            self._cond.notify_all()
        if wait:
            for t in self._threads:
                if t is not threading.current_thread():
                    t.join()
