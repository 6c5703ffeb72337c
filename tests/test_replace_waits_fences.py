"""`--replace-waits` keeps the waits of memory-model sequences (docs/decisions.md 37).

The pass rebuilds waits from registers and LDS; a release or acquire through a scoped flag
shows in neither, so its wait must survive the strip.  The kernels follow llc-22's output for
LLVM's lds-dma-workgroup-release.ll (gfx942) and the gfx12 spelling of the same sequences;
each kept case has a near miss that is stripped (a partial count, an unscoped access, a
wait that is not next to the scoped access).
"""

from __future__ import annotations

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options


def removed(body: str, arch: str) -> list[str]:
    text = "k:\n" + "".join(f"  {ln.strip()}\n" for ln in body.strip().splitlines()) + "  s_endpgm\n"
    an = analyze(text, "k.s", Options(arch=arch, replace_waits=True))
    lines = text.splitlines()
    return [lines[n - 1].strip() for n in an.removed_lines]


RELEASE_942 = """
buffer_load_dword v1, s[8:11], 0 offen lds
v_mov_b32 v1, 1
s_waitcnt vmcnt(0) lgkmcnt(0)
global_store_dword v0, v1, s[0:1] {mods}
"""
ACQUIRE_942 = """
global_load_dword v1, v0, s[0:1] {mods}
s_waitcnt {wait}
v_mov_b32 v1, s13
ds_read_b32 v1, v1
"""


def test_release_before_a_scoped_store_is_kept():
    assert removed(RELEASE_942.format(mods="sc0"), "gfx942") == []
    # the same wait before a store without a scope is the pass's to rebuild
    assert removed(RELEASE_942.format(mods=""), "gfx942") == ["s_waitcnt vmcnt(0) lgkmcnt(0)"]


def test_acquire_after_a_scoped_load_is_kept():
    assert removed(ACQUIRE_942.format(mods="sc0", wait="vmcnt(0)"), "gfx942") == []
    # a partial count is no acquire; nor is a wait after an unscoped load
    assert removed(ACQUIRE_942.format(mods="sc0 sc1", wait="vmcnt(1)"), "gfx942") == ["s_waitcnt vmcnt(1)"]
    assert removed(ACQUIRE_942.format(mods="", wait="vmcnt(0)"), "gfx942") == ["s_waitcnt vmcnt(0)"]


def test_lds_release_before_a_scoped_store_is_kept():
    """llc-22, `store` to LDS, `fence syncscope("workgroup") release`, atomic flag store."""
    body = """
    ds_write_b32 v2, v3
    s_waitcnt lgkmcnt(0)
    global_store_dword v0, v1, s[0:1] {mods}
    """
    assert removed(body.format(mods="sc0"), "gfx942") == []
    # a streaming store (cktile's epilogue: `sc0 nt sc1`) is no flag
    assert removed(body.format(mods="sc0 nt sc1"), "gfx942") == ["s_waitcnt lgkmcnt(0)"]
    gfx12 = """
    ds_store_b32 v0, v1
    s_wait_dscnt 0x0
    global_store_b32 v2, v3, s[0:1] scope:SCOPE_SE
    """
    assert removed(gfx12, "gfx1200") == []
    assert removed(gfx12.replace(" scope:SCOPE_SE", ""), "gfx1200") == ["s_wait_dscnt 0x0"]


@pytest.mark.parametrize("arch", ["gfx1200", "gfx1250"])
def test_gfx12_scope_spelling(arch: str):
    body = """
    global_load_b32 v1, v0, s[0:1] scope:SCOPE_SE
    s_wait_loadcnt 0x0
    ds_load_b32 v2, v3
    s_wait_dscnt 0x0
    global_store_b32 v0, v2, s[0:1]
    """
    assert removed(body, arch) == ["s_wait_dscnt 0x0"]
    assert removed(body.replace(" scope:SCOPE_SE", ""), arch) == ["s_wait_loadcnt 0x0", "s_wait_dscnt 0x0"]


def test_cache_operations_keep_their_neighbours():
    body = """
    global_load_dword v1, v0, s[0:1]
    s_waitcnt vmcnt(0)
    buffer_inv sc1
    v_add_f32 v2, v1, v1
    """
    assert removed(body, "gfx942") == []
