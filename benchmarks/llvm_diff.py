"""LLVM differential benchmark: our waits vs LLVM 22's SIInsertWaitcnts, per counter.

Inputs are pairs that differ only in what si-insert-waitcnts did:
* ``../shared/corpus/asm/llvm22-pairs/*.nowait.s`` / ``*.llvm.s`` (aiter gfx1250 GEMMs);
* the IR programs of ``../shared/tools/llvm/ir/*.ll`` compiled for gfx1250 with llc-22 by
  ``../shared/tools/llvm/diffbench/make_pair.sh`` into ``--out`` (skipped when llc-22 is
  missing or a file does not compile).

For each pair we run our pass on ``nowait.s`` (``api.analyze(...).inserted_text()``), align the
two instruction streams (waits, ``s_delay_alu``, ``s_set_vgpr_msb`` and the dealloc
``s_sendmsg`` ignored; they must be equal) and fold the waits in front of every instruction into
one requirement per counter (minimum immediate; combined ``s_wait_loadcnt_dscnt`` split, a
field of 0x3f means "not waited").  Each (position, counter) is then: equal, ours more
permissive, ours stricter, only ours, only LLVM.

Every place where LLVM waits and we do not (only LLVM, or ours more permissive) is classified:
* ``not modelled`` - xcnt / storecnt / other counters the pass never emits (hazard pass,
  STOREcnt; upstream section 1.2);
* ``our bug`` - the exact checker (validate.exhaustive) reports a violation at that
  instruction in our output;
* ``LLVM conservative (covered earlier)`` - clean in the checker, and our output already waits
  on that counter at least as strictly earlier in the same straight-line stretch;
* ``LLVM conservative (no dependency)`` - clean in the checker and nothing of ours nearby: LLVM
  waits for something the pass's dependency model does not require (e.g. WAW, joins aligned by
  pending count, loop flushes).
The checker is also run on LLVM's own output (it has no tensor/async model, so tensor RAW
through LDS shows up there).

    .venv/bin/python benchmarks/llvm_diff.py [--waves 4] [--out /tmp/stinkywait-llvm-pairs] [--json f]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stinkywait_core.api import analyze  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402
from stinkywait_core.syntax import parse  # noqa: E402
from stinkywait_core.validate.exhaustive import check_function  # noqa: E402

SHARED = ROOT.parent / "shared"
PAIRS = SHARED / "corpus" / "asm" / "llvm22-pairs"
IR_DIR = SHARED / "tools" / "llvm" / "ir"
MAKE_PAIR = SHARED / "tools" / "llvm" / "diffbench" / "make_pair.sh"

MODELLED = ("dscnt", "loadcnt", "kmcnt", "tensorcnt", "asynccnt")
_IGNORED = re.compile(r"^(s_delay_alu|s_set_vgpr_msb)\b|^s_sendmsg\s+sendmsg\(MSG_DEALLOC_VGPRS\)")
_WAIT1 = re.compile(r"^s_wait_(loadcnt|dscnt|kmcnt|storecnt|samplecnt|bvhcnt|expcnt|xcnt|tensorcnt|asynccnt)\s+(\S+)")
_WAIT2 = re.compile(r"^s_wait_(loadcnt|storecnt)_dscnt\s+(\S+)")
_INSN = re.compile(r"^[a-z_][a-z0-9_]*(\s|$)")
_BOUNDARY = re.compile(r"^(s_branch|s_cbranch|s_endpgm|s_setpc|s_swappc)")


@dataclass
class Stream:
    """A file as (canonical non-wait instructions, their 1-based lines, folded waits)."""

    insts: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    waits: dict[int, dict[str, int]] = field(default_factory=dict)
    n_wait_insts: Counter = field(default_factory=Counter)


def _int(text: str) -> int | None:
    try:
        return int(text.strip().rstrip(","), 0)
    except ValueError:
        return None


def read_stream(text: str) -> Stream:
    """Canonical instruction stream with the waits before each instruction folded per counter."""
    s = Stream()
    pending: dict[str, int] = {}

    def need(c: str, v: int) -> None:
        pending[c] = min(v, pending.get(c, v))

    starts = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split(";")[0].split("//")[0].strip()
        if not line or line.endswith(":") or line.startswith(".") or not _INSN.match(line):
            if line.endswith(":") and not line.startswith("."):
                starts.append(len(s.insts))
            continue
        if _IGNORED.match(line):
            continue
        m = _WAIT1.match(line)
        if m:
            v = _int(m.group(2))
            if v is not None:
                need(m.group(1), v)
                s.n_wait_insts[m.group(1)] += 1
            continue
        m = _WAIT2.match(line)
        if m:
            v = _int(m.group(2))
            if v is not None:
                for c, val in ((m.group(1), (v >> 8) & 0x3F), ("dscnt", v & 0x3F)):
                    if val != 0x3F:
                        need(c, val)
                        s.n_wait_insts[c] += 1
            continue
        if pending:
            s.waits[len(s.insts)] = pending
            pending = {}
        s.insts.append(" ".join(line.split()))
        s.lines.append(lineno)
    if pending:
        s.waits[len(s.insts)] = pending
    return s


def _stretch_start(s: Stream, i: int) -> int:
    """Index of the first instruction of the straight-line stretch containing i."""
    j = i
    while j > 0 and not _BOUNDARY.match(s.insts[j - 1]):
        j -= 1
    return j


@dataclass
class PairResult:
    name: str
    instructions: int = 0
    stats: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    ours_waits: Counter = field(default_factory=Counter)
    llvm_waits: Counter = field(default_factory=Counter)
    classes: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    ours_violations: int = 0
    llvm_violations: Counter = field(default_factory=Counter)
    error: str | None = None


def _violation_lines(text: str, path: str, waves: int) -> tuple[set[int], Counter]:
    lines: set[int] = set()
    kinds: Counter = Counter()
    for func in parse(text, path).functions:
        res = check_function(func, Options(num_waves=waves), max_trips=2)
        for v in res.violations:
            lines.add(v.consumer.line)
            kinds[f"{v.rule}/{v.counter_name}"] += 1
    return lines, kinds


def compare_pair(name: str, nowait: Path, llvm: Path, out_dir: Path, waves: int) -> PairResult:
    r = PairResult(name)
    text = nowait.read_text()
    ours_text = analyze(text, str(nowait), Options(num_waves=waves)).inserted_text()
    ours_path = out_dir / f"{name}.ours.s"
    ours_path.write_text(ours_text)
    a, b = read_stream(ours_text), read_stream(llvm.read_text())
    if a.insts != b.insts:
        k = next((i for i, (x, y) in enumerate(zip(a.insts, b.insts)) if x != y), min(len(a.insts), len(b.insts)))
        r.error = f"instruction streams differ at #{k}"
        return r
    r.instructions = len(a.insts)
    r.ours_waits, r.llvm_waits = a.n_wait_insts, b.n_wait_insts
    bad_lines, kinds = _violation_lines(ours_text, str(ours_path), waves)
    r.ours_violations = sum(kinds.values())
    _, r.llvm_violations = _violation_lines(llvm.read_text(), str(llvm), waves)
    for i in sorted(set(a.waits) | set(b.waits)):
        wa, wb = a.waits.get(i, {}), b.waits.get(i, {})
        for c in sorted(set(wa) | set(wb)):
            if c in wa and c in wb:
                kind = "equal" if wa[c] == wb[c] else ("ours_more_permissive" if wa[c] > wb[c] else "ours_stricter")
            else:
                kind = "only_ours" if c in wa else "only_llvm"
            r.stats[c][kind] += 1
            if kind not in ("only_llvm", "ours_more_permissive"):
                continue
            line = a.lines[i] if i < len(a.lines) else 0
            if c not in MODELLED:
                cls = "not modelled"
            elif line in bad_lines:
                cls = "our bug"
            elif any(a.waits.get(j, {}).get(c, 99) <= wb[c] for j in range(_stretch_start(a, i), i)):
                cls = "LLVM conservative (covered earlier)"
            else:
                cls = "LLVM conservative (no dependency)"
            r.classes[(c, cls)] += 1
            if cls != "not modelled" and len(r.examples) < 8:
                inst = a.insts[i] if i < len(a.insts) else "<end>"
                r.examples.append(f"{c} ours={wa.get(c)} llvm={wb[c]} before `{inst[:60]}` "
                                  f"(ours line {line}): {cls}")
    return r


def build_pairs(out_dir: Path) -> list[tuple[str, Path, Path]]:
    pairs = [(p.name[: -len(".nowait.s")], p, p.with_name(p.name.replace(".nowait.s", ".llvm.s")))
             for p in sorted(PAIRS.glob("*.nowait.s"))]
    if shutil.which("llc-22") and MAKE_PAIR.exists():
        for ll in sorted(IR_DIR.glob("*.ll")):
            if "gfx1200" in ll.name:
                continue
            proc = subprocess.run(["bash", str(MAKE_PAIR), "gfx1250", str(ll), str(out_dir)],
                                  capture_output=True, text=True)
            nw, lv = out_dir / f"{ll.stem}.nowait.s", out_dir / f"{ll.stem}.llvm.s"
            if proc.returncode == 0 and nw.exists() and lv.exists():
                pairs.append((ll.stem, nw, lv))
    return [p for p in pairs if p[2].exists()]


def render(results: list[PairResult]) -> str:
    out = []
    total = defaultdict(Counter)
    classes: Counter = Counter()
    for r in results:
        if r.error:
            out.append(f"{r.name}: ERROR {r.error}")
            continue
        out.append(f"### {r.name}: {r.instructions} instructions; checker violations: ours "
                   f"{r.ours_violations}, LLVM {sum(r.llvm_violations.values())} "
                   f"({', '.join(f'{k} {v}' for k, v in sorted(r.llvm_violations.items())) or 'none'})")
        out.append("| counter | waits ours | waits LLVM | equal | ours more permissive | ours stricter | only ours | only LLVM |")
        out.append("|---|---|---|---|---|---|---|---|")
        for c in sorted(set(r.stats) | set(r.ours_waits) | set(r.llvm_waits)):
            st = r.stats[c]
            out.append(f"| {c} | {r.ours_waits[c]} | {r.llvm_waits[c]} | {st['equal']} | {st['ours_more_permissive']} "
                       f"| {st['ours_stricter']} | {st['only_ours']} | {st['only_llvm']} |")
            total[c].update(st)
        classes.update(r.classes)
        out.extend(f"- {e}" for e in r.examples)
    out.append("")
    out.append("Places where LLVM waits and we do not, classified:")
    for (c, cls), n in sorted(classes.items()):
        out.append(f"- {c}: {cls}: {n}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--waves", type=int, default=4, help="NumWaves for our pass and the checker")
    ap.add_argument("--out", default="/tmp/stinkywait-llvm-pairs")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = [compare_pair(n, a, b, out_dir, args.waves) for n, a, b in build_pairs(out_dir)]
    print(render(results))
    if args.json:
        Path(args.json).write_text(json.dumps([{
            "name": r.name, "instructions": r.instructions, "error": r.error,
            "stats": {c: dict(v) for c, v in r.stats.items()}, "ours_waits": dict(r.ours_waits),
            "llvm_waits": dict(r.llvm_waits), "ours_violations": r.ours_violations,
            "llvm_violations": dict(r.llvm_violations),
            "classes": {f"{c}: {k}": n for (c, k), n in r.classes.items()}} for r in results], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
