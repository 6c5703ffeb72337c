"""Pushed diagnostics: versioned, coded, sourced, with the core's fix payload."""

from __future__ import annotations

from lsprotocol import types as T

from .conftest import DATA, Session, core, expected_findings, initialize


async def test_review_of_hand_written_waits(nvim):
    uri, text = nvim.open_file(DATA / "checked.s")
    a = core(text, DATA / "checked.s")
    expected = expected_findings(a)
    assert {code for code, _, _ in expected} >= {"missing-wait", "redundant-wait", "stricter-wait"}
    got = await nvim.diagnostics(uri, 1)
    assert nvim.client.published_versions[uri] == 1
    assert [(d.code, d.range.start.line, d.severity) for d in got] == expected
    core_diags = list(a.diagnostics) + list(a.check_diagnostics())
    for lsp_d, core_d in zip(got, core_diags):
        assert lsp_d.source == "stinkywait"
        assert lsp_d.range.start.character == core_d.col - 1
    by_code = {d.code: d for d in got}
    assert by_code["missing-wait"].severity == T.DiagnosticSeverity.Error
    # redundant and stricter waits are hints, shown faded
    for code in ("redundant-wait", "stricter-wait"):
        assert by_code[code].severity == T.DiagnosticSeverity.Hint
        assert T.DiagnosticTag.Unnecessary in (by_code[code].tags or [])
    assert [d.message for d in got if d.code == "redundant-wait"] == \
        [d.message for d in core_diags if d.code == "redundant-wait"]


async def test_missing_wait_says_what_and_carries_the_fix(nvim):
    """The message names the wait and its rule; the producer and the path are the hover's
    (VS Code shows a diagnostic's related locations above the hover: not twice)."""
    uri, text = nvim.open_file(DATA / "sample.s")
    a = core(text, DATA / "sample.s")
    missing = [d for d in a.check_diagnostics() if d.code == "missing-wait"]
    waits = {(w.line, w.insert_line, w.insert_text, w.instruction): w for w in a.waits()}
    assert missing
    got = [d for d in await nvim.diagnostics(uri) if d.code == "missing-wait"]
    assert len(got) == len(missing)
    for lsp_d, core_d in zip(got, missing):
        w = waits[(core_d.line, core_d.data["insert_line"], core_d.data["insert_text"], core_d.data["instruction"])]
        assert lsp_d.message == f"missing {w.instruction} ({w.rule})"
        assert lsp_d.data["insert_line"] == core_d.data["insert_line"]
        assert lsp_d.data["insert_text"] == core_d.data["insert_text"]
        assert not lsp_d.related_information


async def test_unproven_waits_are_warnings_that_say_how_to_prove_disjointness(nvim):
    """A wait planned only because disjointness cannot be proved (rule class "fallback") is
    a warning, with its own code, whose message and quick fix name `// st.token:N`."""
    text = "\n".join(["\t.text", "\t.globl\tk", "\t.type\tk,@function", "k:",
                     "\tds_load_b128 v[4:7], v16 offset:0",
                     "\ttensor_load_to_lds s[12:15], s[16:23]",
                     "\tv_add_f32_e32 v20, v4, v20", "\ts_endpgm"]) + "\n"
    uri = (DATA / "untagged.s").as_uri()
    nvim.open(uri, text, "amdgpu-asm")
    a = core(text, DATA / "untagged.s")
    fallbacks = [w for w in a.waits() if w.rule.lower().startswith("fallback")]
    assert fallbacks, "a tensor fill over LDS an untagged load may still read must need a fallback drain"
    got = await nvim.diagnostics(uri, 1)
    assert [(d.code, d.range.start.line, d.severity) for d in got] == expected_findings(a)
    unproven = [d for d in got if d.code == "unproven-wait"]
    assert [d.range.start.line for d in unproven] == [w.line - 1 for w in fallbacks]
    for d in unproven:
        assert d.severity == T.DiagnosticSeverity.Warning
        assert "disjointness cannot be proved" in d.message and "// st.token:N" in d.message
        actions = await nvim.code_actions(uri, d.range, [d], only=[T.CodeActionKind.QuickFix])
        fix = next(x for x in actions if x.is_preferred)
        assert "// st.token:N" in fix.title and "`" not in fix.title
    # following the advice: tokens on the read and the fill, and the warning is gone
    tagged = text.replace("offset:0", "offset:0 // st.token:0").replace("s[16:23]", "s[16:23] // st.token:1")
    nvim.open(uri.replace("untagged", "tagged"), tagged, "amdgpu-asm")
    after = await nvim.diagnostics(uri.replace("untagged", "tagged"), 1)
    assert not [d for d in after if d.code == "unproven-wait"]


async def test_severity_setting_changes_each_kind(bare_client):
    await initialize(bare_client, "neovim@v0.11",
                     settings={"severity": {"missing": "warning", "redundant": "off", "stricter": "information"}})
    lsp = Session(bare_client, "neovim@v0.11")
    uri, text = lsp.open_file(DATA / "checked.s")
    got = await lsp.diagnostics(uri, 1)
    by_code = {d.code: d for d in got}
    assert by_code["missing-wait"].severity == T.DiagnosticSeverity.Warning
    assert by_code["stricter-wait"].severity == T.DiagnosticSeverity.Information
    assert "redundant-wait" not in by_code


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


async def test_undeclared_launch_note_is_shown_at_the_drain(nvim):
    """The launch-shape note of the core (waitcnt/launch_note.py) reaches the editor as an
    Information diagnostic at the barrier drain it explains, in the plan tier's push."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("launch_note_kernel",
                                                  Path(__file__).resolve().parent.parent / "test_launch_note.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = mod.kernel()
    uri = (DATA / "undeclared_launch.s").as_uri()
    nvim.open(uri, text, "amdgpu-asm")
    got = [d for d in await nvim.diagnostics(uri) if d.code == "launch-undeclared"]
    assert [(d.range.start.line + 1, d.severity) for d in got] == [(mod.BARRIER_LINE, T.DiagnosticSeverity.Information)]
    assert "workgroup-size N 1 1" in got[0].message
