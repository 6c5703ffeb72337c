"""Incremental re-parse of AMDGPU assembly: the next version of a document from the previous one.

Lines outside the edited region keep their syntax and their `Instruction` objects; the
structure is spliced when the edit cannot change it, and rebuilt over the reused instructions
otherwise (see `asm_parser.parse_asm` for the contract).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from operator import attrgetter

from ..diagnostics import Diagnostic
from ..ir import Block, Function, Instruction, Operand, Special, Span, Str
from . import common_prefix, common_suffix
from .asm_lex import split_lines
from .asm_records import ROLE_INSTRUCTION, LineSyntax
from .asm_structure import (DUPLICATE_LABEL, ScanState, _AsmState, _build, _link_all, _new_instruction, _scan,
                            _scan_diagnostics, moved_duplicate_message)
from .asm_target import moved_target

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from .asm_structure import Reuse

def _shift_state(state: ScanState, from_idx: int, delta: int) -> ScanState:
    """A scan state of the previous version moved with its lines (a verbatim block opened at
    or after line index `from_idx` moves by `delta`)."""
    if delta and state[2] is not None and state[3] >= from_idx:
        return (state[0], state[1], state[2], state[3] + delta, state[4])
    return state


def _reparse(text: str, prev: _AsmState) -> tuple[_AsmState, list[Function], list[Diagnostic]]:
    """`parse_asm` against the previous version's state (see its docstring)."""
    raw = split_lines(text)
    old = prev.raw
    p = common_prefix(raw, old)
    q = common_suffix(raw, old, min(len(raw), len(old)) - p)
    old_stop, new_stop = len(old) - q, len(raw) - q  # the edited windows: [p, old_stop) and [p, new_stop)
    delta = new_stop - old_stop
    st = _AsmState(prev.path, raw)
    st.syntax = prev.syntax[:p]
    for name in ("problem_idx", "directive_idx", "target_idx"):
        old_list = getattr(prev, name)
        setattr(st, name, old_list[:bisect_left(old_list, p)])
    k = bisect_right(prev.change_at, p)
    st.change_at, st.changes = prev.change_at[:k], prev.changes[:k]
    state = _scan(st, p, prev.state_at(p), new_stop)
    resynced = state == prev.state_at(old_stop)
    if resynced:
        st.syntax += prev.syntax[old_stop:]
        for name in ("problem_idx", "directive_idx", "target_idx"):
            old_list = getattr(prev, name)
            getattr(st, name).extend(i + delta for i in old_list[bisect_left(old_list, old_stop):])
        k = bisect_right(prev.change_at, old_stop)
        st.change_at.extend(i + delta for i in prev.change_at[k:])
        st.changes.extend(_shift_state(s, old_stop, delta) for s in prev.changes[k:])
        st.end_state = _shift_state(prev.end_state, old_stop, delta)
    else:
        st.end_state = _scan(st, new_stop, state)
    diags = _scan_diagnostics(st)
    functions = _splice(st, prev, p, old_stop, new_stop) if resynced else None
    if functions is None:
        functions = _build(st, _reuser(st, prev, p, old_stop, new_stop))
        _link_all(functions, st)
    return st, functions, diags


def _reuser(st: _AsmState, prev: _AsmState, p: int, old_stop: int, new_stop: int) -> Reuse:
    """`_build`'s `reuse`: the previous version's instruction on the same line, unchanged in
    text and in syntax (a scan state change, e.g. a `.set` edit, may change the syntax)."""
    delta = new_stop - old_stop
    paired = old_stop == new_stop  # an edited window of equal length: matched line by line
    old_syntax, old_lines, old_labels = prev.syntax, prev.line_inst, prev.label_inst

    def reuse(idx: int, ls: LineSyntax, label: bool) -> Instruction | None:
        old = idx if idx < p or (paired and idx < new_stop) else idx - delta if idx >= new_stop else -1
        if old < 0 or (old_syntax[old] is not ls and old_syntax[old] != ls):
            return None
        inst = (old_labels if label else old_lines)[old]
        if inst is not None and old != idx:
            _move(inst, delta)
        return inst

    return reuse


def _move(inst: Instruction, delta: int) -> None:
    sp = inst.span
    inst.span = Span(sp.line + delta, sp.col, sp.end_line + delta, sp.end_col)


def _is_plain_line(ls: LineSyntax) -> bool:
    """A line the structure ignores, or an instruction that neither ends its block nor branches
    nor names a symbol (a label's address feeds computed jumps and local calls: `_link_all`)."""
    return not ls.role or (ls.role == ROLE_INSTRUCTION and not ls.flow and not ls.branch_target
                           and not any(map(_names_symbol, ls.srcs)))


def _names_symbol(op: Operand) -> bool:
    """A bare symbol, or an expression (``(.LBB0_2-.Lpost_getpc0)&4294967295``)."""
    return op.__class__ is Str or (op.__class__ is Special and any(c in _EXPRESSION for c in op.spelling))


_EXPRESSION = frozenset("+-*&|<>")


def _splice(st: _AsmState, prev: _AsmState, p: int, old_stop: int, new_stop: int) -> list[Function] | None:
    """The new structure from the previous one when both edited windows hold only plain lines
    (`_is_plain_line`) and either both or neither hold instructions; None otherwise.

    Then no label, directive, branch target or block end changed, so the kernels and blocks
    are those of the previous version: the block holding the old window's instructions
    (all in one block: nothing in the window ends or starts a block) gets the new window's
    instead, and everything after the windows moves by the difference in length.
    """
    old_syntax, new_syntax = prev.syntax, st.syntax
    if not all(map(_is_plain_line, old_syntax[p:old_stop])) or not all(map(_is_plain_line, new_syntax[p:new_stop])):
        return None
    old_idx = [i for i in range(p, old_stop) if old_syntax[i].role]
    new_idx = [i for i in range(p, new_stop) if new_syntax[i].role]
    blocks = list(prev.blocks)
    k = bisect_right(prev.block_first, p - 1) - 1
    if k >= 0 and blocks[k][5] >= old_stop:
        x = k  # a block with lines before and after the windows: whatever they hold goes in it
    elif old_idx and new_idx:
        x = bisect_right(prev.block_first, old_idx[0]) - 1  # the block of the old window's instructions
    elif old_idx or new_idx:
        return None  # instructions appear or vanish at a block's edge: its start or name may change
    else:
        x = -1  # comments or blank lines between blocks
    delta = new_stop - old_stop
    raw = st.raw
    st.line_inst = prev.line_inst[:p] + [None] * (new_stop - p) + prev.line_inst[old_stop:]
    st.label_inst = prev.label_inst[:p] + [None] * (new_stop - p) + prev.label_inst[old_stop:]
    moved_from = bisect_left(prev.block_first, old_stop)  # the first block wholly after the windows
    if x >= 0:
        label, instrs, succs, _, first_idx, last_idx = blocks[x]
        if old_idx:
            old_insts = tuple(prev.line_inst[i] for i in old_idx)
            i = instrs.index(old_insts[0])
            j = i + len(old_insts)
            if instrs[i:j] != old_insts:
                return None
        else:
            i = j = bisect_left(instrs, old_stop + 1, key=_LINE_OF)
        reuse = _reuser(st, prev, p, old_stop, new_stop)
        new_insts = []
        for idx in new_idx:
            inst = reuse(idx, new_syntax[idx], False) or _new_instruction(new_syntax[idx], idx, raw)
            st.line_inst[idx] = inst
            new_insts.append(inst)
        if delta:
            for inst in instrs[j:]:
                _move(inst, delta)
        instrs = instrs[:i] + tuple(new_insts) + instrs[j:]
        first, end = instrs[0].span, instrs[-1].span
        blocks[x] = (label, instrs, succs, Span(first.line, first.col, end.end_line, end.end_col), first.line - 1,
                     end.line - 1)
        moved_from = x + 1
    affected = min(moved_from, x) if x >= 0 else moved_from
    if delta:
        make = tuple.__new__  # Span(...) without the named tuple's Python-level __new__: 30k calls per edit
        for b in range(moved_from, len(blocks)):
            label, instrs, succs, sp, first_idx, last_idx = blocks[b]
            for inst in instrs:
                isp = inst.span
                inst.span = make(Span, (isp[0] + delta, isp[1], isp[2] + delta, isp[3]))
            blocks[b] = (label, instrs, succs, make(Span, (sp[0] + delta, sp[1], sp[2] + delta, sp[3])),
                         first_idx + delta, last_idx + delta)
    st.blocks = blocks
    st.block_first = [rec[4] for rec in blocks]
    functions = []
    out: list[Function] = []
    for name, name_span, span, b0, b1 in prev.functions:
        if b1 > affected:  # holds the edited block or lines after the windows
            if name_span is not None and name_span.line > old_stop:
                name_span = Span(name_span.line + delta, name_span.col, name_span.end_line + delta, name_span.end_col)
            first_sp = blocks[b0][3]
            last_line = blocks[b1 - 1][5] + 1
            span = Span(first_sp.line, first_sp.col, last_line, len(raw[last_line - 1]) + 1)
        functions.append((name, name_span, span, b0, b1))
        f = Function(name, [Block(label, list(instrs), list(succs), span=sp)
                            for label, instrs, succs, sp, _, _ in blocks[b0:b1]], span, name_span)
        f.link()
        out.append(f)
    st.functions = functions
    st.struct_diags = [_moved_diagnostic(d, old_stop, delta) for d in prev.struct_diags]
    st.msb_setters, st.mode_setregs = prev.msb_setters, prev.mode_setregs  # the windows hold neither
    st.spliced = (x, (p + 1, new_stop), prev.line_inst[p:old_stop])
    # no directive changed: the target is the previous one, moved with its lines
    st.target = moved_target(prev.target, old_stop, delta)
    st.target_diags = [_moved_diagnostic(d, old_stop, delta) for d in prev.target_diags]
    return out


_LINE_OF = attrgetter("span.line")



def _moved_diagnostic(d: Diagnostic, from_idx: int, delta: int) -> Diagnostic:
    """A copy of a previous version's diagnostic, moved with its line (a duplicate label's
    message names the first definition's line: moved too; the windows hold no label)."""
    shift = delta if d.line - 1 >= from_idx else 0
    msg = moved_duplicate_message(d.message, from_idx, delta) if d.code == DUPLICATE_LABEL and delta else d.message
    return Diagnostic(d.severity, d.code, msg, d.line + shift, d.col,
                      None if d.end_line is None else d.end_line + shift, d.end_col, list(d.related), dict(d.data),
                      d.function)

