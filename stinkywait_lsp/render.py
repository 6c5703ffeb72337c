"""Read-only views of a `Snapshot`: inlay hints, hover text and go-to-definition targets.

Everything shown is a field of the core's plan or provenance (`PlannedWait`, `DepInfo`,
`QueueView`, `FunctionResult.producers`); this module only chooses words and positions.
"""

from __future__ import annotations

from lsprotocol import types as T

from stinkywait_core.results import DepInfo, PlannedWait, QueueView

from .positions import in_range
from .snapshot import Snapshot

#: deps spelled out in a hint label before the rest collapse into "+N" (labels stay short)
LABEL_DEPS = 3
#: hover caps, so a 64-deep queue or a 20-way join stays readable
HOVER_PREDS = 4
HOVER_OPS = 12


def _pred(name: str | None) -> str:
    return f"`{name}`" if name else "the entry (no predecessor)"


def dep_sentence(d: DepInfo) -> str:
    """One producer in words: what, where, which queue it sits in, and how deep."""
    return (f"`{d.mnemonic}` at line {d.line} (block `{d.block}`, via {_pred(d.pred)}): "
            f"countFrom {d.count_from}")


def wait_markdown(w: PlannedWait) -> str:
    """Why one planned wait exists: the reason, the rule and each producer it drains."""
    parts = [f"**`{w.instruction}`** — {w.reason}", "", f"rule `{w.rule}`, block `{w.block}`"
             + (", appended after the block's last instruction" if w.placement == "after" else "")]
    if w.shaped_by:
        parts.append("shaped by " + ", ".join(f"`{s}`" for s in w.shaped_by))
    if w.deps:
        parts.append("")
        parts.extend(f"- producer {dep_sentence(d)}" for d in w.deps)
    return "\n".join(parts)


def _dep_location(snap: Snapshot, d: DepInfo) -> T.Location:
    return T.Location(uri=snap.uri, range=instruction_range(snap, d.line, d.column))


def instruction_range(snap: Snapshot, line: int, col: int | None = None) -> T.Range:
    """The source range of the instruction written on 1-based `line`."""
    info = snap.instr_at(line)
    if info is not None:
        return snap.lines.span(info.line, info.col, info.end_line, info.end_col)
    if col is not None and col > 0:
        return snap.lines.span(line, col, None, None)
    return snap.lines.line_range(line)


def hint_position(snap: Snapshot, w: PlannedWait) -> T.Position:
    """Before the anchor instruction; a tail drain appended after a block's last line sits at
    the end of that line."""
    if w.placement == "after":
        return snap.lines.line_end(w.line)
    return snap.lines.position(w.line, w.column)


def inlay_hint(snap: Snapshot, w: PlannedWait) -> T.InlayHint:
    """The wait exactly as inserted, then the countFrom of each producer (each a link)."""
    tooltip = T.MarkupContent(kind=T.MarkupKind.Markdown, value=wait_markdown(w))
    first = w.deps[0] if w.deps else None
    parts = [T.InlayHintLabelPart(value=w.instruction, tooltip=tooltip,
                                  location=_dep_location(snap, first) if first else None)]
    for i, d in enumerate(w.deps[:LABEL_DEPS]):
        parts.append(T.InlayHintLabelPart(
            value=(" countFrom " if i == 0 else ", ") + str(d.count_from),
            tooltip=T.MarkupContent(kind=T.MarkupKind.Markdown, value="producer " + dep_sentence(d)),
            location=_dep_location(snap, d)))
    if len(w.deps) > LABEL_DEPS:
        parts.append(T.InlayHintLabelPart(value=f" +{len(w.deps) - LABEL_DEPS}", tooltip=tooltip))
    after = w.placement == "after"
    return T.InlayHint(position=hint_position(snap, w), label=parts, tooltip=tooltip,
                       text_edits=[snap.lines.insertion(w.insert_line, w.insert_text)],
                       padding_left=after, padding_right=not after)


def inlay_hints(snap: Snapshot, rng: T.Range) -> list[T.InlayHint]:
    """Hints whose position lies inside the requested range (only those are rendered)."""
    waits = snap.waits_between(rng.start.line + 1, rng.end.line + 1)
    return [h for h in (inlay_hint(snap, w) for w in waits) if in_range(h.position, rng)]


def _queue_line(q: QueueView) -> str:
    ops = [f"L{op.line} `{op.mnemonic}` (countFrom {op.count_from}"
           + (f", {op.trips_back} trip(s) back" if op.trips_back else "") + ")"
           for op in q.ops[-HOVER_OPS:]]
    hidden = len(q.ops) - HOVER_OPS
    head = f"{hidden} older, " if hidden > 0 else ""
    sat = f"; {q.saturated} dropped at kMaxInFlight" if q.saturated else ""
    body = ", ".join(ops) if ops else "nothing"
    return f"- from {_pred(q.pred)}: {head}{body}{sat}"


def fifo_markdown(state: dict[str, list[QueueView]]) -> str:
    """Queue by queue (counter, then predecessor): what is in flight, oldest first."""
    if not state:
        return "No asynchronous operations in flight before this instruction."
    parts = ["**In flight before this instruction** (oldest first)"]
    for counter, queues in state.items():
        parts.append("")
        parts.append(f"`{counter}`:")
        parts.extend(_queue_line(q) for q in queues[:HOVER_PREDS])
        if len(queues) > HOVER_PREDS:
            parts.append(f"- … {len(queues) - HOVER_PREDS} more predecessor queue(s)")
    return "\n".join(parts)


def hover(snap: Snapshot, line0: int) -> T.Hover | None:
    """FIFO state at the instruction on this line, plus why any hinted wait is there."""
    line = line0 + 1
    info = snap.instr_at(line)
    waits = snap.waits_between(line, line)
    if info is None and not waits:
        return None
    sections: list[str] = []
    if info is not None:
        sections.append(f"`{info.mnemonic}` in block `{info.block}`")
    if waits:
        sections.append("**Planned waits here**\n\n" + "\n\n".join(wait_markdown(w) for w in waits))
    if info is not None:
        sections.append(fifo_markdown(snap.fifo_at(line)))
    rng = instruction_range(snap, line) if info is not None else snap.lines.line_range(line)
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value="\n\n---\n\n".join(sections)),
                   range=rng)


def definitions(snap: Snapshot, line0: int) -> list[T.Location]:
    """The async producers the consumer on this line waits for (from the core's provenance)."""
    return [T.Location(uri=snap.uri, range=instruction_range(snap, pl, pc))
            for pl, pc in snap.producers_of(line0 + 1)]
