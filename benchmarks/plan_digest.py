"""A digest of what the pass prints, to show that a speed-up of the pass changed nothing.

Usage: ``.venv/bin/python benchmarks/plan_digest.py [--base DIR] [--out FILE] [--check FILE] [PATH ...]``

For every input (by default those of `parse_digest.py`, plus the MIOpen kernels of
tests/data/miopen), a fresh interpreter runs ``stinkywait plan --json``, ``insert -o -`` and,
on assembly, ``plan --json --replace-waits``, and the SHA-256 of each run's standard output and
error (and exit status) is printed, one line per run.  ``--base DIR``: the same runs with an
earlier checkout's ``stinkywait_core`` (PYTHONPATH=DIR), side by side; the script lists the
runs whose digest differs and exits 1 if any does.  ``--check FILE`` compares with a saved
``--out``.  (Fresh processes: a cold plan is what is compared, caches included.)
"""

from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parse_digest import ROOT, default_inputs  # noqa: E402

_RUN = "import sys; from stinkywait_core.cli.main import main; sys.exit(main(sys.argv[1:]))"


def inputs() -> list[str]:
    return default_inputs() + sorted(glob.glob(os.path.join(ROOT, "tests", "data", "miopen", "*", "*.s")))


def runs(path: str) -> list[list[str]]:
    """The command lines compared for one input."""
    out = [["plan", "--json", path], ["insert", "-o", "-", path]]
    if not path.endswith(".stir"):
        out.append(["plan", "--json", "--replace-waits", path])
    return out


def digest(tree: str, argv: list[str]) -> str:
    """SHA-256 (16 hex digits) of one fresh run of `argv` with `tree`'s stinkywait_core."""
    env = {**os.environ, "PYTHONPATH": tree, "PYTHONHASHSEED": "0"}
    # (run outside any checkout: the current directory comes first on sys.path)
    p = subprocess.run([sys.executable, "-c", _RUN, *argv], capture_output=True, env=env, cwd=tempfile.gettempdir())
    h = hashlib.sha256(p.stdout + b"\0" + p.stderr + b"\0" + str(p.returncode).encode())
    return h.hexdigest()[:16]


def plain(path: str) -> str:
    """A gzipped input as a plain file (the command line reads plain text)."""
    if not path.endswith(".gz"):
        return os.path.abspath(path)
    dst = os.path.join(tempfile.gettempdir(), "plan_digest_" + os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as src, open(dst, "wb") as out:
        out.write(src.read())
    return dst


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--base", help="an earlier checkout to compare with, run for run")
    ap.add_argument("--out", help="write the digest lines to FILE")
    ap.add_argument("--check", help="compare with a saved --out")
    ns = ap.parse_args()
    lines: list[str] = []
    differ: list[str] = []
    for path in ns.paths or inputs():
        for argv in runs(plain(path)):
            what = " ".join(argv[:-1]) + " " + os.path.relpath(path, ROOT)
            h = digest(ROOT, argv)
            lines.append(f"{h} {what}")
            if ns.base and digest(os.path.abspath(ns.base), argv) != h:
                differ.append(what)
            print(lines[-1], flush=True)
    if ns.out:
        with open(ns.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    if ns.check:
        with open(ns.check) as f:
            saved = set(f.read().splitlines())
        differ += [ln.split(" ", 1)[1] for ln in lines if ln not in saved]
    for what in differ:
        print(f"differs: {what}")
    print(f"{len(lines)} runs, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
