"""Code actions: a preferred quick fix per missing hand-written wait, "Insert all N waits",
`source.fixAll.stinkywait` (whose edit reproduces `stinkywait insert` exactly), and on an
unproven wait "Separate with st.token" (its edit from `codeAction/resolve` when the client
resolves edits: it re-analyses the file once per pair it tags).

Edits come from the core's records (`data.insert_line`/`insert_text` of a missing-wait
diagnostic, `PlannedWait.insert_*`, `Analysis.inserted_text()`), are computed from one
snapshot and are stamped with its version so a client rejects them once the text moved on.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from lsprotocol import types as T

from stinkywait_core import findings
from stinkywait_core.separate import separation_fixes

from .snapshot import Snapshot

log = logging.getLogger(__name__)

FIX_ALL_KIND = "source.fixAll.stinkywait"
MISSING = findings.CODES[findings.MISSING]
UNPROVEN = findings.CODES[findings.UNPROVEN]
REDUNDANT = findings.CODES[findings.REDUNDANT]
STRICTER = findings.CODES[findings.STRICTER]
#: codes whose fix inserts the wait the diagnostic names
INSERTS = frozenset({MISSING, UNPROVEN})

#: the count of a `s_wait_<counter> N` line: its last integer literal (hex, binary or decimal)
_COUNT = re.compile(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)(\s*(?:(?://|;).*)?)$")


@dataclass(frozen=True, slots=True)
class EditStyle:
    """How the client wants workspace edits (versioned `documentChanges` when supported)."""

    document_changes: bool = True

    def edit(self, snap: Snapshot, edits: list[T.TextEdit]) -> T.WorkspaceEdit:
        if self.document_changes:
            doc = T.OptionalVersionedTextDocumentIdentifier(uri=snap.uri, version=snap.version)
            return T.WorkspaceEdit(document_changes=[T.TextDocumentEdit(text_document=doc, edits=edits)])
        return T.WorkspaceEdit(changes={snap.uri: edits})


def wanted(only: list[str] | None, kind: str) -> bool:
    """`context.only` filter: a requested kind matches itself and its sub-kinds."""
    return only is None or any(kind == o or kind.startswith(o + ".") for o in only)


def missing_wait_fix(snap: Snapshot, style: EditStyle, diag: T.Diagnostic,
                     data: dict) -> T.CodeAction | None:
    """Insert the one wait a missing-wait diagnostic asks for (data from the core)."""
    line, text = data.get("insert_line"), data.get("insert_text")
    if not isinstance(line, int) or not isinstance(text, str) or not text:
        return None
    title = f"Insert {text.strip()}"
    if diag.code == UNPROVEN:
        title += " (or prove the LDS accesses disjoint with // st.token:N comments)"
    return T.CodeAction(title=title, kind=T.CodeActionKind.QuickFix,
                        diagnostics=[diag], is_preferred=True,
                        edit=style.edit(snap, [snap.lines.insertion(line, text)]))


#: `CodeAction.data` tag of an st.token fix whose edit `codeAction/resolve` computes
SEPARATE = "stinkywait.separate"


def _token_edits(snap: Snapshot, edits) -> list[T.TextEdit]:
    return [T.TextEdit(range=T.Range(start=snap.lines.position(e.line, e.col),
                                     end=snap.lines.position(e.line, e.col)), new_text=e.text) for e in edits]


def separation_actions(snap: Snapshot, style: EditStyle, diag: T.Diagnostic, core: object,
                       resolve: bool = False) -> list[T.CodeAction]:
    """The `// st.token:N` fix of an unproven wait (stinkywait_core.separate), titled by the
    pair the wait stands for.  With `resolve` (the client resolves a code action's edit) the
    edit is left to `codeAction/resolve`, which tags pair after pair until the wait is gone
    (`resolved_separation`); otherwise the edit tags that first pair only."""
    analysis = snap.ir()
    wait = snap.planned_wait(core)
    if analysis is None or wait is None or not hasattr(analysis, "outputs"):
        return []
    fix = next((f for f in separation_fixes(analysis, wait) if f.edits), None)
    if fix is None:
        return []
    if resolve:
        return [T.CodeAction(title=fix.title, kind=T.CodeActionKind.QuickFix, diagnostics=[diag],
                             data={"kind": SEPARATE, "uri": snap.uri, "version": snap.version,
                                   "line": wait.line, "counter": wait.counter})]
    return [T.CodeAction(title=fix.title, kind=T.CodeActionKind.QuickFix, diagnostics=[diag],
                         edit=style.edit(snap, _token_edits(snap, fix.edits)))]


def separation_request(action: T.CodeAction) -> dict | None:
    """The resolve request an st.token action carries (None: not one of ours)."""
    data = action.data
    if not isinstance(data, dict) or data.get("kind") != SEPARATE:
        return None
    if not (isinstance(data.get("uri"), str) and isinstance(data.get("version"), int)
            and isinstance(data.get("line"), int) and isinstance(data.get("counter"), str)):
        return None
    return data


def resolved_separation(snap: Snapshot, style: EditStyle, action: T.CodeAction, data: dict) -> T.CodeAction:
    """`action` with the edit that removes its unproven wait (computed from the snapshot's
    text in fresh analyses, so it never touches the snapshot's IR: safe off the loop)."""
    from stinkywait_core.separate import complete_fix
    job = snap.job
    if job is None:
        return action
    try:
        fix = complete_fix(snap.text, job.path, job.options, job.language, data["line"], data["counter"])
    except Exception:  # noqa: BLE001 - a failed fix must not cost the request: no edit
        log.exception("st.token fix of %s line %d failed", snap.uri, data["line"])
        return action
    if fix.edits:
        action.edit = style.edit(snap, _token_edits(snap, fix.edits))
    return action


def spelled_like(written: str, count: int) -> str:
    """`count` in the radix `written` uses ("0xa" -> "0x12", "0XA" -> "0X12", "0b1" -> "0b10")."""
    if written[:2] in ("0x", "0X"):
        digits = format(count, "x")
        return written[:2] + (digits.upper() if any(c in "ABCDEF" for c in written[2:]) else digits)
    if written[:2] in ("0b", "0B"):
        return written[:2] + format(count, "b")
    return str(count)


def relaxed_text(original: str, instruction: str, count: int) -> str:
    """The relaxed wait as the user would write it: the core's `instruction` (it keeps the
    user's radix), or, from a core that spells it in decimal where the user wrote hex, the
    written line with its single count replaced in the user's radix.  Anything else (combined
    waits, whose one immediate encodes several counts) is the core's text unchanged."""
    head = original.split(None, 1)[0] if original.strip() else ""
    m = _COUNT.search(original)
    numbers = re.findall(r"\b(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)\b", instruction)
    if (m is None or head != instruction.split(None, 1)[0] or numbers != [str(count)]
            or not m.group(1).lower().startswith(("0x", "0b"))):
        return instruction
    return original[:m.start(1)] + spelled_like(m.group(1), count) + original[m.end(1):]


def review_fix(snap: Snapshot, style: EditStyle, diag: T.Diagnostic, code: str,
               data: dict) -> T.CodeAction | None:
    """Delete a redundant hand-written wait, or relax a stricter one (asm text only: the core
    gives the relaxed wait in asm spelling)."""
    if code == REDUNDANT and isinstance(data.get("replace_line"), int) and isinstance(data.get("instruction"), str):
        # a combined wait one of whose counters drains nothing: the core gives the rest
        edit = T.TextEdit(range=diag.range, new_text=data["instruction"])
        return T.CodeAction(title=f"Replace with {data['instruction'].strip()}", kind=T.CodeActionKind.QuickFix,
                            diagnostics=[diag], edit=style.edit(snap, [edit]))
    if code == REDUNDANT and isinstance(data.get("delete_line"), int):
        line = data["delete_line"]
        if not 1 <= line <= snap.lines.line_count:
            return None
        end = (T.Position(line=line, character=0) if line < snap.lines.line_count
               else snap.lines.line_end(line))
        edit = T.TextEdit(range=T.Range(start=T.Position(line=line - 1, character=0), end=end), new_text="")
        return T.CodeAction(title="Remove the redundant wait", kind=T.CodeActionKind.QuickFix,
                            diagnostics=[diag], edit=style.edit(snap, [edit]))
    language = getattr(snap.analysis, "language", None)
    if code == STRICTER and language == "asm" and isinstance(data.get("instruction"), str):
        written = snap.lines.text_of(diag.range)
        count = data.get("count")
        new = (relaxed_text(written, data["instruction"], count) if isinstance(count, int)
               and not isinstance(count, bool) else data["instruction"])
        edit = T.TextEdit(range=diag.range, new_text=new)
        return T.CodeAction(title=f"Relax to {new.strip()}", kind=T.CodeActionKind.QuickFix,
                            diagnostics=[diag], edit=style.edit(snap, [edit]))
    return None


def _touches_hint(snap: Snapshot, rng: T.Range) -> bool:
    return bool(snap.waits_between(rng.start.line + 1, rng.end.line + 1))


def code_actions(snap: Snapshot, params: T.CodeActionParams, style: EditStyle,
                 fix_all: list[T.TextEdit] | None, resolve: bool = False) -> list[T.CodeAction]:
    """All actions for a request; `fix_all` is the snapshot's fix-all edit list when the
    caller decided an "insert all" action may be offered (it is computed off the loop)."""
    only = params.context.only
    actions: list[T.CodeAction] = []
    here = snap.diagnostics_touching(params.range)
    missing = [(lsp, core) for lsp, core in here if core.code in INSERTS]
    if wanted(only, T.CodeActionKind.QuickFix):
        for lsp, core in here:
            if core.code == UNPROVEN:
                actions.extend(separation_actions(snap, style, lsp, core, resolve))
            if core.code in INSERTS:
                fix = missing_wait_fix(snap, style, lsp, core.data or {})
            else:
                fix = review_fix(snap, style, lsp, core.code, core.data or {})
            if fix is not None:
                actions.append(fix)
        if fix_all and (missing or _touches_hint(snap, params.range)
                        or params.context.trigger_kind != T.CodeActionTriggerKind.Automatic):
            actions.append(T.CodeAction(
                title=f"Insert all {len(snap.waits)} waits", kind=T.CodeActionKind.QuickFix,
                diagnostics=[lsp for lsp, _ in missing] or None, edit=style.edit(snap, fix_all)))
    if fix_all and wanted(only, FIX_ALL_KIND):
        actions.append(T.CodeAction(title=f"Insert all {len(snap.waits)} waits (stinkywait insert)",
                                    kind=FIX_ALL_KIND, edit=style.edit(snap, fix_all)))
    return actions


def needs_fix_all(snap: Snapshot, params: T.CodeActionParams) -> bool:
    """Whether this request could show an insert-all action (so the caller computes it)."""
    if not snap.waits:
        return False
    only = params.context.only
    return wanted(only, T.CodeActionKind.QuickFix) or wanted(only, FIX_ALL_KIND)
