"""Waits that retire nothing on any path, shown from their own block (the checker's reading).

The review offers to delete (relax, drop a counter of) a hand-written wait that the hardware
checker never sees retire anything: with such a wait changed, every state the checker's search
meets stays as it was, so the edited file has the violations of the file as written
(`review_proof._idle_waits`).  Found from a run's `retiring` set, that needs a whole search of
the function, one that finished, again on every version of the document.  Many such waits are
idle for a reason that lies in their own block: an earlier wait on the same counter in the
same block leaves at most `v0` ops on each of its timelines, the instructions between push `n`
more onto a timeline, and a wait of `v >= v0 + n` then finds nothing to retire, whatever path
led into the block.  That argument reads a few lines above the wait, so a version whose edit
is elsewhere proves the same wait idle again for the cost of that walk, and an edit between the
two waits is seen at once.

Why it holds in the checker's model (`hwstate.Machine`): a timeline grows only when `issue`
appends an instruction's pushes, and at the function's entry, before its first instruction,
by the caller's pseudo-op (`enter_callee`); every other step (waits, the other kind's
translations, call returns, the rules' retirement of the caller's op) only retires.  A wait
of `v` on an in-order timeline keeps the newest `v` ops (`Machine.wait`) and so retires
nothing while at most `v` are there; on an out-of-order timeline only a wait of 0 retires
(all of them).  A block is entered at its start and runs in order, so every visit of the wait
comes through the earlier wait and the instructions between (a path that ends between them
never reaches it).  This module reads only the checker's own facts (`hwfacts.own_facts`) of
the checker's own parse; it shares nothing with the pass.
"""

from __future__ import annotations

from ..ir import Instruction
from ..targets.target import Target
from .hwfacts import Facts, own_facts, timelines_of


class BlockIdle:
    """`idle(body, k)`: the wait `body[k]` retires nothing on any visit, by the earlier waits
    of its block (see the module docstring).  One per target and parse; it keeps the facts it
    computed (each instruction's own, from `own_facts`)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.active, self.by_counter = timelines_of(target)
        self.in_order = {ck: target.in_order.get(ck, True) for ck in self.active}
        self._facts: dict[int, Facts] = {}

    def facts(self, inst: Instruction) -> Facts:
        got = self._facts.get(id(inst))
        if got is None or got.inst is not inst:
            got = own_facts(inst, self.target, self.active, self.by_counter)
            self._facts[id(inst)] = got
        return got

    def idle(self, body: list[Instruction], k: int) -> bool:
        """`body`: a block's instructions in order (labels and phis may be among them)."""
        w = self.facts(body[k])
        if not w.wait:
            return False
        return all(self._counter_idle(body, k, cn, v, cks) for cn, v, cks in w.wait)

    def _counter_idle(self, body: list[Instruction], k: int, cn: str, v: int, cks: tuple[int, ...]) -> bool:
        """No timeline of counter `cn` holds more than the wait's `v` (in order) at `body[k]`,
        and an out-of-order one is empty where `v` is 0."""
        pending = [c for c in cks if self.in_order[c] or v == 0]
        if not pending:
            return True  # out of order, v > 0: `Machine.wait` retires nothing there
        pushed = dict.fromkeys(pending, 0)
        for j in range(k - 1, -1, -1):
            f = self.facts(body[j])
            if f.skip:
                continue
            if f.wait:
                before = next((v0 for cn0, v0, _ in f.wait if cn0 == cn), None)
                if before is None:
                    continue  # another counter's wait: leaves these timelines as they are
                return all(before + pushed[c] <= v if self.in_order[c] else before == 0 and not pushed[c]
                           for c in pending)
            for c in f.pushes:
                if c in pushed:
                    pushed[c] += 1
        return False  # the block's entry state decides: not shown here
