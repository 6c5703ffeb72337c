"""The publish rule's pairing per class of wave views (issue 22, aiter's gfx950 a8w8 cktile
GEMM; waitcnt/publish.py asks it, waitcnt/wave_match.py walks).

Why.  `WaveMatch` pairs two abstract waves: at a barrier B it knows which barriers *some* other
wave may be at, not which waves.  When the wave index decides branches, the per-wave views of
the address analysis (analysis/wave_roles.py) say which edges each wave takes.  The cktile
GEMM's two groups run one barrier apart in one loop: at group X's barrier B the waves of group Y
are at the barrier after it, and X's own waves at B.  Pairing abstract waves, a fill of X in
flight at B was compared with every access of the segments of both partner barriers run by any
wave, X's own waves' accesses at Y's partner among them (they touch the bytes X's fill writes
one barrier later), so it drained.

What.  Waves whose views take the same edges form a class.  For each ordered pair of classes
(ca, cb) the two waves are walked with wave A restricted to ca's edges and wave B to cb's; an
access `p` in flight at barrier B of a wave of ca needs no drain when, for every class cb, no
access of the segment of a barrier the (ca, cb) walk pairs with B may touch `p`'s bytes when
run by a wave of cb other than `p`'s (each wave as its own view runs it).  Sound: every real
pair of waves (i, j) is a pair of their classes, and the walk restricted to their views
over-approximates what those two waves do (an edge left out is one the wave's own values
forbid, wave_roles' argument).
"""

from __future__ import annotations

from ..ir import Function, Instruction

#: most classes walked in pairs (more: the plain pairing alone; aiter's gfx1250 f4gemm has four
#: roles, whose 12 walks cost ~10 s a plan, and its plain pairing already serves it)
_MAX_CLASSES = 2


def wave_classes(roles) -> list[tuple[frozenset, frozenset, tuple]] | None:
    """(dead edges, live blocks, wave indices) per class of views taking the same edges; None
    with no views, one class, or more than `_MAX_CLASSES`.  Asked only where the plain pairing
    of two abstract waves keeps the drain."""
    if not roles:
        return None
    groups: dict[tuple, list] = {}
    for r, _ in roles:
        groups.setdefault((r.dead, r.live), []).append(r.wave)
    if not 2 <= len(groups) <= _MAX_CLASSES:
        return None
    return [(dead, live, tuple(ws)) for (dead, live), ws in groups.items()]


class ClassPairing:
    """The (ca, cb) pairings of one version of a function, made on first use."""

    def __init__(self, func: Function, barrier_kind, arch: str, classes: list) -> None:
        self.func, self.kind, self.arch, self.classes = func, barrier_kind, arch, classes
        self._met: dict[tuple[int, int], dict | None] = {}

    def met(self, ia: int, ib: int) -> dict | None:
        got = self._met.get((ia, ib), False)
        if got is False:
            from .wave_match import WaveMatch
            wm = WaveMatch(self.func, self.kind, self.arch, (self.classes[ia][0], self.classes[ib][0]))
            got = self._met[(ia, ib)] = wm.met
        return got

    def published(self, p: Instruction, barrier: Instruction, segment_of, writes_of, overlap) -> bool:
        """`p`, in flight at `barrier`: no wave of any class, at a barrier its class pairing
        meets with `barrier`, may touch its bytes before its next barrier.  `segment_of(x)`:
        the segment of barrier x; `writes_of(inst)`: it writes LDS; `overlap(p, q, wa, wb)`:
        may `p` by a wave of `wa` and `q` by another wave of `wb` share a byte."""
        writes = writes_of(p)
        for ia, (_, live_a, waves_a) in enumerate(self.classes):
            if barrier.block not in live_a or p.block not in live_a:
                continue  # (no wave of this class runs it)
            for ib, (_, _, waves_b) in enumerate(self.classes):
                if ia == ib and len(waves_a) < 2:
                    continue  # (one wave: no other wave of its class)
                met = self.met(ia, ib)
                if met is None:
                    return False
                others = met.get(barrier)
                if not others:
                    return False  # not reached by the walk: nothing is known
                for x in others:
                    if x is None:
                        continue
                    seg = segment_of(x)
                    if seg.opaque:
                        return False
                    for q in seg.accesses:
                        if not writes and not writes_of(q):
                            continue
                        if overlap(p, q, waves_a, waves_b):
                            return False
        return True
