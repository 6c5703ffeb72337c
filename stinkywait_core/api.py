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
import re
from collections import OrderedDict
TYPE_CHECKING = False  # (no `typing` / `dataclasses` imports on a cold command's path)
if TYPE_CHECKING:
    from typing import Any

from .analysis.implicit_deps import build_implicit_dependencies
from .diagnostics import ERROR, HINT, WARNING, Diagnostic, Related
from .ir import Function, Instruction, Module, bulk_construction
from .results import FunctionResult, Options, PlannedWait
from .syntax import language_for, parse
from .targets import UnsupportedTarget
from .waitcnt.dataflow import counter_short_name
from .waitcnt.emit import make_wait
from .waitcnt.incremental import FunctionMemo
from .waitcnt.pipeline import PassOutput, plan_function
from .waitcnt.remove import should_remove
from .waitcnt.stall import PointStall, StallRun, cost_phrase, planned_points, relax_saving, simulate


class Analysis:
    """One analysed file.

    `removed_lines`: 1-based lines of hand-written waits stripped by `replace_waits`;
    `cache`: the per-function cache this analysis used (the review's second analysis shares
    it).
    """

    __slots__ = ("path", "language", "options", "module", "diagnostics", "functions", "removed_lines",
                 "outputs", "_check", "cache", "_stall")

    def __init__(self, path: str, language: str, options: Options, module: Module,
                 cache: "AnalysisCache | None" = None):
        self.path, self.language, self.options, self.module = path, language, options, module
        self.diagnostics: list[Diagnostic] = []
        self.functions: list[FunctionResult] = []
        self.removed_lines: list[int] = []
        self.outputs: list[PassOutput] = []
        self._check: list[Diagnostic] | None = None
        self.cache = cache
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
        for w in self.waits():
            if w.group:
                if (w.function, w.group) in groups:
                    continue  # one insertion spells the whole point
                groups.add((w.function, w.group))
            text = w.insert_text
            if explain:
                text = _with_explanation(text, w, self.language)
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

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "options": self.options.to_json(),
            "diagnostics": [d.to_json() for d in self.diagnostics if d.function is None],
            "functions": [self._function_json(f) for f in self.functions],
        }

    def _function_json(self, f: FunctionResult) -> dict[str, Any]:
        out = {"name": f.name,
               "waits": [_wait_json(w, self.wait_stall(w)) for w in sorted(f.waits, key=lambda w: w.insert_line)],
               "diagnostics": [d.to_json() for d in f.diagnostics]}
        run = self.stall().get(f.name)
        if run is not None:  # (assembly: STIR regions have no machine timing)
            out["stall"] = _run_json(run)
        return out

    def check_diagnostics(self) -> list[Diagnostic]:
        """Review of the hand-written waits: missing (error), redundant (warning), stricter (hint)."""
        if self._check is None:
            self._check = _review(self)
        return self._check


def _wait_json(w: PlannedWait, stall: PointStall | None = None) -> dict[str, Any]:
    reason = f"{w.rule}: {w.reason}"
    if w.shaped_by:
        reason += f" [{', '.join(w.shaped_by)}]"
    out = {"line": w.line, "column": w.column, "block": w.block, "placement": w.placement,
           "instruction": w.instruction, "counter": w.counter, "count": w.count,
           "reason": reason, "deps": [d.to_json() for d in w.deps]}
    if stall is not None:
        out["stall"] = {"cycles": stall.per_trip, "loop": stall.loop, "total": stall.total}
    return out


def _run_json(run: StallRun) -> dict[str, Any]:
    """A function's predicted stall: the hot path's total and its walk (loops `loop_trips` times)."""
    return {"cycles": run.total, "walk": run.cycles, "truncated": run.truncated}


def _with_explanation(text: str, w: PlannedWait, language: str) -> str:
    body = text.rstrip("\r\n")
    nl = text[len(body):] or "\n"
    deps = ", ".join(f"{d.mnemonic}@{d.line}" + (f" via ^{d.pred}" if d.pred else "") +
                     f" countFrom {d.count_from}" for d in w.deps)
    why = f"stinkywait: {w.rule}" + (f" [{deps}]" if deps else f": {w.reason}")
    return f"{body}  // {why}{nl}"


def physical_lines(text: str, keepends: bool = False) -> list[str]:
    """The text's lines as both front ends number them: only ``\r\n``, ``\r`` and ``\n``
    end a line (`str.splitlines` also breaks at form feeds, ``\x0b``, ``\x1c``-``\x1e``,
    NEL and U+2028/9, which would shift every line number after one of them)."""
    if keepends:
        return _LINE.findall(text)
    from .syntax.asm_parser import split_lines  # the front ends' own rule (a str.split per line)
    return split_lines(text)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def apply_insertions(text: str, insertions: list[tuple[int, str]], drop: set[int] = frozenset()) -> str:
    """Insert whole lines before 1-based line numbers (stable), dropping the lines in `drop`."""
    lines = physical_lines(text, keepends=True)
    nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    by_line: dict[int, list[str]] = {}
    for ln, t in insertions:
        by_line.setdefault(ln, []).append(t if t.endswith("\n") else t + nl)
    out: list[str] = []
    for i, line in enumerate(lines, start=1):
        out.extend(by_line.get(i, ()))
        if i not in drop:
            out.append(line)
    tail = by_line.get(len(lines) + 1, [])
    if tail and out and not out[-1].endswith("\n"):
        out[-1] = out[-1] + nl
    out.extend(tail)
    return "".join(out)


class _Chain:
    """One function's analyses over the versions of a document (incremental re-planning).

    `func` is the chain's own Function: every new version's parse is *adopted* into it
    (unchanged instructions stay the same objects, `_adopt`), so the memo's records, keyed and
    compared by instruction identity, stay valid from one version to the next.
    """

    __slots__ = ("func", "raw", "analysed", "po", "removed", "memo", "spans")

    def __init__(self, func: Function, memo: FunctionMemo):
        self.func = func
        #: the blocks' instructions as parsed (before replace_waits stripping and PHIs)
        self.raw: list[list[Instruction]] = [list(b.instrs) for b in func.blocks]
        #: the blocks' instructions as analysed (stripped, PHIs removed): restored on a plan hit
        self.analysed: list[list[Instruction]] = []
        self.po: PassOutput | None = None
        self.removed: list[int] = []
        self.memo = memo
        #: every instruction's span when last analysed (to tell which ones moved)
        self.spans: dict = {inst: inst.span for b in func.blocks for inst in b.instrs}


class AnalysisCache:
    """Per-function plan cache (bounded LRU); one per document in a long-lived process.

    Keyed by (path, function, options); a function the latest version of its document lost
    is dropped.  A version whose function is unchanged (layout-only
    edits included) reuses the last plan outright; any other version is re-planned
    incrementally from the last one (waitcnt/incremental.py).  Only the latest version of a
    function is kept: the Function objects of an older Analysis made with the same cache
    are adopted (mutated) by the newer one, so an Analysis is only valid until the next
    `analyze` of the same document with the same cache.
    """

    def __init__(self, size: int = 64):
        self.size = size
        self._d: OrderedDict[tuple, _Chain] = OrderedDict()
        #: (path, options) -> the last Module parsed (the front end's incremental re-parse)
        self._modules: OrderedDict[tuple, Module] = OrderedDict()
        #: id(PlannedWait) -> (wait, anchor line length, its insertion, missing-wait diagnostic)
        self.review_memo: dict[int, tuple] = {}

    def module(self, path: str, options: Options) -> Module | None:
        return self._modules.get((path, options))

    def set_module(self, path: str, options: Options, module: Module) -> None:
        self._bounded_put(self._modules, (path, options), module)

    def get(self, key: tuple) -> _Chain | None:
        v = self._d.get(key)
        if v is not None:
            self._d.move_to_end(key)
        return v

    def drop(self, key: tuple) -> None:
        self._d.pop(key, None)

    def put(self, key: tuple, value: _Chain) -> None:
        self._bounded_put(self._d, key, value)

    def _bounded_put(self, table: OrderedDict, key: tuple, value: object) -> None:
        """Insert as most recent; evict the least recently used beyond `size`."""
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.size:
            table.popitem(last=False)

    def retain(self, path: str, options: Options, names: set[str]) -> None:
        """Drop the chains of functions the document no longer has (renamed or deleted
        kernels): a chain holds a whole function's plan."""
        for key in [k for k in self._d if k[0] == path and k[2] == options and k[1] not in names]:
            del self._d[key]


def _shape(func: Function) -> tuple:
    return tuple((b.label, tuple(b.succ_labels)) for b in func.blocks)


def _ops_extend(old: list, new: list) -> bool:
    """`old` is `new` plus LDS pseudo registers appended by the implicit-dependency pass."""
    n = len(new)
    return old[:n] == new and all(getattr(op, "kind", None) == "LDS" for op in old[n:])


def _same_instruction(old: Instruction, new: Instruction) -> bool:
    return old is new or (
        old.text == new.text and old.mnemonic == new.mnemonic and old.is_label == new.is_label
        and old.suffix == new.suffix and old.mods == new.mods
        and (old.dsts == new.dsts or _ops_extend(old.dsts, new.dsts))
        and (old.srcs == new.srcs or _ops_extend(old.srcs, new.srcs)))


class _Adoption:
    """What `_adopt` found: the function; `fresh`, how many instructions are new, removed
    or moved and blocks or the function moved (0: same plan); `moved`, how many kept
    instructions (or blocks, the function) changed position; `changed_blocks`, the blocks
    whose instruction list changed; `dropped`, the previous version's instructions that are
    gone."""

    __slots__ = ("func", "fresh", "moved", "changed_blocks", "dropped")

    def __init__(self, func: Function):
        self.func = func
        self.fresh = 0
        self.moved = 0
        self.changed_blocks: set = set()
        self.dropped: list = []


def _adopt(chain: _Chain, new: Function) -> _Adoption | None:
    """Turn the chain's function into `new`, keeping every unchanged instruction object.

    Per block, the longest common prefix and suffix of the old and new instruction lists
    are matched (an edit is local); matched old instructions take the new positions, the
    rest are the new parse's objects.  Returns None when the CFG's shape changed (blocks,
    labels, successors): the caller then starts a new chain.
    """
    func = chain.func
    if func.name != new.name or len(func.blocks) != len(new.blocks) or _shape(func) != _shape(new):
        return None
    raw: list[list[Instruction]] = []
    res = _Adoption(func)
    old_spans = chain.spans
    spans: dict[Instruction, Any] = {}
    for ob, nb, olds in zip(func.blocks, new.blocks, chain.raw):
        news = nb.instrs
        if news == olds:  # the front end already reused every instruction (identity)
            merged = news
        else:
            n = min(len(olds), len(news))
            i = 0
            while i < n and _same_instruction(olds[i], news[i]):
                i += 1
            j = 0
            while j < n - i and _same_instruction(olds[-1 - j], news[-1 - j]):
                j += 1
            merged = list(news)
            if len(news) + len(olds) - 2 * (i + j):  # added and removed
                res.fresh += len(news) + len(olds) - 2 * (i + j)
                res.changed_blocks.add(ob)
                res.dropped.extend(olds[i:len(olds) - j])
            for k in range(i):
                merged[k] = _move(olds[k], news[k])
            for k in range(1, j + 1):
                merged[-k] = _move(olds[-k], news[-k])
        # a kept instruction moved if its span differs from the one it had last time (the
        # front end may already have repositioned it in place)
        for inst in merged:
            inst.block = ob
            sp = spans[inst] = inst.span
            before = old_spans.get(inst)
            if before is not None and before != sp:
                res.moved += 1
        ob.instrs = merged
        if ob.span != nb.span or ob.succ_span != nb.succ_span:
            res.moved += 1
            ob.span, ob.succ_span = nb.span, nb.succ_span
        raw.append(list(merged))
    if func.span != new.span or func.name_span != new.name_span:
        res.moved += 1
        func.span, func.name_span = new.span, new.name_span
    chain.raw = raw
    chain.spans = spans
    res.fresh += res.moved
    return res


def _move(old: Instruction, new: Instruction) -> Instruction:
    """Give `old` the position (and comment) of its unchanged twin from the new parse."""
    if old is not new:
        old.span, old.text, old.comment, old.cycles = new.span, new.text, new.comment, new.cycles
    return old


def analyze(text: str, path: str = "<input>", options: Options = Options(), language: str | None = None,
            cache: AnalysisCache | None = None) -> Analysis:
    """Parse and plan a whole file.  Never raises on bad input: errors become diagnostics.

    The cyclic collector is paused for the duration: the pass allocates many short-lived
    immutable queue tuples while the IR keeps every instruction alive, and generational scans
    over that live set made the time grow faster than the file (see BENCHMARKS.md).
    """
    with bulk_construction():
        return _analyze(text, path, options, language, cache)


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
             cache: AnalysisCache | None) -> Analysis:
    lang = language_for(path, language)
    # the previous version's module of this document: the front end re-parses only the edit
    # and hands back the unchanged lines' instruction objects (asm), which adoption then keeps
    module = parse(text, path, lang, previous=cache.module(path, options) if cache is not None else None)
    if cache is not None:
        cache.set_module(path, options, module)
    options, target_error = _effective_options(module, options)
    an = Analysis(path, lang, options, module, cache=cache)
    an.diagnostics.extend(module.diagnostics)
    if target_error is not None:
        an.diagnostics.append(target_error)
        return an
    lines = physical_lines(text)
    has_tokens = "st.token" in text or "memtoken" in text
    for fi, func in enumerate(module.functions):
        chain = None
        if cache is not None:
            ck = (path, func.name, options)
            chain = cache.get(ck)
            adopted = _adopt(chain, func) if chain is not None else None
            if adopted is None:
                chain = _Chain(func, FunctionMemo())
            else:
                func = module.functions[fi] = adopted.func
                chain.memo.layout_stable = adopted.moved == 0
                chain.memo.changed_blocks = adopted.changed_blocks
                chain.memo.dropped = adopted.dropped
                if adopted.fresh == 0:  # nothing new, nothing moved: the last plan holds
                    for b, instrs in zip(func.blocks, chain.analysed):
                        b.instrs = instrs
                    po = chain.po
                    an.outputs.append(po)
                    an.functions.append(po.result)
                    an.removed_lines.extend(chain.removed)
                    an.diagnostics.extend(po.result.diagnostics)
                    continue
        removed: list[int] = []
        if options.replace_waits:
            target = options.target
            for b in func.blocks:
                keep = []
                instrs = b.instrs
                for k, inst in enumerate(instrs):
                    # both front ends put one instruction per line, so the whole line goes
                    if not inst.is_label and should_remove(inst, model=options.model) and inst.span is not None \
                            and not (options.model == "hw" and _in_fence_sequence(instrs, k, target)):
                        removed.append(inst.span.line)
                        continue
                    keep.append(inst)
                b.instrs = keep
        if options.model == "upstream" or has_tokens:
            implicit = build_implicit_dependencies(func, chain.memo if chain is not None else None,
                                                   attach=options.model == "upstream")
        else:  # (under the hardware model the pass only warns about mixed memtokens)
            implicit = []
        try:
            po = plan_function(func, options, chain.memo if chain is not None else None,
                               end_is_return=lang == "asm", module=module)
        except RecursionError:  # pathological nesting: report, never crash
            an.diagnostics.append(Diagnostic(ERROR, "internal", f"analysis of @{func.name} too deep",
                                             func.span.line if func.span else 1, 1, function=func.name))
            if cache is not None:
                cache.drop(ck)  # its function may be half-analysed
            continue
        # kept with the result so a cache hit reports them too
        po.result.diagnostics[:0] = implicit
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
        cache.retain(path, options, {f.name for f in module.functions})
    return an


def _in_fence_sequence(instrs: list[Instruction], k: int, target) -> bool:
    """The wait at `instrs[k]` belongs to a memory-model sequence the pass does not rebuild:
    it directly precedes a cache invalidate / write-back or a barrier signal (acquire and
    release fences: AMDGPUUsage "Memory Model GFX12/GFX125x"), or directly follows a cache
    operation.  `--replace-waits` keeps such waits (they are credited like any other)."""
    def neighbour(step: int):
        j = k + step
        while 0 <= j < len(instrs):
            i = instrs[j]
            if not i.is_label and not i.is_phi and not target.sem(i).wait:
                return target.sem(i)
            j += step
        return None
    nxt, prev = neighbour(1), neighbour(-1)
    if nxt is not None and nxt.mem_model or prev is not None and prev.mem_model:
        return True
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
    ``s_wait_loadcnt_dscnt`` on gfx12); each wait of the point carries that text."""
    if lang == "stir":  # imported here: asm runs never need the STIR printer
        from .syntax.stir_printer import format_instruction
    func = po.func
    target = po.df.target
    by_block = {b.name: b for b in func.blocks}
    for w in po.result.waits:
        if w.placement == "before":
            line = w.line
            indent = _indent_of(lines, line)
        else:
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
        if lang == "stir":
            body = format_instruction(make_wait(w.counter + "cnt", w.count))
        else:
            body = w.instruction
        w.insert_line = line
        w.insert_text = f"{indent}{body}\n"
    if lang != "asm" or target.model != "hw":
        return
    waits = po.result.waits
    n = 0
    i = 0
    while i < len(waits):
        w = waits[i]
        j = i + 1
        while j < len(waits) and (waits[j].insert_line, waits[j].line, waits[j].placement, waits[j].tail_drain,
                                  waits[j].block) == (w.insert_line, w.line, w.placement, w.tail_drain, w.block):
            j += 1
        n += 1
        group = waits[i:j]
        indent = w.insert_text[:len(w.insert_text) - len(w.insert_text.lstrip(" \t"))]
        body = target.encode_waits({g.counter + "cnt": g.count for g in group})
        text = "".join(f"{indent}{ln}\n" for ln in body)
        for g in group:
            g.insert_text = text
            g.group = n
        i = j


def _review(an: Analysis) -> list[Diagnostic]:
    """Hand-written waits against the plan: what is missing, redundant or stricter than needed."""
    out: list[Diagnostic] = []
    lines = physical_lines(an.module.text)
    # a planned wait reused from the previous version (same object, same anchor line length)
    # keeps its diagnostic
    known = an.cache.review_memo if an.cache is not None else {}
    memo: dict[int, tuple] = {}
    for w in an.waits():
        width = len(lines[w.line - 1]) if 0 < w.line <= len(lines) else 0
        hit = known.get(id(w))
        if hit is not None and hit[0] is w and hit[1] == width and hit[2] == (w.insert_line, w.insert_text):
            memo[id(w)] = hit
            out.append(hit[3])
            continue
        related = [Related(d.line, d.column, f"producer {d.mnemonic} in ^{d.block}"
                           + (f" (via ^{d.pred}, countFrom {d.count_from})" if d.pred else
                              f" (countFrom {d.count_from})")) for d in w.deps if d.line]
        diag = Diagnostic(
            ERROR, "missing-wait", f"missing {w.instruction} ({w.rule}: {w.reason})",
            w.line, w.column, w.line, max(w.column, width + 1), related,
            {"insert_line": w.insert_line, "insert_text": w.insert_text, "instruction": w.instruction,
             "counter": w.counter, "count": w.count}, w.function)
        memo[id(w)] = (w, width, (w.insert_line, w.insert_text), diag)
        out.append(diag)
    if an.cache is not None:
        an.cache.review_memo = memo
    if an.options.replace_waits:
        return out
    # hand-written (rebuildable) waits: what each counter of each wait drains here (the FIFO
    # snapshot); a value a draining counter could relax to comes from a plan without them.
    # Every change offered (delete, relax, drop a counter) is then verified: the function
    # re-planned with that one change must need no wait the original did not need already.
    waits_found: list = []
    draining = False
    model = an.options.model
    for po in an.outputs:
        snaps = po.df.snapshots
        target = po.df.target
        info = po.df.info
        for b in po.func.blocks:
            instrs = [i for i in b.instrs if not i.is_phi and not i.is_label]
            for idx, inst in enumerate(instrs):
                inf = info.get(inst)
                if inf is None or not inf.is_wait or inst.span is None or not should_remove(inst, model=model):
                    continue
                values = {cn: v for cn, v in target.decode_wait(inst).items() if v >= 0}
                if not values:
                    continue
                nxt = next((j for j in instrs[idx + 1:] if not info[j].is_wait), None)
                snap = snaps.get(inst)
                drains = set()
                for cn, v in values.items():
                    tls = [c for c in target.timelines if target.counter_of[c] == cn]
                    if any(_drains(q, v, target.in_order[c]) for c in tls for q in (snap[c] if snap else ())):
                        drains.add(cn)
                waits_found.append((po, inst, nxt, values, drains))
                draining = draining or bool(drains)
    planned: dict[tuple[int, str], int] = {}
    if draining:
        # what each point needs at least: CoalesceWaits off, or a wait it folds into an
        # earlier one would look stricter than needed nowhere
        stripped = analyze(an.module.text, an.path, an.options.replace(replace_waits=True, coalesce_window=0),
                           an.language, cache=an.cache)
        # planned waits of the stripped analysis, by anchor line and counter
        for w in stripped.waits():
            if w.placement == "before":
                planned[(w.line, w.counter)] = w.count
    proposals: list[tuple[Diagnostic, int, str]] = []  # (diagnostic, line, its new line text)
    for po, inst, nxt, values, drains in waits_found:
        sp = inst.span
        target = po.df.target
        if not drains:
            if len(values) == 1:
                ((cn, v),) = values.items()
                what = f"redundant {inst.mnemonic} {v}: nothing older than {v} ops is in flight on {cn} here"
            else:
                what = f"redundant {inst.text.strip()}: nothing it waits for is in flight here"
            proposals.append((Diagnostic(
                WARNING, "redundant-wait", what,
                sp.line, sp.col, sp.end_line, sp.end_col, [], {"delete_line": sp.line}, po.func.name),
                sp.line, None))
            continue
        if len(drains) < len(values):  # a combined wait with a counter that drains nothing
            kept = {cn: v for cn, v in values.items() if cn in drains}
            new = _spelled(target, kept, inst)
            proposals.append((Diagnostic(
                WARNING, "redundant-wait",
                f"{inst.mnemonic}: {', '.join(sorted(set(values) - drains))} drains nothing here: {new} suffices",
                sp.line, sp.col, sp.end_line, sp.end_col, [], {"replace_line": sp.line, "instruction": new},
                po.func.name), sp.line, new))
        for cn in sorted(drains):
            v = values[cn]
            short = cn[:-3] if cn.endswith("cnt") else cn
            need = planned.get((nxt.span.line, short)) if nxt is not None and nxt.span else None
            if need is None or need <= v or not _in_order_counter(target, cn):
                continue
            new = _spelled(target, {**values, cn: need}, inst)
            proposals.append((Diagnostic(
                HINT, "stricter-wait", f"{inst.mnemonic} {_radix(v, inst)} is stricter than needed: {new} suffices"
                + _stricter_cost(an, po, sp.line, {**values, cn: need}),
                sp.line, sp.col, sp.end_line, sp.end_col, [],
                {"replace_line": sp.line, "count": need, "instruction": new}, po.func.name), sp.line, new))
    out.extend(_verified(an, proposals))
    return out


def _stricter_cost(an: Analysis, po: PassOutput, line: int, relaxed: dict[str, int]) -> str:
    """"; costs ~300 cycles per trip of .LBB0_1": what the stricter wait at `line` costs over
    the relaxed one, predicted by the latency model ("" when there is nothing to say)."""
    try:
        target, model = an.options.target, an.options.latency_model
    except ValueError:
        return ""
    if model is None:
        return ""
    cycles, loop = relax_saving(po.func, target, model, planned_points(po.result.waits, target), line, relaxed)
    return f"; {cost_phrase(cycles, loop)}" if cycles > 0 else ""


def _in_order_counter(target, cn: str) -> bool:
    """Every timeline counted on `cn` completes in order (only then can a count be relaxed)."""
    return all(target.in_order[c] for c in target.timelines if target.counter_of[c] == cn)


def _radix(v: int, inst: Instruction) -> str:
    return f"{v:#x}" if "0x" in (inst.text or "").lower() else str(v)


def _spelled(target, values: dict[str, int], inst: Instruction) -> str:
    """A wait with these counter values, in the target's spelling and the user's radix."""
    text = "; ".join(target.encode_waits(values))
    if "0x" in (inst.text or "").lower():
        text = re.sub(r"(?<![\w(x])(\d+)\b(?!\))", lambda m: f"{int(m.group(1)):#x}", text)
    return text


def _verified(an: Analysis, proposals: list[tuple[Diagnostic, int, str | None]]) -> list[Diagnostic]:
    """The proposals whose change, applied alone, leaves the function needing no wait it did not
    need before (the same anchors and counters, values no stricter).

    All changes are tried together first: if the program with every change needs nothing
    new, each change alone needs nothing new either (a subset of the changes leaves more
    hand-written waits, so fewer ops in flight); otherwise each is tried alone, one line at a
    time from the original (an edit the incremental re-plan handles in proportion to it)."""
    lines = physical_lines(an.module.text, keepends=True)
    usable: list[tuple[Diagnostic, int, str]] = []
    taken: set[int] = set()
    for diag, line, new in proposals:
        if line in taken or not 1 <= line <= len(lines):
            continue
        body = lines[line - 1].rstrip("\r\n")
        if body[:diag.col - 1].strip() or (new is not None and "; " in new):
            continue  # a label shares the line, or the change would move lines: not offered
        indent = body[:len(body) - len(body.lstrip(" \t"))]
        usable.append((diag, line, indent + (new or "") + lines[line - 1][len(body):]))
        taken.add(line)
    if not usable:
        return []
    base: dict[tuple[str, int, str, str], int] = {}
    for w in an.waits():
        key = (w.function, w.line, w.placement, w.counter)
        base[key] = min(base.get(key, w.count), w.count)

    def needs_nothing_new(changes: list[tuple[Diagnostic, int, str]], cache: AnalysisCache) -> bool:
        text = list(lines)
        for _, line, changed in changes:
            text[line - 1] = changed
        trial = analyze("".join(text), an.path, an.options, an.language, cache=cache)
        return all(base.get((w.function, w.line, w.placement, w.counter), -1) >= 0
                   and base[(w.function, w.line, w.placement, w.counter)] <= w.count for w in trial.waits())

    scratch = AnalysisCache(size=4)
    if needs_nothing_new(usable, scratch):
        return [d for d, _, _ in usable]
    # removals of waits that drain nothing change no state: they pass as a group; the
    # relaxations of draining waits are tried one by one
    removals = [c for c in usable if c[0].code == "redundant-wait"]
    relaxations = [c for c in usable if c[0].code != "redundant-wait"]
    out: list[Diagnostic] = []
    singles = relaxations
    if removals:
        if needs_nothing_new(removals, scratch):
            out.extend(d for d, _, _ in removals)
        else:
            singles = usable
    analyze(an.module.text, an.path, an.options, an.language, cache=scratch)
    dirty = False
    for change in singles:
        if dirty:
            analyze(an.module.text, an.path, an.options, an.language, cache=scratch)
        if needs_nothing_new([change], scratch):
            out.append(change[0])
        dirty = True
    out.sort(key=lambda d: (d.line, d.col))
    return out


def _drains(q, v: int, in_order: bool) -> bool:
    """A wait of `v` on this queue's counter retires something from it."""
    if not in_order:
        return v == 0 and bool(q.ops or q.sat)
    return len(q.ops) > v or bool(q.sat)


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
