"""Hover (summary first: the wait, its rule, the producer that sets its count and the path
that needs it; then the FIFO state per counter, identical predecessor queues grouped, the
ops a wait drains marked) and go to definition (consumer -> the producers it waits for)."""

from __future__ import annotations

import re

import pytest
from lsprotocol import types as T

from .conftest import DATA, core


def _fifo(a):
    merged = {}
    for fr in a.functions:
        merged.update(fr.fifo)
    return merged


def _listed(text: str) -> set[tuple[int, str]]:
    """(line, mnemonic) of every op the hover names: `L12 `m``, `L427–434 `m` ×8`,
    `L435–438, 440 `m``."""
    out = set()
    for spans, mnemonic in re.findall(r"L([\d–, ]+) `([\w.]+)`", text):
        for part in spans.split(","):
            lo, _, hi = part.strip().partition("–")
            for line in range(int(lo), int(hi or lo) + 1):
                out.add((line, mnemonic))
    return out


def _binding(w):
    return min(w.deps, key=lambda d: (d.count_from, d.line, d.pred or ""))


@pytest.mark.parametrize("name", ["sample.s", "sample.stir", "join.s"])
async def test_hover_lists_every_op_in_flight(nvim, name):
    uri, text = nvim.open_file(DATA / name)
    a = core(text, DATA / name)
    fifo = _fifo(a)
    busy = {line: state for line, state in fifo.items() if state}
    assert busy
    for line, state in busy.items():
        hover = await nvim.hover(uri, line - 1)
        assert hover is not None and hover.contents.kind == T.MarkupKind.Markdown
        value = hover.contents.value
        listed = _listed(value)
        for counter, queues in state.items():
            # the hardware counter the timeline is counted on, as the target spells it
            assert f"`{a.options.target.timeline_counter(counter)}`" in value
            for q in queues:
                for op in q.ops:  # never collapsed away
                    assert (op.line, op.mnemonic) in listed, f"L{op.line} {op.mnemonic} missing:\n{value}"


async def test_identical_predecessor_queues_are_grouped(nvim):
    """Both arms of join.s leave the same two loads in flight: one entry naming both paths,
    the unlabelled arm by where it starts, the other by its label."""
    uri, text = nvim.open_file(DATA / "join.s")
    a = core(text, DATA / "join.s")
    line, state = next((ln, st) for ln, st in _fifo(a).items() if any(len(qs) > 1 for qs in st.values()))
    queues = state["ds"]
    assert len(queues) == 2 and [op.line for op in queues[0].ops] == [op.line for op in queues[1].ops]
    value = (await nvim.hover(uri, line - 1)).contents.value
    groups = [ln for ln in value.split("\n") if ln.startswith("- `dscnt`")]
    branch = text.split("\n").index("\ts_cbranch_scc1 .LBB0_2") + 1
    assert groups == [f"- `dscnt` from the block after line {branch} and `.LBB0_2`, 2 in flight:  "]
    assert "LBB0_2_1" not in value and "lsp_join" not in value


async def test_hover_summary_first_and_drained_ops_marked(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    for w in core(text, DATA / "sample.s").waits():
        if w.placement != "before":
            continue
        value = (await nvim.hover(uri, w.line - 1)).contents.value
        summary, _, fifo = value.partition("\n\n---\n\n")
        b = _binding(w)
        assert f"**{w.instruction}** — {w.rule}" in summary
        assert f"set by L{b.line} `{b.mnemonic}` (countFrom {b.count_from}" in summary
        assert "on the path from " in summary
        assert value.count("set by ") == 1, "each fact once"
        assert "RAW: raw" not in value
        # under the wait: the ops whose countFrom exceeds its count; after it: the others
        drained_part = next(ln for ln in fifo.split("\n") if ln.strip().startswith(f"✓ drained by `{w.instruction}`"))
        for d in w.deps:
            assert (d.line, d.mnemonic) in _listed(drained_part)


async def test_a_wait_that_leaves_ops_in_flight_says_which(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    a = core(text, DATA / "sample.s")
    w = next(w for w in a.waits() if w.count > 0)
    queue = _fifo(a)[w.line][w.counter][0]
    value = (await nvim.hover(uri, w.line - 1)).contents.value
    lines = value.split("\n")
    drained = next(ln for ln in lines if ln.strip().startswith("✓ drained by"))
    kept = next(ln for ln in lines if ln.strip().startswith("still in flight after it"))
    for op in queue.ops:
        where = drained if op.count_from > w.count else kept
        assert (op.line, op.mnemonic) in _listed(where)


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
