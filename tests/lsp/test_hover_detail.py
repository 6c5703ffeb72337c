"""The short hover of a client with a small hover box (VS Code's extension declares
`experimental.stinkywait.hoverDetailCommand`): each wait's rule, producer and path, what the
instruction needs, and a command link to the wait plan at that line, whose `focus` holds the
whole hover (summary and FIFO state).  Other clients keep the whole hover
(test_hover_definition.py)."""

from __future__ import annotations

import asyncio
import json
import re
from urllib.parse import unquote

from lsprotocol import types as T

from .conftest import DATA, TIMEOUT, core, vscode_with_hints
from .test_hover_definition import _binding, _fifo, _listed

COMMAND = "stinkywait.showWaitPlan"


def _counter(name: str) -> str:
    """A wait's counter as the hover writes it on gfx1250 (`ds` -> `dscnt`)."""
    return name if name.endswith("cnt") else name + "cnt"


async def _start(client, command: str) -> None:
    caps = vscode_with_hints()
    caps.experimental = {"stinkywait": {"hoverDetailCommand": command}}
    client.preset = "vscode+hints"
    await client.initialize_session(T.InitializeParams(capabilities=caps, root_uri=DATA.as_uri()))


def _open(client, name: str) -> tuple[str, str]:
    text = (DATA / name).read_text()
    uri = (DATA / name).as_uri()
    client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="amdgpu-asm", version=1, text=text)))
    return uri, text


async def _hover(client, uri: str, line0: int) -> str | None:
    hover = await asyncio.wait_for(client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line=line0, character=2))), TIMEOUT)
    return None if hover is None else hover.contents.value


async def test_short_hover_is_the_summary_the_needs_and_a_link(bare_client):
    await _start(bare_client, COMMAND)
    uri, text = _open(bare_client, "sample.s")
    a = core(text, DATA / "sample.s")
    waits = [w for w in a.waits() if w.placement == "before"]
    assert waits
    for w in waits:
        value = await _hover(bare_client, uri, w.line - 1)
        b = _binding(w)
        assert f"**{w.instruction}** — {w.rule}" in value
        assert f"set by L{b.line} `{b.mnemonic}` (countFrom {b.count_from}" in value and "on the path from " in value
        needs = next(ln for ln in value.split("\n") if ln.startswith("needs "))
        assert f"`{_counter(w.counter)}`" in needs
        for d in w.deps:
            assert (d.line, d.mnemonic) in _listed(needs), f"L{d.line} {d.mnemonic} not in {needs!r}"
        assert "In flight before this instruction" not in value and "drained by" not in value
        links = re.findall(r"\]\(command:([\w.]+)\?([^)]*)\)", value)
        assert [c for c, _ in links] == [COMMAND]
        assert json.loads(unquote(links[0][1])) == [uri, w.line]


async def test_the_plan_at_the_linked_line_has_the_whole_hover(bare_client):
    await _start(bare_client, COMMAND)
    uri, text = _open(bare_client, "sample.s")
    a = core(text, DATA / "sample.s")
    fifo = _fifo(a)
    w = next(w for w in a.waits() if w.placement == "before" and fifo.get(w.line))
    plan = await asyncio.wait_for(bare_client.protocol.send_request_async(
        "stinkywait/plan", {"textDocument": {"uri": uri}, "line": w.line}), TIMEOUT)
    focus = plan["focus"] if isinstance(plan, dict) else plan.focus
    get = (lambda o, k: o[k]) if isinstance(focus, dict) else getattr
    assert get(focus, "line") == w.line
    markdown = get(focus, "markdown")
    assert f"**{w.instruction}** — {w.rule}" in markdown and "In flight before this instruction" in markdown
    for queues in fifo[w.line].values():
        for q in queues:
            for op in q.ops:
                assert (op.line, op.mnemonic) in _listed(markdown)


async def test_a_command_name_that_is_not_an_identifier_gets_the_whole_hover(bare_client):
    await _start(bare_client, "x)](javascript:alert(1)")
    uri, text = _open(bare_client, "sample.s")
    w = next(w for w in core(text, DATA / "sample.s").waits() if w.placement == "before")
    value = await _hover(bare_client, uri, w.line - 1)
    assert "In flight before this instruction" in value and "command:" not in value


async def test_short_hover_speaks_the_targets_words_on_gfx942(bare_client):
    """gfx9 counts LDS and SMEM on one counter: the short hover's waits, needs and in-flight
    counts say `lgkmcnt` / `vmcnt`, never the gfx12 names."""
    await _start(bare_client, COMMAND)
    uri, text = _open(bare_client, "shared942.s")
    waits = [w for w in core(text, DATA / "shared942.s").waits() if w.placement == "before"]
    assert waits
    for w in waits:
        value = await _hover(bare_client, uri, w.line - 1)
        assert w.instruction in value and "in flight: " in value
        assert not re.search(r"\b(dscnt|loadcnt|kmcnt|storecnt)\b", value), value
        assert re.search(r"`(lgkmcnt|vmcnt|expcnt|vscnt)` \d+", value), value
