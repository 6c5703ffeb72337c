"""The satisfied-wait drop's fixed point (satisfied.py, decision 54), one counter group at a
time, from scratch or from the last version's bounds re-solving only what an edit can lower.

The system, per group: a block's entry bound is unknown at the function's first block, at a
block with no predecessor and at a block with a predecessor no path from those reaches (an
edge the CFG may lack leads in); otherwise it is the largest exit bound of its predecessors;
its exit is its transfer (satisfied_blocks.apply) of its entry.  Its least solution is what the
drop reads.  Counter groups do not interact, so each is a scalar problem, and a group no
planned wait asks about is not solved at all.

Warm start (the last version's solution `old`, the same CFG, some blocks' transfers changed):
starting the ascending iteration from a point below the new least solution ends at the new
least solution.  Raised transfers only raise it, so the old bounds are below it except where
an edit can lower them.  Those points, R, are found forward from the changed blocks:
  * a changed block's exit is in R unless its new transfer is at least the old one for every
    entry (add and top both not smaller) or its new transfer of the lowest entry it can have
    (0; unknown for an entry that is unknown whatever) is already at least its old exit;
  * a successor's entry is in R when an exit in R *supported* it (was its largest input:
    old exit >= old entry); a smaller input falling changes no maximum;
  * an exit whose entry is in R is in R unless its transfer of 0 is already its old exit.
A bound outside R keeps a derivation of its old value without R: follow each entry to the
predecessor that first gave it its value and each exit to its entry; such a chain ends at a
constant (an unknown entry, an exit its entry cannot lower) or runs round a cycle, and a cycle
of supports whose pushes add nothing carries no value of its own (each entry on it got its
value first from outside it, from a support that is not in R either), while one that adds
pushes climbs from any count to its top.  R's bounds restart from "not reached yet" and are
solved again with everything else as it was; on bench_lsp's 30k-line kernel an edit's R is
empty or a few blocks, against 3,750 for a solve from scratch.
"""

from __future__ import annotations

from collections import deque

from .satisfied_blocks import UNKNOWN, apply

#: not reached yet (below every bound)
BOT = -1


class Topology:
    """The CFG as the solve walks it: blocks by index, each block's predecessors (None: its
    entry is unknown whatever) and successors (in the function) as indices."""

    __slots__ = ("cfg", "blocks", "index", "preds", "succs")

    def __init__(self, cfg, blocks: list) -> None:
        self.cfg, self.blocks = cfg, blocks
        index = self.index = {b: i for i, b in enumerate(blocks)}
        first = blocks[0] if blocks else None
        reached: set = set()
        stack = [b for b in blocks if b is first or not b.preds]
        while stack:
            b = stack.pop()
            if b in reached:
                continue
            reached.add(b)
            stack.extend(s for s in b.succs if s in index)
        preds: list = []
        for b in blocks:
            if b is first or not b.preds or any(p not in reached for p in b.preds):
                preds.append(None)
            else:
                preds.append(tuple(index[p] for p in b.preds))
        self.preds = preds
        self.succs = [tuple(index[s] for s in b.succs if s in index) for b in blocks]

    def same(self, cfg, blocks: list) -> bool:
        """Whether this is the topology of `cfg` over `blocks` (an adopted function keeps its
        CFG object, its block objects and their order)."""
        if cfg is not self.cfg or len(blocks) != len(self.blocks):
            return False
        return all(a is b for a, b in zip(blocks, self.blocks))


def solve_cold(topo: Topology, trans: list, cap: int) -> tuple[list, list]:
    """(entry, exit) bounds of every block for one group; `trans[i]` = block i's (add, top)."""
    n = len(trans)
    entry, exit_ = [BOT] * n, [BOT] * n
    _ascend(topo, trans, cap, entry, exit_, range(n))
    return entry, exit_


def solve_warm(topo: Topology, old_trans: list, trans: list, changed: list, cap: int,
               old_entry: list, old_exit: list) -> tuple[list, list, list]:
    """(entry, exit, blocks whose entry bound moved) for one group, from the last version's
    solution over the same topology; `changed`: the blocks whose transfer differs."""
    preds, succs = topo.preds, topo.succs
    entry, exit_ = list(old_entry), list(old_exit)
    in_entry: set = set()
    in_exit: set = set()
    stack = []
    for i in changed:
        a0, t0 = old_trans[i]
        a1, t1 = trans[i]
        if a1 >= a0 and t1 >= t0:
            continue  # (raised for every entry)
        low = UNKNOWN if preds[i] is None else 0
        if apply(low, a1, t1, cap) < old_exit[i]:
            in_exit.add(i)
            stack.append(i)
    while stack:
        i = stack.pop()
        x = old_exit[i]
        for s in succs[i]:
            if preds[s] is None or s in in_entry or x < old_entry[s]:
                continue
            in_entry.add(s)
            if s not in in_exit:
                a, t = trans[s]
                if apply(0, a, t, cap) < old_exit[s]:
                    in_exit.add(s)
                    stack.append(s)
    for i in in_entry:
        entry[i] = BOT
    for i in in_exit:
        exit_[i] = BOT
    seed = sorted(set(changed) | in_entry | in_exit)
    visited = _ascend(topo, trans, cap, entry, exit_, seed)
    moved = [i for i in visited if entry[i] != old_entry[i]]
    return entry, exit_, moved


def _ascend(topo: Topology, trans: list, cap: int, entry: list, exit_: list, seed) -> set:
    """Raise `entry`/`exit_` (in place) to the least solution above them, visiting `seed`
    first and then whatever a raised exit reaches; returns the blocks visited."""
    preds, succs = topo.preds, topo.succs
    work = deque(seed)
    queued = set(work)
    visited = set(queued)
    while work:
        i = work.popleft()
        queued.discard(i)
        ps = preds[i]
        if ps is None:
            e = UNKNOWN
        else:
            e = entry[i]
            for p in ps:
                x = exit_[p]
                if x > e:
                    e = x
            if e < 0:
                continue  # (no predecessor reached yet)
        entry[i] = e
        add, top = trans[i]
        y = apply(e, add, top, cap)
        if y > exit_[i]:
            exit_[i] = y
            for s in succs[i]:
                if s not in queued and preds[s] is not None:
                    work.append(s)
                    queued.add(s)
                    visited.add(s)
    return visited
