"""Settings (section `stinkywait`): pulled with workspace/configuration, applied live,
refreshing hints; pushed settings and initializationOptions for clients without pull."""

from __future__ import annotations

import asyncio

from lsprotocol import types as T

from .conftest import DATA, TIMEOUT, Session, core, hint_wait, initialize, label_text


def _labels(hints):
    return [(h.position.line, hint_wait(h)) for h in hints]


def _expected(a):
    return [(w.line - 1, w.instruction) for w in a.waits()]


async def _until(predicate, what: str) -> None:
    async def poll():
        while not predicate():
            await asyncio.sleep(0.02)
    await asyncio.wait_for(poll(), TIMEOUT)


async def test_initial_settings_are_pulled_before_the_first_answer(bare_client):
    await initialize(bare_client, "neovim@v0.11", settings={"numWaves": 1})
    lsp = Session(bare_client, "neovim@v0.11")
    uri, text = lsp.open_file(DATA / "waves.s")
    expected = _expected(core(text, DATA / "waves.s", num_waves=1))
    assert expected != _expected(core(text, DATA / "waves.s")), "numWaves must matter here"
    got = [(line, label) for line, label in _labels(await lsp.hints(uri))]
    assert got == expected


async def test_live_change_reanalyses_and_refreshes(lsp):
    uri, text = lsp.open_file(DATA / "diamond.s")
    before = [(ln, lb) for ln, lb in _labels(await lsp.hints(uri))]
    assert before == _expected(core(text, DATA / "diamond.s"))
    lsp.client.set_configuration({"optimize": False}, section="stinkywait")
    lsp.client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    await _until(lambda: lsp.refreshes >= 1, "workspace/inlayHint/refresh")
    after = [(ln, lb) for ln, lb in _labels(await lsp.hints(uri))]
    expected = _expected(core(text, DATA / "diamond.s", optimize=False))
    assert expected != before, "ShallowPredPromotion must matter here"
    assert after == expected
    # diagnostics follow too (same version, new settings)
    await _until(lambda: len([d for d in lsp.client.diagnostics.get(uri, ()) if d.code == "missing-wait"])
                 == len(expected), "re-published diagnostics")


async def test_num_waves_and_loop_carried_apply_live(nvim):
    uri, text = nvim.open_file(DATA / "waves.s")
    await nvim.hints(uri)
    nvim.client.set_configuration({"numWaves": 1, "enableLoopCarriedTokenDeps": True, "arch": "gfx1250"},
                                  section="stinkywait")
    nvim.client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    await _until(lambda: nvim.refreshes >= 1, "refresh")
    got = [(ln, lb) for ln, lb in _labels(await nvim.hints(uri))]
    assert got == _expected(core(text, DATA / "waves.s", num_waves=1, enable_loop_carried_token_deps=True))


async def test_bad_setting_values_are_ignored(nvim):
    uri, text = nvim.open_file(DATA / "waves.s")
    await nvim.hints(uri)
    nvim.client.set_configuration({"numWaves": "four", "optimize": 3, "arch": ""}, section="stinkywait")
    nvim.client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    await _until(lambda: len(nvim.client.log_messages) >= 3, "warnings in the log")
    assert not nvim.client.messages, "no popups"
    got = [(ln, lb) for ln, lb in _labels(await nvim.hints(uri))]
    assert got == _expected(core(text, DATA / "waves.s"))


async def test_client_without_configuration_pull(bare_client):
    """Neovim 0.7: no workspace/configuration (the server must not ask: that would be a spec
    warning, turned into an error here); init options and pushed settings are used."""
    await initialize(bare_client, "neovim@v0.7", init_options={"stinkywait": {"numWaves": 1}})
    lsp = Session(bare_client, "neovim@v0.7")
    uri, text = lsp.open_file(DATA / "waves.stir")
    diags = await lsp.diagnostics(uri)
    want = core(text, DATA / "waves.stir", num_waves=1).check_diagnostics()
    assert [(d.code, d.range.start.line) for d in diags] == [(d.code, d.line - 1) for d in want]
    lsp.client.workspace_did_change_configuration(T.DidChangeConfigurationParams(
        settings={"stinkywait": {"numWaves": 4}}))
    want = core(text, DATA / "waves.stir", num_waves=4).check_diagnostics()
    await _until(lambda: [(d.code, d.range.start.line) for d in lsp.client.diagnostics.get(uri, ())]
                 == [(d.code, d.line - 1) for d in want], "diagnostics under the pushed settings")
    hover = await lsp.hover(uri, 4)
    assert hover is not None


async def test_view_settings_apply_live(lsp):
    """`hints.label` and `severity` change what is shown without a restart: hints are
    re-queried (refresh) and diagnostics re-published with the new severities."""
    uri, text = lsp.open_file(DATA / "checked.s")
    before = await lsp.hints(uri)
    assert any("←" in label_text(h) for h in before)
    await lsp.diagnostics(uri)
    lsp.client.set_configuration({"hints": {"label": "compact"}, "severity": {"missing": "warning"}},
                                 section="stinkywait")
    lsp.client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    await _until(lambda: lsp.refreshes >= 1, "workspace/inlayHint/refresh")
    after = await lsp.hints(uri)
    assert [label_text(h) for h in after] == [hint_wait(h) for h in before]
    await _until(lambda: any(d.code == "missing-wait" and d.severity == T.DiagnosticSeverity.Warning
                             for d in lsp.client.diagnostics.get(uri, ())), "re-published severities")
