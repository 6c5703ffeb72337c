"""The server never waits on the client for its settings: a `workspace/configuration` answer
that is `null`, not a list, an error, or never comes leaves the defaults (and is logged), and
every request is still answered."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient

from .conftest import DATA, SERVER, TIMEOUT, Session, core, hint_wait, initialize, make_client

#: the "late" client answers after this long (the server gives up after 2 s)
LATE_S = 2.5


def _misbehaving_client() -> LanguageClient:
    """A test client whose `workspace/configuration` handler answers as the test set
    `client.answer`: "null", "object" (not the list the protocol asks for) or "late" (after
    the server's pull timed out).  (A client that answers with an error is checked in-process
    below: pytest-lsp fails a test whose client handler raises.)"""

    async def configuration(ls: LanguageClient, params: T.ConfigurationParams):
        ls.asked += 1
        if ls.answer == "null":
            return None
        if ls.answer == "object":
            return {"numWaves": 1}
        await asyncio.sleep(LATE_S)  # "late": after the server stopped waiting
        return [{"numWaves": 1}]

    client = make_client({T.WORKSPACE_CONFIGURATION: configuration})
    client.asked = 0
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=_misbehaving_client))
async def client(lsp_client: LanguageClient):
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.parametrize("answer", ["null", "object", "late"])
async def test_bad_configuration_answers_leave_the_defaults(client, answer, capfd):
    client.answer = answer
    await initialize(client, "vscode+hints")
    lsp = Session(client, "vscode+hints")
    uri, text = lsp.open_file(DATA / "waves.stir")
    started = asyncio.get_running_loop().time()
    hints = await asyncio.wait_for(lsp.hints(uri), TIMEOUT)
    waited = asyncio.get_running_loop().time() - started
    assert client.asked >= 1, "the server must have asked"
    assert [(h.position.line, hint_wait(h)) for h in hints] == \
        [(w.line - 1, w.instruction) for w in core(text, DATA / "waves.stir").waits()]
    assert waited < 10, f"the first answer waited {waited:.1f} s on the client"
    # a settings change notification pulls again, and is survived the same way
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    assert len(await lsp.hints(uri)) == len(hints)
    diags = await lsp.diagnostics(uri)
    assert isinstance(diags, (list, tuple))
    assert not client.messages, "no popups"
    # (the test client cannot stop with a handler still running)
    # (the pulls queue behind each other: the second may start up to 2 s after the first)
    await asyncio.sleep(2 * LATE_S + 0.5 if answer == "late" else 0.1)
    logged = capfd.readouterr().err + "\n".join(m.message for m in client.log_messages)
    assert "workspace/configuration" in logged or "settings" in logged, "the problem is logged"


def _pull(answer) -> tuple[bool, object]:
    """One `pull_settings` of an in-process server whose client answers with `answer` (a
    value, or an exception to raise)."""
    from stinkywait_lsp.server import create_server

    server = create_server(manage_gc=False)
    server.capability = lambda path, default=None: True  # the client says it can answer

    async def configuration(params):
        if isinstance(answer, BaseException):
            raise answer
        return answer

    server.workspace_configuration_async = configuration
    before = server.settings
    changed = asyncio.run(server.pull_settings(timeout_s=0.5))
    assert server.settings == before
    return changed, server.settings


@pytest.mark.parametrize("answer", [None, (), "x", {"numWaves": 1}, 7, [None], [7],
                                    RuntimeError("no settings"), ValueError("bad JSON")])
def test_pull_survives_any_answer(answer, caplog):
    changed, _ = _pull(answer)
    assert changed is False


def test_pull_applies_a_good_answer():
    from stinkywait_lsp.server import create_server

    server = create_server(manage_gc=False)
    server.capability = lambda path, default=None: True

    async def configuration(params):
        return [{"numWaves": 1, "hints": {"label": "compact"}}]

    server.workspace_configuration_async = configuration
    assert asyncio.run(server.pull_settings(timeout_s=0.5)) is True
    assert server.settings.num_waves == 1 and server.settings.view.hint_label == "compact"
