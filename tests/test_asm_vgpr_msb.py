"""gfx1250 `s_set_vgpr_msb`: operands name the physical VGPRs (v0..v1023) per operand slot.

Checked three ways: against LLVM's own notes in real kernels (strip every ``/*vN*/`` note and
the physical registers must come back from the ``s_set_vgpr_msb`` lines alone), against
`llvm-objdump-22` (which prints the notes) on one instruction of every encoding family under
two modes that give each slot a different field, and on hand-made control flow.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.ir import Reg
from stinkywait_core.syntax import parse
from stinkywait_core.syntax.asm_vgpr_msb import DST, NO_SLOT, SRC0, SRC1, SRC2, vgpr_slots

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "asm"
NOTED = sorted(CORPUS.glob("aiter_gfx1250_*_final_isa.s")) + sorted(CORPUS.glob("llvm22-pairs/*.s")) \
    if CORPUS.is_dir() else []
NOTE = re.compile(r"[ \t]*/\*\s*v(?:\d+|\[\d+:\d+\])\s*\*/")
LLVM = shutil.which("llvm-mc-22") is not None and shutil.which("llvm-objdump-22") is not None


def insts(m):
    return [i for f in m.functions for i in f.instructions() if not i.is_label]


def regs(ops) -> list[tuple[str, int, int]]:
    return [(op.kind, op.lo, op.hi) for op in ops if isinstance(op, Reg)]


def one_kernel(body: str) -> str:
    return "k:\n" + "".join(f"\t{line}\n" for line in body.strip().splitlines())


# --- the case, end to end ---------------------------------------------------------------

def test_a_load_into_a_high_vgpr_is_not_read_by_the_low_one():
    """issue 11 item 10: `global_load_b32 v1` under dst field 1 writes v257; `v_mov_b32 v2, v1`
    under mode 0 reads v1: no RAW, no wait.  With src0 field 1 it reads v257: a wait."""
    def source(second: str) -> str:
        return one_kernel(f"s_set_vgpr_msb 0x40\nglobal_load_b32 v1, v0, s[0:1]\ns_set_vgpr_msb {second}\n"
                          "v_mov_b32 v2, v1\ns_endpgm")
    m = parse(source("0x4000"), "k.s")
    load, mov = insts(m)[1], insts(m)[3]
    assert regs(load.dsts) == [("v", 257, 257)] and regs(load.srcs)[0] == ("v", 0, 0)
    assert regs(mov.srcs) == [("v", 1, 1)]
    assert load.text == "global_load_b32 v1, v0, s[0:1]"  # the printer's text is untouched
    assert not analyze(source("0x4000"), "k.s").waits()
    waits = analyze(source("0x4001"), "k.s").waits()
    assert [(w.line, w.instruction) for w in waits] == [(5, "s_wait_loadcnt 0")]


# --- LLVM's notes in real kernels ----------------------------------------------------------------

@pytest.mark.skipif(not NOTED, reason="shared corpus not available")
@pytest.mark.parametrize("path", NOTED, ids=lambda p: p.name)
def test_notes_are_recovered_from_the_mode(path):
    text = path.read_text()
    noted, bare = parse(text, str(path)), parse(NOTE.sub("", text), str(path))
    a, b = insts(noted), insts(bare)
    assert len(a) == len(b)
    high = 0
    for x, y in zip(a, b):
        assert (x.line, x.dsts, x.srcs) == (y.line, y.dsts, y.srcs), x.text
        high += any(k == "v" and lo >= 256 for k, lo, _ in regs(x.dsts) + regs(x.srcs))
    assert high > 100  # the kernels really use VGPRs above v255
    assert not [d for d in noted.diagnostics + bare.diagnostics if d.code == "asm-vgpr-msb"]


# --- llvm-objdump-22 on every encoding family ------------------------------------------------------

#: one instruction per operand shape (gfx1250); all assemble with llvm-mc-22 -mcpu=gfx1250
FORMS = """
v_fma_f32 v1, v2, v3, v4
v_fmac_f32_e32 v1, v2, v3
v_fmamk_f32 v1, v2, 0x1234, v3
v_fmaak_f32 v1, v2, v3, 0x1234
v_swap_b32 v1, v2
v_readlane_b32 s1, v2, s3
v_writelane_b32 v1, s2, s3
v_readfirstlane_b32 s1, v2
v_cndmask_b32_e32 v1, v2, v3, vcc_lo
v_add_co_u32 v1, vcc_lo, v2, v3
v_add_co_ci_u32_e64 v1, s4, v2, v3, s5
v_mad_co_u64_u32 v[2:3], s4, v4, v5, v[6:7]
v_mad_u64_u32 v[2:3], null, v4, v5, v[6:7]
v_div_scale_f32 v1, vcc_lo, v2, v3, v4
v_cmp_eq_u32_e32 vcc_lo, v1, v2
v_cmp_eq_u32_e64 s4, v1, v2
v_cmpx_eq_u32_e32 v1, v2
v_add_f32_dpp v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_mov_b32_e64_dpp v1, v2 dpp8:[7,6,5,4,3,2,1,0]
v_permlane16_b32 v1, v2, s3, s4
v_pk_fma_f32 v[2:3], v[4:5], v[6:7], v[8:9]
v_lshlrev_b64_e32 v[2:3], 2, v[4:5]
v_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[24:31]
v_swmmac_f32_16x16x64_bf16 v[0:7], v[8:15], v[16:31], v32
v_wmma_scale_f32_16x16x128_f8f6f4 v[80:87], v[88:95], v[0:15], v[80:87], v74, v70 matrix_a_fmt:MATRIX_FMT_FP4
v_wmma_ld_scale_paired_b32 v1, v2
v_dual_fmac_f32 v1, v2, v3 :: v_dual_mul_f32 v4, v5, v6
v_dual_mul_f32 v1, v2, v3 :: v_dual_fmamk_f32 v4, v5, 0x1234, v6
v_dual_fma_f32 v1, v2, v3, v4 :: v_dual_fma_f32 v6, v7, v8, v9
v_dual_mov_b32 v80, 0 :: v_dual_bitop2_b32 v112, 15, v0 bitop3:0x40
ds_load_b32 v1, v2 offset:16
ds_store_b32 v1, v2
ds_store_2addr_b32 v1, v2, v3 offset1:1
ds_load_2addr_b32 v[2:3], v1 offset1:1
ds_add_u32 v1, v2
ds_cmpstore_rtn_b32 v1, v2, v3, v4
ds_bpermute_b32 v1, v2, v3
ds_swizzle_b32 v1, v2 offset:swizzle(BROADCAST,2,0)
ds_append v1
ds_load_addtid_b32 v1
ds_store_addtid_b32 v1
ds_load_tr16_b128 v[4:7], v1
ds_atomic_async_barrier_arrive_b64 v1
ds_atomic_barrier_arrive_rtn_b64 v[2:3], v1, v[4:5]
global_load_b32 v1, v2, s[0:1]
global_load_b32 v1, v[2:3], off
global_store_b32 v1, v2, s[0:1]
global_atomic_add_u32 v1, v2, s[0:1]
global_atomic_add_u32 v1, v2, v3, s[0:1] th:TH_ATOMIC_RETURN
global_atomic_cmpswap_b32 v1, v2, v[4:5], s[0:1] th:TH_ATOMIC_RETURN
global_load_async_to_lds_b32 v1, v2, s[0:1]
global_store_async_from_lds_b32 v1, v2, s[0:1]
global_load_tr_b128 v[4:7], v2, s[0:1]
global_load_block v[8:39], v2, s[0:1]
global_store_block v2, v[8:39], s[0:1]
global_prefetch_b8 v2, s[0:1]
global_load_addtid_b32 v1, s[0:1]
global_store_addtid_b32 v1, s[0:1]
flat_load_b32 v1, v[2:3]
flat_store_b32 v[2:3], v1
flat_atomic_add_u32 v1, v[2:3], v3 th:TH_ATOMIC_RETURN
scratch_load_b32 v1, v2, off
scratch_load_b32 v1, off, s0
scratch_store_b32 v2, v1, off
scratch_store_b32 off, v1, s0
buffer_load_b32 v1, v2, s[0:3], null offen
buffer_load_b32 v1, v[2:3], s[0:3], null idxen offen
buffer_store_b32 v1, v2, s[0:3], null offen
buffer_atomic_add_u32 v1, v2, s[0:3], null offen th:TH_ATOMIC_RETURN
buffer_atomic_cmpswap_b32 v[4:5], v2, s[0:3], null offen
cluster_load_b128 v[4:7], v2, s[0:1]
cluster_load_async_to_lds_b32 v1, v2, s[0:1]
tensor_load_to_lds s[0:3], s[4:11]
""".strip().splitlines()
#: src0=0 src1=1 src2=2 dst=3, and the reverse: every slot gets a different field in each
MODES = (0xE4, 0x1B)


def objdump_notes(source: str, tmp_path: Path) -> list[str]:
    """The disassembly of `source`, one instruction per line, with LLVM's VGPR notes."""
    (tmp_path / "t.s").write_text(source)
    subprocess.run(["llvm-mc-22", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-filetype=obj",
                    str(tmp_path / "t.s"), "-o", str(tmp_path / "t.o")], check=True, capture_output=True)
    out = subprocess.run(["llvm-objdump-22", "-d", "--mcpu=gfx1250", str(tmp_path / "t.o")], check=True,
                         capture_output=True, text=True).stdout
    lines = [re.sub(r"\s*//\s*[0-9A-F]{12}:.*$", "", ln) for ln in out.splitlines() if ln.startswith("\t")]
    return [ln for ln in lines if "s_set_vgpr_msb" not in ln]


@pytest.mark.skipif(not LLVM, reason="llvm-mc-22 / llvm-objdump-22 not installed")
def test_operand_slots_match_llvm_objdump(tmp_path):
    """Our physical VGPRs for the plain text (modes from s_set_vgpr_msb) equal the registers
    llvm-objdump-22's notes name (read by the note path alone: no s_set_vgpr_msb in that file)."""
    corpus = []
    for p in NOTED[:2]:
        corpus += [NOTE.sub("", ln).split("//")[0].strip() for ln in p.read_text().splitlines()
                   if re.match(r"\s+(v_|ds_|global_|buffer_|scratch_|flat_)", ln)][:400]
    forms = FORMS + corpus
    source = "".join(f"\ts_set_vgpr_msb 0x{mode:x}\n\t{f}\n" for f in forms for mode in MODES)
    ours = insts(parse(source, "t.s"))[1::2]
    theirs = insts(parse("".join(ln + "\n" for ln in objdump_notes(source, tmp_path)), "d.s"))
    assert len(ours) == len(theirs) == 2 * len(forms)
    for a, b in zip(ours, theirs):
        assert (regs(a.dsts), regs(a.srcs)) == (regs(b.dsts), regs(b.srcs)), (a.text, b.text)
    # the modes really moved registers: every VGPR operand of the first form is above v255 once
    assert any(lo >= 512 for _, lo, _ in regs(ours[0].srcs))


def test_slot_table_shapes():
    assert vgpr_slots("v_fma_f32", 4, 1, -1) == (DST, SRC0, SRC1, SRC2)
    assert vgpr_slots("v_add_co_u32", 4, 2, -1) == (DST, NO_SLOT, SRC0, SRC1)  # the carry out takes none
    assert vgpr_slots("v_cmpx_eq_u32_e32", 2, 0, -1) == (SRC0, SRC1)
    assert vgpr_slots("buffer_store_b32", 4, 0, -1) == (DST, SRC0, NO_SLOT, NO_SLOT)  # data: the dst field
    assert vgpr_slots("ds_store_addtid_b32", 1, 0, -1) == (SRC1,)
    assert vgpr_slots("global_load_async_to_lds_b32", 3, 0, -1) == (DST, SRC0, SRC1)
    assert vgpr_slots("v_dual_mul_f32", 6, 1, 3) == (DST, SRC0, SRC1, DST, SRC0, SRC1)
    assert vgpr_slots("s_mov_b32", 2, 1, -1) == (NO_SLOT, NO_SLOT)


# --- the mode along the CFG -----------------------------------------------------------------------

def test_the_mode_survives_branches_and_loops():
    m = parse(one_kernel("""
s_set_vgpr_msb 0x41
.LBB0_1:
v_add_f32_e32 v1, v2, v3
s_cbranch_scc1 .LBB0_1
v_mov_b32 v5, v6
s_set_vgpr_msb 0x4100
s_endpgm"""), "k.s")
    add, _, mov = insts(m)[1:4]
    assert regs(add.dsts) == [("v", 257, 257)] and regs(add.srcs) == [("v", 258, 258), ("v", 3, 3)]
    assert regs(mov.dsts) == [("v", 261, 261)] and regs(mov.srcs) == [("v", 262, 262)]
    assert not m.diagnostics


def test_paths_with_different_modes_are_a_warning():
    m = parse(one_kernel("""
s_cbranch_scc1 .LBB0_2
s_set_vgpr_msb 0x40
.LBB0_2:
v_mov_b32 v1, v2
s_endpgm"""), "k.s")
    mov = insts(m)[2]
    assert regs(mov.dsts) == [("v", 257, 257)]  # the fall-through path's mode
    (d,) = [d for d in m.diagnostics if d.code == "asm-vgpr-msb"]
    assert "0x0, 0x40" in d.message and d.line == 4


def test_a_call_returns_with_the_mode_cleared():
    m = parse(one_kernel("""
s_set_vgpr_msb 0x40
s_swap_pc_i64 s[30:31], s[4:5]
v_mov_b32 v1, v2
s_endpgm"""), "k.s")
    assert regs(insts(m)[2].dsts) == [("v", 1, 1)]


def test_setreg_of_mode_writes_the_msbs_on_gfx1250():
    """MODE[19:12] holds the MSBs as dst, src0, src1, src2: 0x1 << 12 is dst field 1."""
    body = "s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 12, 8), 0x1\nv_mov_b32 v1, v2\ns_endpgm"
    m = parse('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n' + one_kernel(body), "k.s")
    assert regs(insts(m)[1].dsts) == [("v", 257, 257)] and regs(insts(m)[1].srcs) == [("v", 2, 2)]
    m = parse('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n' + one_kernel(body), "k.s")
    assert regs(insts(m)[1].dsts) == [("v", 1, 1)]  # other targets: MODE[19:12] is something else


def test_an_unknown_mode_and_a_stale_note_are_warnings():
    m = parse(one_kernel("s_set_vgpr_msb sym\nv_mov_b32 v1, v2\ns_endpgm"), "k.s")
    assert any("not a constant" in d.message for d in m.diagnostics)
    m = parse(one_kernel("s_set_vgpr_msb 0x40\nv_mov_b32 v1 /*v513*/, v2\ns_endpgm"), "k.s")
    assert regs(insts(m)[1].dsts) == [("v", 257, 257)]  # the hardware reads the mode, not the comment
    assert any("noted as v513 but reads v257" in d.message for d in m.diagnostics)
    m = parse(one_kernel("v_mov_b32 v1 /*v513*/, v2\ns_endpgm"), "k.s")  # no mode in the file: notes rule
    assert regs(insts(m)[0].dsts) == [("v", 513, 513)] and not m.diagnostics


# --- incremental re-parse ---------------------------------------------------------------------------

def test_editing_the_mode_rereads_the_registers_after_it():
    text = one_kernel("s_set_vgpr_msb 0x40\nv_mov_b32 v1, v2\ns_nop 0\nv_mov_b32 v3, v4\ns_endpgm")
    m1 = parse(text, "k.s")
    nop1 = insts(m1)[2]
    m2 = parse(text.replace("0x40", "0x41"), "k.s", previous=m1)
    fresh = parse(text.replace("0x40", "0x41"), "k.s")
    assert [(i.dsts, i.srcs) for i in insts(m2)] == [(i.dsts, i.srcs) for i in insts(fresh)]
    assert regs(insts(m2)[3].srcs) == [("v", 260, 260)]
    assert insts(m2)[2] is nop1  # nothing of it changed: the same object
    m3 = parse(text.replace("\ts_set_vgpr_msb 0x40\n", ""), "k.s", previous=m2)  # the mode goes away
    assert regs(insts(m3)[0].dsts) == [("v", 1, 1)] and regs(insts(m3)[2].srcs) == [("v", 4, 4)]


@pytest.mark.skipif(not NOTED, reason="shared corpus not available")
@pytest.mark.parametrize("seed", range(3))
def test_random_mode_edits_match_a_fresh_parse(seed):
    """Edits of mode setters, of noted and of plain lines in the real kernel, re-parsed from the
    previous version: everything (operands, warnings) is what a fresh parse gives."""
    import random

    from test_asm_incremental import check_step

    rng = random.Random(seed)
    path = NOTED[1]  # gemm2: 1,184 lines, 45 mode setters
    lines = path.read_text().split("\n")
    insts = [k for k, ln in enumerate(lines) if ln.startswith("\tv_") or ln.startswith("\tds_")]
    pool = ["\ts_set_vgpr_msb 0x41", "\ts_set_vgpr_msb 0", "\ts_set_vgpr_msb 0x4055", "\tv_mov_b32 v1, v2",
            "\tv_mov_b32 v1 /*v257*/, v2", "\tds_load_b32 v3, v4"]
    prev = parse("\n".join(lines), str(path))
    for _ in range(8):
        k = rng.choice(insts)
        kind = rng.choice(["replace", "insert", "delete", "note"])
        if kind == "replace":
            lines[k] = rng.choice(pool)
        elif kind == "insert":
            lines.insert(k, rng.choice(pool))
        elif kind == "delete":
            del lines[k]
        else:
            lines[k] = NOTE.sub("", lines[k])
        insts = [j for j, ln in enumerate(lines) if ln.startswith("\tv_") or ln.startswith("\tds_")]
        prev = check_step(prev, "\n".join(lines), str(path))[0]
        assert prev.target_info == parse("\n".join(lines), str(path)).target_info
