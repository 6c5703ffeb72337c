"""Tightness of the pass's waits as a figure (issue 4).

For every wait the pass inserts, ask the exact checker (validate.exhaustive) whether the next
larger immediate would still be safe on every explored path, all other waits unchanged.  If it
would, the wait over-drains; if even removing the wait is safe, it is redundant.  Waits of 63
cannot be relaxed within the encoding and are counted separately.

Corpora:
* ``property`` - the random programs of tests/test_properties.py (`proggen.random_program`
  with the same `GenParams`), seeds 0..N-1;
* ``kernels`` - the upstream conformance STIR files (NumWaves from their RUN line), the demo
  kernel, the aiter gfx1250 finals and the LLVM-22 ``nowait`` pairs, with their rebuildable
  waits stripped first (StinkyRemoveWaitCntPass defaults), as the pipeline does.

The pass runs with ``enable_loop_carried_token_deps=True`` (its safe mode, see
tests/test_properties.py); functions whose output already fails the checker are reported as
unsafe and excluded from the tightness count.  Over-drained waits are broken down by counter
and by the pass's own provenance rule (`PlannedWait.rule`) for the anchor.

    .venv/bin/python benchmarks/tightness.py --seeds 300 [--no-kernels] [--json out.json]

``--search LO HI DEPTH`` instead hunts counterexamples: programs of seeds LO..HI-1 with
``GenParams(max_depth=DEPTH)`` (at most 150 instructions) through the pass in three
configurations (safe mode, safe mode without ShallowPredPromotion, `Options.upstream()`), each
run limited to 8 s; every output the checker rejects is printed with its STIR seed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from stinkywait_core.analysis.classify import COUNTER_NAMES, WAIT_MNEMONIC  # noqa: E402
from stinkywait_core.analysis.implicit_deps import build_implicit_dependencies  # noqa: E402
from stinkywait_core.ir import Function, Imm, Instruction  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402
from stinkywait_core.syntax import parse  # noqa: E402
from stinkywait_core.validate.exhaustive import check_function  # noqa: E402
from stinkywait_core.waitcnt.pipeline import run_insertion  # noqa: E402
from stinkywait_core.waitcnt.remove import remove_waitcnts  # noqa: E402

SHARED = ROOT.parent / "shared"
CHECK = dict(max_trips=3, max_paths=4000)


@dataclass
class Tally:
    """Counts for one corpus."""

    functions: int = 0
    unsafe: int = 0
    bounded: int = 0
    waits: int = 0
    at_max: int = 0
    over: Counter = field(default_factory=Counter)
    redundant: Counter = field(default_factory=Counter)
    by_counter: Counter = field(default_factory=Counter)
    over_by_rule: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"functions": self.functions, "unsafe": self.unsafe, "bounded": self.bounded,
                "waits": self.waits, "at_max": self.at_max, "over": dict(self.over),
                "redundant": dict(self.redundant), "by_counter": dict(self.by_counter),
                "over_by_rule": dict(self.over_by_rule), "seconds": round(self.seconds, 2),
                "examples": self.examples}


def _anchor_rules(func: Function, result) -> dict[tuple[int, str], str]:
    """(anchor line, counter name) -> provenance rule of the planned wait."""
    return {(w.line, w.counter): w.rule for w in result.waits}


def _anchor_line(inst: Instruction) -> int:
    """Line of the instruction an inserted wait precedes (or of the block's last one)."""
    block = inst.block
    if block is None:
        return 0
    i = block.instrs.index(inst)
    for nxt in block.instrs[i + 1:]:
        if not nxt.inserted:
            return nxt.line
    for prev in reversed(block.instrs[:i]):
        if not prev.inserted:
            return prev.line
    return 0


def measure(func: Function, options: Options, tally: Tally, name: str, strip: bool = False) -> None:
    """Run the pass on `func`, then probe every inserted wait with the checker."""
    t0 = time.perf_counter()
    tally.functions += 1
    if strip:
        remove_waitcnts(func)
    build_implicit_dependencies(func)
    result = run_insertion(func, options)
    for b in func.blocks:
        for inst in b.instrs:
            inst.block = b
    base = check_function(func, options, **CHECK)
    if not base.ok:
        tally.unsafe += 1
        tally.seconds += time.perf_counter() - t0
        return
    if not base.complete:
        tally.bounded += 1
    rules = _anchor_rules(func, result)
    for b in func.blocks:
        for idx, inst in enumerate(list(b.instrs)):
            if not inst.inserted:
                continue
            n = inst.first_literal()
            if n is None:
                continue
            c = WAIT_MNEMONIC.index(inst.mnemonic)
            cname = COUNTER_NAMES[c]
            tally.waits += 1
            tally.by_counter[cname] += 1
            if n >= 63:
                tally.at_max += 1
                continue
            old = list(inst.srcs)
            inst.srcs = [Imm(n + 1)] + old[1:]
            looser_ok = check_function(func, options, **CHECK).ok
            inst.srcs = old
            if not looser_ok:
                continue
            tally.over[cname] += 1
            tally.over_by_rule[rules.get((_anchor_line(inst), cname), "tail-drain")] += 1
            b.instrs.pop(idx)
            removable = check_function(func, options, **CHECK).ok
            b.instrs.insert(idx, inst)
            if removable:
                tally.redundant[cname] += 1
            if len(tally.examples) < 40:
                tally.examples.append(f"{name}: {inst.mnemonic} {n} before line {_anchor_line(inst)}"
                                      f"{' (removable)' if removable else ''}")
    tally.seconds += time.perf_counter() - t0


def property_corpus(seeds: int, tally: Tally) -> None:
    from proggen import random_program
    from test_properties import PARAMS

    for seed in range(seeds):
        spec = random_program(seed, PARAMS)
        measure(spec.to_function(), spec.options(enable_loop_carried_token_deps=True), tally, f"gen{seed}")


def _num_waves(text: str) -> int:
    m = re.search(r"--NumWaves[= ](\d+)", text)
    return int(m.group(1)) if m else 0


def kernel_files() -> list[Path]:
    files = sorted((SHARED / "conformance" / "upstream").glob("*.stir"))
    files.append(ROOT / "examples" / "gemm_loop.s")
    files += sorted((SHARED / "corpus" / "asm").glob("aiter_gfx1250_*_final_isa.s"))
    files += sorted((SHARED / "corpus" / "asm" / "llvm22-pairs").glob("*.nowait.s"))
    return [f for f in files if f.exists()]


def kernel_corpus(tally: Tally, waves_for_asm: int = 4) -> None:
    for path in kernel_files():
        text = path.read_text()
        nw = _num_waves(text) if path.suffix == ".stir" else waves_for_asm
        opts = Options(num_waves=nw, enable_loop_carried_token_deps=True)
        for func in parse(text, str(path)).functions:
            measure(func, opts, tally, f"{path.name}@{func.name}", strip=True)


def render(name: str, t: Tally) -> str:
    over = sum(t.over.values())
    red = sum(t.redundant.values())
    probe = t.waits - t.at_max
    pct = 100.0 * over / probe if probe else 0.0
    lines = [f"{name}: {t.functions} functions ({t.unsafe} unsafe, {t.bounded} checked within bounds), "
             f"{t.waits} inserted waits, {over} over-drain ({pct:.1f}% of {probe} relaxable), "
             f"{red} removable, {t.at_max} at 63; {t.seconds:.1f} s",
             "  waits by counter: " + ", ".join(f"{k} {v}" for k, v in sorted(t.by_counter.items())),
             "  over-drain by counter: " + (", ".join(f"{k} {v}" for k, v in sorted(t.over.items())) or "none"),
             "  over-drain by rule: " + (", ".join(f"{k} {v}" for k, v in sorted(t.over_by_rule.items())) or "none")]
    lines += [f"    e.g. {e}" for e in t.examples[:6]]
    return "\n".join(lines)


CONFIGS = ("safe", "no-optimizer", "upstream")


def _config(name: str, num_waves: int) -> Options:
    if name == "upstream":
        return Options.upstream(num_waves=num_waves, enable_loop_carried_token_deps=True)
    return Options(num_waves=num_waves, enable_loop_carried_token_deps=True, optimize=name == "safe")


def search(lo: int, hi: int, depth: int) -> Counter:
    """Counterexample hunt (see the module docstring); returns per-config counts."""
    import signal

    from proggen import GenParams, random_program
    from stinkywait_core.validate.exhaustive import format_result

    class _Timeout(Exception):
        pass

    def _alarm(*_args) -> None:
        raise _Timeout()

    signal.signal(signal.SIGALRM, _alarm)
    counts: Counter = Counter()
    params = GenParams(max_depth=depth)
    for seed in range(lo, hi):
        spec = random_program(seed, params)
        if spec.n_instructions() > 150:
            continue
        for name in CONFIGS:
            opts = _config(name, spec.num_waves)
            func = spec.to_function()
            build_implicit_dependencies(func)
            try:
                signal.alarm(8)
                run_insertion(func, opts)
                res = check_function(func, opts, max_trips=3, max_paths=3000)
            except _Timeout:
                counts[name, "timeout"] += 1
                continue
            finally:
                signal.alarm(0)
            counts[name, "checked"] += 1
            if res.violations:
                counts[name, "unsafe"] += 1
                print(f"seed {seed} ({name}, depth {depth}):\n{format_result(res, f'gen{seed}.stir')}", flush=True)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--no-kernels", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--search", nargs=3, type=int, metavar=("LO", "HI", "DEPTH"))
    args = ap.parse_args(argv)
    if args.search:
        counts = search(*args.search)
        for name in CONFIGS:
            print(f"{name}: {counts[name, 'checked']} checked, {counts[name, 'unsafe']} unsafe, "
                  f"{counts[name, 'timeout']} over 8 s")
        return 0
    prop = Tally()
    property_corpus(args.seeds, prop)
    print(render(f"property corpus (seeds 0..{args.seeds - 1})", prop))
    out = {"property": prop.to_json()}
    if not args.no_kernels:
        kern = Tally()
        kernel_corpus(kern)
        print(render("real kernels", kern))
        out["kernels"] = kern.to_json()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
