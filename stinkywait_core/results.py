"""What an analysis produces, as plain data: options, planned waits with provenance, FIFO views.

The CLIs (`plan --json`, `insert --explain`, `check`) and the language server (inlay hints,
hover, diagnostics, code actions) are all rendered from these records; none of them
recomputes anything the pass already decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic


@dataclass(frozen=True, slots=True)
class Options:
    """Everything that shapes a plan.  Defaults are upstream's defaults."""

    num_waves: int = 0
    arch: str = "gfx1250"
    enable_loop_carried_token_deps: bool = False
    enable_tensor_descriptor_war: bool = False
    #: ShallowPredPromotion on (production default) or off
    optimize: bool = True
    #: strip rebuildable waits (StinkyRemoveWaitCntPass defaults) before planning
    replace_waits: bool = False
    #: bounded analysis (issue 7): widen instead of exploding; exact mode reproduces upstream
    bounded: bool = True
    #: RAW through repeated dynamic instances: "newest" (safe) or "oldest" (upstream)
    count_from_instance: str = "newest"
    #: a predecessor with nothing in flight keeps an empty queue, so an op issued later is
    #: represented as the only one in flight on that path (upstream drops such paths)
    represent_empty_paths: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"numWaves": self.num_waves, "arch": self.arch,
                "enableLoopCarriedTokenDeps": self.enable_loop_carried_token_deps,
                "enableTensorDescriptorWar": self.enable_tensor_descriptor_war,
                "optimize": self.optimize, "replaceWaits": self.replace_waits,
                "bounded": self.bounded, "countFromInstance": self.count_from_instance,
                "representEmptyPaths": self.represent_empty_paths}

    @classmethod
    def upstream(cls, **kw) -> "Options":
        """Upstream's exact choices: oldest-instance countFrom, empty paths dropped, no widening."""
        return cls(bounded=False, count_from_instance="oldest", represent_empty_paths=False, **kw)


@dataclass(frozen=True, slots=True)
class DepInfo:
    """One producer a wait drains: where it is and how deep it sits in which queue."""

    line: int
    column: int
    mnemonic: str
    block: str
    pred: str | None
    count_from: int

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "mnemonic": self.mnemonic, "block": self.block,
                "pred": self.pred, "countFrom": self.count_from}


@dataclass(slots=True)
class PlannedWait:
    """One `s_wait_*` the pass inserts.

    `line`/`column` locate the anchor instruction the wait goes before (1-based).  For a tail
    drain on a block without a terminator branch, `placement` is "after" and the location is
    the block's last instruction (or its header when empty).  `insert_line` is the 1-based
    line of the source text before which `insert_text` (a whole line, newline included) is
    inserted; `len(lines) + 1` means at the end.
    """

    function: str
    block: str
    line: int
    column: int
    placement: str
    counter: str
    count: int
    instruction: str
    rule: str
    reason: str
    deps: list[DepInfo] = field(default_factory=list)
    shaped_by: list[str] = field(default_factory=list)
    insert_line: int = 0
    insert_text: str = ""
    #: a ShallowPredPromotion tail drain (before the predecessor's terminator or at its end)
    tail_drain: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "block": self.block,
                "placement": self.placement, "instruction": self.instruction,
                "counter": self.counter, "count": self.count, "reason": self.reason,
                "rule": self.rule, "shapedBy": list(self.shaped_by),
                "deps": [d.to_json() for d in self.deps]}


@dataclass(frozen=True, slots=True)
class QueuedOpView:
    line: int
    mnemonic: str
    count_from: int
    trips_back: int = 0


@dataclass(frozen=True, slots=True)
class QueueView:
    """One per-predecessor FIFO of one counter at a program point (for hover)."""

    pred: str | None
    ops: tuple[QueuedOpView, ...]
    saturated: int = 0


@dataclass(slots=True)
class FunctionResult:
    name: str
    waits: list[PlannedWait] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: FIFO state just before each instruction's planned waits, keyed by 1-based line:
    #: counter name -> queues.  Only counters with something in flight are present.
    fifo: dict[int, dict[str, list[QueueView]]] = field(default_factory=dict)
    #: consumer line -> producer lines it depends on (go to definition)
    producers: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    sweeps: int = 0
    converged: bool = True
    widened: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "waits": [w.to_json() for w in self.waits],
                "diagnostics": [d.to_json() for d in self.diagnostics]}
