"""The bounded analysis: the exact attempt's work budget, and widening when it is spent.

The exact per-predecessor solve is given a deterministic budget (queue copies at the joins);
past it, or at the iteration cap, the function is solved again with widening: duplicate
instances are dropped at joins and a block where too many distinct paths meet drains the
counter at its first instruction (docs/decisions.md 22).  Both only make waits stronger.
"""

from __future__ import annotations

from ..ir import Block, Instruction
from ..ir.block_names import block_name
from ..targets.model import TIMELINE_NAMES
from .state import QOp

#: the bounded mode's exact attempt gives up (and re-solves with widening) once the joins of
#: one solve have copied this many per-predecessor queues: a deterministic work budget
#: (a few tenths of a second of Python); exact solves that need less are kept as they are
WORK_BUDGET_EXACT = 20_000
#: ... plus this many per CFG edge: a long kernel whose joins each copy a few queues per sweep
#: does that much honest work without exploding (the 30k-line editor benchmark kernel has
#: 7,500 edges and needs ~70,000 copies over its three sweeps)
WORK_PER_EDGE = 128
#: widening keeps at most this many queues per (block, counter) past a block's first instruction
MAX_QUEUES_BOUNDED = 16


class Widening:
    """Widening under the bounded analysis (see the module doc)."""

    def _dedupe_instances(self, ops: tuple[QOp, ...]) -> tuple[QOp, ...]:
        """Widening: keep only the newest dynamic instance of each (non-ring) instruction.

        Sound in newest-instance mode: the newest instance decides every RAW and anti-dep
        wait, and dropping an older copy can only lower the depth of older ops (a stronger
        wait).  Trips take the maximum so loop-carried scans still see the old instance.
        """
        if len(ops) < 2:
            return ops
        seen: dict[Instruction, int] = {}
        out: list[QOp] = []
        for e in reversed(ops):
            if e.deltas:  # ring instances alias different slots: keep them all
                out.append(e)
                continue
            j = seen.get(e.op)
            if j is None:
                seen[e.op] = len(out)
                out.append(e)
            elif e.trips > out[j].trips:
                out[j] = QOp(e.op, e.trips, e.deltas)
        if len(out) == len(ops):
            return ops
        out.reverse()
        return tuple(out)

    def _force_entry_drain(self, bb: Block, c: int, n: int) -> None:
        """Widening: too many distinct paths meet here; drain counter c at the block's first
        instruction so the state collapses (a stronger wait, never a weaker one)."""
        first = next((i for i in bb.instrs if not i.is_phi and not i.is_label
                      and not self.info[i].is_wait), None)
        if first is None:
            return
        cs = self.forced_at.setdefault(first, set())
        if c not in cs:
            cs.add(c)
            self.widened_blocks[bb] = (f"{n} paths with different {self.target.op_kind(TIMELINE_NAMES[c], order=False)} "
                                       f"ops in flight meet at {block_name(self.func, bb)}: waiting for "
                                       f"{self.target.counter_of[c]} 0 at its first instruction keeps the analysis "
                                       f"bounded")
