"""Which LDS accesses may touch the same bytes: the hardware checker's region model.

The checker asks a region model: `region(inst)`, an opaque description of the LDS an
instruction (a DS op, a tensor or async copy, a barrier) may access, computed once per static
instruction; `overlap(a, b)` -> (may overlap, proven), where `proven` says the answer rests on
facts (tokens, address ranges) rather than on "nothing is known"; and `describe(a, b)`, the
words a report uses for the pair.  A checker
that finds a hazard between two accesses reports whether the overlap was proven, so an
unproven one reads as "disjointness not shown" rather than as a certain bug.

`TokenRegions` (the default) reads memtokens (`inst.tokens`: ``// st.token:N`` in assembly,
``mod.memtoken`` in STIR): two tagged accesses overlap when they share a token, an untagged
access may overlap anything, and an empty token list touches nothing.

`AddressRegions` adds the LDS address analysis (issue 14, analysis/lds_facts.py) where the
tokens prove nothing, with the checker's own bytes of tensor DMAs (validate/hwtensor.py); `RangeRegions` takes byte ranges from anywhere else (tests, other
analyses), with a fallback model for the instructions it has none for.
"""

from __future__ import annotations

from ..ir import Block, Instruction
from .hwtensor import is_tensor, lattice_meet, lattices, tensor_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class LdsRegionModel(Protocol):
        def region(self, inst: Instruction) -> object: ...

        def overlap(self, a: object, b: object, same_trip: bool = False) -> tuple[bool, bool]: ...

        def describe(self, a: object, b: object, same_trip: bool = False) -> str: ...

        def crosses(self, src: Block, dst: Block) -> bool: ...
else:
    LdsRegionModel = object


class TokenRegions:
    """Regions are memtoken sets (None: untagged, may overlap anything)."""

    __slots__ = ()

    def region(self, inst: Instruction) -> frozenset[int] | None:
        toks = inst.tokens
        return None if toks is None else frozenset(toks)

    def overlap(self, a: frozenset[int] | None, b: frozenset[int] | None, same_trip: bool = False) -> tuple[bool, bool]:
        if a is None or b is None:
            return True, False
        return bool(a & b), True

    def crosses(self, src: Block, dst: Block) -> bool:
        return False

    def describe(self, a: frozenset[int] | None, b: frozenset[int] | None, same_trip: bool = False) -> str:
        if a is None or b is None:
            return "untagged LDS access (disjointness not proven)"
        return "LDS token " + ",".join(str(t) for t in sorted(a & b))


class RangeRegions:
    """Proven byte ranges per instruction ([(lo, hi)), ...]) with a fallback model for the
    instructions the address analysis does not resolve.  Ranges and tokens are not compared
    with each other: a pair with one side of each kind is decided by the fallback's rule for
    an untagged side (may overlap, not proven)."""

    __slots__ = ("ranges", "fallback")

    def __init__(self, ranges: dict[Instruction, tuple[tuple[int, int], ...]],
                 fallback: "LdsRegionModel | None" = None) -> None:
        self.ranges = ranges
        self.fallback = fallback if fallback is not None else TokenRegions()

    def region(self, inst: Instruction) -> object:
        r = self.ranges.get(inst)
        return ("ranges", r) if r is not None else ("fallback", self.fallback.region(inst))

    def overlap(self, a, b, same_trip: bool = False) -> tuple[bool, bool]:
        if a[0] == b[0] == "ranges":
            return any(lo1 < hi2 and lo2 < hi1 for lo1, hi1 in a[1] for lo2, hi2 in b[1]), True
        if a[0] == b[0] == "fallback":
            return self.fallback.overlap(a[1], b[1], same_trip)
        return True, False

    def crosses(self, src: Block, dst: Block) -> bool:
        return self.fallback.crosses(src, dst)

    def describe(self, a, b, same_trip: bool = False) -> str:
        if a[0] == b[0] == "ranges":
            return "LDS bytes " + ", ".join(f"[{lo:#x},{hi:#x})" for lo, hi in a[1])
        if a[0] == b[0] == "fallback":
            return self.fallback.describe(a[1], b[1], same_trip)
        return "LDS access (disjointness not proven)"


class AddressRegions:
    """Memtokens first; where they prove nothing (an untagged side), the LDS address analysis
    (analysis/lds_facts.py `may_overlap` over the accesses' proven byte ranges; `same_trip`
    when no loop back edge of its CFG was taken in between, so ping-pong buffers separate).
    Barriers touch no LDS themselves and keep the token rule.  A pair the analysis separates
    is proven disjoint; a pair it cannot separate may overlap, never "proven" (its ranges are
    over-approximations)."""

    __slots__ = ("facts", "tokens", "_pairs", "_why", "_sides")

    def __init__(self, facts) -> None:
        self.facts = facts
        self.tokens = TokenRegions()
        self._pairs: dict[tuple[int, int, bool], tuple[bool, bool]] = {}
        self._why: dict[tuple[int, int, bool], str] = {}
        #: (id(instruction), id(facts)) -> that side of a tensor pair (`_side`): a pair
        #: memo alone left each tensor's descriptor decoded again for every access it meets
        #: (1.5k pairs on the gfx1250 GEMM, ~10 tensor ops: half the checker's search time)
        self._sides: dict[tuple[int, int], object] = {}

    def region(self, inst: Instruction) -> tuple:
        return (inst, self.tokens.region(inst), self.facts.access(inst) is not None)

    def _by_tokens(self, a: tuple, b: tuple) -> bool:
        return self.tokens.overlap(a[1], b[1])[1] or not (a[2] and b[2])

    def overlap(self, a: tuple, b: tuple, same_trip: bool = False) -> tuple[bool, bool]:
        if self._by_tokens(a, b):
            return self.tokens.overlap(a[1], b[1])
        key = (id(a[0]), id(b[0]), same_trip)
        got = self._pairs.get(key)
        if got is None:
            if is_tensor(a[0]) or is_tensor(b[0]):
                may = self._tensor_pair(a[0], b[0])
            else:
                may = self.facts.may_overlap(a[0], b[0], same_trip)
            got = self._pairs[key] = (may, not may)
        return got

    def _tensor_pair(self, a: Instruction, b: Instruction) -> bool:
        """A pair with a tensor DMA on a side (`_tensor_pair_in`), over the whole function's
        values; where those meet and the kernel branches on the wave index, again in each
        wave's view (analysis/wave_roles.py: both accesses run by one wave, whose index is a
        constant there): apart in every view that runs both is apart."""
        if not self._tensor_pair_in(a, b, self.facts):
            return False
        roles = self.facts.roles()
        if roles is None:
            return True
        return any(self._tensor_pair_in(a, b, f) for r, f in roles if a.block in r.live and b.block in r.live)

    def _tensor_pair_in(self, a: Instruction, b: Instruction, facts) -> bool:
        """The checker's own bytes of the tensor (validate/hwtensor.py), the other side's
        address pieces as the analysis `facts` give them.
        A symbol both sides use that is defined once per wave (outside loops and
        subroutines: one value for the whole wave) takes the same value on both sides, its
        few values enumerated; every other symbol is independent on each side, over its
        range.  Unknown, or past the LDS end: may overlap."""
        sides = []
        for inst in (a, b):
            key = (id(inst), id(facts))
            side = self._sides.get(key)
            if side is None:
                side = self._sides[key] = self._side(inst, facts)
            if side is False or side is True:
                return side
            sides.append(side)
        lim = facts.launch.lds_limit
        for values in _joint_values(sides):
            known = values.get
            parts = [[x for form, size, tb in side for x in lattices(form, size, tb, known)] for side in sides]
            if any(lo < 0 or hi + z > lim for side in parts for lo, hi, _, z in side):
                return True
            if any(lattice_meet(x, y) for x in parts[0] for y in parts[1]):
                return True
        return False

    @staticmethod
    def _side(inst: Instruction, facts) -> list | bool:
        """One side of a tensor pair, a function of the instruction and the analysis `facts`
        alone: its (start form, size, tensor bytes or None) list, or the pair's answer when
        this side decides it (False: no LDS access, True: unknown, may overlap)."""
        acc = facts.access(inst)
        if acc is None:
            return False
        if acc.pieces is None:
            return True
        tb = tensor_bytes(inst, facts.flow) if is_tensor(inst) and acc.trusted is None else None
        if tb is not None:
            return [(form, tb.size, tb) for form in tb.forms]
        if is_tensor(inst) and acc.trusted is None:
            return True
        return [(form, p.size, None) for p in acc.pieces for form in p.addr.lins]

    def crosses(self, src: Block, dst: Block) -> bool:
        return self.facts.flow.cfg.is_back_edge(src, dst)

    def describe(self, a: tuple, b: tuple, same_trip: bool = False) -> str:
        if self._by_tokens(a, b):
            return self.tokens.describe(a[1], b[1])
        # memoised like `overlap`: the walker asks again for every state it reaches a pair in
        key = (id(a[0]), id(b[0]), same_trip)
        got = self._why.get(key)
        if got is None:
            got = self._why[key] = self.facts.why_not_proven(a[0], b[0], same_trip)
        return got


#: most joint assignments of the symbols two accesses of one wave share
_JOINT = 64


def _joint_values(sides: list) -> list[dict]:
    """Assignments of the symbols both sides' forms use that hold one value per wave
    (`Atom.variant` 0), each of few values: every combination (a single empty assignment
    when there are none, or too many)."""
    def atoms(side):
        return {atom for form, _, _ in side for atom, _ in form[0] if atom.variant == 0}
    shared = sorted(atoms(sides[0]) & atoms(sides[1]), key=lambda x: x.id)
    out: list[dict] = [{}]
    for atom in shared:
        lo, hi, st = atom.range[0], atom.range[1], atom.range[2]
        vals = [lo] if lo == hi or not st else list(range(lo, hi + 1, st))
        if len(out) * len(vals) > _JOINT:
            continue  # left independent on each side
        out = [{**o, atom: v} for o in out for v in vals]
    return out
