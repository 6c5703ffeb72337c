"""Precision of the LDS address analysis on shapes of compiled and gfx9 code objects (issue 22):
``s_cselect`` with the lower value first, a sign-extended one-bit field masked next
(``v_bfe_i32 v6, v0, 3, 1; v_and_b32 v6, 0x440, v6``), the work-item ids packed in v0 with
a workgroup bound, and registers that reach a subroutine unchanged from every call.  Each
shape has a near miss (a genuinely overlapping pair) that must stay "may overlap"."""

from __future__ import annotations

import gzip
import os

import pytest

from stinkywait_core.analysis.launch import LaunchInfo
from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.syntax.asm_parser import parse_asm

from lds_kernels import at, lds_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
GFX942 = os.path.join(HERE, "data", "aiter_gfx942")
GFX1250 = os.path.join(HERE, "data", "aiter_gfx1250")
CORPUS = os.path.join(HERE, "..", "..", "shared", "corpus", "asm")
#: four waves of 64 (gfx942: ids packed in v0)
GFX9 = LaunchInfo("gfx942", 64, 2, 256)


def build(body: str, launch: LaunchInfo | None = GFX9):
    return lds_kernel(body, launch)[2:]


def _read(path: str):
    with gzip.open(path, "rt") as fh:
        text = fh.read()
    m = parse_asm(text, os.path.basename(path).removesuffix(".gz"))
    f = m.functions[0]
    return f, lds_facts(f, m), {i.line: i for b in f.blocks for i in b.instrs}


# --- s_cselect with the lower value first ---------------------------------------------------------

CSELECT = """
    s_load_dword s4, s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_cmp_lg_u32 s4, 0
    s_cselect_b32 s50, 0, 0x8400
    v_mov_b32 v1, s50
    v_mov_b32 v2, {addr}
    ds_write_b32 v1, v3                   // @sel
    ds_read_b32 v4, v2                    // @other
"""


def test_cselect_lower_value_first_is_two_values():
    # s50 is 0 or 0x8400; before, 0x8400 + SCC * (0 - 0x8400) wrapped to every address
    f, facts = build(CSELECT.format(addr="0x4000"))
    acc = facts.access(at(f, "sel"))
    assert acc.byte_range() == (0, 0x8403, 1)
    assert not facts.may_overlap(at(f, "sel"), at(f, "other"))


@pytest.mark.parametrize("addr", ["0x8400", "0x8402", "0"])
def test_cselect_near_miss_overlaps(addr):
    f, facts = build(CSELECT.format(addr=addr))
    assert facts.may_overlap(at(f, "sel"), at(f, "other"))


# --- a sign-extended bit, masked -------------------------------------------------------------------

SEXT = """
    v_bfe_i32 v6, v0, 3, 1
    v_and_b32_e32 v6, 0x440, v6
    s_load_dword s4, s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_bfe_i32 s6, s4, 0x10006
    s_and_b32 s6, s6, 0x440
    v_mov_b32 v7, s6
    v_mov_b32 v2, {addr}
    ds_write_b32 v6, v3                   // @lane
    ds_write_b32 v7, v3                   // @wave
    ds_read_b32 v4, v2                    // @other
"""


def test_sign_extended_bit_then_mask_is_two_values():
    # 0 or 0xffffffff, masked: 0 or 0x440 (per lane, and per wave), never 0x200
    f, facts = build(SEXT.format(addr="0x200"))
    for tag in ("lane", "wave"):
        acc = facts.access(at(f, tag))
        assert acc.known and acc.byte_range() == (0, 0x443, 1), (tag, acc)
        assert not facts.may_overlap(at(f, tag), at(f, "other")), facts.why_not_proven(at(f, tag), at(f, "other"))


@pytest.mark.parametrize("addr", ["0x440", "0x442", "0"])
def test_sign_extended_bit_near_miss_overlaps(addr):
    f, facts = build(SEXT.format(addr=addr))
    assert facts.may_overlap(at(f, "lane"), at(f, "other"))
    assert facts.may_overlap(at(f, "wave"), at(f, "other"))


def test_sign_extended_wider_field_stays_unknown_when_negative():
    # a two-bit field may be 2 or 3, i.e. -2 or -1: not a bounded address
    f, facts = build("""
        v_bfe_i32 v6, v0, 3, 2
        ds_write_b32 v6, v3                   // @w
        v_mov_b32 v2, 0x200
        ds_read_b32 v4, v2                    // @r
    """)
    assert facts.may_overlap(at(f, "w"), at(f, "r"))


# --- work-item ids packed in v0 --------------------------------------------------------------------

PACKED = """
    v_and_b32_e32 v1, 0x3ff, v0
    v_lshrrev_b32_e32 v1, 6, v1
    v_readfirstlane_b32 s5, v1
    s_mul_i32 s6, s5, 0x1000
    s_mov_b32 m0, s6
    buffer_load_dword v2, s[8:11], 0 offen lds   // @dma
    v_mov_b32 v3, {addr}
    ds_read_b32 v4, v3                    // @read
"""


def test_packed_ids_keep_the_workgroup_bound():
    # x < 256 (the launch's bound) although v0 also holds y and z: x >> 6 is a wave of 0..3,
    # so the DMA stays below 0x3100
    f, facts = build(PACKED.format(addr="0x3100"))
    acc = facts.access(at(f, "dma"))
    assert acc.byte_range() == (0, 0x30ff, 1)
    assert not facts.may_overlap(at(f, "dma"), at(f, "read"))


def test_packed_ids_near_miss_overlaps():
    f, facts = build(PACKED.format(addr="0x30fc"))
    assert facts.may_overlap(at(f, "dma"), at(f, "read"))
    # a bigger workgroup reaches further
    f, facts = build(PACKED.format(addr="0x4000"), LaunchInfo("gfx942", 64, 2, 512))
    assert facts.may_overlap(at(f, "dma"), at(f, "read"))


# --- registers that reach a subroutine unchanged ---------------------------------------------------

CALLS = """
    s_mov_b32 s10, 0x1000
    s_call_i64 s[30:31], .Lsub
    s_mov_b32 s10, {second}
    s_call_i64 s[30:31], .Lsub
    s_endpgm
.Lsub:
    v_mov_b32 v1, s10
    v_mov_b32 v2, 0
    v_mov_b32 v5, s30
    ds_store_b32 v1, v3                   // @w
    ds_load_b32 v4, v2                    // @r
    ds_load_b32 v6, v5                    // @ret
    s_set_pc_i64 s[30:31]
"""


def test_callee_entry_joins_the_callers_values():
    # s10 is 0x1000 or 0x2000 at every call, so inside the subroutine too
    f, facts = build(CALLS.format(second="0x2000"), LaunchInfo("gfx1250", 32, 2, 128))
    assert facts.access(at(f, "w")).byte_range() == (0x1000, 0x2003, 1)
    assert not facts.may_overlap(at(f, "w"), at(f, "r"))
    # the return address a call writes stays the callers' unknown state
    assert not facts.access(at(f, "ret")).known or facts.may_overlap(at(f, "ret"), at(f, "w"))


def test_callee_entry_near_miss_overlaps():
    # one caller passes 0: the subroutine's store may meet the load at 0
    f, facts = build(CALLS.format(second="0"), LaunchInfo("gfx1250", 32, 2, 128))
    assert facts.may_overlap(at(f, "w"), at(f, "r"))


# --- SDWA and 16-bit arithmetic (compiled gfx950 cktile) -------------------------------------------

SUBDWORD = """
    v_and_b32_e32 v230, 63, v0
    v_and_b32_e32 v2, -16, v230
    v_mov_b32_e32 v5, 4
    v_ashrrev_i16_sdwa v3, v5, sext(v2) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:{sel}
    v_bitop3_b16 v3, v3, v230, 3 bitop3:{table}
    v_lshlrev_b32_sdwa v3, v5, sext(v3) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:WORD_0
    v_add_u32_e32 v4, 0x1000, v3
    v_mov_b32_e32 v6, {other}
    ds_read_b32 v7, v4                    // @sub
    ds_write_b32 v6, v7                   // @other
"""


def test_sdwa_and_bitop3_b16_give_the_lane_values():
    # v2 = lane & 0x30: its byte >> 4 is 0..3, xor (lane & 3) is 0..3, << 4: 0x1000 + 0..0x30
    f, facts = build(SUBDWORD.format(sel="BYTE_0", table="0x78", other="0x1100"))
    assert facts.access(at(f, "sub")).byte_range() == (0x1000, 0x1033, 1)
    assert not facts.may_overlap(at(f, "sub"), at(f, "other"))


@pytest.mark.parametrize("sel, table, other", [
    ("BYTE_0", "0x78", "0x1030"),   # the largest lane value
    ("BYTE_1", "0x78", "0x1030"),   # byte 1 of v2 is 0: the result is lane & 3, up to 0x30
    ("BYTE_0", "0xf8", "0x1030"),   # a | (b & c): the same reach
])
def test_sdwa_near_miss_overlaps(sel, table, other):
    f, facts = build(SUBDWORD.format(sel=sel, table=table, other=other))
    assert facts.may_overlap(at(f, "sub"), at(f, "other"))


def test_sdwa_16bit_result_keeps_no_upper_half():
    # a 16-bit result read whole (DWORD) may carry any upper half: unknown, never 0..0x30
    body = SUBDWORD.format(sel="BYTE_0", table="0x78", other="0x1100").replace(
        "src1_sel:WORD_0\n", "src1_sel:DWORD\n")
    f, facts = build(body)
    assert facts.may_overlap(at(f, "sub"), at(f, "other"))


def test_sdwa_dst_word_pads_with_zeros():
    body = """
    v_and_b32_e32 v1, 0x3ff, v0
    v_mov_b32_e32 v2, -1
    v_add_u32_sdwa v2, v1, v1 dst_sel:WORD_0 dst_unused:{unused} src0_sel:DWORD src1_sel:DWORD
    v_mov_b32_e32 v6, 0x1000
    ds_read_b32 v7, v2                    // @sub
    ds_write_b32 v6, v7                   // @other
"""
    f, facts = build(body.format(unused="UNUSED_PAD"))
    assert facts.access(at(f, "sub")).byte_range() == (0, 0x201, 1)  # (256 work-items)
    assert not facts.may_overlap(at(f, "sub"), at(f, "other"))
    # the old upper half (-1) kept: far away, overlapping anything up there
    f, facts = build(body.format(unused="UNUSED_PRESERVE"))
    assert facts.access(at(f, "sub")).byte_range()[0] >= 0xffff0000


def test_true16_high_half_is_not_read_as_the_low_half():
    # `v2.h` is bits 31:16 of v2 (gfx11+ true16): the 16-bit add's value stays unknown
    body = """
    v_and_b32_e32 v1, 0xff, v0
    v_mov_b32_e32 v2, 0x10000000
    v_add_u16 v3, v1, {src}
    v_and_b32_e32 v3, 0xffff, v3
    v_mov_b32_e32 v6, 0x1000
    ds_read_b32 v7, v3                    // @sub
    ds_write_b32 v6, v7                   // @other
"""
    f, facts = build(body.format(src="v2.l"))
    assert facts.access(at(f, "sub")).byte_range() == (0, 0x102, 1)
    f, facts = build(body.format(src="v2.h"))
    assert facts.may_overlap(at(f, "sub"), at(f, "other"))


# --- an i1 lane mask tested against EXEC before each use (compiled ping-pong bases) -----------------

MASK = """
    s_load_dword s4, s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_cmp_lt_u32 s4, 0x100
    s_cselect_b64 s[22:23], -1, 0
    s_and_b64 s[6:7], s[22:23], exec
    s_cselect_b32 s46, 0x4000, 0
    {between}
    s_and_b64 s[2:3], s[22:23], exec
    s_cselect_b32 s50, {ping}, {pong}
    v_and_b32 v1, 63, v0
    v_lshlrev_b32 v1, 2, v1
    v_add_u32 v2, s46, v1
    v_add_u32 v3, s50, v1
    ds_write_b32 v2, v7                   // @ping
    ds_read_b32 v8, v3                    // @pong
"""


def test_mask_tests_select_the_other_buffer():
    # s46 = 0x4000 * c and s50 = 0x4000 * (1 - c): one condition c, tested twice
    f, facts = build(MASK.format(between="", ping="0", pong="0x4000"))
    assert not facts.may_overlap(at(f, "ping"), at(f, "pong"))


@pytest.mark.parametrize("between, ping, pong", [
    ("", "0x4000", "0"),                                     # the same buffer
    ("s_cselect_b64 s[22:23], 0, -1", "0", "0x4000"),        # the mask inverted in between
    ("s_mov_b64 exec, 0", "0", "0x4000"),                    # EXEC empty: the second test is 0
    ("s_and_b32 s22, s22, 1", "0", "0x4000"),                # no longer all-or-nothing
])
def test_mask_tests_near_miss_overlaps(between, ping, pong):
    f, facts = build(MASK.format(between=between, ping=ping, pong=pong))
    assert facts.may_overlap(at(f, "ping"), at(f, "pong"))


# --- the real kernels ------------------------------------------------------------------------------

I8GEMM = os.path.join(GFX942, "i8gemm_bf16_perTokenI8_BpreShuffle_112x256.s.gz")


@pytest.mark.parametrize("a, b", [(578, 370), (302, 305), (532, 536)])
def test_aiter_gfx942_i8gemm_pairs_are_disjoint(a, b):
    """aiter's gfx942 i8gemm: its LDS DMA at M0 = 3616 * (v0 >> 6) + ... and the DS reads and
    writes; these pairs were `fallback-lds` drains (any of 16 waves, the packed ids read as
    x < 1024), the workgroup is 256 work-items: four waves."""
    f, facts, by = _read(I8GEMM)
    assert not facts.may_overlap(by[a], by[b], same_trip=False), facts.why_not_proven(by[a], by[b])


def test_aiter_gfx942_i8gemm_same_buffer_overlaps():
    # a DMA and a DS read of the same buffer (a real hazard the waits must keep)
    f, facts, by = _read(I8GEMM)
    dma = [i for i in by.values() if i.mnemonic == "buffer_load_dword" and "lds" in i.suffix]
    reads = [i for i in by.values() if i.mnemonic.startswith("ds_read")]
    assert dma and reads
    assert any(facts.may_overlap(d, r) for d in dma for r in reads)


def test_aiter_f4gemm_registers_through_the_subroutine():
    """aiter's gfx1250 f4gemm calls a subroutine (`s_call_i64 s[100:101], .Lpc_509c`) that keeps
    the tensor descriptor words and the DS bases; the code after the calls read them as the
    callers' unknown state (the ds_load at line 3379: any address; the tensor fill at 4980:
    gather mode possibly on)."""
    f, facts, by = _read(os.path.join(GFX1250, "f4gemm_mxfp4_256x256_apre0.s.gz"))
    assert facts.access(by[3379]).known
    assert facts.access(by[3379]).byte_range()[1] < facts.launch.lds_limit
    assert "gather" not in (facts.access(by[4980]).unknown or "")


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared corpus absent")
def test_aiter_cktile_dma_base_is_bounded():
    """aiter's gfx950 cktile GEMM: M0 = s50 + ... with ``s_cselect_b32 s50, 0, 0x10800`` and
    ``s_bfe_i32 s6, s19, 0x10006; s_and_b32 s6, s6, 0x440``: the DMA stays inside the LDS."""
    facts, by = _cktile()
    for line in (904, 916):
        r = facts.access(by[line]).byte_range()
        assert r is not None and r[1] < facts.launch.lds_limit, (line, r)


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="../shared corpus absent")
@pytest.mark.parametrize("dma, read", [(904, 915), (925, 926), (1039, 1050), (1060, 1061)])
def test_aiter_cktile_reads_apart_from_the_other_buffer_fill(dma, read):
    """aiter's gfx950 cktile GEMM: its DS reads' lane offsets are built with SDWA and
    ``v_bitop3_b16`` (were "any address"), and its two buffers are selected on two tests of
    one i1 mask (``s_and_b64 s, s[22:23], exec``): each DMA fill of the loop is apart from the
    reads of the other buffer that follow it (these pairs were `fallback-lds` drains)."""
    facts, by = _cktile()
    assert facts.access(by[read]).byte_range()[1] < facts.launch.lds_limit
    assert not facts.may_overlap(by[dma], by[read], same_trip=True), facts.why_not_proven(by[dma], by[read], True)


def _cktile():
    """The LDS facts of the corpus' gfx950 cktile GEMM and its instructions by line."""
    with open(os.path.join(CORPUS, "aiter_gfx950_a8w8_cktile_gemm_256x256x128.s")) as fh:
        m = parse_asm(fh.read(), "cktile.s")
    f = m.functions[0]
    return lds_facts(f, m), {i.line: i for b in f.blocks for i in b.instrs}
