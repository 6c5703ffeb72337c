"""StinkyWaitCntInsertionPass::run(): analyze -> optimize -> finalize -> emit, with provenance.

`plan_function` runs the analysis stages and returns the plan plus everything the editor
features need (why each wait exists, FIFO snapshots); it leaves the IR free of PHIs and
inserts nothing.  `run_insertion` additionally emits the waits into the IR, which is what
`stinkywait-opt --print-output` prints.
"""

from __future__ import annotations


from ..analysis.cfg import compute_cfg
from ..analysis.ssa import build_use_def_chain, flatten_sources, remove_phis
from ..analysis.boundaries import CALLS, JUMP_TAIL, JUMP_UNKNOWN, call_symbol, jump_kinds
from ..diagnostics import INFO, WARNING, Diagnostic
from ..ir import Block, Function, Instruction, Modifier
from ..results import DepInfo, FunctionResult, Options, PlannedWait
from ..targets.model import CK_DS, CK_TENSOR, CTL_ENDPGM, CTL_JUMP, CTL_RETURN, CTL_TRAP, TIMELINE_NAMES
from .contribution import Contribution
from .dataflow import WaitDataflow
from .overflow import counter_short_name
from .hazards import RULE_CLASS as HW_RULE_CLASS
from .incremental import FunctionMemo
from .emit import make_wait, tail_anchor
from .coalesce import Coalesced, coalesce_waits
from .satisfied import drop_satisfied
from .promotion import ShallowPredPromotion
from .state import PerPredQueue, TailDrain, WaitInsertionPlan

RULE_CLASS = {"raw": "RAW", "lds-war": "WAR", "async-war": "WAR", "loop-carried-war": "WAR",
              "descriptor-war": "WAR", "barrier": "barrier", "loop-carried-raw": "RAW",
              "lds-ring": "RAW", "ring-saturated": "fallback", "untagged-tensor": "fallback",
              "fallback-untagged-tensor-anchor": "fallback", "fallback-untagged-lds-writer": "fallback",
              "fallback-barrier": "fallback", **{k: v for k, v in HW_RULE_CLASS.items() if k != "lds-war"}}


def counter_groups(target, spec: list[int]) -> list[tuple[str, int, tuple[int, ...]]]:
    """[(counter name, value, its timelines)] a per-timeline spec waits on, in the target's
    counter order: the value is the smallest any of the counter's timelines asks for."""
    out = []
    for cn in target.counter_names:
        tls = tuple(c for c in target.timelines if target.counter_of[c] == cn)
        vals = [spec[c] for c in tls if spec[c] != -1]
        if vals:
            out.append((cn, min(vals), tls))
    return out


class PassOutput:
    """Everything one run of the pass over one function decided.

    `provenance_text`: anchor -> counter -> provenance text (LDS-ring / loop-carried kernels
    only); `memo`: the incremental memo this run used (None: from scratch); `coalesced`: what
    CoalesceWaits folded into each kept anchor.
    """

    __slots__ = ("func", "df", "plan", "relaxed", "result", "provenance_text", "memo", "coalesced")

    def __init__(self, func: Function, df: WaitDataflow, plan: WaitInsertionPlan,
                 relaxed: dict[Instruction, list[int]], result: FunctionResult,
                 provenance_text: dict[Instruction, dict[int, str]] | None = None,
                 memo: FunctionMemo | None = None, coalesced: Coalesced | None = None):
        self.func, self.df, self.plan, self.relaxed, self.result = func, df, plan, relaxed, result
        self.provenance_text = provenance_text if provenance_text is not None else {}
        self.memo = memo
        self.coalesced = coalesced if coalesced is not None else {}


def _loc(inst: Instruction | None) -> tuple[int, int]:
    if inst is None or inst.span is None:
        return 0, 0
    return inst.span.line, inst.span.col


def _pred_name(p: Block | None) -> str | None:
    return None if p is None else p.name


def _deps(contribs: list[Contribution]) -> list[DepInfo]:
    out: list[DepInfo] = []
    seen: set = set()
    for ct in contribs:
        if ct.op is None:
            continue
        key = (id(ct.op), id(ct.pred), ct.count_from)
        if key in seen:
            continue
        seen.add(key)
        line, col = _loc(ct.op)
        blk = ct.op.block.name if ct.op.block is not None else ""
        out.append(DepInfo(line, col, ct.op.mnemonic, blk, _pred_name(ct.pred), ct.count_from))
    return out


def _describe(tls: tuple[int, ...], value: int, contribs: list[Contribution], relaxed: bool, cap_hit: bool,
              options: Options) -> tuple[str, str, list[str]]:
    """(rule, human reason, options that shaped it) for one planned counter wait."""
    shaped: list[str] = []
    if CK_TENSOR in tls:
        shaped.append(f"numWaves={options.num_waves}")
        if options.enable_loop_carried_token_deps:
            shaped.append("enableLoopCarriedTokenDeps")
    binding = [ct for ct in contribs if ct.wait == value]
    if relaxed:
        shaped.append("ShallowPredPromotion")
        rule = "promotion"
        why = "relaxed to the deepest correctable path; shallower predecessors get tail drains"
    elif cap_hit:
        rule = "iteration-cap"
        why = "iteration cap hit: forced full drain"
    elif binding:
        rule = RULE_CLASS.get(binding[0].rule, binding[0].rule)
        ct = binding[0]
        if ct.op is not None:
            # the path it arrives by is the dep's `pred`, which the views name as the source
            # does (ir/block_names.py); a block id here would be a name the file never wrote
            why = (f"{binding[0].rule}: {ct.op.mnemonic} (line {_loc(ct.op)[0]}) still in flight, "
                   f"countFrom {ct.count_from}")
        elif ct.rule == "callee-entry":
            why = ("callee-entry: the caller's operations may still be in flight at this callable "
                   "function's entry (calling convention: the callee waits, as LLVM)")
        elif binding[0].rule == "widening":
            why = ("widening: an approximation of the bounded analysis (too many distinct paths meet at "
                   "this block), not a proven need; `--exact` decides")
        else:
            why = f"{binding[0].rule}: disjointness cannot be proved, drain everything"
    else:
        rule = "finalize"
        why = "kept from the plan after replay (an earlier anchor's drain no longer covers it)"
        if options.enable_tensor_descriptor_war:
            shaped.append("enableTensorDescriptorWar")
    return rule, why, shaped


def _frame(trips: int) -> str:
    return "frame k" if trips == 0 else f"frame k-{trips}"


def _drained_sources(df: WaitDataflow, queues: list[PerPredQueue], keep: int, ring: bool) -> list[str]:
    """Provenance entries for the ops a wait of `keep` retires.

    Two upstream wordings: LDS-ring kernels say `token LDS0 from ^loop (frame k-1, ring slot
    2)`; loop-carried (branch B1) kernels say `LDS0[k-1] via loop`.
    """
    out: list[str] = []
    # paths that arrived empty come last and only add instances no other path names
    # (upstream has no such queues; their ops would otherwise repeat as "via <entry>")
    normal = [q for q in queues if not q.empty_origin]
    seen_instances = {(e.op, e.trips) for q in normal for e in q.ops}
    queues = normal + [q for q in queues if q.empty_origin
                       and any((e.op, e.trips) not in seen_instances for e in q.ops)]
    for q in queues:
        n = len(q.ops)
        if not ring:
            where = q.pred.name if q.pred is not None else "local"
            for e in q.ops[:max(0, n - keep)]:
                for t in df.info[e.op].tokens or ():
                    s = f"LDS{t}[{'k' if e.trips == 0 else f'k-{e.trips}'}] via {where}"
                    if s not in out:
                        out.append(s)
            continue
        where = f"^{q.pred.name}" if q.pred is not None else "local"
        for e in q.ops[:max(0, n - keep)]:
            inf = df.info[e.op]
            toks = inf.tokens or ()
            slot = ""
            for ai, acc in enumerate(inf.ring):
                if acc[2] > 0:
                    d = e.deltas[ai] if ai < len(e.deltas) else 0
                    slot = f", ring slot {(acc[3] + d) % acc[2]}"
                    break
            for t in toks:
                s = f"token LDS{t} from {where} ({_frame(e.trips)}{slot})"
                if s not in out:
                    out.append(s)
        for op in q.sat:
            for t in df.info[op].tokens or ():
                s = f"token LDS{t} from {where} (frame k-(N+))"
                if s not in out:
                    out.append(s)
    return out


def _lds_facts_of(func: Function, module, arch: str, cfg, chains):
    """The LDS address facts of `func` (analysis/lds_facts.py), or None if they cannot be had;
    imported only when a plan first asks (a cold plan without such a question never pays)."""
    try:
        from ..analysis.lds_facts import lds_facts
        return lds_facts(func, module, arch, cfg=cfg, chains=chains)
    except (ImportError, RecursionError, ValueError, TypeError, KeyError, AttributeError, ArithmeticError):
        return None


def plan_function(func: Function, options: Options, memo: FunctionMemo | None = None,
                  end_is_return: bool = False, module=None, pause=None) -> PassOutput:
    """Analyze and optimize one function; the IR is left unchanged apart from `sources`.

    `memo`: what the previous analysis of this function left (incremental re-planning,
    waitcnt/incremental.py); the result is the same with or without it.  `end_is_return`:
    falling off the function's last block leaves it (assembly; a STIR function is a region of
    a kernel), so under the hardware model it drains like a return.  `module` (assembly): the
    file, for the LDS address analysis that proves untagged LDS accesses disjoint.  `pause()`
    (api.analyze's) is called between the stages and by the solver between blocks.
    """
    if memo is not None and memo.cfg is not None and memo.changed_blocks is not None:
        cfg = memo.cfg  # an adopted function keeps its blocks and edges: same orders, dominators
    else:
        cfg = compute_cfg(func)
    pseudo = options.model == "upstream"
    if memo is not None:
        memo.cfg = cfg
        chains = build_use_def_chain(func, cfg, memo.ssa, memo.changed_blocks, memo.dropped, include_pseudo=pseudo)
    else:  # (the LDS address analysis reads its reaching definitions too)
        chains = build_use_def_chain(func, cfg, include_pseudo=pseudo)
    if memo is not None:
        memo.begin()
    if pause is not None:
        pause()
    df = WaitDataflow(func, cfg, options, memo, units=None if pseudo else chains.units, pause=pause)
    assembly = module is not None and getattr(module, "kind", "") == "asm"
    if df.hw and assembly:
        df.lds_source = lambda: _lds_facts_of(func, module, options.arch, cfg, chains)
    df.solve()
    if pause is not None:
        pause()
    plan = df.materialize_plan()
    relaxed: dict[Instruction, list[int]] = {}
    if options.optimize and not (options.bounded and df.cap_hit):
        relaxed = ShallowPredPromotion().rewrite(plan, df)
    if pause is not None:
        pause()
    promoted = {k: list(v) for k, v in plan.anchor_waits.items()} if relaxed else None
    df.finalize_plan(plan, unchanged=not relaxed)
    if promoted is not None and not df.cap_hit:
        # waits the replay added at joins get the same promotion, then one more replay
        more = ShallowPredPromotion().rewrite_added(plan, df, promoted)
        if more:
            for k, cs in more.items():
                relaxed.setdefault(k, []).extend(cs)
            df.finalize_plan(plan)
    if pause is not None:
        pause()
    window = options.coalesce_for(assembly)
    coalesced = coalesce_waits(plan, df, window, options.latency_model,
                               memo.stall_facts if memo is not None else None,
                               memo.folds if memo is not None else None) if options.optimize and window else {}
    if options.optimize and window:
        # (a fold can leave a later wait past a join satisfied on every path into it)
        drop_satisfied(plan, df, coalesced, memo.satisfied_blocks if memo is not None else None, memo)
    if pause is not None:
        pause()
    if end_is_return and df.hw:
        _end_of_function_drains(df, plan)
    if memo is not None:
        df.remember_lds()
        memo.end()
    remove_phis(func)
    out = PassOutput(func, df, plan, relaxed, FunctionResult(func.name), memo=memo, coalesced=coalesced)
    _build_result(out, options)
    if df.hw and assembly:
        _boundary_notes(out, module)
    return out


def _end_of_function_drains(df: WaitDataflow, plan: WaitInsertionPlan) -> None:
    """A block with no successor that does not end the program, return or trap falls off the
    function (LLVM: SI_RETURN_TO_EPILOG): everything but stores is drained at its end."""
    for b in df.rpo:
        if b.succs:
            continue
        last = next((i for i in reversed(b.instrs) if not i.is_phi and not i.is_label), None)
        if last is not None and df.info[last].control in (CTL_ENDPGM, CTL_RETURN, CTL_TRAP, CTL_JUMP):
            continue
        st = df.final_exit.get(b)
        if st is None:
            continue
        spec = [-1] * len(st.queues)
        for c in df.call_clears:
            if any(q.ops or q.sat for q in st.queues[c]):
                spec[c] = 0
        if any(v != -1 for v in spec):
            # what the drain leaves in translation (ops retired on their counter are translated)
            after = st.copy()
            for c in df.call_clears:
                if c not in df.xcnt_cks:
                    df.trim(after, c, 0)
            df.sync_translations(after)
            for c in df.xcnt_cks:
                if spec[c] != -1 and not any(q.ops or q.sat for q in after.queues[c]):
                    spec[c] = -1
            plan.tail_drains.append(TailDrain(b, spec, "return"))


def _boundary_notes(out: PassOutput, module) -> None:
    """Say, at the line, what the calling convention assumes where the other side is not in the
    file: a call or tail call to a callee the file does not hold (it waits at its entry for what
    is in flight here, and returns with everything but stores drained), and an indirect jump
    that cannot be told apart from a return (taken for one: it drains)."""
    func, res = out.func, out.result
    local = {f.name for f in module.functions if f.callable}
    labels = {b.label for b in func.blocks}

    def note(inst: Instruction, code: str, text: str) -> None:
        sp = inst.span
        line, col = (sp.line, sp.col) if sp else (1, 1)
        res.diagnostics.append(Diagnostic(INFO, code, text, line, col, function=func.name))

    assumed = ("assumes the calling convention: the callee waits at its entry for the loads, LDS, "
               "SMEM and exports in flight here")
    for b in func.blocks:
        term = b.terminator()
        if term is None or not term.mnemonic.startswith(CALLS):
            continue
        names = [n for i in (b.instrs if not term.mnemonic.startswith("s_call_") else [term]) if not i.is_label
                 for n in (call_symbol(op) for op in i.srcs) if n is not None]
        if any(n in labels for n in names):
            continue  # a subroutine of this function: its code is analysed along the CFG
        if any(n in local for n in names):
            continue  # its entry wait is checked where it is defined
        callee = f"'{names[0]}'" if names else "through a register"
        note(term, "call-assumption", f"call {callee}: the callee is not in this file; {assumed}, "
             "and returns with everything but stores drained")
    for jump, (kind, why) in jump_kinds(func).items():
        if kind == JUMP_TAIL:
            sym = next((n for i in (jump.block.instrs if jump.block is not None else []) if not i.is_label
                        for n in (call_symbol(op) for op in i.srcs) if n is not None), None)
            if sym in local:
                continue
            note(jump, "tail-call", f"tail call ({why}): no drain as at a return; {assumed}")
        elif kind == JUMP_UNKNOWN:
            note(jump, "jump-assumed-return", f"{jump.mnemonic} is taken for a return ({why}): everything "
                 "but stores is drained before it; if it is a tail call, those waits are the callee's to make")


def _clause_warnings(out: PassOutput) -> None:
    """A wait before a member of an ``s_clause`` splits the clause: the members depend on
    each other.  Say so, and what the clause would be with its independent instructions."""
    df, res = out.df, out.result
    seen: set = set()
    for inst in out.plan.anchor_waits:
        head = df.info[inst].in_clause
        if not head or head in seen:
            continue
        seen.add(head)
        members = df.info[head].clause or ()
        k = members.index(inst) if inst in members else 0
        sp = head.span
        line, col = (sp.line, sp.col) if sp else (1, 1)
        fix = f"s_clause {k - 1:#x}" if k >= 2 else "no s_clause"
        res.diagnostics.append(Diagnostic(
            WARNING, "wait-in-clause",
            f"{head.mnemonic} {head.first_literal():#x} groups instructions that depend on each other: "
            f"{inst.mnemonic} (line {_loc(inst)[0]}) needs a wait on an earlier member, placed inside the "
            f"clause; with its independent instructions the clause is {fix}",
            line, col, function=out.func.name, data={"member_line": _loc(inst)[0], "suggest": fix}))


def _anchor_waits(out: PassOutput, options: Options, b: Block, inst: Instruction, spec: list[int],
                  why: list | None, ring_kernel: bool, lc_kernel: bool) -> None:
    """The PlannedWaits (one per hardware counter) and LDS-ring / loop-carried provenance text
    of one anchor."""
    df, res = out.df, out.result
    target = df.target
    why = why or [[] for _ in range(len(spec))]
    relaxed = out.relaxed.get(inst, ())
    folded = out.coalesced.get(inst, {})
    for cn, value, tls in counter_groups(target, spec):
        contribs = [ct for c in tls for ct in why[c]]
        taken = _folded_contributions(df, folded, tls)
        own = any(ct.wait == value for ct in contribs)
        rule, reason, shaped = _describe(tls, value, contribs if own or not taken else taken + contribs,
                                         any(c in relaxed for c in tls), df.cap_hit, options)
        if taken:
            shaped.append("CoalesceWaits")
            if not own:
                later = next(b for c in tls for b, _ in folded.get(c, ()))
                reason = (f"{reason}; waits here for {later.mnemonic} (line {_loc(later)[0]}), "
                          f"so that one needs no wait of its own")
                contribs = taken + contribs
        if any(ct.rule == "isa-drain" and ct.op is None and ct.wait == value for ct in contribs):
            note = target.sem(inst).note
            reason = f"isa-drain: {inst.mnemonic} needs every {cn} op complete first" + (f" ({note})" if note else "")
        if rule == "fallback" and df.lds_source is not None:
            # a per-wave pair the address analysis could not separate (a barrier's drain is
            # not a pair question: it publishes to the other waves, its reason says so)
            binding = next((ct for ct in contribs if ct.wait == value and ct.op is not None
                            and ct.rule == "fallback-lds"), None)
            if binding is not None:
                consumer = next((later for c in tls for later, k in folded.get(c, ())
                                 if any(ct.op is binding.op and ct.wait - k == value
                                        for ct in (df.why.get(later) or [[]] * (c + 1))[c])), inst)
                why_not = df.lds_why(binding.op, consumer, False)
                if why_not:
                    reason = f"{reason}; not proven disjoint: {why_not}"
        line, col = _loc(inst)
        res.waits.append(PlannedWait(
            out.func.name, b.name, line, col, "before", counter_short_name(target, tls[0]), value,
            target.encode_waits({cn: value})[0], rule, reason, _deps(contribs), shaped))
        c = tls[0]
        text = None
        snap = df.snapshot_at(inst) if ring_kernel or (lc_kernel and c in (CK_DS, CK_TENSOR)) else None
        if snap is not None:
            srcs_txt = _drained_sources(df, snap[c], value, ring_kernel)
            if srcs_txt:
                text = "drains " + ("; " if ring_kernel else ",").join(srcs_txt)
        inf = df.info[inst]
        if c == CK_DS and inf.lc_war is not None:
            toks = ",".join(f"LDS{t}" for t in inf.lc_war[0])
            d = inf.lc_war[1]
            text = f"covers loop-carried WAR on {toks} ({d} trip{'s' if d != 1 else ''} back)"
        if text:
            out.provenance_text.setdefault(inst, {})[c] = text


def _folded_key(folded: dict | None, df: WaitDataflow) -> tuple:
    """What the waits of an anchor read from CoalesceWaits (part of the reuse key)."""
    if not folded:
        return ()
    return tuple((c, id(later), k, id(df.why.get(later))) for c, lst in sorted(folded.items()) for later, k in lst)


def _folded_contributions(df: WaitDataflow, folded: dict, tls: tuple[int, ...]) -> list[Contribution]:
    """The later anchors' contributions CoalesceWaits moved here, as seen from here: k ops
    fewer are newer than each producer."""
    out: list[Contribution] = []
    for c in tls:
        for later, k in folded.get(c, ()):
            lists = df.why.get(later)
            if not lists:
                continue
            for ct in lists[c]:
                out.append(Contribution(ct.rule, ct.wait - k, ct.op, ct.pred, ct.count_from - k, ct.trips))
    return out


class _RunResult:
    """`_build_result`'s record of one run of blocks: the CoalesceWaits record it was made
    under (`fold`) and that record's finalize records (`finals`, the list object: a record
    checked again by content gets a new one), the cap, the run's waits and each anchor's
    record (the anchor-by-anchor reuse when the run's does not hold)."""

    __slots__ = ("fold", "finals", "cap_hit", "waits", "anchors")

    def __init__(self, fold, finals, cap_hit: bool, waits: list, anchors: dict) -> None:
        self.fold, self.finals, self.cap_hit, self.waits, self.anchors = fold, finals, cap_hit, waits, anchors


def _run_holds(old: _RunResult, fold, cap_hit: bool) -> bool:
    """A run's waits of last time hold: this version's CoalesceWaits record of the run is the
    one they were made under, checked against the same finalize records (so the run's waits,
    what each took over and their provenance lists are the same objects), and the cap is the
    same (the caller requires that no line moved)."""
    return old.fold is fold and old.finals is fold.finals and old.cap_hit == cap_hit


def _build_result(out: PassOutput, options: Options) -> None:
    df, plan, res = out.df, out.plan, out.result
    res.sweeps = df.sweeps
    res.converged = not df.cap_hit
    res.diagnostics.extend(df.diagnostics)
    # (both imply the solver's track_trips, known already: no scan of every fact without them)
    ring_kernel = df.track_trips and any(inf.ring for inf in df.info.values())
    lc_kernel = df.track_trips and not ring_kernel and any(inf.lc_war or inf.lc_raw for inf in df.info.values())
    memo = out.memo
    # an anchor's waits are a function of (its position, spec, provenance lists, promotion,
    # cap); the provenance lists are the finalize memo's own objects, and while no line moved
    # the producers they name have not moved either
    reuse = memo is not None and memo.layout_stable and not (ring_kernel or lc_kernel)
    anchors_all = plan.anchor_waits
    # per run of blocks (CoalesceWaits' runs when it folded with its memo this version, else
    # per block): the run's waits reused whole while its CoalesceWaits record is this
    # version's and was checked against the same finalize records (`_RunResult`), else anchor
    # by anchor
    folds = memo.folds if memo is not None and memo.folds_made else None
    if folds is not None:
        runs = memo.coalesce_layout.runs

        def in_run(run: list) -> list:
            return [(inst, anchors_all[inst]) for r in run for inst in r.instrs if inst in anchors_all]
    else:
        # anchors per block, in walk (= instruction) order: finalize records them block by block
        by_block: dict[Block, list] = {}
        for inst, spec in anchors_all.items():
            lst = by_block.get(inst.block)
            if lst is None:
                by_block[inst.block] = [(inst, spec)]
            else:
                lst.append((inst, spec))
        runs = [[b] for b in out.func.blocks if b in by_block]

        def in_run(run: list) -> list:
            return by_block[run[0]]
    # the record of an anchor: (span, block name, spec, provenance, promotion, cap, folds,
    # its waits), compared field by field, the provenance lists by identity (7,500 anchors on
    # a 30k-line kernel: no key tuple is built for an anchor whose record holds)
    why_get, relaxed_get, coalesced_get = df.why.get, out.relaxed.get, out.coalesced.get
    old_runs = memo.results if reuse else {}
    cap_hit = df.cap_hit
    waits = res.waits
    done: dict = {}
    # (a wait dropped as satisfied, now or last time, rests on bounds from outside its run)
    dropped_in = (memo.satisfied_blocks | memo.satisfied_before) if memo is not None else set()
    for run in runs:
        key = run[0]
        fold = folds.get(key) if folds is not None else None
        old = old_runs.get(key)
        if old is not None and fold is not None and _run_holds(old, fold, cap_hit) \
                and not (dropped_in and any(r in dropped_in for r in run)):
            waits.extend(old.waits)
            done[key] = old
            memo.reused_results += 1
            continue
        results_get = old.anchors.get if old is not None else None
        mine: dict = {}
        first_of_run = len(waits)
        for inst, spec in in_run(run):
            b = inst.block
            bname = b.name
            why = why_get(inst)
            rel = relaxed_get(inst)
            rel = tuple(rel) if rel else ()
            fold_of = coalesced_get(inst)
            fk = _folded_key(fold_of, df) if fold_of else ()
            span = inst.span
            if results_get is not None:
                rec = results_get(inst)
                if rec is not None and rec[3] is why and rec[2] == spec and rec[4] == rel and rec[6] == fk \
                        and rec[5] == cap_hit and rec[1] == bname and (rec[0] is span or rec[0] == span):
                    waits.extend(rec[7])
                    mine[inst] = rec
                    continue
            first = len(waits)
            _anchor_waits(out, options, b, inst, spec, why, ring_kernel, lc_kernel)
            mine[inst] = (span, bname, list(spec), why, rel, cap_hit, fk, waits[first:])
        if memo is not None:
            done[key] = _RunResult(fold, fold.finals if fold is not None else None, cap_hit,
                                   waits[first_of_run:], mine)
    if memo is not None:
        memo.results = done
    for td in plan.tail_drains:
        anchor = tail_anchor(td.pred)
        last = anchor or td.pred.terminator()
        line, col = _loc(last) if last is not None else (td.pred.span.line if td.pred.span else 0, 1)
        for cn, value, tls in counter_groups(df.target, td.spec):
            if td.rule == "return":
                reason, shaped = ("the function ends here: whatever runs next may read any register or LDS "
                                  "this function's memory operations still write", [])
            else:
                reason, shaped = ("ShallowPredPromotion: pre-drain this shallow predecessor so the join's "
                                  "wait can relax", ["ShallowPredPromotion"])
            res.waits.append(PlannedWait(
                out.func.name, td.pred.name, line, col, "before" if anchor is not None else "after",
                counter_short_name(df.target, tls[0]), value, df.target.encode_waits({cn: value})[0], td.rule,
                reason, [], shaped, tail_drain=True))
    res.widened = df.widening
    if df.widening:
        first = _loc(out.func.blocks[0].instrs[0]) if out.func.blocks and out.func.blocks[0].instrs else (1, 1)
        # an approximation, never a proof: a warning that says so and where, never an error
        # (the review reports the waits it forced as unproven, findings.py)
        res.diagnostics.append(Diagnostic(
            WARNING, "widened",
            f"bounded analysis: {df.widen_reason} in {out.func.name}; re-solved with widening: the waits "
            f"here are an approximation, maybe stricter than the exact pass would give (never weaker); "
            f"`--exact` gives the exact ones",
            *first, function=out.func.name,
            data={"blocks": {b.name: why for b, why in df.widened_blocks.items()}}))
        for b, why in df.widened_blocks.items():
            bl = _loc(next((i for i in b.instrs if i.span is not None), None))
            res.diagnostics.append(Diagnostic(WARNING, "widened", f"bounded analysis, an approximation: {why}",
                                              *(bl if bl[0] else first), function=out.func.name))
    elif df.join_reason:
        first = _loc(out.func.blocks[0].instrs[0]) if out.func.blocks and out.func.blocks[0].instrs else (1, 1)
        res.diagnostics.append(Diagnostic(
            INFO, "joined-by-producer",
            f"bounded analysis: {df.join_reason} in {out.func.name}; solved with the per-producer join, "
            f"whose waits are the exact ones (the FIFO view shows one witness path per producer)",
            *first, function=out.func.name))
    if df.cap_hit:
        res.diagnostics.append(Diagnostic(
            INFO, "forced-drain", "iteration cap hit: every planned wait in this function is forced to 0",
            *(_loc(out.func.blocks[0].instrs[0]) if out.func.blocks and out.func.blocks[0].instrs else (1, 1)),
            function=out.func.name))
    if df.hw:
        _clause_warnings(out)
        if df._publish is not None:
            from .publish import published_notes
            for barrier, text in published_notes(df._publish):
                res.diagnostics.append(Diagnostic(INFO, "lds-published", text, *_loc(barrier),
                                                  function=out.func.name))
        from .launch_note import launch_note
        note = launch_note(df._lds or None, res)
        if note is not None:
            res.diagnostics.append(Diagnostic(INFO, "launch-undeclared", note[1], note[0].line, note[0].column,
                                              function=out.func.name))
    res.fifo = FifoView(df)
    res.producers = ProducerView(out.func, df)


class ProducerView(dict):
    """consumer line -> [(line, col)] of the async producers it reads, computed on demand.

    The line index is built on first use: most analyses (every keystroke in the editor) are
    never asked."""

    def __init__(self, func: Function, df: WaitDataflow):
        super().__init__()
        self._func = func
        self._df = df
        self._index: dict[int, Instruction] | None = None
        self._memo: dict[int, list[tuple[int, int]]] = {}

    @property
    def _by_line(self) -> dict[int, Instruction]:
        if self._index is None:
            self._index = {}
            for b in self._func.blocks:
                for inst in b.instrs:
                    if inst.span is not None and any(s is not None for s in inst.sources):
                        self._index.setdefault(inst.span.line, inst)
        return self._index

    def _compute(self, line: int) -> list[tuple[int, int]]:
        if line not in self._memo:
            self._memo[line] = [_loc(p) for p in _producers(self._by_line[line], self._df)]
        return self._memo[line]

    def __contains__(self, line: object) -> bool:
        return line in self._by_line and bool(self._compute(line))  # type: ignore[arg-type]

    def __getitem__(self, line: int) -> list[tuple[int, int]]:
        if line not in self._by_line:
            raise KeyError(line)
        return self._compute(line)

    def get(self, line, default=None):  # type: ignore[override]
        return self._compute(line) if line in self._by_line and self._compute(line) else default

    def keys(self):  # type: ignore[override]
        return [ln for ln in sorted(self._by_line) if self._compute(ln)]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def items(self):  # type: ignore[override]
        return [(k, self[k]) for k in self.keys()]


def _producers(inst: Instruction, df: WaitDataflow) -> list[Instruction]:
    """Async producers a consumer's SSA sources reach (through PHIs), in text order."""
    info = df.info
    out = [s for s in flatten_sources(inst) if s in info and info[s].results]
    out.sort(key=lambda i: _loc(i))
    return out


class FifoView(dict):
    """line -> {counter: [QueueView]}, converted lazily from the finalize snapshots (each
    made when its line is first asked for, see finalize.py)."""

    def __init__(self, df: WaitDataflow):
        super().__init__()
        self._df = df
        self._index: dict[int, Instruction] | None = None

    @property
    def _by_line(self) -> dict[int, Instruction]:
        if self._index is None:  # built on first use (see ProducerView)
            self._index = self._df.snapshot_lines()
        return self._index

    def __contains__(self, line: object) -> bool:
        return line in self._by_line

    def __len__(self) -> int:
        return len(self._by_line)

    def __iter__(self):
        return iter(sorted(self._by_line))

    def keys(self):  # type: ignore[override]
        return sorted(self._by_line)

    def get(self, line, default=None):  # type: ignore[override]
        return self[line] if line in self._by_line else default

    def __getitem__(self, line: int):
        from ..results import QueuedOpView, QueueView
        inst = self._by_line[line]
        snap = self._df.snapshot_at(inst)
        view: dict[str, list[QueueView]] = {}
        for c in self._df.cks:
            qs = [q for q in snap[c] if q.ops or q.sat]
            if not qs:
                continue
            lst = []
            for q in qs:
                n = len(q.ops)
                ops = tuple(QueuedOpView(_loc(e.op)[0], e.op.mnemonic, n - i, e.trips)
                            for i, e in enumerate(q.ops))
                lst.append(QueueView(_pred_name(q.pred), ops, len(q.sat)))
            view[TIMELINE_NAMES[c]] = lst
        return view

    def items(self):  # type: ignore[override]
        return [(k, self[k]) for k in self.keys()]

    def values(self):  # type: ignore[override]
        return [self[k] for k in self.keys()]


def emit_waits(po: PassOutput) -> list[Instruction]:
    """Insert the plan's waits into the IR; returns the new instructions in program order."""
    plan, df = po.plan, po.df
    target = df.target
    ring_text = po.provenance_text
    new: list[Instruction] = []
    for b in po.func.blocks:
        out: list[Instruction] = []
        for inst in b.instrs:
            spec = plan.anchor_waits.get(inst)
            if spec is not None:
                for cn, value, tls in counter_groups(target, spec):
                    c = tls[0]
                    w = make_wait(cn, value, plan.tensor_tokens.get(inst) if c == CK_TENSOR else None)
                    text = ring_text.get(inst, {}).get(c)
                    if text:
                        w.comment = text
                        if c == CK_TENSOR:
                            w.mods["wait_provenance"] = Modifier("wait_provenance", {"text": text})
                    w.block = b
                    out.append(w)
                    new.append(w)
            out.append(inst)
        b.instrs = out
    for td in plan.tail_drains:
        b = td.pred
        waits = []
        for cn, value, _tls in counter_groups(target, td.spec):
            w = make_wait(cn, value)
            w.block = b
            waits.append(w)
        anchor = tail_anchor(b)
        if anchor is None:
            b.instrs.extend(waits)
        else:
            i = b.instrs.index(anchor)
            b.instrs[i:i] = waits
        new.extend(waits)
    return new


def run_insertion(func: Function, options: Options) -> FunctionResult:
    """The whole pass on one function, mutating it like upstream (used by stinkywait-opt)."""
    po = plan_function(func, options)
    emit_waits(po)
    return po.result
