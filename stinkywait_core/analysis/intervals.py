"""Strided intervals: the set {lo, lo+st, ..., hi} of integers, as a plain tuple (lo, hi, st).

The LDS value analysis (`values.py`) describes the part of a register that is not a
wave-uniform symbol by one of these: a constant (``st == 0``), the byte offsets the lanes of a
wave produce, or the possible values of an unknown bounded quantity.  Everything here is an
over-approximation: a result contains every value the operation can produce from members of
its operands.  The operations are the integer ones address arithmetic uses (add, multiply by
a constant, shifts, masks, disjoint-bit ORs) plus the bit-level bounds that make AND, OR and
XOR of ranges safe.

Invariants of an interval ``(lo, hi, st)``: ``lo <= hi``; ``st == 0`` exactly when
``lo == hi``; otherwise ``st >= 1`` and ``st`` divides ``hi - lo``.  Bounds are unbounded
Python integers; `norm32` maps an interval onto the 32-bit register values it stands for
(two's-complement wrap), which the bit operations require.
"""

from __future__ import annotations

from math import gcd

SI = tuple  # (lo, hi, st); a type alias for documentation

MASK32 = 0xFFFFFFFF
SPAN32 = 1 << 32
FULL32: SI = (0, MASK32, 1)


def const(c: int) -> SI:
    return (c, c, 0)


def make(lo: int, hi: int, st: int = 1) -> SI:
    """A canonical interval from bounds and a step (the step is reduced to fit the bounds)."""
    if lo >= hi:
        return (lo, lo, 0) if lo == hi else (hi, hi, 0)
    st = gcd(st, hi - lo) if st else hi - lo
    return (lo, hi - (hi - lo) % st, st)


def is_const(a: SI) -> bool:
    return a[2] == 0


def size(a: SI) -> int:
    """Number of members."""
    return 1 if a[2] == 0 else (a[1] - a[0]) // a[2] + 1


def contains(a: SI, x: int) -> bool:
    lo, hi, st = a
    if x < lo or x > hi:
        return False
    return x == lo if st == 0 else (x - lo) % st == 0


def join(a: SI, b: SI) -> SI:
    """Smallest strided interval holding both."""
    if a == b:
        return a
    lo = min(a[0], b[0])
    hi = max(a[1], b[1])
    st = gcd(gcd(a[2], b[2]), abs(a[0] - b[0]))
    return make(lo, hi, st)


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
    lo, hi, st = a
    k = lo >> 32
    if hi >> 32 == k:
        return (lo - (k << 32), hi - (k << 32), st) if k else a
    # wraps: every value is still congruent to lo modulo the largest power of two dividing st
    p = st & -st if st else SPAN32
    p = min(p, SPAN32)
    r = lo % p
    return make(r, MASK32 - (p - 1) + r, p)


def in_u32(a: SI) -> bool:
    return a[0] >= 0 and a[1] <= MASK32


# --- bits ----------------------------------------------------------------------------------

def align_bits(a: SI) -> int:
    """Number of low bits that are zero in every member (32 for the constant 0)."""
    g = gcd(a[0], a[2])
    if g == 0:
        return 32
    return min((g & -g).bit_length() - 1, 32)


def may_one(a: SI) -> int:
    """Bits that may be set in some member (a superset), for non-negative intervals."""
    if a[2] == 0:
        return a[0] & MASK32
    top = (1 << a[1].bit_length()) - 1
    return top & ~((1 << align_bits(a)) - 1) & MASK32


def known_ones(a: SI) -> int:
    """Bits that are set in every member (a subset), for non-negative intervals."""
    if a[2] == 0:
        return a[0] & MASK32
    return a[0] & ~((1 << (a[0] ^ a[1]).bit_length()) - 1) & MASK32


def disjoint_bits(a: SI, b: SI) -> bool:
    """No member of `a` shares a set bit with any member of `b`: OR and XOR are additions."""
    return may_one(a) & may_one(b) == 0


def _aligned(lo: int, hi: int, tz: int) -> SI:
    step = 1 << tz if tz < 32 else 0
    if step == 0:
        return (0, 0, 0)
    lo = -(-lo // step) * step
    hi = hi // step * step
    if lo > hi:
        return (0, 0, 0)
    return make(lo, hi, step)


def and_(a: SI, b: SI) -> SI:
    """Bitwise AND of members of two non-negative 32-bit intervals."""
    if a[2] == 0 and b[2] == 0:
        return const(a[0] & b[0])
    ma, mb = may_one(a), may_one(b)
    if ma & mb == 0:
        return (0, 0, 0)
    if b[2] == 0 and ma & ~b[0] & MASK32 == 0:
        return a
    if a[2] == 0 and mb & ~a[0] & MASK32 == 0:
        return b
    if b[2] == 0:
        low = _low_mask_part(a, b[0])
        if low is not None:
            return low
    if a[2] == 0:
        low = _low_mask_part(b, a[0])
        if low is not None:
            return low
    tz = max(align_bits(a), align_bits(b))
    return _aligned(0, min(a[1], b[1], ma & mb), tz)


def _low_mask_part(a: SI, m: int) -> SI | None:
    """``a & m`` for a mask of low bits ``m = 2^n - 1`` when `a` stays inside one 2^n block."""
    if m & (m + 1) or m == 0:
        return None
    n = m.bit_length()
    if a[0] >> n != a[1] >> n:
        return None
    return shift(a, -((a[0] >> n) << n))


def or_(a: SI, b: SI) -> SI:
    if a[2] == 0 and b[2] == 0:
        return const(a[0] | b[0])
    if disjoint_bits(a, b):
        return add(a, b)
    tz = min(align_bits(a), align_bits(b))
    hi = min((1 << max(a[1], b[1]).bit_length()) - 1, a[1] + b[1], MASK32)
    return _aligned(max(a[0], b[0]), hi, tz)


def xor(a: SI, b: SI) -> SI:
    if a[2] == 0 and b[2] == 0:
        return const(a[0] ^ b[0])
    if disjoint_bits(a, b):
        return add(a, b)
    tz = min(align_bits(a), align_bits(b))
    hi = min((1 << max(a[1], b[1]).bit_length()) - 1, a[1] + b[1], MASK32)
    return _aligned(0, hi, tz)


def lshr(a: SI, k: int) -> SI:
    """Logical shift right of non-negative members by a constant."""
    if k <= 0:
        return a
    if k >= 32 and in_u32(a):
        return (0, 0, 0)
    lo, hi, st = a[0] >> k, a[1] >> k, a[2]
    if lo == hi:
        return (lo, lo, 0)
    if st and st % (1 << k) == 0:
        return (lo, hi, st >> k)
    return (lo, hi, 1)


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
