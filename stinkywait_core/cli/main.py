"""`stinkywait`: plan / insert / check for users' kernels (`.s`, `.asm`, `.stir`).

Exit codes: 0 ok; 1 the input has errors (parse errors, waits proven missing found by
`check`, or what `check --fail-on` names); 2 usage or I/O problems.  Every error is a located `file:line:col: error: ...` line; no
traceback ever reaches the user, and `--in-place` writes atomically or not at all.

Start-up is part of every run's cost, so the command line is read by `fast_namespace` (exact
option spellings, from the same option table as the `argparse` parser) and `argparse` is
imported only for help, abbreviations and usage errors; `json` only for `--json`.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    import argparse
    from typing import Any, Callable

    from ..api import Analysis
    from ..results import Options

# (the analysis modules are imported where they are used, not here: `console_main` pauses the
# cyclic collector before importing them, whose module objects it would otherwise scan)


def _options(ns: argparse.Namespace) -> Options:
    """The analysis options of a command line.  Loop-carried tensor state is on unless
    `--no-loop-carried-token-deps` (or `--upstream`, upstream's whole set of choices)."""
    from ..results import Options
    kw = dict(num_waves=ns.num_waves, arch=ns.arch,
              enable_loop_carried_token_deps=ns.loop_carried_token_deps or not (
                  ns.no_loop_carried_token_deps or ns.upstream),
              enable_tensor_descriptor_war=ns.tensor_descriptor_war,
              optimize=not ns.no_optimize,
              replace_waits=ns.replace_waits,
              coalesce_window=max(-1, ns.coalesce),
              include_paths=tuple(getattr(ns, "include_dirs", None) or ()),
              defsyms=tuple(getattr(ns, "defsyms", None) or ()),
              latency_overrides=getattr(ns, "latency_overrides", ()))
    if ns.upstream:
        return Options.upstream(**kw)
    return Options(bounded=not ns.exact, **kw)


def _defsym(text: str) -> tuple[str, int]:
    """``NAME=VALUE`` (VALUE an integer expression) for --defsym; argparse reports a bad one."""
    import argparse
    from ..syntax.asm_expr import eval_expr
    name, eq, value = text.partition("=")
    v = eval_expr(value) if eq else None
    if not name.strip() or v is None:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE with an integer VALUE, got {text!r}")
    return name.strip(), v


def _check_target(ns: argparse.Namespace) -> bool:
    """An --arch we do not model is a usage error (exit 2) that lists the supported targets;
    a file's own `.amdgcn_target` is checked by the analysis (a located error)."""
    from ..targets import UnsupportedTarget, get_target
    try:
        get_target(ns.arch, "upstream" if ns.upstream else "hw")
    except UnsupportedTarget as exc:
        print(f"stinkywait: error: --arch: {exc}", file=sys.stderr)
        return False
    return True


def _read(path: str) -> str | None:
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8", errors="replace")
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except OSError as e:
        print(f"{path}:1:1: error: cannot read file: {e.strerror or e}", file=sys.stderr)
        return None


def _print_diags(an: Analysis, min_severity: str = "warning") -> None:
    order = {"error": 0, "warning": 1, "info": 2, "hint": 3}
    for d in an.diagnostics:
        if order.get(d.severity, 3) <= order[min_severity]:
            print(d.format(an.path), file=sys.stderr)


def _load(ns: argparse.Namespace, opts: Options) -> Analysis | None:
    text = _read(ns.file)
    if text is None:
        return None
    from ..api import analyze
    return analyze(text, ns.file if ns.file != "-" else "<stdin>", opts, ns.language)


def cmd_plan(ns: argparse.Namespace) -> int:
    an = _load(ns, _options(ns))
    if an is None:
        return 2
    if ns.json:
        import json
        print(json.dumps(an.to_json(), indent=2))
        return 1 if an.has_errors() else 0
    _print_diags(an, "info")
    from ..ir.block_names import BlockNames
    from ..wording import wait_text
    names = BlockNames(an.module, an.language, quote="")
    target = an._target_model()
    for f in an.functions:
        print(f"{f.name}: {len(f.waits)} wait{'s' if len(f.waits) != 1 else ''}"
              + ("" if f.converged else " (iteration cap hit: forced full drains)"))
        for w in sorted(f.waits, key=lambda w: w.insert_line):
            st = an.wait_stall(w)
            cost = "" if st is None else f"  ~{st.per_trip} cycles stall" + (
                f" (per trip of {names.block(w.function, st.loop)})" if st.loop else "")
            print(f"  {an.path}:{w.line}:{w.column}: {wait_text(w, names, ns.explain, target)}{cost}")
    return 1 if an.has_errors() else 0


def cmd_insert(ns: argparse.Namespace) -> int:
    from ..api import atomic_write
    from ..diagnostics import ERROR
    an = _load(ns, _options(ns))
    if an is None:
        return 2
    _print_diags(an)
    incomplete = {id(d) for d in an.incomplete}
    if any(d.severity == ERROR and id(d) not in incomplete for d in an.diagnostics):
        print(f"{an.path}: error: not writing: the file has errors (fix them first)", file=sys.stderr)
        return 1
    if an.incomplete and not ns.allow_incomplete:
        n = len(an.incomplete)
        print(f"{an.path}: error: not writing: the analysis is incomplete ({n} located message{'s' if n != 1 else ''} "
              f"above: what stinkywait could not see or place); --allow-incomplete writes the waits it found anyway",
              file=sys.stderr)
        return 1
    text = an.inserted_text(explain=ns.explain)
    try:
        if ns.in_place:
            if ns.file == "-":
                print("<stdin>:1:1: error: --in-place needs a file", file=sys.stderr)
                return 2
            atomic_write(ns.file, text)
        elif ns.output and ns.output != "-":
            atomic_write(ns.output, text)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except OSError as e:
        target = ns.file if ns.in_place else ns.output
        print(f"{target}:1:1: error: cannot write: {e.strerror or e}", file=sys.stderr)
        return 2
    n = len(an.waits())
    print(f"{an.path}: inserted {n} wait{'s' if n != 1 else ''}", file=sys.stderr)
    return 0


def cmd_check(ns: argparse.Namespace) -> int:
    """Review the hand-written waits of every kernel under the paths (see `cli/check.py`)."""
    from ..api import atomic_write
    from . import check, report
    severity, problem = check.parse_severity(ns.severity)
    if problem:
        print(f"stinkywait: error: {problem}", file=sys.stderr)
        return 2
    if ns.jobs is not None and ns.jobs < 1:
        print("stinkywait: error: --jobs must be at least 1", file=sys.stderr)
        return 2
    files = check.discover(ns.paths, named_too=ns.skip_non_amdgpu)
    reports = check.run_all(files, _options(ns), ns.language, ns.exhaustive, ns.max_trips, severity,
                            ns.jobs or check.default_jobs())
    out = sys.stdout
    sink = None
    if ns.output and ns.output != "-":
        import io
        sink = out = io.StringIO()
    failing = unreadable = False
    done: list = []
    text = report.TextReport(out, sys.stderr) if ns.format == "text" else None
    for rep in reports:
        failing = failing or rep.failing(ns.fail_on)
        unreadable = unreadable or rep.error is not None
        if text is not None:
            text.add(rep)
        else:
            done.append(rep)
    if text is not None:
        text.finish()
    elif ns.format == "json":
        report.write_document(report.json_document(done), out)
    else:
        report.write_document(report.sarif_document(done), out)
    if sink is not None:
        try:
            atomic_write(ns.output, sink.getvalue())
        except OSError as e:
            print(f"{ns.output}:1:1: error: cannot write: {e.strerror or e}", file=sys.stderr)
            return 2
    return 2 if unreadable else 1 if failing else 0


#: The command line, as data: (option strings, `add_argument` keywords).  `build_parser` makes
#: the argparse parser from it and `fast_namespace` reads the common case with it.
COMMON_OPTIONS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (("--num-waves",), dict(type=int, default=0, metavar="N",
                            help="waves per workgroup (1: tensor RAW drains at each consumer)")),
    (("--arch",), dict(default="gfx1250", help="target when the file does not declare one (.amdgcn_target)")),
    (("--language",), dict(choices=["stir", "asm"], default=None,
                           help="override the front end chosen from the extension")),
    (("--loop-carried-token-deps",), dict(action="store_true",
                                          help="enableLoopCarriedTokenDeps: tensor state crosses back edges "
                                               "(the default)")),
    (("--no-loop-carried-token-deps",), dict(action="store_true",
                                             help="upstream's tensor freeze: tensor state does not cross back "
                                                  "edges (may miss a fill still running from the last trip)")),
    (("--tensor-descriptor-war",), dict(action="store_true", help="enableTensorDescriptorWar")),
    (("--replace-waits",), dict(action="store_true",
                                help="strip rebuildable waits (dscnt, loadcnt, tensorcnt, asynccnt) first")),
    (("--no-optimize",), dict(action="store_true", help="disable ShallowPredPromotion")),
    (("--coalesce",), dict(type=int, default=-1, metavar="N",
                           help="CoalesceWaits: fold a wait into an earlier one of the same counter up to N "
                                "instructions before it (0: one wait per first consumer; default: 128 on "
                                "assembly, 0 on STIR; docs/decisions.md 42)")),
    (("-I", "--include-dir"), dict(action="append", default=None, metavar="DIR", dest="include_dirs",
                                   help="search DIR for .include files (after the including file's folder; "
                                        "repeatable, in order)")),
    (("--defsym",), dict(action="append", default=None, metavar="NAME=VALUE", dest="defsyms", type=_defsym,
                         help="define a symbol before the file, as llvm-mc's --defsym (repeatable)")),
    (("--latency-model",), dict(default=None, metavar="FILE",
                                help="a JSON or TOML file of latency-model overrides (docs/latency-model.md): "
                                     "prices placements and predicts stall, never decides safety")),
    (("--exact",), dict(action="store_true", help="no widening: the exact per-predecessor iteration (may be slow)")),
    (("--upstream",), dict(action="store_true",
                           help="upstream stinkytofu's model and choices: five counters, its rules, "
                                "oldest-instance countFrom, empty paths dropped, no widening, tensor freeze "
                                "(docs/decisions.md 20-24)")),
]
#: command -> (help, its own options, handler)
COMMANDS: dict[str, tuple[str, list[tuple[tuple[str, ...], dict[str, Any]]], Callable[[Any], int]]] = {
    "plan": ("show where waits go and why", [
        (("--json",), dict(action="store_true", help="every wait with every producer, as JSON")),
        (("--explain",), dict(action="store_true",
                              help="list every producer a wait drains (default: the one that sets its count, +N more)")),
    ], cmd_plan),
    "insert": ("write the file with the waits inserted", [
        (("-o", "--output"), dict(default=None, help="output file, - for stdout (default)")),
        (("--in-place",), dict(action="store_true", help="rewrite FILE atomically")),
        (("--explain",), dict(action="store_true", help="add the provenance as a comment")),
        (("--allow-incomplete",), dict(action="store_true",
                                       help="write even when the analysis is incomplete (a missing include, an "
                                            "undefined macro or symbol, a wait only a macro body could hold)")),
    ], cmd_insert),
    "check": ("review hand-written waits of files and folders", [
        (("--exhaustive",), dict(action="store_true",
                                 help="prove the waits on every CFG path (independent path checker)")),
        (("--max-trips",), dict(type=int, default=2, help="loop trips explored by --exhaustive")),
        (("--format",), dict(choices=["text", "json", "sarif"], default="text",
                             help="text (default), json, or sarif (SARIF 2.1.0 for code scanning)")),
        (("--output",), dict(default=None, metavar="FILE", help="write the report here (default: stdout)")),
        (("-j", "--jobs"), dict(type=int, default=None, metavar="N",
                                help="files checked in parallel (default: one per CPU)")),
        (("--fail-on",), dict(choices=["error", "warning", "never"], default="error",
                              help="exit 1 when a finding at this level or above is reported: error (default: "
                                   "waits proven missing, files with errors), warning (also unproven waits), "
                                   "never")),
        (("--skip-non-amdgpu",), dict(action="store_true",
                                      help="skip named .s/.asm files without an AMDGPU marker (as in folders)")),
        (("--severity",), dict(action="append", default=None, metavar="KIND=LEVEL",
                               help="severity of a finding kind (missing, unproven, redundant, stricter): "
                                    "error, warning, info, hint or off; repeatable")),
    ], cmd_check),
}
FILE_HELP = "a .s/.asm/.amdgcn or .stir file, or - for standard input"
PATHS_HELP = "kernel files and folders (folders: .stir, .amdgcn, and .s/.asm with an AMDGPU marker), or -"
#: commands that take several paths (`paths`) instead of one FILE (`file`)
MULTI = frozenset({"check"})


def build_parser() -> argparse.ArgumentParser:
    import argparse
    common = argparse.ArgumentParser(add_help=False)
    for flags, kw in COMMON_OPTIONS:
        common.add_argument(*flags, **kw)
    p = argparse.ArgumentParser(prog="stinkywait", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, (help_text, options, func) in COMMANDS.items():
        sp = sub.add_parser(name, parents=[common], help=help_text)
        if name in MULTI:
            sp.add_argument("paths", nargs="+", help=PATHS_HELP)
        else:
            sp.add_argument("file", help=FILE_HELP)
        for flags, kw in options:
            sp.add_argument(*flags, **kw)
        sp.set_defaults(func=func)
    return p


def _dest(flags: tuple[str, ...], kw: dict[str, Any]) -> str:
    """The attribute argparse stores an option under (first long spelling, dashes as '_')."""
    long = next((f for f in flags if f.startswith("--")), flags[0])
    return kw.get("dest") or long.lstrip("-").replace("-", "_")


def fast_namespace(argv: list[str]) -> SimpleNamespace | None:
    """The namespace `build_parser().parse_args(argv)` gives, for the common command lines.

    Accepts a command, one FILE (or ``-``; several paths for `check`), and options spelled
    exactly (``--opt value`` or ``--opt=value``), with integers in plain decimal.  Returns None for anything else (help,
    abbreviations, missing or extra arguments, bad values), which argparse then reads and
    reports exactly as before.
    """
    if not argv or argv[0] not in COMMANDS:
        return None
    _, options, func = COMMANDS[argv[0]]
    table: dict[str, tuple[str, dict[str, Any]]] = {}
    values: dict[str, Any] = {"cmd": argv[0]}
    for flags, kw in COMMON_OPTIONS + options:
        dest = _dest(flags, kw)
        values[dest] = False if kw.get("action") == "store_true" else kw.get("default")
        for f in flags:
            table[f] = (dest, kw)
    multi = argv[0] in MULTI
    files: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            if files and not multi:
                return None
            files.append(arg)
            continue
        name, eq, value = arg.partition("=")
        spec = table.get(name)
        if spec is None:
            return None
        dest, kw = spec
        if kw.get("action") == "store_true":
            if eq:
                return None
            values[dest] = True
            continue
        if kw.get("action") is not None:  # e.g. "append": argparse reads those
            return None
        if not eq:
            if i >= len(argv):
                return None
            value = argv[i]
            i += 1
            if value.startswith("-") and value != "-" and not value[1:].isdigit():
                return None
        if kw.get("type") is int:
            digits = value[1:] if value.startswith("-") else value
            if not (digits.isascii() and digits.isdigit()):
                return None
            value = int(value)
        elif "choices" in kw and value not in kw["choices"]:
            return None
        values[dest] = value
    if not files:
        return None
    if multi:
        values["paths"] = files
    else:
        values["file"] = files[0]
    values["func"] = func
    return SimpleNamespace(**values)


def main(argv: list[str] | None = None) -> int:
    ns = fast_namespace(sys.argv[1:] if argv is None else argv)
    if ns is None:
        try:
            ns = build_parser().parse_args(argv)
        except SystemExit as e:  # argparse already printed a usage message
            return 2 if e.code else 0
    if getattr(ns, "in_place", False) and getattr(ns, "output", None):
        print("stinkywait: error: --in-place and -o are exclusive", file=sys.stderr)
        return 2
    if not _check_target(ns):
        return 2
    if getattr(ns, "latency_model", None):
        from ..targets.latency import LatencyModelError, load_overrides
        try:
            ns.latency_overrides = load_overrides(ns.latency_model)
        except LatencyModelError as exc:
            print(exc, file=sys.stderr)
            return 2
    try:
        return ns.func(ns)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `| head`: not an error of the input
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # last line of defence: a located message, never a traceback
        where = getattr(ns, "file", None) or (getattr(ns, "paths", None) or ["stinkywait"])[0]
        print(f"{where}:1:1: error: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


def console_main() -> None:
    """The `stinkywait` command: `main()` without the cyclic garbage collector (paused before
    the analysis modules are imported: ~5 M machine instructions of a cold run went to
    scanning their new objects), then exit without tearing the interpreter down.

    One process reads one file and ends: everything it allocates is released at exit, and
    the parse and the pass already pause the collector (`ir.bulk_construction`).  Left on, it
    scanned the whole plan again after the analysis (~5 ms of a cold run); and freeing a
    plan's hundreds of thousands of objects one by one at exit cost about a tenth of the run,
    where the operating system reclaims the memory at once.  The standard streams are flushed
    first (nothing else is left open).  Library callers use `main()`, which returns and
    leaves the collector alone.
    """
    import gc
    gc.disable()
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (`| head`): not an error of the input
        pass
    os._exit(status)


if __name__ == "__main__":
    console_main()
