"""The stinkywait language server: a thin pygls layer over `stinkywait_core.api.analyze`.

Handlers are `async` and cheap: each awaits the fresh `Snapshot` of its document (see
`scheduler`) and renders it (see `render`, `actions`) before its next `await`, so it never
reads a snapshot that a newer version has superseded (`StaleSnapshot`: it asks again).  The
pass runs in a worker thread, never on the read loop; the review of hand-written waits in a
child process (`review`); garbage collection at chosen points (`memory`).  Errors never
surface as popups: analysis failures become diagnostics, handler failures become logged
error responses.  `stinkywait/stats` (a custom request) returns the per-version stage
times (`trace`), the collections and the memory of the server and its review worker.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import logging
import os
import re
import time
from dataclasses import asdict
from typing import Any, Awaitable, Callable, TypeVar
from urllib.parse import unquote

from lsprotocol import types as T
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from . import __version__
from .actions import FIX_ALL_KIND, EditStyle, code_actions, needs_fix_all, resolved_separation, separation_request
from .document import install as install_documents
from .lanes import LaneExecutor
from .memory import Collector, status_mb
from .plan import document_uri, focus_line, plan_json, status_json
from .render import definitions, hover, inlay_hints_text, resolve_tooltip
from .review import ProcessReviewer, Reviewer
from .scheduler import Key, Scheduler
from .settings import SECTION, Settings, section_of
from .snapshot import LANGUAGES, AnalyzeFn, Job, Snapshot, StaleSnapshot

log = logging.getLogger(__name__)

STATS = "stinkywait/stats"
STATUS = "stinkywait/status"
PLAN = "stinkywait/plan"
R = TypeVar("R")
#: what a client may name as its hover-detail command (it goes into a markdown link)
_COMMAND_ID = re.compile(r"[A-Za-z_][\w.-]*")

#: how long the initial settings pull may hold back the first analysis; a later answer
#: still applies (and re-analyses), a missing one never blocks anything
CONFIGURATION_TIMEOUT_S = 2.0
#: the first analysis waits at most this long for the initial settings
READY_TIMEOUT_S = 1.0


class MalformedResponse(Exception):
    """The client's answer to one of our requests could not be read (e.g. `null` where the
    protocol wants a list)."""


class RawJSON:
    """A handler result that is already JSON text: written as is (no cattrs pass, no
    re-serialisation, no copy of the text glued to the envelope)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class TimedProtocol(LanguageServerProtocol):
    """pygls' protocol, noting when messages arrive and what sending a response costs (for
    the per-version stage records; a few dict operations per message)."""

    def __init__(self, server: Any, converter: Any):
        super().__init__(server, converter)
        #: when the last didChange reached us (monotonic), before pygls applied it
        self.change_recv: float = 0.0
        #: request id -> arrival time, for the requests a handler asked to time
        self.request_recv: dict[Any, float] = {}
        #: request id -> the record its response's send cost goes into
        self.timed: dict[Any, dict[str, Any]] = {}
        self.bytes_out = 0

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method == T.TEXT_DOCUMENT_DID_CHANGE:
            self.change_recv = time.monotonic()
        elif method == T.TEXT_DOCUMENT_INLAY_HINT:
            self.request_recv[message.id] = time.monotonic()
            if len(self.request_recv) > 256:  # answered ones are popped; never let it grow
                self.request_recv.pop(next(iter(self.request_recv)))
        super().handle_message(message)

    def structure_message(self, data: Any) -> Any:
        """pygls' reader, except that a response it cannot read fails the request that was
        waiting for it (pygls drops the message and the request would wait forever)."""
        try:
            return super().structure_message(data)
        except Exception as exc:
            if isinstance(data, dict) and "id" in data and "method" not in data:
                future = self._request_futures.pop(data["id"], None)
                self._result_types.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_exception(MalformedResponse(f"unreadable response: {str(data)[:200]}"))
            raise exc

    def set_writer(self, writer: Any, include_headers: bool = True) -> None:
        protocol = self

        class Counting:
            def write(self, data: bytes) -> Any:
                protocol.bytes_out += len(data)
                return writer.write(data)

            def close(self) -> Any:
                return writer.close()

        super().set_writer(Counting(), include_headers)

    def _send_data(self, data: Any) -> None:
        data_id = getattr(data, "id", None)
        rec = self.timed.pop(data_id, None) if self.timed else None
        t0, b0 = time.perf_counter(), self.bytes_out
        result = getattr(data, "result", None)
        if isinstance(result, RawJSON):
            self._send_raw_response(data_id, result.text)
        else:
            super()._send_data(data)
        if rec is not None:
            rec["hint_send_ms"] = 1e3 * (time.perf_counter() - t0)
            rec["hint_bytes"] = self.bytes_out - b0
            rec["hint_sent"] = time.monotonic()

    def _send_raw_response(self, msg_id: Any, result: str) -> None:
        self._write_raw(('{"jsonrpc": "2.0", "id": ' + json.dumps(msg_id) + ', "result": ').encode(),
                        result.encode("utf-8"), b"}")

    def _write_raw(self, head: bytes, body: bytes, tail: bytes) -> None:
        """One message of `head + body + tail` (JSON text), with its header."""
        if self.writer is None:
            return
        if not getattr(self, "_include_headers", True):  # one message per write (websockets)
            res = self.writer.write(head + body + tail)
            if inspect.isawaitable(res):
                asyncio.ensure_future(res)
            return
        size = len(head) + len(body) + len(tail)
        self.writer.write(f"Content-Length: {size}\r\nContent-Type: {self.CONTENT_TYPE}; "
                          f"charset={self.CHARSET}\r\n\r\n".encode() + head)
        self.writer.write(body)
        self.writer.write(tail)

    def send_raw(self, method: str, params: dict[str, Any], raw_key: str | None = None,
                 raw: str | None = None) -> int:
        """Send a notification whose params are already JSON-ready (no cattrs pass over
        1000 diagnostics); `raw`, when given, is the JSON text of the params' last field
        `raw_key` (serialised off the loop).  Returns the bytes written."""
        b0 = self.bytes_out
        if raw is None or raw_key is None:
            self._send_data({"jsonrpc": "2.0", "method": method, "params": params})
        else:
            head = json.dumps({"jsonrpc": "2.0", "method": method, "params": params})
            # `..."params": {...}}` -> `..."params": {..., "raw_key": ` + raw + `}}`
            head = head[:-2] + (", " if params else "") + json.dumps(raw_key) + ": "
            self._write_raw(head.encode(), raw.encode("utf-8"), b"}}")
        return self.bytes_out - b0


class StinkyWaitServer(LanguageServer):
    """Holds the settings, their generation counter and the analysis scheduler."""

    def __init__(self, analyze: AnalyzeFn, *, new_cache: Callable[[], Any] | None = None,
                 debounce_s: float = 0.0, analysis_workers: int = 2, reviewer: Reviewer | None = None,
                 collector: Collector | None = None):
        # pygls' own pool also runs the stdin reader: keep it separate from the analysis pool
        super().__init__("stinkywait", __version__, max_workers=4, protocol_cls=TimedProtocol)
        self.reviewer = reviewer
        self.collector = collector
        self.settings = Settings()
        self.generation = 0
        #: the edited document's work first, never behind other files' (see `lanes`)
        self.analysis_pool = LaneExecutor(analysis_workers, "stinkywait-analysis")
        self._ready: asyncio.Event | None = None
        self._settings_lock: asyncio.Lock | None = None
        self._analyze = analyze
        self._new_cache = new_cache
        self._debounce_s = debounce_s
        self._scheduler: Scheduler | None = None
        #: reverse include map: an included file's path -> the open documents whose last
        #: analysis read it (an edit of that file, open in the editor, re-analyses them)
        self.includers: dict[str, set[str]] = {}
        #: per document, how many times a file it includes changed: added to the settings
        #: generation in its freshness key, so the scheduler analyses it again
        self.include_epoch: dict[str, int] = {}

    # -- plumbing --------------------------------------------------------------------------

    @property
    def scheduler(self) -> Scheduler:
        """Created lazily because asyncio primitives need the server's running loop."""
        if self._scheduler is None:
            self._ready = asyncio.Event()
            self._settings_lock = asyncio.Lock()
            self._scheduler = Scheduler(executor=self.analysis_pool, analyze=self._analyze,
                                        make_job=self.make_job, current_key=self.current_key,
                                        on_snapshot=self.publish, on_plan=self.publish_plan,
                                        ready=self._ready,
                                        new_cache=self._new_cache, debounce_s=self._debounce_s,
                                        reviewer=self.reviewer, collector=self.collector)
        return self._scheduler

    @property
    def settings_lock(self) -> asyncio.Lock:
        """Serialises settings pulls (initial pull vs. change notifications)."""
        self.scheduler  # noqa: B018 - creates the loop-bound primitives on first use
        assert self._settings_lock is not None
        return self._settings_lock

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log instead of pygls' default `window/showMessage` popup on every failure."""
        log.error("server error (%s): %r", getattr(source, "__name__", source), error)

    def capability(self, path: str, default: Any = None) -> Any:
        """A client capability by dotted path (`default` when the client did not say)."""
        return get_capability(self.client_capabilities, path, default)

    def _document(self, uri: str) -> TextDocument | None:
        """The open document for `uri`, or None (never pygls' read-from-disk fallback)."""
        docs = self.workspace.text_documents
        if uri in docs:
            return docs[uri]
        return docs.get(unquote(uri))

    def current_key(self, uri: str) -> Key | None:
        doc = self._document(uri)
        return None if doc is None else (self.generation + self.include_epoch.get(uri, 0), doc.version or 0)

    def make_job(self, uri: str) -> Job | None:
        doc = self._document(uri)
        if doc is None:
            return None
        language = doc.language_id if doc.language_id in LANGUAGES else None
        encoding = self.workspace.position_encoding or T.PositionEncodingKind.Utf16
        return Job(uri=uri, path=to_fs_path(uri) or uri, version=doc.version or 0,
                   generation=self.generation + self.include_epoch.get(uri, 0), text=doc.source, language=language,
                   options=self.settings.to_options(), encoding=str(getattr(encoding, "value", encoding)),
                   view=self.settings.view, sources=self.open_sources(uri))

    def open_sources(self, uri: str) -> dict[str, str]:
        """The texts of the other open documents by file path: an included file that is open
        is read from its buffer, not from the disk (captured here, on the loop thread)."""
        out: dict[str, str] = {}
        for other, doc in list(self.workspace.text_documents.items()):
            if other != uri:
                path = to_fs_path(other)
                if path:
                    out[os.path.abspath(path)] = doc.source
        return out

    def note_includes(self, snap: Snapshot) -> None:
        """Record which files the snapshot's analysis included (the reverse include map)."""
        sites = getattr(snap.analysis, "call_sites", None) if snap.analysis is not None else None
        read = set(sites.source_map.includes) if sites is not None else set()
        for path, uris in list(self.includers.items()):
            if path not in read:
                uris.discard(snap.uri)
                if not uris:
                    del self.includers[path]
        for path in read:
            self.includers.setdefault(path, set()).add(snap.uri)

    def reanalyse_includers(self, uri: str) -> None:
        """An open file changed: analyse again every open document that includes it."""
        path = to_fs_path(uri)
        if not path:
            return
        for other in sorted(self.includers.get(os.path.abspath(path), ())):
            if other != uri and self._document(other) is not None:
                self.include_epoch[other] = self.include_epoch.get(other, 0) + 1
                self.scheduler.changed(other)

    def publish_plan(self, snap: Snapshot) -> None:
        """Push the snapshot's plan tier (see `scheduler`: before its review)."""
        self.publish(snap, review=False)

    def publish(self, snap: Snapshot, review: bool = True) -> None:
        """Push the snapshot's diagnostics (JSON built straight from the core's records):
        the review tier (the full set), or with `review=False` the plan tier."""
        t0 = time.perf_counter()
        self.note_includes(snap)
        if isinstance(self.protocol, TimedProtocol):
            # (the diagnostics' JSON text is normally built already, off the loop: `scheduler`)
            size = self.protocol.send_raw(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                                          {"uri": snap.uri, "version": snap.version},
                                          "diagnostics", snap.published_text(review))
        else:  # pragma: no cover - a protocol without the raw path
            size = 0
            params = {"uri": snap.uri, "version": snap.version, "diagnostics": snap.published(review)}
            self.text_document_publish_diagnostics(self.protocol._converter.structure(
                params, T.PublishDiagnosticsParams))
        rec = self.scheduler.traces.of(snap.uri, snap.key)
        tier = "" if review else "plan_"
        rec[f"{tier}publish_ms"] = 1e3 * (time.perf_counter() - t0)
        rec[f"{tier}publish_bytes"] = size
        rec[f"{tier}published"] = time.monotonic()

    async def answer(self, uri: str, render: Callable[[Snapshot], Awaitable[R] | R],
                     empty: Any = None) -> Any:
        """Render from the fresh snapshot of `uri`; when it is superseded while an async
        `render` awaits (`StaleSnapshot`), start again from the newer version."""
        while True:
            snap = await self.scheduler.fresh(uri)
            if snap is None:
                return empty
            try:
                result = render(snap)
                if asyncio.iscoroutine(result):
                    result = await result
                return result
            except StaleSnapshot:
                log.debug("%s v%d superseded while answering: asking the newer version", uri, snap.version)

    def stats(self) -> dict[str, Any]:
        """What `stinkywait/stats` returns (for benchmarks and bug reports)."""
        reviewer = self.reviewer
        collector = self.collector
        return {
            "versions": self.scheduler.traces.export(),
            "collections": [asdict(c) for c in (collector.history if collector is not None else [])],
            "gc": {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
                   "managed": bool(collector is not None and collector.managed)},
            "rss_mb": status_mb(),
            "peak_rss_mb": status_mb("VmHWM"),
            "review_worker": None if not isinstance(reviewer, ProcessReviewer) else {
                "pid": reviewer.pid, "spawned": reviewer.spawned, "killed": reviewer.killed,
                "last_rss_mb": reviewer.last_rss_mb},
        }

    # -- settings ---------------------------------------------------------------------------

    def apply_settings(self, raw: Any) -> bool:
        """Merge a client settings object; bump the generation when anything changed."""
        new, problems = self.settings.merged(section_of(raw))
        for p in problems:
            self.window_log_message(T.LogMessageParams(type=T.MessageType.Warning, message=p))
        if new == self.settings:
            return False
        self.settings = new
        self.generation += 1
        log.info("settings now %s (generation %d)", new.to_json(), self.generation)
        return True

    async def pull_settings(self, timeout_s: float | None = None) -> bool:
        """Ask the client for section `stinkywait` when it supports `workspace/configuration`.

        Never trusted to answer: a failed, late (`timeout_s`, default
        `CONFIGURATION_TIMEOUT_S`) or malformed answer (`null`, not a list, a non-object
        item) leaves the settings as they are and is logged."""
        if not self.capability("workspace.configuration", False):
            return False
        timeout_s = CONFIGURATION_TIMEOUT_S if timeout_s is None else timeout_s
        try:
            result = await asyncio.wait_for(self.workspace_configuration_async(
                T.ConfigurationParams(items=[T.ConfigurationItem(section=SECTION)])), timeout_s)
        except asyncio.TimeoutError:
            log.warning("workspace/configuration: no answer within %.1f s; keeping the current settings", timeout_s)
            return False
        except Exception as exc:  # noqa: BLE001 - a client error leaves the settings as they are
            log.warning("workspace/configuration failed (%r); keeping the current settings", exc)
            return False
        if result is None:
            return False
        if not isinstance(result, (list, tuple)):
            log.warning("workspace/configuration answered %s, not a list; keeping the current settings",
                        type(result).__name__)
            return False
        return self.apply_settings(result[0] if result else None)

    async def initial_pull(self) -> None:
        """The settings pull after `initialized`; re-analyses when it lands after the first
        analysis started."""
        async with self.settings_lock:
            changed = await self.pull_settings()
        if changed and self.scheduler.ready.is_set():
            await self.settings_changed()

    async def settings_changed(self) -> None:
        """Re-analyse everything under the new settings and ask the client to re-query hints."""
        self.scheduler.refresh_all()
        if self.capability("workspace.inlay_hint.refresh_support", False):
            try:
                await self.workspace_inlay_hint_refresh_async(None)
            except Exception as exc:  # noqa: BLE001 - refresh is best effort
                log.warning("workspace/inlayHint/refresh failed: %r", exc)

    def edit_style(self) -> EditStyle:
        """Versioned `documentChanges` when the client handles them: it says so directly, or
        implies it by supporting resource operations (which only exist in documentChanges;
        Neovim declares those but not the flag)."""
        return EditStyle(document_changes=bool(
            self.capability("workspace.workspace_edit.document_changes", False)
            or self.capability("workspace.workspace_edit.resource_operations", None)))

    def resolves_action_edits(self) -> bool:
        """Whether the client resolves a code action's edit (`codeAction/resolve`)."""
        props = self.capability("text_document.code_action.resolve_support.properties", None) or []
        return "edit" in props

    def resolves_tooltips(self) -> bool:
        """Whether the client resolves an inlay hint's tooltip (then hints go without one)."""
        props = self.capability("text_document.inlay_hint.resolve_support.properties", None) or []
        return "tooltip" in props

    def hover_markdown(self) -> bool:
        formats = self.capability("text_document.hover.content_format", None)
        return not formats or T.MarkupKind.Markdown in formats

    def hover_detail_command(self) -> str | None:
        """The command a client runs from a hover's link to show a line's detail (the wait
        plan there), from its experimental capability `stinkywait.hoverDetailCommand` (the
        VS Code extension's; its hover box is small): the hover is then the summary and the
        link.  None (other clients): the whole explanation is in the hover."""
        experimental = self.capability("experimental", None)
        ours = experimental.get("stinkywait") if isinstance(experimental, dict) else None
        command = ours.get("hoverDetailCommand") if isinstance(ours, dict) else None
        if isinstance(command, str) and _COMMAND_ID.fullmatch(command) and self.hover_markdown():
            return command
        return None


def create_server(*, debounce_s: float = 0.0, review_process: bool = False,
                  manage_gc: bool = True) -> StinkyWaitServer:
    """Build a server on the real core with every feature registered (no module-level
    server object).  `review_process`: review hand-written waits in a child process (else on
    the analysis pool, from the plan's own analysis and the document's incremental cache:
    ~10 ms per GEMM edit, and no second process's memory); `manage_gc`: the collection
    policy of `memory` (else CPython's)."""
    from stinkywait_core import api

    server = StinkyWaitServer(api.analyze, new_cache=getattr(api, "AnalysisCache", None),
                              debounce_s=debounce_s,
                              reviewer=ProcessReviewer() if review_process else None,
                              collector=Collector(manage=manage_gc))

    @server.feature(T.INITIALIZE)
    def on_initialize(ls: StinkyWaitServer, params: T.InitializeParams) -> None:
        # pygls has just made the workspace: its documents apply changes the LSP way
        if not install_documents(ls.workspace):
            log.warning("this pygls has no document factory hook: using its own documents")
        if params.initialization_options is not None:
            ls.apply_settings(params.initialization_options)

    @server.feature(T.INITIALIZED)
    async def on_initialized(ls: StinkyWaitServer, params: T.InitializedParams) -> None:
        sched = ls.scheduler
        try:
            if ls.capability("workspace.did_change_configuration.dynamic_registration", False):
                await ls.client_register_capability_async(T.RegistrationParams(registrations=[
                    T.Registration(id="stinkywait-configuration",
                                   method=T.WORKSPACE_DID_CHANGE_CONFIGURATION,
                                   register_options=T.DidChangeConfigurationRegistrationOptions(
                                       section=SECTION))]))
        except Exception as exc:  # noqa: BLE001 - without it we still get pushed settings
            log.warning("registering for configuration changes failed: %r", exc)
        # the first analysis waits for the client's settings, but never long: a client that
        # answers late still gets its settings applied (and everything re-analysed)
        pull = asyncio.ensure_future(ls.initial_pull())
        try:
            await asyncio.wait_for(asyncio.shield(pull), READY_TIMEOUT_S)
        except asyncio.TimeoutError:
            log.warning("no settings from the client within %.1f s: analysing with the current ones",
                        READY_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - the pull logs its own problems
            log.warning("initial settings pull failed: %r", exc)
        finally:
            sched.ready.set()

    @server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration(ls: StinkyWaitServer, params: T.DidChangeConfigurationParams) -> None:
        async with ls.settings_lock:
            if ls.capability("workspace.configuration", False):
                changed = await ls.pull_settings()
            else:
                changed = ls.apply_settings(params.settings)
        if changed:
            await ls.settings_changed()

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def on_open(ls: StinkyWaitServer, params: T.DidOpenTextDocumentParams) -> None:
        ls.scheduler.opened(params.text_document.uri)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: StinkyWaitServer, params: T.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        key = ls.current_key(uri)
        if key is not None:
            rec = ls.scheduler.traces.of(uri, key)
            rec["changed"] = time.monotonic()
            if isinstance(ls.protocol, TimedProtocol) and ls.protocol.change_recv:
                rec["recv"] = ls.protocol.change_recv
        ls.scheduler.changed(uri)
        ls.reanalyse_includers(uri)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: StinkyWaitServer, params: T.DidCloseTextDocumentParams) -> None:
        ls.scheduler.closed(params.text_document.uri)
        ls.reanalyse_includers(params.text_document.uri)  # they read the file from disk again
        ls.text_document_publish_diagnostics(
            T.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(T.TEXT_DOCUMENT_INLAY_HINT)
    async def on_inlay_hint(ls: StinkyWaitServer, params: T.InlayHintParams) -> RawJSON | None:
        protocol = ls.protocol
        msg_id = protocol.msg_id
        received = protocol.request_recv.pop(msg_id, None) if isinstance(protocol, TimedProtocol) else None

        def render(snap: Snapshot) -> RawJSON:
            t0 = time.perf_counter()
            count, text = inlay_hints_text(snap, params.range, lazy=ls.resolves_tooltips())
            rec = ls.scheduler.traces.of(snap.uri, snap.key)
            if "hint_recv" not in rec and received is not None:
                # the first answer from this version: where its time went
                rec.update(hint_recv=received, hint_render_ms=1e3 * (time.perf_counter() - t0),
                           hint_count=count)
                protocol.timed[msg_id] = rec
            return RawJSON(text)

        return await ls.answer(params.text_document.uri, render)

    @server.feature(T.INLAY_HINT_RESOLVE)
    async def on_inlay_hint_resolve(ls: StinkyWaitServer, hint: T.InlayHint) -> T.InlayHint:
        data = hint.data if isinstance(hint.data, dict) else None
        uri = data.get("uri") if data else None
        if not isinstance(uri, str) or hint.tooltip is not None:
            return hint

        def render(snap: Snapshot) -> T.InlayHint:
            tooltip = resolve_tooltip(snap, data)
            if tooltip is not None:
                hint.tooltip = T.MarkupContent(kind=T.MarkupKind.Markdown, value=tooltip["value"])
            return hint

        return await ls.answer(uri, render, empty=hint)

    @server.feature(T.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: StinkyWaitServer, params: T.HoverParams) -> T.Hover | None:
        command = ls.hover_detail_command()
        result = await ls.answer(params.text_document.uri,
                                 lambda snap: hover(snap, params.position.line, command))
        if result is not None and not ls.hover_markdown():
            result.contents = T.MarkupContent(kind=T.MarkupKind.PlainText, value=result.contents.value)
        return result

    @server.feature(T.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(ls: StinkyWaitServer, params: T.DefinitionParams) -> list[T.Location] | None:
        return await ls.answer(params.text_document.uri,
                               lambda snap: definitions(snap, params.position.line) or None)

    @server.feature(T.TEXT_DOCUMENT_CODE_ACTION, T.CodeActionOptions(
        code_action_kinds=[T.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True))
    async def on_code_action(ls: StinkyWaitServer, params: T.CodeActionParams) -> list[T.CodeAction] | None:
        async def render(snap: Snapshot) -> list[T.CodeAction] | None:
            await ls.scheduler.checked(snap)
            fix_all = None
            if needs_fix_all(snap, params):
                # printing the whole file is the one costly step: off the loop, once
                fix_all = await ls.scheduler.fix_all(snap)
            if not snap.valid:
                raise StaleSnapshot(snap.uri)
            return code_actions(snap, params, ls.edit_style(), fix_all, ls.resolves_action_edits()) or None

        return await ls.answer(params.text_document.uri, render)

    @server.feature(T.CODE_ACTION_RESOLVE)
    async def on_code_action_resolve(ls: StinkyWaitServer, action: T.CodeAction) -> T.CodeAction:
        data = separation_request(action)
        if data is None:
            return action

        async def render(snap: Snapshot) -> T.CodeAction:
            if snap.version != data["version"]:
                return action  # the text moved on: no edit (the client asks again)
            # fresh analyses of the snapshot's text, off the loop (seconds on a 10k-line kernel)
            return await asyncio.get_running_loop().run_in_executor(
                ls.analysis_pool, resolved_separation, snap, ls.edit_style(), action, data)

        return await ls.answer(data["uri"], render, empty=action)

    @server.feature(STATS)
    def on_stats(ls: StinkyWaitServer, params: Any) -> dict[str, Any]:
        return ls.stats()

    @server.feature(STATUS)
    async def on_status(ls: StinkyWaitServer, params: Any) -> dict[str, Any] | None:
        uri = document_uri(params)
        return None if uri is None else await ls.answer(uri, status_json)

    @server.feature(PLAN)
    async def on_plan(ls: StinkyWaitServer, params: Any) -> dict[str, Any] | None:
        uri = document_uri(params)
        line = focus_line(params)
        return None if uri is None else await ls.answer(uri, lambda snap: plan_json(snap, line))

    @server.feature(T.SHUTDOWN)
    def on_shutdown(ls: StinkyWaitServer, params: None) -> None:
        ls.scheduler.shutdown()
        ls.analysis_pool.shutdown(wait=False, cancel_futures=True)

    return server
