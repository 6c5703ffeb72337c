"""`Target`: the one object the pass, the checker and the editors ask about a target.

It pairs a `Generation` (counters, timelines, features, spelling) with an instruction table,
and answers per instruction (`sem`), per wait (`decode_wait`) and per program point
(`encode_waits`).  Two models exist per gfx1250: "hw", the whole hardware model every user
command runs, and "upstream", stinkytofu's own (five counters, its classification), which
`stinkywait-opt` keeps so that upstream's FileCheck tests read upstream's numbers.
"""

from __future__ import annotations

from ..ir import Instruction, Reg
from .generation import Generation
from .model import CK_COUNT, CK_KM, CK_LOAD, TIMELINE_LABELS, TIMELINE_NAMES, InstrSem
from .table import V_FOREVER, V_GDS, V_LDS, V_RETURNING, semantics


#: families whose ops join a VMEM replay group (`Target.drain_before`)
_REPLAY_GROUP = frozenset({"global", "scratch", "flat", "buffer", "image"})


def variant_of(inst: Instruction) -> int:
    """The operand facts the table needs (returning atomic, LDS DMA, GDS, a forever sleep)."""
    v = 0
    suffix = inst.suffix
    if suffix:
        words = suffix.lower().split()
        if "lds" in words:
            v |= V_LDS
        if "gds" in words:
            v |= V_GDS
    if inst.mnemonic == "s_sleep":
        lit = inst.first_literal()
        if lit is not None and lit & 0x8000:
            v |= V_FOREVER
    if "atomic" in inst.mnemonic or "_rtn" in inst.mnemonic:
        for op in inst.dsts:
            if type(op) is Reg and op.kind not in ("SCC", "exec", "LDS"):
                v |= V_RETURNING
                break
    return v


class Target:
    """A target cpu under one model ("hw" or "upstream").  Immutable; cached by `get_target`."""

    __slots__ = ("name", "family", "model", "generation", "counters", "timelines", "counter_of", "in_order",
                 "features", "wait_mnemonics", "_table", "siblings", "counter_names", "max_wait",
                 "latency")

    def __init__(self, name: str, generation: Generation, model: str = "hw", table=None) -> None:
        self.name = name
        self.family = generation.name
        self.model = model
        self.generation = generation
        self.counters = generation.counters
        self.counter_names = tuple(c.name for c in generation.counters)
        self.timelines = generation.timelines
        self.counter_of = dict(generation.timeline_counter)
        self.in_order = {ck: ck not in generation.out_of_order for ck in self.timelines}
        self.features = generation.features
        #: the family's latency model (prices placements; never decides safety)
        self.latency = generation.latency
        self.wait_mnemonics = generation.spelling.mnemonics
        self._table = table or semantics
        by_counter: dict[str, list[int]] = {}
        for ck in self.timelines:
            by_counter.setdefault(self.counter_of[ck], []).append(ck)
        #: timeline -> every timeline counted on the same hardware counter (itself included)
        self.siblings = tuple(tuple(by_counter[self.counter_of[ck]]) if ck in self.counter_of else ()
                              for ck in range(CK_COUNT))
        cmax = {c.name: c.max_wait for c in generation.counters}
        #: timeline -> the largest wait immediate that retires something on its counter
        self.max_wait = tuple(cmax.get(self.counter_of.get(ck, ""), 0) for ck in range(CK_COUNT))

    def __repr__(self) -> str:
        return f"<Target {self.name} ({self.family}, {self.model})>"

    def sem(self, inst: Instruction) -> InstrSem:
        """The semantics of one instruction, its operands considered."""
        return self._table(inst.mnemonic, self.generation, variant_of(inst))

    def drain_before(self, inst: Instruction, following: Instruction | None) -> tuple[int, ...]:
        """The timelines that must be empty before `inst` issues, given the instruction after
        it in its block (None: the block ends, or unknown).  The table's `drain_before`, but
        for gfx1250's `s_set_vgpr_msb` directly followed by a VMEM op: the mode change then
        opens that op's replay group instead of leaving an earlier group behind it
        (stinkytofu's Gfx1250HazardPass drains only an `s_set_vgpr_msb` whose successor is not
        memory).  The pass and the hardware checker both ask here."""
        s = self.sem(inst)
        if not s.drain_before:
            return ()
        if self.drains_by_context(inst) and following is not None and not following.is_label \
                and self.sem(following).family in _REPLAY_GROUP:
            return ()
        return tuple(c for c in s.drain_before if c in self.timelines)

    def drains_by_context(self, inst: Instruction) -> bool:
        """Whether `drain_before` of `inst` depends on the instruction after it."""
        return inst.mnemonic == "s_set_vgpr_msb" and bool(self.sem(inst).drain_before)

    def sem_for(self, mnemonic: str) -> InstrSem | None:
        """The semantics of a mnemonic alone (None: not an instruction the table knows)."""
        s = self._table(mnemonic.lower(), self.generation, 0)
        return None if s.family == "unknown" else s

    def decode_wait(self, inst: Instruction) -> dict[str, int]:
        """Counter name -> the value a wait instruction in the input enforces ({}: none)."""
        if inst.mnemonic not in self.wait_mnemonics and not inst.mnemonic.startswith("s_wait"):
            return {}
        return self.generation.spelling.decode(inst)

    def encode_waits(self, values: dict[str, int]) -> list[str]:
        """The wait line(s) for one program point, in this target's spelling."""
        return self.generation.spelling.encode(values)

    def counter_value_for(self, ck: int, n: int) -> int:
        """The immediate that retires an op with countFrom `n` on timeline `ck` (-1: none)."""
        if n <= 0:
            return -1
        if not self.in_order.get(ck, True):
            return 0
        return min(n - 1, self.max_wait[ck])

    # -- the target's words (what the editors and the CLI show) ------------------------------

    def timeline_counter(self, timeline: str) -> str:
        """The hardware counter a timeline (a `TIMELINE_NAMES` entry, as the FIFO views key
        their queues) is counted on, as this target's ISA spells it: "ds" is `lgkmcnt` on
        gfx9-11 and `dscnt` on gfx12; "load" is `vmcnt` / `loadcnt`."""
        ck = TIMELINE_NAMES.index(timeline) if timeline in TIMELINE_NAMES else -1
        return self.counter_of.get(ck, timeline if timeline.endswith("cnt") else timeline + "cnt")

    def shares_counter(self, timeline: str) -> bool:
        """Whether other kinds of op are counted on the same hardware counter (gfx9's
        lgkmcnt: LDS, SMEM, messages, GDS), so a queue shown for it marks each op's kind."""
        ck = TIMELINE_NAMES.index(timeline) if timeline in TIMELINE_NAMES else -1
        return 0 <= ck < CK_COUNT and len(self.siblings[ck]) > 1

    def timeline_in_order(self, timeline: str) -> bool:
        """Whether a timeline's ops complete in issue order (a wait of N retires the op with N
        younger ones in flight; otherwise only a wait of 0 does)."""
        ck = TIMELINE_NAMES.index(timeline) if timeline in TIMELINE_NAMES else -1
        return self.in_order.get(ck, True)

    def op_kind(self, timeline: str, mnemonic: str = "", order: bool = True) -> str:
        """The kind of an op in flight on a timeline, in a kernel writer's words, with "out of
        order" for a kind that may complete in any order (only a wait of 0 retires it): "LDS",
        "SMEM, out of order", "message, out of order", "VMEM" (gfx9, where loads and stores
        share vmcnt in issue order); `order` False: the kind alone."""
        ck = TIMELINE_NAMES.index(timeline) if timeline in TIMELINE_NAMES else -1
        if not 0 <= ck < CK_COUNT:
            return timeline
        label = TIMELINE_LABELS[ck]
        if ck == CK_LOAD and self.features.stores_on_vmcnt:
            label = "VMEM"
        elif ck == CK_KM and mnemonic and self._table(mnemonic.lower(), self.generation, 0).family == "message":
            label = "message"
        return label if not order or self.in_order.get(ck, True) else label + ", out of order"

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "family": self.family, "model": self.model,
                "counters": [{"name": c.name, "max": c.max_value} for c in self.counters],
                "features": self.features.to_json()}
