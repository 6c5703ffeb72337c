"""The review of a document's next version gives the cold review exactly (issue 21: the
review tier within 200 ms).

The review carries state across a document's versions: its trial re-plans run on a cache of
their own kept with the document's (`AnalysisCache.review_scratch`, so the next version's
trials re-plan incrementally), the verdicts per function (review_reuse.py), and the missing
waits' records.  None of that may change a finding: each step applies a random one-line edit
to a real kernel nobody here wrote, reviews the version with the document's cache and from
scratch, and compares every diagnostic.  The small kernels pin that a verdict an edit makes
wrong is not carried: a relaxation offered on one version is withdrawn on the next, where a
read it would leave unprotected appears, and offered again when the read goes.  The
wait-stripped plan is reused after an edit that only retunes hand-written waits
(api._strip_waits): the walks with retuned waits and renamed loads check that plan too,
and fail when the reuse skips its object check.  The FIFO snapshots at the hand-written
waits are kept in a block's finalize record while it holds (waitcnt/finalize.py), and the
wave-specialised publish answers carried across VALU edits (waitcnt/publish_reuse.py): the
walks compare those snapshots warm and cold, and a walk over a small wave-specialised kernel
compares its plans.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.cache import AnalysisCache
from stinkywait_core.results import Options
from test_incremental_regions import _edit
from test_publish_waves import HEAD, SPLIT

REPO = Path(__file__).resolve().parents[1]
ASM = REPO.parent / "shared" / "corpus" / "asm"
needs_shared = pytest.mark.skipif(not ASM.is_dir(), reason="../shared corpus not present")


def _findings(diags) -> list[tuple]:
    return [(d.code, d.line, d.col, d.message, sorted(d.data.items())) for d in diags]


@needs_shared
@pytest.mark.parametrize("name,steps", [("aiter_gfx1250_mxscale_gemm2_final_isa.s", 5),
                                        ("aiter_gfx1250_mxscale_gemm1_final_isa.s", 3)])
def test_the_review_of_each_edited_version_equals_the_cold_review(name: str, steps: int):
    _walk(name, steps, random.Random(21), _edit)


def _walk(name: str, steps: int, rng: random.Random, edit, stripped: Options | None = None) -> None:
    """`steps` versions of the corpus kernel `name`, each `edit`ed from the last, reviewed
    with the document's cache and cold; with `stripped`, also the review's wait-stripped
    analysis of each (from the document's cache) against a cold one."""
    path = str(ASM / name)
    lines = (ASM / name).read_text().splitlines(keepends=True)
    cache = AnalysisCache()
    analyze("".join(lines), path, Options(), cache=cache).check_diagnostics()
    for step in range(steps):
        lines = edit(lines, rng)
        text = "".join(lines)
        warm_an, cold_an = analyze(text, path, Options(), cache=cache), analyze(text, path, Options())
        # the FIFO snapshots the review reads at each hand-written wait (kept in a block's
        # finalize record while it holds: finalize.Finalizer._block_snapshots)
        assert _wait_snapshots(warm_an) == _wait_snapshots(cold_an), f"{name}, edit {step}: the snapshots"
        warm = _findings(warm_an.check_diagnostics())
        cold = _findings(cold_an.check_diagnostics())
        assert warm == cold, f"{name}, edit {step}"
        if stripped is not None:
            assert _plan(analyze(text, path, stripped, cache=cache)) == _plan(analyze(text, path, stripped)), \
                f"{name}, edit {step}: the wait-stripped plan"


def _wait_snapshots(an) -> list[tuple]:
    """(line, the queues per timeline: each its ops' lines and mnemonics, saturation) at every
    hand-written wait of every function."""
    out = []
    for po in an.outputs:
        for b in po.func.blocks:
            for inst in b.instrs:
                if inst.is_label or inst.is_phi or inst.span is None or not po.df.info[inst].is_wait:
                    continue
                snap = po.df.snapshot_at(inst)
                out.append((inst.span.line, None if snap is None else tuple(
                    tuple((tuple((e.op.span.line if e.op.span else 0, e.op.mnemonic, e.trips) for e in q.ops), len(q.sat))
                          for q in queues) for queues in snap)))
    return out


_TARGET = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\nk:\n'
_COVERED = _TARGET + ("  ds_load_b32 v1, v0\n  ds_load_b32 v2, v0 offset:4\n  s_wait_dscnt 0x0\n"
                      "  v_add_f32 v3, v1, v1\n  s_wait_dscnt 0x0\n  v_add_f32 v4, v2, v2\n  s_endpgm\n")
#: the author's second wait replaced by a nop (lines stay put): nothing but line 5 covers v2
_UNCOVERED = _COVERED.replace("  s_wait_dscnt 0x0\n  v_add_f32 v4", "  s_nop 0\n  v_add_f32 v4")


def test_a_relaxation_an_edit_makes_wrong_is_withdrawn_and_offered_again():
    cache = AnalysisCache()
    offers = []
    for text in (_COVERED, _UNCOVERED, _COVERED):
        diags = analyze(text, "k.s", Options(), cache=cache).check_diagnostics()
        offers.append([(d.line, d.code) for d in diags if d.code in ("stricter-wait", "redundant-wait")])
    assert offers == [[(5, "stricter-wait"), (7, "redundant-wait")], [], [(5, "stricter-wait"), (7, "redundant-wait")]]


#: a hand-written wait retuned at its own line (the count set to another value): the one edit
#: whose wait-stripped re-plan is the last version's plan, object for object (api._strip_waits)
_RETUNE = re.compile(r"^(\s*s_wait_(?:dscnt|loadcnt|tensorcnt|kmcnt|storecnt)\s+)(0x[0-9a-fA-F]+|\d+)(.*)$")


def _retune(lines: list[str], rng: random.Random) -> list[str]:
    lines = list(lines)
    waits = [i for i, ln in enumerate(lines) if _RETUNE.match(ln.rstrip("\r\n"))]
    i = rng.choice(waits)
    m = _RETUNE.match(lines[i].rstrip("\r\n"))
    new = rng.choice([v for v in (0, 1, 2, 4, 6, 8, 10) if v != int(m.group(2), 0)])
    lines[i] = f"{m.group(1)}{new:#x}{m.group(3)}\n"
    return lines


#: a load's destination register or range (the value a later read waits for)
_LOAD = re.compile(r"^(\s*(?:ds_load|global_load|buffer_load)\w*\s+v)(?:(\d+)|\[(\d+):(\d+)\])")


def _rename_load(lines: list[str], rng: random.Random) -> list[str]:
    """A load's destination moved by a few registers at its own line: another read waits for
    it, or none."""
    lines = list(lines)
    i = rng.choice([i for i, ln in enumerate(lines) if _LOAD.match(ln)])
    m = _LOAD.match(lines[i])
    d = rng.choice((4, 8, 16))
    dst = f"{int(m.group(2)) + d}" if m.group(2) else f"[{int(m.group(3)) + d}:{int(m.group(4)) + d}]"
    lines[i] = f"{m.group(1)}{dst}{lines[i][m.end():]}"
    return lines


def _mixed_edit(lines: list[str], rng: random.Random) -> list[str]:
    """A wait retuned (40%), a load's destination renamed (30%), else one of `_edit`'s (a
    register renamed, a line deleted or duplicated, an `s_nop` typed, two lines swapped)."""
    r = rng.random()
    return _retune(lines, rng) if r < 0.4 else _rename_load(lines, rng) if r < 0.7 else _edit(lines, rng)


@needs_shared
@pytest.mark.parametrize("name,steps,seed", [("aiter_gfx1250_mxscale_gemm2_final_isa.s", 6, 5),
                                             ("aiter_gfx1250_mxscale_gemm1_final_isa.s", 4, 7)])
def test_retuned_waits_and_other_edits_review_as_a_cold_review(name: str, steps: int, seed: int):
    """Random edits of the corpus GEMMs, many of them a hand-written wait retuned (the
    wait-stripped plan is then reused, the checker's block argument reads the lines around
    each wait again): every version's review equals its cold review, and so does the
    wait-stripped plan the review read (the proofs would hide most stale plans: a
    relaxation a stale plan proposes fails its re-plan)."""
    _walk(name, steps, random.Random(seed), _mixed_edit,
          stripped=Options().replace(replace_waits=True, coalesce_window=0))  # (as review.py asks)


def _plan(an) -> list[tuple]:
    return [(w.function, w.line, w.placement, w.counter, w.count) for w in an.waits()]


#: the wait at line 5 drains exactly what the read after it needs (v2, the youngest load)
_EXACT = _TARGET + ("  ds_load_b32 v1, v0\n  ds_load_b32 v2, v0 offset:4\n  s_wait_dscnt 0x0\n"
                    "  v_add_f32 v3, v2, v2\n  s_endpgm\n")


def _small_versions(rng: random.Random, steps: int) -> list[str]:
    """A random walk over versions of `_EXACT` (the first): the wait retuned (0, 1 or 2), the read's
    register renamed (v1 or v2: which load it needs), each at its own line."""
    lines = _EXACT.splitlines(keepends=True)
    out = [_EXACT]
    for _ in range(steps):
        if rng.random() < 0.5:
            lines[4] = f"  s_wait_dscnt {rng.choice((0, 1, 2)):#x}\n"
        else:
            reg = rng.choice(("v1", "v2"))
            lines[5] = f"  v_add_f32 v3, {reg}, {reg}\n"
        out.append("".join(lines))
    return out


def test_random_versions_of_a_small_kernel_review_as_a_cold_review():
    """Which load the read needs, and the wait before it, change from version to version
    at the same lines: a wait-stripped plan carried past a renamed read (a verdict that
    rests on a read the edit changed) offers a relaxation the cold review does not, or
    misses one it offers."""
    rng = random.Random(53)
    cache = AnalysisCache()
    seen = set()
    for k, text in enumerate(_small_versions(rng, 24)):
        warm = _findings(analyze(text, "k.s", Options(), cache=cache).check_diagnostics())
        cold = _findings(analyze(text, "k.s", Options()).check_diagnostics())
        assert warm == cold, f"version {k}:\n{text}"
        seen.add(tuple(code for code, *_ in cold))
    assert len(seen) > 1  # the versions' findings differ (the comparison can fail)


#: a kernel specialised by wave index (tests/test_publish_waves.py's): wave 0 stores at v1 and
#: the other waves read v2 after the first barrier, v1 after the second; a VALU line between
#: wave 0's barriers
_SPLIT = HEAD + SPLIT.replace("  s_nop 0\n", "  v_mov_b32 v10, v3\n")

#: line (0-based in `_SPLIT`'s lines) -> the texts it takes: the store's and the read's
#: addresses (an edit the publish answer rests on), and two VALU lines no address reads
_SPLIT_CHOICES = {3: ("  v_mov_b32 v1, 0x100\n", "  v_mov_b32 v1, 0x2000\n"),
                  4: ("  v_mov_b32 v2, 0x2000\n", "  v_mov_b32 v2, 0x3000\n"),
                  20: ("  v_mov_b32 v10, v3\n", "  v_mov_b32 v11, v3\n", "  v_add_nc_u32 v1, v3, v3\n"),
                  25: ("  v_add_nc_u32 v6, v4, v4\n", "  v_add_nc_u32 v9, v4, v4\n")}


def test_publish_answers_of_a_wave_specialised_kernel_carried_across_edits_equal_cold_ones(monkeypatch):
    """The wave-specialised publish answers are carried to the next version when the edit
    added or removed only vector ALU lines writing units no address analysis asked about
    (waitcnt/publish_reuse.py).  A random walk over versions that move the store's or the
    read's LDS address (the answer at the first barrier of wave 0's path changes: the other
    waves read the stored bytes right after it, or not) and edit VALU lines no address reads:
    each version's plan, wait-stripped plan and review from the document's cache equal cold
    ones, and answers were carried on some versions.  With `inert` ignoring the keys (any
    VALU edit carries), the walk fails (a stale "no drain" at the barrier)."""
    import stinkywait_core.waitcnt.publish as publish
    carried_counts = []
    real = publish.Publish._carried

    def counting(self):
        first = self._wave_carry is None
        got = real(self)
        if first:
            carried_counts.append(len(got))
        return got

    monkeypatch.setattr(publish.Publish, "_carried", counting)
    assert "0x2000" in _SPLIT and _SPLIT.splitlines()[3] == "  v_mov_b32 v1, 0x100"
    rng = random.Random(57)
    lines = _SPLIT.splitlines(keepends=True)
    cache = AnalysisCache()
    stripped = Options().replace(replace_waits=True, coalesce_window=0)
    plans = set()
    for k in range(30):
        if k:
            at = rng.choice(sorted(_SPLIT_CHOICES))
            lines[at] = rng.choice([t for t in _SPLIT_CHOICES[at] if t != lines[at]])
        text = "".join(lines)
        for opts in (Options(), stripped):
            warm, cold = _plan(analyze(text, "k.s", opts, cache=cache)), _plan(analyze(text, "k.s", opts))
            assert warm == cold, f"version {k}, replace_waits={opts.replace_waits}:\n{text}"
            plans.add(tuple(cold))
        warm = _findings(analyze(text, "k.s", Options(), cache=cache).check_diagnostics())
        assert warm == _findings(analyze(text, "k.s", Options()).check_diagnostics()), f"version {k}:\n{text}"
    assert len(plans) > 1  # the answers differ between versions (the comparison can fail)
    assert any(carried_counts)  # and some were carried
