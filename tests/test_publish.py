"""The cross-wave publish rule at barriers (waitcnt/publish.py, and the hardware checker's own
version in validate/hwpublish.py): an LDS write still in flight at a barrier needs no drain
there when no wave touches its bytes before the next barrier; pass and checker agree; the
answers carried across edits are those of a fresh analysis."""

from __future__ import annotations

import textwrap

import pytest

from stinkywait_core.api import AnalysisCache, analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module

HEAD = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n.text\nk:\n'
PUBLISHED = """\
  v_mov_b32 v1, 0x100
  v_mov_b32 v2, 0x2000
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v5, v1
  v_add_nc_u32 v6, v5, v4
  s_endpgm
"""


def kernel(body: str) -> str:
    return HEAD + textwrap.dedent(body)


def barrier_waits(text: str, **kw) -> list[int]:
    """Lines of the barriers (signal) that get a dscnt wait, in the pass's plan."""
    an = analyze(text, "k.s", Options(**kw))
    lines = text.split("\n")
    out = []
    for w in an.waits():
        if w.rule in ("fallback", "barrier") and "barrier" in lines[w.line - 1]:
            out.append(w.line)
    return sorted(set(out))


def checker(text: str, max_trips: int = 3) -> list:
    an = analyze(text, "k.s", Options())
    out = an.inserted_text()
    mod = parse_asm(out, "k.s")
    res = check_module(mod, Options(), lds_addresses=True, max_trips=max_trips)
    return [v for r in res for v in r.violations]


def test_write_published_across_a_barrier_no_reader():
    text = kernel(PUBLISHED)
    # the store may run across the first barrier (the next segment reads 0x2000 only); the
    # second barrier's segment reads its bytes: drained there
    assert barrier_waits(text) == [10]
    assert checker(text) == []


def test_the_assumption_is_said_at_the_first_barrier():
    notes = [d for d in analyze(kernel(PUBLISHED), "k.s", Options()).diagnostics if d.code == "lds-published"]
    assert [(d.severity, d.line) for d in notes] == [("info", 7)]
    assert "assuming every wave of the workgroup runs the same barriers" in notes[0].message
    # specialised by wave index: the barriers are paired between waves, said so
    notes = [d for d in analyze(kernel(WAVE_BRANCH), "k.s", Options()).diagnostics if d.code == "lds-published"]
    assert len(notes) == 1 and "paired barrier by barrier" in notes[0].message
    # one wave, or not aligned and not paired (a call out of the function; a subroutine of
    # the function itself is followed by the pairing): no rule resting on the assumption, no note
    called = WAVE_BRANCH.replace("  s_endpgm\n", "  s_getpc_b64 s[30:31]\n  s_swappc_b64 s[30:31], s[30:31]\n"
                                               "  s_endpgm\n")
    for text, kw in ((kernel(called), {}), (kernel(PUBLISHED), {"num_waves": 1})):
        assert not [d for d in analyze(text, "k.s", Options(**kw)).diagnostics if d.code == "lds-published"]


def test_read_by_another_wave_before_the_next_barrier():
    text = kernel(PUBLISHED.replace("ds_load_b32 v4, v2", "ds_load_b32 v4, v1"))
    assert 7 in barrier_waits(text)
    assert checker(text) == []


def test_checker_reports_a_published_write_read_by_another_wave():
    """The pass's output with the drain removed by hand: the checker's own rule finds it."""
    text = kernel(PUBLISHED.replace("ds_load_b32 v4, v2", "ds_load_b32 v4, v1"))
    an = analyze(text, "k.s", Options())
    out = an.inserted_text().split("\n")
    # drop the wait before the first barrier
    k = next(i for i, ln in enumerate(out) if "s_barrier_signal" in ln)
    assert "s_wait_dscnt" in out[k - 1]
    del out[k - 1]
    mod = parse_asm("\n".join(out), "k.s")
    vs = [v for r in check_module(mod, Options(), lds_addresses=True) for v in r.violations]
    assert any(v.rule == "barrier" and v.producer.mnemonic == "ds_store_b32" for v in vs)


def test_one_wave_per_workgroup_needs_no_drain_for_others():
    text = kernel(PUBLISHED.replace("ds_load_b32 v4, v2", "ds_load_b32 v4, v1"))
    assert barrier_waits(text, num_waves=1) == []


WAVE_BRANCH = """\
  v_mov_b32 v1, 0x100
  v_mov_b32 v2, 0x2000
  s_bfe_u32 s2, ttmp8, 0x50019
  ds_store_b32 v1, v3
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 .Lw0
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v2
  s_branch .Ljoin
.Lw0:
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_load_b32 v4, v1
.Ljoin:
  s_barrier_signal -1
  s_barrier_wait 0xffff
  v_add_nc_u32 v6, v4, v4
  s_endpgm
"""


def test_wave_index_specialised_paths_keep_the_drain():
    """Wave 0 reads the stored bytes after its barrier; the others do not.  Waves take
    different barriers: not aligned; the two barriers are the same instance in two waves
    (waitcnt/wave_match.py), and wave 0's read follows one of them, so both drain (and the
    checker agrees)."""
    text = kernel(WAVE_BRANCH)
    got = barrier_waits(text)
    assert 10 in got and 15 in got
    assert checker(text) == []


def test_uniform_branch_keeps_alignment():
    """The same shape on a kernel-argument value: every wave goes the same way."""
    text = kernel(WAVE_BRANCH.replace("s_bfe_u32 s2, ttmp8, 0x50019", "s_load_b32 s2, s[0:1], 0x0\n  s_wait_kmcnt 0"))
    got = barrier_waits(text)
    assert 16 in got  # the .Lw0 path reads the stored bytes
    assert 11 not in got  # the other path does not: the store runs across that barrier
    assert checker(text) == []


LOOP = """\
  v_mov_b32 v1, 0x100
  v_mov_b32 v2, 0x2000
  s_mov_b32 s4, 8
.Lloop:
  ds_load_b32 v4, v2
  s_barrier_signal -1
  s_barrier_wait 0xffff
  ds_store_b32 v1, v3
  s_barrier_signal -1
  s_barrier_wait 0xffff
  v_add_nc_u32 v6, v4, v4
  s_sub_u32 s4, s4, 1
  s_cmp_lg_u32 s4, 0
  s_cbranch_scc1 .Lloop
  s_endpgm
"""


def test_loop_trips():
    """The store at the end of a trip meets no access before the next barrier (line 12), so it
    runs across it; at the loop head's barrier (line 9) it is still in flight and the segment
    after it holds another wave's store of the same bytes (the next trip's line 11): drained
    there.  With the next trip's load reading its bytes too (v2 = v1), the barrier after the
    store drains.  Without CoalesceWaits, so that a drain is not hidden in a folded RAW wait."""
    text = kernel(LOOP)
    assert barrier_waits(text, coalesce_window=0) == [9]
    assert checker(text) == []
    same = kernel(LOOP.replace("v_mov_b32 v2, 0x2000", "v_mov_b32 v2, 0x100"))
    got = barrier_waits(same)
    assert 12 in got
    assert checker(same) == []


@pytest.mark.parametrize("body", [PUBLISHED, WAVE_BRANCH, LOOP])
def test_incremental_answers_equal_fresh(body):
    """Edits that keep the barriers and LDS accesses reuse the answers; edits that move an
    address change them; each version's plan equals a fresh analysis."""
    text = kernel(body)
    cache = AnalysisCache()
    versions = [text,
                text.replace("v_add_nc_u32 v6", "v_add_nc_u32 v7"),
                text.replace("v_mov_b32 v2, 0x2000", "v_mov_b32 v2, 0x100"),
                text,
                # a new reader of the stored bytes right after the first barrier
                text.replace("s_barrier_wait 0xffff\n", "s_barrier_wait 0xffff\n  ds_load_b32 v9, v1\n"
                             "  v_add_nc_u32 v10, v9, v9\n", 1),
                text]
    for v in versions:
        inc = analyze(v, "k.s", Options(), cache=cache)
        fresh = analyze(v, "k.s", Options())
        assert inc.inserted_text() == fresh.inserted_text()
        assert [(w.line, w.rule) for w in inc.waits()] == [(w.line, w.rule) for w in fresh.waits()]
        assert [(d.code, d.line, d.message) for d in inc.diagnostics] == \
            [(d.code, d.line, d.message) for d in fresh.diagnostics]


def test_unrelated_edit_reuses_the_answers(monkeypatch):
    """An edit that touches no barrier, LDS access or address keeps every publish answer: no
    pair is compared again."""
    from stinkywait_core.analysis.lds_facts import LdsFacts
    text = kernel(PUBLISHED)
    cache = AnalysisCache()
    analyze(text, "k.s", Options(), cache=cache)
    calls = []
    orig = LdsFacts.may_overlap_waves
    monkeypatch.setattr(LdsFacts, "may_overlap_waves", lambda self, a, b, s=False: calls.append(1) or orig(self, a, b, s))
    edited = text.replace("v_add_nc_u32 v6, v5, v4", "v_add_nc_u32 v7, v5, v4")
    inc = analyze(edited, "k.s", Options(), cache=cache)
    assert calls == []
    assert inc.inserted_text() == analyze(edited, "k.s", Options()).inserted_text()
    moved = text.replace("v_mov_b32 v2, 0x2000", "v_mov_b32 v2, 0x104")
    analyze(moved, "k.s", Options(), cache=cache)
    assert calls  # the address changed: asked again
