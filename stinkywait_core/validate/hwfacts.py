"""What the hardware checker needs to know about each static instruction of a function.

The facts come only from the IR (operands, memtokens) and the target's instruction table
(`Target.sem`, `Target.decode_wait`): nothing here is taken from the insertion pass, so the
checker can disagree with it.  They are derived once per instruction before the path walk;
the walk (validate/hwcheck.py) and the machine state (validate/hwstate.py) only read them.

Choices that are the checker's own reading of the table:
* an op is put on its `locks` timelines even where the table lists a lock without pushing it
  (a GDS op locks its data on expcnt: LLVM's GDS_GPR_LOCK event increments expcnt), so a
  source lock can always be retired by a wait on the counter that holds it;
* an op's *result* timelines are the timelines it pushes that are not lock timelines; an op
  with no result timeline (an export) is in flight until every lock timeline retires it;
* "store-like" (exempt at returns, kept across calls): a vector memory op that writes no
  register and no LDS (stores, non-returning atomics).
"""

from __future__ import annotations

from ..ir import Function, Imm, Instruction, Reg, Special, Str
from ..targets.model import (BAR_FULL, BAR_SIGNAL, BAR_WAIT, CK_ASYNC, CK_COUNT, CK_STORE, CK_TENSOR, CK_XS, CK_XV,
                             CTL_CALL, CTL_ENDPGM, CTL_JUMP, CTL_RETURN)
from ..targets.target import Target
from .lds_overlap import LdsRegionModel

#: register kinds that are not architectural state a late write can clobber
_NOT_UNITS = frozenset({"null", "LDS", "src_shared_base", "src_private_base"})
_VMEM_FAMILIES = frozenset({"buffer", "global", "scratch", "flat", "image"})
#: timelines a caller may leave in flight at a callee's entry without the callee waiting
_NOT_AT_ENTRY = frozenset({CK_STORE, CK_XV, CK_XS, CK_TENSOR, CK_ASYNC})

Unit = tuple[str, int]


def units_of(ops: list) -> tuple[Unit, ...]:
    """The 32-bit register units an operand list names (no pseudo registers)."""
    out: list[Unit] = []
    for op in ops:
        if isinstance(op, Reg) and op.kind not in _NOT_UNITS:
            out.extend((op.kind, i) for i in range(op.lo, op.hi + 1))
    return tuple(dict.fromkeys(out))


def _bits(cks) -> int:
    m = 0
    for c in cks:
        m |= 1 << c
    return m


def _is_cluster_handshake(inst: Instruction) -> bool:
    """`s_barrier_signal -3` / `s_barrier_wait -3` (or 0xfffd, the same id as a 16-bit
    immediate, as llvm-objdump prints the wait): the cluster barrier, not an LDS fence."""
    for op in inst.srcs:
        if isinstance(op, Imm):
            return op.value in (-3, 0xfffd)
    return False


class Facts:
    """The checker's view of one instruction (see the module docstring)."""

    __slots__ = ("sid", "inst", "skip", "wait", "pushes", "push_mask", "result_mask", "lock_mask", "srcs", "dsts",
                 "late", "order", "lds", "engine", "region", "fence", "control", "drain_before", "drain_after",
                 "store_like", "xv", "xs", "local")

    def __init__(self, sid: int, inst: Instruction) -> None:
        self.sid = sid
        self.inst = inst
        self.skip = True
        #: [(counter name, value, timelines on that counter)] for a wait instruction
        self.wait: tuple = ()
        self.pushes: tuple[int, ...] = ()
        self.push_mask = self.result_mask = self.lock_mask = 0
        self.srcs: tuple[Unit, ...] = ()
        self.dsts: tuple[Unit, ...] = ()
        self.late = False
        self.order: str | None = None
        self.lds = ""
        self.engine = ""
        self.region: object = None
        self.fence = False
        self.control = ""
        self.drain_before: tuple[int, ...] = ()
        self.drain_after: tuple[int, ...] = ()
        self.store_like = False
        self.xv = self.xs = False
        #: a call of a subroutine of the function, or a return to such a call: its table
        #: control ("call" / "return"); the walk keeps a return stack for them
        self.local = ""

    @property
    def is_wait(self) -> bool:
        return bool(self.wait)

    @property
    def ends_path(self) -> bool:
        return self.control in (CTL_RETURN, CTL_ENDPGM)

    @property
    def is_call(self) -> bool:
        return self.control == CTL_CALL


_JUMPS = ("s_setpc_b64", "s_set_pc_i64")
_CALLS = ("s_swappc_b64", "s_swap_pc_i64", "s_call_b64", "s_call_i64")


def _jump_origin_is_a_symbol(block_instrs: list[Instruction], jump: Instruction) -> bool:
    """The checker's own reading of an indirect jump: a tail call when the address it jumps to
    was made in its block from the program counter or a symbol, or loaded from memory (a GOT
    entry), following register copies back; anything else (the return address as received,
    moved, restored, or not traced) is a return, the reading that checks more."""
    src = next((op for op in jump.srcs if isinstance(op, Reg) and op.kind == "s"), None)
    if src is None:
        return False
    reg = src.lo
    for inst in reversed(block_instrs[:block_instrs.index(jump)]):
        hit = next((op for op in inst.dsts if isinstance(op, Reg) and op.kind == "s" and op.lo <= reg <= op.hi), None)
        if hit is None or inst.is_label:
            continue
        mn = inst.mnemonic
        if mn.startswith(("s_getpc", "s_get_pc", "s_load", "s_buffer_load")):
            return True
        if any(isinstance(op, Str) or (isinstance(op, Special) and "@" in op.spelling) for op in inst.srcs):
            return True
        if mn.startswith("s_mov_b") and len(inst.srcs) == 1 and isinstance(inst.srcs[0], Reg) \
                and inst.srcs[0].kind == "s":
            reg = inst.srcs[0].lo + (reg - hit.lo)
            continue
        return False
    return False


def local_transfer_ids(func: Function) -> frozenset:
    """Ids of the calls of `func`'s own subroutines and of their returns (see `_transfers`)."""
    return frozenset(_transfers(func)[1])


def _transfers(func: Function) -> tuple[set[int], set[int]]:
    """(ids of tail calls, ids of calls and returns of subroutines of `func` itself).  A call
    whose block has a successor that is not the next block calls code of the function (the
    front end's local call edges); a jump with successors then returns to such a call."""
    blocks = func.blocks
    tails: set[int] = set()
    local: set[int] = set()
    for i, b in enumerate(blocks):
        term = b.terminator()
        if term is None:
            continue
        if term.mnemonic.startswith(_CALLS):
            after = blocks[i + 1] if i + 1 < len(blocks) else None
            if any(s is not after for s in b.succs):
                local.add(id(term))
        elif term.mnemonic in _JUMPS and not b.succs and _jump_origin_is_a_symbol(b.instrs, term):
            tails.add(id(term))
    if local:
        for b in blocks:
            term = b.terminator()
            if term is not None and term.mnemonic in _JUMPS and b.succs:
                local.add(id(term))
    return tails, local


def decode_wait(target: Target, inst: Instruction) -> dict[str, int]:
    """Counter -> value a wait enforces: the target's spelling, or the IR's one-counter form
    ``s_wait_<counter> N`` (what the pass emits into STIR for every target)."""
    got = target.decode_wait(inst)
    if got:
        return got
    mn = inst.mnemonic
    if mn.startswith("s_wait_") and mn[len("s_wait_"):] in target.counter_names:
        for op in inst.srcs:
            if isinstance(op, Imm) and op.value >= 0:
                return {mn[len("s_wait_"):]: op.value}
    return {}


#: the Facts fields that are a function of the instruction and the target alone (never of its
#: place: sid, the LDS region, the control the function's transfers give it, drain_before)
_OWN = ("skip", "wait", "pushes", "push_mask", "result_mask", "lock_mask", "srcs", "dsts", "late", "order", "lds",
        "engine", "fence", "drain_after", "store_like", "xv", "xs")


def function_facts(func: Function, target: Target, regions: LdsRegionModel,
                   memo: dict | None = None) -> dict[int, Facts]:
    """id(instruction) -> Facts for every instruction of `func` (sids in program order).

    `memo` (a dict the caller keeps between runs on versions of one document whose parse
    reuses the unchanged lines' instruction objects, as the review's checker runs do): the
    facts of an instruction that are its own (`_OWN`: its semantics under the target, its
    register units) are taken from the run that met the same object under the same target;
    the ones of its place are computed every time."""
    active, by_counter = timelines_of(target)
    out: dict[int, Facts] = {}
    sid = 0
    tail_calls, local = _transfers(func)
    seen: dict | None = None
    if memo is not None:
        seen = memo.get((target.name, func.name)) or {}
        fresh: dict = {}
    for b in func.blocks:
        for k, inst in enumerate(b.instrs):
            f = Facts(sid, inst)
            sid += 1
            out[id(inst)] = f
            if inst.is_label or inst.is_phi:
                continue
            got = seen.get(id(inst)) if seen is not None else None
            if got is not None and got[0] is inst:
                for name, v in zip(_OWN, got[1]):
                    setattr(f, name, v)
                s = got[2]
            else:
                s = _own_facts(f, inst, target, active, by_counter)
            if seen is not None:
                fresh[id(inst)] = (inst, got[1] if got is not None and got[0] is inst
                                   else tuple(getattr(f, name) for name in _OWN), s)
            if f.wait or f.skip:
                continue
            if s.lds or s.barrier:
                f.region = regions.region(inst)
            # a tail call jumps to a callee that waits at its entry: not a return
            f.control = CTL_JUMP if id(inst) in tail_calls else s.control
            if id(inst) in local:
                f.local = s.control
                f.control = CTL_JUMP
            following = b.instrs[k + 1] if k + 1 < len(b.instrs) else None
            f.drain_before = tuple(c for c in target.drain_before(inst, following) if c in active)
    if seen is not None:
        memo[(target.name, func.name)] = fresh  # (the instructions of this version only)
    return out


def timelines_of(target: Target) -> tuple[set[int], dict[str, tuple[int, ...]]]:
    """The target's active timelines, and per counter name the timelines it counts (the
    arguments of `own_facts`)."""
    active = set(target.timelines)
    by_counter: dict[str, tuple[int, ...]] = {}
    for ck in target.timelines:
        by_counter.setdefault(target.counter_of[ck], ())
        by_counter[target.counter_of[ck]] += (ck,)
    return active, by_counter


def own_facts(inst: Instruction, target: Target, active: set, by_counter: dict) -> Facts:
    """The facts of `inst` that are its own (`_OWN`: no place, region or transfer), for a
    reader that needs what it pushes or waits for without a whole run's set-up (`hwidle.py`)."""
    f = Facts(0, inst)
    if not (inst.is_label or inst.is_phi):
        _own_facts(f, inst, target, active, by_counter)
    return f


def _own_facts(f: Facts, inst: Instruction, target: Target, active: set, by_counter: dict):
    """Fill the facts of `inst` that are its own (`_OWN`); returns its semantics."""
    f.skip = False
    s = target.sem(inst)
    # (the table knows the target's own wait spellings; the pass's IR form
    # `s_wait_<counter>` is a wait on every target)
    vals = decode_wait(target, inst) if s.wait or inst.mnemonic.startswith("s_wait_") else {}
    if s.wait or vals:
        f.wait = tuple((cn, v, by_counter.get(cn, ())) for cn, v in vals.items())
        if not f.wait:
            f.skip = True  # a wait on a counter we do not track: retires nothing
        return s
    locks = tuple(c for c in s.locks if c in active)
    pushes = tuple(dict.fromkeys(c for c in s.pushes + s.locks if c in active))
    results = tuple(c for c in pushes if c not in locks)
    f.pushes = pushes
    f.push_mask, f.result_mask, f.lock_mask = _bits(pushes), _bits(results), _bits(locks)
    f.srcs = units_of(inst.srcs)
    f.dsts = units_of(inst.dsts)
    f.late = bool(s.late_dsts and pushes)
    f.order = s.order_class
    f.lds = s.lds
    f.engine = s.engine
    f.fence = s.barrier in (BAR_FULL, BAR_SIGNAL, BAR_WAIT) and not (
        s.barrier != BAR_FULL and _is_cluster_handshake(inst))
    f.drain_after = tuple(c for c in s.drain_after if c in active)
    f.store_like = bool(pushes) and not s.late_dsts and not s.lds and s.family in _VMEM_FAMILIES
    f.xv = CK_XV in pushes
    f.xs = CK_XS in pushes
    return s


def caller_facts(sid: int, func: Function, target: Target) -> Facts | None:
    """The pseudo instruction standing for what the caller of a callable function may still
    have in flight at its entry (None: `func` is not callable).  Which timelines: LLVM 22's
    entry wait (call-waitcnt.ll, per CPU) covers every counter of results that return to
    registers or of export data (loads, LDS, SMEM, samples, BVH, exports); it does not cover
    stores (vscnt/storecnt: they write nothing the callee reads), address translations (xcnt)
    or the tensor and async LDS fills, so neither does this convention."""
    if not func.callable or not func.blocks or not func.blocks[0].instrs:
        return None
    cks = tuple(c for c in target.timelines if c < CK_COUNT and c not in _NOT_AT_ENTRY)
    f = Facts(sid, func.blocks[0].instrs[0])
    f.skip = False
    f.pushes = cks
    f.push_mask = f.result_mask = _bits(cks)
    f.late = True
    return f


def counters_of(target: Target) -> dict[int, str]:
    """timeline -> the counter it is counted on, for the active timelines."""
    return {ck: target.counter_of[ck] for ck in target.timelines if ck < CK_COUNT}
