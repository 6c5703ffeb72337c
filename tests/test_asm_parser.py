"""Tests of the AMDGPU assembly front end: line table, operands, layouts, waits, CFG, corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from stinkywait_core.diagnostics import ERROR, WARNING
from stinkywait_core.ir import FloatImm, Imm, Instruction, Reg, Span, Special, Str
from stinkywait_core.syntax import parse
from stinkywait_core.syntax.asm_parser import (LINE_KINDS, AsmLine, Symbols, decode_legacy_waitcnt, eval_expr,
                                               parse_asm, parse_line, split_lines)

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "asm"
CORPUS_FILES = sorted(CORPUS.glob("*.s")) + sorted(CORPUS.glob("llvm22-pairs/*.s")) if CORPUS.is_dir() else []
SCC = Reg("SCC", 0, 0)


def one(line: str) -> Instruction:
    """Parse `line` as the only instruction of a file and return it."""
    m = parse_asm(line + "\n", "t.s")
    errors = [d for d in m.diagnostics if d.severity == ERROR]
    assert not errors, errors
    insts = [i for f in m.functions for i in f.instructions() if not i.is_label]
    assert len(insts) == 1, insts
    return insts[0]


def texts(ops) -> list[str]:
    return [op.text() for op in ops]


def regs(ops) -> list[tuple[str, int, int]]:
    return [(op.kind, op.lo, op.hi) for op in ops if isinstance(op, Reg)]


# --- line table ------------------------------------------------------------------------------

def test_line_kinds_and_exact_text():
    src = ("\t.text\n"
           "k:\n"
           "// a comment\n"
           "\n"
           "\ts_nop 0  ; trailing\n"
           "# hash comment\n"
           "\t.amdhsa_kernel k\n"
           "\t\t.amdhsa_next_free_vgpr 8\n"
           "\t.end_amdhsa_kernel\n"
           "\tv_mov_b32 v1, (\n")
    m = parse_asm(src, "t.s")
    kinds = [ln.kind for ln in m.lines]
    assert kinds == ["directive", "label", "comment", "blank", "instruction", "comment",
                     "directive", "verbatim", "directive", "error"]
    assert all(isinstance(ln, AsmLine) for ln in m.lines)
    assert set(kinds) | {"verbatim"} == set(LINE_KINDS)
    assert [ln.text for ln in m.lines] == src.split("\n")[:-1]
    assert m.lines[4].span.line == 5 and m.lines[4].span.end_col == len("\ts_nop 0  ; trailing") + 1
    assert m.lines[4].indent == "\t"
    assert m.lines[4].instruction is not None and m.lines[4].instruction.mnemonic == "s_nop"
    assert m.lines[1].label == "k" and m.lines[1].label_span == Span(2, 1, 2, 2)
    assert m.lines[0].directive == ".text"


def test_instruction_span_and_text_exclude_comment():
    m = parse_asm("k:\n    ds_load_b128 v[0:3], v16 offset:32   // load A\n", "t.s")
    i = m.lines[1].instruction
    assert i is not None
    assert i.text == "ds_load_b128 v[0:3], v16 offset:32"
    assert (i.span.line, i.span.col, i.span.end_line, i.span.end_col) == (2, 5, 2, 5 + len(i.text))
    assert i.comment == "load A"
    assert i.suffix == "offset:32"


def test_multiline_block_comment_and_inline_comment():
    src = "k:\n/* start\n s_nop 0\n end */ s_nop 1\n\tv_mov_b32 v1, /* x */ v2\n"
    m = parse_asm(src, "t.s")
    assert [ln.kind for ln in m.lines] == ["label", "comment", "comment", "instruction", "instruction"]
    assert m.lines[3].instruction.srcs == [Imm(1, "1")]
    assert texts(m.lines[4].instruction.srcs) == ["v2"]


def test_split_lines_newline_styles():
    assert split_lines("a\r\nb\rc\nd") == ["a", "b", "c", "d"]
    assert split_lines("a\n") == ["a"]
    assert split_lines("") == []
    assert split_lines("\n\n") == ["", ""]


def test_dispatcher_routes_s_files_here():
    m = parse("s_nop 0\n", "x.s")
    assert m.kind == "asm" and m.functions[0].name == "x"


# --- operands ------------------------------------------------------------------------------

def test_register_forms():
    i = one("v_fma_f32 v1, -v2, |v3|, s[4:5]")
    assert i.dsts == [Reg("v", 1, 1, False, "v1")]
    assert i.srcs[0] == Reg("v", 2, 2, True, "-v2")
    assert i.srcs[1] == Reg("v", 3, 3, False, "|v3|")
    assert regs(i.srcs) == [("v", 2, 2), ("v", 3, 3), ("s", 4, 5)]


def test_named_registers():
    i = one("s_and_b64 s[6:7], vcc, exec")
    assert regs(i.srcs) == [("vcc", 0, 1), ("exec", 0, 1)]
    i = one("s_mov_b32 m0, ttmp6")
    assert regs(i.dsts)[0] == ("m", 0, 0) and regs(i.srcs) == [("ttmp", 6, 6)]
    i = one("v_mfma_f32_16x16x32_fp8_fp8 v[56:59], acc[0:1], a[64:65], 0")
    assert regs(i.srcs) == [("a", 0, 1), ("a", 64, 65)]


def test_immediates_keep_spelling():
    i = one("s_mov_b32 s6, 0x1ffffff")
    assert i.srcs == [Imm(0x1FFFFFF, "0x1ffffff")]
    i = one("v_add_f32_e32 v21, 1.0, v14")
    assert i.srcs[0] == FloatImm(1.0, "1.0")
    i = one("s_getreg_b32 s2, hwreg(HW_REG_IB_STS2, 6, 4)")
    assert i.srcs == [Special("hwreg(HW_REG_IB_STS2, 6, 4)")]
    i = one("s_mov_b32 s0, 4 + 8")
    assert i.srcs == [Imm(12, "4 + 8")]
    i = one("global_load_b128 v[0:3], v[4:5], off")
    assert i.srcs[-1] == Special("off")


def test_set_symbols_resolve_register_ranges():
    src = ".set sgprA, 10\n.set vgprB, sgprA*2\nk:\n s_load_b64 s[sgprA:sgprA+1], s[0:1], 0x0\n v_mov_b32 v[vgprB], 0\n"
    m = parse_asm(src, "t.s")
    assert not m.diagnostics
    a, b = [i for i in m.functions[0].instructions() if not i.is_label]
    assert a.dsts == [Reg("s", 10, 11, False, "s[sgprA:sgprA+1]")]
    assert regs(b.dsts) == [("v", 20, 20)]


def test_gas_assignment_defines_symbol():
    m = parse_asm("x = 4\nk:\n v_mov_b32 v[x:x+1], 0\n", "t.s")
    assert regs(m.lines[2].instruction.dsts) == [("v", 4, 5)]


def test_commas_between_operands_are_optional():
    i = one("s_cmp_gt_i32  s40 1")
    assert i.srcs == [Reg("s", 40, 40, False, "s40"), Imm(1, "1")]
    i = one("s_mov_b32 s0 -1")
    assert i.srcs == [Imm(-1, "-1")]


def test_modifier_with_spaced_expression_stays_in_suffix():
    i = one("buffer_load_dwordx4  acc[0:3],   v4, s[20:23], 0 offen offset: 0x400 * 1 ")
    assert i.suffix == "offen offset: 0x400 * 1"
    assert regs(i.dsts) == [("a", 0, 3)]


def test_vgpr_msb_annotation_gives_physical_register():
    i = one("ds_load_b128 v[106:109] /*v[362:365]*/, v93 /*v349*/ offset:512")
    assert i.dsts == [Reg("v", 362, 365, False, "v[106:109]")]
    assert i.srcs == [Reg("v", 349, 349, False, "v93")]
    assert i.suffix == "offset:512"


def test_relocation_expression_is_special():
    i = one("s_add_u32 s2, s2, sym@rel32@lo+4")
    assert i.srcs[1] == Special("sym@rel32@lo+4")


# --- dst/src split per encoding class --------------------------------------------------------

LAYOUTS = [
    # (line, dst regs, src regs)
    ("global_load_b128 v[0:3], v[4:5], off", [("v", 0, 3)], [("v", 4, 5)]),
    ("buffer_load_b32 v1, v2, s[4:7], null offen", [("v", 1, 1)], [("v", 2, 2), ("s", 4, 7), ("null", 0, 0)]),
    ("global_store_b128 v[4:5], v[0:3], off", [], [("v", 4, 5), ("v", 0, 3)]),
    ("buffer_load_dword v3, s[16:19], 0 offen lds", [], [("v", 3, 3), ("s", 16, 19)]),
    ("ds_load_b128 v[20:23], v10 offset:64", [("v", 20, 23)], [("v", 10, 10)]),
    ("ds_read_b64 v[20:21], v10", [("v", 20, 21)], [("v", 10, 10)]),
    ("ds_store_b128 v10, v[20:23]", [], [("v", 10, 10), ("v", 20, 23)]),
    ("ds_write_b64 v135, v[66:67]", [], [("v", 135, 135), ("v", 66, 67)]),
    ("ds_bpermute_b32 v1, v2, v3", [("v", 1, 1)], [("v", 2, 2), ("v", 3, 3)]),
    ("ds_swizzle_b32 v1, v2 offset:swizzle(SWAP,16)", [("v", 1, 1)], [("v", 2, 2)]),
    ("ds_add_u32 v1, v2", [], [("v", 1, 1), ("v", 2, 2)]),
    ("ds_add_rtn_u32 v0, v1, v2", [("v", 0, 0)], [("v", 1, 1), ("v", 2, 2)]),
    ("s_load_b64 s[4:5], s[0:1], 0xf0 nv", [("s", 4, 5)], [("s", 0, 1)]),
    ("s_buffer_load_dword s4, s[8:11], 0x10", [("s", 4, 4)], [("s", 8, 11)]),
    ("global_atomic_add_u32 v1, v2, s[0:1]", [], [("v", 1, 1), ("v", 2, 2), ("s", 0, 1)]),
    ("global_atomic_add_u32 v0, v1, v2, s[0:1] th:TH_ATOMIC_RETURN", [("v", 0, 0)],
     [("v", 1, 1), ("v", 2, 2), ("s", 0, 1)]),
    # MUBUF: the data register also receives the pre-op value (RETURN_DATA = VDATA)
    ("buffer_atomic_add v0, v1, s[0:3], 0 offen glc", [("v", 0, 0)], [("v", 1, 1), ("s", 0, 3), ("v", 0, 0)]),
    ("global_atomic_add_f32 v0, v[2:3], v4, off sc0", [("v", 0, 0)], [("v", 2, 3), ("v", 4, 4)]),
    ("buffer_atomic_pk_add_bf16 v66, v0, s[0:3], 0 offen", [], [("v", 66, 66), ("v", 0, 0), ("s", 0, 3)]),
    ("tensor_load_to_lds s[0:3], s[8:15], s[16:19], s[20:23]", [],
     [("s", 0, 3), ("s", 8, 15), ("s", 16, 19), ("s", 20, 23)]),
    ("global_load_async_to_lds_b128 v1, v[2:3], off", [], [("v", 1, 1), ("v", 2, 3)]),
    ("global_store_async_from_lds_b128 v[2:3], v1, off", [], [("v", 2, 3), ("v", 1, 1)]),
    ("v_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[0:7]", [("v", 0, 7)],
     [("v", 8, 15), ("v", 16, 23), ("v", 0, 7)]),
    ("v_mfma_f32_16x16x128_f8f6f4 v[214:217], v[34:41], v[2:9], 0", [("v", 214, 217)], [("v", 34, 41), ("v", 2, 9)]),
    ("v_swmmac_f32_16x16x64_bf16 v[0:7], v[8:15], v[16:31], v32", [("v", 0, 7)],
     [("v", 8, 15), ("v", 16, 31), ("v", 32, 32)]),
    ("v_add_f32_e32 v1, v2, v3", [("v", 1, 1)], [("v", 2, 2), ("v", 3, 3)]),
    ("s_mov_b32 s10, 0", [("s", 10, 10)], []),
    ("v_cmp_gt_i32_e32 vcc_lo, 1, v1", [("vcc", 0, 0)], [("v", 1, 1)]),
    ("v_cmp_ne_u32_e64 s[2:3], 1, v2", [("s", 2, 3)], [("v", 2, 2)]),
    ("v_cmp_gt_i32_e32 1, v1", [("vcc", 0, 1)], [("v", 1, 1)]),
    ("v_cmpx_gt_i32_e32 1, v1", [("exec", 0, 1)], [("v", 1, 1)]),
    ("v_add_co_u32 v0, vcc_lo, v1, v2", [("v", 0, 0), ("vcc", 0, 0)], [("v", 1, 1), ("v", 2, 2)]),
    ("v_mad_u64_u32 v[2:3], s[10:11], s4, v3, v[2:3]", [("v", 2, 3), ("s", 10, 11)],
     [("s", 4, 4), ("v", 3, 3), ("v", 2, 3)]),
    ("v_dual_mov_b32 v1, v2 :: v_dual_add_f32 v3, v4, v5", [("v", 1, 1), ("v", 3, 3)],
     [("v", 2, 2), ("v", 4, 4), ("v", 5, 5)]),
    ("v_fmac_f32 v64, v56, v224", [("v", 64, 64)], [("v", 56, 56), ("v", 224, 224), ("v", 64, 64)]),
    ("v_swap_b32 v1, v2", [("v", 1, 1), ("v", 2, 2)], [("v", 1, 1), ("v", 2, 2)]),
    ("s_cmp_eq_u32 s2, 0", [("SCC", 0, 0)], [("s", 2, 2)]),
    ("s_bitcmp1_b32 s19, 6", [("SCC", 0, 0)], [("s", 19, 19)]),
    ("s_cselect_b32 s64, ttmp9, s3", [("s", 64, 64)], [("ttmp", 9, 9), ("s", 3, 3), ("SCC", 0, 0)]),
    ("s_add_u32 s36, s10, s7", [("s", 36, 36), ("SCC", 0, 0)], [("s", 10, 10), ("s", 7, 7)]),
    ("s_addc_u32 s37, s11, s20", [("s", 37, 37), ("SCC", 0, 0)], [("s", 11, 11), ("s", 20, 20), ("SCC", 0, 0)]),
    ("s_and_b32 s3, ttmp6, 15", [("s", 3, 3), ("SCC", 0, 0)], [("ttmp", 6, 6)]),
    ("s_mul_i32 s6, ttmp9, s2", [("s", 6, 6)], [("ttmp", 9, 9), ("s", 2, 2)]),
    ("s_addk_co_i32 s70, 0x800", [("s", 70, 70), ("SCC", 0, 0)], [("s", 70, 70)]),
    ("s_cbranch_scc1 k", [], [("SCC", 0, 0)]),
    ("s_cbranch_vccnz k", [], [("vcc", 0, 1)]),
    ("s_cbranch_execz k", [], [("exec", 0, 1)]),
    ("s_and_saveexec_b64 s[0:1], vcc", [("s", 0, 1), ("SCC", 0, 0), ("exec", 0, 1)], [("vcc", 0, 1), ("exec", 0, 1)]),
    ("s_set_vgpr_msb 0x4005", [], []),
    ("s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 1", [], []),
    ("s_getpc_b64 s[2:3]", [("s", 2, 3)], []),
    ("s_setpc_b64 s[30:31]", [], [("s", 30, 31)]),
    ("my_macro v1, v2", [], [("v", 1, 1), ("v", 2, 2)]),
    ("v_made_up_op v7, v8", [("v", 7, 7)], [("v", 8, 8)]),
]


@pytest.mark.parametrize("line,dsts,srcs", LAYOUTS, ids=[x[0].split()[0] + str(i) for i, x in enumerate(LAYOUTS)])
def test_dst_src_split(line, dsts, srcs):
    m = parse_asm(f"k:\n\t{line}\n", "t.s")
    assert not [d for d in m.diagnostics if d.severity == ERROR], m.diagnostics
    i = m.lines[1].instruction
    assert regs(i.dsts) == dsts
    assert regs(i.srcs) == srcs


def test_barrier_signal_keeps_minus_one_first():
    i = one("s_barrier_signal -1")
    assert i.srcs[0] == Imm(-1, "-1") and i.first_literal() == -1
    i = one("s_barrier_wait -3")
    assert i.srcs == [Imm(-3, "-3")]


def test_suffix_kept_verbatim():
    i = one("global_prefetch_b8 v[16:17], off offset:-64 scope:SCOPE_SE")
    assert i.suffix == "offset:-64 scope:SCOPE_SE"
    i = one("v_pk_add_f32 v[12:13], v[12:13], 1.0 op_sel_hi:[1,0] neg_lo:[0,1]")
    assert i.suffix == "op_sel_hi:[1,0] neg_lo:[0,1]"
    i = one("v_xor_b32_sdwa v3, v232, sext(v5) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:WORD_0")
    assert regs(i.srcs) == [("v", 232, 232), ("v", 5, 5)]
    assert i.suffix.startswith("dst_sel:DWORD") and i.suffix.endswith("src1_sel:WORD_0")
    i = one("global_inv scope:SCOPE_SE")
    assert i.srcs == [] and i.suffix == "scope:SCOPE_SE"


# --- memtokens and waits -------------------------------------------------------------------

def test_memtoken_annotation():
    i = one("ds_load_b128 v[0:3], v16 offset:0  // st.token:0")
    assert i.mods["memtoken"].fields == {"tokens": [0]} and i.tokens == (0,)
    i = one("s_barrier_signal -1  // load A // st.token:0,1")
    assert i.tokens == (0, 1) and i.comment == "load A //"
    i = one("tensor_load_to_lds s[0:3], s[8:15]")
    assert i.tokens is None


def test_memtoken_malformed_and_misplaced_warn():
    m = parse_asm("k:\n s_nop 0 // st.token:x\n// st.token:1\n", "t.s")
    codes = [(d.severity, d.code, d.line) for d in m.diagnostics]
    assert codes == [(WARNING, "asm-memtoken", 2), (WARNING, "asm-memtoken", 3)]
    assert m.lines[1].instruction.tokens is None


def test_gfx12_waits_are_literals():
    i = one("s_wait_dscnt 0x0")
    assert i.srcs == [Imm(0, "0x0")] and i.dsts == []
    i = one("s_wait_loadcnt_dscnt 0x102")
    assert i.srcs == [Imm(0x102, "0x102")]


def test_legacy_waitcnt_modifier():
    i = one("s_waitcnt vmcnt(3) lgkmcnt(1)")
    assert i.srcs == [Special("vmcnt(3)"), Special("lgkmcnt(1)")]
    assert i.mods["swaitcnt"].fields == {"vlcnt": 3, "vscnt": -1, "dlcnt": 1, "dscnt": -1, "kmcnt": 1}
    i = one("s_waitcnt 0")
    assert i.srcs == [Special("0")] and i.first_literal() is None
    assert i.mods["swaitcnt"].fields == {"vlcnt": 0, "vscnt": -1, "dlcnt": 0, "dscnt": -1, "kmcnt": 0}
    i = one("s_waitcnt expcnt(0)")
    assert i.mods["swaitcnt"].fields == {"vlcnt": -1, "vscnt": -1, "dlcnt": -1, "dscnt": -1, "kmcnt": -1}
    i = one("s_waitcnt_vscnt null, 0x0")
    assert i.mods["swaitcnt"].fields["vscnt"] == 0


def test_decode_legacy_waitcnt():
    assert decode_legacy_waitcnt("vmcnt(2) & lgkmcnt(0)") == {"vlcnt": 2, "vscnt": -1, "dlcnt": 0, "dscnt": -1, "kmcnt": 0}
    assert decode_legacy_waitcnt("s_waitcnt lgkmcnt(5)")["dlcnt"] == 5
    # gfx9 immediate: vmcnt=1 (bits 3:0), lgkmcnt=15 (no wait)
    assert decode_legacy_waitcnt("0xf71") == {"vlcnt": 1, "vscnt": -1, "dlcnt": -1, "dscnt": -1, "kmcnt": -1}
    assert decode_legacy_waitcnt("bogus(1)") is None
    assert decode_legacy_waitcnt("vmcnt(1) junk") is None
    assert decode_legacy_waitcnt("") is None


def test_malformed_waitcnt_is_an_error():
    m = parse_asm("s_waitcnt vmcnt(1) junk\n", "t.s")
    assert [d.severity for d in m.diagnostics] == [ERROR]


# --- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("line,needle", [
    ("v_mov_b32 v[5:2], 0", "bad register range"),
    ("v_mov_b32 v[0:3, 0", "unclosed '['"),
    ("v_mov_b32 v0), 0", "unbalanced ')'"),
    ("v_mov_b32 v0,, v1", "empty operand"),
    ("v_mov_b32 v[undefined_sym], 0", "cannot evaluate register index"),
    ("v_mov_b32 v0, {x}", "malformed operand"),
    ("@@@ nonsense", "expected an instruction"),
    ("v_mov_b32 v0, v1\x01", "unexpected character"),
    ("v_mov_b32 v0, v1 offen v2", "after modifiers"),
    ("v_mov_b32 v99999, 0", "out of range"),
    ('.ascii "unterminated', "unterminated string"),
])
def test_malformed_lines_are_located_errors(line, needle):
    src = f"k:\n  s_nop 0\n  {line}\n  s_endpgm\n"
    m = parse_asm(src, "bad.s")
    errs = [d for d in m.diagnostics if d.severity == ERROR]
    assert len(errs) == 1 and needle in errs[0].message, m.diagnostics
    assert errs[0].line == 3 and errs[0].col >= 3
    assert errs[0].format("bad.s").startswith("bad.s:3:")
    assert m.lines[2].kind == "error" and m.lines[2].text == f"  {line}"
    # the rest of the file still parses
    assert [i.mnemonic for i in m.functions[0].instructions() if not i.is_label] == ["s_nop", "s_endpgm"]


def test_duplicate_label_is_an_error():
    m = parse_asm("k:\n s_nop 0\n.L1:\n s_nop 0\n.L1:\n s_endpgm\n", "t.s")
    assert [(d.code, d.line) for d in m.diagnostics] == [("asm-duplicate-label", 5)]
    # both arms of a conditional are parsed: a label defined in each is not a redefinition
    m = parse_asm("k:\n.if X\n.L1:\n s_nop 0\n.else\n.L1:\n s_nop 1\n.endif\n s_endpgm\n", "t.s")
    assert not m.diagnostics


def test_unterminated_blocks_warn():
    m = parse_asm("k:\n s_nop 0\n/* open\n", "t.s")
    assert [d.code for d in m.diagnostics] == ["asm-unterminated"]
    m = parse_asm("\t.amdgpu_metadata\n---\n", "t.s")
    assert [d.code for d in m.diagnostics] == ["asm-unterminated"]


# --- functions and CFG ---------------------------------------------------------------------

def block_graph(fn):
    return [(b.label, [s.label for s in b.succs]) for b in fn.blocks]


def test_cfg_fallthrough_cbranch_branch_endpgm():
    src = ("k:\n"
           "  s_mov_b32 s0, 4\n"
           ".Lloop:\n"
           "  s_sub_u32 s0, s0, 1\n"
           "  s_cmp_lg_u32 s0, 0\n"
           "  s_cbranch_scc1 .Lloop\n"
           "  s_nop 0\n"
           "  s_branch .Lend\n"
           "  s_nop 1\n"
           ".Lend:\n"
           "  s_endpgm\n"
           "  s_nop 2\n")
    m = parse_asm(src, "t.s")
    assert not m.diagnostics
    (fn,) = m.functions
    assert fn.name == "k"
    assert block_graph(fn) == [("k", [".Lloop"]),
                               (".Lloop", [".Lloop", ".Lloop_1"]),
                               (".Lloop_1", [".Lend"]),
                               (".Lloop_2", [".Lend"]),
                               (".Lend", []),
                               (".Lend_1", [])]
    loop = fn.blocks[1]
    assert loop.instrs[-1].srcs[0] == Str(".Lloop", ".Lloop")
    assert [b.label for b in loop.preds] == ["k", ".Lloop"]
    assert loop.instrs[0].is_label and loop.instrs[0].mnemonic == "LABEL"
    assert all(i.block is b for b in fn.blocks for i in b.instrs)
    assert fn.blocks[1].span.line == 3 and fn.blocks[1].span.end_line == 6


def test_call_ends_block_without_edge_or_warning():
    m = parse_asm("k:\n s_call_b64 s[30:31], callee\n s_endpgm\n", "t.s")
    assert not m.diagnostics
    assert block_graph(m.functions[0]) == [("k", ["k_1"]), ("k_1", [])]
    assert regs(m.lines[1].instruction.dsts) == [("s", 30, 31)]


def test_macro_and_irp_bodies_are_verbatim():
    src = ".macro ADD a, b\n  v_add_f32 \\a, \\b\n.endm\n.irp r, 1, 2\n  v_mov_b32 v\\r, 0\n.endr\nk:\n ADD v1, v2\n"
    m = parse_asm(src, "t.s")
    assert not m.diagnostics
    assert [ln.kind for ln in m.lines] == ["directive", "verbatim", "directive", "directive", "verbatim",
                                           "directive", "label", "instruction"]
    assert m.lines[7].instruction.mnemonic == "add"


def test_setpc_has_no_successor():
    m = parse_asm("f:\n s_setpc_b64 s[30:31]\n.L2:\n s_nop 0\n", "t.s")
    assert block_graph(m.functions[0]) == [("f", []), (".L2", [])]


def test_unknown_branch_target_warns():
    m = parse_asm("k:\n s_cbranch_scc0 .Lnowhere\n s_endpgm\n", "t.s")
    (d,) = m.diagnostics
    assert d.severity == WARNING and d.code == "asm-unknown-label" and d.line == 2 and ".Lnowhere" in d.message
    assert block_graph(m.functions[0]) == [("k", ["k_1"]), ("k_1", [])]


def test_multiple_kernels_split_at_symbols_and_func_end():
    src = ("\t.globl a\n\t.type a,@function\na:\n\ts_nop 0\n\ts_endpgm\n.Lfunc_end0:\n"
           "\t.size a, .Lfunc_end0-a\n"
           "\t.globl b\n\t.type b,@function\nb:\n\ts_nop 0\n.LBB1_1:\n\ts_endpgm\n.Lfunc_end1:\n"
           "\t.globl __data\n\t.type __data,@object\n__data:\n\t.byte 0\n")
    m = parse_asm(src, "t.s")
    assert not m.diagnostics
    assert [f.name for f in m.functions] == ["a", "b"]
    a, b = m.functions
    assert a.name_span.line == 3 and a.name_span.col == 1 and a.name_span.end_col == 2
    assert (a.span.line, a.span.end_line) == (3, 5)
    assert block_graph(b) == [("b", [".LBB1_1"]), (".LBB1_1", [])]


def test_data_labels_before_a_kernel_symbol_are_not_blocks():
    src = "\t.data\ntable:\n\t.long 1\n\t.text\n\t.type k,@function\nk:\n\ts_endpgm\n"
    m = parse_asm(src, "t.s")
    assert [(f.name, [b.label for b in f.blocks]) for f in m.functions] == [("k", ["k"])]


def test_kernels_without_declarations_split_after_endpgm():
    src = "k1:\n s_nop 0\n s_endpgm\nk2:\n s_nop 0\n s_endpgm\n"
    m = parse_asm(src, "t.s")
    assert [f.name for f in m.functions] == ["k1", "k2"]


def test_label_after_endpgm_that_is_a_branch_target_stays_in_function():
    src = "k:\n s_cbranch_scc0 L_end\n s_endpgm\nL_end:\n s_endpgm\n"
    m = parse_asm(src, "t.s")
    assert [f.name for f in m.functions] == ["k"]
    assert block_graph(m.functions[0]) == [("k", ["L_end", "k_1"]), ("k_1", []), ("L_end", [])]


def test_snippet_without_labels_is_one_function_named_after_file():
    m = parse_asm("v_mov_b32 v0, 0\ns_nop 0\n", "/tmp/snippet.s")
    (fn,) = m.functions
    assert fn.name == "snippet" and [b.label for b in fn.blocks] == ["entry"]
    assert parse_asm("s_nop 0", "<stdin>").functions[0].name == "main"


def test_label_and_instruction_on_one_line():
    m = parse_asm("k: s_nop 0\n", "t.s")
    ln = m.lines[0]
    assert ln.kind == "instruction" and ln.label == "k" and ln.instruction.mnemonic == "s_nop"
    assert ln.instruction.span.col == 4


def test_metadata_yaml_is_verbatim():
    src = "\t.amdgpu_metadata\n---\namdhsa.kernels:\n  - .args:\n...\n\t.end_amdgpu_metadata\n"
    m = parse_asm(src, "t.s")
    assert [ln.kind for ln in m.lines] == ["directive", "verbatim", "verbatim", "verbatim", "verbatim", "directive"]
    assert m.functions == [] and not m.diagnostics


# --- memoisation ---------------------------------------------------------------------------

def test_reparse_after_one_line_edit_reuses_other_lines():
    body = "".join(f"\tv_add_f32_e32 v{i % 200}, v{(i + 1) % 200}, v{(i + 7) % 200}  // uniq {i}\n" for i in range(300))
    src = "k:\n" + body + "\ts_endpgm\n"
    parse_asm(src, "t.s")
    before = parse_line.cache_info()
    edited = src.replace("// uniq 150\n", "// uniq 150 edited\n")
    m = parse_asm(edited, "t.s")
    after = parse_line.cache_info()
    assert after.misses - before.misses == 1
    assert after.hits - before.hits == len(m.lines) - 1


def test_set_edit_does_not_invalidate_lines_without_brackets():
    a = Symbols().with_value("x", 1)
    assert parse_line("\tv_mov_b32 v[x], 0", False, a) is parse_line("\tv_mov_b32 v[x], 0", False, Symbols((("x", 1),)))
    assert a.with_value("x", 1) is a
    assert eval_expr("x*4+(2<<1)", a) == 8
    assert eval_expr("1/0") is None and eval_expr("-7/2") == -3


def test_parse_restores_the_garbage_collector_state():
    import gc
    assert gc.isenabled()
    parse_asm("k:\n s_nop 0\n", "t.s")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_asm("k:\n s_nop 0\n", "t.s")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_instructions_are_fresh_objects_each_parse():
    src = "k:\n ds_load_b128 v[0:3], v4 // st.token:1\n"
    i1 = parse_asm(src, "t.s").lines[1].instruction
    i2 = parse_asm(src, "t.s").lines[1].instruction
    assert i1 is not i2 and i1.mods["memtoken"] is not i2.mods["memtoken"]
    i1.mods["memtoken"].fields["tokens"].append(9)
    assert i2.tokens == (1,)


# --- corpus --------------------------------------------------------------------------------

@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus not available")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_parses_without_errors(path):
    text = path.read_text()
    m = parse_asm(text, str(path))
    assert [d for d in m.diagnostics if d.severity == ERROR] == []
    assert [d for d in m.diagnostics if d.severity == WARNING] == []
    assert len(m.lines) == len(split_lines(text))
    assert m.functions, "at least one kernel"
    n_inst = sum(1 for ln in m.lines if ln.kind == "instruction")
    assert n_inst == sum(1 for f in m.functions for i in f.instructions() if not i.is_label)
    for ln in m.lines:
        if ln.instruction is not None:
            s = ln.instruction.span
            assert ln.text[s.col - 1:s.end_col - 1] == ln.instruction.text


@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus not available")
def test_corpus_gemm_structure():
    path = CORPUS / "aiter_gfx1250_mxscale_gemm1_final_isa.s"
    m = parse_asm(path.read_text(), str(path))
    (fn,) = m.functions
    assert fn.name == "kernel_mxscale_gemm1"
    loop = next(b for b in fn.blocks if b.label == ".LBB0_2")
    assert loop in loop.succs  # the main loop's back edge
    mn = [i.mnemonic for i in fn.instructions()]
    assert mn.count("tensor_load_to_lds") == 24
    assert mn.count("s_barrier_signal") == 6


# --- IR and result records ---------------------------------------------------------------------

def test_records_compare_hash_pickle_and_copy_by_value():
    import copy
    import pickle

    from stinkywait_core.diagnostics import Diagnostic, Related
    from stinkywait_core.ir import FloatImm, Modifier
    from stinkywait_core.ir.records import FrozenInstanceError
    from stinkywait_core.results import DepInfo, FunctionResult, PlannedWait, QueuedOpView, QueueView
    values = [Reg("v", 1, 3, True, "-v[1:3]"), Imm(3, "0x3"), FloatImm(1.0, "1.0"), Str("a", "a"), Special("off"),
              Modifier("ds", {"offset": 4}, "raw"), Related(1, 2, "m", 3, 4),
              Diagnostic("error", "c", "m", 2, 3, 4, 5, [Related(1, 1, "r")], {"k": 1}, "f"),
              DepInfo(1, 2, "ds", "b", None, 0), QueuedOpView(1, "x", 2, 3), QueueView("p", (QueuedOpView(1, "x", 2),), 1),
              PlannedWait("f", "b", 1, 2, "before", "ds", 0, "s_wait_dscnt 0", "raw", "why", [DepInfo(1, 2, "x", "b", "p", 1)]),
              FunctionResult("f", [], [], {1: {}}, {2: [(1, 2)]}, 3, False, True)]
    for v in values:
        for again in (pickle.loads(pickle.dumps(v)), copy.copy(v), copy.deepcopy(v)):
            assert type(again) is type(v) and again == v
    assert Reg("v", 1, 1) != Reg("v", 1, 1, False, "v1") and Imm(1, "1") != FloatImm(1.0, "1")
    assert len({Reg("v", 1, 1), Reg("v", 1, 1)}) == 1 and Span(1, 2, 3, 4) == Span(1, 2, 3, 4)
    with pytest.raises(FrozenInstanceError):
        Reg("v", 1, 1).lo = 2
    with pytest.raises(TypeError):
        hash(Diagnostic("error", "c", "m"))
