"""Records of the AMDGPU assembly front end: the line table (`AsmLine`) and one line's syntax.

`LineSyntax` is what parsing one physical line in isolation gives (the memoised unit of the
front end); `AsmLine` is what `Module.lines` shows the editor.  Both are plain data, shared by
the line parser, the structure pass and the incremental re-parse.
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any

    from ..ir import Instruction, Operand, Span

    #: (severity, code, message, start, end): columns 0-based, end exclusive.
    Problem = tuple[str, str, str, int, int]
    #: modifiers as immutable data: ((kind, ((key, value), ...)), ...)
    ModData = tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]
    #: `LineSyntax.operands`: (explicit operands in text order, modifier items, dual split or -1)
    SplitInput = tuple[tuple[Operand, ...], tuple[str, ...], int] | tuple[()]
    #: a parsed instruction: mnemonic, dsts, srcs, suffix, mods, branch target, warnings, split input
    ParsedInstruction = tuple[str, tuple[Operand, ...], tuple[Operand, ...], str, ModData, str | None,
                              tuple[Problem, ...], SplitInput]

LINE_KINDS = ("label", "directive", "instruction", "comment", "blank", "error", "verbatim")


class AsmLine:
    """One physical line of the file (`Module.lines[i]` is line ``i + 1``).

    `kind` is one of label, directive, instruction, comment, blank, error, verbatim
    (inside ``.amdhsa_kernel``/``.amdgpu_metadata``/``.macro`` blocks).  `span` covers the
    whole line without its newline; `text` is the line exactly as in the file.  A line
    ``name: s_nop 0`` is an instruction line whose `label` is also set.  `indent` is the
    leading whitespace, which the printer copies for inserted lines.  `label_span` is the
    label name (without the colon), for go-to-definition and rename in the editor.
    """

    __slots__ = ("kind", "span", "text", "instruction", "label", "directive", "indent", "comment", "label_span")
    kind: str
    span: Span
    text: str
    instruction: Instruction | None
    label: str | None
    directive: str | None
    indent: str
    comment: str | None
    label_span: Span | None

    def __init__(self, kind: str, span: Span, text: str, instruction: Instruction | None = None,
                 label: str | None = None, directive: str | None = None, indent: str = "",
                 comment: str | None = None, label_span: Span | None = None) -> None:
        self.kind = kind
        self.span = span
        self.text = text
        self.instruction = instruction
        self.label = label
        self.directive = directive
        self.indent = indent
        self.comment = comment
        self.label_span = label_span

    def __repr__(self) -> str:
        return f"AsmLine({self.kind!r}, line {self.span.line}, {self.text!r})"

    @property
    def line(self) -> int:
        return self.span.line



#: `LineSyntax.role`: what the structure pass does with the line
ROLE_SKIP, ROLE_INSTRUCTION, ROLE_OTHER = 0, 1, 2

LineSyntax = namedtuple("LineSyntax", (
    "kind", "indent", "label", "label_range", "directive", "args", "mnemonic", "code_range", "dsts", "srcs",
    "suffix", "mods", "comment", "branch_target", "problems", "ends_in_comment", "role", "flow", "operands"),
    defaults=(0, None, None, None, "", None, None, (), (), "", (), None, None, (), False, ROLE_SKIP, 0, ()))
LineSyntax.__doc__ = """The immutable result of parsing one line in isolation (the memoised unit).

Column ranges are 0-based and end-exclusive.  `mods` holds modifiers as
``(kind, ((key, value), ...))`` with list values as tuples, to stay hashable/immutable.
`role` tells the structure pass whether it skips the line (comments, blanks, errors,
verbatim text: ROLE_SKIP), sees a plain instruction without a label (ROLE_INSTRUCTION) or
must look closer (labels, directives: ROLE_OTHER); `flow` holds an instruction's FLOW_* bits.
`operands` is what the destination/source split was made from, for a later re-split of the
same line (physical VGPRs under ``s_set_vgpr_msb``, `asm_vgpr_msb`): ``(explicit operands in
text order, modifier items, index of a dual instruction's second half or -1)``; ``()`` for
lines without an instruction and for instructions whose operands are kept verbatim.
A named tuple: the cheapest immutable record to build and to read.
"""

