"""When the server's cyclic garbage collector runs (never on the way to an answer, if it can).

The core's IR is one big cyclic graph (instructions point at their block, blocks at each
other), so a superseded analysis is freed only by the cyclic collector, and a collection
costs time in proportion to every tracked object it scans: ~25 ms with one GEMM analysis
alive, 0.5-1 s with a 30k-line one.  Left automatic, those collections land in the first
allocations after `analyze` (the core pauses the collector while it runs), i.e. between the
edit and its hints, on roughly every other version.

The policy here:
  * everything imported at start-up is frozen (`gc.freeze`): never scanned again;
  * automatic collection is off for the life of the server (the core's
    `bulk_construction` re-enables it only if it was on, so it stays off);
  * the scheduler collects (a) when a version's pipeline is finished (its review is in,
    just before its diagnostics are pushed: typing has paused by then), and (b) before
    an analysis, in the worker, only when garbage has piled up anyway (continuous typing
    that never pauses long enough for (a)), so memory stays bounded;
  * after a collection that freed something, glibc is asked to return free pages.

What this cannot fix: a full collection scans every live tracked object, so with a 30k-line
plan alive (~1.2M objects) it costs ~0.4-1 s wherever it runs, and the current core makes a
whole new cyclic plan per version, so one is needed per version to stay within memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass

log = logging.getLogger(__name__)


def _malloc_trim() -> object | None:
    """glibc's `malloc_trim` (hands freed heap pages back to the system), when available."""
    try:
        name = ctypes.util.find_library("c")
        return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class Collection:
    """One collection: why, when (monotonic), how long (wall, CPU of the collecting thread),
    how many young objects were pending and how many unreachable ones it freed."""

    reason: str
    at: float
    ms: float
    cpu_ms: float
    pending: int
    freed: int


class Collector:
    """The server's collection policy (one per process; thread-safe).

    `pending()` is the net number of tracked objects allocated since the last collection
    (CPython's generation-0 count, which keeps counting while automatic collection is off,
    and counts down when objects die by reference counting): the young live objects plus
    the young cyclic garbage.  A forced collection happens when it exceeds
    `max(min_pending, ratio * heap)`, `heap` being an estimate of the tracked objects that
    survived the previous collections (so a 30k-line analysis, ~1.2M objects, may leave
    more garbage behind than a 3k-line one before it is worth a full scan).
    """

    def __init__(self, *, min_pending: int = 150_000, ratio: float = 0.5, manage: bool = True,
                 history: int = 64):
        self.min_pending = min_pending
        self.ratio = ratio
        self.managed = False
        self.heap = 0
        self.history: deque[Collection] = deque(maxlen=history)
        self._lock = threading.Lock()
        self._trim = _malloc_trim()
        if manage:
            self.manage()

    def manage(self) -> None:
        """Freeze what is alive now (imports, the server object) and stop automatic
        collection.  Idempotent."""
        if self.managed:
            return
        gc.collect()
        gc.freeze()
        gc.disable()
        self.managed = True
        log.info("gc: %d objects frozen at start-up, automatic collection off", gc.get_freeze_count())

    def release(self) -> None:
        """Back to CPython's automatic collection (tests, embedding)."""
        if self.managed:
            gc.unfreeze()
            gc.enable()
            self.managed = False

    @staticmethod
    def pending() -> int:
        return gc.get_count()[0]

    def worth_it(self) -> bool:
        """Whether a collection at the end of a version's pipeline is worth its cost (a full
        scan of the heap): skipped when little was allocated since the last one (a comment
        edit of a 30k-line kernel leaves ~3% of a 1.7M-object heap; a scan costs ~1 s)."""
        return self.managed and self.pending() >= max(10_000, int(0.05 * self.heap))

    def due(self) -> bool:
        """Whether enough garbage may have piled up to collect before the next analysis."""
        return self.managed and self.pending() >= max(self.min_pending, int(self.ratio * self.heap))

    def collect(self, reason: str) -> Collection | None:
        """A full collection now (in the calling thread); None when automatic collection is
        in charge (unmanaged) or nothing was allocated since the last one."""
        if not self.managed:
            return None
        with self._lock:
            pending = self.pending()
            if pending == 0:
                return None
            t0, c0 = time.perf_counter(), time.thread_time()
            freed = gc.collect()
            if freed and self._trim is not None:
                self._trim(0)  # ~1 ms; returns ~10 MB after a 30k-line plan is freed
            t1, c1 = time.perf_counter(), time.thread_time()
            self.heap = max(0, self.heap + pending - freed)
            rec = Collection(reason, time.monotonic(), 1e3 * (t1 - t0), 1e3 * (c1 - c0), pending, freed)
            self.history.append(rec)
        log.info("gc (%s): %.1f ms (cpu %.1f), %d pending, %d freed, heap ~%d", reason, rec.ms,
                 rec.cpu_ms, pending, freed, self.heap)
        return rec
