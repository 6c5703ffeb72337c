"""The incremental re-plan, on real kernels nobody here wrote, gives the cold plan exactly.

The guard of the region-limited re-plan (waitcnt/incremental.py, the solver's skip records,
CoalesceWaits' per-block folds): each step applies one random edit to a real kernel (aiter's
hand-written and compiled gfx1250/gfx942/gfx950 kernels of ../shared/corpus/asm and
tests/data/aiter_gfx1250), analyses the version with the document's `AnalysisCache` and
from scratch, and compares the plan JSON (every wait with its reason and producers, every
diagnostic) and the text the plan inserts.  The edits are the kinds that move the latency
model's clock (a line duplicated, deleted, an `s_nop` typed) as well as plain renames, so a
fold or a sweep reused where its inputs changed shows up as a difference.
"""

from __future__ import annotations

import gzip
import random
import re
import sys
import zlib
from pathlib import Path

import pytest

from stinkywait_core import api
from stinkywait_core.results import Options

REPO = Path(__file__).resolve().parents[1]
ASM = REPO.parent / "shared" / "corpus" / "asm"
AITER = REPO / "tests" / "data" / "aiter_gfx1250"
needs_shared = pytest.mark.skipif(not ASM.is_dir(), reason="../shared corpus not present")

REG = re.compile(r"\b([vs])(\d+)\b")
INSTR = re.compile(r"^\s+[sv]_\w+|^\s+(ds|buffer|global|flat|tensor)_\w+")


def _edit(lines: list[str], rng: random.Random) -> list[str]:
    """One random one-line edit of an instruction line: a register renamed, the line
    deleted or duplicated, an `s_nop` typed before it, or the line swapped with the next."""
    lines = list(lines)
    body = [i for i, ln in enumerate(lines) if INSTR.match(ln) and "s_cbranch" not in ln and "s_branch" not in ln]
    i = rng.choice(body)
    kind = rng.randrange(5)
    if kind == 0 and REG.search(lines[i]):
        m = rng.choice(list(REG.finditer(lines[i])))
        lines[i] = lines[i][:m.start(2)] + str(int(m.group(2)) ^ rng.choice((1, 2, 4))) + lines[i][m.end(2):]
    elif kind == 1:
        del lines[i]
    elif kind == 2:
        lines.insert(i, lines[i])
    elif kind == 3:
        lines.insert(i, f"\ts_nop {rng.randrange(8)}\n")
    elif i + 1 < len(lines) and INSTR.match(lines[i + 1]):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return lines


def _plan(an: api.Analysis) -> tuple:
    return an.to_json(), an.inserted_text(explain=True)


def _sequence(text: str, name: str, options: Options, steps: int, seed: int) -> int:
    """Edit `text` `steps` times; returns how many block walks the memo answered."""
    rng = random.Random(seed)
    cache = api.AnalysisCache()
    lines = text.splitlines(keepends=True)
    api.analyze(text, name, options, cache=cache)
    reused = 0
    for _ in range(steps):
        lines = _edit(lines, rng)
        t = "".join(lines)
        warm = api.analyze(t, name, options, cache=cache)
        assert _plan(warm) == _plan(api.analyze(t, name, options))
        reused += sum(ch.memo.hits for ch in cache._d.values())
    return reused


def _kernels() -> list[tuple[str, Path]]:
    out = [(p.name, p) for p in sorted(ASM.glob("*.s"))] if ASM.is_dir() else []
    out += [(p.name[:-3], p) for p in sorted(AITER.glob("*.s.gz"))[::3]]
    return out


def _read(p: Path) -> str:
    return gzip.decompress(p.read_bytes()).decode() if p.suffix == ".gz" else p.read_text()


@pytest.mark.parametrize("name,path", _kernels(), ids=[n for n, _ in _kernels()])
def test_real_kernel_edit_sequences(name: str, path: Path) -> None:
    reused = _sequence(_read(path), name, Options(), steps=3, seed=zlib.crc32(name.encode()))
    assert reused > 0, "the memo never answered: the test would not see a stale reuse"


@needs_shared
def test_several_kernels_in_one_file() -> None:
    """Two kernels in one document: an edit of one re-plans it, the other is kept as it was,
    and both are what a cold analysis gives."""
    a = (ASM / "aiter_gfx1250_mxscale_gemm2_final_isa.s").read_text()
    b = a.replace("kernel_mxscale_gemm2", "kernel_second")
    assert a != b
    _sequence(a + b, "two.s", Options(), steps=4, seed=11)


def test_synthetic_self_loops() -> None:
    """bench_lsp's synthetic kernel (self loops of LDS and buffer loads), shortened."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_lsp import synthetic_kernel
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    _sequence(synthetic_kernel(120), "synthetic.s", Options(), steps=8, seed=3)


def _two_blocks(nops: list[int]) -> str:
    """LDS loads in one block, their consumers in the next: whether the second wait folds
    into the first depends on how long ago the loads were issued, i.e. on the block above."""
    pad = "".join(f"\ts_nop {n}\n" for n in nops)
    return ('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n\t.text\n\t.globl k\n\t.type k,@function\nk:\n'
            "\tds_load_b64 v[0:1], v100\n\tds_load_b64 v[2:3], v101\n" + pad +
            ".LBB0_1:\n\tv_add_f32_e32 v5, v0, v1\n\tv_add_f32_e32 v6, v2, v3\n"
            "\ts_cmp_lt_u32 s10, 3\n\ts_cbranch_scc1 .LBB0_1\n\ts_endpgm\n")


@pytest.mark.parametrize("moves", [False, True], ids=["same-lines", "lines-move"])
def test_fold_follows_the_clock_of_the_block_above(moves: bool) -> None:
    """An edit above a block changes the wave's state at its start and so its folds (one
    wait or two), while the block itself, its waits and every other input are unchanged: a
    fold reused on those alone would be stale."""
    versions = ([[7] * n for n in (0, 4, 12, 24, 3, 16, 0)] if moves else
                [[n] * 12 for n in (0, 7, 1, 7, 3, 0)])
    cache = api.AnalysisCache()
    counts = set()
    for nops in versions:
        t = _two_blocks(nops)
        cold = api.analyze(t, "k.s", Options())
        assert _plan(api.analyze(t, "k.s", Options(), cache=cache)) == _plan(cold)
        counts.add(len(cold.waits()))
    assert counts == {1, 2}, "the versions should fold differently, or the test proves nothing"


@needs_shared
def test_a_kernel_pasted_twice_keeps_one_chain_each() -> None:
    """The same kernel twice in one file (same name): each occurrence has its own chain, so
    an edit of the second re-plans the second only, the first keeps its plan object."""
    a = (ASM / "aiter_gfx1250_mxscale_gemm2_final_isa.s").read_text()
    lines = (a + a).splitlines(keepends=True)
    cache = api.AnalysisCache()
    first = api.analyze("".join(lines), "twice.s", Options(), cache=cache)
    assert len(first.outputs) == 2
    n = len(lines) - 1 - next(i for i, ln in enumerate(reversed(lines)) if re.match(r"\s+v_\w+ v\d+,", ln))
    lines[n] = re.sub(r"v(\d+),", lambda m: f"v{int(m.group(1)) ^ 1},", lines[n], count=1)
    t = "".join(lines)
    warm = api.analyze(t, "twice.s", Options(), cache=cache)
    assert _plan(warm) == _plan(api.analyze(t, "twice.s", Options()))
    assert warm.outputs[0] is first.outputs[0] and warm.outputs[1] is not first.outputs[1]


# --- reused LDS disjointness answers (waitcnt/lds_reuse.py) -------------------------------------

_LDS_HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n\t.text\n\t.globl k\n\t.type k,@function\nk:\n'
_LDS_TAIL = ("\t.rodata\n\t.amdhsa_kernel k\n\t\t.amdhsa_next_free_vgpr 16\n\t\t.amdhsa_next_free_sgpr 16\n"
             "\t.end_amdhsa_kernel\n")


def _lds_pair(defs: str, loop: bool) -> str:
    """An async LDS fill at v1 = 4 * (v0 & 0xff) and a DS load at v2, whose definitions are
    `defs`: disjoint when v2 = v1 + 0x1000, overlapping when v2 = v1 (an asynccnt wait);
    `loop`: the pair in a loop body, so the memoised walks re-check their answers."""
    head = "\tv_and_b32 v5, 0xff, v0\n\tv_lshlrev_b32 v1, 2, v5\n\tv_mov_b32 v9, 1\n" + defs
    pair = ("\tglobal_load_async_to_lds_b32 v1, v[6:7], off\n\tds_load_b32 v3, v2\n\ts_wait_dscnt 0\n"
            "\tv_add_nc_u32 v4, v3, v9\n")
    if loop:
        pair = ".LBB0_1:\n" + pair + "\ts_add_co_i32 s10, s10, -1\n\ts_cmp_lg_u32 s10, 0\n\ts_cbranch_scc1 .LBB0_1\n"
    return _LDS_HEAD + head + pair + "\ts_endpgm\n" + _LDS_TAIL


_DISJOINT = "\tv_add_nc_u32 v2, 0x1000, v1\n"
#: (before, after): each edit makes the pair overlap without touching either access
_OVERLAP_EDITS = {
    "address-def-edited": (_DISJOINT, "\tv_add_nc_u32 v2, 0, v1\n"),
    "def-inserted-between": (_DISJOINT, _DISJOINT + "\tv_mov_b32 v2, v1\n"),
    "def-deleted": ("\tv_mov_b32 v2, v1\n" + _DISJOINT.replace("v1\n", "v2\n"), "\tv_mov_b32 v2, v1\n"),
    "upstream-def-edited": ("\tv_mov_b32 v8, 0x1000\n\tv_add_nc_u32 v2, v8, v1\n",
                            "\tv_mov_b32 v8, 0\n\tv_add_nc_u32 v2, v8, v1\n"),
}


def _async_waits(an: api.Analysis) -> list:
    return [w for w in an.waits() if w.counter == "async"]


@pytest.mark.parametrize("loop", [False, True], ids=["straight", "loop"])
@pytest.mark.parametrize("edit", sorted(_OVERLAP_EDITS))
def test_an_edit_that_makes_lds_accesses_overlap_is_not_answered_from_the_last_version(edit: str, loop: bool) -> None:
    """The last version proved the pair disjoint; the edit changes (or adds, or removes) a
    definition the DS load's address rests on, so the pair now overlaps and needs an
    asynccnt wait: an answer reused from the last version would leave it out."""
    before, after = (_lds_pair(d, loop) for d in _OVERLAP_EDITS[edit])
    cache = api.AnalysisCache()
    first = api.analyze(before, "k.s", Options(), cache=cache)
    assert _async_waits(first) == [] and _async_waits(api.analyze(before, "k.s", Options())) == []
    (chain,) = cache._d.values()
    assert chain.memo.lds_answers is not None and chain.memo.lds_answers.answers, "no answer to reuse"
    warm = api.analyze(after, "k.s", Options(), cache=cache)
    cold = api.analyze(after, "k.s", Options())
    assert _async_waits(cold), "the edited pair should overlap, or the test proves nothing"
    assert _plan(warm) == _plan(cold)


def test_an_edit_far_from_the_addresses_reuses_the_answers(monkeypatch) -> None:
    """An edit of a register no address rests on keeps every disjointness answer: the
    address analysis is not asked again, and the plan is the cold one."""
    from stinkywait_core.analysis.lds_facts import LdsFacts
    before = _lds_pair(_DISJOINT, True)
    after = before.replace("v_mov_b32 v9, 1", "v_mov_b32 v9, 2")
    cache = api.AnalysisCache()
    api.analyze(before, "k.s", Options(), cache=cache)
    asked = []
    real = LdsFacts.may_overlap
    monkeypatch.setattr(LdsFacts, "may_overlap", lambda self, *a, **k: asked.append(a) or real(self, *a, **k))
    warm = api.analyze(after, "k.s", Options(), cache=cache)
    assert asked == []
    cold = api.analyze(after, "k.s", Options())
    assert asked, "a cold analysis asks the address analysis (or the test proves nothing)"
    assert _plan(warm) == _plan(cold) and _async_waits(cold) == []
