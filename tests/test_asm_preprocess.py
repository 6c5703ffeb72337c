"""The expansion of includes, macros, repetitions and conditionals (syntax/asm_preprocess.py):
each directive against llvm-mc-22's own expansion (both assembled, the instruction streams
compared), the source map, the located warnings and the include search order."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from stinkywait_core.syntax.asm_expr import eval_expr
from stinkywait_core.syntax.asm_preprocess import expand, generation_symbols, needs_expansion

LLVM_MC = shutil.which("llvm-mc-22")
OBJDUMP = shutil.which("llvm-objdump-22")
needs_llvm = pytest.mark.skipif(LLVM_MC is None or OBJDUMP is None, reason="llvm-mc-22 / llvm-objdump-22 not installed")


def _stream(src: str, tmp_path, name: str, cpu: str, inc: tuple[str, ...] = ()) -> list[str]:
    path = tmp_path / f"{name}.s"
    path.write_text(src)
    obj = tmp_path / f"{name}.o"
    cmd = [LLVM_MC, "-triple", "amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-filetype=obj", "-o", str(obj), str(path)]
    for d in inc:
        cmd += ["-I", d]
    # llvm-mc resolves an include against its working directory, then -I; run it in the
    # including file's folder, the first place stinkywait looks (docs/decisions.md)
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    dis = subprocess.run([OBJDUMP, "-d", str(obj)], capture_output=True, text=True, check=True).stdout
    body = dis.split("Disassembly of section", 1)[-1]
    return [re.sub(r"\s*//.*", "", ln).strip() for ln in body.splitlines() if ln.startswith("\t")]


def _same_as_llvm(src: str, tmp_path, cpu: str = "gfx1030", dirs: tuple[str, ...] = ()) -> list[str]:
    path = str(tmp_path / "orig.s")
    ex = expand(src, path, dirs, cpu)
    assert not ex.diagnostics, [d.message for d in ex.diagnostics]
    assert not needs_expansion(ex.text) or ".altmacro" in ex.text
    ours = _stream(ex.text, tmp_path, "ours", cpu)
    theirs = _stream(src, tmp_path, "orig", cpu, inc=dirs)
    assert ours == theirs
    assert ours, "the test should produce instructions"
    return ours


DIRECTIVES = {
    "macro-positional-default-keyword": """
.macro add3 d, a, b=7, c:req
    v_add_nc_u32 v\\d, \\a, \\b
    v_add_nc_u32 v\\d, v\\d, \\c
.endm
    add3 1, v2, c=v3
    add3 4 v5 v6 v7
    add3 d=8, a=v9, c=13
""",
    "macro-counter-separator-exitm-purgem": """
.macro lbl n
L\\@_\\n\\()x:
    s_mov_b32 s\\n, \\@
.if \\n > 3
    .exitm
.endif
    s_mov_b32 s\\n, 100
.endm
    lbl 2
    lbl 5
    lbl 1
.purgem lbl
.macro lbl n
    s_mov_b32 s\\n, 42
.endm
    lbl 9
""",
    "macro-vararg-nested-quoted": """
.macro inner r, v
    v_mov_b32 \\r, \\v
.endm
.macro outer first, rest:vararg
    inner \\first, 1
    .irp r, \\rest
        inner \\r, 2
    .endr
.endm
    outer v1, v2, v3, v4
    inner "v9", 3
""",
    "rept-irp-irpc": """
.set n, 3
.rept n * 2 - 3
    s_nop 0
.endr
.irp i, 1, 2, 5
    v_mov_b32 v\\i, \\i
.endr
.irpc c, 357
    s_mov_b32 s\\c, \\c
.endr
.rept 2
  .rept 2
    s_nop 1
  .endr
.endr
""",
    "conditionals-symbols": """
x = 4
.set y, x * 3 + 1 & 6
.if x == 4 && y > 2
    s_mov_b32 s0, y
.elseif x
    s_mov_b32 s0, 99
.else
    s_mov_b32 s0, 98
.endif
.ifdef x
    s_mov_b32 s1, 1
.endif
.ifndef nope
    s_mov_b32 s2, 2
.endif
.ifeq x - 4
    s_mov_b32 s3, 3
.endif
.ifgt x - 10
    s_mov_b32 s4, 4
.else
    .iflt x - 10
        s_mov_b32 s4, 5
    .endif
.endif
.ifc abc, abc
    s_mov_b32 s5, 6
.endif
.ifnb
    s_mov_b32 s6, 7
.else
    s_mov_b32 s6, 8
.endif
.if .amdgcn.gfx_generation_number == 10 && .amdgcn.gfx_generation_minor == 3
    s_mov_b32 s7, 10
.endif
""",
    "altmacro": """
.altmacro
.macro show v
    s_mov_b32 s1, v
.endm
.macro wrap v
    show %(v + 1)
.endm
.set k, 5
    wrap k
    show <7>
.noaltmacro
""",
}


@needs_llvm
@pytest.mark.parametrize("name", sorted(DIRECTIVES))
def test_directive_matches_llvm_mc(name, tmp_path):
    _same_as_llvm(".text\n" + DIRECTIVES[name] + "    s_endpgm\n", tmp_path)


@needs_llvm
def test_include_search_order_matches_llvm_mc(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.inc").write_text("    s_mov_b32 s1, 1\n")
    (tmp_path / "b" / "x.inc").write_text("    s_mov_b32 s1, 2\n")
    (tmp_path / "b" / "y.inc").write_text(".include \"z.inc\"\n")
    (tmp_path / "b" / "z.inc").write_text("    s_mov_b32 s2, 3\n")
    src = '.text\n.include "x.inc"\n.include "y.inc"\n    s_endpgm\n'
    ex = expand(src, str(tmp_path / "k.s"), (str(tmp_path / "a"), str(tmp_path / "b")), "gfx1030")
    assert [ln.strip() for ln in ex.lines if ln.strip().startswith("s_")] == \
        ["s_mov_b32 s1, 1", "s_mov_b32 s2, 3", "s_endpgm"]
    # the folder of the including file comes first (llvm-mc: its working directory, here the same)
    (tmp_path / "x.inc").write_text("    s_mov_b32 s1, 4\n")
    ours = _same_as_llvm(src, tmp_path, dirs=(str(tmp_path / "a"), str(tmp_path / "b")))
    assert ours[0] == "s_mov_b32 s1, 4"


def test_source_map_points_at_the_call_site_with_the_chain(tmp_path):
    (tmp_path / "m.inc").write_text(".macro two r\n    v_mov_b32 v\\r, 0\n    one \\r\n.endm\n"
                                     ".macro one r\n    v_mov_b32 v\\r, 1\n.endm\n")
    src = '.include "m.inc"\n.text\n    s_nop 0\n    two 3\n.rept 2\n    s_nop 1\n.endr\n'
    ex = expand(src, str(tmp_path / "k.s"), (), "gfx1030")
    sm = ex.source_map
    got = [(ln.strip(), org[0], tuple((k, n, os.path.basename(f), line) for k, n, f, line in org[1]))
           for ln, org in zip(ex.lines, sm.origins) if ln.strip().startswith(("s_", "v_"))]
    assert got == [
        ("s_nop 0", 3, ()),
        ("v_mov_b32 v3, 0", 4, (("macro", "two", "m.inc", 2),)),
        ("v_mov_b32 v3, 1", 4, (("macro", "two", "m.inc", 3), ("macro", "one", "m.inc", 6))),
        ("s_nop 1", 5, ((".rept", ".rept", "k.s", 6),)),
        ("s_nop 1", 5, ((".rept", ".rept", "k.s", 6),)),
    ]
    assert sm.includes == [str(tmp_path / "m.inc")]


def test_unresolvable_input_is_a_located_warning(tmp_path):
    src = ("line1:\n"
           '.include "missing.inc"\n'
           ".if undefined_sym + 1\n    s_nop 0\n.endif\n"
           ".rept count\n    s_nop 1\n.endr\n"
           ".macro m a:req\n    s_nop \\a\n.endm\n    m\n"
           ".macro open\n    s_nop 2\n")
    ex = expand(src, str(tmp_path / "k.s"), (str(tmp_path),), "gfx1030")
    got = sorted((d.line, d.code) for d in ex.diagnostics)
    assert got == [(2, "asm-missing-include"), (3, "asm-undefined-symbol"), (6, "asm-undefined-symbol"),
                   (12, "asm-bad-macro-call"), (13, "asm-unbalanced-block")]
    assert all(d.severity == "warning" for d in ex.diagnostics)
    missing = next(d for d in ex.diagnostics if d.code == "asm-missing-include")
    assert "missing.inc" in missing.message and str(tmp_path) in missing.message and "incomplete" in missing.message
    assert {d.line for d in ex.source_map.incomplete} == {2, 3, 6, 12, 13}


def test_include_cycle_stops_with_a_warning(tmp_path):
    (tmp_path / "a.inc").write_text('.include "a.inc"\n')
    ex = expand('.include "a.inc"\n', str(tmp_path / "k.s"))
    assert [d.code for d in ex.diagnostics] == ["asm-expansion-too-deep"]


def test_reader_wins_over_the_disk(tmp_path):
    (tmp_path / "m.inc").write_text("    s_nop 1\n")
    inc = str(tmp_path / "m.inc")
    ex = expand('.include "m.inc"\n', str(tmp_path / "k.s"), read=lambda p: "    s_nop 7\n" if p == inc else None)
    assert [ln.strip() for ln in ex.lines] == ["s_nop 7"]


def test_generation_symbols_follow_mcpu():
    assert generation_symbols("gfx90a") == {".amdgcn.gfx_generation_number": 9, ".amdgcn.gfx_generation_minor": 0,
                                            ".amdgcn.gfx_generation_stepping": 10}
    assert generation_symbols("gfx1100:xnack-")[".amdgcn.gfx_generation_number"] == 11
    assert generation_symbols("") == {}


def test_gnu_expression_rules():
    # llvm-mc: `&` binds tighter than `+`, a true comparison is -1, logical operators give 0/1
    assert eval_expr("3 + 1 & 4") == 3
    assert eval_expr("2 == 2") == -1
    assert eval_expr("5 > 3 && 1") == 1
    assert eval_expr("0 || 0") == 0
    assert eval_expr("-7 / 2") == -3


def test_plain_files_do_not_need_expansion():
    assert not needs_expansion("\ts_load_dword s0, s[0:1], 0\n.set x, 1\n\ts_endpgm\n")
    assert needs_expansion("  .macro m\n.endm\n")
    assert needs_expansion('lbl: .include "x.inc"\n')


FRAGMENTS = [".macro m a, b=1, c:vararg", ".endm", ".rept 2", ".rept x", ".endr", ".irp i, 1, 2", ".irpc c, ab",
             ".if x", ".if 1 ==", ".elseif 0", ".else", ".endif", ".ifdef m", ".exitm", ".purgem m", "m 1, 2",
             "m", "m c=3", "\\a \\b \\@ \\()", ".set x, 1", "x = x + 1", ".altmacro", ".noaltmacro", "m %x, <a b>",
             '.include "nope.inc"', "lbl: m 1", "/* open", "*/", '"', "s_nop 0", ".end"]


def test_expansion_never_raises_on_arbitrary_directives():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
    def run(lines):
        ex = expand("\n".join(lines) + "\n", "fuzz.s", (), "gfx1030")
        assert len(ex.lines) == len(ex.source_map.origins)
        assert all(1 <= org[0] <= max(1, len(lines)) for org in ex.source_map.origins)
        assert all(1 <= d.line <= max(1, len(lines)) for d in ex.diagnostics)

    run()


def test_raw_words_in_code_and_error_directives_are_said(tmp_path):
    src = (".text\n    s_nop 0\n    .long 0xD6FE6A00\n.data\n    .long 7\n.text\n"
           ".ifndef PARAM\n    .error \"PARAM undefined\"\n.endif\n")
    ex = expand(src, str(tmp_path / "k.s"), (), "gfx1030")
    assert sorted((d.line, d.code) for d in ex.diagnostics) == [(3, "asm-raw-instruction"), (8, "asm-error-directive")]


@needs_llvm
def test_defsym_matches_llvm_mc(tmp_path):
    src = ".text\n.if MODE == 2\n    s_mov_b32 s0, WIDTH\n.else\n    s_nop 0\n.endif\n.rept WIDTH / 4\n    s_nop 1\n.endr\n"
    path = tmp_path / "d.s"
    path.write_text(src)
    ex = expand(src, str(path), (), "gfx1030", defsyms=(("MODE", 2), ("WIDTH", 12)))
    assert not ex.diagnostics
    ours = _stream(ex.text + "    s_endpgm\n", tmp_path, "ours", "gfx1030")
    obj = tmp_path / "d.o"
    subprocess.run([LLVM_MC, "-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx1030", "-filetype=obj", "--defsym", "MODE=2",
                    "--defsym", "WIDTH=12", "-o", str(obj), str(path)], check=True, capture_output=True)
    dis = subprocess.run([OBJDUMP, "-d", str(obj)], capture_output=True, text=True, check=True).stdout
    theirs = [re.sub(r"\s*//.*", "", ln).strip() for ln in dis.split("Disassembly of section", 1)[-1].splitlines()
              if ln.startswith("\t")]
    assert ours[:-1] == theirs and ours[0] == "s_mov_b32 s0, 12" and ours.count("s_nop 1") == 3


def test_cli_defsym(tmp_path, capsys):
    from stinkywait_core.cli.main import main
    k = tmp_path / "k.s"
    k.write_text(".amdgcn_target \"amdgcn-amd-amdhsa--gfx1030\"\n.text\nk:\n    global_load_dword v1, v[2:3], off\n"
                 ".if USE\n    v_add_f32 v1, v1, v1\n.endif\n    s_endpgm\n")
    assert main(["plan", str(k)]) == 0  # USE undefined: a warning, nothing planned
    assert "cannot evaluate 'USE'" in capsys.readouterr().err
    assert main(["plan", "--defsym", "USE=1", str(k)]) == 0
    assert "s_waitcnt vmcnt(0)" in capsys.readouterr().out
    assert main(["plan", "--defsym", "USE", str(k)]) == 2
    capsys.readouterr()
