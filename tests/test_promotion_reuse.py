"""ShallowPredPromotion's decisions reused a block at a time (waitcnt/promotion.py) give the
cold plan: a join whose wait is relaxed (a tail drain in the shallow predecessor), edited in
the join block itself, in a predecessor, and back; and the mutation check: a reuse keyed on
the predecessors' exits alone (not the block's own signature and solver plan) gives a plan
other than the cold one on the same edits, so the comparison sees a stale reuse."""

from __future__ import annotations

import pytest

from stinkywait_core import api
from stinkywait_core.results import Options
from stinkywait_core.waitcnt import promotion


def _kernel(join_line: str, then_loads: int) -> str:
    """Two loads, a branch around `then_loads` more, a join that reads the first (or the
    second) load: the deep path's wait is relaxed, the shallow path drains before the join."""
    loads = "".join(f"\tbuffer_load_b32 v{10 + i}, v102, s[4:7], null offen\n" for i in range(then_loads))
    return ('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n\t.text\n\t.globl k\n\t.type k,@function\nk:\n'
            "\ts_load_b64 s[4:5], s[0:1], 0x0\n\tbuffer_load_b32 v1, v102, s[4:7], null offen\n"
            "\tbuffer_load_b32 v2, v102, s[4:7], null offen\n"
            "\ts_cmp_lt_u32 s10, 3\n\ts_cbranch_scc1 .LBB0_2\n" + loads + "\ts_branch .LBB0_3\n"
            ".LBB0_2:\n\tv_mov_b32 v20, 0\n"
            ".LBB0_3:\n" + join_line + "\tv_add_f32_e32 v30, v20, v20\n\ts_endpgm\n")


VERSIONS = [("\tv_add_f32_e32 v4, v1, v1\n", 2), ("\tv_add_f32_e32 v4, v10, v10\n", 2),
            ("\tv_add_f32_e32 v4, v1, v1\n", 2), ("\tv_add_f32_e32 v4, v2, v2\n", 2),
            ("\tv_add_f32_e32 v4, v1, v1\n", 2), ("\tv_add_f32_e32 v4, v1, v1\n", 3),
            ("\tv_add_f32_e32 v4, v2, v2\n", 1), ("\tv_add_f32_e32 v4, v1, v1\n", 2)]


def _same_as_cold() -> list[bool]:
    cache = api.AnalysisCache()
    out = []
    relaxed = 0
    for line, loads in VERSIONS:
        t = _kernel(line, loads)
        try:
            warm = api.analyze(t, "k.s", Options(), cache=cache)
        except KeyError:  # (a stale decision for an anchor this version does not have)
            out.append(False)
            continue
        cold = api.analyze(t, "k.s", Options())
        relaxed += len(cold.outputs[0].relaxed)
        out.append((warm.to_json(), warm.inserted_text(explain=True)) == (cold.to_json(), cold.inserted_text(explain=True)))
    assert relaxed, "no wait was relaxed: the test would not see a stale decision"
    return out


def test_block_reuse_gives_the_cold_plan() -> None:
    assert all(_same_as_cold())


def test_a_reuse_keyed_on_the_exits_alone_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(promotion, "_same_block_inputs", lambda old, sig, ep, cap_hit, preds, exit_get: (
        len(old[3]) == len(preds) and all(a is exit_get(p) for a, p in zip(old[3], preds))))
    assert not all(_same_as_cold())
