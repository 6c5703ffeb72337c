"""LDS address analysis on small kernels written to exercise one feature each, and on the real
aiter gfx1250 GEMMs (the pairs the pass drains as fallbacks there)."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap

import pytest

from stinkywait_core.analysis import intervals as I
from stinkywait_core.analysis.launch import LaunchInfo, launch_infos
from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.analysis.lds_quickfix import token_fix
from stinkywait_core.syntax.asm_parser import parse_asm

from lds_kernels import at, lds_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "shared", "corpus", "asm")
GEMM1 = os.path.join(CORPUS, "aiter_gfx1250_mxscale_gemm1_final_isa.s")
GEMM2 = os.path.join(CORPUS, "aiter_gfx1250_mxscale_gemm2_final_isa.s")
#: four waves of 32, one-dimensional workgroups (the aiter GEMMs' launch)
LAUNCH = LaunchInfo("gfx1250", 32, 0, 128, (128, 1, 1))


def build(body: str, launch: LaunchInfo | None = LAUNCH, head: str = ""):
    return lds_kernel(body, launch, head)


def rng(facts, inst) -> tuple[int, int]:
    r = facts.access(inst).byte_range()
    assert r is not None, facts.access(inst).unknown
    return r[0], r[1] + 1


# --- DS forms ---------------------------------------------------------------------------------

def test_ds_offsets_sizes_and_lanes():
    _, _, f, facts = build("""
        v_and_b32 v1, 31, v0
        v_lshlrev_b32 v1, 4, v1
        ds_load_b128 v[4:7], v1 offset:0x200   // @a
        ds_load_b96 v[8:10], v1 offset:16       // @b
        ds_store_b16 v1, v2 offset:2            // @c
        ds_load_u8 v3, v1                       // @d
    """)
    assert rng(facts, at(f, "a")) == (0x200, 0x200 + 31 * 16 + 16)
    assert rng(facts, at(f, "b")) == (16, 16 + 31 * 16 + 12)
    assert rng(facts, at(f, "c")) == (2, 2 + 31 * 16 + 2)
    assert rng(facts, at(f, "d")) == (0, 31 * 16 + 1)
    assert facts.access(at(f, "c")).kind == "write"
    # lanes 16 bytes apart: a 4-byte store at +4 misses every 4-byte load at +8
    assert facts.may_overlap(at(f, "a"), at(f, "b"))



def test_offset_expressions_are_evaluated_not_truncated():
    # aiter's gfx942 flatmm writes `offset: 0x8e0 * 1 + 64 * 0 + 0x46f0` (0x4fd0 to the
    # assembler); reading only its first number put the access 0x46f0 bytes too low
    _, _, f, facts = build("""
        v_and_b32 v1, 31, v0
        v_lshlrev_b32 v1, 4, v1
        ds_load_b128 v[4:7], v1 offset: 0x8e0 * 1 + 64 * 0 + 0x46f0   // @a
        ds_load_b128 v[8:11], v1 offset:UNKNOWN_SYMBOL                  // @b
    """)
    assert rng(facts, at(f, "a")) == (0x4fd0, 0x4fd0 + 31 * 16 + 16)
    assert facts.access(at(f, "b")).byte_range() is None
    assert "offset expression not evaluated" in facts.access(at(f, "b")).unknown

def test_two_address_forms_scale_their_offsets():
    _, _, f, facts = build("""
        v_lshlrev_b32 v1, 5, v0
        v_and_b32 v1, 0x3e0, v1
        ds_load_2addr_b32 v[2:3], v1 offset0:1 offset1:3            // @two
        ds_load_2addr_stride64_b64 v[4:7], v1 offset0:1 offset1:2  // @st64
        ds_store_b32 v1, v8 offset:8                                // @hole
        ds_store_b32 v1, v8 offset:12                               // @hit
    """)
    two = facts.access(at(f, "two"))
    assert [p.span()[0] for p in two.pieces] == [4, 12]
    st = facts.access(at(f, "st64"))
    assert [p.span()[0] for p in st.pieces] == [512, 1024]
    # lanes 32 bytes apart; the pair touches bytes 4..7 and 12..15 of each lane's slot
    assert not facts.may_overlap(at(f, "two"), at(f, "hole"))
    assert facts.may_overlap(at(f, "two"), at(f, "hit"))


def test_transposing_and_atomic_forms():
    _, _, f, facts = build("""
        v_mov_b32 v1, 0x100
        ds_load_tr16_b128 v[4:7], v1    // @tr
        ds_add_u32 v1, v2 offset:64     // @atomic
        ds_bpermute_b32 v3, v1, v2      // @perm
        ds_swizzle_b32 v3, v2 offset:swizzle(SWAP,16)
    """)
    assert rng(facts, at(f, "tr")) == (0x100, 0x110)
    assert facts.access(at(f, "atomic")).kind == "rw"
    assert facts.access(at(f, "perm")) is None  # a lane shuffle, no LDS memory
    assert not facts.may_overlap(at(f, "perm"), at(f, "tr"))


def test_unknown_base_names_its_origin():
    _, _, f, facts = build("""
        v_perm_b32 v1, v2, v3, 0x05040100
        ds_load_b32 v4, v1              // @load
        v_mov_b32 v5, 0x8000
        ds_store_b32 v5, v6             // @store
    """)
    why = facts.why_not_proven(at(f, "load"), at(f, "store"))
    assert facts.may_overlap(at(f, "load"), at(f, "store"))
    assert "ds_load_b32 at line 3" in why and "v_perm_b32 at line 2" in why


def test_beyond_the_lds_is_not_compared():
    _, _, f, facts = build("""
        v_mov_b32 v1, 0xffffff00
        ds_load_b128 v[4:7], v1 offset:32   // @wraps
        v_mov_b32 v2, 0x20
        ds_store_b32 v2, v3                  // @low
    """)
    assert facts.may_overlap(at(f, "wraps"), at(f, "low"))
    assert "LDS" in facts.why_not_proven(at(f, "wraps"), at(f, "low"))


# --- symbols -------------------------------------------------------------------------------------

def test_shared_unknown_base_cancels_within_a_wave():
    """A kernel argument of unknown value, masked to a 32 KiB buffer: two accesses 0x1000
    apart from the same base never meet, although each alone could be anywhere in it."""
    _, _, f, facts = build("""
        s_load_b32 s4, s[0:1], 0x0
        s_wait_kmcnt 0x0
        s_and_b32 s4, s4, 0x7000
        v_and_b32 v1, 31, v0
        v_lshlrev_b32 v1, 4, v1
        v_add_nc_u32 v2, s4, v1
        ds_load_b128 v[4:7], v2                 // @a
        ds_store_b128 v2, v[8:11] offset:0x1000 // @b
        ds_store_b128 v2, v[8:11] offset:0x1f0  // @c
    """)
    assert rng(facts, at(f, "a"))[1] <= 0x8000
    assert not facts.may_overlap(at(f, "a"), at(f, "b"))
    assert facts.may_overlap(at(f, "a"), at(f, "c"))


def test_wave_index_from_v0_and_from_ttmp8():
    _, _, f, facts = build("""
        v_lshrrev_b32 v1, 5, v0
        v_lshlrev_b32 v1, 12, v1
        ds_load_b32 v2, v1                  // @perwave
        s_bfe_u32 s4, ttmp8, 0x50019
        s_lshl_b32 s4, s4, 12
        s_add_co_u32 s5, s4, 0x4000
        v_mov_b32 v3, s5
        ds_store_b32 v3, v4                 // @hw
    """)
    # four waves: v0 >> 5 and TTMP8[29:25] are both below 4
    assert rng(facts, at(f, "perwave")) == (0, 0x3004)
    assert rng(facts, at(f, "hw")) == (0x4000, 0x7004)


def test_readfirstlane_keeps_the_uniform_part():
    _, _, f, facts = build("""
        s_load_b32 s4, s[0:1], 0x0
        s_wait_kmcnt 0x0
        s_and_b32 s4, s4, 0xff00
        v_and_b32 v1, 15, v0
        v_add_nc_u32 v1, s4, v1
        v_readfirstlane_b32 s6, v1
        s_add_co_u32 s7, s6, 0x10
        v_mov_b32 v2, s7
        ds_store_b8 v2, v3      // @a
        v_mov_b32 v4, s4
        ds_load_u8 v5, v4       // @b
    """)
    # s6 = s4 + (one lane's v1 & 15), so s7 lies in [s4+16, s4+31]: never s4 itself
    assert not facts.may_overlap(at(f, "a"), at(f, "b"))


def test_vopd_halves():
    _, _, f, facts = build("""
        v_dual_lshlrev_b32 v1, 4, v0 :: v_dual_bitop2_b32 v2, 15, v0 bitop3:0x40
        v_and_b32 v1, 0x1f0, v1
        ds_load_b128 v[4:7], v1        // @shl
        v_lshlrev_b32 v2, 2, v2
        ds_load_b32 v8, v2 offset:0x400 // @and
    """)
    assert rng(facts, at(f, "shl")) == (0, 0x200)
    assert rng(facts, at(f, "and")) == (0x400, 0x440)


def test_partial_exec_keeps_the_old_lanes():
    _, _, f, facts = build("""
        v_lshlrev_b32 v1, 2, v0
        v_and_b32 v1, 0x7c, v1
        v_cmp_gt_u32 vcc_lo, 16, v0
        s_and_saveexec_b32 s4, vcc_lo
        v_mov_b32 v1, 0x1000
        s_or_b32 exec_lo, exec_lo, s4
        ds_load_b32 v2, v1          // @mixed
        v_mov_b32 v3, 0x2000
        ds_load_b32 v4, v3          // @after
    """)
    lo, hi = rng(facts, at(f, "mixed"))
    assert lo == 0 and hi >= 0x1004  # both the lanes that kept v1 and those that took 0x1000
    assert rng(facts, at(f, "after")) == (0x2000, 0x2004)  # EXEC restored: a full write


@pytest.mark.parametrize("high, full", [("-1", True), ("0xffffffff", True), ("0x7fffffff", False)])
def test_exec_restored_from_all_ones(high, full):
    """aiter's gfx950 fmha v3 bwd: ``s_mov_b32 s98, -1; s_mov_b32 s99, -1`` and later
    ``s_mov_b64 exec, s[98:99]`` after a masked DMA: EXEC is whole again, so the next add
    moves every lane (one half not all ones: some lanes may keep the old value)."""
    _, _, f, facts = build("""
        v_lshlrev_b32 v1, 4, v0
        v_and_b32 v1, 0x3f0, v1
        s_mov_b32 s98, -1
        s_mov_b32 s99, HIGH
        v_cmp_gt_u32 s[44:45], 16, v0
        s_mov_b64 exec, s[44:45]
        v_mov_b32 v2, 0
        s_mov_b64 exec, s[98:99]
        v_add_nc_u32 v1, 0x10000, v1
        ds_load_b128 v[4:7], v1          // @moved
    """.replace("HIGH", high), LaunchInfo("gfx950", 64, 0, 256, (256, 1, 1)))
    lo, hi = rng(facts, at(f, "moved"))
    assert (lo == 0x10000) is full and hi == 0x10000 + 0x3f0 + 16


# --- loops ---------------------------------------------------------------------------------------

PINGPONG = """
    s_mov_b32 s10, 0
    s_mov_b32 s11, 8
    v_and_b32 v1, 31, v0
    v_lshlrev_b32 v1, 4, v1
    s_mov_b32 s20, 1
    s_mov_b32 s22, 0
    s_mov_b32 s23, 0x80000000
    s_mov_b32 s24, 0
    s_mov_b32 s25, 0x2000000
    s_mov_b32 s26, 0x100000
    s_mov_b32 s27, 0x2000000
    s_mov_b32 s28, 16
    s_mov_b32 s29, 0x200
    s_mov_b32 s30, 0
    s_mov_b32 s31, 0
.Lloop:
    v_add_nc_u32 v2, s10, v1
    ds_load_b128 v[4:7], v2                 // @read
    s_xor_b32 s21, s10, 0x4000
    tensor_load_to_lds s[20:23], s[24:31]   // @fill
    s_xor_b32 s10, s10, 0x4000
    s_sub_co_u32 s11, s11, 1
    s_cmp_lg_u32 s11, 0
    s_cbranch_scc1 .Lloop
"""


def test_ping_pong_same_trip_only():
    _, _, f, facts = build(PINGPONG)
    read, fill = at(f, "read"), at(f, "fill")
    assert rng(facts, fill) == (0, 0x4000 + 512 * 16)  # 512 x 16 one-byte elements
    assert not facts.may_overlap(read, fill, same_trip=True)
    assert facts.may_overlap(read, fill, same_trip=False)
    assert "within one trip" in facts.why_not_proven(read, fill, same_trip=False)


def test_loop_counter_base_is_a_per_trip_symbol():
    """A base advanced by 0x200 each trip and wrapped into 8 KiB: the two accesses of one trip
    are 0x200 apart, so the next trip's first one is where this trip's second one was; and a
    0x100 offset never meets a multiple of 0x200."""
    _, _, f, facts = build("""
        s_mov_b32 s10, 0
        s_mov_b32 s11, 100
    .Lloop:
        v_mov_b32 v1, s10
        ds_load_b64 v[2:3], v1                // @a
        ds_store_b64 v1, v[4:5] offset:0x200  // @b
        ds_store_b64 v1, v[4:5] offset:0x100  // @c
        s_add_co_u32 s10, s10, 0x200
        s_and_b32 s10, s10, 0x1fff
        s_sub_co_u32 s11, s11, 1
        s_cmp_lg_u32 s11, 0
        s_cbranch_scc1 .Lloop
    """)
    a, b = at(f, "a"), at(f, "b")
    assert rng(facts, a)[1] <= 0x2000
    assert not facts.may_overlap(a, b, same_trip=True)
    assert facts.may_overlap(a, b, same_trip=False)
    assert not facts.may_overlap(a, at(f, "c"), same_trip=False)


def test_unbounded_loop_pointer_is_unknown():
    _, _, f, facts = build("""
        v_mov_b32 v1, 0
        s_mov_b32 s11, 100
    .Lloop:
        ds_load_b32 v2, v1      // @a
        v_add_nc_u32 v1, 4, v1
        s_sub_co_u32 s11, s11, 1
        s_cmp_lg_u32 s11, 0
        s_cbranch_scc1 .Lloop
        v_mov_b32 v3, 0
        ds_store_b32 v3, v4     // @b
    """)
    assert facts.may_overlap(at(f, "a"), at(f, "b"))
    assert "changes every trip" in facts.why_not_proven(at(f, "a"), at(f, "b"))


# --- async, DMA, tensor ------------------------------------------------------------------------------

def test_async_loads_and_stores():
    _, _, f, facts = build("""
        v_lshlrev_b32 v1, 2, v0
        v_and_b32 v1, 0x7c, v1
        v_add_nc_u32 v1, 0x1000, v1
        global_load_async_to_lds_b32 v1, v2, s[0:1] offset:16   // @load
        global_store_async_from_lds_b64 v2, v1, s[0:1]           // @store
        v_mov_b32 v3, 0x1100
        ds_store_b32 v3, v4                                       // @after
    """)
    assert rng(facts, at(f, "load")) == (0x1010, 0x1090)
    assert facts.access(at(f, "store")).kind == "read"
    assert rng(facts, at(f, "store")) == (0x1000, 0x107c + 8)
    assert not facts.may_overlap(at(f, "load"), at(f, "after"))


def test_gfx9_lds_dma_through_m0():
    launch = LaunchInfo("gfx942", 64, 0, 256, (256, 1, 1))
    _, _, f, facts = build("""
        s_mov_b32 m0, 0x1000
        buffer_load_dword v1, s[4:7], 0 offen offset:16 lds   // @dma
        s_add_u32 m0, m0, 0x400
        buffer_load_dwordx4 v1, s[4:7], 0 offen lds           // @wide
        v_mov_b32 v2, 0x1100
        ds_read_b32 v3, v2                                     // @read
    """, launch)
    assert rng(facts, at(f, "dma")) == (0x1010, 0x1010 + 63 * 4 + 4)
    assert rng(facts, at(f, "wide")) == (0x1400, 0x1400 + 63 * 16 + 16)
    assert not facts.may_overlap(at(f, "dma"), at(f, "wide"))
    assert facts.may_overlap(at(f, "dma"), at(f, "read"))


def test_tensor_descriptor_fields():
    _, _, f, facts = build("""
        s_mov_b32 s0, 1
        s_mov_b32 s1, 0x8000
        s_mov_b32 s2, 0
        s_mov_b32 s3, 0x80000000
        s_mov_b32 s4, 0x7520000
        s_mov_b32 s5, 0x1000000
        s_mov_b32 s6, 0x100000
        s_mov_b32 s7, 0x800000
        s_mov_b32 s8, 16
        s_mov_b32 s9, 0xc00
        s_mov_b32 s10, 0
        s_mov_b32 s11, 0
        tensor_load_to_lds s[0:3], s[4:11]   // @tdm
        s_load_b32 s4, s[0:1], 0x0
        s_wait_kmcnt 0x0
        tensor_store_from_lds s[0:3], s[4:11]  // @unknown
    """)
    # 128 x 16 four-byte elements = 8 KiB, a 16-byte pad after every 256 bytes: 32 chunks
    # of 256 bytes, 272 apart (the pads are holes: the last one is not touched)
    assert rng(facts, at(f, "tdm")) == (0x8000, 0x8000 + 31 * 272 + 256)
    (piece,) = facts.access(at(f, "tdm")).pieces
    assert piece.size == 256 and piece.span() == (0x8000, 0x8000 + 31 * 272, 272)
    acc = facts.access(at(f, "unknown"))
    assert acc.kind == "read"
    assert facts.may_overlap(at(f, "unknown"), at(f, "tdm"))
    assert "iterate" in facts.why_not_proven(at(f, "unknown"), at(f, "tdm")) or \
        "gather" in facts.why_not_proven(at(f, "unknown"), at(f, "tdm")) or \
        "not known" in facts.why_not_proven(at(f, "unknown"), at(f, "tdm"))


# --- declarations and the quick fix ---------------------------------------------------------------

def test_declared_regions_are_trusted_and_checked():
    text, m, f, facts = build("""
        // stinkywait: lds-region A 0x0 0x8000 v1
        // stinkywait: lds-region B 0x8000 0x10000
        v_perm_b32 v1, v2, v3, 0x05040100
        ds_load_b32 v4, v1                  // @a
        v_mov_b32 v5, 0x8100
        ds_store_b32 v5, v6                 // @b
        v_perm_b32 v7, v2, v3, 0x05040100
        ds_store_b32 v7, v6                 // @tagged lds-region: B
        v_mov_b32 v8, 0x9000
        ds_store_b32 v8, v6                 // @wrongtag lds-region: A
    """)
    a, b = at(f, "a"), at(f, "b")
    assert not facts.may_overlap(a, b)
    assert "trusted from the declaration of region A" in facts.why_not_proven(a, b)
    assert facts.may_overlap(at(f, "tagged"), b)  # both in B
    assert not facts.may_overlap(at(f, "tagged"), a)
    facts.access(at(f, "wrongtag"))
    assert any(d.code == "lds-region-conflict" for d in facts.diagnostics)


def test_overlapping_declarations_are_errors():
    text = "k:\n  // stinkywait: lds-region A 0 0x100\n  // stinkywait: lds-region B 0x80 0x200\n" \
           "  // stinkywait: lds-region C 0x10 0x5 v1\n  s_endpgm\n"
    m = parse_asm(text, "t.s")
    facts = lds_facts(m.functions[0], m, launch=LAUNCH)
    codes = sorted((d.line, d.code) for d in facts.diagnostics)
    assert codes == [(3, "lds-region-overlap"), (4, "lds-region-syntax")]
    assert [r.name for r in facts.regions] == ["A"]


def test_token_fix_separates_exactly_the_pair():
    text, m, f, facts = build("""
        v_mov_b32 v1, 0x100
        ds_load_b32 v4, v1                  // @a
        v_perm_b32 v5, v2, v3, 0x05040100
        ds_store_b32 v5, v6                 // @b
        v_mov_b32 v7, 0x8000
        ds_store_b32 v7, v6                 // @c st.token:7
    """)
    edits, desc = token_fix(f, at(f, "a"), at(f, "b"), text.splitlines(), facts)
    assert "different LDS regions" in desc
    got = {e.line: e.text.split("st.token:")[1] for e in edits}
    # a is proven apart from c: a fresh token only; b might touch c's bytes: it keeps token 7
    assert got == {at(f, "a").line: "1", at(f, "b").line: "2,7"}


def test_token_fix_refuses_what_would_separate_others():
    text, m, f, facts = build("""
        v_perm_b32 v1, v2, v3, 0x05040100
        ds_load_b32 v4, v1                  // @a st.token:3
        v_perm_b32 v5, v2, v3, 0x05040100
        ds_store_b32 v5, v6                 // @b
        ds_store_b32 v1, v6 offset:4        // @c st.token:3
    """)
    edits, why = token_fix(f, at(f, "a"), at(f, "b"), text.splitlines(), facts)
    # b may overlap c (token 3), and a carries token 3 too: no token set separates a from b
    assert edits == [] and "line 6" in why


def test_token_fix_applies_and_parses():
    text, m, f, facts = build("""
        v_perm_b32 v1, v2, v3, 0x05040100
        ds_load_b32 v4, v1                  // @a
        v_mov_b32 v5, 0x100
        ds_store_b32 v5, v6                 // @b
    """)
    lines = text.splitlines()
    edits, _ = token_fix(f, at(f, "a"), at(f, "b"), lines, facts)
    for e in edits:
        s = lines[e.line - 1]
        lines[e.line - 1] = s[:e.col - 1] + e.text + s[e.col - 1:]
    m2 = parse_asm("\n".join(lines) + "\n", "t.s")
    f2 = m2.functions[0]
    ta, tb = at(f2, "a").tokens, at(f2, "b").tokens
    assert ta and tb and not set(ta) & set(tb)
    assert token_fix(f2, at(f2, "a"), at(f2, "b"), lines)[0] == []


# --- assembled by LLVM ----------------------------------------------------------------------------

SNIPPETS = [PINGPONG]


@pytest.mark.skipif(shutil.which("llvm-mc-22") is None, reason="llvm-mc-22 not installed")
def test_snippets_assemble(tmp_path):
    for i, body in enumerate(SNIPPETS):
        src = tmp_path / f"s{i}.s"
        src.write_text("k:\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n  s_endpgm\n")
        r = subprocess.run(["llvm-mc-22", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-filetype=obj",
                            str(src), "-o", os.devnull], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


# --- the real GEMMs --------------------------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists(GEMM2), reason="../shared corpus not present")
def test_gemm2_tensor_fill_range_matches_its_reads():
    """kernel_mxscale_gemm2, line 72: each wave fills 16 rows of 256 bytes, 16 bytes of padding
    after each row, at s69 * 0x1100 (s69 = the wave index & 3): four waves, [0, 0x4400) less
    the last wave's last pad (the pads are skipped, not written)."""
    text = open(GEMM2).read()
    m = parse_asm(text, GEMM2)
    f = m.functions[0]
    facts = lds_facts(f, m)
    assert launch_infos(text)["kernel_mxscale_gemm2"].reqd == (128, 1, 1)
    by = {i.line: i for b in f.blocks for i in b.instrs}
    assert rng(facts, by[72]) == (0, 0x3300 + 0x1100 - 16)
    # line 283 reads rows of the same 0x110 stride through v223 = 0x110 * (lane & 15) + ...
    assert rng(facts, by[283]) == (0, 0x1010)


def _fallback_pairs(path):
    """The (producer, anchor) pairs a plan made *without* the address analysis drains as
    fallbacks (the pass itself now asks the analysis first)."""
    from stinkywait_core.api import analyze
    from stinkywait_core.waitcnt import pipeline
    text = open(path).read()
    real = pipeline._lds_facts_of
    pipeline._lds_facts_of = lambda *a: None
    try:
        an = analyze(text, path)
    finally:
        pipeline._lds_facts_of = real
    out = []
    for po, fr in zip(an.outputs, an.functions):
        by = {i.line: i for b in po.func.blocks for i in b.instrs if not i.is_label and not i.is_phi}
        facts = lds_facts(po.func, an.module)
        for w in fr.waits:
            if not w.rule.startswith("fallback"):
                continue
            anchor = by[w.line]
            for q in fr.fifo.get(w.line, {}).get(w.counter, []):
                for o in q.ops:
                    if by[o.line] is not anchor:
                        out.append((facts, by[o.line], anchor))
    return out


@pytest.mark.skipif(not os.path.exists(GEMM1), reason="../shared corpus not present")
@pytest.mark.parametrize("path", [GEMM1, GEMM2])
def test_gemm_fallback_pairs_are_proven(path):
    pairs = _fallback_pairs(path)
    assert pairs
    for facts, p, anchor in pairs:
        assert not facts.may_overlap(p, anchor, same_trip=False), facts.why_not_proven(p, anchor)


def test_interval_helpers():
    assert I.norm32((-16, -16, 0)) == (0xFFFFFFF0, 0xFFFFFFF0, 0)
    assert I.and_((0, 1023, 1), (31, 31, 0)) == (0, 31, 1)
    assert I.or_((0, 0x1f0, 16), (0x200, 0x200, 0)) == (0x200, 0x3f0, 16)
    assert I.known_ones((0x4000, 0x7ff0, 16)) == 0x4000


# --- aiter's hand-written gfx1250 kernels (tests/data/aiter_gfx1250) ----------------------------------

HANDWRITTEN = os.path.join(HERE, "data", "aiter_gfx1250")


def _load(name: str):
    import gzip
    with gzip.open(os.path.join(HANDWRITTEN, name), "rt") as fh:
        text = fh.read()
    m = parse_asm(text, name)
    assert not [d for d in m.diagnostics if d.severity == "error"]
    return m


def test_f4gemm_prologue_fills():
    """f4gemm (hand-written, aiter): the three prologue fills of 256 rows x 128 bytes, each row
    padded by 16 bytes (D#1: pad every 32 dwords by 4), at LDS 0, 0x9000 and 0x14000; the
    kernel reads them back with a 0x90 row stride (v_mul_u32_u24 v72, v4, 0x90).  The pad is
    counted along the tile's stream (not per row), so each fill is its chunks, the last one's
    pad not written: each ends 16 bytes before the next begins, also the two whose width is a
    range (at most 128 bytes)."""
    m = _load("f4gemm_mxfp4_256x256_apre0.s.gz")
    f = m.functions[0]
    facts = lds_facts(f, m)
    by = {i.line: i for b in f.blocks for i in b.instrs}
    assert [rng(facts, by[ln]) for ln in (426, 441, 456)] == [(0, 0x8ff0), (0x9000, 0x11ff0), (0x14000, 0x1cff0)]
    assert not facts.may_overlap(by[426], by[441]) and not facts.may_overlap(by[441], by[456])
    assert facts.flow.calls is not None and facts.flow.untrusted() is None  # s_call_i64 / s_set_pc_i64 pairs


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(HANDWRITTEN) if n.endswith(".s.gz")))
def test_handwritten_kernels_analyse(name):
    m = _load(name)
    for f in m.functions:
        facts = lds_facts(f, m)
        accs = facts.accesses()
        assert accs
        for a in accs:
            assert a.pieces is not None or a.unknown
            assert "internal analysis error" not in (a.unknown or "")


def test_declared_workgroup_size_bounds_the_wave_index():
    body = """
        s_bfe_u32 s4, ttmp8, 0x50019
        s_lshl_b32 s4, s4, 14
        v_mov_b32 v1, s4
        ds_store_b32 v1, v2          // @perwave
        v_mov_b32 v3, 0x40000
        ds_load_b32 v4, v3           // @high
    """
    meta = ("\t.amdgpu_metadata\n---\namdhsa.kernels:\n  - .name: k\n    .symbol: k.kd\n"
            "    .max_flat_workgroup_size: 1024\n    .wavefront_size: 32\n...\n\t.end_amdgpu_metadata\n")
    for decl, proven in (("", False), ("// stinkywait: workgroup-size 256\n", True)):
        text = decl + "k:\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n  s_endpgm\n" + meta
        m = parse_asm(text, "t.s")
        f = m.functions[0]
        facts = lds_facts(f, m)
        # 32 waves reach 0x7c000 + 4 (past 0x40000); 8 waves stop at 0x1c004
        assert facts.may_overlap(at(f, "perwave"), at(f, "high")) is not proven
        if proven:
            assert "workgroup size declared at line 1" in facts.why_not_proven(at(f, "perwave"), at(f, "high"))


def test_malformed_workgroup_size():
    text = "// stinkywait: workgroup-size 2048\nk:\n  s_endpgm\n"
    m = parse_asm(text, "t.s")
    from stinkywait_core.analysis.lds_regions import parse_workgroup_sizes
    sizes, diags = parse_workgroup_sizes(text, m.functions)
    assert sizes == {} and [d.code for d in diags] == ["lds-workgroup-syntax"]


def test_fallback_reasons_name_the_pair_only_for_per_wave_pairs():
    """A fallback drain between two engines says which two accesses the analysis could not
    separate and why; a barrier's drain is not a pair question (it publishes LDS to the other
    waves), so its reason never claims "the barrier touches no LDS memory" (and the address
    analysis is not asked for it).  On the gfx950 cktile GEMM (LDS DMA and ds_read; its
    wave-specialised paths keep barrier drains: the publish rule, docs/decisions.md 45, lifts
    the gfx942 flatmm's, whose ds_reads are proven disjoint from its DMA since their offset
    expressions are evaluated)."""
    from pathlib import Path

    from stinkywait_core.api import analyze

    path = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "asm" / \
        "aiter_gfx950_a8w8_cktile_gemm_256x256x128.s"
    if not path.exists():
        pytest.skip("../shared/corpus/asm not available")
    def reasons(text: str) -> list[str]:
        return [w.reason for w in analyze(text, str(path)).waits() if w.rule == "fallback"]

    text = path.read_text()
    # (its loop's fills and reads are proven apart since SDWA and its i1 mask tests are
    # modelled: the per-wave pairs come from the kernel with its second buffer made the first)
    assert "s_cselect_b32 s50, 0, 0x10800" in text
    per_wave = [r for r in reasons(text.replace("s_cselect_b32 s50, 0, 0x10800", "s_cselect_b32 s50, 0x10800, 0"))
                if "fallback-lds" in r]
    at_barrier = [r for r in reasons(text) if "fallback-barrier" in r]
    assert per_wave and at_barrier
    assert all("not proven disjoint" in r and ("may overlap" in r or "not known" in r) for r in per_wave), per_wave
    assert not any("not proven disjoint" in r or "touches no LDS memory" in r for r in at_barrier), at_barrier
