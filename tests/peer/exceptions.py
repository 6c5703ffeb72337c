"""Classes of LLVM waits we deliberately do not match, read from a checked-in file.

Each class is a *rule*: a predicate over the bound analysis (`verdict.py` evaluates it), never
a line number.  The file ``tests/llvm_peer_exceptions.txt`` says which rules are in force and
why, one ``rule-id: reason`` per line (``#`` comments).  A rule the harness does not know is an
error, so a typo cannot silently widen the exceptions; a rule not listed is not applied, and the
waits it would excuse are reported as unmatched.
"""

from __future__ import annotations

from pathlib import Path

#: rule id -> what it matches (the predicate, in words; verdict.py implements it)
RULES = {
    "entry-drain": "a wait in a callable (non-entry) function that our output satisfies once the "
                   "function is assumed to start with nothing in flight: it drains only the "
                   "caller's operations",
    "memory-model": "a wait our output satisfies once the memory legalizer's fence/atomic waits "
                    "(the keepfence variant: soft waits kept at their conservative value) are "
                    "added: it implements an IR fence or atomic ordering, which assembly does not carry",
    "cross-wave-publish": "a barrier's LLVM wait for LDS traffic (a fill, a DS write) still in flight at "
                          "it that our output leaves in flight: nothing of this wave needs it before it "
                          "is retired (hazards.py, barriers not counted) and the hardware checker, "
                          "which pairs the waves' barriers itself, proves the function on every path",
    "no-dependency": "LLVM waits more than our output needs: every operation of the function that may "
                     "still be in flight there under our waits is retired, on every path, before any "
                     "instruction that reads or overwrites its registers, reads LDS it fills, or "
                     "returns (hazards.py)",
}

EXCEPTIONS_FILE = Path(__file__).resolve().parent.parent / "llvm_peer_exceptions.txt"


class ExceptionsError(ValueError):
    pass


def load_exceptions(path: Path = EXCEPTIONS_FILE) -> dict[str, str]:
    """rule id -> reason, for the rules in force."""
    out: dict[str, str] = {}
    if not path.exists():
        return out
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        rule, sep, reason = line.partition(":")
        rule = rule.strip()
        if not sep or not reason.strip():
            raise ExceptionsError(f"{path}:{n}:1: error: expected 'rule-id: reason'")
        if rule not in RULES:
            raise ExceptionsError(f"{path}:{n}:1: error: unknown rule {rule!r} (known: {', '.join(sorted(RULES))})")
        out[rule] = reason.strip()
    return out
