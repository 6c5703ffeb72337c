"""Analysing the expansion of a file written with includes and macros, and saying everything
at the line the user wrote (issue 19 item 1).

`parse_expanded` expands the file (`syntax.asm_preprocess`), parses the expansion and moves
every instruction to the open file's line it came from: its own line, or the outermost call
site (the macro invocation, ``.rept`` or ``.include`` line) for expanded text.  While the
pass runs, the instructions of one call site carry distinct placeholder columns
(`COL_BASE` + their index in the call), so that a planned wait, a producer or a diagnostic
still names one instruction; `place_at_call_sites` then turns the plan into what can be
written in the open file:

* a wait needed before the first instruction of a call goes before the call line;
* a wait needed further inside is hoisted to before the call line with its count re-based
  (an in-order counter's ops issued inside the call before the need are subtracted), which
  is exact when every producer it waits for was issued before the call (past a label or
  branch inside the call the count is 0);
* a wait whose producer is inside the same call cannot be written at the call site: that is
  an error at the call line naming the macro, and the file's result is incomplete (``insert``
  refuses it without ``--allow-incomplete``).
"""

from __future__ import annotations

import re

from .diagnostics import ERROR, WARNING, Diagnostic
from .findings import rule_reason
from .ir import Module, Span
from .lazy_regex import LazyPattern
from .results import DepInfo, PlannedWait
from .syntax.asm_needs import needs_expansion
from .syntax.asm_preprocess import expand
from .syntax.asm_sourcemap import SourceMap, describe_steps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .syntax.asm_include import Reader
    from .waitcnt.pipeline import PassOutput

#: placeholder columns of expanded instructions while the pass runs (never shown)
COL_BASE = 1 << 20

_TARGET_DIRECTIVE = LazyPattern(r'\.amdgcn_target\s+"[^"]*?(gfx[0-9a-f]+)', re.IGNORECASE)


def wants_expansion(text: str) -> bool:
    return needs_expansion(text)


class CallSites:
    """The call sites of an expanded module: per open-file line, its instructions in
    expansion order (`groups`), and each expanded instruction's steps (`steps`)."""

    __slots__ = ("source_map", "groups", "steps", "code_cols", "user_lines")

    def __init__(self, source_map: SourceMap, user_lines: list[str]):
        self.source_map = source_map
        self.groups: dict[int, list] = {}
        self.steps: dict[int, tuple] = {}
        self.code_cols: dict[int, tuple[int, int]] = {}
        self.user_lines = user_lines

    def cols(self, line: int) -> tuple[int, int]:
        c = self.code_cols.get(line)
        if c is None:
            text = self.user_lines[line - 1] if 1 <= line <= len(self.user_lines) else ""
            body = text.split("//", 1)[0].split(";", 1)[0].rstrip()
            start = len(body) - len(body.lstrip(" \t"))
            c = self.code_cols[line] = (start + 1, max(start + 2, len(body) + 1))
        return c

    def is_expanded(self, inst) -> bool:
        return id(inst) in self.steps

    def anchor(self, line: int, col: int):
        """The instruction a (line, placeholder column) names, or None."""
        if col < COL_BASE:
            return None
        g = self.groups.get(line)
        k = col - COL_BASE
        return g[k] if g is not None and 0 <= k < len(g) else None


def parse_expanded(text: str, path: str, arch: str, include_dirs: tuple[str, ...],
                   read: "Reader | None", defsyms: tuple = ()) -> tuple[Module, CallSites]:
    """The module of the file's expansion, positioned in the open file (placeholder columns
    on expanded instructions until `place_at_call_sites`)."""
    from .syntax.asm_lex import split_lines
    from .syntax.asm_parser import parse_asm
    m = _TARGET_DIRECTIVE.search(text)
    cpu = m.group(1) if m else arch
    ex = expand(text, path, include_dirs, cpu, read, defsyms)
    module = parse_asm(ex.text, path)
    sm = ex.source_map
    sites = CallSites(sm, split_lines(text))
    origins = sm.origins
    for f in module.functions:
        for b in f.blocks:
            for inst in b.instrs:
                sp = inst.span
                if sp is None:
                    continue
                line, steps = origins[sp.line - 1] if 0 < sp.line <= len(origins) else (sp.line, ())
                if steps:
                    g = sites.groups.setdefault(line, [])
                    sites.steps[id(inst)] = steps
                    col = COL_BASE + len(g)
                    g.append(inst)
                    inst.span = Span(line, col, line, col + 1)
                else:
                    inst.span = Span(line, sp.col, line, sp.end_col)
            b.span = _moved(b.span, sm, sites)
            b.succ_span = _moved(getattr(b, "succ_span", None), sm, sites)
        f.span = _moved(f.span, sm, sites)
        f.name_span = _moved(f.name_span, sm, sites)
    diags = [_moved_diag(d, sm, sites) for d in module.diagnostics]
    module.diagnostics = ex.diagnostics + diags
    module.text = text
    module.defer_lines(lambda: parse_asm(text, path).lines)
    module.source_map = sm
    module.call_sites = sites
    return module, sites


def _moved(sp: Span | None, sm: SourceMap, sites: CallSites) -> Span | None:
    if sp is None:
        return None
    line = sm.user_line(sp.line)
    end = sm.user_line(sp.end_line)
    if sm.steps(sp.line) or sm.steps(sp.end_line):
        c0, c1 = sites.cols(line)
        return Span(line, c0, max(line, end), c1 if end == line else sites.cols(end)[1])
    return Span(line, sp.col, max(line, end), sp.end_col)


def _moved_diag(d: Diagnostic, sm: SourceMap, sites: CallSites) -> Diagnostic:
    steps = sm.steps(d.line)
    line = sm.user_line(d.line)
    if not steps:
        end = sm.user_line(d.end_line) if d.end_line else None
        return Diagnostic(d.severity, d.code, d.message, line, d.col, end, d.end_col, d.related, d.data, d.function)
    c0, c1 = sites.cols(line)
    return Diagnostic(d.severity, d.code, f"{d.message} ({describe_steps(steps)})", line, c0, line, c1,
                      d.related, d.data, d.function)


def place_at_call_sites(po: "PassOutput", sites: CallSites) -> list[Diagnostic]:
    """Rewrite one function's plan so every wait can be written in the open file (see the
    module), give every record real columns, and return the errors for waits that only the
    macro body could hold."""
    target = po.df.target
    res = po.result
    why_of = po.df.why
    errors: list[Diagnostic] = []
    kept: list[PlannedWait] = []
    hoisted: dict[int, dict[str, PlannedWait]] = {}  # id(first instruction) -> counter -> wait
    for w in res.waits:
        inst = sites.anchor(w.line, w.column) if w.placement == "before" else None
        if inst is None:
            kept.append(w)
            continue
        group = sites.groups[w.line]
        first = group[0]
        steps = sites.steps.get(id(inst), ())
        where = describe_steps(steps)
        c0, _ = sites.cols(w.line)
        if inst is first:
            w.column = c0
            w.reason = f"{w.reason}; needed by {inst.mnemonic} {where}"
            kept.append(w)
            continue
        count = _rebased(target, po, first, inst, w, why_of.get(inst), group)
        if count is None or count < 0:
            cause = ("after a producer issued in the same call" if count is not None else
                     "past a label or branch inside the call")
            errors.append(Diagnostic(
                ERROR, "wait-inside-macro",
                f"{w.instruction} is needed before {inst.mnemonic} {where}, {cause}: a wait before this line "
                f"cannot cover it; write it in the macro body "
                f"({rule_reason(w.rule, w.reason)})", w.line, c0, w.line, sites.cols(w.line)[1], [],
                {"instruction": w.instruction, "steps": [list(s) for s in steps]}, w.function))
            continue
        slot = hoisted.setdefault(id(first), {})
        old = slot.get(w.counter)
        if old is not None and old.count <= count:
            continue
        slot[w.counter] = PlannedWait(
            w.function, w.block, w.line, c0, "before", w.counter, count,
            target.encode_waits({w.counter + "cnt": count})[0], w.rule,
            f"{w.reason}; needed by {inst.mnemonic} {where}, placed before the call "
            f"(count re-based from {w.count})", w.deps, w.shaped_by + ["call site"])
    for slot in hoisted.values():
        for hw in slot.values():
            same = next((k for k in kept if k.line == hw.line and k.column == hw.column and k.placement == "before"
                         and k.counter == hw.counter), None)
            if same is None:
                kept.append(hw)
            elif hw.count < same.count:
                kept[kept.index(same)] = hw
    for w in kept:
        if w.column >= COL_BASE:
            w.column = sites.cols(w.line)[0]
        w.deps = [_real_dep(d, sites) for d in w.deps]
    kept.sort(key=lambda w: (w.line, w.placement != "before"))
    res.waits = kept
    res.diagnostics = [_real_diag(d, sites) for d in res.diagnostics]
    return errors


def _real_dep(d: DepInfo, sites: CallSites) -> DepInfo:
    if d.column < COL_BASE:
        return d
    return DepInfo(d.line, sites.cols(d.line)[0], d.mnemonic, d.block, d.pred, d.count_from)


def _real_diag(d: Diagnostic, sites: CallSites) -> Diagnostic:
    if d.col < COL_BASE and (d.end_col or 0) < COL_BASE:
        return d
    c0, c1 = sites.cols(d.line)
    inst = sites.anchor(d.line, d.col)
    msg = d.message
    if inst is not None:
        msg = f"{msg} ({describe_steps(sites.steps.get(id(inst), ()))})"
    return Diagnostic(d.severity, d.code, msg, d.line, c0, d.line, c1, d.related, d.data, d.function)


def _rebased(target, po: "PassOutput", first, inst, w: PlannedWait, why, group: list) -> int | None:
    """The count a wait for `w`'s counter needs before `first` so that `inst` may issue; -1
    when that is impossible (a producer is issued between them in one straight line); None
    when unknown (a label or branch between them, and a producer somewhere in the call).
    Past a label or branch, a wait whose producers all come before the call is hoisted as 0
    (it retires everything issued before the call: safe, perhaps stronger than needed)."""
    tls = [c for c in target.timelines if target.counter_of[c] == w.counter + "cnt"]
    if not tls:
        tls = [c for c in target.timelines if target.counter_of[c].startswith(w.counter)]

    def produced_in(ids: set[int]) -> bool:
        return why is None or any(ct.op is not None and id(ct.op) in ids
                                  for c in tls if c < len(why) for ct in why[c])

    b = inst.block
    instrs = b.instrs
    i0 = next((k for k, x in enumerate(instrs) if x is first), -1) if first.block is b else -1
    i1 = next((k for k, x in enumerate(instrs) if x is inst), -1)
    if i0 < 0 or i1 < 0 or i0 > i1:
        return None if produced_in({id(x) for x in group}) else 0
    between = instrs[i0:i1]
    if produced_in({id(x) for x in between}):
        return -1
    pushed = 0
    for x in between:
        if x.is_label or x.is_phi:
            continue
        if set(target.sem(x).pushes) & set(tls):
            pushed += 1
    if not all(target.in_order[c] for c in tls):
        return 0
    return max(0, w.count - pushed)


#: the encodings' mnemonic prefixes: a word with one of them is an instruction the table may
#: not know, not a macro
_INSTRUCTION_PREFIX = LazyPattern(r"(?:s|v|ds|buffer|tbuffer|global|flat|scratch|image|exp|export|tensor|cluster)_|exp\b")


def finish_spans(module: Module, sites: CallSites) -> None:
    """Give expanded instructions their call site's real columns (after the pass)."""
    for f in module.functions:
        for b in f.blocks:
            for inst in b.instrs:
                sp = inst.span
                if sp is not None and sp.col >= COL_BASE:
                    c0, c1 = sites.cols(sp.line)
                    inst.span = Span(sp.line, c0, sp.line, c1)


def unknown_instructions(module: Module, target, sites: CallSites) -> list[Diagnostic]:
    """An instruction the target does not know in an expanded file is most likely a macro that
    was never defined (its include missing, a typo): a located warning, results incomplete."""
    out: list[Diagnostic] = []
    seen: set[tuple[int, str]] = set()
    for f in module.functions:
        for b in f.blocks:
            for inst in b.instrs:
                if inst.is_label or inst.is_phi or inst.span is None:
                    continue
                if _INSTRUCTION_PREFIX.match(inst.mnemonic):  # (the table calls any other word "other")
                    continue
                word = (inst.text or inst.mnemonic).split()[0] if (inst.text or "").strip() else inst.mnemonic
                key = (inst.span.line, word)
                if key in seen:
                    continue
                seen.add(key)
                line = inst.span.line
                c0, c1 = sites.cols(line)
                steps = sites.steps.get(id(inst), ())
                where = f" ({describe_steps(steps)})" if steps else ""
                out.append(Diagnostic(
                    WARNING, "asm-undefined-macro",
                    f"'{word}' is neither an instruction of {target.name} nor a macro defined before this "
                    f"line{where}: what it stands for is not analysed, results after this line may be incomplete",
                    line, c0 if steps else inst.span.col, line, c1 if steps else inst.span.end_col))
    return out
