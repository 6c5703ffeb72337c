"""Control flow of the asm front end: returns, jumps, calls and long branches end blocks as the
hardware runs them (issue 11 item 8), on hand-made cases and on LLVM's own output."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from stinkywait_core.syntax import parse

LLC = shutil.which("llc-22") is not None


def graph(text: str) -> list[tuple[str, list[str]]]:
    m = parse(text, "k.s")
    assert not [d for d in m.diagnostics if d.severity == "error"], m.diagnostics
    (f,) = m.functions
    return [(b.label, [s.label for s in b.succs]) for b in f.blocks]


def kernel(body: str) -> str:
    """`body` as the only kernel of a file that declares it (as compilers and TensileLite do)."""
    lines = body.strip().splitlines()
    body = "".join(ln + "\n" if ln.endswith(":") else f"\t{ln}\n" for ln in lines)
    return "\t.globl k\n\t.type k,@function\nk:\n" + body


@pytest.mark.parametrize("ret", ["s_set_pc_i64 s[30:31]", "s_setpc_b64 s[30:31]", "s_rfe_i64 s[0:1]",
                                 "s_rfe_b64 s[0:1]", "s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done"])
def test_returns_and_program_ends_have_no_successor(ret):
    """Nothing falls through a return: a later label is reached by its branches only."""
    assert graph(kernel(f"s_cbranch_scc1 .L2\n{ret}\n.L2:\ns_nop 0\n{ret}")) == \
        [("k", [".L2", "k_1"]), ("k_1", []), (".L2", [])]


@pytest.mark.parametrize("call", ["s_swap_pc_i64 s[30:31], s[16:17]", "s_swappc_b64 s[30:31], s[16:17]",
                                  "s_call_b64 s[30:31], callee", "s_call_i64 s[30:31], callee", "s_trap 2"])
def test_calls_end_the_block_and_fall_through(call):
    assert graph(kernel(f"s_nop 0\n{call}\nv_mov_b32 v0, v1\ns_endpgm")) == [("k", ["k_1"]), ("k_1", [])]


def test_gfx1250_long_branch():
    """``s_add_pc_i64 label-.Lpost`` jumps to the label; nothing falls through it."""
    assert graph(kernel("s_cbranch_scc0 .LBB0_1\ns_add_pc_i64 .LBB0_2-.Lpost_addpc0\n.Lpost_addpc0:\n"
                        ".LBB0_1:\nv_nop\n.LBB0_2:\ns_endpgm")) == \
        [("k", [".LBB0_1", "k_1"]), ("k_1", [".LBB0_2"]), (".Lpost_addpc0", [".LBB0_1"]), (".LBB0_1", [".LBB0_2"]),
         (".LBB0_2", [])]


def test_long_branches_through_setpc():
    """LLVM before gfx1250 and TensileLite jump to a label through s_getpc/s_add/s_setpc."""
    llvm = kernel("s_getpc_b64 s[6:7]\n.Lpost_getpc0:\ns_add_u32 s6, s6, (.LBB0_2-.Lpost_getpc0)&4294967295\n"
                  "s_addc_u32 s7, s7, (.LBB0_2-.Lpost_getpc0)>>32\ns_setpc_b64 s[6:7]\n.LBB0_2:\ns_endpgm")
    assert graph(llvm)[1] == (".Lpost_getpc0", [".LBB0_2"])
    tensile = kernel("s_getpc_b64 s[80:81]\ns_add_i32 s82, label_End, 0x4\ns_add_u32 s80, s80, s82\n"
                     "s_addc_u32 s81, s81, 0\ns_setpc_b64 s[80:81]\nlabel_Skip:\ns_nop 0\nlabel_End:\ns_endpgm")
    assert graph(tensile) == [("k", ["label_End"]), ("label_Skip", ["label_End"]), ("label_End", [])]
    # a return address that was not computed from a label: a return
    assert graph(kernel("s_mov_b64 s[6:7], s[30:31]\ns_setpc_b64 s[6:7]\n.L1:\ns_endpgm"))[0] == ("k", [])


def test_local_subroutine_calls():
    """A call through a register that may hold a label's address may enter any such label; the
    subroutine's s_setpc returns after any of those calls (TensileLite's activations), and the
    code after a call is reached only through those returns (issue 19: no edge skips the callee)."""
    text = kernel("s_getpc_b64 s[12:13]\ns_add_i32 s8, label_Act, 0x4\ns_add_u32 s12, s12, s8\n"
                  "s_addc_u32 s13, s13, 0\ns_swappc_b64 s[58:59], s[12:13]\nv_mov_b32 v0, v4\ns_endpgm\n"
                  "label_Act:\nv_and_b32 v4, 0x7fffffff, v4\ns_setpc_b64 s[58:59]")
    assert graph(text) == [("k", ["label_Act"]), ("k_1", []), ("label_Act", ["k_1"])]


def test_a_declared_kernel_runs_to_the_next_symbol():
    """After a jump nothing branches to, a label stays in the kernel the file declares (the
    heuristic that starts a new function there is for files without function symbols)."""
    text = ("\t.globl k\n\t.type k,@function\nk:\n\ts_branch label_B\nlabel_A:\n\ts_nop 0\n\ts_setpc_b64 s[0:1]\n"
            "label_B:\n\ts_branch label_A\n")
    m = parse(text, "k.s")
    assert [f.name for f in m.functions] == ["k"] and not m.diagnostics


@pytest.mark.skipif(not LLC, reason="llc-22 not installed")
@pytest.mark.parametrize("cpu", ["gfx942", "gfx1250"])
def test_llvm_long_branches(cpu, tmp_path):
    """Branch relaxation in LLVM's own output (forced with a tiny branch range)."""
    ir = tmp_path / "br.ll"
    ir.write_text("""define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %c) {
entry:
  %cmp = icmp eq i32 %c, 0
  br i1 %cmp, label %a, label %b, !prof !0
a:
  call void asm sideeffect "v_nop_e64\\0Av_nop_e64\\0Av_nop_e64\\0Av_nop_e64\\0Av_nop_e64\\0Av_nop_e64", ""()
  store i32 1, ptr addrspace(1) %p
  br label %b
b:
  store i32 2, ptr addrspace(1) %p
  ret void
}
!0 = !{!"branch_weights", i32 1000, i32 1}
""")
    out = subprocess.run(["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-amdgpu-s-branch-bits=4",
                          str(ir), "-o", "-"], check=True, capture_output=True, text=True).stdout
    assert ("s_add_pc_i64" if cpu == "gfx1250" else "s_setpc_b64") in out
    m = parse(out, "br.s")
    assert not m.diagnostics and m.target == cpu
    blocks = {b.label: b for b in m.functions[0].blocks}
    jump = next(b for b in blocks.values() if b.terminator() is not None
                and b.terminator().mnemonic in ("s_add_pc_i64", "s_setpc_b64"))
    assert [s.label for s in jump.succs] == [".LBB0_2"]
    assert all(b.preds for name, b in blocks.items() if name.startswith(".LBB"))
