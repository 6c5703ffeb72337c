"""LLVM 22 as the peer: per CPU, how many of LLVM's waits our output implies.

For every CPU, the IR corpus of tests/test_llvm_peer.py (LLVM's own CodeGen tests in
tests/data/llvm-ir, ../shared/tools/llvm/ir, the aiter GEMM IR) is compiled by llc-22 without
and with the wait pass; `stinkywait insert --replace-waits` re-inserts waits; the comparison of
tests/peer judges each LLVM wait requirement (counter, value).  Columns:

* files: IR files (or ready-made pairs) with at least one compiled unit; units: compiled units
  (a file, or one function of a file that does not compile whole);
* LLVM: LLVM wait requirements on counters the target description models; matched: implied by
  ours at the same place or earlier on every path; excused: in a class of
  tests/llvm_peer_exceptions.txt; unmatched: neither (table gaps among them);
* not modelled: LLVM requirements on counters the description does not model (listed below);
* ours-only: our requirements LLVM's waits do not imply (over-drain, or a counter LLVM lacks);
  invalid: our wait instructions the CPU does not have;
* asm ok: our outputs that assemble with llvm-mc-22 for the CPU (of those whose llvm.s does).

    .venv/bin/python benchmarks/llvm_peer.py [--cpu gfx942 ...] [--details N] [--jobs 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from peer.compile import tools_available  # noqa: E402
from peer.machine import CPUS  # noqa: E402
from peer.runner import evaluate  # noqa: E402


def _row(name: str, reps: list, files: int) -> str:
    llvm = sum(r.llvm_reqs for r in reps)
    exc = sum(sum(r.excused.values()) for r in reps)
    un = sum(len(r.unmatched) for r in reps)
    gaps = sum(1 for r in reps for u in r.unmatched if u.reason.startswith("table gap"))
    nm = sum(sum(r.not_modelled.values()) for r in reps)
    judged = [r for r in reps if r.assembles is not None]
    ok = sum(1 for r in judged if r.assembles)
    err = sum(1 for r in reps if r.error)
    return (f"{name:<14} {files:>5} {len(reps):>5} {llvm:>6} {sum(r.matched for r in reps):>7} {exc:>7} "
            f"{un:>6} ({gaps:>2} gap) {nm:>6} {sum(len(r.ours_only) for r in reps):>9} "
            f"{sum(r.invalid_waits for r in reps):>7} {ok:>4}/{len(judged):<4}" + (f" errors {err}" if err else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", action="append", choices=CPUS, help="only these CPUs (default: all)")
    ap.add_argument("--details", type=int, default=3, help="unmatched waits shown per CPU")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if not tools_available():
        print("llc-22 / llvm-mc-22 not installed: nothing to measure")
        return 0
    cpus = tuple(args.cpu or CPUS)
    t0 = time.perf_counter()
    run = evaluate(cpus, jobs=args.jobs)
    secs = time.perf_counter() - t0
    print(f"classification: {run.table}; {secs:.1f} s (cached llc/stinkywait/llvm-mc outputs are reused)")
    print(f"{'cpu':<14} {'files':>5} {'units':>5} {'LLVM':>6} {'matched':>7} {'excused':>7} "
          f"{'unmatched':>15} {'not-m.':>6} {'ours-only':>9} {'invalid':>7} {'asm ok':>9}")
    for cpu in cpus:
        reps = [r for r in run.reports if r.cpu == cpu and not r.unit.endswith("(pair)")]
        files = len({r.unit.split("::")[0] for r in reps})
        print(_row(cpu, reps, files))
    pairs = [r for r in run.reports if r.unit.endswith("(pair)")]
    if pairs:
        print(_row("gfx1250 GEMMs", pairs, len(pairs)))
    print()
    for cpu in cpus:
        reps = [r for r in run.reports if r.cpu == cpu]
        exc, nm, only = Counter(), Counter(), Counter()
        for r in reps:
            exc.update(r.excused)
            nm.update(r.not_modelled)
            only.update(o.counter for o in r.ours_only)
        fails = sum(1 for f in run.compile_failures if f.cpu == cpu)
        print(f"{cpu}: excused {dict(exc) or '-'}; not modelled {dict(nm) or '-'}; "
              f"ours-only by counter {dict(only) or '-'}; units that did not compile {fails}")
        shown = [u.format(r.unit) for r in reps for u in r.unmatched][: args.details]
        for line in shown:
            print(f"    {line[:260]}")
        bad = [f"{r.unit}: {r.assemble_error}" for r in reps if r.assembles is False][:1]
        for line in bad:
            print(f"    asm: {line[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
