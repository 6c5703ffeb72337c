"""Operands of STIR / AMDGPU instructions.

Registers are kept as (kind, lo, hi) ranges so the def-use builder can split them into
32-bit register units, exactly as upstream's semi-pruned SSA does (a 128-bit vreg is four
keys).  Every operand remembers how it was spelled so that the asm printer can give untouched
text back byte for byte and the STIR printer can reproduce upstream's canonical form.
"""

from __future__ import annotations

from .records import FrozenRecord, _set, slot_setters

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Iterator

# Register kinds that name 32-bit units.  `vcc`/`exec` are two units (lo, hi).
PAIR_SPECIALS = {"vcc": ("vcc", 0, 1), "vcc_lo": ("vcc", 0, 0), "vcc_hi": ("vcc", 1, 1),
                 "exec": ("exec", 0, 1), "exec_lo": ("exec", 0, 0), "exec_hi": ("exec", 1, 1),
                 "flat_scratch": ("flat_scratch", 0, 1), "flat_scratch_lo": ("flat_scratch", 0, 0),
                 "flat_scratch_hi": ("flat_scratch", 1, 1)}
#: Single named registers with no index.
NAMED_SPECIALS = {"m0": ("m", 0, 0), "scc": ("SCC", 0, 0), "src_shared_base": ("src_shared_base", 0, 0),
                  "src_private_base": ("src_private_base", 0, 0), "null": ("null", 0, 0)}


class Reg(FrozenRecord):
    """A register or register range; `kind` is v, s, a, ttmp, m, SCC, vcc, exec, LDS, ...

    `spelling` is the original text (``v[0:3]``, ``vcc_lo``, ``s[sym+1:sym+2]``) when the
    operand came from source; printers fall back to the canonical form when it is None.
    Immutable and hashable (fields: kind, lo, hi, neg, spelling).
    """

    __slots__ = ("kind", "lo", "hi", "neg", "spelling")
    kind: str
    lo: int
    hi: int
    neg: bool
    spelling: str | None

    def __init__(self, kind: str, lo: int, hi: int, neg: bool = False, spelling: str | None = None) -> None:
        _reg_kind(self, kind)
        _reg_lo(self, lo)
        _reg_hi(self, hi)
        _reg_neg(self, neg)
        _reg_spelling(self, spelling)

    def units(self) -> Iterator[tuple[str, int]]:
        for i in range(self.lo, self.hi + 1):
            yield (self.kind, i)

    @property
    def is_pseudo(self) -> bool:
        """LDS memtoken pseudo registers and SCC are not architectural data registers."""
        return self.kind in ("LDS", "SCC")

    def overlaps(self, other: "Reg") -> bool:
        return self.kind == other.kind and self.lo <= other.hi and other.lo <= self.hi

    def stir(self) -> str:
        """Canonical STIR spelling (upstream printer)."""
        if self.kind in ("vcc", "exec", "flat_scratch"):
            base = self.kind if (self.lo, self.hi) == (0, 1) else f"{self.kind}_{'lo' if self.lo == 0 else 'hi'}"
        elif self.kind in ("src_shared_base", "src_private_base", "null"):
            base = self.kind
        elif self.lo == self.hi:
            base = f"{self.kind}{self.lo}"
        else:
            base = f"{self.kind}[{self.lo}:{self.hi}]"
        return ("-" if self.neg else "") + base

    def text(self) -> str:
        return self.spelling if self.spelling is not None else self.stir()


_reg_kind, _reg_lo, _reg_hi, _reg_neg, _reg_spelling = slot_setters(Reg)


class Imm(FrozenRecord):
    """Integer literal; `spelling` keeps hex (``0x1``) and other original forms."""

    __slots__ = ("value", "spelling")
    value: int
    spelling: str | None

    def __init__(self, value: int, spelling: str | None = None) -> None:
        _imm_value(self, value)
        _imm_spelling(self, spelling)

    def stir(self) -> str:
        if self.spelling is not None and self.spelling.lower().startswith(("0x", "-0x")):
            return self.spelling
        return str(self.value)

    def text(self) -> str:
        return self.spelling if self.spelling is not None else str(self.value)


_imm_value, _imm_spelling = slot_setters(Imm)


class FloatImm(FrozenRecord):
    """Floating-point literal, keeping its spelling."""

    __slots__ = ("value", "spelling")
    value: float
    spelling: str | None

    def __init__(self, value: float, spelling: str | None = None) -> None:
        _set(self, "value", value)
        _set(self, "spelling", spelling)

    def stir(self) -> str:
        return f"{self.value:.6f}"

    def text(self) -> str:
        return self.spelling if self.spelling is not None else repr(self.value)


class Str(FrozenRecord):
    """String literal (branch targets, symbols); printed without quotes by upstream."""

    __slots__ = ("value", "spelling")
    value: str
    spelling: str | None

    def __init__(self, value: str, spelling: str | None = None) -> None:
        _set(self, "value", value)
        _set(self, "spelling", spelling)

    def stir(self) -> str:
        return self.value

    def text(self) -> str:
        return self.spelling if self.spelling is not None else self.value


class Special(FrozenRecord):
    """Anything kept verbatim: ``hwreg(...)``, ``off``, expressions, symbolic modifiers."""

    __slots__ = ("spelling",)
    spelling: str

    def __init__(self, spelling: str) -> None:
        _set(self, "spelling", spelling)

    def stir(self) -> str:
        return self.spelling

    def text(self) -> str:
        return self.spelling


#: any operand (a `types.UnionType`: usable in annotations and in isinstance checks)
Operand = Reg | Imm | FloatImm | Str | Special


def reg_units(ops: "list[Operand]") -> Iterator[tuple[str, int]]:
    for op in ops:
        if isinstance(op, Reg):
            yield from op.units()
