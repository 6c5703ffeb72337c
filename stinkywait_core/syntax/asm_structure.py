"""The whole-file passes of the AMDGPU assembly front end: the line scan and the structure.

* `_scan`: every line's syntax (`asm_line.parse_line`, memoised), with the state that runs
  across lines (an open ``/* */`` comment, the `.set` symbol table, verbatim blocks such as
  ``.amdhsa_kernel`` and ``.macro``);
* `_build`: kernels (`Function`) and basic blocks from labels, function symbols and block
  enders;
* `_link_all`: the CFG edges (branch targets, fall-through);
* `_line_table`: `Module.lines`, built on first use.

`_AsmState` keeps what a parse produced, for the lazy line table and the next incremental
re-parse (`asm_incremental`).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right

from ..diagnostics import ERROR, WARNING, Diagnostic
from ..ir import Block, Function, Imm, Instruction, Modifier, Reg, Span, Special, Str
from .asm_expr import EMPTY_SYMBOLS, _define
from .asm_flow import (FLOW_ENDS_BLOCK, FLOW_NO_SUCCESSOR, FLOW_VGPR_MODE, INDIRECT_JUMPS, branch_target,
                       has_no_successor, is_call, is_unconditional_branch, takes_label)
from .asm_lex import _BLOCK_END_ALIASES, _IDENT, VERBATIM_BLOCKS
from .asm_line import parse_line
from .asm_records import ROLE_OTHER, AsmLine, LineSyntax

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any, Callable

    from .asm_records import ModData

    #: see `_build`
    Reuse = Callable[[int, LineSyntax, bool], Instruction | None]

#: Scan state at a line start: (inside `/*`, `.set` table, open verbatim block's end words,
#: line index of that block's directive, the directive).
ScanState = tuple

_START_STATE: ScanState = (False, EMPTY_SYMBOLS, None, -1, "")


class _AsmState:
    """What a parse keeps: the source of the lazy line table and of the next incremental parse.

    Per line: its text (`raw`), its syntax, its instruction and LABEL pseudo-instruction.
    Sorted line indices of the lines the whole-file passes look at: those with problems,
    directives, branch targets.  `changes` / `change_at`: the scan state after every line
    that changed it (the state at any line start is found by bisection).  `blocks` and
    `functions`: the structure as built (`_BlockRecord`, `_FunctionRecord`), kept apart from
    the IR objects, which the analysis may mutate.  `superseded` is set once an incremental
    parse has taken this version's instructions over (their spans then describe that newer
    version).  `msb_setters` / `mode_setregs`: how many ``s_set_vgpr_msb`` / ``s_setreg*``
    instructions the functions hold; `vgpr_modes`: the effective VGPR MSB mode each
    instruction's operands were made under (`asm_vgpr_msb`), `msb_blocks` per block record the
    mode it was read with, its warnings and its mode-changing instructions; `target`: what the file says about its target
    (`asm_target`).
    """

    __slots__ = ("path", "raw", "syntax", "line_inst", "label_inst", "problem_idx", "directive_idx",
                 "target_idx", "change_at", "changes", "end_state", "blocks", "block_first", "functions",
                 "struct_diags", "superseded", "msb_setters", "mode_setregs", "vgpr_modes", "msb_blocks", "target",
                 "spliced", "target_diags")

    def __init__(self, path: str, raw: list[str]) -> None:
        self.path = path
        self.raw = raw
        self.syntax: list[LineSyntax] = []
        self.line_inst: list[Instruction | None] = []
        self.label_inst: list[Instruction | None] = []
        self.problem_idx: list[int] = []
        self.directive_idx: list[int] = []
        self.target_idx: list[int] = []
        self.change_at: list[int] = [0]
        self.changes: list[ScanState] = [_START_STATE]
        self.end_state: ScanState = _START_STATE
        self.blocks: list[_BlockRecord] = []
        #: each block record's first line index (sorted: blocks are in line order)
        self.block_first: list[int] = []
        self.functions: list[_FunctionRecord] = []
        #: diagnostics of the structure pass (duplicate labels, unknown branch targets)
        self.struct_diags: list[Diagnostic] = []
        self.superseded = False
        self.msb_setters = 0
        self.mode_setregs = 0
        self.vgpr_modes: dict[Instruction, int] = {}
        self.msb_blocks: list[tuple[int, list[tuple], list[Instruction]]] = []
        self.target: Any = None
        #: set by an incremental re-parse that spliced the structure: (the edited block record
        #: or -1, the edited lines (first, last, 1-based), the previous version's instructions
        #: of the edited lines)
        self.spliced: tuple[int, tuple[int, int], list[Instruction | None]] | None = None
        self.target_diags: list[Diagnostic] = []

    def state_at(self, idx: int) -> ScanState:
        """The scan state at the start of line index `idx`."""
        return self.changes[bisect_right(self.change_at, idx) - 1]


#: A block as built: (label, instructions, successor labels, span, first line index, last
#: line index); the instructions as a tuple (the IR block's list is the analysis's to change).
_BlockRecord = tuple
#: A function as built: (name, name span, span, first block index, end block index).
_FunctionRecord = tuple


class _Fn:
    """A kernel being assembled from consecutive instruction lines."""

    __slots__ = ("name", "first_line", "name_span", "blocks", "first_idx", "open_block", "last_line",
                 "terminated", "counters", "last_label")

    def __init__(self, name: str, first_line: int, name_span: Span | None) -> None:
        self.name = name
        self.first_line = first_line
        self.name_span = name_span
        self.blocks: list[Block] = []
        #: line index of each block's first line (its label, or its first instruction)
        self.first_idx: list[int] = []
        self.open_block: Block | None = None
        self.last_line = 0
        self.terminated = False
        self.counters: dict[str, int] = {}
        self.last_label = ""


def _mods_from(data: ModData) -> dict[str, Modifier]:
    out: dict[str, Modifier] = {}
    if not data:
        return out
    for kind, fields in data:
        out[kind] = Modifier(kind, {k: (list(v) if isinstance(v, tuple) else v) for k, v in fields})
    return out


def _diag(severity: str, code: str, message: str, line: int, s: int, e: int) -> Diagnostic:
    return Diagnostic(severity, code, message, line, s + 1, line, e + 1)


DUPLICATE_LABEL = "asm-duplicate-label"
_DUPLICATE = re.compile(r"label '(.*)' is already defined on line (\d+)")


def _duplicate_message(name: str, first: int) -> str:
    return f"label '{name}' is already defined on line {first}"


def moved_duplicate_message(message: str, from_idx: int, delta: int) -> str:
    """A duplicate-label message of the previous version after the lines from index
    `from_idx` on moved by `delta` (the line it names, the first definition, moves with them)."""
    m = _DUPLICATE.fullmatch(message)
    if m is None or int(m.group(2)) - 1 < from_idx:
        return message
    return _duplicate_message(m.group(1), int(m.group(2)) + delta)



def _new_instruction(ls: LineSyntax, idx: int, raw: list[str]) -> Instruction:
    s, e = ls.code_range
    lineno = idx + 1
    return Instruction(ls.mnemonic, list(ls.dsts), list(ls.srcs), _mods_from(ls.mods) if ls.mods else {},
                       Span(lineno, s + 1, lineno, e + 1), raw[idx][s:e], None, ls.comment, ls.suffix)


def _verbatim_end_words(directive: str) -> tuple[str, ...]:
    end = VERBATIM_BLOCKS[directive]
    return _BLOCK_END_ALIASES.get(end, (end,))


def _scan(st: _AsmState, start: int, state: ScanState, stop: int | None = None) -> ScanState:
    """Line pass from line index `start` (in scan `state`) up to `stop` (default: the end):
    per-line syntax (cached), verbatim blocks, comments, `.set` symbols.  Appends to the
    per-line lists and to the sorted index lists; returns the state at `stop`."""
    raw = st.raw
    stop = len(raw) if stop is None else stop
    syntax = st.syntax
    problem_idx = st.problem_idx
    directive_idx = st.directive_idx
    target_idx = st.target_idx
    in_comment, symbols, block_end, block_line, block_dir = state
    with_symbols = len(symbols) > 0
    for idx in range(start, stop):
        line = raw[idx]
        if block_end is not None:
            stripped = line.strip()
            word = stripped.split(None, 1)[0].lower() if stripped else ""
            if word in block_end:
                syntax.append(LineSyntax("directive", len(line) - len(line.lstrip(" \t")), directive=word))
                block_end = None
                st.change_at.append(idx + 1)
                st.changes.append((in_comment, symbols, None, -1, ""))
            else:
                syntax.append(_VERBATIM)
            continue
        # no symbol table when it does not apply (symbols matter in register ranges and wait
        # counts): the cache key then skips hashing it; and the line alone outside a comment
        # (the cache then keys on the string itself, without building a tuple)
        ls = (parse_line(line, in_comment, symbols) if with_symbols and ("[" in line or "waitcnt" in line)
              else parse_line(line, True) if in_comment else parse_line(line))
        syntax.append(ls)
        if ls.problems:
            problem_idx.append(idx)
        changed = ls.ends_in_comment is not in_comment
        if changed:
            in_comment = ls.ends_in_comment
        if ls.branch_target:
            target_idx.append(idx)
        elif ls.kind == "directive":
            directive_idx.append(idx)
            d = ls.directive
            if d in VERBATIM_BLOCKS:
                block_end, block_line, block_dir = _verbatim_end_words(d), idx, d
                changed = True
            elif d in (".set", ".equ", "="):
                new = _define(ls.args, symbols)
                if new is not symbols:
                    symbols = new
                    with_symbols = len(symbols) > 0
                    changed = True
        if changed:
            st.change_at.append(idx + 1)
            st.changes.append((in_comment, symbols, block_end, block_line, block_dir))
    return (in_comment, symbols, block_end, block_line, block_dir)


_VERBATIM = LineSyntax("verbatim")


def _scan_diagnostics(st: _AsmState) -> list[Diagnostic]:
    """The scan's diagnostics in line order: every line's problems, then the end-of-file
    warnings (an unclosed verbatim block or ``/*``)."""
    raw, syntax = st.raw, st.syntax
    diags: list[Diagnostic] = []
    for idx in st.problem_idx:
        lineno = idx + 1
        for sev, code, msg, s, e in syntax[idx].problems:
            diags.append(_diag(sev, code, msg, lineno, s, e))
    in_comment, _, block_end, block_line, block_dir = st.end_state
    if block_end is not None:
        lineno = block_line + 1
        diags.append(Diagnostic(WARNING, "asm-unterminated", f"'{block_dir}' block is not closed before the end of the file",
                                lineno, 1, lineno, len(raw[block_line]) + 1))
    if in_comment and raw:
        diags.append(Diagnostic(WARNING, "asm-unterminated", "'/*' comment is not closed before the end of the file",
                                len(raw), 1, len(raw), len(raw[-1]) + 1))
    return diags


def _line_table(st: _AsmState) -> list[AsmLine]:
    """`Module.lines`, built on first use from the kept per-line syntax."""
    out: list[AsmLine] = []
    line_inst = st.line_inst
    for idx, (line, ls) in enumerate(zip(st.raw, st.syntax)):
        lineno = idx + 1
        span = Span(lineno, 1, lineno, len(line) + 1)
        if ls is _VERBATIM:
            out.append(AsmLine("verbatim", span, line, indent=_indent(line)))
            continue
        label_span = None
        if ls.label_range is not None and ls.label is not None:
            start = ls.label_range[0]
            label_span = Span(lineno, start + 1, lineno, start + 1 + len(ls.label))
        out.append(AsmLine(ls.kind, span, line, line_inst[idx], ls.label, ls.directive, line[:ls.indent], ls.comment,
                           label_span))
    return out


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]



def _declared_functions(st: _AsmState) -> set[str]:
    """Symbols declared as functions: `.type x,@function`, `.amdhsa_kernel x`, and `.globl x`
    unless typed as something else (data)."""
    typed_fn: set[str] = set()
    typed_other: set[str] = set()
    globl: set[str] = set()
    syntax = st.syntax
    for idx in st.directive_idx:
        ls = syntax[idx]
        d = ls.directive
        if d == ".type":
            name, _, kind = ls.args.replace(",", " ", 1).partition(" ")
            (typed_fn if "function" in kind.lower() else typed_other).add(name.strip())
        elif d in (".globl", ".global"):
            globl.update(n.strip() for n in ls.args.split(",") if n.strip())
        elif d == ".amdhsa_kernel":
            typed_fn.add(ls.args.strip())
    return typed_fn | (globl - typed_other)


def _symbol_of(op) -> str | None:
    """The symbol a call-address operand names: ``func@rel32@lo+4`` -> ``func``, a bare label."""
    if op.__class__ is Str:
        return op.value  # type: ignore[union-attr]
    if op.__class__ is Special and "@" in op.spelling:  # type: ignore[union-attr]
        m = _IDENT.match(op.spelling)  # type: ignore[union-attr]
        return m.group().split("@", 1)[0] if m is not None else None
    return None


def mark_callable(st: _AsmState, functions: list[Function]) -> None:
    """Set `Function.callable` (see there): functions typed ``@function`` without an
    ``.amdhsa_kernel`` descriptor whose body never ends the program (``s_endpgm``), and every
    function another function calls (``s_call_b64 sD, f``, or ``s_swappc_b64`` through an address
    built from ``f@rel32``/``f@gotpcrel32`` in the call's block)."""
    typed: set[str] = set()
    kernels: set[str] = set()
    syntax = st.syntax
    for idx in st.directive_idx:
        ls = syntax[idx]
        if ls.directive == ".type":
            name, _, kind = ls.args.replace(",", " ", 1).partition(" ")
            if "function" in kind.lower():
                typed.add(name.strip())
        elif ls.directive == ".amdhsa_kernel":
            kernels.add(ls.args.strip())
    called: set[str] = set()
    #: functions with a block ending the program: `s_endpgm*` always ends its block
    #: (`asm_flow`), so only the blocks' last instructions are looked at
    ends: set[Function] = set()
    for f in functions:
        for b in f.blocks:
            term = b.terminator()
            if term is None:
                continue
            if term.mnemonic.startswith("s_endpgm"):
                ends.add(f)
                continue
            if not is_call(term.mnemonic):
                continue
            for inst in b.instrs if not term.mnemonic.startswith("s_call_") else (term,):
                if inst.is_label:
                    continue
                for op in inst.srcs:
                    name = _symbol_of(op)
                    if name is not None and name != f.name:
                        called.add(name)
    for f in functions:
        if f.name in called:
            f.callable = True
        elif f.name in typed and f.name not in kernels:
            f.callable = f not in ends
        else:
            f.callable = False


def _build(st: _AsmState, reuse: Reuse | None) -> list[Function]:
    """Structure pass: kernels, basic blocks, label/branch bookkeeping; returns the functions
    (not yet linked).

    Fills `st.line_inst`, `st.label_inst`, `st.blocks`, `st.functions` and `st.struct_diags`
    (duplicate labels; unknown branch targets are found when the functions are linked).
    `reuse(idx, ls, label)` may supply the previous version's instruction for line index
    `idx` (its LABEL pseudo-instruction when `label`); None builds a new one.
    """
    raw, syntax = st.raw, st.syntax
    declared = _declared_functions(st)
    targets = {syntax[i].branch_target for i in st.target_idx}
    n = len(raw)
    line_inst: list[Instruction | None] = [None] * n
    st.line_inst = line_inst
    st.label_inst = [None] * n
    st.blocks = []
    st.block_first = []
    st.functions = []
    st.struct_diags = []
    st.msb_setters = st.mode_setregs = 0
    out: list[Function] = []
    fn: _Fn | None = None
    pending: list[tuple[str, int, tuple[int, int]]] = []
    default_name = _default_name(st.path)
    seen_labels: dict[str, int] = {}
    new_tuple = tuple.__new__  # Span(...) without the named tuple's Python-level __new__
    conditional = 0  # depth of .if/.endif: both arms are parsed, so a label may legally repeat
    # the open function's open block, last line and "ends the program" flag, kept in locals
    # on the hot path (plain instruction lines) and written back before anything else reads them
    blk: Block | None = None
    last_line = 0
    terminated = False
    for idx, ls in enumerate(syntax):
        role = ls.role
        if not role:
            continue
        if role == ROLE_OTHER:
            if fn is not None:
                fn.open_block, fn.last_line, fn.terminated = blk, last_line, terminated
            d = ls.directive
            if d is not None:
                if d.startswith(".if"):
                    conditional += 1
                elif d == ".endif":
                    conditional = max(0, conditional - 1)
            name = ls.label
            if name is not None:
                lineno = idx + 1
                if name in seen_labels and not name.isdigit() and not conditional:
                    s, e = ls.label_range
                    st.struct_diags.append(_diag(ERROR, DUPLICATE_LABEL, _duplicate_message(name, seen_labels[name]),
                                                 lineno, s, e))
                seen_labels.setdefault(name, lineno)
                if name.startswith(".Lfunc_end"):
                    fn = _close(fn, st, out)
                    pending = []
                else:
                    # a kernel declared as a function symbol runs to the next one (or .Lfunc_end);
                    # otherwise a label after the program ended that nothing branches to starts one
                    if fn is not None and (name in declared or (fn.terminated and fn.name not in declared
                                                                 and name not in targets
                                                                 and not name.startswith(".L"))):
                        fn = _close(fn, st, out)
                    if fn is None:
                        # labels seen before a function symbol (data, section markers) are not its blocks
                        if name in declared:
                            pending = []
                        pending.append((name, idx, ls.label_range))
                    else:
                        _start_block(fn, name, idx, ls.label_range, st, reuse)
            if fn is not None:
                blk, last_line, terminated = fn.open_block, fn.last_line, fn.terminated
            if ls.kind != "instruction":
                continue
        if fn is None:
            fn = _open(pending, idx + 1, default_name, declared, st, reuse)
            pending = []
            blk = fn.open_block
        inst = None if reuse is None else reuse(idx, ls, False)
        if inst is None:  # `_new_instruction`, inlined: once per instruction line of a cold parse
            # one unpacking reads the fields it needs for less than their attribute reads
            _, _, _, _, _, _, mnemonic, (s, e), dsts, srcs, suffix, mods, comment, _, _, _, _, _, _ = ls
            lineno = idx + 1
            inst = Instruction(mnemonic, list(dsts), list(srcs), _mods_from(mods) if mods else {},
                               new_tuple(Span, (lineno, s + 1, lineno, e + 1)), raw[idx][s:e], None, comment, suffix)
        line_inst[idx] = inst
        if blk is None:
            blk = _unlabelled_block(fn, idx, inst)
        blk.instrs.append(inst)
        last_line = idx + 1
        flow = ls.flow
        if flow:
            terminated = bool(flow & FLOW_NO_SUCCESSOR)
            if flow & FLOW_ENDS_BLOCK:
                blk = None
            elif flow & FLOW_VGPR_MODE:
                if ls.mnemonic == "s_set_vgpr_msb":
                    st.msb_setters += 1
                else:
                    st.mode_setregs += 1
        else:
            terminated = False
    if fn is not None:
        fn.open_block, fn.last_line, fn.terminated = blk, last_line, terminated
    _close(fn, st, out)
    return out


def _unlabelled_block(fn: _Fn, idx: int, inst: Instruction) -> Block:
    """A block started by an instruction after a block ender (or at a kernel's start)."""
    if not fn.blocks:
        name = "entry"
        fn.last_label = name
    else:
        base = fn.last_label
        k = fn.counters.get(base, 0) + 1
        fn.counters[base] = k
        name = f"{base}_{k}"
    blk = fn.open_block = Block(name, span=inst.span)
    fn.blocks.append(blk)
    fn.first_idx.append(idx)
    return blk


def _default_name(path: str) -> str:
    # os.path, not pathlib: pathlib (and urllib behind it) would cost every CLI start ~10 ms
    stem = os.path.splitext(os.path.basename(path))[0] if path and not path.startswith("<") else ""
    return stem or "main"


def _open(pending: list[tuple[str, int, tuple[int, int]]], lineno: int, default_name: str,
          declared: set[str], st: _AsmState, reuse: Reuse) -> _Fn:
    if not pending:
        return _Fn(default_name, lineno, None)
    chosen = next((p for p in pending if p[0] in declared), pending[0])
    name, idx, (s, e) = chosen
    fb = _Fn(name, pending[0][1] + 1, Span(idx + 1, s + 1, idx + 1, s + 1 + len(name)))
    for lname, lidx, lrange in pending:
        _start_block(fb, lname, lidx, lrange, st, reuse)
    return fb


def _start_block(fn: _Fn, name: str, idx: int, rng: tuple[int, int], st: _AsmState, reuse: Reuse) -> None:
    """A label starts a new block whose first instruction is the LABEL pseudo-instruction."""
    label_inst = None if reuse is None else reuse(idx, st.syntax[idx], True)
    if label_inst is None:
        lineno = idx + 1
        label_inst = Instruction("LABEL", srcs=[Str(name)], span=Span(lineno, rng[0] + 1, lineno, rng[1] + 1),
                                 text=st.raw[idx][rng[0]:rng[1]], is_label=True)
    st.label_inst[idx] = label_inst
    blk = Block(name, [label_inst], span=label_inst.span)
    fn.blocks.append(blk)
    fn.first_idx.append(idx)
    fn.open_block = blk
    fn.last_label = name
    fn.last_line = idx + 1
    fn.terminated = False


def _close(fn: _Fn | None, st: _AsmState, out: list[Function]) -> None:
    """Finish a kernel: block and function spans, the `Function`, and its records."""
    if fn is None or not fn.blocks:
        return None
    first = fn.blocks[0]
    start_line = first.span.line if first.span else fn.first_line
    start_col = first.span.col if first.span else 1
    span = Span(start_line, start_col, fn.last_line, len(st.raw[fn.last_line - 1]) + 1)
    first_block = len(st.blocks)
    records = st.blocks
    for b, first_idx in zip(fn.blocks, fn.first_idx):
        end = b.instrs[-1].span
        b.span = Span(b.span.line, b.span.col, end.end_line, end.end_col)
        records.append((b.label, tuple(b.instrs), (), b.span, first_idx, end.line - 1))
        st.block_first.append(first_idx)
    st.functions.append((fn.name, fn.name_span, span, first_block, len(records)))
    out.append(Function(fn.name, fn.blocks, span, fn.name_span))
    return None


def _link_all(functions: list[Function], st: _AsmState) -> None:
    """CFG edges: branch target first, then fall-through unless the block cannot continue.

    Records each block's successor labels in `st.blocks`; unknown targets are warnings.
    A call into the function itself adds the edges `_local_call_edges` describes.
    """
    records = st.blocks
    k = 0
    for f in functions:
        labels = {b.label for b in f.blocks}
        blocks = f.blocks
        calls = False
        numeric: dict[Instruction, str] | None = None
        for i, b in enumerate(blocks):
            term = b.terminator()
            succs: list[str] = []
            if term is not None and takes_label(term.mnemonic):
                target = branch_target(term.srcs)
                if target is not None:
                    if target in labels:
                        succs.append(target)
                    elif term.span is not None:
                        st.struct_diags.append(Diagnostic(
                            WARNING, "asm-unknown-label", f"branch target '{target}' is not a label of function '{f.name}'",
                            term.span.line, term.span.col, term.span.end_line, term.span.end_col, function=f.name))
            elif term is not None and term.mnemonic in INDIRECT_JUMPS:
                target = _computed_jump_target(b, term, labels)
                if target is not None:
                    succs.append(target)
            elif term is not None and is_call(term.mnemonic):
                calls = True
                if term.mnemonic.startswith("s_call_") and branch_target(term.srcs) is None:
                    if numeric is None:
                        numeric = _numeric_call_targets(f)
                    if term not in numeric and term.span is not None:
                        st.struct_diags.append(Diagnostic(
                            WARNING, "asm-numeric-call",
                            f"{term.mnemonic} to a numeric offset is not resolved (no `// ADDRESS: WORDS` comments "
                            "as llvm-objdump writes them, or the target does not start a block): the callee is not "
                            "analysed; assumed: it waits at its entry, returns with everything but stores drained "
                            "and with the VGPR MSB mode 0 (the calling convention); give its target a label",
                            term.span.line, term.span.col, term.span.end_line, term.span.end_col, function=f.name))
            falls = term is None or not (is_unconditional_branch(term.mnemonic) or has_no_successor(term.mnemonic))
            if falls and i + 1 < len(blocks) and blocks[i + 1].label not in succs:
                succs.append(blocks[i + 1].label)
            b.succ_labels = succs
        if calls:
            _local_call_edges(f, labels, numeric or {})
        for b in blocks:
            rec = records[k]
            records[k] = (rec[0], rec[1], tuple(b.succ_labels), rec[3], rec[4], rec[5])
            k += 1
        f.link()


_ADDRESS = re.compile(r"^\s*([0-9A-Fa-f]{8,16}):\s+[0-9A-Fa-f]{8}\b")


def _address(inst: Instruction) -> int | None:
    """The byte address llvm-objdump wrote after an instruction (``// 000000005090: BA640002``)."""
    m = _ADDRESS.match(inst.comment) if inst.comment else None
    return int(m.group(1), 16) if m is not None else None


def _numeric_call_targets(f: Function) -> dict[Instruction, str]:
    """``s_call_b64/i64 sD, N`` with a numeric offset (llvm-objdump's form: N dwords past the
    next instruction) -> the label of the block starting at that address, for the calls whose
    address and target the disassembler's comments give and whose target starts a block."""
    starts: dict[int, str] = {}
    calls: list[tuple[Instruction, int]] = []
    for b in f.blocks:
        first = next((i for i in b.instrs if not i.is_label), None)
        if first is not None:
            a = _address(first)
            if a is not None:
                starts.setdefault(a, b.label)
        term = b.terminator()
        if term is not None and term.mnemonic.startswith("s_call_"):
            off = next((op.value for op in term.srcs if op.__class__ is Imm), None)  # type: ignore[union-attr]
            a = _address(term)
            if off is not None and a is not None:
                off = off - 0x10000 if off >= 0x8000 else off
                calls.append((term, a + 4 + 4 * off))
    return {c: starts[t] for c, t in calls if t in starts}


def _local_call_edges(f: Function, labels: set[str], numeric: dict[Instruction, str]) -> None:
    """Calls to code of the function itself (TensileLite's activation subroutines:
    ``s_add_i32 s8, label_Activation_Gelu_VW4, 0x4`` ... ``s_swappc_b64 s[58:59], s[12:13]``,
    returning with ``s_setpc_b64 s[58:59]``).

    A call through a register may go to any label whose address the function takes (a label
    used as an operand value, not as a branch target); ``s_call_b64 sD, label`` to its label.
    Where a function makes such calls, a return (an ``s_setpc`` not resolved to a label) may
    go back after any of them, and the code after a call is reached only that way (no
    fall-through edge past the callee, when some return was found).  Over-approximate but sound
    for the dataflow: every path the hardware can take is in the CFG.
    """
    taken: list[str] = []
    for b in f.blocks:
        for inst in b.instrs:
            if inst.is_label or takes_label(inst.mnemonic):
                continue
            for op in inst.srcs:
                if op.__class__ is Str and op.value in labels and op.value not in taken:  # type: ignore[union-attr]
                    taken.append(op.value)  # type: ignore[union-attr]
    returns: list[str] = []
    blocks = f.blocks
    for i, b in enumerate(blocks):
        term = b.terminator()
        if term is None or not is_call(term.mnemonic):
            continue
        target = (numeric.get(term) or branch_target(term.srcs)) if term.mnemonic.startswith("s_call_") else None
        if term.mnemonic.startswith("s_call_") and target is None:
            continue  # a numeric offset not resolved (warned): a call to code not seen
        callees = [target] if target in labels else taken if target is None else []
        for callee in callees:
            if callee not in b.succ_labels:
                b.succ_labels.append(callee)
        if callees and i + 1 < len(blocks) and blocks[i + 1].label not in returns:
            returns.append(blocks[i + 1].label)
    if not returns:
        return
    returned = False
    for b in blocks:
        term = b.terminator()
        if term is not None and term.mnemonic in INDIRECT_JUMPS and not b.succ_labels:
            b.succ_labels.extend(returns)
            returned = True
    if not returned:
        return
    # the code after a local call is reached through the subroutine's returns, not directly
    # (an edge that skipped the callee would bring the caller's state past it unchanged)
    for i, b in enumerate(blocks):
        term = b.terminator()
        if term is None or not is_call(term.mnemonic) or i + 1 >= len(blocks):
            continue
        nxt = blocks[i + 1].label
        if nxt in b.succ_labels and any(s != nxt for s in b.succ_labels):
            b.succ_labels.remove(nxt)


def _computed_jump_target(block: Block, jump: Instruction, labels: set[str]) -> str | None:
    """The label an indirect jump goes to when its address was computed from that label in the
    same block: LLVM's long branch before gfx1250 (``s_getpc_b64 s[6:7]`` ...
    ``s_add_u32 s6, s6, (.LBB0_2-.Lpost_getpc0)&4294967295`` ... ``s_setpc_b64 s[6:7]``) and
    TensileLite's (``s_add_i32 s82, label_X, 0x4`` / ``s_add_u32 s80, s80, s82`` /
    ``s_setpc_b64 s[80:81]``): the scalar registers the address's low half came from are
    followed back through the block until one was computed from a label."""
    base = next((op for op in jump.srcs if op.__class__ is Reg and op.kind == "s"), None)
    if base is None:
        return None
    wanted = {base.lo}
    for inst in reversed(block.instrs):
        if inst is jump or inst.is_label:
            continue
        written = {op.lo for op in inst.dsts if op.__class__ is Reg and op.kind == "s"} & wanted
        if not written:
            continue
        target = branch_target([op for op in inst.srcs if op.__class__ is not Reg])
        if target in labels:
            return target
        wanted -= written
        wanted |= {op.lo for op in inst.srcs if op.__class__ is Reg and op.kind == "s"}
        if not wanted:
            return None
    return None
