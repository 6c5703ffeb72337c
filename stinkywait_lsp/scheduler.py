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
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable

from .snapshot import AnalyzeFn, Job, Snapshot, run_job

log = logging.getLogger(__name__)

Key = tuple[int, int]


@dataclass(slots=True)
class DocState:
    uri: str
    latest: Snapshot | None = None
    driver: asyncio.Task | None = None
    debounce: asyncio.TimerHandle | None = None
    waiters: list[tuple[Key, asyncio.Future]] = field(default_factory=list)
    #: the review of `latest` (second stage), published when done
    checks: asyncio.Task | None = None
    #: the core's per-function plan cache for this document (None when the core has none)
    cache: Any = None
    #: seconds the last review of this document took (it cannot be interrupted once started)
    review_cost: float = 0.0


@dataclass(slots=True)
class Scheduler:
    """Owns the analysis pipeline of every open document.

    `make_job(uri)` snapshots a document (text, version, options) on the loop thread and
    returns None once the document is gone; `current_key(uri)` is its freshness key;
    `on_snapshot` is called on the loop thread once an accepted snapshot's review is done
    (publishing diagnostics).  `ready` gates the first analysis until the initial settings
    are known.

    Two stages per version: the plan (what hints, hovers and go-to need; waiters are
    released as soon as it is accepted) and the review of hand-written waits (diagnostics
    and quick fixes), which runs after it unless a newer version supersedes it.
    """

    executor: Executor
    analyze: AnalyzeFn
    make_job: Callable[[str], Job | None]
    current_key: Callable[[str], Key | None]
    on_snapshot: Callable[[Snapshot], None]
    ready: asyncio.Event
    #: makes a per-document plan cache for the core (None: analyse from scratch each time)
    new_cache: Callable[[], Any] | None = None
    debounce_s: float = 0.0
    #: quiet period before a version's review starts (grows with the last review's cost)
    review_delay_s: float = 0.3
    max_review_delay_s: float = 2.0
    docs: dict[str, DocState] = field(default_factory=dict)

    # -- document lifecycle ------------------------------------------------------------------

    def _state(self, uri: str) -> DocState:
        st = self.docs.get(uri)
        if st is None:
            st = self.docs[uri] = DocState(uri, cache=self.new_cache() if self.new_cache else None)
        return st

    def opened(self, uri: str) -> None:
        # a re-open (even without a close) may reuse version numbers: never trust old results
        self._state(uri).latest = None
        self._start(uri)

    def changed(self, uri: str) -> None:
        """Start analysing the new text (after `debounce_s`, 0 by default).

        Starting at once is cheap under typing because jobs coalesce (one running, then the
        newest text), and it hides latency: editors ask for hints only after their own
        debounce, by when the analysis is already under way.  A request arriving during a
        debounce starts the work at once.
        """
        st = self._state(uri)
        if st.debounce is not None:
            st.debounce.cancel()
            st.debounce = None
        if self.debounce_s <= 0:
            self._start(uri)
        else:
            st.debounce = asyncio.get_running_loop().call_later(self.debounce_s, self._start, uri)

    def closed(self, uri: str) -> None:
        st = self.docs.pop(uri, None)
        if st is None:
            return
        if st.debounce is not None:
            st.debounce.cancel()
        if st.driver is not None:
            st.driver.cancel()
        if st.checks is not None:
            st.checks.cancel()
        for _, fut in st.waiters:
            if not fut.done():
                fut.set_result(None)

    def shutdown(self) -> None:
        """Drop every document (pending requests get None) before the pool goes away."""
        for uri in list(self.docs):
            self.closed(uri)

    def refresh_all(self) -> None:
        """Settings changed: every open document is re-analysed under the new generation."""
        for uri in list(self.docs):
            self._start(uri)

    # -- requests ----------------------------------------------------------------------------

    async def fresh(self, uri: str) -> Snapshot | None:
        """The snapshot of the document as it is now (waits for it if needed); None when the
        document is not open."""
        st = self.docs.get(uri)
        key = self.current_key(uri)
        if st is None or key is None:
            return None
        if st.latest is not None and st.latest.key >= key:
            return st.latest
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        st.waiters.append((key, fut))
        self._start(uri)
        try:
            return await fut
        finally:
            # a cancelled request drops only its own waiter; the shared job keeps running
            if (key, fut) in st.waiters:
                st.waiters.remove((key, fut))

    async def checked(self, snap: Snapshot) -> Snapshot:
        """`snap` with its review done (joins the running second stage when there is one)."""
        if snap.checks is None:
            st = self.docs.get(snap.uri)
            if st is not None and st.latest is snap and st.checks is not None and not st.checks.done():
                await asyncio.shield(st.checks)
            if snap.checks is None:
                await asyncio.get_running_loop().run_in_executor(self.executor, snap.run_checks)
        return snap

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
            job = self.make_job(st.uri)
            if job is None:
                return
            # the previous version can never answer a request again (answers are never
            # stale): free it now, so a big file holds one analysis at a time, not two
            if st.latest is not None:
                st.latest = None
                if st.checks is not None:
                    st.checks.cancel()
                    st.checks = None
            try:
                snap = await loop.run_in_executor(self.executor, run_job, job, self.analyze, st.cache)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - executor failure: log, retry on next change
                log.exception("analysis job for %s failed", st.uri)
                for _, fut in st.waiters:
                    if not fut.done():
                        fut.set_result(None)
                return
            if self.docs.get(st.uri) is not st:
                return
            if snap.key != self.current_key(st.uri):
                log.debug("discarding stale analysis of %s v%d", st.uri, snap.version)
                continue
            st.latest = snap
            self._resolve(st, snap)
            if st.checks is not None:
                st.checks.cancel()
            st.checks = asyncio.ensure_future(self._review(st, snap))
            return

    async def _review(self, st: DocState, snap: Snapshot) -> None:
        """Second stage: review hand-written waits, then publish (unless superseded).

        Waits for a quiet period first: while the user keeps typing, the review of a version
        that is about to be replaced would only compete with the next analysis for the GIL.
        A review cannot be stopped once started, so the quiet period grows with what the
        last one cost (capped): a 60 s review of a 30k-line kernel waits for a real pause.
        """
        await asyncio.sleep(max(self.review_delay_s, min(st.review_cost, self.max_review_delay_s)))
        if st.latest is not snap or self.current_key(st.uri) != snap.key:
            return
        await asyncio.get_running_loop().run_in_executor(self.executor, snap.run_checks)
        st.review_cost = snap.timings.get("check", 0.0)
        if st.latest is not snap or self.docs.get(st.uri) is not st:
            return
        try:
            self.on_snapshot(snap)
        except Exception:  # noqa: BLE001 - publishing must not stop the pipeline
            log.exception("publishing results for %s failed", st.uri)

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
