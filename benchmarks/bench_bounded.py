"""Bounded vs exact analysis on loop-heavy random programs (issue 7 figures).

Usage: .venv/bin/python benchmarks/bench_bounded.py [--count N] [--exact-timeout S]

For each shape family (nested loops with diamonds, loops that only produce, self loops,
early exits, everything mixed) it generates N reproducible programs (tests/proggen.py,
`random_program(seed)`) and reports for the bounded mode: instructions, solver sweeps,
finalize sweeps, the largest number of per-predecessor queues of one counter at one block,
how many programs were solved with the per-producer join (exact, waitcnt/producer_join.py)
and how many were widened, the max and median time per function; and for the exact mode
(each program in a child process, killed after `--exact-timeout` seconds): how many finished,
and whether the outputs agreed where both finished without widening.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from proggen import GenParams, random_program  # noqa: E402

from stinkywait_core.api import analyze  # noqa: E402

FAMILIES = {
    "nested loops + diamonds": GenParams(shapes=("loop", "diamond", "loop"), max_depth=3, max_regions=3),
    "loops, no consumer inside": GenParams(shapes=("loop", "self_loop", "code"), max_depth=3,
                                           max_regions=2, existing_waits=False),
    "self loops": GenParams(shapes=("self_loop", "code"), max_depth=2, max_regions=3),
    "early exits in loops": GenParams(shapes=("loop", "early_exit", "diamond"), max_depth=3),
    "everything": GenParams(),
}


def _exact(text: str, nw: int, q: mp.Queue) -> None:
    from stinkywait_core.results import Options
    an = analyze(text, "p.stir", Options(num_waves=nw, bounded=False))
    q.put(an.inserted_text())


def run_exact(text: str, nw: int, timeout: float) -> str | None:
    q: mp.Queue = mp.Queue()
    p = mp.Process(target=_exact, args=(text, nw, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()
        return None
    return q.get() if not q.empty() else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--exact-timeout", type=float, default=5.0)
    ns = ap.parse_args()
    from stinkywait_core.results import Options
    print(f"{'family':28} {'n':>3} {'instrs':>7} {'sweeps':>7} {'final':>6} {'maxQ':>5} "
          f"{'joined':>6} {'widened':>7} {'t max':>8} {'t med':>8} {'exact ok':>8} {'agree':>6}")
    for name, params in FAMILIES.items():
        rows = []
        exact_ok = agree = compared = 0
        for seed in range(ns.count):
            spec = random_program(seed, params)
            text = spec.to_stir()
            opts = spec.options().replace(bounded=True)
            t0 = time.perf_counter()
            an = analyze(text, "p.stir", opts)
            dt = time.perf_counter() - t0
            po = an.outputs[0]
            df = po.df
            maxq = max((len(qs) for st in df.exit_state.values() for qs in st.queues), default=0)
            n_inst = sum(len(b.instrs) for b in po.func.blocks)
            rows.append((n_inst, df.sweeps, df.finalize_sweeps, maxq, df.widening, dt, bool(df.join_reason)))
            ex = run_exact(text, spec.num_waves, ns.exact_timeout)
            if ex is not None:
                exact_ok += 1
                if not df.widening:  # (joined by producer included: it must agree too)
                    compared += 1
                    agree += ex == an.inserted_text()
        n = len(rows)
        print(f"{name:28} {n:3d} {max(r[0] for r in rows):7d} {max(r[1] for r in rows):7d} "
              f"{max(r[2] for r in rows):6d} {max(r[3] for r in rows):5d} "
              f"{sum(r[6] for r in rows):6d} {sum(r[4] for r in rows):7d} {max(r[5] for r in rows) * 1e3:6.0f}ms "
              f"{statistics.median(r[5] for r in rows) * 1e3:6.1f}ms {exact_ok:8d} {agree:3d}/{compared}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
