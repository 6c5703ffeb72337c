"""gfx11 (RDNA 3: gfx1100 .. gfx1153): the gfx10 counters with another ``s_waitcnt`` layout.

Facts (targets.md, LLVM 22): expcnt bits [2:0], lgkmcnt [9:4], vmcnt [15:10]; vscnt as on
gfx10 (its register operand must be `null`); no LDS DMA; `s_sendmsg_rtn_*` returns through
lgkmcnt; LDS direct/parameter loads count on expcnt.
"""

from __future__ import annotations

from .generation import Features, Generation
from .latency import LatencyModel, rdna_model
from .model import CK_DS, CK_EXP, CK_GDS, CK_KM, CK_LOAD, CK_STORE, Counter
from .spelling import LegacySpelling

CPUS = ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153")


def generation(cpu: str) -> Generation:
    counters = (Counter("vmcnt", 63, 62), Counter("expcnt", 7, 6), Counter("lgkmcnt", 63, 62),
                Counter("vscnt", 63, 62))
    timelines = {CK_LOAD: "vmcnt", CK_STORE: "vscnt", CK_DS: "lgkmcnt", CK_KM: "lgkmcnt", CK_GDS: "lgkmcnt",
                 CK_EXP: "expcnt"}
    features = Features(has_vscnt=True, vmem_write_vgpr_in_order=True, has_gds=True)
    return Generation("gfx11", counters, timelines, frozenset({CK_KM, CK_GDS}), features,
                      LegacySpelling("gfx11", vscnt=True), latency_model())


def latency_model() -> LatencyModel:
    """gfx11 costs: LLVM 22's GFX11SpeedModel (docs/latency-model.md)."""
    return rdna_model("gfx11")
