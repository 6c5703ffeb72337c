"""The loop self-WAW (a load on a cycle whose destination the next trip's instance overwrites)
held against LLVM 22: `llc-22 -run-pass=si-insert-waitcnts` on the MIR of the loop waits for
the previous trip's load before the load exactly where we do (gfx12+ VMEM and SMEM write their
registers out of order; gfx9 VMEM in order).  Skipped without llc-22."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options

LLC = shutil.which("llc-22")

MIR = """---
name: selfwaw
tracksRegLiveness: true
body: |
  bb.0:
    liveins: {regs}, $sgpr13
    successors: %bb.1
    S_BRANCH %bb.1
  bb.1:
    liveins: {regs}, $sgpr13
    successors: %bb.1, %bb.2
    {load}
    S_CMP_EQ_U32 $sgpr13, 1, implicit-def $scc
    S_CBRANCH_SCC1 %bb.1, implicit $scc
  bb.2:
    S_ENDPGM 0
...
"""
ASM = """\t.amdgcn_target "amdgcn-amd-amdhsa--{cpu}"
\t.text
k:
.Lloop:
\t{load}
\ts_cmp_eq_u32 s13, 1
\ts_cbranch_scc1 .Lloop
\ts_endpgm
"""
VMEM = ("$vgpr2_vgpr3", "$vgpr1 = GLOBAL_LOAD_DWORD $vgpr2_vgpr3, 0, 0, implicit $exec")
SMEM = ("$sgpr0_sgpr1", "$sgpr20 = S_LOAD_DWORD_IMM $sgpr0_sgpr1, 0, 0")
#: (cpu, MIR operands, our assembly, whether a wait is expected)
CASES = [("gfx1200", VMEM, "global_load_b32 v1, v[2:3], off", True),
         ("gfx1250", VMEM, "global_load_b32 v1, v[2:3], off", True),
         ("gfx942", VMEM, "global_load_dword v1, v[2:3], off", False),
         ("gfx1250", SMEM, "s_load_b32 s20, s[0:1], 0x0", True)]


def llvm_waits_in_loop(cpu: str, regs: str, load: str) -> bool:
    out = subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-run-pass=si-insert-waitcnts",
                          "-x", "mir", "-", "-o", "-"], input=MIR.format(regs=regs, load=load),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    loop = out.stdout.split("bb.1:", 1)[1].split("bb.2:", 1)[0]
    before = loop.split(load.split(" = ")[1].split(" ")[0], 1)[0]
    return "S_WAIT" in before


@pytest.mark.skipif(LLC is None, reason="llc-22 not installed")
@pytest.mark.parametrize("cpu,mir,asm,expected", CASES, ids=[f"{c}-{m[1].split()[2]}" for c, m, _, _ in CASES])
def test_loop_self_waw_agrees_with_llvm(cpu, mir, asm, expected):
    assert llvm_waits_in_loop(cpu, *mir) == expected
    ours = analyze(ASM.format(cpu=cpu, load=asm), "loop.s", Options())
    waits = [w for w in ours.waits() if w.line == 5]
    assert bool(waits) == expected
    assert all(w.rule == "WAW" and w.count == 0 for w in waits)
