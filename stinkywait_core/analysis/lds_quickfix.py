"""The one-click fix for an unproven LDS pair: `// st.token:N` comments that separate two operations.

Memtokens (`// st.token:N[,M...]` on an LDS operation) tell the pass which operations may
alias: two tagged operations whose token sets are disjoint are disjoint; an untagged one may
alias anything.  The fix tags the two operations of a pair the analysis could not separate
with token sets that make exactly that pair disjoint and claim nothing else: a newly tagged
operation also receives the tokens of every other tagged operation it is not *proven*
disjoint from (so those pairs keep waiting), and the fix is refused when that would put a
common token on the two (the pair would then still alias) or when they already carry
overlapping tokens (the author said they alias).

`token_fix` returns the edits (insert text at a line and column) and a one-line description;
the editor renders them as a code action.
"""

from __future__ import annotations

from ..ir import Function, Instruction
from ..ir.records import FrozenRecord, _set

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .lds_facts import LdsFacts


class TextEdit(FrozenRecord):
    """Insert `text` before 1-based column `col` of 1-based line `line`."""

    __slots__ = ("line", "col", "text")
    line: int
    col: int
    text: str

    def __init__(self, line: int, col: int, text: str) -> None:
        _set(self, "line", line)
        _set(self, "col", col)
        _set(self, "text", text)


def _lds_ops(func: Function) -> list[Instruction]:
    out = []
    for b in func.blocks:
        for inst in b.instrs:
            if not inst.is_label and not inst.is_phi and inst.tokens:
                out.append(inst)
    return out


def token_fix(func: Function, a: Instruction, b: Instruction, lines: list[str],
              facts: LdsFacts | None = None) -> tuple[list[TextEdit], str]:
    """Edits that tag `a` and `b` as touching different LDS regions, and what they say.

    `lines`: the document's physical lines (without or with their line breaks); `facts`:
    the function's LDS facts, used to keep pairs the analysis proved disjoint free of
    shared tokens (without them every tagged operation is assumed to possibly overlap).
    An empty edit list comes with the reason no fix is offered.
    """
    if a is b:
        return [], "the two operations are the same instruction"
    ta, tb = a.tokens, b.tokens
    if ta and tb:
        common = sorted(set(ta) & set(tb))
        if common:
            return [], (f"both already carry st.token {','.join(map(str, common))}: "
                        "their author declared that they may alias")
        return [], "they already carry disjoint st.token sets"
    tagged = [i for i in _lds_ops(func) if i is not a and i is not b]
    used = {t for i in tagged for t in i.tokens}
    used |= set(ta or ()) | set(tb or ())
    fresh = (t for t in range(1, 1 << 30) if t not in used)
    sets = {a: list(ta) if ta else None, b: list(tb) if tb else None}
    for x in (a, b):
        if sets[x] is not None:
            continue
        mine = [next(fresh)]
        for c in tagged:
            # a tagged barrier fences only its tokens: whatever it fences must keep one
            if facts is None or facts.access(c) is None or facts.may_overlap(x, c, False):
                if not set(mine) & set(c.tokens):
                    mine.append(c.tokens[0])
        sets[x] = mine
    shared = sorted(set(sets[a]) & set(sets[b]))
    if shared:
        who = [c for c in tagged if set(c.tokens) & set(shared)]
        where = ", ".join(f"line {c.line}" for c in who[:3])
        return [], (f"both may overlap the tagged operation(s) at {where} (st.token {','.join(map(str, shared))}): "
                    "tokens cannot separate them without separating those too")
    edits = []
    for x in (a, b):
        if x.tokens:
            continue
        ln = x.line
        if ln < 1 or ln > len(lines):
            return [], f"line {ln} is not in the document"
        text = lines[ln - 1].rstrip("\r\n")
        end = len(text.rstrip()) + 1
        edits.append(TextEdit(ln, end, f"  // st.token:{','.join(map(str, sets[x]))}"))
    desc = (f"mark {a.mnemonic} (line {a.line}) and {b.mnemonic} (line {b.line}) as touching different LDS "
            f"regions: st.token {','.join(map(str, sets[a]))} / {','.join(map(str, sets[b]))}")
    return edits, desc
