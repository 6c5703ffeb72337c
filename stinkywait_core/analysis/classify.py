"""Upstream stinkytofu's classification, by mnemonic (upstream-algorithm.md s.1).

The per-target instruction table (`targets/`) owns what every instruction does; this module is
a set of convenience predicates over the *upstream* model's entries (`targets/upstream.py`),
used by the upstream-model parts of the pass (implicit dependencies, the validator) and by the
tools that speak upstream's five counters.  Counter indices are upstream's `CounterKind`
order, which is also the order of the first five timelines (`targets/model.py`).
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import Imm, Instruction, Reg
from ..targets.model import (BAR_NONE, BAR_SIGNAL, BAR_WAIT, CK_ASYNC, CK_COUNT, CK_DS, CK_KM, CK_LOAD,
                             CK_TENSOR, ENG_ASYNC, ENG_DS, K_UNUSED, LDS_READ, LDS_RW, LDS_WRITE)
from ..targets.table import REBUILDABLE_WAITS, V_RETURNING, WAIT_MNEMONICS

COUNTERS = (CK_DS, CK_LOAD, CK_KM, CK_TENSOR, CK_ASYNC)

#: short names used in JSON, provenance and the LSP (upstream's five counters)
COUNTER_NAMES = ("ds", "load", "km", "tensor", "async")
#: wait mnemonic per counter (emission order = index order)
WAIT_MNEMONIC = ("s_wait_dscnt", "s_wait_loadcnt", "s_wait_kmcnt", "s_wait_tensorcnt", "s_wait_asynccnt")
#: names used by upstream's diagnostics
COUNTER_DIAG_NAMES = ("ds (dscnt)", "buffer (loadcnt)", "km (kmcnt)", "tensor (tlcnt)", "async (asynccnt)")

K_MAX_IN_FLIGHT = 64
K_MAX_WAIT_COUNT = 63
WAITCNT_MNEMONICS = WAIT_MNEMONICS

__all__ = ["CK_DS", "CK_LOAD", "CK_KM", "CK_TENSOR", "CK_ASYNC", "CK_COUNT", "COUNTERS", "COUNTER_NAMES",
           "WAIT_MNEMONIC", "COUNTER_DIAG_NAMES", "K_MAX_IN_FLIGHT", "K_MAX_WAIT_COUNT", "K_UNUSED"]


@lru_cache(maxsize=8)
def _upstream():
    from ..targets import get_target
    return get_target("gfx1250", "upstream")


def _variant(i: Instruction) -> int:
    return V_RETURNING if has_real_dst(i) and "atomic" in i.mnemonic else 0


@lru_cache(maxsize=8192)
def _sem(mnemonic: str, variant: int = 0):
    t = _upstream()
    return t._table(mnemonic, t.generation, variant)


def is_out_of_order(c: int) -> bool:
    """Scalar memory loads complete out of order: only a wait of 0 proves one done."""
    return c == CK_KM


@lru_cache(maxsize=4096)
def ds_kind(mnemonic: str) -> str | None:
    """'read', 'store', 'atomic' or None for a DS mnemonic (upstream: ``ds_bpermute_b32`` is a
    store; the other DS opcodes count as atomics, docs/decisions.md 16)."""
    s = _sem(mnemonic)
    if s.engine != ENG_DS or not s.pushes:
        return None
    return {LDS_READ: "read", LDS_WRITE: "store", LDS_RW: "atomic"}.get(s.lds)


def is_ds_read(i: Instruction) -> bool:
    return ds_kind(i.mnemonic) == "read"


def is_ds_store(i: Instruction) -> bool:
    return ds_kind(i.mnemonic) == "store"


def is_ds_atomic(i: Instruction) -> bool:
    return ds_kind(i.mnemonic) == "atomic"


def has_real_dst(i: Instruction) -> bool:
    """At least one destination that is neither a pseudo register nor implicit SCC/EXEC."""
    for op in i.dsts:
        if isinstance(op, Reg) and op.kind not in ("LDS", "SCC", "exec"):
            return True
    return False


def is_tensor_load(i: Instruction) -> bool:
    return i.mnemonic.startswith("tensor_load_to_lds")


def is_async_op(mn: str) -> bool:
    return _sem(mn).engine == ENG_ASYNC


def classify_mem_op(i: Instruction) -> int:
    """The counter an instruction is tracked on under upstream's model, or CK_COUNT (none)."""
    if i.is_phi or i.is_label:
        return CK_COUNT
    s = _sem(i.mnemonic, _variant(i))
    return s.pushes[0] if s.pushes else CK_COUNT


# --- barriers, branches, waits ---------------------------------------------------------------

def is_barrier(i: Instruction) -> bool:
    return _sem(i.mnemonic).barrier != BAR_NONE


def is_barrier_signal(i: Instruction) -> bool:
    return i.mnemonic in ("s_barrier_signal", "s_barrier_signal_isfirst")


def is_barrier_wait(i: Instruction) -> bool:
    return _sem(i.mnemonic).barrier == BAR_WAIT


def _first_src_literal(i: Instruction) -> int | None:
    if i.srcs and isinstance(i.srcs[0], Imm):
        return i.srcs[0].value
    return None


def is_cluster_split_barrier(i: Instruction) -> bool:
    """A split signal/wait on the cluster barrier id -3 (0xfffd as a 16-bit immediate): a
    handshake, not an LDS fence."""
    return _sem(i.mnemonic).barrier in (BAR_SIGNAL, BAR_WAIT) and _first_src_literal(i) in (-3, 0xfffd)


def is_split_barrier_all_wave(i: Instruction) -> bool:
    return _sem(i.mnemonic).barrier in (BAR_SIGNAL, BAR_WAIT) and _first_src_literal(i) == -1


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
    return mn.startswith("s_cbranch_") or mn in BRANCH_MNEMONICS or mn in ("s_set_pc_i64", "s_swap_pc_i64")


def is_wait(i: Instruction) -> bool:
    """A wait-count instruction.  `s_wait_alu` is not a wait for this pass."""
    return i.mnemonic in WAIT_MNEMONICS


def is_rebuildable_wait(mn: str, model: str = "upstream") -> str | None:
    """upstream `waitReconstruction`: 'insertion', 'hazard' or None (never removed).

    Under the hardware model xcnt, samplecnt, bvhcnt and expcnt waits are planned too, so
    they are rebuilt as well; storecnt waits belong to release fences and are kept."""
    if model == "hw":
        return "insertion" if mn in REBUILDABLE_WAITS else None
    if mn in ("s_wait_dscnt", "s_wait_loadcnt", "s_wait_kmcnt", "s_wait_tensorcnt",
              "s_wait_asynccnt", "s_wait_loadcnt_dscnt"):
        return "insertion"
    if mn == "s_wait_xcnt":
        return "hazard"
    return None
