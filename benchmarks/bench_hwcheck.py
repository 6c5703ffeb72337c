"""The hardware checker (validate/hwcheck.py) as figures: safety of the pass, over-drain, kernels.

1. ``property``: N random programs per target (tests/hwproggen.py, the generator of
   tests/test_hwcheck_props.py) through the pass with the default `Options()` (hardware
   model), then the checker: programs with a violation, violations by rule, how many results
   are proofs (no trip cut), and the time per program of the pass and of the checker.  The
   pass's known loop self-WAW defect (tests/test_hwcheck_cases.py::test_loop_self_waw) is
   counted apart.
2. ``over-drain``: on the first M programs per target, each wait the pass inserted is relaxed
   by one (one more op may stay in flight) and, separately, removed, all other waits
   unchanged; if the checker then finds no violation the program did not already have, the
   wait was stricter than needed (relaxable) or not needed at all (removable).  A figure,
   never an assertion: the checker explores a bounded number of trips.
3. ``kernels``: the real kernels in ../shared/corpus/asm (aiter gfx1250/gfx942/gfx950 and the
   LLVM 22 outputs llvm22-pairs/*.llvm.s) as they are, with their own waits: violations per
   rule (LDS overlaps proven by tokens or not), with memtokens alone and with the LDS address
   analysis, under both tensor-fill policies, with the run time per kernel (the address
   analysis included); and the same kernels after the pass (``insert`` and ``insert
   --replace-waits``).

4. ``publish``: N random gfx1250 kernels with barriers, LDS stores, loads and tensor fills
   (tests/pubproggen.py) through the pass and the checker with the LDS address analysis:
   unsafe programs, and how many lose a barrier drain to the publish rule (decision 45).

    .venv/bin/python benchmarks/bench_hwcheck.py [--programs 1000] [--overdrain 150] [--no-kernels]
        [--publish 300]
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

from hwplan import planned  # noqa: E402
from hwproggen import params_for, random_hw_program  # noqa: E402
from stinkywait_core.api import analyze, declared_target  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402
from stinkywait_core.syntax import parse  # noqa: E402
from stinkywait_core.targets import canonical  # noqa: E402
from stinkywait_core.validate.hwcheck import check_function, check_module  # noqa: E402

SHARED = ROOT.parent / "shared"
TRIPS = 3


def _known(v) -> bool:
    return v.rule == "waw" and v.producer is v.consumer


def _keys(res) -> set:
    return {(v.rule, id(v.consumer), id(v.producer)) for v in res.violations}


def property_run(arch: str, n: int, overdrain: int) -> None:
    rules: Counter = Counter()
    unsafe = known = complete = 0
    t_pass = t_check = 0.0
    waits = relaxable = removable = 0
    od_programs = 0
    for seed in range(n):
        spec = random_hw_program(seed, params_for(arch))
        opts = spec.options(arch=arch)
        t0 = time.perf_counter()
        p = planned(spec.to_stir(), opts, "hw.stir")
        t1 = time.perf_counter()
        res = check_function(p.func, opts, max_trips=TRIPS)
        t2 = time.perf_counter()
        t_pass += t1 - t0
        t_check += t2 - t1
        complete += res.complete
        other = [v for v in res.violations if not _known(v)]
        unsafe += bool(other)
        known += bool(res.violations) and not other
        rules.update(v.rule for v in other)
        if seed < overdrain:
            od_programs += 1
            base = _keys(res)
            for w in p.waits:
                waits += 1
                p.relax(w)
                if _keys(check_function(p.func, opts, max_trips=TRIPS)) <= base:
                    relaxable += 1
                p.restore()
                p.drop(w)
                if _keys(check_function(p.func, opts, max_trips=TRIPS)) <= base:
                    removable += 1
                p.restore()
    print(f"{arch}: {n} programs, unsafe {unsafe} (violations by rule {dict(rules) or '{}'}), "
          f"known self-WAW defect in {known}; proofs (no trip cut) {complete}/{n}; "
          f"pass {1000 * t_pass / n:.1f} ms, checker {1000 * t_check / n:.1f} ms per program")
    if od_programs:
        pct = (lambda k: f"{100 * k / waits:.1f}%") if waits else (lambda k: "-")
        print(f"{arch}: over-drain on {od_programs} programs: {waits} inserted waits, relaxable by one "
              f"{relaxable} ({pct(relaxable)}), removable {removable} ({pct(removable)})")


def _kernels() -> list[Path]:
    base = SHARED / "corpus" / "asm"
    return sorted(base.glob("*.s")) + sorted((base / "llvm22-pairs").glob("*.llvm.s"))


def _arch(path: Path, module) -> str:
    d = declared_target(module)
    if d:
        return canonical(d[0])
    return "gfx942" if "gfx942" in path.name else "gfx1250"


def _summary(res) -> str:
    c: Counter = Counter()
    for v in res.violations:
        c[v.rule + ("" if v.proven else "?")] += 1
    return ", ".join(f"{k} {n}" for k, n in sorted(c.items())) or "none"


def kernels_run() -> None:
    files = _kernels()
    if not files:
        print("kernels: ../shared/corpus/asm not found, skipped")
        return
    print("kernels as written ('?' = LDS overlap not proven: untagged accesses):")
    for path in files:
        text = path.read_text()
        module = parse(text, str(path))
        arch = _arch(path, module)
        for lds in (False, True):
            for policy in ("num-waves", "always"):
                t0 = time.perf_counter()
                for res in check_module(module, Options(arch=arch), lds_addresses=lds, tensor_raw=policy,
                                        max_trips=TRIPS):
                    ms = 1000 * (time.perf_counter() - t0)
                    print(f"  {path.name} [{arch}, LDS {'addresses' if lds else 'tokens'}, tensor RAW {policy}]: "
                          f"{_summary(res)}; {res.paths} paths, {res.states} states, "
                          f"{'proof' if res.complete else 'bounded'}, {ms:.0f} ms")
    print("kernels after the pass (insert; insert --replace-waits):")
    for path in files:
        text = path.read_text()
        arch = _arch(path, parse(text, str(path)))
        parts = []
        for replace in (False, True):
            an = analyze(text, str(path), Options(arch=arch, replace_waits=replace))
            out = parse(an.inserted_text(), str(path))
            for func in out.functions:
                res = check_function(func, an.options, max_trips=TRIPS)
                parts.append(f"{len(an.waits())} waits -> {_summary(res)} ({1000 * res.seconds:.0f} ms)")
        print(f"  {path.name}: " + "; ".join(parts))


def _paired(mod) -> int:
    """1 when the program has two wave-index paths with barriers (pubproggen's `specialised`)
    and its barriers pair between waves (waitcnt/wave_match.py)."""
    from stinkywait_core.waitcnt.publish import barrier_kind
    from stinkywait_core.waitcnt.wave_match import WaveMatch
    fn = mod.functions[0]
    if not any(i.mnemonic == "s_cmp_lt_u32" for i in fn.instructions()):
        return 0
    return int(WaveMatch(fn, barrier_kind, "gfx1250").met is not None)


def publish_run(n: int) -> None:
    """Random gfx1250 kernels with barriers, stores, loads and tensor fills at constant and
    wave-indexed addresses (tests/pubproggen.py) through the pass (publish rule on), then the
    checker with the LDS address analysis (its own barrier rule, validate/hwpublish.py)."""
    from pubproggen import random_publish_program
    import stinkywait_core.waitcnt.publish as publish
    unsafe = fewer = paired = 0
    rules: Counter = Counter()
    waits = waits_off = 0
    t_pass = t_check = 0.0
    answer = publish.Publish.published
    for seed in range(n):
        text = random_publish_program(seed)
        t0 = time.perf_counter()
        an = analyze(text, "p.s", Options())
        t1 = time.perf_counter()
        out = parse(an.inserted_text(), "p.s")
        vs = [v for r in check_module(out, Options(), lds_addresses=True, max_trips=TRIPS) for v in r.violations]
        t2 = time.perf_counter()
        t_pass += t1 - t0
        t_check += t2 - t1
        unsafe += bool(vs)
        rules.update(v.rule for v in vs)
        publish.Publish.published = lambda self, p, b, same: False
        try:
            off = len(analyze(text, "p.s", Options()).waits())
        finally:
            publish.Publish.published = answer
        waits += len(an.waits())
        waits_off += off
        fewer += len(an.waits()) < off
        paired += _paired(parse(text, "p.s"))
    print(f"publish: {n} programs with barriers and fills, unsafe {unsafe} (violations by rule "
          f"{dict(rules) or '{}'}); {fewer} programs lose a barrier drain; waits {waits} "
          f"(every publish answer 'no': {waits_off}); {paired} not aligned with paired barriers "
          f"(wave-specialised); pass {1000 * t_pass / max(1, n):.0f} ms, "
          f"checker {1000 * t_check / max(1, n):.0f} ms per program")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", type=int, default=1000, help="random programs per target")
    ap.add_argument("--overdrain", type=int, default=150, help="programs per target for over-drain")
    ap.add_argument("--arch", action="append", help="targets (default gfx1250 and gfx1200)")
    ap.add_argument("--no-kernels", action="store_true")
    ap.add_argument("--publish", type=int, default=300, help="random barrier/fill kernels (tests/pubproggen.py)")
    ns = ap.parse_args()
    for arch in ns.arch or ("gfx1250", "gfx1200"):
        if ns.programs:
            property_run(arch, ns.programs, min(ns.overdrain, ns.programs))
    if ns.publish:
        publish_run(ns.publish)
    if not ns.no_kernels:
        kernels_run()


if __name__ == "__main__":
    main()
