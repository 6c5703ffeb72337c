"""Per-document analysis scheduling: latest-wins, one job in flight per document, requests
wait for the version they were asked about.

All state here lives on the event-loop thread.  The pass runs in a dedicated executor so the
read loop keeps reading (cancellations, further edits) while a big file is analysed.  A worker
thread cannot be interrupted, so superseded work is *discarded*: when a job finishes for a
version that is no longer current, its result is dropped and the newest text is analysed next.
Because only one job per document runs at a time and each job takes the newest text when it
starts, a burst of N keystrokes costs at most two analyses, not N.

Freshness key = (settings generation, document version).  A snapshot is accepted only when
its key equals the current one; a request is answered only with a snapshot whose key is at
least the key the request was made under.  So an answer is never stale and never empty
because analysis is still pending: the request simply waits.

Validity: the core may reuse IR objects of the previous version (moving their spans in
place), so the moment a newer version of a document is handed to the core, the previous
snapshot is marked invalid and dropped; nothing reads its analysis afterwards (`fresh` only
returns valid snapshots, handlers render synchronously after it, and anything that awaits in
between re-checks).  Per document, every in-process use of the core (plan, fix-all edits,
an in-process review) holds the document's `core_lock`, so two never overlap.

Two stages per version: the plan (what hints, hovers and go-to need; waiters are released
as soon as it is accepted) and the review of hand-written waits (redundant and stricter
waits, quick fixes), which starts right after the plan tier's push for the document the user
works on (after a quiet period for the others: `quiet_period`), runs in-process on the
analysis executor or in a child process (`review`), is stopped as soon as a newer version
arrives (`changed`: an in-process review holds the core lock the newer plan needs), and ends
the version's pipeline: a garbage collection (`memory`), then the diagnostics push.

Diagnostics come in two tiers per version, as rust-analyzer pushes its native diagnostics
before flycheck's: right after the plan (no quiet period, no collection) the *plan tier*
(`on_plan`): the parse and pass diagnostics and the review's missing-wait errors, which come
from the plan alone (`Analysis.missing_diagnostics`); after the review the *review tier*
(`on_snapshot`): the full set, which starts with exactly those records (the review returns
them first and never drops one: a failed review keeps them too), so nothing the plan tier
showed is withdrawn for the same version.  A version superseded before its review gets only
the plan tier; a version whose review was already in when the plan tier was due (a crash
snapshot, a review a quick-fix request forced) gets only the review tier.

Many documents open: the executor is normally a `lanes.LaneExecutor`, and the scheduler
tells it which document is the *focus* (the one last edited, or asked about while its answer
is pending), so the focus's plan and review start before other documents' work and never
queue behind it.  Memory: only the documents used last keep their analysis (`retention`):
the others' are dropped once their pipeline is done and made again when asked about.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable

from stinkywait_core.diagnostics import Diagnostic as CoreDiagnostic

from .memory import Collector
from .lanes import PLAN, REVIEW
from .retention import Retention
from .review import Reviewer, ReviewCancelled, ThreadReviewer
from .snapshot import AnalyzeFn, Job, Snapshot, StaleSnapshot, run_job
from .trace import Traces

log = logging.getLogger(__name__)

Key = tuple[int, int]


@dataclass(slots=True)
class DocState:
    uri: str
    latest: Snapshot | None = None
    driver: asyncio.Task | None = None
    debounce: asyncio.TimerHandle | None = None
    waiters: list[tuple[Key, asyncio.Future]] = field(default_factory=list)
    #: waits for the quiet period, then for the review of `latest`, then publishes
    finisher: asyncio.Task | None = None
    #: the core's plan cache for this document (None when the core has none)
    cache: Any = None
    #: seconds the last review of this document took
    review_cost: float = 0.0
    #: held around every in-process use of the core for this document
    core_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: superseded snapshots, kept alive until the next version has been answered: the core's
    #: cache drops its last reference to the old plan inside `analyze`, and freeing 100k+
    #: objects there (25-40 ms on the GEMM) would delay the hints; here it happens after
    graveyard: list[Snapshot] = field(default_factory=list)
    #: when the document was last edited (monotonic), and the gap before that edit (s)
    edited_at: float = 0.0
    edit_gap: float = float("inf")
    #: the key of the last snapshot whose diagnostics were pushed
    published: Key | None = None
    #: a dropped analysis (`Scheduler.trim`): (its key, its review's findings), handed to
    #: the snapshot that analyses the same version again (no second review, no second push)
    kept: tuple[Key, list[CoreDiagnostic]] | None = None


@dataclass(slots=True)
class Scheduler:
    """Owns the analysis pipeline of every open document.

    `make_job(uri)` snapshots a document (text, version, options) on the loop thread and
    returns None once the document is gone; `current_key(uri)` is its freshness key;
    `on_snapshot` is called on the loop thread once an accepted snapshot's review is done
    (publishing diagnostics).  `ready` gates the first analysis until the initial settings
    are known.  `reviewer` runs reviews (default: in-process on `executor`); `collector`
    owns garbage collection (None: CPython's automatic collection).
    """

    executor: Executor
    analyze: AnalyzeFn
    make_job: Callable[[str], Job | None]
    current_key: Callable[[str], Key | None]
    on_snapshot: Callable[[Snapshot], None]
    ready: asyncio.Event
    #: pushes a version's plan tier (None: diagnostics only after the review)
    on_plan: Callable[[Snapshot], None] | None = None
    #: makes a per-document plan cache for the core (None: analyse from scratch each time)
    new_cache: Callable[[], Any] | None = None
    debounce_s: float = 0.0
    #: quiet period before a version's review starts (grows with the last review's cost)
    review_delay_s: float = 0.3
    max_review_delay_s: float = 2.0
    #: a review that last cost less than `cheap_review_s` waits only `cheap_review_delay_s`
    #: (still about one keystroke's gap: a burst of typing rarely starts one, and one that
    #: does holds the next plan back by less than `cheap_review_s`)
    cheap_review_s: float = 0.05
    cheap_review_delay_s: float = 0.1
    #: an edit this soon after the document's previous one is typing: the focus's review then
    #: waits `typing_delay_factor` times that gap (at most `review_delay_s`), so the next
    #: keystroke usually comes before it starts rather than having to stop it (a review step
    #: in progress, a re-plan or the checker's set-up, is not interrupted: 50-150 ms on the GEMM)
    typing_gap_s: float = 0.3
    typing_delay_factor: float = 1.5
    #: delay after a version's requests are released before its predecessors are freed
    bury_after_s: float = 0.005
    reviewer: Reviewer | None = None
    collector: Collector | None = None
    traces: Traces = field(default_factory=Traces)
    #: reviews the child process answered (0: it never worked, so a crash is not the input's)
    reviews_done: int = 0
    docs: dict[str, DocState] = field(default_factory=dict)
    #: which documents keep their analysis (least recently used beyond `keep` are dropped)
    retention: Retention = field(default_factory=Retention)
    #: analyses dropped so far (stats)
    dropped: int = 0
    #: delay from dropping analyses to the collection that frees them
    collect_dropped_after_s: float = 0.5
    #: a collection made for another document than the focus (its version end, dropped
    #: analyses) waits while the focus was edited this recently or its pipeline runs: a
    #: full one blocks the loop for 1-5 s with 40 kernels open, and the edit would wait
    focus_quiet_s: float = 1.0
    _focus_edited: float = 0.0
    #: the document edited last (the focus when the executor has no lanes)
    _last_edited: str | None = None
    #: documents in the background (not the focus) start a plan only while fewer than this
    #: many documents are being planned or wait for their review: opening 40 kernels at
    #: once otherwise plans all 40 before the first review (plans go first), and all 40
    #: analyses are alive together (1.3 GB) because none can be dropped before its push
    max_unfinished: int = 2
    _planning: set = field(default_factory=set)
    _slot_waiters: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.reviewer is None:
            self.review_in_process()

    def review_in_process(self) -> None:
        """Run reviews on the analysis executor (no child process)."""
        if self.reviewer is not None:
            self.reviewer.shutdown()
        self.reviewer = ThreadReviewer(self.executor)

    # -- document lifecycle ------------------------------------------------------------------

    def _state(self, uri: str) -> DocState:
        st = self.docs.get(uri)
        if st is None:
            st = self.docs[uri] = DocState(uri, cache=self.new_cache() if self.new_cache else None)
        return st

    def opened(self, uri: str) -> None:
        # a re-open (even without a close) may reuse version numbers: never trust old results
        st = self._state(uri)
        self.retention.touch(uri)
        self._supersede(st)
        st.kept = None
        self._start(uri)

    def changed(self, uri: str) -> None:
        """Start analysing the new text (after `debounce_s`, 0 by default).

        Starting at once is cheap under typing because jobs coalesce (one running, then the
        newest text), and it hides latency: editors ask for hints only after their own
        debounce, by when the analysis is already under way.  A request arriving during a
        debounce starts the work at once.
        """
        st = self._state(uri)
        self.retention.touch(uri)
        self.focus(uri)
        self._focus_edited = time.monotonic()
        self._last_edited = uri
        now = time.monotonic()
        st.edit_gap, st.edited_at = now - st.edited_at, now
        self._stop_review(st)
        expect = getattr(self.executor, "expect_focus", None)
        if expect is not None:  # background work pauses until this edit's plan has run (lanes)
            expect(self.debounce_s + 0.25)
        if st.debounce is not None:
            st.debounce.cancel()
            st.debounce = None
        if self.debounce_s <= 0:
            self._start(uri)
        else:
            st.debounce = asyncio.get_running_loop().call_later(self.debounce_s, self._start, uri)

    def closed(self, uri: str) -> None:
        st = self.docs.pop(uri, None)
        self.retention.forget(uri)
        if st is None:
            return
        if getattr(self.executor, "focus", None) == uri:
            self.focus(None)
        if st.debounce is not None:
            st.debounce.cancel()
        if st.driver is not None:
            st.driver.cancel()
        self._supersede(st)
        st.graveyard.clear()
        for _, fut in st.waiters:
            if not fut.done():
                fut.set_result(None)
        self._wake()

    def shutdown(self) -> None:
        """Drop every document (pending requests get None) before the pool goes away."""
        for uri in list(self.docs):
            self.closed(uri)
        if self.reviewer is not None:
            self.reviewer.shutdown()

    def refresh_all(self) -> None:
        """Settings changed: every open document is re-analysed under the new generation."""
        for uri in list(self.docs):
            self._start(uri)

    def _stop_review(self, st: DocState) -> None:
        """A newer version of the document exists: its running review is of no use any more,
        so it stops now (at its next step, interrupt.py), not when the newer version's plan
        gets the document's core lock, which the in-process review holds: the review would
        otherwise run to its end before the new plan starts.  The snapshot itself is left to
        `_supersede` (its requests are answered already; nothing new reads it)."""
        snap = st.latest
        task = snap.review_task if snap is not None else None
        if task is not None and not task.done():
            task.cancel()
            assert self.reviewer is not None
            self.reviewer.cancel(st.uri)

    def _supersede(self, st: DocState) -> None:
        """The current snapshot can never answer again: invalidate and drop it (a big file
        then holds one analysis at a time, not two), stop its review."""
        snap, st.latest = st.latest, None
        if st.finisher is not None:
            st.finisher.cancel()
            st.finisher = None
        if snap is not None:
            snap.valid = False
            st.graveyard.append(snap)
            self._wake()
            task = snap.review_task
            if task is not None and not task.done():
                task.cancel()
                assert self.reviewer is not None
                self.reviewer.cancel(st.uri)

    def focus(self, uri: str | None) -> None:
        """`uri` is the document the user works on: its work goes first (see `lanes`)."""
        if hasattr(self.executor, "submit_for"):
            self.executor.focus = uri  # type: ignore[attr-defined]
            self._wake()

    # -- admission (memory) ----------------------------------------------------------------

    def _unfinished(self, but: str) -> int:
        """Documents other than `but` being planned, or planned and waiting for their review
        and push."""
        n = 0
        for uri, st in self.docs.items():
            if uri == but:
                continue
            snap = st.latest
            if uri in self._planning or (snap is not None and st.published != snap.key
                                         and st.finisher is not None and not st.finisher.done()):
                n += 1
        return n

    async def _admitted(self, st: DocState) -> bool:
        """True at once for the focus (or without a `LaneExecutor`: no focus to tell); a
        background document waits while `max_unfinished` others are unfinished (False:
        it waited, the caller looks at the document again)."""
        if not hasattr(self.executor, "submit_for") or getattr(self.executor, "focus", None) == st.uri \
                or self._unfinished(st.uri) < self.max_unfinished:
            return True
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._slot_waiters.append(fut)
        try:
            await asyncio.wait_for(fut, 1.0)  # (and a look every second, whatever happens)
        except asyncio.TimeoutError:
            pass
        finally:
            if fut in self._slot_waiters:
                self._slot_waiters.remove(fut)
        return False

    def _wake(self) -> None:
        """A pipeline ended (or the focus moved): waiting background documents look again."""
        waiters, self._slot_waiters = self._slot_waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def _pause_for(self, uri: str) -> Callable[[], None] | None:
        """The core's `pause` for `uri`'s work: a background document's plan yields to the
        focus's work between its stages and blocks (`lanes.LaneExecutor.pause_for`)."""
        pause_for = getattr(self.executor, "pause_for", None)
        return pause_for(uri) if pause_for is not None else None

    def _run(self, uri: str, rank: int, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        """`fn(*args)` on the executor as `uri`'s work at `rank` (any Executor works; only a
        `LaneExecutor` orders by document)."""
        submit_for = getattr(self.executor, "submit_for", None)
        if submit_for is None:
            return asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
        return asyncio.wrap_future(submit_for(uri, rank, fn, *args))

    # -- requests ----------------------------------------------------------------------------

    async def fresh(self, uri: str) -> Snapshot | None:
        """The snapshot of the document as it is now (waits for it if needed); None when the
        document is not open.  The result is valid when returned: render from it before the
        next `await`, or re-check `valid` after one."""
        if uri in self.docs:
            self.retention.touch(uri)
        while True:
            st = self.docs.get(uri)
            key = self.current_key(uri)
            if st is None or key is None:
                return None
            if st.latest is not None and st.latest.key >= key:
                return st.latest
            fut: asyncio.Future = asyncio.get_running_loop().create_future()
            st.waiters.append((key, fut))
            self.focus(uri)  # someone waits for it: nothing else goes first
            self._start(uri)
            try:
                snap = await fut
            finally:
                # a cancelled request drops only its own waiter; the shared job keeps running
                if (key, fut) in st.waiters:
                    st.waiters.remove((key, fut))
            if snap is None or snap.valid:
                return snap
            # superseded between its release and this resumption: wait for the newer one

    async def checked(self, snap: Snapshot) -> Snapshot:
        """`snap` with its review done (joins the running review, or starts it now).
        Raises `StaleSnapshot` when `snap` is superseded meanwhile."""
        while snap.checks is None:
            st = self.docs.get(snap.uri)
            if st is None or st.latest is not snap or not snap.valid:
                raise StaleSnapshot(f"{snap.uri} v{snap.version} was superseded")
            task = self._review_task(st, snap)
            try:
                await asyncio.shield(task)
            except (asyncio.CancelledError, ReviewCancelled):
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # this request itself was cancelled
                raise StaleSnapshot(f"the review of {snap.uri} v{snap.version} was superseded") from None
        if not snap.valid:
            raise StaleSnapshot(f"{snap.uri} v{snap.version} was superseded")
        return snap

    async def fix_all(self, snap: Snapshot) -> list[Any]:
        """The snapshot's fix-all edits, computed off the loop under the document's core lock
        (no newer version is analysed meanwhile).  Raises `StaleSnapshot` when superseded."""
        st = self.docs.get(snap.uri)
        if st is None:
            raise StaleSnapshot(snap.uri)
        async with st.core_lock:
            if not snap.valid:
                raise StaleSnapshot(f"{snap.uri} v{snap.version} was superseded")
            return await self._run(snap.uri, PLAN, snap.fix_all_edits)

    # -- the driver ----------------------------------------------------------------------------

    def _start(self, uri: str) -> None:
        st = self.docs.get(uri)
        if st is None:
            return
        if st.debounce is not None:
            st.debounce.cancel()
            st.debounce = None
        if st.driver is None or st.driver.done():
            st.driver = asyncio.ensure_future(self._drive(st))

    async def _drive(self, st: DocState) -> None:
        """Analyse until the latest snapshot matches the current key (one job at a time)."""
        await self.ready.wait()
        loop = asyncio.get_running_loop()
        while self.docs.get(st.uri) is st:
            key = self.current_key(st.uri)
            if key is None or (st.latest is not None and st.latest.key == key):
                return
            if not await self._admitted(st):
                continue  # it waited: look again (the text may have moved on, or closed)
            async with st.core_lock:
                if self.docs.get(st.uri) is not st:
                    return
                job = self.make_job(st.uri)
                if job is None:
                    return
                key = (job.generation, job.version)
                self._supersede(st)
                collector = self.collector if self.collector is not None and self.collector.due() \
                    and not self._focus_busy(st.uri) else None
                self.traces.of(st.uri, key)["submit"] = time.monotonic()
                self._planning.add(st.uri)
                try:
                    snap = await self._run(st.uri, PLAN, run_job, job, self.analyze, st.cache, collector,
                                           self._pause_for(st.uri))
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - executor failure: log, retry on next change
                    log.exception("analysis job for %s failed", st.uri)
                    for _, fut in st.waiters:
                        if not fut.done():
                            fut.set_result(None)
                    return
                finally:
                    self._planning.discard(st.uri)
                    self._wake()
            rec = self.traces.of(st.uri, key)
            rec.update(snap.timings)
            rec["accepted"] = time.monotonic()
            if self.docs.get(st.uri) is not st:
                return
            if snap.key != self.current_key(st.uri):
                log.debug("discarding stale analysis of %s v%d", st.uri, snap.version)
                snap.valid = False
                continue
            st.latest = snap
            self._resolve(st, snap)
            if st.kept is not None and st.kept[0] == snap.key and st.published == snap.key:
                # a dropped analysis made again: its findings are known and were pushed
                snap.checks = st.kept[1]
            else:
                st.kept = None
                st.finisher = asyncio.ensure_future(self._finish(st, snap))
            self.trim(st.uri)
            if st.graveyard:
                # after the released requests have rendered and their answers were written
                # (ready callbacks run before timers that fall due meanwhile)
                loop.call_later(self.bury_after_s, self._bury, st)
            return

    def _bury(self, st: DocState) -> None:
        """Free the superseded snapshots of a document (on the loop, off the request path)."""
        if not st.graveyard:
            return
        t0 = time.perf_counter()
        n = len(st.graveyard)
        st.graveyard.clear()
        if st.latest is not None:
            self.traces.of(st.uri, st.latest.key)["free_old_ms"] = 1e3 * (time.perf_counter() - t0)
        log.debug("freed %d superseded snapshot(s) of %s in %.1f ms", n, st.uri, 1e3 * (time.perf_counter() - t0))

    # -- the second stage --------------------------------------------------------------------

    def _review_task(self, st: DocState, snap: Snapshot) -> asyncio.Task:
        if snap.review_task is None:
            snap.review_task = asyncio.ensure_future(self._review(st, snap))
        return snap.review_task

    async def _review(self, st: DocState, snap: Snapshot) -> Snapshot:
        """Run the review of `snap` and store it in `snap.checks`."""
        assert self.reviewer is not None
        job = snap.job
        t0 = time.perf_counter()
        if snap.analysis is None or job is None:
            snap.checks = []
            return snap
        result = None
        for attempt in (1, 2):
            if isinstance(self.reviewer, ThreadReviewer):
                break
            try:
                result = await self.reviewer.review(snap.uri, snap.text, job.path, job.options, job.language)
                self.reviews_done += 1
                break
            except OSError as exc:  # the child cannot be started: review in-process from now on
                log.error("review worker unavailable (%r): reviewing in-process", exc)
                self.review_in_process()
            except ReviewCancelled as exc:
                if not snap.valid or st.latest is not snap:
                    raise  # superseded: we stopped it
                # it stopped by itself (crash, out of memory): once more with a new child
                log.error("review worker stopped during %s v%d (%s)", snap.uri, snap.version, exc)
                if attempt == 2:
                    if not self.reviews_done:
                        # it never worked here: an environment problem, not this input
                        log.error("review worker never answered: reviewing in-process")
                        self.review_in_process()
                    else:
                        snap.checks = self._plan_only(snap, "stopped")
                        return snap
        if isinstance(self.reviewer, ThreadReviewer):
            # in-process: it reads this snapshot's IR, so no newer plan may run meanwhile
            async with st.core_lock:
                if not snap.valid:
                    raise StaleSnapshot(snap.uri)
                result = await self.reviewer.review(snap.uri, snap.text, job.path, job.options,
                                                    job.language, analysis=snap.analysis)
        assert result is not None
        if result.error:
            log.error("wait review of %s v%d failed:\n%s", snap.uri, snap.version, result.error)
            snap.checks = self._plan_only(snap, "failed")
            return snap
        snap.checks = list(result.diagnostics)
        wall = time.perf_counter() - t0
        snap.timings.update(review_ms=1e3 * wall, review_cpu_ms=result.cpu_ms, review_rss_mb=result.rss_mb)
        st.review_cost = wall
        return snap

    @staticmethod
    def _plan_only(snap: Snapshot, how: str) -> list[CoreDiagnostic]:
        """The review tier of a version whose review failed: the plan tier's findings (they
        stay shown) and a note saying the rest is missing."""
        found: list[CoreDiagnostic] = []
        try:
            found = list(snap.plan_checks if snap.plan_checks is not None else snap.plan_tier())
        except Exception:  # noqa: BLE001 - superseded meanwhile, or the core failed: the note alone
            log.debug("no plan tier for %s v%d", snap.uri, snap.version, exc_info=True)
        return found + [CoreDiagnostic(
            severity="info", code="review-failed",
            message=f"the review of hand-written waits {how} on this file (see the server log); "
                    "only the plan's diagnostics are shown")]

    async def _push_plan(self, st: DocState, snap: Snapshot) -> None:
        """The plan tier of `snap`, pushed as soon as it is built (see the module docstring).

        Built off the loop (the missing-wait records and their JSON: ~0.2 s for the 7.5k
        waits of a 30k-line kernel, nothing on the GEMM as written) under the document's core
        lock, in the document's plan lane; no collection before it (the version-end
        collection stays before the review tier, `_finish`)."""
        if self.on_plan is None or snap.pushed:
            return
        if snap.checks is not None:  # the review is in already: one push, the full set
            self._publish(st, snap)
            return
        async with st.core_lock:
            if st.latest is not snap or not snap.valid:
                return
            try:
                await self._run(st.uri, PLAN, snap.published_text, False)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the review tier still comes
                log.exception("the plan tier of %s v%d failed", st.uri, snap.version)
                return
        if st.latest is not snap or not snap.valid or snap.pushed or self.docs.get(st.uri) is not st:
            return
        self._push(snap, 1, self.on_plan)

    def _publish(self, st: DocState, snap: Snapshot) -> None:
        """Push the review tier of `snap` (once); then the document's pipeline is done, and
        analyses beyond the retention budget may go (`trim`)."""
        if snap.pushed < 2:
            self._push(snap, 2, self.on_snapshot)
        st.published = snap.key
        self._wake()
        if self.trim(st.uri) and self.collector is not None:
            # free them soon (a full collection), not on the next keystroke's path
            asyncio.get_running_loop().call_later(self.collect_dropped_after_s, self._collect_dropped)

    @staticmethod
    def _push(snap: Snapshot, tier: int, push: Callable[[Snapshot], None]) -> None:
        snap.pushed = tier
        try:
            push(snap)
        except Exception:  # noqa: BLE001 - publishing must not stop the pipeline
            log.exception("publishing tier %d of %s v%d failed", tier, snap.uri, snap.version)

    def quiet_period(self, st: DocState) -> float:
        """Seconds from a version's plan to the start of its review.  Zero for the document
        the user works on (the focus, or the one edited last): its review starts at once and a
        newer edit stops it (`changed`), so its hints for hand-written waits come as soon as
        they are proven.  While the user types (this version's edit came within
        `typing_gap_s` of the one before) it waits about one keystroke's gap: a review stops
        only between its steps, and a keystroke that lands in a step waits for that step
        (measured: typing at 150 ms on the GEMM, edit -> hints 81 -> 133-177 ms median when
        every keystroke's review started at once).  Other documents
        (opened in bulk, edited by a rename elsewhere): short when the last review of the
        document was cheap, else growing with what it cost (capped), so their reviews run
        after the focus's work and are rarely superseded."""
        focus = getattr(self.executor, "focus", None) if hasattr(self.executor, "submit_for") else self._last_edited
        if focus is not None and focus == st.uri:
            if st.edit_gap < self.typing_gap_s:  # typing: most likely another keystroke comes
                return min(self.typing_delay_factor * st.edit_gap, self.review_delay_s)
            return 0.0
        if 0.0 < st.review_cost < self.cheap_review_s:
            return min(self.review_delay_s, self.cheap_review_delay_s)
        return max(self.review_delay_s, min(st.review_cost, self.max_review_delay_s))

    async def _finish(self, st: DocState, snap: Snapshot) -> None:
        """The plan tier's push at once; after a quiet period, the review, a collection
        (while a child process reviews, or after an in-process review), then the review
        tier's push.

        A full collection stays before the review tier's push: after it, it would land on the
        next edit of a user who types once the diagnostics show (tried: a GEMM edit -> hints
        of 10.6 s, as long as that run's longest full collection; BENCHMARKS.md "Many files
        open"); a young one (tens of ms) goes right after the push (`_collect_young`).  The plan tier's push goes before any collection: it is what the user waits
        for right after the hints, and a collection there would delay it by its whole length.

        The document the user works on has no quiet period: its review starts at once, and
        an edit stops it at its next step (`changed`), so the server never waits for the user
        to stop typing.  For the other documents a review of a version about to be replaced
        is wasted work, so their quiet period grows with what the last review cost (capped),
        and is short only when that was cheap (`quiet_period`).
        """
        await self._push_plan(st, snap)
        if snap.pushed >= 2 or st.latest is not snap or not snap.valid:
            return
        delay = self.quiet_period(st)
        warm = min(delay, 0.05)
        if warm > 0:
            await asyncio.sleep(warm)
        start = getattr(self.reviewer, "start", None)
        if start is not None and st.latest is snap and delay > 0:
            # a child process that is not running yet starts (and imports the core) during
            # the quiet period, not while the first answer is being computed
            try:
                await start()
            except OSError as exc:
                log.error("review worker unavailable (%r): reviewing in-process", exc)
                self.review_in_process()
        if delay > warm:
            await asyncio.sleep(delay - warm)
        if st.latest is not snap or not snap.valid:
            return
        rec = self.traces.of(st.uri, snap.key)
        rec["review_wait_ms"] = 1e3 * delay
        rec["review_start"] = time.monotonic()
        task = self._review_task(st, snap)
        if self.collector is not None and self.collector.worth_it() and not isinstance(self.reviewer, ThreadReviewer) \
                and not self._focus_busy(st.uri):
            # the loop is idle while the child reviews: collect now, before the review's
            # records arrive (the peak stays lower) and without delaying the push after it
            await asyncio.sleep(0)  # the review task starts (and marks its request unsent)
            wait_sent = getattr(self.reviewer, "wait_sent", None)
            if wait_sent is not None:
                await wait_sent(0.5)  # the child starts on it before the loop is busy
            gc_rec = self.collector.collect("version done")
            if gc_rec is not None:
                rec["gc_ms"] = gc_rec.ms
        try:
            await asyncio.shield(task)
        except (ReviewCancelled, StaleSnapshot):
            return
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            return
        except Exception:  # noqa: BLE001 - a broken review must not stop the pipeline
            log.exception("review of %s v%d failed", st.uri, snap.version)
            snap.checks = self._plan_only(snap, "failed")
        if st.latest is not snap or not snap.valid or self.docs.get(st.uri) is not st:
            return
        for k in ("review_ms", "review_cpu_ms", "review_rss_mb"):
            if k in snap.timings:
                rec[k] = snap.timings[k]
        async with st.core_lock:  # the push's JSON, off the loop (as the plan tier's)
            if st.latest is snap and snap.valid:
                try:
                    await self._run(st.uri, PLAN, snap.published_text, True)
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - the push builds it itself then
                    log.exception("the diagnostics of %s v%d failed", st.uri, snap.version)
        if st.latest is not snap or not snap.valid or self.docs.get(st.uri) is not st:
            return
        young_after = False
        if self.collector is not None and self.collector.worth_it() and not self._focus_busy(st.uri):
            if self.collector.full_due():
                gc_rec = self.collector.collect("version done")
                if gc_rec is not None:
                    rec["gc_ms"] = rec.get("gc_ms", 0.0) + gc_rec.ms
            else:
                young_after = True
        self._publish(st, snap)
        if young_after:
            # a young collection (30-50 ms on the GEMM) goes right after the push, not
            # before it: the diagnostics are out first; an edit typed in those few ms waits
            # for it, which a full one (seconds with many files open) must never make it do
            asyncio.get_running_loop().call_soon(self._collect_young, st, snap, rec)

    def _collect_young(self, st: DocState, snap: Snapshot, rec: dict) -> None:
        """The version-end collection after the review tier's push, unless the document
        moved on meanwhile (its next plan collects when due) or a full one fell due."""
        if self.collector is None or st.latest is not snap or self.collector.full_due() \
                or self._focus_busy(st.uri):
            return
        gc_rec = self.collector.collect("version done", full=False)
        if gc_rec is not None:
            rec["gc_ms"] = rec.get("gc_ms", 0.0) + gc_rec.ms

    # -- memory --------------------------------------------------------------------------------

    def trim(self, protect: str | None = None) -> int:
        """Drop the analyses of documents beyond the retention budget (least recently used
        first) whose pipeline is done; never the focus, the document used last or
        `protect`.  Of the other documents kept, the review's copies go.  Returns how many
        analyses (or review copies) were dropped."""
        holders = [u for u, st in self.docs.items() if st.latest is not None]
        spared = {getattr(self.executor, "focus", None), protect}
        n = 0
        victims = self.retention.over_budget(holders, spared)
        for uri in victims:
            st = self.docs[uri]
            if self._idle(st):
                self._drop(st)
                n += 1
        last = self.retention.last()
        for uri in holders:
            st = self.docs[uri]
            keep_only = getattr(st.cache, "keep_only", None)
            if uri not in victims and uri not in spared and uri != last and keep_only is not None \
                    and st.latest is not None and st.latest.job is not None and self._idle(st):
                # kept, but not worked on: the review's own analyses go (a new review of it
                # starts from the plan's)
                if keep_only(st.latest.job.options):
                    n += 1
                    if self.collector is not None:
                        self.collector.want_full()
        return n

    @staticmethod
    def _idle(st: DocState) -> bool:
        """Whether nothing is running or waiting for the document's analysis, and its
        diagnostics are out (so dropping it loses nothing the editor has not got)."""
        snap = st.latest
        return (snap is not None and snap.valid and snap.checks is not None and st.published == snap.key
                and not st.waiters and st.debounce is None and not st.core_lock.locked()
                and (st.driver is None or st.driver.done()) and (st.finisher is None or st.finisher.done())
                and (snap.review_task is None or snap.review_task.done()))

    def _drop(self, st: DocState) -> None:
        """Let go of the document's analysis (snapshot, superseded ones, the core's cache);
        keep its key and review findings for when it is analysed again."""
        snap = st.latest
        assert snap is not None and snap.checks is not None
        st.kept = (snap.key, snap.checks)
        self._supersede(st)
        st.graveyard.clear()
        st.cache = self.new_cache() if self.new_cache else None
        self.dropped += 1
        if self.collector is not None:
            # the dropped IR is cyclic and frozen (see `memory`): only a full collection frees it
            self.collector.want_full()
        log.info("dropped the analysis of %s v%d (kept: %d of %d open)", st.uri, snap.version,
                 sum(1 for d in self.docs.values() if d.latest is not None), len(self.docs))

    def _collect_dropped(self) -> None:
        if self.collector is not None and self.collector.full_wanted:
            if self._focus_busy(None):  # later: not while the focus is being edited
                asyncio.get_running_loop().call_later(self.collect_dropped_after_s, self._collect_dropped)
                return
            self.collector.collect("dropped analyses")

    def _focus_busy(self, uri: str | None) -> bool:
        """A collection on behalf of `uri` (None: of no document) should wait: `uri` is not
        the focus, and the focus was edited within `focus_quiet_s` or its pipeline (plan,
        review, push) is unfinished.  (The collection before an analysis, once garbage has
        piled up, still bounds memory under continuous typing.)"""
        focus = getattr(self.executor, "focus", None)
        if focus is None or focus == uri:
            return False
        if time.monotonic() - self._focus_edited < self.focus_quiet_s:
            return True
        st = self.docs.get(focus)
        if st is None:
            return False
        snap = st.latest
        return snap is None or st.published != snap.key

    def memory_stats(self) -> dict[str, int]:
        """Open documents, how many hold an analysis, analyses dropped so far, the budget."""
        return {"open": len(self.docs), "analysed": sum(1 for d in self.docs.values() if d.latest is not None),
                "dropped": self.dropped, "keep": self.retention.keep}

    @staticmethod
    def _resolve(st: DocState, snap: Snapshot) -> None:
        keep = []
        for key, fut in st.waiters:
            if fut.done():
                continue
            if snap.key >= key:
                fut.set_result(snap)
            else:
                keep.append((key, fut))
        st.waiters[:] = keep
