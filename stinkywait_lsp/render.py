"""Read-only views of a `Snapshot`: inlay hints, hover text and go-to-definition targets.

Everything shown is a field of the core's plan or provenance (`PlannedWait`, `DepInfo`,
`QueueView`, `FunctionResult.producers`); the words come from `explain`, this module only
chooses positions and LSP shapes.
"""

from __future__ import annotations

import json
from typing import Iterator
from urllib.parse import quote

from lsprotocol import types as T

from stinkywait_core.findings import binding_dep
from stinkywait_core.results import PlannedWait

from .explain import fifo_markdown, hardware_counter, hint_label, needed_markdown, tooltip_markdown, wait_summary
from .positions import range_json
from .snapshot import Snapshot
from .stall_view import stall_line


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


def inlay_hint(snap: Snapshot, w: PlannedWait, index: int | None = None) -> dict:
    """The wait exactly as inserted, then (detailed labels) the producer that sets its count,
    linked to it; the explanation once, as the hint's tooltip.  As the JSON of an LSP
    `InlayHint`.  With `index` (the wait's place in `snap.waits`) the tooltip is left to
    `inlayHint/resolve` (`resolve_tooltip`): a client that resolves asks for it on hover, and
    a whole 30k-line kernel's hints cost half as much.

    Built directly (no lsprotocol objects, no cattrs pass): a client that asks for the whole
    of a 30k-line kernel gets 7,500 hints, which cost 1.3 s on the event loop as objects."""
    view = snap.view
    wait_text, producer = hint_label(w, view.hint_label)
    parts: list[dict] = [{"value": wait_text}]
    if producer is not None:
        part: dict = {"value": producer}
        b = binding_dep(w.deps)
        if b is not None:
            part["location"] = {"uri": snap.uri, "range": range_json(*instruction_span(snap, b.line, b.column))}
        parts.append(part)
    after = w.placement == "after"
    at_previous_end = not after and view.hint_position == "endOfPreviousLine" and w.line > 1
    if after:
        line, ch = snap.lines.line_end_pos(w.line)
    elif at_previous_end:
        line, ch = snap.lines.line_end_pos(w.line - 1)
    else:
        line, ch = snap.lines.pos(w.line, w.column)
    pad_left = after or at_previous_end
    hint = {"position": {"line": line, "character": ch}, "label": parts,
            "textEdits": [snap.lines.insertion_json(w.insert_line, w.insert_text)],
            "paddingLeft": pad_left, "paddingRight": not pad_left}
    if index is None:
        hint["tooltip"] = _markdown(tooltip_markdown(w, snap.names(), snap.target_model()))
    else:
        hint["data"] = {"uri": snap.uri, "key": list(snap.key), "index": index, "line": w.line,
                        "instruction": w.instruction}
    return hint


def resolve_tooltip(snap: Snapshot, data: dict) -> dict | None:
    """The tooltip of a hint sent without one (`inlay_hint(..., index=...)`), from the same
    version when it is still current, else from the wait at the same line and instruction."""
    index, line, instruction = data.get("index"), data.get("line"), data.get("instruction")
    wait = None
    if list(snap.key) == data.get("key") and isinstance(index, int) and 0 <= index < len(snap.waits):
        wait = snap.waits[index]
    elif isinstance(line, int):
        wait = next((w for w in snap.waits_between(line, line) if w.instruction == instruction), None)
    return None if wait is None else _markdown(tooltip_markdown(wait, snap.names(), snap.target_model()))


def iter_inlay_hints(snap: Snapshot, rng: T.Range, lazy: bool = False) -> Iterator[dict]:
    """Hints whose position lies inside the requested range (closed; only those are
    rendered), as JSON objects, one at a time; `lazy`: tooltips left to resolve."""
    lo = (rng.start.line, rng.start.character)
    hi = (rng.end.line, rng.end.character)
    # a hint at the end of the previous line belongs to the wait anchored one line below
    below = 1 if snap.view.hint_position == "endOfPreviousLine" else 0
    first, last = snap.wait_span(rng.start.line + 1, rng.end.line + 1 + below)
    for i in range(first, last):
        h = inlay_hint(snap, snap.waits[i], i if lazy else None)
        p = h["position"]
        if lo <= (p["line"], p["character"]) <= hi:
            yield h


def inlay_hints(snap: Snapshot, rng: T.Range, lazy: bool = False) -> list[dict]:
    return list(iter_inlay_hints(snap, rng, lazy))


def inlay_hints_text(snap: Snapshot, rng: T.Range, lazy: bool = False) -> tuple[int, str]:
    """(count, JSON array text) of the hints in `rng`: serialised hint by hint, so a whole
    30k-line kernel (7.5k hints, 17 MB) never holds all its hint objects at once."""
    parts = [json.dumps(h) for h in iter_inlay_hints(snap, rng, lazy)]
    return len(parts), "[" + ",".join(parts) + "]"


def detail_link(command: str, uri: str, line: int, text: str) -> str:
    """A markdown command link: `command(uri, line)` (the client's wait plan at this line)."""
    args = quote(json.dumps([uri, line]), safe="")
    return f"[{text}](command:{command}?{args})"


def hover_markdown(snap: Snapshot, line: int, detail_command: str | None = None) -> str | None:
    """Summary first: the instruction and its block; each wait planned before it (rule, the
    producer that sets its count, the path that needs it); then the FIFO state of every
    counter, identical predecessor queues grouped, drained ops under their wait.

    With `detail_command` (a client whose hover box is small and which runs command links,
    VS Code's: 250 px by default) the hover is only what fits that box: each wait's rule, its
    producer and path, then one line with what the instruction needs, the counters in flight
    and a link to `detail_command` (the wait plan at this line), where the instruction's
    block, the rest of the summary and the FIFO state are.  One line of room is left for more
    of the summary."""
    info = snap.instr_at(line)
    waits = snap.waits_between(line, line)
    if info is None and not waits:
        return None
    names = snap.names()
    sections: list[str] = []
    if info is not None:
        function, state = snap.fifo_at(line)
        function = function or (waits[0].function if waits else "")
        where = f"`{info.mnemonic}` in {names.block(function, info.block)}"
    else:
        function, state = (waits[0].function, {})
        where = ""
    if detail_command is not None:
        return _compact_hover(snap, line, waits, where, state, detail_command)
    if waits:
        summary = [where] if where else []
        analysis = snap.ir()
        for w in waits:
            lines = wait_summary(w, names, snap.target_model())
            stall = stall_line(analysis, w, names)
            if stall is not None:
                lines = [*lines[:1], stall, *lines[1:]]
            summary.append("  \n".join(lines))
        sections.append("\n\n".join(summary))
    elif where:
        sections.append(where)
    if info is not None:
        sections.append(fifo_markdown(function, state, [w for w in waits if w.placement == "before"], names,
                                      snap.target_model()))
    return "\n\n---\n\n".join(sections)


#: lines of a wait's summary the compact hover shows: the wait and its rule, the producer
#: that sets its count and the path (the rest is in the wait plan)
_COMPACT_SUMMARY_LINES = 2


def _compact_hover(snap: Snapshot, line: int, waits: list[PlannedWait], where: str,
                   state: dict, command: str) -> str:
    """One paragraph: each wait's first summary lines, then one line with what the
    instruction needs (or, without a wait, the instruction and its block), the counters in
    flight and the link."""
    names = snap.names()
    target = snap.target_model()
    lines = [text for w in waits for text in wait_summary(w, names, target)[:_COMPACT_SUMMARY_LINES]]
    needs = needed_markdown([w for w in waits if w.placement == "before"])
    last = ["needs " + needs] if needs else ([where] if where and not waits else [])
    if state:
        # ops in flight per hardware counter (timelines that share one add up), on the
        # predecessor path with the most
        per_pred: dict[str, dict[str | None, int]] = {}
        for timeline, queues in state.items():
            counts = per_pred.setdefault(hardware_counter(timeline, target), {})
            for q in queues:
                counts[q.pred] = counts.get(q.pred, 0) + len(q.ops)
        busy = [f"`{c}` {max(n.values())}" for c, n in per_pred.items() if n and max(n.values())]
        last.append("in flight: " + ", ".join(busy) if busy else "nothing in flight")
    elif where:
        last.append("nothing in flight")
    last.append(detail_link(command, snap.uri, line, "the FIFO state in the wait plan"))
    lines.append(" · ".join(last))
    return "  \n".join(lines)


def hover(snap: Snapshot, line0: int, detail_command: str | None = None) -> T.Hover | None:
    """The hover of the instruction on this 0-based line (None where there is nothing)."""
    line = line0 + 1
    value = hover_markdown(snap, line, detail_command)
    if value is None:
        return None
    rng = instruction_range(snap, line) if snap.instr_at(line) is not None else snap.lines.line_range(line)
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=value), range=rng)


def definitions(snap: Snapshot, line0: int) -> list[T.Location]:
    """The async producers the consumer on this line waits for (from the core's provenance)."""
    return [T.Location(uri=snap.uri, range=instruction_range(snap, pl, pc))
            for pl, pc in snap.producers_of(line0 + 1)]
