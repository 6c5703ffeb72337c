"""Read-only views of a `Snapshot`: inlay hints, hover text and go-to-definition targets.

Everything shown is a field of the core's plan or provenance (`PlannedWait`, `DepInfo`,
`QueueView`, `FunctionResult.producers`); this module only chooses words and positions.
"""

from __future__ import annotations

import json
from typing import Iterator

from lsprotocol import types as T

from stinkywait_core.results import DepInfo, PlannedWait, QueueView

from .positions import range_json
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


Span = tuple[tuple[int, int], tuple[int, int]]


def instruction_span(snap: Snapshot, line: int, col: int | None = None) -> Span:
    """The source range of the instruction written on 1-based `line`, as (line, character)
    pairs."""
    info = snap.instr_at(line)
    if info is not None:
        return snap.lines.span_pos(info.line, info.col, info.end_line, info.end_col)
    if col is not None and col > 0:
        return snap.lines.span_pos(line, col, None, None)
    return snap.lines.line_range_pos(line)


def instruction_range(snap: Snapshot, line: int, col: int | None = None) -> T.Range:
    (sl, sc), (el, ec) = instruction_span(snap, line, col)
    return T.Range(start=T.Position(line=sl, character=sc), end=T.Position(line=el, character=ec))


def _markdown(value: str) -> dict:
    return {"kind": "markdown", "value": value}


def inlay_hint(snap: Snapshot, w: PlannedWait) -> dict:
    """The wait exactly as inserted, then the countFrom of each producer (each a link), as
    the JSON of an LSP `InlayHint`.

    Built directly (no lsprotocol objects, no cattrs pass): a client that asks for the whole
    of a 30k-line kernel gets 7,500 hints, which cost 1.3 s on the event loop as objects."""
    tooltip = _markdown(wait_markdown(w))
    uri = snap.uri
    first = {"value": w.instruction, "tooltip": tooltip}
    if w.deps:
        first["location"] = {"uri": uri, "range": range_json(*instruction_span(snap, w.deps[0].line, w.deps[0].column))}
    parts = [first]
    for i, d in enumerate(w.deps[:LABEL_DEPS]):
        parts.append({"value": (" countFrom " if i == 0 else ", ") + str(d.count_from),
                      "tooltip": _markdown("producer " + dep_sentence(d)),
                      "location": {"uri": uri, "range": range_json(*instruction_span(snap, d.line, d.column))}})
    if len(w.deps) > LABEL_DEPS:
        parts.append({"value": f" +{len(w.deps) - LABEL_DEPS}", "tooltip": tooltip})
    after = w.placement == "after"
    line, ch = snap.lines.line_end_pos(w.line) if after else snap.lines.pos(w.line, w.column)
    return {"position": {"line": line, "character": ch}, "label": parts,
            "textEdits": [snap.lines.insertion_json(w.insert_line, w.insert_text)],
            "tooltip": tooltip, "paddingLeft": after, "paddingRight": not after}


def iter_inlay_hints(snap: Snapshot, rng: T.Range) -> Iterator[dict]:
    """Hints whose position lies inside the requested range (closed; only those are
    rendered), as JSON objects, one at a time."""
    lo = (rng.start.line, rng.start.character)
    hi = (rng.end.line, rng.end.character)
    for w in snap.waits_between(rng.start.line + 1, rng.end.line + 1):
        h = inlay_hint(snap, w)
        p = h["position"]
        if lo <= (p["line"], p["character"]) <= hi:
            yield h


def inlay_hints(snap: Snapshot, rng: T.Range) -> list[dict]:
    return list(iter_inlay_hints(snap, rng))


def inlay_hints_text(snap: Snapshot, rng: T.Range) -> tuple[int, str]:
    """(count, JSON array text) of the hints in `rng`: serialised hint by hint, so a whole
    30k-line kernel (7.5k hints, 17 MB) never holds all its hint objects at once."""
    parts = [json.dumps(h) for h in iter_inlay_hints(snap, rng)]
    return len(parts), "[" + ",".join(parts) + "]"


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
