"""Emit phase: turn the final plan into wait instructions in the IR.

Anchor waits go immediately before their anchor in counter order (dscnt, loadcnt, kmcnt,
tensorcnt, asynccnt); tail drains go before the predecessor's branch terminator, after any
anchor waits there, or at the end of a block without a branch (spec "Emit phase").
"""

from __future__ import annotations

from ..analysis import classify as K
from ..ir import Block, Imm, Instruction, Modifier


#: upstream's SWaitCntData field of each counter it spells with `mod.swaitcnt`
_SWAITCNT_FIELD = {"dscnt": "dlcnt", "loadcnt": "vlcnt", "kmcnt": "kmcnt"}


def make_wait(counter: str, n: int, tokens: list[int] | None = None) -> Instruction:
    """A gfx12-style wait instruction as upstream builds it (one literal, counter modifier);
    `counter` is the hardware counter's name (``dscnt``, ``tensorcnt``, ``xcnt``...)."""
    mods: dict[str, Modifier] = {}
    if counter in _SWAITCNT_FIELD:
        fields = {"vlcnt": -1, "vscnt": -1, "dlcnt": -1, "dscnt": -1, "kmcnt": -1}
        fields[_SWAITCNT_FIELD[counter]] = n
        mods["swaitcnt"] = Modifier("swaitcnt", fields)
    elif counter == "tensorcnt":
        mods["swaittensorcnt"] = Modifier("swaittensorcnt", {"tlcnt": n})
        if tokens:
            mods["memtoken"] = Modifier("memtoken", {"tokens": list(tokens)})
    elif counter == "asynccnt":
        mods["swaitasynccnt"] = Modifier("swaitasynccnt", {"asynccnt": n})
    return Instruction(f"s_wait_{counter}", srcs=[Imm(n)], mods=mods, cycles=(1, 1), inserted=True)


def tail_anchor(block: Block) -> Instruction | None:
    """The block's terminator if it is a branch, else None (append at the end)."""
    term = block.terminator()
    return term if term is not None and K.is_branch(term) else None
