"""SDWA operand selection and 16-bit integer results, for the address analysis (issue 22).

Compiled gfx9 code builds LDS addresses with sub-dword arithmetic (aiter's cktile GEMM:
``v_ashrrev_i16_sdwa v3, v5, sext(v3) ... src1_sel:BYTE_0``, ``v_bitop3_b16 v3, v3, v230, 3
bitop3:0x78``, ``v_lshlrev_b32_sdwa v3, v5, sext(v3) ... src1_sel:WORD_0``).  Without a
model of them every access built from such a value reads "any address".

What is modelled, and why it is sound whatever the hardware puts where we do not look:

* An SDWA source with ``srcN_sel:BYTE_k`` / ``WORD_k`` is that field of the register,
  zero-extended, or sign-extended when the operand is written ``sext(...)``; ``DWORD`` is the
  register.  A selected field of a non-register operand, a missing selector, ``clamp`` or
  an output modifier: not modelled (unknown).
* A 16-bit integer operation (``v_add_u16``, ``v_lshlrev_b16``, ``v_ashrrev_i16``,
  ``v_bitop3_b16``, ...) reads the low 16 bits of its sources and computes a 16-bit result.
  Which bits it writes above them differs between generations and encodings (zeroed or
  preserved; LLVM lists the cases "mostly derived from experimentation"), so without SDWA its
  32-bit register value is the join of both, ``r`` and ``(old & 0xffff0000) | r``; with
  SDWA ``dst_sel:DWORD`` the upper half is not known at all.  Either way the *low 16 bits*
  are exactly ``r``: they are kept beside the register's value (`low16_key`) for readers that
  look only there (another 16-bit operation, a ``WORD_0``/``BYTE_0``/``BYTE_1`` selector).
  ``op_sel`` (which half is read or written) is not modelled.
* ``dst_sel:WORD_k``/``BYTE_k`` places the selected low field of the result at its position;
  the other bits are zero (``UNUSED_PAD``), the register's old bits (``UNUSED_PRESERVE``), or
  for ``UNUSED_SEXT`` the same as zero when the field's top bit is clear (else unknown).
"""

from __future__ import annotations

import re

from ..ir import Reg
from . import intervals as I
from .value_ops import base_mnemonic, bitop3, semantics
from .values import Val, const_val, join_vals, top_val, v_add, v_and, v_lshr, v_mul, v_or, v_shl, v_sub

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

_FIELD = re.compile(r'\b(dst_sel|dst_unused|src0_sel|src1_sel):\s*(\w+)')
#: selector -> (bit offset, width)
_SEL = {"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8), "WORD_0": (0, 16),
        "WORD_1": (16, 16), "DWORD": (0, 32)}
_LOW16 = const_val(0xFFFF)
_HIGH16 = const_val(0xFFFF0000)
_TYPES = ("u16", "i16", "b16", "f16", "u32", "i32", "b32", "f32", "u64", "i64", "b64", "f64", "u24", "i24", "u8",
          "i8", "b8")


def low16_key(key: tuple) -> tuple:
    """Where the exact low 16 bits of a 16-bit result are kept, beside the unit's value."""
    return (key[0] + ".lo16", key[1])


def is_16bit_result(mn: str) -> bool:
    """`mn` (without encoding suffix) writes a 16-bit integer result: its last type is 16-bit
    and it is its only type (``v_mad_u32_u16`` writes 32 bits)."""
    parts = base_mnemonic(mn).split("_")
    if len(parts) < 3 or parts[-1] not in ("u16", "i16", "b16"):
        return False
    return parts[-2] not in _TYPES


def _sext(v: Val, width: int) -> Val | None:
    """`v` (a `width`-bit field, zero-extended) sign-extended to 32 bits, when the field's top
    bit is known: clear (the value itself) or set in every value (v - 2^width)."""
    c = v.concrete()
    if c[1] < 1 << (width - 1):
        return v
    if c[0] >= 1 << (width - 1) and c[1] < 1 << width:
        return v_sub(v, const_val(1 << width))
    return None


# --- 16-bit operations ---------------------------------------------------------------------------
# each: the operands' low 16 bits (zero-extended) -> the result, of which the low 16 bits count

def _shift_amt(v: Val) -> int | None:
    c = v.const()
    return None if c is None else c & 15


def _lshl16(a: Val, b: Val) -> Val | None:
    k = _shift_amt(a)
    return None if k is None else v_shl(b, k)


def _lshr16(a: Val, b: Val) -> Val | None:
    k = _shift_amt(a)
    return None if k is None else v_lshr(b, k)


def _ashr16(a: Val, b: Val) -> Val | None:
    k = _shift_amt(a)
    if k is None:
        return None
    s = _sext(b, 16)
    if s is None:
        return None
    if s is b:
        return v_lshr(b, k)
    # a negative 16-bit value: its 16-bit arithmetic shift is (b >> k) | the top k bits
    return v_or(v_lshr(b, k), const_val((0xFFFF << (16 - k)) & 0xFFFF)) if k else b


_OPS16: dict[str, "Callable"] = {
    "v_add_u16": lambda a, b: v_add(a, b),
    "v_sub_u16": lambda a, b: v_sub(a, b),
    "v_subrev_u16": lambda a, b: v_sub(b, a),
    "v_mul_lo_u16": lambda a, b: v_mul(a, b),
    "v_lshlrev_b16": _lshl16,
    "v_lshrrev_b16": _lshr16,
    "v_ashrrev_i16": _ashr16,
    "v_and_b16": lambda a, b: v_and(a, b),
    "v_or_b16": lambda a, b: v_or(a, b),
}


def semantics16(mn: str) -> "Callable | None":
    """The transfer function of a 16-bit integer operation (`value_ops.semantics`' shape:
    ``f(ops) -> {unit key: Val}``), or None."""
    base = base_mnemonic(mn)
    if base == "v_bitop3_b16" or base in _OPS16:
        return _op16
    return None


def _op16(ops) -> dict:
    """A 16-bit operation without SDWA: the low half exact, the high half zeroed or kept."""
    r = _result16(ops, [ops.src_low16(i) for i in range(min(ops.nsrc, 3))])
    if r is None:
        return {}
    key = ops.dst_key(0)
    old = ops.old(key)
    full = join_vals([r, v_or(v_and(old, _HIGH16), r)])
    return {key: Val(full.lins, r.uniform and old.uniform, full.phase, full.why), low16_key(key): r}


def _result16(ops, srcs: list[Val]) -> Val | None:
    """The 16-bit result (in [0, 0xffff]) of `ops`' operation on `srcs` (low halves)."""
    if ops.clamped() or ops.has_op_sel() or not srcs:
        return None
    base = base_mnemonic(ops.mnemonic)
    if base == "v_bitop3_b16":
        table = ops.modifier_int("bitop3")
        if table is None:
            return None
        while len(srcs) < 3:
            srcs.append(const_val(0))
        r = bitop3(table, srcs[0], srcs[1], srcs[2])
    else:
        f = _OPS16.get(base)
        if f is None or len(srcs) < 2:
            return None
        r = f(srcs[0], srcs[1])
    return None if r is None else v_and(r, _LOW16)


# --- SDWA ----------------------------------------------------------------------------------------

def sdwa_values(ops) -> dict:
    """`{unit key: Val}` of an ``*_sdwa`` instruction (see the module docstring), or {}."""
    fields = dict(_FIELD.findall(ops.suffix or ""))
    mn = base_mnemonic(ops.mnemonic)
    if mn.startswith("v_cmp") or "omod" in (ops.suffix or "") or ops.clamped():
        return {}  # (a lane mask, not an address; output modifiers: not integer arithmetic)
    if "dst_sel" not in fields or "dst_unused" not in fields:
        return {}
    srcs: list[Val] = []
    lows: list[Val] = []
    for i in range(ops.nsrc):
        if i >= 2:
            break  # (VCC of v_cndmask: no selector; nothing else here takes three)
        sel = fields.get(f"src{i}_sel")
        op = ops.srcs[i]
        if sel is None or sel not in _SEL:
            return {}
        got = _select(ops, i, op, sel)
        if got is None:
            return {}
        srcs.append(got)
        lows.append(v_and(got, _LOW16))
    width16 = is_16bit_result(mn)
    if width16:
        r = _result16(_Fixed(ops, srcs, lows), list(lows))
        if r is None:
            return {}
    else:
        f = semantics(mn)
        if f is None:
            return {}
        got = f(_Fixed(ops, srcs, lows))
        r = got.get(ops.dst_key(0))
        if r is None:
            return {}
    return _place(ops, r, fields["dst_sel"], fields["dst_unused"], width16)


def _select(ops, i: int, op, sel: str) -> Val | None:
    """Source `i` after its selector (and ``sext``)."""
    off, width = _SEL[sel]
    if width == 32:
        return ops.src(i)
    if type(op) is not Reg:
        return None  # (how a selector applies to a constant: not modelled)
    if off < 16:
        field = v_and(v_lshr(ops.src_low16(i), off), const_val((1 << width) - 1))
    else:
        field = v_and(v_lshr(ops.src(i), off), const_val((1 << width) - 1))
    if (op.spelling or "").lstrip("-").startswith("sext("):
        return _sext(field, width)
    return field


def _place(ops, r: Val, dst_sel: str, unused: str, width16: bool) -> dict:
    """The destination after ``dst_sel``/``dst_unused`` (`r`: the operation's result; for a
    16-bit operation only its low 16 bits are known)."""
    key = ops.dst_key(0)
    if dst_sel not in _SEL:
        return {}
    off, width = _SEL[dst_sel]
    if width == 32:
        if width16:
            return {key: top_val(False, f"the upper half of {ops.mnemonic} at line {ops.inst.line}"),
                    low16_key(key): v_and(r, _LOW16)}
        return {key: r}
    field = v_and(r, const_val((1 << width) - 1))
    placed = v_shl(field, off)
    if unused == "UNUSED_PAD":
        out = placed
    elif unused == "UNUSED_PRESERVE":
        keep = ~(((1 << width) - 1) << off) & I.MASK32
        out = v_or(v_and(ops.old(key), const_val(keep)), placed)
    elif unused == "UNUSED_SEXT" and off == 0 and _sext(field, width) is field:
        out = placed
    else:
        return {}
    res = {key: out}
    if off == 0:
        res[low16_key(key)] = v_and(field, _LOW16)
    return res


class _Fixed:
    """`ops` with its first source operands replaced by selected values (SDWA), for the
    transfer functions, which read sources only through these methods."""

    __slots__ = ("_ops", "_srcs", "_lows")

    def __init__(self, ops, srcs: list[Val], lows: list[Val]) -> None:
        self._ops, self._srcs, self._lows = ops, srcs, lows

    def __getattr__(self, name: str):
        return getattr(self._ops, name)

    def src(self, i: int) -> Val:
        return self.src_unit(i, 0)

    def src_unit(self, i: int, j: int) -> Val:
        if j == 0 and i < len(self._srcs):
            return self._srcs[i]
        return self._ops.src_unit(i, j)

    def src_low16(self, i: int) -> Val:
        return self._lows[i] if i < len(self._lows) else self._ops.src_low16(i)

    def const(self, i: int) -> int | None:
        return self.src(i).const()


__all__ = ["sdwa_values", "semantics16", "low16_key", "is_16bit_result"]
