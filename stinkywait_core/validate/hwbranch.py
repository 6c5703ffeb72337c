"""The checker's own branch knowledge for its pairing walk (validate/hwwaves.py): which way a
wave goes at a branch whose outcome is already known.

Written for the checker alone (the pass's waitcnt/wave_branch_facts.py shares nothing with it).

Two facts, each read from the walk's value names:

* *Launch EXEC.*  Where no EXEC write may precede a ``s_cbranch_execz`` (``execnz``) on any
  path from the entry (the skeleton's forward "EXEC written on some path" fact), EXEC is the
  launch mask, and a wave is launched for at least one work-item: execz never jumps, execnz
  always does.  LLVM emits ``s_mov_b64 vcc, exec; s_cbranch_execz`` after a uniform ``if``
  (aiter's gfx950 a8w8 cktile GEMM, right after its wave-group split): walked both ways, the
  two ways' K-split bounds became one wave's own and the loop trips of the groups unequal.
* *Outcomes of values.*  When one wave takes a two-way SCC or VCC branch while the other waits
  at a fence, each way walked records ``(kind, names, value)``: the condition ("scc": SCC is
  1, "vcc": VCC is not zero) of the registers with these value names is `value`.  When the
  other wave later branches on registers holding the same names, it goes that way (the cktile
  GEMM's two groups run one barrier apart; the leading group tests the loop bound while the
  other still waits at the loop's last barrier).  Only names that stand for one value at a
  time are used: none made of a wave's own names (``("wave", side, where, ...)`` is the same
  name on every execution of `where`), a pair's plain join or an earlier visit's (``stale``)
  value; an anti-unification variable stands for one value of each visit, as the walk's
  equalities already assume.  The facts are joined with the registers' names: the plain
  join keeps the facts both visits hold; a generalising join anti-unifies each pair of facts
  of the same kind and value with the registers' own variables (`join_facts`).
"""

from __future__ import annotations

#: the key the facts are kept under in wave A's name map (no register is named so)
KNOWN = ("known",)
_BRANCHES = ("s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz", "s_cbranch_execz",
             "s_cbranch_execnz")
#: name heads that never stand for one value at a time
_UNSAFE = ("wave", "stale", "join")


def branch_info(blocks: list, succs: list[list[int]], lost: set) -> tuple:
    """Per block: (branch mnemonic, index in its successor list of the jump's target, whether
    EXEC is the launch mask at the branch) for a two-way branch of `_BRANCHES` whose target
    is one of its two successors; None for any other block.  `lost`: (block, instruction
    index) positions an EXEC write may precede."""
    out = []
    for bi, b in enumerate(blocks):
        got = None
        body = [(j, i) for j, i in enumerate(b.instrs) if not i.is_label and not i.is_phi]
        if body and len(succs[bi]) == 2:
            j, term = body[-1]
            if term.mnemonic in _BRANCHES and term.srcs:
                lab = getattr(term.srcs[0], "value", None)
                hits = [k for k, t in enumerate(succs[bi]) if blocks[t].label == lab]
                if isinstance(lab, str) and len(hits) == 1:
                    got = (term.mnemonic, hits[0], (bi, j) not in lost)
        out.append(got)
    return tuple(out)


def condition_units(mnemonic: str) -> tuple | None:
    if mnemonic.startswith("s_cbranch_scc"):
        return (("SCC", 0),)
    if mnemonic.startswith("s_cbranch_vcc"):
        return (("vcc", 0), ("vcc", 1))
    return None


def kind_of(mnemonic: str) -> str:
    return "scc" if mnemonic.startswith("s_cbranch_scc") else "vcc"


def jumps_when(mnemonic: str) -> bool:
    """The condition value ("SCC is 1", "VCC is not zero") at which the branch jumps."""
    return mnemonic.endswith(("scc1", "vccnz"))


def launch_way(info: tuple | None) -> int | None:
    """The successor index an execz/execnz at the launch mask takes (None: not such a branch)."""
    if info is None or not info[2] or not info[0].startswith("s_cbranch_exec"):
        return None
    target = info[1]
    return target if info[0] == "s_cbranch_execnz" else 1 - target


def decided(info: tuple | None, names: tuple | None, facts: frozenset | None) -> int | None:
    """The successor index a wave whose condition registers hold `names` takes, by a fact."""
    if info is None or names is None or not facts:
        return None
    mn, target, _ = info
    if mn.startswith("s_cbranch_exec"):
        return None
    kind = kind_of(mn)
    for k, ns, value in facts:
        if k == kind and ns == names:
            return target if value == jumps_when(mn) else 1 - target
    return None


def outcome_facts(info: tuple | None, names: tuple | None) -> list | None:
    """(successor index, fact) for each way of a wave's SCC/VCC branch whose condition
    registers hold `names` (all usable); None when it is no such branch."""
    if info is None or names is None or info[0].startswith("s_cbranch_exec"):
        return None
    mn, target, _ = info
    kind = kind_of(mn)
    return [(target, (kind, names, jumps_when(mn))), (1 - target, (kind, names, not jumps_when(mn)))]


class Usable:
    """Whether a value name stands for one value at a time (see the module docstring), by the
    walk's term table (name -> tuple), memoised."""

    def __init__(self, terms: list, opslots) -> None:
        self._terms = terms
        self._opslots = opslots
        self._memo: dict[int, bool] = {}

    def __call__(self, name: int) -> bool:
        got = self._memo.get(name)
        if got is not None:
            return got
        self._memo[name] = False  # (a cycle cannot happen: names are built bottom-up)
        t = self._terms[name]
        head = t[0]
        if head in ("launch", "au", "return address"):
            ok = True
        elif type(head) is str and head in _UNSAFE:
            ok = False
        else:
            slots = self._opslots(t)
            ok = slots is not None and all(self(t[i]) for i in slots)
        self._memo[name] = ok
        return ok


def join_facts(old: frozenset | None, new: frozenset | None, rename, au, usable) -> frozenset | None:
    """The facts of a generalising join: each old fact against each new one of the same kind,
    length and value, their names anti-unified (`au(x, y)` with the registers' memo; the new
    visit's names first renamed by `rename`, as the registers' are); kept when usable."""
    if not old or not new:
        return None
    out = set()
    for kind, ns, value in old:
        for kind2, ns2, value2 in new:
            if kind2 != kind or value2 != value or len(ns2) != len(ns):
                continue
            got = tuple(au(x, rename(y)) for x, y in zip(ns, ns2))
            if all(usable(g) for g in got):
                out.add((kind, got, value))
    return frozenset(out) or None
