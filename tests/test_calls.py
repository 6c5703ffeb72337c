"""Function boundaries and FLAT/tensor LDS rules (issue 19 items 2-4), in the pass and in the
hardware checker: callee entries wait (LLVM's convention), tail calls are not returns, calls to
code outside the file are said at the line, a local subroutine's VGPR MSB mode flows back, an
LDS DMA / tensor / async fill in flight before a FLAT access is waited for, and a tensor fill
read by its own wave with no barrier between is waited for whatever NumWaves is.

The LLVM cases compile LLVM's CodeGen test call-waitcnt.ll (tests/data/llvm-ir) and our own
probes (tests/data/calls) with llc-22 (skipped when it is absent)."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from stinkywait_core import findings as F
from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from stinkywait_core.syntax import parse
from stinkywait_core.syntax.asm_vgpr_msb import block_entry_modes
from stinkywait_core.validate.hwcheck import check_module

DATA = Path(__file__).resolve().parent / "data"
LLC = shutil.which("llc-22")
needs_llc = pytest.mark.skipif(LLC is None, reason="llc-22 not installed")


def _target(cpu: str) -> str:
    return f'.amdgcn_target "amdgcn-amd-amdhsa--{cpu}"\n'


def waits(text: str, **kw) -> list[tuple[int, str, str]]:
    an = analyze(text, "t.s", Options(**kw))
    return sorted((w.line, w.counter if w.counter.endswith("cnt") else w.counter + "cnt", w.rule)
                  for f in an.functions for w in f.waits)


def findings(text: str, **kw) -> list[tuple[str, int]]:
    """`check`'s findings (code, line), as the CLI presents them."""
    an = analyze(text, "t.s", Options(**kw))
    planned = F.waits_by_key(an.waits())
    out = []
    for d in an.check_diagnostics():
        wait = F.planned_wait_of(d, planned) if d.code == F.CORE_MISSING else None
        shown = F.present(d, wait, dict(F.DEFAULT_SEVERITY))
        if shown is not None:
            out.append((shown.code, shown.line))
    return out


def notes(text: str, **kw) -> list[tuple[str, int]]:
    an = analyze(text, "t.s", Options(**kw))
    return [(d.code, d.line) for d in an.diagnostics if d.severity == "info" or d.code.startswith("asm-")]


def hw(text: str, **kw) -> list[tuple[str, int]]:
    module = parse(text, "t.s")
    return [(v.rule, v.consumer.line) for r in check_module(module, Options(**kw)) for v in r.violations]


CALLEE = """{target}    .type f,@function
f:
    ds_read_b32 v0, v0
    s_waitcnt lgkmcnt(0)
    v_add_u32 v1, v0, v0
    s_setpc_b64 s[30:31]
.Lfunc_end0:
"""


def test_callable_function_waits_at_its_entry():
    text = CALLEE.format(target=_target("gfx942"))
    got = waits(text, arch="gfx942")
    assert {(c, r) for ln, c, r in got if ln == 4} == {("vmcnt", "callee entry"), ("expcnt", "callee entry"),
                                                        ("lgkmcnt", "callee entry")}
    assert ("missing-wait", 4) in findings(text, arch="gfx942")
    assert ("entry", 4) in hw(text, arch="gfx942")
    fixed = text.replace("f:\n", "f:\n    s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)\n")
    assert findings(fixed, arch="gfx942") == [] and hw(fixed, arch="gfx942") == []


def test_a_kernel_entry_does_not_wait():
    text = _target("gfx942") + "k:\n    v_mov_b32 v1, v0\n    s_endpgm\n"
    assert waits(text, arch="gfx942") == [] and hw(text, arch="gfx942") == []


def test_tail_call_is_not_a_return():
    text = _target("gfx942") + """    .type f,@function
f:
    s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)
    ds_read_b32 v0, v0
    s_getpc_b64 s[4:5]
    s_add_u32 s4, s4, g@rel32@lo+4
    s_addc_u32 s5, s5, g@rel32@hi+12
    s_setpc_b64 s[4:5]
.Lfunc_end0:
"""
    assert waits(text, arch="gfx942") == []
    assert hw(text, arch="gfx942") == []
    assert ("tail-call", 9) in notes(text, arch="gfx942")
    # the same jump through the return address is a return: it drains the ds_read
    ret = text.replace("s_setpc_b64 s[4:5]", "s_setpc_b64 s[30:31]")
    assert waits(ret, arch="gfx942") == [(9, "lgkmcnt", "return")]
    assert hw(ret, arch="gfx942") == [("return", 9)]


def test_return_address_moved_is_still_a_return():
    text = _target("gfx942") + """    .type f,@function
f:
    s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)
    s_mov_b64 s[4:5], s[30:31]
    ds_read_b32 v0, v0
    s_setpc_b64 s[4:5]
.Lfunc_end0:
"""
    assert waits(text, arch="gfx942") == [(7, "lgkmcnt", "return")]


def test_untraced_jump_is_taken_for_a_return_and_said():
    text = _target("gfx942") + "    .type f,@function\nf:\n    s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)\n" \
        "    ds_read_b32 v0, v0\n    s_setpc_b64 s[8:9]\n.Lfunc_end0:\n"
    assert waits(text, arch="gfx942") == [(6, "lgkmcnt", "return")]
    assert ("jump-assumed-return", 6) in notes(text, arch="gfx942")


def test_call_to_code_outside_the_file_is_said():
    text = _target("gfx942") + """k:
    s_getpc_b64 s[8:9]
    s_add_u32 s8, s8, ext@rel32@lo+4
    s_addc_u32 s9, s9, ext@rel32@hi+12
    s_swappc_b64 s[30:31], s[8:9]
    s_endpgm
"""
    assert ("call-assumption", 6) in notes(text, arch="gfx942")
    # a callee defined in the file: its entry wait is checked there, nothing to assume
    local = text.replace("ext@", "f@") + CALLEE.format(target="").replace(".Lfunc_end0", ".Lfunc_end1")
    assert ("call-assumption", 6) not in notes(local, arch="gfx942")
    assert parse(local, "t.s").functions[1].callable


def test_local_subroutine_sees_the_callers_state_and_gives_its_own_back():
    """A subroutine of the kernel is entered with the caller's loads in flight (the call drains
    nothing) and the code after the call gets the subroutine's state (its return drains
    nothing): before issue 19 both sides assumed the other had waited, and nothing waited."""
    text = _target("gfx1250") + """k:
    global_load_b32 v1, v[2:3], off
    s_call_i64 s[100:101], .Lsub
    v_mov_b32 v5, v6
    s_endpgm
.Lsub:
    global_load_b32 v6, v[2:3], off
    v_mov_b32 v4, v1
    s_set_pc_i64 s[100:101]
"""
    got = waits(text, arch="gfx1250")
    assert (9, "loadcnt", "RAW") in got  # the subroutine reads the caller's v1
    assert (5, "loadcnt", "RAW") in got  # the caller reads the subroutine's v6
    assert not [w for w in got if w[0] == 10]  # its return is not a boundary
    assert {("raw", 5), ("raw", 9)} <= set(hw(text, arch="gfx1250"))


def test_numeric_call_target_is_said():
    text = _target("gfx1250") + "k:\n    s_call_i64 s[100:101], 2\n    s_endpgm\n"
    assert ("asm-numeric-call", 3) in notes(text, arch="gfx1250")


OBJDUMP = shutil.which("llvm-objdump-22")
MC = shutil.which("llvm-mc-22")


@pytest.mark.skipif(OBJDUMP is None or MC is None, reason="llvm-mc-22 / llvm-objdump-22 not installed")
def test_numeric_call_target_from_llvm_objdump(tmp_path):
    """llvm-objdump prints a call to a local label as a dword offset (``s_call_i64 s[100:101],
    2  // 000000000000: BA640002``): resolved through the address comments, the subroutine's
    mode (0xc0) reaches the code after the call, and its state the checker."""
    src = tmp_path / "k.s"
    src.write_text(".text\nk:\n  global_load_b32 v1, v[2:3], off\n  s_call_i64 s[100:101], .Lsub\n"
                   "  s_nop 0\n  s_endpgm\n.Lsub:\n  v_mov_b32 v4, v1\n  s_set_vgpr_msb 0xc0\n"
                   "  s_set_pc_i64 s[100:101]\n")
    obj = tmp_path / "k.o"
    subprocess.run([MC, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-filetype=obj", str(src), "-o", str(obj)],
                   check=True)
    dis = subprocess.run([OBJDUMP, "-d", "--mcpu=gfx1250", str(obj)], check=True, capture_output=True,
                         text=True).stdout
    body = [ln for ln in dis.splitlines() if ln.startswith("\t")]
    assert re.search(r"s_call_i64 s\[100:101\], \d+\b", "\n".join(body))
    text = _target("gfx1250") + "k:\n" + "\n".join(body) + "\n"
    module = parse(text, "k.s")
    assert not [d for d in module.diagnostics if d.code == "asm-numeric-call"]
    func = module.functions[0]
    entry, _ = block_entry_modes(func, module.front_end_state.syntax, True)
    call = next(i for i, b in enumerate(func.blocks) if b.terminator().mnemonic == "s_call_i64")
    assert entry[call + 1] == 0xC0
    assert ("raw", 7) in hw(text, arch="gfx1250")  # the subroutine reads the caller's v1


def test_flat_after_lds_dma_waits():
    for cpu in ("gfx942", "gfx1030"):
        text = _target(cpu) + "k:\n    buffer_load_dword v1, s[0:3], 0 offen lds\n    flat_load_dword v2, v[4:5]\n" \
            "    s_waitcnt vmcnt(0) lgkmcnt(0)\n    v_mov_b32 v3, v2\n    s_endpgm\n"
        assert (4, "vmcnt", "fallback") in waits(text, arch=cpu)
        assert ("lds-raw", 4) in hw(text, arch=cpu)
        store = text.replace("flat_load_dword v2, v[4:5]", "flat_store_dword v[4:5], v2")
        assert (4, "vmcnt", "fallback") in waits(store, arch=cpu)
        assert ("lds-waw", 4) in hw(store, arch=cpu)


def test_flat_after_ds_and_barrier_after_flat_follow_llvm():
    """DS and FLAT reaching LDS are in order (LLVM waits for neither); a barrier does not wait
    for FLAT accesses (not known to reach LDS)."""
    text = _target("gfx942") + "k:\n    ds_read_b32 v1, v0\n    flat_store_dword v[4:5], v3\n" \
        "    s_waitcnt vmcnt(0) lgkmcnt(0)\n    s_endpgm\n"
    assert waits(text, arch="gfx942") == [] and hw(text, arch="gfx942") == []
    bar = _target("gfx942") + "k:\n    flat_store_dword v[4:5], v3\n    s_barrier\n    s_endpgm\n"
    assert not [w for w in waits(bar, arch="gfx942") if w[0] == 4]
    assert hw(bar, arch="gfx942") == []


def test_gfx1250_tensor_and_async_fills_before_flat():
    tensor = _target("gfx1250") + "k:\n    tensor_load_to_lds s[0:3], s[4:11]\n    flat_load_b32 v2, v[4:5]\n" \
        "    s_wait_loadcnt_dscnt 0\n    v_mov_b32 v3, v2\n    s_endpgm\n"
    assert (4, "tensorcnt", "fallback") in waits(tensor, arch="gfx1250")
    assert ("lds-raw", 4) in hw(tensor, arch="gfx1250")
    asyn = tensor.replace("tensor_load_to_lds s[0:3], s[4:11]", "global_load_async_to_lds_b32 v1, v[6:7], off")
    assert (4, "asynccnt", "fallback") in waits(asyn, arch="gfx1250")
    assert ("lds-raw", 4) in hw(asyn, arch="gfx1250")


def test_tensor_fill_read_by_its_own_wave_waits_whatever_num_waves():
    text = _target("gfx1250") + "k:\n    tensor_load_to_lds s[0:3], s[4:11]\n    ds_load_b32 v250, v251\n" \
        "    s_wait_dscnt 0\n    v_mov_b32 v1, v250\n    s_endpgm\n"
    for waves in (0, 1, 4):
        assert (4, "tensorcnt", "fallback") in waits(text, arch="gfx1250", num_waves=waves)
    # published by a barrier in between: the NumWaves policy stands (the barrier waits)
    fenced = text.replace("    ds_load_b32", "    s_barrier_signal -1\n    s_barrier_wait -1\n    ds_load_b32")
    got = waits(fenced, arch="gfx1250", num_waves=4)
    assert (4, "tensorcnt", "fallback-barrier") in got or (4, "tensorcnt", "fallback") in got
    assert not [w for w in got if w[0] == 6 and w[1] == "tensorcnt"]


def test_f4gemm_subroutine_returns_with_its_vgpr_msb_mode():
    text = gzip.decompress((DATA / "aiter_gfx1250" / "f4gemm_mxfp4_256x256_apre0.s.gz").read_bytes()).decode()
    module = parse(text, "f4gemm.s")
    func = module.functions[0]
    entry, _ = block_entry_modes(func, module.front_end_state.syntax, True)
    after_calls = [entry[i + 1] for i, b in enumerate(func.blocks)
                   if (t := b.terminator()) is not None and t.mnemonic == "s_call_i64"]
    assert len(after_calls) == 4 and set(after_calls) == {0xC0}
    sub = next(i for i, b in enumerate(func.blocks) if b.label == ".Lpc_509c")
    assert entry[sub] == 0


# ---- LLVM: llc-22 output --------------------------------------------------------------------

def _llc(name: str, cpu: str, tmp: Path) -> str | None:
    out = tmp / f"{name}.{cpu}.s"
    src = DATA / "llvm-ir" / name if (DATA / "llvm-ir" / name).exists() else DATA / "calls" / name
    r = subprocess.run([LLC, "-O2", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", str(src),
                        "-o", str(out)], capture_output=True, text=True, timeout=120)
    return out.read_text() if r.returncode == 0 else None


_ENTRY_WAIT = re.compile(r"^\s*(s_waitcnt vmcnt\(0\) expcnt\(0\) lgkmcnt\(0\)|s_wait_loadcnt_dscnt 0x0)\s*$", re.M)


@needs_llc
@pytest.mark.parametrize("cpu", ["gfx942", "gfx1030", "gfx1100", "gfx1250"])
def test_call_waitcnt_ll(cpu, tmp_path):
    text = _llc("call-waitcnt.ll", cpu, tmp_path)
    assert text is not None
    opts = {"arch": cpu}
    assert [f for f in findings(text, **opts) if f[0] == "missing-wait"] == []
    assert hw(text, **opts) == []
    # both callable functions' entry waits removed: the pass and the checker see each one
    stripped = _ENTRY_WAIT.sub("", text)
    assert stripped != text
    missing = {ln for code, ln in findings(stripped, **opts) if code == "missing-wait"}
    entries = {r for r in hw(stripped, **opts) if r[0] == "entry"}
    assert len(entries) == 2 and len(missing) >= 2


def _drop_wait_before(text: str, mnemonic: str) -> str:
    lines = text.splitlines()
    out = []
    for i, ln in enumerate(lines):
        if ln.strip() == "s_waitcnt vmcnt(0)" and i + 1 < len(lines) and lines[i + 1].strip().startswith(mnemonic):
            continue
        out.append(ln)
    return "\n".join(out) + "\n"


@needs_llc
@pytest.mark.parametrize("cpu", ["gfx942", "gfx1030"])
def test_lds_dma_then_flat_ll(cpu, tmp_path):
    text = _llc("lds-dma-flat.ll", cpu, tmp_path)
    assert text is not None
    assert [f for f in findings(text, arch=cpu) if f[0] == "missing-wait"] == []
    assert hw(text, arch=cpu) == []
    for mn, rule in (("flat_load", "lds-raw"), ("flat_store", "lds-waw")):
        cut = _drop_wait_before(text, mn)
        assert cut != text
        assert rule in {r for r, _ in hw(cut, arch=cpu)}
        assert "unproven-wait" in {c for c, _ in findings(cut, arch=cpu)}


@needs_llc
def test_gfx1250_fills_before_flat_ll(tmp_path):
    """LLVM 22 waits for neither (async -> flat_load_b32, tensor -> flat_load_b32, tensor ->
    ds_load_b32): we go further (decisions 32, 34), as unproven waits, never as missing ones;
    the hardware checker flags each read."""
    text = _llc("lds-fill-flat-gfx1250.ll", "gfx1250", tmp_path)
    assert text is not None
    got = findings(text, arch="gfx1250")
    assert [f for f in got if f[0] == "missing-wait"] == []
    assert len([f for f in got if f[0] == "unproven-wait"]) == 3
    assert sorted(r for r, _ in hw(text, arch="gfx1250")) == ["lds-raw"] * 3



@needs_llc
@pytest.mark.parametrize("cpu", ["gfx942", "gfx1030", "gfx1100", "gfx1250"])
def test_defined_callee_ll(cpu, tmp_path):
    """Issue 19's example: the caller relies on the callee's entry wait; with the callee in the
    file, that wait is checked where it stands (removed: missing in `check`, hw-entry in the
    checker)."""
    text = _llc("call-defined-callee.ll", cpu, tmp_path)
    assert text is not None
    module = parse(text, "t.s")
    assert [f.name for f in module.functions if f.callable] == ["func"]
    missing = [ln for c, ln in findings(text, arch=cpu) if c == "missing-wait"]
    ret = next(i.line for i in module.functions[0].instructions() if i.mnemonic.startswith(("s_setpc", "s_set_pc")))
    # gfx1250: the store's translation at the return (decisions 31: the one place we wait for
    # more than LLVM on a counter it models), nothing at the entry
    assert missing == ([ret] if cpu == "gfx1250" else [])
    assert hw(text, arch=cpu) == []  # (the checker does not ask for that translation)
    assert ("call-assumption", next(i.line for i in module.functions[1].instructions()
                                    if i.mnemonic.startswith(("s_swappc", "s_swap_pc")))) not in notes(text, arch=cpu)
    stripped = _ENTRY_WAIT.sub("", text, count=1)
    assert stripped != text
    assert [r for r, _ in hw(stripped, arch=cpu)] == ["entry"]
    assert "missing-wait" in {c for c, _ in findings(stripped, arch=cpu)}
