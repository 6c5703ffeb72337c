"""Two wave groups one barrier apart in one loop (issue 22, aiter's gfx950 a8w8 cktile GEMM):
the leading group takes the loop's exit branch while the other still waits at the barrier
before it.  Both pairings (the pass's waitcnt/wave_match.py with wave_branch_facts.py, the
checker's validate/hwwaves.py with hwbranch.py) must carry the leading wave's outcome to the
lagging wave's branch on the same values, and an ``s_cbranch_execz`` at the launch EXEC must
go one way; neither may do so where the lagging wave's condition rests on other values.  A
concrete run of every pair of waves checks that every pairing that really happens is among
both analyses'."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_publish_waves import kernel, pairs_of  # noqa: E402
from test_wave_trips import _fences  # noqa: E402

BAR = "  s_barrier_signal -1\n  s_barrier_wait 0xffff\n"

# waves 2-3 run one barrier (lines 8/9) before the shared loop (three barriers a trip, lines
# 12-17), waves 0-1 one after it (lines 24/25); the epilogue's barrier is at lines 21/22
SHIFT = ("  s_bfe_u32 s2, ttmp8, 0x50019\n  s_mov_b32 s4, 0\n  s_cmp_lt_u32 s2, 2\n  s_cbranch_scc1 .Lj0\n"
         + BAR + ".Lj0:\n.Lh:\n" + BAR * 3
         + "  s_add_u32 s4, s4, 1\n  s_cmp_lt_u32 s4, s10\n  s_cbranch_scc1 .Lh\n"
         + BAR + "  s_cmp_lt_u32 s2, 2\n  s_cbranch_scc0 .Lend\n" + BAR + ".Lend:\n  s_endpgm\n")

LOOP = (12, 13, 14, 15)  # (the loop's first two barriers: the third meets the epilogue's on the last trip)
EPILOGUE = {0, 21, 22, 24, 25}


def test_groups_a_barrier_apart_pair_their_loop_barriers_only():
    a, b = pairs_of(kernel(SHIFT))
    for got in (a, b):
        for line in LOOP:
            assert not got[line] & EPILOGUE, (line, got[line])
        assert 21 in got[16] and 12 in got[16]  # (the last trip's third barrier meets the epilogue's)


@pytest.mark.parametrize("change", [
    # the leading waves (0-1, no barrier before the loop) compare with another bound
    ("  s_cmp_lt_u32 s4, s10\n", "  s_cmp_lt_u32 s2, 2\n  s_cbranch_scc0 .Lo\n  s_cmp_lt_u32 s4, s10\n  s_branch .Lc\n"
     ".Lo:\n  s_cmp_lt_u32 s4, s11\n.Lc:\n"),
    # the bound is chosen by the group before the loop
    ("  s_mov_b32 s4, 0\n", "  s_mov_b32 s4, 0\n  s_cmp_lt_u32 s2, 2\n  s_cbranch_scc0 .Lb\n  s_mov_b32 s10, s11\n.Lb:\n"),
    # the counter is reset from a per-group value in the loop's first barrier interval
    (BAR * 3 + "  s_add_u32", BAR + "  s_mov_b32 s4, s3\n" + BAR * 2 + "  s_add_u32"),
], ids=["bound-per-group", "bound-chosen-by-group", "counter-reset"])
def test_near_misses_still_meet_the_epilogue(change):
    """The lagging wave's exit test no longer reads what the leading wave's read: the outcome
    must not be carried over, so a loop barrier may meet the epilogue's in both pairings."""
    old, new = change
    assert old in SHIFT
    text = SHIFT.replace(old, new, 1)
    if "s3" in new:
        text = text.replace("  s_mov_b32 s4, 0\n", "  s_mov_b32 s4, 0\n  s_add_u32 s3, s2, 1\n", 1)
    text = kernel(text)
    lines = text.split("\n")
    head = lines.index(".Lh:") + 2  # (1-based: the loop's first barrier)
    tail = next(i for i, ln in enumerate(lines) if ln == "  s_cbranch_scc1 .Lh") + 1
    a, b = pairs_of(text)
    for got in (a, b):
        assert 0 in got[head] or any(x > tail for x in got[head] if x), (head, got[head])


# wave 0 alone passes a barrier guarded by an execz test of its own EXEC
EXECZ = """\
  s_bfe_u32 s2, ttmp8, 0x50019
  s_mov_b64 vcc, exec
  s_cbranch_execz .Lskip
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 .Lskip
  s_nop 0
.Lskip:
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lend
  s_mov_b64 vcc, exec
  s_cbranch_execz .Lbar
  s_branch .Lend
.Lbar:
""" + BAR + """\
.Lend:
""" + BAR + """\
  s_endpgm
"""


def test_execz_at_the_launch_mask_falls_through():
    """No wave's EXEC is empty at launch: the barrier under the execz (lines 17/18) is run by
    no wave, so the last barrier (20/21) meets only itself and an ended wave."""
    a, b = pairs_of(kernel(EXECZ))
    for got in (a, b):
        assert 17 not in got and got[20] <= {0, 20}, got


def test_execz_after_an_exec_write_goes_both_ways():
    """Near miss: EXEC is written before the test (a wave's lanes may all be off): the guarded
    barrier may run and meet the last one in both pairings."""
    text = EXECZ.replace("  s_cmp_eq_u32 s2, 0\n  s_cbranch_scc1 .Lend\n",
                         "  s_cmp_eq_u32 s2, 0\n  s_cbranch_scc1 .Lend\n  s_mov_b64 exec, s[8:9]\n", 1)
    a, b = pairs_of(kernel(text))
    for got in (a, b):
        assert 18 in got and 21 in got[18], got


# ---- random programs against a concrete run of each pair of waves -----------------------------

def _shift_program(rng: random.Random) -> str:
    """Waves 2-3 pass 0-2 barriers before a shared loop, waves 0-1 0-2 after it; the loop
    steps s4 by 1 (or the wave's own s3) and compares it (or its copy from before the step)
    with s10 (or s11, in one group), at random among 0-3 barriers."""
    pre, post = rng.randint(0, 2), rng.randint(0, 2)
    lines = ["  s_bfe_u32 s2, ttmp8, 0x50019", "  s_add_u32 s3, s2, 1", "  s_mov_b32 s4, 0", "  s_mov_b32 s5, 0",
             "  s_mov_b32 s12, s10"]
    if rng.random() < 0.25:
        lines += ["  s_cmp_lt_u32 s2, 2", "  s_cbranch_scc1 .Lb", "  s_mov_b32 s12, s11", ".Lb:"]
    lines += ["  s_cmp_lt_u32 s2, 2", "  s_cbranch_scc1 .Lj0"] + ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"] * pre
    lines += [".Lj0:", ".Lh:"]
    bars = [rng.randint(0, 2) for _ in range(3)]
    lines += ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"] * bars[0]
    what = rng.choice(["s4", "s4", "s5"])
    if what == "s5":
        lines.append("  s_mov_b32 s5, s4")
    lines.append(f"  s_add_u32 s4, s4, {rng.choice(['1', '1', '1', 's3'])}")
    lines += ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"] * bars[1]
    lines.append(f"  s_cmp_lt_u32 {what}, s12")
    lines += ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"] * bars[2]
    lines += ["  s_cbranch_scc1 .Lh", "  s_barrier_signal -1", "  s_barrier_wait 0xffff",
              "  s_cmp_lt_u32 s2, 2", "  s_cbranch_scc0 .Lend"]
    lines += ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"] * post + [".Lend:", "  s_endpgm"]
    return kernel("\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", range(40))
def test_random_shifted_groups_pair_what_the_waves_really_meet(seed):
    """Every pairing of barrier instances two concrete waves make (four waves, two per group,
    bounds 1-3) is among the pass's and among the checker's."""
    text = _shift_program(random.Random(seed))
    a, b = pairs_of(text)
    assert a is not None and b is not None
    met = set()  # (a fence line, the other wave's fence line at the same instance, 0: ended)
    for bounds in ((1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (3, 2)):
        runs = [_fences(text, w, *bounds) for w in range(4)]
        met.update((f, y[k] if k < len(y) else 0) for x in runs for y in runs for k, f in enumerate(x))
    assert not {m for m in met if m[1] not in a[m[0]] or m[1] not in b[m[0]]}


# ---- the deciding step, on its own ------------------------------------------------------------

def _exit_block():
    from stinkywait_core.api import parse
    fn = parse(kernel(SHIFT), "k.s").functions[0]
    return next(b for b in fn.blocks if b.terminator() is not None and b.terminator().line == 20)


def test_the_pass_decides_only_on_a_fact_about_the_branchs_own_condition():
    """A fact decides wave 1's exit branch (``s_cbranch_scc1 .Lh``: taken when SCC is 1) only
    when its terms are SCC itself and it is wave 1's: a fact still over the compare's sources
    (not yet computed into SCC), or wave 0's, leaves the branch open."""
    from stinkywait_core.waitcnt.wave_branch_facts import DIR, decided
    b = _exit_block()
    scc = (("SCC", 0),)
    assert decided(1, b, {(DIR, 1, "scc", scc, True)}) == 0
    assert decided(1, b, {(DIR, 1, "scc", scc, False)}) == 1
    pending = (("s_cmp_lt_u32 s4, s10", 0, (("s", 4), ("s", 10))),)
    assert decided(1, b, {(DIR, 1, "scc", pending, True)}) is None
    assert decided(1, b, {(DIR, 0, "scc", scc, True)}) is None
    assert decided(1, b, {(DIR, 1, "vcc", scc, True)}) is None


def test_the_checker_decides_only_on_the_names_its_condition_holds():
    """The checker's outcome of names (n,) decides a branch whose SCC holds n, and not one
    whose SCC holds another name; an execz at the launch mask falls through, one after an EXEC
    write is open."""
    from stinkywait_core.validate.hwbranch import decided, launch_way
    info = ("s_cbranch_scc1", 0, True)
    assert decided(info, (7,), frozenset({("scc", (7,), True)})) == 0
    assert decided(info, (7,), frozenset({("scc", (7,), False)})) == 1
    assert decided(info, (8,), frozenset({("scc", (7,), True)})) is None
    assert decided(("s_cbranch_scc0", 1, True), (7,), frozenset({("scc", (7,), True)})) == 0
    assert launch_way(("s_cbranch_execz", 0, True)) == 1 and launch_way(("s_cbranch_execnz", 1, True)) == 1
    assert launch_way(("s_cbranch_execz", 0, False)) is None
