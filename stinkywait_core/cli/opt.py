"""`stinkywait-opt`: a drop-in for upstream's `stinkytofu-opt` on the wait-count passes.

The command line follows formats.md section 2 so the upstream FileCheck corpus runs
unchanged: passes run in command-line order over every function, `--print-output` dumps
STIR, `--emit-asm` prints assembly.  Bad input is reported as `file:line:col: error: ...`
with exit status 1, never as a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, TextIO

from ..diagnostics import ERROR, Diagnostic, SourceError
from ..ir import Function, Instruction, Module
from ..results import Options

VERSION = "stinkywait-opt 0.1.0 (stinkytofu-opt compatible wait-count passes)"

#: passes we run, with the module that implements each (imported on first use)
PASS_MODULES = {
    "StinkyBuildImplicitDependencyPass": "stinkywait_core.analysis.implicit_deps",
    "StinkyWaitCntInsertionPass": "stinkywait_core.waitcnt.pipeline",
    "StinkyRemoveWaitCntPass": "stinkywait_core.waitcnt.remove",
    "WaitCntValidationCheckPass": "stinkywait_core.validate.upstream",
}
#: upstream passes whose work our insertion pass does internally: accepted silently
NO_OP_PASSES = frozenset({"BuildUseDefChainPass"})
#: upstream flags that take a value (as `--flag=v` or `--flag v`); accepted and ignored
VALUE_FLAGS = frozenset({
    "--debug-pass", "--from-label", "--to-label", "--vgpr-msb-mode", "--ds-read-order",
    "--ds-read-queue-depth", "--ds-read-drain-latency", "--ds-read-throttle-latency",
    "--ds-read-per-wmma", "--global-read-queue-depth", "--global-read-drain-latency",
    "--TileA0", "--TileB0", "--TileM0", "--NumGRA", "--NumGRB", "--NumGRM",
})
#: upstream boolean flags accepted and ignored
IGNORED_FLAGS = frozenset({"--remarks", "--verify-each", "--time-passes", "--preserve-symbolic-regs"})
REMOVE_ARGS = {"keepTensor": "keep_tensor", "removeKmcnt": "remove_kmcnt", "removeXcnt": "remove_xcnt"}
INSERT_ARGS = {"enableLoopCarriedTokenDeps", "enableTensorDescriptorWar", "safe"}
FATAL_VALIDATION = "FATAL ERROR: missing s_wait_* for in-flight async memory dependency"
#: exit status of an upstream abort (report_fatal_error -> SIGABRT, as a shell reports it)
ABORT_STATUS = 134

USAGE = """usage: stinkywait-opt [--arch gfxNNNN] <input.stir|input.s> [--<PassName>[=arg,...]]... [flags]

passes (run in command-line order on every function):
  --StinkyBuildImplicitDependencyPass
  --StinkyWaitCntInsertionPass[=enableLoopCarriedTokenDeps,enableTensorDescriptorWar]
  --StinkyRemoveWaitCntPass[=keepTensor|removeKmcnt|removeXcnt]
  --WaitCntValidationCheckPass
flags:
  --NumWaves=N        waves per workgroup (0 = unknown)
  --print-output      print every function as STIR after the passes
  --emit-asm          print assembly instead (implied for .s input)
  --preserve-comments keep instruction comments in emitted assembly
  -o FILE             write the output to FILE
  --list-passes, --version, --help
"""


class UsageError(Exception):
    """A command-line mistake: reported as `stinkywait-opt: error: ...`, exit 1."""


@dataclass
class PassRequest:
    name: str
    args: list[str] = field(default_factory=list)


@dataclass
class OptConfig:
    """The parsed command line."""

    arch: str | None = None
    input: str | None = None
    num_waves: int = 0
    passes: list[PassRequest] = field(default_factory=list)
    print_output: bool = False
    emit_asm: bool = False
    preserve_comments: bool = False
    output: str | None = None
    opt_level: str | None = None
    warnings: list[str] = field(default_factory=list)
    action: str | None = None  # "help" | "version" | "list-passes"


def _int_value(flag: str, text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise UsageError(f"{flag} expects an integer, got '{text}'") from None


def parse_args(argv: list[str]) -> OptConfig:
    """Upstream's hand-rolled option syntax (`--Pass=a,b`, `--NumWaves 4`, `-o file`)."""
    cfg = OptConfig()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name, eq, value = arg.partition("=")

        def take() -> str:
            nonlocal i
            if eq:
                return value
            if i >= len(argv):
                raise UsageError(f"{name} expects a value")
            i += 1
            return argv[i - 1]

        if arg in ("-h", "--help"):
            cfg.action = "help"
        elif arg == "--version":
            cfg.action = "version"
        elif arg == "--list-passes":
            cfg.action = "list-passes"
        elif name == "--arch":
            cfg.arch = take()
        elif name == "--NumWaves":
            cfg.num_waves = _int_value(name, take())
        elif name == "-o" or (arg.startswith("-o") and len(arg) > 2 and not arg.startswith("--")):
            cfg.output = take() if name == "-o" else arg[2:]
        elif arg == "--print-output":
            cfg.print_output = True
        elif arg == "--emit-asm":
            cfg.emit_asm = True
        elif arg == "--preserve-comments":
            cfg.preserve_comments = True
        elif arg in ("-O0", "-O1", "-O2", "-O3"):
            cfg.opt_level = arg
        elif name in VALUE_FLAGS:
            take()
        elif arg in IGNORED_FLAGS:
            pass
        elif arg.startswith("--") and name.endswith("Pass"):
            cfg.passes.append(PassRequest(name[2:], [a for a in value.split(",") if a] if eq else []))
        elif arg.startswith("-") and arg != "-":
            cfg.warnings.append(f"unknown option '{arg}' ignored")
        elif cfg.input is None:
            cfg.input = arg
        else:
            raise UsageError(f"more than one input file ('{cfg.input}', '{arg}')")
    if cfg.opt_level is not None and cfg.passes:
        raise UsageError(f"{cfg.opt_level} cannot be combined with explicit pass flags")
    return cfg


@dataclass
class RunState:
    """What the passes produced so far: diagnostics and the exit status to report."""

    path: str
    err: TextIO
    status: int = 0

    def report(self, diags: list[Diagnostic]) -> None:
        for d in diags:
            self.err.write(d.format(self.path) + "\n")
            if d.severity == ERROR:
                self.status = 1


def _load(pass_name: str, err: TextIO) -> object | None:
    """The module of a pass, or None (with a warning) while it is not available."""
    module_name = PASS_MODULES[pass_name]
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        err.write(f"stinkywait-opt: warning: {pass_name} is not available ({exc}); skipped\n")
        return None


def _options(cfg: OptConfig, args: list[str]) -> Options:
    """Upstream's choices by default (this is the upstream-compatible driver): upstream's
    model, oldest-instance countFrom and no empty-path queues, still bounded so no input can
    hang it.  The pass argument `safe` selects what every stinkywait command uses: the whole
    hardware model, its safe defaults and loop-carried tensor state (docs/decisions.md 20-24,
    28)."""
    safe = "safe" in args
    return Options(num_waves=cfg.num_waves, arch=cfg.arch or "gfx1250",
                   enable_loop_carried_token_deps=safe or "enableLoopCarriedTokenDeps" in args,
                   enable_tensor_descriptor_war="enableTensorDescriptorWar" in args,
                   count_from_instance="newest" if safe else "oldest",
                   represent_empty_paths=safe, model="hw" if safe else "upstream")


def _run_pass(req: PassRequest, cfg: OptConfig, module: Module, state: RunState) -> bool:
    """Run one pass over every function; False means the run aborted (validation failure)."""
    if req.name in NO_OP_PASSES:
        return True
    if req.name not in PASS_MODULES:
        state.err.write(f"stinkywait-opt: warning: unknown pass '{req.name}' skipped\n")
        return True
    mod = _load(req.name, state.err)
    if mod is None:
        return True
    options = _options(cfg, req.args)
    run: Callable[[Function], bool]
    if req.name == "StinkyBuildImplicitDependencyPass":
        def run(func: Function) -> bool:
            state.report(list(mod.build_implicit_dependencies(func)))
            return True
    elif req.name == "StinkyWaitCntInsertionPass":
        for a in req.args:
            if a not in INSERT_ARGS:
                state.err.write(f"stinkywait-opt: warning: unknown {req.name} argument '{a}' ignored\n")

        def run(func: Function) -> bool:
            state.report(list(mod.run_insertion(func, options).diagnostics))
            return True
    elif req.name == "StinkyRemoveWaitCntPass":
        flags = {v: False for v in REMOVE_ARGS.values()}
        for a in req.args:
            if a in REMOVE_ARGS:
                flags[REMOVE_ARGS[a]] = True
            else:
                state.err.write(f"stinkywait-opt: warning: unknown StinkyRemoveWaitCntPass argument '{a}' ignored\n")

        def run(func: Function) -> bool:
            mod.remove_waitcnts(func, **flags)
            return True
    else:
        def run(func: Function) -> bool:
            violations = list(mod.validation_check(func, options))
            if not violations:
                return True
            state.err.write(f"[WaitCntValidationCheck] ERROR: {len(violations)} missing s_wait_* "
                            "dependency violation(s):\n")
            for v in violations:
                state.err.write(v.rstrip("\n") + "\n")
            state.err.write(FATAL_VALIDATION + "\n")
            state.status = ABORT_STATUS
            return False
    return all(run(func) for func in module.functions)


def _source_lines(module: Module) -> list[tuple[Instruction, int]]:
    """Every instruction the input text holds, with its line.

    The instructions themselves are kept (not just their ids) so that one a pass deletes
    stays alive and its id cannot be reused by an instruction the pass creates.
    """
    return [(i, i.span.line) for f in module.functions for i in f.instructions()
            if i.span is not None and not i.inserted]


def _render_asm_source(module: Module, before: list[tuple[Instruction, int]], preserve_comments: bool) -> str:
    """An assembly input given back as its own text with the passes' edits spliced in.

    Upstream re-prints `.s` input from its IR; our asm front end keeps the text instead, so
    the output diffs cleanly: inserted waits become whole lines before the instruction they
    precede (after the block's last instruction for a tail drain) and instructions a pass
    removed are dropped.
    """
    from ..api import apply_insertions
    from ..syntax.asm_printer import indentation_for
    from ..syntax.stir_printer import format_asm_instruction, with_comment

    present = {id(i) for f in module.functions for i in f.instructions()}
    drop = {line for inst, line in before if id(inst) not in present}
    insertions: list[tuple[int, str]] = []
    for func in module.functions:
        for block in func.blocks:
            pending: list[str] = []
            last_line = block.span.line if block.span is not None else 1
            for inst in block.instrs:
                if inst.inserted or inst.span is None:
                    text = format_asm_instruction(inst)
                    if preserve_comments and inst.comment:
                        text = with_comment(text, inst.comment)
                    pending.append(text)
                    continue
                last_line = inst.span.line
                insertions.extend((last_line, indentation_for(module, last_line) + t) for t in pending)
                pending = []
            insertions.extend((last_line + 1, indentation_for(module, last_line) + t) for t in pending)
    return apply_insertions(module.text, insertions, drop)


def _render(cfg: OptConfig, module: Module, before: list[tuple[Instruction, int]]) -> str:
    from ..syntax.stir_printer import print_module_asm, print_module_stir

    if module.kind == "asm":
        return _render_asm_source(module, before, cfg.preserve_comments)
    if cfg.emit_asm:
        return print_module_asm(module, cfg.preserve_comments)
    if cfg.print_output:
        return print_module_stir(module)
    return ""


def _read_input(path: str) -> str:
    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", errors="replace")


def run(argv: list[str], out: TextIO, err: TextIO) -> int:
    """The whole tool with explicit streams (tests call this in-process)."""
    try:
        cfg = parse_args(argv)
    except UsageError as exc:
        err.write(f"stinkywait-opt: error: {exc}\n")
        return 1
    if cfg.action == "help":
        out.write(USAGE)
        return 0
    if cfg.action == "version":
        out.write(VERSION + "\n")
        return 0
    if cfg.action == "list-passes":
        out.write("".join(f"  {p}\n" for p in PASS_MODULES))
        return 0
    for w in cfg.warnings:
        err.write(f"stinkywait-opt: warning: {w}\n")
    if cfg.input is None:
        err.write("stinkywait-opt: error: no input file\n" + USAGE)
        return 1
    if cfg.opt_level is not None:
        err.write(f"stinkywait-opt: warning: {cfg.opt_level} pipelines are not modelled; no pass runs\n")
    if cfg.arch is not None:
        out.write(f"Target architecture: {cfg.arch}\n")
    try:
        text = _read_input(cfg.input)
    except OSError as exc:
        err.write(f"stinkywait-opt: error: cannot read '{cfg.input}': {exc.strerror or exc}\n")
        return 1
    from ..syntax import parse

    try:
        # stdin has no extension to tell the language by: it is read as STIR
        module = parse(text, cfg.input, language="stir" if cfg.input == "-" else None)
    except ImportError as exc:
        err.write(f"stinkywait-opt: error: no front end for '{cfg.input}' ({exc})\n")
        return 1
    state = RunState(cfg.input, err)
    state.report(module.diagnostics)
    if state.status:
        return state.status
    before = _source_lines(module)
    try:
        for req in cfg.passes:
            if not _run_pass(req, cfg, module, state):
                return state.status
    except SourceError as exc:
        state.report([exc.diag])
        return 1
    text_out = _render(cfg, module, before)
    if cfg.output is not None and cfg.output != "-":
        try:
            with open(cfg.output, "w", encoding="utf-8") as fh:
                fh.write(text_out)
        except OSError as exc:
            err.write(f"stinkywait-opt: error: cannot write '{cfg.output}': {exc.strerror or exc}\n")
            return 1
    else:
        out.write(text_out)
    return state.status


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point.

    Internal errors are reported in one line instead of a traceback (set
    STINKYWAIT_TRACEBACK=1 to see the traceback when debugging a pass).
    """
    args = sys.argv[1:] if argv is None else argv
    try:
        status = run(args, sys.stdout, sys.stderr)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get("STINKYWAIT_TRACEBACK"):
            raise
        sys.stderr.write(f"stinkywait-opt: internal error: {type(exc).__name__}: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
