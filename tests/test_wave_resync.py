"""Waves that part at a branch and meet again with no barrier between are paired from the join
on (waitcnt/wave_match.py for the pass, validate/hwwaves.py for the checker, written apart).

aiter's gfx1250 f4gemm: only wave 0 runs the entry's prefetch block; one role's loop signals a
named barrier in a wave-0-only branch the other role's copy of the loop lacks; the roles are
dispatched by a chain of tests on the wave index, the first role one test from the chain's
head, the last three.  Walked block by block, the waves ran their code a block apart after
such a branch, and every later branch was walked both ways: loop barriers were paired with the
epilogue's, and fills in flight at them were drained.  These kernels are cut down to that
shape: wave 0's slot of a per-wave buffer is stored in a loop and read by every wave after the
epilogue's barrier only.
"""

from __future__ import annotations

import textwrap

from test_publish_waves import pairs_of, violations
from test_wave_roles import META  # four waves of 32 lanes: the wave index is a value the address analysis names
from test_wave_roles import kernel as roles_kernel
from test_wave_roles import tensor_waits

from stinkywait_core.api import analyze
from stinkywait_core.results import Options

HEAD = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n.text\nk:\n'
# each wave's slot at (wave index) * 0x400; role 1 reads 0x10000 in its loop
SETUP = """\
  s_bfe_u32 s2, ttmp8, 0x50019
  s_lshl_b32 s8, s2, 10
  v_mov_b32 v1, s8
  v_mov_b32 v2, 0x10000
  v_mov_b32 v7, 0
"""
LOOP1 = """\
.Lr1:
  ds_load_b32 v4, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_add_co_i32 s3, s3, 1
  s_cmp_lt_u32 s3, s1
  s_cbranch_scc1 .Lr1
  s_branch .Lend
"""
LOOPS = LOOP1 + """\
.Lr0:
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_add_co_i32 s3, s3, 1
  s_cmp_lt_u32 s3, s1
  s_cbranch_scc1 .Lr0
"""
EPILOGUE = """\
.Lend:
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v5, v7
  s_wait_dscnt 0
  v_add_nc_u32 v6, v5, v4
  s_endpgm
"""
# wave 0 alone reads a hardware register and sets a scalar, then every wave counts from 0
PREFETCH = SETUP + """\
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 .Lgo
  s_getreg_b32 s6, hwreg(HW_REG_WAVE_MODE)
  s_mov_b32 s7, 31
.Lgo:
  s_mov_b32 s3, 0
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lr0
""" + LOOPS + EPILOGUE


def kernel(body: str) -> str:
    return HEAD + textwrap.dedent(body) + META


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """The 1-based line of the nth line containing `needle`."""
    hits = [i + 1 for i, ln in enumerate(text.split("\n")) if needle in ln]
    return hits[nth - 1]


def drained_barriers(text: str) -> list[int]:
    """Lines of barrier signals the pass drains LDS before."""
    an = analyze(text, "k.s", Options(coalesce_window=0))
    lines = text.split("\n")
    return sorted({w.line for w in an.waits() if "s_barrier_signal -1" in lines[w.line - 1]})


def ours(text: str) -> str:
    return analyze(text, "k.s", Options()).inserted_text()


def loops_pair(text: str, loop0: int, loop1: int, end: int) -> None:
    """Both pairings meet role 0's loop barrier with itself and role 1's, the epilogue's with
    itself alone; wave 0's store runs across its loop barriers and the epilogue's barrier
    drains it; the checker passes the output."""
    lines = [line_of(text, "s_barrier_signal -1", n) for n in (loop0, loop1, end)]
    a, b = pairs_of(text)
    assert a == b
    assert a[lines[0]] == {lines[0], lines[1]} and a[lines[2]] == {lines[2]}
    assert drained_barriers(text) == [lines[2]]


def test_prefetch_branch_of_wave_zero_rejoins():
    text = kernel(PREFETCH)
    loops_pair(text, 2, 1, 3)
    assert violations(ours(text)) == []


def test_barrier_in_the_prefetch_branch_keeps_the_waves_apart():
    """Near miss: wave 0 meets one more barrier in its branch, so its loop barriers are the
    others' next ones and its last the epilogue's: the store is drained in the loop, and the
    checker reports the output with that drain taken out."""
    body = PREFETCH.replace("  s_mov_b32 s7, 31\n", "  s_mov_b32 s7, 31\n  s_barrier_signal -1\n  s_barrier_wait 0xffff\n")
    text = kernel(body)
    loop0 = line_of(text, "s_barrier_signal -1", 3)
    end = line_of(text, "s_barrier_signal -1", 4)
    a, b = pairs_of(text)
    assert a == b and end in a[loop0]
    assert loop0 in drained_barriers(text)
    out = ours(text)
    assert violations(out) == []
    lines = out.split("\n")
    k = next(i for i, ln in enumerate(lines) if "ds_store_b32" in ln)
    assert lines[k + 1].strip().startswith("s_wait_dscnt") and "s_barrier_signal -1" in lines[k + 2]
    del lines[k + 1]
    vs = violations("\n".join(lines))
    assert any(v.rule == "barrier" and v.producer.mnemonic == "ds_store_b32" for v in vs)


# roles by a chain of tests on the wave index (role 0 one test from the head, role 1 up to
# three), each guarded by a trip test on a kernel argument; role 0's loop signals a named
# barrier (not an LDS fence) in a wave-0-only branch that role 1's loop lacks
DISPATCH = SETUP + """\
  s_mov_b32 s3, 0
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lg0
  s_cmp_eq_u32 s2, 1
  s_cbranch_scc1 .Lg1
  s_cmp_eq_u32 s2, 2
  s_cbranch_scc1 .Lg1
.Lg1:
  s_cmp_lt_u32 s3, s1
  s_cbranch_scc0 .Lend
""" + LOOP1 + """\
.Lg0:
  s_cmp_lt_u32 s3, s1
  s_cbranch_scc0 .Lend
.Lr0:
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 .Lnext
  s_barrier_signal -3
.Lnext:
  s_add_co_i32 s3, s3, 1
  s_cmp_lt_u32 s3, s1
  s_cbranch_scc1 .Lr0
""" + EPILOGUE


def test_role_dispatch_chain_and_a_one_sided_branch_pair_the_loops():
    text = kernel(DISPATCH)
    loops_pair(text, 2, 1, 3)
    assert violations(ours(text)) == []


def test_fence_in_the_one_sided_branch_keeps_the_loops_apart():
    """Near miss: role 0's wave-0 branch holds an LDS barrier; wave 0 then meets one barrier
    more per trip, so its loop barriers may be the epilogue's of another wave: drained."""
    text = kernel(DISPATCH.replace("  s_barrier_signal -3\n", "  s_barrier_signal -1\n  s_barrier_wait 0xffff\n"))
    loop0 = line_of(text, "s_barrier_signal -1", 2)
    end = line_of(text, "s_barrier_signal -1", 4)
    a, b = pairs_of(text)
    assert a == b and end in a[loop0]
    assert loop0 in drained_barriers(text)
    assert violations(ours(text)) == []


def test_tests_of_equal_values_keep_the_waves_together():
    """Near miss of the dispatch rule: the trip guards test a kernel argument, the same in every
    wave; read as a dispatch (each wave taking it its own way) a wave could skip its loop
    while the other runs it, and the loop barriers would meet the epilogue's."""
    body = SETUP + """\
      s_mov_b32 s3, 0
      s_cmp_eq_u32 s2, 0
      s_cbranch_scc1 .Lg0
    .Lg1:
      s_cmp_lt_u32 s3, s1
      s_cbranch_scc0 .Lend
    """.replace("    ", "  ") + LOOPS.replace(".Lr0:\n", ".Lg0:\n  s_cmp_lt_u32 s3, s1\n  s_cbranch_scc0 .Lend\n.Lr0:\n") \
        + EPILOGUE
    loops_pair(kernel(body), 2, 1, 3)


# the cluster barrier's wait as llvm-objdump prints it (0xfffd: -3 as a 16-bit immediate), after
# the signal every wave's store to one address may still be in flight
HANDSHAKE = """\
  v_mov_b32 v1, 0x100
  ds_store_b32 v1, v3
  s_barrier_signal -3
  s_barrier_wait WAIT
  ds_load_b32 v4, v1
  s_wait_dscnt 0
  v_add_nc_u32 v6, v4, v4
  s_endpgm
"""


def test_cluster_barrier_wait_spelled_0xfffd_is_no_lds_fence():
    """decisions.md 9: the cluster handshake -3 orders no LDS between the workgroup's waves, in
    either spelling: the pass adds no wait (the read after it is ordered behind the store by
    the DS engine), and the checker (which read 0xfffd as a fence and wanted the store
    drained before it) passes that."""
    text = kernel(HANDSHAKE.replace("WAIT", "0xfffd"))
    an = analyze(text, "k.s", Options(coalesce_window=0))
    assert list(an.waits()) == []
    assert violations(an.inserted_text()) == []


def test_cluster_barrier_near_miss_workgroup_wait_drains():
    """Near miss: the workgroup barrier's wait (0xffff, with the cluster signal: still a fence
    under the hardware model) drains the store, which every wave writes at one address."""
    text = kernel(HANDSHAKE.replace("WAIT", "0xffff"))
    an = analyze(text, "k.s", Options(coalesce_window=0))
    assert line_of(text, "s_barrier_wait") in [w.line for w in an.waits()]
    out = an.inserted_text().split("\n")
    k = next(i for i, ln in enumerate(out) if "s_barrier_wait 0xffff" in ln)
    assert out[k - 1].strip().startswith("s_wait_dscnt")
    del out[k - 1]
    assert any(v.rule == "barrier" for v in violations("\n".join(out)))


def _roles_across_barrier(read: int) -> str:
    """test_wave_roles' three roles (wave 0 fills [0x4000, 0x4200), wave 1 [0, 0x2000), waves
    2-3 [0x8000, 0x8400)), the fill published at a barrier and `read` read by the other waves
    after it.  Joined, the roles' tile is [0, 0xa000): inside the LDS, so only each wave's own
    view separates it from a read between the tiles."""
    return roles_kernel(read).replace(f"  v_mov_b32 v1, {hex(read)}\n",
                                      f"  s_barrier_signal -1\n  s_barrier_wait -1\n  v_mov_b32 v1, {hex(read)}\n")


def test_role_fills_joined_inside_the_lds_are_compared_per_wave():
    text = _roles_across_barrier(0x5000)
    assert not tensor_waits(text)  # apart from every role's tile: published undrained
    assert violations(ours(text)) == []
    # a near miss: the other waves read inside wave 1's tile
    near = _roles_across_barrier(0x1000)
    assert tensor_waits(near)
    assert violations(near) != []  # without the drain (as written), the checker finds it
