"""The wait state's transfer: what an instruction does to the in-flight FIFOs.

Like SIInsertWaitcnts' WaitcntBrackets beside the pass: pushing a producer, a wait trimming
its counter's timelines, a hand-written wait credited, the xcnt timelines kept in step with
the result counters, the redundancy elision and counter folding of one requirement.  The
solver (dataflow.py) decides where; this module only moves the state.
"""

from __future__ import annotations

from ..ir import Instruction
from ..targets.model import CK_TENSOR, CK_XS, CK_XV, CTL_CALL
from .facts import InstInfo
from .state import (CounterEmitState, DataflowState, PerPredQueue, QOp, append_to_all_paths, new_spec,
                    shared_empty, trim_queues)

XCNT_TIMELINES = frozenset({CK_XV, CK_XS})


class Brackets:
    """The transfer of the per-timeline FIFOs (see the module doc)."""

    def drain(self, c: int, n: int) -> int:
        """The immediate that retires an op with countFrom n on timeline c (-1: nothing)."""
        if n <= 0:
            return -1
        if not self.in_order[c]:
            return 0
        w = n - 1
        m = self.max_wait[c]
        return w if w < m else m

    @staticmethod
    def trips_of(q: PerPredQueue, op: Instruction) -> int:
        for e in q.ops:
            if e.op is op:
                return e.trips
        return 0

    def still_in_flight(self, op: Instruction, queues: list) -> bool:
        """`op` is still in flight on one of its result timelines on some path (an op with no
        result timeline, e.g. a prefetch, is retired only where it is held: True)."""
        results = self.info[op].results
        if not results:
            return True
        for c in results:
            for q in queues[c]:
                if op in q.insts or op in q.sat:
                    return True
        return False

    def trim(self, state: DataflowState, c: int, keep: int) -> None:
        """Model ``<counter of c> <= keep`` on timeline c (out of order: only 0 retires)."""
        if keep > 0 and not self.in_order[c]:
            return
        qs = state.queues[c]
        if qs:
            state.queues[c] = trim_queues(qs, keep, self.empties)

    def credited(self, inst: Instruction) -> list[tuple[int, int]]:
        """[(timeline, value)] a pre-existing wait enforces (every timeline of each counter)."""
        return credited_waits(self.target, inst)

    def _credit(self, inst: Instruction, state: DataflowState, emit: list[CounterEmitState]) -> None:
        credited = False
        for c, w in self.credited(inst):
            if w < 0 or (not self.in_order[c] and w != 0):
                continue
            self.trim(state, c, w)
            emit[c].record_emitted(w)
            credited = True
        if credited and self.implicit_drain:
            self.sync_translations(state)

    def sync_translations(self, state: DataflowState) -> None:
        """An op retired on its result counter has been translated: drop it from the xcnt
        timelines (on the in-order VMEM one, every older entry with it; AMDGPUUsage GFX125x:
        waiting on a memory counter also waits on xcnt)."""
        queues = state.queues
        for c in (CK_XV, CK_XS):
            qs = queues[c]
            if not qs or not any(q.ops for q in qs):
                continue
            out = []
            changed = False
            for q in qs:
                ops = q.ops
                keep = ops
                if c == CK_XV:
                    for idx in range(len(ops) - 1, -1, -1):
                        if not self.still_in_flight(ops[idx].op, queues):
                            keep = ops[idx + 1:]
                            break
                else:
                    keep = tuple(e for e in ops if self.still_in_flight(e.op, queues))
                if keep is not ops and len(keep) != len(ops):
                    changed = True
                    nq = PerPredQueue(q.pred, keep, q.sat, q.ring_sat, q.empty_origin,
                                      tuple(e.op for e in keep), q.route)
                    out.append(nq if keep else shared_empty(self.empties, nq))
                else:
                    out.append(q)
            if changed:
                queues[c] = out

    def _produce(self, inst: Instruction, inf: InstInfo, state: DataflowState,
                 emit: list[CounterEmitState], events: list | None) -> None:
        if inf.control == CTL_CALL:
            for c in self.call_clears:
                self.trim(state, c, 0)
        pushes = inf.pushes
        if not pushes:
            return
        qop = QOp(inst, 0, (0,) * len(inf.ring))
        for c in pushes:
            other = self.implicit_drain.get(c)
            if other is not None and state.queues[other]:
                self.trim(state, other, 0)
            state.queues[c], sat = append_to_all_paths(state.queues[c], qop)
            if sat is not None:
                if events is not None:
                    events.append((c, inst, sat))
                if self.by_producer and c in self.producer_cks:
                    # past the 64-op window a witness may stop being the minimum: the
                    # per-producer join gives up at once (producer_join.py, `solve`)
                    self.join_overflowed = self.exploded = True
            emit[c].since += 1

    def _apply(self, req: list[int], emit: list[CounterEmitState], state: DataflowState) -> list[int] | None:
        """Redundancy elision and counter folding of one requirement: the spec to emit (every
        timeline of a waited counter carries the counter's value) or None; trims the queues."""
        spec = None
        siblings = self.siblings
        for c in self.cks:
            r = req[c]
            if r == -1 or not emit[c].needs_new_wait(r):
                continue
            if spec is None:
                spec = new_spec()
            sib = siblings[c]
            if len(sib) > 1:
                v = r if spec[c] == -1 else min(r, spec[c])
                for s in sib:
                    if req[s] != -1 and emit[s].needs_new_wait(req[s]) and req[s] < v:
                        v = req[s]
                for s in sib:
                    spec[s] = v
            else:
                spec[c] = r
        if spec is None:
            return None
        xcnt = self.implicit_drain and (spec[CK_XV] != -1 or spec[CK_XS] != -1)
        for c in self.cks:
            v = spec[c]
            if v != -1 and not (xcnt and c in XCNT_TIMELINES):
                emit[c].record_emitted(v)
                self.trim(state, c, v)
        if self.implicit_drain:
            self.sync_translations(state)
        if xcnt:
            if not any(q.ops or q.sat for c in XCNT_TIMELINES for q in state.queues[c]):
                spec[CK_XV] = spec[CK_XS] = -1  # the other waits of this point retired them all
                if all(v == -1 for v in spec):
                    return None
            else:
                for c in XCNT_TIMELINES:
                    v = spec[c]
                    if v != -1:
                        emit[c].record_emitted(v)
                        self.trim(state, c, v)
        return spec

    def _restore_tensor(self, state: DataflowState, frozen: DataflowState | None, keep_live: bool) -> None:
        if keep_live or frozen is None:
            return
        state.queues[CK_TENSOR] = list(frozen.queues[CK_TENSOR])


def credited_waits(target, inst: Instruction) -> list[tuple[int, int]]:
    """What a pre-existing wait drains: [(timeline, value)] for every timeline of every
    counter it names (upstream-algorithm.md s.9 under the upstream model)."""
    values = target.decode_wait(inst)
    if not values:
        return []
    out = []
    for c in target.timelines:
        v = values.get(target.counter_of[c])
        if v is not None:
            out.append((c, v))
    return out
