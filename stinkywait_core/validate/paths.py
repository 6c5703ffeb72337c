"""What the two path checkers (exhaustive.py, upstream's spec; hwcheck.py, the hardware)
share about walking a function's CFG: successor lists, back edges, the loop-budget memo and
how a result says whether it is a proof.

Loops are bounded per entry: a block that is the target of a retreating edge (found by a DFS
from the entry) may be entered through such edges at most `max_trips` times between two
entries from outside.  A state already explored at a block, with at least as much loop budget
left, has the same future: `TripMemo.seen` closes such paths, so a loop whose header state
repeats is covered without unrolling it.
"""

from __future__ import annotations

from ..ir import Block


def block_successors(blocks: list[Block]) -> list[list[int]]:
    """Successor indices per block (from `succ_labels`, unknown labels and repeats dropped)."""
    by_label = {b.label: i for i, b in enumerate(blocks)}
    out: list[list[int]] = []
    for b in blocks:
        seen: list[int] = []
        for lab in b.succ_labels:
            j = by_label.get(lab)
            if j is not None and j not in seen:
                seen.append(j)
        out.append(seen)
    return out


def retreating_edges(succs: list[list[int]]) -> set[tuple[int, int]]:
    """Edges into a block on the DFS stack from block 0 (every CFG cycle contains one)."""
    out: set[tuple[int, int]] = set()
    if not succs:
        return out
    color = [0] * len(succs)
    stack = [(0, 0)]
    color[0] = 1
    while stack:
        u, k = stack[-1]
        if k < len(succs[u]):
            stack[-1] = (u, k + 1)
            v = succs[u][k]
            if color[v] == 1:
                out.add((u, v))
            elif color[v] == 0:
                color[v] = 1
                stack.append((v, 0))
        else:
            color[u] = 2
            stack.pop()
    return out


class TripMemo:
    """Block-entry states already explored, with the loop trips used when they were."""

    __slots__ = ("enabled", "memo")

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.memo: dict[object, list[dict[int, int]]] = {}

    def seen(self, key: object, trips: dict[int, int]) -> bool:
        """True when `key` was explored with no more trips used at any header (so with at
        least this much budget left); otherwise records it and returns False."""
        if not self.enabled:
            return False
        prev = self.memo.setdefault(key, [])
        for p in prev:
            if all(p.get(h, 0) <= trips.get(h, 0) for h in p.keys() | trips.keys()):
                return True
        prev.append(dict(trips))
        return False


def enter(trips: dict[int, int], src: int, dst: int, headers: set[int], retreating: set[tuple[int, int]]) -> None:
    """Count the entry of `dst` from `src` in `trips` (a back edge adds a trip, an entry from
    outside the loop starts over)."""
    if dst in headers:
        trips[dst] = trips.get(dst, 0) + 1 if (src, dst) in retreating else 1


class Coverage:
    """Mixin of a checker's result: how far the search went, and what that proves."""

    __slots__ = ()
    violations: list
    paths: int
    steps: int
    bounded: bool
    trip_cut: bool
    max_trips: int
    max_paths: int

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def complete(self) -> bool:
        """No path was cut: a clean result is a proof for every execution."""
        return not self.bounded and not self.trip_cut

    @property
    def notice(self) -> str | None:
        """Why the result is not a proof for every execution, if it is not."""
        if self.bounded:
            return (f"bounded: stopped after {self.paths} paths / {self.steps} steps "
                    f"(max_paths={self.max_paths}); violations on unexplored paths may be missing")
        if self.trip_cut:
            return (f"loops checked up to {self.max_trips} trips per entry (the loop state did not "
                    f"repeat earlier); raise the trip bound (max_trips, --max-trips) to check deeper iterations")
        return None
