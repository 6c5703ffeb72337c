"""One analysed version of one document, and the worker-thread job that produces it.

A `Snapshot` holds everything a request needs (text, line map, the core's `Analysis`, its
diagnostics, the planned waits by line) for exactly one (settings generation, document
version).  It is built off the event loop; requests then only slice it, so answering never
re-runs the pass and never mixes data of two versions.  What the core owns is read only while
the snapshot is `valid` (see `Snapshot`); the server converts lazily, per request: instruction
lookups, LSP diagnostics (as JSON, capped) and the fix-all edits.
"""

from __future__ import annotations

import bisect
import json
import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from lsprotocol import types as T

from stinkywait_core import findings
from stinkywait_core.diagnostics import Diagnostic as CoreDiagnostic
from stinkywait_core.results import Options, PlannedWait, QueueView

from .explain import BlockNames
from .positions import LineMap, line_starts, ranges_overlap
from .settings import View

log = logging.getLogger(__name__)

SOURCE = "stinkywait"

#: at most this many diagnostics are pushed per document (a 100k-line garbage file would
#: otherwise send a 100k-entry message the editor chokes on); the rest are summarised
MAX_PUBLISHED = 1000

#: LSP language ids the core understands; anything else falls back to the file extension
LANGUAGES = frozenset({"stir", "amdgpu-asm", "asm"})

#: the review's codes (core and presented), see `stinkywait_core.findings`
_REVIEW_CODES = frozenset({findings.CORE_MISSING, *findings.CODES.values()})
#: presented codes whose diagnostics mark text that could go (faded in the editor)
_UNNECESSARY = frozenset({findings.CODES[findings.REDUNDANT], findings.CODES[findings.STRICTER]})
#: codes whose related location (the binding producer) the hover already gives, with the
#: path that needs it: the editor shows the diagnostic above the hover, so not twice
_HOVER_EXPLAINS = frozenset({findings.CODES[findings.MISSING], findings.CODES[findings.UNPROVEN]})

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
    #: how results are shown (hint style, severities): part of the settings generation
    view: View = View()
    #: the other open documents' texts by file path (an open included file wins over disk)
    sources: dict = field(default_factory=dict)


@dataclass(slots=True)
class InstrInfo:
    """Where an instruction sits: its 1-based span and mnemonic (for hover and go-to)."""

    line: int
    col: int
    end_line: int
    end_col: int
    mnemonic: str
    block: str


class StaleSnapshot(Exception):
    """A snapshot's analysis was read after a newer version of its document started to be
    analysed (the core may share IR objects between versions and move them): the caller
    must answer from the newer version instead."""


@dataclass(slots=True)
class Snapshot:
    """One analysed version.  Plain fields (text, line map, wait lines, diagnostics) are
    copies owned by the snapshot; everything reached through `analysis` (planned waits,
    instruction spans, FIFO and producer views) belongs to the core and may be changed in
    place by the analysis of a newer version, so it is read only while `valid`, on the loop
    thread (or under the document's core lock), never afterwards."""

    uri: str
    version: int
    generation: int
    text: str
    lines: LineMap
    analysis: AnalysisLike | None
    #: parse and pass diagnostics (the core's records; converted when published or asked for)
    diagnostics: list[CoreDiagnostic]
    #: planned waits in text order and their 1-based anchor lines (for range bisection)
    waits: list[PlannedWait]
    wait_lines: list[int]
    #: the core's per-function results; their `fifo` views are lazy (built per line on
    #: access), so they are looked up per request rather than merged up front
    functions: list[Any]
    job: Job | None = None
    timings: dict[str, float] = field(default_factory=dict)
    #: the hand-written-wait review (missing/redundant/stricter); None until it is in
    checks: list[CoreDiagnostic] | None = None
    #: the review's missing-wait errors, from the plan alone (`Analysis.missing_diagnostics`):
    #: pushed with the plan tier, before the review; the review returns them first, unchanged
    plan_checks: list[CoreDiagnostic] | None = None
    #: which tiers were pushed: 0 none, 1 the plan's, 2 the review's (the full set)
    pushed: int = 0
    #: False from the moment a newer version of the document is handed to the core
    valid: bool = True
    #: the running or finished review of this snapshot (owned by the scheduler)
    review_task: Any = None
    _blocks: tuple[list[int], list[Any]] | None = None
    _names: BlockNames | None = None
    _plain_names: BlockNames | None = None
    _by_key: dict | None = None
    _published: list[dict] | None = None
    _published_plan: list[dict] | None = None
    #: the pushed diagnostics as JSON text, per tier (True: the review's)
    _published_json: dict = field(default_factory=dict)
    _fix_all: list[T.TextEdit] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def key(self) -> tuple[int, int]:
        return (self.generation, self.version)

    @property
    def view(self) -> View:
        return self.job.view if self.job is not None else View()

    def names(self) -> BlockNames:
        """Display names of this version's blocks (built on first use, while valid)."""
        analysis = self.ir()
        if self._names is None:
            self._names = BlockNames(getattr(analysis, "module", None), getattr(analysis, "language", None))
        return self._names

    def plain_names(self) -> BlockNames | None:
        """Block names for plain text (diagnostics' related notes: no Markdown quotes); None
        once the snapshot is superseded (its blocks may have moved)."""
        if self._plain_names is None and self.valid and self.analysis is not None:
            self._plain_names = BlockNames(getattr(self.analysis, "module", None),
                                           getattr(self.analysis, "language", None), quote="")
        return self._plain_names

    def target(self) -> str:
        """The target the analysis used (`Analysis.target` once the core has it)."""
        analysis = self.analysis
        if analysis is None:
            return self.job.options.arch if self.job is not None else ""
        return getattr(analysis, "target", None) or analysis.options.arch

    def target_model(self) -> Any:
        """The `targets.Target` the analysis planned for (its words: counters, op kinds), or
        None when there is none (no analysis, a target we do not model)."""
        analysis = self.analysis
        if analysis is None:
            return None
        try:
            return analysis.options.target
        except Exception:  # noqa: BLE001 - UnsupportedTarget, or a stand-in analysis
            return None

    def ir(self) -> AnalysisLike | None:
        """The core's analysis, for reading right now (raises `StaleSnapshot` once a newer
        version is being analysed)."""
        if not self.valid:
            raise StaleSnapshot(f"{self.uri} v{self.version} was superseded")
        return self.analysis

    def waits_between(self, first_line: int, last_line: int) -> list[PlannedWait]:
        """Planned waits anchored on 1-based lines first_line..last_line, in text order."""
        lo, hi = self.wait_span(first_line, last_line)
        return self.waits[lo:hi]

    def wait_span(self, first_line: int, last_line: int) -> tuple[int, int]:
        """The indices in `waits` of the waits anchored on lines first_line..last_line."""
        self.ir()
        return (bisect.bisect_left(self.wait_lines, first_line), bisect.bisect_right(self.wait_lines, last_line))

    def instr_at(self, line: int) -> InstrInfo | None:
        """The real instruction written on 1-based `line` (labels and PHIs excluded).

        Looked up when asked, by bisecting the blocks by their first line (built on first
        use, one step per block) and scanning that block: no per-version index of every
        instruction, and never the assembly front end's line table, which the core now
        builds lazily at a cost of 8 ms (GEMM) to 1 s (30k lines).  Reads the spans as they
        are while this snapshot is valid.
        """
        analysis = self.ir()
        if analysis is None:
            return None
        if self._blocks is None:
            self._blocks = _block_starts(analysis.module)
        starts, blocks = self._blocks
        k = bisect.bisect_right(starts, line) - 1
        if k < 0:
            return None
        block = blocks[k]
        for inst in block.instrs:
            span = inst.span
            if span is not None and span.line == line and not (inst.is_phi or inst.is_label or inst.inserted):
                return _info(inst, block)
        return None

    def fifo_at(self, line: int) -> tuple[str, dict[str, list[QueueView]]]:
        """(function, FIFO state) before the instruction on 1-based `line` (("", {}) when
        nothing is in flight)."""
        self.ir()
        for fr in self.functions:
            if line in fr.fifo:
                return fr.name, fr.fifo[line]
        return "", {}

    def producers_of(self, line: int) -> list[tuple[int, int]]:
        """(line, column) of the async producers the consumer on `line` waits for."""
        self.ir()
        out: list[tuple[int, int]] = []
        for fr in self.functions:
            out.extend(fr.producers.get(line, ()))
        return out

    def _kind(self, d: Any) -> tuple[str | None, PlannedWait | None]:
        """(finding kind, planned wait) of a review diagnostic; (None, None) for others."""
        if d.code not in _REVIEW_CODES:
            return None, None
        wait = None
        if d.code == findings.CORE_MISSING:
            wait = self.planned_wait(d)
        return findings.kind_of(d, wait), wait

    def planned_wait(self, d: Any) -> PlannedWait | None:
        """The planned wait a missing/unproven diagnostic (core or presented) asks for."""
        if self._by_key is None:
            self._by_key = findings.waits_by_key(self.waits)
        return findings.planned_wait_of(d, self._by_key)

    def presented(self, d: Any) -> CoreDiagnostic | None:
        """A diagnostic as the user sees it (`stinkywait_core.findings.present`: the kind's
        code and severity, advice for unproven waits); None when its kind is turned off."""
        kind, wait = self._kind(d)
        if kind is None:
            return d
        return findings.present(d, wait, self.view.severities, self.plain_names())

    def _shown(self, d: Any) -> bool:
        kind, _ = self._kind(d)
        return kind is None or self.view.severities.get(kind) != "off"

    def all_diagnostics(self) -> list[CoreDiagnostic]:
        """Every diagnostic as presented (parse and pass diagnostics, then the review's)."""
        self.ir()  # the plan's records belong to the core
        out = list(self.diagnostics)
        for d in self.checks or ():
            p = self.presented(d)
            if p is not None:
                out.append(p)
        return out

    def diagnostics_touching(self, rng: T.Range) -> list[tuple[T.Diagnostic, CoreDiagnostic]]:
        """The diagnostics whose range overlaps `rng` (closed), as LSP objects with their
        presented records; only the candidates on the range's lines are converted."""
        self.ir()
        first, last = rng.start.line + 1, rng.end.line + 1
        n = self.lines.line_count
        out = []
        for d in self.diagnostics + (self.checks or []):
            top = max(d.line, d.end_line or d.line)
            if 1 <= d.line <= n and (d.line > last or top < first):
                continue
            p = self.presented(d)
            if p is None:
                continue
            lsp = to_lsp_diagnostic(p, self.uri, self.lines)
            if ranges_overlap(lsp.range, rng):
                out.append((lsp, p))
        return out

    def plan_tier(self) -> list[CoreDiagnostic]:
        """The review's findings the plan already gives (missing waits), computed once (on
        the loop or under the document's core lock, while valid)."""
        if self.plan_checks is None:
            analysis = self.ir()
            missing = getattr(analysis, "missing_diagnostics", None) if analysis is not None else None
            self.plan_checks = list(missing()) if missing is not None else []
        return self.plan_checks

    def published(self, review: bool = True) -> list[dict]:
        """What is pushed, as JSON: every diagnostic up to `MAX_PUBLISHED`, then one summary.
        `review`: the review tier (the parse and pass diagnostics and the whole review, once
        it is in), else the plan tier (the same, with only the review's missing-wait errors,
        `plan_tier`).  Built once per snapshot and tier, straight from the core's records;
        only the pushed ones are presented."""
        if (self._published if review else self._published_plan) is None:
            self.ir()
            shown: list[dict] = []
            hidden = 0
            found = (self.checks or []) if review else self.plan_tier()
            for d in self.diagnostics + found:
                if len(shown) >= MAX_PUBLISHED:
                    hidden += self._shown(d)
                    continue
                p = self.presented(d)
                if p is not None:
                    shown.append(diagnostic_json(p, self.uri, self.lines))
            if hidden:
                last = shown[-1]["range"]["start"]
                shown.append({"range": {"start": dict(last), "end": dict(last)}, "source": SOURCE,
                              "code": "truncated", "severity": int(T.DiagnosticSeverity.Information),
                              "message": f"{hidden} more diagnostics not shown"})
            if review:
                self._published = shown
            else:
                self._published_plan = shown
        return self._published if review else self._published_plan  # type: ignore[return-value]

    def published_text(self, review: bool = True) -> str:
        """`published(review)` as JSON text (built once per tier; off the loop when the
        scheduler can: 0.1-0.3 s for the 1,000 diagnostics of a 30k-line kernel)."""
        text = self._published_json.get(review)
        if text is None:
            text = self._published_json[review] = json.dumps(self.published(review))
        return text

    def fix_all_edits(self) -> list[T.TextEdit]:
        """Edits that turn this text into exactly `stinkywait insert`'s output.

        The per-wait insertions are used when replaying them reproduces the core's
        `inserted_text()` (the normal case: small edits keep the cursor and folding in
        place); otherwise (e.g. the core also rewrote existing waits) one whole-document
        replacement is returned.  Either way the result is the core's text, never ours.
        Costs a full print of the file, so it is computed once per snapshot, off the loop
        (under the document's core lock: no newer version is analysed meanwhile).
        """
        with self._lock:
            if self._fix_all is None:
                self._fix_all = self._compute_fix_all()
            return self._fix_all

    def _compute_fix_all(self) -> list[T.TextEdit]:
        analysis = self.ir()
        if analysis is None:
            return []
        expected = analysis.inserted_text(explain=False)
        if expected == self.text:
            return []
        # waits of two counters may share one inserted line (`s_wait_loadcnt_dscnt`): once
        lines = dict.fromkeys((w.insert_line, w.insert_text) for w in sorted(self.waits, key=lambda w: w.insert_line))
        edits = [self.lines.insertion(line, text) for line, text in lines]
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


def _lsp_data(d: CoreDiagnostic) -> dict | None:
    data = dict(d.data) if d.data else {}
    if d.function:
        data.setdefault("function", d.function)
    return data or None


def to_lsp_diagnostic(d: CoreDiagnostic, uri: str, lines: LineMap) -> T.Diagnostic:
    """Core diagnostic -> LSP diagnostic: same code/message/data, range via the line map,
    related records as locations in this document."""
    related = [T.DiagnosticRelatedInformation(
        location=T.Location(uri=uri, range=lines.span(r.line, r.col, r.end_line, r.end_col)),
        message=r.message) for r in d.related] or None if d.code not in _HOVER_EXPLAINS else None
    tags = [T.DiagnosticTag.Unnecessary] if d.code in _UNNECESSARY else None
    return T.Diagnostic(range=lines.span(d.line, d.col, d.end_line, d.end_col),
                        message=d.message,
                        severity=_SEVERITY.get(d.severity, T.DiagnosticSeverity.Warning),
                        code=d.code, source=SOURCE, related_information=related,
                        tags=tags, data=_lsp_data(d))


def diagnostic_json(d: CoreDiagnostic, uri: str, lines: LineMap) -> dict:
    """`to_lsp_diagnostic` as the JSON object the client receives, built directly (about
    ten times cheaper than building the lsprotocol objects and unstructuring them)."""
    out: dict[str, Any] = {"range": lines.span_json(d.line, d.col, d.end_line, d.end_col),
                           "message": d.message,
                           "severity": int(_SEVERITY.get(d.severity, T.DiagnosticSeverity.Warning)),
                           "code": d.code, "source": SOURCE}
    if d.related and d.code not in _HOVER_EXPLAINS:
        out["relatedInformation"] = [
            {"location": {"uri": uri, "range": lines.span_json(r.line, r.col, r.end_line, r.end_col)},
             "message": r.message} for r in d.related]
    if d.code in _UNNECESSARY:
        out["tags"] = [int(T.DiagnosticTag.Unnecessary)]
    data = _lsp_data(d)
    if data is not None:
        out["data"] = data
    return out


def _info(inst: Any, block: Any) -> InstrInfo:
    span = inst.span
    return InstrInfo(span.line, span.col, span.end_line, span.end_col, inst.mnemonic, block.name)


def _block_starts(module: Any) -> tuple[list[int], list[Any]]:
    """Every block that has a located instruction, by the line of its first one (sorted):
    the instructions of a block are consecutive lines of the text.  ~1.5 ms for the 3,750
    blocks of the 30k-line kernel."""
    starts: list[int] = []
    blocks: list[Any] = []
    for fn in getattr(module, "functions", None) or []:
        for block in fn.blocks:
            for inst in block.instrs:
                span = inst.span
                if span is not None:
                    starts.append(span.line)
                    blocks.append(block)
                    break
    if any(a > b for a, b in zip(starts, starts[1:])):  # blocks not in text order (rare)
        order = sorted(range(len(starts)), key=starts.__getitem__)
        starts = [starts[i] for i in order]
        blocks = [blocks[i] for i in order]
    return starts, blocks


def crash_snapshot(job: Job, lines: LineMap, error: BaseException) -> Snapshot:
    """A snapshot for a document the core could not analyse: no hints, one diagnostic.

    The pass crashing on some input is a bug to report, but the editor must keep working:
    the message goes into the Problems panel (not a popup) and the trace into the log.
    """
    diag = CoreDiagnostic(severity="error", code="internal-error",
                          message=f"stinkywait could not analyse this file ({type(error).__name__}: "
                                  f"{str(error)[:200]}); see the server log")
    return Snapshot(uri=job.uri, version=job.version, generation=job.generation, text=job.text,
                    lines=lines, analysis=None, diagnostics=[diag], waits=[], wait_lines=[],
                    functions=[], job=job, checks=[])


def _reader(sources: dict[str, str]):
    """Included files: the open buffer's text, else the disk."""
    from stinkywait_core.syntax.asm_include import read_from_disk

    def read(path: str) -> str | None:
        text = sources.get(path)
        return text if text is not None else read_from_disk(path)
    return read


def run_job(job: Job, analyze: AnalyzeFn, cache: Any = None, collector: Any = None,
            pause: Any = None) -> Snapshot:
    """Analyse one document version (runs in a worker thread; never raises).

    `cache` is the core's plan cache of this document (only one job per document runs at a
    time, so it is never shared between threads).  `collector`, when given, runs a full
    collection first: the scheduler passes it only when garbage has piled up (see `memory`).
    `pause`, when given, is handed to the core, which calls it between its stages and blocks
    (a background document's plan yields to the focus's work there: `lanes`).
    Stage times (ms) and the worker's start/end (monotonic s) go into `Snapshot.timings`.
    """
    started = time.monotonic()
    timings: dict[str, float] = {"start": started}
    if collector is not None:
        rec = collector.collect("before analysis")
        if rec is not None:
            timings["collect_ms"] = rec.ms
    t0 = time.perf_counter()
    lines = LineMap.of(job.text, job.encoding)
    t1, c1 = time.perf_counter(), time.thread_time()
    timings["linemap_ms"] = 1e3 * (t1 - t0)
    try:
        extra: dict[str, Any] = {"cache": cache} if cache is not None else {}
        if job.sources and ".include" in job.text:
            extra["read"] = _reader(job.sources)
        if pause is not None:
            extra["pause"] = pause
        analysis = analyze(job.text, job.path, job.options, language=job.language, **extra)
        t2, c2 = time.perf_counter(), time.thread_time()
        # stable: waits sharing an anchor keep the core's order (the order they are inserted)
        waits = sorted(analysis.waits(), key=lambda w: w.line)
        snap = Snapshot(uri=job.uri, version=job.version, generation=job.generation, text=job.text,
                        lines=lines, analysis=analysis, diagnostics=list(analysis.diagnostics),
                        waits=waits, wait_lines=[w.line for w in waits],
                        functions=list(analysis.functions), job=job)
        # (the core's cache keeps one chain per live function and options, the latest
        # version only, and drops the chains of functions the document lost)
        t3 = time.perf_counter()
        timings.update(analyze_ms=1e3 * (t2 - t1), analyze_cpu_ms=1e3 * (c2 - c1), prepare_ms=1e3 * (t3 - t2),
                       done=time.monotonic())
        snap.timings = timings
        log.info("analysed %s v%d: %d waits, %d diagnostics; %s", job.uri, job.version, len(waits),
                 len(snap.diagnostics), ", ".join(f"{k} {v:.1f}" for k, v in timings.items() if k.endswith("_ms")))
        return snap
    except Exception as exc:  # noqa: BLE001 - any core failure becomes a diagnostic
        log.error("analysis of %s v%d failed:\n%s", job.uri, job.version, traceback.format_exc())
        snap = crash_snapshot(job, lines, exc)
        timings["done"] = time.monotonic()
        snap.timings = timings
        return snap
