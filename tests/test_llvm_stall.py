"""The LLVM-compiled kernels of the stall benchmark (benchmarks/llvm_stall.py) build and run.

With llc-22 and llvm-extract-22 present (skipped otherwise): a few functions of the set are
compiled for their CPUs, the ones a CPU cannot select are reported (MFMA on gfx1250), and each
compiled kernel goes through what `benchmarks/stall.py` does with it: ours by
`insert --replace-waits`, both texts priced by the stall walk, our output checked by
`check --exhaustive` (0 unsafe), while the kernel with every wait removed is unsafe (the
check can fail).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec.loader.exec_module(mod)
    return mod


llvm_stall = _load("llvm_stall")
pytestmark = pytest.mark.skipif(not llvm_stall.tools_available(), reason="llc-22 / llvm-extract-22 not installed")

_WAIT = re.compile(r"^\s*s_wait(cnt|_\w+)\b")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("llvm-stall")
    made, skipped = [], []
    for only in ("test_iglp_opt_mfma_gemm", "memcpy_p0_p0_sz2048", "local_memory_two_objects"):
        m, s = llvm_stall.build(out, only)
        made += m
        skipped += s
    return out, made, skipped


def test_the_set_builds_for_each_cpu(built):
    out, made, skipped = built
    names = sorted(p.name for p in made)
    assert names == sorted(
        [f"test_iglp_opt_mfma_gemm.{c}.s" for c in ("gfx942", "gfx950")]
        + [f"memcpy_p0_p0_sz2048.{c}.s" for c in llvm_stall.CPUS]
        + [f"local_memory_two_objects.{c}.s" for c in llvm_stall.CPUS])
    # MFMA has no gfx1250 form: reported, not silently dropped
    assert any("test_iglp_opt_mfma_gemm gfx1250" in s and "Cannot select" in s for s in skipped), skipped
    for p in made:
        text = p.read_text()
        assert ".amdgcn_target" in text and any(_WAIT.match(ln) for ln in text.splitlines()), p.name


@pytest.mark.parametrize("name", ["test_iglp_opt_mfma_gemm.gfx942.s", "memcpy_p0_p0_sz2048.gfx1250.s",
                                  "local_memory_two_objects.gfx1250.s"])
def test_stall_runs_and_ours_is_safe(built, name, tmp_path):
    stall = _load("stall")
    out, _made, _skipped = built
    path = out / name
    text = path.read_text()
    mine, unproven = stall.ours(path, None, -1, None, str(tmp_path))
    assert unproven >= 0
    a_stall, a_cycles, _ = stall.predicted(text, name, ())
    o_stall, o_cycles, _ = stall.predicted(mine, name, ())
    assert a_cycles > 0 and o_cycles > 0 and a_stall >= 0 and o_stall >= 0
    assert stall.waits(mine), "ours has no rebuildable wait at all"
    ours_file = tmp_path / ("ours." + name)
    ours_file.write_text(mine)
    assert stall.hw_unsafe(str(ours_file), []) == 0
    bare = tmp_path / ("bare." + name)
    bare.write_text("\n".join(ln for ln in text.splitlines() if not _WAIT.match(ln)) + "\n")
    assert stall.hw_unsafe(str(bare), []) > 0


MIRROR = Path("/work/.mirror/ROCm+MIOpen/repo")


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no ROCm/MIOpen mirror")
def test_the_eight_miopen_kernels_are_staged_with_their_includes(tmp_path):
    staged = llvm_stall.stage_miopen(str(MIRROR), tmp_path)
    assert sorted(cpu for _, cpu in staged) == sorted(["gfx1030", "gfx908", "gfx1030", "gfx90a", "gfx908",
                                                       "gfx908", "gfx908", "gfx908"])
    assert len({p.name for p, _ in staged}) == 8
    for path, _cpu in staged:
        text = path.read_text(errors="replace")
        assert ".include" not in text or any(path.parent.glob("*.inc")), path
        for inc in re.findall(r'^\s*\.include\s+"([^"]+)"', text, re.M):
            assert (path.parent / inc).exists(), (path.name, inc)


def test_the_compiled_release_and_acquire_keep_their_waits(tmp_path):
    """llc-22's workgroup release and acquire (lds-dma-workgroup-release.ll, gfx942) survive
    `insert --replace-waits`: the drain before the `sc0` flag store and after the `sc0` load."""
    made, _ = llvm_stall.build(tmp_path, "fence_fence")
    path = next(p for p in made if p.name == "fence_fence.gfx942.s")
    stall = _load("stall")
    mine, _ = stall.ours(path, None, -1, None, str(tmp_path))
    lines = [ln.strip() for ln in mine.splitlines() if ln.strip() and not ln.strip().startswith(";")]
    store = next(i for i, ln in enumerate(lines) if ln.startswith("global_store_dword") and ln.endswith("sc0"))
    assert lines[store - 1] == "s_waitcnt vmcnt(0) lgkmcnt(0)", lines[store - 3:store + 1]
    load = next(i for i, ln in enumerate(lines) if ln.startswith("global_load_dword") and ln.endswith("sc0"))
    assert lines[load + 1] == "s_waitcnt vmcnt(0)", lines[load:load + 3]
