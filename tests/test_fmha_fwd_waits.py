"""Two causes of extra stall found on aiter's gfx1250 fmha fwd bf16 kernel (issue 22), each
with the pass's answer, the hardware checker's verdict on our output, and a mutation that must
be caught:

* a register that is ``base + t`` on one path into a block and ``base`` on the other keeps
  ``base`` after the join (`values.lin_join_shared`): its wave-index terms then tell two waves'
  LDS tiles apart, and a fill in flight at a barrier needs no drain for the other waves;
* ShallowPredPromotion's second round: a wait the replay of a promoted plan added at a later
  join is relaxed the same way, the path that skipped the newer ops drained instead
  (`ShallowPredPromotion.rewrite_added`).
"""

from __future__ import annotations

import textwrap

from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.analysis.values import lin_join_shared
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module
from stinkywait_core.waitcnt.stall import simulate

HEAD = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n// stinkywait: workgroup-size 128\n.text\nk:\n'

# s40 = T(wave) = (w & 1) * 0x8000 + (w >> 1) * 0x2000 (the wave index w in 0..3 of a
# 128-lane workgroup); s38 is 0 or STEP after a join (a symbol of its own); s41 is T + s38 on
# one path and T on the other; each wave stores and, after a barrier, reads its own 128 bytes
# at s41.  With STEP 0x1000 the waves' bytes never meet; with 0x2000 wave 0 (s38 = 0x2000)
# meets wave 2 (s38 = 0).
TILES = """\
  s_bfe_u32 s33, ttmp8, 0x50019
  s_and_b32 s36, s33, 1
  s_cselect_b32 s40, 0x8000, 0
  s_lshr_b32 s36, s33, 1
  s_mul_i32 s37, s36, 0x2000
  s_add_co_u32 s40, s37, s40
  s_mov_b32 s38, STEP
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc1 .La
  s_mov_b32 s38, 0
.La:
  s_mov_b32 s41, s40
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lb
  s_add_co_u32 s41, s40, s38
.Lb:
  v_and_b32 v1, 31, v0
  v_lshlrev_b32 v1, 2, v1
  v_add_nc_u32 v1, s41, v1
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v1
  s_barrier_signal -1
  s_barrier_wait 0xffff
  v_add_nc_u32 v6, v4, v4
  s_endpgm
.amdhsa_kernel k
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 48
.end_amdhsa_kernel
"""


def tiles(step: int) -> str:
    return HEAD + textwrap.dedent(TILES).replace("STEP", hex(step))


def _facts(text: str):
    mod = parse_asm(text, "k.s")
    func = mod.functions[0]
    facts = lds_facts(func, mod)
    by_line = {i.line: i for b in func.blocks for i in b.instrs if not i.is_label}
    return facts, by_line


def _line_of(text: str, needle: str) -> int:
    return next(n for n, ln in enumerate(text.split("\n"), 1) if needle in ln)


def test_shared_terms_survive_the_join():
    text = tiles(0x1000)
    facts, by_line = _facts(text)
    store = by_line[_line_of(text, "ds_store_b32")]
    v = facts.flow.value_at(store, ("s", 41))
    origins = [a.origin for a, _ in v.lins[0][0]]
    # both wave-index terms (s_and and s_lshr of the index) are still there, plus one symbol for
    # the rest ({0, 0x1000})
    assert any("s_and_b32" in o for o in origins) and any("s_lshr_b32" in o for o in origins)
    assert any("after the join" in o for o in origins)
    assert not facts.may_overlap_waves(store, store)


def test_a_rest_that_reaches_another_wave_overlaps():
    text = tiles(0x2000)
    facts, by_line = _facts(text)
    store = by_line[_line_of(text, "ds_store_b32")]
    assert facts.may_overlap_waves(store, store)


def test_join_shared_form_is_a_superset():
    """The join's form, evaluated, covers both inputs for every value of the symbols (the
    rest's range is the union of the two rests' ranges)."""
    from stinkywait_core.analysis.values import Atom
    a = Atom(1, (0, 3, 1), 0, "a")
    b = Atom(2, (0, 0x1000, 0x1000), 0, "b")
    x = (((a, 0x100), (b, 1)), (4, 4, 0))
    y = (((a, 0x100),), (0x40, 0x40, 0))
    j = lin_join_shared(x, y)
    assert j is not None and j[0] == ((a, 0x100),)
    lo, hi, step = j[1]
    for av in range(4):
        for bv in (0, 0x1000):
            for val in (0x100 * av + bv + 4, 0x100 * av + 0x40):
                r = val - 0x100 * av
                assert lo <= r <= hi and (step == 0 or (r - lo) % step == 0)
    # shares b only: b kept, a's term joins the rest
    assert lin_join_shared(x, (((b, 1),), (0, 0, 0)))[0] == ((b, 1),)
    # nothing shared (another symbol, or the same with another coefficient): no shared form
    assert lin_join_shared((((a, 2),), (0, 0, 0)), (((b, 2),), (0, 0, 0))) is None
    assert lin_join_shared((((a, 2),), (0, 0, 0)), (((a, 3),), (0, 0, 0))) is None


def _barrier_waits(text: str) -> list[int]:
    an = analyze(text, "k.s", Options())
    lines = text.split("\n")
    return sorted({w.line for w in an.waits()
                   if w.rule in ("fallback", "barrier") and "barrier" in lines[w.line - 1]})


def _violations(out: str) -> list:
    mod = parse_asm(out, "k.s")
    return [v for r in check_module(mod, Options(), lds_addresses=True, max_trips=3) for v in r.violations]


def test_store_published_across_the_barrier_and_checked():
    text = tiles(0x1000)
    store = _line_of(text, "ds_store_b32")
    # no drain at the first barrier: every other wave touches only its own bytes
    assert store + 1 not in _barrier_waits(text)
    out = analyze(text, "k.s", Options()).inserted_text()
    assert _violations(out) == []


def test_overlapping_tiles_drain_and_the_checker_catches_the_missing_drain():
    text = tiles(0x2000)
    store = _line_of(text, "ds_store_b32")
    assert store + 1 in _barrier_waits(text)
    out = analyze(text, "k.s", Options()).inserted_text().split("\n")
    k = next(i for i, ln in enumerate(out) if "s_barrier_signal" in ln)
    assert "s_wait_dscnt" in out[k - 1]
    del out[k - 1]
    vs = _violations("\n".join(out))
    assert any(v.producer.mnemonic == "ds_store_b32" for v in vs)
    # and the unmutated tiles' output (no drain there) is what the checker accepts on 0x1000 only
    ok = analyze(tiles(0x1000), "k.s", Options()).inserted_text()
    bad = ok.replace("s_mov_b32 s38, 0x1000", "s_mov_b32 s38, 0x2000")
    assert bad != ok
    assert any(v.producer.mnemonic == "ds_store_b32" for v in _violations(bad))


# Two joins: at .Lj1 the load of v1 is the newest but one on the path that issued two loads and
# the newest on the other; promotion relaxes .Lj1's wait to 1 and drains the other path, so v2's
# load stays in flight.  At .Lj2 v2 is read: two newer loads on the path through the second
# block, none on the path through .Lq2.
TWO_JOINS = """\
  global_load_b32 v1, v0, s[4:5]
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lp2
  global_load_b32 v1, v0, s[4:5] offset:4
  global_load_b32 v2, v0, s[4:5] offset:8
  s_branch .Lj1
.Lp2:
  v_mov_b32 v2, 0
.Lj1:
  v_add_nc_u32 v3, v1, v1
  s_cmp_eq_u32 s3, 0
  s_cbranch_scc1 .Lq2
  global_load_b32 v5, v0, s[4:5] offset:12
  global_load_b32 v6, v0, s[4:5] offset:16
  s_branch .Lj2
.Lq2:
  v_mov_b32 v5, 1
  v_mov_b32 v6, 1
.Lj2:
  v_add_nc_u32 v4, v2, v3
  global_store_b32 v0, v4, s[4:5]
  s_endpgm
"""


def _waits_before(out: list[str], needle: str) -> list[str]:
    k = next(i for i, ln in enumerate(out) if needle in ln)
    got = []
    while k > 0 and out[k - 1].strip().startswith("s_wait"):
        k -= 1
        got.append(out[k].strip())
    return got


def test_the_replays_wait_at_a_later_join_is_promoted():
    text = HEAD + textwrap.dedent(TWO_JOINS)
    out = analyze(text, "k.s", Options()).inserted_text().split("\n")
    # the read of v2 waits for the two newer loads only; the path through .Lq2 drains at its end
    assert _waits_before(out, "v_add_nc_u32 v4, v2, v3") == ["s_wait_loadcnt 2"]
    assert _waits_before(out, ".Lj2:") == ["s_wait_loadcnt 0"]
    assert _violations("\n".join(out)) == []
    # without the tail drain, the path through .Lq2 reads v2 too early: the checker says so
    k = next(i for i, ln in enumerate(out) if ln.strip() == ".Lj2:")
    assert out[k - 1].strip() == "s_wait_loadcnt 0"
    del out[k - 1]
    assert any(v.producer.mnemonic == "global_load_b32" for v in _violations("\n".join(out)))


def test_second_round_lowers_the_predicted_stall():
    text = HEAD + textwrap.dedent(TWO_JOINS)
    out = analyze(text, "k.s", Options()).inserted_text()
    ours = analyze(out, "k.s", Options(coalesce_window=0))
    po = ours.outputs[0]
    run = simulate(po.func, ours.options.target, None, ours.options.latency_model)
    # the hot path (branches not taken) runs through both load blocks: only the wait for the
    # first join's load stalls there (~one load latency, not two)
    by_line = {p.line: p.total for p in run.points.values()}
    j2 = next(n for n, ln in enumerate(out.split("\n"), 1) if ln.strip() == "s_wait_loadcnt 2")
    assert by_line.get(j2, 0) == 0


def test_aiter_fmha_fwd_bf16_epilogue_fills_keep_their_wave_terms():
    """aiter's gfx1250 fmha fwd bf16 (tests/data/aiter_gfx1250, MIT): after the main loop the
    K-tile fill at line 7595 writes at s57, which is s101 + 0 on one path into .Lpc_dd48 and
    s101 + {0, 0x8800} on the other (s101 = (w & 1) * 0x23000 + (w >> 1) * 0x2200, w the wave
    index); the next fill, at line 7604, writes at s101 + 0x4400.  Another wave's 7604 never
    meets this wave's 7595 (the barrier between them needs no tensorcnt drain)."""
    import gzip
    import os
    path = os.path.join(os.path.dirname(__file__), "data", "aiter_gfx1250",
                        "fmha_fwd_bf16__fmha_bf16_pertokenBf16_hd128_128x256.s.gz")
    with gzip.open(path, "rt") as fh:
        text = fh.read()
    facts, by_line = _facts(text)
    first, second = by_line[7595], by_line[7604]
    assert first.mnemonic == second.mnemonic == "tensor_load_to_lds"
    terms = facts.flow.value_at(first, ("s", 57)).lins[0][0]
    assert sum(1 for a, _ in terms if a.derived is not None) == 2  # both wave-index terms kept
    assert not facts.may_overlap_waves(first, second)
    assert not facts.may_overlap_waves(second, first)
    # the waves of one parity read each other's slices: the loop's ds_load at line 5145 reads
    # s101 parity's tile at 0x4400.. that another wave's 7604 fills (the answer is not "never")
    assert by_line[5145].mnemonic == "ds_load_b128"
    assert facts.may_overlap_waves(second, by_line[5145])


def test_the_second_round_does_not_hang_on_the_exact_join():
    """A solve joined by producer (`producer_join="always"`; on the real kernel: the exact join
    exploding once the scalar prefetches' xcnt waits no longer cut its queues short) gets the
    same second round: the later join still waits for 2 and the skipping path drains."""
    text = HEAD + textwrap.dedent(TWO_JOINS)
    an = analyze(text, "k.s", Options(producer_join="always"))
    assert an.outputs[0].df.by_producer
    out = an.inserted_text().split("\n")
    assert _waits_before(out, "v_add_nc_u32 v4, v2, v3") == ["s_wait_loadcnt 2"]
    assert _waits_before(out, ".Lj2:") == ["s_wait_loadcnt 0"]
    assert _violations("\n".join(out)) == []
