"""The previous version's LDS disjointness answers (waitcnt/lds_reuse.py) after an edit of what
decides the per-wave views: a scalar compare or the wave-index extraction writes no unit the
address analysis asked about, yet it changes which wave takes which role, so the answers the
old views decided must be asked again.  Warm (through an AnalysisCache) must equal cold."""

from __future__ import annotations

import random

from stinkywait_core import api
from stinkywait_core.results import Options

from test_wave_roles import kernel


def _waits(an) -> list:
    return [(w.line, w.counter, w.count, w.rule) for w in an.waits()]


def _mutate(lines: list[str], rng: random.Random) -> None:
    idx = [i for i, ln in enumerate(lines)
           if "s_cmp_eq_u32 s2," in ln or "s_bfe_u32 s2" in ln or "s_mov_b32 s21" in ln]
    i = rng.choice(idx)
    if "s_cmp_eq_u32" in lines[i]:
        lines[i] = "  s_cmp_eq_u32 s2, %d" % rng.randrange(4)
    elif "s_bfe" in lines[i]:
        lines[i] = rng.choice(["  s_bfe_u32 s2, ttmp8, 0x50019", "  s_bfe_u32 s2, ttmp8, 0x40019",
                               "  s_bfe_u32 s2, ttmp8, 0x5001a"])
    else:
        lines[i] = "  s_mov_b32 s21, %s" % hex(rng.choice([0, 0x4000, 0x8000, 0x2000]))


def test_role_deciding_edits_ask_the_answers_again():
    # (seed 0 over these reads made 2 of 60 warm plans differ from cold before the rule: an
    # extra tensor fallback drain kept from the old views after `s_cmp_eq_u32 s2, 1`)
    rng = random.Random(0)
    versions = 0
    for read in (0x10, 0x4010, 0x8010, 0x2010, 0x7ff0):
        text = kernel(read)
        cache = api.AnalysisCache()
        api.analyze(text, "k.s", Options(), cache=cache)
        for _ in range(12):
            lines = text.split("\n")
            _mutate(lines, rng)
            text = "\n".join(lines)
            warm = api.analyze(text, "k.s", Options(), cache=cache)
            assert _waits(warm) == _waits(api.analyze(text, "k.s", Options())), (hex(read), text)
            versions += 1
    assert versions == 60


def test_vector_edits_still_reuse_the_answers():
    """An inert vector edit (a VGPR no address reads) keeps the answers: the rule is not a
    blanket flush."""
    from stinkywait_core.waitcnt import lds_reuse
    calls: list[int] = []
    real = lds_reuse.reusable

    def spy(prev, edited, facts):
        got = real(prev, edited, facts)
        calls.append(len(got))
        return got

    text = kernel(0x10).replace("  v_add_nc_u32 v3, v2, v2\n", "  v_add_nc_u32 v3, v2, v2\n  v_mov_b32 v5, 1\n")
    cache = api.AnalysisCache()
    api.analyze(text, "k.s", Options(), cache=cache)
    lds_reuse.reusable = spy
    import stinkywait_core.waitcnt.lds_queries as q
    old_q = q.reusable
    q.reusable = spy
    try:
        edited = text.replace("v_mov_b32 v5, 1", "v_mov_b32 v5, 2")
        warm = api.analyze(edited, "k.s", Options(), cache=cache)
    finally:
        lds_reuse.reusable = real
        q.reusable = old_q
    assert _waits(warm) == _waits(api.analyze(edited, "k.s", Options()))
    assert calls and max(calls) > 0
