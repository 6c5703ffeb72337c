"""What an analysis produces, as plain data: options, planned waits with provenance, FIFO views.

The CLIs (`plan --json`, `insert --explain`, `check`) and the language server (inlay hints,
hover, diagnostics, code actions) are all rendered from these records; none of them
recomputes anything the pass already decided.
"""

from __future__ import annotations

from .diagnostics import Diagnostic
from .ir.records import DataclassFields, FrozenRecord, Record, _set

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any

# The records are plain slotted classes (`ir.records`), not dataclasses: generating a
# dataclass costs about half a millisecond of every process start-up, and importing
# `dataclasses` (with `inspect`) about 8 ms.


class Options(FrozenRecord):
    """Everything that shapes a plan.  Defaults are what every stinkywait command uses (the
    whole hardware model, loop-carried tensor state, the safe choices of decisions 20-22);
    `Options.upstream()` gives upstream stinkytofu's.

    Immutable and hashable (plans are cached by it); `replace(**changes)` derives a variant.
    Still usable with `dataclasses.replace`/`fields`/`asdict` (`DataclassFields`).

    `optimize`: ShallowPredPromotion on (production default) or off.  `replace_waits`: strip
    rebuildable waits (StinkyRemoveWaitCntPass defaults) before planning.  `bounded`: bounded
    analysis (issue 7): widen instead of exploding; exact mode reproduces upstream.
    `count_from_instance`: RAW through repeated dynamic instances, "newest" (safe) or "oldest"
    (upstream).  `represent_empty_paths`: a predecessor with nothing in flight keeps an empty
    queue, so an op issued later is represented as the only one in flight on that path
    (upstream drops such paths).  `model`: "hw", the whole hardware model of the target
    (every hazard the GPU has: register WAW, xcnt WAR, LDS between engines, returns, ...;
    docs/decisions.md), or "upstream", stinkytofu's own model (five counters, its rules), which
    `stinkywait-opt` keeps so upstream's FileCheck corpus reads upstream's numbers.
    `include_paths`: folders searched for ``.include`` after the including file's own (``-I``
    first, then ``stinkywait.includePaths``; syntax/asm_include.py).  `defsyms`: (name, value)
    symbols defined before the file, as llvm-mc's ``--defsym`` (MIOpen passes its kernel
    parameters so).
    `coalesce_window`: CoalesceWaits (waitcnt/coalesce.py) folds a wait into an earlier one of
    the same counter at most this many instructions before it in the block (0: off, every
    wait right before its first consumer, as the spec, upstream and LLVM place them); -1
    (the default) is `COALESCE_WINDOW` on assembly under the hardware model and 0 otherwise
    (STIR keeps the spec's placement, whose worked examples are contract).
    `producer_join`: under the hardware model, join the FIFOs by producer (only the queues that
    hold some producer's minimum distance: exact for every wait, waitcnt/producer_join.py)
    "auto" when the exact per-predecessor state explodes, "always" from the start (tests and
    benchmarks compare it with the exact join), or "never".
    `latency_overrides`: (dotted key, value) pairs over the target family's latency model
    (`targets/latency.py`, `--latency-model FILE`): they price placements (CoalesceWaits) and
    predict stall, never what is safe.
    """

    #: the CoalesceWaits window on assembly under the hardware model (docs/decisions.md 42):
    #: the latency model decides each fold; 128 instructions reach the waits a WMMA/MFMA run
    #: spaces out (32 kept 1.4-1.8x the authors' wait count at the same predicted stall),
    #: while the model's walk, blind to a loop's previous trip, still prices them
    COALESCE_WINDOW = 128

    __slots__ = ("num_waves", "arch", "enable_loop_carried_token_deps", "enable_tensor_descriptor_war", "optimize",
                 "replace_waits", "bounded", "count_from_instance", "represent_empty_paths", "model",
                 "coalesce_window", "include_paths", "defsyms", "producer_join", "latency_overrides")
    num_waves: int
    arch: str
    enable_loop_carried_token_deps: bool
    enable_tensor_descriptor_war: bool
    optimize: bool
    replace_waits: bool
    bounded: bool
    count_from_instance: str
    represent_empty_paths: bool
    model: str
    coalesce_window: int
    include_paths: tuple
    defsyms: tuple
    producer_join: str
    latency_overrides: tuple
    __dataclass_fields__ = DataclassFields()

    def __init__(self, num_waves: int = 0, arch: str = "gfx1250", enable_loop_carried_token_deps: bool = True,
                 enable_tensor_descriptor_war: bool = False, optimize: bool = True, replace_waits: bool = False,
                 bounded: bool = True, count_from_instance: str = "newest", represent_empty_paths: bool = True,
                 model: str = "hw", coalesce_window: int = -1, include_paths: tuple = (),
                 defsyms: tuple = (), producer_join: str = "auto", latency_overrides: tuple = ()) -> None:
        self._assign(num_waves, arch, enable_loop_carried_token_deps, enable_tensor_descriptor_war, optimize,
                     replace_waits, bounded, count_from_instance, represent_empty_paths, model,
                     coalesce_window, tuple(include_paths), tuple(defsyms), producer_join, tuple(latency_overrides))

    def to_json(self) -> dict[str, Any]:
        out = {"numWaves": self.num_waves, "arch": self.arch,
                "enableLoopCarriedTokenDeps": self.enable_loop_carried_token_deps,
                "enableTensorDescriptorWar": self.enable_tensor_descriptor_war,
                "optimize": self.optimize, "replaceWaits": self.replace_waits,
                "bounded": self.bounded, "countFromInstance": self.count_from_instance,
                "representEmptyPaths": self.represent_empty_paths, "model": self.model,
                "coalesceWindow": self.coalesce_window, "includePaths": list(self.include_paths),
                "defsyms": [f"{n}={v}" for n, v in self.defsyms], "producerJoin": self.producer_join}
        if self.latency_overrides:
            out["latencyOverrides"] = dict(self.latency_overrides)
        return out

    def coalesce_for(self, assembly: bool) -> int:
        """The CoalesceWaits window for a function of this kind of input (see the class)."""
        if self.coalesce_window >= 0:
            return self.coalesce_window
        return self.COALESCE_WINDOW if assembly and self.model == "hw" else 0

    @property
    def target(self):
        """The `targets.Target` these options plan for (raises `UnsupportedTarget`)."""
        from .targets import get_target
        return get_target(self.arch, self.model)

    @property
    def latency_model(self):
        """The target family's `LatencyModel` with this run's overrides."""
        model = self.target.latency
        return model.with_overrides(self.latency_overrides) if model is not None else None

    def replace(self, **changes: Any) -> "Options":
        """A copy with `changes` applied (what `dataclasses.replace` gives)."""
        values = dict(zip(self.__slots__, self._key(self)))
        values.update(changes)
        return type(self)(**values)

    @classmethod
    def upstream(cls, **kw) -> "Options":
        """Upstream's exact choices: its model, oldest-instance countFrom, empty paths dropped, no
        widening."""
        kw.setdefault("model", "upstream")
        kw.setdefault("enable_loop_carried_token_deps", False)
        return cls(bounded=False, count_from_instance="oldest", represent_empty_paths=False, **kw)


class DepInfo(FrozenRecord):
    """One producer a wait drains: where it is and how deep it sits in which queue."""

    __slots__ = ("line", "column", "mnemonic", "block", "pred", "count_from")
    line: int
    column: int
    mnemonic: str
    block: str
    pred: str | None
    count_from: int

    def __init__(self, line: int, column: int, mnemonic: str, block: str, pred: str | None,
                 count_from: int) -> None:
        self._assign(line, column, mnemonic, block, pred, count_from)

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "mnemonic": self.mnemonic, "block": self.block,
                "pred": self.pred, "countFrom": self.count_from}


class PlannedWait(Record):
    """One `s_wait_*` the pass inserts.

    `line`/`column` locate the anchor instruction the wait goes before (1-based).  For a tail
    drain on a block without a terminator branch, `placement` is "after" and the location is
    the block's last instruction (or its header when empty).  `insert_line` is the 1-based
    line of the source text before which `insert_text` (a whole line, newline included) is
    inserted; `len(lines) + 1` means at the end.  `tail_drain` marks a ShallowPredPromotion
    tail drain (before the predecessor's terminator or at its end).  `group`: the waits of
    one program point that the target spells as one instruction sequence (gfx9
    ``s_waitcnt vmcnt(1) lgkmcnt(0)``, gfx12 ``s_wait_loadcnt_dscnt``) share a nonzero group
    and the same `insert_text`, inserted once.
    """

    __slots__ = ("function", "block", "line", "column", "placement", "counter", "count", "instruction", "rule",
                 "reason", "deps", "shaped_by", "insert_line", "insert_text", "tail_drain", "group")
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
    deps: list[DepInfo]
    shaped_by: list[str]
    insert_line: int
    insert_text: str
    tail_drain: bool
    group: int

    def __init__(self, function: str, block: str, line: int, column: int, placement: str, counter: str,
                 count: int, instruction: str, rule: str, reason: str, deps: list[DepInfo] | None = None,
                 shaped_by: list[str] | None = None, insert_line: int = 0, insert_text: str = "",
                 tail_drain: bool = False, group: int = 0) -> None:
        self.function = function
        self.block = block
        self.line = line
        self.column = column
        self.placement = placement
        self.counter = counter
        self.count = count
        self.instruction = instruction
        self.rule = rule
        self.reason = reason
        self.deps = [] if deps is None else deps
        self.shaped_by = [] if shaped_by is None else shaped_by
        self.insert_line = insert_line
        self.insert_text = insert_text
        self.tail_drain = tail_drain
        self.group = group

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "block": self.block,
                "placement": self.placement, "instruction": self.instruction,
                "counter": self.counter, "count": self.count, "reason": self.reason,
                "rule": self.rule, "shapedBy": list(self.shaped_by),
                "deps": [d.to_json() for d in self.deps]}


class QueuedOpView(FrozenRecord):
    """One operation in flight in a FIFO view (for hover)."""

    __slots__ = ("line", "mnemonic", "count_from", "trips_back")
    line: int
    mnemonic: str
    count_from: int
    trips_back: int

    def __init__(self, line: int, mnemonic: str, count_from: int, trips_back: int = 0) -> None:
        _set(self, "line", line)
        _set(self, "mnemonic", mnemonic)
        _set(self, "count_from", count_from)
        _set(self, "trips_back", trips_back)


class QueueView(FrozenRecord):
    """One per-predecessor FIFO of one counter at a program point (for hover)."""

    __slots__ = ("pred", "ops", "saturated")
    pred: str | None
    ops: tuple[QueuedOpView, ...]
    saturated: int

    def __init__(self, pred: str | None, ops: tuple[QueuedOpView, ...], saturated: int = 0) -> None:
        _set(self, "pred", pred)
        _set(self, "ops", ops)
        _set(self, "saturated", saturated)


class FunctionResult(Record):
    """The plan of one function.

    `fifo`: FIFO state just before each instruction's planned waits, keyed by 1-based line:
    counter name -> queues (only counters with something in flight are present).
    `producers`: consumer line -> producer lines it depends on (go to definition).
    """

    __slots__ = ("name", "waits", "diagnostics", "fifo", "producers", "sweeps", "converged", "widened")
    name: str
    waits: list[PlannedWait]
    diagnostics: list[Diagnostic]
    fifo: dict[int, dict[str, list[QueueView]]]
    producers: dict[int, list[tuple[int, int]]]
    sweeps: int
    converged: bool
    widened: bool

    def __init__(self, name: str, waits: list[PlannedWait] | None = None,
                 diagnostics: list[Diagnostic] | None = None,
                 fifo: dict[int, dict[str, list[QueueView]]] | None = None,
                 producers: dict[int, list[tuple[int, int]]] | None = None, sweeps: int = 0,
                 converged: bool = True, widened: bool = False) -> None:
        self.name = name
        self.waits = [] if waits is None else waits
        self.diagnostics = [] if diagnostics is None else diagnostics
        self.fifo = {} if fifo is None else fifo
        self.producers = {} if producers is None else producers
        self.sweeps = sweeps
        self.converged = converged
        self.widened = widened

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "waits": [w.to_json() for w in self.waits],
                "diagnostics": [d.to_json() for d in self.diagnostics]}
