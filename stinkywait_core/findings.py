"""What a review finding means to a kernel writer: its kind, how loud it is, how to act on it.

The review (`Analysis.check_diagnostics`) reports every planned wait the text lacks as
`missing-wait`, whatever made the pass plan it.  For a person those are two different
things: a wait that a proven hazard needs (a path reads a stale value without it) and a wait
planned only because the pass cannot prove two LDS accesses disjoint (the conservative
fallbacks, rule class "fallback").  The first is an error; the second is a warning whose fix
may be a `// st.token:N` annotation instead of a wait.  Hand-written waits that are redundant
or stricter than needed are only hints.

`stinkywait check` (text, JSON, SARIF) and the language server both present findings through
this module, so the two never disagree on a kind, a default severity or the advice.  It
reads the core's records only (`PlannedWait.rule`, `DepInfo`); it decides nothing the pass
decided.  Unknown rule classes (the core adds new ones) count as proven hazards.
"""

from __future__ import annotations

from .diagnostics import Diagnostic, Related

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .ir.block_names import BlockNames
    from .results import DepInfo, PlannedWait

#: the core's code for every planned wait the text lacks
CORE_MISSING = "missing-wait"

# finding kinds: (setting key, diagnostic code)
MISSING = "missing"
UNPROVEN = "unproven"
REDUNDANT = "redundant"
STRICTER = "stricter"

#: kind -> the code its diagnostics carry (also the SARIF rule id)
CODES = {MISSING: "missing-wait", UNPROVEN: "unproven-wait", REDUNDANT: "redundant-wait",
         STRICTER: "stricter-wait"}
KIND_OF_CODE = {code: kind for kind, code in CODES.items()}

#: severities a kind can be given ("off": not reported at all)
LEVELS = ("error", "warning", "info", "hint", "off")
#: the defaults: an error only for a wait proven missing
DEFAULT_SEVERITY = {MISSING: "error", UNPROVEN: "warning", REDUNDANT: "hint", STRICTER: "hint"}

#: one line per kind, for SARIF rule descriptions and the README
DESCRIPTIONS = {
    MISSING: "A wait the kernel needs: on some path an instruction reads a value that is still in flight.",
    UNPROVEN: ("A wait needed only because two LDS accesses cannot be proven disjoint; "
               "tag them with // st.token:N comments (one N per LDS region) to prove it, or insert the wait. "
               "Also a drain the bounded analysis forced where too many paths meet (widening): an "
               "approximation, which `--exact` decides."),
    REDUNDANT: "A hand-written wait that drains nothing: nothing older than its count is in flight.",
    STRICTER: "A hand-written wait that drains more than any consumer after it needs.",
}

#: where the `// st.token:N` annotation is explained (README section anchor)
TOKEN_HELP = "README.md#proving-lds-accesses-disjoint-with-st-token"


def rule_is_proven(rule: str) -> bool:
    """Whether a `PlannedWait.rule` class names a proven hazard.  The class "fallback" (and
    any rule name starting with "fallback") means "disjointness could not be proved"; every
    other class (RAW, WAR, WAW, barrier, promotion, tail-drain, ..., and classes added later)
    is a hazard the pass proved, except "widening": a drain the bounded analysis forced where
    too many paths met (an approximation, never an error)."""
    r = rule.strip().lower()
    return not (r.startswith("fallback") or r == "widening")


WaitKey = tuple  # (anchor line, insert line, insert text, instruction)


def wait_key(line: int, insert_line: int, insert_text: str, instruction: str) -> WaitKey:
    """What ties a missing-wait diagnostic to its planned wait: anchor line, insertion and
    the wait itself (waits of two counters may share one inserted line, e.g. gfx1250's
    `s_wait_loadcnt_dscnt`)."""
    return (line, insert_line, insert_text, instruction)


def waits_by_key(waits: Iterable[PlannedWait]) -> dict[WaitKey, PlannedWait]:
    return {wait_key(w.line, w.insert_line, w.insert_text, w.instruction): w for w in waits}


def planned_wait_of(d: Diagnostic, waits: dict[WaitKey, PlannedWait]) -> PlannedWait | None:
    """The planned wait a core `missing-wait` diagnostic asks for (None when not found)."""
    data = d.data or {}
    line, text, instruction = data.get("insert_line"), data.get("insert_text"), data.get("instruction")
    if not isinstance(line, int) or not isinstance(text, str):
        return None
    return waits.get(wait_key(d.line, line, text, instruction))


def kind_of(d: Diagnostic, wait: PlannedWait | None) -> str | None:
    """The finding kind of a review diagnostic (None: not a review finding)."""
    if d.code == CORE_MISSING:
        if wait is not None and not rule_is_proven(wait.rule):
            return UNPROVEN
        return MISSING
    return KIND_OF_CODE.get(d.code) if d.code in (CODES[REDUNDANT], CODES[STRICTER]) else None


def binding_dep(deps: Iterable[DepInfo]) -> DepInfo | None:
    """The producer that sets a wait's count: the smallest countFrom (count = countFrom - 1
    when nothing else shaped the wait); ties go to the earliest line, then the predecessor
    name, so the choice is stable across edits."""
    best = None
    for d in deps:
        if best is None or (d.count_from, d.line, d.pred or "") < (best.count_from, best.line, best.pred or ""):
            best = d
    return best


def subrule(reason: str) -> str | None:
    """The specific rule a `PlannedWait.reason` starts with ("fallback-untagged-lds-writer:
    ..." -> "fallback-untagged-lds-writer"), or None when it does not start with one."""
    head, sep, _ = reason.partition(": ")
    if sep and head and all(c.isalnum() or c == "-" for c in head) and head == head.lower():
        return head
    return None


def rule_label(rule: str, reason: str) -> str:
    """The rule class, plus the specific rule a `PlannedWait.reason` starts with when it says
    more: "RAW", "WAR (war-xcnt)" (never "RAW (raw)")."""
    sub = subrule(reason)
    if sub and sub != rule.lower():
        return f"{rule} ({sub})"
    return rule


def rule_reason(rule: str, reason: str) -> str:
    """A wait's rule and reason in one phrase, the rule said once: "RAW: s_load_b64 (line 17)
    still in flight" (the core's reason starts with its specific rule, "raw: ...", which only
    repeats the class), "fallback (fallback-lds): ..." when the specific rule says more."""
    sub = subrule(reason)
    rest = reason[len(sub) + 2:] if sub else reason
    return f"{rule_label(rule, reason)}: {rest}"


def unproven_advice(w: PlannedWait) -> str:
    """How to make an unproven wait unnecessary (one sentence)."""
    # short: VS Code shows it in the hover, which must fit its box (README: "Annotations")
    return "tag the LDS accesses with // st.token:N or insert the wait"


def present(d: Diagnostic, wait: PlannedWait | None, severity: dict[str, str] | None = None,
            names: BlockNames | None = None) -> Diagnostic | None:
    """A review diagnostic as a person should see it: code and severity of its kind, a
    message that says what to do, the binding producer as the related location, with the
    path that needs it when `names` (the file's `BlockNames`) can say it as the source does.
    Other diagnostics come back unchanged; None when the kind is turned off."""
    kind = kind_of(d, wait)
    if kind is None:
        return d
    level = (severity or DEFAULT_SEVERITY).get(kind, DEFAULT_SEVERITY[kind])
    if level == "off":
        return None
    data = dict(d.data or {})
    data["kind"] = kind
    message, related = d.message, list(d.related)
    if kind in (MISSING, UNPROVEN) and wait is not None:
        data["rule"] = wait.rule
        b = binding_dep(wait.deps)
        path = ""
        if b is not None and names is not None and b.pred is not None:
            paths = [x.pred for x in wait.deps if x.line == b.line and x.count_from == b.count_from]
            path = ", on the path " + names.preds(wait.function, paths)
        related = [] if b is None else [Related(
            b.line, b.column, f"{b.mnemonic} sets the count: countFrom {b.count_from}{path}")]
        if kind == MISSING:
            message = f"missing {wait.instruction} ({wait.rule})"
        elif wait.rule.strip().lower() == "widening":
            message = (f"{wait.instruction} is planned only because the bounded analysis approximated here "
                       f"(widening: too many distinct paths meet); not proven missing, `--exact` decides")
        else:
            # no rule name here (the hover carries it): VS Code shows this in the hover box
            message = (f"{wait.instruction} is needed only because disjointness cannot be proved: "
                       + unproven_advice(wait))
    return Diagnostic(level, CODES[kind], message, d.line, d.col, d.end_line, d.end_col, related, data,
                      d.function)
