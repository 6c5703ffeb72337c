"""Which LDS pair an unproven wait stands for, and the `// st.token:N` edits that separate it.

An unproven wait (a planned wait of rule class "fallback") exists because the pass could not
prove two operations apart: a producer still in flight and the consumer the wait protects
(an LDS access, a tensor fill, or a barrier that publishes LDS).  The pass keeps that pair in
its per-anchor contributions (`WaitDataflow.why`, and CoalesceWaits' folded consumers); this
module reads them back for one `PlannedWait` and hands the pair to
`analysis.lds_quickfix.token_fix`, which decides the token sets.

The language server offers the result as a quick fix on the `unproven-wait` diagnostic.
`separation_fixes` re-plans nothing (the first pair, from the analysis the diagnostic came
from, in milliseconds: the action's title and the edit for clients that do not resolve);
`complete_fix` (the resolved edit) re-analyses once per pair until the wait is gone.
"""

from __future__ import annotations

from .analysis.lds_quickfix import TextEdit, token_fix
from .ir import Instruction
from .ir.records import FrozenRecord, _set

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .api import Analysis
    from .results import PlannedWait
    from .waitcnt.pipeline import PassOutput


class SeparationFix(FrozenRecord):
    """One way to make an unproven wait unnecessary: tag `producer_line` and `consumer_line`
    (1-based) with disjoint st.token sets.

    `edits` is empty when no token set can separate the two; `description` then says why.
    `pairs` is how many distinct unproven pairs the pass names for the wait (older overlapping
    operations it does not name may keep the wait after all of them are separated:
    `complete_fix` goes on until it is gone).
    """

    __slots__ = ("producer_line", "consumer_line", "producer", "consumer", "edits", "description", "pairs")
    producer_line: int
    consumer_line: int
    producer: str
    consumer: str
    edits: tuple[TextEdit, ...]
    description: str
    pairs: int

    def __init__(self, producer_line: int, consumer_line: int, producer: str, consumer: str,
                 edits: tuple[TextEdit, ...], description: str, pairs: int) -> None:
        _set(self, "producer_line", producer_line)
        _set(self, "consumer_line", consumer_line)
        _set(self, "producer", producer)
        _set(self, "consumer", consumer)
        _set(self, "edits", edits)
        _set(self, "description", description)
        _set(self, "pairs", pairs)

    @property
    def title(self) -> str:
        """The action's title in an editor's quick-fix menu."""
        lo, hi = sorted((self.producer_line, self.consumer_line))
        return f"Separate with st.token (LDS ops at lines {lo} and {hi})"


def _is_fallback(rule: str) -> bool:
    from .findings import rule_is_proven
    from .waitcnt.pipeline import RULE_CLASS
    return not rule_is_proven(RULE_CLASS.get(rule, rule))


def _output_of(an: Analysis, function: str) -> PassOutput | None:
    return next((po for po in an.outputs if po.func.name == function), None)


def _anchor(po: PassOutput, line: int) -> Instruction | None:
    why = po.df.why
    for b in po.func.blocks:
        for inst in b.instrs:
            sp = inst.span
            if sp is not None and sp.line == line and not (inst.is_label or inst.is_phi) and inst in why:
                return inst
    return None


def unproven_pairs(an: Analysis, wait: PlannedWait) -> list[tuple[Instruction, Instruction]] | None:
    """The (producer, consumer) pairs that make `wait` necessary, in the order the pass found
    them, or None when something else also asks for it (a proven hazard, a fallback without a
    producer, a promotion or cap) and no token can remove it."""
    if wait.placement != "before" or not _is_fallback(wait.rule):
        return None
    po = _output_of(an, wait.function)
    if po is None:
        return None
    inst = _anchor(po, wait.line)
    if inst is None:
        return None
    df = po.df
    target = df.target
    from .waitcnt.overflow import counter_short_name
    tls = [c for c in target.timelines if counter_short_name(target, c) == wait.counter]
    if not tls:
        return None
    # the anchor's own contributions, then those of consumers CoalesceWaits folded into it
    consumers = [(inst, 0)] + [(later, k) for c in tls for later, k in po.coalesced.get(inst, {}).get(c, ())]
    pairs: list[tuple[Instruction, Instruction]] = []
    for consumer, _k in consumers:
        per = df.why.get(consumer)
        if per is None:
            continue
        for c in tls:
            for ct in per[c] if c < len(per) else ():
                if not _is_fallback(ct.rule) or ct.op is None:
                    return None  # the wait stays whatever the tokens say
                pair = (ct.op, consumer)
                if pair not in pairs:
                    pairs.append(pair)
    return pairs or None


def separation_fixes(an: Analysis, wait: PlannedWait) -> list[SeparationFix]:
    """One fix per unproven pair of `wait` (see `unproven_pairs`); [] when tokens cannot help."""
    pairs = unproven_pairs(an, wait)
    if not pairs:
        return []
    po = _output_of(an, wait.function)
    assert po is not None
    from .analysis.lds_facts import lds_facts
    from .api import physical_lines
    facts = lds_facts(po.func, an.module, an.options.arch, cfg=po.df.cfg)
    lines = physical_lines(an.module.text)
    out = []
    for producer, consumer in pairs:
        edits, desc = token_fix(po.func, consumer, producer, lines, facts)
        out.append(SeparationFix(producer.line, consumer.line, producer.mnemonic, consumer.mnemonic,
                                 tuple(edits), desc, len(pairs)))
    return out


__all__ = ["SeparationFix", "TextEdit", "separation_fixes", "unproven_pairs"]


class CompleteFix(FrozenRecord):
    """The result of `complete_fix`: every edit of the rounds kept (against the original
    text), how many rounds ran, and whether the wait is gone."""

    __slots__ = ("edits", "rounds", "removed", "description")
    edits: tuple[TextEdit, ...]
    rounds: int
    removed: bool
    description: str

    def __init__(self, edits: tuple[TextEdit, ...], rounds: int, removed: bool, description: str) -> None:
        _set(self, "edits", edits)
        _set(self, "rounds", rounds)
        _set(self, "removed", removed)
        _set(self, "description", description)


def _insert(text_lines: list[str], edits) -> None:
    for e in sorted(edits, key=lambda e: (e.line, -e.col)):
        s = text_lines[e.line - 1]
        body = s.rstrip("\r\n")
        text_lines[e.line - 1] = body[:e.col - 1] + e.text + body[e.col - 1:] + s[len(body):]


def _proven(an: Analysis) -> set[tuple[int, str]]:
    from .findings import rule_is_proven
    return {(w.line, w.instruction) for w in an.waits() if rule_is_proven(w.rule)}


def _unproven_at(an: Analysis, line: int, counter: str) -> PlannedWait | None:
    from .findings import rule_is_proven
    return next((w for w in an.waits() if w.line == line and w.counter == counter and w.placement == "before"
                 and not rule_is_proven(w.rule)), None)


def complete_fix(text: str, path: str, options, language: str | None, line: int, counter: str,
                 max_rounds: int = 24) -> CompleteFix:
    """Tag pairs until the unproven `counter` wait before `line` is gone: the pass names one
    producer per queue and one consumer per anchor, so once a pair is separated the wait may
    stay for the next (an older op of the same kind, or the `s_barrier_wait` after a tagged
    `s_barrier_signal`).  Each round re-analyses the text with the edits so far and separates
    the pair the wait now stands for.  A round that would make any wait a proven one (a new
    error: tokens shared with another tagged op now prove an overlap) is not kept.  The
    analyses are the caller's cost (one per round); `max_rounds` bounds them."""
    from .api import AnalysisCache, analyze, physical_lines
    lines = physical_lines(text, keepends=True)
    cache = AnalysisCache()
    an = analyze(text, path, options, language, cache=cache)
    before = _proven(an)
    kept: list[TextEdit] = []
    desc = "nothing to separate: the wait is not an unproven one"
    rounds = 0
    while rounds < max_rounds:
        wait = _unproven_at(an, line, counter)
        if wait is None:
            return CompleteFix(tuple(kept), rounds, True, desc if kept else "no unproven wait of that counter there")
        fix = next((f for f in separation_fixes(an, wait) if f.edits), None)
        if fix is None:
            why = separation_fixes(an, wait)
            return CompleteFix(tuple(kept), rounds, False, why[0].description if why else desc)
        trial = list(lines)
        _insert(trial, list(kept) + list(fix.edits))
        nxt = analyze("".join(trial), path, options, language, cache=cache)
        rounds += 1
        if not _proven(nxt) <= before:
            return CompleteFix(tuple(kept), rounds, False,
                               f"separating lines {fix.producer_line} and {fix.consumer_line} as well would make "
                               "another wait a proven one")
        kept.extend(fix.edits)
        desc = f"tags {len({e.line for e in kept})} operations in {rounds} round(s)"
        an = nxt
    return CompleteFix(tuple(kept), rounds, _unproven_at(an, line, counter) is None, desc)
