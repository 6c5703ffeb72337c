"""Precision of the LDS address analysis on the code shapes of aiter's hand-written gfx1250
attention kernels (issue 14, round 2): the workgroup bounded by the VGPR allocation, a base
computed twice from the wave index (value numbering), ``s_cselect`` on the SCC of a bit test,
and registers swapped on a wave-uniform flag.  Each shape has a near miss that must stay
"may overlap"."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess

import pytest

from stinkywait_core.analysis.launch import LaunchInfo, launch_infos, resident_waves
from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.syntax.asm_parser import parse_asm

from lds_kernels import at, lds_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
HANDWRITTEN = os.path.join(HERE, "data", "aiter_gfx1250")
#: four waves of 32 (what 1024 VGPRs per wave allow on one gfx1250 WGP)
LAUNCH = LaunchInfo("gfx1250", 32, 2, 128)


def build(body: str, launch: LaunchInfo | None = LAUNCH):
    return lds_kernel(body, launch)[2:]


# --- the workgroup bounded by the VGPR allocation ---------------------------------------------

def _kernel_text(arch: str, vgprs: int | None, max_flat: int, wave32: int, extra: str = "") -> str:
    vg = f"\t.amdhsa_next_free_vgpr {vgprs}\n" if vgprs is not None else ""
    return (f'\t.amdgcn_target "amdgcn-amd-amdhsa--{arch}"\nk:\n{extra}  s_endpgm\n'
            f"\t.amdhsa_kernel k\n{vg}\t.amdhsa_wavefront_size32 {wave32}\n\t.end_amdhsa_kernel\n"
            f"\t.amdgpu_metadata\n---\namdhsa.kernels:\n  - .name: k\n    .symbol: k.kd\n"
            f"    .max_flat_workgroup_size: {max_flat}\n...\n\t.end_amdgpu_metadata\n")


@pytest.mark.parametrize("arch, vgprs, wave32, max_flat, expect", [
    ("gfx1250", 1024, 1, 1024, 128),   # one wave per SIMD, four SIMDs per WGP
    ("gfx1250", 256, 1, 1024, 512),
    ("gfx1250", 128, 1, 1024, 1024),   # eight per SIMD: the metadata's bound is the lower one
    ("gfx1250", 1024, 1, 64, 64),
    ("gfx1250", None, 1, 1024, 1024),  # no allocation given: no bound
    ("gfx942", 512, 0, 1024, 256),     # AGPRs count in next_free_vgpr: 512 of 512
    ("gfx1100", 1024, 1, 1024, 1024),  # a target not probed: no bound
])
def test_vgpr_allocation_bounds_the_workgroup(arch, vgprs, wave32, max_flat, expect):
    la = launch_infos(_kernel_text(arch, vgprs, max_flat, wave32))["k"]
    assert la.max_flat == expect


def test_dynamic_vgprs_give_no_bound():
    text = _kernel_text("gfx1250", 1024, 1024, 1, "  s_alloc_vgpr 64\n")
    assert launch_infos(text)["k"].max_flat == 1024
    assert resident_waves("gfx1250", 32, 1024, True) is None


@pytest.mark.skipif(shutil.which("llc-22") is None, reason="llc-22 not installed")
@pytest.mark.parametrize("arch, wave_size", [("gfx1250", 32), ("gfx942", 64), ("gfx950", 64), ("gfx90a", 64)])
def test_vgprs_per_simd_agree_with_llvm(arch, wave_size):
    """LLVM 22's occupancy for a kernel using 256 VGPRs is the table's VGPRs per SIMD / 256."""
    ir = ('define amdgpu_kernel void @k() {\n  call void asm sideeffect "v_mov_b32 v0, 0", "~{v255}"()\n'
          '  ret void\n}\n')
    out = subprocess.run(["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-o", "-"], input=ir,
                         capture_output=True, text=True, check=True).stdout
    occ = int(out.split("; Occupancy: ")[1].split()[0])
    assert resident_waves(arch, wave_size, 256, False) == 4 * occ


# --- the fmha base: s_and / s_cselect / s_lshr / s_mul, computed twice ----------------------------

#: the tensor fill's LDS base (``s101``, D# dword 1 in s57) and the DS base built again from the
#: same wave index into a VGPR, with the odd waves' buffers swapped in (fmha_fwd_bf16, lines
#: 290-302 and 387-403)
FMHA = """
    s_bfe_u32 s33, ttmp8, 0x50019
    s_and_b32 s36, s33, 1
    s_cselect_b32 s101, 0x23000, 0
    s_lshr_b32 s36, s33, 1
    s_mul_i32 s37, s36, 0x2200
    s_add_co_u32 s101, s37, s101
    s_mov_b32 s56, 1
    s_add_co_u32 s57, s101, 0x8800
    s_mov_b32 s58, 0
    s_mov_b32 s59, 0x80000000
    s_mov_b32 s60, 0x10000
    s_mov_b32 s61, 0x1000000
    s_mov_b32 s62, 0x100000
    s_mov_b32 s63, 0x400000
    s_mov_b32 s64, 0x11
    s_mov_b32 s65, 0
    s_mov_b32 s66, 0
    s_mov_b32 s67, 0
    tensor_load_to_lds s[56:59], s[60:67]        // @fill
    s_and_b32 s36, s33, 1
    v_and_b32 v2, v0, 15
    v_mul_u32_u24 v157, v2, 0x110
    v_add_nc_u32 v158, v157, {other}
    s_cbranch_scc0 .Lkeep
    v_swap_b32 v157, v158
.Lkeep:
    s_lshr_b32 s38, s33, 1
    s_mul_i32 s38, s38, 0x2200
    v_add_nc_u32 v159, s38, v157
    ds_load_b128 v[4:7], v159 offset:{off}      // @read
"""


def test_fmha_base_numbered_and_swapped_is_disjoint():
    # the fill: 0x23000*odd + 0x2200*half + 0x8800, 64 x 17 two-byte elements (0x880 bytes);
    # the read: 0x23000*odd + 0x2200*half + 0x110*lane (lane < 16) + 0x11000, 16 bytes: each
    # range alone spans both parities, only the difference of the two forms separates them
    f, facts = build(FMHA.format(other="0x23000", off="0x11000"))
    fill, read = at(f, "fill"), at(f, "read")
    assert facts.access(fill).pieces is not None
    assert not facts.may_overlap(fill, read, same_trip=True), facts.why_not_proven(fill, read, True)


def test_fmha_base_near_miss_overlaps():
    # the same read without the buffer offset lands on the odd waves' fill area
    f, facts = build(FMHA.format(other="0x23000", off="0x8800"))
    assert facts.may_overlap(at(f, "fill"), at(f, "read"), same_trip=True)
    # swapping in a buffer 0x8800 lower (instead of the other parity's) meets the odd fill
    f, facts = build(FMHA.format(other="0x1a800", off="0x11000"))
    assert facts.may_overlap(at(f, "fill"), at(f, "read"), same_trip=True)


def test_cselect_on_a_bit_test_is_exact():
    f, facts = build("""
        s_bfe_u32 s4, ttmp8, 0x50019
        s_and_b32 s5, s4, 1
        s_cselect_b32 s6, 0x1000, 0
        s_cmp_eq_u32 s5, 0
        s_cselect_b32 s7, 0x1000, 0
        v_mov_b32 v1, s6
        v_mov_b32 v2, s7
        ds_store_b32 v1, v3 offset:0x100      // @odd
        ds_load_b32 v4, v2 offset:0x100       // @even
        ds_load_b32 v5, v1 offset:0x100       // @same
    """)
    # s6 = 0x1000*odd and s7 = 0x1000*(1 - odd): never the same address in one wave
    assert not facts.may_overlap(at(f, "odd"), at(f, "even"))
    assert facts.may_overlap(at(f, "odd"), at(f, "same"))


def test_lane_reads_are_not_numbered_across_an_exec_change():
    # two v_readfirstlane of v0 read different lanes when EXEC changes between them
    f, facts = build("""
        v_readfirstlane_b32 s4, v0
        v_cmp_gt_u32 vcc_lo, 5, v0
        s_and_saveexec_b32 s2, vcc_lo
        v_readfirstlane_b32 s5, v0
        s_or_b32 exec_lo, exec_lo, s2
        s_lshl_b32 s4, s4, 2
        s_lshl_b32 s5, s5, 2
        v_mov_b32 v1, s4
        v_mov_b32 v2, s5
        ds_store_b32 v1, v3 offset:4          // @a
        ds_load_b32 v4, v2                    // @b
    """)
    assert facts.may_overlap(at(f, "a"), at(f, "b"))


def test_diamond_on_a_flag():
    f, facts = build("""
        s_bfe_u32 s4, ttmp8, 0x50019
        v_and_b32 v1, 15, v0
        v_lshlrev_b32 v1, 4, v1
        s_and_b32 s5, s4, 1
        s_cbranch_scc1 .Lodd
        v_add_nc_u32 v2, 0x4000, v1
        s_branch .Ljoin
    .Lodd:
        v_add_nc_u32 v2, 0x8000, v1
    .Ljoin:
        s_and_b32 s6, s4, 1
        s_mul_i32 s6, s6, 0x4000
        s_sub_co_u32 s7, 0x8000, s6
        v_mov_b32 v3, s7
        ds_store_b128 v3, v[4:7]              // @other
        ds_load_b128 v[8:11], v2              // @mine
    """)
    # mine: 0x4000 + 0x4000*odd + lanes; other: 0x8000 - 0x4000*odd: always the other buffer
    assert not facts.may_overlap(at(f, "other"), at(f, "mine"))


def test_fmha_fwd_bf16_fill_and_reads():
    """fmha_fwd_bf16 (hand-written, aiter): the K fill at line 777 and the Q reads at 726
    (v917 = the odd waves' swapped base) were a fallback pair; now proven apart."""
    path = os.path.join(HANDWRITTEN, "fmha_fwd_bf16__fmha_bf16_pertokenBf16_hd128_128x256.s.gz")
    with gzip.open(path, "rt") as fh:
        text = fh.read()
    m = parse_asm(text, "fmha_fwd_bf16.s")
    f = m.functions[0]
    facts = lds_facts(f, m)
    by = {i.line: i for b in f.blocks for i in b.instrs}
    assert facts.launch.max_flat == 128  # 1024 VGPRs per wave: four waves fit a WGP
    assert not facts.may_overlap(by[726], by[777], same_trip=True), facts.why_not_proven(by[726], by[777], True)


def test_bits_of_the_wave_index_enumerate_with_it():
    """fmha_v3_bwd's shape: a DS base scaled by the wave index w, a fill at 0x10000*(w & 1) +
    0x80*(w >> 1); as independent symbols the three would meet, as functions of w they do not."""
    body = """
        s_bfe_u32 s33, ttmp8, 0x50019
        s_and_b32 s4, s33, 1
        s_lshl_b32 s4, s4, 16
        s_lshr_b32 s5, s33, 1
        s_lshl_b32 s5, s5, 7
        s_add_co_u32 s6, s4, s5
        v_mov_b32 v1, s6
        ds_store_b128 v1, v[4:7]          // @fill
        s_lshl_b32 s7, s33, 16
        v_and_b32 v2, 7, v0
        v_lshlrev_b32 v2, 4, v2
        v_add_nc_u32 v2, s7, v2
        ds_load_b128 v[8:11], v2 offset:{off}   // @read
    """
    f, facts = build(body.format(off="0x100"))
    # w = 0..3: fill at 0, 0x10000, 0x80, 0x10080; read at 0x10000*w + 0x100 + [0, 0x80)
    assert not facts.may_overlap(at(f, "fill"), at(f, "read")), facts.why_not_proven(at(f, "fill"), at(f, "read"))
    f, facts = build(body.format(off="0"))
    assert facts.may_overlap(at(f, "fill"), at(f, "read"))  # wave 0 reads what it fills at 0
