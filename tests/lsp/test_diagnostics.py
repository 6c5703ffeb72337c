"""Pushed diagnostics: versioned, coded, sourced, with the core's fix payload."""

from __future__ import annotations

from lsprotocol import types as T

from .conftest import DATA, core

SEVERITY = {"error": T.DiagnosticSeverity.Error, "warning": T.DiagnosticSeverity.Warning,
            "hint": T.DiagnosticSeverity.Hint, "info": T.DiagnosticSeverity.Information}


async def test_review_of_hand_written_waits(nvim):
    uri, text = nvim.open_file(DATA / "checked.s")
    a = core(text, DATA / "checked.s")
    expected = list(a.diagnostics) + list(a.check_diagnostics())
    assert {d.code for d in expected} >= {"missing-wait", "redundant-wait", "stricter-wait"}
    got = await nvim.diagnostics(uri, 1)
    assert nvim.client.published_versions[uri] == 1
    assert [(d.code, d.range.start.line, d.message) for d in got] == \
        [(d.code, d.line - 1, d.message) for d in expected]
    for lsp_d, core_d in zip(got, expected):
        assert lsp_d.source == "stinkywait"
        assert lsp_d.severity == SEVERITY[core_d.severity]
        assert lsp_d.range.start.character == core_d.col - 1
    by_code = {d.code: d for d in got}
    assert by_code["missing-wait"].severity == T.DiagnosticSeverity.Error
    assert by_code["redundant-wait"].severity == T.DiagnosticSeverity.Warning
    assert T.DiagnosticTag.Unnecessary in (by_code["redundant-wait"].tags or [])
    assert by_code["stricter-wait"].severity == T.DiagnosticSeverity.Hint


async def test_missing_wait_points_at_its_producer_and_carries_the_fix(nvim):
    uri, text = nvim.open_file(DATA / "sample.s")
    a = core(text, DATA / "sample.s")
    missing = [d for d in a.check_diagnostics() if d.code == "missing-wait"]
    assert missing
    got = [d for d in await nvim.diagnostics(uri) if d.code == "missing-wait"]
    assert len(got) == len(missing)
    for lsp_d, core_d in zip(got, missing):
        assert lsp_d.data["insert_line"] == core_d.data["insert_line"]
        assert lsp_d.data["insert_text"] == core_d.data["insert_text"]
        assert lsp_d.related_information
        assert [r.location.range.start.line for r in lsp_d.related_information] == \
            [r.line - 1 for r in core_d.related]
        assert all(r.location.uri == uri for r in lsp_d.related_information)


async def test_parse_errors_are_diagnostics(nvim):
    text = "st.func @broken() {\n^entry:\n  v0 = \"st.v_add_f32\"(v1\n}\n"
    uri = (DATA / "broken.stir").as_uri()
    nvim.open(uri, text, "stir")
    a = core(text, DATA / "broken.stir", language="stir")
    errors = [d for d in a.diagnostics if d.severity == "error"]
    assert errors, "the core must report this half-typed line"
    got = await nvim.diagnostics(uri, 1)
    assert [(d.code, d.range.start.line) for d in got if d.severity == T.DiagnosticSeverity.Error] == \
        [(d.code, d.line - 1) for d in errors]


async def test_close_clears_diagnostics(nvim):
    uri, _ = nvim.open_file(DATA / "sample.s")
    assert await nvim.diagnostics(uri)
    nvim.client.text_document_did_close(T.DidCloseTextDocumentParams(
        text_document=T.TextDocumentIdentifier(uri=uri)))
    await nvim.client.wait_for_notification(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(nvim.client.diagnostics[uri]) == []
    assert await nvim.hints(uri) == []


async def test_kmaxinflight_overflow_is_reported(nvim):
    """70 LDS loads in flight overflow the 64-deep queue: the core's warning (naming the
    block and counter) is pushed as is, at the op that was pushed out."""
    body = [f"\tds_load_b32 v{i}, v200 offset:{4 * i}" for i in range(70)]
    text = "\n".join(["\t.text", "\t.globl\tk", "\t.type\tk,@function", "k:", *body,
                      "\tv_add_f32_e32 v201, v0, v69", "\ts_endpgm"]) + "\n"
    uri = (DATA / "overflow.s").as_uri()
    nvim.open(uri, text, "amdgpu-asm")
    want = [d for d in core(text, DATA / "overflow.s").diagnostics if d.code == "overflow"]
    assert want
    got = [d for d in await nvim.diagnostics(uri, 1) if d.code == "overflow"]
    assert [(d.range.start.line, d.message, d.severity) for d in got] == \
        [(d.line - 1, d.message, T.DiagnosticSeverity.Warning) for d in want]
    assert {"block": "k", "counter": "ds"}.items() <= got[0].data.items()
