"""Loop joins of the value analysis: one loop header's joins solved together.

`value_flow.ValueFlow` asks for the value of a join at a loop header; what such a value is
needs its own machinery, kept here apart from the demand-driven walk: the header's joins are
simulated trip by trip (`LoopTrip`) looking for a period (a ping-pong base toggled each trip),
and otherwise given one symbol per trip whose range is iterated with widening, narrowed, and
checked to be an invariant (`LoopSolver`).  The solver calls back into the flow for every
value it evaluates (`_def_val`, `_phi_ops`, `_region`, ...): the flow owns the memos.
"""

from __future__ import annotations

from math import gcd

from . import intervals as I
from .values import BOTTOM, Val, atom_val, collapse_phase, join_vals, lin_atom, si_val, unit_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..ir import Block
    from .value_flow import ValueFlow

#: a join whose value is being computed (met again: it takes part in the loop's group)
PENDING = object()
#: trips simulated when looking for a period
TRIPS = 6


class LoopTrip:
    """One simulated trip of the loop at `header`: its joins bound by `solver` (trip `k`, or
    the range iteration when k is None); the loop `body`'s instructions evaluated into
    `memo`."""

    __slots__ = ("header", "solver", "k", "memo", "body", "parent")

    def __init__(self, header: Block, solver: "LoopSolver", k: int | None, body: frozenset,
                 parent: "LoopTrip | None") -> None:
        self.header = header
        self.solver = solver
        self.k = k
        self.memo: dict = {}
        self.body = body
        self.parent = parent

    def bind(self, phi: Any) -> Val:
        return self.solver.bind(phi, self.k)


class LoopSolver:
    """The joins of one loop header, solved together; a join met while evaluating a trip
    joins the group then (its earlier trips are filled in on demand).

    An irreducible cycle (a header that does not dominate its back edges) is solved as one
    region: its strongly connected component, with the joins at all its headers in one group
    and only the range iteration (a "trip" has no single start there)."""

    def __init__(self, flow: "ValueFlow", h: Block, scope: "LoopTrip | None", finals: dict) -> None:
        self.flow = flow
        self.h = h
        self.scope = scope
        self.finals = finals
        self.body, self.headers = flow._region(h)
        self.periodic = len(self.headers) == 1 and not flow._is_irreducible(h)
        self.group: list = []
        self.fwd: dict = {}
        self.back: dict = {}
        self.states: list = []
        self.ctxs: list = []
        self.mode = "trips"
        self.binds: dict = {}
        self.uni: dict = {}
        self.rng: dict = {}
        self.atoms: dict = {}
        self.period = 1
        for v in finals.values():
            if v.phase is not None and v.phase[0] is h:
                self.period = self.period * v.phase[1] // gcd(self.period, v.phase[1])

    def join(self, phi: Any) -> None:
        """Add a join to the group: its operands and its trip-0 value."""
        fl = self.flow
        key = fl._phi_key(phi)
        ops = fl._phi_ops(phi)
        self.group.append(phi)
        fl._memo_of(self.scope)[phi] = PENDING
        body = self.body
        self.back[phi] = [d for p, d in ops if p is not None and p in body]
        fvals = [fl._def_val(d, key, self.scope) for p, d in ops if p is None or p not in body]
        # no operand from outside the region: the join only ever holds values made inside it
        self.fwd[phi] = join_vals(fvals) if fvals else None
        if self.mode == "ranges":
            self._range_member(phi)

    def ctx(self, k: int | None) -> LoopTrip:
        if k is None:
            return LoopTrip(self.h, self, None, self.body, self.scope)
        while len(self.ctxs) <= k:
            self.ctxs.append(LoopTrip(self.h, self, len(self.ctxs), self.body, self.scope))
        return self.ctxs[k]

    def back_value(self, phi: Any, ctx: LoopTrip) -> Val:
        key = self.flow._phi_key(phi)
        return join_vals([self.flow._def_val(d, key, ctx) for d in self.back[phi]])

    def bind(self, phi: Any, k: int | None) -> Val:
        f = self.finals.get(phi)
        if f is not None:
            return self.flow._final_bind(f, self.h, k)
        if phi not in self.fwd:
            self.join(phi)
        if k is None:
            return self.binds[phi]
        while len(self.states) <= k:
            self.states.append({})
        st = self.states[k]
        v = st.get(phi)
        if v is None:
            v = self.fwd[phi] if k == 0 else self.back_value(phi, self.ctx(k - 1))
            if v is None:  # only reducible single-header loops simulate trips: always entered
                v = self.flow._entry_value(self.flow._phi_key(phi))
            st[phi] = v
        return v

    def solve(self, phi0: Any) -> dict:
        self.join(phi0)
        # 1. periodic trips
        for p in range(1, (max(TRIPS, self.period) if self.periodic else 0) + 1):
            if p % self.period:
                continue
            while True:  # the group may grow while a trip is evaluated: check it all again
                n = len(self.group)
                same = all(self.bind(phi, p) == self.bind(phi, 0) for phi in list(self.group))
                if len(self.group) == n:
                    break
            if same:
                return {phi: self.flow._phased(self.h, [self.bind(phi, j) for j in range(p)])
                        for phi in self.group}
        # 2. a symbol per trip, its range by widening, then narrowed
        self.mode = "ranges"
        for phi in self.group:
            self._range_member(phi)
        return self._ranges()

    def _range_member(self, phi: Any) -> None:
        f = self.fwd[phi]
        if f is None:  # nothing from outside: no value until a trip gives it one
            self.uni[phi] = True
            self.rng[phi] = None
        else:
            f = collapse_phase(f)
            self.uni[phi] = f.uniform
            self.rng[phi] = f.concrete()
        key = self.flow._phi_key(phi)
        self.atoms[phi] = self.flow.new_atom(self.rng[phi] or I.FULL32, max(1, self.flow.variant(self.h)),
                                             f"{unit_name(key)} at the loop header {self.h.name}")
        self._set_bind(phi)

    def _set_bind(self, phi: Any) -> None:
        if self.rng[phi] is None:
            self.binds[phi] = BOTTOM
        elif self.uni[phi]:
            self.atoms[phi].range = self.rng[phi]
            self.binds[phi] = atom_val(self.atoms[phi])
        else:
            self.binds[phi] = si_val(self.rng[phi], False)

    def _trip(self) -> dict:
        """One trip with every join bound to its current range: the back-edge values."""
        for phi in self.group:
            self._set_bind(phi)
        ctx = self.ctx(None)
        out = {}
        i = 0
        while i < len(self.group):  # the group may grow while evaluating
            phi = self.group[i]
            out[phi] = collapse_phase(self.back_value(phi, ctx))
            i += 1
        return out

    def _widen(self) -> bool:
        """Iterate the ranges (widening after a few rounds) to a post-fixpoint."""
        rounds: dict = {}
        for _ in range(16):
            back = self._trip()
            changed = False
            for phi in self.group:
                b = back.get(phi)
                if b is None:
                    changed = True
                    continue
                if b.bottom:
                    continue
                if self.uni[phi] and not b.uniform:
                    self.uni[phi] = False
                    changed = True
                cur = self.rng[phi]
                if cur is None:
                    self.rng[phi] = b.concrete()
                    changed = True
                    continue
                new = I.join(cur, b.concrete())
                if new != cur:
                    n = rounds[phi] = rounds.get(phi, 0) + 1
                    if n > 5:  # any value, but the bits no version changes stay known
                        new = widen(I.FULL32, I.bits(0, I.MASK32, 1, I.known_zeros(new), I.known_ones(new))
                                     if I.in_u32(new) else I.FULL32)
                    elif n > 2:
                        new = widen(cur, new)
                    self.rng[phi] = new
                    changed = True
            if not changed:
                return True
        return False

    def _narrow(self) -> None:
        """The entry values joined with one trip from an invariant is an invariant too, when
        the trip from it stays inside it (checked by `_invariant` afterwards)."""
        for _ in range(2):
            back = self._trip()
            if any(phi not in back or back[phi].bottom or self.rng[phi] is None
                   or (self.uni[phi] and not back[phi].uniform) for phi in self.group):
                return
            cand = {phi: (I.join(collapse_phase(self.fwd[phi]).concrete(), back[phi].concrete())
                          if self.fwd[phi] is not None else back[phi].concrete()) for phi in self.group}
            if all(cand[phi] == self.rng[phi] for phi in self.group) or \
                    not all(I.subset(cand[phi], self.rng[phi]) for phi in self.group):
                return
            old = dict(self.rng)
            self.rng.update(cand)
            if not self._invariant():
                self.rng = old
                return

    def _invariant(self) -> bool:
        """Every range holds its entry values and one trip's back-edge values from the ranges."""
        n = len(self.group)
        back = self._trip()
        if len(self.group) != n:
            return False
        for phi in self.group:
            b = back.get(phi)
            if b is None:
                return False
            if self.rng[phi] is None or b.bottom:
                if self.rng[phi] is None and b.bottom:
                    continue  # still no value from anywhere
                if b.bottom:
                    continue
                return False
            if self.uni[phi] and not b.uniform:
                return False
            f = self.fwd[phi]
            if not ((f is None or I.subset(collapse_phase(f).concrete(), self.rng[phi]))
                    and I.subset(b.concrete(), self.rng[phi])):
                return False
        return True

    def _ranges(self) -> dict:
        for _ in range(4):
            if self._widen():
                self._narrow()
            if self._invariant():
                break
        else:
            for phi in self.group:
                self.rng[phi] = I.FULL32
                self.uni[phi] = False
        out = {}
        for phi in self.group:
            key = self.flow._phi_key(phi)
            rng = self.rng[phi] if self.rng[phi] is not None else I.FULL32
            why = None
            if I.size(rng) > 1 << 24:
                why = f"{unit_name(key)} changes every trip of the loop at {self.h.name} without a bound"
            if self.uni[phi]:
                self.atoms[phi].range = rng
                out[phi] = Val((lin_atom(self.atoms[phi]),), True, None, why)
            else:
                out[phi] = si_val(rng, False, why)
        return out


def widen(old: I.SI, new: I.SI) -> I.SI:
    """Bounds that moved jump to the 32-bit limits; the step and the known bits (which can
    only be lost, finitely often) are kept."""
    lo = old[0] if new[0] >= old[0] else 0
    hi = old[1] if new[1] <= old[1] else I.MASK32
    st = gcd(old[2], new[2]) if (old[2] or new[2]) else 1
    if I.in_u32(new):
        return I.bits(lo, hi, st, I.known_zeros(new), I.known_ones(new))
    return I.make(lo, hi, st)
