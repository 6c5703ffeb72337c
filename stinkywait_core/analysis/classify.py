"""Instruction classification: counters, barriers, anchors, waits (upstream-algorithm.md s.1).

Upstream classifies by per-opcode flag bits of the gfx1250 tables; we work on mnemonics, so
this module is the prefix table with upstream's exceptions (``ds_bpermute_b32`` is a DS
store, returning atomics count on loadcnt only when they have a real destination, vector
stores are not tracked at all).  Counter indices follow upstream's `CounterKind` order, which
is also the order of every loop over counters and of emitted waits.
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import Imm, Instruction, Reg

CK_DS, CK_LOAD, CK_KM, CK_TENSOR, CK_ASYNC = 0, 1, 2, 3, 4
CK_COUNT = 5
COUNTERS = (CK_DS, CK_LOAD, CK_KM, CK_TENSOR, CK_ASYNC)

#: short names used in JSON, provenance and the LSP
COUNTER_NAMES = ("ds", "load", "km", "tensor", "async")
#: wait mnemonic per counter (emission order = index order)
WAIT_MNEMONIC = ("s_wait_dscnt", "s_wait_loadcnt", "s_wait_kmcnt", "s_wait_tensorcnt", "s_wait_asynccnt")
#: names used by upstream's diagnostics
COUNTER_DIAG_NAMES = ("ds (dscnt)", "buffer (loadcnt)", "km (kmcnt)", "tensor (tlcnt)", "async (asynccnt)")

K_MAX_IN_FLIGHT = 64
K_MAX_WAIT_COUNT = 63
K_UNUSED = -1


def is_out_of_order(c: int) -> bool:
    """Scalar memory loads complete out of order: only a wait of 0 proves one done."""
    return c == CK_KM


# --- DS ------------------------------------------------------------------------------------

@lru_cache(maxsize=4096)
def ds_kind(mnemonic: str) -> str | None:
    """'read', 'store', 'atomic' or None for a DS mnemonic.

    Other DS opcodes (``ds_add_u32``, ``ds_swizzle_b32``, ``ds_permute_b32``, ...) are
    counted on DScnt by the hardware; we classify them as DS atomics (see
    docs/decisions.md: upstream's tables carry no flag for them).
    """
    if not mnemonic.startswith("ds_"):
        return None
    if mnemonic.startswith(("ds_load", "ds_read")):
        return "read"
    if mnemonic.startswith(("ds_store", "ds_write")) or mnemonic == "ds_bpermute_b32":
        return "store"
    if mnemonic in ("ds_nop",):
        return None
    return "atomic"


def is_ds_read(i: Instruction) -> bool:
    return ds_kind(i.mnemonic) == "read"


def is_ds_store(i: Instruction) -> bool:
    return ds_kind(i.mnemonic) == "store"


def is_ds_atomic(i: Instruction) -> bool:
    return ds_kind(i.mnemonic) == "atomic"


# --- vector memory ---------------------------------------------------------------------------

_VMEM_LOAD_PREFIXES = ("buffer_load", "flat_load", "global_load", "tbuffer_load")
_VMEM_ATOMIC_PREFIXES = ("buffer_atomic", "flat_atomic", "global_atomic")
_ASYNC_PREFIXES = ("global_store_async_from_lds", "global_load_async_to_lds", "global_load_lds",
                   "cluster_load_async_to_lds")


def is_vmem_load(mn: str) -> bool:
    return mn.startswith(_VMEM_LOAD_PREFIXES) and not mn.startswith(_ASYNC_PREFIXES)


def is_vmem_atomic(mn: str) -> bool:
    return mn.startswith(_VMEM_ATOMIC_PREFIXES)


def has_real_dst(i: Instruction) -> bool:
    """At least one destination that is neither a pseudo register nor implicit SCC/EXEC."""
    for op in i.dsts:
        if isinstance(op, Reg) and op.kind not in ("LDS", "SCC", "exec"):
            return True
    return False


def is_smem_load(mn: str) -> bool:
    return mn.startswith(("s_load_", "s_buffer_load_"))


def is_tensor_load(i: Instruction) -> bool:
    return i.mnemonic.startswith("tensor_load_to_lds")


def is_async_op(mn: str) -> bool:
    return mn.startswith(_ASYNC_PREFIXES)


def classify_mem_op(i: Instruction) -> int:
    """The counter an instruction is tracked on, or CK_COUNT (not a tracked memop)."""
    if i.is_phi or i.is_label:
        return CK_COUNT
    mn = i.mnemonic
    if mn.startswith("ds_"):
        return CK_DS if ds_kind(mn) is not None else CK_COUNT
    if is_vmem_load(mn):
        return CK_LOAD
    if is_vmem_atomic(mn):
        return CK_LOAD if has_real_dst(i) else CK_COUNT
    if is_smem_load(mn):
        return CK_KM
    if mn.startswith("tensor_load_to_lds"):
        return CK_TENSOR
    if is_async_op(mn):
        return CK_ASYNC
    return CK_COUNT


# --- barriers, branches, waits ---------------------------------------------------------------

def is_barrier(i: Instruction) -> bool:
    return i.mnemonic.startswith("s_barrier")


def is_barrier_signal(i: Instruction) -> bool:
    return i.mnemonic in ("s_barrier_signal", "s_barrier_signal_isfirst")


def is_barrier_wait(i: Instruction) -> bool:
    return i.mnemonic == "s_barrier_wait"


def _first_src_literal(i: Instruction) -> int | None:
    if i.srcs and isinstance(i.srcs[0], Imm):
        return i.srcs[0].value
    return None


def is_cluster_split_barrier(i: Instruction) -> bool:
    """A split signal/wait on the cluster barrier id -3: a handshake, not an LDS fence."""
    return (is_barrier_signal(i) or is_barrier_wait(i)) and _first_src_literal(i) == -3


def is_split_barrier_all_wave(i: Instruction) -> bool:
    return (is_barrier_signal(i) or is_barrier_wait(i)) and _first_src_literal(i) == -1


def is_lds_fence_barrier(i: Instruction) -> bool:
    return is_barrier(i) and not is_cluster_split_barrier(i)


def is_tensor_anchor(i: Instruction) -> bool:
    return ds_kind(i.mnemonic) is not None or is_lds_fence_barrier(i)


def is_lds_writer_anchor(i: Instruction) -> bool:
    return is_tensor_load(i) or is_ds_store(i)


def is_on_same_pipeline(a: Instruction, b: Instruction) -> bool:
    return classify_mem_op(a) == CK_DS and classify_mem_op(b) == CK_DS


def has_token_overlap(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> bool:
    if not a or not b:
        return False
    return bool(set(a) & set(b))


BRANCH_MNEMONICS = ("s_branch", "s_setpc_b64", "s_swappc_b64", "s_and_saveexec_b64")


def is_branch(i: Instruction) -> bool:
    mn = i.mnemonic
    return mn.startswith("s_cbranch_") or mn in BRANCH_MNEMONICS


WAITCNT_MNEMONICS = frozenset({
    "s_wait_dscnt", "s_wait_loadcnt", "s_wait_storecnt", "s_wait_kmcnt", "s_wait_asynccnt",
    "s_wait_xcnt", "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_waitcnt",
    "s_wait_samplecnt", "s_wait_bvhcnt", "s_wait_expcnt", "s_waitcnt_vscnt", "s_waitcnt_vmcnt",
    "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt",
})


def is_wait(i: Instruction) -> bool:
    """IF_WaitCnt or IF_WaitTensorCnt.  `s_wait_alu` is not a wait for this pass."""
    return i.mnemonic in WAITCNT_MNEMONICS or i.mnemonic == "s_wait_tensorcnt"


def is_rebuildable_wait(mn: str) -> str | None:
    """upstream `waitReconstruction`: 'insertion', 'hazard' or None (never removed)."""
    if mn in ("s_wait_dscnt", "s_wait_loadcnt", "s_wait_kmcnt", "s_wait_tensorcnt",
              "s_wait_asynccnt", "s_wait_loadcnt_dscnt"):
        return "insertion"
    if mn == "s_wait_xcnt":
        return "hazard"
    return None
