"""The real 3.2k-line gfx1250 GEMM from the shared corpus (skipped when ../shared is absent)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsprotocol import types as T

from .conftest import GEMM, apply_text_edits, core, expected_findings, hint_wait, whole_range, workspace_edits

pytestmark = pytest.mark.skipif(not GEMM.exists(), reason="shared corpus not available")

#: the waits the pass rebuilds (a kernel being written: every one of them is missing)
_REBUILDABLE = re.compile(r"^\s*s_wait_(dscnt|loadcnt|kmcnt|tensorcnt|asynccnt|xcnt|loadcnt_dscnt)\b.*\n", re.M)


@pytest.fixture
def stripped_gemm(tmp_path) -> Path:
    """gemm1 with the waits the pass rebuilds taken out, as a user's file."""
    path = tmp_path / "gemm1_nowaits.s"
    path.write_text(_REBUILDABLE.sub("", GEMM.read_text()))
    return path


async def test_compiler_output_has_no_errors(nvim):
    """The compiler's own output keeps its waits: the server reports no missing wait as an error."""
    uri, text = nvim.open_file(GEMM, "amdgpu-asm")
    a = core(text, GEMM)
    diags = await nvim.diagnostics(uri, 1)
    assert sorted((d.code, d.range.start.line, d.severity) for d in diags) == sorted(expected_findings(a))
    assert not [d for d in diags if d.severity == T.DiagnosticSeverity.Error]


async def test_gemm_hints_diagnostics_and_fix_all(nvim, stripped_gemm):
    uri, text = nvim.open_file(stripped_gemm, "amdgpu-asm")
    a = core(text, stripped_gemm)
    hints = await nvim.hints(uri)
    assert len(hints) > 20
    assert [(h.position.line, hint_wait(h)) for h in hints] == \
        [(w.line - 1, w.instruction) for w in sorted(a.waits(), key=lambda w: w.line)]
    diags = await nvim.diagnostics(uri, 1)
    assert sorted((d.code, d.range.start.line, d.severity) for d in diags) == sorted(expected_findings(a))
    assert [d for d in diags if d.code == "missing-wait" and d.severity == T.DiagnosticSeverity.Error]
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
    expected = core(nvim.text(uri), stripped_gemm).waits()
    assert [hint_wait(h) for h in after] == \
        [w.instruction for w in sorted(expected, key=lambda w: w.line)]


async def test_gemm_typing_burst_never_answers_stale(nvim, stripped_gemm):
    """Edits arrive faster than the pass runs (superseded analyses are discarded): every
    answer belongs to the version it was asked about or a newer one, the last to the last."""
    import asyncio
    uri, text = nvim.open_file(stripped_gemm, "amdgpu-asm")
    await nvim.hints(uri)
    lines = text.split("\n")
    valu = [n for n, ln in enumerate(lines) if re.match(r"\tv_\w+ v\d+,", ln)]
    texts: dict[int, str] = {}
    asked: list[tuple[int, asyncio.Task]] = []
    for i in range(10):
        n = valu[(i * 37) % len(valu)]
        old = nvim.text(uri).split("\n")[n]
        new = re.sub(r"^(\tv_\w+ )v\d+", lambda m: f"{m.group(1)}v{210 + i}", old, count=1)
        nvim.replace_range(uri, T.Range(start=T.Position(line=n, character=0),
                                        end=T.Position(line=n, character=len(old))), new)
        # and a line above every hint, so that each version's hints sit on other lines
        v = nvim.replace_range(uri, T.Range(start=T.Position(line=8, character=0),
                                            end=T.Position(line=8, character=0)), f"; burst {i}\n")
        valu = [m + 1 for m in valu]
        texts[v] = nvim.text(uri)
        asked.append((v, asyncio.ensure_future(nvim.hints(uri))))
        await asyncio.sleep(0.01)
    expected = {v: [(w.line - 1, w.instruction) for w in sorted(core(t, stripped_gemm).waits(), key=lambda w: w.line)]
                for v, t in texts.items()}
    assert len({tuple(e) for e in expected.values()}) == len(expected), "versions must differ"
    for v, task in asked:
        got = [(h.position.line, hint_wait(h)) for h in await task]
        assert any(got == expected[w] for w in expected if w >= v), f"stale answer for v{v}"
    last = max(texts)
    got = [(h.position.line, hint_wait(h)) for h in await nvim.hints(uri)]
    assert got == expected[last]
