"""gfx10 (RDNA 1/2: gfx1010 .. gfx1036): ``s_waitcnt`` plus ``s_waitcnt_vscnt null, N``.

Facts (targets.md, LLVM 22): stores and non-returning atomics move to vscnt; loads, samples
and BVH stay on vmcnt in issue order (MEM_ORDERED); lgkmcnt grows to 6 bits; FLAT is counted
in order with VMEM and LDS (`hasFlatLgkmVMemCountInOrder`); `buffer_load_* ... lds` (LDS DMA)
still exists; same-type VMEM loads write VGPRs in order; back-off barriers.
"""

from __future__ import annotations

from .generation import Features, Generation
from .latency import LatencyModel, rdna_model
from .model import CK_DS, CK_EXP, CK_GDS, CK_KM, CK_LOAD, CK_STORE, Counter
from .spelling import LegacySpelling

CPUS = ("gfx1010", "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034",
        "gfx1035", "gfx1036")


def generation(cpu: str) -> Generation:
    counters = (Counter("vmcnt", 63, 62), Counter("expcnt", 7, 6), Counter("lgkmcnt", 63, 62),
                Counter("vscnt", 63, 62))
    timelines = {CK_LOAD: "vmcnt", CK_STORE: "vscnt", CK_DS: "lgkmcnt", CK_KM: "lgkmcnt", CK_GDS: "lgkmcnt",
                 CK_EXP: "expcnt"}
    features = Features(has_vscnt=True, vmem_write_vgpr_in_order=True, lds_dma=("buffer", "global"), has_gds=True)
    return Generation("gfx10", counters, timelines, frozenset({CK_KM, CK_GDS}), features,
                      LegacySpelling("gfx10", vscnt=True), latency_model())


def latency_model() -> LatencyModel:
    """gfx10 costs: LLVM 22's GFX10SpeedModel (docs/latency-model.md)."""
    return rdna_model("gfx10")
