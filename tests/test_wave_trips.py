"""Loop trips equal across waves (issue 22): two wave roles that advance one loop counter by the
same instruction, one before its barrier and the other after it (aiter's gfx942/gfx950 fmha fwd
ping-pong), run the same number of trips, so their loop barriers meet each other and never the
epilogue's.  The pass (waitcnt/wave_match.py: lag relations between the two waves' registers)
and the checker (validate/hwwaves.py: joins that anti-unify value names) must each see it, and
neither may see it where a wave's counter, bound or compare depends on the wave.  A small
concrete interpreter runs the generated programs wave by wave: every barrier pairing that really
happens must be among both analyses' pairings."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_publish_waves import barrier_waits, checker, kernel, pairs_of, violations  # noqa: E402

from stinkywait_core.api import analyze  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402

BAR = "  s_barrier_signal -1\n  s_barrier_wait 0xffff\n"

# odd waves step and compare after their barrier, even waves before it (lines 10/11, 19/20 loop
# barriers; 23/24 the epilogue's)
LAG = """\
  s_bfe_u32 s2, ttmp8, 0x50019
  s_and_b32 s3, s2, 1
  s_mov_b32 s4, 0
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc1 .Leven
.Lodd:
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_add_u32 s4, s4, 1
  s_cmp_lt_u32 s4, s10
  s_cbranch_scc1 .Lodd
  s_branch .Lend
.Leven:
  s_add_u32 s4, s4, 1
  s_cmp_lt_u32 s4, s10
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_cbranch_scc1 .Leven
.Lend:
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_endpgm
"""


def test_a_counter_stepped_across_the_barrier_pairs_the_loops_only():
    a, b = pairs_of(kernel(LAG))
    for got in (a, b):
        assert got[10] == {10, 19} and got[19] == {10, 19} and got[23] == {23}


@pytest.mark.parametrize("change", [
    ("  s_add_u32 s4, s4, 1\n  s_cmp_lt_u32 s4, s10\n  s_barrier", "  s_add_u32 s4, s4, s3\n  s_cmp_lt_u32 s4, s10\n  s_barrier"),
    ("  s_cmp_lt_u32 s4, s10\n  s_barrier", "  s_cmp_lt_u32 s4, s11\n  s_barrier"),
    ("  s_add_u32 s4, s4, 1\n  s_cmp_lt_u32 s4, s10\n  s_barrier", "  s_add_u32 s4, s4, 1\n  s_mov_b32 s10, s2\n  s_cmp_lt_u32 s4, s10\n  s_barrier"),
    ("  s_add_u32 s4, s4, 1\n  s_cmp_lt_u32 s4, s10\n  s_barrier", "  s_mov_b32 s5, s4\n  s_add_u32 s4, s4, 1\n  s_cmp_lt_u32 s5, s10\n  s_barrier"),
], ids=["step-by-wave", "other-bound", "bound-by-wave", "old-value-compared"])
def test_near_misses_still_meet_the_epilogue(change):
    """The even waves' loop changed so its trips may differ from the odd waves': a step of the
    wave's own size, another bound, a bound from the wave index, the counter's value before the
    step compared: in both pairings an odd wave's loop barrier may meet the epilogue's."""
    old, new = change
    assert old in LAG
    a, b = pairs_of(kernel(LAG.replace(old, new, 1)))
    for got in (a, b):
        assert 23 in got[10] or 0 in got[10] or any(x > 21 for x in got[10]), got


# wave 0 reads 0x100 in its loop, the other waves read elsewhere in theirs; everyone stores to
# 0x100 in the epilogue, after its first barrier: wave 0's read in flight at its loop barrier
# (line 24) needs a drain there only when another wave may leave its loop a trip early and store
# while wave 0 is still in its loop (its RAW wait after the barrier waits for it otherwise)
FILL = """\
  v_mov_b32 v1, 0x100
  v_mov_b32 v2, 0x2000
  s_bfe_u32 s2, ttmp8, 0x50019
  s_add_u32 s3, s2, 1
  s_mov_b32 s4, 0
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lzero
.Lrest:
  ds_load_b32 v7, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  v_add_nc_u32 v6, v7, v6
  s_add_u32 s4, s4, 1
  s_cmp_lt_u32 s4, s10
  s_cbranch_scc1 .Lrest
  s_branch .Lend
.Lzero:
  ds_load_b32 v8, v1
  s_add_u32 s4, s4, 1
  s_cmp_lt_u32 s4, s10
  s_barrier_signal -1
  s_barrier_wait 0xffff
  v_add_nc_u32 v6, v8, v6
  s_cbranch_scc1 .Lzero
.Lend:
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_endpgm
"""


def test_a_read_runs_across_the_loop_barrier_when_the_trips_are_equal():
    text = kernel(FILL)
    assert 24 not in barrier_waits(text)  # (wave 0's loop barrier: no dscnt drain)
    assert checker(text) == []


def test_the_checker_reports_the_drain_a_wave_dependent_step_needs():
    """Near miss: wave 0 steps by its own amount, so another wave may store to the bytes it
    reads in the epilogue while wave 0 is still in its loop: the pass drains; with that drain
    removed by hand the checker reports the barrier."""
    text = kernel(FILL.replace("  ds_load_b32 v8, v1\n  s_add_u32 s4, s4, 1\n", "  ds_load_b32 v8, v1\n  s_add_u32 s4, s4, s3\n"))
    assert 24 in barrier_waits(text)
    out = analyze(text, "k.s", Options(coalesce_window=0)).inserted_text().split("\n")
    k = next(i for i, ln in enumerate(out) if "s_barrier_signal" in ln and i > 20)
    assert "s_wait_dscnt" in out[k - 1]
    del out[k - 1]
    assert any(v.rule == "barrier" for v in violations("\n".join(out)))


# ---- random programs against a concrete run of each pair of waves -----------------------------

def _loop(rng: random.Random, tag: str) -> list[str]:
    """One role's loop over s4: barriers; a step (1, a uniform s11, or the wave's own s3), on
    some paths one more step where the uniform s11 is 1; a compare of s4, of its copy before the
    step (s5) or of the last trip's value (s6, copied after the compare), at random among the
    barriers."""
    step = rng.choice(["1", "1", "s11", "s3"])
    what = rng.choice(["s4", "s4", "s5", "s6"])
    bars = [rng.randint(0, 2) for _ in range(3)]
    body = [f".Lh{tag}:"] + ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"] * bars[0]
    if what == "s5":
        body.append("  s_mov_b32 s5, s4")
    body.append(f"  s_add_u32 s4, s4, {step}")
    if rng.random() < 0.3:
        body += ["  s_cmp_eq_u32 s11, 1", f"  s_cbranch_scc0 .Ls{tag}", "  s_add_u32 s4, s4, 1", f".Ls{tag}:"]
    body += ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"] * bars[1]
    body.append(f"  s_cmp_lt_u32 {what}, s10")
    if what == "s6":
        body.append("  s_mov_b32 s6, s4")
    body += ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"] * bars[2]
    return body + [f"  s_cbranch_scc1 .Lh{tag}"]


def _trip_program(rng: random.Random) -> str:
    lines = ["  s_bfe_u32 s2, ttmp8, 0x50019", "  s_add_u32 s3, s2, 1", "  s_mov_b32 s4, 0", "  s_mov_b32 s5, 0",
             "  s_mov_b32 s6, 0", "  s_cmp_lt_u32 s2, 2", "  s_cbranch_scc1 .La"]
    lines += _loop(rng, "b") + ["  s_branch .Lj", ".La:"] + _loop(rng, "a")
    lines += [".Lj:", "  s_barrier_signal -1", "  s_barrier_wait 0xffff", "  s_endpgm"]
    return kernel("\n".join(lines) + "\n")


def _fences(text: str, wave: int, s10: int, s11: int) -> list[int]:
    """The fence lines one wave runs, by a direct interpretation of the generated programs."""
    lines = text.split("\n")
    labels = {ln[:-1]: i for i, ln in enumerate(lines) if ln.startswith(".L") and ln.endswith(":")}
    regs = {"s10": s10, "s11": s11, "SCC": 0}
    out, pc = [], next(i for i, ln in enumerate(lines) if ln == "k:") + 1
    while True:
        ins = lines[pc].split(None, 1)
        pc += 1
        if not ins or ins[0].startswith("."):
            continue
        mn, ops = ins[0], [o.strip() for o in ins[1].split(",")] if len(ins) > 1 else []

        def val(o: str) -> int:
            return regs[o] if re.fullmatch(r"s\d+", o) else int(o, 0)
        if mn == "s_endpgm":
            return out
        if mn.startswith("s_barrier"):
            out.append(pc)
        elif mn == "s_bfe_u32":
            regs[ops[0]] = wave
        elif mn == "s_add_u32":
            regs[ops[0]] = val(ops[1]) + val(ops[2])
        elif mn == "s_mov_b32":
            regs[ops[0]] = val(ops[1])
        elif mn == "s_cmp_lt_u32":
            regs["SCC"] = int(val(ops[0]) < val(ops[1]))
        elif mn == "s_cmp_eq_u32":
            regs["SCC"] = int(val(ops[0]) == val(ops[1]))
        elif mn.startswith("s_cbranch_scc"):
            pc = labels[ops[0]] + 1 if regs["SCC"] == int(mn[-1]) else pc
        elif mn == "s_branch":
            pc = labels[ops[0]] + 1
        else:
            raise AssertionError(mn)


@pytest.mark.parametrize("seed", range(40))
def test_random_loop_trips_pair_what_the_waves_really_meet(seed):
    """Every pairing of barrier instances two concrete waves make (four waves, two per role,
    bounds 1-3, uniform steps 1-2) is among the pass's and among the checker's."""
    text = _trip_program(random.Random(seed))
    a, b = pairs_of(text)
    assert a is not None and b is not None
    for s10 in (1, 2, 3):
        for s11 in (1, 2):
            runs = [_fences(text, w, s10, s11) for w in range(4)]
            for x in runs:
                for y in runs:
                    for k in range(max(len(x), len(y))):
                        if k < len(x):
                            partner = y[k] if k < len(y) else 0
                            assert partner in a[x[k]] and partner in b[x[k]], (x[k], partner, s10, s11)


def test_the_checkers_join_keeps_a_lag_and_never_a_stale_equality():
    """The checker's join of two visits of one pair of positions: B's counter one step ahead of
    A's in both visits stays "A's plus one step"; a variable this pair made in an earlier visit
    that comes back unchanged in one wave while the other stepped is not the new variable (the
    previous visit's value: equal names would claim equal registers)."""
    from stinkywait_core.validate.hwwaves import _Walk
    w = _Walk(((), True, frozenset(), ()))
    u, pair = ("s", 4), ((0, 0, ()), (0, 0, ()))
    one = (("1",), ())

    def step(x: int) -> int:
        return w._id(("s_add_u32", one, x, u))
    x, y = w._id(("launch", u)), w._id(("s_mov_b32", (("7",), ()), u))
    lag = w._join(pair, ({u: x}, {u: step(x)}), ({u: y}, {u: step(y)}))
    assert lag[1][u] == step(lag[0][u]) and lag[0][u] != x
    same = w._join(((1, 0, ()), (1, 0, ())), ({u: x}, {u: x}), ({u: y}, {u: y}))
    assert same[0][u] == same[1][u]
    again = w._join(((1, 0, ()), (1, 0, ())), same, ({u: step(same[0][u])}, {u: same[1][u]}))
    assert again[0][u] != again[1][u]


def test_a_counter_reset_between_the_steps_still_meets_the_epilogue():
    """Near miss: the even waves step before their barrier (a relation "even's s4 = odd's s4 + 1"
    is made), the odd waves then reset s4 from s12 before stepping it after a second barrier: the
    relation read the odd waves' old s4 and must not survive the reset, so the loops' trips may
    differ and an odd loop barrier may meet the epilogue's (line 28) in both pairings."""
    text = LAG.replace("  s_barrier_wait 0xffff\n  s_add_u32 s4, s4, 1\n  s_cmp_lt_u32 s4, s10\n  s_cbranch_scc1 .Lodd",
                       "  s_barrier_wait 0xffff\n  s_mov_b32 s4, s12\n" + BAR + "  s_add_u32 s4, s4, 1\n"
                       "  s_cmp_lt_u32 s4, s10\n  s_cbranch_scc1 .Lodd")
    text = text.replace("  s_barrier_wait 0xffff\n  s_cbranch_scc1 .Leven", "  s_barrier_wait 0xffff\n" + BAR +
                        "  s_cbranch_scc1 .Leven")
    a, b = pairs_of(kernel(text))
    for got in (a, b):
        assert 28 in got[10] and 0 in got[10]
