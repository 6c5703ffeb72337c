"""Hand-written legacy waits (gfx9-11): ``s_waitcnt`` and the SOPK ``s_waitcnt_<counter>`` forms.

The front end decodes what the text names; which counter a field drains, and how a raw
immediate's bits are laid out on each target, is the per-target model's business.
"""

from __future__ import annotations

from ..ir import Imm, Operand, Reg
from .asm_expr import EMPTY_SYMBOLS, Symbols, _int_value, eval_expr
from .asm_lex import _INT, _WAITCNT_FIELD, _Pattern

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from typing import Any

    from .asm_records import ModData

_LEGACY_FIELDS = {"vmcnt": ("vlcnt",), "vmcnt_sat": ("vlcnt",), "lgkmcnt": ("dlcnt", "kmcnt"),
                  "lgkmcnt_sat": ("dlcnt", "kmcnt"), "expcnt": (), "expcnt_sat": (),
                  "vscnt": ("vscnt",)}
#: the SOPK forms ``s_waitcnt_<counter> sreg, simm16`` and the counter each names
_COUNTER_FORMS = {"s_waitcnt_vmcnt": "vmcnt", "s_waitcnt_expcnt": "expcnt", "s_waitcnt_lgkmcnt": "lgkmcnt",
                  "s_waitcnt_vscnt": "vscnt"}
#: a named field starts the named form: ``vmcnt(``
_NAMED_FIELD = _Pattern(r'[A-Za-z_]\w*[ \t]*\(')
_NO_WAIT = {"vlcnt": -1, "vscnt": -1, "dlcnt": -1, "dscnt": -1, "kmcnt": -1}


def read_legacy_waitcnt(text: str, symbols: Symbols = EMPTY_SYMBOLS) -> dict[str, Any] | None:
    """The fields of a legacy ``s_waitcnt`` operand as written (the ``legacy_waitcnt`` modifier).

    ``vmcnt(N) expcnt(N) lgkmcnt(N)`` in any order, separated by blanks, ``&`` or commas, each
    also as ``<name>_sat(N)`` (clamped to the field's width by the assembler); or one raw
    immediate (``0``, ``0x3f70``, an expression over `.set` symbols), with or without the
    ``s_waitcnt`` mnemonic.  Returns ``{"form": "named" | "raw", "raw": the immediate or -1,
    "vmcnt", "expcnt", "lgkmcnt", "vscnt": the value named or -1, "sat": [the counters spelled
    _sat], "sgpr": ""}``, or None if `text` is not a legacy waitcnt operand.  A raw immediate
    is not decoded here: gfx9, gfx10 and gfx11 lay its bits out differently.
    """
    body = text.strip()
    if body.lower().startswith("s_waitcnt"):
        body = body[len("s_waitcnt"):]
        if body and body[0] not in " \t":
            return None
        body = body.strip()
    if not body:
        return None
    fields: dict[str, Any] = {"form": "named", "raw": -1, "vmcnt": -1, "expcnt": -1, "lgkmcnt": -1, "vscnt": -1,
                              "sat": [], "sgpr": ""}
    if _NAMED_FIELD.search(body) is None:
        imm = _int_value(body) if _INT.fullmatch(body) and len(body) <= 40 else eval_expr(body, symbols)
        if imm is None or imm < 0 or imm > 0xFFFF:
            return None
        fields["form"], fields["raw"] = "raw", imm
        return fields
    pos = 0
    found = False
    for m in _WAITCNT_FIELD.finditer(body):
        gap = body[pos:m.start()]
        if gap.strip(" \t&,"):
            return None
        name = m.group(1).lower()
        if name not in _LEGACY_FIELDS:
            return None
        value = eval_expr(m.group(2).strip(), symbols)
        if value is None or value < 0:
            return None
        counter = name[:-4] if name.endswith("_sat") else name
        fields[counter] = value
        if counter != name and counter not in fields["sat"]:
            fields["sat"].append(counter)
        found = True
        pos = m.end()
    if not found or body[pos:].strip(" \t&,"):
        return None
    return fields


def decode_legacy_waitcnt(text: str, symbols: Symbols = EMPTY_SYMBOLS) -> dict[str, int] | None:
    """Decode the operand of a legacy ``s_waitcnt`` into SWaitCntData-style fields (the
    ``swaitcnt`` modifier, kept for the upstream-shaped consumers).

    The forms of `read_legacy_waitcnt`.  A raw immediate is read in the gfx9 bit layout (``0``
    means "wait for everything"; vmcnt bits 3:0 and 15:14, lgkmcnt bits 11:8, a field at its
    maximum means "no wait").  Returns ``{"vlcnt", "vscnt", "dlcnt", "dscnt", "kmcnt"}`` with
    -1 for absent fields, or None if `text` is not a legacy waitcnt operand.  lgkmcnt covers
    both LDS (dlcnt) and scalar memory (kmcnt); expcnt has no field.
    """
    fields = read_legacy_waitcnt(text, symbols)
    if fields is None:
        return None
    result = dict(_NO_WAIT)
    if fields["form"] == "raw":
        imm = fields["raw"]
        vm = (imm & 0xF) | (((imm >> 14) & 0x3) << 4)
        lgkm = (imm >> 8) & 0xF
        result["vlcnt"] = -1 if vm == 0x3F else vm
        result["dlcnt"] = result["kmcnt"] = -1 if lgkm == 0xF else lgkm
        return result
    for counter in ("vmcnt", "lgkmcnt", "vscnt"):
        if fields[counter] >= 0:
            for key in _LEGACY_FIELDS[counter]:
                result[key] = fields[counter]
    return result


def _waitcnt_mods(mnemonic: str, operand_text: str, ops: list[Operand], symbols: Symbols = EMPTY_SYMBOLS) -> ModData:
    """The modifiers of a legacy wait (``s_waitcnt``, ``s_waitcnt_<counter> sreg, N``).

    ``swaitcnt``: the upstream-shaped decode (`decode_legacy_waitcnt`; the SOPK forms set the
    field of their counter).  ``legacy_waitcnt``: what the text says, for the per-target decode
    (`read_legacy_waitcnt`; a SOPK form has ``"form": "counter"``, its immediate as ``raw``
    and as the value of its counter, and ``sgpr`` names its register unless it is ``null``).
    (Not ``waitcnt``: upstream STIR files use that kind for something else.)
    """
    fields: dict[str, int] | None = None
    written: dict[str, Any] | None = None
    if mnemonic == "s_waitcnt":
        written = read_legacy_waitcnt(operand_text, symbols)
        fields = decode_legacy_waitcnt(operand_text, symbols) if written is not None else None
    elif mnemonic in _COUNTER_FORMS and ops:
        last = ops[-1]
        if isinstance(last, Imm):
            counter = _COUNTER_FORMS[mnemonic]
            reg = ops[0] if len(ops) > 1 else None
            sgpr = "" if reg is None or (isinstance(reg, Reg) and reg.kind == "null") else reg.text()
            written = {"form": "counter", "raw": last.value, "vmcnt": -1, "expcnt": -1, "lgkmcnt": -1, "vscnt": -1,
                       "sat": [], "sgpr": sgpr}
            written[counter] = last.value
            if counter != "expcnt":
                fields = dict(_NO_WAIT)
                for key in _LEGACY_FIELDS[counter]:
                    fields[key] = last.value
    out: ModData = ()
    if fields is not None:
        out += (("swaitcnt", tuple(fields.items())),)
    if written is not None:
        out += (("legacy_waitcnt", tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in written.items())),)
    return out
