"""stinkywait-opt: option handling, output routing and error reporting."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from stinkywait_core.cli.opt import ABORT_STATUS, UsageError, parse_args, run

GOOD = """st.func @f() {
^entry:
  v[20:21] = "st.ds_load_b64"(v0) { mod.ds = { na = 1, offset = 0, gds = false }, mod.memtoken = { tokens = [0] } }
  a[10:17] = "st.v_wmma_f32_16x16x32_bf16"(v[20:27], v[30:37], a[10:17])
}
"""


def opt(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(list(argv), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def good(tmp_path: Path) -> Path:
    p = tmp_path / "good.stir"
    p.write_text(GOOD)
    return p


def test_parse_args_upstream_forms():
    cfg = parse_args(["--arch", "gfx1250", "in.stir", "--NumWaves", "4", "--StinkyRemoveWaitCntPass=keepTensor,removeXcnt",
                      "--StinkyWaitCntInsertionPass", "--print-output", "-o", "out.stir", "--debug-pass", "x",
                      "--ds-read-order=1", "--remarks"])
    assert cfg.arch == "gfx1250" and cfg.input == "in.stir" and cfg.num_waves == 4
    assert [(p.name, p.args) for p in cfg.passes] == [
        ("StinkyRemoveWaitCntPass", ["keepTensor", "removeXcnt"]), ("StinkyWaitCntInsertionPass", [])]
    assert cfg.print_output and cfg.output == "out.stir" and cfg.warnings == []
    assert parse_args(["x.stir", "--NumWaves=2"]).num_waves == 2
    assert parse_args(["x.stir", "--bogus"]).warnings == ["unknown option '--bogus' ignored"]
    for bad in (["a", "b"], ["--NumWaves=four"], ["-O3", "--StinkyWaitCntInsertionPass"], ["--arch"]):
        with pytest.raises(UsageError):
            parse_args(bad)


def test_print_output_with_arch_header(good: Path):
    status, out, err = opt("--arch", "gfx1250", str(good), "--print-output")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "Target architecture: gfx1250"
    assert lines[1] == "st.func @f() {"
    assert lines[3].startswith('    v[20:21] = "st.ds_load_b64"(v0) { issueCycles = 1, latencyCycles = 52')


def test_no_arch_no_header_and_no_output_flag_prints_nothing(good: Path):
    assert opt(str(good)) == (0, "", "")


def test_emit_asm(good: Path):
    status, out, _ = opt(str(good), "--emit-asm")
    assert status == 0
    assert out == ("ds_load_b64 v[20:21], v0\n"
                   "v_wmma_f32_16x16x32_bf16 a[10:17], v[20:27], v[30:37], a[10:17]\n")


def test_output_file(good: Path, tmp_path: Path):
    target = tmp_path / "o.stir"
    status, out, _ = opt(str(good), "--print-output", "-o", str(target))
    assert status == 0 and out == ""
    assert target.read_text().startswith("st.func @f() {\n")


def test_unknown_pass_and_option_warn_and_continue(good: Path):
    status, out, err = opt(str(good), "--MadeUpPass=x", "--frobnicate", "--print-output")
    assert status == 0
    assert "unknown pass 'MadeUpPass' skipped" in err
    assert "unknown option '--frobnicate' ignored" in err
    assert out.startswith("st.func @f()")


def test_bad_input_is_located_error(tmp_path: Path):
    p = tmp_path / "bad.stir"
    p.write_text('st.func @f() {\n^entry:\n  v1 = "st.v_add_f32"(v2,, v3)\n}\n')
    status, out, err = opt(str(p), "--print-output")
    assert status == 1 and out == ""
    assert err == f"{p}:3:26: error: unexpected ','; expected an operand\n"


def test_unknown_successor_is_located_error(tmp_path: Path):
    p = tmp_path / "succ.stir"
    p.write_text('st.func @f() {\n^entry:\n  Successors: ^gone\n}\n')
    status, _, err = opt(str(p), "--print-output")
    assert status == 1
    assert err == f"{p}:3:15: error: unknown successor block '^gone'\n"


def test_missing_input_file(tmp_path: Path):
    status, _, err = opt(str(tmp_path / "nope.stir"))
    assert status == 1 and "cannot read" in err and "nope.stir" in err
    status, _, err = opt()
    assert status == 1 and "no input file" in err


def test_help_version_list():
    assert opt("--help")[1].startswith("usage: stinkywait-opt")
    assert "stinkywait-opt" in opt("--version")[1]
    assert "StinkyWaitCntInsertionPass" in opt("--list-passes")[1]


def test_validation_failure_aborts_without_output(tmp_path: Path):
    p = tmp_path / "missing.stir"
    p.write_text(GOOD)
    status, out, err = opt(str(p), "--StinkyBuildImplicitDependencyPass", "--WaitCntValidationCheckPass",
                           "--print-output")
    assert status == ABORT_STATUS and out == ""
    assert err.startswith("[WaitCntValidationCheck] ERROR: 1 missing s_wait_* dependency violation(s):\n")
    assert "MISSING" in err and "ds_load_b64" in err
    assert err.rstrip().endswith("missing s_wait_* for in-flight async memory dependency")


def test_insertion_then_validation_passes(good: Path):
    status, out, err = opt(str(good), "--StinkyBuildImplicitDependencyPass", "--StinkyWaitCntInsertionPass",
                           "--WaitCntValidationCheckPass", "--print-output")
    assert status == 0, err
    waits = [line for line in out.splitlines() if "s_wait_dscnt" in line]
    assert waits == ['    "st.s_wait_dscnt"(0) { issueCycles = 1, latencyCycles = 1, '
                     'mod.swaitcnt = { vlcnt = -1, vscnt = -1, dlcnt = 0, dscnt = -1, kmcnt = -1 } }']


@pytest.mark.parametrize("payload", [b"\x00\xff\xfe garbage {{{ \n}", b"st.func @f() {\n^entry:\n  \"st.",
                                     b"\xc3\x28 not utf8\n"])
def test_console_script_never_tracebacks(tmp_path: Path, payload: bytes):
    p = tmp_path / "junk.stir"
    p.write_bytes(payload)
    script = Path(sys.executable).parent / "stinkywait-opt"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "stinkywait_core.cli.opt"]
    proc = subprocess.run([*cmd, str(p), "--StinkyBuildImplicitDependencyPass", "--StinkyWaitCntInsertionPass",
                           "--print-output"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"{p}:1:") or proc.stderr.startswith(f"{p}:3:")
    assert ": error: " in proc.stderr


def test_asm_input_keeps_its_text_and_splices_edits(tmp_path: Path):
    p = tmp_path / "k.s"
    p.write_text("kernel:\n  ds_load_b64 v[0:1], v10 offset:16\n  s_wait_dscnt 0\n  v_add_f32 v2, v0, v1\n"
                 "  s_endpgm\n")
    status, out, err = opt(str(p), "--StinkyRemoveWaitCntPass")
    assert status == 0, err
    assert out == "kernel:\n  ds_load_b64 v[0:1], v10 offset:16\n  v_add_f32 v2, v0, v1\n  s_endpgm\n"
    p.write_text(out)
    status, out, err = opt(str(p), "--StinkyWaitCntInsertionPass", "--emit-asm")
    assert status == 0, err
    assert out == ("kernel:\n  ds_load_b64 v[0:1], v10 offset:16\n  s_wait_dscnt 0\n  v_add_f32 v2, v0, v1\n"
                   "  s_endpgm\n")


def test_stdin_input(monkeypatch: pytest.MonkeyPatch):
    class FakeStdin:
        buffer = io.BytesIO(GOOD.encode())

    monkeypatch.setattr(sys, "stdin", FakeStdin())
    status, out, err = opt("-", "--emit-asm")
    assert status == 0, err
    assert out.startswith("ds_load_b64 v[20:21], v0\n")


def test_pass_arguments_reach_the_passes(good: Path):
    status, _, err = opt(str(good), "--StinkyWaitCntInsertionPass=enableLoopCarriedTokenDeps,bogusArg",
                         "--StinkyRemoveWaitCntPass=removeKmcnt,nope")
    assert status == 0
    assert "unknown StinkyWaitCntInsertionPass argument 'bogusArg' ignored" in err
    assert "unknown StinkyRemoveWaitCntPass argument 'nope' ignored" in err
    assert "enableLoopCarriedTokenDeps" not in err and "removeKmcnt" not in err
