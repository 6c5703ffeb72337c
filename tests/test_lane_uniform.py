"""Vector values equal in every lane of two waves, in the wave pairing (waitcnt/lane_uniform.py
with wave_match.py for the pass; validate/hwwaves.py for the checker, written apart).

Split-k GEMMs divide kernel arguments in the vector unit and read the quotient back with
``v_readfirstlane`` (aiter's gfx942 bf16gemm): it bounds the loops of both wave roles, so the two
loops run the same trips, and a loop barrier never meets the epilogue's.  Each near miss makes
the lane read differ (a lane id, an EXEC write, a cross-lane operation, a mask that is not a
compare's) and must pair the loop barrier with the epilogue's again."""

from __future__ import annotations

from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module
from stinkywait_core.validate.hwpublish import fence_role
from stinkywait_core.validate.hwwaves import barrier_pairs, skeleton
from stinkywait_core.validate.paths import block_successors
from stinkywait_core.waitcnt.publish import barrier_kind
from stinkywait_core.waitcnt.wave_match import WaveMatch

# four waves: 0-1 run loop A, 2-3 loop B, each `s32` trips, each writing its own 256 bytes; the
# epilogue reads what wave 0 wrote, after a barrier
SPLITK = """\
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.text
k:
  s_load_dword s20, s[0:1], 0x0
  s_load_dword s21, s[0:1], 0x4
  v_and_b32 v0, 0x3ff, v0
  v_lshrrev_b32 v3, 6, v0
  v_and_b32 v0, 63, v0
  v_readfirstlane_b32 s24, v3
  v_lshlrev_b32 v1, 2, v0
  s_lshl_b32 s25, s24, 8
  v_add_u32 v1, s25, v1
  v_add_u32 v2, 0x1000, v1
  s_waitcnt lgkmcnt(0)
  {pre}
  v_cvt_f32_u32 v4, {divisor}
  v_rcp_iflag_f32 v4, v4
  v_mul_f32 v4, 0x4f7ffffe, v4
  v_cvt_u32_f32 v4, v4
  {mul}
  v_add_u32 v5, 1, v4
  v_cmp_le_u32 vcc, s21, v4
  {mask}
  v_cndmask_b32 v7, v4, v5, vcc
  v_readfirstlane_b32 s32, v7
  s_mov_b32 s33, 0
  s_cmp_lt_u32 s24, 2
  s_cbranch_scc0 .Lb
.La:
  ds_write_b32 v1, v9
  s_barrier
  ds_read_b32 v10, v2
  s_add_u32 s33, s33, 1
  s_cmp_lt_u32 s33, s32
  s_cbranch_scc1 .La
  s_branch .Lend
.Lb:
  ds_write_b32 v1, v9
  s_barrier
  ds_read_b32 v10, v2 offset:4
  s_add_u32 s33, s33, 1
  s_cmp_lt_u32 s33, s32
  s_cbranch_scc1 .Lb
.Lend:
  s_barrier
  ds_read_b32 v11, v0
  v_add_u32 v12, v11, v10
  s_endpgm
	.amdgpu_metadata
---
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .max_flat_workgroup_size: 256
    .reqd_workgroup_size: [ 256, 1, 1 ]
...
	.end_amdgpu_metadata
"""

GOOD = {"pre": "", "divisor": "s21", "mul": "v_mul_hi_u32 v4, s20, v4", "mask": ""}
LOOP_A, LOOP_B, EPILOGUE = 31, 39, 45


def kernel(**change) -> str:
    return SPLITK.format(**{**GOOD, **change})


def pairs_of(text: str) -> tuple[dict | None, dict | None]:
    """The pass's and the checker's pairings, as {barrier line: {partner lines}} (0: ended)."""
    fn = analyze(text, "k.s", Options()).outputs[0].func  # (with the pass's reaching definitions)
    wm = WaveMatch(fn, barrier_kind, "gfx942")
    bp = barrier_pairs(skeleton(list(fn.blocks), block_successors(fn.blocks), fence_role, False))
    fences = [[i for i in blk.instrs if not i.is_label and fence_role(i)] for blk in fn.blocks]
    a = None if wm.met is None else {b.line: {x.line if x else 0 for x in xs} for b, xs in wm.met.items()}
    b = None if bp is None else {fences[p[0]][p[1]].line: {fences[x[0]][x[1]].line if x else 0 for x in xs}
                                 for p, xs in bp.items()}
    return a, b


def violations(text: str) -> list:
    mod = parse_asm(text, "k.s")
    return [v for r in check_module(mod, Options(arch="gfx942"), lds_addresses=True, max_trips=3) for v in r.violations]


def loop_barrier_drains(text: str) -> bool:
    """The pass drains the loop's ds_write (lgkmcnt) before loop A's barrier."""
    an = analyze(text, "k.s", Options(coalesce_window=0))
    return any(w.line == LOOP_A and w.counter == "lgkm" for w in an.waits())


def test_the_kernel_lines_are_where_the_tests_look():
    lines = kernel().split("\n")
    assert [lines[n - 1].strip() for n in (LOOP_A, LOOP_B, EPILOGUE)] == ["s_barrier"] * 3


def test_quotient_of_kernel_arguments_pairs_the_loops_only():
    a, b = pairs_of(kernel())
    assert a == b
    assert a[LOOP_A] == {LOOP_A, LOOP_B} and EPILOGUE not in a[LOOP_A]
    assert a[EPILOGUE] == {EPILOGUE}


@pytest.mark.parametrize("change", [
    {"divisor": "v0"},                                     # a lane's id in the quotient
    {"pre": "s_mov_b64 exec, s[20:21]"},                   # EXEC written before the division
    {"mul": "v_mbcnt_lo_u32_b32 v4, -1, v4"},              # a lane count
    {"mul": "v_mov_b32_dpp v4, v4 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"},  # another lane's value
    {"mask": "s_and_b64 vcc, s[20:21], exec"},             # a mask that no compare wrote
])
def test_near_miss_pairs_the_loop_with_the_epilogue(change):
    a, b = pairs_of(kernel(**change))
    assert a is not None and b is not None
    assert EPILOGUE in a[LOOP_A] and EPILOGUE in b[LOOP_A], (a, b)


def test_the_pass_keeps_the_write_in_flight_and_the_checker_agrees():
    text = kernel()
    assert not loop_barrier_drains(text)
    assert violations(analyze(text, "k.s", Options()).inserted_text()) == []


def test_near_miss_drains_and_the_checker_catches_the_drain_removed():
    """Loop trips that may differ between the roles: a wave of loop A may be at its barrier
    while another is past the loops reading its bytes, so the pass drains there; removing that
    drain by hand is caught by the checker's own pairing."""
    text = kernel(divisor="v0")
    assert loop_barrier_drains(text)
    assert violations(analyze(text, "k.s", Options()).inserted_text()) == []
    out = analyze(text, "k.s", Options(coalesce_window=0)).inserted_text().split("\n")
    k = next(i for i, ln in enumerate(out) if ln.strip() == "s_barrier" and "ds_write_b32 v1, v9" in out[i - 2])
    assert "lgkmcnt(0)" in out[k - 1], out[k - 3:k + 1]
    del out[k - 1]
    vs = violations("\n".join(out))
    assert any(v.rule == "barrier" and v.producer.mnemonic == "ds_write_b32" for v in vs), vs


def test_a_pass_pairing_that_trusts_every_lane_read_is_caught(monkeypatch):
    """Mutation: the pass reads every lane read as equal in both waves.  On the near miss it
    then keeps the write in flight; the checker, pairing on its own, reports the barrier."""
    import stinkywait_core.waitcnt.wave_match as wmod
    real = wmod.WaveMatch._step_vector

    def trusting(self, inst, neq):
        real(self, inst, neq)
        if inst.mnemonic.startswith("v_readfirstlane"):
            neq.difference_update(wmod._regkeys(inst.dsts))

    monkeypatch.setattr(wmod.WaveMatch, "_step_vector", trusting)
    text = kernel(divisor="v0")
    assert not loop_barrier_drains(text)  # (the wave index too reads as equal: one role)
    vs = violations(analyze(text, "k.s", Options()).inserted_text())
    assert any(v.rule == "barrier" for v in vs), vs


def test_an_edit_of_the_division_walks_the_pairing_again():
    """The pairing is kept across edits by what it reads: an edit of a vector instruction the
    lane read takes is one of them (the incremental plan equals a fresh one)."""
    from stinkywait_core.api import AnalysisCache
    cache = AnalysisCache()
    text = kernel()
    analyze(text, "k.s", Options(), cache=cache)
    edited = kernel(divisor="v0")
    inc = analyze(edited, "k.s", Options(), cache=cache)
    assert inc.inserted_text() == analyze(edited, "k.s", Options()).inserted_text()
    assert loop_barrier_drains(edited)


BF16GEMM = Path("/tmp/placement/k/gfx942_bf16gemm_bf16gemm_fp32bf16_tn_128x64_bshuffle_splitk.s")


@pytest.mark.skipif(not BF16GEMM.exists(), reason="aiter gfx942 bf16gemm text absent (BENCHMARKS.md)")
def test_aiter_gfx942_bf16gemm_loop_barriers_meet_no_epilogue_barrier():
    text = BF16GEMM.read_text()
    a, b = pairs_of(text)
    assert a is not None and b is not None
    loop = {ln for ln in a if 494 <= ln <= 1661}
    assert loop and all(max(a[ln]) <= 1661 and max(b[ln]) <= 1661 for ln in loop), \
        {ln: (a[ln], b[ln]) for ln in loop}
