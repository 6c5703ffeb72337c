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
  * the scheduler collects (a) when a version's pipeline is finished (after its quiet
    period, while the child process reviews it: typing has paused by then), and (b)
    before an analysis, in the worker, only when garbage has piled up anyway (continuous
    typing that never pauses long enough for (a)), so memory stays bounded;
  * collections are young (what was allocated since the last one) except when the
    process has grown (see `Collector`);
  * after a collection that freed something, glibc is asked to return free pages.

What this cannot fix: a collection scans every object it may free, and the core's versions
leave cyclic garbage (its IR points back from instructions to blocks), so a young
collection still costs ~0.2 s with a 30k-line kernel open and a full one ~1-2 s.
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


def status_mb(field: str = "VmRSS") -> float:
    """This process's resident set (or another /proc/self/status size field) in MB; 0 when
    unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass(frozen=True, slots=True)
class Collection:
    """One collection: why, which kind ("young": what was allocated since the last one;
    "full": the whole heap), when (monotonic), how long (wall, CPU of the collecting
    thread), how many objects were pending and how many unreachable ones it freed."""

    reason: str
    kind: str
    at: float
    ms: float
    cpu_ms: float
    pending: int
    freed: int


class Collector:
    """The server's collection policy (one per process; thread-safe).

    After every collection everything alive is frozen (`gc.freeze`), so the next one scans
    only what was allocated since: a *young* collection, ~0.2 s with a 30k-line kernel open
    (the incremental core keeps most of its IR from one version to the next) where a scan
    of the whole heap (1.7M objects) costs 0.9-1.9 s.  What dies among frozen objects (the
    parts of older versions the core replaced) is not freed by a young collection, so a
    *full* one (unfreeze, collect, freeze) runs when the process has grown by more than
    `max(full_growth_mb, full_ratio * size)` since the last full one, or after
    `full_every` young ones.

    `pending()` is CPython's generation-0 count: allocations minus deallocations of tracked
    objects since the last collection (it keeps counting while automatic collection is
    off).  Before an analysis, a collection is `due` when it exceeds `min_pending`
    (continuous typing that never pauses long enough for the version-end collection).
    """

    def __init__(self, *, min_pending: int = 150_000, full_every: int = 20, full_growth_mb: float = 32.0,
                 full_ratio: float = 0.15, full_after_drops: int = 3, manage: bool = True, history: int = 64):
        self.min_pending = min_pending
        self.full_every = full_every
        self.full_growth_mb = full_growth_mb
        self.full_ratio = full_ratio
        self.managed = False
        self.history: deque[Collection] = deque(maxlen=history)
        self._lock = threading.Lock()
        self._trim = _malloc_trim()
        self._young = 0
        self._rss_full = 0.0
        #: analyses dropped (frozen by now) since the last full collection: after
        #: `full_after_drops` of them the next collection is full (each full one blocks the
        #: server for 1-5 s with 40 kernels open, so not one per drop)
        self.full_after_drops = full_after_drops
        self._drops = 0
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
        self._rss_full = status_mb()
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
        """Whether a version-end collection has anything to do."""
        return self.managed and self.pending() >= 1_000

    def due(self) -> bool:
        """Whether enough garbage may have piled up to collect before the next analysis."""
        return self.managed and self.pending() >= self.min_pending

    def want_full(self) -> None:
        """An analysis was dropped: what it held is frozen, so only a full collection frees
        it; the next collection is full once `full_after_drops` have piled up."""
        self._drops += 1

    @property
    def full_wanted(self) -> bool:
        return self._drops >= self.full_after_drops

    def full_due(self) -> bool:
        """Whether the next collection (`collect` with `full=None`) would be a full one."""
        return self.managed and self._full_due()

    def _full_due(self) -> bool:
        if self.full_wanted or self._young >= self.full_every:
            return True
        rss = status_mb()
        return rss - self._rss_full > max(self.full_growth_mb, self.full_ratio * self._rss_full)

    def collect(self, reason: str, full: bool | None = None) -> Collection | None:
        """A collection now (in the calling thread): young, or full when `full` or when
        the process grew (see the class); None when automatic collection is in charge
        (unmanaged) or nothing was allocated since the last one."""
        if not self.managed:
            return None
        with self._lock:
            pending = self.pending()
            if pending == 0 and not full:
                return None
            full = self._full_due() if full is None else full
            t0, c0 = time.perf_counter(), time.thread_time()
            if full:
                gc.unfreeze()
                freed = gc.collect()
                self._young = 0
                self._drops = 0
            else:
                freed = gc.collect(1)
                self._young += 1
            gc.freeze()
            if freed and self._trim is not None:
                self._trim(0)  # ~1 ms; hands freed pages back (~10 MB after a 30k-line plan)
            t1, c1 = time.perf_counter(), time.thread_time()
            if full:
                self._rss_full = status_mb()
            rec = Collection(reason, "full" if full else "young", time.monotonic(), 1e3 * (t1 - t0),
                             1e3 * (c1 - c0), pending, freed)
            self.history.append(rec)
        log.info("gc (%s, %s): %.1f ms (cpu %.1f), %d pending, %d freed, %d frozen", reason, rec.kind, rec.ms,
                 rec.cpu_ms, pending, freed, gc.get_freeze_count())
        return rec
