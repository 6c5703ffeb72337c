"""The review of hand-written waits (`Analysis.check_diagnostics`): what is missing,
redundant or stricter than needed, each offered change verified before it is offered.

It reads an `Analysis` (the plan, the FIFO snapshots) and re-analyses variants of the file
through the `analyze` it is handed by the front door (`api`), so imports run one way:
api -> review, never back.
"""

from __future__ import annotations

import re
from operator import attrgetter
TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from typing import Callable

    from .api import Analysis
    from .ir import Instruction

    Analyze = Callable[..., Analysis]

from .cache import AnalysisCache
from .diagnostics import ERROR, HINT, WARNING, Diagnostic, Related
from .findings import rule_reason
from .interrupt import checkpoint
from .review_proof import Change, edited_text, proven_safe
from .review_reject import RelaxRejection
from .textlines import physical_lines
from .waitcnt.remove import should_remove
from .waitcnt.stall import cost_phrase, planned_points, relax_saving


_OPS, _SAT = attrgetter("ops"), attrgetter("sat")


def missing_waits(an: Analysis) -> list[Diagnostic]:
    """The review's first part, from the plan alone: an error per planned wait (the wait the
    file as written lacks).  The language server pushes these with the version's hints, before
    the rest of the review (`review` returns the same records first, so the later push only
    adds to them); call it through `Analysis.missing_diagnostics` (computed once)."""
    out: list[Diagnostic] = []
    lines = physical_lines(an.module.text)
    # a planned wait reused from the previous version (same object, same anchor line length)
    # keeps its diagnostic
    known = an.cache.review_memo if an.cache is not None else {}
    memo: dict[int, tuple] = {}
    for w in an.waits():
        width = len(lines[w.line - 1]) if 0 < w.line <= len(lines) else 0
        hit = known.get(id(w))
        if hit is not None and hit[0] is w and hit[1] == width and hit[2] == (w.insert_line, w.insert_text):
            memo[id(w)] = hit
            out.append(hit[3])
            continue
        # the block ids stay out of the words (`findings.present` says the path as the source
        # names it)
        related = [Related(d.line, d.column, f"producer {d.mnemonic} (countFrom {d.count_from})")
                   for d in w.deps if d.line]
        diag = Diagnostic(
            ERROR, "missing-wait", f"missing {w.instruction} ({rule_reason(w.rule, w.reason)})",
            w.line, w.column, w.line, max(w.column, width + 1), related,
            {"insert_line": w.insert_line, "insert_text": w.insert_text, "instruction": w.instruction,
             "counter": w.counter, "count": w.count}, w.function)
        memo[id(w)] = (w, width, (w.insert_line, w.insert_text), diag)
        out.append(diag)
    if an.cache is not None:
        an.cache.review_memo = memo
    return out


def review(an: Analysis, analyze: Analyze) -> list[Diagnostic]:
    """Hand-written waits against the plan: what is missing (`missing_waits`, first), then
    what is redundant or stricter than needed (each offered change proven first)."""
    out = list(an.missing_diagnostics())
    if an.options.replace_waits:
        return out
    # hand-written (rebuildable) waits: what each counter of each wait drains here (the FIFO
    # snapshot); a value a draining counter could relax to comes from a plan without them.
    # Every change offered (delete, relax, drop a counter) is then verified: the function
    # re-planned with that one change must need no wait the original did not need already.
    waits_found: list = []
    draining = False
    model = an.options.model
    for po in an.outputs:
        checkpoint(an)
        target = po.df.target
        info = po.df.info
        for b in po.func.blocks:
            instrs = [i for i in b.instrs if not i.is_phi and not i.is_label]
            for idx, inst in enumerate(instrs):
                inf = info.get(inst)
                if inf is None or not inf.is_wait or inst.span is None or not should_remove(inst, model=model):
                    continue
                if an.call_sites is not None and an.call_sites.is_expanded(inst):
                    continue  # a macro's (or an included file's) own wait: not a line of this file
                values = {cn: v for cn, v in target.decode_wait(inst).items() if v >= 0}
                if not values:
                    continue
                nxt = next((j for j in instrs[idx + 1:] if not info[j].is_wait), None)
                snap = po.df.snapshot_at(inst)  # (only the blocks with waits are replayed)
                drains = set()
                for cn, v in values.items():
                    tls = [c for c in target.timelines if target.counter_of[c] == cn]
                    if any(_drains(snap[c] if snap else (), v, target.in_order[c]) for c in tls):
                        drains.add(cn)
                waits_found.append((po, inst, nxt, values, drains))
                draining = draining or bool(drains)
    planned: dict[tuple[int, str], int] = {}
    rejection = None
    if draining:
        # what each point needs at least: CoalesceWaits off, or a wait it folds into an
        # earlier one would look stricter than needed nowhere
        checkpoint(an)
        stripped = analyze(an.module.text, an.path, an.options.replace(replace_waits=True, coalesce_window=0),
                           an.language, cache=an.cache, read=an.read)
        checkpoint(an)
        # planned waits of the stripped analysis, by anchor line and counter
        for w in stripped.waits():
            if w.placement == "before":
                planned[(w.line, w.counter)] = w.count
        rejection = RelaxRejection(an, stripped)
    proposals: list[tuple[Diagnostic, int, str]] = []  # (diagnostic, line, its new line text)
    #: (function, line) of a stricter-than-needed proposal -> (its output, the relaxed values):
    #: the cost phrase is predicted for the offered ones only
    relaxed_at: dict[tuple[str, int], tuple] = {}
    for po, inst, nxt, values, drains in waits_found:
        checkpoint(an)
        sp = inst.span
        target = po.df.target
        if not drains:
            if len(values) == 1:
                ((cn, v),) = values.items()
                what = (f"redundant {_spelled(target, values, inst)}: nothing older than {v} ops is in flight on "
                        f"{cn} here")
            else:
                what = f"redundant {inst.text.strip()}: nothing it waits for is in flight here"
            proposals.append((Diagnostic(
                WARNING, "redundant-wait", what,
                sp.line, sp.col, sp.end_line, sp.end_col, [], {"delete_line": sp.line}, po.func.name),
                sp.line, None))
            continue
        if len(drains) < len(values):  # a combined wait with a counter that drains nothing
            kept = {cn: v for cn, v in values.items() if cn in drains}
            new = _spelled(target, kept, inst)
            proposals.append((Diagnostic(
                WARNING, "redundant-wait",
                f"{inst.mnemonic}: {', '.join(sorted(set(values) - drains))} drains nothing here: {new} suffices",
                sp.line, sp.col, sp.end_line, sp.end_col, [], {"replace_line": sp.line, "instruction": new},
                po.func.name), sp.line, new))
        for cn in sorted(drains):
            v = values[cn]
            short = cn[:-3] if cn.endswith("cnt") else cn
            need = planned.get((nxt.span.line, short)) if nxt is not None and nxt.span else None
            if need is None or need <= v or not _in_order_counter(target, cn):
                continue
            if rejection is not None and rejection.fails(po, inst, cn, need):
                continue  # the re-plan would need a new wait (review_reject.py): not tried
            new = _spelled(target, {**values, cn: need}, inst)
            proposals.append((_stricter(po, inst, values, need, new), sp.line, new))
            relaxed_at.setdefault((po.func.name, sp.line), (po, {**values, cn: need}))
    for d in _verified(an, proposals, analyze):
        got = relaxed_at.get((d.function, d.line)) if d.code == "stricter-wait" else None
        out.append(_costed(an, d, *got) if got is not None else d)
    return out


def _costed(an: Analysis, d: Diagnostic, po, relaxed: dict[str, int]) -> Diagnostic:
    """An offered stricter-than-needed hint with its predicted cost in the message."""
    cost = _stricter_cost(an, po, d.line, relaxed)
    if not cost:
        return d
    return Diagnostic(d.severity, d.code, d.message + cost, d.line, d.col, d.end_line, d.end_col,
                      list(d.related), d.data, d.function)


def _stricter_cost(an: Analysis, po, line: int, relaxed: dict[str, int]) -> str:
    """"; costs ~300 cycles per trip of .LBB0_1": what the stricter wait at `line` costs over
    the relaxed one, predicted by the latency model (docs/latency-model.md; "" when nothing)."""
    try:
        target, model = an.options.target, an.options.latency_model
    except ValueError:
        return ""
    if model is None:
        return ""
    cycles, loop = relax_saving(po.func, target, model, planned_points(po.result.waits, target), line, relaxed)
    return f"; {cost_phrase(cycles, loop)}" if cycles > 0 else ""


def _stricter(po, inst: Instruction, values: dict[str, int], need: int, new: str) -> Diagnostic:
    """The finding for a hand-written wait of `values` where `need` suffices on one counter
    (`new`, spelled as the user writes it).  Only a proposal: `_verified` decides whether it is
    offered, and an offered one gets its cost in the message (`_costed`)."""
    sp = inst.span
    return Diagnostic(
        HINT, "stricter-wait", f"{_spelled(po.df.target, values, inst)} is stricter than needed: {new} suffices",
        sp.line, sp.col, sp.end_line, sp.end_col, [],
        {"replace_line": sp.line, "count": need, "instruction": new}, po.func.name)


def _in_order_counter(target, cn: str) -> bool:
    """Every timeline counted on `cn` completes in order (only then can a count be relaxed)."""
    return all(target.in_order[c] for c in target.timelines if target.counter_of[c] == cn)


def _spelled(target, values: dict[str, int], inst: Instruction) -> str:
    """A wait with these counter values, in the target's spelling and the user's radix."""
    text = "; ".join(target.encode_waits(values))
    if "0x" in (inst.text or "").lower():
        text = re.sub(r"(?<![\w(x])(\d+)\b(?!\))", lambda m: f"{int(m.group(1)):#x}", text)
    return text


def _verified(an: Analysis, proposals: list[tuple[Diagnostic, int, str | None]], analyze: Analyze) -> list[Diagnostic]:
    """The proposals safe to follow alone: the plan of the file with the change needs no wait
    the original did not need (so `check` on the edited file says nothing new), and, under
    the hardware model, the hardware checker proves the edited file no less safe than the
    file as written (review_proof.py: it sees the source's own waits only, never the waits
    the pass adds itself)."""
    checkpoint(an)
    lines = physical_lines(an.module.text, keepends=True)
    blocks = {(po.func.name, i.span.line): b.label for po in an.outputs for b in po.func.blocks
              for i in b.instrs if i.span is not None}
    usable: list[Change] = []
    taken: set[int] = set()
    for diag, line, new in proposals:
        if line in taken or not 1 <= line <= len(lines):
            continue
        body = lines[line - 1].rstrip("\r\n")
        if body[:diag.col - 1].strip() or (new is not None and "; " in new):
            continue  # a label shares the line, or the change would move lines: not offered
        indent = body[:len(body) - len(body.lstrip(" \t"))]
        usable.append(Change(diag, line, indent + (new or "") + lines[line - 1][len(body):],
                             blocks.get((diag.function, line))))
        taken.add(line)
    reuse = reused = None
    if an.cache is not None and an.call_sites is None:
        from .review_reuse import ReviewReuse
        reuse = ReviewReuse(an, lines)
        reused, usable = reuse.take(usable)
    planned = _plan_verified(an, lines, usable, analyze)
    if an.options.model == "hw":
        planned = proven_safe(an, lines, planned)
    if reuse is None:
        return [c.diag for c in planned]
    reuse.store(planned, usable)
    return sorted(reused + [c.diag for c in planned], key=lambda d: (d.line, d.col))


def _plan_verified(an: Analysis, lines: list[str], usable: list[Change], analyze: Analyze) -> list[Change]:
    """The changes whose file, re-planned, needs no wait the original did not need before
    (the same anchors and counters, values no stricter).

    All changes are tried together first: if the program with every change needs nothing
    new, each change alone needs nothing new either (a subset of the changes leaves more
    hand-written waits, so fewer ops in flight); otherwise a failing group is halved until
    the groups pass or hold one change (each trial re-plans incrementally from the last)."""
    if not usable:
        return []
    base: dict[tuple[str, int, str, str], int] = {}
    for w in an.waits():
        key = (w.function, w.line, w.placement, w.counter)
        base[key] = min(base.get(key, w.count), w.count)

    def needs_nothing_new(changes: list[Change], cache: AnalysisCache) -> bool:
        checkpoint(an)
        trial = analyze(edited_text(lines, changes), an.path, an.options, an.language, cache=cache, read=an.read)
        return all(base.get((w.function, w.line, w.placement, w.counter), -1) >= 0
                   and base[(w.function, w.line, w.placement, w.counter)] <= w.count for w in trial.waits())

    # the trials' own cache: the document's keeps the version the editor shows.  Kept with the
    # document's cache, the next version's first trial re-plans only what the edit changed
    scratch = an.cache.review_scratch if an.cache is not None else None
    if scratch is None:
        scratch = AnalysisCache(size=4)
        if an.cache is not None:
            an.cache.review_scratch = scratch
    if needs_nothing_new(usable, scratch):
        return list(usable)
    # removals of waits that drain nothing change no state: they pass as a group; the
    # relaxations of draining waits are tried in groups, halved where a group fails (a group
    # that passes passes change by change, so each change ends up proven in the largest
    # group that passes, or tried alone)
    removals = [c for c in usable if c.diag.code == "redundant-wait"]
    relaxations = [c for c in usable if c.diag.code != "redundant-wait"]
    out: list[Change] = []
    # (group, known to fail): without removals the relaxations are the group that just failed
    groups: list[tuple[list[Change], bool]] = [(relaxations, not removals)]
    if removals:
        if needs_nothing_new(removals, scratch):
            out.extend(removals)
        else:
            groups = [(usable, True)]
    while groups:
        checkpoint(an)
        group, failed = groups.pop()
        if not group:
            continue
        if not failed and needs_nothing_new(group, scratch):
            out.extend(group)
        elif len(group) > 1:
            half = len(group) // 2
            groups.extend(((group[half:], False), (group[:half], False)))
    out.sort(key=lambda c: (c.line, c.diag.col))
    return out


def _drains(queues, v: int, in_order: bool) -> bool:
    """A wait of `v` on these queues' counter retires something from one of them (a FIFO
    snapshot holds one queue per predecessor path: thousands on the GEMM, so the scan is
    C-level maps, not a call per queue)."""
    if any(map(_SAT, queues)):
        return in_order or v == 0
    if not in_order:
        return v == 0 and any(map(_OPS, queues))
    return max(map(len, map(_OPS, queues)), default=0) > v
