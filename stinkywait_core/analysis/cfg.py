"""CFG orders and dominance: RPO, immediate dominators, dominance frontiers.

RPO is the order of every sweep of the dataflow solver and of the def-use builder; blocks
that are unreachable from the entry are absent, as in upstream's BBIndexAnalysis.
"""

from __future__ import annotations

from ..ir import Block, Function


class CfgInfo:
    """`rpo` (reachable blocks), `rpo_index`, immediate dominators, dominance frontiers."""

    __slots__ = ("rpo", "rpo_index", "idom", "frontier")

    def __init__(self, rpo: list[Block], rpo_index: dict[Block, int], idom: dict[Block, Block | None],
                 frontier: dict[Block, set[Block]] | None = None):
        self.rpo = rpo
        self.rpo_index = rpo_index
        self.idom = idom
        self.frontier = frontier if frontier is not None else {}

    def is_back_edge(self, pred: Block, succ: Block) -> bool:
        """upstream `isBackEdge`: a predecessor that does not come before its successor in RPO."""
        return self.rpo_index.get(pred, -1) >= self.rpo_index.get(succ, -1)


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
