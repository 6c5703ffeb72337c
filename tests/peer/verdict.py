"""One pair's verdict: each LLVM wait matched, excused by a rule, or unmatched with its path.

Inputs are the texts of one compiled unit: ``nowait.s`` (what stinkywait read), ``llvm.s``
(LLVM's waits), ours (stinkywait's output on nowait.s) and ``keepfence.s`` (the memory
legalizer's waits kept).  They must be one instruction stream modulo waits; the first
difference is reported as the pair's error.

Every LLVM wait instruction is split into requirements (counter, value).  For each:

* counter not modelled by the target description -> counted per counter, not judged;
* the table counts at most `value` ops on the counter there even with no waits at all, and
  the wait was not already in nowait.s -> **table gap** (LLVM's pass never emits a wait that
  has nothing to retire, so LLVM counts an op the table does not): unmatched;
* our bound at that slot <= value -> matched;
* else a rule of `exceptions.py`, when in force, that our output satisfies under its
  assumption -> excused under that rule;
* else unmatched, with the bound and a worst path.

Our own waits are judged against LLVM's output the same way: a requirement of ours that
LLVM's waits do not imply is "ours only" (over-drain, or a counter LLVM does not model).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from .asm_compare import CALLS, AsmFunction, BoundAnalysis, Bounds, Line, Skeleton, build_skeleton, \
    read_functions, slot_waits
from .hazards import Dependencies
from .machine import WAIT_MNEMONICS, PeerTarget


@dataclass
class Unmatched:
    func: str
    line: int            # line of the LLVM wait in llvm.s
    counter: str
    value: int
    bound: int           # our bound at that point
    before: str          # the instruction it stands before
    before_line: int     # ... its line in our output
    reason: str

    def format(self, unit: str) -> str:
        return (f"{unit}:{self.line}: LLVM {self.counter} <= {self.value} before '{self.before}' "
                f"(ours line {self.before_line}): ours allows {self.bound}; {self.reason}")


@dataclass
class OursOnly:
    func: str
    line: int
    counter: str
    value: int
    llvm_bound: int


@dataclass
class PairReport:
    unit: str
    cpu: str
    functions: int = 0
    llvm_reqs: int = 0
    matched: int = 0
    excused: Counter = field(default_factory=Counter)
    unmatched: list[Unmatched] = field(default_factory=list)
    not_modelled: Counter = field(default_factory=Counter)
    ours_reqs: int = 0
    ours_only: list[OursOnly] = field(default_factory=list)
    invalid_waits: int = 0          # our wait instructions the target does not have
    assembles: bool | None = None
    assemble_error: str = ""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.unmatched and self.assembles is not False


def _is_wait(mn: str) -> bool:
    return mn in WAIT_MNEMONICS or mn == "s_wait_tensorcnt"


def _first_difference(a: list[str], b: list[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"token {i}: {x!r} vs {y!r}"
    return f"length {len(a)} vs {len(b)}"


class _Unit:
    """One function in all four files, with the analyses the verdict needs (made on demand)."""

    def __init__(self, sk: Skeleton, an: BoundAnalysis, calls: list[bool],
                 waits: dict[str, dict], fence_only: dict, ours_insts: dict[int, Any], target: PeerTarget) -> None:
        self.sk, self.an, self.calls, self.waits, self.fence_only = sk, an, calls, waits, fence_only
        self.ours_insts, self.target = ours_insts, target
        self._runs: dict[tuple[str, bool, bool], Bounds] = {}
        self._deps: Dependencies | None = None
        self._published: Dependencies | None = None
        self.hardware_proof: Callable[[], bool] = lambda: False

    @property
    def published(self) -> Dependencies:
        """Dependencies with barriers not counted for LDS traffic in flight at them."""
        if self._published is None:
            self._published = Dependencies(self.an, self.waits["ours"], self.ours_insts, self.target, published=True)
        return self._published

    @property
    def deps(self) -> Dependencies:
        if self._deps is None:
            self._deps = Dependencies(self.an, self.waits["ours"], self.ours_insts, self.target)
        return self._deps

    def bounds(self, which: str, entry_zero: bool = False, fences: bool = False) -> Bounds:
        key = (which, entry_zero, fences)
        if key not in self._runs:
            w = self.waits[which] if which != "free" else {}
            if fences:
                w = {s: list(w.get(s, ())) + list(self.fence_only.get(s, ()))
                     for s in set(w) | set(self.fence_only)}
            unknown = not self.sk.is_entry and not entry_zero
            self._runs[key] = self.an.run(w, unknown, self.calls)
        return self._runs[key]


def _fence_only(kf: dict, nw: dict) -> dict:
    """Waits of keepfence.s that nowait.s does not have at the same slot."""
    out = {}
    for slot, lst in kf.items():
        have = Counter(ln.key for ln, _ in nw.get(slot, ()))
        extra = []
        for ln, dec in lst:
            if have[ln.key]:
                have[ln.key] -= 1
            else:
                extra.append((ln, dec))
        if extra:
            out[slot] = extra
    return out


def compare(unit: str, cpu: str, texts: dict[str, str], target: PeerTarget,
            instructions: Callable[[str], dict[int, Any]], rules: dict[str, str]) -> PairReport:
    """Judge one compiled unit.  `texts`: "nowait", "llvm", "ours" and optionally "keepfence".
    `instructions(which)`: line -> stinkywait Instruction of that file (for the table)."""
    rep = PairReport(unit, cpu)
    files: dict[str, dict[str, AsmFunction]] = {}
    for which, text in texts.items():
        files[which] = {f.name: f for f in read_functions(text, _is_wait)}
    names = list(files["ours"])
    for which, fs in files.items():
        if sorted(fs) != sorted(names):
            rep.error = f"{which}: functions {sorted(fs)} differ from ours {sorted(names)}"
            return rep
    rep.functions = len(names)
    modelled = target.modelled_counters()
    inst_of = {w: instructions(w) for w in texts}
    for name in names:
        sk = build_skeleton(files["ours"][name])
        for which in texts:
            other = build_skeleton(files[which][name])
            if other.signature != sk.signature:
                rep.error = (f"{which} and ours are not the same stream in {name}: "
                             + _first_difference(other.signature, sk.signature))
                return rep
        ours_inst = inst_of["ours"]
        pushes = [target.pushes(ours_inst.get(ln.lineno), ln.mnemonic) for ln in sk.insts]
        calls = [ln.mnemonic in CALLS for ln in sk.insts]
        waits = {}
        for which in texts:
            ins = inst_of[which]

            def decode(ln: Line, ins: dict[int, Any] = ins) -> dict[str, int]:
                return target.decode_wait(ins.get(ln.lineno), ln.mnemonic, ln.operands) or {}
            waits[which] = slot_waits(files[which][name], sk, decode)
        fence_only = _fence_only(waits["keepfence"], waits["nowait"]) if "keepfence" in waits else {}
        u = _Unit(sk, BoundAnalysis(sk, target, pushes), calls, waits, fence_only, ours_inst, target)
        u.hardware_proof = _hardware_proof(ours_inst, name, cpu)
        _judge_llvm(rep, u, name, modelled, rules)
        _judge_ours(rep, u, name)
    return rep


def _judge_llvm(rep: PairReport, u: _Unit, name: str, modelled: frozenset[str], rules: dict[str, str]) -> None:
    ours = u.bounds("ours")
    for slot, lst in sorted(u.waits["llvm"].items()):
        hard = {c for _, d in u.waits["nowait"].get(slot, ()) for c in d}
        for ln, dec in lst:
            for c, v in sorted(dec.items()):
                if c not in modelled:
                    rep.not_modelled[c] += 1
                    continue
                rep.llvm_reqs += 1
                bo = ours.bound(slot, c)
                if bo is None:          # unreachable in the skeleton: nothing to retire
                    rep.matched += 1
                    continue
                nxt = ours.next_inst(slot)
                before = str(nxt) if nxt else "end of function"
                before_line = nxt.lineno if nxt else 0
                bf = u.bounds("free").bound(slot, c)
                if c not in hard and bf is not None and bf <= v:
                    rep.unmatched.append(Unmatched(
                        name, ln.lineno, c, v, bo, before, before_line,
                        f"table gap: with no waits at all the table allows only {bf} ops on {c} "
                        f"here, so LLVM counts an operation the table does not"))
                    continue
                if bo <= v:
                    rep.matched += 1
                    continue
                rule = _excusing_rule(u, slot, c, v, rules)
                if rule:
                    rep.excused[rule] += 1
                    continue
                note = ""
                if u.fence_only and _satisfied(u, slot, c, v, fences=True):
                    note = " (satisfied once the fence waits are added; rule memory-model not in force)"
                elif "no-dependency" in rules:
                    note = "; " + u.deps.excuse(slot, c)[1]
                rep.unmatched.append(Unmatched(name, ln.lineno, c, v, bo, before, before_line,
                                               ours.witness(slot, c) + note))


def _satisfied(u: _Unit, slot: tuple[int, int], c: str, v: int, entry_zero: bool = False,
               fences: bool = False) -> bool:
    b = u.bounds("ours", entry_zero=entry_zero, fences=fences).bound(slot, c)
    return b is not None and b <= v


def _excusing_rule(u: _Unit, slot: tuple[int, int], c: str, v: int, rules: dict[str, str]) -> str | None:
    """The rule (or "a+b" pair of rules, all in force) under which our output satisfies it."""
    entry = u.sk.is_entry
    if "memory-model" in rules and u.fence_only and _satisfied(u, slot, c, v, fences=True):
        return "memory-model"
    if "entry-drain" in rules and not entry and _satisfied(u, slot, c, v, entry_zero=True):
        return "entry-drain"
    if ({"memory-model", "entry-drain"} <= set(rules) and not entry and u.fence_only
            and _satisfied(u, slot, c, v, entry_zero=True, fences=True)):
        return "entry-drain+memory-model"
    if "no-dependency" in rules and (entry or "entry-drain" in rules) and u.deps.excuse(slot, c)[0]:
        return "no-dependency"
    # only a wait a barrier alone needs (with barriers counted, something depends on it)
    if ("cross-wave-publish" in rules and (entry or "entry-drain" in rules) and not u.deps.excuse(slot, c)[0]
            and u.published.excuse(slot, c)[0] and u.hardware_proof()):
        return "cross-wave-publish"
    return None


def _hardware_proof(ours: Any, name: str, cpu: str) -> Callable[[], bool]:
    """Does the hardware checker (validate/hwcheck.py: its own view of the other waves,
    validate/hwpublish.py, independent of the pass) prove function `name` of our output, on
    every path it explores, with no search budget spent?  Asked once, on first need."""
    memo: list[bool] = []

    def proof() -> bool:
        if not memo:
            memo.append(_prove(ours, name, cpu))
        return memo[0]
    return proof


def _prove(ours: Any, name: str, cpu: str) -> bool:
    module = getattr(ours, "module", None)
    if module is None:
        return False
    results = getattr(ours, "hardware_results", None)
    if results is None:  # one checker run per output, shared by its functions
        from stinkywait_core.results import Options
        from stinkywait_core.validate.hwcheck import check_module
        results = {r.function: r for r in check_module(module, Options(arch=cpu), lds_addresses=True)}
        ours.hardware_results = results
    res = results.get(name)
    return res is not None and res.ok and res.complete


def _judge_ours(rep: PairReport, u: _Unit, name: str) -> None:
    llvm = u.bounds("llvm")
    for slot, lst in sorted(u.waits["ours"].items()):
        for ln, dec in lst:
            if not dec:
                rep.invalid_waits += 1
                continue
            for c, n in sorted(dec.items()):
                rep.ours_reqs += 1
                bl = llvm.bound(slot, c)
                if bl is not None and bl > n:
                    rep.ours_only.append(OursOnly(name, ln.lineno, c, n, bl))
