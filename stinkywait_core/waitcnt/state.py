"""The dataflow's state types: PerPredQueue, DataflowState, CounterEmitState, plans.

Queues are immutable tuples so that copying a state at a join is free and de-duplicating
identical (pred, ops, saturated) queues is a hash lookup.  A queued element is a `QOp`:
the instruction plus the loop-carried bookkeeping of the upstream branches (trips back,
LDS-ring frame deltas); both stay at their neutral values for kernels that do not use those
annotations.
"""

from __future__ import annotations

from collections import namedtuple

from ..targets.model import CK_COUNT, K_UNUSED
from ..ir import Block, Instruction
from ..ir.records import Record

K_MAX_TRIPS_BACK = 16
EMPTY: frozenset = frozenset()
#: a queue keeps the 64 newest ops; older ones are "saturated" (still in flight, depth unknown)
K_MAX_IN_FLIGHT = 64

# (collections.namedtuple rather than typing.NamedTuple, and plain slotted classes rather than
# dataclasses: both keep `typing`/`dataclasses` off a cold `stinkywait plan`'s import path)


class QOp(namedtuple("QOp", "op trips deltas", defaults=(0, ()))):
    """One in-flight memop: instruction `op`, loop `trips` since issue, ring frame `deltas`."""

    __slots__ = ()


class PerPredQueue(namedtuple("PerPredQueue", "pred ops sat ring_sat empty_origin insts route",
                              defaults=(EMPTY, False, False, (), None))):
    """One in-flight FIFO of one counter, tagged with the CFG predecessor it arrived through.

    `pred` None is the synthetic queue of a block with no seeded predecessor queue.  `ops`:
    the QOps in flight, oldest first.  `sat` holds ops pushed out of the 64-entry window:
    still in flight, depth unknown (64).  `ring_sat` marks that an op carrying LDS-ring data
    was pushed out (branch B2).  `empty_origin`: the path arrived with nothing in flight (kept
    only when empty paths are represented).  `insts` is `ops[i].op` for every i: it lets
    countFrom use C-level `tuple.index` (identity compare).  `route`: inside a stage-count
    dispatch, the loop exit edge the path came through (analysis/exit_dispatch.py: the
    merge after the dispatch drops a queue whose exit cannot lead there; None elsewhere).
    """

    __slots__ = ()



def count_from(q: PerPredQueue, op: Instruction, newest: bool = False) -> int:
    """Ops from `op` (inclusive) to the tail; 64 if saturated; 0 if absent.

    Upstream matches the *oldest* dynamic instance (`newest=False`); the bounded mode's
    default matches the newest instance, which is the one a consumer actually reads.
    """
    if op in q.sat:
        return K_MAX_IN_FLIGHT
    insts = q.insts
    try:
        if newest:
            return insts[::-1].index(op) + 1
        return len(insts) - insts.index(op)
    except ValueError:
        return 0


def trim_queues(queues: list[PerPredQueue], keep: int, empties: dict | None = None) -> list[PerPredQueue]:
    """Model `s_wait_<c> keep` on every per-pred queue of one counter.

    A queue the wait leaves as it was is kept (the same object), and `queues` itself is
    returned when no queue changed: the states a solve keeps per block then share them
    instead of holding equal copies.  `empties`, when given, is the solve's pool of drained
    queues (`shared_empty`): a queue the wait drains becomes the pool's object of that value."""
    out = None
    for i, q in enumerate(queues):
        n = len(q.ops)
        if keep <= 0:
            if not n and not q.sat and not q.ring_sat:
                if out is not None:
                    out.append(q)
                continue
            nq = PerPredQueue(q.pred, (), EMPTY, False, q.empty_origin, (), q.route)
            if empties is not None:
                nq = shared_empty(empties, nq)
        elif n > keep:
            nq = PerPredQueue(q.pred, q.ops[n - keep:], EMPTY, False, q.empty_origin, q.insts[n - keep:], q.route)
        elif not q.sat and not q.ring_sat:
            if out is not None:
                out.append(q)
            continue
        else:
            nq = PerPredQueue(q.pred, q.ops, EMPTY, False, q.empty_origin, q.insts, q.route)
        if out is None:
            out = queues[:i]
        out.append(nq)
    return queues if out is None else out


def shared_empty(empties: dict, q: PerPredQueue) -> PerPredQueue:
    """`q`, or the pool's equal queue when nothing is in flight on it (see `trim_queues`):
    a join tags every predecessor's queues with that predecessor, so without the pool each
    block's entry, exit and memo records would hold their own copy of the same empty queue."""
    if q.ops or q.sat or q.ring_sat:
        return q
    return empties.setdefault(q, q)


def share_equal_lists(queues: list[list[PerPredQueue]]) -> None:
    """Make the per-counter lists of one state that hold the same queue objects one list.

    A join tags every predecessor's queues with that predecessor, so the timelines with
    nothing in flight all get the same pooled queues (`shared_empty`): one list for all of
    them instead of one per timeline, and one empty list for the timelines the target does not
    have.  Safe because a per-counter list is never changed in place once its state is built
    (a walk replaces it: trim, push, credit, freeze; only the join builds one, on a state of its
    own, before this)."""
    same: dict[tuple, list[PerPredQueue]] = {}
    for c, qs in enumerate(queues):
        queues[c] = same.setdefault(tuple(map(id, qs)), qs)


def append_to_all_paths(queues: list[PerPredQueue], qop: QOp,
                        ring: bool = False) -> tuple[list[PerPredQueue], Instruction | None]:
    """The new op is in flight on every path; returns (queues, an op pushed out of the
    64-entry window or None)."""
    if not queues:
        queues = [PerPredQueue(None, ())]
    out = []
    saturated: Instruction | None = None
    op = qop.op
    for q in queues:
        ops = q.ops + (qop,)
        insts = q.insts + (op,)
        sat = q.sat
        ring_sat = q.ring_sat
        if len(ops) > K_MAX_IN_FLIGHT:
            drop = len(ops) - K_MAX_IN_FLIGHT
            sat = sat | {e.op for e in ops[:drop]}
            ring_sat = ring_sat or any(bool(e.deltas) for e in ops[:drop])
            saturated = saturated or ops[0].op
            ops, insts = ops[drop:], insts[drop:]
        out.append(PerPredQueue(q.pred, ops, sat, ring_sat, q.empty_origin, insts, q.route))
    return out, saturated


def any_in_flight(queues: list[PerPredQueue]) -> bool:
    return any(q.ops for q in queues)


class DataflowState:
    """Per-counter lists of per-pred queues (never collapsed at joins)."""

    __slots__ = ("queues",)

    def __init__(self, queues: list[list[PerPredQueue]] | None = None):
        self.queues = queues if queues is not None else [[] for _ in range(CK_COUNT)]

    def copy(self) -> "DataflowState":
        """A state that can be walked without touching this one: the per-counter lists are
        shared, because a walk replaces them (trim, append, credit, freeze) and only a join
        builds a list in place, on a state of its own."""
        return DataflowState(list(self.queues))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataflowState) and self.queues == other.queues

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DataflowState({self.queues!r})"


class CounterEmitState:
    """Redundancy elision inside one block walk."""

    __slots__ = ("last", "since")

    def __init__(self, last: int = K_UNUSED, since: int = 0):
        self.last = last
        self.since = since

    def needs_new_wait(self, required: int) -> bool:
        return self.last == K_UNUSED or self.last + self.since > required

    def record_emitted(self, v: int) -> None:
        self.last = v
        self.since = 0


def new_spec() -> list[int]:
    return [K_UNUSED] * CK_COUNT


class TailDrain(Record):
    """Waits at the end of block `pred` (before its terminator branch, or after its last
    instruction): a ShallowPredPromotion tail drain (`rule` "tail-drain"), or the drain at the
    end of a function that falls off its last block ("return": the code after it, an epilog or
    a caller, may read any register)."""

    __slots__ = ("pred", "spec", "rule")

    def __init__(self, pred: Block, spec: list[int], rule: str = "tail-drain"):
        self.pred = pred
        self.spec = spec
        self.rule = rule


class WaitInsertionPlan(Record):
    """anchorWaits: instruction -> per-counter wait (-1 unused); tailDrains in emit order;
    `tensor_tokens`: the tensor tokens drained by each anchor's tensor wait (finalize)."""

    __slots__ = ("anchor_waits", "tail_drains", "tensor_tokens")

    def __init__(self, anchor_waits: dict[Instruction, list[int]] | None = None,
                 tail_drains: list[TailDrain] | None = None,
                 tensor_tokens: dict[Instruction, list[int]] | None = None):
        self.anchor_waits = anchor_waits if anchor_waits is not None else {}
        self.tail_drains = tail_drains if tail_drains is not None else []
        self.tensor_tokens = tensor_tokens if tensor_tokens is not None else {}
