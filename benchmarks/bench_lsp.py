"""Language-server latency and memory, measured by driving the real server over stdio.

    .venv/bin/python benchmarks/bench_lsp.py [--iterations 15] [--big-blocks 3750] [--json]
        [--skip-big] [--many-files N [--kernels DIR] [--wait-others]] [--keep-analyses N]
        [--server-log FILE] [--server-arg=--automatic-gc ...] [--typing GAP_MS [--typing-edits N]]
        [--retune]

Scenarios (targets from issue 5):
  * open -> first hints on the 3.2k-line gfx1250 GEMM of the shared corpus   (<= 500 ms)
  * one-line edit -> fresh inlay hints on that GEMM, median                  (<= 50 ms)
  * one-line edit -> fresh inlay hints on a 30k-line synthetic kernel         (<= 250 ms)
  * resident memory of the server process after all of the above             (<= 300 MB)
  * `--many-files N`: the GEMM is open and analysed, then N-1 other real kernels (the
    corpus's and tests/data/aiter_gfx1250's, repeated) are opened at once and the GEMM is
    edited while the server works through them: its edit -> hints must not wait behind
    them (issue 21: "the document being edited never waits behind other files' work")
  * `--typing GAP_MS`: a burst of GEMM edits GAP_MS apart, each with its hint request and no
    wait for diagnostics: edit -> hints while the reviews the edits start are stopped by the
    next edit, and the last edit -> its review tier
  * `--retune`: GEMM edits of hand-written waits (a count changed by one, then put back):
    the review after an edit that changes no instruction the wait-stripped plan reads

Every scenario also times each edit -> that version's publishDiagnostics (issue 21: 200 ms),
per tier: the plan tier (the first push of the version: parse and pass diagnostics, missing
waits) and the review tier (the full set, after the review; the push after which the server's
record says `published`; a server with one push per version gives both the same time).

Each edit changes one instruction line (the text really changes, so no cache can answer
it), and the hint request for the 80 lines around it (the viewport, as VS Code asks) is sent
right after the didChange; open -> hints asks for the first screen.  The "hints" column is
the whole-file count.  Between
iterations the script waits for that version's diagnostics, so iterations do not overlap.

Where each edit's time goes: after each iteration the script asks the server for its stage
records (`stinkywait/stats`, see `stinkywait_lsp/trace.py`) and prints their medians: from
the didChange reaching the server to the hint answer being written (apply the change,
schedule, executor hop, forced collection, line map, the core's analyze, preparing the
snapshot, hop back, the request waiting, render, JSON + write), the rest of the client's
wall time (transport and the client's own parsing), and after the answer, off the request
path: the review's quiet period, the review (in the server, or its child process), the collection, the push.
The same texts are also run through the core in-process: parse, plan (the pass), review.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parents[1]
#: an editor asks for the hints of what it shows: about one screen around the cursor
VIEWPORT = 80
#: the shared corpus beside the repository (/work/main -> /work/shared), or two levels up from a
#: worktree (/work/wt/NAME -> /work/shared)
GEMM = next((d / "shared" / "corpus" / "asm" / "aiter_gfx1250_mxscale_gemm1_final_isa.s"
             for d in (REPO.parent, REPO.parent.parent)
             if (d / "shared" / "corpus" / "asm").is_dir()), REPO.parent / "shared" / "corpus" / "asm"
            / "aiter_gfx1250_mxscale_gemm1_final_isa.s")
AITER = REPO / "tests" / "data" / "aiter_gfx1250"


def other_kernels(n: int, dirs: list[str] = ()) -> list[tuple[str, str]]:
    """(uri, text) of `n` real kernels other than the GEMM, repeated under distinct names:
    the corpus's, tests/data/aiter_gfx1250's, then every `*.s` of `dirs` (e.g. aiter code
    objects made text with benchmarks/aiter_gfx1250_text.py)."""
    import gzip
    sources = [(p.name, p.read_text()) for p in sorted(GEMM.parent.glob("*.s")) if p != GEMM]
    sources += [(p.name[:-3], gzip.decompress(p.read_bytes()).decode()) for p in sorted(AITER.glob("*.s.gz"))]
    for d in dirs:
        sources += [(p.name, p.read_text()) for p in sorted(Path(d).glob("*.s"))]
    if not sources:
        return []
    return [((REPO / "many-files" / f"{i:02d}-{name}").as_uri(), text)
            for i, (name, text) in ((i, sources[i % len(sources)]) for i in range(n))]


def synthetic_kernel(n_blocks: int) -> str:
    """One long gfx1250 kernel: `n_blocks` self-loops of LDS/buffer loads and consumers."""
    out = ['\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"', "\t.text", "\t.globl\tbig",
           "\t.type\tbig,@function", "big:", "\ts_load_b64 s[4:5], s[0:1], 0x0"]
    for b in range(n_blocks):
        r = (b % 8) * 8
        out += [f".LBB0_{b}:", f"\tds_load_b64 v[{r}:{r + 1}], v100 offset:{(b % 64) * 8}",
                f"\tds_load_b64 v[{r + 2}:{r + 3}], v101", f"\tbuffer_load_b32 v{r + 4}, v102, s[4:7], null offen",
                f"\tv_add_f32_e32 v{r + 5}, v{r}, v{r + 2}", f"\tv_mul_f32_e32 v{r + 6}, v{r + 4}, v{r + 5}",
                f"\ts_cmp_lt_u32 s10, {b}", f"\ts_cbranch_scc1 .LBB0_{b}"]
    out.append("\ts_endpgm")
    return "\n".join(out) + "\n"


@dataclass
class Scenario:
    name: str
    lines: int
    open_to_hints_ms: float = 0.0
    edit_to_hints_ms: list[float] = field(default_factory=list)
    #: server CPU (user+sys, all threads) spent between the didChange and the answer: what a
    #: quiet machine shows as wall time when this one is shared
    edit_to_hints_cpu_ms: list[float] = field(default_factory=list)
    #: per edit: from the didChange to that version's review-tier publishDiagnostics (the full set)
    edit_to_diagnostics_ms: list[float] = field(default_factory=list)
    #: per edit: from the didChange to that version's first publishDiagnostics (the plan tier)
    edit_to_plan_diagnostics_ms: list[float] = field(default_factory=list)
    #: --many-files: lines of the other open documents, and from opening them to the last
    #: one's first diagnostics
    other_lines: int = 0
    others_done_ms: float = 0.0
    others_diagnosed: int = 0
    #: --many-files: the server's RSS and peak RSS (MB) when the last other document had its
    #: diagnostics (--wait-others) or the edits were done
    others_rss_mb: float = 0.0
    others_peak_rss_mb: float = 0.0
    #: --many-files: the server's document store then (open, holding an analysis, dropped)
    others_documents: dict = field(default_factory=dict)
    hints: int = 0
    core_parse_ms: float = 0.0
    core_analyze_ms: float = 0.0
    core_review_ms: float = 0.0
    #: per edit: the server's stage record of that version, plus the client's timestamps
    stages: list[dict] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.edit_to_hints_ms) if self.edit_to_hints_ms else 0.0

    @property
    def median_cpu_ms(self) -> float:
        return statistics.median(self.edit_to_hints_cpu_ms) if self.edit_to_hints_cpu_ms else 0.0


class Driver:
    """A minimal editor: opens, edits, asks for hints, waits for versioned diagnostics."""

    def __init__(self, server_args: list[str], settings: dict | None = None) -> None:
        self.server_args = server_args
        #: the `stinkywait` settings sent as initializationOptions
        self.settings = settings
        self.client = LanguageClient("stinkywait-bench", "0")
        self.published: dict[str, int | None] = {}
        self.waiters: list[tuple[str, int, asyncio.Future]] = []
        #: (uri, version) -> when each of its pushes arrived (perf_counter)
        self.arrivals: dict[tuple[str, int | None], list[float]] = {}
        #: wakes `review_tier` at every push
        self.pushed = asyncio.Event()

        @self.client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: T.PublishDiagnosticsParams) -> None:
            self._on_diagnostics(params)

    def _on_diagnostics(self, params: T.PublishDiagnosticsParams) -> None:
        self.published[params.uri] = params.version
        self.arrivals.setdefault((params.uri, params.version), []).append(time.perf_counter())
        self.pushed.set()
        for uri, version, fut in list(self.waiters):
            if uri == params.uri and params.version is not None and params.version >= version and not fut.done():
                fut.set_result(None)

    async def start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "stinkywait_lsp", *self.server_args)
        caps = T.ClientCapabilities(text_document=T.TextDocumentClientCapabilities(
            inlay_hint=T.InlayHintClientCapabilities(),
            publish_diagnostics=T.PublishDiagnosticsClientCapabilities(version_support=True)))
        await self.client.initialize_async(T.InitializeParams(capabilities=caps, process_id=None,
                                                              initialization_options=self.settings))
        self.client.initialized(T.InitializedParams())

    @property
    def pid(self) -> int:
        return self.client._server.pid  # the subprocess pygls started for us

    async def diagnostics(self, uri: str, version: int) -> None:
        if (self.published.get(uri) or 0) >= version:
            return
        fut = asyncio.get_running_loop().create_future()
        self.waiters.append((uri, version, fut))
        await asyncio.wait_for(fut, 600)

    async def review_tier(self, uri: str, version: int) -> float:
        """Wait for `version`'s review-tier push (after its first push); returns when it
        arrived (perf_counter).  The server's record says when it wrote it (`published`); a
        push written before the answer to our later stats request arrived before it."""
        while True:
            self.pushed.clear()
            rec = next((r for r in (await self.stats())["versions"]
                        if r["uri"] == uri and r["version"] == version), {})
            if "published" in rec:
                return self.arrivals[(uri, version)][-1]
            await asyncio.wait_for(self.pushed.wait(), 600)

    async def hints(self, uri: str, first: int, last: int) -> list[T.InlayHint]:
        rng = T.Range(start=T.Position(line=first, character=0), end=T.Position(line=last, character=0))
        return await self.client.text_document_inlay_hint_async(
            T.InlayHintParams(text_document=T.TextDocumentIdentifier(uri=uri), range=rng)) or []

    async def stats(self) -> dict:
        return plain(await self.client.protocol.send_request_async("stinkywait/stats", None))

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def plain(x):
    """pygls hands untyped results back as namedtuples: turn them into dicts and lists."""
    if hasattr(x, "_asdict"):
        return {k: plain(v) for k, v in x._asdict().items()}
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return x


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident set of a process in MB, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    kb = lambda k: float(fields.get(k, "0 kB").split()[0])  # noqa: E731
    return kb("VmRSS") / 1024, kb("VmHWM") / 1024


def cpu_ms(pid: int) -> float:
    """User + system CPU time of a process so far, in ms (from /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return 1e3 * (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def core_stages(text: str, path: str) -> tuple[float, float, float]:
    """In-process parse / full analyze / review times (ms) of one text, for attribution."""
    from stinkywait_core.api import analyze
    from stinkywait_core.syntax import language_for, parse
    t0 = time.perf_counter()
    parse(text, path, language_for(path, None))
    t1 = time.perf_counter()
    a = analyze(text, path)
    t2 = time.perf_counter()
    a.check_diagnostics()
    t3 = time.perf_counter()
    return 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2)


def edit_line(lines: list[str], i: int) -> tuple[int, str]:
    """The i-th edit: rename the destination register of some VALU line (v200..v249).

    The change is semantic on purpose: the core's per-function cache ignores layout-only
    edits (spaces, comments), so a whitespace edit would measure a cache hit, not typing.
    """
    candidates = [n for n, ln in enumerate(lines) if re.match(r"\tv_\w+ v\d+,", ln)]
    n = candidates[(i * 7919) % len(candidates)]
    new = re.sub(r"^(\tv_\w+ )v\d+", lambda m: f"{m.group(1)}v{200 + i % 50}", lines[n], count=1)
    return n, new


_WAIT_LINE = re.compile(r"^(\ts_wait_(?:dscnt|loadcnt|tensorcnt|kmcnt)\s+)(0x[0-9a-fA-F]+|\d+)(.*)$")


def retune_line(lines: list[str], i: int) -> tuple[int, str]:
    """The i-th edit of `--retune`: a hand-written wait's count changed by one (its low bit
    flipped: 0xa <-> 0xb) at its own line, and put back by the next edit (a user tuning a
    wait, then undoing it).  The change is semantic: the plan and the review see a new wait."""
    waits = [n for n, ln in enumerate(lines) if _WAIT_LINE.match(ln)]
    n = waits[((i // 2) * 7919) % len(waits)]
    m = _WAIT_LINE.match(lines[n])
    return n, f"{m.group(1)}{int(m.group(2), 0) ^ 1:#x}{m.group(3)}"


def open_document(driver: Driver, uri: str, text: str) -> None:
    driver.client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="amdgpu-asm", version=1, text=text)))


async def scenario(driver: Driver, name: str, uri: str, text: str, iterations: int,
                   others: list[tuple[str, str]] = (), wait_others: bool = False,
                   editor=edit_line) -> Scenario:
    """Open `text`, then edit it `iterations` times; `others` are opened (all at once, not
    waited for) between its first diagnostics and the first edit, and closed after the last
    edit (after they all have diagnostics, with `wait_others`)."""
    lines = text.split("\n")
    sc = Scenario(name, len(lines))
    t0 = time.perf_counter()
    open_document(driver, uri, text)
    await driver.hints(uri, 0, VIEWPORT)
    sc.open_to_hints_ms = 1e3 * (time.perf_counter() - t0)
    sc.hints = len(await driver.hints(uri, 0, len(lines)))
    await driver.diagnostics(uri, 1)
    await driver.review_tier(uri, 1)
    others_done = None
    if others:
        o0 = time.perf_counter()
        for ouri, otext in others:
            open_document(driver, ouri, otext)
        sc.other_lines = sum(t.count("\n") for _, t in others)

        async def all_diagnosed() -> None:
            for ouri, _ in others:
                await driver.diagnostics(ouri, 1)
                sc.others_diagnosed += 1
            sc.others_done_ms = 1e3 * (time.perf_counter() - o0)

        others_done = asyncio.ensure_future(all_diagnosed())
    version = 1
    for i in range(iterations):
        n, new = editor(lines, i)
        rng = T.Range(start=T.Position(line=n, character=0), end=T.Position(line=n, character=len(lines[n])))
        lines[n] = new
        version += 1
        c0 = cpu_ms(driver.pid)
        t0 = time.perf_counter()
        sent = time.monotonic()
        driver.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangePartial(range=rng, text=new)]))
        await driver.hints(uri, max(0, n - VIEWPORT // 2), n + VIEWPORT // 2)
        got = time.monotonic()
        sc.edit_to_hints_ms.append(1e3 * (time.perf_counter() - t0))
        sc.edit_to_hints_cpu_ms.append(cpu_ms(driver.pid) - c0)
        await driver.diagnostics(uri, version)
        sc.edit_to_plan_diagnostics_ms.append(1e3 * (driver.arrivals[(uri, version)][0] - t0))
        sc.edit_to_diagnostics_ms.append(1e3 * (await driver.review_tier(uri, version) - t0))
        stats = await driver.stats()
        rec = next((r for r in stats["versions"] if r["uri"] == uri and r["version"] == version), {})
        sc.stages.append(dict(rec, client_sent=sent, client_got=got))
    if others_done is not None:
        if wait_others:
            await others_done
        others_done.cancel()
        sc.others_rss_mb, sc.others_peak_rss_mb = rss_mb(driver.pid)
        sc.others_documents = (await driver.stats()).get("documents") or {}
        for ouri, _ in others:
            driver.client.text_document_did_close(T.DidCloseTextDocumentParams(
                text_document=T.TextDocumentIdentifier(uri=ouri)))
    sc.core_parse_ms, sc.core_analyze_ms, sc.core_review_ms = core_stages("\n".join(lines), uri)
    return sc


async def typing(driver: Driver, uri: str, text: str, edits: int, gap_ms: float) -> dict:
    """A burst of `edits` one-line edits `gap_ms` apart (a user typing), each followed at once
    by the viewport's hint request, as `scenario` sends them; no edit waits for diagnostics.
    Returns edit -> hints per edit (ms) and, for the last edit, edit -> its review tier: the
    cost of reviews started (and stopped) while typing lands on these."""
    lines = text.split("\n")
    open_document(driver, uri, text)
    await driver.hints(uri, 0, VIEWPORT)
    await driver.diagnostics(uri, 1)
    await driver.review_tier(uri, 1)
    out = {"gap_ms": gap_ms, "edit_to_hints_ms": [], "last_to_review_tier_ms": None}
    version = 1
    t_last = 0.0
    for i in range(edits):
        n, new = edit_line(lines, i + 1000)
        rng = T.Range(start=T.Position(line=n, character=0), end=T.Position(line=n, character=len(lines[n])))
        lines[n] = new
        version += 1
        t0 = time.perf_counter()
        driver.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangePartial(range=rng, text=new)]))
        await driver.hints(uri, max(0, n - VIEWPORT // 2), n + VIEWPORT // 2)
        out["edit_to_hints_ms"].append(1e3 * (time.perf_counter() - t0))
        t_last = t0
        if i + 1 < edits:
            await asyncio.sleep(max(0.0, gap_ms / 1e3 - (time.perf_counter() - t0)))
    out["last_to_review_tier_ms"] = 1e3 * (await driver.review_tier(uri, version) - t_last)
    driver.client.text_document_did_close(T.DidCloseTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri)))
    return out


#: (label, how to get it from one edit's record) in pipeline order; None when not recorded
def _span(a: str, b: str):
    return lambda r: 1e3 * (r[b] - r[a]) if a in r and b in r else None


def _ms(k: str):
    return lambda r: r.get(k)


def _waited(r: dict) -> float | None:
    """How long the hint request waited for the analysis (0 when it came after it)."""
    if "hint_recv" not in r or "accepted" not in r:
        return None
    return max(0.0, 1e3 * (r["accepted"] - r["hint_recv"]))


def _client_rest(r: dict) -> float | None:
    if not {"client_sent", "client_got", "recv", "hint_sent"} <= r.keys():
        return None
    return 1e3 * ((r["client_got"] - r["client_sent"]) - (r["hint_sent"] - r["recv"]))


ON_PATH = [
    ("client -> server (transit)", _span("client_sent", "recv")),
    ("apply didChange", _span("recv", "changed")),
    ("schedule (driver, lock)", _span("changed", "submit")),
    ("executor hop in", _span("submit", "start")),
    ("forced collection", _ms("collect_ms")),
    ("line map", _ms("linemap_ms")),
    ("core analyze", _ms("analyze_ms")),
    ("  its CPU", _ms("analyze_cpu_ms")),
    ("prepare snapshot", _ms("prepare_ms")),
    ("hop back to the loop", _span("done", "accepted")),
    ("request waited for it", _waited),
    ("render hints", _ms("hint_render_ms")),
    ("JSON + write answer", _ms("hint_send_ms")),
    ("server total (recv -> written)", _span("recv", "hint_sent")),
    ("client wall - server total", _client_rest),
]
OFF_PATH = [
    ("review quiet period", _ms("review_wait_ms")),
    ("review (thread or child)", _ms("review_ms")),
    ("collection at version end", _ms("gc_ms")),
    ("plan tier: push (JSON+write)", _ms("plan_publish_ms")),
    ("push diagnostics (JSON+write)", _ms("publish_ms")),
]


def stage_table(s: dict) -> list[tuple[str, float | None, int]]:
    """(stage, median ms over the edits that recorded it, how many did) in order."""
    out = []
    for label, get in ON_PATH + OFF_PATH:
        vals = [v for v in (get(r) for r in s["stages"]) if v is not None]
        out.append((label, statistics.median(vals) if vals else None, len(vals)))
    return out


async def run(args: argparse.Namespace) -> dict:
    server_args = (["--log-file", args.server_log, "-v"] if args.server_log else []) + list(args.server_arg)
    driver = Driver(server_args, None if args.keep_analyses is None else {"keepAnalyses": args.keep_analyses})
    await driver.start()
    results: list[Scenario] = []
    try:
        if args.many_files and GEMM.exists():
            others = other_kernels(args.many_files - 1, args.kernels)
            # a URI of its own: the GEMM scenario below (if any) opens the GEMM afresh
            results.append(await scenario(driver, f"gemm, {args.many_files} open",
                                          (REPO / "many-files" / GEMM.name).as_uri(), GEMM.read_text(),
                                          args.iterations, others, args.wait_others))
        if args.skip_gemm:
            pass
        elif GEMM.exists():
            results.append(await scenario(driver, "gemm1 (corpus)", GEMM.as_uri(), GEMM.read_text(), args.iterations))
        else:
            print(f"skipping the GEMM: {GEMM} not found", file=sys.stderr)
        if args.retune and GEMM.exists():
            results.append(await scenario(driver, "gemm1, waits retuned", (REPO / "retune" / GEMM.name).as_uri(),
                                          GEMM.read_text(), args.iterations, editor=retune_line))
        typed = None
        if args.typing and GEMM.exists():
            typed = await typing(driver, (REPO / "typing" / GEMM.name).as_uri(), GEMM.read_text(),
                                 args.typing_edits, args.typing)
        if not args.skip_big:
            big = synthetic_kernel(args.big_blocks)
            results.append(await scenario(driver, "synthetic 30k", (REPO / "big-synthetic.s").as_uri(), big,
                                          max(3, args.iterations // 3)))
        rss, peak = rss_mb(driver.pid)
        stats = await driver.stats()
        worker = stats.get("review_worker") or {}
        worker_rss = rss_mb(worker["pid"]) if worker.get("pid") else (0.0, 0.0)
    finally:
        await driver.stop()
    return {"scenarios": [asdict(s) | {"median_edit_to_hints_ms": s.median_ms,
                                       "median_edit_to_hints_cpu_ms": s.median_cpu_ms} for s in results],
            "load_average": os.getloadavg(), "server_args": server_args,
            "server_rss_mb": rss, "server_peak_rss_mb": peak,
            "review_worker": worker | {"rss_mb": worker_rss[0], "peak_rss_mb": worker_rss[1]},
            "collections": stats.get("collections", []), "typing": typed}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=15, help="edits per scenario (the 30k one runs a third)")
    p.add_argument("--big-blocks", type=int, default=3750, help="8-line blocks of the synthetic kernel")
    p.add_argument("--json", action="store_true", help="print the raw results as JSON")
    p.add_argument("--server-log", help="let the server log its per-version timings here")
    p.add_argument("--skip-big", action="store_true", help="only the corpus GEMM")
    p.add_argument("--skip-gemm", action="store_true", help="only the synthetic kernel")
    p.add_argument("--many-files", type=int, default=0, metavar="N",
                   help="also edit the GEMM while N-1 other real kernels are being opened")
    p.add_argument("--wait-others", action="store_true",
                   help="--many-files: after the edits, wait until every other document has diagnostics")
    p.add_argument("--kernels", action="append", default=[], metavar="DIR",
                   help="--many-files: also open the *.s of DIR (repeatable), after the repository's kernels")
    p.add_argument("--keep-analyses", type=int, metavar="N",
                   help="the server's stinkywait.keepAnalyses (default: the server's own)")
    p.add_argument("--typing", type=float, default=0.0, metavar="GAP_MS",
                   help="also type on the GEMM: --typing-edits one-line edits GAP_MS apart, each with its hint "
                        "request, none waiting for diagnostics (edit -> hints while reviews start and stop)")
    p.add_argument("--typing-edits", type=int, default=12, metavar="N")
    p.add_argument("--retune", action="store_true",
                   help="also edit the GEMM's hand-written waits: a count changed by one, then put back")
    p.add_argument("--server-arg", action="append", default=[],
                   help="extra server flag, e.g. --server-arg=--automatic-gc (repeatable)")
    args = p.parse_args()
    out = asyncio.run(run(args))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    names = [s["name"] for s in out["scenarios"]]
    tables = [dict((label, (v, n)) for label, v, n in stage_table(s)) for s in out["scenarios"]]
    print("server-side stages per edit, median ms (edits recording the stage)")
    print(f"{'stage':<32}" + "".join(f" {n:>18}" for n in names))
    for i, (label, _) in enumerate(ON_PATH + OFF_PATH):
        if i == len(ON_PATH):
            print("after the answer, off the request path:")
        cells = []
        for t in tables:
            v, n = t[label]
            cells.append(f"{'-':>18}" if v is None else f"{v:>12.1f} ({n:>2})")
        print(f"{label:<32}" + "".join(f" {c}" for c in cells))
    print()
    print(f"{'scenario':<18} {'lines':>6} {'open->hints':>12} {'edit->hints med':>16} {'min':>8} {'max':>8}"
          f" {'cpu med':>8} {'->plan diags':>13} {'max':>7} {'->diags med':>12} {'max':>7} {'hints':>6} |"
          f" core: {'parse':>7} {'analyze':>8} {'review':>8}")
    for s in out["scenarios"]:
        e = s["edit_to_hints_ms"]
        d = s["edit_to_diagnostics_ms"] or [0.0]
        pd = s["edit_to_plan_diagnostics_ms"] or [0.0]
        print(f"{s['name']:<18} {s['lines']:>6} {s['open_to_hints_ms']:>10.0f}ms {s['median_edit_to_hints_ms']:>14.0f}ms"
              f" {min(e):>6.0f}ms {max(e):>6.0f}ms {s['median_edit_to_hints_cpu_ms']:>6.0f}ms"
              f" {statistics.median(pd):>11.0f}ms {max(pd):>5.0f}ms"
              f" {statistics.median(d):>10.0f}ms {max(d):>5.0f}ms {s['hints']:>6} |       {s['core_parse_ms']:>5.0f}ms"
              f" {s['core_analyze_ms']:>6.0f}ms {s['core_review_ms']:>6.0f}ms")
    for s in out["scenarios"]:
        if s["other_lines"]:
            docs = s["others_documents"]
            print(f"{s['name']}: server RSS {s['others_rss_mb']:.0f} MB (peak {s['others_peak_rss_mb']:.0f} MB) "
                  "with every document open, before they were closed"
                  + (f"; {docs['analysed']} of {docs['open']} documents held an analysis ({docs['dropped']} dropped "
                     f"so far, keepAnalyses {docs['keep']})" if docs else ""))
        if s["other_lines"] and s["others_done_ms"]:
            print(f"{s['name']}: the other documents ({s['other_lines']} lines) all had diagnostics "
                  f"{s['others_done_ms'] / 1e3:.1f} s after they were opened")
        elif s["other_lines"]:
            print(f"{s['name']}: {s['others_diagnosed']} of the other documents ({s['other_lines']} lines "
                  f"in all) had diagnostics when the GEMM's edits were done (in opening order)")
    ty = out.get("typing")
    if ty:
        e = ty["edit_to_hints_ms"]
        print(f"typing on the GEMM, {len(e)} edits {ty['gap_ms']:.0f} ms apart: edit -> hints median "
              f"{statistics.median(e):.0f} ms, max {max(e):.0f} ms; the last edit -> its review tier "
              f"{ty['last_to_review_tier_ms']:.0f} ms")
    w = out["review_worker"]
    print(f"server RSS {out['server_rss_mb']:.0f} MB (peak {out['server_peak_rss_mb']:.0f} MB); review worker "
          + (f"RSS {w['rss_mb']:.0f} MB (peak {w['peak_rss_mb']:.0f} MB), " if w.get("pid") else "not running, ")
          + f"{w.get('spawned', 0)} started, {w.get('killed', 0)} killed/recycled; "
          f"load average {out['load_average'][0]:.1f} on {os.cpu_count()} CPUs")
    colls = out["collections"]
    if colls:
        by = {}
        for c in colls:
            by.setdefault(f"{c['reason']} ({c.get('kind', 'full')})", []).append(c["ms"])
        print("collections: " + "; ".join(f"{r}: {len(v)}x, median {statistics.median(v):.0f} ms, max {max(v):.0f} ms"
                                          for r, v in by.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
