"""Predicted stall as the editor shows it: one short line per wait, the kernel's total.

The numbers come from the core (`Analysis.stall`, waitcnt/stall.py, the latency model); this
module only words them.  A wait inside a loop reports its stall on one trip of that loop.
"""

from __future__ import annotations

from typing import Any

from stinkywait_core.results import PlannedWait


def wait_stall(analysis: Any, w: PlannedWait) -> Any:
    """The core's `PointStall` of a planned wait (None: no prediction for this file)."""
    fn = getattr(analysis, "wait_stall", None)
    if fn is None:
        return None
    try:
        return fn(w)
    except Exception:  # a prediction never takes a request down
        return None


def stall_line(analysis: Any, w: PlannedWait, names: Any) -> str | None:
    """"~300 cycles stall (per trip of `.LBB0_1`)" for the hover's summary."""
    st = wait_stall(analysis, w)
    if st is None:
        return None
    where = f" (per trip of {names.block(w.function, st.loop)})" if st.loop else ""
    return f"~{st.per_trip} cycles stall{where}"


def stall_record(analysis: Any, w: PlannedWait, names: Any) -> dict[str, Any] | None:
    """The plan view's stall of a wait: cycles on the hot path (per trip inside a loop)."""
    st = wait_stall(analysis, w)
    if st is None:
        return None
    return {"cycles": st.per_trip, "total": st.total,
            "loop": names.block(w.function, st.loop) if st.loop else None}


def kernel_stall(analysis: Any) -> dict[str, Any] | None:
    """The status item's figure: the predicted stall of the whole file's hot path."""
    fn = getattr(analysis, "stall", None)
    if fn is None:
        return None
    try:
        runs = fn()
    except Exception:
        return None
    if not runs:
        return None
    return {"cycles": sum(r.total for r in runs.values()), "walk": sum(r.cycles for r in runs.values()),
            "functions": {name: r.total for name, r in runs.items()}}
