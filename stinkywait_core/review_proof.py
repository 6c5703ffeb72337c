"""Proof that a change the review offers is safe to follow on the GPU (issue 19, item 5).

The review judges hand-written waits against the pass's plan, and that plan holds waits the
source does not: the ones the pass adds itself, among them the fallbacks it only calls
unproven (LDS accesses it cannot prove disjoint, tensor fills, barriers).  A wait the plan
makes look redundant may be the only thing in the file that covers such a need.  So every
delete or relax is offered only when the independent hardware checker (validate/hwcheck.py,
the engine of `check --exhaustive`, which runs the file exactly as written and shares no
reasoning with the pass) finds nothing on the edited file that it did not find on the file
as written: no new violation, proven or not (an unproven LDS overlap counts), no stricter
need for one it already found.  The checker must also have finished: a search cut by its
path, step or loop-trip bound proves nothing, and that function's changes are not offered
(but a change of a wait its own block shows idle, below, needs no search at all).

Cost: a change of a wait that its own block shows idle (an earlier wait of each of its
counters in the block leaves it nothing to retire: validate/hwidle.py, `_settled`) needs no
run at all, so a version whose changes are all such (the 4 deletes of the gfx1250 GEMM)
costs the checker only its parse, whatever the edit; and since the argument reads only the
lines between the two waits, the verdict of every wait the edit did not reach is the same
again.  Otherwise: one checker run of the file as written, then runs with a *group* of
changes applied.  A change of a wait that retired nothing in that first run (the search
finished; `_idle_waits`) needs no run of its own: with it applied the checker's search is
the same search.
Waiting more never makes a path unsafe (a wait only retires ops), so when the file with the
whole group applied shows nothing new, every change of the group is safe alone.  When it
does show something, the changes on an offending path between its producer and its
consumer are suspects: the others are tried again as a group, each suspect alone (a group
no path singles out is halved), while the checker's work, the run on the file as written
included, stays within `STEP_BUDGET` (deterministic: counted in checker steps, not
seconds).  A change that is not proven within the budget is not offered.
"""

from __future__ import annotations

from .interrupt import checkpoint

TYPE_CHECKING = False  # (no `typing` import on a cold command's path)
if TYPE_CHECKING:
    from .api import Analysis
    from .diagnostics import Diagnostic
    from .validate.hwcheck import HwViolation

#: checker steps (instructions executed along paths) all runs of one review may take,
#: the run on the file as written included; each run is charged at least `RUN_STEPS`
#: (parsing and the LDS facts cost too).  A run is stopped when the budget is spent (its
#: search is then bounded: it proves nothing)
#: (800k: on aiter's f4gemm the run as written takes 112k steps since the subroutine's returns
#: and the publish rule's obligations are followed, and a trial up to 1.5x that; 400k left room
#: for two trials and offered nothing, 800k offers 10 proved edits in ~20 s of a background,
#: interruptible review)
STEP_BUDGET = 800_000
RUN_STEPS = 40_000
#: a run with changes applied is stopped after this many times the steps of the run on the
#: file as written: more ops in flight mean more states, and a run that long is usually one
#: that fails (the violations it found by then still name the suspects)
TRIAL_FACTOR = 1.5


class Change:
    """One offered change: its diagnostic, the 1-based line it rewrites, the new line text
    (the line emptied for a delete: line numbers stay put) and the block holding it."""

    __slots__ = ("diag", "line", "text", "block")

    def __init__(self, diag: Diagnostic, line: int, text: str, block: str | None) -> None:
        self.diag, self.line, self.text, self.block = diag, line, text, block

    @property
    def function(self) -> str | None:
        return self.diag.function


class _Run:
    """The checker's findings on one version of the file, per function: violation key
    (consumer, producer: line and column; rule) -> (needs, proven); which functions were proved
    (the search finished) and how many steps each took."""

    __slots__ = ("found", "proved", "steps", "idle")

    def __init__(self) -> None:
        self.found: dict[str, dict[tuple, tuple[dict[str, int], bool]]] = {}
        self.proved: set[str] = set()
        self.steps: dict[str, int] = {}
        #: (run on the file as written) per function, the lines of its idle waits (`_idle_waits`)
        self.idle: dict[str, set[int]] = {}


def _line(inst) -> int | None:
    return inst.span.line if inst is not None and inst.span is not None else None


def _at(inst) -> tuple | None:
    """Where an instruction is: line and column (an instruction a macro or an include
    expands to has its call site's line and a column past `COL_BASE` naming it)."""
    return (inst.span.line, inst.span.col) if inst is not None and inst.span is not None else None


def _checker_parse(an: Analysis, text: str, as_written: bool) -> tuple[object, dict | None]:
    """The checker's own parse of `text` (never the plan's module) and, for the file as
    written with a kept scratch cache, the memo of its per-instruction facts."""
    from .macro_sites import wants_expansion
    from .syntax import parse
    if an.language == "asm" and wants_expansion(text):
        # the expansion, as the pass and `check --exhaustive` see it (macro_sites.py)
        from .macro_sites import parse_expanded
        opts = an.options
        module, _ = parse_expanded(text, an.path, opts.arch, opts.include_paths, an.read, opts.defsyms)
        return module, None
    if as_written and an.cache is not None and an.cache.review_scratch is not None:
        return _parsed_as_written(an, text, an.cache.review_scratch)
    return parse(text, an.path, an.language), None


def _check(an: Analysis, text: str, functions: set[str], max_steps: int,
           proof_only: bool = False, parsed: tuple | None = None) -> tuple[_Run, dict[str, list[HwViolation]]]:
    """The hardware checker on `text` (the LDS address analysis where memtokens prove
    nothing, as `check --exhaustive` and the pass), for the named functions only, each
    stopped after `max_steps`.  `proof_only` (the run on the file as written): a function
    whose search must cut a loop trip can prove no change safe, so its search ends there.
    `parsed`: `_checker_parse`'s answer for `text`, when the caller has it already."""
    checkpoint(an)
    from .analysis.lds_facts import module_facts
    from .targets import get_target
    from .validate.hwcheck import check_function
    from .validate.lds_overlap import AddressRegions
    module, memo = parsed if parsed is not None else _checker_parse(an, text, proof_only)
    funcs = [f for f in module.functions if f.name in functions]
    run = _Run()
    raw: dict[str, list[HwViolation]] = {}
    if not funcs:
        return run, raw
    target = get_target(an.options.arch, "hw")
    facts = module_facts(module, target.name)
    for f in funcs:
        res = check_function(f, an.options, regions=AddressRegions(facts[f]), max_steps=max(1, max_steps),
                             stop=an.stop_review, proof_only=proof_only, watch_waits=proof_only, facts_memo=memo)
        checkpoint(an)  # a search `stop` ended proves nothing: the review ends here
        run.steps[f.name] = res.steps
        if not res.bounded and not res.trip_cut:
            run.proved.add(f.name)
            if res.retiring is not None:
                run.idle[f.name] = _idle_waits(f, target, res.retiring)
        table = run.found.setdefault(f.name, {})
        for v in res.violations:
            table[(_at(v.consumer), _at(v.producer), v.rule)] = (v.needs, v.proven)
        raw[f.name] = res.violations
    return run, raw


def _parsed_as_written(an: Analysis, text: str, scratch) -> tuple[object, dict]:
    """The checker's own parse of the file as written, made from its parse of the previous
    version kept in the review's scratch cache (`AnalysisCache.review_scratch`, under a key of
    its own): the front end re-parses only the edited lines (1-2 ms on the 3.2k-line GEMM,
    35-60 ms cold) and its result is the cold parse's (syntax/asm_incremental.py; the checker
    reads no object of the pass: this module is the checker's, never the plan's).  Only the
    runs on the file as written use it; a trial's parse of an edited file would reposition
    this module's instructions, so trials parse from scratch.  With it comes the memo of the
    checker's per-instruction facts (`check_function(facts_memo=)`): the unchanged lines'
    objects keep theirs."""
    from .syntax import parse
    key = ("hwcheck", an.options, an.language)
    module = parse(text, an.path, an.language, previous=scratch.module(an.path, key))
    scratch.set_module(an.path, key, module)
    memo_key = ("hwcheck facts", an.options, an.language)
    memo = scratch.module(an.path, memo_key)
    if memo is None:
        memo = {}
        scratch.set_module(an.path, memo_key, memo)  # (a table of its own, kept as the module is)
    return module, memo


def _idle_waits(func, target, retiring: set) -> set[int]:
    """The lines of `func`'s waits that the checker, in a search that finished, never saw
    retire anything, each the only instruction of its line, and whose removal leaves the
    checker's facts of the instruction before it as they are (`Target.drain_before` reads
    the instruction that follows).  Deleting, relaxing or dropping a counter of such waits
    leaves every state of that search as it was, so the search of the edited file is the
    same search (minus the waits' own steps): the same violations, finished.  The checker
    reads a wait only through `Machine.wait`; `tests/test_review_safe_on_gpu.py` runs the
    checker on every offered change alone."""
    from .validate.hwfacts import decode_wait
    per_line = _per_line(func)
    out: set[int] = set()
    for b in func.blocks:
        body = [i for i in b.instrs if not i.is_label and not i.is_phi]
        for k, inst in enumerate(body):
            if inst in retiring or not _alone(body, k, target, per_line):
                continue
            if not (target.sem(inst).wait or decode_wait(target, inst)):
                continue
            out.add(inst.span.line)
    return out


def _per_line(func) -> dict[int, int]:
    """How many instructions each line of `func` holds (a macro's call site: several)."""
    per_line: dict[int, int] = {}
    for b in func.blocks:
        for inst in b.instrs:
            if inst.span is not None and not inst.is_label:
                per_line[inst.span.line] = per_line.get(inst.span.line, 0) + 1
    return per_line


def _alone(body: list, k: int, target, per_line: dict[int, int]) -> bool:
    """`body[k]` (a block's instructions without labels and phis) is the only instruction of
    its line, and taking it out leaves `Target.drain_before` of the instruction before it as
    it is (the checker's facts of every other instruction stay the same)."""
    inst = body[k]
    if inst.span is None or per_line.get(inst.span.line) != 1:
        return False
    if k > 0:
        prev = body[k - 1]
        following = body[k + 1] if k + 1 < len(body) else None
        if target.drain_before(prev, inst) != target.drain_before(prev, following):
            return False
    return True


def _settled(module, target, changes: list[Change]) -> set[int]:
    """The ids of the changes whose wait is idle by its own block (`validate/hwidle.py`: an
    earlier wait of each of its counters in the block leaves nothing for it to retire), alone
    on its line with the facts around it unchanged (`_alone`).  Such a change is proved
    without a run: the search of the edited file is the search of the file as written on
    every path, finished or not.  It reads a few lines above each wait, so a version whose
    edit is elsewhere gets the same answer again without the checker's whole run."""
    from .validate.hwidle import BlockIdle
    by_line: dict[tuple, Change] = {(c.function, c.line): c for c in changes}
    names = {c.function for c in changes}
    idle = BlockIdle(target)
    out: set[int] = set()
    for func in module.functions:
        if func.name not in names:
            continue
        per_line = _per_line(func)
        for b in func.blocks:
            body = [i for i in b.instrs if not i.is_label and not i.is_phi]
            for k, inst in enumerate(body):
                c = by_line.get((func.name, inst.span.line)) if inst.span is not None else None
                if c is not None and _alone(body, k, target, per_line) and idle.idle(body, k):
                    out.add(id(c))
    return out


def _new(base: _Run, trial: _Run, raw: dict[str, list[HwViolation]]) -> dict[str, list[HwViolation]]:
    """Per function, the trial's violations the file as written does not have (or has with
    a laxer need, or only unproven)."""
    out: dict[str, list[HwViolation]] = {}
    for name, violations in raw.items():
        known = base.found.get(name, {})
        for v in violations:
            had = known.get((_at(v.consumer), _at(v.producer), v.rule))
            if had is not None:
                needs, proven = had
                if (proven or not v.proven) and all(cn in needs and needs[cn] <= n for cn, n in v.needs.items()):
                    continue
            out.setdefault(name, []).append(v)
    return out


def _implicated(v: HwViolation, changes: list[Change]) -> list[Change]:
    """The changes on `v`'s path between its producer and its consumer: after the producer
    in the producer's block (its last visit on the path that can hold it), every block
    visited after that, before the consumer in the consumer's block.  A guess that only
    orders the search (every offer is proved by a run of its own group)."""
    path = v.path
    p, c = v.producer, v.consumer
    pl, cl = _line(p), _line(c)
    pb = p.block.label if p.block is not None else None
    if pl is None or cl is None or pb not in path:
        return list(changes)
    last = len(path) - 1
    k = last if pb == path[last] and pl < cl else max(
        (i for i, lab in enumerate(path[:last]) if lab == pb), default=-1)
    if k < 0:
        return list(changes)
    if k == last:
        return [ch for ch in changes if ch.block == pb and pl < ch.line < cl]
    middle = set(path[k + 1:last])
    return [ch for ch in changes if (ch.block == pb and ch.line > pl) or ch.block in middle
            or (ch.block == path[last] and ch.line < cl)]


def edited_text(lines: list[str], changes: list[Change]) -> str:
    """The file (`lines` with their breaks) with `changes` applied."""
    text = list(lines)
    for c in changes:
        text[c.line - 1] = c.text
    return "".join(text)


def proven_safe(an: Analysis, lines: list[str], changes: list[Change]) -> list[Change]:
    """The changes the hardware checker proves safe alone (see the module docstring);
    `lines`: the file's physical lines with their breaks."""
    if not changes:
        return []
    from .targets import get_target
    text = "".join(lines)
    parsed = _checker_parse(an, text, True)
    settled = _settled(parsed[0], get_target(an.options.arch, "hw"), changes)
    # a change of a wait idle by its own block needs no run (`_settled`)
    safe: list[Change] = [c for c in changes if id(c) in settled]
    changes = [c for c in changes if id(c) not in settled]
    if not changes:
        safe.sort(key=lambda c: (c.line, c.diag.col))
        return safe
    names = {c.function for c in changes}
    base, _ = _check(an, text, names, STEP_BUDGET // 2, proof_only=True, parsed=parsed)
    budget = STEP_BUDGET - sum(max(base.steps.get(n, 0), RUN_STEPS) for n in names)
    # groups of changes of one function still to try, the likeliest-safe first
    groups = []
    for name in sorted(base.proved):
        group = [c for c in changes if c.function == name]
        # a change of an idle wait is proved by the run on the file as written (`_idle_waits`)
        idle = base.idle.get(name, set())
        safe.extend(c for c in group if c.line in idle)
        group = [c for c in group if c.line not in idle]
        if group:
            groups.append(group)
    while groups and budget > 0:
        group = groups.pop(0)
        name = group[0].function
        limit = min(budget, max(int(TRIAL_FACTOR * base.steps.get(name, 0)), RUN_STEPS))
        trial, raw = _check(an, edited_text(lines, group), {name}, limit)
        budget -= max(trial.steps.get(name, 0), RUN_STEPS)
        bad = _new(base, trial, raw).get(name, [])
        if name in trial.proved and not bad:
            safe.extend(group)
            continue
        if len(group) == 1:
            continue  # unsafe (or not proved) alone
        suspects: set[int] = set()
        for v in bad:
            suspects.update(id(c) for c in _implicated(v, group))
        rest = [c for c in group if id(c) not in suspects]
        doubtful = [c for c in group if id(c) in suspects]
        if rest and doubtful:
            # the changes off every offending path together, then each suspect alone
            groups.append(rest)
            groups.extend([c] for c in doubtful)
        else:  # the paths name them all (or nothing was found): halve
            half = (len(group) + 1) // 2
            groups.extend((group[:half], group[half:]))
    safe.sort(key=lambda c: (c.line, c.diag.col))
    return safe
