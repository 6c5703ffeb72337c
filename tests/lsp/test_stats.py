"""The server's own account of each version (`stinkywait/stats`), and the review in its child
process: a superseded review is stopped and never published, the next version's hints do
not wait for it."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient

from .conftest import (DATA, SERVER, TIMEOUT, Session, bench, core, hint_wait, initialize, make_client,
                       synthetic_kernel)

STATS = "stinkywait/stats"
#: these tests are about the review's child process, which is opt-in (`--review-process`)
WORKER = ClientServerConfig(server_command=SERVER + ["--review-process"], client_factory=make_client)


@pytest_lsp.fixture(config=WORKER)
async def worker_client(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    await initialize(lsp_client, "neovim@v0.11")
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def nvim(worker_client: LanguageClient) -> Session:
    return Session(worker_client, worker_client.preset)


async def _stats(session) -> dict:
    return bench.plain(await asyncio.wait_for(session.client.protocol.send_request_async(STATS, None), TIMEOUT))


def _record(stats: dict, uri: str, version: int) -> dict:
    return next(r for r in stats["versions"] if r["uri"] == uri and r["version"] == version)


def _at(line: int) -> T.Range:
    return T.Range(start=T.Position(line=line, character=0), end=T.Position(line=line, character=0))


async def test_each_version_is_traced_stage_by_stage(nvim):
    uri, _ = nvim.open_file(DATA / "sample.s")
    await nvim.hints(uri)
    await nvim.diagnostics(uri, 1)
    v = nvim.replace_range(uri, _at(13), "\tv_mul_f32_e32 v40, v12, v13\n")
    hints = await nvim.hints(uri)
    await nvim.diagnostics(uri, v)
    stats = await _stats(nvim)
    rec = _record(stats, uri, v)
    order = ["recv", "changed", "submit", "start", "done", "accepted", "hint_sent", "published"]
    assert [rec[k] for k in order] == sorted(rec[k] for k in order)
    # (the focus's review starts right after its plan: a hint request that arrives later is
    # answered while it runs)
    assert rec["accepted"] <= rec["review_start"] <= rec["published"]
    assert rec["hint_recv"] <= rec["hint_sent"]
    for k in ("linemap_ms", "analyze_ms", "analyze_cpu_ms", "prepare_ms", "hint_render_ms", "hint_send_ms",
              "review_ms", "publish_ms"):
        assert rec[k] >= 0, k
    assert rec["hint_count"] == len(hints) and rec["hint_bytes"] > 0 and rec["publish_bytes"] > 0
    # the collection policy is on, and the core left automatic collection off
    assert stats["gc"]["managed"] and not stats["gc"]["enabled"] and stats["gc"]["frozen"] > 0
    assert stats["review_worker"]["pid"] and stats["rss_mb"] > 0
    # a version that leaves real garbage behind ends with a collection (a full one before its
    # push, a young one right after it: Scheduler._collect_young)
    big = (DATA / "collected.s").as_uri()
    nvim.open(big, synthetic_kernel(300), "amdgpu-asm")
    await nvim.diagnostics(big, 1)
    # (an edit makes it the focus: opening does not, and a collection on behalf of another
    # document waits while the focus, sample.s, was edited within `focus_quiet_s`)
    bv = nvim.replace_range(big, _at(8), "\tv_mul_f32_e32 v90, v0, v1\n")
    await nvim.diagnostics(big, bv)
    # (the young collection comes after the review tier's push, which waits for the review:
    # under a loaded machine that is seconds, so poll up to the suite's request timeout)
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        stats = await _stats(nvim)
        done = [c for c in stats["collections"] if c["reason"] == "version done"
                and c["at"] >= _record(stats, big, bv)["accepted"]]
        if done or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    assert done and done[-1]["pending"] > 0, (stats["collections"][-6:], _record(stats, big, bv))
    published = _record(stats, big, bv)["published"]
    # (with the review in a child, another young one may run while the child reviews)
    assert done[-1]["at"] <= published if done[-1]["kind"] == "full" else done[-1]["at"] >= published


async def test_a_superseded_review_is_stopped_and_never_published(nvim):
    """While v1's (long) review runs in the child, an edit arrives: v2's hints are answered
    from v2, the child is killed (unless v1's review had already finished), and the last
    diagnostics pushed are v2's."""
    text = synthetic_kernel(600)
    uri = (DATA / "review-superseded.s").as_uri()
    nvim.open(uri, text, "amdgpu-asm")
    viewport = T.Range(start=T.Position(line=0, character=0), end=T.Position(line=80, character=0))
    await nvim.hints(uri, viewport)
    for _ in range(int(TIMEOUT / 0.02)):
        if "review_start" in _record(await _stats(nvim), uri, 1):
            break
        await asyncio.sleep(0.02)
    # a new consumer of the first block's LDS load, right after it
    v = nvim.replace_range(uri, _at(8), "\tv_mul_f32_e32 v90, v0, v1\n")
    hints = await nvim.hints(uri, viewport)
    want = [w for w in core(nvim.text(uri), DATA / "review-superseded.s").waits() if w.line <= 81]
    assert [(h.position.line, hint_wait(h)) for h in hints] == \
        [(w.line - 1, w.instruction) for w in sorted(want, key=lambda w: w.line)]
    await nvim.diagnostics(uri, v)
    stats = await _stats(nvim)
    first = _record(stats, uri, 1)
    assert "published" in first or stats["review_worker"]["killed"] >= 1
    assert nvim.client.published_versions[uri] == v
    assert "published" in _record(stats, uri, v)
