"""Figures of the LDS address analysis on real kernels (BENCHMARKS.md, "LDS address analysis").

Usage: .venv/bin/python benchmarks/lds_figures.py [--replace-waits] [--arch gfx942] KERNEL.s[.gz] ...

Per kernel:
* LDS accesses by engine (DS, tensor, async, GFX9 LDS DMA) and how many have a proven byte
  range (known and inside the LDS);
* on gfx12/gfx1250 files, the pass's fallback drains (`plan` rules ``fallback-*``): each
  fallback wait at an anchor drains the ops in flight on its counter there, so every (op in
  flight, anchor) is a pair the pass could not separate.  Pairs at barriers are counted apart:
  a barrier publishes LDS to other waves, which a per-wave range cannot settle.  For the other
  pairs: how many the analysis proves disjoint in every trip, and within one trip (usable when
  the in-flight op was issued in the same trip as the anchor);
* on gfx9 files (no LDS DMA in the pass's model yet), every (LDS DMA, DS read) pair of the
  kernel, the candidates of issue 15;
* the time the disjointness queries took (in process, with the pass's CFG and SSA, GC paused
  as `analyze` does), and the whole `analyze` for scale.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from stinkywait_core.analysis.lds_facts import lds_facts  # noqa: E402
from stinkywait_core.api import AnalysisCache, analyze  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402


def read(path: str) -> str:
    if path.endswith(".gz"):
        with gzip.open(path, "rt") as f:
            return f.read()
    with open(path) as f:
        return f.read()


def fallback_pairs(fr, by_line) -> tuple[list, list, int]:
    """(pairs at non-barrier anchors, pairs at barriers, fallback waits)."""
    pairs, barrier, waits = [], [], 0
    for w in fr.waits:
        if not w.rule.startswith("fallback"):
            continue
        waits += 1
        anchor = by_line.get(w.line)
        ops = {}
        for q in fr.fifo.get(w.line, {}).get(w.counter, []):
            for o in q.ops:
                ops[o.line] = o
        for ln in sorted(ops):
            p = by_line.get(ln)
            if p is None or p is anchor:
                continue
            (barrier if "fallback-barrier" in w.reason else pairs).append((p, anchor))
    return pairs, barrier, waits


def figures(path: str, replace: bool, arch: str | None) -> dict:
    text = read(path)
    name = os.path.basename(path).replace(".gz", "")
    opts = Options(replace_waits=replace, arch=arch or "gfx1250")
    cache = AnalysisCache()
    t0 = time.process_time()
    an = analyze(text, name, opts, cache=cache)
    t_an = time.process_time() - t0
    row = {"kernel": name, "instructions": 0, "accesses": {}, "proven": {}, "waits": 0, "pairs": 0, "barrier": 0,
           "any": 0, "same": 0, "dma_pairs": 0, "dma_any": 0, "dma_same": 0, "ms": 0.0, "analyze_ms": t_an * 1000}
    for po, fr in zip(an.outputs, an.functions):
        ch = cache.get((name, po.func.name, opts))
        func = ch.func if ch is not None else po.func
        by_line = {i.line: i for b in func.blocks for i in b.instrs if not i.is_label and not i.is_phi}
        row["instructions"] += len(by_line)
        pairs, barrier, waits = fallback_pairs(fr, by_line)
        gc.disable()
        t0 = time.perf_counter()
        facts = lds_facts(func, an.module, arch=arch, cfg=ch.memo.cfg if ch else None,
                          chains=ch.memo.ssa if ch else None)
        got_any = sum(not facts.may_overlap(a, b, False) for a, b in pairs)
        got_same = sum(not facts.may_overlap(a, b, True) for a, b in pairs)
        row["ms"] += (time.perf_counter() - t0) * 1000
        gc.enable()
        row["waits"] += waits
        row["pairs"] += len(pairs)
        row["barrier"] += len(barrier)
        row["any"] += got_any
        row["same"] += got_same
        accs = facts.accesses()
        for a in accs:
            row["accesses"][a.engine] = row["accesses"].get(a.engine, 0) + 1
            if a.known and facts._unbounded_why(a) is None:
                row["proven"][a.engine] = row["proven"].get(a.engine, 0) + 1
        dma = [a.inst for a in accs if a.engine == "dma"]
        reads = [a.inst for a in accs if a.engine == "ds" and a.kind == "read"]
        for d in dma:
            for r in reads:
                row["dma_pairs"] += 1
                row["dma_any"] += not facts.may_overlap(d, r, False)
                row["dma_same"] += not facts.may_overlap(d, r, True)
    return row


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--replace-waits", action="store_true")
    ap.add_argument("--arch", default=None)
    a = ap.parse_args()
    rows = [figures(p, a.replace_waits, a.arch) for p in a.kernels]
    print("| kernel | instrs | LDS accesses (proven range) | fallback waits | fallback pairs (+ at barriers) "
          "| proven disjoint, every trip | within one trip | DMA x ds_read pairs proven | queries ms | analyze ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    tot = {k: 0 for k in ("instructions", "waits", "pairs", "barrier", "any", "same", "dma_pairs", "dma_any")}
    acc_t, prov_t = 0, 0
    for r in rows:
        acc = sum(r["accesses"].values())
        prov = sum(r["proven"].values())
        acc_t += acc
        prov_t += prov
        for k in tot:
            tot[k] += r[k]
        by = ", ".join(f"{e} {r['proven'].get(e, 0)}/{n}" for e, n in sorted(r["accesses"].items()))
        print(f"| {r['kernel']} | {r['instructions']} | {pct(prov, acc)}: {by} | {r['waits']} | "
              f"{r['pairs']} (+{r['barrier']}) | {pct(r['any'], r['pairs'])} | {pct(r['same'], r['pairs'])} | "
              f"{pct(r['dma_any'], r['dma_pairs'])} | {r['ms']:.1f} | {r['analyze_ms']:.0f} |")
    if len(rows) > 1:
        print(f"| **total** | {tot['instructions']} | {pct(prov_t, acc_t)} | {tot['waits']} | "
              f"{tot['pairs']} (+{tot['barrier']}) | {pct(tot['any'], tot['pairs'])} | {pct(tot['same'], tot['pairs'])} "
              f"| {pct(tot['dma_any'], tot['dma_pairs'])} | | |")


if __name__ == "__main__":
    main()
