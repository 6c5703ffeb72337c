"""Includes and macros in the server: the hint of a wait needed inside a macro sits at the
call line and says which macro; an edit of an open `.inc` re-analyses the open files that
include it (its buffer wins over the disk); `stinkywait.includePaths` finds includes."""

from __future__ import annotations

import asyncio

from lsprotocol import types as T

from .conftest import TIMEOUT, Session, initialize, label_text

MACROS = """.macro LOADTWO a, b
    global_load_dword v\\a, v[0:1], off
    global_load_dword v\\b, v[2:3], off
.endm
.macro USEONLY r
    v_mov_b32 v20, v21
    v_add_f32 v\\r, v\\r, v\\r
.endm
"""

KERNEL = """.amdgcn_target "amdgcn-amd-amdhsa--gfx1030"
.include "m.inc"
.text
k:
    LOADTWO 5, 6
    v_mov_b32 v30, v31
    USEONLY 5
    s_endpgm
"""


async def _hints_until(session: Session, uri: str, want, tries: int = 300) -> list[T.InlayHint]:
    """Hints of `uri` once `want(hints)` holds (a re-analysis started by another document's
    edit is not tied to a version the client knows)."""
    for _ in range(tries):
        hints = await session.hints(uri)
        if want(hints):
            return hints
        await asyncio.sleep(0.1)
    return hints


async def test_hint_at_the_call_site_and_reanalysis_on_include_edits(bare_client, tmp_path):
    inc_dir = tmp_path / "lib"
    inc_dir.mkdir()
    (inc_dir / "m.inc").write_text(MACROS)
    kernel = tmp_path / "k.s"
    kernel.write_text(KERNEL)
    await initialize(bare_client, "neovim@v0.11", settings={"includePaths": [str(inc_dir)]})
    s = Session(bare_client, "neovim@v0.11")
    uri, _ = s.open_file(kernel)
    hints = await s.hints(uri)
    assert len(hints) == 1
    # the wait for USEONLY's v_add_f32 goes before the call line (line 7), count re-based
    assert hints[0].position.line == 6
    assert label_text(hints[0]) == "s_waitcnt vmcnt(1) ← global_load_dword L5 (countFrom 2)"
    tip = hints[0].tooltip if hints[0].tooltip is not None else (
        await asyncio.wait_for(bare_client.inlay_hint_resolve_async(hints[0]), TIMEOUT)).tooltip
    tip = tip.value if isinstance(tip, T.MarkupContent) else tip
    assert "in macro USEONLY (m.inc:7)" in tip
    hover = await asyncio.wait_for(bare_client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line=6, character=6))), TIMEOUT)
    assert hover is not None and "in macro USEONLY (m.inc:7)" in hover.contents.value
    diags = await s.diagnostics(uri)
    assert not [d for d in diags if d.severity == T.DiagnosticSeverity.Warning]

    # open the include and edit it (unsaved): USEONLY no longer reads v5; the kernel is
    # analysed again from the buffer, and its hint goes away
    inc_uri, inc_text = s.open_file(inc_dir / "m.inc")
    line = inc_text.splitlines().index("    v_add_f32 v\\r, v\\r, v\\r")
    s.replace_range(inc_uri, T.Range(start=T.Position(line=line, character=0),
                                     end=T.Position(line=line, character=len("    v_add_f32 v\\r, v\\r, v\\r"))),
                    "    v_add_f32 v40, v41, v42")
    hints = await _hints_until(s, uri, lambda h: not h)
    assert hints == []
    # undo the edit: the hint is back
    s.replace_range(inc_uri, T.Range(start=T.Position(line=line, character=0),
                                     end=T.Position(line=line, character=len("    v_add_f32 v40, v41, v42"))),
                    "    v_add_f32 v\\r, v\\r, v\\r")
    hints = await _hints_until(s, uri, lambda h: len(h) == 1)
    assert [h.position.line for h in hints] == [6]


async def test_a_missing_include_is_a_warning_at_its_line(bare_client, tmp_path):
    kernel = tmp_path / "k.s"
    kernel.write_text(KERNEL)
    await initialize(bare_client, "neovim@v0.11")
    s = Session(bare_client, "neovim@v0.11")
    uri, _ = s.open_file(kernel)
    diags = await s.diagnostics(uri)
    missing = [d for d in diags if "cannot find include file 'm.inc'" in d.message]
    assert len(missing) == 1 and missing[0].range.start.line == 1
    assert missing[0].severity == T.DiagnosticSeverity.Warning
    assert any("'LOADTWO' is neither an instruction" in d.message for d in diags)
