"""What an instruction does to control flow, by mnemonic: the CFG builder's vocabulary.

`LineSyntax.flow` carries these facts per line so the structure pass and the incremental
re-parse never look a mnemonic up again.
"""

from __future__ import annotations

from functools import lru_cache

#: `LineSyntax.flow` bits of an instruction: it ends its block; it has no successor at all
FLOW_ENDS_BLOCK, FLOW_NO_SUCCESSOR = 1, 2

_NO_SUCCESSOR = ("s_endpgm", "s_setpc_b64", "s_rfe_b64")
_BLOCK_ENDERS = ("s_branch", "s_cbranch_", "s_setpc_b64", "s_swappc_b64", "s_call_b64",
                 "s_endpgm", "s_rfe_b64")


@lru_cache(maxsize=4096)
def is_block_ender(mnemonic: str) -> bool:
    """Instructions after which the CFG builder starts a new basic block."""
    return mnemonic.startswith(_BLOCK_ENDERS)


@lru_cache(maxsize=4096)
def has_no_successor(mnemonic: str) -> bool:
    """Program end and indirect jumps: the block has no CFG successor at all."""
    return mnemonic.startswith(_NO_SUCCESSOR)


def is_unconditional_branch(mnemonic: str) -> bool:
    return mnemonic == "s_branch"


def takes_label(mnemonic: str) -> bool:
    """Mnemonics whose bare-identifier operand is a branch target inside the function.

    ``s_call_b64`` names another function: it ends the block but adds no CFG edge.
    """
    return mnemonic.startswith(("s_branch", "s_cbranch_"))


@lru_cache(maxsize=8192)
def _mnemonic_facts(mnemonic: str) -> tuple[int, bool]:
    """(FLOW_* bits, takes a branch target) of a mnemonic."""
    flow = ((FLOW_ENDS_BLOCK if is_block_ender(mnemonic) else 0)
            | (FLOW_NO_SUCCESSOR if has_no_successor(mnemonic) else 0))
    return flow, takes_label(mnemonic)
