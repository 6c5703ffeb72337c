"""Blocks as the user wrote them: the label, "the entry", or "the block after line N".

The assembly front end splits a kernel into blocks at branches and gives a block without a
label an internal name (`<label>_<k>`, `entry`) that appears nowhere in the file.  Every
message a person reads (the CLI's plan, check, insert --explain, the pass's warnings, the
hardware checker's paths, the editors' hints and hovers) names a block with these words
instead, so the same block reads the same everywhere.  STIR writes its labels (`^loop`), so
there the label is the name.

Lives in `ir/` because it reads only blocks, labels and spans, and every layer above
(analysis, waitcnt, validate, cli, lsp) names blocks.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from .nodes import Block, Function


def _first(block: Any) -> Any:
    return next((inst for inst in block.instrs if inst.span is not None and not inst.is_phi), None)


def _last(block: Any) -> Any:
    return next((inst for inst in reversed(block.instrs) if inst.span is not None and not inst.is_phi), None)


def display_name(fn: Function, index: int, stir: bool = False, quote: str = "`") -> str:
    """The name of `fn.blocks[index]` as a noun phrase: `` `.LBB0_2` `` (the label, in
    `quote`s), "the entry" (a kernel's first block), or "the block after line N" (a block the
    front end split off after a branch without a label)."""
    block = fn.blocks[index]
    if stir:
        return f"{quote}^{block.name}{quote}"
    if index == 0:
        return "the entry"
    first = _first(block)
    if first is not None and first.is_label:
        return f"{quote}{block.name}{quote}"
    for j in range(index - 1, -1, -1):
        last = _last(fn.blocks[j])
        if last is not None:
            return f"the block after line {last.span.end_line}"
    line = first.span.line - 1 if first is not None else (block.span.line if block.span else 0)
    return f"the block after line {line}"


def block_name(fn: Function, block: Block, stir: bool | None = None, quote: str = "") -> str:
    """`display_name` of one block of `fn` (a linear search: for the rare message that names
    a block; `BlockNames` indexes a whole module).  `stir` None: a function with several
    blocks and no label instruction is STIR (assembly reaches every block but the first
    through a label, STIR writes labels as block headers, not instructions)."""
    if stir is None:
        stir = len(fn.blocks) > 1 and not any(inst.is_label for b in fn.blocks for inst in b.instrs)
    for i, b in enumerate(fn.blocks):
        if b is block:
            return display_name(fn, i, stir, quote)
    return f"{quote}{block.name}{quote}"


class BlockNames:
    """Display names of one module's blocks, per function (`display_name`).

    Indexed once (one dict entry per block); a name is worked out when first asked for, from
    its block and the ones before it, so a hint request on a 30k-line kernel does not read
    every instruction.  `quote` surrounds labels: a backtick for Markdown (the editors), ""
    for plain text (the CLI)."""

    def __init__(self, module: Any, language: str | None = None, quote: str = "`"):
        kind = language or getattr(module, "kind", None)
        self._stir = kind == "stir"
        self._quote = quote
        #: (function, block) -> (function, position of the block in the text)
        self._where: dict[tuple[str, str], tuple[Any, int]] = {}
        self._names: dict[tuple[str, str], str] = {}
        for fn in getattr(module, "functions", None) or []:
            for i, block in enumerate(fn.blocks):
                self._where.setdefault((fn.name, block.name), (fn, i))

    def block(self, function: str, block: str | None) -> str:
        """A block as a noun phrase (`` `.LBB0_2` ``, "the entry", "the block after line 414")."""
        if block is None:
            return "the kernel start"
        key = (function, block)
        name = self._names.get(key)
        if name is None:
            where = self._where.get(key)
            name = self._names[key] = (display_name(where[0], where[1], self._stir, self._quote)
                                       if where is not None else f"{self._quote}{block}{self._quote}")
        return name

    def in_text_order(self, function: str, blocks: Iterable[str | None]) -> list[str | None]:
        """Blocks sorted as they appear in the text (None, the kernel start, first)."""
        return sorted(set(blocks), key=lambda b: (-1, "") if b is None else
                      (self._where.get((function, b), (None, 1 << 30))[1], b))

    def preds(self, function: str, preds: Iterable[str | None]) -> str:
        """"from A", "from A and B", "from A, B and C" (in text order, duplicates once)."""
        seen: list[str] = []
        for p in self.in_text_order(function, preds):
            name = "the kernel start" if p is None else self.block(function, p)
            if name not in seen:
                seen.append(name)
        if len(seen) <= 1:
            return "from " + (seen[0] if seen else "nowhere")
        return "from " + ", ".join(seen[:-1]) + " and " + seen[-1]
