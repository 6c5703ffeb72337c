"""Behaviour under edits: incremental sync, answers always from the newest version, superseded
work discarded, cancelled requests harmless, the read loop never blocked by analysis."""

from __future__ import annotations

import asyncio
import random
import time

from lsprotocol import types as T

from .conftest import DATA, PRESETS, TIMEOUT, apply_text_edits, core, hint_wait, synthetic_kernel, whole_range


def _expected_key(text):
    """What the server must answer for `text`: (0-based line, wait instruction) per hint."""
    return [(w.line - 1, w.instruction) for w in core(text, DATA / "sample.s").waits()]


def _prefixes(hints):
    return [(h.position.line, hint_wait(h)) for h in hints]


def _at(line: int, char: int = 0) -> T.Range:
    return T.Range(start=T.Position(line=line, character=char), end=T.Position(line=line, character=char))


async def test_server_advertises_incremental_sync(bare_client):
    result = await bare_client.initialize_session(T.InitializeParams(
        capabilities=PRESETS["neovim@v0.11"]()))
    caps = result.capabilities
    sync = caps.text_document_sync
    kind = sync.change if isinstance(sync, T.TextDocumentSyncOptions) else sync
    assert kind == T.TextDocumentSyncKind.Incremental
    assert caps.inlay_hint_provider and caps.hover_provider and caps.definition_provider
    assert list(caps.code_action_provider.code_action_kinds) == [T.CodeActionKind.QuickFix,
                                                                "source.fixAll.stinkywait"]
    assert result.server_info.name == "stinkywait"


async def test_request_right_after_an_edit_sees_the_edit(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    await lsp.hints(uri)
    # a new consumer of the second ds_load, right after it: needs a fresh dscnt wait
    lsp.replace_range(uri, _at(13), "\tv_mul_f32_e32 v40, v12, v13\n")
    got = _prefixes(await lsp.hints(uri))
    assert got == _expected_key(lsp.text(uri))
    assert 13 in [line for line, _ in got]


async def test_rapid_edits_never_answer_from_an_older_version(lsp):
    uri, text = lsp.open_file(DATA / "sample.s")
    await lsp.hints(uri)
    rng = random.Random(5)
    versions: list[tuple[int, str]] = []
    pending: list[tuple[int, asyncio.Task]] = []
    body = ["\tv_add_f32_e32 v41, v8, v9\n", "\tds_load_b32 v50, v0\n", "\tv_add_f32_e32 v42, v50, v2\n",
            "; comment\n", "\ts_nop 0\n"]
    for i in range(25):
        line = rng.randrange(7, len(lsp.text(uri).split("\n")) - 2)
        if i % 4 == 3:
            v = lsp.replace_range(uri, T.Range(start=T.Position(line=line, character=0),
                                               end=T.Position(line=line + 1, character=0)), "")
        else:
            v = lsp.replace_range(uri, _at(line), rng.choice(body))
        versions.append((v, lsp.text(uri)))
        if i % 3 == 0:
            pending.append((v, asyncio.ensure_future(lsp.hints(uri))))
    results = [(v, await t) for v, t in pending]
    expected = {v: _expected_key(t) for v, t in versions}
    final_v = versions[-1][0]
    for v, hints in results:
        got = _prefixes(hints)
        assert any(got == expected[w] for w in expected if w >= v), f"answer to v{v} is stale"
    assert _prefixes(await lsp.hints(uri)) == expected[final_v]
    # diagnostics end at the last version, too
    diags = await lsp.diagnostics(uri, final_v)
    assert len([d for d in diags if d.code == "missing-wait"]) == len(expected[final_v])


async def test_one_change_event_with_several_edits(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    await nvim.hints(uri)
    edits = [T.TextDocumentContentChangePartial(range=_at(13), text="\tv_mul_f32_e32 v40, v12, v13\n"),
             T.TextDocumentContentChangePartial(range=_at(6), text="; header note\n")]
    new_text = text
    for e in edits:
        new_text = apply_text_edits(new_text, [T.TextEdit(range=e.range, new_text=e.text)])
    nvim.docs[uri] = (new_text, 2)
    nvim.client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=2), content_changes=edits))
    assert _prefixes(await nvim.hints(uri)) == _expected_key(new_text)


async def test_cancelled_request_does_not_disturb_the_next(nvim):
    """`$/cancelRequest` on a request waiting for analysis cancels only that request: the
    shared analysis goes on and the next request is answered from it."""
    uri, text = nvim.open_file(DATA / "sample.s")
    nvim.replace_range(uri, _at(13), "\tv_mul_f32_e32 v40, v12, v13\n")
    doomed = nvim.client.protocol.send_request_async(T.TEXT_DOCUMENT_INLAY_HINT, T.InlayHintParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=whole_range(nvim.text(uri))),
        msg_id="doomed-1")
    nvim.client.protocol.notify(T.CANCEL_REQUEST, T.CancelParams(id="doomed-1"))
    try:
        answered = await asyncio.wait_for(doomed, TIMEOUT)
    except asyncio.TimeoutError:
        raise
    except Exception as exc:  # the server reports the cancellation as an error response
        assert "cancel" in str(exc).lower()
    else:  # or it had already answered: then the answer must be fresh
        assert _prefixes(answered) == _expected_key(nvim.text(uri))
    assert _prefixes(await nvim.hints(uri)) == _expected_key(nvim.text(uri))
    assert await nvim.hover(uri, 14) is not None


async def test_big_analysis_does_not_block_other_documents(nvim):
    """While a large file is analysed, a small one is still answered (read loop and
    event loop stay free: the pass runs in a worker thread)."""
    big = synthetic_kernel(1200)
    big_uri = (DATA / "big-synthetic.s").as_uri()
    nvim.open(big_uri, big, "amdgpu-asm")
    t0 = time.perf_counter()
    small_uri, _ = nvim.open_file(DATA / "sample.s")
    hints = await nvim.hints(small_uri)
    small_done = time.perf_counter() - t0
    assert hints
    assert big_uri not in nvim.client.published_versions, "small answer waited for the big analysis"
    await nvim.diagnostics(big_uri, 1)
    big_done = time.perf_counter() - t0
    assert small_done < big_done


async def test_edits_below_a_form_feed_land_on_the_right_line(nvim):
    """Only \\r\\n, \\r and \\n end LSP lines: a form feed (or U+2028) in a comment must not
    shift where the server applies later edits (pygls' own documents split at them)."""
    text = "; page one\x0cpage two \u2028 still line one\n" + (DATA / "sample.s").read_text()
    uri = (DATA / "formfeed.s").as_uri()
    nvim.open(uri, text, "amdgpu-asm")
    await nvim.hints(uri)
    nvim.replace_range(uri, _at(14), "\tv_mul_f32_e32 v40, v12, v13\n")
    got = _prefixes(await nvim.hints(uri))
    assert got == [(w.line - 1, w.instruction) for w in core(nvim.text(uri), DATA / "formfeed.s").waits()]
    assert 14 in [line for line, _ in got]
