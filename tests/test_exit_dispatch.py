"""The stage-count dispatch after an unrolled loop's exits (issue 22, branch bwd1250).

aiter's gfx1250 fmha v3 bwd leaves its four-way unrolled loop after any stage and picks the
epilogue by ``((x + 31) >> 5) & 3`` with ``x = bnd - c`` taken before the first stage.  The
pass (analysis/exit_dispatch.py) and the checker (validate/hwdispatch.py, its own code) each
prove which epilogue every exit edge leads to; the publish rule's walk of what other waves run
after a barrier then skips the epilogues no wave can take there.  Checked here: both proofs
against a concrete run of the program over counters and bounds (wrapping ones too), near
misses where the proof must not hold (and concretely does not), the drain at a barrier that
goes away and the one that must stay, and the checker catching a pass that over-applies it."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_publish_waves import barrier_waits, checker, kernel, violations  # noqa: E402

from stinkywait_core.analysis import exit_dispatch  # noqa: E402
from stinkywait_core.api import analyze  # noqa: E402,F811
from stinkywait_core.api import parse  # noqa: E402
from stinkywait_core.results import Options  # noqa: E402
from stinkywait_core.validate.hwdispatch import ExitDispatch  # noqa: E402
from stinkywait_core.validate.paths import block_successors  # noqa: E402

# x = bnd - c before the first step, the first step and its test (every program here)
START = """\
  s_mov_b32 s11, s10
  s_mov_b32 s15, s12
  s_sub_co_i32 s99, s10, s15
  s_addk_co_i32 s15, 0x20
  s_cmp_lt_i32 s15, s11
"""
# the stage-count dispatch: the stage count's parity picks `.Le0` (even) or `.Le1` (odd)
DISPATCH = """\
.Ldisp:
  s_add_co_u32 s4, s99, 31
  s_lshr_b32 s4, s4, 5
  s_and_b32 s4, s4, 1
  s_cmp_eq_u32 s4, 0
  s_cbranch_scc1 .Le0
"""

# two wave roles (wave 0 and the rest) run copies of one loop, each storing to 0x100 before its
# first barrier; after a loop's first exit (`// mid`) the dispatch takes `.Le0` (reads 0x200)
# only; `.Le1` reads 0x100 and is reached from the exit before the loops (no barrier before it)
# and the loops' last exits (after their second barrier)
ROLE = """\
.L{r}:
  ds_store_b32 v1, v3
  v_mov_b32 v4, v3
  v_mov_b32 v4, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_addk_co_i32 s15, 0x20
  v_mov_b32 v4, v3
  s_cmp_lt_i32 s15, s11
  s_cbranch_scc0 .Ldisp // mid
  v_mov_b32 v4, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_addk_co_i32 s15, 0x20
  s_cmp_lt_i32 s15, s11
  s_cbranch_scc0 .Ldisp // last
  s_branch .L{r}
"""
PROG = """\
  v_mov_b32 v1, 0x100
  v_mov_b32 v2, 0x200
  s_bfe_u32 s2, ttmp8, 0x50019
""" + START + """\
  s_cbranch_scc0 .Ldisp // first
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lzero
""" + ROLE.format(r="rest") + ROLE.format(r="zero") + """\
""" + DISPATCH + """\
.Le1:
  ds_load_b32 v5, v1
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_endpgm
.Le0:
  ds_load_b32 v6, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  s_endpgm
"""

NEAR_MISSES = {
    # the rounding constant one short: a bnd - c of -31 borrows out of the shift
    "rounding-short": ("s_add_co_u32 s4, s99, 31", "s_add_co_u32 s4, s99, 30"),
    # a step that is not the shift's unit: the stage count no longer sits in bit 5
    "step-33": ("  s_addk_co_i32 s15, 0x20\n  v_mov_b32 v4, v3\n", "  s_addk_co_i32 s15, 0x21\n  v_mov_b32 v4, v3\n"),
    # the same before the first test: the last step is the unit, the offset is not a multiple of it
    "first-step-33": ("  s_addk_co_i32 s15, 0x20\n  s_cmp_lt_i32 s15, s11\n  s_cbranch_scc0 .Ldisp // first",
                      "  s_addk_co_i32 s15, 0x21\n  s_cmp_lt_i32 s15, s11\n  s_cbranch_scc0 .Ldisp // first"),
    # x from another bound than the one compared
    "other-bound": ("s_sub_co_i32 s99, s10, s15", "s_sub_co_i32 s99, s13, s15"),
    # an unsigned compare on the exit: the step may wrap past the bound
    "unsigned-exit": ("  s_cmp_lt_i32 s15, s11\n  s_cbranch_scc0 .Ldisp // mid",
                      "  s_cmp_lt_u32 s15, s11\n  s_cbranch_scc0 .Ldisp // mid"),
    # `s_addk`'s 16-bit immediate is signed: 0x8000 steps down by 32768 (every step here; read as
    # +32768, with the dispatch's rounding and shift made to fit, it would look proven)
    "addk-negative": ("s_addk_co_i32 s15, 0x20", "s_addk_co_i32 s15, 0x8000"),
    # the bound changed in the loop
    "bound-moves": ("  v_mov_b32 v4, v3\n  s_cmp_lt_i32 s15, s11\n",
                    "  s_sub_co_i32 s11, s11, 32\n  s_cmp_lt_i32 s15, s11\n"),
}


def _func(text: str):
    return parse(text, "k.s").functions[0]


def _pass_ways(text: str) -> dict[int, set[str]]:
    """{exit branch line: labels the pass lets a wave go on to}."""
    return {e.terminator().line: {b.label for b in got[1]}
            for (e, _), got in exit_dispatch.dispatch_narrowing(_func(text)).items()}


def _checker_ways(text: str) -> dict[int, set[str]]:
    fn = _func(text)
    blocks = list(fn.blocks)
    ways = ExitDispatch(fn, block_successors(blocks)).ways
    return {blocks[e].terminator().line: {blocks[i].label for i in got[1]} for (e, _), got in ways.items()}


def _run(text: str, regs: dict[int, int], limit: int = 64) -> list[tuple[int, str]]:
    """A concrete run of the scalar code of `text` (the few instructions it uses, 32-bit
    wrapping, SGPRs from `regs`): [(line of the exit branch, the epilogue it led to)]."""
    fn = _func(text)
    by_label = {b.label: b for b in fn.blocks}
    s = dict(regs)
    scc = 0
    b = fn.blocks[0]
    out: list[tuple[int, str]] = []
    came = None

    def val(op):
        return op.value % (1 << 32) if isinstance(getattr(op, "value", None), int) else s.get(op.lo, 0)

    def signed(v):
        return v - (1 << 32) if v >= 1 << 31 else v
    for _ in range(limit * len(fn.blocks)):
        nxt = None
        for inst in (i for i in b.instrs if not i.is_label and not i.is_phi):
            mn, ops = inst.mnemonic, inst.srcs
            d = inst.dsts[0].lo if inst.dsts and getattr(inst.dsts[0], "kind", "") == "s" else None
            if mn == "s_mov_b32":
                s[d] = val(ops[0])
            elif mn.startswith("s_add"):
                s[d] = (val(ops[0]) + val(ops[1])) % (1 << 32)
            elif mn.startswith("s_sub"):
                s[d] = (val(ops[0]) - val(ops[1])) % (1 << 32)
            elif mn == "s_lshr_b32":
                s[d] = val(ops[0]) >> val(ops[1])
            elif mn == "s_and_b32":
                s[d] = val(ops[0]) & val(ops[1])
            elif mn == "s_cmp_lt_i32":
                scc = int(signed(val(ops[0])) < signed(val(ops[1])))
            elif mn == "s_cmp_lt_u32":
                scc = int(val(ops[0]) < val(ops[1]))
            elif mn == "s_cmp_eq_u32":
                scc = int(val(ops[0]) == val(ops[1]))
            elif (mn.startswith("s_cbranch_scc") and scc == int(mn[-1])) or mn == "s_branch":
                nxt = by_label[ops[0].value]
            elif mn == "s_endpgm":
                return out
        if nxt is None:
            nxt = b.succs[-1]  # (the fall-through)
        if nxt.label == ".Ldisp":
            came = b.terminator().line
        if nxt.label in (".Le0", ".Le1"):
            out.append((came, nxt.label))
        b = nxt
    return out


def _line(text: str, needle: str, nth: int = 1) -> int:
    """The file line of the `nth` line of `text` that holds `needle`."""
    hits = [k + 1 for k, x in enumerate(text.split("\n")) if needle in x]
    return hits[nth - 1]


def _values(rng: random.Random) -> list[dict[int, int]]:
    out = []
    edges = [0, 1, 31, 32, 33, 63, 64, 65, 95, 96, 97, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, (1 << 31) - 40]
    for _ in range(300):
        c0 = rng.choice(edges + [rng.randrange(1 << 32)])
        span = rng.choice([rng.randrange(1, 200), rng.randrange(1 << 32)])
        bnd = (c0 + span) % (1 << 32) if rng.random() < 0.8 else rng.choice(edges)
        out.append({2: rng.randrange(2), 10: bnd, 12: c0, 13: rng.randrange(1 << 32)})
    for span in range(1, 140):  # (every stage count and remainder of the first few stages)
        c0 = rng.choice(edges)
        out.append({2: span % 2, 10: (c0 + span) % (1 << 32), 12: c0, 13: rng.randrange(1 << 32)})
    return out


def test_both_proofs_agree_and_the_program_takes_only_those_ways():
    text = kernel(PROG)
    mine, theirs = _pass_ways(text), _checker_ways(text)
    assert mine == theirs
    first = _line(text, "// first")
    mids, lasts = [_line(text, "// mid", k) for k in (1, 2)], [_line(text, "// last", k) for k in (1, 2)]
    # (the first exit, before any passing test: not proven)
    assert mine == {**{m: {".Le0"} for m in mids}, **{x: {".Le1"} for x in lasts}} and first not in mine
    rng = random.Random(7)
    seen = 0
    for regs in _values(rng):
        for line, label in _run(text, regs, limit=8):
            if line in mine:
                seen += 1
                assert label in mine[line], (regs, line, label)
    assert seen > 50


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_misses_are_not_proven(name):
    old, new = NEAR_MISSES[name]
    assert old in PROG
    text = kernel(PROG.replace(old, new, -1 if name == "addk-negative" else 1))
    if name == "addk-negative":
        text = text.replace("s99, 31\n  s_lshr_b32 s4, s4, 5", "s99, 0x7fff\n  s_lshr_b32 s4, s4, 15")
        assert "0x7fff" in text and text.count("0x8000") == 5
    mid = _line(text, "// mid")
    assert mid not in _pass_ways(text) and mid not in _checker_ways(text)


@pytest.mark.parametrize("name", ["rounding-short", "step-33", "first-step-33", "bound-moves"])
def test_near_misses_really_go_the_other_way(name):
    """The near misses are not only unproven: some counter and bound take the loop's first exit
    into `.Le1`, whose read meets the stores another wave left in flight at the barrier."""
    old, new = NEAR_MISSES[name]
    text = kernel(PROG.replace(old, new, 1))
    rng = random.Random(3)
    mid = _line(text, "// mid")
    assert any((mid, ".Le1") in _run(text, regs, limit=8) for regs in _values(rng))


def test_the_store_runs_across_the_loop_barrier_and_the_checker_agrees():
    text = kernel(PROG)
    bars = {_line(text, "s_barrier_wait", k) for k in (1, 3)}  # (each role's first)
    assert not (bars | {b - 1 for b in bars}) & set(barrier_waits(text))
    assert checker(text) == []


def test_the_rounding_near_miss_keeps_the_drain():
    text = kernel(PROG.replace(*NEAR_MISSES["rounding-short"], 1))
    bars = {_line(text, "s_barrier_wait", k) for k in (1, 3)}
    assert (bars | {b - 1 for b in bars}) & set(barrier_waits(text))
    assert checker(text) == []


def _force(monkeypatch, exits: set[int] | None, target: str) -> None:
    """Make the pass believe (wrongly, in the tests that call it) that the exits ending at the
    lines `exits` (None: every edge into `.Ldisp`) lead to `target` alone."""
    real = exit_dispatch.dispatch_narrowing

    def forced(func):
        got = real(func)
        by = {b.label: b for b in func.blocks}
        h = by[".Ldisp"]
        for e in h.preds:
            if exits is None or (e.terminator() is not None and e.terminator().line in exits):
                got[(e, h)] = ((h,), (by[target],))
        return got
    monkeypatch.setattr(exit_dispatch, "dispatch_narrowing", forced)


def test_the_checker_catches_an_over_applied_dispatch(monkeypatch):
    """The pass told (wrongly) that the rounding near miss's loop's first exit leads to `.Le0`
    only drops the drain; the checker, by its own proof, reports the barrier."""
    text = kernel(PROG.replace(*NEAR_MISSES["rounding-short"], 1))
    mids = {_line(text, "// mid", k) for k in (1, 2)}
    bars = {_line(text, "s_barrier_wait", k) for k in (1, 3)}
    _force(monkeypatch, mids, ".Le0")
    out = analyze(text, "k.s", Options(coalesce_window=0)).inserted_text()
    assert not (bars | {b - 1 for b in bars}) & set(barrier_waits(text))  # (the pass dropped the drain)
    assert violations(out) != []


def _drains(text: str, cache=None) -> set[int]:
    an = analyze(text, "k.s", Options(coalesce_window=0), cache=cache)
    lines = text.split("\n")
    return {w.line for w in an.waits() if w.rule in ("fallback", "barrier") and "barrier" in lines[w.line - 1]}


@pytest.mark.parametrize("name", ["rounding-short", "step-33", "bound-moves"])
def test_an_edit_that_breaks_the_proof_is_seen_by_a_warm_plan(name):
    """An edit of scalar code only (the barriers, the LDS accesses and the CFG unchanged)
    that breaks the dispatch proof: the segments kept from the last version must not be
    reused, and the warm plan drains where the cold one does; back to the proven text, the
    drains go again."""
    from stinkywait_core.api import AnalysisCache
    cache = AnalysisCache()
    base = kernel(PROG)
    first = _drains(base, cache)
    broken = kernel(PROG.replace(*NEAR_MISSES[name], 1))
    warm = _drains(broken, cache)
    assert warm == _drains(broken) and warm - first
    assert _drains(base, cache) == first == _drains(base)


# one wave's own RAW: the load of a trip is in flight only at the loop's last exit, which the
# dispatch sends to `.Le1` (no read of v5); `.Le0`, reached from the loop's first exit (`// mid`),
# reads v5 with nothing in flight, so it needs no wait (both the pass's merge and the
# checker's path walk drop the other exits' paths there)
OWN = """\
  v_mov_b32 v1, 0x100
""" + START + """\
  s_cbranch_scc0 .Ldisp // first
.Lloop:
  s_addk_co_i32 s15, 0x20
  s_cmp_lt_i32 s15, s11
  s_cbranch_scc0 .Ldisp // mid
  global_load_b32 v5, v1, s[20:21]
  s_addk_co_i32 s15, 0x20
  s_cmp_lt_i32 s15, s11
  s_cbranch_scc0 .Ldisp // last
  v_add_nc_u32 v6, v5, v6
  s_branch .Lloop
""" + DISPATCH + """\
.Le1:
  s_endpgm
.Le0:
  v_add_nc_u32 v7, v5, v5 // read
  s_endpgm
"""


def _waits_at(text: str, needle: str) -> list:
    an = analyze(text, "k.s", Options(coalesce_window=0))
    line = _line(text, needle)
    return [w for w in an.waits() if w.line == line]


def test_own_wave_read_after_the_dispatch_needs_no_wait_and_the_checker_agrees():
    text = kernel(OWN)
    assert _pass_ways(text) == _checker_ways(text) == {_line(text, "// mid"): {".Le0"}, _line(text, "// last"): {".Le1"}}
    assert _waits_at(text, "// read") == []
    assert violations(analyze(text, "k.s", Options()).inserted_text()) == []
    rng = random.Random(5)
    ways = _pass_ways(text)
    assert all(label in ways[line] for regs in _values(rng) for line, label in _run(text, regs, limit=8)
               if line in ways)


def test_own_wave_near_miss_keeps_the_wait():
    text = kernel(OWN.replace(*NEAR_MISSES["rounding-short"], 1))
    assert _waits_at(text, "// read") != []
    assert violations(analyze(text, "k.s", Options()).inserted_text()) == []


def test_the_checker_catches_an_own_wave_dispatch_over_applied(monkeypatch):
    """The rounding near miss, the pass told that the loop's last exit leads to `.Le1` only:
    it drops the wait before the read in `.Le0`; the checker's own path walk (whose proof
    refuses that exit) reports the read."""
    text = kernel(OWN.replace(*NEAR_MISSES["rounding-short"], 1))
    last = _line(text, "// last")
    _force(monkeypatch, {last}, ".Le1")
    assert _waits_at(text, "// read") == []
    out = analyze(text, "k.s", Options()).inserted_text()
    assert any(v.rule == "raw" for v in violations(out))


# two exits of one trip reach the dispatch in the same hardware state (the load pending): the
# proven one (`// mid`, to `.Le0`) first, then one the proofs cannot read (`// odd`: an unsigned
# test of other registers), which may take `.Le1` and read v5
TWO = """\
  v_mov_b32 v1, 0x100
""" + START + """\
  s_cbranch_scc0 .Lend
  global_load_b32 v5, v1, s[20:21]
.Lloop:
  s_addk_co_i32 s15, 0x20
  s_cmp_lt_i32 s15, s11
  s_cbranch_scc0 .Ldisp // mid
  s_cmp_lt_u32 s13, s14
  s_cbranch_scc0 .Ldisp // odd
  s_addk_co_i32 s15, 0x20
  s_cmp_lt_i32 s15, s11
  s_cbranch_scc0 .Lend
  s_branch .Lloop
""" + DISPATCH + """\
.Le1:
  v_add_nc_u32 v7, v5, v5 // read
  s_endpgm
.Le0:
  s_endpgm
.Lend:
  s_endpgm
"""


def test_the_checker_keeps_paths_of_different_routes_apart(monkeypatch):
    """A pass told that every exit leads to `.Le0` drops the wait before `.Le1`'s read; the
    checker's walk meets the dispatch first from the proven exit, then from the other in the
    same state, and must still walk the second (its route is part of the path's key)."""
    text = kernel(TWO)
    mid = _line(text, "// mid")
    assert _pass_ways(text) == _checker_ways(text) == {mid: {".Le0"}}
    assert _waits_at(text, "// read") != []
    _force(monkeypatch, None, ".Le0")
    assert _waits_at(text, "// read") == []
    out = analyze(text, "k.s", Options()).inserted_text()
    assert any(v.rule == "raw" for v in violations(out))


@pytest.mark.parametrize("name", ["other-bound", "rounding-short"])
def test_a_warm_plan_sees_the_own_wave_proof_broken(name):
    """An edit of scalar code that changes no block's in-flight state (x taken from another
    bound, at the function's entry) still breaks the dispatch proof: the warm plan must not
    replay the last version's merges."""
    from stinkywait_core.api import AnalysisCache
    cache = AnalysisCache()
    base = kernel(OWN)
    assert analyze(base, "k.s", Options(coalesce_window=0), cache=cache) is not None
    broken = kernel(OWN.replace(*NEAR_MISSES[name], 1))
    an = analyze(broken, "k.s", Options(coalesce_window=0), cache=cache)
    line = _line(broken, "// read")
    assert [w for w in an.waits() if w.line == line] != []
