"""The IR shared by both front ends, the analyses and the printers.

One clear type per concept (as in LLVM's SIInsertWaitcnts): `Instruction`, `Block`,
`Function`, `Module`.  Instructions are compared by identity (they are dict keys all over the
dataflow), and every node keeps its exact source `Span` and original text so that editor
features and the asm printer never need to re-derive positions.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from .operands import Imm, Operand, Reg


@dataclass(frozen=True, slots=True)
class Span:
    """A source range.  Lines and columns are 1-based; `end_col` is exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(slots=True)
class Modifier:
    """A `mod.<kind> = { key = value, ... }` dictionary, fields in input order.

    Values are int, float, bool, str or list of those.  `raw` keeps the source text of the
    braces so an unknown kind can be reproduced verbatim.
    """

    kind: str
    fields: dict[str, Any] = field(default_factory=dict)
    raw: str | None = None

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


@dataclass(eq=False, slots=True)
class Instruction:
    """One instruction (or a PHI pseudo-instruction created by the def-use builder).

    `sources` is filled by `analysis.ssa.build_use_def_chain`: the immediate defining
    instructions of every source register unit (memtoken pseudo registers included), in
    first-seen order, as upstream's `getSources()`.
    """

    mnemonic: str
    dsts: list[Operand] = field(default_factory=list)
    srcs: list[Operand] = field(default_factory=list)
    mods: dict[str, Modifier] = field(default_factory=dict)
    span: Span | None = None
    text: str = ""
    cycles: tuple[int, int] | None = None
    comment: str | None = None
    #: asm only: trailing text after the operands that is not a modifier we model
    #: (e.g. ``offset:16 th:TH_LOAD_NT``) kept for faithful printing.
    suffix: str = ""
    inserted: bool = False
    is_phi: bool = False
    is_label: bool = False
    #: filled by analysis
    sources: list["Instruction | None"] = field(default_factory=list)
    block: "Block | None" = None
    #: PHI only: the register unit key it merges.
    phi_key: tuple[str, int] | None = None
    #: provenance attached by the insertion pass to inserted waits.
    provenance: Any = None

    def __repr__(self) -> str:  # short, for debugging and error messages
        loc = f"@{self.span.line}" if self.span else ""
        return f"<{self.mnemonic}{loc}>"

    @property
    def tokens(self) -> tuple[int, ...] | None:
        """MemTokenData token list, or None when the instruction is untagged."""
        m = self.mods.get("memtoken")
        if m is None:
            return None
        toks = m.fields.get("tokens", [])
        if not isinstance(toks, list):
            toks = [toks]
        return tuple(t for t in toks if isinstance(t, int))

    def first_literal(self) -> int | None:
        for op in self.srcs:
            if isinstance(op, Imm):
                return op.value
        return None

    def reg_dsts(self) -> Iterator[Reg]:
        return (op for op in self.dsts if isinstance(op, Reg))

    def reg_srcs(self) -> Iterator[Reg]:
        return (op for op in self.srcs if isinstance(op, Reg))

    @property
    def line(self) -> int:
        return self.span.line if self.span else 0


@dataclass(eq=False, slots=True)
class Block:
    """A basic block.  `succs`/`preds` are in CFG order (successor order as written)."""

    label: str
    instrs: list[Instruction] = field(default_factory=list)
    succ_labels: list[str] = field(default_factory=list)
    succs: list["Block"] = field(default_factory=list)
    preds: list["Block"] = field(default_factory=list)
    span: Span | None = None
    index: int = 0
    #: STIR: the `Successors:` line span (None when absent)
    succ_span: Span | None = None

    def __repr__(self) -> str:
        return f"<^{self.label}>"

    @property
    def name(self) -> str:
        return self.label if self.label else f"bb{self.index}"

    def terminator(self) -> Instruction | None:
        for inst in reversed(self.instrs):
            if not inst.is_label and not inst.is_phi:
                return inst
        return None


@dataclass(eq=False, slots=True)
class Function:
    name: str
    blocks: list[Block] = field(default_factory=list)
    span: Span | None = None
    name_span: Span | None = None

    def __repr__(self) -> str:
        return f"<func @{self.name}>"

    def instructions(self) -> Iterator[Instruction]:
        for b in self.blocks:
            yield from b.instrs

    def link(self) -> None:
        """Resolve `succ_labels` into `succs`/`preds` and set back references.

        Predecessor lists follow block order, as upstream derives them from successor lists.
        Unknown successor labels are ignored here; front ends report them as diagnostics.
        """
        by_label = {b.label: b for b in self.blocks}
        for i, b in enumerate(self.blocks):
            b.index = i
            b.succs = [by_label[s] for s in b.succ_labels if s in by_label]
            b.preds = []
            for inst in b.instrs:
                inst.block = b
        for b in self.blocks:
            for s in b.succs:
                s.preds.append(b)


@dataclass(eq=False)
class Module:
    """A parsed file: its functions and the diagnostics of parsing it."""

    path: str
    kind: str  # "stir" | "asm"
    text: str
    functions: list[Function] = field(default_factory=list)
    diagnostics: list[Any] = field(default_factory=list)
    #: asm only: the front end's line table (see syntax.asm_parser.AsmLine)
    lines: list[Any] = field(default_factory=list)


@contextmanager
def bulk_construction() -> Iterator[None]:
    """Pause the cyclic garbage collector while a front end builds a whole file's IR.

    A parse allocates several nodes per line and frees almost none while the front ends'
    line caches keep hundreds of thousands of objects alive: the worst case for generational
    collection, whose repeated scans cost more than the parse itself on large files.
    Collection is only postponed (and re-enabled only if it was on), so nothing leaks.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
