"""What one hardware generation looks like to the wait planner (LLVM's `WaitcntGenerator`).

A `Generation` is plain data: its hardware counters, which timeline is counted on which
counter, which timelines complete out of order, and the feature flags the instruction table
(`targets/table.py`) and the pass consult.  Each target family's module (`gfx9.py` ..
`gfx1250.py`) builds one, together with its wait spelling (`Spelling`).
"""

from __future__ import annotations

from .model import CK_COUNT, Counter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .latency import LatencyModel
    from .spelling import Spelling


class Features:
    """Feature flags of a generation (names follow LLVM's subtarget features where there is one).

    `stores_on_vmcnt`: stores and non-returning atomics are counted in order with loads on
    vmcnt (gfx9).  `split_image_counters`: samples and BVH have their own counters (gfx12).
    `flat_in_order`: FLAT is counted in order with VMEM and LDS (LLVM
    `hasFlatLgkmVMemCountInOrder`, gfx10+); otherwise a FLAT op is out of order on both.
    `vmem_write_vgpr_in_order`: two VMEM loads of one type write a VGPR in issue order (gfx9-11;
    not gfx12+: AMDGPUUsage "Memory Model GFX12/GFX125x").  `has_xcnt`: VMEM/SMEM address
    translation is counted (gfx1250).  `has_tensor`, `has_async`: TDM and async LDS copies
    (gfx1250).  `lds_dma`: which LDS DMA forms exist ("buffer" = `buffer_load_* ... lds`,
    "global" = `global_load_lds_*` / `scratch_load_lds_*`).  `has_exports`: exports and
    LDS-direct loads exist (expcnt).  `has_gds`: GDS/GWS operations exist.  `back_off_barrier`:
    `s_barrier` needs no drain of outstanding memory (every target but gfx900/906/908).
    `split_barriers`: `s_barrier_signal` / `s_barrier_wait` (gfx12+).  `atomic_xcnt_drain`:
    `s_wait_xcnt 0` before a FLAT/global atomic (AMDGPUUsage GFX125x: atomicity during an xnack
    replay).  `xnack_replay`: the code runs with XNACK on (target id `:xnack+`, gfx1250), so a
    VMEM op may be replayed: its translation completes before an `s_set_vgpr_msb` that is not
    followed by VMEM and before a forever `s_sleep` (stinkytofu's Gfx1250HazardPass;
    docs/decisions.md 43).
    """

    __slots__ = ("stores_on_vmcnt", "split_image_counters", "flat_in_order", "vmem_write_vgpr_in_order",
                 "has_xcnt", "has_tensor", "has_async", "lds_dma", "has_exports", "has_gds",
                 "back_off_barrier", "split_barriers", "atomic_xcnt_drain", "has_vscnt", "xnack_replay")

    def __init__(self, *, stores_on_vmcnt: bool = False, split_image_counters: bool = False,
                 flat_in_order: bool = True, vmem_write_vgpr_in_order: bool = False, has_xcnt: bool = False,
                 has_tensor: bool = False, has_async: bool = False, lds_dma: tuple[str, ...] = (),
                 has_exports: bool = True, has_gds: bool = False, back_off_barrier: bool = True,
                 split_barriers: bool = False, atomic_xcnt_drain: bool = False, has_vscnt: bool = False,
                 xnack_replay: bool = False) -> None:
        self.stores_on_vmcnt = stores_on_vmcnt
        self.split_image_counters = split_image_counters
        self.flat_in_order = flat_in_order
        self.vmem_write_vgpr_in_order = vmem_write_vgpr_in_order
        self.has_xcnt = has_xcnt
        self.has_tensor = has_tensor
        self.has_async = has_async
        self.lds_dma = lds_dma
        self.has_exports = has_exports
        self.has_gds = has_gds
        self.back_off_barrier = back_off_barrier
        self.split_barriers = split_barriers
        self.atomic_xcnt_drain = atomic_xcnt_drain
        self.has_vscnt = has_vscnt
        self.xnack_replay = xnack_replay

    def replace(self, **changes: object) -> "Features":
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return Features(**values)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


class Generation:
    """Counters, timeline mapping and features of one target family.

    `timeline_counter[ck]`: the counter name a timeline is counted on; a timeline absent from
    it does not exist on this generation.  `out_of_order`: timelines whose ops may complete in
    any order (only a wait of 0 retires them).  `latency`: the family's `LatencyModel`.
    """

    __slots__ = ("name", "counters", "timeline_counter", "out_of_order", "features", "spelling",
                 "counter_index", "timelines", "latency")

    def __init__(self, name: str, counters: tuple[Counter, ...], timeline_counter: dict[int, str],
                 out_of_order: frozenset[int], features: Features, spelling: "Spelling",
                 latency: "LatencyModel | None" = None) -> None:
        self.name = name
        #: the family's latency model (targets/latency.py; None: a model without costs)
        self.latency = latency
        self.counters = counters
        self.timeline_counter = timeline_counter
        self.out_of_order = out_of_order
        self.features = features
        self.spelling = spelling
        self.counter_index = {c.name: i for i, c in enumerate(counters)}
        self.timelines = tuple(ck for ck in range(CK_COUNT) if ck in timeline_counter)
        for ck, cname in timeline_counter.items():
            if cname not in self.counter_index:
                raise ValueError(f"{name}: timeline {ck} counted on unknown counter {cname}")
