"""Target detection from the file: `.amdgcn_target` anywhere, the metadata, kernel descriptors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stinkywait_core.syntax import parse
from stinkywait_core.syntax.asm_target import parse_target_id

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "asm"
LLC = shutil.which("llc-22") is not None

KERNEL = """define amdgpu_kernel void @k(ptr addrspace(1) %p) {
  %v = load i32, ptr addrspace(1) %p
  %w = add i32 %v, 1
  store i32 %w, ptr addrspace(1) %p
  ret void
}
"""


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
@pytest.mark.parametrize("name,cpu,line,wave", [
    ("aiter_gfx942_flatmm_uk_f16f8_128x256x128.s", "gfx942", 1444, 64),  # only in the metadata, at the end
    ("aiter_gfx950_a8w8_cktile_gemm_256x256x128.s", "gfx950", 1, 64),
    ("aiter_gfx1250_mxscale_gemm1_final_isa.s", "gfx1250", 1, 32)])
def test_corpus_targets(name, cpu, line, wave):
    m = parse((CORPUS / name).read_text(), name)
    assert (m.target, m.target_span.line, m.target_info.wavefront_size) == (cpu, line, wave)
    assert m.target_info.tgsplit in (False, None)
    assert all(d.code != "asm-target" for d in m.diagnostics)


@pytest.mark.skipif(not LLC, reason="llc-22 not installed")
@pytest.mark.parametrize("cpu,attrs,xnack,sramecc,tgsplit,wave", [
    ("gfx90a", "+xnack,-sramecc", True, False, False, 64),
    ("gfx90a", "+tgsplit", None, None, True, 64),
    ("gfx906", "+xnack", True, None, None, 64),
    ("gfx942", "", None, None, False, 64),
    ("gfx950", "", None, None, False, 64),
    ("gfx1030", "+wavefrontsize64", None, None, None, 64),
    ("gfx1100", "", None, None, None, 32),
    ("gfx1200", "", None, None, None, 32),
    ("gfx1250", "", None, None, None, 32)])
def test_llvm_output_targets(cpu, attrs, xnack, sramecc, tgsplit, wave, tmp_path):
    (tmp_path / "k.ll").write_text(KERNEL)
    cmd = ["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", str(tmp_path / "k.ll"), "-o", "-"]
    out = subprocess.run(cmd + ([f"-mattr={attrs}"] if attrs else []), check=True, capture_output=True,
                         text=True).stdout
    m = parse(out, "k.s")
    info = m.target_info
    assert (m.target, info.xnack, info.sramecc, info.tgsplit, info.wavefront_size) == \
        (cpu, xnack, sramecc, tgsplit, wave)
    assert info.kernel_wavefront_size == {"k": wave}
    assert info.kernel_descriptors["k"]["amdhsa_next_free_sgpr"] >= 0
    assert m.text.splitlines()[m.target_span.line - 1].strip().startswith(".amdgcn_target")
    assert not m.diagnostics


def test_target_id_forms():
    assert parse_target_id("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-") == ("gfx942", {"sramecc": True,
                                                                                     "xnack": False})
    assert parse_target_id("amdgcn-amd-amdhsa--gfx906+xnack") == ("gfx906", {"xnack": True})
    assert parse_target_id("amdgcn-amd-amdhsa--gfx9-4-generic:xnack+") == ("gfx9-4-generic", {"xnack": True})
    assert parse_target_id("amdgcn-amd-amdhsa--gfx10-3-generic") == ("gfx10-3-generic", {})
    assert parse_target_id("gfx942") is None and parse_target_id("amdgcn-amd-amdhsa--sm_90") is None


def test_older_directives_conflicts_and_nothing():
    m = parse('\t.hsa_code_object_isa 9,0,10,"AMD","AMDGPU"\nk:\n\ts_endpgm\n', "k.s")
    assert (m.target, m.target_info.wavefront_size) == ("gfx90a", 64)
    m = parse('\t.amd_amdgpu_isa "amdgcn-amd-amdhsa--gfx906+xnack"\nk:\n\ts_endpgm\n', "k.s")
    assert (m.target, m.target_info.xnack) == ("gfx906", True)
    m = parse('k:\n\ts_endpgm\n\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n'
              '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx950"\n', "k.s")
    assert m.target == "gfx942" and m.target_span.line == 3
    (d,) = m.diagnostics
    assert d.code == "asm-target" and d.line == 4 and "disagrees" in d.message
    m = parse('\t.amdgcn_target "gfx942"\nk:\n\ts_endpgm\n', "k.s")
    assert m.target is None and [d.line for d in m.diagnostics] == [1]
    m = parse("k:\n\ts_endpgm\n", "k.s")
    assert m.target is None and m.target_span is None and m.target_info.wavefront_size is None


def test_wave_size_from_descriptors_and_metadata():
    text = ("k:\n\ts_endpgm\n\t.rodata\n\t.amdhsa_kernel k\n\t\t.amdhsa_wavefront_size32 0\n"
            "\t\t.amdhsa_tg_split 1\n\t.end_amdhsa_kernel\n\t.amdgpu_metadata\n---\namdhsa.kernels:\n"
            "  - .args:\n      - .name: a\n        .size: 8\n    .name: j\n    .symbol: j.kd\n"
            "    .wavefront_size: 32\namdhsa.target: amdgcn-amd-amdhsa--gfx1030\n...\n\t.end_amdgpu_metadata\n")
    m = parse(text, "k.s")
    info = m.target_info
    assert (m.target, info.tgsplit, info.kernel_wavefront_size) == ("gfx1030", True, {"j": 32, "k": 64})
    assert info.wavefront_size is None  # the kernels disagree
