"""The one-click st.token fix of an unproven wait, through the server, on a real aiter gfx1250
kernel (tests/data/aiter_gfx1250: it has no memtokens and 40 unproven waits)."""

from __future__ import annotations

import asyncio
import gzip

from lsprotocol import types as T

from .conftest import PRESETS, REPO, TIMEOUT, Session, apply_text_edits, whole_range, workspace_edits

FMHA = REPO / "tests" / "data" / "aiter_gfx1250" / "fmha_fwd_bf16__fmha_bf16_pertokenBf16_hd128_128x256.s.gz"
TITLE = "Separate with st.token (LDS ops at lines "


def _errors(diags: list[T.Diagnostic]) -> set[tuple[int, str]]:
    return {(d.range.start.line, d.message) for d in diags if d.severity == T.DiagnosticSeverity.Error}


def _wait_of(d: T.Diagnostic) -> str:
    return d.message.split(" is needed")[0]


def _open_fmha(session: Session, tmp_path) -> tuple[str, str]:
    path = tmp_path / "fmha_fwd_bf16.s"
    path.write_text(gzip.decompress(FMHA.read_bytes()).decode())
    return session.open_file(path)


async def _apply(session: Session, uri: str, edits: list[T.TextEdit]) -> tuple[str, list[T.Diagnostic]]:
    before = session.text(uri)
    version = session.replace_range(uri, whole_range(before), apply_text_edits(before, edits))
    return before, await session.diagnostics(uri, version)


async def _undo(session: Session, uri: str, text: str) -> None:
    version = session.replace_range(uri, whole_range(session.text(uri)), text)
    await session.diagnostics(uri, version)


async def test_resolved_fix_removes_the_unproven_wait(nvim, tmp_path):
    uri, text = _open_fmha(nvim, tmp_path)
    diags = await nvim.diagnostics(uri)
    errors = _errors(diags)
    unproven = [d for d in diags if d.code == "unproven-wait"]
    assert len(unproven) > 10
    tensor = [d for d in unproven if _wait_of(d).startswith("s_wait_tensorcnt")][:4]
    assert len(tensor) == 4
    for d in tensor:
        actions = await nvim.code_actions(uri, d.range, [d], only=[T.CodeActionKind.QuickFix])
        # the range may hold a second unproven wait of another counter (a fill read by its own
        # wave also waits on dscnt there): each gets its own fix, this one names `d`
        sep = [a for a in actions if a.title.startswith(TITLE) and list(a.diagnostics or ()) == [d]]
        assert len(sep) == 1, [a.title for a in actions]
        action = sep[0]
        assert not action.is_preferred
        # the client resolves edits: the costly part waits until the user picks the fix
        assert action.edit is None and action.data
        resolved = await asyncio.wait_for(nvim.client.code_action_resolve_async(action), TIMEOUT)
        edits = workspace_edits(resolved.edit, uri, nvim.docs[uri][1])
        assert len(edits) >= 2 and all(e.range.start == e.range.end and e.new_text.startswith("  // st.token:")
                                       for e in edits)
        lines = sorted(e.range.start.line + 1 for e in edits)
        assert len(set(lines)) == len(lines)
        pair = action.title[len(TITLE):].split(")")[0].split(" and ")
        assert {int(pair[0]), int(pair[1])} <= set(lines)
        before, after = await _apply(nvim, uri, edits)
        assert _errors(after) <= errors, "the fix must never add an error"
        assert not any(x.code == "unproven-wait" and x.range.start.line == d.range.start.line
                       and _wait_of(x) == _wait_of(d) for x in after), f"{_wait_of(d)} still at line {d.range.start.line + 1}"
        hints = await nvim.hints(uri, T.Range(start=T.Position(line=d.range.start.line, character=0),
                                              end=T.Position(line=d.range.start.line, character=0)))
        assert not any((h.label if isinstance(h.label, str) else h.label[0].value) == _wait_of(d) for h in hints)
        await _undo(nvim, uri, before)


async def test_without_resolve_the_fix_tags_the_pair(bare_client, tmp_path):
    caps = PRESETS["neovim@v0.11"]()
    caps.text_document.code_action.resolve_support = None
    await bare_client.initialize_session(T.InitializeParams(capabilities=caps))
    session = Session(bare_client, "neovim@v0.11 without resolve")
    uri, text = _open_fmha(session, tmp_path)
    diags = await session.diagnostics(uri)
    errors = _errors(diags)
    d = next(x for x in diags if x.code == "unproven-wait")
    actions = await session.code_actions(uri, d.range, [d], only=[T.CodeActionKind.QuickFix])
    action = next(a for a in actions if a.title.startswith(TITLE))
    edits = workspace_edits(action.edit, uri, 1)
    assert len(edits) == 2 and all("// st.token:" in e.new_text for e in edits)
    pair = action.title[len(TITLE):].split(")")[0].split(" and ")
    assert {e.range.start.line + 1 for e in edits} == {int(pair[0]), int(pair[1])}
    _, after = await _apply(session, uri, edits)
    assert _errors(after) <= errors
