"""Which open documents keep their analysis (issue 21: memory bounded by what is open and seen).

An analysed document holds its whole IR, plan, FIFO snapshots and the incremental cache's
memo: 10-130 MB for a real kernel (BENCHMARKS.md "Many files open: memory"), so 40 open
kernels would need gigabytes.  The server keeps the analyses of the documents used last
(edited, opened, or asked about: hints, hover, code lens, plan view) and drops the others'
once their pipeline is done (plan, review, diagnostics pushed).  A dropped document keeps
its text (the workspace's), what the editor already got (its published diagnostics) and its
review's findings; the next request about it analyses the same text again (from scratch, so
the result is the same as before: the cache only ever reproduces the from-scratch plan).

Last use is a counter, not a clock: an order is all the policy needs.  The document being
worked on (the scheduler's focus, and the one used last) is never dropped, whatever `keep`.
"""

from __future__ import annotations

from collections.abc import Iterable

#: documents (besides the one being worked on) whose analyses are kept by default: a few
#: visible editors' worth; `stinkywait.keepAnalyses` changes it
DEFAULT_KEEP = 2


class Retention:
    """Least-recently-used order of the open documents and the budget `keep`."""

    __slots__ = ("keep", "_clock", "_used")

    def __init__(self, keep: int = DEFAULT_KEEP):
        self.keep = keep
        self._clock = 0
        self._used: dict[str, int] = {}

    def touch(self, uri: str) -> None:
        """`uri` was just used (opened, edited, asked about)."""
        self._clock += 1
        self._used[uri] = self._clock

    def forget(self, uri: str) -> None:
        self._used.pop(uri, None)

    def last(self) -> str | None:
        """The document used last (None when none is open)."""
        return max(self._used, key=self._used.__getitem__) if self._used else None

    def over_budget(self, holders: Iterable[str], protected: Iterable[str] = ()) -> list[str]:
        """Of the documents holding an analysis (`holders`), those beyond the `keep` used
        most recently, least recently used first; the document used last and `protected`
        ones are never listed and do not count against `keep`."""
        spared = set(protected)
        last = self.last()
        if last is not None:
            spared.add(last)
        rest = sorted((u for u in holders if u not in spared), key=lambda u: self._used.get(u, 0), reverse=True)
        return rest[max(self.keep, 0):][::-1]
