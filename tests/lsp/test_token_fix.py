"""The one-click st.token fix of an unproven wait, through the server, on a real aiter gfx1250
kernel (tests/data/aiter_gfx1250: it has no memtokens and 40 unproven waits)."""

from __future__ import annotations

import gzip

from lsprotocol import types as T

from .conftest import REPO, apply_text_edits, whole_range, workspace_edits

FMHA = REPO / "tests" / "data" / "aiter_gfx1250" / "fmha_fwd_bf16__fmha_bf16_pertokenBf16_hd128_128x256.s.gz"


def _errors(diags: list[T.Diagnostic]) -> set[tuple[int, str]]:
    return {(d.range.start.line, d.message) for d in diags if d.severity == T.DiagnosticSeverity.Error}


async def test_separate_with_st_token_removes_the_unproven_wait(nvim, tmp_path):
    path = tmp_path / "fmha_fwd_bf16.s"
    path.write_text(gzip.decompress(FMHA.read_bytes()).decode())
    uri, text = nvim.open_file(path)
    diags = await nvim.diagnostics(uri)
    unproven = [d for d in diags if d.code == "unproven-wait"]
    assert len(unproven) > 10
    errors = _errors(diags)
    removed = 0
    for d in unproven[:6]:
        actions = await nvim.code_actions(uri, d.range, [d], only=[T.CodeActionKind.QuickFix])
        sep = [a for a in actions if a.title.startswith("Separate with st.token (LDS ops at lines ")]
        assert sep, [a.title for a in actions]
        fix = sep[0]
        assert fix.kind == T.CodeActionKind.QuickFix and list(fix.diagnostics) == [d] and not fix.is_preferred
        edits = workspace_edits(fix.edit, uri, nvim.docs[uri][1])
        # two comments appended to two instruction lines, nothing else touched
        assert len(edits) == 2 and all(e.range.start == e.range.end and "// st.token:" in e.new_text for e in edits)
        lines = {e.range.start.line + 1 for e in edits}
        assert all(f"line {n}" in fix.title or str(n) in fix.title for n in lines)
        before = nvim.text(uri)
        version = nvim.replace_range(uri, whole_range(before), apply_text_edits(before, edits))
        after = await nvim.diagnostics(uri, version)
        assert _errors(after) <= errors, "the fix must never add an error"
        still = [x for x in after if x.code == "unproven-wait" and x.range.start.line == d.range.start.line
                 and x.message.split(" is needed")[0] == d.message.split(" is needed")[0]]
        # no fallback wait of that kind is planned there any more
        if not still:
            removed += 1
            hints = await nvim.hints(uri, T.Range(start=T.Position(line=d.range.start.line, character=0),
                                                  end=T.Position(line=d.range.start.line, character=0)))
            wait = d.message.split(" is needed")[0]
            assert not any(h.label and wait in (h.label if isinstance(h.label, str) else h.label[0].value)
                           for h in hints)
        # undo, for the next diagnostic's own check
        version = nvim.replace_range(uri, whole_range(nvim.text(uri)), before)
        assert await nvim.diagnostics(uri, version) is not None
    assert removed >= 2
