"""The custom requests behind the client's status item and plan view.

`stinkywait/status` {textDocument} -> what the status bar shows for one document: its planned
waits, the target the analysis used, and the review's findings per kind (null until the
review is in).  `stinkywait/plan` {textDocument, line?} -> every planned wait of the document
with the same explanation the hints and hover give (`explain`), for the plan view; it follows
the server's own snapshot, so the view shows exactly what the editor shows.  With `line` (the
hover's link in a client whose hover only has room for the summary) it also has `focus`: that
line's whole hover, summary and FIFO state.
"""

from __future__ import annotations

from typing import Any

from stinkywait_core import findings
from stinkywait_core.findings import binding_dep

from .explain import counter_name, hint_label, other_producers, rule_label, wait_summary
from .render import hover_markdown
from .snapshot import Snapshot
from .stall_view import kernel_stall, stall_record


def document_uri(params: Any) -> str | None:
    """`params.textDocument.uri` of a custom request (pygls hands those over as plain
    objects or dicts, depending on how it read them)."""
    doc = params.get("textDocument") if isinstance(params, dict) else getattr(params, "textDocument", None)
    uri = doc.get("uri") if isinstance(doc, dict) else getattr(doc, "uri", None)
    return uri if isinstance(uri, str) else None


def focus_line(params: Any) -> int | None:
    """`params.line` of a plan request (1-based), when it is a positive integer."""
    line = params.get("line") if isinstance(params, dict) else getattr(params, "line", None)
    return line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None


def finding_counts(snap: Snapshot) -> dict[str, int] | None:
    """Findings per kind as the user sees them (kinds turned off are not counted)."""
    if snap.checks is None:
        return None
    counts = {kind: 0 for kind in findings.CODES}
    for d in snap.checks:
        p = snap.presented(d)
        kind = findings.KIND_OF_CODE.get(p.code) if p is not None else None
        if kind is not None:
            counts[kind] += 1
    return counts


def status_json(snap: Snapshot) -> dict[str, Any]:
    snap.ir()
    return {"uri": snap.uri, "version": snap.version, "waits": len(snap.waits), "target": snap.target(),
            "findings": finding_counts(snap), "stall": kernel_stall(snap.analysis)}


def _settings_json(snap: Snapshot) -> dict[str, Any]:
    """The analysis settings a user can change (not the core's internal switches)."""
    o = snap.job.options if snap.job is not None else None
    if o is None:
        return {}
    return {"numWaves": o.num_waves, "optimize": o.optimize,
            "enableLoopCarriedTokenDeps": o.enable_loop_carried_token_deps,
            "enableTensorDescriptorWar": o.enable_tensor_descriptor_war,
            "coalesceWindow": o.coalesce_window}


def plan_json(snap: Snapshot, line: int | None = None) -> dict[str, Any]:
    analysis = snap.ir()
    names = snap.names()
    target = snap.target_model()
    functions = []
    for fr in snap.functions:
        waits = []
        for w in sorted(fr.waits, key=lambda w: (w.insert_line, w.line)):
            b = binding_dep(w.deps)
            waits.append({
                "line": w.line, "column": w.column, "block": names.block(w.function, w.block),
                "placement": w.placement, "instruction": w.instruction, "counter": counter_name(w.counter),
                "count": w.count, "rule": rule_label(w), "proven": findings.rule_is_proven(w.rule),
                "label": "".join(p for p in hint_label(w, "detailed") if p),
                "summary": wait_summary(w, names, target)[1:],
                "producer": None if b is None else {"line": b.line, "mnemonic": b.mnemonic,
                                                     "countFrom": b.count_from},
                "others": other_producers(w),
                "stall": stall_record(analysis, w, names),
            })
        # where the cycles go: the costliest waits first (text order among equals)
        waits.sort(key=lambda r: -(r["stall"] or {}).get("cycles", 0))
        functions.append({"name": fr.name, "waits": waits, "stall": (kernel_stall(analysis) or {}).get(
                              "functions", {}).get(fr.name),
                          "diagnostics": [d.to_json() for d in fr.diagnostics]})
    focus = None
    if line is not None:
        focus = {"line": line, "markdown": hover_markdown(snap, line)}
    return {"file": snap.job.path if snap.job is not None else snap.uri, "version": snap.version,
            "target": snap.target(), "settings": _settings_json(snap),
            "diagnostics": [d.to_json() for d in snap.diagnostics if d.function is None] if analysis else
            [d.to_json() for d in snap.diagnostics],
            "functions": functions, "focus": focus}
