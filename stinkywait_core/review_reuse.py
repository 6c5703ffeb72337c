"""The review's proven offers carried from one version of a document to the next, per function.

Proving an offered delete or relax costs re-plans and hardware-checker runs (review.py,
review_proof.py): seconds per kernel.  In a file of several kernels, a one-line edit in one
of them leaves the others exactly as they were, and so are their proofs.  What a function's
verification reads: its own lines (the plan, the checker's paths), the file outside every
function (kernel descriptors and metadata: launch facts, LDS region declarations), which
functions the file defines and which of them are called code (call boundaries), and the
options.  A function whose *fingerprint* of all of that is the one of the previous review,
and whose offered changes are the same ones (same codes, new texts, offsets from the
function's first line), gets the previous review's verdict on them, moved by however many
lines the function moved; the other functions are verified as usual.

A verdict is deterministic given those inputs with one exception: the proof's step budget
(`review_proof.STEP_BUDGET`) is shared by the functions verified in one review, so a cold
review of the whole file may prove fewer changes than the reviews that verified one function
at a time (never a change the checker did not prove).  Files whose text is not what the
pass reads (macros, includes: `Analysis.call_sites`) are never reused: an included file may
change under the same text.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from .api import Analysis
    from .review_proof import Change

from .diagnostics import Diagnostic


class FunctionVerdict:
    """One function's verified offers: its fingerprint, its first line then, the offered
    changes (signature) and the diagnostics of the ones proven safe."""

    __slots__ = ("fingerprint", "first", "offered", "proven")

    def __init__(self, fingerprint: tuple, first: int, offered: tuple, proven: list[Diagnostic]):
        self.fingerprint, self.first, self.offered, self.proven = fingerprint, first, offered, proven


def _extent(func) -> tuple[int, int] | None:
    """First and last line of a function's text (its header and instructions)."""
    lo = hi = None
    if func.span is not None:
        lo, hi = func.span.line, func.span.end_line or func.span.line
    for b in func.blocks:
        for inst in b.instrs:
            sp = inst.span
            if sp is None:
                continue
            lo = sp.line if lo is None else min(lo, sp.line)
            hi = max(sp.end_line or sp.line, sp.line) if hi is None else max(hi, sp.end_line or sp.line)
    return None if lo is None or hi is None else (lo, hi)


class ReviewReuse:
    """The functions of one review whose verdict may come from the last review of the same
    document (`take`), and the recording of this review's verdicts (`store`)."""

    def __init__(self, an: Analysis, lines: list[str]):
        self.an = an
        self.table: dict[str, FunctionVerdict] = an.cache.review_verdicts
        self.extents: dict[str, tuple[int, int]] = {}
        names = []
        for po in an.outputs:
            ext = _extent(po.func)
            names.append((po.func.name, bool(po.func.callable)))
            if ext is not None:
                self.extents[po.func.name] = ext
        inside = set()
        for lo, hi in self.extents.values():
            inside.update(range(lo, hi + 1))
        outside = "".join(ln for k, ln in enumerate(lines, 1) if k not in inside)
        shared = (outside, tuple(sorted(names)), an.options, an.language)
        self.fingerprints = {name: (name, "".join(lines[lo - 1:hi]), shared)
                             for name, (lo, hi) in self.extents.items()}

    def _offered(self, name: str, changes: list[Change]) -> tuple:
        first = self.extents[name][0]
        return tuple((c.diag.code, c.line - first, c.text, c.diag.message) for c in changes)

    def take(self, usable: list[Change]) -> tuple[list[Diagnostic], list[Change]]:
        """(the reused verdicts' proven diagnostics, the changes still to verify)."""
        by_function: dict[str | None, list[Change]] = {}
        for c in usable:
            by_function.setdefault(c.function, []).append(c)
        reused: list[Diagnostic] = []
        rest: list[Change] = []
        for name, changes in by_function.items():
            old = self.table.get(name) if name in self.fingerprints else None
            if old is not None and old.fingerprint == self.fingerprints[name] \
                    and old.offered == self._offered(name, changes):
                delta = self.extents[name][0] - old.first
                reused.extend(_moved(d, delta) for d in old.proven)
            else:
                rest.extend(changes)
        return reused, rest

    def store(self, verified: list[Change], tried: list[Change]) -> None:
        """Record the verdicts on the functions of `tried` (`verified`: the ones proven)."""
        by_function: dict[str, list[Change]] = {}
        for c in tried:
            if c.function in self.fingerprints:
                by_function.setdefault(c.function, []).append(c)
        ok = {id(c) for c in verified}
        for name, changes in by_function.items():
            self.table[name] = FunctionVerdict(self.fingerprints[name], self.extents[name][0],
                                               self._offered(name, changes),
                                               [c.diag for c in changes if id(c) in ok])
        for name in [n for n in self.table if n not in self.fingerprints]:
            del self.table[name]  # a function the document lost


def _moved(d: Diagnostic, delta: int) -> Diagnostic:
    """`d` moved down by `delta` lines (its line data too)."""
    if not delta:
        return d
    data = {k: (v + delta if k in ("delete_line", "replace_line") else v) for k, v in d.data.items()}
    return Diagnostic(d.severity, d.code, d.message, d.line + delta, d.col,
                      None if d.end_line is None else d.end_line + delta, d.end_col, list(d.related), data,
                      d.function)
