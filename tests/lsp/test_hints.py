"""Inlay hints: one per planned wait, rendered from the core's plan."""

from __future__ import annotations

import pytest
from lsprotocol import types as T

from .conftest import DATA, Session, apply_text_edits, core, hint_wait, initialize, label_text


def _binding(w):
    """The producer whose countFrom sets the wait: the smallest countFrom, then the earliest line."""
    return min(w.deps, key=lambda d: (d.count_from, d.line, d.pred or "")) if w.deps else None


@pytest.mark.parametrize("name", ["sample.s", "sample.stir", "diamond.s"])
async def test_one_hint_per_planned_wait_naming_the_binding_producer(lsp, name):
    uri, text = lsp.open_file(DATA / name)
    expected = core(text, DATA / name).waits()
    assert expected, "the sample kernel must need waits for this test to mean anything"
    hints = await lsp.hints(uri)
    assert len(hints) == len(expected)
    for hint, wait in zip(hints, expected):
        label = label_text(hint)
        assert hint_wait(hint) == wait.instruction
        assert hint.position.line == (wait.line - 1)
        b = _binding(wait)
        if b is not None:
            assert label == f"{wait.instruction} ← {b.mnemonic} L{b.line} (countFrom {b.count_from})"
            if wait.rule == "RAW" and not wait.shaped_by and wait.counter != "km":
                assert wait.count == b.count_from - 1, "the binding producer sets the count"
        else:
            assert label.startswith(wait.instruction + " (")
        assert len(label) <= 72, f"label not kept short: {label!r}"


async def test_binding_producer_links_to_its_line(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    expected = core(text, DATA / "sample.s").waits()
    hints = await lsp.hints(uri)
    for hint, wait in zip(hints, expected):
        assert isinstance(hint.label, list) and hint.label[0].value == wait.instruction
        linked = [p.location.range.start.line for p in hint.label if p.location is not None]
        assert linked == [_binding(wait).line - 1]


async def test_tooltip_explains_once_with_the_others_in_line_order(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    expected = core(text, DATA / "sample.s").waits()
    hints = await lsp.hints(uri)
    several = 0
    for hint, wait in zip(hints, expected):
        tip = await lsp.tooltip(hint)
        # the explanation is the hint's tooltip only: VS Code shows part tooltips as well
        assert all(p.tooltip is None for p in hint.label)
        assert wait.instruction in tip and wait.rule in tip
        assert f"{wait.rule}: {wait.rule.lower()}" not in tip.replace("*", "")
        b = _binding(wait)
        assert f"L{b.line} `{b.mnemonic}` (countFrom {b.count_from}" in tip
        others = sorted({d.line for d in wait.deps if d.line != b.line})
        if others:
            several += 1
            positions = [tip.index(f"L{line}") for line in others]
            assert positions == sorted(positions), "other producers by line"
    assert several, "sample.s needs a wait with more than one producer"


async def test_path_that_needs_the_wait_uses_the_users_block_names(nvim):
    """At the loop of sample.s the binding producer sits at countFrom 1 on both paths: the
    kernel's first block ("the entry", not the front end's internal name) and the loop's own
    back edge (label `.LBB0_1`), in text order."""
    uri, text = nvim.open_file(DATA / "sample.s")
    waits = core(text, DATA / "sample.s").waits()
    join = next(w for w in waits if len({d.pred for d in w.deps}) > 1)
    hints = await nvim.hints(uri)
    tip = await nvim.tooltip(next(h for h in hints if h.position.line == join.line - 1))
    assert "on the path from the entry and `.LBB0_1`" in tip


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


async def test_compact_labels_at_the_end_of_the_previous_line(bare_client):
    """`hints.label: compact` shows only the wait; `hints.position: endOfPreviousLine` puts it
    after the line above the instruction, so a long line is not pushed right."""
    await initialize(bare_client, "neovim@v0.11",
                     settings={"hints": {"label": "compact", "position": "endOfPreviousLine"}})
    lsp = Session(bare_client, "neovim@v0.11")
    uri, text = lsp.open_file(DATA / "sample.s")
    waits = core(text, DATA / "sample.s").waits()
    hints = await lsp.hints(uri)
    lines = text.split("\n")
    assert len(hints) == len(waits)
    for hint, w in zip(hints, waits):
        assert label_text(hint) == w.instruction
        assert hint.position.line == w.line - 2 and hint.position.character == len(lines[w.line - 2])
        assert hint.padding_left and not hint.padding_right
        after = apply_text_edits(text, hint.text_edits).split("\n")
        assert after[w.insert_line - 1] + "\n" == w.insert_text
    # a viewport that ends on the line above the instruction still gets the hint
    w = waits[0]
    end = w.line - 2
    some = await lsp.hints(uri, T.Range(start=T.Position(line=0, character=0),
                                        end=T.Position(line=end, character=len(lines[end]))))
    assert [h.position.line for h in some] == [h.position.line for h in hints if h.position.line <= end]


async def test_tooltips_are_resolved_on_demand_or_sent_inline(bare_client):
    """A client that resolves tooltips gets hints without them (half the cost of a whole
    30k-line kernel's hints) and the tooltip on `inlayHint/resolve`, also after an edit moved
    the version on; a client that does not resolve gets them inline."""
    await initialize(bare_client, "vscode+hints")
    lsp = Session(bare_client, "vscode+hints")
    uri, text = lsp.open_file(DATA / "sample.s")
    waits = core(text, DATA / "sample.s").waits()
    hints = await lsp.hints(uri)
    assert all(h.tooltip is None and h.data for h in hints)
    tips = [await lsp.tooltip(h) for h in hints]
    assert all(w.instruction in tip for w, tip in zip(waits, tips))
    lsp.replace_range(uri, T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0)),
                      "; a comment that moves nothing below the first line\n")
    await lsp.hints(uri)
    stale = hints[-1]
    stale.data["line"] += 1  # the wait moved down one line with the edit
    assert waits[-1].instruction in await lsp.tooltip(stale)


async def test_clients_without_resolve_get_inline_tooltips(bare_client):
    await initialize(bare_client, "neovim@v0.7")
    lsp = Session(bare_client, "neovim@v0.7")
    uri, text = lsp.open_file(DATA / "sample.s")
    # (Neovim 0.7 has no inlay hints at all; the server answers anyway, as for any client)
    hints = await lsp.hints(uri)
    assert hints and all(h.tooltip is not None for h in hints)
