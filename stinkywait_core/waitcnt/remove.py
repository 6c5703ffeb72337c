"""StinkyRemoveWaitCntPass: strip the waits the insertion pass can rebuild.

Upstream's policy (`RemoveWaitCntOptions` defaults, the upstream model): remove dscnt,
loadcnt, tensorcnt, asynccnt and loadcnt_dscnt; keep kmcnt (insertion is region-scoped,
prologue scalar loads may never enter the dataflow), xcnt (hazard pass), storecnt,
storecnt_dscnt and legacy s_waitcnt.  Under the hardware model every wait the pass plans is
rebuilt (kmcnt and xcnt included); storecnt waits, and the legacy forms that may carry a
store or release-fence drain, are kept and credited (docs/decisions.md).
"""

from __future__ import annotations

from ..analysis.classify import is_rebuildable_wait
from ..ir import Function, Instruction


def should_remove(inst: Instruction, keep_tensor: bool = False, remove_kmcnt: bool = False,
                  remove_xcnt: bool = False, model: str = "upstream") -> bool:
    if model == "hw":
        return is_rebuildable_wait(inst.mnemonic, "hw") is not None
    kind = is_rebuildable_wait(inst.mnemonic)
    if kind is None:
        return False
    if kind == "hazard":
        return remove_xcnt
    if inst.mnemonic == "s_wait_tensorcnt":
        return not keep_tensor
    if inst.mnemonic == "s_wait_kmcnt":
        return remove_kmcnt
    return True


def remove_waitcnts(func: Function, keep_tensor: bool = False, remove_kmcnt: bool = False,
                    remove_xcnt: bool = False) -> int:
    """Delete removable waits in every block; returns how many were removed."""
    removed = 0
    for b in func.blocks:
        keep = [i for i in b.instrs if not should_remove(i, keep_tensor, remove_kmcnt, remove_xcnt)]
        removed += len(b.instrs) - len(keep)
        b.instrs = keep
    return removed
