"""Benchmark of the AMDGPU assembly front end (the LSP re-parses on every keystroke).

Prints:

* cold: parsing the 3.2k-line gfx1250 GEMM in a fresh interpreter (empty line cache);
* warm: re-parsing the same file after a one-line edit (the LSP's steady state), from scratch;
* 30k: a 30,000-line synthetic file made of corpus lines (every line distinct), cold and after
  a one-line edit;
* incremental: `parse(text, path, previous=module)` after one-line edits (replace, insert,
  delete an instruction line) of the GEMM and of `bench_lsp.synthetic_kernel` (30k lines, one
  kernel of 3,750 labelled blocks), plus an insertion near the top of the 30k kernel (every
  instruction moves) and a broken label (the structure pass runs again).

Usage: ``.venv/bin/python benchmarks/bench_asm_parse.py [--repeat N] [FILE]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILE = ROOT.parent / "shared" / "corpus" / "asm" / "aiter_gfx1250_mxscale_gemm1_final_isa.s"
FALLBACK_FILE = ROOT / "examples" / "gemm_loop.s"

_COLD_SNIPPET = """
import json, sys, time
t0 = time.perf_counter()
from stinkywait_core.syntax.asm_parser import parse_asm
t1 = time.perf_counter()
text = open(sys.argv[1]).read()
t2, c2 = time.perf_counter(), time.process_time()
m = parse_asm(text, sys.argv[1])
t3, c3 = time.perf_counter(), time.process_time()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "parse_ms": (t3 - t2) * 1e3, "cpu_ms": (c3 - c2) * 1e3,
                  "lines": len(m.lines), "errors": sum(1 for d in m.diagnostics if d.severity == "error")}))
"""


def cold(path: Path, repeat: int) -> dict[str, float]:
    """Median over `repeat` fresh processes of the import and first-parse times."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", _COLD_SNIPPET, str(path)], cwd=ROOT, capture_output=True,
                             text=True, check=True)
        runs.append(json.loads(out.stdout))
    return {"import_ms": statistics.median(r["import_ms"] for r in runs),
            "parse_ms": statistics.median(r["parse_ms"] for r in runs),
            "cpu_ms": statistics.median(r["cpu_ms"] for r in runs),
            "lines": runs[0]["lines"], "errors": runs[0]["errors"]}


def edited(text: str, k: int) -> str:
    """`text` with one instruction line changed (a different comment), as a keystroke would."""
    lines = text.split("\n")
    idx = len(lines) // 2
    while idx < len(lines) - 1 and not lines[idx].startswith("\t") or lines[idx].lstrip().startswith("."):
        idx += 1
    lines[idx] = lines[idx] + f" // edit {k}"
    return "\n".join(lines)


def warm(text: str, repeat: int) -> tuple[float, float]:
    """Median (wall, CPU) ms of a re-parse after a one-line edit, other lines being cache hits."""
    from stinkywait_core.syntax.asm_parser import parse_asm
    parse_asm(text, "bench.s")
    walls, cpus = [], []
    for k in range(repeat):
        t = edited(text, k)
        gc.collect()  # the previous parse's young objects: a collection the caller pays
        t0, c0 = time.perf_counter(), time.process_time()
        parse_asm(t, "bench.s")
        walls.append((time.perf_counter() - t0) * 1e3)
        cpus.append((time.process_time() - c0) * 1e3)
    return statistics.median(walls), statistics.median(cpus)


def synthetic(text: str, n: int) -> str:
    """`n` lines drawn from the instruction lines of `text`, under one kernel label.

    Each line gets a distinct trailing comment so that every line is a miss of the line
    cache on a cold parse (operand spellings still repeat, as in real kernels).
    """
    pool = [ln for ln in text.split("\n") if ln.startswith("\t") and not ln.lstrip().startswith(".")
            and "//" not in ln and ";" not in ln]
    rng = random.Random(1250)
    body = [f"{rng.choice(pool)}  // #{i}" for i in range(n - 2)]
    return "synthetic_kernel:\n" + "\n".join(body) + "\n\ts_endpgm\n"


def incremental(text: str, path: str, edit: str, repeat: int) -> tuple[float, float]:
    """Median (wall, CPU) ms of `parse(edited, path, previous=module)`: `edit` is replace,
    insert or delete of an instruction line near the middle, `top` an insertion near the top,
    `label` a label losing its colon.  Each edit starts from a fresh parse of `text`."""
    from stinkywait_core.syntax import parse
    walls, cpus = [], []
    lines = text.split("\n")
    mid = [i for i, ln in enumerate(lines) if ln.startswith("\tv_")]
    for k in range(repeat):
        prev = parse(text, path)
        new = list(lines)
        i = mid[(len(mid) // 2 + 13 * k) % len(mid)]
        if edit == "replace":
            new[i] = new[i] + f" // edit {k}"
        elif edit == "insert":
            new.insert(i, f"\tv_mov_b32 v{k % 64}, 0")
        elif edit == "delete":
            del new[i]
        elif edit == "top":
            new.insert(next(j for j, ln in enumerate(lines) if ln.startswith("\t") and ln[1:2] != "."), "\ts_nop 0")
        else:
            j = next(j for j in range(len(lines) // 2, len(lines)) if lines[j].endswith(":"))
            new[j] = new[j][:-1]
        edited = "\n".join(new)
        gc.collect()  # the fresh parse's young objects: a collection the caller pays, not the re-parse
        t0, c0 = time.perf_counter(), time.process_time()
        parse(edited, path, previous=prev)
        walls.append((time.perf_counter() - t0) * 1e3)
        cpus.append((time.process_time() - c0) * 1e3)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE if DEFAULT_FILE.exists() else FALLBACK_FILE)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    text = args.file.read_text()
    print(f"load average: {' '.join(Path('/proc/loadavg').read_text().split()[:3]) if Path('/proc/loadavg').exists() else '?'}"
          "  (wall times inflate under load; CPU times are the process's own)")
    c = cold(args.file, args.repeat)
    print(f"file: {args.file.name} ({c['lines']} lines, {c['errors']} errors)")
    print(f"cold parse (fresh process, median of {args.repeat}): wall {c['parse_ms']:.1f} ms, "
          f"cpu {c['cpu_ms']:.1f} ms  [+ import {c['import_ms']:.1f} ms]")
    w, wc = warm(text, args.repeat * 4)
    print(f"warm re-parse after a one-line edit (median of {args.repeat * 4}): wall {w:.1f} ms, cpu {wc:.1f} ms")
    big = synthetic(text, 30_000)
    with tempfile.TemporaryDirectory() as tmp:
        big_path = Path(tmp) / "synthetic_30k.s"
        big_path.write_text(big)
        c30 = cold(big_path, max(1, args.repeat // 2))
    w30, wc30 = warm(big, args.repeat)
    print(f"30k-line synthetic: cold wall {c30['parse_ms']:.1f} ms / cpu {c30['cpu_ms']:.1f} ms; "
          f"warm re-parse after a one-line edit wall {w30:.1f} ms / cpu {wc30:.1f} ms")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_lsp import synthetic_kernel
    kernel = synthetic_kernel(3750)
    reps = args.repeat * 3
    for name, src, path, edits in ((args.file.name, text, "gemm.s", ("replace", "insert", "delete")),
                                   (f"synthetic_kernel(3750), {kernel.count(chr(10))} lines", kernel, "big.s",
                                    ("replace", "insert", "delete", "top", "label"))):
        figures = ", ".join("{} {:.1f} ms wall / {:.1f} ms cpu".format(e, *incremental(src, path, e, reps))
                            for e in edits)
        print(f"incremental re-parse (previous=module), {name}, median of {reps}: {figures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
