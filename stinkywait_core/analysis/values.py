"""The abstract values of the LDS address analysis: wave-uniform symbols, lane ranges, trip phases.

A register holds, per lane, a 32-bit value.  What the address analysis needs to know about it
is which LDS bytes one wave can touch with it, and how two such sets relate *within the same
wave* (waits order one wave's operations only).  The value of a register unit is therefore
described as

    value  ==  sum(coeff_i * atom_i)  +  s        (mod 2^32),   s in S

where each `Atom` is a wave-uniform unknown (a kernel argument, the wave's id, a loop-carried
base, a `v_readfirstlane` result, ...) with a known range, and `S` is a strided interval
(`intervals.py`) collecting everything else: constants, and the spread over the wave's lanes.
The pair (terms, S) is a `Lin`.  Two accesses that share atoms (the same wave-uniform base)
can be compared exactly on the difference of their forms even when each range alone is wide.

Double buffering makes a base alternate between known values from one loop trip to the next.
A `Val` may therefore carry a *phase*: the loop header `H` and a period `P`, with one `Lin` per
trip residue ``t mod P``.  Within one trip both accesses see the same residue, so ping and pong
buffers separate even though over all trips their ranges coincide.

Soundness: every operation over-approximates; an unknown value is always allowed (`top`),
a wrong one never.  Forms are exact modulo 2^32 (add, subtract, multiply and shift by
constants are ring operations); operations that need the true value (right shifts, masks,
ORs) first check that the form cannot wrap.
"""

from __future__ import annotations

from math import gcd

from . import intervals as I

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

#: A linear form: (terms, s) with terms a tuple of (Atom, coeff) sorted by atom id, coeff != 0
#: in the signed 32-bit range, and s a strided interval.
Lin = tuple

_HALF = 1 << 31


def _coeff(c: int) -> int:
    c &= I.MASK32
    return c - I.SPAN32 if c >= _HALF else c


class Atom:
    """A wave-uniform unknown with a range (a strided interval of its integer values).

    `variant`: 0 when defined once per wave (outside loops); 1 when defined inside a loop
    (a new instance each trip: accesses in different trips see different instances); 2 when
    it may take a new value at every execution even within one trip (code of a subroutine
    the function calls).  `origin`: what defined it, for explanations ("s_load_b32 at line
    40").  `derived`: None, or (root atom, f) when this symbol is always ``f(root)`` for the
    same instance of the root (a bit or a half of the wave index: ``s_and_b32 s, w, 1``);
    a comparison that enumerates the root's values then knows this one's too.  Compared by
    identity; `id` orders terms.
    """

    __slots__ = ("id", "range", "variant", "origin", "derived")

    def __init__(self, ident: int, rng: I.SI, variant: int, origin: str, derived: tuple | None = None) -> None:
        self.id = ident
        self.range = rng
        self.variant = variant
        self.origin = origin
        self.derived = derived

    def __repr__(self) -> str:
        return f"<atom{self.id} {self.origin} {I.fmt(self.range)}>"


def lin_const(c: int) -> Lin:
    return ((), (c & I.MASK32, c & I.MASK32, 0))


def lin_si(s: I.SI) -> Lin:
    return ((), s)


def lin_atom(a: Atom) -> Lin:
    return (((a, 1),), (0, 0, 0))


def _reduce_si(s: I.SI) -> I.SI:
    """Shift an interval by a multiple of 2^32 into [0, 2^32) when it fits in one window."""
    k = s[0] >> 32
    if k and s[1] >> 32 == k:
        return (s[0] - (k << 32), s[1] - (k << 32), s[2])
    return s


def lin_add(x: Lin, y: Lin) -> Lin:
    tx, ty = x[0], y[0]
    if not ty:
        terms = tx
    elif not tx:
        terms = ty
    else:
        acc: dict = {}
        for a, c in tx:
            acc[a] = c
        for a, c in ty:
            acc[a] = _coeff(acc.get(a, 0) + c)
        terms = tuple(sorted(((a, c) for a, c in acc.items() if c), key=_atom_id))
    s = I.add(x[1], y[1])
    return (terms, I.norm32(s) if not terms else _reduce_si(s))


def _atom_id(t: tuple) -> int:
    return t[0].id


def lin_mul_const(x: Lin, c: int) -> Lin:
    c = _coeff(c)
    if c == 0:
        return lin_const(0)
    terms = tuple((a, _coeff(k * c)) for a, k in x[0] if _coeff(k * c))
    s = I.mul_const(x[1], c)
    return (terms, I.norm32(s) if not terms else _reduce_si(s))


def lin_neg(x: Lin) -> Lin:
    return lin_mul_const(x, -1)


def lin_int_range(x: Lin) -> I.SI:
    """The integer range of the form itself (no wrap applied)."""
    s = x[1]
    for a, c in x[0]:
        s = I.add(s, I.mul_const(a.range, c))
    return s


def lin_concrete(x: Lin) -> I.SI:
    """The 32-bit values the form can take (a superset).  A form whose parts never share a
    bit (see `_bit_parts`) keeps the parts' known bits."""
    if not x[0]:
        return I.norm32(x[1])
    if len(x[0]) == 1 and x[0][0][1] == 1 and x[1] == (0, 0, 0):
        return I.norm32(x[0][0][0].range)  # a lone symbol: its range as it is
    r = I.norm32(lin_int_range(x))
    if r[2] and I.in_u32(r) and _bit_parts(x) is not None:
        kz, ko = I.known_zeros(x[1]), I.known_ones(x[1])
        for a, c in x[0]:
            pz, po = _part_masks(a.range, c)
            kz &= pz
            ko |= po
        return I.bits(r[0], r[1], r[2], kz, ko)
    return r


def _part_masks(r: I.SI, c: int) -> tuple[int, int]:
    """Known zeros and ones of ``c * member`` for a part that stays inside [0, 2^32)."""
    if c & (c - 1) == 0 and c > 0 and I.in_u32(r):
        k = c.bit_length() - 1
        return ((I.known_zeros(r) << k) | ((1 << k) - 1)) & I.MASK32, (I.known_ones(r) << k) & I.MASK32
    p = I.mul_const(r, c)
    return I.known_zeros(p), I.known_ones(p)


def lin_window(x: Lin) -> int | None:
    """k such that value == form - k*2^32 for every assignment, or None when it may wrap."""
    r = lin_int_range(x)
    k = r[0] >> 32
    return k if r[1] >> 32 == k else None


def lin_is_const(x: Lin) -> bool:
    return not x[0] and x[1][2] == 0


def lin_collapse(x: Lin, keep: Callable[[Atom], bool] | None = None) -> Lin:
    """Replace atoms (those `keep` rejects; all when None) by their ranges."""
    if not x[0]:
        return x
    kept = []
    s = x[1]
    for a, c in x[0]:
        if keep is not None and keep(a):
            kept.append((a, c))
        else:
            s = I.add(s, I.mul_const(a.range, c))
    if not kept:
        return ((), I.norm32(s))
    return (tuple(kept), _reduce_si(s))


def lin_join(x: Lin, y: Lin) -> Lin | None:
    """Join of two forms when they share their terms (None otherwise)."""
    if x == y:
        return x
    if x[0] != y[0]:
        return None
    if not x[0]:
        return ((), I.join(I.norm32(x[1]), I.norm32(y[1])))
    # same symbolic part: the constant parts may sit in different 2^32 windows
    return (x[0], I.join(x[1], y[1]))


# --- values --------------------------------------------------------------------------------

class Val:
    """A register unit's abstract value: one `Lin` (or one per trip residue of `phase`).

    `phase`: None, or (header block, period P) with ``len(lins) == P``.  `uniform`: the same
    value in every lane of the wave.  `why`: where precision was first lost (a short text),
    carried along for explanations; not part of equality.
    """

    __slots__ = ("phase", "lins", "uniform", "why")
    #: `BOTTOM` only: no value yet (a loop join before anything reached it)
    bottom = False

    def __init__(self, lins: tuple, uniform: bool, phase: tuple | None = None, why: str | None = None) -> None:
        self.lins = lins
        self.uniform = uniform
        self.phase = phase
        self.why = why

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Val) and self.lins == other.lins and self.uniform == other.uniform
                and self.phase == other.phase)

    def __hash__(self) -> int:
        return hash((self.lins, self.uniform))

    def __repr__(self) -> str:
        ph = f" phase={self.phase[0]!r}/{self.phase[1]}" if self.phase else ""
        return f"Val({self.lins}, {'uniform' if self.uniform else 'lanes'}{ph})"

    def is_const(self) -> bool:
        return self.phase is None and lin_is_const(self.lins[0])

    def const(self) -> int | None:
        if self.phase is None:
            x = self.lins[0]
            if not x[0] and x[1][2] == 0:
                return x[1][0]
        return None

    def concrete(self) -> I.SI:
        """Union over trips and lanes of the 32-bit values."""
        out = lin_concrete(self.lins[0])
        for x in self.lins[1:]:
            out = I.join(out, lin_concrete(x))
        return out

    def is_top(self) -> bool:
        c = self.concrete()
        return c[0] == 0 and c[1] == I.MASK32 and c[2] <= 1


class _Bottom(Val):
    __slots__ = ()
    bottom = True

    def __repr__(self) -> str:
        return "BOTTOM"


#: "no value": what a loop join holds before any value reached it; every operation on it
#: gives BOTTOM again and a join ignores it
BOTTOM = _Bottom((((), (0, 0, 0)),), True)


def unit_name(key: tuple) -> str:
    """A register unit as the user spells it (``s4``, ``v17``, ``m0``), for the `why` texts."""
    return f"{key[0]}{key[1]}" if key[0] != "m" else "m0"


def const_val(c: int) -> Val:
    return Val((lin_const(c),), True)


def si_val(s: I.SI, uniform: bool, why: str | None = None) -> Val:
    return Val((((), s),), uniform, None, why)


def top_val(uniform: bool, why: str | None) -> Val:
    return Val((((), I.FULL32),), uniform, None, why)


def atom_val(a: Atom) -> Val:
    return Val((lin_atom(a),), True)


def _why(*vals: Val) -> str | None:
    for v in vals:
        if v.why:
            return v.why
    return None


def _lcm(a: int, b: int) -> int:
    return a * b // gcd(a, b)


MAX_PERIOD = 12


def collapse_phase(v: Val) -> Val:
    """Forget the trip phase: one form joining all residues."""
    if v.phase is None:
        return v
    return Val((join_lins(v.lins, v.uniform),), v.uniform, None, v.why)


def lin_join_shared(x: Lin, y: Lin) -> Lin | None:
    """Join of two forms whose symbolic parts differ but share some terms (the same symbol
    with the same coefficient): those terms are kept and the rest of each form (its other
    terms and its constant) is joined as an integer range.  Why: a register that is
    ``base + 0`` on one path into a block and ``base + t`` on the other (``t`` a symbol of
    its own, say an earlier join's) is ``base + r`` after the join, ``r`` in the union of
    the two rests; falling back to the whole forms' concrete ranges would forget ``base``,
    and with it a wave-index term that tells two waves' LDS tiles apart.  Sound: each form's
    value is ``shared + rest`` modulo 2^32 with ``rest`` in its integer range.  None when
    nothing is shared."""
    ty = dict(y[0])
    shared = tuple((a, c) for a, c in x[0] if ty.get(a) == c)
    if not shared:
        return None
    keep = {a for a, _ in shared}
    rx = (tuple(t for t in x[0] if t[0] not in keep), x[1])
    ry = (tuple(t for t in y[0] if t[0] not in keep), y[1])
    return (shared, I.join(lin_int_range(rx), lin_int_range(ry)))


def join_lins(lins: tuple, uniform: bool) -> Lin:
    """Join forms; the terms all of them share are kept (`lin_join_shared`), the other
    symbolic parts fall back to their ranges (all of them to the concrete ranges when
    nothing is shared)."""
    out = lins[0]
    for x in lins[1:]:
        j = lin_join(out, x)
        if j is None:
            j = lin_join_shared(out, x)
        if j is None:
            j = ((), I.join(lin_concrete(out), lin_concrete(x)))
        out = j
    return out


def align(vals: tuple) -> tuple[tuple | None, list[tuple]]:
    """Bring values to one phase: (phase, per-value lin tuples of that period)."""
    phase = None
    for v in vals:
        if v.phase is None:
            continue
        if phase is None:
            phase = v.phase
        elif v.phase[0] is phase[0]:
            if v.phase[1] != phase[1]:
                phase = (phase[0], _lcm(phase[1], v.phase[1]))
        # a second header: that value is collapsed below
    if phase is not None and phase[1] > MAX_PERIOD:
        phase = None
    if phase is None:
        return None, [(collapse_phase(v).lins[0],) for v in vals]
    p = phase[1]
    out = []
    for v in vals:
        if v.phase is None:
            out.append(v.lins * p)
        elif v.phase[0] is phase[0]:
            q = v.phase[1]
            out.append(tuple(v.lins[k % q] for k in range(p)))
        else:
            out.append((collapse_phase(v).lins[0],) * p)
    return phase, out


def lift(f: Callable[..., Lin], *vals: Val, uniform: bool | None = None, why: str | None = None) -> Val:
    """Apply a form operation residue by residue."""
    for v in vals:
        if v.bottom:
            return BOTTOM
    if len(vals) == 1 and vals[0].phase is None:
        v = vals[0]
        res = f(v.lins[0])
        return Val((res,), v.uniform if uniform is None else uniform, None, why or v.why)
    phase, cols = align(vals)
    n = len(cols[0])
    lins = tuple(f(*(c[k] for c in cols)) for k in range(n))
    u = all(v.uniform for v in vals) if uniform is None else uniform
    return _simplify(Val(lins, u, phase, why or _why(*vals)))


def _simplify(v: Val) -> Val:
    if v.phase is not None and all(x == v.lins[0] for x in v.lins[1:]):
        return Val((v.lins[0],), v.uniform, None, v.why)
    return v


def join_vals(vals: list[Val]) -> Val:
    """Join (a value that is one of these): shared terms kept, else concrete ranges."""
    if any(v.bottom for v in vals):
        vals = [v for v in vals if not v.bottom]
        if not vals:
            return BOTTOM
    first = vals[0]
    if all(v == first for v in vals[1:]):
        return first
    uniform = all(v.uniform for v in vals)
    phase, cols = align(tuple(vals))
    n = len(cols[0])
    lins = tuple(join_lins(tuple(c[k] for c in cols), uniform) for k in range(n))
    return _simplify(Val(lins, uniform, phase, _why(*vals)))


# --- arithmetic on values ---------------------------------------------------------------------

def v_add(a: Val, b: Val) -> Val:
    return lift(lin_add, a, b)


def v_sub(a: Val, b: Val) -> Val:
    return lift(lambda x, y: lin_add(x, lin_neg(y)), a, b)


def v_mul_const(a: Val, c: int) -> Val:
    return lift(lambda x: lin_mul_const(x, c), a)


def v_shl(a: Val, k: int) -> Val:
    if k >= 32:
        return const_val(0)
    return v_mul_const(a, 1 << k)


def _split(x: Lin, p: int) -> tuple[tuple, Lin]:
    """(terms whose coefficient is a multiple of p, the rest of the form)."""
    div = tuple((a, c) for a, c in x[0] if c % p == 0)
    rest = tuple((a, c) for a, c in x[0] if c % p)
    return div, (rest, x[1])


def _lin_lshr(x: Lin, k: int) -> Lin:
    if k == 0:
        return x
    if k >= 32:
        return lin_const(0)
    w = lin_window(x)
    if w is None or not x[0]:
        return ((), I.lshr(lin_concrete(x), k))
    p = 1 << k
    div, rest = _split(x, p)
    if not div:
        return ((), I.lshr(lin_concrete(x), k))
    # value = p*M + R - w*2^32 with M the divisible terms / p: value >> k == M + ((R - w*2^32) >> k)
    r = I.shift(lin_int_range(rest), -(w << 32))
    return (tuple((a, _coeff(c // p)) for a, c in div), I.lshr(r, k))


def v_lshr(a: Val, k: int) -> Val:
    return lift(lambda x: _lin_lshr(x, k), a)


def _bit_parts(x: Lin) -> list | None:
    """The bits each term of a form can set, when the terms and the interval part never share
    a bit (the sum is then an OR and bitwise operations with constants distribute over it);
    None otherwise."""
    if not x[0] or lin_window(x) != 0 or not I.in_u32(x[1]):
        return None
    seen = I.may_one(x[1])
    out = []
    for a, c in x[0]:
        r = I.mul_const(a.range, c)
        if r[0] < 0 or r[1] > I.MASK32:
            return None
        m = I.may_one(r)
        if m & seen:
            return None
        seen |= m
        out.append(m)
    return out


def _bitwise_const(x: Lin, c: int, op: str) -> Lin | None:
    """``x op c`` term by term for a form made of bit-disjoint parts (see `_bit_parts`)."""
    parts = _bit_parts(x)
    if parts is None:
        return None
    kept = []
    for (a, k), m in zip(x[0], parts):
        if op == "and":
            if m & ~c & I.MASK32 == 0:
                kept.append((a, k))
            elif m & c:
                return None
        elif m & c:
            return None
        else:
            kept.append((a, k))
    s = {"and": I.and_, "or": I.or_, "xor": I.xor}[op](x[1], I.const(c))
    return (tuple(kept), s) if kept else ((), s)


def _lin_and_const(x: Lin, m: int) -> Lin:
    m &= I.MASK32
    c = lin_concrete(x)
    if I.may_one(c) & ~m & I.MASK32 == 0:
        return x  # the mask keeps every bit that can be set
    if len(x[0]) == 1 and x[1] == (0, 0, 0) and 0 <= x[0][0][0].range[0] and x[0][0][0].range[1] <= 1:
        # k*f with f 0 or 1 (a sign-extended bit is -f): 0, or k & m
        (a, k), = x[0]
        km = k & I.MASK32 & m
        return (((a, _coeff(km)),), (0, 0, 0)) if km else lin_const(0)
    got = _bitwise_const(x, m, "and")
    if got is not None:
        return got
    if x[0]:
        # terms whose coefficient is a multiple of 2^t (t = the mask's width) do not reach
        # the mask's bits: (2^t*M + R) & m == R & m
        div, rest = _split(x, 1 << m.bit_length())
        if div:
            cr = lin_concrete(rest)
            if rest[0] and lin_window(rest) == 0 and I.may_one(cr) & ~m & I.MASK32 == 0:
                return rest
            return ((), I.and_(cr, I.const(m)))
    return ((), I.and_(c, I.const(m)))


def v_and(a: Val, b: Val) -> Val:
    cb = b.const()
    if cb is not None:
        return lift(lambda x: _lin_and_const(x, cb), a, uniform=a.uniform)
    ca = a.const()
    if ca is not None:
        return lift(lambda x: _lin_and_const(x, ca), b, uniform=b.uniform)
    return lift(lambda x, y: ((), I.and_(lin_concrete(x), lin_concrete(y))), a, b)


def _lin_or(x: Lin, y: Lin) -> Lin:
    for a, b in ((x, y), (y, x)):
        if lin_is_const(b) and a[0]:
            got = _bitwise_const(a, b[1][0], "or")
            if got is not None:
                return got
    cx, cy = lin_concrete(x), lin_concrete(y)
    if I.disjoint_bits(cx, cy) and lin_window(x) is not None and lin_window(y) is not None:
        return lin_add(x, y)
    if I.may_one(cy) & ~I.known_ones(cx) == 0:
        return x  # every bit y may set is already set in every value of x
    if I.may_one(cx) & ~I.known_ones(cy) == 0:
        return y
    return ((), I.or_(cx, cy))


def v_or(a: Val, b: Val) -> Val:
    return lift(_lin_or, a, b)


def _lin_xor(x: Lin, y: Lin) -> Lin:
    for a, b in ((x, y), (y, x)):
        if lin_is_const(b) and a[0]:
            got = _bitwise_const(a, b[1][0], "xor")
            if got is not None:
                return got
    cx, cy = lin_concrete(x), lin_concrete(y)
    if lin_window(x) is not None and lin_window(y) is not None:
        if I.disjoint_bits(cx, cy):
            return lin_add(x, y)
        if cy[2] == 0 and cy[0] & ~I.known_ones(cx) == 0:
            return lin_add(x, lin_const(-cy[0]))  # clears bits that are set in every value
        if cx[2] == 0 and cx[0] & ~I.known_ones(cy) == 0:
            return lin_add(y, lin_const(-cx[0]))
    return ((), I.xor(cx, cy))


def v_xor(a: Val, b: Val) -> Val:
    return lift(_lin_xor, a, b)


def v_mul(a: Val, b: Val) -> Val:
    cb = b.const()
    if cb is not None:
        return v_mul_const(a, cb)
    ca = a.const()
    if ca is not None:
        return v_mul_const(b, ca)
    return lift(lambda x, y: ((), I.norm32(I.mul(lin_concrete(x), lin_concrete(y)))), a, b)


def v_concrete_op(f: Callable[..., I.SI], *vals: Val) -> Val:
    """An operation known only on concrete ranges (min, max, bit-field tricks)."""
    return lift(lambda *xs: ((), f(*(lin_concrete(x) for x in xs))), *vals)


def v_bfe(a: Val, offset: int, width: int) -> Val:
    if width <= 0:
        return const_val(0)
    return v_and(v_lshr(a, offset), const_val((1 << min(width, 32)) - 1))
