"""Branch facts for the pass's pairing of two waves (waitcnt/wave_match.py): which way a wave
that is still waiting at a barrier will go at a branch the other wave has already taken.

Why.  aiter's gfx950 a8w8 cktile GEMM runs two wave groups one barrier apart (waves 4-7 run an
extra fill and barrier before the common code, waves 0-3 one after it).  Both run the same
loop; its exit test ``s_cmp_lt_i32 s50, s26; s_cbranch_scc1 .LBB9_25`` comes right after the
loop's last barrier.  The group ahead reaches that branch while the other still waits at the
barrier before it, so the walk's "both at a branch with an equal condition go one way" never
applies: the leading wave's branch was walked both ways, the lagging wave's later branch both
ways again, and every loop barrier was paired with the epilogue's (each fill in flight at a
loop barrier was drained, 1.38x the authors' stall).  The two waves compute the same compare
from the same values, only at different times.

What.  When a wave G takes a two-way SCC or VCC branch alone (the other wave W waits at a
barrier), and G's condition registers equal W's registers (not in `neq`) or are related to
W's by a lag relation (``("rel", G, unit, term)``: G's unit = term over W's registers now),
the walk of each way records a *branch fact* for W: ``(DIR, W, kind, terms, value)``: the
condition of kind ``kind`` ("scc": SCC is 1; "vcc": VCC is not zero) computed from `terms`
over W's registers *as they are now* is `value`.  As W runs, each term is carried through
W's own run (a register W overwrites without computing the term drops the fact; a register it
computes the term into becomes the term), so when W arrives at its branch with the terms
carried into exactly its condition registers, its branch goes the way the fact says.  Facts
are must-facts: a join of two visits keeps the ones both hold; anything that forgets
relations forgets them (a rejoin's unknown writes, test blocks passed at once).

Sound because a fact is a statement about W's own register values at one point of its run:
G's condition was equal to (or a pure function, reading no memory, of) W's values then, G went
one way on it, so W's condition, computed later from those same values by the same
instructions, has that value; nothing else is assumed beyond the pairing's own (decision 45).
"""

from __future__ import annotations

from ..ir import Block

#: the tag of a branch fact kept inside `neq` (no register kind is spelled so)
DIR = "dir"
_REL = "rel"
_SCC = (("SCC", 0),)
_VCC = (("vcc", 0), ("vcc", 1))


def condition(block: Block) -> tuple[str, tuple, bool] | None:
    """(kind, condition units, whether the first successor is taken when the condition holds)
    for a block ending in a two-way SCC or VCC branch; None otherwise."""
    if len(block.succs) != 2:
        return None
    term = block.terminator()
    if term is None:
        return None
    mn = term.mnemonic
    if mn in ("s_cbranch_scc1", "s_cbranch_scc0"):
        return ("scc", _SCC, mn.endswith("1"))
    if mn in ("s_cbranch_vccnz", "s_cbranch_vccz"):
        return ("vcc", _VCC, mn.endswith("nz"))
    return None


def decided(side: int, block: Block, neq) -> int | None:
    """The successor index wave `side`'s branch at the end of `block` must take by a fact in
    `neq` whose terms are now exactly the branch's condition registers (None: not decided)."""
    cond = condition(block)
    if cond is None:
        return None
    kind, units, first_when = cond
    for x in neq:
        if x[0] == DIR and x[1] == side and x[2] == kind and x[3] == units:
            return 0 if x[4] == first_when else 1
    return None


def launch_exec_way(block: Block, late) -> int | None:
    """The successor index a ``s_cbranch_execz`` / ``s_cbranch_execnz`` at the end of `block`
    takes in every wave when no EXEC write may precede it (`late`: the instructions one may,
    `lane_uniform.LaneSlice.late`): EXEC is then the launch mask, never zero (a wave is
    launched for at least one work-item), so execz falls through and execnz is taken.  LLVM
    emits ``s_mov_b64 vcc, exec; s_cbranch_execz`` for a uniform ``if`` whose condition it
    folded (aiter's cktile GEMM chooses its K-split bound so): read as a test of a per-wave
    EXEC, the two ways parted the waves and made the loop bound differ.  None: not such a
    branch."""
    if len(block.succs) != 2:
        return None
    term = block.terminator()
    if term is None or term in late:
        return None
    if term.mnemonic == "s_cbranch_execz":
        return 1
    if term.mnemonic == "s_cbranch_execnz":
        return 0
    return None


def facts_for(going: int, block: Block, cur) -> tuple | None:
    """For wave `going` at the end of `block`, taking its branch alone: the fact each way
    (successor 0, successor 1) gives the other wave, or None when its condition is not known
    in terms of the other wave's registers."""
    cond = condition(block)
    if cond is None:
        return None
    kind, units, first_when = cond
    terms = []
    for u in units:
        if u not in cur:
            terms.append(u)
            continue
        t = next((x[3] for x in cur if x[0] == _REL and x[1] == going and x[2] == u), None)
        if t is None:
            return None
        terms.append(t)
    waiting = 1 - going
    ts = tuple(terms)
    return ((DIR, waiting, kind, ts, first_when), (DIR, waiting, kind, ts, not first_when))


def carry(neq, cur: set, runs: tuple, terms_of, lift) -> None:
    """Carry the facts of `neq` through each wave's run into `cur` (which holds the state after
    the runs, its old facts still in it): `runs[side]`'s instructions, `terms_of(insts)` their
    results as terms over the wave's registers before them, `lift(term, results, back)` a term
    over those registers as one over the registers after the run (None: a register it reads
    was overwritten)."""
    facts = [x for x in neq if x[0] == DIR]
    if not facts:
        return
    cur.difference_update(facts)
    backs: dict[int, tuple] = {}
    for x in facts:
        side = x[1]
        got = backs.get(side)
        if got is None:
            mine = terms_of(runs[side])
            got = backs[side] = (mine, {t: w for w, t in mine.items() if t is not None})
        mine, back = got
        if not mine:
            cur.add(x)
            continue
        lifted = []
        for t in x[3]:
            t2 = lift(t, mine, back)
            if t2 is None:
                break
            lifted.append(t2)
        else:
            cur.add((DIR, side, x[2], tuple(lifted), x[4]))


def drop(cur: set) -> None:
    """Forget every branch fact (what a wave's registers hold is no longer followed)."""
    cur.difference_update([x for x in cur if x and x[0] == DIR])
