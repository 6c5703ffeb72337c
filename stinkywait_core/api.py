"""The library's front door: `analyze(text, path, options)` -> `Analysis`.

Parses a `.stir` or `.s` file, runs the pass over every function (every kernel of an asm
file), and keeps the plan with its provenance, the FIFO snapshots and the diagnostics.  The
CLIs and the language server render exactly this; they never re-run parts of the pass.

With an `AnalysisCache` (one per document in the language server), each function is carried
from one version to the next: unchanged instructions keep their objects, the def-use chains
are re-solved only for the register units an edit touches, and the dataflow's block walks
are memoised (waitcnt/incremental.py); the result is always the from-scratch one.
"""

from __future__ import annotations

import os
from functools import partial
from operator import is_
TYPE_CHECKING = False  # (no `typing` / `dataclasses` imports on a cold command's path)
if TYPE_CHECKING:
    from typing import Any, Callable

from .analysis.implicit_deps import build_implicit_dependencies
from .cache import AnalysisCache, Chain, adopt
from .diagnostics import ERROR, Diagnostic
from .findings import rule_reason
from .ir import Instruction, Module, bulk_construction
from .results import FunctionResult, Options, PlannedWait
from .syntax import language_for, parse
from .syntax.asm_needs import needs_expansion
from .targets import UnsupportedTarget
from .textlines import apply_insertions, physical_lines
from .waitcnt.emit import make_wait
from .waitcnt.incremental import FunctionMemo
from .waitcnt.pipeline import PassOutput, plan_function
from .waitcnt.remove import should_remove
from .waitcnt.stall import PointStall, StallRun, planned_points, simulate


class Analysis:
    """One analysed file.

    `removed_lines`: 1-based lines of hand-written waits stripped by `replace_waits`;
    `cache`: the per-function cache this analysis used (the review's second analysis shares
    it).
    """

    __slots__ = ("path", "language", "options", "module", "diagnostics", "functions", "removed_lines",
                 "outputs", "_check", "_missing", "cache", "incomplete", "read", "call_sites", "_stall", "stop_review")

    def __init__(self, path: str, language: str, options: Options, module: Module,
                 cache: AnalysisCache | None = None):
        self.path, self.language, self.options, self.module = path, language, options, module
        self.diagnostics: list[Diagnostic] = []
        self.functions: list[FunctionResult] = []
        self.removed_lines: list[int] = []
        self.outputs: list[PassOutput] = []
        self._check: list[Diagnostic] | None = None
        self._missing: list[Diagnostic] | None = None
        self.cache = cache
        #: while a review runs: asked between its steps whether to stop (interrupt.py)
        self.stop_review: Callable[[], bool] | None = None
        #: the located warnings and errors that leave the result incomplete (a missing include,
        #: an undefined macro or symbol, a wait only a macro body could hold): `insert`
        #: refuses the file without --allow-incomplete
        self.incomplete: list[Diagnostic] = []
        #: how included files are read (the server: open buffers first); None: the disk
        self.read = None
        #: the call sites of an expanded file (macro_sites.CallSites), None for a plain file
        self.call_sites = None
        self._stall: dict[str, StallRun] | None = None

    def __repr__(self) -> str:
        return f"<Analysis {self.path}: {len(self.functions)} functions, {len(self.diagnostics)} diagnostics>"

    def waits(self) -> list[PlannedWait]:
        out = [w for f in self.functions for w in f.waits]
        out.sort(key=lambda w: w.insert_line)  # stable: anchor waits before tail drains
        return out

    def insertions(self, explain: bool = False) -> list[tuple[int, str]]:
        ins: list[tuple[int, str]] = []
        groups: set[tuple[str, int]] = set()
        names = None
        for w in self.waits():
            if w.group:
                if (w.function, w.group) in groups:
                    continue  # one insertion spells the whole point
                groups.add((w.function, w.group))
            text = w.insert_text
            if explain:
                if names is None:
                    from .ir.block_names import BlockNames
                    names = BlockNames(self.module, self.language, quote="")
                text = _with_explanation(text, w, names, self._target_model())
            ins.append((w.insert_line, text))
        return ins

    def inserted_text(self, explain: bool = False) -> str:
        """The file with every planned wait inserted (and stripped waits removed)."""
        return apply_insertions(self.module.text, self.insertions(explain), set(self.removed_lines))

    def stall(self) -> dict[str, StallRun]:
        """Function name -> the predicted stall of the file as it will be (its own waits and
        the planned ones) under the latency model (waitcnt/stall.py); computed on first use."""
        if self._stall is None:
            out: dict[str, StallRun] = {}
            try:
                target, model = self.options.target, self.options.latency_model
            except ValueError:
                target = model = None
            if target is not None and model is not None and self.module.kind == "asm":
                for po in self.outputs:
                    out[po.func.name] = simulate(po.func, target, planned_points(po.result.waits, target), model)
            self._stall = out
        return self._stall

    def wait_stall(self, w: PlannedWait) -> PointStall | None:
        """The predicted stall of a planned wait's program point (None: not simulated)."""
        run = self.stall().get(w.function)
        return run.at(w.line, w.placement) if run is not None else None

    def has_errors(self) -> bool:
        return any(d.severity == ERROR for d in self.diagnostics)

    def _target_model(self) -> Any:
        """The `targets.Target` planned for (None: a target we do not model)."""
        try:
            return self.options.target
        except Exception:  # noqa: BLE001 - UnsupportedTarget: reported as a diagnostic
            return None

    def to_json(self) -> dict[str, Any]:
        """`plan --json`: every wait with every producer (per path); `block`/`pred` are the
        front end's block ids, `where`/`path` the same blocks as the source names them."""
        from .ir.block_names import BlockNames
        names = BlockNames(self.module, self.language, quote="")
        return {
            "file": self.path,
            "options": self.options.to_json(),
            "diagnostics": [d.to_json() for d in self.diagnostics if d.function is None],
            "functions": [self._function_json(f, names) for f in self.functions],
        }

    def _function_json(self, f: FunctionResult, names: Any) -> dict[str, Any]:
        out = {"name": f.name,
               "waits": [_wait_json(w, names, self.wait_stall(w)) for w in sorted(f.waits, key=lambda w: w.insert_line)],
               "diagnostics": [d.to_json() for d in f.diagnostics]}
        run = self.stall().get(f.name)
        if run is not None:  # (assembly: STIR regions have no machine timing)
            out["stall"] = _run_json(run)
        return out

    def missing_diagnostics(self) -> list[Diagnostic]:
        """The review's missing-wait errors, from the plan alone (no re-plan, no proof):
        what `check_diagnostics` returns first, computed once."""
        if self._missing is None:
            from .review import missing_waits
            with bulk_construction():  # GC paused: 1.9 s -> 0.11 s for the 7.5k of a 30k-line kernel
                self._missing = missing_waits(self)
        return self._missing

    def check_diagnostics(self, stop: Callable[[], bool] | None = None,
                          pause: Callable[[], object] | None = None) -> list[Diagnostic]:
        """Review of the hand-written waits: missing (error), redundant (warning), stricter (hint).

        `stop`: asked between the review's steps; once it answers true the review raises
        `interrupt.ReviewInterrupted` and keeps no partial result.  `pause`: handed to the
        review's re-plans (`analyze`'s `pause`)."""
        if self._check is None:
            from .review import review  # only a review needs it (not a cold plan)
            self.stop_review = stop
            replan = analyze if pause is None else partial(analyze, pause=pause)
            try:
                self._check = review(self, replan)
            finally:
                self.stop_review = None
        return self._check


def _wait_json(w: PlannedWait, names: Any, stall: PointStall | None = None) -> dict[str, Any]:
    reason = rule_reason(w.rule, w.reason)
    if w.shaped_by:
        reason += f" [{', '.join(w.shaped_by)}]"
    out = {"line": w.line, "column": w.column, "block": w.block, "where": names.block(w.function, w.block),
           "placement": w.placement, "instruction": w.instruction, "counter": w.counter, "count": w.count,
           "reason": reason, "deps": [dict(d.to_json(), path=None if d.pred is None else names.block(w.function, d.pred))
                                      for d in w.deps]}
    if stall is not None:
        out["stall"] = {"cycles": stall.per_trip, "loop": stall.loop, "total": stall.total}
    return out


def _run_json(run: StallRun) -> dict[str, Any]:
    """A function's predicted stall: the hot path's total and its walk (loops `loop_trips` times)."""
    return {"cycles": run.total, "walk": run.cycles, "truncated": run.truncated}


def _with_explanation(text: str, w: PlannedWait, names: Any, target: Any = None) -> str:
    """The inserted line with its provenance as a trailing comment (`wording.comment_text`:
    the producer that sets the count, the path in the source's names, +N more)."""
    from .wording import comment_text
    body = text.rstrip("\r\n")
    nl = text[len(body):] or "\n"
    why = comment_text(w, names, target)
    k = w.reason.find("; needed by ")
    if k >= 0 and w.reason[k:] not in why:  # a wait for an instruction of a macro call (macro_sites.py)
        why += w.reason[k:]
    return f"{body}  // {why}{nl}"


def analyze(text: str, path: str = "<input>", options: Options = Options(), language: str | None = None,
            cache: AnalysisCache | None = None, read=None, pause: Callable[[], object] | None = None) -> Analysis:
    """Parse and plan a whole file.  Never raises on bad input: errors become diagnostics.

    The cyclic collector is paused for the duration: the pass allocates many short-lived
    immutable queue tuples while the IR keeps every instruction alive, and generational scans
    over that live set made the time grow faster than the file (see BENCHMARKS.md).

    `read(path) -> text | None` reads included files (default: the disk; the language server
    serves its open buffers first).  `pause()`, when given, is called between functions,
    between the pass's stages and between the solver's blocks: a caller that shares the
    interpreter with more urgent work (the language server's background documents) waits
    there; it never changes the result.
    """
    with bulk_construction():
        return _analyze(text, path, options, language, cache, read, pause)


def declared_target(module: Module) -> tuple[str, int, int] | None:
    """(target, line, column) the file declares (`.amdgcn_target`, the code-object
    directives or `amdhsa.target:` in the kernel metadata: syntax/asm_target.py), or None."""
    t = getattr(module, "target", None)
    if not t:
        return None
    sp = getattr(module, "target_span", None)
    return t, sp.line if sp else 1, sp.col if sp else 1


def _effective_options(module: Module, options: Options) -> tuple[Options, Diagnostic | None]:
    """The options with the file's own target (it wins over --arch / the setting), and the
    error for a target we do not model (nothing is planned then: nothing would assemble)."""
    declared = declared_target(module)
    opts = options
    line = col = 1
    if declared is not None:
        from .targets import canonical, xnack_on
        name, line, col = declared
        # XNACK (replay protection, docs/decisions.md 43): the file's `xnack+`/`xnack-` wins;
        # a file that leaves it open ("any") keeps what --arch / the setting say
        info = getattr(module, "target_info", None)
        xnack = getattr(info, "xnack", None) if info is not None else None
        if xnack is None and canonical(name) == canonical(options.arch):
            xnack = xnack_on(options.arch)
        arch = canonical(name) + (":xnack+" if xnack else "")
        if arch != options.arch:
            opts = options.replace(arch=arch)
    try:
        opts.target
    except UnsupportedTarget as exc:
        where = "declared by the file" if declared is not None else "given by --arch / stinkywait.arch"
        return opts, Diagnostic(ERROR, "unsupported-target", f"{exc} ({where})", line, col)
    return opts, None


def _analyze(text: str, path: str, options: Options, language: str | None,
             cache: AnalysisCache | None, read=None, pause=None) -> Analysis:
    lang = language_for(path, language)
    sites = None
    if lang == "asm" and needs_expansion(text):
        # includes, macros, repetitions, conditionals: the pass runs over the expansion
        # (macro_sites.py, imported only then); a fresh parse each time
        from .macro_sites import parse_expanded
        try:
            module, sites = parse_expanded(text, path, options.arch, options.include_paths, read, options.defsyms)
        except Exception as exc:  # a bug in the expansion must not take the editor down
            module = parse(text, path, lang)
            module.diagnostics.append(Diagnostic(
                ERROR, "asm-internal", f"internal error while expanding macros and includes: "
                f"{type(exc).__name__}: {exc}; the file is analysed as written"))
        else:
            # planned from scratch: the incremental re-plan keys its memo on positions, which
            # an expansion's call sites share (measured: a stale plan after an include's edit)
            cache = None
    else:
        # the previous version's module of this document: the front end re-parses only the edit
        # and hands back the unchanged lines' instruction objects (asm), which adoption then keeps
        module = parse(text, path, lang, previous=cache.module(path, options) if cache is not None else None)
    if cache is not None:
        cache.set_module(path, options, module)
    if pause is not None:
        pause()
    options, target_error = _effective_options(module, options)
    an = Analysis(path, lang, options, module, cache=cache)
    an.read = read
    an.call_sites = sites
    an.diagnostics.extend(module.diagnostics)
    if sites is not None:
        an.incomplete.extend(sites.source_map.incomplete)
    if target_error is not None:
        an.diagnostics.append(target_error)
        return an
    lines = physical_lines(text)
    has_tokens = "st.token" in text or "memtoken" in text
    # a chain per function; a name the file repeats (a kernel pasted twice) gets one per
    # occurrence, or every occurrence would be adopted into, and re-plan, the same chain
    occurrences: dict[str, int] = {}
    keys: set = set()
    for fi, func in enumerate(module.functions):
        if pause is not None:
            pause()
        chain = adopted = None
        if cache is not None:
            nth = occurrences[func.name] = occurrences.get(func.name, -1) + 1
            ck = (path, func.name if nth == 0 else (func.name, nth), options)
            keys.add(ck[1])
            chain = cache.get(ck)
            adopted = adopt(chain, func) if chain is not None else None
            if adopted is None:
                chain = Chain(func, FunctionMemo())
            else:
                func = module.functions[fi] = adopted.func
                chain.memo.layout_stable = adopted.moved == 0
                chain.memo.changed_blocks = adopted.changed_blocks
                chain.memo.dropped = adopted.dropped
                if adopted.fresh == 0:  # nothing new, nothing moved: the last plan holds
                    for b, instrs in zip(func.blocks, chain.analysed):
                        b.instrs = instrs
                    _last_plan(an, chain)
                    continue
        removed: list[int] = []
        if options.replace_waits:
            removed = _strip_waits(func, options, sites)
            if adopted is not None and adopted.moved == 0 and removed == chain.removed \
                    and _same_objects(func, chain.analysed):
                # the edit changed hand-written waits only, each into a wait that is stripped
                # too: the plan's input is the last version's, object for object, at the same
                # lines (the review's wait-stripped plan after a wait is retuned)
                _last_plan(an, chain)
                continue
        if options.model == "upstream" or has_tokens:
            implicit = build_implicit_dependencies(func, chain.memo if chain is not None else None,
                                                   attach=options.model == "upstream")
        else:  # (under the hardware model the pass only warns about mixed memtokens)
            implicit = []
        try:
            po = plan_function(func, options, chain.memo if chain is not None else None,
                               end_is_return=lang == "asm", module=module, pause=pause)
        except RecursionError:  # pathological nesting: report, never crash
            an.diagnostics.append(Diagnostic(ERROR, "internal", f"analysis of @{func.name} too deep",
                                             func.span.line if func.span else 1, 1, function=func.name))
            if cache is not None:
                cache.drop(ck)  # its function may be half-analysed
            continue
        # kept with the result so a cache hit reports them too
        po.result.diagnostics[:0] = implicit
        if sites is not None:  # waits needed inside a call go before its line, or are errors
            from .macro_sites import place_at_call_sites
            inside = place_at_call_sites(po, sites)  # (replaces po.result.diagnostics)
            po.result.diagnostics.extend(inside)
        _place_waits(po, module, lines, lang)
        an.outputs.append(po)
        an.functions.append(po.result)
        an.removed_lines.extend(removed)
        an.diagnostics.extend(po.result.diagnostics)
        if chain is not None:
            chain.po, chain.removed = po, removed
            chain.analysed = [b.instrs for b in func.blocks]
            cache.put(ck, chain)
    if cache is not None:
        cache.retain(path, options, keys)
    if sites is not None:
        from .macro_sites import finish_spans, unknown_instructions
        finish_spans(module, sites)
        undefined = unknown_instructions(module, options.target, sites)
        an.diagnostics.extend(undefined)
        an.incomplete.extend(undefined)
        an.incomplete.extend(d for d in an.diagnostics if d.code == "wait-inside-macro")
    return an


def _scoped_vmem(inst: Instruction | None, sem) -> bool:
    """A vector-memory access written with a coherence scope (gfx940+ `sc0`/`sc1`, gfx12+
    `scope:SCOPE_*`) and no non-temporal hint: how LLVM's memory legalizer spells an atomic
    load or store at a scope wider than the wave, the flag of a release or an acquire (a
    streaming store, `sc0 nt sc1`, is no flag)."""
    if inst is None or sem is None or sem.family not in ("global", "flat", "buffer", "scratch"):
        return False
    toks = inst.suffix.split()
    return "nt" not in toks and any(t in ("sc0", "sc1") or t.startswith("scope:") for t in toks)


def _last_plan(an: Analysis, chain: Chain) -> None:
    """The chain's last plan holds for this version: it joins `an` as it is."""
    po = chain.po
    an.outputs.append(po)
    an.functions.append(po.result)
    an.removed_lines.extend(chain.removed)
    an.diagnostics.extend(po.result.diagnostics)


def _strip_waits(func, options: Options, sites) -> list[int]:
    """`replace_waits`: take the hand-written waits the pass rebuilds out of `func`'s blocks;
    returns their lines."""
    removed: list[int] = []
    target = options.target
    for b in func.blocks:
        keep = []
        instrs = b.instrs
        for k, inst in enumerate(instrs):
            # both front ends put one instruction per line, so the whole line goes
            if not inst.is_label and should_remove(inst, model=options.model) and inst.span is not None \
                    and not (options.model == "hw" and _in_fence_sequence(instrs, k, target)) \
                    and not (sites is not None and sites.is_expanded(inst)):  # not in the user's text
                removed.append(inst.span.line)
                continue
            keep.append(inst)
        b.instrs = keep
    return removed


def _same_objects(func, analysed: list[list[Instruction]]) -> bool:
    """`func`'s blocks hold exactly the instruction objects of `analysed`, in order."""
    return len(analysed) == len(func.blocks) and all(
        len(old) == len(b.instrs) and all(map(is_, old, b.instrs)) for old, b in zip(analysed, func.blocks))


def _in_fence_sequence(instrs: list[Instruction], k: int, target) -> bool:
    """The wait at `instrs[k]` belongs to a memory-model sequence the pass does not rebuild:
    it directly precedes a cache invalidate / write-back or a barrier signal (acquire and
    release fences: AMDGPUUsage "Memory Model GFX12/GFX125x"), or directly follows a cache
    operation; or it drains vector memory or LDS right before a scoped store or atomic (a
    release: the ops before it, LDS writes and DMA included, complete before another wave can
    see the flag) or vector memory right after a scoped load or atomic (an acquire: nothing
    after it runs before the flag is read; a volatile access, spelled with the same bits,
    which LLVM waits for).  Neither sequence shows in the registers the pass reads (llc-22 on
    lds-dma-workgroup-release.ll: `s_waitcnt vmcnt(0) lgkmcnt(0)` / `global_store_dword ... sc0`
    and `global_load_dword ... sc0` / `s_waitcnt vmcnt(0)`).  `--replace-waits` keeps such
    waits (they are credited like any other)."""
    def neighbour(step: int):
        j = k + step
        while 0 <= j < len(instrs):
            i = instrs[j]
            if not i.is_label and not i.is_phi and not target.sem(i).wait:
                return i, target.sem(i)
            j += step
        return None, None
    nxt_i, nxt = neighbour(1)
    prev_i, prev = neighbour(-1)
    if nxt is not None and nxt.mem_model or prev is not None and prev.mem_model:
        return True
    wait = target.decode_wait(instrs[k])
    vm = [v for c, v in wait.items() if c in ("loadcnt", "vmcnt")]
    if vm and not any(vm) and _scoped_vmem(prev_i, prev):
        return True  # acquire: the flag's load completes first
    drained = [v for c, v in wait.items() if c in ("loadcnt", "vmcnt", "lgkmcnt", "dscnt")]
    if drained and 0 in drained and _scoped_vmem(nxt_i, nxt):
        return True  # release: the memory and LDS accesses before the flag complete first
    if nxt is not None and nxt.barrier in ("barrier", "signal") and not target.features.lds_dma:
        # a vector-memory wait before a barrier is a release fence (on gfx9/gfx10 it usually
        # publishes LDS DMA instead, which the pass rebuilds)
        return bool({"loadcnt", "vmcnt"} & set(target.decode_wait(instrs[k])))
    return False


def _indent_of(lines: list[str], line: int) -> str:
    if 1 <= line <= len(lines):
        s = lines[line - 1]
        return s[:len(s) - len(s.lstrip(" \t"))]
    return ""


def _place_waits(po: PassOutput, module: Module, lines: list[str], lang: str) -> None:
    """Fill each PlannedWait's insert_line/insert_text for the source format.

    Under the hardware model the waits of one program point are spelled together, as the
    target writes them (one ``s_waitcnt`` with several fields on gfx9-11, the combined
    ``s_wait_loadcnt_dscnt`` on gfx12); each wait of the point carries that text.  (One pass
    over the waits, a line's indentation and a point's text made once each: a 30k-line
    kernel has 7,500 waits, placed again at every edit.)"""
    if lang == "stir":  # imported here: asm runs never need the STIR printer
        from .syntax.stir_printer import format_instruction
    func = po.func
    target = po.df.target
    waits = po.result.waits
    by_block: dict | None = None
    indents: dict[int, str] = {}
    nlines = len(lines)
    grouped = lang == "asm" and target.model == "hw"
    spelled: dict[tuple, list[str]] = {}  # (the kernel's waits repeat a few counts: spelled once each)
    texts: dict[tuple, str] = {}
    group: list = []
    group_key = None
    group_indent = ""
    n = 0

    def flush() -> None:
        values = tuple([(g.counter, g.count) for g in group])
        text = texts.get((group_indent, values))
        if text is None:
            body = spelled.get(values)
            if body is None:
                body = spelled[values] = target.encode_waits({c + "cnt": v for c, v in values})
            text = texts[(group_indent, values)] = "".join(f"{group_indent}{ln}\n" for ln in body)
        for g in group:
            g.insert_text = text
            g.group = n

    for w in waits:
        placement = w.placement
        if placement == "before":
            line = w.line
            indent = indents.get(line)
            if indent is None:
                if 1 <= line <= nlines:
                    ln = lines[line - 1]
                    indent = ln[:len(ln) - len(ln.lstrip(" \t"))]
                else:
                    indent = ""
                indents[line] = indent
        else:
            if by_block is None:
                by_block = {b.name: b for b in func.blocks}
            b = by_block.get(w.block)
            last = None
            if b is not None:
                real = [i for i in b.instrs if i.span is not None and not i.is_phi]
                last = real[-1] if real else None
            if last is not None:
                line = last.span.end_line + 1
                indent = _indent_of(lines, last.span.line)
            else:
                hdr = b.span.line if b is not None and b.span is not None else w.line
                line = hdr + 1
                indent = _indent_of(lines, hdr) + ("  " if lang == "stir" else "")
                if lang == "asm":
                    indent = "\t"
        w.insert_line = line
        if not grouped:
            body = format_instruction(make_wait(w.counter + "cnt", w.count)) if lang == "stir" else w.instruction
            w.insert_text = f"{indent}{body}\n"
            continue
        key = (line, w.line, placement, w.tail_drain, w.block)
        if key != group_key:
            if group:
                flush()
            n += 1
            group = [w]
            group_key = key
            group_indent = indent
        else:
            group.append(w)
    if group:
        flush()


def analyze_file(path: str, options: Options = Options(), language: str | None = None) -> Analysis:
    """Read a file (bad UTF-8 replaced, never fatal) and analyse it."""
    with open(path, "rb") as fh:
        data = fh.read()
    return analyze(data.decode("utf-8", errors="replace"), path, options, language)


def atomic_write(path: str, text: str) -> None:
    """Write via a temporary file in the same directory, then rename (never half-written)."""
    d = os.path.dirname(os.path.abspath(path)) or "."
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix=".stinkywait-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
