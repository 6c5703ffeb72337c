"""Hand-written legacy waits (gfx9-11): ``s_waitcnt`` and the SOPK ``s_waitcnt_<counter>`` forms.

The front end decodes what the text names; which counter a field drains, and how a raw
immediate's bits are laid out on each target, is the per-target model's business.
"""

from __future__ import annotations

from ..ir import Imm, Operand
from .asm_expr import _int_value, eval_expr
from .asm_lex import _INT, _WAITCNT_FIELD

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from .asm_records import ModData

_LEGACY_FIELDS = {"vmcnt": ("vlcnt",), "vmcnt_sat": ("vlcnt",), "lgkmcnt": ("dlcnt", "kmcnt"),
                  "lgkmcnt_sat": ("dlcnt", "kmcnt"), "expcnt": (), "expcnt_sat": (),
                  "vscnt": ("vscnt",)}


def decode_legacy_waitcnt(text: str) -> dict[str, int] | None:
    """Decode the operand of a legacy ``s_waitcnt`` into SWaitCntData-style fields.

    Accepts ``vmcnt(N) lgkmcnt(M) expcnt(K)`` (any order, separated by spaces, ``&`` or
    commas), a numeric immediate (``0`` means "wait for everything"; other values use the
    gfx9 bit layout: vmcnt bits 3:0 and 15:14, lgkmcnt bits 11:8, a field at its maximum means
    "no wait"), with or without the ``s_waitcnt`` mnemonic.  Returns ``{"vlcnt", "vscnt",
    "dlcnt", "dscnt", "kmcnt"}`` with -1 for absent fields, or None if `text` is not a legacy
    waitcnt operand.  lgkmcnt covers both LDS (dlcnt) and scalar memory (kmcnt).
    """
    body = text.strip()
    if body.lower().startswith("s_waitcnt"):
        body = body[len("s_waitcnt"):]
        if body and body[0] not in " \t":
            return None
        body = body.strip()
    result = {"vlcnt": -1, "vscnt": -1, "dlcnt": -1, "dscnt": -1, "kmcnt": -1}
    if not body:
        return None
    if _INT.fullmatch(body) and len(body) <= 40:
        imm = _int_value(body)
        if imm < 0 or imm > 0xFFFF:
            return None
        vm = (imm & 0xF) | (((imm >> 14) & 0x3) << 4)
        lgkm = (imm >> 8) & 0xF
        result["vlcnt"] = -1 if vm == 0x3F else vm
        result["dlcnt"] = result["kmcnt"] = -1 if lgkm == 0xF else lgkm
        return result
    pos = 0
    found = False
    for m in _WAITCNT_FIELD.finditer(body):
        gap = body[pos:m.start()]
        if gap.strip(" \t&,"):
            return None
        name = m.group(1).lower()
        if name not in _LEGACY_FIELDS:
            return None
        value = eval_expr(m.group(2).strip())
        if value is None or value < 0:
            return None
        for key in _LEGACY_FIELDS[name]:
            result[key] = value
        found = True
        pos = m.end()
    if not found or body[pos:].strip(" \t&,"):
        return None
    return result


def _waitcnt_mods(mnemonic: str, operand_text: str, ops: list[Operand]) -> ModData:
    """The ``swaitcnt`` modifier for legacy waits (s_waitcnt and s_waitcnt_<cnt> null, N)."""
    fields: dict[str, int] | None = None
    if mnemonic == "s_waitcnt":
        fields = decode_legacy_waitcnt(operand_text)
    elif mnemonic in ("s_waitcnt_vmcnt", "s_waitcnt_vscnt", "s_waitcnt_lgkmcnt") and ops:
        last = ops[-1]
        if isinstance(last, Imm):
            fields = {"vlcnt": -1, "vscnt": -1, "dlcnt": -1, "dscnt": -1, "kmcnt": -1}
            if mnemonic == "s_waitcnt_vmcnt":
                fields["vlcnt"] = last.value
            elif mnemonic == "s_waitcnt_vscnt":
                fields["vscnt"] = last.value
            else:
                fields["dlcnt"] = fields["kmcnt"] = last.value
    if fields is None:
        return ()
    return (("swaitcnt", tuple(fields.items())),)

