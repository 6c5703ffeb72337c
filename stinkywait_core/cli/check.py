"""`stinkywait check PATH...`: review the hand-written waits of many kernels, in parallel.

A path is a kernel file or a folder.  In a folder, `.stir` and `.amdgcn` files are checked,
and `.s`/`.asm` files when they carry an AMDGPU marker (a target directive, an `.amdhsa_*`
block or a `// st.token:` annotation) anywhere: a kernel repository also holds host
assembly.  A file named on the command line is always checked.

Each file is one job: read, analyse, review (`Analysis.check_diagnostics`), present
(`stinkywait_core.findings`: kinds and severities), optionally the exhaustive path check.
Jobs run in worker processes (`--jobs`, default: one per CPU, never more than files) and
come back as plain data (`FileReport`), in the order the files were found, so the output
never depends on which worker finished first.  `report` turns them into text, JSON or SARIF.

A file named on the command line that is host assembly (a `.s`/`.asm` without an AMDGPU
marker, none of whose instructions is an AMDGPU one) is an error, `not-amdgpu`, located at
its first instruction: it is not AMDGPU assembly and nothing was checked.

Exit status (`--fail-on`, `FileReport.failing`): 2 when a file could not be read (or
written); else 1 when a file has an error (by default: a wait proven missing, a parse error,
a file that is not AMDGPU assembly), or, with `--fail-on warning`, anything at warning level
(unproven waits); `--fail-on never` exits 0; else 0.
"""

from __future__ import annotations

import os
import re
import sys

from .. import findings
from ..api import analyze
from ..api import physical_lines as api_lines
from ..diagnostics import ERROR
from ..ir.block_names import BlockNames
from ..results import Options

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any

#: file kinds a folder walk picks up; `.s`/`.asm` only with an AMDGPU marker
ALWAYS = (".stir", ".amdgcn")
MAYBE = (".s", ".asm")
AMDGPU_MARKER = re.compile(r"^[ \t]*\.(?:amdgcn_target|amdhsa_code_object_version|amdhsa_kernel)\b"
                           r"|//[ \t]*st\.token:[ \t]*\d", re.M)
#: the code of the error for a named file that is not AMDGPU assembly
NOT_AMDGPU = "not-amdgpu"
#: folders a walk never enters
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})

_LEVEL_RANK = {"error": 0, "warning": 1, "info": 2, "hint": 3}


class FileReport:
    """What checking one file found, as plain picklable data.

    `findings`: presented review diagnostics (dicts: kind, code, severity, line, column,
    endLine, endColumn, message, related, fix); `diagnostics`: the analysis' own (parse
    errors, warnings) as dicts; `exhaustive`: None, or {"ok", "text", "violations"};
    `error`: why the file could not be read; `skipped`: found in a folder without an AMDGPU
    marker."""

    __slots__ = ("path", "findings", "diagnostics", "exhaustive", "error", "skipped", "has_errors", "lines",
                 "last_len", "ends_with_newline")

    def __init__(self, path: str):
        self.path = path
        self.findings: list[dict[str, Any]] = []
        self.diagnostics: list[dict[str, Any]] = []
        self.exhaustive: dict[str, Any] | None = None
        self.error: str | None = None
        self.skipped = False
        self.has_errors = False
        #: the file's line count, its last line's length and whether a line break ends it
        #: (SARIF needs them to place an insertion after the last line)
        self.lines = 0
        self.last_len = 0
        self.ends_with_newline = True

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, state: tuple) -> None:
        for k, v in zip(self.__slots__, state):
            setattr(self, k, v)

    def failing(self, fail_on: str = "error") -> bool:
        """Whether this file makes `check` exit 1 under `--fail-on`: "error" (the default),
        an error in the file (it does not parse, is not AMDGPU assembly, its target is
        unsupported) or a finding or path-check violation at error level (a wait proven
        missing); "warning", anything at warning level or above too (unproven waits, the
        analysis' warnings); "never", nothing (only an unreadable file fails, with 2)."""
        if fail_on == "never":
            return False
        worst = 0 if fail_on == "error" else 1
        items = list(self.findings) + list(self.diagnostics)
        if self.exhaustive is not None:
            items += self.exhaustive["violations"]
        return self.has_errors or any(_LEVEL_RANK.get(f["severity"], 3) <= worst for f in items)


def discover(paths: list[str], named_too: bool = False) -> list[tuple[str, bool]]:
    """(file, checked whatever it holds) for every path, folders walked in sorted order
    (hidden folders and `node_modules` skipped); each file once.  A file named on the command
    line is checked whatever it holds unless `named_too` (the pre-commit hook, which names
    every staged file)."""
    out: list[tuple[str, bool]] = []
    seen: set[str] = set()

    def add(p: str, explicit: bool) -> None:
        key = os.path.normpath(p) if p != "-" else p
        if key not in seen:
            seen.add(key)
            out.append((p, explicit))

    for p in paths:
        if p != "-" and os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
                for name in sorted(files):
                    if name.lower().endswith(ALWAYS + MAYBE):
                        add(os.path.join(root, name), False)
        else:
            add(p, not named_too)
    return out


def _diag_dict(d: Any) -> dict[str, Any]:
    out = {"severity": d.severity, "code": d.code, "line": d.line, "column": d.col,
           "endLine": d.end_line, "endColumn": d.end_col, "message": d.message,
           "related": [{"line": r.line, "column": r.col, "message": r.message} for r in d.related]}
    data = d.data or {}
    if isinstance(data.get("insert_line"), int) and isinstance(data.get("insert_text"), str):
        out["fix"] = {"insertLine": data["insert_line"], "insertText": data["insert_text"]}
    elif isinstance(data.get("delete_line"), int):
        out["fix"] = {"deleteLine": data["delete_line"]}
    if "kind" in data:
        out["kind"] = data["kind"]
    return out


def _not_amdgpu(an: Any) -> dict[str, Any] | None:
    """The located error for a `.s`/`.asm` file without an AMDGPU marker in which the
    target's instruction table knows no instruction (x86, ARM, RISC-V assembly: `movq`,
    `ret`, `ldr` are no AMDGPU instruction), None when it holds AMDGPU instructions."""
    try:
        target = an.options.target
    except Exception:  # noqa: BLE001 - an unsupported target is reported by the analysis
        return None
    first = None
    for fn in an.module.functions:
        for block in fn.blocks:
            for inst in block.instrs:
                if inst.is_label or inst.is_phi or inst.span is None:
                    continue
                if target.sem(inst).family not in ("other", "unknown"):
                    return None
                if first is None:
                    first = inst
    line, col = (first.span.line, first.span.col) if first is not None else (1, 1)
    what = f"`{first.mnemonic}` is not an AMDGPU instruction" if first is not None else "it holds no instruction"
    return {"severity": ERROR, "code": NOT_AMDGPU, "line": line, "column": col, "endLine": None,
            "endColumn": None, "related": [],
            "message": (f"not AMDGPU assembly: {what} (nor is any other instruction of the file) and it declares "
                        f"no AMDGPU target (.amdgcn_target, .amdhsa_kernel); nothing was checked "
                        f"(--skip-non-amdgpu skips such files)")}


def _exhaustive(module_text: str, path: str, language: str, opts: Options, max_trips: int) -> dict[str, Any]:
    """The path check of the file as written: the hardware checker (validate/hwcheck.py) for
    the file's target, with the LDS address analysis where memtokens prove nothing (as the
    pass), or upstream's spec checker (validate/exhaustive.py) under `--upstream`."""
    from ..macro_sites import wants_expansion
    from ..syntax import language_for, parse
    if opts.model == "upstream":
        from ..validate.exhaustive import check_module, format_result
        as_dict = _spec_violation
    else:
        from ..validate.hwcheck import check_module
        from ..validate.hwreport import format_result
        as_dict = _hw_violation
    if language_for(path, language) == "asm" and wants_expansion(module_text):
        # the expansion, as the pass sees it (macro_sites.py), located at the open file's lines
        from ..macro_sites import finish_spans, parse_expanded
        module, sites = parse_expanded(module_text, path, opts.arch, opts.include_paths, None, opts.defsyms)
        finish_spans(module, sites)
    else:
        module = parse(module_text, path, language)
    names = BlockNames(module, language, quote="")
    ok = True
    texts: list[str] = []
    violations: list[dict[str, Any]] = []
    extra = {} if opts.model == "upstream" else {"lds_addresses": True}  # the pass asks it too
    for res in check_module(module, opts, max_trips=max_trips, **extra):
        text = format_result(res, path, names)
        if text:
            texts.append(text)
        ok = ok and res.ok
        violations.extend(as_dict(v, res, names) for v in res.violations)
    return {"ok": ok, "text": "\n".join(texts), "violations": violations}


def _hw_violation(v: Any, res: Any, names: BlockNames) -> dict[str, Any]:
    from ..validate.hwreport import diagnostic
    d = diagnostic(v, res.target, names)
    c = v.consumer.span
    return {"kind": "exhaustive", "code": d.code, "severity": d.severity, "line": d.line, "column": d.col,
            "endLine": c.end_line if c else None, "endColumn": c.end_col if c else None, "message": d.message,
            "related": [{"line": r.line, "column": r.col, "message": r.message} for r in d.related]}


def _spec_violation(v: Any, res: Any, names: BlockNames) -> dict[str, Any]:
    from ..validate.exhaustive import format_violation
    head, _, rest = format_violation(v, "", names, res.function).partition("\n")
    message = head.split(": error: ", 1)[-1]
    route = rest.rsplit("\n", 1)[-1].strip()
    c, p = v.consumer.span, v.producer.span
    return {"kind": "exhaustive", "code": "exhaustive-violation", "severity": ERROR,
            "line": c.line if c else 1, "column": c.col if c else 1,
            "endLine": c.end_line if c else None, "endColumn": c.end_col if c else None,
            "message": f"{message} ({route})",
            "related": [] if p is None else [{"line": p.line, "column": p.col, "message": "producer issued here"}]}


def check_file(path: str, explicit: bool, options: Options, language: str | None, exhaustive: bool,
               max_trips: int, severity: dict[str, str]) -> FileReport:
    """One file, start to end (runs in a worker process; never raises)."""
    rep = FileReport(path)
    try:
        if path == "-":
            text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
            rep.path = "<stdin>"
        else:
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", errors="replace")
    except OSError as e:
        rep.error = f"cannot read file: {e.strerror or e}"
        return rep
    if not explicit and path.lower().endswith(MAYBE) and not AMDGPU_MARKER.search(text):
        rep.skipped = True
        return rep
    try:
        an = analyze(text, rep.path, options, language)
        if path.lower().endswith(MAYBE) and not AMDGPU_MARKER.search(text):
            foreign = _not_amdgpu(an)
            if foreign is not None:  # named on the command line, but host assembly
                rep.has_errors = True
                rep.diagnostics = [foreign]
                return rep
        physical = api_lines(text)
        rep.lines = len(physical)
        rep.last_len = len(physical[-1]) if physical else 0
        rep.ends_with_newline = not text or text.endswith(("\n", "\r"))
        rep.diagnostics = [_diag_dict(d) for d in an.diagnostics if _LEVEL_RANK.get(d.severity, 3) <= 2]
        # what the analysis could not see (a missing include, an undefined macro or symbol)
        # fails the check as an error does: its results are not a proof
        rep.has_errors = an.has_errors() or bool(an.incomplete)
        if exhaustive:
            # the file's own target (an.options); nothing to check for a target we do not model
            if not any(d.code == "unsupported-target" for d in an.diagnostics):
                rep.exhaustive = _exhaustive(an.module.text, rep.path, an.language, an.options, max_trips)
            return rep
        waits = findings.waits_by_key(an.waits())
        names = BlockNames(an.module, an.language, quote="")
        for d in an.check_diagnostics():
            wait = findings.planned_wait_of(d, waits) if d.code == findings.CORE_MISSING else None
            shown = findings.present(d, wait, severity, names)
            if shown is not None:
                rep.findings.append(_diag_dict(shown))
    except Exception as e:  # noqa: BLE001 - one bad file must not stop the others
        rep.error = f"internal error: {type(e).__name__}: {e}"
    return rep


def _check_args(args: tuple) -> FileReport:
    return check_file(*args)


def run_all(files: list[tuple[str, bool]], options: Options, language: str | None, exhaustive: bool,
            max_trips: int, severity: dict[str, str], jobs: int):
    """The reports of `files`, in order, as they become available (workers when jobs > 1)."""
    args = [(p, explicit, options, language, exhaustive, max_trips, severity) for p, explicit in files]
    jobs = max(1, min(jobs, len(args)))
    if jobs == 1 or any(p == "-" for p, _ in files):
        for a in args:
            yield check_file(*a)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    methods = multiprocessing.get_all_start_methods()
    # fork: the workers start with the core already imported (forkserver elsewhere)
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        yield from pool.map(_check_args, args, chunksize=1)


def parse_severity(specs: list[str] | None) -> tuple[dict[str, str], str | None]:
    """`--severity KIND=LEVEL` options -> (severities, problem)."""
    levels = dict(findings.DEFAULT_SEVERITY)
    for spec in specs or ():
        kind, sep, level = spec.partition("=")
        kind, level = kind.strip(), {"information": "info", "none": "off"}.get(level.strip(), level.strip())
        if not sep or kind not in levels or level not in findings.LEVELS:
            return levels, (f"--severity {spec}: expected KIND=LEVEL with KIND one of "
                            f"{', '.join(sorted(levels))} and LEVEL one of {', '.join(findings.LEVELS)}")
        levels[kind] = level
    return levels, None


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1

