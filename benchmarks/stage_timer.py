"""Per-stage CPU time of the core's analysis, by wrapping its stage functions with timers.

Used by bench_incremental.py `--stages`.  Each wrapped function charges the process CPU time
(`time.process_time`) it spent, minus the time of wrapped stages it called, to its own name
(exclusive time), so the columns add up to the analysis's total; what no stage claims is the
`(rest)` row.  Wrapping costs about a microsecond per call, so only stage-level functions
(called once per function or per analysis) are wrapped, plus `_anchor_waits` (once per
anchor whose waits are made again: a handful per edit).

The wrappers are installed on the modules and classes the core looks names up in (a function
imported by name is patched where it is called from), and removed by `uninstall`.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from stinkywait_core import api
from stinkywait_core.ir import nodes
from stinkywait_core.syntax import asm_incremental, asm_parser
from stinkywait_core.waitcnt import dataflow, incremental, pipeline, promotion


def _targets() -> list[tuple[Any, str, str]]:
    """(owner, attribute, stage name) of every timed stage, in pipeline order."""
    df = dataflow.WaitDataflow
    return [
        (api, "parse", "parse (other)"),
        (asm_incremental, "_scan", "parse: scan"),
        (asm_incremental, "_scan_diagnostics", "parse: scan diagnostics"),
        (asm_incremental, "_splice", "parse: splice"),
        (nodes.Function, "link", "parse: Function.link"),
        (asm_parser, "mark_callable", "parse: mark_callable"),
        (asm_parser, "_physical_vgprs", "parse: physical vgprs"),
        (api, "adopt", "adopt"),
        (api, "physical_lines", "physical_lines"),
        (pipeline, "compute_cfg", "cfg"),
        (pipeline, "build_use_def_chain", "def-use"),
        (incremental.FunctionMemo, "begin", "memo begin/end"),
        (incremental.FunctionMemo, "end", "memo begin/end"),
        (df, "__init__", "facts (WaitDataflow.__init__)"),
        (df, "solve", "solve"),
        (df, "materialize_plan", "materialize_plan"),
        (promotion.ShallowPredPromotion, "rewrite", "promotion"),
        (promotion.ShallowPredPromotion, "rewrite_added", "promotion (2nd round)"),
        (df, "finalize_plan", "finalize"),
        (pipeline, "coalesce_waits", "coalesce"),
        (pipeline, "drop_satisfied", "drop_satisfied"),
        (pipeline, "_end_of_function_drains", "end-of-function drains"),
        (df, "remember_lds", "remember_lds"),
        (pipeline, "remove_phis", "remove_phis"),
        (pipeline, "_build_result", "_build_result"),
        (pipeline, "_anchor_waits", "_build_result: anchor waits"),
        (pipeline, "_clause_warnings", "_clause_warnings"),
        (pipeline, "_boundary_notes", "_boundary_notes"),
        (api, "_place_waits", "_place_waits"),
    ]


class StageTimer:
    """Exclusive CPU seconds per stage over the analyses run while installed."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._stack: list[float] = []  # per open stage: CPU time its wrapped callees took
        self._saved: list[tuple[Any, str, Any]] = []

    def _wrap(self, fn: Callable, name: str) -> Callable:
        clock = time.process_time
        stack = self._stack
        seconds, calls = self.seconds, self.calls

        def timed(*args, **kwargs):
            stack.append(0.0)
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = clock() - t0
                inner = stack.pop()
                seconds[name] = seconds.get(name, 0.0) + spent - inner
                calls[name] = calls.get(name, 0) + 1
                if stack:
                    stack[-1] += spent

        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed

    def install(self) -> None:
        for owner, attr, name in _targets():
            own = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr)
            fn = getattr(owner, attr)  # (a class's method may be inherited: shadowed, then removed)
            self._saved.append((owner, attr, own))
            setattr(owner, attr, self._wrap(fn, name))

    def uninstall(self) -> None:
        for owner, attr, own in reversed(self._saved):
            if own is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, own)
        self._saved.clear()

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()

    def snapshot(self) -> dict[str, float]:
        return dict(self.seconds)
