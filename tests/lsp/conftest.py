"""pytest-lsp fixtures for the stinkywait language server.

The server runs as a real subprocess over stdio (`python -m stinkywait_lsp`) on top of the
real core; expectations are computed in-process by calling `stinkywait_core.api.analyze` on
the same text and options, so the tests check that the server renders the core faithfully.

Client capability presets: pytest-lsp's only VS Code snapshot (1.65.2) lacks inlay hints, so
hint tests use Neovim 0.11 and a VS Code preset patched with the inlay-hint capabilities recent
VS Code declares.  `LspSpecificationWarning` is turned into an error for every test here.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as T
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
GEMM = SHARED / "corpus" / "asm" / "aiter_gfx1250_mxscale_gemm1_final_isa.s"
SERVER = [sys.executable, "-m", "stinkywait_lsp"]
TIMEOUT = 60.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Spec warnings fail the test (only for this directory's tests)."""
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"))


def vscode_with_hints() -> T.ClientCapabilities:
    """VS Code 1.65.2 plus the inlay-hint capabilities of current VS Code."""
    caps = client_capabilities("visual-studio-code")
    caps.text_document.inlay_hint = T.InlayHintClientCapabilities(
        resolve_support=T.ClientInlayHintResolveOptions(
            properties=["tooltip", "label.tooltip", "label.location", "label.command"]))
    caps.workspace.inlay_hint = T.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    return caps


def _record_diagnostics(client: LanguageClient, params: T.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published_versions[params.uri] = params.version
    client.pushes.append((params.uri, params.version, list(params.diagnostics)))


def _count_refresh(client: LanguageClient, params: None) -> None:
    client.inlay_refreshes += 1


def _register(client: LanguageClient, params: T.RegistrationParams) -> None:
    client.registrations.extend(r.method for r in params.registrations)


def make_client(features: dict[str, Any] | None = None) -> LanguageClient:
    """pytest-lsp's test client, also recording the version of each diagnostics push and
    answering `workspace/inlayHint/refresh` and `client/registerCapability` (the stock client
    has no handler for them); `features` replaces handlers by method."""
    client = LanguageClient(converter_factory=default_converter)
    client.published_versions = {}
    #: every diagnostics push in arrival order: (uri, version, diagnostics)
    client.pushes = []
    client.inlay_refreshes = 0
    client.registrations = []
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES,
                                   T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record_diagnostics,
                                   T.WORKSPACE_INLAY_HINT_REFRESH: _count_refresh,
                                   T.CLIENT_REGISTER_CAPABILITY: _register,
                                   **(features or {})})
    return client


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)

PRESETS = {
    "neovim@v0.11": lambda: client_capabilities("neovim@v0.11"),
    "vscode+hints": vscode_with_hints,
    # no inlay hints, no workspace/configuration: settings arrive by push or init options
    "neovim@v0.7": lambda: client_capabilities("neovim@v0.7"),
}
HINT_PRESETS = ["neovim@v0.11", "vscode+hints"]


@dataclass
class Session:
    """The test client plus what the server asked of it."""

    client: LanguageClient
    preset: str
    docs: dict[str, tuple[str, int]] = field(default_factory=dict)

    # -- documents -------------------------------------------------------------------------

    def open(self, uri: str, text: str, language: str) -> None:
        self.docs[uri] = (text, 1)
        self.client.text_document_did_open(T.DidOpenTextDocumentParams(
            text_document=T.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))

    def open_file(self, path: Path, language: str | None = None) -> tuple[str, str]:
        text = path.read_text()
        uri = path.as_uri()
        self.open(uri, text, language or ("stir" if path.suffix == ".stir" else "amdgpu-asm"))
        return uri, text

    def replace_range(self, uri: str, rng: T.Range, new_text: str) -> int:
        """Send one incremental change and mirror it locally; returns the new version."""
        text, version = self.docs[uri]
        text = apply_text_edits(text, [T.TextEdit(range=rng, new_text=new_text)])
        version += 1
        self.docs[uri] = (text, version)
        self.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangePartial(range=rng, text=new_text)]))
        return version

    def text(self, uri: str) -> str:
        return self.docs[uri][0]

    # -- requests --------------------------------------------------------------------------

    async def diagnostics(self, uri: str, version: int | None = None) -> list[T.Diagnostic]:
        """Wait until the review tier of `version` (default: the current one) is published:
        the full set (the server first pushes the plan tier, `plan_diagnostics`).  Which
        push that is comes from the server's own record (`stinkywait/stats`: `published`),
        asked after a push of the version arrived: a push written before the answer to a
        later request reached us before it."""
        want = self.docs[uri][1] if version is None else version

        async def wait() -> list[T.Diagnostic]:
            while True:
                # a push that arrives while the record is asked for must not be waited for
                # again (it would be the last one: the wait would never end)
                seen = len(self.client.pushes)
                published = self.client.diagnostics.get(uri)
                if published is not None and self.client.published_versions.get(uri) == want:
                    if "published" in await self.record(uri, want):
                        return self.client.diagnostics[uri]
                if len(self.client.pushes) == seen:
                    await self.client.wait_for_notification(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

        return await asyncio.wait_for(wait(), TIMEOUT)

    async def plan_diagnostics(self, uri: str, version: int | None = None) -> list[T.Diagnostic]:
        """The first push of `version` (the plan tier), once it arrived."""
        want = self.docs[uri][1] if version is None else version

        async def wait() -> list[T.Diagnostic]:
            while True:
                for u, v, diags in self.client.pushes:
                    if u == uri and v == want:
                        return diags
                await self.client.wait_for_notification(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

        return await asyncio.wait_for(wait(), TIMEOUT)

    def pushes_of(self, uri: str, version: int) -> list[list[T.Diagnostic]]:
        """The pushes of `version` so far, in arrival order."""
        return [diags for u, v, diags in self.client.pushes if u == uri and v == version]

    async def record(self, uri: str, version: int) -> dict[str, Any]:
        """The server's stage record of `version` (`stinkywait/stats`; {} when it has none)."""
        stats = bench.plain(await asyncio.wait_for(
            self.client.protocol.send_request_async("stinkywait/stats", None), TIMEOUT))
        return next((r for r in stats["versions"] if r["uri"] == uri and r["version"] == version), {})

    @property
    def refreshes(self) -> int:
        return self.client.inlay_refreshes

    async def hints(self, uri: str, rng: T.Range | None = None) -> list[T.InlayHint]:
        rng = rng or whole_range(self.text(uri))
        result = await asyncio.wait_for(self.client.text_document_inlay_hint_async(T.InlayHintParams(
            text_document=T.TextDocumentIdentifier(uri=uri), range=rng)), TIMEOUT)
        return list(result or [])

    async def tooltip(self, hint: T.InlayHint) -> str:
        """A hint's tooltip, resolved (`inlayHint/resolve`) when the server sent it without."""
        if hint.tooltip is None:
            hint = await asyncio.wait_for(self.client.inlay_hint_resolve_async(hint), TIMEOUT)
        tip = hint.tooltip
        return tip.value if isinstance(tip, T.MarkupContent) else tip

    async def hover(self, uri: str, line0: int, char: int = 2) -> T.Hover | None:
        return await asyncio.wait_for(self.client.text_document_hover_async(T.HoverParams(
            text_document=T.TextDocumentIdentifier(uri=uri),
            position=T.Position(line=line0, character=char))), TIMEOUT)

    async def code_actions(self, uri: str, rng: T.Range, diagnostics: list[T.Diagnostic],
                           only: list[str] | None = None) -> list[T.CodeAction]:
        result = await asyncio.wait_for(self.client.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=uri), range=rng,
            context=T.CodeActionContext(diagnostics=diagnostics, only=only,
                                        trigger_kind=T.CodeActionTriggerKind.Invoked))), TIMEOUT)
        return [a for a in (result or []) if isinstance(a, T.CodeAction)]


def _bench_module():
    """benchmarks/bench_lsp.py, which owns the synthetic-kernel generator used here too."""
    spec = importlib.util.spec_from_file_location("bench_lsp", REPO / "benchmarks" / "bench_lsp.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_lsp", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = _bench_module()
synthetic_kernel = bench.synthetic_kernel


def whole_range(text: str) -> T.Range:
    lines = text.split("\n")
    return T.Range(start=T.Position(line=0, character=0),
                   end=T.Position(line=len(lines) - 1, character=len(lines[-1])))


def offset_of(text: str, pos: T.Position) -> int:
    """Offset of an LSP position (UTF-16 units; the test texts are ASCII)."""
    lines = text.split("\n")
    return sum(len(ln) + 1 for ln in lines[:pos.line]) + pos.character


def apply_text_edits(text: str, edits: list[T.TextEdit]) -> str:
    """Apply edits as a client does: against the original text, same-start inserts in order."""
    spans = sorted(((offset_of(text, e.range.start), offset_of(text, e.range.end), i, e.new_text)
                    for i, e in enumerate(edits)), key=lambda s: (s[0], s[2]))
    out, cursor = [], 0
    for start, end, _, new in spans:
        assert start >= cursor, "overlapping edits"
        out.append(text[cursor:start])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def workspace_edits(edit: T.WorkspaceEdit, uri: str, version: int) -> list[T.TextEdit]:
    """The text edits of a versioned `documentChanges` edit for `uri` (asserting the version)."""
    assert edit.document_changes, "expected versioned documentChanges"
    out: list[T.TextEdit] = []
    for change in edit.document_changes:
        assert isinstance(change, T.TextDocumentEdit)
        assert change.text_document.uri == uri
        assert change.text_document.version == version
        out.extend(e for e in change.edits if isinstance(e, T.TextEdit))
    return out


def core(text: str, path: Path | str, language: str | None = None, **options: Any):
    """The real core's analysis of a text (the expectation every test compares against)."""
    from stinkywait_core.api import analyze
    from stinkywait_core.results import Options
    return analyze(text, str(path), Options(**options), language=language)


SEVERITY = {"error": T.DiagnosticSeverity.Error, "warning": T.DiagnosticSeverity.Warning,
            "hint": T.DiagnosticSeverity.Hint, "info": T.DiagnosticSeverity.Information}


def expected_findings(a) -> list[tuple[str, int, T.DiagnosticSeverity]]:
    """(code, 0-based line, severity) the server must publish for the core's review, under
    the default severities: a planned wait of a rule class other than "fallback" that the
    text lacks is an error; one of class "fallback" (disjointness not proved) a warning with
    its own code; redundant and stricter hand-written waits are hints; the rest as the core
    says.  Written out here, independently of `stinkywait_core.findings`."""
    rules = {(w.line, w.insert_line, w.insert_text, w.instruction): w.rule for w in a.waits()}
    out = []
    for d in list(a.diagnostics) + list(a.check_diagnostics()):
        if d.code == "missing-wait":
            rule = rules[(d.line, d.data["insert_line"], d.data["insert_text"], d.data["instruction"])]
            if rule.lower().startswith("fallback"):
                out.append(("unproven-wait", d.line - 1, T.DiagnosticSeverity.Warning))
            else:
                out.append(("missing-wait", d.line - 1, T.DiagnosticSeverity.Error))
        elif d.code in ("redundant-wait", "stricter-wait"):
            out.append((d.code, d.line - 1, T.DiagnosticSeverity.Hint))
        else:
            out.append((d.code, d.line - 1, SEVERITY[d.severity]))
    return out


def label_text(hint: T.InlayHint) -> str:
    return hint.label if isinstance(hint.label, str) else "".join(p.value for p in hint.label)


def hint_wait(hint: T.InlayHint) -> str:
    """The wait a hint stands for: its label's first part (the text double-click inserts)."""
    return hint.label if isinstance(hint.label, str) else hint.label[0].value


async def initialize(client: LanguageClient, preset: str, settings: dict[str, Any] | None = None,
                     init_options: Any = None) -> None:
    client.preset = preset
    if settings is not None:
        client.set_configuration(settings, section="stinkywait")
    await client.initialize_session(T.InitializeParams(
        capabilities=PRESETS[preset](), root_uri=DATA.as_uri(), initialization_options=init_options))


@pytest_lsp.fixture(params=HINT_PRESETS, config=CONFIG)
async def preset_client(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    """A server under each capability preset that includes inlay hints."""
    await initialize(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def nvim_client(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    """One server under Neovim 0.11 (for tests that don't depend on the preset)."""
    await initialize(lsp_client, "neovim@v0.11")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def bare_client(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    """A started but not yet initialised server (tests pick preset and settings)."""
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def lsp(preset_client: LanguageClient) -> Session:
    return Session(preset_client, preset_client.preset)


@pytest.fixture
def nvim(nvim_client: LanguageClient) -> Session:
    return Session(nvim_client, nvim_client.preset)
