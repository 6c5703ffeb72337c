"""gfx12 (RDNA 4: gfx1200, gfx1201): one counter per kind, ``s_wait_<counter> N``.

Facts (targets.md, AMDGPUUsage "Memory Model GFX12", LLVM 22): loadcnt, storecnt, samplecnt
(6 bits), bvhcnt (3 bits), expcnt (3 bits), dscnt (6 bits), kmcnt (5 bits; SMEM out of order);
each kind completes in order within itself; results of VMEM ops may return to VGPRs out of
order (no in-order VGPR write); split barriers; the legacy ``s_waitcnt`` still assembles.
"""

from __future__ import annotations

from .generation import Features, Generation
from .latency import LatencyModel, rdna_model
from .model import CK_BVH, CK_DS, CK_EXP, CK_KM, CK_LOAD, CK_SAMPLE, CK_STORE, Counter
from .spelling import SplitSpelling

CPUS = ("gfx1200", "gfx1201")


def generation(cpu: str) -> Generation:
    counters = (Counter("dscnt", 63, 62), Counter("loadcnt", 63, 62), Counter("kmcnt", 31, 0),
                Counter("storecnt", 63, 62), Counter("samplecnt", 63, 62), Counter("bvhcnt", 7, 6),
                Counter("expcnt", 7, 6))
    timelines = {CK_DS: "dscnt", CK_LOAD: "loadcnt", CK_KM: "kmcnt", CK_STORE: "storecnt",
                 CK_SAMPLE: "samplecnt", CK_BVH: "bvhcnt", CK_EXP: "expcnt"}
    features = Features(split_image_counters=True, split_barriers=True)
    return Generation("gfx12", counters, timelines, frozenset({CK_KM}), features,
                      SplitSpelling(tuple(c.name for c in counters), legacy=True), latency_model())


def latency_model() -> LatencyModel:
    """gfx12 costs: LLVM 22's GFX12SpeedModel (docs/latency-model.md)."""
    return rdna_model("gfx12")
