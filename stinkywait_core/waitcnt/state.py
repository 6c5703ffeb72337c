"""The dataflow's state types: PerPredQueue, DataflowState, CounterEmitState, plans.

Queues are immutable tuples so that copying a state at a join is free and de-duplicating
identical (pred, ops, saturated) queues is a hash lookup.  A queued element is a `QOp`:
the instruction plus the loop-carried bookkeeping of the upstream branches (trips back,
LDS-ring frame deltas); both stay at their neutral values for kernels that do not use those
annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..analysis.classify import CK_COUNT, CK_KM, K_MAX_IN_FLIGHT, K_MAX_WAIT_COUNT, K_UNUSED
from ..ir import Block, Instruction

K_MAX_TRIPS_BACK = 16
EMPTY: frozenset = frozenset()


class QOp(NamedTuple):
    """One in-flight memop: instruction, loop trips since issue, ring frame deltas."""

    op: Instruction
    trips: int = 0
    deltas: tuple[int, ...] = ()


class PerPredQueue(NamedTuple):
    """One in-flight FIFO of one counter, tagged with the CFG predecessor it arrived through.

    `pred` None is the synthetic queue of a block with no seeded predecessor queue.
    `sat` holds ops pushed out of the 64-entry window: still in flight, depth unknown (64).
    `ring_sat` marks that an op carrying LDS-ring data was pushed out (branch B2).
    """

    pred: Block | None
    ops: tuple[QOp, ...]
    sat: frozenset = EMPTY
    ring_sat: bool = False
    #: the path arrived with nothing in flight (kept only when empty paths are represented)
    empty_origin: bool = False
    #: `ops[i].op` for every i: lets countFrom use C-level `tuple.index` (identity compare)
    insts: tuple = ()



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


def wait_to_drain(c: int, n: int) -> int:
    """The immediate that retires an op with countFrom n on counter c."""
    if n <= 0:
        return K_UNUSED
    if c == CK_KM:
        return 0
    return min(n - 1, K_MAX_WAIT_COUNT)


def trim_queues(queues: list[PerPredQueue], keep: int) -> list[PerPredQueue]:
    """Model `s_wait_<c> keep` on every per-pred queue of one counter."""
    out = []
    for q in queues:
        n = len(q.ops)
        if keep <= 0:
            ops: tuple[QOp, ...] = ()
            insts: tuple = ()
        elif n > keep:
            ops, insts = q.ops[n - keep:], q.insts[n - keep:]
        else:
            ops, insts = q.ops, q.insts
        out.append(PerPredQueue(q.pred, ops, EMPTY, False, q.empty_origin, insts))
    return out


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
        out.append(PerPredQueue(q.pred, ops, sat, ring_sat, q.empty_origin, insts))
    return out, saturated


def any_in_flight(queues: list[PerPredQueue]) -> bool:
    return any(q.ops for q in queues)


@dataclass(slots=True)
class DataflowState:
    """Per-counter lists of per-pred queues (never collapsed at joins)."""

    queues: list[list[PerPredQueue]] = field(default_factory=lambda: [[] for _ in range(CK_COUNT)])

    def copy(self) -> "DataflowState":
        """A state that can be walked without touching this one: the per-counter lists are
        shared, because a walk replaces them (trim, append, credit, freeze) and only a join
        builds a list in place, on a state of its own."""
        return DataflowState(list(self.queues))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataflowState) and self.queues == other.queues


@dataclass(slots=True)
class CounterEmitState:
    """Redundancy elision inside one block walk."""

    last: int = K_UNUSED
    since: int = 0

    def needs_new_wait(self, required: int) -> bool:
        return self.last == K_UNUSED or self.last + self.since > required

    def record_emitted(self, v: int) -> None:
        self.last = v
        self.since = 0


def new_spec() -> list[int]:
    return [K_UNUSED] * CK_COUNT


@dataclass(slots=True)
class TailDrain:
    pred: Block
    spec: list[int]


@dataclass(slots=True)
class WaitInsertionPlan:
    """anchorWaits: instruction -> per-counter wait (-1 unused); tailDrains in emit order."""

    anchor_waits: dict[Instruction, list[int]] = field(default_factory=dict)
    tail_drains: list[TailDrain] = field(default_factory=list)
    #: tensor tokens drained by each anchor's tensor wait (finalize)
    tensor_tokens: dict[Instruction, list[int]] = field(default_factory=dict)
