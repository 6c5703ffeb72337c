"""Tests of the AMDGPU assembly printer: byte-exact identity, line insertion, indentation."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stinkywait_core.syntax.asm_parser import parse_asm, split_lines
from stinkywait_core.syntax.asm_printer import format_wait, indentation_for, insert_lines, newline_of

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "asm"
CORPUS_FILES = sorted(CORPUS.glob("*.s")) + sorted(CORPUS.glob("llvm22-pairs/*.s")) if CORPUS.is_dir() else []
EXAMPLE = ROOT / "examples" / "gemm_loop.s"
LLVM_MC = shutil.which("llvm-mc-22")


def test_format_wait_is_decimal():
    assert format_wait("s_wait_dscnt", 2) == "s_wait_dscnt 2"
    assert format_wait("s_wait_tensorcnt", 0) == "s_wait_tensorcnt 0"
    assert format_wait("s_wait_loadcnt", 63) == "s_wait_loadcnt 63"


def test_no_insertion_is_identity():
    for text in ["", "a", "a\n", "a\r\nb\r\n", "x\ry", "\n\n\n", "  \t odd \x00 bytes\n"]:
        assert insert_lines(text, []) == text


def test_insert_before_lines_keeps_order():
    text = "l1\nl2\nl3\n"
    out = insert_lines(text, [(2, "a"), (1, "first"), (2, "b"), (4, "end")])
    assert out == "first\nl1\na\nb\nl2\nl3\nend\n"


def test_insert_preserves_crlf_and_missing_final_newline():
    text = "l1\r\nl2"
    assert insert_lines(text, [(2, "w")]) == "l1\r\nw\r\nl2"
    assert insert_lines(text, [(3, "tail1"), (3, "tail2")]) == "l1\r\nl2\r\ntail1\r\ntail2"
    assert insert_lines("l1\n", [(2, "t")]) == "l1\nt\n"
    assert insert_lines("", [(1, "only")]) == "only\n"
    assert newline_of("a\rb") == "\r" and newline_of("ab") == "\n"


def test_insert_never_merges_mixed_newlines():
    assert insert_lines("a\nb\r", [(3, "")]) == "a\nb\r\r\n"
    assert split_lines(insert_lines("a\rb\n\n", [(3, "x")])) == ["a", "b", "x", ""]


def test_insert_clamps_out_of_range_lines():
    assert insert_lines("a\nb\n", [(0, "x"), (99, "y")]) == "x\na\nb\ny\n"


def test_insert_does_not_touch_other_bytes():
    text = "\tv_mov_b32 v0, 0   ; c \n\n  s_nop 0\t\r\n\x0bweird\n"
    out = insert_lines(text, [(3, "\ts_wait_dscnt 0")])
    assert out.replace("\ts_wait_dscnt 0\n", "", 1) == text


def test_indentation_copies_neighbouring_instruction():
    src = "k:\n\ts_nop 0\n.L1:\n    s_nop 1\n// c\n\n  s_endpgm\n"
    m = parse_asm(src, "t.s")
    assert indentation_for(m, 2) == "\t"
    assert indentation_for(m, 3) == "    "   # before a label: the instruction after it
    assert indentation_for(m, 5) == "  "     # comment/blank lines are skipped
    assert indentation_for(m, 8) == "  "     # at the end: the last instruction
    assert indentation_for(parse_asm("", "t.s"), 1) == "\t"


def test_insert_wait_into_kernel_then_reparse():
    src = "k:\n\tds_load_b128 v[0:3], v4\n\tv_add_f32_e32 v5, v0, v1\n\ts_endpgm\n"
    m = parse_asm(src, "t.s")
    use = m.lines[2].instruction
    out = insert_lines(src, [(use.line, indentation_for(m, use.line) + format_wait("s_wait_dscnt", 0))])
    assert out == "k:\n\tds_load_b128 v[0:3], v4\n\ts_wait_dscnt 0\n\tv_add_f32_e32 v5, v0, v1\n\ts_endpgm\n"
    m2 = parse_asm(out, "t.s")
    assert not m2.diagnostics
    assert [i.mnemonic for i in m2.functions[0].instructions() if not i.is_label] == [
        "ds_load_b128", "s_wait_dscnt", "v_add_f32_e32", "s_endpgm"]


@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus not available")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_parse_print_identity(path):
    data = path.read_bytes()
    text = data.decode("utf-8")
    m = parse_asm(text, str(path))
    assert insert_lines(text, []).encode("utf-8") == data
    assert "\n".join(ln.text for ln in m.lines) + ("\n" if text.endswith("\n") else "") == text
    # one inserted line before every instruction, then removed again, gives the input back
    marks = [(ln.line, "\t;;MARK") for ln in m.lines if ln.kind == "instruction"][:50]
    out = insert_lines(text, marks)
    assert out.count("\t;;MARK\n") == len(marks)
    assert out.replace("\t;;MARK\n", "") == text


@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus not available")
def test_corpus_indentation_is_a_tab():
    path = CORPUS / "aiter_gfx1250_mxscale_gemm1_final_isa.s"
    m = parse_asm(path.read_text(), str(path))
    inst_lines = [ln.line for ln in m.lines if ln.kind == "instruction"]
    assert {indentation_for(m, n) for n in inst_lines[:200]} == {"\t"}


# --- the bundled example ---------------------------------------------------------------------

def _example_waits(m) -> list[tuple[int, str]]:
    """A plausible wait before every first use of a loaded register or LDS tile.

    This is not the insertion algorithm (that lives in the waitcnt package); it only produces
    waits of every kind so that the example is checked to assemble with them in place.
    """
    out: list[tuple[int, str]] = []
    lines = [ln for ln in m.lines if ln.instruction is not None]
    for ln in lines:
        mn = ln.instruction.mnemonic
        ind = indentation_for(m, ln.line)
        if mn == "s_mov_b32" and ln.instruction.srcs and getattr(ln.instruction.srcs[0], "kind", "") == "s" \
                and ln.instruction.srcs[0].lo == 4:
            out.append((ln.line, ind + format_wait("s_wait_kmcnt", 0)))
        elif mn == "s_barrier_signal":
            out.append((ln.line, ind + format_wait("s_wait_tensorcnt", 0)))
        elif mn.startswith("v_wmma"):
            out.append((ln.line, ind + format_wait("s_wait_dscnt", 0)))
        elif mn == "v_add_f32_e32" and ln.instruction.srcs[-1].text() == "v48":
            out.append((ln.line, ind + format_wait("s_wait_loadcnt", 0)))
    return out


def test_example_kernel_parses_cleanly():
    text = EXAMPLE.read_text()
    m = parse_asm(text, str(EXAMPLE))
    assert not m.diagnostics
    assert 60 <= len(m.lines) <= 120
    (fn,) = m.functions
    assert fn.name == "gemm_loop"
    mns = [i.mnemonic for i in fn.instructions()]
    assert not any(x.startswith("s_wait") for x in mns)
    for needed in ("s_load_b64", "tensor_load_to_lds", "s_barrier_signal", "s_barrier_wait", "ds_load_b128",
                   "v_wmma_f32_16x16x32_bf16", "global_load_b128", "s_cbranch_scc1", "global_store_b128",
                   "s_endpgm"):
        assert needed in mns
    loop = next(b for b in fn.blocks if b.label == ".LBB0_1")
    assert loop in loop.succs
    tagged = {i.mnemonic: i.tokens for i in fn.instructions() if i.tokens}
    assert tagged["s_barrier_signal"] == (0, 1)
    assert "tensor_load_to_lds" in tagged and "ds_load_b128" in tagged
    assert len(_example_waits(m)) >= 4


@pytest.mark.skipif(LLVM_MC is None, reason="llvm-mc-22 not installed")
@pytest.mark.parametrize("with_waits", [False, True])
def test_example_kernel_assembles(tmp_path, with_waits):
    text = EXAMPLE.read_text()
    if with_waits:
        m = parse_asm(text, str(EXAMPLE))
        text = insert_lines(text, _example_waits(m))
        assert text.count("s_wait_") >= 4
    src = tmp_path / "k.s"
    src.write_text(text)
    res = subprocess.run([LLVM_MC, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-filetype=obj", str(src),
                          "-o", str(tmp_path / "k.o")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert split_lines(text)
