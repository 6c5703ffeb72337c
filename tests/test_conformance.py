"""The upstream FileCheck corpus (../shared/conformance/upstream/*.stir) run through stinkywait-opt.

Each file's last `# RUN:` line is executed through a shell with `%stinkytofu-opt` replaced
by our console script, and stdout is checked by the `filecheck` package.  Upstream uses its
own small checker (formats.md section 1): only lines whose first non-blank character is `#`
hold directives, so we hand filecheck a check file rebuilt from exactly those lines instead
of letting it scan the STIR bodies.  Files listed in conformance_expected_failures.txt are
strict xfails, so a fix shows up as an XPASS failure that asks for the list to be updated.
"""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from stinkywait_core.cli.opt import run as opt_run
from stinkywait_core.syntax.stir_parser import parse_stir
from stinkywait_core.syntax.stir_printer import print_module_stir

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "conformance" / "upstream"
EXPECTED_FAILURES = Path(__file__).resolve().parent / "conformance_expected_failures.txt"
DIRECTIVES = ("CHECK-NEXT", "CHECK-SAME", "CHECK-NOT", "CHECK-DAG", "CHECK-LABEL", "CHECK")
_DIRECTIVE_RE = re.compile(r"#\s*(" + "|".join(DIRECTIVES) + r"):(.*)\Z")
_REGEX_PART_RE = re.compile(r"\{\{(.*?)\}\}")


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.stir")) if CORPUS.is_dir() else []


def expected_failures() -> dict[str, str]:
    """File name -> reason, from the expected-failures list (blank and `#` lines skipped)."""
    out: dict[str, str] = {}
    if EXPECTED_FAILURES.exists():
        for line in EXPECTED_FAILURES.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, reason = line.partition(" ")
                out[name] = reason.strip() or "listed as expected failure"
    return out


@dataclass
class UpstreamTest:
    """The directives of one corpus file, as upstream's checker reads them."""

    run: str | None
    xfail: bool
    checks: list[tuple[str, str]] = field(default_factory=list)


def read_directives(text: str) -> UpstreamTest:
    test = UpstreamTest(None, False)
    for line in text.splitlines():
        body = line.strip()
        if not body.startswith("#"):
            continue
        rest = body[1:].strip()
        if rest.startswith("RUN:"):
            test.run = rest[4:].strip()  # the last RUN line wins
        elif rest.startswith("XFAIL"):
            test.xfail = True
        else:
            m = _DIRECTIVE_RE.match("#" + rest)
            if m:
                test.checks.append((m.group(1), m.group(2).strip()))
    return test


def to_filecheck_pattern(pattern: str) -> str:
    """Upstream substring + `{{re}}` pattern -> filecheck syntax (`[[` would mean a variable)."""
    out: list[str] = []
    last = 0
    for m in _REGEX_PART_RE.finditer(pattern):
        out.append(_literal(pattern[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_literal(pattern[last:]))
    return "".join(out)


def _literal(text: str) -> str:
    if "[[" in text or "{{" in text:
        return "{{" + re.escape(text) + "}}"
    return text


def check_file_text(test: UpstreamTest) -> str:
    return "".join(f"{kind}: {to_filecheck_pattern(pat)}\n" for kind, pat in test.checks)


def opt_command() -> str:
    """How to invoke our stinkywait-opt from a shell (the venv's console script)."""
    script = Path(sys.executable).parent / "stinkywait-opt"
    if script.exists():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m stinkywait_core.cli.opt"


def filecheck_command() -> list[str]:
    script = Path(sys.executable).parent / "filecheck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "filecheck"]


@dataclass
class Outcome:
    ok: bool
    message: str


def run_corpus_file(path: Path, workdir: Path) -> Outcome:
    """Run one corpus file like upstream's harness; `ok` when exit status and checks agree."""
    test = read_directives(path.read_text(encoding="utf-8"))
    if test.run is None:
        return Outcome(False, "no RUN line")
    if not test.checks:
        return Outcome(False, "no CHECK lines")
    cmd = test.run.replace("%stinkytofu-opt", opt_command()).replace("%s", shlex.quote(str(path.resolve())))
    proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=workdir, timeout=300)
    problems: list[str] = []
    if "Traceback" in proc.stderr or "internal error" in proc.stderr:
        problems.append("crashed:\n" + proc.stderr[-3000:])
    if test.xfail and proc.returncode == 0:
        problems.append("XFAIL test exited 0 (a non-zero exit is the expected result)")
    check = workdir / (path.stem + ".check")
    check.write_text(check_file_text(test), encoding="utf-8")
    fc = subprocess.run([*filecheck_command(), str(check)], input=proc.stdout, capture_output=True,
                        text=True, timeout=120)
    if fc.returncode != 0:
        problems.append("filecheck:\n" + (fc.stdout + fc.stderr)[-4000:])
    if problems:
        return Outcome(False, f"$ {cmd}\n(exit {proc.returncode})\n" + "\n".join(problems)
                       + "\n--- stdout ---\n" + proc.stdout[-4000:] + "\n--- stderr ---\n" + proc.stderr[-2000:])
    return Outcome(True, "")


def _params() -> list[object]:
    xf = expected_failures()
    out: list[object] = []
    for p in corpus_files():
        marks = [pytest.mark.xfail(strict=True, reason=xf[p.name])] if p.name in xf else []
        out.append(pytest.param(p, id=p.stem, marks=marks))
    return out


@pytest.fixture(scope="module")
def tally(request: pytest.FixtureRequest):
    """Collects outcomes and prints `conformance: N/M passed` at the end of the module."""
    results: dict[str, bool] = {}
    yield results
    if results:
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        failed = sorted(k for k, ok in results.items() if not ok)
        line = f"conformance: {sum(results.values())}/{len(results)} upstream corpus files pass"
        if failed:
            line += " (failing: " + ", ".join(failed) + ")"
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        workeroutput = getattr(request.config, "workeroutput", None)
        if workeroutput is not None:  # a pytest-xdist worker: tests/conftest.py sums and prints
            workeroutput["conformance"] = (sum(results.values()), len(results), failed)
        elif reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line("")
                reporter.write_line(line)
        else:  # pragma: no cover - running without the terminal/capture plugins
            print(line)


needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/conformance/upstream not present")


@needs_corpus
@pytest.mark.parametrize("path", _params())
def test_upstream_file(path: Path, tmp_path: Path, tally: dict[str, bool]) -> None:
    outcome = run_corpus_file(path, tmp_path)
    tally[path.name] = outcome.ok
    assert outcome.ok, outcome.message


@needs_corpus
def test_expected_failures_name_real_files() -> None:
    names = {p.name for p in corpus_files()}
    unknown = sorted(set(expected_failures()) - names)
    assert not unknown, f"conformance_expected_failures.txt lists missing files: {unknown}"


@needs_corpus
def test_corpus_has_59_main_files() -> None:
    assert len(corpus_files()) == 59


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem)
def test_print_output_without_passes_is_a_fixed_point(path: Path) -> None:
    """`--print-output` with no pass prints cleanly and re-parses to the same text."""
    out, err = io.StringIO(), io.StringIO()
    status = opt_run([str(path), "--print-output"], out, err)
    assert status == 0, err.getvalue()
    assert err.getvalue() == ""
    printed = out.getvalue()
    assert printed.startswith("st.func @")
    again = parse_stir(printed, "printed.stir")
    assert again.diagnostics == []
    assert print_module_stir(again) == printed
    original = parse_stir(path.read_text(encoding="utf-8"), str(path))
    assert [f.name for f in again.functions] == [f.name for f in original.functions]
    assert [len(list(f.instructions())) for f in again.functions] == \
        [len(list(f.instructions())) for f in original.functions]


def test_directive_reader_follows_upstream_rules() -> None:
    text = ("# RUN: first\n# RUN: %stinkytofu-opt %s --print-output\n# XFAIL: aborts\n"
            "#--- a comment with CHECK: inside is not a directive\n"
            "  # CHECK-NEXT: s_wait_dscnt 2\n"
            '  v0 = "st.v_add_f32"(v1) # CHECK: not at line start\n'
            "# CHECK-SAME: tokens = [0] {{.*}} [[x]]\n")
    t = read_directives(text)
    assert t.run == "%stinkytofu-opt %s --print-output"
    assert t.xfail
    assert t.checks == [("CHECK-NEXT", "s_wait_dscnt 2"), ("CHECK-SAME", "tokens = [0] {{.*}} [[x]]")]
    assert to_filecheck_pattern(t.checks[1][1]) == r"tokens = [0] {{.*}}{{\ \[\[x\]\]}}"
