"""Inlay hints: one per planned wait, rendered from the core's plan."""

from __future__ import annotations

import pytest
from lsprotocol import types as T

from .conftest import DATA, apply_text_edits, core, label_text


@pytest.mark.parametrize("name", ["sample.s", "sample.stir"])
async def test_one_hint_per_planned_wait(lsp, name):
    uri, text = lsp.open_file(DATA / name)
    expected = core(text, DATA / name).waits()
    assert expected, "the sample kernel must need waits for this test to mean anything"
    hints = await lsp.hints(uri)
    assert len(hints) == len(expected)
    for hint, wait in zip(hints, expected):
        label = label_text(hint)
        assert label.startswith(wait.instruction)
        assert hint.position.line == wait.line - 1
        if wait.deps:
            assert f"countFrom {wait.deps[0].count_from}" in label
        assert len(label) <= 48, f"label not kept short: {label!r}"


async def test_hint_parts_link_to_producers(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    expected = core(text, DATA / "sample.s").waits()
    hints = await lsp.hints(uri)
    for hint, wait in zip(hints, expected):
        assert isinstance(hint.label, list) and hint.label[0].value == wait.instruction
        linked = {p.location.range.start.line for p in hint.label if p.location is not None}
        assert linked <= {d.line - 1 for d in wait.deps}
        if wait.deps:
            assert wait.deps[0].line - 1 in linked


async def test_tooltip_names_producer_block_and_predecessor(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    expected = core(text, DATA / "sample.s").waits()
    hints = await lsp.hints(uri)
    for hint, wait in zip(hints, expected):
        tip = hint.tooltip.value if isinstance(hint.tooltip, T.MarkupContent) else hint.tooltip
        assert wait.reason in tip
        for d in wait.deps:
            assert f"line {d.line}" in tip and d.block in tip and d.mnemonic in tip
            if d.pred:
                assert d.pred in tip


async def test_hint_edit_inserts_exactly_the_planned_line(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    expected = core(text, DATA / "sample.s").waits()
    hints = await lsp.hints(uri)
    lines = text.split("\n")
    for hint, wait in zip(hints, expected):
        assert hint.text_edits and len(hint.text_edits) == 1
        after = apply_text_edits(text, hint.text_edits)
        new_lines = after.split("\n")
        assert new_lines[wait.insert_line - 1] + "\n" == wait.insert_text
        assert new_lines[:wait.insert_line - 1] == lines[:wait.insert_line - 1]
        assert new_lines[wait.insert_line:] == lines[wait.insert_line - 1:]


async def test_only_hints_inside_the_requested_range(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    all_hints = await lsp.hints(uri)
    assert len({h.position.line for h in all_hints}) >= 2, "need hints on two lines"
    first = min(h.position.line for h in all_hints)
    rng = T.Range(start=T.Position(line=first + 1, character=0),
                  end=T.Position(line=len(text.split("\n")) - 1, character=0))
    some = await lsp.hints(uri, rng)
    assert some == [h for h in all_hints if h.position.line > first]
    empty = await lsp.hints(uri, T.Range(start=T.Position(line=0, character=0),
                                         end=T.Position(line=first - 1, character=0)))
    assert empty == []


async def test_tail_drain_hint_sits_at_the_end_of_the_predecessor_line(nvim):
    """ShallowPredPromotion appends a corrective wait after a predecessor's last
    instruction: its hint is shown at the end of that line, its edit inserts below it."""
    uri, text = nvim.open_file(DATA / "diamond.s")
    waits = core(text, DATA / "diamond.s").waits()
    drains = [w for w in waits if w.placement == "after"]
    assert drains, "diamond.s must produce a tail drain"
    hints = await nvim.hints(uri)
    lines = text.split("\n")
    for w in drains:
        hint = next(h for h in hints if h.position.line == w.line - 1)
        assert hint.position.character == len(lines[w.line - 1])
        assert label_text(hint).startswith(w.instruction)
        after = apply_text_edits(text, hint.text_edits).split("\n")
        assert after[w.insert_line - 1] + "\n" == w.insert_text
        assert after[w.line - 1] == lines[w.line - 1]
