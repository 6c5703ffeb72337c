"""WaitDataflow's per-instruction facts for one function version (a mixin of the solver).

The facts of every instruction (`InstInfo`, from the target), the neighbour-dependent ones
(clauses, drains after), the hazard maps, the memoised chunks and block signatures, made from
scratch or carried over from the previous version of the function (work proportional to the
edit).  Linking the SSA sources and the WAW/WAR candidates lives in candidates.py.
"""

from __future__ import annotations

from ..ir import Block, Instruction
from ..targets.model import CTL_JUMP
from .candidates import hazard_relevant
from .facts import HazardMaps, InstInfo, block_structure, function_transfers, has_trips, make_info, unit_keys
from .incremental import FunctionMemo, chunks_of


#: calls and returns: whether one is a boundary depends on the whole function (`block_structure`)
_TRANSFERS = ("s_swappc_b64", "s_swap_pc_i64", "s_call_b64", "s_call_i64", "s_setpc_b64", "s_set_pc_i64")


class FunctionFacts:
    """The instruction facts of the function being solved (see the module doc)."""

    def _fresh_info(self, inst: Instruction) -> InstInfo:
        return make_info(inst, self.target, self.options.num_waves)

    def _init_full(self, memo: FunctionMemo | None, units: dict | None = None) -> None:
        known = memo.infos if memo is not None and memo.target is self.target else {}
        pause = self.pause
        for n, b in enumerate(self.rpo):
            if pause is not None and not n & 15:
                pause()
            for inst in b.instrs:
                inf = known.get(inst)
                if inf is None:
                    inf = self._fresh_info(inst)
                self.info[inst] = inf
        self._structure(self.rpo)
        self.track_trips = any(has_trips(inf) for inf in self.info.values())
        if self.hw:
            add, got = self.maps.add, (units or {}).get
            for inst, inf in self.info.items():
                if (inf.late and inf.results) or inf.locks:
                    add(inst, inf, got(inst))
        self._lds_timelines()
        touched = memo.ssa.touched if memo is not None else None
        for n, (inst, inf) in enumerate(list(self.info.items())):
            if pause is not None and not n & 127:
                pause()
            # an unchanged instruction whose sources the SSA update left alone keeps its links
            if touched is None or not inf.linked or inst in touched or self.hw:
                self._link_sources(inst, self.info[inst])
        self.keep_live = {b: self._needs_live_tensor_state(b) for b in self.rpo}
        if memo is not None:
            memo.target = self.target
            for b in self.rpo:
                self._chunk_block(b)
            self._remember(memo)

    def _init_incremental(self, memo: FunctionMemo) -> None:
        """The previous version's facts, minus what is gone, plus what is new or re-linked:
        work proportional to the edit, not to the function (the hazard maps are updated with
        the same instructions; an instruction whose WAW/WAR candidates changed is re-linked)."""
        info = self.info = dict(memo.infos)
        self.maps = maps = memo.hazard_maps if memo.hazard_maps is not None else HazardMaps()
        gone = False
        units: set = set()
        gone_infos: list[InstInfo] = []
        for inst in list(memo.dropped) + memo.ssa.old_phis:
            inf = info.pop(inst, None)
            if inf is not None:
                gone_infos.append(inf)
            gone = gone or (inf is not None and has_trips(inf))
            if inf is not None and self.hw and hazard_relevant(inf):
                maps.discard(inst)
                units.update(unit_keys(inst.dsts))
                units.update(unit_keys(inst.srcs))
        fresh: list[Instruction] = []
        changed = [b for b in self.rpo if b in memo.changed_blocks]
        for b in changed:
            for inst in b.instrs:
                if inst not in info:
                    info[inst] = self._fresh_info(inst)
                    fresh.append(inst)
        self._edited = fresh + list(memo.dropped)
        for phi in memo.ssa.new_phis:
            if phi not in info:
                info[phi] = self._fresh_info(phi)
                fresh.append(phi)
        restructured = self._structure(changed, self._edited)
        if gone:
            self.track_trips = any(has_trips(inf) for inf in info.values())
        else:
            self.track_trips = memo.track_trips or any(has_trips(info[i]) for i in fresh)
        if self.hw:
            for inst in fresh:
                if hazard_relevant(info[inst]):
                    maps.add(inst, info[inst])
                    units.update(unit_keys(inst.dsts))
                    units.update(unit_keys(inst.srcs))
        self._lds_timelines((gone_infos, [info[i] for i in fresh]))
        linked = set()
        for inst in fresh:
            self._link_sources(inst, info[inst])
            linked.add(inst)
        # kept instructions whose sources the SSA re-solved, or whose neighbour-dependent facts
        # changed (`_structure`: their fast-path flags are derived when linked)
        for inst in list(memo.ssa.touched) + restructured:
            inf = info.get(inst)
            if inf is not None and inst not in linked:
                self._link_sources(inst, inf)
                linked.add(inst)
        if units:  # candidates of the units an edit added or removed a writer/locker of
            for inst, inf in list(info.items()):
                if inst in linked or inst.is_phi or inst.is_label:
                    continue
                if not units.isdisjoint(unit_keys(inst.dsts)):
                    self._link_sources(inst, inf)
        self.keep_live = dict(memo.keep_live)
        self.chunks = dict(memo.chunks)
        self.chunk_infos = dict(memo.chunk_infos)
        self.block_sig = dict(memo.block_sig)
        for b in changed:
            self.keep_live[b] = self._needs_live_tensor_state(b)
        for b in set(changed) | self._relinked:
            self._chunk_block(b)
        self._remember(memo)

    def _boundaries(self, edited: list[Instruction] | None) -> tuple[list[Block], tuple]:
        """The blocks that end the function or end in a call, return or indirect jump, and
        `function_transfers`: scans of every block's terminator (3,750 per edit of a 30k-line
        kernel), so the last version's are kept while they must hold: the CFG is kept, no
        edited (`edited`: new or gone) instruction is a transfer, no changed block is one of
        those blocks and the function is as callable as it was (`classify_jump` reads a
        return's block, the function's calls and `callable`).  `edited` None: made afresh."""
        func = self.func
        memo = self.memo
        old = memo.boundaries if memo is not None else None
        if old is not None and edited is not None and old[0] == func.callable \
                and memo.changed_blocks is not None and old[2].isdisjoint(memo.changed_blocks) \
                and not any(i.mnemonic.startswith(_TRANSFERS) for i in edited):
            return old[1], old[3]
        ends = [b for b in func.blocks
                if not b.succs or ((t := b.terminator()) is not None and t.mnemonic.startswith(_TRANSFERS))]
        transfers = function_transfers(func)
        if memo is not None:
            memo.boundaries = (func.callable, ends, set(ends), transfers)
        return ends, transfers

    def _structure(self, blocks, edited: list[Instruction] | None = None) -> list[Instruction]:
        """Clause groups, drains-after and next-instruction drains of `blocks` (neighbour-
        dependent facts: `block_structure`); an info whose fields change is replaced by an
        unlinked copy (shared facts are never mutated).  Returns the instructions replaced.
        `edited`: the instructions an edit added or removed (None: a full build)."""
        out: list[Instruction] = []
        if not self.hw:
            return out
        info = self.info
        # (the function's boundaries depend on its entry and its calls and jumps: their blocks always go)
        ends, transfers = self._boundaries(edited)
        blocks = list(blocks) + [b for b in self.func.blocks[:1] + ends if b not in blocks]
        want = block_structure(blocks, info, self.target, self.func, transfers)
        for b in blocks:
            for inst in b.instrs:
                inf = info.get(inst)
                if inf is None:
                    continue
                w = want.get(inst)
                table_control = self.target.sem(inst).control if inf.control == CTL_JUMP else inf.control
                if w is None:
                    if not inf.after and inf.clause is None and inf.in_clause is None and not inf.entry \
                            and table_control == inf.control:
                        continue  # no neighbour-dependent fact before or now (most instructions)
                    w = ((), None, None, None, None, ())
                after, clause, in_clause, drain, control, entry = w
                if drain is None:
                    drain = inf.drain  # (not neighbour-dependent: the table's)
                if control is None:
                    control = table_control
                if (inf.after, inf.clause, inf.in_clause, inf.drain, inf.control, inf.entry) != \
                        (after, clause, in_clause, drain, control, entry):
                    nc = inf.copy()
                    nc.after, nc.clause, nc.in_clause, nc.drain = after, clause, in_clause, drain
                    nc.control, nc.entry = control, entry
                    nc.linked = False
                    info[inst] = nc
                    out.append(inst)
                    if inst.block is not None:
                        self._relinked.add(inst.block)
        return out

    def _chunk_block(self, b: Block) -> None:
        for ch in self.chunks.get(b, ()):
            self.chunk_infos.pop(ch, None)
        cs = self.chunks[b] = chunks_of(b)
        for ch in cs:
            self.chunk_infos[ch] = tuple(self.info[i] for i in ch)
        self.block_sig[b] = (tuple(cs), tuple(self.chunk_infos[ch] for ch in cs))

    def _remember(self, memo: FunctionMemo) -> None:
        memo.infos = self.info
        memo.track_trips = self.track_trips
        memo.keep_live = self.keep_live
        memo.chunks = self.chunks
        memo.chunk_infos = self.chunk_infos
        memo.block_sig = self.block_sig
        memo.hazard_maps = self.maps

    def _needs_live_tensor_state(self, b: Block) -> bool:
        """Blocks that keep live (unfrozen) tensor queues: untagged tensor anchors (under the
        hardware model: untagged LDS accesses and barriers), loop-carried RAW readers and
        LDS-ring annotated instructions."""
        for inst in b.instrs:
            if inst.is_phi or inst.is_label:
                continue
            inf = self.info[inst]
            if inf.tokens is None and (inf.tensor_anchor or (self.hw and (inf.lds or inf.fence))):
                return True
            if inf.lc_raw is not None or inf.ring:
                return True
        return False
