"""The peer run: corpus -> llc-22 pairs -> stinkywait -> llvm-mc-22 -> verdicts, per CPU.

Shared by `tests/test_llvm_peer.py` and `benchmarks/llvm_peer.py`.  Everything slow is cached
by content hash under `compile.cache_root()`: llc outputs by (llc version, CPU, IR), our
output by (stinkywait_core sources, CPU, nowait.s), assembly results by (CPU, text).  A cold
run compiles every unit once; a warm one only re-runs what changed.

Corpus: ``tests/data/llvm-ir/*.ll`` (LLVM's own CodeGen tests, see its README), plus, when
../shared is present, ``../shared/tools/llvm/ir/*.ll`` and ``../shared/corpus/asm/llvm22-pairs/*.ll``;
and the ready-made gfx1250 GEMM pairs ``llvm22-pairs/*.nowait.s`` / ``*.llvm.s``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .compile import HSA, CompileFailure, Compiled, assemble, cache_root, compile_ir, digest
from .exceptions import load_exceptions
from .lds_oracle import InstructionMap
from .machine import peer_target
from .verdict import PairReport, compare

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "llvm-ir"
SHARED = ROOT.parent / "shared"
SHARED_IR = (SHARED / "tools" / "llvm" / "ir", SHARED / "corpus" / "asm" / "llvm22-pairs")
GEMM_PAIRS = SHARED / "corpus" / "asm" / "llvm22-pairs"
_SW_TIMEOUT = 600


def corpus() -> list[Path]:
    files = sorted(DATA.glob("*.ll"))
    for d in SHARED_IR:
        if d.is_dir():
            files += sorted(d.glob("*.ll"))
    return files


def gemm_pairs() -> list[Compiled]:
    """The checked-in gfx1250 GEMM pairs of ../shared (nowait / keepfence / llvm)."""
    out = []
    if not GEMM_PAIRS.is_dir():
        return out
    for nw in sorted(GEMM_PAIRS.glob("*.nowait.s")):
        stem = nw.name[: -len(".nowait.s")]
        ll, kf = GEMM_PAIRS / f"{stem}.llvm.s", GEMM_PAIRS / f"{stem}.nowait-keepfence.s"
        if ll.exists():
            out.append(Compiled(nw.name, f"{stem} (pair)", "gfx1250", HSA, nw.read_text(),
                                kf.read_text() if kf.exists() else "", ll.read_text()))
    return out


@lru_cache(maxsize=None)
def stinkywait_version() -> str:
    """A hash of the stinkywait_core sources: our cached outputs are valid while it holds."""
    h = hashlib.sha256()
    core = ROOT / "stinkywait_core"
    for p in sorted(core.rglob("*")):
        if p.suffix in (".py", ".lark") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(core)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:32]


def run_stinkywait(nowait: str, cpu: str, cache: Path) -> tuple[str | None, str]:
    """`stinkywait insert --replace-waits --arch CPU` on nowait.s: (output, error)."""
    key = digest("sw-1", stinkywait_version(), cpu, nowait)
    slot = cache / "ours" / key[:2]
    slot.mkdir(parents=True, exist_ok=True)
    res, err_file = slot / f"{key}.s", slot / f"{key}.err"
    if res.exists():
        return res.read_text(), ""
    if err_file.exists():
        return None, err_file.read_text()
    with tempfile.TemporaryDirectory(prefix="swpeer-sw-") as d:
        src, dst = Path(d) / "nowait.s", Path(d) / "ours.s"
        src.write_text(nowait)
        cmd = [sys.executable, "-c", "import sys; from stinkywait_core.cli.main import main; "
               "sys.exit(main(sys.argv[1:]))", "insert", "--replace-waits", "--arch", cpu,
               str(src), "-o", str(dst)]
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=_SW_TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            return None, f"stinkywait timed out after {_SW_TIMEOUT}s"
        if p.returncode != 0 or not dst.exists():
            msg = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[0][:300]
            err_file.write_text(msg)
            return None, msg
        text = dst.read_text()
    tmp = slot / f"{key}.tmp"
    tmp.write_text(text)
    tmp.replace(res)
    return text, ""


def instructions_of(text: str) -> InstructionMap:
    """line -> stinkywait Instruction (what the target table classifies), with the module for
    the LDS address analysis (`lds_oracle`)."""
    from stinkywait_core.syntax import parse
    mod = parse(text, "peer.s")
    out = InstructionMap(mod)
    for f in mod.functions:
        for b in f.blocks:
            for ins in b.instrs:
                if ins.span is not None and not ins.is_label and not ins.is_phi:
                    out.add(f, ins)
    return out


def judge(c: Compiled, rules: dict[str, str], cache: Path) -> PairReport:
    try:
        target = peer_target(c.cpu)
    except Exception as e:  # e.g. the table's UnsupportedTarget: a failed pair, not a lost run
        rep = PairReport(c.unit, c.cpu)
        rep.error = f"no target description: {type(e).__name__}: {e}"
        return rep
    ours, err = run_stinkywait(c.nowait, c.cpu, cache)
    if ours is None:
        rep = PairReport(c.unit, c.cpu)
        rep.error = f"stinkywait failed: {err}"
        return rep
    texts = {"nowait": c.nowait, "llvm": c.llvm, "ours": ours}
    if c.keepfence:
        texts["keepfence"] = c.keepfence
    needs_all = getattr(target, "table", None) is not None
    parsed: dict[str, dict[int, Any]] = {}

    def instructions(which: str) -> dict[int, Any]:
        if which not in parsed:
            parsed[which] = instructions_of(texts[which]) if (which == "ours" or needs_all) else {}
        return parsed[which]
    try:
        rep = compare(c.unit, c.cpu, texts, target, instructions, rules)
    except Exception as e:  # a harness bug must show up as a failed pair, not a lost run
        rep = PairReport(c.unit, c.cpu)
        rep.error = f"comparison crashed: {type(e).__name__}: {e}"
        return rep
    ref_ok, ref_err = assemble(c.llvm, c.cpu, c.triple, cache)
    if not ref_ok:  # LLVM's own output does not assemble (e.g. `export` on gfx1250): no verdict
        rep.assembles, rep.assemble_error = None, f"llvm.s itself does not assemble: {ref_err}"
    else:
        rep.assembles, rep.assemble_error = assemble(ours, c.cpu, c.triple, cache)
    return rep


@dataclass
class PeerRun:
    reports: list[PairReport] = field(default_factory=list)
    compile_failures: list[CompileFailure] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)     # cpu -> number of source files compiled
    table: str = ""


def evaluate(cpus: tuple[str, ...], files: list[Path] | None = None, with_gemm: bool = True,
             jobs: int = 2) -> PeerRun:
    cache = cache_root()
    rules = load_exceptions()
    files = corpus() if files is None else files
    run = PeerRun()
    try:
        run.table = peer_target(cpus[0]).source if cpus else ""
    except Exception as e:
        run.table = f"unavailable ({type(e).__name__}: {e})"
    work = [(f, cpu) for cpu in cpus for f in files]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        compiled = list(pool.map(lambda fc: compile_ir(fc[0], fc[1], cache), work))
        units: list[Compiled] = []
        for (f, cpu), (done, failed) in zip(work, compiled):
            units += done
            run.compile_failures += failed
            if done:
                run.sources[cpu] = run.sources.get(cpu, 0) + 1
        if with_gemm:
            for g in gemm_pairs():
                if g.cpu in cpus:
                    units.append(g)
                    run.sources[g.cpu] = run.sources.get(g.cpu, 0) + 1
        run.reports = list(pool.map(lambda c: judge(c, rules, cache), units))
    return run
