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
tokens prove nothing; `RangeRegions` takes byte ranges from anywhere else (tests, other
analyses), with a fallback model for the instructions it has none for.
"""

from __future__ import annotations

from ..ir import Block, Instruction

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

    __slots__ = ("facts", "tokens", "_pairs", "_why")

    def __init__(self, facts) -> None:
        self.facts = facts
        self.tokens = TokenRegions()
        self._pairs: dict[tuple[int, int, bool], tuple[bool, bool]] = {}
        self._why: dict[tuple[int, int, bool], str] = {}

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
            may = self.facts.may_overlap(a[0], b[0], same_trip)
            got = self._pairs[key] = (may, not may)
        return got

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
