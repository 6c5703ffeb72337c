"""What each integer instruction does to abstract values (the transfer functions).

`semantics(mnemonic)` gives a function ``f(ops) -> {unit key: Val}`` for the instructions real
kernels build LDS addresses with (SALU moves, adds, shifts, masks, multiplies, bit-field
extracts, 64-bit adds and shifts, pack instructions; VALU moves, adds, shifts, masks,
``v_lshl_add``/``v_lshl_or``/``v_or3``/``v_mad_u32_u24``/``v_bfe``, lane reads, VOPD pairs),
or None: the analysis then makes the destinations unknown.  `ops` (`value_flow.Operands`)
reads source values and knows the destinations.

Only the destination registers named first are given values; a carry or condition output
(SCC, VCC, an SGPR carry) is never used as an address and is left unknown.  64-bit
instructions give their low unit exactly (the low 32 bits of a sum, product or left shift
depend on the low 32 bits of the inputs only) and their high unit when everything is
constant.
"""

from __future__ import annotations

import re

from ..ir import Imm
from . import intervals as I
from .values import (Lin, Val, const_val, join_vals, lift, lin_const, lin_neg, v_add, v_and, v_bfe,
                     v_concrete_op, v_lshr, v_mul, v_mul_const, v_or, v_shl, v_sub, v_xor)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

_SUFFIX = re.compile(r'_(?:e32|e64|e64_dpp|dpp|sdwa)$')
_TABLE: dict[str, Callable] = {}
_MASK24 = const_val(0xFFFFFF)


def _op(*names: str):
    def reg(f):
        for n in names:
            _TABLE[n] = f
        return f
    return reg


def base_mnemonic(mn: str) -> str:
    return _SUFFIX.sub("", mn)


def semantics(mn: str) -> Callable | None:
    return _TABLE.get(base_mnemonic(mn))


def _one(ops, v: Val) -> dict:
    """The value of the (first) destination's low unit."""
    return {ops.dst_key(0): v}


def _shift_amount(ops, i: int, width: int = 32) -> int | None:
    c = ops.const(i)
    return None if c is None else c & (width - 1)


# --- moves and selects ------------------------------------------------------------------------

@_op("s_mov_b32", "v_mov_b32", "v_accvgpr_write_b32", "v_accvgpr_read_b32", "v_accvgpr_mov_b32",
     "v_mov_b32_from_vgpr", "s_mov_from_global_b32")
def _mov(ops):
    return _one(ops, ops.src(0))


@_op("s_movk_i32")
def _movk(ops):
    c = ops.const(0)
    if c is None:
        return {}
    c &= 0xFFFF
    return _one(ops, const_val(c | 0xFFFF0000 if c & 0x8000 else c))


@_op("s_mov_b64", "v_mov_b64", "v_pk_mov_b32_exact")
def _mov64(ops):
    return {ops.dst_key(0): ops.src_unit(0, 0), ops.dst_key(1): ops.src_unit(0, 1)}


@_op("v_swap_b32")
def _swap(ops):
    if len(ops.dsts) != 2:
        return {}
    a, b = ops.src(0), ops.src(1)
    return {ops.dst_key(0): b, (ops.dsts[1].kind, ops.dsts[1].lo): a}


def _scc(ops) -> int | None:
    """The SCC an ``s_cselect`` reads, when known."""
    return ops.src(2).const() if ops.nsrc > 2 else None


_CMP = {"eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


@_op(*(f"s_cmp_{c}_{t}" for c in _CMP for t in ("u32", "i32")),
     *(f"s_cmpk_{c}_{t}" for c in _CMP for t in ("u32", "i32")))
def _cmp(ops):
    c, t = ops.mnemonic.split("_")[2:4]
    if ops.mnemonic.startswith("s_cmpk_"):
        k = ops.const(1)
        if k is None or (t == "i32" and k & 0xFFFF >= 0x8000):
            return {}  # (a negative 16-bit constant: not compared here)
        a, b = ops.src(0).const(), k & 0xFFFF
    else:
        a, b = ops.src(0).const(), ops.src(1).const()
    if (a is None) != (b is None) and c in ("eq", "lg"):
        return _cmp_two_valued(ops, ops.src(1) if a is not None else ops.src(0), a if a is not None else b, c)
    if a is None or b is None:
        return _cmp_ranges(ops, c, t, b)
    if t == "i32":
        a, b = (a - (1 << 32) if a >> 31 else a), (b - (1 << 32) if b >> 31 else b)
    return _one(ops, const_val(int(_CMP[c](a, b))))


def _cmp_ranges(ops, c: str, t: str, k: int | None) -> dict:
    """A compare whose operands are not both constants, decided when their ranges are apart
    (every value of one below every value of the other): aiter's cktile GEMM compares a lane
    read of its first work-item id, 64w..64w+63 in wave w's own view (wave_roles), with 0xff
    to split its waves into two groups.  `k`: the second operand when a constant (a
    ``s_cmpk`` immediate).  Signed compares only of ranges below 2^31 (where they order as
    unsigned ones)."""
    xa = ops.src(0)
    xb = const_val(k) if k is not None else ops.src(1)
    if xa.bottom or xb.bottom:
        return {}
    ra, rb = xa.concrete(), xb.concrete()
    alo, ahi, blo, bhi = ra[0], ra[1], rb[0], rb[1]
    if not (0 <= alo <= ahi <= I.MASK32 and 0 <= blo <= bhi <= I.MASK32):
        return {}
    if t == "i32" and (ahi >= 1 << 31 or bhi >= 1 << 31):
        return {}
    known = {"lt": (ahi < blo, alo >= bhi), "le": (ahi <= blo, alo > bhi), "gt": (alo > bhi, ahi <= blo),
             "ge": (alo >= bhi, ahi < blo), "eq": (False, ahi < blo or bhi < alo),
             "lg": (ahi < blo or bhi < alo, False)}[c]
    if known[0]:
        return _one(ops, const_val(1))
    if known[1]:
        return _one(ops, const_val(0))
    return {}


def _cmp_two_valued(ops, x: Val, k: int, c: str) -> dict:
    """``s_cmp_eq``/``s_cmp_lg`` of a value with a constant, exactly, when the value takes at
    most two consecutive values m, m+1: SCC is then the form ``x - m`` or ``1 - (x - m)``
    (a flag a later ``s_cselect`` selects with)."""
    r = x.concrete()
    if r[2] == 0 or r[1] - r[0] > 1:
        if k & I.MASK32 < r[0] or k & I.MASK32 > r[1]:
            return _one(ops, const_val(int(c == "lg")))  # the constant is not among the values
        return {}
    m = r[0]
    t = v_sub(x, const_val(m))  # 0 or 1: x == m + t
    k &= I.MASK32
    if k not in (m, m + 1):
        return _one(ops, const_val(int(c == "lg")))
    eq = t if k == m + 1 else v_sub(const_val(1), t)
    return _one(ops, Val(eq.lins, True, eq.phase, eq.why) if c == "eq" else
                Val(v_sub(const_val(1), eq).lins, True, eq.phase, eq.why))


def _flag(v: Val) -> Val | None:
    """SCC as a value: a known constant, or the flag itself as a form in [0, 1]."""
    if v.bottom:
        return None
    c = v.concrete()
    if c[2] == 0:
        return const_val(int(c[0] != 0))
    if c[0] >= 0 and c[1] <= 1:
        return v
    return None


def _scc_result(ops, v: Val) -> dict:
    """The result, and SCC = (result != 0) as SALU bit operations and shifts set it."""
    out = _one(ops, v)
    if ops.mnemonic.startswith("s_"):
        c = v.concrete()
        if c[0] > 0:
            out[("SCC", 0)] = const_val(1)
        elif c[0] == 0 and c[1] <= 1:
            out[("SCC", 0)] = v if c[2] else const_val(0)  # the same object: the flag is the result
    return out


@_op("s_cselect_b32", "v_cndmask_b32")
def _select(ops):
    a, b = ops.src(0), ops.src(1)
    if ops.mnemonic == "s_cselect_b32":
        scc = _scc(ops)
        if scc is not None:
            return _one(ops, a if scc else b)
        mask = _all_or_nothing(ops)
        if mask is not None:
            return _one(ops, mask)
        flag = _flag(ops.src(2)) if ops.nsrc > 2 else None
        d = v_sub(a, b).const()
        if flag is not None and d is not None:
            if d & I.MASK32 >= 1 << 31:
                # a below b: a + (b - a) * (1 - SCC), so no step goes below 0 (an interval
                # flag times a negative difference would wrap to every address)
                # (an unnamed flag is any of {0, 1}: 1 - SCC is the same set, and subtracting
                # a plain interval would wrap it)
                other = v_sub(const_val(1), flag) if any(x[0] for x in flag.lins) else flag
                return _one(ops, v_add(a, v_mul_const(other, (-d) & I.MASK32)))
            return _one(ops, v_add(b, v_mul_const(flag, d)))  # b + (a - b) * SCC, SCC in {0, 1}
    v = join_vals([a, b])
    if ops.mnemonic.startswith("v_") and a != b:
        v = Val(v.lins, False, v.phase, v.why)  # a per-lane condition mixes the two
    return _one(ops, v)


@_op("s_cselect_b64")
def _select64(ops):
    scc = _scc(ops)
    if scc is not None:
        i = 0 if scc else 1
        return {ops.dst_key(0): ops.src_unit(i, 0), ops.dst_key(1): ops.src_unit(i, 1)}
    mask = _all_or_nothing(ops)
    if mask is not None:
        return {ops.dst_key(0): mask, ops.dst_key(1): mask}
    return {ops.dst_key(0): join_vals([ops.src_unit(0, 0), ops.src_unit(1, 0)]),
            ops.dst_key(1): join_vals([ops.src_unit(0, 1), ops.src_unit(1, 1)])}


def _all_or_nothing(ops) -> Val | None:
    """``s_cselect_b64 s, -1, 0`` (or ``0, -1``; ``s_cselect_b32`` too) on an SCC the
    analysis cannot name: every unit is -f (or f - 1) for one new symbol f in {0, 1}, the
    condition (LLVM's i1 as a lane mask).  The halves are then known equal, and a later test
    of the mask (`_mask_and_exec_flag`) gives back f."""
    wide = ops.mnemonic == "s_cselect_b64"
    vals = []
    for i in (0, 1):
        op = ops.srcs[i] if i < ops.nsrc else None
        if type(op) is not Imm:
            return None
        v = op.value if wide else (-1 if op.value & I.MASK32 == I.MASK32 else op.value)
        if v not in (0, -1):
            return None
        vals.append(v)
    if vals[0] == vals[1]:
        return None
    flag = _flag(ops.src(2)) if ops.nsrc > 2 else None
    if flag is None or flag.phase is not None or not flag.lins[0][0]:
        flag = ops.new_flag()
    return Val((lin_neg(flag.lins[0]),), True) if vals[0] == -1 else v_sub(flag, const_val(1))


@_op("s_cmov_b32", "s_cmovk_i32")
def _cmov(ops):
    src = ops.src(0)
    if ops.mnemonic == "s_cmovk_i32":
        c = ops.const(0)
        if c is None:
            return {}
        c &= 0xFFFF
        src = const_val(c | 0xFFFF0000 if c & 0x8000 else c)
    return _one(ops, join_vals([src, ops.old(ops.dst_key(0))]))


# --- adds and subtracts ---------------------------------------------------------------------

@_op("s_add_u32", "s_add_i32", "s_add_co_u32", "s_add_co_i32", "v_add_u32", "v_add_nc_u32", "v_add_co_u32",
     "v_add_i32", "s_add_nc_u32", "v_add_nc_i32")
def _add(ops):
    if ops.clamped():
        return {}
    return _one(ops, v_add(ops.src(0), ops.src(1)))


@_op("s_addk_i32", "s_addk_co_i32")
def _addk(ops):
    c = ops.const(0)
    if c is None:
        return {}
    c &= 0xFFFF
    c = c - 0x10000 if c & 0x8000 else c
    return _one(ops, v_add(ops.old(ops.dst_key(0)), const_val(c)))


@_op("s_mulk_i32")
def _mulk(ops):
    c = ops.const(0)
    if c is None:
        return {}
    c &= 0xFFFF
    return _one(ops, v_mul(ops.old(ops.dst_key(0)), const_val(c | 0xFFFF0000 if c & 0x8000 else c)))


@_op("s_sub_u32", "s_sub_i32", "s_sub_co_u32", "s_sub_co_i32", "v_sub_u32", "v_sub_nc_u32", "v_sub_co_u32",
     "v_sub_i32", "v_sub_nc_i32")
def _sub(ops):
    if ops.clamped():
        return {}
    return _one(ops, v_sub(ops.src(0), ops.src(1)))


@_op("v_subrev_u32", "v_subrev_nc_u32", "v_subrev_co_u32", "v_subrev_i32")
def _subrev(ops):
    if ops.clamped():
        return {}
    return _one(ops, v_sub(ops.src(1), ops.src(0)))


@_op("s_addc_u32", "s_add_co_ci_u32", "v_addc_co_u32", "v_add_co_ci_u32", "v_addc_u32")
def _addc(ops):
    s = v_add(ops.src(0), ops.src(1))
    return _one(ops, join_vals([s, v_add(s, const_val(1))]))


@_op("s_subb_u32", "s_sub_co_ci_u32", "v_subb_co_u32", "v_sub_co_ci_u32", "v_subb_u32")
def _subb(ops):
    s = v_sub(ops.src(0), ops.src(1))
    return _one(ops, join_vals([s, v_sub(s, const_val(1))]))


@_op("v_subbrev_co_u32", "v_subrev_co_ci_u32", "v_subbrev_u32")
def _subbrev(ops):
    s = v_sub(ops.src(1), ops.src(0))
    return _one(ops, join_vals([s, v_sub(s, const_val(1))]))


@_op("s_add_nc_u64", "s_add_u64", "v_add_nc_u64", "v_add_u64", "v_lshl_add_u64", "s_sub_nc_u64", "v_sub_nc_u64")
def _add64(ops):
    mn = ops.mnemonic
    if mn == "v_lshl_add_u64":  # (a << s) + c
        k = _shift_amount(ops, 1, 64)
        if k is None:
            return {}
        a = v_shl(ops.src_unit(0, 0), k) if k < 32 else const_val(0)
        lo = v_add(a, ops.src_unit(2, 0))
        return {ops.dst_key(0): lo, ops.dst_key(1): _exact_hi64(ops, lambda x, y, z: ((x << k) + z), (0, 1, 2))}
    a, b = ops.src_unit(0, 0), ops.src_unit(1, 0)
    sub = "sub" in mn
    lo = v_sub(a, b) if sub else v_add(a, b)
    return {ops.dst_key(0): lo,
            ops.dst_key(1): _exact_hi64(ops, (lambda x, y: x - y) if sub else (lambda x, y: x + y), (0, 1))}


def _exact_hi64(ops, f, idx: tuple) -> Val:
    """The high unit of a 64-bit result: exact when every input is a constant."""
    vals = []
    for i in idx:
        lo, hi = ops.src_unit(i, 0).const(), ops.src_unit(i, 1).const()
        if lo is None or hi is None:
            return ops.unknown("high half of a 64-bit result")
        vals.append(lo | hi << 32)
    return const_val((f(*vals) >> 32) & I.MASK32)


# --- shifts -------------------------------------------------------------------------------------

#: 32-bit logical shifts: (operation, operand holding the amount); the "rev" forms take the
#: amount first
_SHIFTS = {"s_lshl_b32": (v_shl, 1), "v_lshl_b32": (v_shl, 1), "v_lshlrev_b32": (v_shl, 0),
           "s_lshr_b32": (v_lshr, 1), "v_lshr_b32": (v_lshr, 1), "v_lshrrev_b32": (v_lshr, 0)}


@_op(*_SHIFTS)
def _shift(ops):
    f, amount = _SHIFTS[base_mnemonic(ops.mnemonic)]
    k = _shift_amount(ops, amount)
    return {} if k is None else _scc_result(ops, f(ops.src(1 - amount), k))


def _ashr(ops, v: Val, k: int | None) -> dict:
    """Arithmetic right shift: a logical one while the value is below 2^31."""
    if k is None:
        return {}
    if v.concrete()[1] < 1 << 31:
        return _one(ops, v_lshr(v, k))
    return {}


@_op("s_ashr_i32", "v_ashr_i32")
def _sashr(ops):
    return _ashr(ops, ops.src(0), _shift_amount(ops, 1))


@_op("v_ashrrev_i32")
def _vashr(ops):
    return _ashr(ops, ops.src(1), _shift_amount(ops, 0))


@_op("s_lshl1_add_u32", "s_lshl2_add_u32", "s_lshl3_add_u32", "s_lshl4_add_u32")
def _lshl_add_s(ops):
    k = int(ops.mnemonic[6])
    return _one(ops, v_add(v_shl(ops.src(0), k), ops.src(1)))


@_op("v_lshl_add_u32")
def _lshl_add(ops):
    k = _shift_amount(ops, 1)
    return {} if k is None else _one(ops, v_add(v_shl(ops.src(0), k), ops.src(2)))


@_op("v_add_lshl_u32")
def _add_lshl(ops):
    k = _shift_amount(ops, 2)
    return {} if k is None else _one(ops, v_shl(v_add(ops.src(0), ops.src(1)), k))


@_op("v_lshl_or_b32")
def _lshl_or(ops):
    k = _shift_amount(ops, 1)
    return {} if k is None else _one(ops, v_or(v_shl(ops.src(0), k), ops.src(2)))


def _shift64_operands(ops) -> tuple | None:
    """(amount, low unit, high unit) of a 64-bit shift (the "rev" forms take the amount first)."""
    rev = "rev" in base_mnemonic(ops.mnemonic)
    k = _shift_amount(ops, 0 if rev else 1, 64)
    if k is None:
        return None
    v = 1 if rev else 0
    return k, ops.src_unit(v, 0), ops.src_unit(v, 1)


@_op("s_lshl_b64", "v_lshlrev_b64", "v_lshl_b64")
def _shl64(ops):
    got = _shift64_operands(ops)
    if got is None:
        return {}
    k, lo, hi = got
    if k >= 32:
        return {ops.dst_key(0): const_val(0), ops.dst_key(1): v_shl(lo, k - 32)}
    out_hi = v_or(v_shl(hi, k), v_lshr(lo, 32 - k)) if k else hi
    return {ops.dst_key(0): v_shl(lo, k), ops.dst_key(1): out_hi}


@_op("s_lshr_b64", "v_lshrrev_b64", "v_lshr_b64")
def _shr64(ops):
    got = _shift64_operands(ops)
    if got is None:
        return {}
    k, lo, hi = got
    if k >= 32:
        return {ops.dst_key(0): v_lshr(hi, k - 32), ops.dst_key(1): const_val(0)}
    out_lo = v_or(v_lshr(lo, k), v_shl(hi, 32 - k)) if k else lo
    return {ops.dst_key(0): out_lo, ops.dst_key(1): v_lshr(hi, k)}


# --- bitwise -----------------------------------------------------------------------------------

@_op("s_and_b32", "v_and_b32")
def _and(ops):
    a, b = ops.src(0), ops.src(1)
    if base_mnemonic(ops.mnemonic) == "v_and_b32":
        # a mask within the low half reads only the low half: exact after a 16-bit operation
        # whose upper half is not known (`value_sdwa`)
        for i, c in ((1, a.const()), (0, b.const())):
            if c is not None and c & I.MASK32 <= 0xFFFF:
                if i == 1:
                    b = ops.src_low16(1)
                else:
                    a = ops.src_low16(0)
                break
    out = _scc_result(ops, v_and(a, b))
    if ops.mnemonic == "s_and_b32" and ("SCC", 0) not in out:
        flag = _mask_and_exec_flag(ops, 1)
        if flag is not None:
            out[("SCC", 0)] = flag
    return out


@_op("s_or_b32", "v_or_b32")
def _or(ops):
    return _scc_result(ops, v_or(ops.src(0), ops.src(1)))


@_op("s_xor_b32", "v_xor_b32")
def _xor(ops):
    return _scc_result(ops, v_xor(ops.src(0), ops.src(1)))


@_op("s_and_b64", "s_or_b64", "s_xor_b64", "v_and_b64", "v_or_b64", "v_xor_b64")
def _bitwise64(ops):
    f = {"and": v_and, "or": v_or, "xor": v_xor}[ops.mnemonic.split("_")[1]]
    out = {ops.dst_key(0): f(ops.src_unit(0, 0), ops.src_unit(1, 0)),
           ops.dst_key(1): f(ops.src_unit(0, 1), ops.src_unit(1, 1))}
    if ops.mnemonic == "s_and_b64":
        flag = _mask_and_exec_flag(ops, 2)
        if flag is not None:
            out[("SCC", 0)] = flag
    return out


def _mask_and_exec_flag(ops, units: int) -> Val | None:
    """SCC of ``s_and_b64 s, m, exec`` (``s_and_b32 s, m, exec_lo``) where every unit of m is
    the same all-or-nothing form (-f or f - 1, f in {0, 1}: a select of -1 or 0) and EXEC
    is the launch mask here (not empty: lane 0 runs): m & exec != 0 exactly when f is 1, so
    SCC is f itself (compilers test a wave-uniform condition this way before each use:
    aiter's cktile GEMM selects its ping and pong LDS bases on two such tests of s[22:23])."""
    kinds = [getattr(op, "kind", None) for op in ops.srcs[:2]]
    if "exec" not in kinds or kinds.count("exec") != 1 or not ops.exec_is_launch_mask():
        return None
    i = 1 - kinds.index("exec")
    m = [ops.src_unit(i, j) for j in range(units)]
    if m[0].bottom or m[0].phase is not None or any(x != m[0] for x in m[1:]):
        return None
    # -m in {0, 1} means m in {0, 0xffffffff} in every unit: SCC = (m != 0) = -m
    flag = Val((lin_neg(m[0].lins[0]),), True, None, m[0].why)
    c = flag.concrete()
    return flag if c[0] >= 0 and c[1] <= 1 else None


def _not_const(v: Val) -> Val | None:
    c = v.const()
    return None if c is None else const_val(~c & I.MASK32)


@_op("s_andn2_b32", "s_and_not1_b32")
def _andn2(ops):
    n = _not_const(ops.src(1))
    return {} if n is None else _one(ops, v_and(ops.src(0), n))


@_op("s_orn2_b32", "s_or_not1_b32")
def _orn2(ops):
    n = _not_const(ops.src(1))
    return {} if n is None else _one(ops, v_or(ops.src(0), n))


@_op("s_not_b32", "v_not_b32")
def _not(ops):
    n = _not_const(ops.src(0))
    return {} if n is None else _one(ops, n)


#: three-operand forms ``second(first(a, b), c)``
_TERNARY = {"v_or3_b32": (v_or, v_or), "v_xor3_b32": (v_xor, v_xor), "v_and_or_b32": (v_and, v_or),
            "v_xad_u32": (v_xor, v_add), "v_add3_u32": (v_add, v_add)}


@_op(*_TERNARY)
def _ternary(ops):
    first, second = _TERNARY[base_mnemonic(ops.mnemonic)]
    return _one(ops, second(first(ops.src(0), ops.src(1)), ops.src(2)))


@_op("v_bfi_b32")
def _bfi(ops):
    m = ops.src(0).const()
    if m is None:
        return {}
    return _one(ops, v_or(v_and(ops.src(1), const_val(m)), v_and(ops.src(2), const_val(~m & I.MASK32))))


@_op("v_bitop3_b32", "v_bitop2_b32")
def _bitop3(ops):
    table = ops.modifier_int("bitop3")
    if table is None:
        return {}
    srcs = [ops.src(i) for i in range(min(ops.nsrc, 3))]
    while len(srcs) < 3:
        srcs.append(const_val(0))
    v = bitop3(table, srcs[0], srcs[1], srcs[2])
    return {} if v is None else _one(ops, v)


def bitop3(table: int, a: Val, b: Val, c: Val) -> Val | None:
    """The BITOP3 truth table applied bitwise (bit ``(x<<2)|(y<<1)|z`` of `table` gives the
    result for input bits x, y, z of a, b, c); the common tables are AND/OR/XOR/copies."""
    table &= 0xFF
    consts = [v.const() for v in (a, b, c)]
    if None not in consts:
        x, y, z = consts
        out = 0
        for bit in range(32):
            idx = ((x >> bit & 1) << 2) | ((y >> bit & 1) << 1) | (z >> bit & 1)
            out |= (table >> idx & 1) << bit
        return const_val(out)
    if table == 0x80:
        return v_and(v_and(a, b), c)
    if table == 0xFE:
        return v_or(v_or(a, b), c)
    if table == 0x96:
        return v_xor(v_xor(a, b), c)
    if table == 0xF0:
        return a
    if table == 0xCC:
        return b
    if table == 0xAA:
        return c
    # one constant source (c == 0: a function of a and b): per bit, the table of the other
    # two with that bit fixed
    for pos in (2, 1, 0):
        k = consts[pos]
        if k is None:
            continue
        x, y = [v for i, v in enumerate((a, b, c)) if i != pos]
        g0, g1 = (_two_input(_restricted(table, pos, bit), x, y) for bit in (0, 1))
        if k & I.MASK32 == 0 and g0 is not None:
            return g0
        if k & I.MASK32 == I.MASK32 and g1 is not None:
            return g1
        if g0 is not None and g1 is not None:
            return v_or(v_and(g1, const_val(k & I.MASK32)), v_and(g0, const_val(~k & I.MASK32)))
    return None


def _restricted(table: int, pos: int, bit: int) -> tuple[int, ...]:
    """The truth table of the two other inputs (for input bits 00, 01, 10, 11, in operand
    order) when input `pos` (0: a, 1: b, 2: c) is `bit`."""
    out = []
    for u, w in ((0, 0), (0, 1), (1, 0), (1, 1)):
        bits = [u, w]
        bits.insert(pos, bit)
        out.append(table >> (bits[0] << 2 | bits[1] << 1 | bits[2]) & 1)
    return tuple(out)


def _two_input(t2: tuple[int, ...], x: Val, y: Val) -> Val | None:
    """A two-input bitwise function by its truth table (`_restricted`), when it is one we model."""
    if t2 == (0, 0, 0, 0):
        return const_val(0)
    if t2 == (1, 1, 1, 1):
        return const_val(I.MASK32)
    named = {(0, 0, 0, 1): v_and, (0, 1, 1, 1): v_or, (0, 1, 1, 0): v_xor}
    if t2 in named:
        return named[t2](x, y)
    if t2 == (0, 0, 1, 1):
        return x
    if t2 == (0, 1, 0, 1):
        return y
    return None


@_op("s_bitset1_b32", "s_bitset0_b32")
def _bitset(ops):
    b = ops.const(0)
    if b is None:
        return {}
    old = ops.old(ops.dst_key(0))
    bit = 1 << (b & 31)
    if ops.mnemonic == "s_bitset1_b32":
        return _one(ops, v_or(old, const_val(bit)))
    return _one(ops, v_and(old, const_val(~bit & I.MASK32)))


@_op("s_brev_b32", "v_bfrev_b32")
def _brev(ops):
    c = ops.src(0).const()
    if c is None:
        return {}
    return _one(ops, const_val(int(f"{c:032b}"[::-1], 2)))


@_op("s_bfm_b32", "v_bfm_b32")
def _bfm(ops):
    w, o = ops.src(0).const(), ops.src(1).const()
    if w is None or o is None:
        return {}
    return _one(ops, const_val((((1 << (w & 31)) - 1) << (o & 31)) & I.MASK32))


@_op("s_bfe_u32")
def _sbfe(ops):
    spec = ops.src(1).const()
    if spec is None:
        return {}
    return _scc_result(ops, v_bfe(ops.src(0), spec & 31, (spec >> 16) & 0x7F))


@_op("v_bfe_u32")
def _vbfe(ops):
    o, w = ops.src(1).const(), ops.src(2).const()
    if o is None or w is None:
        return {}
    return _one(ops, v_bfe(ops.src(0), o & 31, w & 31))


def _signed_field(ops, v: Val, width: int) -> dict:
    """A sign-extending extract equals the unsigned one while the field's top bit is clear.
    A one-bit field f (0 or 1) extends to 0 or 0xffffffff, i.e. -f (compilers mask it next:
    ``v_bfe_i32 v6, v0, 3, 1; v_and_b32 v6, 0x440, v6`` selects 0 or 0x440)."""
    c = v.concrete()
    if width and c[1] < 1 << (width - 1):
        return _one(ops, v)
    if width == 1 and c[0] >= 0 and c[1] <= 1:
        return _one(ops, lift(_negate_bit, v))
    return {}


def _negate_bit(x: Lin) -> Lin:
    """-x for a form taking 0 or 1; a plain interval stays one ({0, 0xffffffff})."""
    if x[0]:
        return lin_neg(x)
    s = x[1]
    if s[2] == 0:
        return lin_const(-s[0])
    return ((), (0, I.MASK32, I.MASK32))


@_op("s_bfe_i32")
def _sbfe_i(ops):
    spec = ops.src(1).const()
    if spec is None:
        return {}
    w = (spec >> 16) & 0x7F
    return _signed_field(ops, v_bfe(ops.src(0), spec & 31, w), min(w, 32))


@_op("v_bfe_i32")
def _vbfe_i(ops):
    o, w = ops.src(1).const(), ops.src(2).const()
    if o is None or w is None:
        return {}
    return _signed_field(ops, v_bfe(ops.src(0), o & 31, w & 31), w & 31)


@_op("s_sext_i32_i16", "s_sext_i32_i8")
def _sext(ops):
    w = 16 if ops.mnemonic.endswith("i16") else 8
    return _signed_field(ops, ops.src(0), w)


# --- packs -----------------------------------------------------------------------------------------

_LOW16 = const_val(0xFFFF)
_HIGH16 = const_val(0xFFFF0000)


@_op("s_pack_ll_b32_b16", "v_pack_b32_f16_exact")
def _pack_ll(ops):
    return _one(ops, v_or(v_and(ops.src(0), _LOW16), v_shl(v_and(ops.src(1), _LOW16), 16)))


@_op("s_pack_lh_b32_b16")
def _pack_lh(ops):
    return _one(ops, v_or(v_and(ops.src(0), _LOW16), v_and(ops.src(1), _HIGH16)))


@_op("s_pack_hl_b32_b16")
def _pack_hl(ops):
    return _one(ops, v_or(v_lshr(ops.src(0), 16), v_shl(ops.src(1), 16)))


@_op("s_pack_hh_b32_b16")
def _pack_hh(ops):
    return _one(ops, v_or(v_lshr(ops.src(0), 16), v_and(ops.src(1), _HIGH16)))


# --- multiplies ----------------------------------------------------------------------------------

@_op("s_mul_i32", "v_mul_lo_u32", "v_mul_lo_i32", "s_mul_u32")
def _mul(ops):
    return _one(ops, v_mul(ops.src(0), ops.src(1)))


@_op("v_mul_i32_i24")
def _mul_i24(ops):
    a, b = ops.src(0), ops.src(1)
    if a.concrete()[1] < 1 << 23 and b.concrete()[1] < 1 << 23:  # non-negative 24-bit fields
        return _one(ops, v_mul(a, b))
    return {}


@_op("v_mul_u32_u24", "s_mul_u32_u24")
def _mul24(ops):
    return _one(ops, v_mul(v_and(ops.src(0), _MASK24), v_and(ops.src(1), _MASK24)))


@_op("v_mad_u32_u24")
def _mad24(ops):
    if ops.clamped():
        return {}
    p = v_mul(v_and(ops.src(0), _MASK24), v_and(ops.src(1), _MASK24))
    return _one(ops, v_add(p, ops.src(2)))


@_op("v_mad_u32_u16")
def _mad16(ops):
    if ops.clamped() or ops.has_op_sel():
        return {}
    p = v_mul(v_and(ops.src(0), _LOW16), v_and(ops.src(1), _LOW16))
    return _one(ops, v_add(p, ops.src(2)))


@_op("s_mul_u64", "v_mul_u64", "v_mul_lo_u64")
def _mul64(ops):
    lo = v_mul(ops.src_unit(0, 0), ops.src_unit(1, 0))
    return {ops.dst_key(0): lo, ops.dst_key(1): _exact_hi64(ops, lambda x, y: x * y, (0, 1))}


@_op("v_mad_u64_u32", "v_mad_nc_u64_u32")
def _mad64(ops):
    # d(64) = a(32) * b(32) + c(64): the low unit is low32(a*b) + low32(c)
    lo = v_add(v_mul(ops.src(0), ops.src(1)), ops.src_unit(2, 0))
    a, b = ops.src(0).const(), ops.src(1).const()
    clo, chi = ops.src_unit(2, 0).const(), ops.src_unit(2, 1).const()
    if None in (a, b, clo, chi):
        hi = ops.unknown("high half of a 64-bit result")
    else:
        hi = const_val(((a * b + (clo | chi << 32)) >> 32) & I.MASK32)
    return {ops.dst_key(0): lo, ops.dst_key(1): hi}


# --- min / max -----------------------------------------------------------------------------------

def _umin(a: I.SI, b: I.SI) -> I.SI:
    return I.make(min(a[0], b[0]), min(a[1], b[1]), 1) if (a[2] or b[2]) else I.const(min(a[0], b[0]))


def _umax(a: I.SI, b: I.SI) -> I.SI:
    return I.make(max(a[0], b[0]), max(a[1], b[1]), 1) if (a[2] or b[2]) else I.const(max(a[0], b[0]))


@_op("s_min_u32", "v_min_u32")
def _min(ops):
    return _one(ops, v_concrete_op(_umin, ops.src(0), ops.src(1)))


@_op("s_max_u32", "v_max_u32")
def _max(ops):
    return _one(ops, v_concrete_op(_umax, ops.src(0), ops.src(1)))


@_op("s_min_i32", "v_min_i32", "s_max_i32", "v_max_i32")
def _minmax_signed(ops):
    a, b = ops.src(0), ops.src(1)
    if a.concrete()[1] < 1 << 31 and b.concrete()[1] < 1 << 31:
        return _one(ops, v_concrete_op(_umin if "min" in ops.mnemonic else _umax, a, b))
    return {}


# --- lanes -----------------------------------------------------------------------------------------

@_op("v_readfirstlane_b32", "v_readlane_b32", "s_readfirstlane_b32")
def _readlane(ops):
    return _one(ops, ops.uniform_of(ops.src(0)))


@_op("v_writelane_b32")
def _writelane(ops):
    return _one(ops, Val(join_vals([ops.src(0), ops.old(ops.dst_key(0))]).lins, False))


@_op("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32")
def _mbcnt(ops):
    m = ops.src(0).const()
    n = bin(m & I.MASK32).count("1") if m is not None else 32
    if ops.mnemonic.startswith("v_mbcnt_lo"):
        n = min(n, 31)
    lanes = Val((((), I.make(0, n, 1)),), n == 0)
    return _one(ops, v_add(ops.src(1), lanes))
