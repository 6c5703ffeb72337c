"""An SMEM result needed right after a newer s_load is waited for before that load (issue 22,
aiter's gfx942 flatmm, 1.47x): SMEM completes out of order, so the consumer's
``s_waitcnt lgkmcnt(0)`` would also wait for the load issued just before it (16 cycles a trip
there); waiting above the new load costs only what the older one has left, and the new load's
own consumer then gets its own wait from the pass (waitcnt/candidates.py `_ahead`,
waitcnt/hazards.py rule ``raw-ahead``).  Loads issued close together keep one wait after the
last (waiting between them would serialise them)."""

from __future__ import annotations

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module


def kernel(filler: int) -> str:
    """A loop whose head loads s[84:85] and then reads s31 of the previous trip's (or the
    prologue's) s_load s[30:31]; `filler` VALU instructions between the loads."""
    pad = "".join("  v_add_f32 v1, v1, v1\n" for _ in range(filler))
    return (".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\nk:\n"
            "  s_load_dwordx2 s[30:31], s[0:1], 0x0\n  s_mov_b32 s40, 4\n" + pad +
            "L_loop:\n"
            "  s_load_dwordx2 s[84:85], s[0:1], 0x8   // head load\n"
            "  v_mov_b32 v50, s31                     // old use\n" + pad +
            "  s_load_dwordx2 s[30:31], s[0:1], 0x0   // mid load\n"
            "  v_mov_b32 v51, s85                     // mid use\n" + pad +
            "  s_sub_u32 s40, s40, 1\n  s_cmp_gt_u32 s40, 0\n  s_cbranch_scc1 L_loop\n"
            "  v_add_f32 v2, v50, v51\n  s_endpgm\n")


def line_of(text: str, tag: str) -> int:
    return next(n for n, ln in enumerate(text.split("\n"), 1) if tag in ln)


def lgkm_anchors(text: str) -> list[int]:
    an = analyze(text, "k.s", Options(replace_waits=True))
    return sorted(w.line for w in an.waits() if w.counter.startswith("lgkm"))


def violations(text: str) -> list:
    mod = parse_asm(text, "k.s")
    return [v for r in check_module(mod, Options(arch="gfx942"), max_trips=3) for v in r.violations]


def test_far_older_load_is_waited_for_above_the_new_one():
    text = kernel(40)
    assert lgkm_anchors(text) == [line_of(text, "head load"), line_of(text, "mid load")]
    out = analyze(text, "k.s", Options(replace_waits=True)).inserted_text()
    assert violations(out) == []
    # the wait above the head load is what keeps s31 safe: the checker sees it go
    lines = out.split("\n")
    k = next(n for n, ln in enumerate(lines) if "head load" in ln)
    assert "lgkmcnt(0)" in lines[k - 1]
    vs = violations("\n".join(lines[:k - 1] + lines[k:]))
    assert vs, "the checker must report s31 read while the load is in flight"


@pytest.mark.parametrize("filler", [0, 8])
def test_close_loads_keep_the_wait_at_the_consumer(filler):
    """Fewer than 32 instructions between the older load and the new one on some path: the
    older may still be running; the wait stays right before the use (after both loads)."""
    text = kernel(filler)
    # (that wait also waits for the head load: the mid use needs none)
    assert lgkm_anchors(text) == [line_of(text, "old use")]
    out = analyze(text, "k.s", Options(replace_waits=True)).inserted_text()
    assert violations(out) == []


def test_prologue_loads_issued_together_wait_once():
    text = (".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\nk:\n"
            "  s_load_dwordx4 s[4:7], s[0:1], 0x58\n  s_load_dwordx2 s[34:35], s[0:1], 0x30\n"
            "  s_load_dwordx4 s[8:11], s[0:1], 0x0\n  s_mul_i32 s33, s6, s4   // use\n  s_endpgm\n")
    assert lgkm_anchors(text) == [line_of(text, "// use")]
