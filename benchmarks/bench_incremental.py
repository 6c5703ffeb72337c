"""Incremental re-planning in the core: one-line edits analysed with an AnalysisCache.

    .venv/bin/python benchmarks/bench_incremental.py [--edits 15] [--big-blocks 3750] [--gemm-copies 10] [--json]
        [--inputs gemm1,copies,synthetic] [--stages] [--no-check]

For each input, the script analyses the text once (cold, no cache), then applies `--edits`
random one-line semantic edits (a VALU destination or source register renamed, so the
text really changes) and analyses every version with the document's `AnalysisCache`, as
the language server does.  Reported per input: the cold analysis, and per edit the median
and max of wall and process CPU time of `api.analyze`, with the share of memoised walks
(blocks and chunks reused / looked up).  Every edited version is also analysed from
scratch and compared (waits with their reasons and producers, diagnostics), so the figures
are only printed for results that are exactly the from-scratch ones.

Inputs: the 3.2k-line gfx1250 GEMM of the shared corpus (skipped when ../shared is absent),
the same GEMM pasted `--gemm-copies` times into one file (10: 31k lines, ten kernels of one
name; an edit should re-plan one of them; 0: not run) and the 30k-line synthetic kernel of
benchmarks/bench_lsp.py (3,750 self-loop blocks); `--inputs` picks some of them.

`--stages`: per edit, the CPU time of each stage of the analysis (benchmarks/stage_timer.py:
exclusive process CPU time of the parse, adoption, the def-use re-solve, the facts, the
solve, promotion, finalize, CoalesceWaits, `_build_result`, ...), printed as the median over
the edits.  `--no-check`: skip the from-scratch comparison (a run under valgrind, whose
instruction count of a run with `--edits 0` subtracted from one with N edits, divided by N,
is one edit's count whatever the load; with `--no-collect`, no full collection between edits).  The edits are seed-fixed (`--seed`): two trees
compared with the same seed analyse the same texts.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_lsp import GEMM, synthetic_kernel  # noqa: E402

from stinkywait_core import api  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402

VALU = re.compile(r"^\s+v_(add|mul|fma|sub)\w*\s")
REG = re.compile(r"\bv(\d+)\b")


def _edit(lines: list[str], rng: random.Random, candidates: list[int]) -> None:
    i = rng.choice(candidates)
    ms = list(REG.finditer(lines[i]))
    m = rng.choice(ms)
    lines[i] = lines[i][:m.start(1)] + str(int(m.group(1)) ^ 1) + lines[i][m.end(1):]


def _observable(an: api.Analysis) -> list:
    return [(w.line, w.counter, w.count, w.rule, w.reason, [d.to_json() for d in w.deps]) for w in an.waits()] + \
        [d.to_json() for d in an.diagnostics]


def run(name: str, text: str, edits: int, seed: int, timer=None, check: bool = True, collect: bool = True) -> dict:
    opts = Options()
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    api.analyze(text, name, opts)
    cold = (time.perf_counter() - t0, time.process_time() - c0)
    lines = text.splitlines(keepends=True)
    candidates = [i for i, ln in enumerate(lines) if VALU.match(ln) and REG.search(ln)]
    rng = random.Random(seed)
    cache = api.AnalysisCache()
    api.analyze(text, name, opts, cache=cache)
    walls, cpus, hits, looks = [], [], 0, 0
    stages: dict[str, list[float]] = {}
    warm = None
    if timer is not None:
        timer.install()
    try:
        for _ in range(edits):
            _edit(lines, rng, candidates)
            t = "".join(lines)
            if collect:
                gc.collect()
            if timer is not None:
                timer.reset()
            t0, c0 = time.perf_counter(), time.process_time()
            warm = api.analyze(t, name, opts, cache=cache)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            if timer is not None:
                got = timer.snapshot()
                got["(rest)"] = cpus[-1] - sum(got.values())
                for k, v in got.items():
                    stages.setdefault(k, []).append(v)
            for chain in cache._d.values():
                hits += chain.memo.hits
                looks += chain.memo.hits + chain.memo.misses
            if check:
                if timer is not None:
                    timer.uninstall()
                if _observable(warm) != _observable(api.analyze(t, name, opts)):
                    raise SystemExit(f"{name}: incremental result differs from the from-scratch one")
                if timer is not None:
                    timer.install()
    finally:
        if timer is not None:
            timer.uninstall()
    if not edits:
        return {"input": name, "lines": len(lines), "cold_cpu_ms": round(cold[1] * 1000, 1)}
    row = {"input": name, "lines": len(lines), "waits": len(warm.waits()),
            "cold_ms": round(cold[0] * 1000, 1), "cold_cpu_ms": round(cold[1] * 1000, 1),
            "edit_ms_median": round(statistics.median(walls) * 1000, 1),
            "edit_ms_max": round(max(walls) * 1000, 1),
            "edit_cpu_ms_median": round(statistics.median(cpus) * 1000, 1),
            "edit_cpu_ms_min": round(min(cpus) * 1000, 1),
            "reused_walks": f"{hits}/{looks}"}
    if stages:
        # (a stage an edit did not reach counts 0 for it)
        row["stages_cpu_ms_median"] = {k: round(statistics.median(v + [0.0] * (edits - len(v))) * 1000, 2)
                                       for k, v in stages.items()}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=15)
    ap.add_argument("--big-blocks", type=int, default=3750)
    ap.add_argument("--gemm-copies", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--gemm", type=Path, default=GEMM if GEMM.is_file() else Path("/work/shared/corpus/asm") / GEMM.name,
                    help="the GEMM kernel (default: bench_lsp's, the shared corpus's gfx1250 GEMM)")
    ap.add_argument("--inputs", default="gemm1,copies,synthetic",
                    help="comma-separated: gemm1 (the corpus GEMM), copies (it pasted --gemm-copies times), "
                         "synthetic (bench_lsp's 30k-line kernel)")
    ap.add_argument("--stages", action="store_true", help="per-stage CPU time of each edit's analysis")
    ap.add_argument("--no-check", action="store_true", help="do not compare with a from-scratch analysis")
    ap.add_argument("--no-collect", action="store_true",
                    help="no gc.collect() before each edit (a valgrind count then holds the edits' work alone)")
    args = ap.parse_args()
    which = set(args.inputs.split(","))
    timer = None
    if args.stages:
        from stage_timer import StageTimer
        timer = StageTimer()
    rows = []
    kw = {"timer": timer, "check": not args.no_check, "collect": not args.no_collect}
    if args.gemm.is_file():
        gemm = args.gemm.read_text()
        if "gemm1" in which:
            rows.append(run("gemm1.s", gemm, args.edits, args.seed, **kw))
        if args.gemm_copies > 1 and "copies" in which:
            rows.append(run(f"gemm1 x{args.gemm_copies}", gemm * args.gemm_copies, args.edits,
                            args.seed, **kw))
    if "synthetic" in which:
        rows.append(run("synthetic-30k.s", synthetic_kernel(args.big_blocks), args.edits, args.seed, **kw))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    if not args.edits:
        for r in rows:
            print(f"{r['input']:18} {r['lines']:>6} cold cpu {r['cold_cpu_ms']} ms")
        return
    print(f"{'input':18} {'lines':>6} {'waits':>6} {'cold ms (cpu)':>15} {'edit ms median (cpu)':>22} "
          f"{'edit ms max':>12} {'reused walks':>14}")
    for r in rows:
        print(f"{r['input']:18} {r['lines']:>6} {r['waits']:>6} "
              f"{r['cold_ms']:>7} ({r['cold_cpu_ms']:>5}) {r['edit_ms_median']:>12} ({r['edit_cpu_ms_median']:>6}) "
              f"{r['edit_ms_max']:>12} {r['reused_walks']:>14}")
    for r in rows:
        st = r.get("stages_cpu_ms_median")
        if not st:
            continue
        print(f"\n{r['input']}: CPU ms per edit, median over {args.edits} edits (sum of medians "
              f"{sum(st.values()):.1f}; analyze median {r['edit_cpu_ms_median']}, min {r['edit_cpu_ms_min']})")
        for k, v in sorted(st.items(), key=lambda kv: -kv[1]):
            print(f"  {k:34} {v:8.2f}")


if __name__ == "__main__":
    main()
