"""What an instruction does to control flow, by mnemonic: the CFG builder's vocabulary.

`LineSyntax.flow` carries these facts per line so the structure pass and the incremental
re-parse never look a mnemonic up again.

* Branches (``s_branch``, ``s_cbranch_*``, and gfx1250's long branch ``s_add_pc_i64 label-.``)
  end their block and name a target; only the conditional ones fall through.
* Returns and indirect jumps (``s_setpc_b64``, gfx1250 ``s_set_pc_i64``), the end of the
  program (``s_endpgm*``) and the return from a trap handler (``s_rfe_b64``/``s_rfe_i64``) end
  their block with no successor the CFG can name.  (An ``s_setpc_b64`` whose address was
  computed from a label in the same block, LLVM's long branch before gfx1250, is resolved to
  that label by the structure pass.)
* Calls (``s_swappc_b64``/``s_swap_pc_i64``, ``s_call_b64``/``s_call_i64``) and ``s_trap`` end
  their block and fall through: the callee or the trap handler returns to the next
  instruction.
* ``s_set_vgpr_msb`` and ``s_setreg*`` may change which physical VGPRs later operands name
  (`asm_vgpr_msb`): they are flagged so that an edit of one is never spliced as a plain line.
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import Special, Str
from .asm_lex import _IDENT

TYPE_CHECKING = False  # `typing` is not imported at run time: start-up cost of every CLI run
if TYPE_CHECKING:
    from ..ir import Operand

#: `LineSyntax.flow` bits of an instruction: it ends its block; it has no successor at all; it
#: may change the VGPR MSB mode
FLOW_ENDS_BLOCK, FLOW_NO_SUCCESSOR, FLOW_VGPR_MODE = 1, 2, 4

_NO_SUCCESSOR = ("s_endpgm", "s_setpc_b64", "s_set_pc_i64", "s_rfe_b64", "s_rfe_i64")
_CALLS = ("s_swappc_b64", "s_swap_pc_i64", "s_call_b64", "s_call_i64")
_BLOCK_ENDERS = ("s_branch", "s_cbranch_", "s_add_pc_i64", "s_trap") + _CALLS + _NO_SUCCESSOR
_LABEL_TAKERS = ("s_branch", "s_cbranch_", "s_add_pc_i64")
_UNCONDITIONAL = frozenset({"s_branch", "s_add_pc_i64"})
_VGPR_MODE = ("s_set_vgpr_msb", "s_setreg_b32", "s_setreg_imm32_b32")
#: indirect jumps whose target may have been computed from a label (LLVM's long branch)
INDIRECT_JUMPS = frozenset({"s_setpc_b64", "s_set_pc_i64"})


@lru_cache(maxsize=4096)
def is_block_ender(mnemonic: str) -> bool:
    """Instructions after which the CFG builder starts a new basic block."""
    return mnemonic.startswith(_BLOCK_ENDERS)


@lru_cache(maxsize=4096)
def has_no_successor(mnemonic: str) -> bool:
    """Program end, returns and indirect jumps: the block has no successor the CFG can name."""
    return mnemonic.startswith(_NO_SUCCESSOR)


def is_unconditional_branch(mnemonic: str) -> bool:
    return mnemonic in _UNCONDITIONAL


@lru_cache(maxsize=4096)
def is_call(mnemonic: str) -> bool:
    """Calls: the block ends, and the callee returns to the next instruction."""
    return mnemonic.startswith(_CALLS)


def takes_label(mnemonic: str) -> bool:
    """Mnemonics whose label operand is a branch target inside the function.

    ``s_call_b64`` names another function: it ends the block but adds no CFG edge.
    """
    return mnemonic.startswith(_LABEL_TAKERS)


def branch_target(srcs: tuple[Operand, ...] | list[Operand]) -> str | None:
    """The label a branch names: its first bare identifier, or the first symbol of an address
    expression (``s_add_pc_i64 .LBB0_2-.Lpost_addpc0``)."""
    for op in srcs:
        if op.__class__ is Str:
            return op.value  # type: ignore[union-attr]
        if op.__class__ is Special:
            m = _IDENT.search(op.spelling)  # type: ignore[union-attr]
            if m is not None:
                return m.group()
    return None


@lru_cache(maxsize=8192)
def _mnemonic_facts(mnemonic: str) -> tuple[int, bool]:
    """(FLOW_* bits, takes a branch target) of a mnemonic."""
    flow = ((FLOW_ENDS_BLOCK if is_block_ender(mnemonic) else 0)
            | (FLOW_NO_SUCCESSOR if has_no_successor(mnemonic) else 0)
            | (FLOW_VGPR_MODE if mnemonic.startswith(_VGPR_MODE) else 0))
    return flow, takes_label(mnemonic)
