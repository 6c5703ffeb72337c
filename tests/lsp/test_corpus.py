"""The real 3.2k-line gfx1250 GEMM from the shared corpus (skipped when ../shared is absent)."""

from __future__ import annotations

import pytest
from lsprotocol import types as T

from .conftest import GEMM, apply_text_edits, core, label_text, whole_range, workspace_edits

pytestmark = pytest.mark.skipif(not GEMM.exists(), reason="shared corpus not available")


async def test_gemm_hints_diagnostics_and_fix_all(nvim):
    uri, text = nvim.open_file(GEMM, "amdgpu-asm")
    a = core(text, GEMM)
    hints = await nvim.hints(uri)
    assert [(h.position.line, label_text(h).split(" countFrom")[0]) for h in hints] == \
        [(w.line - 1, w.instruction) for w in sorted(a.waits(), key=lambda w: w.line)]
    diags = await nvim.diagnostics(uri, 1)
    want = list(a.diagnostics) + list(a.check_diagnostics())
    assert sorted((d.code, d.range.start.line) for d in diags) == sorted((d.code, d.line - 1) for d in want)
    actions = await nvim.code_actions(uri, whole_range(text), [], only=["source.fixAll.stinkywait"])
    if a.waits():
        assert apply_text_edits(text, workspace_edits(actions[0].edit, uri, 1)) == a.inserted_text()
    # hover inside the main loop shows the in-flight LDS loads
    fifo = {}
    for fr in a.functions:
        fifo.update(fr.fifo)
    line = max(fifo, key=lambda ln: sum(len(q.ops) for qs in fifo[ln].values() for q in qs))
    hover = await nvim.hover(uri, line - 1)
    assert hover is not None and "In flight" in hover.contents.value
    # a one-line edit is reflected in the next answer
    nvim.replace_range(uri, T.Range(start=T.Position(line=line - 1, character=0),
                                    end=T.Position(line=line - 1, character=0)), "\ts_nop 0\n")
    after = await nvim.hints(uri)
    expected = core(nvim.text(uri), GEMM).waits()
    assert [label_text(h).split(" countFrom")[0] for h in after] == \
        [w.instruction for w in sorted(expected, key=lambda w: w.line)]
