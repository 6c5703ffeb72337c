"""Machine instructions of a cold parse, counted by valgrind: a figure the machine's load does not move.

Usage: ``.venv/bin/python benchmarks/parse_instructions.py [--base DIR] [KERNEL.s ...]``
(default kernels: the three of bench_plan's issues in ``../shared/corpus/asm``).

On the shared 2-vCPU machine CPU times drift by 1.5x between minutes, so small front-end
changes cannot be told apart by timing alone.  This counts the instructions (cachegrind's
``I refs``) of a fresh interpreter that imports what `stinkywait plan` imports, reads the
kernel and parses it (`stinkywait_core.syntax.parse`, the front end's own imports included),
minus the same process without the parse; ``PYTHONHASHSEED=0`` makes the count repeatable
(to a few thousand instructions).  ``--base DIR``: also count a copy of another tree (e.g.
``git archive main | tar -x -C DIR``, compiled with ``python -m compileall``) and print the
change.  Instructions are not time (a regex compile is many cheap instructions, a cache miss
is one expensive one): report both.  Needs valgrind; says so and exits 0 when it is absent.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "..", "shared", "corpus", "asm")
KERNELS = ("aiter_gfx1250_mxscale_gemm1_final_isa.s", "aiter_gfx942_flatmm_uk_f16f8_128x256x128.s",
           "aiter_gfx950_a8w8_cktile_gemm_256x256x128.s")

_SNIPPET = """
import gc, sys
from stinkywait_core.cli.main import main
from stinkywait_core.syntax import parse
gc.disable()
text = open(sys.argv[1]).read()
if sys.argv[2] == "parse":
    parse(text, sys.argv[1])
"""


def instructions(tree: str, kernel: str, mode: str) -> int:
    """cachegrind's instruction count of one fresh process (see the module docstring)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": tree}
    p = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                        sys.executable, "-c", _SNIPPET, kernel, mode], capture_output=True, text=True, cwd=tree,
                       env=env, check=True)
    for line in p.stderr.splitlines():
        if "I" in line and "refs:" in line:
            return int(line.split(":")[1].replace(",", "").strip())
    raise RuntimeError(f"no instruction count in valgrind's output:\n{p.stderr[-500:]}")


def parse_count(tree: str, kernel: str) -> int:
    return instructions(tree, kernel, "parse") - instructions(tree, kernel, "none")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--base", help="another tree to count too")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing counted")
        return 0
    kernels = args.kernels or [os.path.join(CORPUS, k) for k in KERNELS if os.path.exists(os.path.join(CORPUS, k))]
    for kernel in kernels:
        new = parse_count(ROOT, os.path.abspath(kernel))
        row = f"{os.path.basename(kernel)}: cold parse {new / 1e6:.1f} M instructions"
        if args.base:
            base = parse_count(os.path.abspath(args.base), os.path.abspath(kernel))
            row += f" (base {base / 1e6:.1f} M: {100 * (new - base) / base:+.0f}%)"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
