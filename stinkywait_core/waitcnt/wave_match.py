"""Which barriers of another wave meet each barrier, in a function specialised by wave index.

The publish rule (waitcnt/publish.py) needs to know where the other waves of a workgroup are
when a wave leaves barrier instance k: after their own instance k.  In an aligned function
that instance is the same barrier instruction.  Kernels that branch on the wave index (aiter's
fmha v3 bwd: one loop for even waves and one for odd, each with eight barriers a trip) run
instance k at different instructions in different waves; this module pairs them.

How.  Two waves A and B are walked together from the entry, a *pair of positions* at a time,
with the set of scalar registers that may hold different values in A and in B (`neq`).  Each
side runs to its next LDS-fence barrier or to its block's end:

* both at a barrier: the two are instance k of each (recorded as met), both go on;
* one at a barrier: it waits there, the other goes on alone (its writes make registers unequal);
* both at a block end: they branch together.  A conditional branch whose condition (SCC,
  VCC) is equal in both, of the same kind in both, goes the same way in both; otherwise every
  combination of successors is walked.  A side with no successor has ended (an ended wave
  takes no part in barriers and touches no LDS).

Where the two may part (both at block ends, the branches not known to go one way), a side
whose branch *rejoins* (every way from it reaches its immediate post-dominator with no fence,
call, return or end before it: `_resync`) runs on to that join at once, what the ways between
write unequal, so that the two are compared at their next branch or fence together; and a
successor that only tests a value the waves may hold differently and branches (`_past_tests`)
is passed to its own successors, so a dispatch chain on the wave index takes a wave to any role
in one step.  Without these a wave that took the short way ran a block apart from the other
from then on, and every later branch was walked both ways (aiter's gfx1250 f4gemm).

Equal values: at the entry every SGPR is equal (set up at launch), while VGPRs, EXEC, M0 and
trap temporaries (gfx12's workgroup ids in TTMP6/7/9 excepted) may differ.  When both sides
run the same instruction text, its scalar results are equal if every register it reads is and
it is not a vector instruction, a hardware-register read or an atomic (`s_and vcc, exec, s`
keeps LLVM's uniform-branch reading, as the alignment does); anything else a side writes may
differ.  A scalar load from equal addresses gives equal values (the alignment's assumption).
States are joined per position pair (union of `neq`) until nothing changes.

Lag relations: two roles that advance one loop counter by the same instruction, one before its
barrier and one after it (aiter's gfx942/gfx950 fmha fwd ping-pong), hold different counters at
every paired instance; "equal" alone forgets them and the two loops' exits read as independent.
So `neq` also holds relations ``("rel", side, unit, term)``: that wave's unit equals `term`
(instruction texts over register units) evaluated on the other wave's registers as they are
now.  A wave's writes are terms over its own registers before them; the other wave's registers
are substituted through equality or a relation; when the other wave computes the same term the
unit is equal again.  Terms reading memory are not carried from step to step (memory may change
between two waves' reads).  Relations are must-facts: a join keeps those both visits hold.

Vector values: a VGPR that may reach a ``v_readfirstlane`` is equal in both waves (and in
every lane) when it was computed by lane-local vector instructions from equal scalars and
constants, with EXEC never written (`lane_uniform.py`); ``("lm", unit)`` in `neq` says a scalar
unit read as a lane mask is not such a compare's result.  Its ``v_readfirstlane`` result is
then equal (aiter's gfx942 split-k GEMM divides its kernel arguments in the vector unit).
After an EXEC write nothing vector is equal.

Local subroutines (aiter's gfx1250 f4gemm calls ``s_call_i64 s[100:101], .Lsub`` on each
wave role's path; the subroutine ends in ``s_set_pc_i64 s[100:101]``): a position carries the
wave's return stack.  A call pushes the block after it and goes to the callee; a return pops
and goes back there (the CFG's return edges go after every call; a wave returns after its own).
A return with an empty stack, a call that leaves the function or a computed jump, nesting
deeper than `_DEPTH`, two barriers of different kinds met as one instance, or more than
`_LIMIT` position pairs: no pairing (`None`; the barriers keep their drain).
"""

from __future__ import annotations

from ..analysis.boundaries import local_transfers
from ..ir import Block, FloatImm, Function, Imm, Instruction, Reg
from .lane_uniform import LaneSlice, lane_local, lane_slice, mask_operand, vector_units
from .publish import PostDominators, divergent_region
from .wave_branch_facts import DIR, carry, decided, drop, facts_for, launch_exec_way

#: most position pairs walked before giving up
_LIMIT = 40000
#: deepest nesting of local calls followed
_DEPTH = 8
_HW = ("s_getreg", "s_memtime", "s_memrealtime", "s_get_barrier_state", "s_sendmsg_rtn", "s_barrier_signal_isfirst",
       "s_atomic", "s_buffer_atomic", "s_get_pc", "s_sleep_var", "s_rfe", "s_call", "s_swappc", "s_setpc",
       "s_set_pc")
_DONE = "done"
#: the tag of a lag relation kept inside `neq` (no register kind is spelled so)
_REL = "rel"
#: most instruction nodes in a lag relation's term
_TERM_NODES = 16
#: scalar reads of memory: equal from equal addresses in one step only (memory may change
#: between the times two waves read it), so never part of a relation carried across steps
_MEMORY_READS = ("s_load", "s_buffer_load", "s_scratch_load", "s_atc_probe")

#: most branch regions one step runs past (`WaveMatch._resync`)
_EXTEND = 16
#: most successors looked through for test blocks at one branch (`WaveMatch._past_tests`)
_TESTS = 64


class _Rejoin:
    """In a run: the paths from a branch to its join (`WaveMatch._resync`), as one step that
    makes what they may write unequal."""

    __slots__ = ("key", "written")

    def __init__(self, branch: Block, written: frozenset) -> None:
        self.key = ("rejoin", id(branch))
        self.written = written


class _GiveUp(Exception):
    """No pairing can be made (the message says why)."""


def _unit_keys(r: Reg) -> list[tuple]:
    k = r.kind
    if k in ("vcc", "exec") and r.lo == r.hi == 0:
        return [(k, 0)]
    return [(k, u) for u in range(r.lo, r.hi + 1)]


def _regkeys(ops) -> list[tuple]:
    out = []
    for r in ops:
        if type(r) is Reg and r.kind not in ("v", "a"):
            out.extend(_unit_keys(r))
    return out


def _reads_scc(inst: Instruction) -> bool:
    return any(type(r) is Reg and r.kind == "SCC" for r in inst.srcs) or inst.mnemonic.startswith("s_cbranch_scc")


def _branch_slice(blocks: list[Block]) -> tuple[frozenset, frozenset]:
    """The scalar units a conditional branch's condition may depend on, and the instructions
    whose SCC result may reach a branch or a read feeding one (flow-insensitive over
    registers; SCC by its last writer in the block, or the predecessors' last writers).
    Lag relations are kept for these alone (fewer facts, fewer revisits of the walk)."""
    last_scc: dict[Block, Instruction | None] = {}
    readers: list[tuple[Instruction, list]] = []  # an SCC reader and the SCC writers reaching it
    for b in blocks:
        cur = None
        for inst in b.instrs:
            if inst.is_label or inst.is_phi:
                continue
            if _reads_scc(inst):
                readers.append((inst, [cur] if cur is not None else None))
            if any(type(r) is Reg and r.kind == "SCC" for r in inst.dsts):
                cur = inst
        last_scc[b] = cur
    writers_of: dict[tuple, list] = {}
    for b in blocks:
        for inst in b.instrs:
            if not inst.is_label and not inst.is_phi:
                for u in _regkeys(inst.dsts):
                    writers_of.setdefault(u, []).append(inst)
    reach: dict[Instruction, list] = {}
    for inst, ws in readers:
        if ws is None:
            ws = [last_scc.get(p) for p in inst.block.preds]
            if not ws or None in ws:
                ws = writers_of.get(("SCC", 0), [])
        reach[inst] = ws
    units: set = {("vcc", 0), ("vcc", 1)}
    scc: set = set()
    todo = [w for i, ws in reach.items() if i.mnemonic.startswith("s_cbranch_scc") for w in ws]
    todo += [w for u in units for w in writers_of.get(u, [])]
    seen: set = set()
    while todo:
        inst = todo.pop()
        if inst in seen:
            continue
        seen.add(inst)
        scc.add(inst)
        for r in inst.srcs:
            if type(r) is not Reg or r.kind in ("v", "a"):
                continue
            for u in _unit_keys(r):
                if u == ("SCC", 0):
                    todo.extend(reach.get(inst, ()))
                elif u not in units:
                    units.add(u)
                    todo.extend(writers_of.get(u, ()))
    return frozenset(units), frozenset(scc)


def _join_states(old: frozenset, new) -> frozenset:
    """Two visits of a pair of positions: a register may differ if it may in either; a lag
    relation holds if it holds in both (and its register may differ)."""
    rel_old = {x for x in old if x[0] in (_REL, DIR)}
    rel_new = {x for x in new if x[0] in (_REL, DIR)}
    plain = (old - rel_old) | (set(new) - rel_new)
    return frozenset(plain | {x for x in rel_old & rel_new if x[0] == DIR or x[2] in plain})


def _forget(neq: set, units) -> None:
    """`units` may now differ between the waves: into `neq`, and every relation kept there
    between the two waves' registers (an element that is not a unit key, e.g. ("rel", ...))
    dropped, as it may rest on one of them."""
    neq.update(units)
    for x in [x for x in neq if x and x[0] == "rel"]:
        neq.discard(x)
    drop(neq)


def _vcc_keys() -> set:
    return {("vcc", 0), ("vcc", 1)}


class WaveMatch:
    """`met[barrier]`: the barriers another wave may be at as the same instance (None: it
    has ended); `why` says why no pairing was made (then `met` is None)."""

    def __init__(self, func: Function, barrier_kind, arch: str, dead: tuple = (frozenset(), frozenset())) -> None:
        self.func: Function | None = func
        #: per side, CFG edges (block, block) that wave never takes (its wave view's, `wave_classes`)
        self._dead = dead
        self.kind = barrier_kind
        self.gfx12 = arch.startswith("gfx12")
        self.why = ""
        self.met: dict[Instruction, set] | None = None
        self._text: dict[Instruction, str] = {}
        self._pos: dict[Instruction, int] = {}
        self._runs: dict[tuple, tuple] = {}
        #: a run's instruction list (by identity) -> its terms (`_terms`)
        self._term_runs: dict[int, tuple] = {}
        #: (units, SCC writers) a branch condition may depend on: the only relations worth keeping
        self._slice: tuple = (frozenset(), frozenset())
        #: a term -> the register units it reads; a term -> whether a relation may keep it
        self._leaf_memo: dict[tuple, frozenset] = {}
        self._carry_memo: dict[tuple, bool] = {}
        self._lanes: LaneSlice | None = lane_slice(func, _unit_keys)
        #: local call terminators -> the block their return comes back to; local returns
        self._calls: dict[Instruction, Block] = {}
        self._returns: set[Instruction] = set()
        self._pdom = PostDominators(list(func.blocks))
        #: branch block -> (its join, what the paths to it may write) or None (`_resync`)
        self._joins: dict[Block, tuple | None] = {}
        #: blocks that only compare and branch (`_past_tests`)
        self._tests: dict[Block, tuple] = {}
        try:
            self._solve()
        except _GiveUp as e:
            self.why, self.met = str(e), None
        # kept across versions (publish.py's cache): hold the answer, not this version's IR
        self._text, self._pos, self._runs, self._term_runs = {}, {}, {}, {}
        self._leaf_memo, self._carry_memo = {}, {}
        self._slice = (frozenset(), frozenset())
        self._calls, self._returns = {}, set()
        self._pdom, self._joins, self._tests = None, {}, {}
        self._lanes = None
        self._dead = (frozenset(), frozenset())
        self.func = None

    # ---- one side's run ---------------------------------------------------------------------
    def _run(self, b: Block, k: int) -> tuple[list[Instruction], Instruction | None]:
        """The instructions that write a scalar register (SCC too: the IR lists it among the
        results), from position k of b up to the next fence (returned) or the block's end.
        Waits, branches and vector instructions that write no SGPR do not matter to the two
        waves' scalar values."""
        out = []
        lanes = self._lanes.units if self._lanes is not None else None
        for inst in b.instrs[k:]:
            if inst.is_label or inst.is_phi:
                continue
            if self.kind(inst):
                return out, inst
            if any(type(r) is Reg and r.kind not in ("v", "a") for r in inst.dsts):
                out.append(inst)  # the IR names every scalar result, SCC included
            elif lanes and any(u in lanes for r in inst.dsts if type(r) is Reg for u in vector_units(r)):
                out.append(inst)  # a vector value a lane read may take
        return out, None

    def _cached_run(self, pos: tuple) -> tuple:
        """(instructions, fence or None, their texts, the registers they write) from `pos`
        (block, index, return stack)."""
        pos = pos[:2]
        got = self._runs.get(pos)
        if got is None:
            insts, stop = self._run(*pos)
            written: set = set()
            for i in insts:
                self._step_alone(i, written)
            got = self._runs[pos] = (insts, stop, tuple(self._key(i) for i in insts), frozenset(written))
        return got

    def _key(self, inst: Instruction) -> str:
        t = self._text.get(inst)
        if t is None:
            t = self._text[inst] = " ".join(inst.text.split())
        return t

    def _step_same(self, inst: Instruction, neq: set) -> None:
        """Both waves run this instruction (text): its scalar results are equal or not."""
        if type(inst) is _Rejoin:
            _forget(neq, inst.written)
            return
        mn = inst.mnemonic
        if self._lanes is not None and mn.startswith("v_"):
            self._step_vector(inst, neq)
            return
        srcs = self._scalar_sources(inst)
        differ = srcs is None or any(u in neq for r in srcs for u in _unit_keys(r))
        for u in _regkeys(inst.dsts):
            if differ:
                neq.add(u)
            else:
                neq.discard(u)
        if self._lanes is not None and self._lanes.masks:
            for u in _regkeys(inst.dsts):
                if u in self._lanes.masks:
                    neq.add(("lm",) + u)

    def _step_runs(self, ra: tuple, rb: tuple, neq: frozenset) -> set:
        """Both waves run their runs `ra` and `rb` (same texts or not): the registers that may
        differ after them, and the lag relations that hold after them (`_relate`)."""
        if ra[2] == rb[2]:
            cur = set(neq)
            for i in ra[0]:
                self._step_same(i, cur)
        else:
            cur = self._step_apart(ra, rb, neq)
        self._relate(ra[0], rb[0], neq, cur)
        carry(neq, cur, (ra[0], rb[0]), self._terms, self._lift)
        return cur

    # ---- lag relations ----------------------------------------------------------------------
    # Ping-pong wave roles (aiter's gfx942/gfx950 fmha fwd) advance one loop counter by the
    # same instruction, one role before its barrier and the other after it: at every barrier
    # instance the counters differ by one step, so "equal" forgets them, and the loop exits
    # read as independent (each loop barrier then pairs with the epilogue's).  A relation
    # ``(_REL, side, unit, term)`` in `neq` says: that wave's unit holds `term` evaluated on the
    # other wave's registers as they are now; a term is a register unit (a leaf) or
    # ``(text, n, kids)``, result n of that instruction text over the kids' values.  When the
    # other wave runs the instruction, its result equals the relation's: the unit is equal
    # again.  Relations are facts every path must give: joined by intersection.

    def _terms(self, insts: list) -> dict:
        """Each scalar unit a run writes -> its value after the run as a term over the wave's
        registers before it; None where it may differ whatever they hold."""
        got = self._term_runs.get(id(insts))
        if got is not None and got[0] is insts:
            return got[1]
        env: dict = {}
        self._term_runs[id(insts)] = (insts, env)
        for inst in insts:
            if type(inst) is _Rejoin:  # (the paths to a join: what they may write is unknown)
                for u in inst.written:
                    env[u] = None
                continue
            regs = self._scalar_sources(inst)
            kids = None if regs is None else tuple(env.get(u, u) for r in regs for u in _unit_keys(r))
            if kids is not None and any(k is None for k in kids):
                kids = None
            text = self._key(inst)
            keys = _regkeys(inst.dsts)
            for n, u in enumerate(keys):
                env[u] = None if kids is None else (text, n, kids)
            if ("SCC", 0) in keys and inst not in self._slice[1]:
                env[("SCC", 0)] = None  # (this SCC decides no branch: no relation on it)
        for inst in insts:  # a vector result a lane read may take is not a scalar term
            if type(inst) is _Rejoin:
                continue
            for r in inst.dsts:
                if type(r) is Reg and r.kind in ("v", "a"):
                    for u in vector_units(r):
                        env[u] = None
        return env

    def _relate(self, insts_a: list, insts_b: list, neq: frozenset, cur: set) -> None:
        """After wave A ran `insts_a` and B `insts_b` from a state `neq` (`cur` holds its
        relations still): update the relations in `cur` to the ones that hold now, and drop
        from `cur` each unit that one wave's relation shows equal to the other's.  A relation
        whose unit neither run wrote and whose term reads nothing the other wave wrote holds
        as it is."""
        runs = (self._terms(insts_a), self._terms(insts_b))
        if not runs[0] and not runs[1]:
            return
        old = {(x[1], x[2]): x for x in neq if x[0] == _REL}
        equal: set = set()
        for side in (0, 1):
            mine, other = runs[side], runs[1 - side]
            back = None
            todo = set(mine)
            todo.update(u for sd, u in old if sd == side)
            for u in todo:
                if u[0] in ("v", "a"):
                    continue
                rel = old.get((side, u))
                if u not in mine:
                    if rel is None or (u not in other and not (self._leaves(rel[3]) & other.keys())):
                        continue  # (no relation; or one that still holds)
                    t = rel[3]
                else:
                    t = self._over_other(side, u, mine, neq, old)
                if rel is not None:
                    cur.discard(rel)
                if t is None:
                    continue
                if back is None:
                    back = {x: w for w, x in other.items() if x is not None}
                t = self._lift(t, other, back)
                if t is None:
                    continue
                if t == u:
                    equal.add(u)
                elif u in cur and (u in self._slice[0] or u == ("SCC", 0)) and self._carried(t):
                    cur.add((_REL, side, u, t))
        if equal:
            cur.difference_update(equal)
            cur.difference_update([x for x in cur if x[0] == _REL and x[2] in equal])

    def _leaves(self, t: tuple) -> frozenset:
        got = self._leaf_memo.get(t)
        if got is None:
            if len(t) == 2:
                got = frozenset((t,))
            else:
                got = frozenset().union(*(self._leaves(k) for k in t[2]))
            self._leaf_memo[t] = got
        return got

    def _over_other(self, side: int, u: tuple, mine: dict, neq: frozenset, old: dict):
        """Wave `side`'s unit u after its run, as a term over the other wave's registers
        before the runs (None: not known)."""
        def before(s: tuple):
            if s not in neq:
                return s
            rel = old.get((side, s))
            return None if rel is None else rel[3]
        if u not in mine:
            return before(u)
        t = mine[u]
        if t is None:
            return None
        return self._subst(t, before)

    def _subst(self, t: tuple, leaf):
        if len(t) == 2:
            return leaf(t)
        kids = []
        for k in t[2]:
            got = self._subst(k, leaf)
            if got is None:
                return None
            kids.append(got)
        return (t[0], t[1], tuple(kids))

    def _lift(self, t: tuple, other: dict, back: dict):
        """A term over the other wave's registers before its run, as one over them after it:
        a value the run computed is its register; a register the run wrote is gone (None)."""
        w = back.get(t)
        if w is not None:
            return w
        if len(t) == 2:
            return None if t in other else t
        kids = []
        for k in t[2]:
            got = self._lift(k, other, back)
            if got is None:
                return None
            kids.append(got)
        return (t[0], t[1], tuple(kids))

    def _carried(self, t: tuple) -> bool:
        """A term small enough to keep, reading no memory."""
        got = self._carry_memo.get(t)
        if got is None:
            got = self._carry_memo[t] = self._small_pure(t)
        return got

    def _small_pure(self, t: tuple) -> bool:
        todo, n = [t], 0
        while todo:
            x = todo.pop()
            if len(x) == 2:
                continue
            n += 1
            if n > _TERM_NODES or x[0].startswith(_MEMORY_READS):
                return False
            todo.extend(x[2])
        return True

    def _step_vector(self, inst: Instruction, neq: set) -> None:
        """A vector instruction both waves run, with EXEC never written: its tracked vector
        results (and a compare's lane mask) are equal when it is lane-local over equal
        operands; a lane read of such a value is an equal scalar; every scalar result of
        anything else differs."""
        lanes = self._lanes
        same = inst not in lanes.late and lane_local(inst) and self._operands_equal(inst, neq)
        scalar = [u for u in _regkeys(inst.dsts)]
        if inst.mnemonic.startswith("v_readfirstlane"):
            src = [u for r in inst.srcs if type(r) is Reg for u in vector_units(r)]
            equal = bool(src) and inst not in lanes.late and all(u in lanes.units and u not in neq for u in src)
            for u in scalar:
                (neq.discard if equal else neq.add)(u)
            return
        for r in inst.dsts:
            if type(r) is Reg and r.kind in ("v", "a"):
                for u in vector_units(r):
                    if u in lanes.units:
                        (neq.discard if same else neq.add)(u)
        compare = same and inst.mnemonic.startswith("v_cmp_")
        for u in scalar:
            neq.add(u)  # (a mask's bits follow EXEC, a carry out too: not equal as scalars)
            if u in lanes.masks:
                (neq.discard if compare else neq.add)(("lm",) + u)

    def _operands_equal(self, inst: Instruction, neq: set) -> bool:
        """Every operand of `inst` is a constant, a scalar equal in both waves, a tracked equal
        vector value, or (the mask operand) a tracked equal lane mask."""
        lanes = self._lanes
        m = mask_operand(inst)
        for n, r in enumerate(inst.srcs):
            t = type(r)
            if t is Imm or t is FloatImm:
                continue
            if t is not Reg:
                return False
            k = r.kind
            if k in ("v", "a"):
                if any(u not in lanes.units or u in neq for u in vector_units(r)):
                    return False
            elif k in ("exec", "m0") or (k == "ttmp" and not self._group_ttmp(r)):
                return False
            elif n == m:
                if any(u not in lanes.masks or ("lm",) + u in neq for u in _unit_keys(r)):
                    return False
            elif any(u in neq for u in _unit_keys(r)):
                return False
        return True

    def _step_apart(self, ra: tuple, rb: tuple, neq: frozenset) -> set:
        """The two waves run different instruction sequences (another role's code, another
        copy of an unrolled loop): a register both write ends equal when both computed it by
        the same instruction text from sources equal in both (computed the same way earlier in
        their runs, or equal before them); anything else either writes may differ."""
        xa, xb = self._results(ra[0], neq), self._results(rb[0], neq)
        cur = set(neq)
        for u in ra[3] | rb[3]:
            x = xa.get(u)
            if x is not None and x == xb.get(u):
                cur.discard(u)
            else:
                cur.add(u)
        return cur

    def _results(self, insts: list, neq: frozenset) -> dict:
        """Each register unit a run writes -> how it was computed, as a nested tuple of
        instruction texts over the units it read before the run; a result that may differ
        between waves holds an object of this call alone (equal to nothing of the other)."""
        mine = object()
        env: dict = {}
        for inst in insts:
            if type(inst) is _Rejoin:
                for u in inst.written:
                    env[u] = mine
                continue
            regs = self._scalar_sources(inst)
            differ = regs is None
            srcs = [] if differ else [env.get(u, mine if u in neq else ("before", u))
                                      for r in regs for u in _unit_keys(r)]
            text = self._key(inst)
            for n, u in enumerate(_regkeys(inst.dsts)):
                env[u] = mine if differ or any(x is mine for x in srcs) else (text, n, tuple(srcs))
        return env

    def _scalar_sources(self, inst: Instruction) -> list[Reg] | None:
        """The registers (EXEC aside) the scalar results of `inst` are a function of, equal in
        both waves when these are; None when they may differ whatever it reads: a vector,
        hardware-register or atomic instruction, a read of M0, of a trap temporary other than
        gfx12's workgroup ids, or of EXEC other than by ``s_and vcc, exec, s`` (LLVM's
        uniform-branch reading, as the alignment does)."""
        mn = inst.mnemonic
        if not mn.startswith("s_") or mn.startswith(_HW):
            return None
        regs = []
        execs = 0
        for r in inst.srcs:
            if type(r) is not Reg:
                continue
            if r.kind in ("v", "a") or (r.kind == "ttmp" and not self._group_ttmp(r)) or r.kind == "m0":
                return None
            if r.kind == "exec":
                execs += 1
            else:
                regs.append(r)
        if execs:
            outs = [r.kind for r in inst.dsts if type(r) is Reg and r.kind != "SCC"]
            if not (mn.startswith("s_and_b") and outs == ["vcc"] and execs == 1):
                return None
        return regs

    def _group_ttmp(self, r: Reg) -> bool:
        return self.gfx12 and r.lo == r.hi and r.lo in (6, 7, 9)

    def _step_alone(self, inst: Instruction, neq: set) -> None:
        """Only one wave runs `inst`: whatever it writes may differ."""
        keys = _regkeys(inst.dsts)
        neq.update(keys)
        lanes = self._lanes
        if lanes is not None:
            neq.update(("lm",) + u for u in keys if u in lanes.masks)
            neq.update(u for r in inst.dsts if type(r) is Reg and r.kind in ("v", "a") for u in vector_units(r)
                       if u in lanes.units)

    # ---- the walk ---------------------------------------------------------------------------
    def _solve(self) -> None:
        assert self.func is not None
        blocks = self.func.blocks
        if not blocks:
            self.met = {}
            return
        calls, returns = local_transfers(self.func)
        for i, b in enumerate(blocks):
            for inst in b.instrs:
                if inst.is_label or not inst.mnemonic.startswith(("s_call", "s_swappc", "s_setpc", "s_set_pc")):
                    continue
                if inst in calls and inst is b.terminator() and i + 1 < len(blocks):
                    self._calls[inst] = blocks[i + 1]
                elif inst in returns and inst is b.terminator():
                    self._returns.add(inst)
                else:
                    self.why = f"{inst.mnemonic} at line {inst.line}: calls out of the function are not followed"
                    return
        self._slice = _branch_slice(blocks)
        met: dict[Instruction, set] = {}
        entry = (blocks[0], 0, ())
        init = {("exec", 0), ("exec", 1), ("m0", 0)}
        if self._lanes is not None:  # (at the entry VGPRs hold the work-item ids: different)
            init |= self._lanes.units | {("lm",) + u for u in self._lanes.masks}
        start = (entry, entry)
        states: dict[tuple, frozenset] = {start: frozenset(init)}
        work = [start]
        queued = {start}
        while work:
            key = work.pop()
            queued.discard(key)
            for nxt, nneq in self._next(key, states[key], met):
                if nxt is None:
                    return
                old = states.get(nxt)
                if old is not None:
                    nneq = _join_states(old, nneq)
                    if nneq == old:
                        continue
                states[nxt] = frozenset(nneq)
                if len(states) > _LIMIT:
                    self.why = f"more than {_LIMIT} pairs of positions in two waves"
                    return
                if nxt not in queued:
                    queued.add(nxt)
                    work.append(nxt)
        self.met = met

    def _next(self, key: tuple, neq: frozenset, met: dict) -> list:
        pa, pb = key
        if pa == _DONE and pb == _DONE:
            return []
        ra = self._cached_run(pa) if pa != _DONE else None
        rb = self._cached_run(pb) if pb != _DONE else None
        cur = self._step(ra, rb, neq)
        for _ in range(_EXTEND):
            if ra is None or rb is None or ra[1] is not None or rb[1] is not None:
                break
            if len(pa[0].succs) == 2 and len(pb[0].succs) == 2 and self._same_way(pa[0], pb[0], cur):
                break
            # both at block ends that may branch apart: a side whose branch rejoins with no
            # fence on the way runs on to the join first (`_resync`)
            ja = self._resync(pa[0]) if len(pa[0].succs) == 2 and len(self._decided_succs(0, pa, cur)) == 2 else None
            jb = self._resync(pb[0]) if len(pb[0].succs) == 2 and len(self._decided_succs(1, pb, cur)) == 2 else None
            if ja is None and jb is None:
                break
            if ja is not None:
                pa, ra = self._extend(pa, ra, ja)
            if jb is not None:
                pb, rb = self._extend(pb, rb, jb)
            cur = self._step(ra, rb, neq)
        ea = ra[1] if ra is not None else None
        eb = rb[1] if rb is not None else None
        if ea is not None and eb is not None:
            if self.kind(ea) != self.kind(eb):
                self.why = (f"the barriers at lines {ea.line} and {eb.line} may be the same instance in two "
                            f"waves and are of different kinds")
                return [None]
            met.setdefault(ea, set()).add(eb)
            met.setdefault(eb, set()).add(ea)
            return [((self._after(ea, pa), self._after(eb, pb)), cur)]
        if ea is not None or eb is not None:
            # one waits at its barrier; the other goes on alone
            if ea is not None:
                if pb == _DONE:
                    met.setdefault(ea, set()).add(None)
                    return [((self._after(ea, pa), _DONE), cur)]
                return [((self._at(ea, pa), s), c) for s, c in self._alone(1, pb, cur)]
            if pa == _DONE:
                met.setdefault(eb, set()).add(None)
                return [((_DONE, self._after(eb, pb)), cur)]
            return [((s, self._at(eb, pb)), c) for s, c in self._alone(0, pa, cur)]
        # both at their blocks' ends (or ended)
        sa = self._decided_succs(0, pa, cur) if pa != _DONE else [_DONE]
        sb = self._decided_succs(1, pb, cur) if pb != _DONE else [_DONE]
        if pa != _DONE and pb != _DONE and len(sa) == 2 and len(sb) == 2 and self._same_way(pa[0], pb[0], cur):
            return [((sa[0], sb[0]), cur), ((sa[1], sb[1]), cur)]
        if len(sa) > 1 or len(sb) > 1:
            sa, ta = self._past_tests(sa, cur, 0)
            sb, tb = self._past_tests(sb, cur, 1)
            if ta or tb:
                cur = set(cur)
                _forget(cur, (("SCC", 0),))
        return [((x, y), cur) for x in sa for y in sb]

    def _decided_succs(self, side: int, pos: tuple, neq) -> list:
        """A wave's successor positions, only the way a branch fact decides when one does
        (`wave_branch_facts`)."""
        succs = self._live_succs(side, pos)
        if len(succs) == 2 and pos[0].terminator() not in self._calls:
            k = decided(side, pos[0], neq)
            if k is None and self._lanes is not None:
                k = launch_exec_way(pos[0], self._lanes.late)
            if k is not None:
                return [succs[k]]
        return succs

    def _live_succs(self, side: int, pos: tuple) -> list:
        """`_succs`, without the edges wave `side`'s view never takes (`self._dead`)."""
        succs = self._succs(pos)
        dead = self._dead[side]
        if dead:
            succs = [s for s in succs if s == _DONE or (pos[0], s[0]) not in dead]
        return succs

    def _alone(self, side: int, pos: tuple, cur) -> list[tuple]:
        """(successor position, state) for wave `side` going on at its block's end while the
        other waits at a barrier: each way taken records what it says of the other wave's
        later branch on the same values (`wave_branch_facts.facts_for`)."""
        succs = self._decided_succs(side, pos, cur)
        if len(succs) != 2:
            return [(s, cur) for s in succs]
        facts = facts_for(side, pos[0], cur)
        if facts is None:
            return [(s, cur) for s in succs]
        return [(s, frozenset(cur) | {f}) for s, f in zip(succs, facts)]

    def _past_tests(self, succs: list, neq: set | frozenset, side: int = 0) -> tuple[list, bool]:
        """Successor positions with every *test block* among them replaced by its own
        successors (repeatedly), and whether one was: a block that only compares and branches
        (nothing but SCC written, no fence, call or return) on a register that may differ
        between the waves (`neq`) moves a wave on without changing anything the walk follows
        but SCC, and whichever way it goes, the other wave's branch is not known to go the
        same way (a test of equal registers is left to the walk: both waves may run it
        together and go one way).  Two waves going apart at a branch are then
        compared at their next real code together: a chain ``s_cmp_eq_u32 s22, k;
        s_cbranch_scc1 role_k`` dispatching on the wave index takes a wave to any role in one
        step, whichever role it is (aiter's gfx1250 f4gemm: the first role, one test from the
        chain's head, otherwise ran its code a block ahead of the last, three tests on, and
        its branches were walked both ways against the other's)."""
        out: list = []
        seen: set = set()
        skipped = False
        work = list(succs)
        while work:
            p = work.pop(0)
            if p in seen:
                continue
            seen.add(p)
            if p != _DONE and len(seen) <= _TESTS and self._is_test(p[0], neq):
                nxt = self._live_succs(side, p)
                if _DONE not in nxt and all(q[0] is not p[0] for q in nxt):
                    work.extend(nxt)
                    skipped = True
                    continue
            out.append(p)
        return out, skipped

    def _is_test(self, b: Block, neq: set | frozenset) -> bool:
        got = self._tests.get(b)
        if got is None:
            insts, stop = self._run(b, 0)
            term = b.terminator()
            test = (stop is None and bool(b.succs)
                    and not (term is not None and (term in self._calls or term in self._returns))
                    and all(type(r) is Reg and r.kind == "SCC" for i in insts for r in i.dsts))
            reads: set | None = None
            if test:
                reads = set()
                for i in insts:
                    regs = self._scalar_sources(i)
                    if regs is None:
                        reads = None  # (its result differs whatever it reads)
                        break
                    reads.update(u for r in regs for u in _unit_keys(r))
                mn = term.mnemonic if term is not None and len(b.succs) == 2 else ""
                if reads is not None and not insts and mn:
                    # a branch on a condition set before the block
                    reads = ({("SCC", 0)} if mn.startswith("s_cbranch_scc") else
                             _vcc_keys() if mn.startswith("s_cbranch_vcc") else None)
            got = self._tests[b] = (test, reads)
        test, reads = got
        return test and (reads is None or bool(reads & neq) or not reads)

    def _step(self, ra: tuple | None, rb: tuple | None, neq: frozenset) -> set | frozenset:
        """The unequal registers after both sides' runs, with the lag relations that hold after
        them (`_step_runs`); one side ended: its writes, and no relations (an ended wave's
        registers no longer matter)."""
        if ra is not None and rb is not None:
            return self._step_runs(ra, rb, neq)
        return {x for x in neq.union(*(r[3] for r in (ra, rb) if r is not None)) if x[0] not in (_REL, DIR)}

    def _extend(self, pos: tuple, run: tuple, join: tuple) -> tuple[tuple, tuple]:
        """A side's run continued past its block's branch to the branch's join: (the join's
        position, the run with the paths between as one `_Rejoin` item, then the join's own
        run)."""
        block, rejoin = join
        at = (block, 0, pos[2])
        more = self._cached_run(at)
        return at, (run[0] + [rejoin] + more[0], more[1], run[2] + (rejoin.key,) + more[2],
                    run[3] | rejoin.written | more[3])

    def _resync(self, b: Block) -> tuple[Block, "_Rejoin"] | None:
        """A wave at the end of `b`, whose branch may go either way: when every path from `b`
        reaches its immediate post-dominator with no fence, call, return or end on the way
        (every block between has a path on to it), the wave arrives there at the same barrier
        count whichever way it went, so the walk may run it on to that join at once, with
        everything the paths between write unequal.  Two waves that took different ways meet
        again there (aiter's gfx1250 f4gemm: only wave 0 runs the entry's prefetch block, and
        one wave role's loop signals a named barrier in a branch the other role's copy of the
        loop lacks; walked as separate runs, the waves never met again at one position and
        every later barrier paired with every other).  None: no such join."""
        if b in self._joins:
            return self._joins[b]
        got = None
        join = self._pdom.immediate(b)
        if join is not None:
            region = divergent_region(b, join)
            written: set = set()
            ok = True
            for x in region:
                term = x.terminator()
                if not x.succs or (term is not None and (term in self._calls or term in self._returns)):
                    ok = False
                    break
                insts, stop = self._run(x, 0)
                if stop is not None:
                    ok = False
                    break
                for i in insts:
                    self._step_alone(i, written)
            if ok and self._all_reach(region, join):
                got = (join, _Rejoin(b, frozenset(written)))
        self._joins[b] = got
        return got

    @staticmethod
    def _all_reach(region: set, join: Block) -> bool:
        """Every block of `region` has a path to `join` inside it (a wave cannot stay in it)."""
        back = {join}
        grew = True
        while grew:
            grew = False
            for x in region:
                if x not in back and any(s in back for s in x.succs):
                    back.add(x)
                    grew = True
        return len(back) == len(region) + 1

    def _succs(self, pos: tuple) -> list:
        """Successor positions, the taken target first (`succs` is in that order); none: ended.
        A local call goes to its callee with the block after it pushed; a return pops."""
        b, _, stack = pos
        term = b.terminator()
        if term is not None and term in self._calls:
            back = self._calls[term]
            if len(stack) >= _DEPTH:
                raise _GiveUp(f"local calls nested deeper than {_DEPTH} at line {term.line}")
            return [(s, 0, stack + (back,)) for s in b.succs if s is not back] or [_DONE]
        if term is not None and term in self._returns:
            if not stack:
                raise _GiveUp(f"{term.mnemonic} at line {term.line} may return without a call")
            if stack[-1] not in b.succs:
                raise _GiveUp(f"{term.mnemonic} at line {term.line} has no edge back to its call")
            return [(stack[-1], 0, stack[:-1])]
        return [(s, 0, stack) for s in b.succs] or [_DONE]

    def _same_way(self, a: Block, b: Block, neq: set) -> bool:
        ta, tb = a.terminator(), b.terminator()
        if ta is None or tb is None or ta.mnemonic != tb.mnemonic:
            return False
        mn = ta.mnemonic
        if mn.startswith("s_cbranch_scc"):
            return ("SCC", 0) not in neq
        if mn.startswith("s_cbranch_vcc"):
            return not (neq & _vcc_keys())
        return False

    def _at(self, barrier: Instruction, pos: tuple) -> tuple:
        """The position of a wave waiting at `barrier` (it runs the barrier next), reached from
        `pos` (same block: the same return stack)."""
        k = self._pos.get(barrier)
        if k is None:
            k = self._pos[barrier] = barrier.block.instrs.index(barrier)
        return (barrier.block, k, pos[2])

    def _after(self, barrier: Instruction, pos: tuple) -> tuple:
        b, k, stack = self._at(barrier, pos)
        return (b, k + 1, stack)
