"""Cold parse of a `stinkywait plan`, before/after: fresh processes of two trees, alternated.

Usage: ``.venv/bin/python benchmarks/bench_cold_parse.py --base DIR [--repeat N] [KERNEL.s ...]``
(default kernels: the three of bench_plan's issues in ``../shared/corpus/asm``; N = 15).

Each run is one fresh `stinkywait plan KERNEL` process measuring itself as `bench_plan.py`'s
CPU breakdown does (interpreter start-up, imports, the parse with the front end's own
imports, the pass and printing); the runs of this tree and of ``DIR`` (an earlier checkout,
e.g. ``git archive main | tar -x -C DIR``; compiled here first) alternate, so that both see
the same load.  Prints the medians and minima of each part and the parse's change.  On the
shared machine the load moves medians by up to 1.5x between minutes: compare the pair, and
see `parse_instructions.py` for a count the load does not change.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_plan import _BREAKDOWN  # noqa: E402  (the same self-measuring snippet)
from parse_instructions import CORPUS, KERNELS  # noqa: E402

PARTS = ("start-up", "imports", "parse", "pass")


def run(tree: str, kernel: str) -> list[float]:
    """CPU ms of the four parts of one cold plan in `tree`."""
    out = subprocess.run([sys.executable, "-c", _BREAKDOWN, kernel], capture_output=True, text=True, check=True,
                         cwd=tree, env={**os.environ, "PYTHONPATH": tree}).stdout.split()
    return [float(x) * 1e3 for x in out]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--base", required=True, help="the earlier tree")
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    base = os.path.abspath(args.base)
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(base, "stinkywait_core")], check=True)
    kernels = args.kernels or [os.path.join(CORPUS, k) for k in KERNELS if os.path.exists(os.path.join(CORPUS, k))]
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {args.repeat} alternated runs per tree; CPU ms, median (min)")
    for kernel in kernels:
        runs: dict[str, list[list[float]]] = {"before": [], "after": []}
        for _ in range(args.repeat):
            runs["before"].append(run(base, os.path.abspath(kernel)))
            runs["after"].append(run(ROOT, os.path.abspath(kernel)))
        print(os.path.basename(kernel))
        medians = {}
        for name, rows in runs.items():
            cols = list(zip(*rows))
            medians[name] = [statistics.median(c) for c in cols]
            print(f"  {name:6s} " + "  ".join(f"{p} {statistics.median(c):6.1f} ({min(c):5.1f})"
                                              for p, c in zip(PARTS, cols)))
        b, a = medians["before"][2], medians["after"][2]
        print(f"  parse {100 * (a - b) / b:+.0f}% (median)")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
