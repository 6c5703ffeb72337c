"""The WAW/WAR candidate sets an instruction keeps are shared by every block (issue 21).

waitcnt/candidates.py keeps, per instruction, the candidates of every block (filtered by
order class only) instead of a copy filtered to the blocks that reach it.  That changes no
answer only because every op in flight at a block comes from that block or one reaching it:
the invariant is checked here on the solver's block entries, and the sharing itself (what
saves the memory) on a chain of self-loops where every block reaches the later ones.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from stinkywait_core.api import AnalysisCache, analyze
from stinkywait_core.results import Options

ROOT = Path(__file__).resolve().parents[1]
KERNELS = [ROOT / "examples" / "gemm_loop.s",
           ROOT / "tests" / "data" / "aiter_gfx1250" / "pa_decode_bf16__pa_decode_bf16_d64_page256_gqa8_tq16.s.gz"]


def _chain(n_blocks: int) -> str:
    """A gfx1250 kernel of self-loops, each loading into the registers of the one 4 back."""
    out = ['\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"', "\t.text", "\t.globl\tk", "k:",
           "\ts_load_b64 s[4:5], s[0:1], 0x0"]
    for b in range(n_blocks):
        r = (b % 4) * 4
        out += [f".LBB0_{b}:", f"\tds_load_b64 v[{r}:{r + 1}], v100",
                f"\tbuffer_load_b32 v{r + 2}, v102, s[4:7], null offen",
                f"\tv_add_f32_e32 v{r + 3}, v{r}, v{r + 2}", f"\ts_cmp_lt_u32 s10, {b}",
                f"\ts_cbranch_scc1 .LBB0_{b}"]
    out.append("\ts_endpgm")
    return "\n".join(out) + "\n"


def _text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _assert_in_flight_ops_reach(an) -> int:
    checked = 0
    for po in an.outputs:
        df = po.df
        for states in (df.entry_state, df.final_entry):
            for bb, st in states.items():
                for qs in st.queues:
                    for q in qs:
                        for op in tuple(q.insts) + tuple(q.sat):
                            assert op.block is bb or (op.block is not None and df.cfg.reaches(op.block, bb)), \
                                f"{op.mnemonic} (line {op.line}) in flight at a block it does not reach"
                            checked += 1
    return checked


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_ops_in_flight_come_from_blocks_that_reach(path: Path):
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = _text(path)
    cache = AnalysisCache()
    assert _assert_in_flight_ops_reach(analyze(text, str(path), Options(), cache=cache)) > 0
    lines = text.split("\n")
    k = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("\tv_"))
    _assert_in_flight_ops_reach(analyze("\n".join(lines[:k] + ["\tv_nop"] + lines[k:]), str(path),
                                        Options(), cache=cache))


def test_candidates_are_shared_across_blocks_and_plan_unchanged_through_the_cache():
    text = _chain(24)
    cache = AnalysisCache()
    an = analyze(text, "chain.s", Options(), cache=cache)
    assert _assert_in_flight_ops_reach(an) > 0
    df = an.outputs[0].df
    loads = [i for b in df.rpo for i in b.instrs if i.mnemonic == "buffer_load_b32"
             and df.info[i].waw]
    by_dst: dict = {}
    for i in loads:
        by_dst.setdefault(repr(i.dsts), set()).add(id(df.info[i].waw))
    # blocks 4 apart write the same register: one candidate set between them, not one each
    assert by_dst and all(len(ids) == 1 for ids in by_dst.values()), by_dst
    # every later load of a register waits for (or is ordered after) the earlier writers:
    # the plan is the one a fresh analysis makes, and an edit through the cache agrees too
    edited = text.replace("v_add_f32_e32 v3,", "v_add_f32_e32 v9,", 1)
    assert analyze(edited, "chain.s", Options(), cache=cache).to_json() == analyze(edited, "chain.s", Options()).to_json()
    assert an.to_json() == analyze(text, "chain.s", Options()).to_json()
