"""How each target family writes waits, and how its hand-written waits are read back.

`encode` turns the waits of one program point ({counter name: value}) into assembly lines the
target's assembler accepts; `decode` reads what a wait instruction in the input enforces.  The
same text encodes differently per generation (``s_waitcnt vmcnt(3) lgkmcnt(2)`` is 0xBF8C0273
on gfx942 and 0xBF890C27 on gfx1100), so raw immediates are decoded with the generation's bit
layout (AMDGPU `gfx9_waitcnt`, `gfx10_waitcnt`, `gfx11_waitcnt` operand syntax; LLVM's
`AMDGPUBaseInfo` field widths).
"""

from __future__ import annotations

import re

from ..ir import Imm, Instruction

_FIELD = re.compile(r"([a-z_]+)\s*\(\s*([^()]*?)\s*\)")
_INT = re.compile(r"[-+]?(?:0x[0-9a-fA-F]+|0b[01]+|0o[0-7]+|\d+)")


def _int(text: str) -> int | None:
    text = text.strip()
    if not _INT.fullmatch(text):
        return None
    return int(text, 0)


def _operand_text(inst: Instruction) -> str:
    """The operand text of an asm wait (after the mnemonic, before any comment)."""
    text = inst.text or ""
    low = text.lower()
    at = low.find(inst.mnemonic)
    body = text[at + len(inst.mnemonic):] if at >= 0 else ""
    for marker in ("//", ";", "/*"):
        cut = body.find(marker)
        if cut >= 0:
            body = body[:cut]
    return body.strip()


def literal(inst: Instruction) -> int | None:
    """The wait's immediate: the front end's first integer source, else its operand text."""
    for op in inst.srcs:
        if isinstance(op, Imm):
            return op.value
    return _int(_operand_text(inst).split(",")[-1]) if inst.text else None


class Spelling:
    """Base of the per-family spellings (see the module docstring)."""

    #: wait mnemonics this family's assembler accepts
    mnemonics: frozenset[str] = frozenset()

    def encode(self, values: dict[str, int]) -> list[str]:
        raise NotImplementedError

    def decode(self, inst: Instruction) -> dict[str, int]:
        raise NotImplementedError


class LegacySpelling(Spelling):
    """gfx9, gfx10, gfx11: one ``s_waitcnt`` with vmcnt/expcnt/lgkmcnt fields per point, plus
    ``s_waitcnt_vscnt null, N`` for stores on gfx10/11.

    Layouts (bits of the 16-bit immediate): gfx9 vmcnt [3:0]+[15:14], expcnt [6:4], lgkmcnt
    [11:8]; gfx10 the same with lgkmcnt [13:8]; gfx11 expcnt [2:0], lgkmcnt [9:4], vmcnt [15:10].
    A field at its maximum means "do not wait".
    """

    def __init__(self, layout: str, vscnt: bool) -> None:
        self.layout = layout
        self.vscnt = vscnt
        self.lgkm_max = 15 if layout == "gfx9" else 63
        names = {"s_waitcnt"}
        if vscnt:
            names |= {"s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt"}
        self.mnemonics = frozenset(names)

    def encode(self, values: dict[str, int]) -> list[str]:
        fields = [f"{name}({values[name]})" for name in ("vmcnt", "expcnt", "lgkmcnt") if name in values]
        out = [f"s_waitcnt {' '.join(fields)}"] if fields else []
        if "vscnt" in values:
            out.append(f"s_waitcnt_vscnt null, {values['vscnt']:#x}")
        return out

    def decode_raw(self, imm: int) -> dict[str, int]:
        if self.layout == "gfx11":
            vm, exp, lgkm = (imm >> 10) & 0x3F, imm & 0x7, (imm >> 4) & 0x3F
        else:
            vm = (imm & 0xF) | (((imm >> 14) & 0x3) << 4)
            exp = (imm >> 4) & 0x7
            lgkm = (imm >> 8) & (0xF if self.layout == "gfx9" else 0x3F)
        out: dict[str, int] = {}
        if vm != 63:
            out["vmcnt"] = vm
        if exp != 7:
            out["expcnt"] = exp
        if lgkm != self.lgkm_max:
            out["lgkmcnt"] = lgkm
        return out

    def decode(self, inst: Instruction) -> dict[str, int]:
        mn = inst.mnemonic
        if mn == "s_waitcnt":
            return self._decode_waitcnt(inst)
        if mn in ("s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt") and self.vscnt:
            v = literal(inst)
            return {} if v is None or v < 0 else {mn[len("s_waitcnt_"):]: v}
        return {}

    def _decode_waitcnt(self, inst: Instruction) -> dict[str, int]:
        body = _operand_text(inst)
        raw = _int(body) if body else None
        if raw is None and not body:
            raw = literal(inst)
        if raw is not None:
            return self.decode_raw(raw & 0xFFFF)
        out: dict[str, int] = {}
        maxima = {"vmcnt": 63, "expcnt": 7, "lgkmcnt": self.lgkm_max}
        for m in _FIELD.finditer(body.lower()):
            name, value = m.group(1), _int(m.group(2))
            sat = name.endswith("_sat")
            base = name[:-4] if sat else name
            if base not in maxima or value is None or value < 0:
                continue
            if sat:
                value = min(value, maxima[base])
            out[base] = min(out.get(base, value), value)
        return out


class SplitSpelling(Spelling):
    """gfx12 and gfx1250: one ``s_wait_<counter> N`` per counter, and the combined
    ``s_wait_loadcnt_dscnt`` / ``s_wait_storecnt_dscnt`` (immediate ``(x << 8) | ds``) when DS
    is waited on together with loads or stores, as LLVM emits them.

    gfx1200 still assembles the legacy ``s_waitcnt`` (gfx11 layout); it is read as vmcnt ->
    loadcnt, lgkmcnt -> dscnt and kmcnt, expcnt -> expcnt (docs/decisions.md).
    """

    def __init__(self, counters: tuple[str, ...], legacy: bool) -> None:
        self.counters = counters
        self.legacy = LegacySpelling("gfx11", False) if legacy else None
        names = {f"s_wait_{c}" for c in counters}
        if "dscnt" in counters:
            names |= {"s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt"}
        if legacy:
            names.add("s_waitcnt")
        self.mnemonics = frozenset(names)

    def encode(self, values: dict[str, int]) -> list[str]:
        rest = dict(values)
        out: list[str] = []
        if "dscnt" in rest:
            for other in ("loadcnt", "storecnt"):
                if other in rest:
                    v = (min(rest.pop(other), 63) << 8) | min(rest.pop("dscnt"), 63)
                    out.append(f"s_wait_{other}_dscnt {v:#x}")
                    break
        for c in self.counters:
            if c in rest:
                out.append(f"s_wait_{c} {rest.pop(c)}")
        return out

    def decode(self, inst: Instruction) -> dict[str, int]:
        mn = inst.mnemonic
        if mn in ("s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt"):
            v = literal(inst)
            if v is None or v < 0:
                return {}
            return {mn[len("s_wait_"):-len("_dscnt")]: (v >> 8) & 0x3F, "dscnt": v & 0x3F}
        if mn.startswith("s_wait_") and mn[len("s_wait_"):] in self.counters:
            v = literal(inst)
            return {} if v is None or v < 0 else {mn[len("s_wait_"):]: v}
        if mn == "s_waitcnt" and self.legacy is not None:
            old = self.legacy.decode(inst)
            out: dict[str, int] = {}
            if "vmcnt" in old:
                out["loadcnt"] = old["vmcnt"]
            if "lgkmcnt" in old:
                out["dscnt"] = out["kmcnt"] = old["lgkmcnt"]
            if "expcnt" in old and "expcnt" in self.counters:
                out["expcnt"] = old["expcnt"]
            return out
        return {}
