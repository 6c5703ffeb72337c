"""CoalesceWaits (waitcnt/coalesce.py, docs/decisions.md 42): a wait folded into an earlier one
of the same counter takes exactly `b - k` (k: the counter's pushes of every kind in between),
only within one block and the window; STIR and `coalesce_window=0` keep one wait per consumer.
Whether a fold is made is the latency model's call: the arithmetic tests run under a model in
which every op is back at once (`FREE`: every fold is free), the model tests under the
target's own."""

from __future__ import annotations

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.targets.latency import MEMORY_KINDS

#: a latency model under which every memory op completes at issue: folds never add stall
FREE = tuple((f"latency.{k}", 0) for k in MEMORY_KINDS)

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--{cpu}"\n\t.text\nk:\n'


def plan(body: str, cpu: str = "gfx1250", window: int = -1, overrides: tuple = FREE) -> list[tuple[int, str, int]]:
    text = HEAD.format(cpu=cpu) + body + "\ts_endpgm\n"
    an = analyze(text, "t.s", Options(coalesce_window=window, latency_overrides=overrides))
    assert not [d for d in an.diagnostics if d.severity == "error"], an.diagnostics
    return sorted((w.line, w.counter, w.count) for w in an.waits())


LOADS = "".join(f"\tds_load_b32 v{10 + i}, v0 offset:{4 * i}\n" for i in range(4))
USES = "".join(f"\tv_mov_b32 v{20 + i}, v{10 + i}\n" for i in range(4))


def test_one_wait_per_consumer_without_coalescing():
    # lines: 4-7 loads, 8-11 uses
    assert plan(LOADS + USES, window=0) == [(8, "ds", 3), (9, "ds", 2), (10, "ds", 1), (11, "ds", 0)]


def test_a_run_of_consumers_gets_the_strictest_wait_once():
    assert plan(LOADS + USES) == [(8, "ds", 0)]


def test_ops_issued_between_the_two_waits_are_counted():
    # use v10 (needs 3), one more load, use v11: 3 younger ops (v12, v13, v14) -> 3 at B,
    # k = 1 op pushed in between -> A takes min(3, 3 - 1) = 2
    body = LOADS + "\tv_mov_b32 v20, v10\n\tds_load_b32 v14, v0 offset:64\n\tv_mov_b32 v21, v11\n"
    assert plan(body, window=0) == [(8, "ds", 3), (10, "ds", 3)]
    assert plan(body) == [(8, "ds", 2)]


def test_a_later_wait_for_an_op_issued_after_the_first_is_not_folded():
    # B waits for the load issued between A and B (b - k < 0): folding would wait before issue
    body = ("\tds_load_b32 v10, v0\n\tv_mov_b32 v20, v10\n\tds_load_b32 v11, v0 offset:4\n"
            "\tv_mov_b32 v21, v11\n")
    assert plan(body) == [(5, "ds", 0), (7, "ds", 0)]


def test_across_blocks_with_one_predecessor():
    # every path into .Lnext (and into the fall-through side of a conditional branch) comes
    # from the block before it: the ops pushed in between are the ones the walk counts
    body = LOADS + "\tv_mov_b32 v20, v10\n\ts_branch .Lnext\n.Lnext:\n\tv_mov_b32 v21, v11\n"
    assert plan(body, window=0) == [(8, "ds", 3), (11, "ds", 2)]
    assert plan(body) == [(8, "ds", 2)]
    body = (LOADS + "\tv_mov_b32 v20, v10\n\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .Lout\n"
            "\tv_mov_b32 v21, v11\n.Lout:\n")
    assert plan(body) == [(8, "ds", 2)]


def test_not_into_a_join():
    # .Lj is reached from the branch too: its wait stays where it is
    body = (LOADS + "\tv_mov_b32 v20, v10\n\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .Lj\n"
            "\tv_add_f32 v30, v1, v2\n.Lj:\n\tv_mov_b32 v21, v11\n")
    assert plan(body) == [(8, "ds", 3), (13, "ds", 2)]


def _spaced(n: int) -> str:
    filler = "".join(f"\tv_add_f32 v{40 + i % 100}, v1, v2\n" for i in range(n))
    return LOADS + "\tv_mov_b32 v20, v10\n" + filler + "\tv_mov_b32 v21, v11\n"


def test_window_bounds_the_distance():
    assert plan(_spaced(40), window=32) == [(8, "ds", 3), (49, "ds", 2)]
    assert plan(_spaced(40), window=48) == [(8, "ds", 2)]
    # the default on assembly (128): 40 apart fold, 140 apart do not
    assert plan(_spaced(40)) == [(8, "ds", 2)]
    assert plan(_spaced(140)) == [(8, "ds", 3), (149, "ds", 2)]


def test_a_counter_shared_by_several_timelines_folds_as_a_whole():
    # gfx942 lgkmcnt counts LDS and SMEM: a wait bounds the total, so the fold is exact as long
    # as k counts the pushes of every kind (docs/decisions.md 42)
    reads = "".join(f"\tds_read_b32 v{10 + i}, v0 offset:{4 * i}\n" for i in range(2))
    body = "\ts_load_dword s10, s[0:1], 0x0\n" + reads + "\tv_mov_b32 v20, v10\n\tv_mov_b32 v21, v11\n"
    assert [(ln, n) for ln, _, n in plan(body, cpu="gfx942", window=0)] == [(7, 1), (8, 0)]
    assert [(ln, n) for ln, _, n in plan(body, cpu="gfx942")] == [(7, 0)]


def test_a_push_of_another_kind_in_between_counts():
    # a scalar load between the two waits: B needs lgkmcnt(0) (SMEM completes out of order),
    # b - k = -1, so B keeps its own wait
    body = ("\tds_read_b32 v10, v0\n\tds_read_b32 v11, v0 offset:4\n\tv_mov_b32 v20, v10\n"
            "\ts_load_dword s10, s[0:1], 0x0\n\tv_mov_b32 v21, v11\n\tv_mov_b32 v22, s10\n")
    got = [(ln, n) for ln, _, n in plan(body, cpu="gfx942")]
    assert got == [(ln, n) for ln, _, n in plan(body, cpu="gfx942", window=0)]
    assert got[0] == (6, 1) and len(got) == 2


@pytest.mark.parametrize("cpu", ["gfx1200", "gfx1100", "gfx942"])
def test_loads_on_other_targets(cpu):
    mn = "global_load_b32" if cpu in ("gfx1200", "gfx1100") else "global_load_dword"
    loads = "".join(f"\t{mn} v{10 + i}, v[0:1], off offset:{4 * i}\n" for i in range(3))
    uses = "".join(f"\tv_mov_b32 v{20 + i}, v{10 + i}\n" for i in range(3))
    assert [(line, n) for line, _, n in plan(loads + uses, cpu=cpu, window=0)] == [(7, 2), (8, 1), (9, 0)]
    assert [(line, n) for line, _, n in plan(loads + uses, cpu=cpu)] == [(7, 0)]


def test_stir_keeps_the_specs_placement():
    from pathlib import Path
    stirs = [Path(__file__).parent / "lsp" / "data" / "sample.stir"]
    text = stirs[0].read_text()
    def waits(window: int) -> list:
        return [(w.line, w.counter, w.count) for w in analyze(
            text, stirs[0].name, Options(coalesce_window=window, latency_overrides=FREE)).waits()]
    assert waits(-1) == waits(0)
    assert waits(16) != waits(0)  # (the sample has waits it could fold)


# --- the latency model decides (the target's own model) ---------------------------------------

NOPS = "\ts_nop 15\n" * 24  # (384+ cycles on every target: every load issued before is back)


def test_a_fold_that_adds_stall_is_not_made():
    # gfx1250: four LDS loads issued at cycles 0-3 are back at 72-75 (in order); the uses wait
    # as they arrive.  (8) ds 3 waits until 72 and ends at 74 with its use; folding (9) into it
    # would make it wait until 73, one cycle more, as much as (9)'s own issue slot: kept.  When
    # (10) comes, the load it waits for was back before (9) ended: folded into (9) for free.
    # (11) needs the last load (75), (9) ended at 74: kept.
    assert plan(LOADS + USES, overrides=()) == [(8, "ds", 3), (9, "ds", 1), (11, "ds", 0)]
    # the fold arithmetic alone would give one wait
    assert plan(LOADS + USES) == [(8, "ds", 0)]


def test_loads_long_back_fold_into_one_wait():
    # the same consumers after a long gap: the loads are back, a fold costs nothing
    assert plan(LOADS + NOPS + USES, overrides=()) == [(32, "ds", 0)]


@pytest.mark.parametrize("cpu", ["gfx1200", "gfx1100", "gfx942"])
def test_model_folds_loads_long_back_on_other_targets(cpu):
    mn = "global_load_b32" if cpu in ("gfx1200", "gfx1100") else "global_load_dword"
    loads = "".join(f"\t{mn} v{10 + i}, v[0:1], off offset:{4 * i}\n" for i in range(3))
    uses = "".join(f"\tv_mov_b32 v{20 + i}, v{10 + i}\n" for i in range(3))
    assert [(line, n) for line, _, n in plan(loads + NOPS + uses, cpu=cpu, overrides=())] == [(31, 0)]
    # consumed as they arrive: the first wait keeps its exact count (folding the second into it
    # would cost as much stall as the second's issue slot); the third folds into the second,
    # whose load came back last
    assert [(line, n) for line, _, n in plan(loads + uses, cpu=cpu, overrides=())] == [(7, 2), (8, 0)]


def test_mixed_smem_and_lds_lgkmcnt_counts_survive():
    # gfx942 lgkmcnt over a scalar load and two LDS reads consumed at once: the exact
    # lgkmcnt(1), lgkmcnt(0) stay (folding would wait for the second read at the first use)
    reads = "".join(f"\tds_read_b32 v{10 + i}, v0 offset:{4 * i}\n" for i in range(2))
    body = "\ts_load_dword s10, s[0:1], 0x0\n" + reads + "\tv_mov_b32 v20, v10\n\tv_mov_b32 v21, v11\n"
    assert [(ln, n) for ln, _, n in plan(body, cpu="gfx942", overrides=())] == [(7, 1), (8, 0)]


def test_the_model_is_overridable():
    # an LDS at zero latency: every fold is free; an issue slot of 4 cycles per wait: a fold
    # adding a cycle pays
    assert plan(LOADS + USES, overrides=(("latency.lds", 0),)) == [(8, "ds", 0)]
    assert plan(LOADS + USES, overrides=(("issue.wait", 4),)) == [(8, "ds", 0)]


def test_a_wait_on_another_counter_takes_the_later_one_in_its_instruction():
    # gfx942: the vmcnt the second use needs joins the lgkmcnt wait just before it (one
    # `s_waitcnt vmcnt(0) lgkmcnt(0)`), as hand-written kernels wait before a barrier
    body = ("\tbuffer_load_dword v1, v0, s[0:3], 0 offen\n\tds_read_b32 v2, v0\n"
            "\tv_mov_b32 v3, v2\n\tv_mov_b32 v4, v1\n")
    assert plan(body, cpu="gfx942", window=0) == [(6, "lgkm", 0), (7, "vm", 0)]
    assert plan(body, cpu="gfx942") == [(6, "lgkm", 0), (6, "vm", 0)]
    # across a block with one predecessor, counting the loads issued in between
    body = ("\tbuffer_load_dword v1, v0, s[0:3], 0 offen\n\tds_read_b32 v2, v0\n\tv_mov_b32 v3, v2\n"
            "\tbuffer_load_dword v5, v0, s[0:3], 0 offen\n\ts_cbranch_scc1 .Lout\n\tv_mov_b32 v4, v1\n.Lout:\n")
    assert plan(body, cpu="gfx942") == [(6, "lgkm", 0), (6, "vm", 0)]


def test_not_into_a_wait_that_would_need_a_second_instruction():
    # gfx1250 has no combined dscnt + kmcnt wait: the kmcnt stays at its consumer
    body = ("\ts_load_b32 s4, s[0:1], 0x0\n\tds_load_b32 v2, v0\n"
            "\tv_mov_b32 v3, v2\n\ts_mov_b32 s5, s4\n")
    assert plan(body) == [(6, "ds", 0), (7, "km", 0)]
    # but loadcnt and dscnt have one (`s_wait_loadcnt_dscnt`)
    body = ("\tglobal_load_b32 v1, v0, s[0:1]\n\tds_load_b32 v2, v0\n"
            "\tv_mov_b32 v3, v2\n\tv_mov_b32 v4, v1\n")
    assert plan(body) == [(6, "ds", 0), (6, "load", 0)]


def test_not_across_blocks_inside_a_loop():
    # the walk does not see the loop's previous trip: in a loop only the same-block fold is made
    body = (".Lloop:\n" + LOADS + "\tv_mov_b32 v20, v10\n\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 .Lx\n"
            "\tv_mov_b32 v21, v11\n.Lx:\n\ts_cmp_eq_u32 s1, 0\n\ts_cbranch_scc0 .Lloop\n")
    assert plan(body) == [(9, "ds", 3), (12, "ds", 2)]
    straight = body.replace("\ts_cbranch_scc0 .Lloop\n", "")
    assert plan(straight) == [(9, "ds", 2)]
