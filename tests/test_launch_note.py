"""The note that says what an undeclared launch shape costs (waitcnt/launch_note.py): a kernel
that enables only the X work-item id and carries no ``.reqd_workgroup_size`` may be launched
2-D, so its waves are not told apart by v0 and barrier drains stay; the note names the
declaration that lets them go, and only where the assumption is the one the analysis made.
On the synthetic kernel and on aiter's gfx950 cktile GEMM (decision 56), following the advice
removes waits and the note, and the hardware checker finds the output safe under the
declaration."""

from __future__ import annotations

from pathlib import Path

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax.asm_parser import parse_asm
from stinkywait_core.validate.hwcheck import check_module

# each wave writes the bytes of its own work-items, then, past a barrier, reads them back:
# other waves touch those bytes only when two waves can hold the same X ids (a 2-D launch)
BODY = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
\t.text
\t.globl k
\t.p2align 8
\t.type k,@function
k:
\tv_lshlrev_b32 v1, 2, v0
\tds_write_b32 v1, v2
\ts_barrier
\tds_read_b32 v3, v1
\ts_waitcnt lgkmcnt(0)
\tv_add_u32 v4, v3, v3
\ts_barrier
\ts_endpgm
.Lfunc_end0:
\t.size k, .Lfunc_end0-k
\t.rodata
\t.p2align 6
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 8
\t\t.amdhsa_next_free_sgpr 8
\t\t.amdhsa_accum_offset 8
\t\t.amdhsa_system_vgpr_workitem_id {ids}
\t.end_amdhsa_kernel
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .max_flat_workgroup_size: 256
{reqd}    .kernarg_segment_size: 0
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .sgpr_count: 8
    .vgpr_count: 8
    .wavefront_size: 64
amdhsa.version:
  - 1
  - 2
...
\t.end_amdgpu_metadata
"""
BARRIER_LINE = 9


def kernel(ids: int = 0, reqd: tuple[int, int, int] | None = None, declare: str = "") -> str:
    r = "" if reqd is None else "    .reqd_workgroup_size:\n" + "".join(f"      - {n}\n" for n in reqd)
    return declare + BODY.replace("{ids}", str(ids)).replace("{reqd}", r)


def notes(text: str) -> list:
    return [d for d in analyze(text, "k.s").diagnostics if d.code == "launch-undeclared"]


def barrier_drains(text: str) -> list[int]:
    return sorted(w.line for w in analyze(text, "k.s").waits() if w.reason.startswith("fallback-barrier"))


def test_undeclared_x_only_kernel_gets_the_note_at_its_drain():
    text = kernel()
    assert barrier_drains(text) == [BARRIER_LINE]
    (n,) = notes(text)
    assert (n.line, n.severity) == (BARRIER_LINE, "info")
    assert "1 barrier wait of this kernel stays unproven" in n.message
    assert "`// stinkywait: workgroup-size N 1 1` (N <= 256" in n.message


def test_following_the_advice_removes_the_drain_and_the_note():
    text = kernel(declare="// stinkywait: workgroup-size 256 1 1\n")
    assert barrier_drains(text) == [] and notes(text) == []
    # the checker, under the same declaration, finds the output without the drain safe
    out = analyze(text, "k.s").inserted_text()
    mod = parse_asm(out, "k.s")
    assert mod.target == "gfx950"
    res = check_module(mod, Options(arch=mod.target), lds_addresses=True)
    assert [v for r in res for v in r.violations] == []
    # and without the declaration, the same output is not proven safe by the checker
    bare = parse_asm(out.split("\n", 1)[1], "k.s")
    res = check_module(bare, Options(arch=bare.target), lds_addresses=True)
    assert [v for r in res for v in r.violations]


def test_no_note_where_the_shape_is_known_or_not_one_dimensional():
    # the metadata gives it: 1-D (no drain, no note) or 2-D (the drain is right, no advice)
    assert notes(kernel(reqd=(256, 1, 1))) == [] and barrier_drains(kernel(reqd=(256, 1, 1))) == []
    assert notes(kernel(reqd=(64, 4, 1))) == [] and barrier_drains(kernel(reqd=(64, 4, 1))) == [BARRIER_LINE]
    # the Y id is enabled: the kernel is launched 2-D or 3-D; a 1-D declaration would be wrong
    assert barrier_drains(kernel(ids=1)) == [BARRIER_LINE] and notes(kernel(ids=1)) == []
    # a declared bound is not a shape: the drain stays, and so does the advice, with that bound
    text = kernel(declare="// stinkywait: workgroup-size 128\n")
    assert barrier_drains(text) == [BARRIER_LINE + 1]
    (n,) = notes(text)
    assert "(N <= 128" in n.message


def test_the_assembled_kernel_is_valid():
    import shutil
    import subprocess
    mc = shutil.which("llvm-mc-22")
    if mc is None:
        pytest.skip("llvm-mc-22 not installed")
    for text in (kernel(), kernel(reqd=(64, 4, 1)), analyze(kernel(), "k.s").inserted_text()):
        p = subprocess.run([mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx950", "-filetype=obj", "-o", "/dev/null"],
                           input=text, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr


def test_cktile_gemm_as_written_and_declared():
    path = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "asm" / \
        "aiter_gfx950_a8w8_cktile_gemm_256x256x128.s"
    if not path.exists():
        pytest.skip("../shared/corpus/asm not available")
    text = path.read_text()
    an = analyze(text, str(path))
    (n,) = [d for d in an.diagnostics if d.code == "launch-undeclared"]
    drains = sorted({w.line for w in an.waits() if w.reason.startswith("fallback-barrier")})
    assert n.line == drains[0] and f"{len(drains)} barrier waits of this kernel stay unproven" in n.message
    assert "N <= 512" in n.message
    declared = analyze("; stinkywait: workgroup-size 512 1 1\n" + text, str(path))
    assert not [d for d in declared.diagnostics if d.code == "launch-undeclared"]
    assert len(declared.waits()) < len(an.waits())
