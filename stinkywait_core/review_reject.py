"""Relaxations the review need not re-plan: the plan's own facts already show they fail.

The review offers "`s_wait_dscnt 0xa` is stricter than needed: `s_wait_dscnt 0x12`
suffices" only after the function re-planned with that change needs no wait the file as
written does not need (review.py `_plan_verified`), then the hardware checker proves it
(review_proof.py).  A re-plan costs a whole incremental analysis, twice (the trial, then back
to the original).  On hand-tuned kernels most relaxations fail it: the stricter wait also
covers consumers further down the block, where the wait-stripped plan (which the relaxed
value comes from) placed waits of its own that the source does not have.  On the 3.2k-line
gfx1250 GEMM 12 of its 16 candidates fail that way.

`RelaxRejection.fails` tells, from facts the review already holds, that the re-plan *would*
find a new wait, so the re-plan is skipped.  Rejecting can only hide a hint, never offer an
unsafe one; the argument below is why it hides none the re-plan would accept.

The relaxed wait W (count v -> need on one in-order counter with a single timeline, not an
xcnt one) is followed through the rest of its block, from the FIFO snapshot right before W
in the analysis of the file as written: W's relaxed credit, the hand-written waits after it,
the waits the plan of the file as written places there, and the ops the block issues (a call
clears the counters in the pass, so the stripped plan names no producer from before it).
Suppose the re-plan needed nothing new.  Then its waits are the original plan's, no
stricter, so at every point it retires no more than the original does, and W retires less:
the ops this walk keeps in flight are in flight in the re-plan too (an under-approximation;
every wait it applies retires at least as much as the re-plan's).  If at some instruction P
the walk holds an op o that the wait-stripped plan names as a producer of its wait before P
on this counter, for a register hazard (RAW, WAR, WAW: a fact of the two instructions and
the registers between them, which the change does not touch), the re-plan must wait for o
before P; if the plan of the file as written has no wait on that counter before P, that
wait is new: a contradiction, so the re-plan fails.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from .api import Analysis
    from .ir import Instruction

from .waitcnt.state import QOp, append_to_all_paths, trim_queues

#: the rules whose need is a fact of the producer, the consumer and the registers between
#: them (never of what else is in flight, of a budget or of a promotion choice)
_REGISTER_RULES = frozenset(("RAW", "WAR", "WAW"))


class RelaxRejection:
    """The facts one review's rejections read: per (function, anchor line, counter), the
    producers (line, column) the wait-stripped plan waits for there by a register rule, and
    the (function, line, counter) points where the plan of the file as written waits."""

    def __init__(self, an: Analysis, stripped: Analysis):
        self.an = an
        self.producers: dict[tuple[str, int, str], set[tuple[int, int]]] = {}
        for w in stripped.waits():
            if w.placement == "before" and w.rule in _REGISTER_RULES:
                self.producers.setdefault((w.function, w.line, w.counter), set()).update(
                    (d.line, d.column) for d in w.deps if d.line)
        self.planned: dict[tuple[str, int, str], int] = {}
        for w in an.waits():
            if w.placement == "before":
                key = (w.function, w.line, w.counter)
                self.planned[key] = min(self.planned.get(key, w.count), w.count)

    def fails(self, po, wait: Instruction, counter: str, need: int) -> bool:
        """The function re-planned with `wait`'s `counter` (e.g. "dscnt") relaxed to `need`
        surely needs a wait the file as written does not need (see the module docstring)."""
        df = po.df
        target = df.target
        tls = [c for c in target.timelines if target.counter_of[c] == counter]
        if len(tls) != 1 or not target.in_order[tls[0]] or tls[0] in df.implicit_drain:
            return False
        (c,) = tls
        block = wait.block
        snap = df.snapshot_at(wait)
        if block is None or snap is None:
            return False
        short = counter[:-3] if counter.endswith("cnt") else counter
        name = po.func.name
        queues = trim_queues(list(snap[c]), need)
        info = df.info
        after = False
        for inst in block.instrs:
            if not after:
                after = inst is wait
                continue
            if inst.is_phi or inst.is_label:
                continue
            inf = info.get(inst)
            if inf is None:
                return False
            if inst.span is not None:
                key = (name, inst.span.line, short)
                planned = self.planned.get(key)
                if planned is not None:
                    queues = trim_queues(queues, planned)
                else:
                    wanted = self.producers.get(key)
                    if wanted and _holds(queues, wanted):
                        return True
            if inf.is_wait:
                for tc, v in df.credited(inst):
                    if tc == c and v >= 0:
                        queues = trim_queues(queues, v)
                continue
            if c in inf.pushes:
                queues, _ = append_to_all_paths(queues, QOp(inst, 0, (0,) * len(inf.ring)))
        return False


def _holds(queues: list, producers: set[tuple[int, int]]) -> bool:
    """Some queue holds one of `producers` (by line and column) in flight."""
    for q in queues:
        for op in q.insts:
            sp = op.span
            if sp is not None and (sp.line, sp.col) in producers:
                return True
    return False
