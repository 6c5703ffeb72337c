"""The solver's whole-function facts kept across versions (issue 21) stay the ones a fresh
analysis derives, and the plan with them is the from-scratch plan.

Three summaries of the whole function are carried by the chain's memo and updated from the
edit only: the blocks with a jump or a dispatch head (`exit_dispatch.DispatchBlocks`, which
make `dispatch_narrowing` empty without a scan), the function's boundary blocks and
transfers (`FunctionFacts._boundaries`: tail call or return, read by `block_structure`) and
the per-engine LDS op counts of each timeline (`LdsQueries._lds_timelines`).  Random edit
sequences of a callable function with a dispatch head, an LDS load and a return toggle
exactly what each summary depends on (the head's shift, an `s_getpc_b64` that turns the
return into a tail call, the LDS load), plus register renames.
"""

from __future__ import annotations

import random

from stinkywait_core import api
from stinkywait_core.analysis.exit_dispatch import DispatchBlocks
from stinkywait_core.results import Options
from stinkywait_core.waitcnt.facts import function_transfers

LINES = [
    '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"',
    "\t.text",
    "\t.globl\tf",
    "\t.type\tf,@function",
    "f:",
    "\tglobal_load_b32 v1, v[2:3], off",
    "\tds_load_b32 v4, v5",
    "\ts_cmp_lt_u32 s10, 1",
    "\ts_cbranch_scc1 .LBB0_2",
    ".LBB0_1:",
    "\ts_add_u32 s5, s4, 31",
    "\ts_lshr_b32 s5, s5, 5",
    "\ts_and_b32 s5, s5, 3",
    "\ts_cmp_eq_u32 s5, 0",
    "\ts_cbranch_scc1 .LBB0_3",
    ".LBB0_2:",
    "\tv_add_f32_e32 v6, v1, v4",
    "\tds_store_b32 v5, v6",
    "\tv_mul_f32_e32 v8, v6, v1",
    ".LBB0_3:",
    "\tglobal_load_b32 v7, v[2:3], off",
    "\tv_add_f32_e32 v9, v7, v1",
    "\ts_setpc_b64 s[30:31]",
]


def _edit(rng: random.Random, lines: list[str]) -> None:
    r = rng.random()
    if r < 0.25:  # the dispatch head made and unmade
        i = next(n for n, ln in enumerate(lines) if ln.startswith(("\ts_lshr_b32", "\ts_lshl_b32")))
        lines[i] = lines[i].replace("lshr", "@").replace("lshl", "lshr").replace("@", "lshl")
    elif r < 0.5:  # the return turned into a tail call (its address from the PC) and back
        i = lines.index("\ts_setpc_b64 s[30:31]")
        if lines[i - 1] == "\ts_getpc_b64 s[30:31]":
            del lines[i - 1]
        else:
            lines.insert(i, "\ts_getpc_b64 s[30:31]")
    elif r < 0.75:  # the only LDS load of its timeline made a VALU move and back
        i = next(n for n, ln in enumerate(lines) if ln.endswith("v4, v5"))
        lines[i] = "\tv_mov_b32 v4, v5" if lines[i].startswith("\tds_") else "\tds_load_b32 v4, v5"
    else:  # a register renamed
        cands = [n for n, ln in enumerate(lines) if ln.startswith(("\tv_add", "\tv_mul"))]
        i = rng.choice(cands)
        lines[i] = lines[i].replace("v1", "v3") if "v1" in lines[i] else lines[i].replace("v3", "v1")


def _observable(an: api.Analysis) -> tuple:
    return an.to_json(), an.inserted_text(explain=True)


def _lds_counts(infos: dict) -> dict:
    out: dict = {}
    for inf in infos.values():
        if inf.lds:
            for c in inf.results:
                out[c, inf.engine] = out.get((c, inf.engine), 0) + 1
    return out


def test_kept_function_facts_equal_fresh_ones():
    opts = Options()
    rng = random.Random(21)
    checked = 0
    for trial in range(6):
        lines = list(LINES)
        cache = api.AnalysisCache()
        api.analyze("\n".join(lines) + "\n", "f.s", opts, cache=cache)
        for step in range(10):
            _edit(rng, lines)
            text = "\n".join(lines) + "\n"
            warm = api.analyze(text, "f.s", opts, cache=cache)
            assert _observable(warm) == _observable(api.analyze(text, "f.s", opts)), (trial, step)
            (chain,) = cache._d.values()
            memo, func = chain.memo, chain.func
            if memo.changed_blocks is None:
                continue  # (a new chain: nothing was kept)
            fresh = DispatchBlocks()
            fresh.update(func.blocks)
            assert (memo.dispatch_blocks.jumps, memo.dispatch_blocks.heads) == (fresh.jumps, fresh.heads)
            ends = [b for b in func.blocks if not b.succs or b.terminator().mnemonic.startswith("s_setpc")]
            kinds, transfers = function_transfers(func)
            assert memo.boundaries[1] == ends
            assert {j: k for j, (k, _) in memo.boundaries[3][0].items()} == {j: k for j, (k, _) in kinds.items()}
            assert memo.boundaries[3][1] == transfers
            assert memo.lds_counts[0] is memo.infos
            assert {k: n for k, n in memo.lds_counts[1].items() if n} == _lds_counts(memo.infos)
            checked += 1
    assert checked > 40
