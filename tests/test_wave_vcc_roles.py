"""Per-wave views (analysis/wave_roles.py) of a kernel that splits its waves by LLVM's
uniform-branch idiom (issue 22, aiter's gfx950 a8w8 cktile GEMM): a lane read of the first
work-item id compared with ``s_cmpk`` (value_ops: a compare of ranges apart is a constant in
each wave's view), ``s_cselect_b64`` of the flag, ``s_and_b64 vcc, exec, s`` and
``s_cbranch_vccz`` (wave_vcc.vcc_branch: decided by the SCC the and sets), then ``s_mov_b64
vcc, exec; s_cbranch_execz`` (wave_vcc.exec_dead_edges: not taken at the launch EXEC).  Each
group's view then holds its own LDS base only; near misses keep both."""

from __future__ import annotations

import textwrap

import pytest

from stinkywait_core.analysis.lds_facts import lds_facts
from stinkywait_core.analysis.values import lin_concrete
from stinkywait_core.api import parse

GROUPS = """\
    .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
    ; stinkywait: workgroup-size 512 1 1
    .text
    k:
      v_readfirstlane_b32 s19, v0
      s_cmpk_gt_u32 s19, 0xff
      s_cselect_b64 s[26:27], -1, 0
      s_and_b64 vcc, exec, s[26:27]
      s_cbranch_vccz .Llow
      s_mov_b32 s6, 0x1000
      s_mov_b64 vcc, exec
      s_cbranch_execz .Llow
      s_branch .Ljoin
    .Llow:
      s_mov_b32 s6, 0
    .Ljoin:
      v_mov_b32 v1, s6
      ds_write_b32 v1, v2
      s_endpgm
    .rodata
    .amdhsa_kernel k
      .amdhsa_next_free_vgpr 8
      .amdhsa_next_free_sgpr 40
      .amdhsa_system_vgpr_workitem_id 0
    .end_amdhsa_kernel
"""


def bases(text: str) -> dict[int, set] | None:
    """{wave: the ds_write's byte ranges in that wave's view}, or None: no views."""
    mod = parse(textwrap.dedent(text), "k.s")
    fn = mod.functions[0]
    facts = lds_facts(fn, mod)
    write = next(i for b in fn.blocks for i in b.instrs if i.mnemonic == "ds_write_b32")
    got = facts.role_accesses(write)
    if got is None:
        return None
    out = {}
    for w, acc in got:
        lins = [x for p in acc.pieces for x in p.addr.lins] if acc is not None and acc.pieces else []
        out[w] = {lin_concrete(x)[:2] for x in lins}
    return out


def test_each_group_sees_its_own_base():
    got = bases(GROUPS)
    assert got is not None
    for w, rs in got.items():
        assert rs == ({(0x1000, 0x1000)} if w >= 4 else {(0, 0)}), (w, rs)


@pytest.mark.parametrize("old,new,waves", [
    # the bound falls inside wave 4's lane range: its view cannot decide the compare
    ("s_cmpk_gt_u32 s19, 0xff", "s_cmpk_gt_u32 s19, 0x10f", (4,)),
    # EXEC written before the execz (and the launch mask back before the store): the high
    # group may also run the low group's set-up
    ("  s_mov_b64 vcc, exec\n", "  s_mov_b64 exec, s[8:9]\n", (4, 5, 6, 7)),
    # VCC rewritten between the and and the branch: the and's SCC no longer decides it
    ("  s_cbranch_vccz .Llow\n", "  s_mov_b64 vcc, s[8:9]\n  s_cbranch_vccz .Llow\n", (0, 1, 2, 3, 4, 5, 6, 7)),
], ids=["bound-inside-a-wave", "exec-written", "vcc-rewritten"])
def test_near_misses_keep_both_bases(old, new, waves):
    text = textwrap.dedent(GROUPS)
    assert old in text
    text = text.replace(old, new, 1)
    if "exec, s[8:9]" in new:
        text = text.replace(".Ljoin:\n", ".Ljoin:\n  s_mov_b64 exec, -1\n", 1)
    got = bases(text)
    for w in waves:
        rs = None if got is None else got[w]
        assert rs is None or rs == {(0, 0x1000)} or {(0, 0), (0x1000, 0x1000)} <= rs, (w, rs)
