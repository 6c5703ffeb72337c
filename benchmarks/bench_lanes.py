"""The edited document's plan while another document's analysis runs on the other thread.

    .venv/bin/python benchmarks/bench_lanes.py [--edits 9] [--rounds 2] [--background-blocks 1500]

In one process, as in the language server: a `LaneExecutor` with two threads, the GEMM of the
shared corpus as the focus (edited `--edits` times, each version planned with its document
cache on the executor, as the server's plan lane does), while a background document (bench_lsp's
synthetic kernel of `--background-blocks` blocks, analysed cold over and over) keeps the other
thread busy.  Three modes, interleaved per round: no background work; background work that
never pauses (the server before `lanes.pause_for`); background work that pauses at the core's
pause points while the focus's work is queued or running.  Printed per mode: the median wall
and CPU (of the focus's thread) per edit, from submit to result: the difference between wall
and CPU is what the focus waited, for the GIL or the machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_incremental import REG, VALU, _edit  # noqa: E402
from bench_lsp import GEMM, synthetic_kernel  # noqa: E402

from stinkywait_core import api  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402
from stinkywait_lsp.lanes import PLAN, LaneExecutor  # noqa: E402


def _mode(mode: str, edits: int, background: str, seed: int) -> tuple[float, float]:
    pool = LaneExecutor(2)
    pool.focus = "gemm"
    stop = threading.Event()
    text = GEMM.read_text()
    lines = text.splitlines(keepends=True)
    cands = [i for i, ln in enumerate(lines) if VALU.match(ln) and REG.search(ln)]
    rng = random.Random(seed)
    cache = api.AnalysisCache()
    api.analyze(text, "gemm.s", Options(), cache=cache)
    pause = pool.pause_for("bg") if mode == "pausing" else None

    def busy() -> None:
        while not stop.is_set():
            api.analyze(background, "bg.s", Options(), pause=pause)

    bg = pool.submit_for("bg", PLAN, busy) if mode != "alone" else None
    time.sleep(0.5)  # the background analysis is under way
    walls, cpus = [], []

    def plan(t: str) -> float:
        c0 = time.thread_time()
        api.analyze(t, "gemm.s", Options(), cache=cache)
        return time.thread_time() - c0

    try:
        for _ in range(edits):
            _edit(lines, rng, cands)
            t = "".join(lines)
            w0 = time.perf_counter()
            cpu = pool.submit_for("gemm", PLAN, plan, t).result()
            walls.append(time.perf_counter() - w0)
            cpus.append(cpu)
            time.sleep(0.05)
    finally:
        stop.set()
        if bg is not None:
            bg.result()
        pool.shutdown()
    return statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3, pool.pauses, pool.paused_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=9)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--background-blocks", type=int, default=1500)
    args = ap.parse_args()
    if not GEMM.exists():
        print(f"{GEMM} not found (../shared corpus absent)")
        return
    background = synthetic_kernel(args.background_blocks)
    print(f"{'round':>5}  {'mode':<22} {'edit wall median':>16} {'edit CPU median':>16}  background pauses (total)")
    for r in range(args.rounds):
        for mode in ("alone", "background, no pause", "pausing"):
            key = {"background, no pause": "busy"}.get(mode, mode)
            wall, cpu, pauses, paused = _mode(key, args.edits, background, seed=r + 1)
            print(f"{r + 1:>5}  {mode:<22} {wall:>13.1f} ms {cpu:>13.1f} ms  {pauses} ({paused * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
