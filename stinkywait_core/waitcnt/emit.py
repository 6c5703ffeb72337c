"""Emit phase: turn the final plan into wait instructions in the IR.

Anchor waits go immediately before their anchor in counter order (dscnt, loadcnt, kmcnt,
tensorcnt, asynccnt); tail drains go before the predecessor's branch terminator, after any
anchor waits there, or at the end of a block without a branch (spec "Emit phase").
"""

from __future__ import annotations

from ..analysis import classify as K
from ..ir import Block, Imm, Instruction, Modifier


def make_wait(c: int, n: int, tokens: list[int] | None = None) -> Instruction:
    """A wait instruction exactly as upstream builds it (one literal, counter modifier)."""
    mods: dict[str, Modifier] = {}
    if c in (K.CK_DS, K.CK_LOAD, K.CK_KM):
        fields = {"vlcnt": -1, "vscnt": -1, "dlcnt": -1, "dscnt": -1, "kmcnt": -1}
        fields[{K.CK_DS: "dlcnt", K.CK_LOAD: "vlcnt", K.CK_KM: "kmcnt"}[c]] = n
        mods["swaitcnt"] = Modifier("swaitcnt", fields)
    elif c == K.CK_TENSOR:
        mods["swaittensorcnt"] = Modifier("swaittensorcnt", {"tlcnt": n})
        if tokens:
            mods["memtoken"] = Modifier("memtoken", {"tokens": list(tokens)})
    else:
        mods["swaitasynccnt"] = Modifier("swaitasynccnt", {"asynccnt": n})
    return Instruction(K.WAIT_MNEMONIC[c], srcs=[Imm(n)], mods=mods, cycles=(1, 1), inserted=True)


def tail_anchor(block: Block) -> Instruction | None:
    """The block's terminator if it is a branch, else None (append at the end)."""
    term = block.terminator()
    return term if term is not None and K.is_branch(term) else None
