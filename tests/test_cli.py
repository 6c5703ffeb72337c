"""`stinkywait plan / insert / check`: output, exit codes, located errors, atomic writes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from proggen import DIAMOND

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, "..", "shared")
EXAMPLE = os.path.join(ROOT, "examples", "gemm_loop.s")
GEMM1 = os.path.join(SHARED, "corpus", "asm", "aiter_gfx1250_mxscale_gemm1_final_isa.s")
GEMM2 = os.path.join(SHARED, "corpus", "asm", "aiter_gfx1250_mxscale_gemm2_final_isa.s")


ASM = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
\t.text
k:
\tglobal_load_b128 v[0:3], v[10:11], off
\tds_load_b128 v[4:7], v20 // st.token:0
\tv_add_f32 v8, v0, v4
\ts_endpgm
"""


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stinkywait_core.cli.main", *args], input=stdin,
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.fixture
def diamond(tmp_path):
    p = tmp_path / "d.stir"
    p.write_text(DIAMOND)
    return p


@pytest.fixture
def asm(tmp_path):
    p = tmp_path / "k.s"
    p.write_text(ASM)
    return p


def test_plan_json_shape(diamond):
    r = run("plan", str(diamond), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data) == {"file", "options", "diagnostics", "functions"}
    (fn,) = data["functions"]
    assert set(fn) == {"name", "waits", "diagnostics"}
    waits = fn["waits"]
    # the merge overwrites v100, the address of a load still in flight on ^p_deep: gfx1250
    # xcnt (write-after-read on the source of an in-flight op)
    assert [(w["block"], w["instruction"], w["placement"]) for w in waits] == [
        ("p_shallow", "s_wait_loadcnt 1", "after"), ("merge", "s_wait_loadcnt 3", "before"),
        ("merge", "s_wait_xcnt 1", "before")]
    for w in waits:
        assert set(w) == {"line", "column", "block", "where", "placement", "instruction", "counter", "count",
                          "reason", "deps"}
        assert w["where"] == f"^{w['block']}"  # STIR names its blocks: the label is the name
    assert [w["counter"] for w in waits] == ["load", "load", "x"]
    assert waits[2]["reason"].startswith("WAR (war-xcnt): buffer_load_b128 (line 9)")
    merge = waits[1]
    assert merge["line"] == 15 and merge["column"] == 3
    assert [(d["line"], d["mnemonic"], d["block"], d["pred"], d["countFrom"], d["path"]) for d in merge["deps"]] == [
        (3, "buffer_load_b128", "entry", "p_deep", 4, "^p_deep")]


def test_reasons_say_their_rule_once():
    """The rule class is said once: "RAW: ..." or "WAR (war-xcnt): ...", never "RAW: raw: ..."
    (plan --json's reasons and check's missing-wait messages, which the editor shows)."""
    ex = os.path.join(os.path.dirname(__file__), "..", "examples", "gemm_loop.s")
    r = run("plan", "--json", ex)
    reasons = [w["reason"] for fn in json.loads(r.stdout)["functions"] for w in fn["waits"]]
    from stinkywait_core.api import analyze
    with open(ex) as f:
        an = analyze(f.read(), ex)
    messages = [d.message for d in an.check_diagnostics() if d.code == "missing-wait"]
    assert reasons and messages
    repeated = re.compile(r"(^|\()([A-Za-z-]+)(?: \([a-z-]+\))?: \2: ", re.I)
    for text in reasons + messages:
        assert not repeated.search(text), text
    assert any(t.startswith("RAW: ") for t in reasons)


def test_plan_text_lists_every_wait(asm):
    r = run("plan", str(asm))
    assert r.returncode == 0
    assert "s_wait_loadcnt 0" in r.stdout and "s_wait_dscnt 0" in r.stdout
    assert f"{asm}:6:2:" in r.stdout


def test_insert_to_stdout_and_file(asm, tmp_path):
    r = run("insert", str(asm), "-o", "-")
    assert r.returncode == 0
    # one program point waiting on loads and LDS: gfx12's combined form, as LLVM writes it
    assert r.stdout == ASM.replace("\tv_add_f32", "\ts_wait_loadcnt_dscnt 0x0\n\tv_add_f32")
    out = tmp_path / "out.s"
    r = run("insert", str(asm), "-o", str(out))
    assert r.returncode == 0 and out.read_text() == r.stdout + run("insert", str(asm)).stdout[len(r.stdout):]


def test_insert_explain_and_idempotence(asm, tmp_path):
    r = run("insert", str(asm), "--explain")
    assert "// stinkywait: RAW" in r.stdout
    once = tmp_path / "once.s"
    once.write_text(run("insert", str(asm)).stdout)
    assert run("insert", str(once)).stdout == once.read_text()


def test_insert_in_place_is_atomic_and_keeps_mode(asm):
    os.chmod(asm, 0o640)
    r = run("insert", str(asm), "--in-place")
    assert r.returncode == 0
    assert "s_wait_loadcnt_dscnt 0x0" in asm.read_text()
    assert (os.stat(asm).st_mode & 0o777) == 0o640
    assert not [f for f in os.listdir(asm.parent) if f.startswith(".stinkywait-")]


def test_insert_in_place_never_touches_a_file_with_errors(tmp_path):
    p = tmp_path / "bad.stir"
    text = DIAMOND.replace('"st.v_add_f32"(v0, v0)', '"st.v_add_f32"(v0, v0')
    p.write_text(text)
    r = run("insert", str(p), "--in-place")
    assert r.returncode == 1
    assert p.read_text() == text
    assert f"{p}:15:" in r.stderr and "error" in r.stderr
    assert "Traceback" not in r.stderr


def test_replace_waits_strips_rebuildable_waits(tmp_path):
    p = tmp_path / "w.s"
    p.write_text(ASM.replace("\tv_add_f32", "\ts_wait_loadcnt 0x0\n\ts_wait_dscnt 0x0\n\tv_add_f32"))
    assert run("plan", str(p), "--json").stdout.count('"instruction"') == 0
    r = run("insert", str(p), "--replace-waits")
    assert r.stdout == run("insert", str(p.parent / "w.s"), "--replace-waits").stdout
    assert r.stdout.count("s_wait_loadcnt_dscnt 0x0") == 1 and r.stdout.count("s_wait_") == 1


def test_check_reports_missing_and_redundant(tmp_path, asm):
    r = run("check", str(asm))
    assert r.returncode == 1
    assert "missing s_wait_dscnt 0" in r.stdout and "[missing-wait]" in r.stdout
    assert "note: ds_load_b128 sets the count: countFrom 1" in r.stdout
    ok = tmp_path / "ok.s"
    ok.write_text(run("insert", str(asm)).stdout.replace("\ts_endpgm", "\ts_wait_dscnt 0x0\n\ts_endpgm"))
    r = run("check", str(ok))
    assert r.returncode == 0, r.stdout
    assert "redundant s_wait_dscnt" in r.stdout and "[redundant-wait]" in r.stdout


def test_check_exhaustive(asm, tmp_path):
    r = run("check", "--exhaustive", str(asm))
    assert r.returncode == 1
    fixed = tmp_path / "fixed.s"
    fixed.write_text(run("insert", str(asm)).stdout)
    r = run("check", "--exhaustive", str(fixed))
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("sub", ["plan", "insert", "check"])
def test_bad_input_is_located_never_a_traceback(sub, tmp_path):
    missing = tmp_path / "nope.s"
    r = run(sub, str(missing))
    assert r.returncode == 2
    assert r.stderr.startswith(f"{missing}:1:1: error:")
    garbage = tmp_path / "g.s"
    garbage.write_bytes(bytes(range(256)) * 40 + b"\n\xff\xfe v_add v[1:\n")
    r = run(sub, str(garbage))
    assert r.returncode in (0, 1)
    assert "Traceback" not in r.stderr + r.stdout
    assert f"{garbage}:" in r.stderr


def test_usage_errors_exit_2(asm):
    assert run().returncode == 2
    assert run("insert", str(asm), "--in-place", "-o", "x").returncode == 2
    assert run("frobnicate").returncode == 2


def test_stdin_input():
    r = run("plan", "-", "--language", "asm", stdin=ASM)
    assert r.returncode == 0 and "s_wait_dscnt 0" in r.stdout


@pytest.mark.skipif(not os.path.exists(GEMM1), reason="../shared is absent")
def test_real_gemms_get_waits(tmp_path):
    for path in (GEMM1, GEMM2):
        r = run("plan", path, "--replace-waits", "--json")
        assert r.returncode == 0
        waits = json.loads(r.stdout)["functions"][0]["waits"]
        counters = {w["counter"] for w in waits}
        assert {"ds", "tensor"} <= counters, counters


def test_demo_example_plans():
    r = run("plan", EXAMPLE, "--json")
    assert r.returncode == 0
    waits = json.loads(r.stdout)["functions"][0]["waits"]
    assert {w["counter"] for w in waits} >= {"ds", "tensor", "load", "km"}


# --- start-up ---------------------------------------------------------------------------------

ARGVS = [
    ["plan", "k.s"], ["plan", "k.s", "--json"], ["plan", "-", "--language", "asm"], ["plan", "--language=stir", "x"],
    ["plan", "k.s", "--num-waves", "4", "--upstream", "--exact"], ["plan", "k.s", "--num-waves=-1"],
    ["plan", "--num-waves", "-1", "k.s"], ["plan", "k.s", "--arch", "gfx950", "--no-optimize", "--replace-waits"],
    ["plan", "k.s", "--loop-carried-token-deps", "--tensor-descriptor-war", "--json", "--json"],
    ["insert", "k.s", "-o", "-"], ["insert", "k.s", "--output=o.s", "--explain"], ["insert", "-", "--in-place"],
    ["insert", "k.s", "-o", "-1"], ["check", "k.s", "--exhaustive", "--max-trips", "3"], ["check", "k.s", "--max-trips=0"],
    ["plan", "k.s", "--output", "x"], ["plan"], ["plan", "a", "b"], ["plan", "k.s", "--num"], ["plan", "k.s", "--num-waves"],
    ["plan", "k.s", "--num-waves", "x"], ["plan", "k.s", "--num-waves", "+3"], ["plan", "k.s", "--language", "c"],
    ["plan", "k.s", "--json=1"], ["plan", "k.s", "-h"], ["plan", "k.s", "--arch", "--json"], ["frob", "k.s"], [],
    ["insert", "k.s", "-ox"], ["plan", "--", "k.s"], ["check", "k.s", "--max-trips", "٣"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a) or "<none>")
def test_fast_command_line_is_argparse(argv, capsys):
    """`fast_namespace` gives what argparse gives, or defers to it (None)."""
    from stinkywait_core.cli.main import build_parser, fast_namespace
    fast = fast_namespace(argv)
    try:
        slow = vars(build_parser().parse_args(argv))
    except SystemExit:
        slow = None
    capsys.readouterr()
    if fast is not None:
        assert vars(fast) == slow


def test_cli_start_up_imports_only_what_a_plan_needs():
    """No import-hook editable install (pathlib/urllib at every start), and neither the STIR
    parser (lark), argparse nor json on the way to planning an asm file."""
    code = ("import sys; before = set(sys.modules); import stinkywait_core.cli.main as m; "
            "from stinkywait_core.syntax import parse; parse('s_nop 0\\n', 'k.s'); "
            "print(' '.join(sorted(before)), '|', ' '.join(sorted(set(sys.modules) - before)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE, check=True)
    at_start, loaded = (part.split() for part in r.stdout.split("|"))
    assert not {"pathlib", "urllib"} & set(at_start), "an import-hook editable install: run `make venv`"
    assert not {"lark", "argparse", "json", "stinkywait_core.syntax.stir_parser"} & set(loaded)
    r = subprocess.run([sys.executable, "-c", "import sys, stinkywait_core.results, stinkywait_core.syntax.asm_parser; "
                        "print('dataclasses' in sys.modules, 'typing' in sys.modules)"],
                       capture_output=True, text=True, cwd=HERE, check=True)
    assert r.stdout.split() == ["False", "False"]  # the records, the IR and the asm front end need neither


def test_options_replace_is_dataclasses_replace():
    """`Options` is no dataclass (importing `dataclasses` costs every start-up ~8 ms) but the
    dataclasses functions still work on it."""
    import dataclasses

    from stinkywait_core.results import Options
    opts = Options(num_waves=2, optimize=False)
    assert opts.replace(replace_waits=True, arch="gfx950") == dataclasses.replace(opts, replace_waits=True, arch="gfx950")
    assert opts.replace() == opts and opts.replace() is not opts
    with pytest.raises(TypeError):
        opts.replace(no_such_option=1)
    with pytest.raises(TypeError):
        dataclasses.replace(opts, no_such_option=1)
    assert dataclasses.is_dataclass(opts)
    assert [(f.name, f.default) for f in dataclasses.fields(Options)][:2] == [("num_waves", 0), ("arch", "gfx1250")]
    assert dataclasses.asdict(opts)["num_waves"] == 2 and len(dataclasses.asdict(opts)) == 15
    assert hash(opts) == hash(Options(num_waves=2, optimize=False)) and {opts: 1}[Options(2, optimize=False)] == 1


# -- what a person reads: the target's words, the source's block names, one producer per wait --

GFX942 = os.path.join(SHARED, "corpus", "asm", "aiter_gfx942_flatmm_uk_f16f8_128x256x128.s")
GFX12_WORDS = re.compile(r"\b(?:dscnt|loadcnt|kmcnt|storecnt|xcnt|s_wait_\w+)\b")
INTERNAL = ("^", "kMaxInFlight", "WaitDataflow")


def _overflow(path, target: str, load: str) -> str:
    """A kernel with 70 loads in flight in a block the front end splits off without a label."""
    body = "".join(f"\t{load} v{i}, v[100:101], off\n" for i in range(70))
    path.write_text(f'\t.amdgcn_target "amdgcn-amd-amdhsa--{target}"\n\t.text\nk:\n\ts_cmp_eq_u32 s0, 0\n'
                    f"\ts_cbranch_scc1 .Lend\n\tv_mov_b32 v200, 0\n{body}\tv_add_f32 v150, v0, v1\n"
                    ".Lend:\n\ts_endpgm\n")
    return str(path)


def test_plan_is_one_line_per_wait_with_its_producer_path_and_the_rest_counted():
    r = run("plan", EXAMPLE)
    assert r.returncode == 0, r.stderr
    ds = [ln for ln in r.stdout.splitlines() if "s_wait_dscnt 0" in ln]
    # the wait, the producer that sets its count, the path in the source's names, +N more, the
    # predicted stall (the second WMMA's 4 ds_loads reach it by 2 paths: 8 producer entries, 3
    # other producer lines; the first WMMA keeps its own `s_wait_dscnt 4`: folding it into one
    # wait would stall the first WMMA for the last loads, docs/decisions.md 42)
    assert len(ds) == 1 and ds[0].startswith(
        f"  {EXAMPLE}:59:2: s_wait_dscnt 0 in .LBB0_1 [RAW]: set by ds_load_b128 "
        "L57 (countFrom 1) on the path from the entry and .LBB0_1; +3 more  ~")
    assert ds[0].endswith(" cycles stall (per trip of .LBB0_1)")
    assert f"{EXAMPLE}:58:2: s_wait_dscnt 4 in .LBB0_1" in r.stdout
    # a scalar load only a wait of 0 retires, whatever its countFrom, says why
    assert "s_wait_kmcnt 0 in the entry [RAW]: set by s_load_b64 L17 (countFrom 4; SMEM completes out of order)" \
        in r.stdout
    # the block split off after line 66 is named by where it starts (its bias wait: by default
    # CoalesceWaits folds it into the loop's `s_wait_loadcnt_dscnt`, at no stall)
    spec = run("plan", "--coalesce", "0", EXAMPLE).stdout
    assert "s_wait_loadcnt 0 in the block after line 66 [RAW]" in spec
    for word in INTERNAL + (".LBB0_1_1", "@gemm_loop"):
        assert word not in r.stdout + r.stderr, word
    every = run("plan", "--explain", EXAMPLE).stdout
    line = next(ln for ln in every.splitlines() if "s_wait_dscnt 0" in ln)
    assert "also drains " + ", ".join(f"ds_load_b128 L{n} (countFrom {58 - n})" for n in range(54, 57)) in line
    assert line.count("ds_load_b128") == 4, "each producer once, not once per path"
    data = json.loads(run("plan", "--json", EXAMPLE).stdout)
    w = next(w for f in data["functions"] for w in f["waits"] if w["instruction"] == "s_wait_dscnt 0")
    assert len(w["deps"]) == 8 and {d["path"] for d in w["deps"]} == {"the entry", ".LBB0_1"}
    assert w["where"] == ".LBB0_1"


def test_path_checks_name_blocks_as_the_source_does():
    """gemm_loop.s (gfx1250) as written has no waits: both path checkers report violations,
    each with the path that exposes it, in the source's names."""
    for extra in ((), ("--upstream",)):
        r = run("check", "--exhaustive", *extra, EXAMPLE)
        assert r.returncode == 1 and "path: the entry" in r.stdout, r.stdout
        for word in INTERNAL + (".LBB0_1_1",):
            assert word not in r.stdout + r.stderr, (extra, word)


def test_insert_explain_says_the_producer_and_path_in_the_sources_names():
    r = run("insert", "--explain", EXAMPLE)
    comments = [ln.split("// ", 1)[1] for ln in r.stdout.splitlines() if "// stinkywait:" in ln]
    assert "stinkywait: RAW: ds_load_b128 L57 (countFrom 1) on the path from the entry and .LBB0_1; +3 more" in comments
    assert not [c for c in comments if any(w in c for w in INTERNAL + ("@",))], comments


@pytest.mark.skipif(not os.path.exists(GFX942), reason="needs ../shared/corpus")
def test_gfx942_output_speaks_gfx9_and_names_blocks_as_written():
    plan = run("plan", GFX942)
    check = run("check", GFX942)
    sarif = run("check", "--format", "sarif", GFX942)
    js = run("check", "--format", "json", GFX942)
    exhaustive = run("check", "--exhaustive", GFX942)
    # (with the ds_read offset expressions evaluated and the publish rule, decision 45, the kernel
    # as written needs nothing more: no hazard, no wait, no finding)
    assert "exhaustive check passed" in exhaustive.stdout
    for r in (plan, check, sarif, js, exhaustive, run("insert", "--explain", GFX942)):
        out = r.stdout + r.stderr
        assert not GFX12_WORDS.search(out), out[:2000]
        for word in INTERNAL + ("L_start0_2", "_1x4x1_16x16x32_1"):
            assert word not in out, (word, out[:2000])
    assert "0 waits" in plan.stdout and "0 missing waits, 0 unproven" in check.stdout
    # waits are quoted in the gfx9 spelling (the vmcnt(16) the review used to call redundant at
    # line 738 drains the loop's LDS DMA once the ds_read offsets are read right: no hint now)
    assert "s_waitcnt 16" not in check.stdout


@pytest.mark.parametrize("target,load,counter,kind", [("gfx942", "global_load_dword", "vmcnt", "VMEM"),
                                                      ("gfx1250", "global_load_b32", "loadcnt", "VMEM load")])
def test_a_queue_past_its_limit_is_said_in_kernel_writer_words(tmp_path, target, load, counter, kind):
    k = _overflow(tmp_path / "k.s", target, load)
    for r in (run("plan", k), run("check", k), run("check", "--format", "json", k)):
        out = r.stdout + r.stderr
        for word in INTERNAL + ("k_1",):
            assert word not in out, (word, out)
    r = run("plan", k)
    assert (f"k.s:71:2: warning: more than 64 {kind} ops may be in flight on {counter} in the block after line 5: "
            f"{load} (line 7) and older ones are waited for with the count capped at 62") in r.stderr
