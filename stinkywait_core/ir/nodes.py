"""The IR shared by both front ends, the analyses and the printers.

One clear type per concept (as in LLVM's SIInsertWaitcnts): `Instruction`, `Block`,
`Function`, `Module`.  Instructions are compared by identity (they are dict keys all over the
dataflow), and every node keeps its exact source `Span` and original text so that editor
features and the asm printer never need to re-derive positions.
"""

from __future__ import annotations

import gc
from collections import namedtuple

from .operands import Imm, Operand, Reg

_new_object = object.__new__
from .records import Record

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

# Span is a named tuple: the front ends create one or two per line, and a tuple is the cheapest
# immutable, hashable record to build and to read.
Span = namedtuple("Span", ("line", "col", "end_line", "end_col"))
Span.__doc__ = """A source range.  Lines and columns are 1-based; `end_col` is exclusive."""


class Modifier(Record):
    """A `mod.<kind> = { key = value, ... }` dictionary, fields in input order.

    Values are int, float, bool, str or list of those.  `raw` keeps the source text of the
    braces so an unknown kind can be reproduced verbatim.  Compared by value.
    """

    __slots__ = ("kind", "fields", "raw")
    kind: str
    fields: dict[str, Any]
    raw: str | None

    def __init__(self, kind: str, fields: dict[str, Any] | None = None, raw: str | None = None) -> None:
        self.kind = kind
        self.fields = {} if fields is None else fields
        self.raw = raw

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


class Instruction:
    """One instruction (or a PHI pseudo-instruction created by the def-use builder).

    `sources` is filled by `analysis.ssa.build_use_def_chain`: the immediate defining
    instructions of every source register unit (memtoken pseudo registers included), in
    first-seen order, as upstream's `getSources()`.  Compared by identity (instructions are
    dict keys all over the dataflow).

    Fields: `mnemonic`, `dsts`, `srcs`, `mods`, `span`, `text`, `cycles`, `comment`,
    `suffix` (asm only: trailing text after the operands that is not a modifier we model,
    e.g. ``offset:16 th:TH_LOAD_NT``, kept for faithful printing), `inserted`, `is_phi`,
    `is_label`, `sources` and `block` (filled by analysis), `phi_key` (PHI only: the register
    unit key it merges), `provenance` (attached by the insertion pass to inserted waits).
    """

    __slots__ = ("mnemonic", "dsts", "srcs", "mods", "span", "text", "cycles", "comment", "suffix",
                 "inserted", "is_phi", "is_label", "sources", "block", "phi_key", "provenance")
    mnemonic: str
    dsts: list[Operand]
    srcs: list[Operand]
    mods: dict[str, Modifier]
    span: Span | None
    text: str
    cycles: tuple[int, int] | None
    comment: str | None
    suffix: str
    inserted: bool
    is_phi: bool
    is_label: bool
    sources: list[Instruction | None]
    block: Block | None
    phi_key: tuple[str, int] | None
    provenance: Any

    def __init__(self, mnemonic: str, dsts: list[Operand] | None = None, srcs: list[Operand] | None = None,
                 mods: dict[str, Modifier] | None = None, span: Span | None = None, text: str = "",
                 cycles: tuple[int, int] | None = None, comment: str | None = None, suffix: str = "",
                 inserted: bool = False, is_phi: bool = False, is_label: bool = False,
                 sources: list[Instruction | None] | None = None, block: Block | None = None,
                 phi_key: tuple[str, int] | None = None, provenance: Any = None) -> None:
        self.mnemonic = mnemonic
        self.dsts = [] if dsts is None else dsts
        self.srcs = [] if srcs is None else srcs
        self.mods = {} if mods is None else mods
        self.span = span
        self.text = text
        self.cycles = cycles
        self.comment = comment
        self.suffix = suffix
        self.inserted = inserted
        self.is_phi = is_phi
        self.is_label = is_label
        self.sources = [] if sources is None else sources
        self.block = block
        self.phi_key = phi_key
        self.provenance = provenance

    @classmethod
    def phi(cls, reg: Reg, key: tuple[str, int], block: Block) -> Instruction:
        """A PHI of one register unit at the head of `block` (the def-use builder places
        thousands per re-solve: the fields set directly, no keyword parsing)."""
        inst = _new_object(cls)
        inst.mnemonic, inst.dsts, inst.srcs, inst.mods, inst.span, inst.text = "PHI", [reg], [], {}, None, ""
        inst.cycles, inst.comment, inst.suffix, inst.inserted, inst.is_phi, inst.is_label = None, None, "", False, True, False
        inst.sources, inst.block, inst.phi_key, inst.provenance = [], block, key, None
        return inst

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


class Block:
    """A basic block.  `succs`/`preds` are in CFG order (successor order as written).

    `succ_span` (STIR) is the `Successors:` line span (None when absent).  Compared by
    identity.
    """

    __slots__ = ("label", "instrs", "succ_labels", "succs", "preds", "span", "index", "succ_span")
    label: str
    instrs: list[Instruction]
    succ_labels: list[str]
    succs: list[Block]
    preds: list[Block]
    span: Span | None
    index: int
    succ_span: Span | None

    def __init__(self, label: str, instrs: list[Instruction] | None = None, succ_labels: list[str] | None = None,
                 succs: list[Block] | None = None, preds: list[Block] | None = None, span: Span | None = None,
                 index: int = 0, succ_span: Span | None = None) -> None:
        self.label = label
        self.instrs = [] if instrs is None else instrs
        self.succ_labels = [] if succ_labels is None else succ_labels
        self.succs = [] if succs is None else succs
        self.preds = [] if preds is None else preds
        self.span = span
        self.index = index
        self.succ_span = succ_span

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


class Function:
    """A function (an asm kernel).  Compared by identity.

    `callable`: the front end found it to be called code, not a kernel (a ``.type f,@function``
    without a kernel descriptor that does not end the program, or a function another function
    of the file calls): its entry is reached with the caller's operations in flight.
    """

    __slots__ = ("name", "blocks", "span", "name_span", "callable")
    name: str
    blocks: list[Block]
    span: Span | None
    name_span: Span | None
    callable: bool

    def __init__(self, name: str, blocks: list[Block] | None = None, span: Span | None = None,
                 name_span: Span | None = None, callable: bool = False) -> None:
        self.name = name
        self.blocks = [] if blocks is None else blocks
        self.span = span
        self.name_span = name_span
        self.callable = callable

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


class TargetInfo(Record):
    """What a file says about the GPU it is written for (asm front end: `syntax.asm_target`).

    * `cpu`: the processor (``"gfx942"``, ``"gfx1250"``, ``"gfx9-4-generic"``), lower case;
      None when nothing in the file names one.
    * `target_id`: the target string as written (``"amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"``),
      or ``"9,0,6"`` for ``.hsa_code_object_isa``; None with `cpu`.
    * `span`: the line that decided `cpu` (the first of the strongest kind of signal:
      ``.amdgcn_target``, then ``.amd_amdgpu_isa``, ``.hsa_code_object_isa``, then the
      ``amdhsa.target:`` entry of ``.amdgpu_metadata``).
    * `xnack`, `sramecc`: True (``:xnack+``), False (``:xnack-``), None (not specified: "any").
    * `tgsplit`: True when a kernel descriptor says ``.amdhsa_tg_split 1``, False when every one
      that says anything says 0, None when none does.
    * `wavefront_size`: 32 or 64 when every kernel the file describes agrees
      (``.amdhsa_wavefront_size32``, the metadata's ``.wavefront_size``), 64 for gfx6-gfx9
      processors (the only size they have) when nothing says otherwise; None otherwise.
    * `kernel_wavefront_size`: kernel name -> 32 or 64, per kernel that says.
    * `kernel_descriptors`: kernel name -> {``.amdhsa_*`` directive: integer value} of its
      ``.amdhsa_kernel`` block (values that are not plain integers are left out).
    """

    __slots__ = ("cpu", "target_id", "span", "xnack", "sramecc", "tgsplit", "wavefront_size",
                 "kernel_wavefront_size", "kernel_descriptors")
    cpu: str | None
    target_id: str | None
    span: Span | None
    xnack: bool | None
    sramecc: bool | None
    tgsplit: bool | None
    wavefront_size: int | None
    kernel_wavefront_size: dict[str, int]
    kernel_descriptors: dict[str, dict[str, int]]

    def __init__(self, cpu: str | None = None, target_id: str | None = None, span: Span | None = None,
                 xnack: bool | None = None, sramecc: bool | None = None, tgsplit: bool | None = None,
                 wavefront_size: int | None = None, kernel_wavefront_size: dict[str, int] | None = None,
                 kernel_descriptors: dict[str, dict[str, int]] | None = None) -> None:
        self.cpu = cpu
        self.target_id = target_id
        self.span = span
        self.xnack = xnack
        self.sramecc = sramecc
        self.tgsplit = tgsplit
        self.wavefront_size = wavefront_size
        self.kernel_wavefront_size = {} if kernel_wavefront_size is None else kernel_wavefront_size
        self.kernel_descriptors = {} if kernel_descriptors is None else kernel_descriptors


class Module:
    """A parsed file: its functions and the diagnostics of parsing it.

    `kind` is "stir" or "asm"; `lines` (asm only) is the front end's line table (see
    syntax.asm_parser.AsmLine), which a front end may build on first access (`defer_lines`).
    `target_info` is what the file says about its target (`TargetInfo`; the asm front end
    fills it, STIR files leave it empty); `target` and `target_span` are its processor and the
    line naming it.  `front_end_state` is private to the front end that made the module (what
    an incremental re-parse of the next version reuses).  Compared by identity.
    """

    path: str
    kind: str
    text: str
    functions: list[Function]
    diagnostics: list[Any]
    target_info: TargetInfo
    front_end_state: Any

    def __init__(self, path: str, kind: str, text: str, functions: list[Function] | None = None,
                 diagnostics: list[Any] | None = None, lines: list[Any] | None = None) -> None:
        self.path = path
        self.kind = kind
        self.text = text
        self.functions = [] if functions is None else functions
        self.diagnostics = [] if diagnostics is None else diagnostics
        self._lines: list[Any] = [] if lines is None else lines
        self._make_lines: Callable[[], list[Any]] | None = None
        self.target_info = TargetInfo()
        self.front_end_state = None

    @property
    def target(self) -> str | None:
        """The processor the file names (``"gfx942"``), or None."""
        return self.target_info.cpu

    @property
    def target_span(self) -> Span | None:
        """The line that names the processor, or None."""
        return self.target_info.span

    @property
    def lines(self) -> list[Any]:
        if self._make_lines is not None:
            make, self._make_lines = self._make_lines, None
            self._lines = make()
        return self._lines

    @lines.setter
    def lines(self, value: list[Any]) -> None:
        self._lines = value
        self._make_lines = None

    def defer_lines(self, make: Callable[[], list[Any]]) -> None:
        """Let `lines` be built by `make()` when first read (most uses never read it)."""
        self._make_lines = make

    def __repr__(self) -> str:
        return f"<module {self.path} ({self.kind}, {len(self.functions)} functions)>"


class bulk_construction:
    """Pause the cyclic garbage collector while a front end builds a whole file's IR.

    A parse allocates several nodes per line and frees almost none while the front ends'
    line caches keep hundreds of thousands of objects alive: the worst case for generational
    collection, whose repeated scans cost more than the parse itself on large files.
    Collection is only postponed (and re-enabled only if it was on), so nothing leaks.
    Use as ``with bulk_construction(): ...`` (a plain context manager class: `contextlib`
    is not needed at start-up).
    """

    __slots__ = ("_was_enabled",)

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was_enabled:
            gc.enable()
