"""Reuse of whole runs of blocks after an edit (issue 21, the 30k edit): finalize's block
records, CoalesceWaits' run records checked by identity (waitcnt/coalesce_memo.py), the runs and
loops it keeps, and `_build_result`'s run records (waitcnt/pipeline.py) give the cold plan.

The kernel: chains of a self loop followed by a straight block (one CoalesceWaits run each),
whose loads are read in the next blocks, so an edit's effect reaches later runs or dies out.
Each version goes through the document's cache and is compared with a cold plan (plan JSON
and inserted text with explanations).

Mutation checks (each a stale answer the comparisons must see): a run's fold reused on the
wave's state alone (no identity check of its blocks' signatures and finalize records); a run's
waits reused whatever its fold; a finalize record reused while the block's signature alone is
the same; the runs kept although a block changed.  (A fold reused on its blocks' signatures
alone, without the finalize records, is not seen by these edits: where a far join changes a
run's waits, the folded waits came out the same; the finalize records are checked anyway, as
the sure condition.)"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from stinkywait_core import api
from stinkywait_core.results import Options
from stinkywait_core.waitcnt import coalesce_memo, finalize, pipeline

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n\t.text\n\t.globl k\n\t.type k,@function\nk:\n' \
       "\ts_load_b64 s[4:5], s[0:1], 0x0\n"
N = 20


def _kernel(extra: dict[int, str]) -> str:
    """`N` blocks: even ones self loops, odd ones straight (so each pair is one run); block b
    loads what block b+1 reads; block 1 may branch to block 14; `extra`: lines in place of
    block b's `s_nop 0` (no line moves)."""
    out = [HEAD]
    for b in range(N):
        r = (b % 6) * 8
        q = ((b + 5) % 6) * 8  # (the registers block b-1 loaded)
        out.append(f".LBB0_{b}:\n")
        out.append(f"\tds_load_b64 v[{r}:{r + 1}], v100 offset:{(b % 32) * 8}\n"
                   f"\tds_load_b64 v[{r + 2}:{r + 3}], v101 offset:{(b % 16) * 8}\n"
                   f"\tbuffer_load_b32 v{r + 4}, v102, s[4:7], null offen\n"
                   f"\tv_add_f32_e32 v{r + 5}, v{r}, v{q + 4}\n"
                   f"\tv_mul_f32_e32 v{r + 6}, v{r + 2}, v{q + 2}\n" + extra.get(b, "\ts_nop 0\n"))
        if b % 2 == 0:
            out.append(f"\ts_cmp_lt_u32 s10, {b}\n\ts_cbranch_scc1 .LBB0_{b}\n")
        elif b == 1:  # (a far join: block 1's state reaches block 14, the wave's by then the old one)
            out.append("\ts_cbranch_execz .LBB0_14\n")
    out.append("\ts_endpgm\n")
    return "".join(out)


LINES = ["\tbuffer_load_b32 v220, v102, s[4:7], null offen\n", "\tv_add_f32_e32 v221, v220, v220\n",
         "\ts_wait_loadcnt 0\n", "\tds_load_b32 v222, v100\n", "\tv_mov_b32 v223, v222\n", "\ts_nop 3\n",
         "\tv_add_f32_e32 v224, v4, v12\n", "\ts_wait_dscnt 1\n"]


def _edits(seed: int, n: int = 12) -> list[dict]:
    rng = random.Random(seed)
    edits: list[dict] = [{}]
    for _ in range(n):
        prev = dict(edits[-1])
        b = rng.randrange(N) if rng.random() < 0.5 else rng.randrange(2)
        if prev.get(b) and rng.random() < 0.4:
            del prev[b]
        else:
            prev[b] = rng.choice(LINES)
        edits.append(prev)
    return edits


def _plan(an: api.Analysis) -> tuple:
    return an.to_json(), an.inserted_text(explain=True)


def _run(edits: list[dict]) -> tuple[list[bool], int, int]:
    """Per edited version: whether the cached analysis equals the cold one; and over all of
    them, how many runs' folds held by identity and how many runs' waits were reused."""
    cache = api.AnalysisCache()
    same: list[bool] = []
    folds = results = 0
    for v, extra in enumerate(edits):
        text = _kernel(extra)
        warm = api.analyze(text, "k.s", Options(), cache=cache)
        if v:
            same.append(_plan(warm) == _plan(api.analyze(text, "k.s", Options())))
            memo = warm.outputs[0].memo
            folds += memo.reused_folds
            results += memo.reused_results
    return same, folds, results


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_runs_reused_give_the_cold_plan(seed: int) -> None:
    same, folds, results = _run(_edits(seed))
    assert all(same), same
    assert folds and results, (folds, results)  # (the identity paths ran)


def _not_all_same(seeds=(1, 2, 3)) -> bool:
    return not all(all(_run(_edits(seed))[0]) for seed in seeds)


def test_a_fold_reused_on_the_wave_state_alone_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coalesce_memo, "same_objects", lambda rec, sigs, finals: len(rec.sigs) == len(sigs))
    assert _not_all_same()


def test_run_waits_reused_whatever_the_fold_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "_run_holds", lambda old, fold, cap_hit: old.cap_hit == cap_hit)
    assert _not_all_same()


def test_a_finalize_record_reused_on_its_signature_alone_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(finalize, "final_record_holds", lambda rec, entry, ep, sig: rec.sig == sig)
    assert _not_all_same()


class _Blk:
    """A block stand-in (hashed by identity, as blocks are)."""


def _layout_case(rng: random.Random, stale: bool) -> bool:
    """run_layout over random changes of blocks (new signature objects, some with another
    `falls_on` answer) equals cutting afresh; `stale`: blocks are taken as unchanged."""
    blocks = [_Blk() for _ in range(12)]
    falls = {id(b): rng.random() < 0.5 for b in blocks}
    sig = {b: object() for b in blocks}
    df = SimpleNamespace(func=SimpleNamespace(blocks=blocks), block_sig=sig, cfg=object())
    memo = SimpleNamespace(coalesce_layout=None)

    def cut(fl):
        fl = fl if fl is not None else [falls[id(b)] for b in blocks]
        runs: list[list] = []
        for k, b in enumerate(blocks):
            if runs and fl[k - 1]:
                runs[-1].append(b)
            else:
                runs.append([b])
        return runs
    ok = True
    for _ in range(8):
        for b in rng.sample(blocks, 3):
            sig[b] = object()
            if rng.random() < 0.5:
                falls[id(b)] = not falls[id(b)]
        if stale and memo.coalesce_layout is not None:
            memo.coalesce_layout.sigs[:] = [sig[b] for b in blocks]
        runs, _ = coalesce_memo.run_layout(df, memo, lambda b: falls[id(b)], cut, lambda: set())
        ok = ok and runs == cut(None)
    return ok


def test_the_runs_are_cut_again_where_a_block_changed() -> None:
    rng = random.Random(5)
    assert all(_layout_case(rng, stale=False) for _ in range(20))
    # mutation: the changed blocks' new signatures taken for the old ones (runs kept stale)
    rng = random.Random(5)
    assert not all(_layout_case(rng, stale=True) for _ in range(20))
