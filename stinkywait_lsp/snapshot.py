"""One analysed version of one document, and the worker-thread job that produces it.

A `Snapshot` freezes everything a request needs (text, line map, the core's `Analysis`, the
LSP diagnostics, line indexes) for exactly one (settings generation, document version).  It is
built off the event loop; requests then only slice it, so answering never re-runs the pass and
never mixes data of two versions.
"""

from __future__ import annotations

import bisect
import gc
import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from lsprotocol import types as T

from stinkywait_core.diagnostics import Diagnostic as CoreDiagnostic
from stinkywait_core.results import Options, PlannedWait, QueueView

from .positions import LineMap, line_starts

log = logging.getLogger(__name__)

SOURCE = "stinkywait"

#: at most this many diagnostics are pushed per document (a 100k-line garbage file would
#: otherwise send a 100k-entry message the editor chokes on); the rest are summarised
MAX_PUBLISHED = 1000

#: texts at least this long (about 10k lines) get a full collection before they are analysed
COLLECT_BEFORE_CHARS = 400_000

#: LSP language ids the core understands; anything else falls back to the file extension
LANGUAGES = frozenset({"stir", "amdgpu-asm", "asm"})

_SEVERITY = {
    "error": T.DiagnosticSeverity.Error,
    "warning": T.DiagnosticSeverity.Warning,
    "info": T.DiagnosticSeverity.Information,
    "hint": T.DiagnosticSeverity.Hint,
}


class AnalysisLike(Protocol):
    """The slice of `stinkywait_core.api.Analysis` the server reads."""

    module: Any
    diagnostics: list[CoreDiagnostic]
    functions: list[Any]

    def waits(self) -> list[PlannedWait]: ...

    def inserted_text(self, explain: bool = False) -> str: ...

    def check_diagnostics(self) -> list[CoreDiagnostic]: ...


AnalyzeFn = Callable[..., AnalysisLike]


@dataclass(frozen=True, slots=True)
class Job:
    """What the worker needs, captured on the event-loop thread (never read `ls.workspace`
    from a worker)."""

    uri: str
    path: str
    version: int
    generation: int
    text: str
    language: str | None
    options: Options
    encoding: str


@dataclass(slots=True)
class InstrInfo:
    """Where an instruction sits: its 1-based span and mnemonic (for hover and go-to)."""

    line: int
    col: int
    end_line: int
    end_col: int
    mnemonic: str
    block: str


@dataclass(slots=True)
class Snapshot:
    uri: str
    version: int
    generation: int
    text: str
    lines: LineMap
    analysis: AnalysisLike | None
    #: parse and pass diagnostics, each paired with the core record it came from
    diagnostics: list[tuple[T.Diagnostic, CoreDiagnostic]]
    #: planned waits in text order and their 1-based anchor lines (for range bisection)
    waits: list[PlannedWait]
    wait_lines: list[int]
    instrs: dict[int, InstrInfo]
    #: the core's per-function results; their `fifo` views are lazy (built per line on
    #: access), so they are looked up per request rather than merged up front
    functions: list[Any]
    timings: dict[str, float] = field(default_factory=dict)
    #: the hand-written-wait review (missing/redundant/stricter); None until `run_checks`
    checks: list[tuple[T.Diagnostic, CoreDiagnostic]] | None = None
    _fix_all: list[T.TextEdit] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def key(self) -> tuple[int, int]:
        return (self.generation, self.version)

    def waits_between(self, first_line: int, last_line: int) -> list[PlannedWait]:
        """Planned waits anchored on 1-based lines first_line..last_line, in text order."""
        lo = bisect.bisect_left(self.wait_lines, first_line)
        hi = bisect.bisect_right(self.wait_lines, last_line)
        return self.waits[lo:hi]

    def fifo_at(self, line: int) -> dict[str, list[QueueView]]:
        """FIFO state before the instruction on 1-based `line` ({} when nothing is in flight)."""
        for fr in self.functions:
            if line in fr.fifo:
                return fr.fifo[line]
        return {}

    def producers_of(self, line: int) -> list[tuple[int, int]]:
        """(line, column) of the async producers the consumer on `line` waits for."""
        out: list[tuple[int, int]] = []
        for fr in self.functions:
            out.extend(fr.producers.get(line, ()))
        return out

    def all_diagnostics(self) -> list[tuple[T.Diagnostic, CoreDiagnostic]]:
        return self.diagnostics + (self.checks or [])

    def published(self) -> list[T.Diagnostic]:
        """What is pushed: every diagnostic up to `MAX_PUBLISHED`, then one summary."""
        every = self.all_diagnostics()
        if len(every) <= MAX_PUBLISHED:
            return [d for d, _ in every]
        shown = [d for d, _ in every[:MAX_PUBLISHED]]
        last = shown[-1].range.start
        shown.append(T.Diagnostic(range=T.Range(start=last, end=last), source=SOURCE, code="truncated",
                                  severity=T.DiagnosticSeverity.Information,
                                  message=f"{len(every) - MAX_PUBLISHED} more diagnostics not shown"))
        return shown

    def run_checks(self) -> list[tuple[T.Diagnostic, CoreDiagnostic]]:
        """The review of hand-written waits, computed once (worker thread; never raises).

        Kept out of the first stage because it costs about as much as the analysis itself:
        hints, hovers and go-to only need the plan, so they are answered before it runs.
        """
        with self._lock:
            if self.checks is None:
                t0 = time.perf_counter()
                try:
                    found = self.analysis.check_diagnostics() if self.analysis is not None else []
                    self.checks = [(to_lsp_diagnostic(d, self.uri, self.lines), d) for d in found]
                except Exception:  # noqa: BLE001 - a review failure must not lose the plan
                    log.error("wait review of %s v%d failed:\n%s", self.uri, self.version,
                              traceback.format_exc())
                    self.checks = []
                self.timings["check"] = time.perf_counter() - t0
            return self.checks

    def fix_all_edits(self) -> list[T.TextEdit]:
        """Edits that turn this text into exactly `stinkywait insert`'s output.

        The per-wait insertions are used when replaying them reproduces the core's
        `inserted_text()` (the normal case: small edits keep the cursor and folding in
        place); otherwise (e.g. the core also rewrote existing waits) one whole-document
        replacement is returned.  Either way the result is the core's text, never ours.
        Costs a full print of the file, so it is computed once per snapshot, off the loop.
        """
        with self._lock:
            if self._fix_all is None:
                self._fix_all = self._compute_fix_all()
            return self._fix_all

    def _compute_fix_all(self) -> list[T.TextEdit]:
        if self.analysis is None:
            return []
        expected = self.analysis.inserted_text(explain=False)
        if expected == self.text:
            return []
        edits = [self.lines.insertion(w.insert_line, w.insert_text)
                 for w in sorted(self.waits, key=lambda w: w.insert_line)]
        if apply_insertions(self.text, self.lines, edits) == expected:
            return edits
        whole = T.Range(start=T.Position(line=0, character=0), end=self.lines.end())
        return [T.TextEdit(range=whole, new_text=expected)]


def apply_insertions(text: str, lines: LineMap, edits: list[T.TextEdit]) -> str:
    """Apply pure insertions the way an LSP client does (same-position inserts keep their array
    order).  Only used to verify the fix-all edits, so it supports exactly the positions
    `LineMap.insertion` produces: column 0 of a line, or the end of the document."""
    starts = line_starts(text)
    end = lines.end()
    out: list[str] = []
    cursor = 0
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character)):
        p = e.range.start
        if p == end:
            offset = len(text)
        elif p.character == 0 and p.line < len(starts):
            offset = starts[p.line]
        else:
            raise ValueError(f"not an insertion position: {p}")
        out.append(text[cursor:offset])
        out.append(e.new_text)
        cursor = offset
    out.append(text[cursor:])
    return "".join(out)


def to_lsp_diagnostic(d: CoreDiagnostic, uri: str, lines: LineMap) -> T.Diagnostic:
    """Core diagnostic -> LSP diagnostic: same code/message/data, range via the line map,
    related records as locations in this document."""
    related = [T.DiagnosticRelatedInformation(
        location=T.Location(uri=uri, range=lines.span(r.line, r.col, r.end_line, r.end_col)),
        message=r.message) for r in d.related] or None
    data = dict(d.data) if d.data else {}
    if d.function:
        data.setdefault("function", d.function)
    tags = [T.DiagnosticTag.Unnecessary] if d.code == "redundant-wait" else None
    return T.Diagnostic(range=lines.span(d.line, d.col, d.end_line, d.end_col),
                        message=d.message,
                        severity=_SEVERITY.get(d.severity, T.DiagnosticSeverity.Warning),
                        code=d.code, source=SOURCE, related_information=related,
                        tags=tags, data=data or None)


def _index_instructions(module: Any) -> dict[int, InstrInfo]:
    """1-based line -> the real instruction written there (labels and PHIs excluded)."""
    out: dict[int, InstrInfo] = {}
    for fn in getattr(module, "functions", None) or []:
        for block in fn.blocks:
            for inst in block.instrs:
                span = inst.span
                if span is None or inst.is_phi or inst.is_label or inst.inserted:
                    continue
                out.setdefault(span.line, InstrInfo(span.line, span.col, span.end_line, span.end_col,
                                                    inst.mnemonic, block.name))
    return out


def crash_snapshot(job: Job, lines: LineMap, error: BaseException) -> Snapshot:
    """A snapshot for a document the core could not analyse: no hints, one diagnostic.

    The pass crashing on some input is a bug to report, but the editor must keep working:
    the message goes into the Problems panel (not a popup) and the trace into the log.
    """
    diag = CoreDiagnostic(severity="error", code="internal-error",
                          message=f"stinkywait could not analyse this file ({type(error).__name__}: "
                                  f"{str(error)[:200]}); see the server log")
    return Snapshot(uri=job.uri, version=job.version, generation=job.generation, text=job.text,
                    lines=lines, analysis=None,
                    diagnostics=[(to_lsp_diagnostic(diag, job.uri, lines), diag)],
                    waits=[], wait_lines=[], instrs={}, functions=[], checks=[])


def run_job(job: Job, analyze: AnalyzeFn, cache: Any = None) -> Snapshot:
    """Analyse one document version (runs in a worker thread; never raises).

    `cache` is the core's per-function plan cache of this document (only one job per
    document runs at a time, so it is never shared between threads): functions whose text
    and position did not change are not re-planned.
    """
    if len(job.text) >= COLLECT_BEFORE_CHARS:
        # The scheduler has just dropped this document's previous analysis, which is cyclic
        # garbage; the core pauses the cyclic collector while it builds IR, so without this
        # the old and the new plan of a big file would be alive together (and the postponed
        # collection, run later, would scan both).
        gc.collect()
    t0, c0 = time.perf_counter(), time.thread_time()
    lines = LineMap.of(job.text, job.encoding)
    try:
        extra = {"cache": cache} if cache is not None else {}
        analysis = analyze(job.text, job.path, job.options, language=job.language, **extra)
        t1, c1 = time.perf_counter(), time.thread_time()
        core_diags = list(analysis.diagnostics)
        # stable: waits sharing an anchor keep the core's order (the order they are inserted)
        waits = sorted(analysis.waits(), key=lambda w: w.line)
        snap = Snapshot(uri=job.uri, version=job.version, generation=job.generation, text=job.text,
                        lines=lines, analysis=analysis,
                        diagnostics=[(to_lsp_diagnostic(d, job.uri, lines), d) for d in core_diags],
                        waits=waits, wait_lines=[w.line for w in waits],
                        instrs=_index_instructions(analysis.module), functions=list(analysis.functions))
        if cache is not None and hasattr(cache, "size"):
            # exactly the live functions: this run touched all of them, so the LRU evicts
            # the superseded versions (old plans of a 30k-line function are 100s of MB)
            cache.size = max(1, len(analysis.functions))
        t2, c2 = time.perf_counter(), time.thread_time()
        snap.timings = {"analyze": t1 - t0, "index": t2 - t1, "analyze_cpu": c1 - c0, "index_cpu": c2 - c1}
        log.info("analysed %s v%d: %d waits, %d diagnostics; analyze %.1f ms (cpu %.1f), index %.1f ms "
                 "(cpu %.1f)", job.uri, job.version, len(waits), len(core_diags), 1e3 * (t1 - t0),
                 1e3 * (c1 - c0), 1e3 * (t2 - t1), 1e3 * (c2 - c1))
        return snap
    except Exception as exc:  # noqa: BLE001 - any core failure becomes a diagnostic
        log.error("analysis of %s v%d failed:\n%s", job.uri, job.version, traceback.format_exc())
        return crash_snapshot(job, lines, exc)
