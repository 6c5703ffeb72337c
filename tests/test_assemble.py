"""What `stinkywait insert` writes must still assemble (llvm-mc-22, gfx1250)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ASM = os.path.join(ROOT, "..", "shared", "corpus", "asm")
MC = shutil.which("llvm-mc-22")
KERNELS = [os.path.join(ROOT, "examples", "gemm_loop.s"),
           os.path.join(ASM, "aiter_gfx1250_mxscale_gemm1_final_isa.s"),
           os.path.join(ASM, "aiter_gfx1250_mxscale_gemm2_final_isa.s"),
           os.path.join(ASM, "llvm22-pairs", "aiter_gfx1250_mxscale_gemm1.llvm22.nowait.s")]


@pytest.mark.skipif(MC is None, reason="llvm-mc-22 is not installed")
@pytest.mark.parametrize("path", KERNELS, ids=os.path.basename)
@pytest.mark.parametrize("replace_waits", [False, True])
def test_inserted_output_assembles(path, replace_waits, tmp_path):
    if not os.path.exists(path):
        pytest.skip("../shared is absent")
    text = open(path, encoding="utf-8").read()
    an = analyze(text, path, Options(replace_waits=replace_waits))
    assert not an.has_errors()
    if replace_waits:
        assert an.waits(), "stripping the waits must make the pass insert some"
    out = tmp_path / "out.s"
    out.write_text(an.inserted_text(explain=True))
    r = subprocess.run([MC, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-filetype=obj",
                        str(out), "-o", os.devnull], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[:2000]
