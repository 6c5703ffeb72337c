"""A ds_store into the pad hole of a padded tensor_store_from_lds needs no tensorcnt wait (issue
22, aiter's gfx1250 fmha fwd mxfp8, line 5947): the tile's rows are 0x110 bytes, padded by 512
bytes after every 256 bytes of the stream, so its LDS bytes are chunks of 256 bytes, 768 apart;
a store whose lanes write 32 consecutive bytes between two chunks touches none of them.  Two
steps are needed, each in the pass (analysis/lds_access.py, analysis/lds_facts.py) and, read on
its own, in the hardware checker (validate/hwtensor.py): the pad counted along the stream even
when a row does not hold whole intervals, and an exact comparison of two strided sets when one
has few members (the steps' gcd, 4 here, covers every residue).  Near misses one byte into a
chunk, at either edge of the hole, keep the wait."""

from __future__ import annotations

import pytest

from stinkywait_core.analysis import lds_facts as lds_facts_mod
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate import hwtensor
from stinkywait_core.validate.hwcheck import check_module

#: D#1 word 0 as the mxfp8 kernel writes it: one-byte elements, padding on, interval code 5
#: (64 dwords, 256 bytes), pad code 0x7f (128 dwords, 512 bytes)
CONFIG = 0xFF500000
STRIDE, CHUNK = 768, 256
#: chunk 22 starts at 22 * 768 = 16896; its hole is [17152, 17664)
HOLE_LO, HOLE_HI = 22 * STRIDE + CHUNK, 23 * STRIDE

KERNEL = """\
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
k:
  s_mov_b32 s48, 1
  s_mov_b32 s49, 0
  s_mov_b32 s50, 0
  s_mov_b32 s51, 0
  s_mov_b32 s52, CONFIG
  s_mov_b32 s53, 0x1000000
  s_mov_b32 s54, 0x400000
  s_mov_b32 s55, 0x1100000
  s_mov_b32 s56, 64
  s_mov_b32 s57, 0x100
  s_mov_b32 s58, 0
  s_mov_b32 s59, 0
  v_and_b32 v3, 31, v0
  v_add_nc_u32 v1, BASE, v3
  tensor_store_from_lds s[48:51], s[52:59]
  ds_store_b8 v1, v2
  s_endpgm
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .max_flat_workgroup_size: 32
    .wavefront_size: 32
...
\t.end_amdgpu_metadata
"""


def text_of(base: int) -> str:
    """One wave of 32 lanes: lane l stores one byte at `base` + l."""
    return KERNEL.replace("CONFIG", hex(CONFIG)).replace("BASE", hex(base))


def tensor_waits(text: str) -> list[str]:
    an = analyze(text, "k.s", Options(replace_waits=True))
    return [w.instruction for w in an.waits() if "tensorcnt" in w.instruction]


def violations(text: str) -> list:
    mod = parse_asm(text, "k.s")
    return [v for r in check_module(mod, Options(), lds_addresses=True, max_trips=2) for v in r.violations]


@pytest.mark.parametrize("base", [HOLE_LO, HOLE_HI - 32, HOLE_LO + 200])
def test_store_inside_the_hole_needs_no_wait(base):
    text = text_of(base)
    assert tensor_waits(text) == []
    out = analyze(text, "k.s", Options(replace_waits=True)).inserted_text()
    assert violations(out) == []


@pytest.mark.parametrize("base", [HOLE_LO - 1, HOLE_HI - 31, 22 * STRIDE + 16])
def test_store_one_byte_into_a_chunk_waits(base):
    """One lane's byte in a chunk (the last byte of chunk 22, the first of chunk 23, or a
    store inside a chunk): the pass waits, and the checker reports the wait taken out."""
    text = text_of(base)
    assert len(tensor_waits(text)) == 1
    out = analyze(text, "k.s", Options(replace_waits=True)).inserted_text()
    assert violations(out) == []
    stripped = "\n".join(ln for ln in out.split("\n") if "s_wait_tensorcnt" not in ln)
    vs = violations(stripped)
    assert any(v.producer.mnemonic == "tensor_store_from_lds" for v in vs), vs


def test_checker_lattices_exact_with_few_starts():
    """The checker's lattice test: the chunks against 32 one-byte lanes in the hole are apart
    although gcd(768, 1) = 1; against lanes reaching one byte into the next chunk they meet;
    too many starts on both sides fall back to the gcd (a superset)."""
    chunks = (0, 67 * STRIDE, STRIDE, CHUNK)
    assert not hwtensor.lattice_meet(chunks, (HOLE_LO, HOLE_HI - 1, 1, 1))
    assert not hwtensor.lattice_meet((HOLE_LO, HOLE_HI - 4, 4, 4), chunks)
    assert hwtensor.lattice_meet(chunks, (HOLE_LO, HOLE_HI, 1, 1))
    assert hwtensor.lattice_meet((HOLE_LO - 4, HOLE_HI - 8, 4, 4), chunks)
    many = (0, 4000 * STRIDE, STRIDE, CHUNK)
    assert hwtensor.lattice_meet(many, (HOLE_LO, HOLE_HI + 999 * 4, 4, 4))  # not enumerated


def test_pass_difference_exact_with_few_starts():
    """The pass's strided difference: members of the smaller side one by one."""
    sub = lds_facts_mod._sub_meets
    chunks, lanes = (0, 67 * STRIDE, STRIDE), (HOLE_LO, HOLE_LO + 124, 4)
    assert not sub(chunks, lanes, 1 - CHUNK, 3)      # the store's 4 bytes, the chunk's 256
    assert sub(chunks, (HOLE_LO - 4, HOLE_LO + 120, 4), 1 - CHUNK, 3)
    assert not sub(lanes, chunks, -3, CHUNK - 1)
    assert sub((0, 0, 0), (-3, -3, 0), 0, 3)
