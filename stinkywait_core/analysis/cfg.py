"""CFG orders and dominance: RPO, immediate dominators, dominance frontiers.

RPO is the order of every sweep of the dataflow solver and of the def-use builder; blocks
that are unreachable from the entry are absent, as in upstream's BBIndexAnalysis.
"""

from __future__ import annotations

from ..ir import Block, Function


class CfgInfo:
    """`rpo` (reachable blocks), `rpo_index`, immediate dominators, dominance frontiers, and
    (on first use) which blocks reach which."""

    __slots__ = ("rpo", "rpo_index", "idom", "frontier", "_reach")

    def __init__(self, rpo: list[Block], rpo_index: dict[Block, int], idom: dict[Block, Block | None],
                 frontier: dict[Block, set[Block]] | None = None):
        self.rpo = rpo
        self.rpo_index = rpo_index
        self.idom = idom
        self.frontier = frontier if frontier is not None else {}
        self._reach: list[int] | None = None

    def is_back_edge(self, pred: Block, succ: Block) -> bool:
        """upstream `isBackEdge`: a predecessor that does not come before its successor in RPO."""
        return self.rpo_index.get(pred, -1) >= self.rpo_index.get(succ, -1)

    def reaches(self, a: Block, b: Block) -> bool:
        """Some path of one edge or more leads from block `a` to block `b` (a block reaches
        itself only through a cycle).  Blocks outside the RPO reach nothing."""
        ia, ib = self.rpo_index.get(a), self.rpo_index.get(b)
        if ia is None or ib is None:
            return False
        return bool(self.reach_sets()[ia] >> ib & 1)

    def reach_sets(self) -> list[int]:
        """Per block (RPO index), the bitset of the RPO indices it `reaches` (made once)."""
        if self._reach is None:
            self._reach = _reachability(self.rpo, self.rpo_index)
        return self._reach


def _reachability(rpo: list[Block], index: dict[Block, int]) -> list[int]:
    """Per block (RPO index), the bitset of blocks reachable by one edge or more: strongly
    connected components (Tarjan, iterative), then their condensation in reverse topological
    order, ORing successors' sets (Python ints as bitsets: linear in edges, word-parallel)."""
    n = len(rpo)
    succs = [[index[s] for s in b.succs if s in index] for b in rpo]
    comp = [-1] * n
    low = [0] * n
    num = [-1] * n
    stack: list[int] = []
    on = [False] * n
    comps: list[list[int]] = []
    counter = 0
    for root in range(n):
        if num[root] != -1:
            continue
        work = [(root, 0)]
        num[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on[root] = True
        while work:
            v, i = work[-1]
            if i < len(succs[v]):
                work[-1] = (v, i + 1)
                w = succs[v][i]
                if num[w] == -1:
                    num[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on[w] = True
                    work.append((w, 0))
                elif on[w]:
                    low[v] = min(low[v], num[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == num[v]:
                members = []
                while True:
                    w = stack.pop()
                    on[w] = False
                    comp[w] = len(comps)
                    members.append(w)
                    if w == v:
                        break
                comps.append(members)
    # Tarjan emits components in reverse topological order: successors' sets are ready
    comp_reach = [0] * len(comps)
    for ci, members in enumerate(comps):
        bits = 0
        cyclic = len(members) > 1
        for v in members:
            for w in succs[v]:
                if comp[w] == ci:
                    cyclic = True
                else:
                    bits |= comp_reach[comp[w]] | (1 << w)
        if cyclic:
            for v in members:
                bits |= 1 << v
        comp_reach[ci] = bits
    return [comp_reach[comp[v]] for v in range(n)]


def reverse_post_order(func: Function) -> list[Block]:
    if not func.blocks:
        return []
    entry = func.blocks[0]
    seen = {entry}
    post: list[Block] = []
    stack: list[tuple[Block, int]] = [(entry, 0)]
    while stack:
        b, i = stack[-1]
        if i < len(b.succs):
            stack[-1] = (b, i + 1)
            s = b.succs[i]
            if s not in seen:
                seen.add(s)
                stack.append((s, 0))
        else:
            stack.pop()
            post.append(b)
    post.reverse()
    return post


def compute_cfg(func: Function) -> CfgInfo:
    """Dominators by the Cooper-Harvey-Kennedy iteration over RPO, then frontiers."""
    rpo = reverse_post_order(func)
    index = {b: i for i, b in enumerate(rpo)}
    idom: dict[Block, Block | None] = {}
    if not rpo:
        return CfgInfo(rpo, index, idom)
    entry = rpo[0]
    doms: list[int] = [-1] * len(rpo)
    doms[0] = 0

    def intersect(a: int, b: int) -> int:
        while a != b:
            while a > b:
                a = doms[a]
            while b > a:
                b = doms[b]
        return a

    changed = True
    while changed:
        changed = False
        for i in range(1, len(rpo)):
            new = -1
            for p in rpo[i].preds:
                pi = index.get(p)
                if pi is None or doms[pi] == -1:
                    continue
                new = pi if new == -1 else intersect(pi, new)
            if new != -1 and doms[i] != new:
                doms[i] = new
                changed = True
    for i, b in enumerate(rpo):
        idom[b] = None if i == 0 else rpo[doms[i]]
    idom[entry] = None
    frontier: dict[Block, set[Block]] = {b: set() for b in rpo}
    for b in rpo:
        preds = [p for p in b.preds if p in index]
        if len(preds) < 2:
            continue
        for p in preds:
            runner: Block | None = p
            while runner is not None and runner is not idom[b]:
                frontier[runner].add(b)
                runner = idom[runner]
    return CfgInfo(rpo, index, idom, frontier)
