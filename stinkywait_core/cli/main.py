"""`stinkywait`: plan / insert / check for users' kernels (`.s`, `.asm`, `.stir`).

Exit codes: 0 ok; 1 the input has errors (parse errors, missing waits found by `check`);
2 usage or I/O problems.  Every error is a located `file:line:col: error: ...` line; no
traceback ever reaches the user, and `--in-place` writes atomically or not at all.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from ..api import Analysis, analyze, atomic_write
from ..diagnostics import ERROR, WARNING
from ..results import Options


def _options(ns: argparse.Namespace) -> Options:
    kw = dict(num_waves=ns.num_waves, arch=ns.arch,
              enable_loop_carried_token_deps=ns.loop_carried_token_deps,
              enable_tensor_descriptor_war=ns.tensor_descriptor_war,
              optimize=not ns.no_optimize,
              replace_waits=ns.replace_waits)
    if ns.upstream:
        return Options.upstream(**kw)
    return Options(bounded=not ns.exact, **kw)


def _read(path: str) -> str | None:
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8", errors="replace")
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except OSError as e:
        print(f"{path}:1:1: error: cannot read file: {e.strerror or e}", file=sys.stderr)
        return None


def _print_diags(an: Analysis, min_severity: str = WARNING) -> None:
    order = {"error": 0, "warning": 1, "info": 2, "hint": 3}
    for d in an.diagnostics:
        if order.get(d.severity, 3) <= order[min_severity]:
            print(d.format(an.path), file=sys.stderr)


def _load(ns: argparse.Namespace, opts: Options) -> Analysis | None:
    text = _read(ns.file)
    if text is None:
        return None
    return analyze(text, ns.file if ns.file != "-" else "<stdin>", opts, ns.language)


def cmd_plan(ns: argparse.Namespace) -> int:
    an = _load(ns, _options(ns))
    if an is None:
        return 2
    if ns.json:
        print(json.dumps(an.to_json(), indent=2))
        return 1 if an.has_errors() else 0
    _print_diags(an, "info")
    for f in an.functions:
        print(f"@{f.name}: {len(f.waits)} wait{'s' if len(f.waits) != 1 else ''}"
              + ("" if f.converged else " (iteration cap hit: forced full drains)"))
        for w in sorted(f.waits, key=lambda w: w.insert_line):
            where = "before" if w.placement == "before" else "after"
            deps = "; ".join(f"{d.mnemonic} line {d.line}" + (f" via ^{d.pred}" if d.pred else "")
                             + f" countFrom {d.count_from}" for d in w.deps)
            print(f"  {an.path}:{w.line}:{w.column}: {w.instruction:<20} {where} ^{w.block}  "
                  f"[{w.rule}] {deps or w.reason}")
    return 1 if an.has_errors() else 0


def cmd_insert(ns: argparse.Namespace) -> int:
    an = _load(ns, _options(ns))
    if an is None:
        return 2
    _print_diags(an)
    if an.has_errors():
        print(f"{an.path}: error: not writing: the file has errors (fix them first)", file=sys.stderr)
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
    opts = _options(ns)
    an = _load(ns, opts)
    if an is None:
        return 2
    _print_diags(an)
    errors = an.has_errors()
    if ns.exhaustive:
        from ..syntax import parse
        from ..validate.exhaustive import check_module, format_result
        module = parse(an.module.text, an.path, an.language)
        for res in check_module(module, opts, max_trips=ns.max_trips):
            text = format_result(res, an.path)
            if text:
                print(text)
            if not res.ok:
                errors = True
        print(f"{an.path}: exhaustive check {'failed' if errors else 'passed'}")
        return 1 if errors else 0
    diags = an.check_diagnostics()
    for d in diags:
        print(d.format(an.path) + f" [{d.code}]")
        for r in d.related:
            print(f"{an.path}:{r.line}:{r.col}: note: {r.message}")
    missing = sum(1 for d in diags if d.code == "missing-wait")
    other = len(diags) - missing
    print(f"{an.path}: {missing} missing wait{'s' if missing != 1 else ''}, "
          f"{other} redundant or stricter than needed")
    return 1 if errors or missing else 0


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("file", help="a .s/.asm/.amdgcn or .stir file, or - for standard input")
    common.add_argument("--num-waves", type=int, default=0, metavar="N",
                        help="waves per workgroup (1: tensor RAW drains at each consumer)")
    common.add_argument("--arch", default="gfx1250")
    common.add_argument("--language", choices=["stir", "asm"], default=None,
                        help="override the front end chosen from the extension")
    common.add_argument("--loop-carried-token-deps", action="store_true",
                        help="enableLoopCarriedTokenDeps: tensor state crosses back edges")
    common.add_argument("--tensor-descriptor-war", action="store_true",
                        help="enableTensorDescriptorWar")
    common.add_argument("--replace-waits", action="store_true",
                        help="strip rebuildable waits (dscnt, loadcnt, tensorcnt, asynccnt) first")
    common.add_argument("--no-optimize", action="store_true", help="disable ShallowPredPromotion")
    common.add_argument("--exact", action="store_true",
                        help="no widening: the exact per-predecessor iteration (may be slow)")
    common.add_argument("--upstream", action="store_true",
                        help="upstream's choices: oldest-instance countFrom, empty paths dropped, "
                             "no widening (docs/decisions.md 20-23)")
    p = argparse.ArgumentParser(prog="stinkywait", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pl = sub.add_parser("plan", parents=[common], help="show where waits go and why")
    pl.add_argument("--json", action="store_true")
    pl.set_defaults(func=cmd_plan)
    ins = sub.add_parser("insert", parents=[common], help="write the file with the waits inserted")
    ins.add_argument("-o", "--output", default=None, help="output file, - for stdout (default)")
    ins.add_argument("--in-place", action="store_true", help="rewrite FILE atomically")
    ins.add_argument("--explain", action="store_true", help="add the provenance as a comment")
    ins.set_defaults(func=cmd_insert)
    ck = sub.add_parser("check", parents=[common], help="review hand-written waits")
    ck.add_argument("--exhaustive", action="store_true",
                    help="prove the waits on every CFG path (independent path checker)")
    ck.add_argument("--max-trips", type=int, default=2, help="loop trips explored by --exhaustive")
    ck.set_defaults(func=cmd_check)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as e:  # argparse already printed a usage message
        return 2 if e.code else 0
    if getattr(ns, "in_place", False) and getattr(ns, "output", None):
        print("stinkywait: error: --in-place and -o are exclusive", file=sys.stderr)
        return 2
    try:
        return ns.func(ns)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `| head`: not an error of the input
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # last line of defence: a located message, never a traceback
        print(f"{ns.file}:1:1: error: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
