"""computeRequiredWaits: the wait an instruction needs, from the FIFOs before it.

The hardware model's rules are in hazards.py; this module dispatches to them and adds what
both models share (LDS-ring and loop-carried annotations, the opt-in tensor-descriptor WAR,
widening's forced drains), and holds upstream's model (upstream-algorithm.md s.7) whole.
"""

from __future__ import annotations

from ..ir import Instruction, Reg
from ..targets.model import CK_ASYNC, CK_COUNT, CK_DS, CK_TENSOR
from .contribution import Contribution
from .facts import InstInfo
from .hazards import hw_required
from .state import DataflowState, PerPredQueue, any_in_flight, count_from, new_spec

RING_READ, RING_WRITE, RING_PUBLISH, RING_PROTECT = 0, 1, 2, 3


class RequiredWaits:
    """computeRequiredWaits under either model (see the module doc)."""

    @staticmethod
    def contribution(rule: str, w: int, op=None, pred=None, n: int = 0, trips: int = 0) -> Contribution:
        return Contribution(rule, w, op, pred, n, trips)

    def raw_needs_wait(self, c: int, inf: InstInfo) -> bool:
        return inf.tensor_raw if c == CK_TENSOR else True

    def compute_required_waits(self, inst: Instruction, state: DataflowState,
                               record: bool = False) -> tuple[list[int], list[list[Contribution]] | None]:
        inf = self.info[inst]
        queues = state.queues
        if self.hw:
            if not inf.needs_check and inst not in self.forced_at and not record:
                return new_spec(), None
            req, why = hw_required(self, inst, inf, queues, record)
            if inf.clause:
                for m in inf.clause:
                    mr, mw = hw_required(self, m, self.info[m], queues, record)
                    for c in self.cks:
                        if mr[c] != -1 and (req[c] == -1 or mr[c] < req[c]):
                            req[c] = mr[c]
                        if why is not None and mw is not None:
                            why[c].extend(mw[c])
            if inf.ring or inf.lc_war is not None or inf.lc_raw is not None:
                self._annotated_rules(inst, inf, queues, req, why)
            if self.options.enable_tensor_descriptor_war and not inf.is_wait and inst.dsts:
                self._descriptor_war(inst, queues[CK_TENSOR], self._tightener(req, why))
            forced = self.forced_at.get(inst)
            if forced:
                for c in forced:
                    if any_in_flight(queues[c]):
                        self._force_zero(req, why, c, "widening")
            return req, why
        return self._upstream_required(inst, inf, queues, record)

    def _tightener(self, req: list[int], why):
        def tighten(c: int, w: int, rule: str, op=None, pred=None, n=0, trips=0) -> None:
            if w < 0:
                return
            if req[c] == -1 or w < req[c]:
                req[c] = w
            if why is not None:
                why[c].append(Contribution(rule, w, op, pred, n, trips))
        return tighten

    def _annotated_rules(self, inst: Instruction, inf: InstInfo, queues, req, why) -> None:
        """Branches B1/B2 (LDS-ring and loop-carried annotations) under the hardware model."""
        tighten = self._tightener(req, why)
        if inf.ring:
            self._ring_scans(inst, inf, queues, tighten)
        self._loop_carried(inst, inf, queues, tighten)

    def _loop_carried(self, inst: Instruction, inf: InstInfo, queues, tighten) -> None:
        """Branch B1: loop-carried WAR (DS readers of earlier trips) and RAW (tensor fills)."""
        if inf.lc_war is not None:
            wtoks, dist = inf.lc_war
            self._scan_ds_anti(inst, wtoks, queues[CK_DS], False, tighten, max(1, dist), "loop-carried-war")
        if inf.lc_raw is not None:
            rtoks, dist = inf.lc_raw
            need = max(1, dist)
            for q in queues[CK_TENSOR]:
                n = len(q.ops)
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is inst or e.trips < need:
                        continue
                    et = self.info[e.op].tokens
                    if et is None or _overlaps(et, rtoks):
                        tighten(CK_TENSOR, self.drain(CK_TENSOR, n - idx), "loop-carried-raw", e.op, q.pred,
                                n - idx, e.trips)
                        break

    def _upstream_required(self, inst: Instruction, inf: InstInfo, queues: list, record: bool):
        """computeRequiredWaits under upstream's model (upstream-algorithm.md s.7)."""
        req = new_spec()
        newest = self.newest
        drain = self.drain
        if not record and not (inf.tensor_anchor or inf.lds_writer or inf.fence or inf.ring
                               or inf.lc_war is not None or inf.lc_raw is not None
                               or self.options.enable_tensor_descriptor_war or inst in self.forced_at):
            # register RAW only (most consumers), no provenance asked: rule 1 alone, inline
            for src, c in inf.mem_srcs:
                if c == CK_TENSOR and not inf.tensor_raw:
                    continue
                for q in queues[c]:
                    n = count_from(q, src, newest)
                    if n > 0:
                        w = drain(c, n)
                        if w >= 0 and (req[c] == -1 or w < req[c]):
                            req[c] = w
            return req, None
        why: list[list[Contribution]] | None = [[] for _ in range(CK_COUNT)] if record else None
        tighten = self._tightener(req, why)
        if not inf.needs_check and inst not in self.forced_at:
            return req, why
        # 1. RAW from SSA sources, PHIs flattened once (phiCurrentQueueWait folds every
        #    concrete input against the live queues, as for a direct source); ring-annotated
        #    anchors rely on the ring scans for tensors
        for src, c in inf.mem_srcs:
            if not self.raw_needs_wait(c, inf) or (c == CK_TENSOR and inf.ring):
                continue
            for q in queues[c]:
                n = count_from(q, src, newest)
                if n > 0:
                    tighten(c, drain(c, n), "raw", src, q.pred, n, self.trips_of(q, src))
        # 2. tensor-descriptor WAR (opt-in)
        if self.options.enable_tensor_descriptor_war and not inf.is_wait and inst.dsts:
            self._descriptor_war(inst, queues[CK_TENSOR], tighten)
        # B2 ring scans (before the DS anti-dep scan; not gated by rawNeedsWait)
        if inf.ring:
            self._ring_scans(inst, inf, queues, tighten)
        # 3. DS anti-dependencies
        toks = inf.tokens
        if toks:
            if inf.lds_writer:
                self._scan_ds_anti(inst, toks, queues[CK_DS], False, tighten, 0)
            if inf.fence:
                self._scan_ds_anti(inst, toks, queues[CK_DS], True, tighten, 0)
        # B1 loop-carried hazards
        self._loop_carried(inst, inf, queues, tighten)
        # 4. untagged tensor producers at tagged tensor anchors
        if inf.tensor_anchor and toks:
            for q in queues[CK_TENSOR]:
                n = len(q.ops)
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is not inst and self.info[e.op].tokens is None:
                        tighten(CK_TENSOR, drain(CK_TENSOR, n - idx), "untagged-tensor", e.op, q.pred, n - idx,
                                e.trips)
                        break
        # 5. async anti-dependencies
        if (inf.lds_writer or inf.fence) and toks:
            for q in queues[CK_ASYNC]:
                n = len(q.ops)
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is inst:
                        continue
                    et = self.info[e.op].tokens
                    if et is None or _overlaps(et, toks):
                        tighten(CK_ASYNC, drain(CK_ASYNC, n - idx), "async-war", e.op, q.pred, n - idx, e.trips)
                        break
        # widening: forced entry drains (bounded mode only)
        forced = self.forced_at.get(inst)
        if forced:
            for c in forced:
                if any_in_flight(queues[c]):
                    self._force_zero(req, why, c, "widening")
        # 6. conservative fallbacks
        if inf.tensor_anchor and toks is None and any_in_flight(queues[CK_TENSOR]):
            self._force_zero(req, why, CK_TENSOR, "fallback-untagged-tensor-anchor")
        if (inf.lds_writer or inf.fence) and toks is None and any_in_flight(queues[CK_ASYNC]):
            self._force_zero(req, why, CK_ASYNC, "fallback-untagged-lds-writer")
        if inf.lds_writer and toks is None and any_in_flight(queues[CK_DS]) and not _is_ds(inf):
            self._force_zero(req, why, CK_DS, "fallback-untagged-lds-writer")
        if inf.fence and any_in_flight(queues[CK_DS]):
            if toks is None or any(self.info[e.op].tokens is None for q in queues[CK_DS] for e in q.ops):
                self._force_zero(req, why, CK_DS, "fallback-barrier")
        return req, why

    @staticmethod
    def _force_zero(req: list[int], why, c: int, rule: str) -> None:
        req[c] = 0
        if why is not None:
            why[c].append(Contribution(rule, 0))

    def _scan_ds_anti(self, inst: Instruction, toks, queues: list[PerPredQueue], barrier_mode: bool,
                      tighten, min_trips: int, rule: str | None = None) -> None:
        inst_is_ds = self.info[inst].counter == CK_DS
        rule = rule or ("barrier" if barrier_mode else "lds-war")
        for q in queues:
            n = len(q.ops)
            for idx in range(n - 1, -1, -1):
                e = q.ops[idx]
                if e.op is inst or e.trips < min_trips:
                    continue
                oi = self.info[e.op]
                if not barrier_mode and not oi.ds_read_or_atomic:
                    continue
                if inst_is_ds:  # same pipeline: ordered by the DS FIFO
                    continue
                if oi.tokens is None or _overlaps(oi.tokens, toks):
                    tighten(CK_DS, self.drain(CK_DS, n - idx), rule, e.op, q.pred, n - idx, e.trips)
                    break

    def _descriptor_war(self, inst: Instruction, queues: list[PerPredQueue], tighten) -> None:
        dregs = [r for r in inst.dsts if isinstance(r, Reg)]
        for q in queues:
            n = len(q.ops)
            for idx in range(n - 1, -1, -1):
                op = q.ops[idx].op
                if op is inst or not op.mnemonic.startswith("tensor_load_to_lds"):
                    continue
                if any(d.overlaps(s) for d in dregs for s in op.srcs if isinstance(s, Reg)):
                    tighten(CK_TENSOR, min(n - idx - 1, self.max_wait[CK_TENSOR]), "descriptor-war", op, q.pred,
                            n - idx)
                    break

    def _ring_scans(self, inst: Instruction, inf: InstInfo, queues, tighten) -> None:
        """Branch B2: rotating LDS-ring alias scans (anchor kind vs producer kind)."""
        pairs = ((CK_TENSOR, RING_PUBLISH, RING_WRITE), (CK_DS, RING_PROTECT, RING_READ),
                 (CK_TENSOR, RING_READ, RING_WRITE), (CK_DS, RING_WRITE, RING_READ))
        for c, akind, pkind in pairs:
            anchors = [a for a in inf.ring if a[4] == akind]
            if not anchors:
                continue
            for q in queues[c]:
                if q.ring_sat:
                    tighten(c, 0, "ring-saturated", None, q.pred)
                    continue
                n = len(q.ops)
                hit = False
                for idx in range(n - 1, -1, -1):
                    e = q.ops[idx]
                    if e.op is inst:
                        continue
                    pring = self.info[e.op].ring
                    for ai, pa in enumerate(pring):
                        if pa[4] != pkind:
                            continue
                        delta = e.deltas[ai] if ai < len(e.deltas) else 0
                        for ca in anchors:
                            if (pa[0] == ca[0] and pa[1] == ca[1] and pa[2] == ca[2] and pa[2] > 0
                                    and (delta + pa[3]) % pa[2] == ca[3] % pa[2]):
                                tighten(c, self.drain(c, n - idx), "lds-ring", e.op, q.pred, n - idx, e.trips)
                                hit = True
                                break
                        if hit:
                            break
                    if hit:
                        break


def _overlaps(a, b) -> bool:
    for t in a:
        if t in b:
            return True
    return False


def _is_ds(inf: InstInfo) -> bool:
    return inf.counter == CK_DS
