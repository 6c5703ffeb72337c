"""The per-producer join: a join of per-predecessor FIFOs that does not explode (issue 19 item 6).

Every wait the hardware model asks of an in-order timeline is fixed by the fewest younger ops
issued after a producer over all paths: each rule takes, per queue, the position of the
newest instance of some producer (countFrom, the newest WAW writer or WAR locker, the newest
conflicting LDS access), 64 for one pushed out of the window, and then the minimum over the
queues.  An out-of-order timeline only asks whether a producer is possibly in flight.  So of
the queues that meet at a join, only those that hold some producer's minimum distance (its
*witness*) are needed; the others can never decide a wait.  Keeping the witnesses and
dropping the rest is an exact join for those questions, and it stays exact through every
later transfer, because each transfer acts on each path alone and the same way:

* a push makes every producer one op deeper on every path (the witness stays the minimum;
  an op pushed out of the 64-entry window is pushed out of every path where it is that deep);
* a wait `keep` retires a producer on a path where it is at least `keep + 1` deep: if it
  retires on its witness, it retires on every path, otherwise its minimum is unchanged;
* a credited (hand-written) wait is the same trim; a call drains.

The number of queues kept is at most the number of producers in flight, not the number of
paths: a chain of k diamonds that each may issue an atomic meets 2^k paths, and keeps k + 1.

One more thing breaks the argument: an op pushed out of the 64-entry window makes countFrom
of a producer with an older instance out there 64 on that path, while a newer instance of it
is still shallow, so a witness can stop being the minimum.  The solver therefore gives the
join up (and widens) if a solve joined by producer overflows the window on such a timeline
(`WaitDataflow.solve`); within the window, the newest instance decides every rule.

It is not exact for what reads a path as a whole, so those timelines keep every queue: the
gfx1250 VMEM translation timeline (an op retired on its result counter takes every older
translation *of its path* with it) and the tensor timeline (the tokens a tensor wait drains,
the tensor freeze).  Functions with loop-trip or LDS-ring bookkeeping (the `trips`/`deltas`
of a queued op differ per instance) are not joined this way at all.  What it does change is
the wording only: the FIFO view and the provenance of a wait name the witness paths, not
every path (docs/decisions.md "per-producer join").
"""

from __future__ import annotations

from ..targets.model import CK_TENSOR, CK_XV
from .state import K_MAX_IN_FLIGHT, PerPredQueue

#: sweeps the solve joined by producer is given before widening takes over: a join that
#: converges does so in a few sweeps on every kernel measured (loops that only converge by
#: saturating the window overflow it and give the join up anyway), while the witnesses of
#: some random loop nests keep changing representation with the same distances; this bounds
#: what such a function pays before it is widened (benchmarks/bench_bounded.py)
MAX_JOIN_SWEEPS = 32
#: timelines whose queues are never joined by producer (see the module doc)
WHOLE_PATH_TIMELINES = frozenset({CK_XV, CK_TENSOR})


def witness_queues(queues: list[PerPredQueue]) -> list[PerPredQueue]:
    """The queues of `queues` that hold some producer at its minimum distance, in order.

    Two distances per producer, because the rules read a producer that is both in the window
    and pushed out of it (an older instance) two ways: countFrom says 64 (`sat` first), the
    newest-writer and LDS scans take the window's position.  Ties keep the first queue, so
    the result is a function of the list (the solve compares states by value).
    """
    if len(queues) < 2:
        return queues
    best_cf: dict = {}  # producer -> (countFrom, queue index)
    best_nw: dict = {}  # producer -> (newest position, 64 if only pushed out; queue index)
    for i, q in enumerate(queues):
        insts = q.insts
        sat = q.sat
        n = len(insts)
        seen = set()
        for j in range(n - 1, -1, -1):
            op = insts[j]
            if op in seen:
                continue
            seen.add(op)
            d = n - j
            b = best_nw.get(op)
            if b is None or d < b[0]:
                best_nw[op] = (d, i)
            cf = K_MAX_IN_FLIGHT if op in sat else d
            b = best_cf.get(op)
            if b is None or cf < b[0]:
                best_cf[op] = (cf, i)
        for op in sat:
            if op not in seen:
                if op not in best_cf:
                    best_cf[op] = (K_MAX_IN_FLIGHT, i)
                if op not in best_nw:
                    best_nw[op] = (K_MAX_IN_FLIGHT, i)
    keep = {i for _, i in best_cf.values()}
    keep.update(i for _, i in best_nw.values())
    if not keep:  # nothing in flight on any path: one (empty) queue says so
        return queues[:1]
    if len(keep) == len(queues):
        return queues
    return [q for i, q in enumerate(queues) if i in keep]


def join_by_producer(queues: list, timelines: tuple) -> None:
    """Keep only the witness queues of each of `timelines` in a state's per-timeline lists."""
    for c in timelines:
        qs = queues[c]
        if len(qs) > 1:
            queues[c] = witness_queues(qs)
