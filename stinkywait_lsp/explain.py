"""Words for the core's records: block names as the user wrote them, the binding producer of a
wait, a wait's one-paragraph summary, and the FIFO state with identical queues grouped.

Hints (`render.inlay_hint`), the hover and the plan view all explain a wait with these
functions, so a fact is worded the same way everywhere and appears once per view.  Everything
is read from `PlannedWait`, `DepInfo` and `QueueView`; counter names are the records' own
(`ds` is shown as `dscnt`, a name already ending in "cnt" as it is), never a fixed list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from stinkywait_core.findings import binding_dep, rule_is_proven, subrule
from stinkywait_core.results import DepInfo, PlannedWait, QueueView

#: distinct predecessor queues shown per counter before the rest are only named
HOVER_GROUPS = 4

#: a reason that only restates the binding producer ("ds_load_b128 (line 434) still in
#: flight, countFrom 21 via ^x"): the summary already says it in words
_RESTATED = re.compile(r"^\S+ \(line \d+\) still in flight, countFrom \d+(?: via \^\S+)?$")


def counter_name(counter: str) -> str:
    """`ds` -> `dscnt`; `xcnt`, `vmcnt`, `lgkmcnt` stay as they are."""
    return counter if counter.endswith("cnt") else counter + "cnt"


# -- block names --------------------------------------------------------------------------


class BlockNames:
    """Display names of one module's blocks, per function: the label as written (`.LBB0_2`,
    STIR `^loop`), "the entry" for a kernel's first block, and "the block after line N" for a
    block the front end split off without a label (it calls them `<label>_<k>`, `entry`).
    Indexed once per snapshot (one dict entry per block); a name is worked out when first
    asked for, from its block and the ones before it, so a hint request on a 30k-line kernel
    does not read every instruction."""

    def __init__(self, module: Any, language: str | None):
        self._stir = language == "stir"
        #: (function, block) -> (function, position of the block in the text)
        self._where: dict[tuple[str, str], tuple[Any, int]] = {}
        self._names: dict[tuple[str, str], str] = {}
        for fn in getattr(module, "functions", None) or []:
            for i, block in enumerate(fn.blocks):
                self._where.setdefault((fn.name, block.name), (fn, i))

    def _name(self, key: tuple[str, str]) -> str:
        fn, i = self._where[key]
        block = fn.blocks[i]
        if self._stir:
            return f"`^{block.name}`"
        if i == 0:
            return "the entry"
        first = next((inst for inst in block.instrs if inst.span is not None and not inst.is_phi), None)
        if first is not None and first.is_label:
            return f"`{block.name}`"
        for j in range(i - 1, -1, -1):
            last = next((inst for inst in reversed(fn.blocks[j].instrs)
                         if inst.span is not None and not inst.is_phi), None)
            if last is not None:
                return f"the block after line {last.span.end_line}"
        line = first.span.line - 1 if first is not None else (block.span.line if block.span else 0)
        return f"the block after line {line}"

    def block(self, function: str, block: str | None) -> str:
        """A block as a noun phrase (`` `.LBB0_2` ``, "the entry", "the block after line 414")."""
        if block is None:
            return "the kernel start"
        key = (function, block)
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = self._name(key) if key in self._where else f"`{block}`"
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


# -- one wait -----------------------------------------------------------------------------


def rule_label(w: PlannedWait) -> str:
    """The rule class, plus the specific rule when it says more ("RAW (loop-carried-raw)";
    never "RAW: raw")."""
    sub = subrule(w.reason)
    if sub and sub != w.rule.lower():
        return f"{w.rule} ({sub})"
    return w.rule


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


def binding_paths(w: PlannedWait, b: DepInfo) -> list[str | None]:
    """The predecessors through which the binding producer sits at its smallest countFrom:
    the paths that need this count."""
    return [d.pred for d in w.deps if d.line == b.line and d.count_from == b.count_from]


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


def wait_summary(w: PlannedWait, names: BlockNames) -> list[str]:
    """The summary lines of one wait: the wait and its rule; the producer that sets its count
    and why that count; the path that needs it; what else shaped it."""
    head = f"**{w.instruction}** — {rule_label(w)}"
    if w.placement == "after":
        head += f", appended at the end of {names.block(w.function, w.block)}"
    lines = [head]
    b = binding_dep(w.deps)
    if b is not None:
        allowed = b.count_from - 1
        if w.count == allowed:
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


def tooltip_markdown(w: PlannedWait, names: BlockNames) -> str:
    """A hint's tooltip: the summary, then the other producers the wait drains."""
    parts = wait_summary(w, names)
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
        while (j < len(items) and items[j].mnemonic == items[i].mnemonic
               and items[j].trips_back == items[i].trips_back and items[j].needed == items[i].needed
               and items[j].line > items[j - 1].line):
            j += 1
        run = items[i:j]
        first = run[0]
        text = f"{_lines_text([it.line for it in run])} `{first.mnemonic}`"
        if len(run) > 1:
            text += f" ×{len(run)}"
        counts = [it.count_from for it in run if it.count_from is not None]
        notes = []
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


def fifo_markdown(function: str, state: dict[str, list[QueueView]], waits: Sequence[PlannedWait],
                  names: BlockNames) -> str:
    """Queue by queue: what is in flight, oldest first; identical predecessor queues grouped
    ("from `.LBB0_1` and the entry"); the ops a planned wait here drains listed under it,
    the producers the instruction needs in bold."""
    if not state:
        return "Nothing asynchronous is in flight before this instruction."
    by_counter = {w.counter: w for w in waits}
    order = sorted(state, key=lambda c: (c not in by_counter, list(state).index(c)))
    parts = ["**In flight before this instruction** (oldest first; **bold**: what this instruction needs)"]
    for counter in order:
        queues = state[counter]
        wait = by_counter.get(counter)
        needed = {(d.line, d.pred) for d in wait.deps} if wait is not None else set()
        groups: dict[tuple, list[QueueView]] = {}
        for q in queues:
            groups.setdefault(_queue_key(q), []).append(q)
        shown = list(groups.values())
        for members in shown[:HOVER_GROUPS]:
            q = members[0]
            preds = [m.pred for m in members]
            items = [_Item(op.line, op.mnemonic, op.count_from, op.trips_back,
                           any((op.line, p) in needed for p in preds)) for op in q.ops]
            head = f"- `{counter_name(counter)}` {names.preds(function, preds)}, {len(q.ops)} in flight"
            if wait is not None:
                gone = [it for it in items if it.count_from is not None and it.count_from > wait.count]
                kept = [it for it in items if not (it.count_from is not None and it.count_from > wait.count)]
                body = []
                if gone:
                    body.append(f"✓ drained by `{wait.instruction}`: " + ", ".join(_runs(gone)))
                if kept:
                    body.append("still in flight after it: " + ", ".join(_runs(kept)))
                text = head + ":  \n  " + "  \n  ".join(body) if body else head
            else:
                text = head + ": " + (", ".join(_runs(items)) or "nothing")
            if q.saturated:
                text += f"; {q.saturated} more dropped at the queue's limit"
            parts.append(text)
        if len(shown) > HOVER_GROUPS:
            rest = [m.pred for members in shown[HOVER_GROUPS:] for m in members]
            parts.append(f"- `{counter_name(counter)}` {len(shown) - HOVER_GROUPS} more distinct queues, "
                         f"{names.preds(function, rest)}")
    return "\n".join(parts)
