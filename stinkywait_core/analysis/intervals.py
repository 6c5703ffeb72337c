"""Strided intervals with known bits: the integer sets the LDS value analysis computes with.

An interval is a plain tuple ``(lo, hi, st)`` -- the set {lo, lo+st, ..., hi} -- or
``(lo, hi, st, kz, ko)``, the members of that set whose bits in `kz` are all 0 and whose
bits in `ko` are all 1 (32-bit values only).  The value analysis (`values.py`) describes the
part of a register that is not a wave-uniform symbol by one of these: a constant
(``st == 0``), the byte offsets the lanes of a wave produce, or the possible values of an
unknown bounded quantity.  Known bits matter for descriptor words that kernels pack field by
field (``s_and``/``s_or``/``s_bitset`` on a word whose low half is unknown): an interval alone
would lose the bits above the unknown field as soon as two versions of the word are joined.

Everything here over-approximates: a result contains every value the operation can produce
from members of its operands.  Invariants: ``lo <= hi``; ``st == 0`` exactly when
``lo == hi``; otherwise ``st >= 1`` divides ``hi - lo``.  The 5-tuple form only appears for
intervals inside [0, 2^32) whose masks say more than the bounds and step do (`bits` builds
the canonical form).  Bounds are unbounded Python integers; `norm32` maps an interval onto the
32-bit register values it stands for (two's-complement wrap), which bit operations require.
"""

from __future__ import annotations

from math import gcd

SI = tuple  # (lo, hi, st) or (lo, hi, st, known zeros, known ones); an alias for documentation

MASK32 = 0xFFFFFFFF
SPAN32 = 1 << 32
FULL32: SI = (0, MASK32, 1)


def const(c: int) -> SI:
    return (c, c, 0)


def make(lo: int, hi: int, st: int = 1) -> SI:
    """The members ``lo, lo+st, ...`` not above `hi` (step 0: just lo and hi), canonical."""
    if lo >= hi:
        return (lo, lo, 0) if lo == hi else (hi, hi, 0)
    if not st:
        st = hi - lo
    hi -= (hi - lo) % st
    return (lo, lo, 0) if hi == lo else (lo, hi, st)


def plain(a: SI) -> SI:
    """The interval without its known-bit masks (a superset)."""
    return a if len(a) == 3 else a[:3]


def in_u32(a: SI) -> bool:
    return a[0] >= 0 and a[1] <= MASK32


# --- known bits ---------------------------------------------------------------------------------

def align_bits(a: SI) -> int:
    """Number of low bits that are zero in every member (32 for the constant 0)."""
    g = gcd(a[0], a[2])
    tz = 32 if g == 0 else min((g & -g).bit_length() - 1, 32)
    if len(a) == 5:
        z = a[3]
        n = 0
        while n < 32 and z >> n & 1:
            n += 1
        tz = max(tz, n)
    return tz


def _range_zeros(lo: int, hi: int, st: int) -> int:
    """Bits zero in every member, from the bounds and step alone (u32 intervals)."""
    if st == 0:
        return ~lo & MASK32
    g = gcd(lo, st)
    tz = min((g & -g).bit_length() - 1, 32) if g else 32
    prefix = ~((1 << (lo ^ hi).bit_length()) - 1)  # bits every member shares with lo
    return ((~lo & prefix) | ((1 << tz) - 1)) & MASK32


def _range_ones(lo: int, hi: int, st: int) -> int:
    if st == 0:
        return lo & MASK32
    return lo & ~((1 << (lo ^ hi).bit_length()) - 1) & MASK32


def known_zeros(a: SI) -> int:
    """Bits that are 0 in every member (a subset of the true ones), for u32 intervals."""
    z = _range_zeros(a[0], a[1], a[2])
    return z | a[3] if len(a) == 5 else z


def known_ones(a: SI) -> int:
    """Bits that are 1 in every member (a subset), for u32 intervals."""
    o = _range_ones(a[0], a[1], a[2])
    return o | a[4] if len(a) == 5 else o


def may_one(a: SI) -> int:
    """Bits that may be set in some member (a superset), for u32 intervals."""
    return ~known_zeros(a) & MASK32


def disjoint_bits(a: SI, b: SI) -> bool:
    """No member of `a` shares a set bit with any member of `b`: OR and XOR are additions."""
    return may_one(a) & may_one(b) == 0


def bits(lo: int, hi: int, st: int, kz: int, ko: int) -> SI:
    """The canonical interval of the members of (lo, hi, st) with bits `kz` clear and `ko`
    set (u32 intervals; the masks are dropped when they add nothing)."""
    base = make(lo, hi, st)
    if not in_u32(base):
        return base
    lo, hi, st = base
    kz &= MASK32
    ko &= MASK32 & ~kz
    # tighten the bounds: members are at least ko and at most ~kz
    nlo, nhi = max(lo, ko), min(hi, ~kz & MASK32)
    if st and nlo > lo:
        nlo = lo + -(-(nlo - lo) // st) * st
    if st and nhi < hi:
        nhi = hi - (hi - nhi + st - 1) // st * st if nhi >= lo else lo
    if nlo <= nhi:
        base = make(nlo, nhi, st)
        lo, hi, st = base
    if st == 0:
        return base
    dz, do = _range_zeros(lo, hi, st), _range_ones(lo, hi, st)
    kz |= dz
    ko |= do
    if kz == dz and ko == do:
        return base
    return (lo, hi, st, kz, ko)


def _with_masks(base: SI, kz: int, ko: int) -> SI:
    return bits(base[0], base[1], base[2], kz, ko) if in_u32(base) else plain(base)


# --- set operations -------------------------------------------------------------------------------

def is_const(a: SI) -> bool:
    return a[2] == 0


def size(a: SI) -> int:
    """Number of members of the interval (an upper bound when masks exclude some)."""
    return 1 if a[2] == 0 else (a[1] - a[0]) // a[2] + 1


def contains(a: SI, x: int) -> bool:
    lo, hi, st = a[0], a[1], a[2]
    if x < lo or x > hi:
        return False
    if len(a) == 5 and (x & a[3] or x & a[4] != a[4]):
        return False
    return x == lo if st == 0 else (x - lo) % st == 0


def subset(a: SI, b: SI) -> bool:
    """Every member of `a` is a member of `b` (a sufficient test)."""
    if a[0] < b[0] or a[1] > b[1]:
        return False
    if b[2] == 0:
        if not (a[0] == a[1] == b[0]):
            return False
    elif (a[0] - b[0]) % b[2] or (a[2] != 0 and a[2] % b[2] != 0):
        return False
    if len(b) == 5:
        if not in_u32(a):
            return False
        return b[3] & ~known_zeros(a) == 0 and b[4] & ~known_ones(a) == 0
    return True


def join(a: SI, b: SI) -> SI:
    """Smallest (masked) strided interval holding both."""
    if a == b:
        return a
    lo = min(a[0], b[0])
    hi = max(a[1], b[1])
    st = gcd(gcd(a[2], b[2]), abs(a[0] - b[0]))
    base = make(lo, hi, st)
    if in_u32(a) and in_u32(b) and base[2]:
        return bits(base[0], base[1], base[2], known_zeros(a) & known_zeros(b), known_ones(a) & known_ones(b))
    return base


# --- arithmetic (masks are not carried: they are re-derived from the bounds) ----------------------

def add(a: SI, b: SI) -> SI:
    lo = a[0] + b[0]
    hi = a[1] + b[1]
    if lo == hi:
        return (lo, lo, 0)
    return (lo, hi, gcd(a[2], b[2]))


def shift(a: SI, c: int) -> SI:
    return (a[0] + c, a[1] + c, a[2])


def neg(a: SI) -> SI:
    return (-a[1], -a[0], a[2])


def sub(a: SI, b: SI) -> SI:
    return add(a, neg(b))


def mul_const(a: SI, c: int) -> SI:
    if c == 0:
        return (0, 0, 0)
    lo, hi, st = a[0] * c, a[1] * c, a[2] * abs(c)
    if c < 0:
        lo, hi = hi, lo
    return (lo, hi, st)


def mul(a: SI, b: SI) -> SI:
    """Product of members (both non-negative, as after `norm32`)."""
    if a[2] == 0:
        return mul_const(b, a[0])
    if b[2] == 0:
        return mul_const(a, b[0])
    lo = a[0] * b[0]
    hi = a[1] * b[1]
    st = gcd(gcd(a[0] * b[2], b[0] * a[2]), a[2] * b[2])
    return make(lo, hi, st or 1)


def norm32(a: SI) -> SI:
    """The 32-bit register values an exact-mod-2^32 interval stands for.

    An interval inside one 2^32 window maps onto [0, 2^32) by a shift.  One that straddles a
    window boundary wraps: only the residue modulo a power-of-two step survives.
    """
    lo, hi, st = a[0], a[1], a[2]
    k = lo >> 32
    if hi >> 32 == k:
        return (lo - (k << 32), hi - (k << 32), st) if k else a
    # wraps: every value is still congruent to lo modulo the largest power of two dividing st
    p = st & -st if st else SPAN32
    p = min(p, SPAN32)
    r = lo % p
    return make(r, MASK32 - (p - 1) + r, p)


# --- bitwise ------------------------------------------------------------------------------------------

def _aligned(lo: int, hi: int, tz: int) -> SI:
    step = 1 << tz if tz < 32 else 0
    if step == 0:
        return (0, 0, 0)
    lo = -(-lo // step) * step
    hi = hi // step * step
    if lo > hi:
        return (0, 0, 0)
    return make(lo, hi, step)


def _low_mask_part(a: SI, m: int) -> SI | None:
    """``a & m`` for a mask of low bits ``m = 2^n - 1`` when `a` stays inside one 2^n block."""
    if m & (m + 1) or m == 0:
        return None
    n = m.bit_length()
    if a[0] >> n != a[1] >> n:
        return None
    return shift(plain(a), -((a[0] >> n) << n))


def and_(a: SI, b: SI) -> SI:
    """Bitwise AND of members of two non-negative 32-bit intervals."""
    if a[2] == 0 and b[2] == 0:
        return const(a[0] & b[0])
    ma, mb = may_one(a), may_one(b)
    if ma & mb == 0:
        return (0, 0, 0)
    for x, y in ((a, b), (b, a)):
        if y[2] == 0 and len(x) == 3 and x[2] == x[1] - x[0] > 0 and x[0] >= 0:
            return join(const(x[0] & y[0]), const(x[1] & y[0]))  # two members: both exactly
    if b[2] == 0 and ma & ~b[0] & MASK32 == 0:
        return a
    if a[2] == 0 and mb & ~a[0] & MASK32 == 0:
        return b
    kz = known_zeros(a) | known_zeros(b)
    ko = known_ones(a) & known_ones(b)
    base = None
    if b[2] == 0:
        base = _low_mask_part(a, b[0])
    elif a[2] == 0:
        base = _low_mask_part(b, a[0])
    if base is None:
        tz = max(align_bits(a), align_bits(b))
        base = _aligned(0, min(a[1], b[1], ma & mb), tz)
    return _with_masks(base, kz, ko)


def or_(a: SI, b: SI) -> SI:
    if a[2] == 0 and b[2] == 0:
        return const(a[0] | b[0])
    kz = known_zeros(a) & known_zeros(b)
    ko = known_ones(a) | known_ones(b)
    if disjoint_bits(a, b):
        return _with_masks(add(plain(a), plain(b)), kz, ko)
    tz = min(align_bits(a), align_bits(b))
    hi = min((1 << max(a[1], b[1]).bit_length()) - 1, a[1] + b[1], MASK32)
    return _with_masks(_aligned(max(a[0], b[0]), hi, tz), kz, ko)


def xor(a: SI, b: SI) -> SI:
    if a[2] == 0 and b[2] == 0:
        return const(a[0] ^ b[0])
    za, oa, zb, ob = known_zeros(a), known_ones(a), known_zeros(b), known_ones(b)
    kz = (za & zb) | (oa & ob)
    ko = (za & ob) | (oa & zb)
    if disjoint_bits(a, b):
        return _with_masks(add(plain(a), plain(b)), kz, ko)
    tz = min(align_bits(a), align_bits(b))
    hi = min((1 << max(a[1], b[1]).bit_length()) - 1, a[1] + b[1], MASK32)
    return _with_masks(_aligned(0, hi, tz), kz, ko)


def lshr(a: SI, k: int) -> SI:
    """Logical shift right of non-negative members by a constant."""
    if k <= 0:
        return a
    if k >= 32 and in_u32(a):
        return (0, 0, 0)
    lo, hi, st = a[0] >> k, a[1] >> k, a[2]
    if lo == hi:
        return (lo, lo, 0)
    base = (lo, hi, st >> k) if st and st % (1 << k) == 0 else (lo, hi, 1)
    if len(a) == 5:
        high = MASK32 ^ (MASK32 >> k)
        return _with_masks(base, (a[3] >> k) | high, a[4] >> k)
    return base


def shl(a: SI, k: int) -> SI:
    return mul_const(a, 1 << k)


def bits_field(a: SI, offset: int, width: int) -> SI:
    """Unsigned bit-field extract ``(a >> offset) & (2^width - 1)``."""
    if width <= 0:
        return (0, 0, 0)
    return and_(lshr(a, offset), const((1 << min(width, 32)) - 1))


def bounded_by(a: SI, lo: int, hi: int) -> bool:
    return a[0] >= lo and a[1] <= hi


def fmt(a: SI) -> str:
    """Human form for diagnostics: ``0x100`` or ``[0x0, 0x1f0] step 0x10``."""
    if a[2] == 0:
        return hex(a[0])
    return f"[{hex(a[0])}, {hex(a[1])}]" + (f" step {hex(a[2])}" if a[2] != 1 else "")
