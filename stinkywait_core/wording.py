"""A planned wait in plain words, for the command line: the wait, the producer that sets its
count, the path that needs it, and how many other producers it drains.

`stinkywait plan`, `insert --explain` and `check`'s notes say a wait the way the editors'
hints do (`stinkywait_lsp/explain.py` words the same records in Markdown): one producer, the
one with the smallest countFrom (`findings.binding_dep`), the predecessors through which it
sits there, named as the source names them (`ir/block_names.py`), and "+N more" for the other
producer lines; every producer only when asked (`--explain`, `--json`).  A producer reached
by several paths is one producer, not one per path.
"""

from __future__ import annotations

from .findings import binding_dep, rule_reason
from .targets.model import TIMELINE_NAMES

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any

    from .ir.block_names import BlockNames
    from .results import DepInfo, PlannedWait


def binding_paths(w: PlannedWait, b: DepInfo) -> list[str | None]:
    """The predecessors through which the binding producer sits at its smallest countFrom:
    the paths that need this count."""
    return [d.pred for d in w.deps if d.line == b.line and d.count_from == b.count_from]


def out_of_order_kind(b: DepInfo, target: Any) -> str | None:
    """The kind of the producer ("SMEM") when it completes out of order on `target` (only a
    wait of 0 retires it, whatever its countFrom), else None."""
    if target is None:
        return None
    sem = target.sem_for(b.mnemonic)
    for ck in sem.pushes if sem is not None else ():
        if ck in target.timelines and not target.in_order.get(ck, True):
            return target.op_kind(TIMELINE_NAMES[ck], b.mnemonic, order=False)
    return None


def producer_text(b: DepInfo, target: Any = None) -> str:
    """"ds_load_b128 L57 (countFrom 1)"; "s_load_b64 L17 (countFrom 4; SMEM completes out of
    order)" for a producer only a wait of 0 retires."""
    kind = out_of_order_kind(b, target)
    note = f"; {kind} completes out of order" if kind else ""
    return f"{b.mnemonic} L{b.line} (countFrom {b.count_from}{note})"


def path_text(w: PlannedWait, b: DepInfo, names: BlockNames) -> str:
    """"on the path from the entry and .LBB0_1" ("" when the producer is in the wait's own
    block, reached by no predecessor)."""
    paths = binding_paths(w, b)
    if all(p is None for p in paths):
        return ""
    return "on the path " + names.preds(w.function, paths)


def other_lines(w: PlannedWait, b: DepInfo | None) -> list[tuple[int, str, int]]:
    """(line, mnemonic, smallest countFrom) of every producer besides the binding one, one
    entry per producer line whatever the number of paths it arrives by, in line order."""
    out: dict[tuple[int, str], int] = {}
    for d in w.deps:
        if b is not None and d.line == b.line:
            continue
        key = (d.line, d.mnemonic)
        out[key] = min(out.get(key, d.count_from), d.count_from)
    return [(line, mnemonic, cf) for (line, mnemonic), cf in sorted(out.items())]


def wait_text(w: PlannedWait, names: BlockNames, every_producer: bool = False, target: Any = None) -> str:
    """One wait as a line a person scans: "s_wait_dscnt 0 in .LBB0_1 [RAW]:
    set by ds_load_b128 L57 (countFrom 1) on the path from the entry and .LBB0_1; +7 more"
    (`every_producer`: "also drains ds_load_b128 L50 (countFrom 8), ..." instead of +N)."""
    where = "at the end of" if w.placement == "after" else "in"
    head = f"{w.instruction} {where} {names.block(w.function, w.block)} [{w.rule}]"
    b = binding_dep(w.deps)
    if b is None:
        return f"{head}: {w.reason}" if w.reason else head
    parts = [f"set by {producer_text(b, target)}"]
    path = path_text(w, b, names)
    if path:
        parts[0] += " " + path
    others = other_lines(w, b)
    if others:
        if every_producer:
            parts.append("also drains " + ", ".join(f"{m} L{line} (countFrom {cf})" for line, m, cf in others))
        else:
            parts.append(f"+{len(others)} more")
    return f"{head}: " + "; ".join(parts)


def comment_text(w: PlannedWait, names: BlockNames, target: Any = None) -> str:
    """What `insert --explain` writes after an inserted wait: the rule, the producer that sets
    the count, the path, and how many more producers it drains."""
    b = binding_dep(w.deps)
    if b is None:
        return f"stinkywait: {rule_reason(w.rule, w.reason)}"
    text = f"stinkywait: {w.rule}: {producer_text(b, target)}"
    path = path_text(w, b, names)
    if path:
        text += " " + path
    n = len(other_lines(w, b))
    return text + (f"; +{n} more" if n else "")
