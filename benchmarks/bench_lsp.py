"""Language-server latency and memory, measured by driving the real server over stdio.

    .venv/bin/python benchmarks/bench_lsp.py [--iterations 15] [--big-blocks 3750] [--json]

Scenarios (targets from issue 5):
  * open -> first hints on the 3.2k-line gfx1250 GEMM of the shared corpus   (<= 500 ms)
  * one-line edit -> fresh inlay hints on that GEMM, median                  (<= 50 ms)
  * one-line edit -> fresh inlay hints on a 30k-line synthetic kernel         (<= 250 ms)
  * resident memory of the server process after all of the above             (<= 300 MB)

Each edit changes one instruction line (the text really changes, so no cache can answer
it), and the hint request for the 80 lines around it (the viewport, as VS Code asks) is sent
right after the didChange; open -> hints asks for the first screen.  The "hints" column is
the whole-file count.  Between
iterations the script waits for that version's diagnostics, so iterations do not overlap.
For the "which stage costs what" breakdown the same texts are also run through the core
in-process: parse, plan (the pass), review (hand-written-wait check, second stage).
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
GEMM = REPO.parent / "shared" / "corpus" / "asm" / "aiter_gfx1250_mxscale_gemm1_final_isa.s"


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
    hints: int = 0
    core_parse_ms: float = 0.0
    core_analyze_ms: float = 0.0
    core_review_ms: float = 0.0

    @property
    def median_ms(self) -> float:
        return statistics.median(self.edit_to_hints_ms) if self.edit_to_hints_ms else 0.0

    @property
    def median_cpu_ms(self) -> float:
        return statistics.median(self.edit_to_hints_cpu_ms) if self.edit_to_hints_cpu_ms else 0.0


class Driver:
    """A minimal editor: opens, edits, asks for hints, waits for versioned diagnostics."""

    def __init__(self, server_args: list[str]) -> None:
        self.server_args = server_args
        self.client = LanguageClient("stinkywait-bench", "0")
        self.published: dict[str, int | None] = {}
        self.waiters: list[tuple[str, int, asyncio.Future]] = []

        @self.client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: T.PublishDiagnosticsParams) -> None:
            self._on_diagnostics(params)

    def _on_diagnostics(self, params: T.PublishDiagnosticsParams) -> None:
        self.published[params.uri] = params.version
        for uri, version, fut in list(self.waiters):
            if uri == params.uri and params.version is not None and params.version >= version and not fut.done():
                fut.set_result(None)

    async def start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "stinkywait_lsp", *self.server_args)
        caps = T.ClientCapabilities(text_document=T.TextDocumentClientCapabilities(
            inlay_hint=T.InlayHintClientCapabilities(),
            publish_diagnostics=T.PublishDiagnosticsClientCapabilities(version_support=True)))
        await self.client.initialize_async(T.InitializeParams(capabilities=caps, process_id=None))
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

    async def hints(self, uri: str, first: int, last: int) -> list[T.InlayHint]:
        rng = T.Range(start=T.Position(line=first, character=0), end=T.Position(line=last, character=0))
        return await self.client.text_document_inlay_hint_async(
            T.InlayHintParams(text_document=T.TextDocumentIdentifier(uri=uri), range=rng)) or []

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


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


async def scenario(driver: Driver, name: str, uri: str, text: str, iterations: int) -> Scenario:
    lines = text.split("\n")
    sc = Scenario(name, len(lines))
    t0 = time.perf_counter()
    driver.client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="amdgpu-asm", version=1, text=text)))
    hints = await driver.hints(uri, 0, VIEWPORT)
    sc.open_to_hints_ms = 1e3 * (time.perf_counter() - t0)
    sc.hints = len(await driver.hints(uri, 0, len(lines)))
    await driver.diagnostics(uri, 1)
    version = 1
    for i in range(iterations):
        n, new = edit_line(lines, i)
        rng = T.Range(start=T.Position(line=n, character=0), end=T.Position(line=n, character=len(lines[n])))
        lines[n] = new
        version += 1
        c0 = cpu_ms(driver.pid)
        t0 = time.perf_counter()
        driver.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangePartial(range=rng, text=new)]))
        await driver.hints(uri, max(0, n - VIEWPORT // 2), n + VIEWPORT // 2)
        sc.edit_to_hints_ms.append(1e3 * (time.perf_counter() - t0))
        sc.edit_to_hints_cpu_ms.append(cpu_ms(driver.pid) - c0)
        await driver.diagnostics(uri, version)
    sc.core_parse_ms, sc.core_analyze_ms, sc.core_review_ms = core_stages("\n".join(lines), uri)
    return sc


async def run(args: argparse.Namespace) -> dict:
    driver = Driver(["--log-file", args.server_log, "-v"] if args.server_log else [])
    await driver.start()
    results: list[Scenario] = []
    try:
        if GEMM.exists():
            results.append(await scenario(driver, "gemm1 (corpus)", GEMM.as_uri(), GEMM.read_text(), args.iterations))
        else:
            print(f"skipping the GEMM: {GEMM} not found", file=sys.stderr)
        if not args.skip_big:
            big = synthetic_kernel(args.big_blocks)
            results.append(await scenario(driver, "synthetic 30k", (REPO / "big-synthetic.s").as_uri(), big,
                                          max(3, args.iterations // 3)))
        rss, peak = rss_mb(driver.pid)
    finally:
        await driver.stop()
    return {"scenarios": [asdict(s) | {"median_edit_to_hints_ms": s.median_ms,
                                       "median_edit_to_hints_cpu_ms": s.median_cpu_ms} for s in results],
            "load_average": os.getloadavg(),
            "server_rss_mb": rss, "server_peak_rss_mb": peak}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=15, help="edits per scenario (the 30k one runs a third)")
    p.add_argument("--big-blocks", type=int, default=3750, help="8-line blocks of the synthetic kernel")
    p.add_argument("--json", action="store_true", help="print the raw results as JSON")
    p.add_argument("--server-log", help="let the server log its per-version timings here")
    p.add_argument("--skip-big", action="store_true", help="only the corpus GEMM")
    args = p.parse_args()
    out = asyncio.run(run(args))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{'scenario':<16} {'lines':>6} {'open->hints':>12} {'edit->hints med':>16} {'min':>8} {'max':>8}"
          f" {'cpu med':>8} {'hints':>6} | core: {'parse':>7} {'analyze':>8} {'review':>8}")
    for s in out["scenarios"]:
        e = s["edit_to_hints_ms"]
        print(f"{s['name']:<16} {s['lines']:>6} {s['open_to_hints_ms']:>10.0f}ms {s['median_edit_to_hints_ms']:>14.0f}ms"
              f" {min(e):>6.0f}ms {max(e):>6.0f}ms {s['median_edit_to_hints_cpu_ms']:>6.0f}ms {s['hints']:>6} |       {s['core_parse_ms']:>5.0f}ms"
              f" {s['core_analyze_ms']:>6.0f}ms {s['core_review_ms']:>6.0f}ms")
    print(f"server RSS {out['server_rss_mb']:.0f} MB (peak {out['server_peak_rss_mb']:.0f} MB); "
          f"load average {out['load_average'][0]:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
