"""The per-path wave-index restriction (analysis/wave_roles.py): a kernel that dispatches on the
wave index and joins the roles in shared code has its addresses compared as each wave runs
them, not as the join of the roles (aiter's gfx1250 f4gemm: each role sets up its own tensor
descriptor, then the roles share one loop)."""

from __future__ import annotations

import gzip
import textwrap
from pathlib import Path

import pytest

from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.analysis.wave_roles import restrictions
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module

DATA = Path(__file__).parent / "data" / "aiter_gfx1250"

HEAD = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n.text\nk:\n'
# three roles as aiter's f4gemm chains them (`s_cmp_eq_u32 w, k; s_cbranch_scc1 role_k`): wave 0
# fills 0x80 elements of 4 bytes at 0x4000, wave 1 0x800 at 0, waves 2-3 0x100 at 0x8000; after
# the join each reads READ
ROLES = """\
  s_bfe_u32 s2, ttmp8, 0x50019
  s_mov_b32 s24, 0x20000
  s_mov_b32 s25, 0x1000000
  s_mov_b32 s26, 0x100000
  s_mov_b32 s28, 1
  s_mov_b32 s29, 0xc00
  s_mov_b32 s30, 0
  s_mov_b32 s31, 0
  s_mov_b32 s20, 1
  s_mov_b32 s22, 0
  s_mov_b32 s23, 0x80000000
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lrole0
  s_cmp_eq_u32 s2, 1
  s_cbranch_scc1 .Lrole1
  s_mov_b32 s21, 0x8000
  s_mov_b32 s27, 0x1000000
  s_branch .Lshared
.Lrole1:
  s_mov_b32 s21, 0
  s_mov_b32 s27, 0x8000000
  s_branch .Lshared
.Lrole0:
  s_mov_b32 s21, 0x4000
  s_mov_b32 s27, 0x800000
.Lshared:
  tensor_load_to_lds s[20:23], s[24:31]
  v_mov_b32 v1, READ
  ds_load_b32 v2, v1
  v_add_nc_u32 v3, v2, v2
  s_endpgm
"""
META = """
.rodata
.amdhsa_kernel k
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 40
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .max_flat_workgroup_size: 128
    .wavefront_size: 32
...
.end_amdgpu_metadata
"""


def kernel(read: int) -> str:
    return HEAD + textwrap.dedent(ROLES).replace("READ", hex(read)) + META


def line_of(text: str, needle: str) -> int:
    return next(n for n, ln in enumerate(text.split("\n"), 1) if needle in ln)


def facts_of(text: str):
    mod = parse_asm(text, "k.s")
    fn = mod.functions[0]
    return fn, lds_facts(fn, mod)


def insts(fn, *lines):
    by = {i.line: i for b in fn.blocks for i in b.instrs if not i.is_label}
    return [by[n] for n in lines]


def tensor_waits(text: str) -> list:
    an = analyze(text, "k.s", Options(coalesce_window=0))
    return [w for w in an.waits() if w.counter == "tensor"]


def violations(text: str) -> list:
    return [v for r in check_module(parse_asm(text, "k.s"), Options(), lds_addresses=True) for v in r.violations]


def test_each_wave_index_has_its_own_view():
    text = kernel(0x5000)
    fn, facts = facts_of(text)
    views = facts.roles()
    assert views is not None and [r.wave for r, _ in views] == [0, 1, 2, 3]
    shared = next(b for b in fn.blocks if b.label == ".Lshared")
    role0 = next(b for b in fn.blocks if b.label == ".Lrole0")
    (r0, _), (r1, _), (r2, _), _ = views
    assert role0 in r0.live and role0 not in r1.live and role0 not in r2.live
    assert all(shared in r.live for r, _ in views)
    # no branch on the wave index: no views (nothing to gain)
    plain = text.replace("s_cmp_eq_u32 s2,", "s_cmp_eq_u32 s24,")
    fn2, facts2 = facts_of(plain)
    assert facts2.roles() is None


def test_the_fill_of_the_shared_block_is_each_roles_own():
    """Joined, the tile starts at 0, 0x4000 or 0x8000 and is up to 0x2000 bytes: the read at
    0x5000 may meet it.  Wave 0's is [0x4000, 0x4200), wave 1's [0, 0x2000), waves 2 and 3's
    [0x8000, 0x8400): apart from 0x5000 in each, so no wait between them; the checker agrees."""
    text = kernel(0x5000)
    fn, facts = facts_of(text)
    fill, read = insts(fn, line_of(text, "tensor_load_to_lds"), line_of(text, "ds_load_b32"))
    assert facts._plain_verdict(fill, read, True, False)[0]  # the join cannot separate them
    assert not facts.may_overlap(fill, read, True)
    assert "disjoint as each wave runs them" in facts.why_not_proven(fill, read, True)
    assert not tensor_waits(text)
    assert violations(analyze(text, "k.s", Options()).inserted_text()) == []


@pytest.mark.parametrize("read", [0x4100, 0x1000, 0x8200])
def test_a_read_in_one_roles_tile_keeps_the_wait(read):
    """Near misses: 0x4100 lies in wave 0's tile, 0x1000 in wave 1's, 0x8200 in waves 2-3's: the
    wait stays, and the kernel without it is caught by the checker."""
    text = kernel(read)
    fn, facts = facts_of(text)
    fill, rd = insts(fn, line_of(text, "tensor_load_to_lds"), line_of(text, "ds_load_b32"))
    assert facts.may_overlap(fill, rd, True)
    assert tensor_waits(text)
    assert violations(text)  # the kernel as written has no wait: unsafe


def test_a_wrongly_decided_branch_would_be_caught(monkeypatch):
    """Mutation: the views take each decided branch the other way (waves 1-3 in role 0's code,
    wave 0 in role 1's, nobody in the last role's).  The pass then drops the wait for a read of
    the last role's tile, which waves 2 and 3 fill: the views decide the plan.  (The property
    test's interpreter, tests/test_lds_properties.py, catches such a view on random kernels.)"""
    import stinkywait_core.analysis.wave_roles as wr
    text = kernel(0x8200)
    assert tensor_waits(text)
    real = wr._scc_branch

    def flipped(b):
        got = real(b)
        if got is None:
            return None
        t, on, lab = got
        return t, 1 - on, lab

    monkeypatch.setattr(wr, "_scc_branch", flipped)
    assert not tensor_waits(text)


def test_f4gemm_shared_loop_fills_are_bounded_per_wave():
    """aiter's gfx1250 f4gemm (apre0): the shared loop's first tensor fill is unbounded as a
    join of the four roles' descriptors and bounded in each wave's view (roles 0 and 2 run it)."""
    path = DATA / "f4gemm_mxfp4_256x256_apre0.s.gz"
    if not path.exists():
        pytest.skip("test data absent")
    text = gzip.decompress(path.read_bytes()).decode()
    mod = parse_asm(text, "k.s")
    fn = mod.functions[0]
    facts = lds_facts(fn, mod)
    fill = insts(fn, 4980)[0]
    assert fill.mnemonic == "tensor_load_to_lds"
    acc = facts.access(fill)
    assert acc.pieces is None or facts._unbounded_why(acc)
    per = facts.role_accesses(fill)
    assert per is not None and {w for w, _ in per} == {0, 2}
    for _, a in per:
        assert a is not None and a.pieces is not None and not facts._unbounded_why(a)
    rs = restrictions(fn, facts.flow.cfg, facts.flow.launch, None, text)
    assert rs is not None and len(rs) == 4


def _across_barrier(read: int) -> str:
    """The roles' fills published at a barrier and read by the other waves after it; roles 2-3
    fill just below the LDS end, so the join of the roles runs past it and the checker's
    cross-wave test must ask each wave's view (hwpublish's role comparison)."""
    from stinkywait_core.analysis.launch import lds_bytes
    top = lds_bytes("gfx1250") - 0x1000
    return kernel(read).replace("s_mov_b32 s21, 0x8000\n", f"s_mov_b32 s21, {hex(top)}\n").replace(
        f"  v_mov_b32 v1, {hex(read)}\n", f"  s_barrier_signal -1\n  s_barrier_wait -1\n  v_mov_b32 v1, {hex(read)}\n")


def test_fills_published_across_waves_are_compared_per_view_by_the_checker():
    from stinkywait_core.validate import hwpublish
    seen = []
    real = hwpublish.lattice_meet

    def spy(*args):
        seen.append(args)
        return real(*args)

    text = _across_barrier(0x5000)
    assert not tensor_waits(text)  # apart from every role's tile: published undrained
    hwpublish.lattice_meet = spy
    try:
        assert violations(analyze(text, "k.s", Options()).inserted_text()) == []
    finally:
        hwpublish.lattice_meet = real
    assert seen  # the per-view comparison ran
    # a near miss: the other waves read inside wave 1's tile
    near = _across_barrier(0x1000)
    assert tensor_waits(near)
    assert violations(near) != []  # without the drain (as written), the checker finds it
