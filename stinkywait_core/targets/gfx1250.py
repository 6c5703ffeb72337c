"""gfx1250: gfx12's split counters without sample/bvh/exp, plus xcnt, tensorcnt and asynccnt.

Facts (targets.md, AMDGPUUsage "Memory Model GFX125x", LLVM 22 and newer SIInsertWaitcnts):
* xcnt counts memory operations from issue until their address translation is done: VMEM
  translations complete in order, SMEM ones do not, and the hardware never has both pending
  (it drains one kind before issuing the other), so xcnt is two timelines here.  Waiting for a
  memory counter implies waiting for the translation of what it retires.
* An op's *source* registers (address, store data, SMEM base) may be overwritten only once its
  translation is done: the WAR hazard `s_wait_xcnt` exists for.
* tensorcnt (tensor data mover) and asynccnt (async LDS copies) are not modelled by LLVM 22;
  their widths are not documented, we use upstream stinkytofu's 63.
* ``s_wait_xcnt 0`` before FLAT/global atomics (atomicity across an xnack replay).
"""

from __future__ import annotations

from .generation import Features, Generation
from .latency import WMMA_PASSES_GFX1250, LatencyModel, issue_costs, latencies
from .model import CK_ASYNC, CK_DS, CK_KM, CK_LOAD, CK_STORE, CK_TENSOR, CK_XS, CK_XV, Counter
from .spelling import SplitSpelling

CPUS = ("gfx1250", "gfx1251")


def generation(cpu: str, xnack: bool = False) -> Generation:
    """`xnack`: the code runs with XNACK replay on (target id feature `xnack+`)."""
    counters = (Counter("dscnt", 63, 62), Counter("loadcnt", 63, 62), Counter("kmcnt", 31, 0),
                Counter("tensorcnt", 63, 62), Counter("asynccnt", 63, 62), Counter("storecnt", 63, 62),
                Counter("xcnt", 63, 62))
    timelines = {CK_DS: "dscnt", CK_LOAD: "loadcnt", CK_KM: "kmcnt", CK_TENSOR: "tensorcnt",
                 CK_ASYNC: "asynccnt", CK_STORE: "storecnt", CK_XV: "xcnt", CK_XS: "xcnt"}
    features = Features(split_barriers=True, has_xcnt=True, has_tensor=True, has_async=True,
                        has_exports=False, atomic_xcnt_drain=True, xnack_replay=xnack)
    return Generation("gfx1250", counters, timelines, frozenset({CK_KM, CK_XS}), features,
                      SplitSpelling(tuple(c.name for c in counters), legacy=False), latency_model())


def latency_model() -> LatencyModel:
    """gfx1250 (CDNA5) costs (docs/latency-model.md).  Upstream stinkytofu's HWModel for gfx1250:
    LDS read queue depth 16, read throttle latency 72 (we take it as the LDS latency),
    barrier signal-to-wait 11, taken-branch overhead 6.  LLVM 22's GFX1250SpeedModel: WMMA
    WriteXDL2PassWMMA 8 cycles (f16/bf16/fp8), WriteXDL4PassWMMA 16 (iu8, scaled f8),
    WriteVMEM 320, WriteSMEM 20, WriteExport 16.  Tensor and async fills: a VMEM access plus the
    LDS write.  xcnt (address translation): no public figure; 24 cycles is our estimate."""
    return LatencyModel("gfx1250", issue_costs(1, valu64=2, trans=4, branch_taken=6),
                        latencies(lds=72, smem=20, vmem=320), WMMA_PASSES_GFX1250, matrix_pass_cycles=4,
                        lds_queue_depth=16, loop_trips=4, barrier_cycles=11)
