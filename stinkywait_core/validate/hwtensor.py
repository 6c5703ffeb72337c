"""The hardware checker's own reading of a gfx1250 tensor DMA's LDS bytes.

Written for the checker alone: it shares no reasoning with `analysis/lds_access.py` (the
pass's footprint), only the register values the value analysis gives for the descriptor's
SGPRs (`ValueFlow.operand`, the same raw facts the checker reads for every other address).

What a `tensor_load_to_lds` / `tensor_store_from_lds` touches, from its descriptor groups
(bit positions as in the LLVM AMDGPU tensor-DMA descriptor layout Triton's AMD backend
writes, `TDMUtility.cpp`): the LDS byte address is group 0 word 1; group 1 word 0 holds the
element size (bits 16-17, log2 bytes), iterate mode (bit 19), padding enable (bit 20), pad
interval (bits 22-24: 2^(code+1) dwords) and pad amount (bits 25-31: code+1 dwords); the tile
sizes are group 1 word 3 bits 16-31, word 4 bits 0-15 and 16-31, group 2 word 3 bits 16-31
and group 3 word 2 bits 16-31; group 0 bit 31 turns on gather.  The tile goes to LDS as one
stream, densely; with padding on, after every `interval` bytes of that stream (whatever the
width of a tile row: "TDM writes data as a linear element stream with LDS padding applied
every padInterval elements", Triton's TDMUtility.cpp) the next `pad` bytes are skipped (not
written).  So the bytes are `count` chunks of `interval` bytes, `interval + pad` apart, from
the start.  The checker uses the chunks only when padding is certainly on with one interval
and one amount, and every start is a multiple of the interval and of 16 (then a pad counted
from the stream's start and one counted from aligned addresses agree).  Otherwise one
block: the start rounded down to 16 bytes, the data plus one pad per started interval, plus
15 bytes when the start may be unaligned.  Gather or iterate mode, or a tile size that is not
bounded, is not known (touches everything).

A footprint is `TensorBytes`: the start's linear forms (as `values.Lin`), the chunk size, and
the chunks' count and spacing (count 1: one block).
"""

from __future__ import annotations

from ..analysis import intervals as I
from ..ir import Instruction, Reg

_ALIGN = 16
#: most start values enumerated one by one before their spread is taken as a whole
_ENUM = 256


class TensorBytes:
    """`forms`: the start's linear forms (`head`: the loop block its residues alternate
    with, or None); the bytes are ``start + k*stride + [0, size)`` for k < count."""

    __slots__ = ("forms", "head", "size", "count", "stride")

    def __init__(self, forms: tuple, head, size: int, count: int, stride: int) -> None:
        self.forms, self.head, self.size, self.count, self.stride = forms, head, size, count, stride

    def __repr__(self) -> str:
        return f"TensorBytes({self.count} x {self.size} every {self.stride})"


def is_tensor(inst: Instruction) -> bool:
    return inst.mnemonic.startswith(("tensor_load_to_lds", "tensor_store_from_lds"))


def _bits(word: I.SI, lo: int, n: int) -> tuple[int, int]:
    """(least, most) the field ``word[lo : lo + n]`` may hold: exact for a single value,
    otherwise from the bits known zero or one in every member, and from the bounds when every
    member has the same bits above the field (the field then grows with the value)."""
    mask = (1 << n) - 1
    if word[0] == word[1]:
        v = (word[0] >> lo) & mask
        return v, v
    if not I.in_u32(word):
        return 0, mask
    ones = (I.known_ones(word) >> lo) & mask
    maybe = (~I.known_zeros(word) >> lo) & mask
    if word[0] >> (lo + n) == word[1] >> (lo + n):
        ones = max(ones, (word[0] >> lo) & mask)
        maybe = min(maybe, (word[1] >> lo) & mask)
    return ones, maybe


def _word(flow, inst: Instruction, group: int, unit: int) -> I.SI:
    return flow.operand(inst, group, unit).concrete()


def tensor_bytes(inst: Instruction, flow) -> TensorBytes | None:
    """The bytes `inst` touches (None: not known)."""
    ops = inst.srcs
    if len(ops) < 2 or any(type(r) is not Reg for r in ops[:2]) or ops[0].hi - ops[0].lo < 3 \
            or ops[1].hi - ops[1].lo < 7:
        return None
    if _bits(_word(flow, inst, 0, 0), 31, 1)[1]:
        return None  # gather may be on
    cfg = _word(flow, inst, 1, 0)
    if _bits(cfg, 19, 1)[1]:
        return None  # iterate may be on
    elem = 1 << _bits(cfg, 16, 2)[1]
    sizes = [_bits(_word(flow, inst, 1, 3), 16, 16)[1], _bits(_word(flow, inst, 1, 4), 0, 16)[1],
             _bits(_word(flow, inst, 1, 4), 16, 16)[1]]
    for group, unit in ((2, 3), (3, 2)):
        if len(ops) > group and type(ops[group]) is Reg and ops[group].kind != "null" \
                and ops[group].hi - ops[group].lo >= unit:
            sizes.append(_bits(_word(flow, inst, group, unit), 16, 16)[1])
    if sizes[0] == 0:
        return None
    data = elem
    for s in sizes:
        data *= s if s > 0 else 1
    start = flow.operand(inst, 0, 1)
    forms = tuple(start.lins)
    head = start.phase[0] if start.phase is not None else None
    span = start.concrete()
    pad_on = _bits(cfg, 20, 1)
    if pad_on[1] == 0:
        return _block(forms, head, span, data)
    code, amount = _bits(cfg, 22, 3), _bits(cfg, 25, 7)
    every = 4 * 2 ** (code[0] + 1)  # the shortest interval pads most often
    widest = data + 4 * (amount[1] + 1) * ((data + every - 1) // every)
    if pad_on[0] == 0 or code[0] != code[1] or amount[0] != amount[1]:
        return _block(forms, head, span, widest)
    unit = max(every, _ALIGN)
    if span[0] < 0 or span[0] % unit or (span[0] != span[1] and span[2] % unit):
        return _block(forms, head, span, widest)
    chunks = (data + every - 1) // every
    if chunks <= 1:
        return TensorBytes(forms, head, data, 1, 0)
    return TensorBytes(forms, head, every, chunks, every + 4 * (amount[0] + 1))


def _block(forms: tuple, head, span: I.SI, nbytes: int) -> TensorBytes:
    """One block from the start taken down to 16 bytes (15 more bytes when it may not be
    aligned)."""
    aligned = span[0] >= 0 and span[0] % _ALIGN == 0 and (span[0] == span[1] or span[2] % _ALIGN == 0)
    if aligned:
        return TensorBytes(forms, head, nbytes, 1, 0)
    down = tuple((terms, (c[0] - _ALIGN + 1, c[1], 1)) for terms, c in forms)
    return TensorBytes(down, head, nbytes + _ALIGN - 1, 1, 0)


def lattices(form: tuple, size: int, tb: TensorBytes | None, known=None) -> list[tuple[int, int, int, int]]:
    """The bytes of one start form as lattices ``(lo, hi, step, size)``: the set
    ``{lo, lo+step, .., hi} + [0, size)``.  `known(atom)` gives a symbol's value when the
    caller has fixed it (another wave's index), else None.  Symbols of few values are
    enumerated jointly (a tile's start per wave parity), the others taken over their range;
    `tb`: a tensor's chunks (None: `size` bytes at each start)."""
    base = form[1]
    fixed = 0
    free: list = []
    for atom, c in form[0]:
        v = known(atom) if known is not None else None
        if v is not None:
            fixed += c * v
        else:
            free.append((atom, c))
    sums = [(base[0] + fixed, base[1] + fixed, base[2] if base[0] != base[1] else 0)]
    for atom, c in free:
        lo, hi, st = atom.range[0], atom.range[1], atom.range[2]
        n = 1 if lo == hi or st == 0 else (hi - lo) // st + 1
        if n * len(sums) <= _ENUM:
            vals = [lo] if n == 1 else range(lo, hi + 1, st)
            sums = [(a + c * v, b + c * v, g) for a, b, g in sums for v in vals]
        else:
            part = I.mul_const((lo, hi, st if n > 1 else 0), c)
            sums = [(a + part[0], b + part[1], _gcd(g, part[2])) for a, b, g in sums]
    out = []
    for lo, hi, st in sums:
        if tb is None or tb.count <= 1:
            out.append((lo, hi, st, size if tb is None else tb.size))
            continue
        reach = (tb.count - 1) * tb.stride
        for a, b, g in _starts(lo, hi, st):
            if a == b:
                out.append((a, a + reach, tb.stride, tb.size))
            else:  # several starts and several chunks: one coarser lattice
                out.append((a, b + reach, _gcd(g, tb.stride), tb.size))
    return out


def _starts(lo: int, hi: int, step: int) -> list[tuple[int, int, int]]:
    """A start set ``lo, lo+step, .., hi`` member by member when there are few."""
    if lo == hi or step == 0:
        return [(lo, lo, 0)]
    n = (hi - lo) // step + 1
    if n <= _ENUM:
        return [(lo + k * step, lo + k * step, 0) for k in range(n)]
    return [(lo, hi, step)]


def lattice_meet(x: tuple, y: tuple) -> bool:
    """Do {x0 + i*sx} + [0, zx) and {y0 + j*sy} + [0, zy) share a byte (members inside the
    bounds)?  When one lattice has at most `_ENUM` starts, each of them is tried against the
    other (exact); otherwise the start difference is taken in (y0 - x0) + gcd(sx, sy)*Z within
    its range, which covers every residue when the steps' gcd is small (a padded tile's chunks
    768 apart against a store's lanes 4 apart: the pad holes too)."""
    if not _residue_meet(x, y):
        return False
    nx, ny = _count(x), _count(y)
    if nx == 1 or ny == 1 or min(nx, ny) > _ENUM:
        return True  # one start against a lattice: the residue test is exact
    if nx > ny:
        x, y, nx = y, x, ny
    xlo, sx, zx = x[0], x[2], x[3]
    return any(_residue_meet((a, a, 0, zx), y) for a in range(xlo, xlo + nx * sx, sx))


def _count(x: tuple) -> int:
    return 1 if x[0] == x[1] or x[2] == 0 else (x[1] - x[0]) // x[2] + 1


def _residue_meet(x: tuple, y: tuple) -> bool:
    """`lattice_meet` by the steps' gcd alone (exact when one side is a single start)."""
    xlo, xhi, sx, zx = x
    ylo, yhi, sy, zy = y
    lo = max(ylo - xhi, 1 - zy)
    hi = min(yhi - xlo, zx - 1)
    if lo > hi:
        return False
    g = _gcd(sx, sy)
    r = ylo - xlo
    if g == 0:
        return lo <= r <= hi
    return lo + (r - lo) % g <= hi


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return abs(a)
