"""Cost of the LDS address analysis where the pass would call it: once per analysis (keystroke).

Usage: .venv/bin/python benchmarks/bench_lds.py [--repeat N] [KERNEL.s[.gz] ...]

For each kernel (default: the 3.2k-line aiter gfx1250 GEMM), after one `analyze` (whose CFG
and SSA are reused, as an integration inside the pass would): the median and minimum CPU
time over N runs of building fresh `lds_facts` and answering `may_overlap` (every trip) for
every pair the pass drains as a fallback; the same with the analysis finding reaching
definitions itself (no SSA given); and all accesses of the kernel (what a hover of every
line would cost).  The cyclic collector is paused as `analyze` does.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lds_figures import fallback_pairs, read  # noqa: E402

from stinkywait_core.analysis.lds_facts import lds_facts  # noqa: E402
from stinkywait_core.api import AnalysisCache, analyze  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402

DEFAULT = os.path.join(ROOT, "..", "shared", "corpus", "asm", "aiter_gfx1250_mxscale_gemm1_final_isa.s")


def timed(fn, repeat: int) -> tuple[float, float]:
    fn()
    ts = []
    for _ in range(repeat):
        gc.disable()
        t0 = time.process_time()
        fn()
        ts.append(time.process_time() - t0)
        gc.enable()
    return statistics.median(ts) * 1000, min(ts) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="*", default=[DEFAULT])
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    for path in a.kernels:
        text = read(path)
        name = os.path.basename(path)
        opts = Options()
        cache = AnalysisCache()
        an = analyze(text, name, opts, cache=cache)
        for po, fr in zip(an.outputs, an.functions):
            ch = cache.get((name, po.func.name, opts))
            func = ch.func
            by_line = {i.line: i for b in func.blocks for i in b.instrs if not i.is_label and not i.is_phi}
            pairs, _, _ = fallback_pairs(fr, by_line)

            def queries(chains):
                facts = lds_facts(func, an.module, cfg=ch.memo.cfg, chains=chains)
                return sum(facts.may_overlap(x, y, False) for x, y in pairs)

            def everything():
                return lds_facts(func, an.module, cfg=ch.memo.cfg, chains=ch.memo.ssa).accesses()

            med, low = timed(lambda: queries(ch.memo.ssa), a.repeat)
            med2, low2 = timed(lambda: queries(None), a.repeat)
            med3, low3 = timed(everything, a.repeat)
            an_med, _ = timed(lambda: analyze(text, name, opts), max(3, a.repeat // 5))
            print(f"{name} ({len(by_line)} instructions, {len(pairs)} fallback pairs): "
                  f"pairs with the pass's SSA {med:.1f} ms median ({low:.1f} min); "
                  f"reaching definitions found here {med2:.1f} ({low2:.1f}); "
                  f"all {len(everything())} accesses {med3:.1f} ({low3:.1f}); "
                  f"a cold analyze {an_med:.0f} ms")


if __name__ == "__main__":
    main()
