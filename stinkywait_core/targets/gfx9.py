"""gfx9 (GCN 5 / CDNA: gfx900 .. gfx950): vmcnt, expcnt, lgkmcnt in one ``s_waitcnt``.

Facts (../shared/research/targets.md, LLVM 22 `SIInsertWaitcnts` / `AMDGPUBaseInfo`):
* vmcnt (6 bits) counts every VMEM op in issue order: loads, stores, atomics, LDS DMA; there is
  no vscnt, so a load's count includes the stores issued after it.
* lgkmcnt (4 bits, max 15) counts LDS (in order), SMEM and messages (out of order), GDS/GWS and
  the LDS half of FLAT ops.
* A generic FLAT op may report out of VMEM order when it touches LDS and out of LDS order when
  it touches global memory: it is its own out-of-order timeline on both counters.
* Two VMEM loads of one type write a VGPR in issue order (`FeatureVmemWriteVgprInOrder`).
* gfx90a, gfx940+ have back-off barriers; gfx900/906/908 need memory drained before
  `s_barrier` (no `FeatureBackOffBarrier`).
"""

from __future__ import annotations

from .generation import Features, Generation
from .model import CK_DS, CK_EXP, CK_FLATL, CK_FLATV, CK_GDS, CK_KM, CK_LOAD, Counter
from .spelling import LegacySpelling

CPUS = ("gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx940", "gfx941",
        "gfx942", "gfx950")
_NO_BACK_OFF = frozenset({"gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90c"})
_GLOBAL_DMA = frozenset({"gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c",
                         "gfx940", "gfx941", "gfx942", "gfx950"})
_COMPUTE_ONLY = frozenset({"gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"})


def generation(cpu: str) -> Generation:
    counters = (Counter("vmcnt", 63, 62), Counter("expcnt", 7, 6), Counter("lgkmcnt", 15, 14))
    timelines = {CK_LOAD: "vmcnt", CK_FLATV: "vmcnt", CK_DS: "lgkmcnt", CK_KM: "lgkmcnt",
                 CK_FLATL: "lgkmcnt", CK_GDS: "lgkmcnt", CK_EXP: "expcnt"}
    features = Features(stores_on_vmcnt=True, flat_in_order=False, vmem_write_vgpr_in_order=True,
                        lds_dma=("buffer", "global") if cpu in _GLOBAL_DMA else ("buffer",),
                        has_exports=cpu not in _COMPUTE_ONLY, has_gds=True,
                        back_off_barrier=cpu not in _NO_BACK_OFF)
    return Generation("gfx9", counters, timelines, frozenset({CK_KM, CK_FLATV, CK_FLATL, CK_GDS}), features,
                      LegacySpelling("gfx9", vscnt=False))
