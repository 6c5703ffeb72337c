"""Predicted stall of our waits against the authors', per real kernel (issue 22's goal).

Usage: .venv/bin/python benchmarks/stall.py [--tree DIR] [--coalesce N] [--latency-model FILE]
           [--hwcheck] [--arch ARCH] [--per-wait N] KERNEL.s[.gz] ...

For each kernel: the authors' waits as written, and ours (`stinkywait insert --replace-waits`
on the kernel, run by the tree at `--tree`, default this one: give an export of an older
commit to measure "before").  Both texts are walked by this tree's stall simulation
(`waitcnt/stall.py`, the target family's latency model) with their waits as written, so the
two sides are priced by the same model.  Prints per kernel: predicted stall (cycles of the
hot-path walk, loops `loop_trips` times), its ratio ours/authors, rebuildable wait counts and
their ratio, `check`'s unproven-disjointness findings on the kernel as written, and with
`--hwcheck` the unsafe count of `check --exhaustive` on our output.  Then the geometric mean of
the stall ratios and the kernels above 1.25x.  With `--per-wait N`, each side's N costliest
waits follow the kernel's line (stall over the walk, on the last visit, visits, the loop, the
wait as written; ours at lines of our output).  Figures only: no timing is asserted.

A kernel's own folder is searched for its `.include` files (MIOpen's macro-written kernels,
`tests/data/miopen`: give `--arch` for those that name no target, e.g. gfx1030, gfx908).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.targets.latency import load_overrides
from stinkywait_core.waitcnt.stall import simulate

sys.path.insert(0, str(Path(__file__).parent))
from wait_counts import waits  # noqa: E402  (the same count of rebuildable waits)


def predicted(text: str, name: str, overrides: tuple, arch: str | None = None,
              includes: tuple = (), per_wait: int = 0) -> tuple[int, int, list[str]]:
    """(stall cycles, walk cycles, the `per_wait` costliest waits in words) of a text with its
    waits as written (no wait planned)."""
    extra = {"arch": arch} if arch else {}
    an = analyze(text, name, Options(coalesce_window=0, latency_overrides=overrides, include_paths=includes, **extra))
    stall = cycles = 0
    model = an.options.latency_model
    points = []
    for po in an.outputs:
        run = simulate(po.func, an.options.target, None, model)
        stall += run.total
        cycles += run.cycles
        points.extend(p for p in run.points.values() if p.total)
    lines = text.splitlines() if per_wait else []
    worst = sorted(points, key=lambda p: (-p.total, p.line))[:per_wait]
    words = [f"L{p.line:<6} {p.total:7} ({p.last} last, {p.visits} visits{', loop ' + p.loop if p.loop else ''})  "
             f"{lines[p.line - 1].strip() if 0 < p.line <= len(lines) else ''}" for p in worst]
    return stall, cycles, words


def ours(path: Path, tree: str | None, coalesce: int, latency: str | None, tmp: str,
         arch: str | None = None) -> tuple[str, int]:
    """Our output for `path`, and the unproven-wait findings of `check` on it as written, from
    the tree at `tree`."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree
    src = os.path.join(tmp, path.name.removesuffix(".gz"))
    text = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
    with open(src, "w") as f:
        f.write(text)
    out = src + ".ours.s"
    extra = ["--coalesce", str(coalesce)] if coalesce >= 0 else []
    extra += ["-I", str(path.resolve().parent)] + (["--arch", arch] if arch else [])
    if latency and not tree:
        extra += ["--latency-model", latency]
    cmd = [sys.executable, "-m", "stinkywait_core.cli.main"]
    # (cwd: `python -m` puts the working directory first on sys.path, before PYTHONPATH)
    r = subprocess.run(cmd + ["insert", "--replace-waits", *extra, src, "-o", out], env=env, cwd=tmp,
                       capture_output=True, text=True)
    if r.returncode not in (0, 1) or not os.path.exists(out):
        raise SystemExit(f"insert failed on {path}: {r.stderr[-2000:]}")
    # the review of the kernel as written: its unproven-disjointness findings
    r = subprocess.run(cmd + ["check", "--format", "json", *extra, src], env=env, cwd=tmp, capture_output=True,
                       text=True)
    # a review that stopped (an internal error, an unreadable file) found nothing: counting its
    # findings would print 0 unproven, which reads as a success (how a checker bug once hid)
    try:
        files = json.loads(r.stdout).get("files", [])
    except json.JSONDecodeError:
        files = None
    if r.returncode not in (0, 1) or not files or any(f.get("error") for f in files):
        why = [f["error"] for f in files or [] if f.get("error")] or [r.stderr[-2000:]]
        raise SystemExit(f"check failed on {path} (exit {r.returncode}): {why[0]}")
    return open(out).read(), sum(1 for f in files for d in f.get("diagnostics", []) + f.get("findings", [])
                                 if d.get("code") == "unproven-wait")


def hw_unsafe(path: str, extra: list[str]) -> int:
    """Violations the hardware checker (`check --exhaustive`) finds in our output (-1: it failed)."""
    r = subprocess.run([sys.executable, "-m", "stinkywait_core.cli.main", "check", "--exhaustive", "--format", "json",
                        *extra, path], capture_output=True, text=True, cwd=os.path.dirname(path))
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError:
        return -1
    n = 0
    for f in data.get("files", []):
        ex = f.get("exhaustive") or {}
        if f.get("error") or ex.get("ok") is None:
            return -1
        n += len(ex.get("violations", []))
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", help="run `insert` from this source tree (PYTHONPATH) instead of this one")
    ap.add_argument("--coalesce", type=int, default=-1)
    ap.add_argument("--latency-model", help="latency-model overrides for the pricing (and ours)")
    ap.add_argument("--hwcheck", action="store_true", help="also count unsafe waits by check --exhaustive")
    ap.add_argument("--arch", help="target of kernels that name none (MIOpen's)")
    ap.add_argument("--per-wait", type=int, default=0, metavar="N",
                    help="also list each side's N costliest waits (predicted stall per wait)")
    ap.add_argument("kernels", nargs="+")
    ns = ap.parse_args()
    overrides = load_overrides(ns.latency_model) if ns.latency_model else ()
    ratios, over = [], []
    cratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in ns.kernels:
            p = Path(k)
            text = gzip.open(p, "rt").read() if p.suffix == ".gz" else p.read_text()
            mine, unproven = ours(p, ns.tree, ns.coalesce, ns.latency_model, tmp, ns.arch)
            inc = (str(p.resolve().parent),)
            a_stall, a_cyc, a_worst = predicted(text, p.name, overrides, ns.arch, inc, ns.per_wait)
            o_stall, o_cyc, o_worst = predicted(mine, p.name, overrides, ns.arch, inc, ns.per_wait)
            # a kernel whose waits never stall on the model: compare the walks instead of 0/0
            ratio = (o_stall + 1) / (a_stall + 1) if a_stall or o_stall else 1.0
            ratios.append(ratio)
            if ratio > 1.25:
                over.append(p.name)
            na, no = len(waits(text)), len(waits(mine))
            cratios.append(no / max(1, na))
            line = (f"{p.name[:56]:56} stall authors {a_stall:8} ours {o_stall:8} ratio {ratio:5.2f}  "
                    f"cycles {a_cyc:8}/{o_cyc:8}  waits {na:4}/{no:4} ({no / max(1, na):.2f})  "
                    f"unproven {unproven}")
            if ns.hwcheck:
                out = os.path.join(tmp, p.name + ".ours.s")
                with open(out, "w") as f:
                    f.write(mine)
                line += f"  unsafe {hw_unsafe(out, ['-I', str(p.resolve().parent)] + (['--arch', ns.arch] if ns.arch else []))}"
            print(line, flush=True)
            for side, worst in (("authors'", a_worst), ("ours", o_worst)):
                for w in worst:
                    print(f"    {side:8} {w}", flush=True)
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    cg = math.exp(sum(math.log(max(r, 1e-9)) for r in cratios) / len(cratios))
    print(f"geomean stall ratio {gm:.3f} over {len(ratios)} kernels; above 1.25x: {len(over)} {over}; "
          f"max wait-count ratio {max(cratios):.2f}, geomean {cg:.2f}")


if __name__ == "__main__":
    main()
