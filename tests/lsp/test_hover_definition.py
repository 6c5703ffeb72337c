"""Hover (per-counter, per-predecessor FIFO state; why a hinted wait is there) and go to
definition (consumer -> the async producers it waits for)."""

from __future__ import annotations

import pytest
from lsprotocol import types as T

from .conftest import DATA, core


def _fifo(a):
    merged = {}
    for fr in a.functions:
        merged.update(fr.fifo)
    return merged


@pytest.mark.parametrize("name", ["sample.s", "sample.stir"])
async def test_hover_shows_each_queue(nvim, name):
    uri, text = nvim.open_file(DATA / name)
    fifo = _fifo(core(text, DATA / name))
    busy = {line: state for line, state in fifo.items() if state}
    assert busy
    for line, state in busy.items():
        hover = await nvim.hover(uri, line - 1)
        assert hover is not None and hover.contents.kind == T.MarkupKind.Markdown
        value = hover.contents.value
        for counter, queues in state.items():
            assert f"`{counter}`" in value
            for q in queues:
                assert (q.pred or "entry") in value
                for op in q.ops:
                    assert f"L{op.line} `{op.mnemonic}` (countFrom {op.count_from}" in value


async def test_hover_on_join_lists_every_predecessor_queue(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    fifo = _fifo(core(text, DATA / "sample.s"))
    line, state = next((ln, st) for ln, st in fifo.items() if any(len(qs) > 1 for qs in st.values()))
    value = (await nvim.hover(uri, line - 1)).contents.value
    for queues in state.values():
        preds = [q.pred for q in queues]
        positions = [value.index(f"from `{p}`") for p in preds]
        assert positions == sorted(positions), "queues appear in the core's order"


async def test_hover_on_hinted_line_explains_the_wait(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    for w in core(text, DATA / "sample.s").waits():
        value = (await nvim.hover(uri, w.line - 1)).contents.value
        assert w.instruction in value and w.reason in value
        for d in w.deps:
            assert f"line {d.line}" in value


async def test_hover_elsewhere_is_empty(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    await nvim.hints(uri)
    directive = text.split("\n").index("\t.text")
    assert await nvim.hover(uri, directive) is None


@pytest.mark.parametrize("name", ["sample.s", "sample.stir"])
async def test_definition_jumps_to_producers(nvim, name):
    uri, text = nvim.open_file(DATA / name)
    producers = {}
    for fr in core(text, DATA / name).functions:
        producers.update(fr.producers)
    assert producers
    lines = text.split("\n")
    for consumer, prods in producers.items():
        operand = lines[consumer - 1].rstrip().rfind(" ") + 1
        result = await nvim.client.text_document_definition_async(T.DefinitionParams(
            text_document=T.TextDocumentIdentifier(uri=uri),
            position=T.Position(line=consumer - 1, character=operand)))
        assert [(loc.uri, loc.range.start.line, loc.range.start.character) for loc in result] == \
            [(uri, pl - 1, pc - 1) for pl, pc in prods]


async def test_definition_on_a_non_consumer_is_empty(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    result = await nvim.client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line=0, character=1)))
    assert not result
