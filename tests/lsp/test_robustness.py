"""Bad input never kills the server or pops a dialog: everything ends in diagnostics."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types as T

from .conftest import DATA, core


def _cases() -> dict[str, str]:
    rnd = random.Random(11)
    return {
        "garbage": "".join(chr(rnd.randrange(32, 127)) if rnd.random() > 0.05 else "\n" for _ in range(20000)),
        "binary": bytes(rnd.randrange(256) for _ in range(20000)).decode("latin-1"),
        "long-line": "\tv_add_f32_e32 v1, " + "v2, " * 75000 + "\n",
        "half-typed": "\tds_load_b128 v[0:3], v\n\tv_add_f32_e32 v4, v0,\n\ts_wait_dscnt\n\tbuffer_load_b32 v2,",
        "unbalanced": "st.func @x() {\n^e:\n  v0 = \"st.ds_load\"(((\n}}}\n",
        "empty": "",
        "unicode": "; Ünïcödé ✓ 🚀\n\tds_load_b32 v1, v0 ; 🚀🚀\n\tv_add_f32_e32 v2, v1, v1 ; ✓\n",
    }


@pytest.mark.parametrize("language,suffix", [("amdgpu-asm", ".s"), ("stir", ".stir"), ("asm", ".s")])
async def test_garbage_ends_in_diagnostics_and_server_stays_up(nvim, language, suffix):
    for name, text in _cases().items():
        uri = (DATA / f"bad-{name}{suffix}").as_uri()
        nvim.open(uri, text, language)
        await nvim.diagnostics(uri, 1)
        hints = await nvim.hints(uri)
        expected = core(text, DATA / f"bad-{name}{suffix}", language=language).waits()
        assert len(hints) == len(expected), name
        # half-typed text keeps changing: every version is answered
        v = nvim.replace_range(uri, T.Range(start=T.Position(line=0, character=0),
                                            end=T.Position(line=0, character=0)), "\x00\x01 ((\n")
        await nvim.diagnostics(uri, v)
        await nvim.hover(uri, 0, 0)
    assert not nvim.client.messages, "no window/showMessage popups"
    # still fully working on a good file
    uri, text = nvim.open_file(DATA / "sample.s")
    assert len(await nvim.hints(uri)) == len(core(text, DATA / "sample.s").waits())


async def test_hundred_thousand_line_file_is_capped_not_fatal(nvim):
    """100k lines, each one a parse error: the push is capped (the editor would choke on a
    100k-entry message) and summarised; the server keeps answering."""
    text = "".join(f"bogus line {i} ((\n" for i in range(100_000))
    uri = (DATA / "huge.stir").as_uri()
    nvim.open(uri, text, "stir")
    diags = await nvim.diagnostics(uri, 1)
    assert len(diags) == 1001
    assert diags[-1].code == "truncated" and "more diagnostics" in diags[-1].message
    assert all(d.source == "stinkywait" for d in diags)
    small, _ = nvim.open_file(DATA / "sample.s")
    assert await nvim.hints(small)
    assert not nvim.client.messages


async def test_non_ascii_columns_use_the_negotiated_encoding(bare_client):
    """VS Code speaks UTF-16: columns after astral characters shift by two units each."""
    from .conftest import Session, initialize
    await initialize(bare_client, "vscode+hints")
    s = Session(bare_client, "vscode+hints")
    text = "\tds_load_b32 v1, v0\n/*🚀🚀*/\tv_add_f32_e32 v2, v1, v1\n"
    uri = (DATA / "emoji.s").as_uri()
    s.open(uri, text, "amdgpu-asm")
    waits = core(text, DATA / "emoji.s").waits()
    assert waits and not text.split("\n")[waits[0].line - 1][:waits[0].column - 1].isascii()
    hints = await s.hints(uri, T.Range(start=T.Position(line=0, character=0),
                                       end=T.Position(line=2, character=0)))
    assert len(hints) == len(waits)
    for h, w in zip(hints, waits):
        prefix = text.split("\n")[w.line - 1][:w.column - 1]
        assert h.position.character == len(prefix.encode("utf-16-le")) // 2


async def test_odd_requests_get_empty_answers(nvim):
    """Positions past the end, inverted ranges and never-opened documents are answered
    (empty), not failed, and the server keeps working."""
    uri, text = nvim.open_file(DATA / "sample.s")
    assert await nvim.hover(uri, 99_999, 5) is None
    far = T.Range(start=T.Position(line=5000, character=0), end=T.Position(line=6000, character=0))
    assert await nvim.hints(uri, far) == []
    inverted = T.Range(start=T.Position(line=20, character=0), end=T.Position(line=2, character=0))
    assert await nvim.hints(uri, inverted) == []
    ghost = (DATA / "never-opened.s").as_uri()
    nvim.docs[ghost] = ("", 0)
    assert await nvim.hints(ghost) == []
    assert await nvim.hover(ghost, 0) is None
    assert not await nvim.client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=ghost), position=T.Position(line=0, character=0)))
    assert len(await nvim.hints(uri)) == len(core(text, DATA / "sample.s").waits())
    assert not nvim.client.messages
