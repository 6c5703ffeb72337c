"""gfx9-11 syntax is read as gfx12 is (issue 15): the forms hand-written kernels use, each
assembled by llvm-mc-22 for its processor (so the forms are real), with the destinations and
sources the ISA gives them; and LLVM's own output for those processors parses cleanly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stinkywait_core.ir import Reg
from stinkywait_core.syntax import parse

MC = shutil.which("llvm-mc-22") is not None
LLC = shutil.which("llc-22") is not None
IR = sorted((Path(__file__).resolve().parents[1].parent / "shared" / "tools" / "llvm" / "ir").glob("*.ll"))
V, S, A = "v", "s", "a"
VCC, EXEC, SCC = ("vcc", 0, 1), ("exec", 0, 1), ("SCC", 0, 0)

#: (cpu, line, destinations, sources): registers as (kind, lo, hi), implicit ones included
FORMS = [
    # LDS DMA: the data goes to LDS, the VGPR is the address
    ("gfx942", "buffer_load_dword v1, s[0:3], 0 offen lds", [], [(V, 1, 1), (S, 0, 3)]),
    ("gfx942", "buffer_load_dwordx4 v[4:7], v1, s[0:3], 0 offen sc0 sc1 nt", [(V, 4, 7)], [(V, 1, 1), (S, 0, 3)]),
    ("gfx942", "buffer_store_dword v1, v2, s[0:3], 0 offen", [], [(V, 1, 1), (V, 2, 2), (S, 0, 3)]),
    ("gfx950", "global_load_lds_dwordx4 v[2:3], off", [], [(V, 2, 3)]),
    ("gfx942", "global_load_dwordx4 v[0:3], v[4:5], off", [(V, 0, 3)], [(V, 4, 5)]),
    ("gfx942", "global_load_dword v2, v3, s[4:5] offset:16", [(V, 2, 2)], [(V, 3, 3), (S, 4, 5)]),
    ("gfx942", "s_load_dwordx4 s[4:7], s[0:1], 0x58", [(S, 4, 7)], [(S, 0, 1)]),
    ("gfx942", "s_buffer_load_dword s0, s[4:7], 0x0", [(S, 0, 0)], [(S, 4, 7)]),
    ("gfx942", "ds_read_b128 v[0:3], v4 offset:16", [(V, 0, 3)], [(V, 4, 4)]),
    ("gfx942", "ds_write_b64 v1, v[2:3]", [], [(V, 1, 1), (V, 2, 3)]),
    ("gfx942", "ds_read2_b32 v[0:1], v2 offset1:1", [(V, 0, 1)], [(V, 2, 2)]),
    ("gfx942", "ds_write2st64_b64 v1, v[2:3], v[4:5] offset1:1", [], [(V, 1, 1), (V, 2, 3), (V, 4, 5)]),
    ("gfx942", "ds_read_b128 acc[64:67], v10 offset:2272", [(A, 64, 67)], [(V, 10, 10)]),
    ("gfx942", "v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]", [(A, 0, 15)],
     [(V, 0, 1), (V, 2, 3), (A, 0, 15)]),
    ("gfx942", "v_mfma_f32_16x16x32_fp8_fp8 v[56:59], acc[0:1], acc[64:65], 0", [(V, 56, 59)],
     [(A, 0, 1), (A, 64, 65)]),
    ("gfx942", "v_accvgpr_read_b32 v1, acc1", [(V, 1, 1)], [(A, 1, 1)]),
    ("gfx942", "v_accvgpr_write_b32 acc1, v1", [(A, 1, 1)], [(V, 1, 1)]),
    ("gfx942", "v_add_u32_e32 v5, s1, v4", [(V, 5, 5)], [(S, 1, 1), (V, 4, 4)]),
    ("gfx942", "v_add_f32_e64 v1, v2, v3 clamp", [(V, 1, 1)], [(V, 2, 2), (V, 3, 3)]),
    ("gfx942", "v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", [(V, 1, 1)], [(V, 2, 2)]),
    ("gfx942", "v_or_b32_sdwa v4, v10, v5 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
     [(V, 4, 4)], [(V, 10, 10), (V, 5, 5)]),
    # a partial write that keeps the rest of the destination also reads it
    ("gfx942", "v_or_b32_sdwa v4, v10, v5 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD "
               "src1_sel:DWORD", [(V, 4, 4)], [(V, 10, 10), (V, 5, 5), (V, 4, 4)]),
    ("gfx942", "s_setprio 3", [], []),
    # wave64: 64-bit VCC and EXEC
    ("gfx942", "s_and_saveexec_b64 s[0:1], vcc", [(S, 0, 1), SCC, EXEC], [VCC, EXEC]),
    ("gfx942", "v_cmp_eq_u32_e32 vcc, 1, v6", [VCC], [(V, 6, 6)]),
    ("gfx942", "v_cmp_ne_u32_e64 s[2:3], 1, v2", [(S, 2, 3)], [(V, 2, 2)]),
    ("gfx942", "v_cmpx_eq_u32_e64 s[0:1], v1, v2", [(S, 0, 1), EXEC], [(V, 1, 1), (V, 2, 2)]),
    ("gfx942", "v_cndmask_b32_e64 v2, 0, 1, s[26:27]", [(V, 2, 2)], [(S, 26, 27)]),
    ("gfx942", "v_add_co_u32 v1, vcc, v2, v3", [(V, 1, 1), VCC], [(V, 2, 2), (V, 3, 3)]),
    ("gfx942", "v_addc_co_u32 v1, vcc, v2, v3, vcc", [(V, 1, 1), VCC], [(V, 2, 2), (V, 3, 3), VCC]),
    # returning atomics: gfx9 glc, gfx940 sc0; MUBUF's data register also receives the old value
    ("gfx900", "buffer_atomic_add v1, v2, s[4:7], 0 offen glc", [(V, 1, 1)], [(V, 2, 2), (S, 4, 7), (V, 1, 1)]),
    ("gfx942", "buffer_atomic_add v1, v2, s[4:7], 0 offen sc0", [(V, 1, 1)], [(V, 2, 2), (S, 4, 7), (V, 1, 1)]),
    ("gfx942", "buffer_atomic_add v1, v2, s[4:7], 0 offen", [], [(V, 1, 1), (V, 2, 2), (S, 4, 7)]),
    ("gfx900", "global_atomic_add v0, v[2:3], v4, off glc", [(V, 0, 0)], [(V, 2, 3), (V, 4, 4)]),
    ("gfx942", "global_atomic_add v0, v1, v3, s[0:1] sc0", [(V, 0, 0)], [(V, 1, 1), (V, 3, 3), (S, 0, 1)]),
    ("gfx942", "s_atomic_add s5, s[2:3], 0x0 glc", [(S, 5, 5)], [(S, 2, 3), (S, 5, 5)]),
    ("gfx900", "image_atomic_add v1, v2, s[0:7] dmask:0x1 unorm glc", [(V, 1, 1)], [(V, 2, 2), (S, 0, 7), (V, 1, 1)]),
    ("gfx900", "exp mrt0 v0, v1, v2, v3 done vm", [], [(V, 0, 0), (V, 1, 1), (V, 2, 2), (V, 3, 3)]),
    ("gfx900", "v_interp_p1_f32 v0, v1, attr0.x", [(V, 0, 0)], [(V, 1, 1)]),
    ("gfx900", "ds_ordered_count v0, v1 offset:772 gds", [(V, 0, 0)], [(V, 1, 1)]),
    ("gfx1030", "image_sample v[0:3], [v4, v5], s[8:15], s[16:19] dmask:0xf dim:SQ_RSRC_IMG_2D", [(V, 0, 3)],
     [(V, 4, 4), (V, 5, 5), (S, 8, 15), (S, 16, 19)]),
    ("gfx1030", "v_cmpx_eq_u32_e32 v1, v2", [EXEC], [(V, 1, 1), (V, 2, 2)]),
    ("gfx1030", "s_and_saveexec_b32 s0, vcc_lo", [(S, 0, 0), SCC, EXEC], [("vcc", 0, 0), EXEC]),
    ("gfx1100", "lds_param_load v1, attr0.x wait_vdst:0", [(V, 1, 1)], []),
    ("gfx1100", "v_interp_p10_f32 v0, v1, v2, v3", [(V, 0, 0)], [(V, 1, 1), (V, 2, 2), (V, 3, 3)]),
    ("gfx1100", "v_dual_mul_f32 v0, v1, v2 :: v_dual_mov_b32 v3, v4", [(V, 0, 0), (V, 3, 3)],
     [(V, 1, 1), (V, 2, 2), (V, 4, 4)]),
    ("gfx1200", "ds_param_load v1, attr0.x wait_va_vdst:0 wait_vm_vsrc:0", [(V, 1, 1)], []),
]


def regs(ops) -> list[tuple[str, int, int]]:
    return [(op.kind, op.lo, op.hi) for op in ops if isinstance(op, Reg)]


@pytest.mark.parametrize("cpu,line,dsts,srcs", FORMS, ids=[f"{c}-{ln[:40]}" for c, ln, _, _ in FORMS])
def test_form(cpu, line, dsts, srcs):
    if MC:
        r = subprocess.run(["llvm-mc-22", "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-o", "/dev/null"],
                           input=line + "\n", capture_output=True, text=True)
        assert r.returncode == 0 and "error" not in r.stderr, r.stderr
    m = parse(f"k:\n\t{line}\n", "k.s")
    assert not [d for d in m.diagnostics if d.severity == "error"], m.diagnostics
    i = m.functions[0].blocks[0].instrs[1]
    assert (regs(i.dsts), regs(i.srcs)) == (dsts, srcs)


@pytest.mark.skipif(not (LLC and IR), reason="llc-22 or shared/tools/llvm/ir not available")
@pytest.mark.parametrize("cpu", ["gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100"])
def test_llvm_output_parses_cleanly(cpu):
    """The shared IR (GEMM loops, LDS, barriers) compiled by llc-22: no diagnostic at all, the
    target read from the file, and every instruction in a function."""
    compiled = 0
    for ll in IR:
        r = subprocess.run(["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", str(ll), "-o", "-"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            continue  # IR written for another generation (gfx1250 intrinsics)
        compiled += 1
        m = parse(r.stdout, ll.name)
        assert not m.diagnostics, (ll.name, m.diagnostics[:3])
        assert m.target == cpu
        lines = {ln.span.line for ln in m.lines if ln.kind == "instruction"}
        assert lines == {i.line for f in m.functions for i in f.instructions() if not i.is_label}
    assert compiled >= 2
