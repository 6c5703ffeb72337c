"""Words for the core's records: block names as the user wrote them, the binding producer of a
wait, a wait's one-paragraph summary, and the FIFO state with identical queues grouped.

Hints (`render.inlay_hint`), the hover and the plan view all explain a wait with these
functions, so a fact is worded the same way everywhere and appears once per view.  Everything
is read from `PlannedWait`, `DepInfo` and `QueueView`; counters and kinds of op are the
target model's words (`targets.Target.timeline_counter` / `op_kind`: `lgkmcnt` on gfx9-11,
`dscnt` on gfx12), never a table of our own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stinkywait_core.findings import binding_dep, rule_is_proven, subrule
from stinkywait_core.findings import rule_label as core_rule_label
from stinkywait_core.ir.block_names import BlockNames
from stinkywait_core.results import PlannedWait, QueueView
from stinkywait_core.wording import binding_paths, out_of_order_kind

#: distinct predecessor queues shown per counter before the rest are only named
HOVER_GROUPS = 4

#: a reason that only restates the binding producer ("ds_load_b128 (line 434) still in
#: flight, countFrom 21 via ^x"): the summary already says it in words
_RESTATED = re.compile(r"^\S+ \(line \d+\) still in flight, countFrom \d+(?: via \^\S+)?$")


def counter_name(counter: str) -> str:
    """`ds` -> `dscnt`; `xcnt`, `vmcnt`, `lgkmcnt` stay as they are."""
    return counter if counter.endswith("cnt") else counter + "cnt"


def hardware_counter(timeline: str, target: Any = None) -> str:
    """The counter a timeline's ops count on, as the target names it (gfx9's `ds` and `smem`
    timelines: `lgkmcnt`); without a target model, the timeline's own name."""
    return target.timeline_counter(timeline) if target is not None else counter_name(timeline)


# -- one wait -----------------------------------------------------------------------------


def rule_label(w: PlannedWait) -> str:
    """The rule class, plus the specific rule when it says more ("RAW (loop-carried-raw)";
    never "RAW: raw")."""
    return core_rule_label(w.rule, w.reason)


def reason_rest(w: PlannedWait) -> str:
    """What the core's reason adds beyond the rule and the binding producer ("" when it only
    restates them)."""
    text = w.reason
    sub = subrule(text)
    if sub:
        text = text[len(sub) + 2:]
    text = text.strip()
    if _RESTATED.match(text):
        return ""
    # "<restated producer>; <what it adds>" (e.g. a folded wait: "waits here for ..."): the
    # producer part is said by the summary, with display block names
    head, sep, tail = text.partition("; ")
    if sep and _RESTATED.match(head):
        return tail.strip()
    return text


def hint_label(w: PlannedWait, style: str) -> tuple[str, str | None]:
    """(the wait as inserted, the binding-producer part or None) of a hint label."""
    if style == "compact":
        return w.instruction, None
    b = binding_dep(w.deps)
    if b is not None:
        return w.instruction, f" ← {b.mnemonic} L{b.line} (countFrom {b.count_from})"
    if not rule_is_proven(w.rule):
        return w.instruction, " (disjointness not proved)"
    return w.instruction, f" ({w.rule})"


def wait_summary(w: PlannedWait, names: BlockNames, target: Any = None) -> list[str]:
    """The summary lines of one wait: the wait and its rule; the producer that sets its count
    and why that count; the path that needs it; what else shaped it."""
    head = f"**{w.instruction}** — {rule_label(w)}"
    if w.placement == "after":
        head += f", appended at the end of {names.block(w.function, w.block)}"
    lines = [head]
    b = binding_dep(w.deps)
    if b is not None:
        allowed = b.count_from - 1
        kind = out_of_order_kind(b, target)
        if kind is not None and w.count == 0:
            why = f"{kind} completes out of order, so only a wait of 0 retires it"
        elif w.count == allowed:
            why = (f"so at most {allowed} younger {counter_name(w.counter)} op{'s' if allowed != 1 else ''} "
                   "may stay in flight" if allowed else "so it must be complete")
        else:
            why = f"waiting for {w.count}, stricter than {allowed}"
        lines.append(f"set by L{b.line} `{b.mnemonic}` (countFrom {b.count_from}: {why}), "
                     f"on the path {names.preds(w.function, binding_paths(w, b))}")
    rest = reason_rest(w)
    if rest:
        lines.append(rest)
    if not rule_is_proven(w.rule):
        lines.append("To drop it, prove the accesses disjoint: tag them with `// st.token:N` "
                     "(same N = same LDS region)")
    if w.shaped_by:
        lines.append("shaped by " + ", ".join(w.shaped_by))
    return lines


def other_producers(w: PlannedWait) -> list[str]:
    """The producers besides the binding one, by line then predecessor: one entry per
    producer line, its countFrom per path when the paths differ."""
    b = binding_dep(w.deps)
    by_line: dict[tuple[int, str], dict[str | None, int]] = {}
    for d in w.deps:
        if b is not None and d.line == b.line:
            continue
        by_line.setdefault((d.line, d.mnemonic), {})[d.pred] = d.count_from
    items = []
    for (line, mnemonic), per_pred in sorted(by_line.items()):
        counts = sorted(set(per_pred.values()), reverse=True)
        items.append(_Item(line, mnemonic, counts[0] if len(counts) == 1 else None, 0, False))
    return _runs(items)


def tooltip_markdown(w: PlannedWait, names: BlockNames, target: Any = None) -> str:
    """A hint's tooltip: the summary, then the other producers the wait drains."""
    parts = wait_summary(w, names, target)
    others = other_producers(w)
    if others:
        parts.append("also drains " + ", ".join(others))
    return "  \n".join(parts)


# -- FIFO state ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Item:
    line: int
    mnemonic: str
    count_from: int | None
    trips_back: int
    needed: bool
    #: the op's kind on a counter that several kinds share ("LDS", "SMEM, out of order")
    kind: str = ""


def _lines_text(lines: Sequence[int]) -> str:
    """[427, 428, 430, 431, 432] -> "L427–428, 430–432"."""
    spans: list[list[int]] = []
    for n in lines:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return "L" + ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


def _runs(items: Sequence[_Item]) -> list[str]:
    """Consecutive items of one mnemonic (same loop trip, same emphasis, lines rising) as one
    entry: "L427–434 `ds_load_b128` ×8 (countFrom 28–21)".  Every op stays visible."""
    out: list[str] = []
    i = 0
    while i < len(items):
        j = i + 1
        while (j < len(items) and items[j].mnemonic == items[i].mnemonic and items[j].kind == items[i].kind
               and items[j].trips_back == items[i].trips_back and items[j].needed == items[i].needed
               and items[j].line > items[j - 1].line):
            j += 1
        run = items[i:j]
        first = run[0]
        text = f"{_lines_text([it.line for it in run])} `{first.mnemonic}`"
        if len(run) > 1:
            text += f" ×{len(run)}"
        counts = [it.count_from for it in run if it.count_from is not None]
        notes = [first.kind] if first.kind else []
        if counts:
            lo, hi = min(counts), max(counts)
            notes.append(f"countFrom {hi}" if lo == hi else f"countFrom {hi}–{lo}")
        if first.trips_back:
            notes.append("previous trip" if first.trips_back == 1 else f"{first.trips_back} trips back")
        if notes:
            text += " (" + ", ".join(notes) + ")"
        out.append(f"**{text}**" if first.needed else text)
        i = j
    return out


def needed_markdown(waits: Sequence[PlannedWait], limit: int = 3) -> str:
    """What an instruction needs, in one line: per wait planned before it, its counter and the
    producers it waits for as runs ("`dscnt` L427–434 `ds_load_b128` ×8"), the first `limit`
    runs and "+N more" (the hover's short form of the FIFO state's bold entries)."""
    parts = []
    for w in waits:
        lines = sorted({d.line: d for d in w.deps}.values(), key=lambda d: d.line)
        runs = _runs([_Item(d.line, d.mnemonic, None, 0, False) for d in lines])
        if not runs:
            continue
        more = f", +{len(runs) - limit} more" if len(runs) > limit else ""
        parts.append(f"`{counter_name(w.counter)}` " + ", ".join(runs[:limit]) + more)
    return "; ".join(parts)


def _queue_key(q: QueueView) -> tuple:
    return (tuple((op.line, op.mnemonic, op.count_from, op.trips_back) for op in q.ops), q.saturated)


class _Words:
    """How one target names a timeline's queue: the hardware counter and each op's kind
    (from the target model, `targets.Target`; without one, the timeline's own name)."""

    def __init__(self, target: Any):
        self.target = target

    def counter(self, timeline: str) -> str:
        return hardware_counter(timeline, self.target)

    def kind(self, timeline: str, mnemonic: str, mixed: bool) -> str:
        """The op's kind when it tells the reader something: the queue mixes kinds of one
        shared counter, or the kind completes out of order."""
        if self.target is None or not self.target.shares_counter(timeline):
            return ""
        if not mixed and self.target.timeline_in_order(timeline):
            return ""
        return self.target.op_kind(timeline, mnemonic)

    def in_order(self, timeline: str) -> bool:
        return self.target is None or self.target.timeline_in_order(timeline)


def fifo_markdown(function: str, state: dict[str, list[QueueView]], waits: Sequence[PlannedWait],
                  names: BlockNames, target: Any = None) -> str:
    """Counter by counter, in the target's words (`target`: the `targets.Target` of the
    file): what is in flight, oldest first; the kinds a counter counts (gfx9's lgkmcnt: LDS,
    SMEM, messages) in one queue, each op's kind marked; identical predecessor queues grouped
    ("from `.LBB0_1` and the entry"); the ops a planned wait here drains listed under it, the
    producers the instruction needs in bold."""
    if not state:
        return "Nothing asynchronous is in flight before this instruction."
    words = _Words(target)
    by_counter = {counter_name(w.counter): w for w in waits}
    #: hardware counter -> predecessor -> [(timeline, queue)], in the views' timeline order
    merged: dict[str, dict[str | None, list[tuple[str, QueueView]]]] = {}
    for timeline, queues in state.items():
        per_pred = merged.setdefault(words.counter(timeline), {})
        for q in queues:
            per_pred.setdefault(q.pred, []).append((timeline, q))
    order = sorted(merged, key=lambda c: (c not in by_counter, list(merged).index(c)))
    parts = ["**In flight before this instruction** (oldest first; **bold**: what this instruction needs)"]
    for counter in order:
        wait = by_counter.get(counter)
        needed = {(d.line, d.pred) for d in wait.deps} if wait is not None else set()
        groups: dict[tuple, list[tuple[str | None, list[tuple[str, QueueView]]]]] = {}
        for pred, parts_of in merged[counter].items():
            key = tuple((t, _queue_key(q)) for t, q in parts_of)
            groups.setdefault(key, []).append((pred, parts_of))
        shown = list(groups.values())
        for members in shown[:HOVER_GROUPS]:
            preds = [p for p, _ in members]
            items: list[tuple[_Item, bool]] = []
            saturated = 0
            mixed = len({t for t, q in members[0][1] if q.ops}) > 1
            for timeline, q in members[0][1]:
                saturated += q.saturated
                in_order = words.in_order(timeline)
                for op in q.ops:
                    items.append((_Item(op.line, op.mnemonic, op.count_from, op.trips_back,
                                        any((op.line, p) in needed for p in preds), words.kind(timeline, op.mnemonic, mixed)),
                                  in_order))
            head = f"- `{counter}` {names.preds(function, preds)}, {len(items)} in flight"
            if wait is not None:
                def drained(it: _Item, in_order: bool) -> bool:
                    # a wait of N retires an in-order op with N younger ones of its kind in
                    # flight; an op of an out-of-order kind only when N is 0
                    return it.count_from is not None and it.count_from > wait.count and (in_order or wait.count == 0)
                gone = [it for it, o in items if drained(it, o)]
                kept = [it for it, o in items if not drained(it, o)]
                body = []
                if gone:
                    body.append(f"✓ drained by `{wait.instruction}`: " + ", ".join(_runs(gone)))
                if kept:
                    body.append("still in flight after it: " + ", ".join(_runs(kept)))
                text = head + ":  \n  " + "  \n  ".join(body) if body else head
            else:
                text = head + ": " + (", ".join(_runs([it for it, _ in items])) or "nothing")
            if saturated:
                text += f"; {saturated} more dropped at the queue's limit"
            parts.append(text)
        if len(shown) > HOVER_GROUPS:
            rest = [p for members in shown[HOVER_GROUPS:] for p, _ in members]
            parts.append(f"- `{counter}` {len(shown) - HOVER_GROUPS} more distinct queues, "
                         f"{names.preds(function, rest)}")
    return "\n".join(parts)
