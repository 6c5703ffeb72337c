"""Waits idle by their own block (validate/hwidle.py): the review proves a change of such a
wait without a checker run, so the block argument must never call a wait idle that the
checker's search sees retire something.

The small kernels pin each side of the argument (the count after the earlier wait plus the
pushes between, an out-of-order timeline, another counter's wait between, a block's first
wait); the property runs the checker's finished search (`watch_waits`) on real kernels and
on randomly edited versions of them, and every wait the block argument calls idle must be
one the search never saw retire anything.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from stinkywait_core.results import Options
from stinkywait_core.syntax import parse
from stinkywait_core.targets import get_target
from stinkywait_core.validate.hwcheck import check_function
from stinkywait_core.validate.hwidle import BlockIdle
from test_incremental_regions import _edit

ROOT = Path(__file__).resolve().parents[1]
AITER = ROOT / "tests" / "data" / "aiter_gfx1250"


def _idle_lines(text: str, arch: str = "gfx1250") -> set[int]:
    func = parse(text, "k.s", "asm").functions[0]
    idle = BlockIdle(get_target(arch, "hw"))
    out = set()
    for b in func.blocks:
        body = [i for i in b.instrs if not i.is_label and not i.is_phi]
        out.update(inst.span.line for k, inst in enumerate(body) if idle.idle(body, k))
    return out


_HEAD = '.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\nk:\n'


def test_an_earlier_wait_and_the_pushes_between_bound_the_count():
    text = _HEAD + """  ds_load_b32 v1, v0
  ds_load_b32 v2, v0 offset:4
  s_wait_dscnt 0x1
  ds_load_b32 v3, v0 offset:8
  s_wait_dscnt 0x2
  s_wait_dscnt 0x1
  ds_load_b32 v4, v0 offset:12
  s_wait_loadcnt 0x0
  s_wait_dscnt 0x2
  s_endpgm
"""
    # line 5: the block's first dscnt wait (the entry decides); line 7: 1 + 1 <= 2; line 8:
    # 2 + 0 > 1 (it retires); line 11: line 8's count, one push between, a loadcnt wait
    # between that leaves the LDS timeline as it is: 1 + 1 <= 2; line 10: no loadcnt wait
    # before it
    assert _idle_lines(text) == {7, 11}


def test_one_more_push_between_and_the_wait_may_retire():
    text = _HEAD + """  s_wait_dscnt 0x0
  ds_load_b32 v1, v0
  ds_load_b32 v2, v0 offset:4
  s_wait_dscnt 0x2
  ds_load_b32 v3, v0 offset:8
  ds_load_b32 v4, v0 offset:12
  ds_load_b32 v5, v0 offset:16
  s_wait_dscnt 0x4
  s_endpgm
"""
    # line 6: 0 + 2 <= 2; line 10: 2 + 3 > 4
    assert _idle_lines(text) == {6}


def test_a_block_boundary_ends_the_argument():
    text = _HEAD + """  s_wait_dscnt 0x0
  s_cmp_eq_u32 s0, 0
  s_cbranch_scc1 .Lskip
  ds_load_b32 v1, v0
.Lskip:
  s_wait_dscnt 0x1
  s_endpgm
"""
    assert _idle_lines(text) == set()


def _retiring(func, target, options) -> set[int] | None:
    res = check_function(func, options, watch_waits=True)
    if res.bounded or res.trip_cut or res.retiring is None:
        return None
    return {i.span.line for i in res.retiring if i.span is not None}


def _kernels() -> list[tuple[str, str]]:
    out = []
    for p in sorted(AITER.glob("*.s.gz")):
        if p.name.startswith(("fmha_fwd_bf16", "f4gemm_mxfp4_256x256_apre1", "f4gemm_mxfp4_256x256_apre0")):
            continue  # (checker runs of tens of seconds)
        out.append((p.name, gzip.decompress(p.read_bytes()).decode("utf-8", errors="replace")))
    for d in (ROOT.parent, ROOT.parent.parent):  # the shared corpus, beside main or a worktree
        corpus = d / "shared" / "corpus" / "asm"
        if corpus.is_dir():
            out += [(p.name, p.read_text()) for p in sorted(corpus.glob("aiter_gfx1250*.s"))]
            break
    return out


@pytest.mark.parametrize("name,text", _kernels(), ids=lambda v: v if len(v) < 80 else "")
def test_a_wait_idle_by_its_block_never_retires_in_the_checkers_search(name: str, text: str):
    """On the kernel and on 3 random edits of it (each a version the review would see)."""
    rng = random.Random(sum(map(ord, name)))
    lines = text.splitlines(keepends=True)
    shown = 0
    for step in range(4):
        if step:
            lines = _edit(lines, rng)
        module = parse("".join(lines), name, "asm")
        target = get_target(_arch(module), "hw")
        idle = BlockIdle(target)
        for func in module.functions:
            claimed = []
            for b in func.blocks:
                body = [i for i in b.instrs if not i.is_label and not i.is_phi]
                claimed += [inst.span.line for k, inst in enumerate(body) if idle.idle(body, k)]
            if not claimed:
                continue
            retiring = _retiring(func, target, Options(arch=target.name))
            if retiring is None:
                continue  # a search that did not finish shows nothing either way
            shown += len(claimed)
            assert not set(claimed) & retiring, f"{name} edit {step}: {sorted(set(claimed) & retiring)} retire"
    if "mxscale" in name:  # the corpus GEMMs: the review's offered deletes are of such waits
        assert shown, f"{name}: no wait is idle by its block (the test shows nothing)"


def _arch(module) -> str:
    from stinkywait_core.api import declared_target
    got = declared_target(module)
    return got[0] if got else "gfx1250"
