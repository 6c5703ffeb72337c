"""The peer comparison itself (tests/peer): it must be able to fail.

Small hand-made kernels in llc's layout exercise the bound analysis (straight line, a diamond
with a wait on one edge only, a loop, a callable function), the exception rules and the table
gap check; the wait decoder is checked against llvm-mc-22's own encodings; and on the checked-in
GEMM pairs LLVM's output judged as ours matches itself while nowait.s judged as ours does not.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer.exceptions import load_exceptions  # noqa: E402
from peer.machine import decode_wait_text, peer_target  # noqa: E402
from peer.runner import gemm_pairs, instructions_of  # noqa: E402
from peer.verdict import compare  # noqa: E402

RULES = load_exceptions()


def kernel(body: str, name: str = "k", callable_fn: bool = False) -> str:
    lines = [f"\t.type\t{name},@function", f"{name}:"]
    lines += [ln if ln.endswith(":") else "\t" + ln for ln in body.strip().splitlines()]
    lines += [".Lfunc_end0:", f"\t.size\t{name}, .Lfunc_end0-{name}"]
    if not callable_fn:
        lines += [f"\t.amdhsa_kernel {name}", "\t.end_amdhsa_kernel"]
    return "\n".join(lines) + "\n"


def strip_waits(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*s_wait", ln)) + "\n"


def judge(llvm: str, ours: str, cpu: str = "gfx1250", rules=RULES, nowait: str | None = None):
    texts = {"nowait": nowait if nowait is not None else strip_waits(llvm), "llvm": llvm, "ours": ours}
    return compare("t.s", cpu, texts, peer_target(cpu), lambda w: instructions_of(texts[w]), rules)


STRAIGHT = """
global_load_b32 v1, v0, s[0:1]
global_load_b32 v2, v0, s[0:1] offset:4
{wait}
v_add_f32_e32 v3, v1, v1
{late}
global_store_b32 v0, v3, s[0:1]
s_endpgm
"""


def straight(wait: str = "", late: str = "") -> str:
    return kernel(STRAIGHT.format(wait=wait, late=late))


def test_same_wait_matches():
    rep = judge(straight("s_wait_loadcnt 1"), straight("s_wait_loadcnt 1"))
    assert (rep.llvm_reqs, rep.matched, rep.unmatched, rep.error) == (1, 1, [], None)


def test_weaker_wait_is_unmatched_with_its_producer():
    rep = judge(straight("s_wait_loadcnt 1"), straight("s_wait_loadcnt 2"))
    assert rep.matched == 0 and len(rep.unmatched) == 1
    u = rep.unmatched[0]
    assert (u.counter, u.value, u.bound) == ("loadcnt", 1, 2)
    assert "producers on loadcnt" in u.reason and "may still be in flight" in u.reason


def test_earlier_stricter_wait_matches():
    ours = kernel(STRAIGHT.replace("{wait}", "s_wait_loadcnt 0").replace("{late}", ""))
    rep = judge(straight("s_wait_loadcnt 1"), ours)
    assert rep.matched == 1 and not rep.unmatched


def test_ours_only_is_counted():
    rep = judge(straight("s_wait_loadcnt 1"), straight("s_wait_loadcnt 0"))
    assert rep.matched == 1 and [(o.counter, o.value, o.llvm_bound) for o in rep.ours_only] == [("loadcnt", 0, 1)]


def test_combined_wait_is_split():
    rep = judge(straight("s_wait_loadcnt 1"), straight("s_wait_loadcnt_dscnt 0x100"))
    assert rep.matched == 1 and not rep.unmatched


DIAMOND = """
s_cmp_eq_u32 s2, 0
s_cbranch_scc1 .LBB0_2
global_load_b32 v1, v0, s[0:1]
{arm}
.LBB0_2:
{join}
v_add_f32_e32 v3, v1, v1
s_endpgm
"""


def test_wait_on_one_edge_only():
    llvm = kernel(DIAMOND.format(arm="", join="s_wait_loadcnt 0"))
    on_edge = kernel(DIAMOND.format(arm="s_wait_loadcnt 0", join=""))
    assert not judge(llvm, on_edge).unmatched          # the only path with a load waits
    nothing = kernel(DIAMOND.format(arm="", join=""))
    rep = judge(llvm, nothing)
    assert len(rep.unmatched) == 1 and rep.unmatched[0].bound == 1


LOOP = """
s_mov_b32 s4, 0
.LBB0_1:
{top}
v_add_f32_e32 v3, v1, v1
global_load_b32 v1, v0, s[0:1]
s_add_i32 s4, s4, 1
s_cmp_lg_u32 s4, 8
s_cbranch_scc1 .LBB0_1
s_endpgm
"""


def test_loop_carried_load():
    llvm = kernel(LOOP.format(top="s_wait_loadcnt 0"))
    assert not judge(llvm, llvm).unmatched
    rep = judge(llvm, kernel(LOOP.format(top="")))
    assert len(rep.unmatched) == 1 and rep.unmatched[0].bound == 63  # saturates around the loop


CALLEE = """
s_wait_loadcnt_dscnt 0x0
s_wait_kmcnt 0x0
global_load_b32 v1, v[2:3], off
s_wait_loadcnt 0x0
v_add_f32_e32 v0, v1, v1
s_setpc_b64 s[30:31]
"""


def test_entry_drain_rule():
    llvm = kernel(CALLEE, callable_fn=True)
    ours = llvm.replace("\ts_wait_loadcnt_dscnt 0x0\n", "").replace("\ts_wait_kmcnt 0x0\n", "")
    rep = judge(llvm, ours)
    assert rep.excused["entry-drain"] == 3 and not rep.unmatched and rep.matched == 1
    rep = judge(llvm, ours, rules={})
    assert len(rep.unmatched) == 3


def test_table_gap_is_unmatched():
    # LLVM waits on dscnt where nothing the table counts on dscnt is in flight
    llvm = straight("s_wait_loadcnt 1\n\ts_wait_dscnt 0")
    rep = judge(llvm, llvm)
    assert [u.counter for u in rep.unmatched] == ["dscnt"] and "table gap" in rep.unmatched[0].reason


UNUSED = """
global_load_b32 v1, v0, s[0:1]
global_load_b32 v2, v0, s[0:1] offset:4
{wait}
v_add_f32_e32 v3, v2, v2
s_wait_loadcnt 0
global_store_b32 v0, v1, s[0:1]
s_endpgm
"""


def test_no_dependency_rule():
    llvm = kernel(UNUSED.format(wait="s_wait_loadcnt 0"))
    # v3 <- v2 needs the second (youngest) load: ours at 1 leaves it in flight, a real miss
    rep = judge(llvm, kernel(UNUSED.format(wait="s_wait_loadcnt 1")))
    assert len(rep.unmatched) == 1 and not rep.excused
    assert "may still be in flight at line" in rep.unmatched[0].reason
    # the use reads the first load only: ours at 1 retires it (in order); LLVM's 0 is an
    # over-wait, and the second load is waited for before the store that reads v1... and v2 never
    uses_first = UNUSED.replace("v_add_f32_e32 v3, v2, v2", "v_add_f32_e32 v3, v1, v1")
    llvm_over = kernel(uses_first.format(wait="s_wait_loadcnt 0"))
    over = kernel(uses_first.format(wait="s_wait_loadcnt 1"))
    rep = judge(llvm_over, over)
    assert rep.excused["no-dependency"] == 1 and not rep.unmatched
    rep = judge(llvm_over, over, rules={k: v for k, v in RULES.items() if k != "no-dependency"})
    assert len(rep.unmatched) == 1


PUBLISH = """
v_mov_b32 v5, 0
ds_store_b32 v5, v1
{wait}
s_barrier_signal -1
s_barrier_wait -1
{read}
s_endpgm
"""


def test_cross_wave_publish_rule():
    """LLVM drains a DS write at a barrier; ours leaves it in flight.  Excused only under the
    rule, only when no wave reads those bytes after the barrier (the hardware checker proves
    the function), and only for a wait that the barrier alone needs."""
    llvm = kernel(PUBLISH.format(wait="s_wait_dscnt 0", read=""))
    ours = kernel(PUBLISH.format(wait="", read=""))
    rep = judge(llvm, ours)
    assert rep.excused["cross-wave-publish"] == 1 and not rep.unmatched, rep
    rep = judge(llvm, ours, rules={k: v for k, v in RULES.items() if k != "cross-wave-publish"})
    assert len(rep.unmatched) == 1 and rep.unmatched[0].before.startswith("s_barrier")
    # another wave reads the bytes after the barrier: the checker proves nothing, no excuse
    read = "ds_load_b32 v6, v5\ns_wait_dscnt 0\nglobal_store_b32 v0, v6, s[0:1]"
    rep = judge(kernel(PUBLISH.format(wait="s_wait_dscnt 0", read=read)), kernel(PUBLISH.format(wait="", read=read)))
    assert len(rep.unmatched) == 1 and not rep.excused["cross-wave-publish"], rep


def test_different_streams_are_an_error():
    rep = judge(straight("s_wait_loadcnt 1"), straight("s_wait_loadcnt 1").replace("v3, v1, v1", "v3, v2, v2"))
    assert rep.error and "not the same stream" in rep.error


def test_invalid_waits_credit_nothing():
    llvm = kernel("global_load_dword v1, v0, s[0:1]\ns_waitcnt vmcnt(0)\nv_add_f32_e32 v3, v1, v1\ns_endpgm")
    ours = llvm.replace("s_waitcnt vmcnt(0)", "s_wait_loadcnt 0")
    rep = judge(llvm, ours, cpu="gfx942")
    assert rep.invalid_waits == 1 and len(rep.unmatched) == 1


# --- wait decoding ---------------------------------------------------------------------------

def test_decode_named_and_combined():
    assert decode_wait_text("gfx9", "s_waitcnt", "vmcnt(3) lgkmcnt(2)") == {"vmcnt": 3, "lgkmcnt": 2}
    assert decode_wait_text("gfx9", "s_waitcnt", "vmcnt(0) & expcnt(1)") == {"vmcnt": 0, "expcnt": 1}
    assert decode_wait_text("gfx10", "s_waitcnt_vscnt", "null, 0x0") == {"vscnt": 0}
    assert decode_wait_text("gfx11", "s_waitcnt_vscnt", "s0, 1") == {}
    assert decode_wait_text("gfx12", "s_wait_storecnt_dscnt", "0x203") == {"storecnt": 2, "dscnt": 3}
    assert decode_wait_text("gfx12", "s_wait_xcnt", "0") == {}          # gfx1250 only
    assert decode_wait_text("gfx9", "s_wait_loadcnt", "0") == {}        # not a gfx9 wait
    assert decode_wait_text("gfx1250", "s_wait_alu", "0xfffe") is None  # not a memory wait


MC = shutil.which("llvm-mc-22")


@pytest.mark.skipif(MC is None, reason="llvm-mc-22 not installed")
@pytest.mark.parametrize("cpu,family", [("gfx942", "gfx9"), ("gfx1030", "gfx10"), ("gfx1100", "gfx11")])
def test_raw_immediates_decode_like_llvm_mc(cpu, family):
    """Named fields -> llvm-mc-22's encoding -> our raw-immediate decoder gives the fields back."""
    rng = random.Random(cpu)
    lg = 15 if family == "gfx9" else 63
    cases = [(rng.randint(0, 63), rng.randint(0, 7), rng.randint(0, lg)) for _ in range(12)] + [(0, 0, 0), (63, 7, lg)]
    src = "".join(f"s_waitcnt vmcnt({v}) expcnt({e}) lgkmcnt({k})\n" for v, e, k in cases)
    out = subprocess.run([MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-show-encoding"],
                         input=src, capture_output=True, text=True, check=True).stdout
    encs = re.findall(r"encoding: \[0x([0-9a-f]{2}),0x([0-9a-f]{2}),", out)
    assert len(encs) == len(cases)
    for (v, e, k), (lo, hi) in zip(cases, encs):
        imm = int(hi + lo, 16)
        assert decode_wait_text(family, "s_waitcnt", hex(imm)) == {"vmcnt": v, "expcnt": e, "lgkmcnt": k}


# --- on real pairs -----------------------------------------------------------------------------

@pytest.mark.parametrize("pair", gemm_pairs(), ids=lambda p: p.unit)
def test_gemm_pair_llvm_matches_itself_and_nowait_does_not(pair):
    texts = {"nowait": pair.nowait, "llvm": pair.llvm, "keepfence": pair.keepfence}
    target = peer_target("gfx1250")

    def run(ours):
        t = dict(texts, ours=ours)
        return compare(pair.unit, "gfx1250", t, target, lambda w: instructions_of(t[w]) if w == "ours" else {}, RULES)
    same = run(pair.llvm)
    assert same.error is None and same.matched == same.llvm_reqs > 20 and not same.ours_only
    bare = run(pair.nowait)
    assert len(bare.unmatched) >= 10 and not bare.excused.get("no-dependency")


def test_lds_dma_then_ds_read_is_a_dependency():
    """The `lds` modifier makes a VMEM load fill LDS: a later DS read needs it (no register in
    common), so the no-dependency rule must not excuse LLVM's vmcnt wait there."""
    body = ("buffer_load_dword v0, s[0:3], 0 offen lds\n{wait}\nds_read_b32 v2, v1\n"
            "s_waitcnt lgkmcnt(0)\nglobal_store_dword v3, v2, s[4:5]\ns_endpgm")
    llvm = kernel(body.format(wait="s_waitcnt vmcnt(0)"))
    rep = judge(llvm, kernel(body.format(wait="")), cpu="gfx942")
    assert len(rep.unmatched) == 1 and not rep.excused and rep.unmatched[0].counter == "vmcnt"


def test_ds_store_then_tensor_store_is_a_dependency():
    """tensor_store_from_lds reads LDS through another engine: DS writes before it must be done."""
    body = ("ds_store_b128 v0, v[4:7]\nds_load_b32 v9, v1\n{wait}\ntensor_store_from_lds s[0:3], s[4:11]\n"
            "s_wait_dscnt 0\nglobal_store_b32 v2, v9, s[12:13]\ns_endpgm")
    llvm = kernel(body.format(wait="s_wait_dscnt 0"))
    rep = judge(llvm, kernel(body.format(wait="s_wait_dscnt 1")))
    assert [u.counter for u in rep.unmatched] == ["dscnt"] and not rep.excused
