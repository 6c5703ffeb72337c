"""LLVM-compiled kernels and MIOpen in the stall benchmark (issue 22, "Done when").

Usage: .venv/bin/python benchmarks/llvm_stall.py [--out DIR] [--build-only] [--hwcheck]
           [--only SUBSTRING] [--miopen [--no-llvm]] [--mirror DIR]

The LLVM set: kernels and callable functions of LLVM's own AMDGPU CodeGen tests
(`tests/data/llvm-stall`, `tests/data/llvm-ir`; Apache-2.0 WITH LLVM-exception, see their
READMEs), each function taken alone by llvm-extract-22 and compiled by
`llc-22 -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=CPU` (a shader: `-mtriple=amdgcn`) for gfx942,
gfx950 and gfx1250 into `--out` (one `.s` per function and CPU; a function the CPU cannot select is reported and
left out).  The waits in those files are LLVM 22's SIInsertWaitcnts' (plus the memory
legalizer's): they stand for the authors' waits.  `benchmarks/stall.py` then strips and
re-inserts them (`insert --replace-waits`) and prices both texts with the same model:
per kernel the predicted stall, its ratio, wait counts, unproven findings, and with
`--hwcheck` the unsafe count of `check --exhaustive` on ours.  With ../shared present, the two
aiter gfx1250 mxscale GEMMs' IR (`../shared/corpus/asm/llvm22-pairs`, MIT) are compiled whole
for gfx1250 and measured with them.

`--miopen` does the same for the eight MIOpen macro-written kernels of "Placement round"
(BENCHMARKS.md): the two of `tests/data/miopen` and six staged from the ROCm/MIOpen mirror
with their `.inc` files (`benchmarks/miopen_macros.py`'s staging), one `stall.py` run per
processor (`--arch`), and the geometric mean over the eight.  Nothing is asserted: figures only.  Without llc-22 (or the mirror)
the part that needs it says so and is skipped.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
LLC, EXTRACT = shutil.which("llc-22"), shutil.which("llvm-extract-22")
CPUS = ("gfx942", "gfx950", "gfx1250")

#: (IR file under tests/data, function): each is compiled for every CPU of CPUS that can
#: select it.  Chosen for real loads, LDS, loops and barriers (kernel-sized where the tests
#: have such): LDS + MFMA GEMM tiles, LDS exchange across a barrier, compiler-expanded copy
#: and fill loops, a loop of global loads, clauses, LDS DMA (with workgroup fences), barriers
#: after stores, LDS atomics, calls and tail calls, the gfx1250 async LDS fill.
KERNELS = (
    ("llvm-stall/iglp-opt-gemm.ll", "test_iglp_opt_mfma_gemm"),
    ("llvm-stall/iglp-opt-gemm.ll", "test_iglp_opt_rev_mfma_gemm"),
    ("llvm-stall/iglp-opt-gemm.ll", "test_iglp_opt_flat_load"),
    ("llvm-stall/local-memory.ll", "local_memory"),
    ("llvm-stall/local-memory.ll", "local_memory_two_objects"),
    ("llvm-stall/memintrinsic-loops.ll", "memcpy_p0_p0_sz2048"),
    ("llvm-stall/memintrinsic-loops.ll", "memcpy_p1_p1_sz2048"),
    ("llvm-stall/memintrinsic-loops.ll", "memmove_p1_p1_sz2048"),
    ("llvm-stall/memintrinsic-loops.ll", "memset_p3_sz2048"),
    ("llvm-stall/constoffset-loop.ll", "clmem_read"),
    ("llvm-ir/waitcnt-looptest.ll", "testKernel"),
    ("llvm-ir/loop_break.ll", "break_loop"),
    ("llvm-ir/memory_clause.ll", "vector_clause"),
    ("llvm-ir/memory_clause.ll", "vector_clause_indirect"),
    ("llvm-ir/lds-dma-waits.ll", "buffer_load_lds_dword_10_arrays"),
    ("llvm-ir/lds-dma-waits.ll", "global_load_lds_no_alias_ds_read"),
    ("llvm-ir/llvm.amdgcn.s.barrier.ll", "test_barrier"),
    ("llvm-ir/waitcnt-vscnt.ll", "barrier_vmcnt_vscnt_global"),
    ("llvm-ir/lds-dma-workgroup-release.ll", "barrier_release"),
    ("llvm-ir/lds-dma-workgroup-release.ll", "fence_fence"),
    ("llvm-ir/lds-dma-workgroup-release.ll", "release_acquire"),
    ("llvm-ir/local-atomics.ll", "lds_atomic_add_ret_i32"),
    ("llvm-ir/call-waitcnt.ll", "call_memory_arg_load"),
    ("llvm-ir/call-waitcnt.ll", "call_got_load"),
    ("llvm-ir/call-waitcnt.ll", "tail_call_memory_arg_load"),
    ("llvm-ir/llvm.amdgcn.global.load.async.to.lds.ll", "global_load_async_to_lds_b128_saddr"),
)

#: whole kernels compiled by llc-22 from IR that aiter's FlyDSL generated (MIT; ../shared/corpus/asm,
#: `llvm22-pairs/*.llvm22.ll`, the intrinsics adapted to LLVM 22 there): (file, CPU)
SHARED_IR = (
    ("aiter_gfx1250_mxscale_gemm1.llvm22.ll", "gfx1250"),
    ("aiter_gfx1250_mxscale_gemm2.llvm22.ll", "gfx1250"),
)
SHARED_PAIRS = ROOT.parent / "shared" / "corpus" / "asm" / "llvm22-pairs"

#: MIOpen: (kernel in tests/data/miopen, or (mirror folder under src/kernels, name filter, count)), processor
MIOPEN_LOCAL = (
    ("miopen/igemm_gfx1030/igemm_fwd_gtcn2_nchwc_cyxkc_fp16x8_bx0_ex0_bt128x128x32_lt8x8_lw2x4_lr2x4"
     "_ta1x1x1x16_1x4x1x64_tb1x1x2x8_1x4x1x64.s", "gfx1030"),
    ("miopen/igemm_gfx908/igemm_fwd_gtcx_nchw_fp32_bx16_ex0_bt16x16x4_wt16x16x1_ws1x1_wr1x1_ta1x1x1x1"
     "_1x4x1x16_tb1x1x1x1_1x4x1x16.s", "gfx908"),
)
MIOPEN_MIRROR = (
    ("dynamic_igemm/igemm_gtc_nchwc_gfx1030/fwd_fp16x4/", "bt128x128", 1, "gfx1030"),
    ("dynamic_igemm/igemm_gtc_xdlops_nhwc_gfx90a/fwd_fp16/", "", 1, "gfx90a"),
    ("dynamic_igemm/igemm_gtc_fwd/", "_ex1_", 1, "gfx908"),
    ("dynamic_igemm/igemm_gtc_bwd_fp16/", "", 3, "gfx908"),
)


def tools_available() -> bool:
    return LLC is not None and EXTRACT is not None


def _stem(func: str, cpu: str) -> str:
    """The compiled file's name: function and CPU (the names are unique in KERNELS, and short
    enough for stall.py's column)."""
    return f"{func}.{cpu}"


def build(out: Path, only: str = "") -> tuple[list[Path], list[str]]:
    """Compile the set into `out`: the `.s` files made, and one line per function and CPU
    that did not compile (the CPU lacks an intrinsic: e.g. MFMA on gfx1250)."""
    out.mkdir(parents=True, exist_ok=True)
    made, skipped = [], []
    for ir, func in KERNELS:
        if only and only not in func and only not in ir:
            continue
        one = out / f"{func}.ll"
        r = subprocess.run([EXTRACT, f"--func={func}", "-S", str(DATA / ir), "-o", str(one)],
                           capture_output=True, text=True)
        if r.returncode:
            skipped.append(f"{ir}:{func}: llvm-extract-22: {r.stderr.strip().splitlines()[-1:]}")
            continue
        for cpu in CPUS:
            dst = out / (_stem(func, cpu) + ".s")
            for triple in ("amdgcn-amd-amdhsa", "amdgcn"):  # shaders are refused with the HSA triple
                r = subprocess.run([LLC, "-O3", f"-mtriple={triple}", f"-mcpu={cpu}", str(one), "-o", str(dst)],
                                   capture_output=True, text=True)
                if "non-compute shaders" not in r.stderr:
                    break
            if r.returncode:
                first = next((ln for ln in r.stderr.splitlines() if "error" in ln.lower()), r.stderr.strip()[:120])
                skipped.append(f"{ir}:{func} {cpu}: {first.strip()}")
                dst.unlink(missing_ok=True)
                continue
            made.append(dst)
    for name, cpu in SHARED_IR:
        src = SHARED_PAIRS / name
        if only and only not in name:
            continue
        if not src.exists():
            skipped.append(f"{name}: not in {SHARED_PAIRS} (../shared absent)")
            continue
        dst = out / f"{name.split('.')[0]}.{cpu}.s"
        r = subprocess.run([LLC, "-O3", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", str(src), "-o", str(dst)],
                           capture_output=True, text=True)
        if r.returncode:
            skipped.append(f"{name} {cpu}: {r.stderr.strip()[:120]}")
            continue
        made.append(dst)
    return made, skipped


def stage_miopen(mirror: str, out: Path) -> list[tuple[Path, str]]:
    """The eight MIOpen kernels, each in its own folder with its `.inc` files: (kernel, processor)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from miopen_macros import stage, tree  # the staging of the macro benchmark

    chosen = []
    for rel, cpu in MIOPEN_LOCAL:
        src = DATA / rel
        if src.exists():
            chosen.append((src, cpu))
    if os.path.isdir(mirror):
        files = tree(mirror)
        for folder, pick, count, cpu in MIOPEN_MIRROR:
            full = "src/kernels/" + folder
            names = [f for f in files if f.startswith(full) and f.endswith(".s") and pick in f][:count]
            for f in names:
                work = out / "miopen" / Path(f).stem[:60]
                work.mkdir(parents=True, exist_ok=True)
                chosen.append((Path(stage(mirror, files, f, str(work))), cpu))
    else:
        print(f"no MIOpen mirror at {mirror}: only the kernels of tests/data/miopen")
    return chosen


_RATIO = re.compile(r"\sratio\s+([0-9.]+)\s")


def run_stall(paths: list[Path], hwcheck: bool, arch: str | None = None) -> tuple[int, list[float]]:
    """benchmarks/stall.py over `paths`, its lines passed through (they are the figures); the
    exit code and the per-kernel stall ratios (for a geometric mean over several runs)."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / "stall.py")] + (["--hwcheck"] if hwcheck else [])
    cmd += (["--arch", arch] if arch else []) + [str(p) for p in paths]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ratios = []
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            print(line, end="", flush=True)
            m = _RATIO.search(line)
            if m and not line.startswith("geomean"):
                ratios.append(float(m.group(1)))
    return proc.returncode, ratios


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="folder for the compiled set (default: a temporary one)")
    ap.add_argument("--build-only", action="store_true", help="compile the set and list it; no stall run")
    ap.add_argument("--hwcheck", action="store_true", help="also count unsafe waits by check --exhaustive")
    ap.add_argument("--only", default="", help="only the functions (or IR files) whose name contains this")
    ap.add_argument("--miopen", action="store_true", help="also the eight MIOpen kernels")
    ap.add_argument("--no-llvm", action="store_true", help="skip the LLVM set (with --miopen)")
    ap.add_argument("--mirror", default="/work/.mirror/ROCm+MIOpen/repo")
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(ns.out) if ns.out else Path(tmp)
        rc = 0
        if not ns.no_llvm:
            if not tools_available():
                print("llc-22 / llvm-extract-22 not installed: the LLVM set is skipped")
            else:
                made, skipped = build(out, ns.only)
                print(f"built {len(made)} kernels in {out}; not compiled: {len(skipped)}")
                for s in skipped:
                    print(f"  skipped {s}")
                if ns.build_only:
                    for m in made:
                        print(f"  {m.name}")
                elif made:
                    rc |= run_stall(made, ns.hwcheck)[0]
        if ns.miopen and not ns.build_only:
            by_cpu: dict[str, list[Path]] = {}
            for path, cpu in stage_miopen(ns.mirror, out):
                by_cpu.setdefault(cpu, []).append(path)
            ratios: list[float] = []
            for cpu, paths in by_cpu.items():
                print(f"MIOpen {cpu}:", flush=True)
                code, got = run_stall(paths, ns.hwcheck, cpu)
                rc |= code
                ratios += got
            if ratios:
                gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
                print(f"MIOpen: geomean stall ratio {gm:.3f} over {len(ratios)} kernels; "
                      f"above 1.25x: {sum(r > 1.25 for r in ratios)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
