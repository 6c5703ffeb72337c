"""The LDS address analysis as the peer comparison's answer to "do these two touch the same bytes?".

LLVM 22 has no LDS address analysis for DS against the DMA/tensor/async engines: it waits for
every such pair.  The pass asks `analysis/lds_facts.py` before it drains one (issue 14), so an
LLVM wait that only retires an LDS access provably disjoint from the one it would protect is an
over-wait the brief lets us skip (docs/decisions.md 41).  The comparison re-asks the same
analysis on *our output* (not on the pass's internal state): a pair counts as independent only
when both accesses are understood and their byte ranges over every lane and trip are apart.
Barriers are not asked about: at a barrier every own in-flight LDS access still counts as
needed (other waves may read it), as in the pass.
"""

from __future__ import annotations

from typing import Any


class InstructionMap(dict):
    """line -> stinkywait Instruction of one parsed text, remembering the module (for facts)."""

    def __init__(self, module: Any) -> None:
        super().__init__()
        self.module = module
        self._func_of: dict[int, Any] = {}
        self._facts: dict[int, Any] = {}
        self.hardware_results: dict[str, Any] | None = None  # function -> the hardware checker's result

    def add(self, func: Any, ins: Any) -> None:
        self[ins.span.line] = ins
        self._func_of[id(ins)] = func

    def lds_disjoint(self, a: Any, b: Any) -> bool:
        """Both `a` and `b` are LDS accesses the analysis understands and no byte of one may
        be touched by the other, in any pair of trips."""
        if a is None or b is None:
            return False
        fa, fb = self._func_of.get(id(a)), self._func_of.get(id(b))
        if fa is None or fa is not fb:
            return False
        facts = self._facts.get(id(fa))
        if facts is None:
            from stinkywait_core.analysis.lds_facts import lds_facts
            facts = self._facts[id(fa)] = lds_facts(fa, self.module)
        try:
            if facts.access(a) is None or facts.access(b) is None:
                return False
            return not facts.may_overlap(a, b, False)
        except Exception:  # an analysis failure proves nothing
            return False
