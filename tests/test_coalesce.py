"""CoalesceWaits (waitcnt/coalesce.py, docs/decisions.md 42): a wait folded into an earlier one
of the same counter takes exactly `b - k` (k: the counter's pushes of every kind in between),
only within one block and the window; STIR and `coalesce_window=0` keep one wait per consumer."""

from __future__ import annotations

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--{cpu}"\n\t.text\nk:\n'


def plan(body: str, cpu: str = "gfx1250", window: int = -1) -> list[tuple[int, str, int]]:
    text = HEAD.format(cpu=cpu) + body + "\ts_endpgm\n"
    an = analyze(text, "t.s", Options(coalesce_window=window))
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


def test_not_across_blocks():
    body = LOADS + "\tv_mov_b32 v20, v10\n\ts_branch .Lnext\n.Lnext:\n\tv_mov_b32 v21, v11\n"
    assert plan(body) == [(8, "ds", 3), (11, "ds", 2)]


def test_window_bounds_the_distance():
    filler = "".join(f"\tv_add_f32 v{40 + i}, v1, v2\n" for i in range(40))
    body = LOADS + "\tv_mov_b32 v20, v10\n" + filler + "\tv_mov_b32 v21, v11\n"
    assert plan(body) == [(8, "ds", 3), (49, "ds", 2)]
    assert plan(body, window=48) == [(8, "ds", 2)]


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
        return [(w.line, w.counter, w.count) for w in analyze(text, stirs[0].name, Options(coalesce_window=window)).waits()]
    assert waits(-1) == waits(0)
    assert waits(16) != waits(0)  # (the sample has waits it could fold)
