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
from .latency import MFMA_PASSES_GFX90A, MFMA_PASSES_GFX940, LatencyModel, issue_costs, latencies
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
                      LegacySpelling("gfx9", vscnt=False), latency_model(cpu))


def latency_model(cpu: str) -> LatencyModel:
    """gfx9 costs (docs/latency-model.md).  A wave64 wave issues at most one instruction every 4
    cycles (LLVM's gfx9 models count in those 4-cycle units: "1 / (operations / cycle) / 4");
    WriteVMEM 80 units = 320 cycles, WriteSMEM 5 = 20, WriteExport 4 = 16, WriteBranch 8 = 32.
    LDS: LLVM's WriteLDS says "between 2 and 64"; we take 64 cycles (a wave64 DS op takes two
    passes through the 32 banks, plus the return).  MFMA passes by mnemonic from
    SIDPGFX942/950FullSpeedModel (gfx940+) or SIQuarterSpeed/SIDPFullSpeedModel (gfx908/90a),
    4 cycles a pass."""
    passes = MFMA_PASSES_GFX940 if cpu.startswith(("gfx94", "gfx95")) else MFMA_PASSES_GFX90A
    return LatencyModel("gfx9", issue_costs(4, valu64=8, trans=16, branch_taken=32),
                        latencies(lds=64, smem=20, vmem=320), passes, matrix_pass_cycles=4,
                        lds_queue_depth=0, loop_trips=4, barrier_cycles=16)
