"""The LLVM oracle itself (`peer.llvm_oracle`): its wait decoding and its probes.

These run without our per-target table; they need llvm-mc-22 / llc-22.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from peer import inventory, llvm_oracle

MC = shutil.which("llvm-mc-22")
pytestmark = pytest.mark.skipif(MC is None or not llvm_oracle.available(),
                                reason="llvm-mc-22 / llc-22 not installed")

WAITS = ("vmcnt(3) lgkmcnt(2)", "vmcnt(0)", "expcnt(1) lgkmcnt(0)", "vmcnt(62) expcnt(6)",
         "lgkmcnt(14)", "vmcnt(17) expcnt(0) lgkmcnt(9)")


def _fields(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"(\w+)\((\d+)\)", text)}


@pytest.mark.parametrize("cpu", ["gfx900", "gfx942", "gfx1030", "gfx1100"])
def test_s_waitcnt_decoding_matches_llvm_mc_encoding(cpu: str) -> None:
    """Encode with llvm-mc-22, decode with the oracle: the fields come back."""
    src = "".join(f"s_waitcnt {w}\n" for w in WAITS)
    out = subprocess.run([MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-show-encoding"],
                         input=src, capture_output=True, text=True, check=True).stdout
    encodings = re.findall(r"encoding: \[0x([0-9a-f]{2}),0x([0-9a-f]{2}),", out)
    assert len(encodings) == len(WAITS)
    for w, (lo, hi) in zip(WAITS, encodings):
        imm = int(hi + lo, 16)
        assert llvm_oracle.decode_s_waitcnt(llvm_oracle.generation(cpu), imm) == _fields(w), w


def test_gfx12_combined_wait_decoding() -> None:
    assert llvm_oracle.decode_wait("gfx12", "S_WAIT_LOADCNT_DSCNT 513") == {"loadcnt": 2,
                                                                           "dscnt": 1}
    assert llvm_oracle.decode_wait("gfx12", "S_WAIT_STORECNT_DSCNT 16128") == {"dscnt": 0}
    assert llvm_oracle.decode_wait("gfx10", "S_WAITCNT_VSCNT undef $sgpr_null, 0") == {"vscnt": 0}
    assert llvm_oracle.decode_wait("gfx1250", "S_WAIT_XCNT 0") == {"xcnt": 0}
    assert llvm_oracle.decode_wait("gfx12", "V_MOV_B32_e32 0, implicit $exec") is None


#: the families issue 11 asks to sample, on the CPUs that have them
REQUIRED = {
    "gfx942": "ds_load ds_store ds_atomic_ret ds_atomic_noret global_load global_store "
              "global_atomic_ret global_atomic_noret scratch_load scratch_store flat_load "
              "flat_store flat_atomic_ret buffer_load buffer_store buffer_load_lds global_load_lds "
              "smem_load memtime sendmsg smem_store dcache_wb",
    "gfx1030": "image_load image_sample image_bvh buffer_load_lds memtime",
    "gfx1100": "image_load image_sample image_bvh sendmsg_rtn",
    "gfx1200": "image_load image_sample image_bvh sendmsg_rtn get_barrier_state "
               "barrier_signal_isfirst",
    "gfx1250": "global_load global_store scratch_load flat_load cluster_load smem_load "
               "tensor_load async_load sendmsg_rtn get_barrier_state barrier_signal_isfirst "
               "sendmsg smem_prefetch global_prefetch",
}


@pytest.mark.parametrize("cpu", sorted(REQUIRED))
def test_required_families_are_probed(cpu: str) -> None:
    have = {p.family for p in llvm_oracle.build_probes(cpu, inventory.load(cpu))}
    assert set(REQUIRED[cpu].split()) <= have


@pytest.mark.parametrize("cpu", inventory.cpus())
def test_probes_run_and_read_back(cpu: str) -> None:
    """Every probe assembles to a mnemonic llvm-mc accepts on the CPU, and LLVM counts every
    producer on some counter -- except the ones LLVM 22 is known not to model (their
    `Producer.note`), which must then show no counter at all."""
    accepted = inventory.load(cpu)
    probes = llvm_oracle.build_probes(cpu, accepted)
    notes = {p.family: p.note for p in llvm_oracle.PRODUCERS}
    for res in llvm_oracle.run(cpu, probes):
        asm = res.producer_asm
        assert asm and asm.split()[0] in accepted, f"{res.probe.name}: {asm!r}"
        if res.probe.hazard == "pending":
            if notes[res.probe.family]:
                assert res.window() == {}, (res.probe.name, notes[res.probe.family])
            else:
                assert res.window(), f"{cpu} {res.probe.name}: LLVM counts `{asm}` on nothing"
