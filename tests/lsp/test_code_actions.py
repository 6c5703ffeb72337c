"""Code actions: preferred per-diagnostic fixes, insert-all, source.fixAll, context.only."""

from __future__ import annotations

import pytest
from lsprotocol import types as T

from .conftest import DATA, apply_text_edits, core, whole_range, workspace_edits

FIX_ALL = "source.fixAll.stinkywait"


async def test_preferred_quick_fix_per_missing_wait(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    diags = [d for d in await lsp.diagnostics(uri) if d.code == "missing-wait"]
    assert diags
    for d in diags:
        actions = await lsp.code_actions(uri, d.range, [d], only=[T.CodeActionKind.QuickFix])
        preferred = [a for a in actions if a.is_preferred]
        assert len(preferred) == 1
        fix = preferred[0]
        assert fix.kind == T.CodeActionKind.QuickFix and list(fix.diagnostics) == [d]
        after = apply_text_edits(text, workspace_edits(fix.edit, uri, 1))
        line = d.data["insert_line"]
        assert after.split("\n")[line - 1] + "\n" == d.data["insert_text"]
        assert len(after.split("\n")) == len(text.split("\n")) + 1


@pytest.mark.parametrize("name", ["sample.s", "sample.stir", "checked.s"])
async def test_fix_all_reproduces_stinkywait_insert(nvim, name):
    uri, text = nvim.open_file(DATA / name)
    expected = core(text, DATA / name).inserted_text()
    assert expected != text
    actions = await nvim.code_actions(uri, whole_range(text), [], only=[T.CodeActionKind.SourceFixAll])
    assert [a.kind for a in actions] == [FIX_ALL]
    assert apply_text_edits(text, workspace_edits(actions[0].edit, uri, 1)) == expected


async def test_insert_all_quick_fix_counts_the_waits(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    a = core(text, DATA / "sample.s")
    diags = await nvim.diagnostics(uri)
    d = next(d for d in diags if d.code == "missing-wait")
    actions = await nvim.code_actions(uri, d.range, [d], only=[T.CodeActionKind.QuickFix])
    insert_all = [x for x in actions if x.title == f"Insert all {len(a.waits())} waits"]
    assert len(insert_all) == 1 and not insert_all[0].is_preferred
    assert apply_text_edits(text, workspace_edits(insert_all[0].edit, uri, 1)) == a.inserted_text()


async def test_context_only_is_honoured(nvim):
    uri, text = nvim.open_file(DATA / "checked.s")
    diags = await nvim.diagnostics(uri)
    everything = await nvim.code_actions(uri, whole_range(text), diags)
    kinds = {a.kind for a in everything}
    assert kinds == {T.CodeActionKind.QuickFix, FIX_ALL}
    only_fix_all = await nvim.code_actions(uri, whole_range(text), diags, only=[FIX_ALL])
    assert {a.kind for a in only_fix_all} == {FIX_ALL}
    only_source = await nvim.code_actions(uri, whole_range(text), diags, only=[T.CodeActionKind.Source])
    assert {a.kind for a in only_source} == {FIX_ALL}
    only_quick = await nvim.code_actions(uri, whole_range(text), diags, only=[T.CodeActionKind.QuickFix])
    assert {a.kind for a in only_quick} == {T.CodeActionKind.QuickFix}
    refactor = await nvim.code_actions(uri, whole_range(text), diags, only=[T.CodeActionKind.Refactor])
    assert refactor == []


async def test_review_fixes_remove_and_relax(nvim):
    uri, text = nvim.open_file(DATA / "checked.s")
    diags = await nvim.diagnostics(uri)
    redundant = next(d for d in diags if d.code == "redundant-wait")
    fixes = await nvim.code_actions(uri, redundant.range, [redundant], only=[T.CodeActionKind.QuickFix])
    remove = next(a for a in fixes if list(a.diagnostics or []) == [redundant])
    after = apply_text_edits(text, workspace_edits(remove.edit, uri, 1)).split("\n")
    lines = text.split("\n")
    dropped = redundant.range.start.line
    assert after == lines[:dropped] + lines[dropped + 1:]
    stricter = next(d for d in diags if d.code == "stricter-wait")
    fixes = await nvim.code_actions(uri, stricter.range, [stricter], only=[T.CodeActionKind.QuickFix])
    relax = next(a for a in fixes if list(a.diagnostics or []) == [stricter])
    after = apply_text_edits(text, workspace_edits(relax.edit, uri, 1)).split("\n")
    written = lines[stricter.range.start.line].strip()
    relaxed = after[stricter.range.start.line].strip()
    count = stricter.data["count"]
    # the user's radix is kept: checked.s writes its counts in hex
    assert written.startswith("s_wait_dscnt 0x") and relaxed == f"s_wait_dscnt {hex(count)}"
    assert "`" not in relax.title and relax.title == f"Relax to {relaxed}"


async def test_edits_carry_the_current_version(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    v = nvim.replace_range(uri, T.Range(start=T.Position(line=0, character=0),
                                        end=T.Position(line=0, character=0)), "; edited\n")
    actions = await nvim.code_actions(uri, whole_range(nvim.text(uri)), [], only=[FIX_ALL])
    edits = workspace_edits(actions[0].edit, uri, v)
    expected = core(nvim.text(uri), DATA / "sample.s").inserted_text()
    assert apply_text_edits(nvim.text(uri), edits) == expected
