"""The instruction table: what every AMDGPU mnemonic does, per generation.

One function, `semantics(mnemonic, generation, variant)`, derives an `InstrSem` from the
mnemonic's encoding family (DS, MUBUF/MTBUF, GLOBAL/SCRATCH/FLAT, MIMG, SMEM, TDM, SOPP...) and
the generation's features, the way LLVM's `getEventsFor` derives wait events from an opcode's
flags.  The families are recognised by the ISA's own mnemonic spelling, which is stable across
generations (the test `tests/test_target_inventory.py` holds the table against every mnemonic
llvm-mc-22 accepts on each target).

Two principles decide the unclear cases:
* An op is pushed on a timeline only if it really increments that counter *and* something may
  have to wait for it (a result, an LDS access).  Pushing an op that does not count would make
  the planner believe more younger ops are in flight than there are, and emit a wait that is
  too weak; not pushing an op that does count only makes waits for older ops stronger.  So
  prefetches, cache invalidates/write-backs and messages without a result are not pushed.
* Where the hardware's ordering is not documented, the table takes the stronger assumption
  (no in-order guarantee), and says so in `note`.
"""

from __future__ import annotations

from functools import lru_cache

from .generation import Generation
from .model import (BAR_FULL, BAR_NONE, BAR_OTHER, BAR_SIGNAL, BAR_WAIT, CK_ASYNC, CK_BVH, CK_DS, CK_EXP,
                    CK_FLATL, CK_FLATV, CK_GDS, CK_KM, CK_LOAD, CK_SAMPLE, CK_STORE, CK_TENSOR, CK_XS,
                    CK_XV, CTL_BRANCH, CTL_CALL, CTL_CBRANCH, CTL_ENDPGM, CTL_JUMP, CTL_RETURN, CTL_TRAP,
                    ENG_ASYNC, ENG_DMA, ENG_DS, ENG_FLAT, ENG_TENSOR, LDS_NONE, LDS_READ, LDS_RW, LDS_WRITE,
                    InstrSem)

#: variant bits: facts that come from the operands, not the mnemonic
V_RETURNING = 1  # an atomic that returns the pre-op value (glc / sc0 / th:TH_ATOMIC_RETURN / _rtn)
V_LDS = 2        # the `lds` modifier of a MUBUF load (LDS DMA, gfx9/gfx10)
V_GDS = 4        # the `gds` modifier of a DS op (GDS instead of LDS)
V_FOREVER = 8    # `s_sleep` with bit 15 of its operand set: sleeps until woken

_VMEM_PREFIXES = ("buffer_", "tbuffer_", "global_", "scratch_", "flat_", "image_", "cluster_")

WAIT_MNEMONICS = frozenset({
    "s_waitcnt", "s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt",
    "s_wait_loadcnt", "s_wait_storecnt", "s_wait_dscnt", "s_wait_kmcnt", "s_wait_samplecnt",
    "s_wait_bvhcnt", "s_wait_expcnt", "s_wait_xcnt", "s_wait_tensorcnt", "s_wait_asynccnt",
    "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt",
})

#: waits the pass plans itself when the model is the whole hardware model (the rest are kept
#: and only credited: storecnt waits belong to release fences, which the pass does not rebuild)
REBUILDABLE_WAITS = frozenset({
    "s_wait_loadcnt", "s_wait_dscnt", "s_wait_kmcnt", "s_wait_samplecnt", "s_wait_bvhcnt",
    "s_wait_expcnt", "s_wait_xcnt", "s_wait_tensorcnt", "s_wait_asynccnt", "s_wait_loadcnt_dscnt",
    "s_waitcnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt",
})


def _vmem_ck(g: Generation, kind: str) -> tuple[int, ...]:
    """The result timeline of a VMEM access of `kind` ("load", "store", "sample", "bvh")."""
    f = g.features
    if kind == "store":
        return (CK_LOAD,) if f.stores_on_vmcnt else (CK_STORE,)
    if kind in ("sample", "bvh") and f.split_image_counters:
        return (CK_SAMPLE,) if kind == "sample" else (CK_BVH,)
    return (CK_LOAD,)


def _vmem_order(g: Generation, kind: str) -> str | None:
    """WAW order class of VMEM results: same-type VMEM writes land in order on gfx9-11."""
    if not g.features.vmem_write_vgpr_in_order:
        return None
    return {"sample": "vmem-sampler", "bvh": "vmem-bvh"}.get(kind, "vmem")


def _xlock(g: Generation) -> tuple[int, ...]:
    """Source-register lock of a VMEM op: its address translation (gfx1250 xcnt)."""
    return (CK_XV,) if g.features.has_xcnt else ()


def _ds(mn: str, g: Generation, variant: int) -> InstrSem:
    f = g.features
    gds = bool(variant & V_GDS) or mn.startswith(("ds_gws_", "ds_ordered_count"))
    if gds:
        if not f.has_gds:
            return InstrSem(mn, "ds", note="GDS/GWS is not available on this target")
        locks = (CK_EXP,) if f.has_exports else ()
        return InstrSem(mn, "gds", (CK_GDS,), locks, True, None, LDS_NONE, "",
                        drain_after=(CK_GDS,) if mn.startswith(("ds_gws_", "ds_ordered_count")) else (),
                        note="GDS/GWS: counted with LDS but out of order with it; GWS and ordered "
                             "count need the counter drained right after (LLVM isAlwaysGDS)")
    if mn in ("ds_direct_load", "ds_param_load"):
        return InstrSem(mn, "lds-direct", (CK_EXP,), (), True, "ldsdir", LDS_READ, ENG_DS,
                        note="LDS direct/parameter load: counted on expcnt")
    if mn.startswith(("ds_atomic_async_barrier_arrive",)):
        return InstrSem(mn, "ds", (CK_ASYNC,) if f.has_async else (), (), False, None, LDS_RW, ENG_ASYNC,
                        barrier=BAR_OTHER, note="arrives at an LDS barrier once the async copies "
                        "issued before it complete (counted on asynccnt)")
    if mn.startswith(("ds_load", "ds_read")):
        return InstrSem(mn, "ds", (CK_DS,), (), True, "ds", LDS_READ, ENG_DS)
    if mn.startswith(("ds_bpermute", "ds_permute", "ds_swizzle")):
        return InstrSem(mn, "ds", (CK_DS,), (), True, "ds", LDS_NONE, ENG_DS,
                        note="cross-lane data movement through the LDS unit: no LDS memory access")
    if mn == "ds_nop":
        return InstrSem(mn, "ds", note="no operation")
    returning = "_rtn" in mn or mn.startswith(("ds_wrxchg", "ds_append", "ds_consume", "ds_bvh_stack",
                                               "ds_condxchg32_rtn", "ds_atomic_barrier_arrive_rtn"))
    if mn.startswith(("ds_store", "ds_write")) and not returning:
        return InstrSem(mn, "ds", (CK_DS,), (), False, "ds", LDS_WRITE, ENG_DS)
    if returning:
        return InstrSem(mn, "ds", (CK_DS,), (), True, "ds", LDS_RW, ENG_DS)
    return InstrSem(mn, "ds", (CK_DS,), (), False, "ds", LDS_RW, ENG_DS)


def _image_kind(mn: str) -> str:
    if mn.startswith("image_bvh"):
        return "bvh"
    if mn.startswith(("image_sample", "image_gather", "image_msaa_load", "image_get_lod")):
        return "sample"
    if mn.startswith(("image_store", "image_atomic")):
        return "store"
    return "load"


def _vmem(mn: str, g: Generation, variant: int) -> InstrSem:
    f = g.features
    family = mn.split("_", 1)[0]
    if family == "tbuffer":
        family = "buffer"
    xl = _xlock(g)
    # cache control: no result, not pushed (see module docstring); gfx9/10 invalidates need the
    # vector memory counter drained first (LLVM generateWaitcntInstBefore)
    if mn in ("buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_wbinvl1_sc", "buffer_gl0_inv",
              "buffer_gl1_inv"):
        return InstrSem(mn, family, drain_before=(CK_LOAD,), mem_model="inv",
                        note="cache invalidate: outstanding vector loads are drained first")
    if mn in ("buffer_inv", "buffer_wbl2", "global_inv", "global_wb", "global_wbinv"):
        return InstrSem(mn, family, mem_model={"buffer_inv": "inv", "global_inv": "inv"}.get(mn, "wb"),
                        note="cache control for the memory model: hand-written fence waits around "
                             "it are kept, not rebuilt")
    if "_prefetch" in mn or mn.startswith("image_prefetch"):
        return InstrSem(mn, family, note="prefetch: no result to wait for")
    # async LDS copies (gfx1250): counted on asynccnt, address translated like VMEM
    if "_async_to_lds" in mn or "_async_from_lds" in mn:
        lds = LDS_WRITE if "_to_lds" in mn else LDS_READ
        return InstrSem(mn, family, (CK_ASYNC,) + xl if f.has_async else xl, xl, False, None, lds,
                        ENG_ASYNC, drain_before=_atomic_drain(mn, g),
                        note="async LDS copy: asynccnt (not modelled by LLVM 22; AMDGPUUsage GFX125x)")
    # LDS DMA (gfx9/gfx10): VMEM load that writes LDS instead of VGPRs
    # (the `lds` modifier exists only where the assembler has LDS DMA: a form it accepted is one)
    flat_dma = mn.startswith(("global_load_lds", "scratch_load_lds")) or (
        variant & V_LDS and family in ("global", "scratch"))
    if flat_dma or (variant & V_LDS and family == "buffer"):
        # The FLAT-encoded forms also increment lgkmcnt, in an order the ISA does not state
        # relative to LDS ops: they are not put on the LDS timeline (counting an op there that
        # may decrement out of order would make waits for older LDS ops too weak; leaving it
        # out only makes them stronger).  Their LDS write is complete once vmcnt retires them
        # (LLVM: determineWaitForLDSDMA on LOAD_CNT).
        return InstrSem(mn, family, (CK_LOAD,) + xl, xl, False, None, LDS_WRITE, ENG_DMA,
                        note="LDS DMA: the LDS it writes is visible once the vector memory counter "
                             "retires it")
    if family == "image":
        kind = _image_kind(mn)
    elif "_atomic" in mn:
        kind = "load" if variant & V_RETURNING else "store"
    elif "_store" in mn:
        kind = "store"
    elif "_load" in mn:
        kind = "load"
    else:
        return InstrSem(mn, family, note="vector memory instruction without a tracked result")
    if mn.startswith("image_atomic"):
        kind = "load" if variant & V_RETURNING else "store"
    if family == "flat":
        if f.flat_in_order:
            pushes = _vmem_ck(g, kind) + (CK_DS,)
        else:
            pushes = (CK_FLATV, CK_FLATL)
        pushes += xl
        # a generic address may reach LDS: FLAT is an LDS access of its own engine, with no
        # region known (docs/decisions.md 34)
        lds = LDS_RW if "_atomic" in mn else LDS_WRITE if kind == "store" else LDS_READ
        return InstrSem(mn, "flat", pushes, xl, kind != "store", None, lds, ENG_FLAT,
                        drain_before=_atomic_drain(mn, g),
                        note="generic address: may reach LDS, so it is counted on both the vector "
                             "memory and the LDS counter")
    order = _vmem_order(g, kind) if kind != "store" else None
    return InstrSem(mn, family, _vmem_ck(g, kind) + xl, xl, kind != "store", order, LDS_NONE, "",
                    drain_before=_atomic_drain(mn, g))


def _atomic_drain(mn: str, g: Generation) -> tuple[int, ...]:
    """AMDGPUUsage GFX125x: ``s_wait_xcnt 0`` before FLAT and global atomics."""
    if g.features.atomic_xcnt_drain and mn.startswith(("global_atomic", "flat_atomic")):
        return (CK_XV, CK_XS)
    return ()


def _smem(mn: str, g: Generation, variant: int) -> InstrSem:
    """Scalar memory.  Every SMEM op is counted on the (out-of-order) scalar timeline, result
    or not: an op there only ever makes a wait 0, so counting one that has no result is
    harmless, and it keeps a hand-written wait for a scalar store, cache write-back or
    prefetch from looking redundant (LLVM counts them too).  On gfx1250 each also holds its
    base registers until its address is translated."""
    xl = (CK_XS,) if g.features.has_xcnt else ()
    mem_model = ""
    if mn.startswith("s_dcache_"):
        mem_model = "inv" if "inv" in mn else "wb"
    if mn.startswith(("s_dcache_", "s_atc_probe", "s_scratch_store", "s_store_", "s_buffer_store")) or \
            (mn.startswith(("s_atomic_", "s_buffer_atomic_")) and not variant & V_RETURNING) or "prefetch" in mn:
        return InstrSem(mn, "smem", (CK_KM,) + xl, xl, False, mem_model=mem_model,
                        note="scalar memory op without a result")
    return InstrSem(mn, "smem", (CK_KM,) + xl, xl, True, None,
                    note="scalar memory completes out of order: only a count of 0 proves it done")


def _scalar(mn: str, g: Generation, variant: int) -> InstrSem:
    f = g.features
    if mn in WAIT_MNEMONICS:
        return InstrSem(mn, "wait", wait=True)
    if f.xnack_replay and mn == "s_set_vgpr_msb":
        return InstrSem(mn, "salu", drain_before=(CK_XV,),
                        note="XNACK replay protection: a VMEM op still being translated may be "
                             "replayed, reading its VGPRs under the new MSB mode; stinkytofu's "
                             "Gfx1250HazardPass")
    if f.xnack_replay and mn == "s_sleep" and variant & V_FOREVER:
        return InstrSem(mn, "salu", drain_before=(CK_XV, CK_XS),
                        note="XNACK replay protection: no translation pending while the wave sleeps "
                             "until woken; stinkytofu's Gfx1250HazardPass")
    if mn.startswith(("s_load_", "s_buffer_load_", "s_scratch_load_", "s_dcache_", "s_atc_probe",
                      "s_scratch_store", "s_store_", "s_buffer_store", "s_atomic_", "s_buffer_atomic_",
                      "s_prefetch_", "s_buffer_prefetch")):
        return _smem(mn, g, variant)
    if mn in ("s_memtime", "s_memrealtime"):
        return InstrSem(mn, "smem", (CK_KM,), (), True, None, note="time read through the scalar cache")
    if mn.startswith("s_sendmsg_rtn"):
        return InstrSem(mn, "message", (CK_KM,), (), True, None, note="message with a return value: kmcnt")
    if mn.startswith(("s_sendmsg", "s_sendmsghalt")):
        return InstrSem(mn, "message", (CK_KM,), note="message without a result: counted (out of order) "
                        "with scalar memory")
    if mn == "s_get_barrier_state":
        return InstrSem(mn, "barrier", (CK_KM,), (), True, None, barrier=BAR_OTHER,
                        note="barrier state read: returned through kmcnt")
    if mn in ("s_barrier_signal_isfirst", "s_barrier_leave"):
        return InstrSem(mn, "barrier", (CK_KM,), (), True, None,
                        barrier=BAR_SIGNAL if mn.endswith("isfirst") else BAR_OTHER,
                        note="writes SCC when the barrier answers (kmcnt)")
    if mn == "s_barrier":
        drain = () if f.back_off_barrier else tuple(g.timeline_counter)
        return InstrSem(mn, "barrier", barrier=BAR_FULL, drain_before=drain,
                        note="" if f.back_off_barrier else "no back-off barrier on this target: "
                        "outstanding memory operations are drained first")
    if mn == "s_barrier_signal":
        return InstrSem(mn, "barrier", barrier=BAR_SIGNAL)
    if mn == "s_barrier_wait":
        return InstrSem(mn, "barrier", barrier=BAR_WAIT)
    if mn.startswith(("s_barrier", "s_wakeup_barrier", "s_cluster_barrier")):
        return InstrSem(mn, "barrier", barrier=BAR_OTHER)
    if mn == "s_branch":
        return InstrSem(mn, "branch", control=CTL_BRANCH)
    if mn.startswith("s_cbranch"):
        return InstrSem(mn, "branch", control=CTL_CBRANCH)
    if mn in ("s_setpc_b64", "s_set_pc_i64"):
        return InstrSem(mn, "branch", control=CTL_RETURN,
                        note="indirect jump: treated as a return (the calling convention's contract)")
    if mn in ("s_swappc_b64", "s_swap_pc_i64", "s_call_b64", "s_call_i64"):
        return InstrSem(mn, "branch", control=CTL_CALL)
    if mn.startswith("s_endpgm"):
        return InstrSem(mn, "branch", control=CTL_ENDPGM)
    if mn.startswith(("s_trap", "s_rfe")):
        return InstrSem(mn, "branch", control=CTL_TRAP)
    if mn in ("s_icache_inv", "s_gl1_inv"):
        return InstrSem(mn, "salu", mem_model="inv", note="cache invalidate without a counter")
    return InstrSem(mn, "salu")


def _other(mn: str, g: Generation, variant: int) -> InstrSem:
    f = g.features
    if mn in ("exp", "export", "exp_compr") or mn.startswith("exp_"):
        if not f.has_exports:
            return InstrSem(mn, "export", note="no exports on this target")
        return InstrSem(mn, "export", (CK_EXP,), (CK_EXP,), False, None,
                        note="export: holds its source VGPRs until expcnt retires it")
    if mn in ("lds_direct_load", "lds_param_load"):
        return InstrSem(mn, "lds-direct", (CK_EXP,), (), True, "ldsdir", LDS_READ, ENG_DS,
                        note="LDS direct/parameter load: counted on expcnt")
    if mn.startswith(("tensor_load_to_lds", "tensor_store_from_lds")):
        if not f.has_tensor:
            return InstrSem(mn, "tensor", note="no tensor data mover on this target")
        lds = LDS_WRITE if mn.startswith("tensor_load") else LDS_READ
        return InstrSem(mn, "tensor", (CK_TENSOR,), (), False, None, lds, ENG_TENSOR,
                        note="tensor data mover: tensorcnt (not modelled by LLVM 22)")
    if mn.startswith("tensor_"):
        return InstrSem(mn, "tensor", note="tensor data mover control: no result to wait for")
    if mn.startswith("v_"):
        return InstrSem(mn, "valu")
    return InstrSem(mn, "other", note="not a memory, counter or control instruction")


@lru_cache(maxsize=32768)
def semantics(mnemonic: str, g: Generation, variant: int = 0) -> InstrSem:
    """The InstrSem of a (lower-case) mnemonic on generation `g` (pure, cached)."""
    mn = mnemonic
    if mn.startswith("ds_"):
        return _ds(mn, g, variant)
    if mn.startswith(_VMEM_PREFIXES):
        return _vmem(mn, g, variant)
    if mn.startswith("s_"):
        return _scalar(mn, g, variant)
    return _other(mn, g, variant)
