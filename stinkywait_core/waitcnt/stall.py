"""Predicted stall: a one-wave, in-order simulation of a function under the latency model.

Why a simulation and not a formula.  What a wait costs depends on how long ago the op it
retires was issued, which depends on every instruction and every earlier wait in between, on
both sides of a loop's back edge.  The simulation walks the function's hot path once, as one
wave with the machine to itself: every instruction takes its issue cycles (a matrix op also
holds the matrix pipe for its passes, so the next matrix op waits for the pipe while other
instructions co-issue), every memory op completes its latency after issue (in issue order on an
in-order timeline, `targets/model.py`), and at each wait the clock moves on to the cycle at
which the counter has come down to the wait's value -- the exact counter semantics: a counter
is the number of ops of all its timelines still in flight, so `lgkmcnt(2)` with LDS and SMEM
ops pending waits until at most two of them, of either kind, are left.

The hot path: blocks in layout order, forward conditional branches not taken, each loop's back
edge taken until the loop has run `loop_trips` times (then the exit).  An outer loop (one
around another loop) and a loop entered again (an inner loop in its outer loop's second trip)
run twice: their steady state is known by then, and nested loops do not multiply the walk.
Loops that overlap without nesting (unrolled code branching back to several headers) run once
more only the first time.  A wait inside a loop
reports its stall on the last trip (the steady state) and the loop's header; the kernel's total
is the sum over the whole walk.  The model prices placements; the pass alone decides safety.
"""

from __future__ import annotations

from ..ir import Function, Instruction
from ..targets.latency import IDLE_WAITS, LatencyModel
from ..targets.model import CK_DS, CTL_BRANCH, CTL_CBRANCH, CTL_ENDPGM, CTL_JUMP, CTL_RETURN, CTL_TRAP

#: at most this many instructions are walked (loops nested deep in a huge kernel)
STEP_LIMIT = 200_000

#: a program point's waits: (1-based line, "before" | "after") -> counter name -> value
PlannedPoints = dict[tuple[int, str], dict[str, int]]


def ready_at(completions: list[float], n: int) -> float:
    """The cycle at which at most `n` of the ops completing at `completions` are in flight
    (-inf: already)."""
    if len(completions) <= n:
        return float("-inf")
    return sorted(completions, reverse=True)[n]


class PointStall:
    """The predicted stall of one wait (a program point of waits)."""

    __slots__ = ("line", "placement", "total", "visits", "last", "loop")

    def __init__(self, line: int, placement: str, loop: str | None) -> None:
        self.line, self.placement, self.loop = line, placement, loop
        self.total = 0
        self.visits = 0
        self.last = 0

    @property
    def per_trip(self) -> int:
        """Cycles on the hot path's last visit (one loop trip inside a loop)."""
        return self.last

    def to_json(self) -> dict[str, object]:
        return {"line": self.line, "placement": self.placement, "cycles": self.last, "total": self.total,
                "visits": self.visits, "loop": self.loop}


class StallRun:
    """The simulation of one function: each wait's stall and the walk's total cycles."""

    __slots__ = ("points", "total", "cycles", "truncated")

    def __init__(self) -> None:
        #: (line, "before" | "after") of a planned point, (line, "self") of a hand-written wait
        self.points: dict[tuple[int, str], PointStall] = {}
        self.total = 0
        self.cycles = 0
        self.truncated = False

    def at(self, line: int, placement: str) -> PointStall | None:
        return self.points.get((line, placement))


class Wave:
    """One wave's clock under a latency model: issue, in-flight ops per timeline, waits.

    Shared by the stall simulation and CoalesceWaits (which prices a fold on a block-local
    walk), so both read the same costs the same way."""

    __slots__ = ("target", "model", "t", "xdl_free", "inflight", "last_done", "_facts", "_by_sem")

    def __init__(self, target, model: LatencyModel, facts: dict | None = None) -> None:
        """`facts`: a cache of `fact` by instruction object to reuse (the incremental memo's:
        an adopted instruction is unchanged, so its facts are too)."""
        self.target, self.model = target, model
        self.t = 0.0
        self.xdl_free = 0.0
        self.inflight: dict[int, list[float]] = {}
        self.last_done: dict[int, float] = {}
        self._facts: dict[Instruction, tuple] = {} if facts is None else facts
        #: (mnemonic, id(semantics)) -> (semantics, fact): an instruction that is neither a
        #: wait nor an `s_nop` has the fact of its mnemonic and semantics, whatever its operands
        self._by_sem: dict[tuple[str, int], tuple] = {}

    def fact(self, inst: Instruction) -> tuple:
        """(issue cycles, hand-written wait values, pushes (timeline, latency, in order),
        matrix passes, control kind) of one instruction."""
        f = self._facts.get(inst)
        if f is None:
            sem = self.target.sem(inst)
            if sem.wait or inst.mnemonic == "s_nop":
                f = self._facts[inst] = self._fact_of(inst, sem)
            else:
                key = (inst.mnemonic, id(sem))
                got = self._by_sem.get(key)
                if got is None or got[0] is not sem:
                    got = self._by_sem[key] = (sem, self._fact_of(inst, sem))
                f = self._facts[inst] = got[1]
        return f

    def _fact_of(self, inst: Instruction, sem) -> tuple:
        """`fact` computed from the instruction and its semantics."""
        target, model = self.target, self.model
        cls = model.issue_class(inst.mnemonic, sem)
        cost = model.issue[cls]
        if cls == "nop":
            lit = inst.first_literal()
            cost *= 1 + (lit if isinstance(lit, int) and 0 <= lit < 16 else 0)
        elif cls == "barrier":
            cost += model.barrier_cycles
        if sem.wait:
            waits = target.decode_wait(inst)
        elif inst.mnemonic in IDLE_WAITS:
            waits = dict.fromkeys(target.counter_names, 0)  # (priced as a drain: IDLE_WAITS)
        else:
            waits = {}
        pushes = tuple((ck, model.op_latency(sem, ck), target.in_order.get(ck, True))
                       for ck in sem.pushes if ck in target.counter_of)
        passes = model.passes(inst.mnemonic) if cls == "matrix" else 0
        return (cost, waits, pushes, passes, sem.control)

    def pending(self, cks) -> list[float]:
        """Completion cycles of the ops still in flight on timelines `cks`."""
        t = self.t
        return [c for ck in cks for c in self.inflight.get(ck, ()) if c > t]

    def ready(self, cks, n: int) -> float:
        """The cycle at which at most `n` ops of timelines `cks` are in flight (no earlier than now)."""
        return max(self.t, ready_at(self.pending(cks), n))

    def advance(self, t: float) -> int:
        """Move the clock to `t` (if later); the cycles waited."""
        stall = max(0.0, t - self.t)
        self.t += stall
        for lst in self.inflight.values():
            if len(lst) > 8:
                lst[:] = [c for c in lst if c > self.t]
        return int(stall)

    def issue(self, inst: Instruction, fact: tuple | None = None) -> str:
        """Issue one instruction (its hand-written wait is the caller's); its control kind."""
        cost, _, pushes, passes, ctl = fact or self.fact(inst)
        issue = self.t
        if passes:
            if self.xdl_free > issue:
                issue = self.xdl_free
            self.xdl_free = issue + passes * self.model.matrix_pass_cycles
        inflight = self.inflight
        for ck, lat, in_order in pushes:
            lst = inflight.get(ck)
            if lst is None:
                lst = inflight[ck] = []
            if ck == CK_DS:
                depth = self.model.lds_queue_depth
                # (an in-order timeline's completions are sorted: the depth-th youngest)
                if depth and len(lst) >= depth and lst[-depth] > issue:
                    issue = lst[-depth]
            done = issue + lat
            if in_order:
                last = self.last_done.get(ck, 0.0)
                if last > done:
                    done = last
                self.last_done[ck] = done
            lst.append(done)
            if len(lst) > 64:
                t = self.t
                lst[:] = [c for c in lst if c > t]
        self.t = issue + cost
        return ctl


def _loops(func: Function, pos: dict[int, int]) -> list[str | None]:
    """Block position -> the name of the header of the innermost loop (layout back edge) around it."""
    n = len(func.blocks)
    best: list[tuple[int, str] | None] = [None] * n
    for i, b in enumerate(func.blocks):
        for s in b.succs:
            j = pos.get(id(s))
            if j is None or j > i:
                continue
            for k in range(j, i + 1):
                if best[k] is None or best[k][0] > i - j:
                    best[k] = (i - j, s.name)
    return [None if x is None else x[1] for x in best]


def simulate(func: Function, target, planned: PlannedPoints | None = None,
             model: LatencyModel | None = None, rewritten: dict[int, dict[str, int]] | None = None) -> StallRun:
    """Walk `func`'s hot path with its hand-written waits and the `planned` ones;
    `rewritten`: 1-based line -> the values a hand-written wait there is read with instead."""
    model = model or target.latency
    run = StallRun()
    if model is None or not func.blocks:
        return run
    planned = planned or {}
    blocks = func.blocks
    pos = {id(b): i for i, b in enumerate(blocks)}
    loop_of = _loops(func, pos)
    counters = {name: tuple(ck for ck in target.timelines if target.counter_of[ck] == name)
                for name in target.counter_names}
    wave = Wave(target, model)

    def wait(values: dict[str, int], key: tuple[int, str], loop: str | None) -> None:
        need = wave.t
        for name, n in values.items():
            if n >= 0:
                need = max(need, wave.ready(counters.get(name, ()), n))
        stall = wave.advance(need)
        p = run.points.get(key)
        if p is None:
            p = run.points[key] = PointStall(key[0], key[1], loop)
        p.visits += 1
        p.last = stall
        p.total += stall
        run.total += stall

    spelled: dict[tuple, int] = {}

    def slots(values: dict[str, int]) -> int:
        """The issue cycles of a planned point: its wait instructions, as the target spells them."""
        key = tuple(sorted(values.items()))
        n = spelled.get(key)
        if n is None:
            n = spelled[key] = len(target.encode_waits(values)) * model.issue["wait"]
        return n

    compiled: dict[int, list] = {}
    trips: dict[int, int] = {}
    exited: set[int] = set()
    # back edges (by their block) around another back edge: outer loops run twice
    edges = [(i, j) for i, b in enumerate(blocks) for j in (pos.get(id(s)) for s in b.succs)
             if j is not None and j <= i]
    outer = {i for i, j in edges if any(j <= j2 <= i2 <= i and (i2, j2) != (i, j) for i2, j2 in edges)}
    # back edges inside another loop: run again each time their loop comes round
    nested = {i for i, j in edges if any(j2 <= j <= i <= i2 and (i2, j2) != (i, j) for i2, j2 in edges)}
    steps = 0
    bi: int | None = 0
    while bi is not None and 0 <= bi < len(blocks):
        b = blocks[bi]
        loop = loop_of[bi]
        last_ctl = ""
        steps_b = compiled.get(bi)
        if steps_b is None:
            steps_b = compiled[bi] = [(inst, inst.span.line if inst.span is not None else 0, wave.fact(inst))
                                      for inst in b.instrs if not inst.is_label and not inst.is_phi]
        instrs = steps_b
        for inst, line, f in steps_b:
            if planned:
                pw = planned.get((line, "before"))
                if pw:
                    wait(pw, (line, "before"), loop)
                    wave.t += slots(pw)
            waits = f[1]
            if rewritten and line in rewritten:
                waits = rewritten[line]
            if waits:
                wait(waits, (line, "self"), loop)
            last_ctl = wave.issue(inst, f)
        steps += len(steps_b)
        if instrs:
            line = instrs[-1][1]
            pw = planned.get((line, "after"))
            if pw:
                wait(pw, (line, "after"), loop)
                wave.t += slots(pw)
        if steps > STEP_LIMIT:
            run.truncated = True
            break
        if last_ctl in (CTL_RETURN, CTL_ENDPGM, CTL_TRAP):
            break
        nxt = bi + 1
        tgt = None
        for s in b.succs:
            j = pos.get(id(s))
            if j is not None and (j != nxt or (last_ctl in (CTL_BRANCH, CTL_JUMP) and len(b.succs) == 1)):
                tgt = j
                break
        if tgt is None or last_ctl not in (CTL_BRANCH, CTL_JUMP, CTL_CBRANCH):
            bi = nxt
            continue
        if tgt > bi:  # forward: an unconditional branch is taken, a conditional one falls through
            if last_ctl != CTL_CBRANCH:
                wave.t += model.issue["branch_taken"]
                bi = tgt
            else:
                bi = nxt
            continue
        taken = trips.get(bi, 0)
        # the back edge: a loop runs `loop_trips` times when first entered, twice when entered
        # again (an inner loop in its outer loop's later trips: its steady state is known)
        if bi in exited and bi not in nested:
            budget = 1  # (overlapping, not nested, loops: each runs once)
        elif bi in exited or bi in outer:
            budget = min(2, model.loop_trips)
        else:
            budget = model.loop_trips
        if taken + 1 < budget:
            trips[bi] = taken + 1
            wave.t += model.issue["branch_taken"]
            bi = tgt
        else:
            trips[bi] = 0
            exited.add(bi)
            bi = nxt
    run.cycles = int(wave.t)
    return run


def planned_points(waits, target) -> PlannedPoints:
    """`PlannedWait` records -> the program points the simulation applies them at."""
    out: PlannedPoints = {}
    names = set(target.counter_names)
    for w in waits:
        name = w.counter + "cnt" if w.counter + "cnt" in names else w.counter  # (records say "lgkm")
        d = out.setdefault((w.line, w.placement), {})
        d[name] = min(w.count, d.get(name, w.count))
    return out


def relax_saving(func: Function, target, model: LatencyModel, planned: PlannedPoints, line: int,
                 values: dict[str, int]) -> tuple[int, str | None]:
    """What a hand-written wait at `line` costs over the same wait with `values`: (cycles per
    visit of the hot path -- per trip inside a loop --, the loop's header or None)."""
    before = simulate(func, target, planned, model)
    after = simulate(func, target, planned, model, {line: values})
    p = before.at(line, "self")
    visits = p.visits if p is not None and p.visits else 1
    return max(0, (before.total - after.total) // visits), p.loop if p is not None else None


def cost_phrase(cycles: int, loop: str | None) -> str:
    """"costs ~300 cycles per trip of .LBB0_1" (the words `check` and the editor show)."""
    return f"costs ~{cycles} cycles" + (f" per trip of {loop}" if loop else "")
