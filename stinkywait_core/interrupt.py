"""Stopping a review of hand-written waits part way.

The review re-plans the file once per group of offered edits and runs the hardware checker on
the edited files (review.py, review_proof.py): seconds on a big kernel.  The language server
runs it on a thread, which cannot be killed, and a newer version of the document must not wait
for it.  So the review asks, between its steps, whether its caller still wants the answer: the
caller hands `Analysis.check_diagnostics` a `stop` callable, and each step calls `checkpoint`,
which raises `ReviewInterrupted` once `stop()` is true.  An interrupted review leaves no
result behind (the next call starts over)."""

from __future__ import annotations

TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from typing import Any, Callable


class ReviewInterrupted(Exception):
    """The caller no longer wants this review (a newer version of the document arrived)."""


def checkpoint(an: Any) -> None:
    """Raise `ReviewInterrupted` when the review of `an` was asked to stop."""
    stop: Callable[[], bool] | None = getattr(an, "stop_review", None)
    if stop is not None and stop():
        raise ReviewInterrupted(an.path)
