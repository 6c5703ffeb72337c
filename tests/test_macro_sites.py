"""Waits and findings of an expanded file at the lines the user wrote (macro_sites.py): the
source map of instructions, hoisting to the call site, waits only a macro body can hold,
undefined macros, the CLI's -I / --allow-incomplete and check's exit status."""

from __future__ import annotations

import pytest

from stinkywait_core.api import analyze
from stinkywait_core.cli.main import main
from stinkywait_core.results import Options

MACROS = """.macro LOADUSE dst, src
    global_load_dword v\\dst, v[0:1], off
    v_mov_b32 v9, v8
    v_add_f32 v\\src, v\\dst, v\\src
.endm
.macro USEONLY r
    v_mov_b32 v20, v21
    v_mov_b32 v22, v21
    v_add_f32 v\\r, v\\r, v\\r
.endm
.macro LOADTWO a, b
    global_load_dword v\\a, v[0:1], off
    global_load_dword v\\b, v[2:3], off
.endm
"""

KERNEL = """.amdgcn_target "amdgcn-amd-amdhsa--gfx1030"
.include "m.inc"
.text
.globl k
.type k,@function
k:
    LOADTWO 5, 6
    global_load_dword v7, v[10:11], off
    USEONLY 5
    s_endpgm
"""


@pytest.fixture
def kernel(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "m.inc").write_text(MACROS)
    k = tmp_path / "k.s"
    k.write_text(KERNEL)
    return tmp_path, str(k), str(inc)


def test_a_wait_inside_a_call_is_hoisted_with_its_count_rebased(kernel):
    _, path, inc = kernel
    an = analyze(KERNEL, path, Options(arch="gfx1030", include_paths=(inc,)))
    assert not an.incomplete
    (w,) = an.waits()
    # v_add_f32 v5 (the third instruction of USEONLY, line 9) needs v5's load done: vmcnt(2)
    # there, and no vector-memory op is issued inside the call before it, so vmcnt(2) before
    # the call line
    assert (w.line, w.insert_line, w.instruction) == (9, 9, "s_waitcnt vmcnt(2)")
    assert "in macro USEONLY (m.inc:9)" in w.reason and "placed before the call" in w.reason
    assert w.column == 5  # the call's own column, never a placeholder
    assert [d.line for d in w.deps] == [7]  # the producer is at LOADTWO's call line
    out = an.inserted_text(explain=True)
    assert out.splitlines()[8].strip().startswith("s_waitcnt vmcnt(2)  // stinkywait: RAW")
    assert "in macro USEONLY (m.inc:9)" in out.splitlines()[8]
    assert out.splitlines()[9].strip() == "USEONLY 5"


def test_hoisting_subtracts_the_ops_issued_inside_the_call(kernel):
    tmp, path, inc = kernel
    text = KERNEL.replace("    USEONLY 5\n", "    LOADUSE 8, 7\n")
    an = analyze(text, path, Options(arch="gfx1030", include_paths=(inc,)))
    # v_mov_b32 v9, v8 reads v8 (loaded inside the same call): only the macro body can
    # hold that wait; an error at the call line, the result incomplete
    (err,) = [d for d in an.diagnostics if d.code == "wait-inside-macro"]
    assert (err.line, err.severity) == (9, "error")
    assert "in macro LOADUSE (m.inc:3)" in err.message
    assert an.incomplete == [err]
    # and it does not pretend: no wait is planned before the call for it
    assert not [w for w in an.waits() if w.line == 9]


def test_hoisted_count_accounts_for_loads_inside_the_call(tmp_path):
    (tmp_path / "m.inc").write_text(".macro LU a, b\n    global_load_dword v\\a, v[0:1], off\n"
                                    "    v_add_f32 v\\b, v\\b, v\\b\n.endm\n")
    text = (".amdgcn_target \"amdgcn-amd-amdhsa--gfx1030\"\n.include \"m.inc\"\n.text\nk:\n"
            "    global_load_dword v5, v[0:1], off\n    global_load_dword v6, v[0:1], off\n    LU 7, 5\n"
            "    s_endpgm\n")
    an = analyze(text, str(tmp_path / "k.s"), Options(arch="gfx1030"))
    (w,) = an.waits()
    # inside the call: v5 needs vmcnt(2) before v_add (v6 and v7 younger); before the call
    # only v6 is younger: vmcnt(1)
    assert (w.line, w.instruction) == (7, "s_waitcnt vmcnt(1)")


def test_findings_and_positions_never_point_into_the_include(kernel):
    _, path, inc = kernel
    an = analyze(KERNEL, path, Options(arch="gfx1030", include_paths=(inc,)))
    n = len(KERNEL.splitlines())
    for f in an.module.functions:
        for b in f.blocks:
            for i in b.instrs:
                assert 1 <= i.span.line <= n and i.span.col < 1000
    for d in an.check_diagnostics() + an.diagnostics:
        assert 1 <= d.line <= n and d.col < 1000
    (missing,) = an.check_diagnostics()
    assert missing.line == 9 and missing.code == "missing-wait"


def test_missing_include_and_undefined_macro_are_located_warnings(kernel):
    _, path, _ = kernel
    an = analyze(KERNEL, path, Options(arch="gfx1030"))
    got = sorted((d.line, d.code) for d in an.incomplete)
    assert got == [(2, "asm-missing-include"), (7, "asm-undefined-macro"), (9, "asm-undefined-macro")]
    undefined = [d for d in an.incomplete if d.code == "asm-undefined-macro"]
    assert "'LOADTWO'" in undefined[0].message and "incomplete" in undefined[0].message


def test_cli_include_dirs_and_allow_incomplete(kernel, capsys):
    tmp, path, inc = kernel
    out = tmp / "out.s"
    # without -I: the include is missing, insert refuses and writes nothing
    assert main(["insert", path, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "k.s:2:1: warning: cannot find include file 'm.inc'" in err and "--allow-incomplete" in err
    assert not out.exists()
    assert main(["insert", path, "-o", str(out), "--allow-incomplete"]) == 0
    assert out.read_text() == KERNEL  # it could see no wait to insert
    assert main(["insert", path, "-I", inc, "-o", str(out)]) == 0
    assert "s_waitcnt vmcnt(2)\n    USEONLY 5" in out.read_text()
    # check fails on what it could not see, and on the wait it found
    assert main(["check", path]) == 1
    assert main(["check", "-I", inc, str(out)]) == 0
    assert main(["check", "-I", inc, "--exhaustive", str(out)]) == 0
    assert main(["check", "-I", inc, "--exhaustive", path]) == 1
    capsys.readouterr()


def test_cli_refuses_a_wait_only_the_macro_can_hold(kernel, capsys):
    tmp, path, inc = kernel
    (tmp / "k.s").write_text(KERNEL.replace("    USEONLY 5\n", "    LOADUSE 8, 7\n"))
    out = tmp / "out.s"
    assert main(["insert", path, "-I", inc, "-o", str(out)]) == 1
    assert "in macro LOADUSE (m.inc:3)" in capsys.readouterr().err and not out.exists()
    assert main(["insert", path, "-I", inc, "-o", str(out), "--allow-incomplete"]) == 0
    assert main(["check", "-I", inc, path]) == 1
    capsys.readouterr()


def test_plain_files_take_the_plain_path():
    text = "\t.text\nk:\n\tglobal_load_dword v1, v[2:3], off\n\tv_add_f32 v1, v1, v1\n\ts_endpgm\n"
    an = analyze(text, "k.s", Options(arch="gfx1030"))
    assert an.call_sites is None and an.waits()[0].line == 4


def test_a_rept_in_the_file_is_a_call_site(tmp_path):
    text = (".amdgcn_target \"amdgcn-amd-amdhsa--gfx1030\"\n.text\nk:\n"
            "    global_load_dword v5, v[0:1], off\n"
            ".rept 2\n    v_mov_b32 v9, v8\n    v_add_f32 v6, v5, v6\n.endr\n    s_endpgm\n")
    an = analyze(text, str(tmp_path / "k.s"), Options(arch="gfx1030"))
    (w,) = an.waits()
    # the body's first repetition needs v5: the wait goes before the .rept line (5), never
    # before a body line (it would run in every repetition, and the count is for one place)
    assert (w.line, w.insert_line, w.instruction) == (5, 5, "s_waitcnt vmcnt(0)")
    assert "in .rept" in w.reason
    assert not an.incomplete


def test_a_need_past_a_label_inside_a_call(tmp_path):
    (tmp_path / "m.inc").write_text(".macro LOOPUSE r\n    s_mov_b32 s0, 2\nL\\@:\n    v_add_f32 v\\r, v\\r, v\\r\n"
                                    "    s_sub_u32 s0, s0, 1\n    s_cbranch_scc1 L\\@\n.endm\n"
                                    ".macro LOOPLOAD r\n    s_mov_b32 s0, 2\nM\\@:\n    global_load_dword v\\r, v[0:1], off\n"
                                    "    v_add_f32 v7, v\\r, v7\n    s_sub_u32 s0, s0, 1\n    s_cbranch_scc1 M\\@\n.endm\n")
    head = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx1030\"\n.include \"m.inc\"\n.text\nk:\n"
    # the producer comes before the call: hoisted as a full drain before the call line
    text = head + "    global_load_dword v5, v[0:1], off\n    LOOPUSE 5\n    s_endpgm\n"
    an = analyze(text, str(tmp_path / "k.s"), Options(arch="gfx1030"))
    assert not an.incomplete
    assert [(w.line, w.instruction) for w in an.waits()] == [(6, "s_waitcnt vmcnt(0)")]
    # the producer is inside the loop of the call: only the macro body can hold the wait
    text = head + "    LOOPLOAD 5\n    s_endpgm\n"
    an = analyze(text, str(tmp_path / "k.s"), Options(arch="gfx1030"))
    errs = [d for d in an.diagnostics if d.code == "wait-inside-macro"]
    assert errs and all(d.line == 5 and "in macro LOOPLOAD (m.inc:" in d.message for d in errs)
    assert an.incomplete == errs


def test_analysis_of_arbitrary_macro_text_is_located_and_never_internal():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    fragments = [".macro m a, b=1", "    global_load_dword v\\a, v[0:1], off", "    v_add_f32 v\\b, v\\a, v\\b", ".endm",
                 "m 1, 2", "m 3", "m b=4, a=5", ".rept 2", ".endr", ".if 1", ".else", ".endif", "L\\@:", "lbl:",
                 "    s_cbranch_scc0 lbl", "    global_load_dword v1, v[2:3], off", "    v_mov_b32 v9, v1",
                 "    s_waitcnt vmcnt(0)", '.include "missing.inc"', "undefined_macro 1"]

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.sampled_from(fragments), max_size=16))
    def run(lines):
        text = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx1030\"\n.text\nk:\n" + "\n".join(lines) + "\n    s_endpgm\n"
        an = analyze(text, "fuzz.s", Options(arch="gfx1030"))
        n = len(text.splitlines())
        assert not [d for d in an.diagnostics if "internal" in d.code]
        assert all(1 <= d.line <= n and d.col < 1000 for d in an.diagnostics)
        assert all(1 <= w.insert_line <= n + 1 for w in an.waits())
        an.inserted_text()

    run()
