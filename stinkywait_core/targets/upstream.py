"""Upstream stinkytofu's own model of gfx1250 (`stinkywait-opt`'s default, `--upstream`).

Five counters (dscnt, loadcnt, kmcnt, tensorcnt, asynccnt), upstream's classification
(upstream-algorithm.md s.1: vector stores untracked, scratch and cluster loads untracked, FLAT
counted on loadcnt only, `ds_bpermute_b32` a DS store, returning atomics on loadcnt only when
they have a destination) and upstream's crediting of hand-written waits (literal first, then
the modifier fields; `s_waitcnt` only as decoded by the asm front end).  Kept so that the
upstream FileCheck corpus reads upstream's numbers; every user-facing command uses the whole
hardware model (`gfx1250.py`, `table.py`).
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import Imm, Instruction
from .gfx1250 import latency_model as gfx1250_latency
from .generation import Features, Generation
from .model import (BAR_FULL, BAR_NONE, BAR_OTHER, BAR_SIGNAL, BAR_WAIT, CK_ASYNC, CK_DS, CK_KM, CK_LOAD, CK_TENSOR,
                    CTL_BRANCH, CTL_CBRANCH, CTL_ENDPGM, CTL_RETURN, ENG_ASYNC, ENG_DS, ENG_TENSOR, LDS_NONE,
                    LDS_READ, LDS_RW, LDS_WRITE, Counter, InstrSem)
from .spelling import Spelling
from .table import V_RETURNING, WAIT_MNEMONICS

_ASYNC = ("global_store_async_from_lds", "global_load_async_to_lds", "global_load_lds", "cluster_load_async_to_lds")
_LOADS = ("buffer_load", "flat_load", "global_load", "tbuffer_load")
_ATOMICS = ("buffer_atomic", "flat_atomic", "global_atomic")
COUNTER_ORDER = ("dscnt", "loadcnt", "kmcnt", "tensorcnt", "asynccnt")


@lru_cache(maxsize=16384)
def semantics(mnemonic: str, g: Generation, variant: int = 0) -> InstrSem:
    """Upstream's classification as InstrSem (`g` is the upstream generation)."""
    mn = mnemonic
    if mn.startswith("ds_"):
        if mn.startswith(("ds_load", "ds_read")):
            return InstrSem(mn, "ds", (CK_DS,), (), True, "ds", LDS_READ, ENG_DS)
        if mn.startswith(("ds_store", "ds_write")) or mn == "ds_bpermute_b32":
            return InstrSem(mn, "ds", (CK_DS,), (), False, "ds", LDS_WRITE, ENG_DS)
        if mn == "ds_nop":
            return InstrSem(mn, "ds")
        return InstrSem(mn, "ds", (CK_DS,), (), True, "ds", LDS_RW, ENG_DS)
    if mn.startswith(_ASYNC):
        lds = LDS_READ if mn.startswith("global_store_async") else LDS_WRITE
        return InstrSem(mn, "async", (CK_ASYNC,), (), False, None, lds, ENG_ASYNC)
    if mn.startswith(_LOADS):
        return InstrSem(mn, mn.split("_", 1)[0], (CK_LOAD,), (), True)
    if mn.startswith(_ATOMICS):
        if variant & V_RETURNING:
            return InstrSem(mn, mn.split("_", 1)[0], (CK_LOAD,), (), True)
        return InstrSem(mn, mn.split("_", 1)[0])
    if mn.startswith(("s_load_", "s_buffer_load_")):
        return InstrSem(mn, "smem", (CK_KM,), (), True)
    if mn.startswith("tensor_load_to_lds"):
        return InstrSem(mn, "tensor", (CK_TENSOR,), (), False, None, LDS_WRITE, ENG_TENSOR)
    if mn in WAIT_MNEMONICS:
        return InstrSem(mn, "wait", wait=True)
    if mn.startswith("s_barrier"):
        kind = {"s_barrier": BAR_FULL, "s_barrier_signal": BAR_SIGNAL, "s_barrier_signal_isfirst": BAR_SIGNAL,
                "s_barrier_wait": BAR_WAIT}.get(mn, BAR_OTHER)
        return InstrSem(mn, "barrier", barrier=kind)
    if mn == "s_branch":
        return InstrSem(mn, "branch", control=CTL_BRANCH)
    if mn.startswith("s_cbranch_"):
        return InstrSem(mn, "branch", control=CTL_CBRANCH)
    if mn == "s_setpc_b64":
        return InstrSem(mn, "branch", control=CTL_RETURN)
    if mn.startswith("s_endpgm"):
        return InstrSem(mn, "branch", control=CTL_ENDPGM)
    return InstrSem(mn, "valu" if mn.startswith("v_") else "salu" if mn.startswith("s_") else "other")


class UpstreamSpelling(Spelling):
    """Upstream's wait instructions: one per counter, in CounterKind order; crediting as
    upstream's `waitReconstruction` reads them (literal first, then `mod.swaitcnt` etc.)."""

    mnemonics = WAIT_MNEMONICS

    def encode(self, values: dict[str, int]) -> list[str]:
        return [f"s_wait_{c} {values[c]}" for c in COUNTER_ORDER if c in values]

    def decode(self, inst: Instruction) -> dict[str, int]:
        mn = inst.mnemonic
        lit = next((op.value for op in inst.srcs if isinstance(op, Imm)), None)
        sw = inst.mods.get("swaitcnt")

        def field_val(*names: str) -> int:
            vals = []
            for src in (sw, inst.mods.get("swaittensorcnt"), inst.mods.get("swaitasynccnt")):
                if src is None:
                    continue
                for nm in names:
                    v = src.fields.get(nm)
                    if isinstance(v, int) and v >= 0:
                        vals.append(v)
            return min(vals) if vals else -1

        def one(counter: str, *names: str) -> dict[str, int]:
            v = lit if lit is not None else field_val(*names)
            return {counter: v} if v is not None and v >= 0 else {}

        if mn == "s_wait_dscnt":
            return one("dscnt", "dlcnt", "dscnt")
        if mn == "s_wait_loadcnt":
            return one("loadcnt", "vlcnt")
        if mn == "s_wait_kmcnt":
            return one("kmcnt", "kmcnt")
        if mn == "s_wait_tensorcnt":
            return one("tensorcnt", "tlcnt")
        if mn == "s_wait_asynccnt":
            return one("asynccnt", "asynccnt")
        if mn == "s_wait_loadcnt_dscnt" and lit is not None:
            return {"dscnt": lit & 0x3F, "loadcnt": (lit >> 8) & 0x3F}
        if mn == "s_wait_storecnt_dscnt" and lit is not None:
            return {"dscnt": lit & 0x3F}
        if mn == "s_waitcnt" and sw is not None and lit is None:
            out = {}
            for counter, nm in (("dscnt", "dlcnt"), ("loadcnt", "vlcnt"), ("kmcnt", "kmcnt")):
                v = sw.fields.get(nm)
                if isinstance(v, int) and v >= 0:
                    out[counter] = v
            return out
        return {}


def generation() -> Generation:
    counters = (Counter("dscnt", 63, 63), Counter("loadcnt", 63, 63), Counter("kmcnt", 31, 0),
                Counter("tensorcnt", 63, 63), Counter("asynccnt", 63, 63))
    timelines = {CK_DS: "dscnt", CK_LOAD: "loadcnt", CK_KM: "kmcnt", CK_TENSOR: "tensorcnt", CK_ASYNC: "asynccnt"}
    features = Features(split_barriers=True, has_tensor=True, has_async=True, has_exports=False)
    return Generation("gfx1250", counters, timelines, frozenset({CK_KM}), features, UpstreamSpelling(),
                      gfx1250_latency())
