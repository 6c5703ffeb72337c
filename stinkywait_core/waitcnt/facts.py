"""Per-instruction facts of one solve: what each instruction pushes, reads, overwrites.

Classification is the hot part of a cold run, so the facts of an instruction whose mnemonic
and operand variant decide everything are derived once per (target, mnemonic, variant) and
shared.  Facts that depend on other instructions are *linked* afterwards:

* `mem_srcs`: the async producers an instruction reads (RAW), from the SSA sources flattened
  through PHIs, one (producer, timeline) pair per timeline the producer's result is counted on;
* `waw`: the in-flight writers that may still write a register it writes (write-after-write),
  and `war`: the in-flight ops that still read a register it writes (write-after-read on a
  source lock: gfx1250 address translation, gfx9-11 export data).  Both are the static
  candidates by register unit; the dataflow's queues decide which are in flight on a path.

`InstInfo` compares by value: the incremental memo keys chunk walks on it.
"""

from __future__ import annotations

from functools import lru_cache

from ..analysis import classify as K
from ..ir import Instruction, Reg
from ..ir.records import Record
from ..analysis.boundaries import JUMP_TAIL, entry_instruction, jump_kinds, local_transfers
from ..targets.model import (BAR_FULL, BAR_SIGNAL, BAR_WAIT, CK_ASYNC, CK_STORE, CK_TENSOR, CK_XS, CK_XV, CTL_JUMP,
                             ENG_DS, ENG_TENSOR, LDS_READ, LDS_WRITE)
from ..targets.target import Target, variant_of


class InstInfo(Record):
    """Facts of one instruction for one solve (see the module docstring).

    Upstream-model fields: `pushes` (timelines it increments), `tokens` (memtokens or None),
    `ring`/`advances` (LDS-ring accesses, branch B2), `lc_war`/`lc_raw` (loop-carried
    annotations, branch B1), `is_wait`, `tensor_anchor`, `lds_writer`, `fence` (an LDS-fence
    barrier), `ds_read_or_atomic`, `tensor_raw` (rawNeedsWait for tensors).
    Hardware-model fields: `results` (timelines its result or LDS effect completes on), `lds`
    ("r"/"w"/"rw") and `engine`, `control`, `drain` (timelines drained before it), `after`
    (timelines the previous instruction needs drained right after it), `clause` (an
    ``s_clause`` head: its members), `in_clause` (a member: its head), `late` and `order`
    (WAW), `locks`, `entry` (a callable function's first instruction: the timelines the caller
    may have left in flight, drained before it whatever the queues hold).
    Linked: `mem_srcs`, `waw`/`waw_cks`, `war`/`war_cks`, `needs_check`, `simple` (only
    register RAW can apply: the solver's inline fast path), `linked`, `ahead` (an op of an
    out-of-order timeline: the (memop, timeline) sources of that timeline the next few
    instructions of its block read, `hazards.hw_required`'s early drain).
    """

    __slots__ = ("pushes", "tokens", "ring", "advances", "lc_war", "lc_raw", "is_wait", "tensor_anchor",
                 "lds_writer", "fence", "ds_read_or_atomic", "tensor_raw", "results", "lds", "engine", "control",
                 "drain", "after", "clause", "in_clause", "late", "order", "locks",
                 "mem_srcs", "waw", "waw_cks", "war", "war_cks", "needs_check", "simple", "linked", "entry", "ahead")

    def __init__(self, pushes: tuple, tokens, ring: list, advances: list, lc_war, lc_raw, is_wait: bool,
                 tensor_anchor: bool, lds_writer: bool, fence: bool, ds_read_or_atomic: bool, tensor_raw: bool,
                 results: tuple = (), lds: str = "", engine: str = "", control: str = "", drain: tuple = (),
                 after: tuple = (), clause: tuple | None = None, in_clause=None, late: bool = False,
                 order: str | None = None, locks: tuple = (), mem_srcs: tuple = (), waw: frozenset = frozenset(),
                 waw_cks: tuple = (), war: frozenset = frozenset(), war_cks: tuple = (), needs_check: bool = True,
                 simple: bool = False, linked: bool = False, entry: tuple = (), ahead: tuple = ()):
        self.pushes, self.tokens, self.ring, self.advances = pushes, tokens, ring, advances
        self.lc_war, self.lc_raw, self.is_wait, self.tensor_anchor = lc_war, lc_raw, is_wait, tensor_anchor
        self.lds_writer, self.fence, self.ds_read_or_atomic = lds_writer, fence, ds_read_or_atomic
        self.tensor_raw, self.results, self.lds, self.engine = tensor_raw, results, lds, engine
        self.control, self.drain, self.after, self.clause = control, drain, after, clause
        self.in_clause, self.late, self.order, self.locks = in_clause, late, order, locks
        self.mem_srcs, self.waw, self.waw_cks, self.war, self.war_cks = mem_srcs, waw, waw_cks, war, war_cks
        self.needs_check, self.simple, self.linked = needs_check, simple, linked
        self.entry, self.ahead = entry, ahead

    def copy(self) -> "InstInfo":
        """A copy to re-link (facts shared with a previous version are never mutated)."""
        return InstInfo(*self._key(self))

    @property
    def counter(self) -> int:
        """The first timeline it pushes (K.CK_COUNT: none), as upstream's single counter."""
        return self.pushes[0] if self.pushes else K.CK_COUNT


def has_trips(inf: InstInfo) -> bool:
    """LDS-ring or loop-carried annotations: queued ops then carry trips and ring deltas."""
    return bool(inf.ring or inf.advances or inf.lc_war or inf.lc_raw)


def _int_list(v) -> list[int]:
    if isinstance(v, list):
        return [x for x in v if isinstance(x, int)]
    if isinstance(v, int):
        return [v]
    return []


def _lc(inst: Instruction, kind: str) -> tuple[tuple[int, ...], int] | None:
    m = inst.mods.get(kind)
    if m is None:
        return None
    d = m.fields.get("distance", 1)
    return tuple(_int_list(m.fields.get("tokens", []))), d if isinstance(d, int) else 1


def _ring(inst: Instruction) -> tuple[list, list]:
    m = inst.mods.get("lds_ring")
    if m is None:
        return [], []
    acc = _int_list(m.fields.get("accesses", []))
    adv = _int_list(m.fields.get("advances", []))
    return ([tuple(acc[i:i + 5]) for i in range(0, len(acc) - 4, 5)],
            [tuple(adv[i:i + 2]) for i in range(0, len(adv) - 1, 2)])


def is_cluster_barrier(inst: Instruction, barrier: str) -> bool:
    """A split signal/wait on the cluster barrier id -3 (0xfffd as the 16-bit immediate
    llvm-objdump prints for `s_barrier_wait`): a handshake, not an LDS fence."""
    return barrier in (BAR_SIGNAL, BAR_WAIT) and inst.first_literal() in (-3, 0xfffd)


@lru_cache(maxsize=16384)
def plain_facts(mnemonic: str, variant: int, target: Target, num_waves_one: bool) -> tuple:
    """(pushes, barrier kind, the rest of InstInfo's constructor arguments), for an
    instruction whose mnemonic and variant decide everything (no ring or loop-carried
    annotation, not a barrier): the common case, derived once per mnemonic on a cold run."""
    s = target._table(mnemonic, target.generation, variant)
    active = set(target.timelines)
    pushes = tuple(c for c in s.pushes if c in active)
    results = tuple(c for c in pushes if c not in s.locks)
    locks = tuple(c for c in s.locks if c in active)
    upstream = target.model == "upstream"
    lds_writer = (s.lds == LDS_WRITE and s.engine in (ENG_DS, ENG_TENSOR)) if upstream else False
    tensor_anchor = s.engine == ENG_DS and s.family == "ds" and bool(pushes) if upstream else False
    ds_read_or_atomic = s.engine == ENG_DS and s.lds in (LDS_READ, "rw")
    drain = tuple(c for c in s.drain_before if c in active)
    return (pushes, s.barrier, ((), (), None, None, s.wait, tensor_anchor, lds_writer, False, ds_read_or_atomic,
                     num_waves_one, results, "" if upstream else s.lds, "" if upstream else s.engine,
                     "" if upstream else s.control, () if upstream else drain, (), None, None, s.late_dsts,
                     s.order_class, () if upstream else locks))


def make_info(inst: Instruction, target: Target, num_waves: int) -> InstInfo:
    """The unlinked facts of one instruction."""
    if inst.is_phi or inst.is_label:
        return InstInfo((), inst.tokens, [], [], None, None, False, False, False, False, False, False,
                        needs_check=False)
    pushes, barrier, rest = plain_facts(inst.mnemonic, variant_of(inst), target, num_waves == 1)
    mods = inst.mods
    if not mods and not barrier:  # (no memtoken, no annotation: most instructions of a kernel)
        return InstInfo(pushes, None, *rest)
    annotated = bool(mods) and ("lds_ring" in mods or "loopcarriedwar" in mods or "loopcarriedraw" in mods)
    if not annotated and not barrier:
        return InstInfo(pushes, inst.tokens, *rest)
    r = list(rest)  # ring, advances, lc_war, lc_raw, is_wait, tensor_anchor, lds_writer, fence, ...
    if annotated:
        r[0], r[1] = _ring(inst)
        r[2], r[3] = _lc(inst, "loopcarriedwar"), _lc(inst, "loopcarriedraw")
    if barrier:
        cluster = is_cluster_barrier(inst, barrier)
        if target.model == "upstream":
            fence = not cluster  # upstream: every s_barrier* is an LDS fence but the -3 handshake
            r[5] = r[5] or fence  # tensor anchor
        else:
            fence = barrier in (BAR_FULL, BAR_SIGNAL, BAR_WAIT) and not cluster
        r[7] = fence
        r[9] = fence or num_waves == 1  # tensor rawNeedsWait
    return InstInfo(pushes, inst.tokens, *r)


def unit_keys(ops: list) -> list[tuple[str, int]]:
    """The 32-bit register units of an operand list (the SSA's keys; no pseudo registers)."""
    keys: list[tuple[str, int]] = []
    for op in ops:
        if type(op) is Reg and op.kind not in ("null", "LDS"):
            if op.lo == op.hi:
                keys.append((op.kind, op.lo))
            else:
                keys.extend((op.kind, i) for i in range(op.lo, op.hi + 1))
    return keys


class HazardMaps:
    """Which instructions of a function late-write or read-lock each register unit: the
    static candidates of the WAW and WAR rules."""

    __slots__ = ("writers", "lockers")

    def __init__(self) -> None:
        self.writers: dict[tuple[str, int], set[Instruction]] = {}
        self.lockers: dict[tuple[str, int], set[Instruction]] = {}

    def add(self, inst: Instruction, inf: InstInfo, units: tuple | None = None) -> None:
        """Record `inst` as a writer and/or locker; `units`: its (source, destination) unit
        keys when the SSA already has them (the same keys `unit_keys` makes)."""
        if inf.late and inf.results:
            for k in (units[1] if units is not None else unit_keys(inst.dsts)):
                self.writers.setdefault(k, set()).add(inst)
        if inf.locks:
            for k in (units[0] if units is not None else unit_keys(inst.srcs)):
                self.lockers.setdefault(k, set()).add(inst)

    def discard(self, inst: Instruction) -> None:
        for table in (self.writers, self.lockers):
            for k in unit_keys(inst.dsts) + unit_keys(inst.srcs):
                s = table.get(k)
                if s is not None:
                    s.discard(inst)
                    if not s:
                        del table[k]


def clause_members(instrs: list[Instruction], head: int, count: int) -> tuple[Instruction, ...]:
    """The instructions an ``s_clause N`` at `instrs[head]` groups (the next N + 1)."""
    out: list[Instruction] = []
    for inst in instrs[head + 1:]:
        if inst.is_phi or inst.is_label:
            continue
        out.append(inst)
        if len(out) == count:
            break
    return tuple(out)


def entry_timelines(target: Target) -> tuple[int, ...]:
    """What a callable function waits for at its entry (LLVM 22 per CPU, call-waitcnt.ll: gfx9-11
    ``s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)``, gfx12 loadcnt, dscnt, expcnt, samplecnt, bvhcnt
    and kmcnt, gfx1250 loadcnt, dscnt and kmcnt): every timeline whose ops write registers or
    read export data, not stores (vscnt/storecnt), translations, tensor or async LDS fills."""
    return tuple(c for c in target.timelines if c not in (CK_STORE, CK_XV, CK_XS, CK_TENSOR, CK_ASYNC))


def function_transfers(func) -> tuple[dict, tuple[set, set]]:
    """(`jump_kinds`, `local_transfers`) of `func`: what `block_structure` reads of the whole
    function (its indirect jumps, calls and returns)."""
    return jump_kinds(func), local_transfers(func)


def block_structure(blocks, info: dict[Instruction, InstInfo], target: Target, func=None,
                    transfers: tuple | None = None) -> dict:
    """Clause groups, drains-after, next-instruction drains and the function's boundaries, which
    depend on an instruction's neighbours: {instruction: (after, clause, in_clause, drain,
    control, entry)} for the instructions that have any (`drain` / `control` None: the table's).

    An ``s_clause`` head gets its members (the waits they need are placed before the head,
    so that no wait splits the clause unless a member depends on an earlier one); an
    instruction the ISA wants a counter drained right after (GWS, ordered count) puts that
    requirement on the next instruction of its block; an instruction whose drain-before
    depends on the instruction after it (`Target.drain_before`: gfx1250 `s_set_vgpr_msb`
    under XNACK) gets it from that one, or from none when it ends its block.  With `func`: a tail
    call (`analysis/boundaries.py`) is a jump, not a return, and a callable function's first
    instruction drains `entry_timelines` (the callee's side of the calling convention);
    `transfers`: `function_transfers(func)`, when the caller has it.
    """
    out: dict[Instruction, list] = {}

    def entry(inst: Instruction) -> list:
        e = out.get(inst)
        if e is None:
            e = out[inst] = [(), None, None, None, None, ()]
        return e

    if func is not None:
        in_blocks = {id(b) for b in blocks}
        kinds, (calls, returns) = transfers if transfers is not None else function_transfers(func)
        for jump, (kind, _) in kinds.items():
            if kind == JUMP_TAIL and id(jump.block) in in_blocks and jump in info:
                entry(jump)[4] = CTL_JUMP
        for t in calls | returns:  # a subroutine of the function: its code is on the CFG
            if id(t.block) in in_blocks and t in info:
                entry(t)[4] = CTL_JUMP
        first = entry_instruction(func) if func.callable else None
        if first is not None and id(first.block) in in_blocks:
            # (the first instruction that is not a wait: a hand-written entry wait is credited)
            first = next((i for i in first.block.instrs if i in info and not info[i].is_wait
                          and not i.is_label and not i.is_phi), None)
            if first is not None:
                entry(first)[5] = entry_timelines(target)

    active = set(target.timelines)
    for b in blocks:
        instrs = b.instrs
        pending: tuple = ()
        for i, inst in enumerate(instrs):
            if inst.is_phi or inst.is_label or inst not in info:
                continue
            if pending:
                entry(inst)[0] = pending
                pending = ()
            mn = inst.mnemonic
            if mn == "s_clause":
                n = inst.first_literal()
                if n is not None and n >= 0:
                    members = clause_members(instrs, i, (n & 0x3F) + 1)
                    entry(inst)[1] = members
                    for m in members:
                        entry(m)[2] = inst
            elif mn.startswith("ds_"):
                after = tuple(c for c in target.sem(inst).drain_after if c in active)
                if after:
                    pending = after
            elif target.drains_by_context(inst):
                entry(inst)[3] = target.drain_before(inst, instrs[i + 1] if i + 1 < len(instrs) else None)
    return {k: tuple(v) for k, v in out.items()}
