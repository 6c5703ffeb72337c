"""The review of hand-written waits (`Analysis.check_diagnostics`), run away from the plan.

The review costs as much as the plan or more (it re-analyses the file with the waits
stripped: 60-90 ms on the 3.2k-line GEMM, 25 s on a 30k-line kernel), only feeds diagnostics
and quick fixes, and cannot be interrupted inside a thread.  So the server runs it in a child
process (`ProcessReviewer`):

  * it never holds the plan's executor, and never competes with the next version's plan for
    the GIL: the next keystroke's hints are computed while a review runs, at full speed;
  * a superseded review is *killed*, not waited for (the child is respawned on demand);
  * the review's second analysis never touches the plan's cache or the plan's IR, so the
    core may share instructions between versions of the plan without the review reading
    them while the next version moves them;
  * its memory (the core's caches of the plan and of the wait-stripped analysis of the last
    few documents, which make the next review incremental) is returned to the system when
    the child grows past `recycle_mb` (a 30k-line kernel's do) and the child is recycled.

The child gets what the server analysed (text, path, options, language), runs the same
deterministic `analyze` and `check_diagnostics`, and sends back the core's `Diagnostic`
records, which the server converts and publishes.  `ThreadReviewer` does the same in-process
(the scheduler's unit tests, and the fallback when no child can be started).

Wire format: 4-byte big-endian length + pickle, both ways, over the child's stdin/stdout.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import struct
import sys
import threading
import time
from collections import namedtuple
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from stinkywait_core.diagnostics import Diagnostic as CoreDiagnostic, Related

from .lanes import REVIEW
from .memory import status_mb

log = logging.getLogger(__name__)

_HEADER = struct.Struct(">I")
#: the child's program: imported by its package name, so the records it pickles are
#: `stinkywait_lsp.review.ReviewResult` on both sides
WIRE = 3
_CHILD = f"import sys; from stinkywait_lsp import review; sys.exit(review._child_main() if review.WIRE == {WIRE} else 3)"
#: texts at least this long (about 10k lines) are reviewed without the child's cache
_CACHE_MAX_CHARS = 400_000
#: `ReviewResult.error` of a review its caller stopped (`run_review`'s `stop`)
INTERRUPTED = "interrupted"
#: the child's exit status when the code it imported speaks another wire format (the
#: package was upgraded under a running server)
_WRONG_WIRE = 3


#: the server's copies of the review's diagnostics: tuples with the field names of
#: `stinkywait_core.diagnostics.Diagnostic` / `Related` (the core's records unpickle at
#: ~80 us each: 600 ms for the 7.5k of a 30k-line kernel, on the server's event loop;
#: tuples of plain values cross the pipe at C speed)
ReviewRelated = namedtuple("ReviewRelated", Related.__slots__)  # type: ignore[misc]
ReviewDiagnostic = namedtuple("ReviewDiagnostic", CoreDiagnostic.__slots__)  # type: ignore[misc]
_RELATED = ReviewDiagnostic._fields.index("related")


def flatten(d: Any) -> tuple:
    """A core diagnostic as plain values, in `ReviewDiagnostic` order (the child sends these)."""
    out = [getattr(d, f) for f in ReviewDiagnostic._fields]
    out[_RELATED] = tuple(tuple(getattr(r, f) for f in ReviewRelated._fields) for r in d.related)
    return tuple(out)


def unflatten(t: tuple) -> Any:
    out = list(t)
    out[_RELATED] = tuple(ReviewRelated._make(r) for r in t[_RELATED])
    return ReviewDiagnostic._make(out)


class ReviewCancelled(Exception):
    """The review was superseded (its child was killed) or the reviewer shut down."""


@dataclass(slots=True)
class ReviewResult:
    """The core's review diagnostics of one text, and what producing them cost."""

    diagnostics: list[Any]
    #: wall and CPU time of analyze + check_diagnostics where they ran, in ms
    ms: float = 0.0
    cpu_ms: float = 0.0
    #: resident memory of the process that ran it, after the run (MB; 0 when unknown)
    rss_mb: float = 0.0
    error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)


class Reviewer(Protocol):
    async def review(self, uri: str, text: str, path: str, options: Any, language: str | None,
                     analysis: Any = None) -> ReviewResult: ...

    def cancel(self, uri: str) -> None: ...

    def shutdown(self) -> None: ...


def run_review(text: str, path: str, options: Any, language: str | None, analysis: Any = None,
               cache: Any = None, stop: Callable[[], bool] | None = None,
               pause: Callable[[], None] | None = None) -> ReviewResult:
    """analyze (unless `analysis` is given; with `cache` when one is) + check_diagnostics;
    never raises.  `stop`: asked between the review's steps (stinkywait_core/interrupt.py);
    a review it stops returns no diagnostics and `error` "interrupted".  `pause`: called
    there too, and by the review's re-plans between their stages (a background document's
    review yields to the focus's work: lanes.py)."""
    import traceback
    from stinkywait_core.interrupt import ReviewInterrupted
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        if analysis is None:
            from stinkywait_core.api import analyze
            extra: dict[str, Any] = {"cache": cache} if cache is not None else {}
            if pause is not None:
                extra["pause"] = pause
            analysis = analyze(text, path, options, language=language, **extra)
        t1 = time.perf_counter()
        if pause is not None:
            asked = stop

            def stop() -> bool:  # (the review's steps: a pause, then the question)
                pause()
                return asked is not None and asked()
            found = list(analysis.check_diagnostics(stop, pause=pause))
        else:
            found = list(analysis.check_diagnostics(stop))
        t2 = time.perf_counter()
        timings = {"analyze_ms": 1e3 * (t1 - t0), "check_ms": 1e3 * (t2 - t1)}
        error = None
    except ReviewInterrupted:
        found, timings, error = [], {}, INTERRUPTED
    except Exception:  # noqa: BLE001 - a review failure must not lose the plan
        found, timings, error = [], {}, traceback.format_exc()
    return ReviewResult(found, 1e3 * (time.perf_counter() - t0), 1e3 * (time.process_time() - c0),
                        status_mb(), error, timings)


class ThreadReviewer:
    """In-process review on an executor.

    `analysis` is the plan's own `Analysis` when the caller holds it, so nothing is analysed
    twice; the caller must keep newer versions of the same document from being analysed
    meanwhile (the scheduler holds the document's core lock around it).  A thread cannot be
    killed, so `cancel` asks the review to stop at its next step (interrupt.py: between two
    re-plans or checker runs), and a cancelled `review` returns only once the thread has
    let go of the analysis: the caller's lock is never released while the thread still
    reads the snapshot, and a newer version waits one review step, not the whole review."""

    def __init__(self, executor: Executor):
        self.executor = executor
        self._stops: dict[str, threading.Event] = {}

    async def review(self, uri: str, text: str, path: str, options: Any, language: str | None,
                     analysis: Any = None) -> ReviewResult:
        stop = threading.Event()
        self._stops[uri] = stop
        submit_for = getattr(self.executor, "submit_for", None)
        if submit_for is not None:  # a `lanes.LaneExecutor`: this document's review lane
            pause_for = getattr(self.executor, "pause_for", None)
            fut = submit_for(uri, REVIEW, run_review, text, path, options, language, analysis, None, stop.is_set,
                             pause_for(uri) if pause_for is not None else None)
        else:
            fut = self.executor.submit(run_review, text, path, options, language, analysis, None, stop.is_set)
        try:
            result = await asyncio.shield(asyncio.wrap_future(fut))
        except asyncio.CancelledError:
            stop.set()
            if not fut.cancel():  # started: wait for it to notice (its next step)
                await asyncio.wait([asyncio.wrap_future(fut)])
            raise
        finally:
            if self._stops.get(uri) is stop:
                del self._stops[uri]
        if result.error == INTERRUPTED:
            raise ReviewCancelled("superseded")
        return result

    def cancel(self, uri: str) -> None:
        stop = self._stops.get(uri)
        if stop is not None:
            stop.set()

    def shutdown(self) -> None:
        pass


class ProcessReviewer:
    """Reviews in one child process (`_child_main`), one at a time.

    `recycle_mb`: after a review leaves the child above this resident size, the child is
    stopped (its memory goes back to the system) and a new one is started on the next
    review; 0 keeps it.
    """

    in_process = False

    def __init__(self, *, recycle_mb: float = 150.0, python: str | None = None):
        self.recycle_mb = recycle_mb
        self.python = python or sys.executable
        self._proc: asyncio.subprocess.Process | None = None
        self._lock: asyncio.Lock | None = None
        self._start_lock: asyncio.Lock | None = None
        self._sent_event: asyncio.Event | None = None
        self._busy_uri: str | None = None
        self.spawned = 0
        self.killed = 0
        self.last_rss_mb = 0.0

    @property
    def _sent(self) -> asyncio.Event:
        if self._sent_event is None:
            self._sent_event = asyncio.Event()
        return self._sent_event

    async def wait_sent(self, timeout: float) -> None:
        """Until the running review's request is in the child's hands (or `timeout`)."""
        try:
            await asyncio.wait_for(self._sent.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.returncode is None else None

    async def start(self) -> None:
        """Start the child unless it runs (the scheduler calls this during the quiet period
        before a review, so its start-up is not waited for)."""
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            await self._spawn()

    async def _spawn(self) -> None:
        if self._proc is None or self._proc.returncode is not None:
            env = dict(os.environ)
            # the child imports the same packages the server did, from the same places
            env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p or os.curdir) for p in sys.path)
            self._proc = await asyncio.create_subprocess_exec(
                self.python, "-c", _CHILD, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, env=env)
            self.spawned += 1
            log.info("review worker started (pid %d)", self._proc.pid)

    async def review(self, uri: str, text: str, path: str, options: Any, language: str | None,
                     analysis: Any = None) -> ReviewResult:
        if self._lock is None:
            self._lock = asyncio.Lock()
        self._sent.clear()
        async with self._lock:
            await self.start()
            proc = self._proc
            assert proc is not None and proc.stdin is not None and proc.stdout is not None
            payload = pickle.dumps(("review", uri, text, path, options, language), protocol=pickle.HIGHEST_PROTOCOL)
            self._busy_uri = uri
            try:
                proc.stdin.write(_HEADER.pack(len(payload)) + payload)
                await proc.stdin.drain()
                self._sent.set()
                head = await proc.stdout.readexactly(_HEADER.size)
                body = await proc.stdout.readexactly(_HEADER.unpack(head)[0])
            except (asyncio.IncompleteReadError, ConnectionError, BrokenPipeError) as exc:
                await self._reap(proc)
                if proc.returncode == _WRONG_WIRE:
                    raise OSError("the installed stinkywait_lsp differs from the running server's; "
                                  "restart the server") from None
                raise ReviewCancelled(f"review worker stopped ({exc!r})") from None
            except asyncio.CancelledError:
                # the child is still working on a request nobody wants: its answer would be
                # read as the next request's, so it goes
                if self._proc is proc:
                    self._kill()
                raise
            finally:
                self._busy_uri = None
                self._sent.set()
            result: ReviewResult = pickle.loads(body)
            result.diagnostics = [unflatten(t) for t in result.diagnostics]
            self.last_rss_mb = result.rss_mb
            if self.recycle_mb and result.rss_mb > self.recycle_mb:
                log.info("review worker at %.0f MB: recycled", result.rss_mb)
                self._kill()
            return result

    async def _reap(self, proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is None:
            proc.kill()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except Exception:  # noqa: BLE001 - a zombie is not worth failing over
            pass
        if self._proc is proc:
            self._proc = None

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            proc.kill()
            self.killed += 1
            # reap it in the background: a killed child must not stay a zombie
            asyncio.ensure_future(self._reap(proc))

    def cancel(self, uri: str) -> None:
        """Stop the review of `uri` if it is the one running (its result is not wanted)."""
        if self._busy_uri == uri and self._proc is not None:
            log.info("review of %s superseded: worker killed", uri)
            self._kill()

    def shutdown(self) -> None:
        self._kill()

    async def aclose(self) -> None:
        """Stop the child and wait for it (closes its pipes before the loop goes away)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            await self._reap(proc)


def _child_main(documents: int = 3) -> int:
    """The review worker: read a request, answer it, until stdin closes.

    Keeps the core's cache of the last `documents` documents it reviewed (below
    `_CACHE_MAX_CHARS`), so the next version of one is re-planned incrementally (the plan
    and the review's wait-stripped analysis each keep their own chain in it); a recycled or
    killed worker starts cold.  Diagnostics go back as plain tuples (`flatten`).
    """
    from collections import OrderedDict
    inp = sys.stdin.buffer
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print in the core must not corrupt the stream
    import gc
    try:
        from stinkywait_core.api import AnalysisCache
    except ImportError:
        AnalysisCache = None
    caches: OrderedDict[str, Any] = OrderedDict()
    while True:
        head = inp.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return 0
        (n,) = _HEADER.unpack(head)
        body = inp.read(n)
        kind, uri, text, path, options, language = pickle.loads(body)
        if kind != "review":
            continue
        cache = caches.pop(uri, None)
        if len(text) >= _CACHE_MAX_CHARS:
            cache = None  # its two cached plans would outgrow `recycle_mb` anyway
        elif cache is None and AnalysisCache is not None:
            cache = AnalysisCache()
        if cache is not None:
            caches[uri] = cache
            while len(caches) > documents:
                caches.popitem(last=False)
        result = run_review(text, path, options, language, cache=cache)
        result.diagnostics = [flatten(d) for d in result.diagnostics]
        # drop this run's IR before the next request instead of letting it pile up
        gc.collect()
        result.rss_mb = status_mb()
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_HEADER.pack(len(data)) + data)
        out.flush()
