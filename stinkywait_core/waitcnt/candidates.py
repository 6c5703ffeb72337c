"""WaitDataflow's source links and WAW/WAR hazard candidates (a mixin of the solver).

For every instruction: its SSA sources flattened to (memop, timeline) pairs once (PHIs
resolved here, not at every sweep), and under the hardware model the in-flight writers (WAW)
and source lockers (WAR) of the registers it writes that can reach it.

The candidate sets an instruction keeps are only ever asked about the ops in flight at it
(`_newest`, `in`), and an op in flight at a block is one whose block is that block or reaches
it: the liveness filter changes no answer there.  So each instruction keeps the set shared by
every block (filtered by order class only; its timelines and its emptiness are those of the
live subset), instead of one filtered copy per block: on a 30k-line kernel whose blocks all
reach the later ones, those copies were the largest holder of the analysis (41 of 205 MB
traced; issue 21, BENCHMARKS.md).
"""

from __future__ import annotations

from ..analysis.ssa import flatten_sources
from ..ir import Block, Instruction, Reg
from ..targets.model import CK_XV
from .facts import InstInfo

_NO_CANDIDATES = (frozenset(), (), frozenset(), ())
#: how many instructions after an out-of-order op `_ahead` looks at
AHEAD = 4
#: how many instructions before it an older op must be issued on every path for `_ahead`
#: (gfx9's SMEM latency is 20 cycles, one instruction a cycle at most: docs/latency-model.md)
AHEAD_FAR = 32


class HazardCandidates:
    """Source links and hazard candidates (see the module doc)."""

    def _link_sources(self, inst: Instruction, inf: InstInfo) -> None:
        """Flatten the SSA sources to (memop, timeline) pairs; the WAW/WAR candidates.

        phiCurrentQueueWait recurses through PHI inputs and folds every concrete memop of the
        counter against the live queues, exactly as a direct source is folded, so the PHIs
        are resolved once here instead of at every sweep.  A producer is waited for on every
        timeline its result completes on.
        """
        mem: list[tuple[Instruction, int]] = []
        info = self.info
        for src in flatten_sources(inst):
            si = info.get(src)
            if si is None:
                si = self._fresh_info(src)
            for c in si.results:
                mem.append((src, c))
        mem_srcs = tuple(mem)
        waw: frozenset = frozenset()
        war: frozenset = frozenset()
        waw_cks: tuple = ()
        war_cks: tuple = ()
        if self.hw and inst.dsts and not inst.is_phi:
            waw, waw_cks, war, war_cks = self._hazard_candidates(inst, inf)
        ahead = self._ahead(inst, inf) if self.hw else ()
        if inf.linked:
            if (inf.mem_srcs, inf.waw, inf.war, inf.waw_cks, inf.war_cks, inf.ahead) == (
                    mem_srcs, waw, war, waw_cks, war_cks, ahead):
                return  # a previous version's facts, still exact
            # shared with the previous version's memo records: never mutate, replace
            inf = self.info[inst] = inf.copy()
            if inst.block is not None:
                self._relinked.add(inst.block)
        inf.linked = True
        inf.mem_srcs = mem_srcs
        inf.waw, inf.waw_cks, inf.war, inf.war_cks = waw, waw_cks, war, war_cks
        inf.ahead = ahead
        if self.hw:
            inf.simple = not (waw or war or ahead or inf.lds or inf.fence or inf.drain or inf.after or inf.control or inf.entry
                              or inf.ring or inf.lc_war is not None or inf.lc_raw is not None
                              or self.options.enable_tensor_descriptor_war)
            inf.needs_check = bool(mem or not inf.simple or inf.clause) and not inf.is_wait
        else:
            inf.needs_check = bool(
                mem or inf.tensor_anchor or inf.lds_writer or inf.fence or inf.ring
                or inf.lc_war is not None or inf.lc_raw is not None
                or (self.options.enable_tensor_descriptor_war and not inf.is_wait and inst.dsts))

    def _ahead(self, inst: Instruction, inf: InstInfo) -> tuple:
        """For an op whose result completes out of order (gfx9 SMEM on lgkmcnt): the older
        sources of those timelines that the next `AHEAD` instructions of its block read
        (before a wait instruction), issued at least `AHEAD_FAR` instructions earlier on
        every path.  A wait for one of them there must be 0, so it would also wait for this
        op, just issued; `hazards.hw_required` waits before this op instead, when the older
        op has had time to complete (aiter's gfx942 flatmm: ``s_load s[84:85]; v_mov v50, s31``
        waits for the previous trip's ``s_load s[30:31]`` above the new load, as its authors
        do).  Loads issued together (a prologue's ``s_load``s, then their uses) keep one wait
        after the last: waiting between them would serialise them."""
        ooo = [c for c in inf.results if not self.in_order[c]]
        b = inst.block
        if not ooo or b is None or inst.is_phi:
            return ()
        k = self._position(inst)
        if k is None:
            return ()
        info = self.info
        out: list = []
        n = 0
        for y in self._ahead_pos[b][1][k + 1:]:
            yi = info.get(y)
            if yi is None or yi.is_wait or n >= AHEAD:
                break
            n += 1
            for src in flatten_sources(y):
                if src is inst:
                    continue
                si = info.get(src)
                if si is None:
                    si = self._fresh_info(src)
                for c in si.results:
                    if c in ooo and (src, c) not in out and self._apart(src, inst, k) >= AHEAD_FAR:
                        out.append((src, c))
        return tuple(out)

    def _position(self, inst: Instruction) -> int | None:
        b = inst.block
        if b is None:
            return None
        pos = self._ahead_pos.get(b)
        if pos is None or pos[0] is not b.instrs:
            real = [i for i in b.instrs if not i.is_phi and not i.is_label]
            pos = self._ahead_pos[b] = (b.instrs, real, {id(i): k for k, i in enumerate(real)})
        return pos[2].get(id(inst))

    def _apart(self, src: Instruction, inst: Instruction, k: int) -> int:
        """Instructions that run between `src` and `inst` (at position k of its block, PHIs
        and labels not counted) on every path: the rest of src's block and the start of
        inst's, or the run between them in one block."""
        j = self._position(src)
        if j is None:
            return 0
        if src.block is inst.block and j < k:
            return k - j
        return len(self._ahead_pos[src.block][1]) - j + k

    def _hazard_candidates(self, inst: Instruction, inf: InstInfo) -> tuple:
        """(WAW writers, their timelines, WAR lockers, their lock timelines) for the
        registers `inst` writes; writes that land in order with `inst`'s own are exempt, and
        so is an older VMEM translation when `inst` is VMEM itself.  Only ops that can be in
        flight here count (in this block, or a block that reaches it); the sets are shared by
        the instructions of a block that write the same registers."""
        writers, lockers = self.maps.writers, self.maps.lockers
        if not writers and not lockers:
            return _NO_CANDIDATES
        masks = self._hazard_masks
        if masks is None:
            masks = self._hazard_masks = _unit_masks(writers, lockers)
        dkey = []
        hit_unit = False
        for op in inst.dsts:
            if type(op) is Reg:
                kind, lo, hi = op.kind, op.lo, op.hi
                dkey.append((kind, lo, hi))
                if not hit_unit:
                    m = masks.get(kind)
                    hit_unit = m is not None and (lo < 0 or (m >> lo) & ((1 << (hi - lo + 1)) - 1) != 0)
        if not hit_unit:  # no unit it writes has a late writer or a source lock anywhere
            return _NO_CANDIDATES
        dkey = tuple(dkey)
        order = inf.order if inf.late else None
        vmem = CK_XV in inf.pushes
        key = (inst.block, dkey, order, vmem)
        hit = self._cands.get(key)
        if hit is None:
            hit = self._cands[key] = self._candidates(inst.block, dkey, order, vmem)
        waw, waw_cks, war, war_cks = hit
        if inst in waw or inst in war:
            # its own earlier instance (last trip) is a WAW writer when its writes may land out
            # of order and its block lies on a cycle: the next trip's write may otherwise be
            # overtaken by the previous one (SMEM, gfx12+ VMEM; LLVM waits there too).  As a
            # WAR locker it never is: it reads its sources before it writes.
            own = (inst in waw and order is None and inst.block is not None
                   and self.cfg.reaches(inst.block, inst.block))
            live = self._live_test(inst.block)
            if not own:
                waw = frozenset(p for p in waw if p is not inst and live(p))
            war = frozenset(p for p in war if p is not inst and live(p))
            if not war:
                war_cks = ()
        return waw, waw_cks, war, war_cks

    def _live_test(self, home: Block | None):
        """p -> p's block is `home` or reaches it (every p when `home` is None).

        Asked of the CFG's reachability bitsets directly, with no memo: a memo per home
        block of every block asked about grew with blocks x blocks (3,751 dicts, 66 MB of
        the 30k-line kernel's first plan, freed only when an edit re-made the solver's
        state; issue 21, BENCHMARKS.md), for a test that costs two lookups and a shift."""
        if home is None:
            return lambda p: True
        cfg = self.cfg
        ib = cfg.rpo_index.get(home)
        if ib is None:  # outside the RPO: only its own instructions
            return lambda p: p.block is home
        index, reach = cfg.rpo_index.get, cfg.reach_sets()

        def live(p: Instruction) -> bool:
            pb = p.block
            if pb is home:
                return True
            ia = index(pb)
            return ia is not None and (reach[ia] >> ib) & 1 == 1
        return live

    def _base_candidates(self, dkey: tuple, order, located: bool) -> tuple[frozenset, frozenset]:
        """(WAW writers of another order class than `order`, WAR lockers) of the registers
        `dkey` names, in any block (`located`: only instructions that have one), shared by
        every block asking."""
        key = (dkey, order, located)
        hit = self._cand_base.get(key)
        if hit is not None:
            return hit
        writers, lockers = self.maps.writers, self.maps.lockers
        waw: set[Instruction] = set()
        war: set[Instruction] = set()
        for kind, lo, hi in dkey:
            for i in range(lo, hi + 1):
                k = (kind, i)
                w = writers.get(k)
                if w:
                    waw.update(w)
                lk = lockers.get(k)
                if lk:
                    war.update(lk)
        info = self.info
        if order is not None:
            waw = {p for p in waw if info[p].order != order}
        if located:
            waw = {p for p in waw if p.block is not None}
            war = {p for p in war if p.block is not None}
        hit = self._cand_base[key] = (frozenset(waw), frozenset(war))
        return hit

    def _candidates(self, home: Block | None, dkey: tuple, order, vmem: bool) -> tuple:
        base_waw, base_war = self._base_candidates(dkey, order, home is not None)
        if not base_waw and not base_war:
            return _NO_CANDIDATES
        info = self.info
        live = self._live_test(home)
        waw_cks = tuple(sorted({c for p in base_waw if live(p) for c in info[p].results}))
        war_cks = tuple(sorted({c for p in base_war if live(p)
                                for c in info[p].locks if not (vmem and c == CK_XV)}))
        waw = base_waw if any(live(p) for p in base_waw) else frozenset()
        war = base_war if war_cks else frozenset()
        return waw, waw_cks, war, war_cks


def _unit_masks(*tables: dict) -> dict[str, int]:
    """Register kind -> a bit mask of the unit indices that are keys of any of `tables` (a
    quick test that an instruction's destinations meet no WAW/WAR candidate at all)."""
    masks: dict[str, int] = {}
    for table in tables:
        for kind, i in table:
            masks[kind] = (masks.get(kind, 0) | (1 << i)) if i >= 0 else -1
    return masks


def hazard_relevant(inf: InstInfo) -> bool:
    """The instruction is a WAW or WAR candidate of the registers it touches."""
    return bool((inf.late and inf.results) or inf.locks)
