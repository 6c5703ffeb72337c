"""How fast the STIR front end is, cold and on the editor's re-parse-after-one-edit path.

Run: .venv/bin/python benchmarks/bench_stir_parse.py [--repeat N]

Cold means the per-line and per-attribute-dictionary caches are empty (the LALR tables are built once per process and
timed separately); warm means the same file re-parsed after a one-line edit, which is what
the language server does on every keystroke.  Figures are the best of --repeat runs.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Callable

from stinkywait_core.syntax.stir_parser import _lark, clear_caches, parse_stir
from stinkywait_core.syntax.stir_printer import print_module_stir

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "conformance" / "upstream"


def synthetic(n_lines: int) -> str:
    """A loop-shaped kernel of about `n_lines` distinct lines (no two instruction lines equal).

    Blocks of 48 instructions mix DS loads, tensor loads, WMMAs, barriers and scalar
    compares with the modifiers the corpus uses, and each block branches to the next.
    """
    out = ["st.func @synthetic() {"]
    i = 0
    block = 0
    while len(out) < n_lines - 2:
        out.append(f"^b{block}:")
        for k in range(48):
            i += 1
            r = (i * 2) % 200
            kind = k % 6
            if kind == 0:
                out.append(f'  v[{r}:{r + 1}] = "st.ds_load_b64"(v{i % 97}) {{ mod.ds = {{ na = 1, offset = {i * 8 % 65536}, '
                           f'gds = false }}, mod.memtoken = {{ tokens = [{i % 3}] }} }}')
            elif kind == 1:
                out.append(f'  "st.tensor_load_to_lds"(s[{i % 60}:{i % 60 + 3}], s[{i}:{i + 7}]) '
                           f'{{ mod.memtoken = {{ tokens = [{i % 3}] }} }}')
            elif kind == 2:
                out.append(f'  a[{r % 64}:{r % 64 + 7}] = "st.v_wmma_f32_16x16x32_bf16"(v[{i}:{i + 7}], '
                           f'v[{(r + 40) % 200}:{(r + 40) % 200 + 7}], a[{r % 64}:{r % 64 + 7}]) '
                           f'{{ mod.mfma = {{ reuseA = false, reuseB = false }} }}')
            elif kind == 3:
                out.append(f'  "st.s_barrier_signal"(-1) {{ mod.memtoken = {{ tokens = [{i % 3}] }} }}  # b{i}')
            elif kind == 4:
                out.append(f'  v{i % 256} = "st.v_add_f32"(v{i}, v{(i + 2) % 256}) '
                           f'{{ issueCycles = 1, latencyCycles = {i % 9 + 1} }}')
            else:
                out.append(f'  SCC0 = "st.s_cmp_eq_u32"(s{i % 100}, {i})')
        out.append(f'  "st.s_cbranch_scc1"("b{block + 1}", SCC0)')
        out.append(f"  Successors: ^b{block + 1}, ^b{block}")
        block += 1
    out.append(f"^b{block}:")
    out.append("}")
    return "\n".join(out) + "\n"


def best(fn: Callable[[], object], repeat: int, before: Callable[[], None] | None = None) -> tuple[float, float]:
    """Best (wall, CPU) seconds over `repeat` runs; CPU time is what a quiet machine shows."""
    walls, cpus = [], []
    for _ in range(repeat):
        if before is not None:
            before()
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def fmt(t: tuple[float, float], n: int | None = None) -> str:
    wall, cpu = t
    per = f"  ({cpu / n * 1e6:6.1f} us/line CPU)" if n else ""
    return f"{wall * 1000:9.1f} ms wall {cpu * 1000:9.1f} ms CPU{per}"


def report(name: str, text: str, repeat: int) -> None:
    n = text.count("\n")
    cold = best(lambda: parse_stir(text, name), repeat, clear_caches)
    module = parse_stir(text, name)
    assert not [d for d in module.diagnostics if d.severity == "error"], module.diagnostics[:3]
    lines = text.split("\n")
    mid = len(lines) // 2
    edits = [lines[:mid] + [lines[mid] + f" # edit {k}"] + lines[mid + 1:] for k in range(repeat)]
    edited = iter("\n".join(e) for e in edits)
    warm = best(lambda: parse_stir(next(edited), name), repeat)
    printing = best(lambda: print_module_stir(module), repeat)
    print(f"{name}: {n} lines, {len(text) / 1024:.1f} KiB")
    print(f"  cold parse            {fmt(cold, max(n, 1))}")
    print(f"  re-parse, 1 line edit {fmt(warm)}")
    print(f"  --print-output        {fmt(printing)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--lines", type=int, default=30_000)
    args = ap.parse_args()
    _lark.cache_clear()
    t0 = time.perf_counter()
    _lark()
    print(f"LALR table construction: {(time.perf_counter() - t0) * 1000:.1f} ms (once per process)")
    if CORPUS.is_dir():
        largest = max(CORPUS.glob("*.stir"), key=lambda p: p.stat().st_size)
        report(largest.name, largest.read_text(encoding="utf-8"), args.repeat)
    else:
        print("(conformance corpus not found; skipping the corpus figure)")
    report(f"synthetic-{args.lines}", synthetic(args.lines), args.repeat)


if __name__ == "__main__":
    main()
