"""Dropping the analyses of documents not in use (issue 21, memory), on the real core.

The scheduler keeps the analyses of the documents used last (`retention`); the others' are
dropped once their diagnostics are out.  A request about a dropped document analyses the
same text again and must answer exactly what the first analysis answered; the dropped
objects must really be released (weak references), and nothing is reviewed or pushed twice.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from stinkywait_core.api import AnalysisCache, analyze
from stinkywait_core.results import Options

from stinkywait_lsp.retention import Retention
from stinkywait_lsp.scheduler import Scheduler
from stinkywait_lsp.settings import Settings
from stinkywait_lsp.snapshot import Job, Snapshot

from .conftest import DATA

FILES = ["sample.s", "diamond.s", "checked.s", "join.s"]  # checked.s: a review that re-plans


@dataclass
class Workspace:
    """Open documents (uri -> text) and what the scheduler did with them."""

    texts: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    analysed: list[str] = field(default_factory=list)
    published: list[str] = field(default_factory=list)

    def analyze(self, text, path, options, language=None, **kw):
        self.analysed.append(path)
        return analyze(text, path, options, language=language, **kw)

    def make_job(self, uri: str) -> Job | None:
        if uri not in self.texts:
            return None
        return Job(uri=uri, path=uri.rsplit("/", 1)[-1], version=self.versions.get(uri, 1), generation=0, text=self.texts[uri],
                   language="amdgpu-asm", options=Options(), encoding="utf-16")

    def key(self, uri: str) -> tuple[int, int] | None:
        return (0, self.versions.get(uri, 1)) if uri in self.texts else None

    def publish(self, snap: Snapshot) -> None:
        self.published.append(snap.uri)


def answers(snap: Snapshot) -> tuple:
    """What a document's requests are answered from: every planned wait with its reason,
    the FIFO state and producers at every line, the diagnostics and the review's findings."""
    waits = [(w.line, w.column, w.insert_line, w.insert_text, w.instruction, w.rule, w.reason, w.count,
              w.placement, tuple((d.line, d.column, d.mnemonic, d.count_from) for d in w.deps))
             for w in snap.waits]
    n = snap.lines.line_count
    fifo = [(line, snap.fifo_at(line)) for line in range(1, n + 1)]
    producers = [snap.producers_of(line) for line in range(1, n + 1)]
    instrs = [snap.instr_at(line) for line in range(1, n + 1)]
    diags = [(d.code, d.line, d.col, d.message) for d in snap.all_diagnostics()]
    return waits, repr(fifo), producers, instrs, diags, snap.published()


async def _published(ws: Workspace, uri: str) -> None:
    for _ in range(600):
        if uri in ws.published:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{uri} was never published")


async def test_a_dropped_document_answers_as_before_and_is_released():
    ws = Workspace()
    uris = [f"file:///{name}" for name in FILES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        ready = asyncio.Event()
        ready.set()
        sched = Scheduler(executor=pool, analyze=ws.analyze, make_job=ws.make_job, current_key=ws.key,
                          on_snapshot=ws.publish, ready=ready, new_cache=AnalysisCache, review_delay_s=0.0,
                          cheap_review_delay_s=0.0, retention=Retention(keep=1), collect_dropped_after_s=0.0)
        first = {}
        refs = {}
        for uri, name in zip(uris, FILES):
            ws.texts[uri] = (DATA / name).read_text()
            sched.opened(uri)
            await _published(ws, uri)
            snap = await sched.fresh(uri)
            await sched.checked(snap)
            first[uri] = answers(snap)
            refs[uri] = (weakref.ref(snap.analysis.module), weakref.ref(sched.docs[uri].cache))
            del snap
        # the last one used and one more keep their analyses; the two used before are dropped
        await asyncio.sleep(0.05)
        kept = [u for u in uris if sched.docs[u].latest is not None]
        assert kept == uris[2:]
        assert sched.memory_stats() == {"open": 4, "analysed": 2, "dropped": 2, "keep": 1}
        gc.collect()
        for uri in uris[:2]:
            module, cache = refs[uri]
            assert module() is None and cache() is None, f"the dropped analysis of {uri} is still alive"
        assert refs[uris[3]][0]() is not None
        # kept but not in use: only the plan's own analyses stay in its cache (not the review's)
        assert {k[2] for k in sched.docs[uris[2]].cache._d} == {Options()}

        # asked again: analysed again, the same answers, no second review or push
        ws.published.clear()
        n = len(ws.analysed)
        for uri in uris[:2]:
            snap = await sched.fresh(uri)
            assert snap.checks is not None  # the review's findings were kept
            assert answers(snap) == first[uri]
            assert (await sched.checked(snap)) is snap
            del snap
        assert len(ws.analysed) == n + 2
        await asyncio.sleep(0.1)
        assert ws.published == []
        # the budget still holds: asking about the first two dropped the two kept before
        assert [u for u in uris if sched.docs[u].latest is not None] == uris[:2]
        # and an edit of a dropped document analyses it normally (review, push)
        ws.texts[uris[2]] += "\n"
        ws.versions[uris[2]] = 2
        sched.changed(uris[2])
        await _published(ws, uris[2])
        sched.shutdown()


async def test_documents_opened_at_once_are_not_all_analysed_at_once():
    """A user's kernel folder opened at once: background documents are admitted to planning
    only while few are unfinished, so the dropped ones go before the next ones are made."""
    from stinkywait_lsp.lanes import LaneExecutor

    ws = Workspace()
    uris = [f"file:///many{i}-{name}" for i, name in enumerate(FILES * 2)]
    alive: list[int] = []
    pool = LaneExecutor(2)
    ready = asyncio.Event()
    ready.set()
    sched = Scheduler(executor=pool, analyze=ws.analyze, make_job=ws.make_job, current_key=ws.key,
                      on_snapshot=ws.publish, ready=ready, new_cache=AnalysisCache, review_delay_s=0.0,
                      cheap_review_delay_s=0.0, retention=Retention(keep=1), collect_dropped_after_s=0.0,
                      max_unfinished=2)
    analyze_one = ws.analyze

    def counting(*args, **kw):  # (in the worker: how many documents hold an analysis now)
        alive.append(sum(1 for st in list(sched.docs.values()) if st.latest is not None))
        return analyze_one(*args, **kw)

    ws.analyze = counting
    sched.analyze = counting
    try:
        for uri, name in zip(uris, FILES * 2):
            ws.texts[uri] = (DATA / name).read_text()
            sched.opened(uri)
        for uri in uris:
            await _published(ws, uri)
        assert sorted(ws.published) == sorted(uris) and len(ws.analysed) >= len(uris)
        # never more than the budget (keep 1, the one used last) plus the unfinished ones
        assert max(alive) <= 4, alive
        await asyncio.sleep(0.05)
        assert sched.memory_stats()["analysed"] <= 2
    finally:
        sched.shutdown()
        pool.shutdown()


def test_retention_order_and_budget():
    r = Retention(keep=2)
    for u in "abcde":
        r.touch(u)
    r.touch("b")
    assert r.last() == "b"
    # b (last) and the two used most recently before it (e, d) stay; c then a go first
    assert r.over_budget("abcde") == ["a", "c"]
    assert r.over_budget("abcde", protected={"a"}) == ["c"]
    r.forget("b")
    assert r.last() == "e" and r.over_budget("abcd") == ["b", "a"]  # b: never used since
    assert Retention(keep=0).over_budget([]) == []


def test_keep_analyses_setting_changes_no_result():
    s, problems = Settings().merged({"keepAnalyses": 0})
    assert problems == [] and s.keep_analyses == 0
    assert Settings().same_results(s) and not Settings().same_results(Settings().merged({"numWaves": 2})[0])
    bad, problems = Settings().merged({"keepAnalyses": -1})
    assert bad == Settings() and problems == ["stinkywait.keepAnalyses: must be >= 0, got -1"]


# -- the real server over stdio ------------------------------------------------------------------

import pytest  # noqa: E402
import pytest_lsp  # noqa: E402
from lsprotocol import types as T  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from .conftest import CONFIG, TIMEOUT, Session, bench, initialize  # noqa: E402


@pytest_lsp.fixture(config=CONFIG)
async def keep_none(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    """A server that keeps no analysis but the one of the document used last."""
    await initialize(lsp_client, "neovim@v0.11", settings={"keepAnalyses": 0})
    yield
    await lsp_client.shutdown_session()


async def _request(session: Session, method: str, params) -> dict:
    return bench.plain(await asyncio.wait_for(session.client.protocol.send_request_async(method, params), TIMEOUT))


async def _everything(session: Session, uri: str) -> tuple:
    """Hints, every line's hover and the plan view (with every line's detail) of `uri`."""
    hints = [bench.plain(h) for h in await session.hints(uri)]
    n = session.text(uri).count("\n") + 1
    hovers = [bench.plain(await session.hover(uri, line)) for line in range(n)]
    doc = {"textDocument": {"uri": uri}}
    plans = [await _request(session, "stinkywait/plan", doc)]
    plans += [await _request(session, "stinkywait/plan", {**doc, "line": line}) for line in range(1, n + 1)]
    return hints, hovers, plans


async def test_the_server_answers_a_dropped_document_as_before(keep_none):
    session = Session(keep_none, keep_none.preset)
    a, _ = session.open_file(DATA / "sample.s")
    diagnostics = await session.diagnostics(a, 1)
    before = await _everything(session, a)
    assert before[0] and any(before[1]) and any(f["waits"] for f in before[2][0]["functions"]), "nothing to compare"
    b, _ = session.open_file(DATA / "diamond.s")
    await session.diagnostics(b, 1)
    for _ in range(200):  # the drop follows b's push (same loop turn) and its collection
        stats = await _request(session, "stinkywait/stats", None)
        if stats["documents"]["dropped"]:
            break
        await asyncio.sleep(0.05)
    assert stats["documents"] == {"open": 2, "analysed": 1, "dropped": 1, "keep": 0}
    pushes = len([r for r in stats["versions"] if r["uri"] == a and "published" in r])
    after = await _everything(session, a)
    assert after == before
    stats = await _request(session, "stinkywait/stats", None)
    # a analysed again (and b dropped in turn), but a's findings are not pushed twice
    assert stats["documents"] == {"open": 2, "analysed": 1, "dropped": 2, "keep": 0}
    assert len([r for r in stats["versions"] if r["uri"] == a and "published" in r]) == pushes
    assert session.client.diagnostics[a] == diagnostics


def test_dropped_analyses_are_collected_in_batches():
    """A full collection (the only kind that frees what was frozen) after every third drop,
    not after each: each blocks the server for seconds with many kernels open."""
    from stinkywait_lsp.memory import Collector

    c = Collector(manage=False, full_after_drops=3)
    c.want_full()
    c.want_full()
    assert not c.full_wanted
    c.want_full()
    assert c.full_wanted
