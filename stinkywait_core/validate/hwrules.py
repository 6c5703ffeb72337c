"""The hazards the hardware checker looks for at one instruction, just before it issues.

Each rule compares the instruction's static facts with the in-flight state of the path
(validate/hwstate.py) and calls `report(rule, producer seq, detail, needs, proven)`, where
`needs` maps each counter to the largest wait value placed right before this instruction
that would retire the producer there.

* raw: it reads a register unit an in-flight op will still write;
* waw: it writes such a unit, unless both writes land in issue order (the same `order_class`,
  and this write is itself a late write of that class: LDS returns, same-type VMEM on gfx9-11);
* war: it writes a unit an in-flight op still reads (source lock: gfx1250 address translation
  on xcnt, export/GDS data on expcnt), except a VMEM op overwriting a source of an older VMEM
  op on gfx1250 (its own write comes after its translation, and translations are in order);
* lds-raw / lds-waw / lds-war: an LDS access while an access of *another* engine to
  overlapping LDS is in flight and one of the two writes (one engine is in order with
  itself; a FLAT access, which may reach LDS, is in order with DS and out of order with the
  others).  A tensor fill read by the same wave with no LDS-fence barrier issued since the
  fill is always required (nothing can have made the read correct); after such a barrier only
  under the NumWaves policy (`tensor_raw_required`: one wave per workgroup, or the "always"
  policy), because with several waves the fill is meant for other waves and the barrier
  publishes it;
* barrier: at an LDS-fence barrier every own in-flight LDS access overlapping its region
  (the barrier publishes LDS to the other waves), except FLAT accesses (not known to reach LDS;
  LLVM does not wait for them either); in an aligned function an access whose overlap is not
  proven is instead owed until the next barrier, and reported only if an LDS access on the path
  (another wave's) may touch its bytes first (validate/hwpublish.py);
* isa-drain: the table's drain before an instruction (cache invalidates, gfx1250 atomics,
  `s_barrier` without back-off) and right after one (GWS, ordered count);
* return: anything but store-like ops in flight at a return (the caller may read it), and of a
  store that may touch LDS (FLAT) its LDS timeline only; a tail call (`analysis/boundaries.py`)
  is not a return;
* entry: an instruction of a callable function that touches a register, LDS or memory, or
  transfers control, while the caller's operations may still be in flight (the callee's side
  of the calling convention: it waits at its entry).
"""

from __future__ import annotations

from ..targets.model import CK_STORE, CK_XV, CTL_RETURN, ENG_DS, ENG_FLAT, ENG_TENSOR
from .hwfacts import Facts
from .hwpublish import fence_role
from .hwstate import Machine, State
from .lds_overlap import LdsRegionModel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    Report = Callable[[str, int, str, dict, bool], None]

RULES = ("raw", "waw", "war", "lds-raw", "lds-waw", "lds-war", "barrier", "isa-drain", "return", "entry")


def unit_name(u: tuple[str, int]) -> str:
    return f"{u[0]}{u[1]}"


def check_instruction(m: Machine, st: State, f: Facts, regions: LdsRegionModel, tensor_raw_required: bool,
                      report: "Report") -> None:
    """Report every hazard of `f` on the state `st` (see the module docstring)."""
    facts = m.facts
    writers = st.writers
    if st.caller >= 0:
        if not m.pending(st, st.caller):
            st.caller = -1
        elif f.srcs or f.dsts or f.lds or f.control or f.pushes:
            report("entry", st.caller, "the caller's loads, LDS, SMEM and exports",
                   m.need(st, st.caller, facts[st.sid[st.caller]].result_mask), True)
            # once per path: from here on the path is checked as if the entry wait were there
            for c in facts[st.sid[st.caller]].pushes:
                if st.caller in st.tl[c]:
                    m.retire_one(st, st.caller, c)
            st.caller = -1
    # register RAW
    for u in f.srcs:
        ws = writers.get(u)
        if ws:
            for s in ws:
                if m.pending(st, s):
                    report("raw", s, unit_name(u), m.need(st, s, facts[st.sid[s]].result_mask), True)
    if f.dsts:
        locks = st.locks
        for u in f.dsts:
            ws = writers.get(u)
            if ws:
                for s in ws:
                    if not m.pending(st, s):
                        continue
                    pf = facts[st.sid[s]]
                    if f.late and f.order is not None and f.order == pf.order:
                        continue
                    report("waw", s, unit_name(u), m.need(st, s, pf.result_mask), True)
            ls = locks.get(u)
            if ls:
                live = m.live(st, ls, lock=True)
                if len(live) != len(ls):
                    if live:
                        locks[u] = live
                    else:
                        del locks[u]
                for s in live:
                    pf = facts[st.sid[s]]
                    if f.xv and (pf.lock_mask >> CK_XV) & 1:
                        continue
                    report("war", s, unit_name(u), m.need(st, s, pf.lock_mask), True)
    if f.lds and st.owed:
        _collect(m, st, f, report)
    if f.lds or f.fence:
        _lds(m, st, f, regions, tensor_raw_required, report)
    for c in f.drain_before:
        lst = st.tl[c]
        if lst:
            report("isa-drain", lst[-1], f"needs {m.counter_of[c]} drained first",
                   m.need(st, lst[-1], 1 << c), True)
    if st.after is not None:
        cks, prod = st.after
        st.after = None
        for c in cks:
            lst = st.tl[c]
            if lst:
                report("isa-drain", lst[-1], f"follows {facts[prod].inst.mnemonic} (line {facts[prod].inst.line}), "
                       f"which needs {m.counter_of[c]} drained right after it", m.need(st, lst[-1], 1 << c), True)
    if f.control == CTL_RETURN:
        cands = []
        for s in st.mask:
            pf = facts[st.sid[s]]
            if not pf.store_like and s != st.caller:  # (the caller's ops: reported as "entry")
                # a store that may also touch LDS (FLAT) is owed on its LDS timeline only: the
                # store timeline is not the caller's to wait for, as for any other store
                cands.append((s, m.need(st, s, (pf.result_mask or pf.lock_mask) & ~(1 << CK_STORE)), True))
        _report_strictest("return", "in flight at the return", cands, report)


def _report_strictest(rule: str, detail: str, cands: list, report: "Report") -> None:
    """One report per counter (and proof kind): the producer that needs the strictest wait
    there stands for all of them (a return or a barrier with dozens of ops in flight)."""
    best: dict[tuple[str, bool], tuple[int, int, str]] = {}
    for s, needs, proven, *why in cands:
        for cn, v in needs.items():
            k = (cn, proven)
            if k not in best or v < best[k][0]:
                best[k] = (v, s, why[0] if why else detail)
    for (cn, proven), (v, s, d) in best.items():
        report(rule, s, d, {cn: v}, proven)


def _lds(m: Machine, st: State, f: Facts, regions: LdsRegionModel, tensor_raw_required: bool,
         report: "Report") -> None:
    facts = m.facts
    live = [s for s in st.lds if m.pending(st, s)]
    if len(live) != len(st.lds):
        st.lds[:] = live
    if not live:
        if f.fence and st.owed:
            _owe(m, st, f, [])
        return
    writes = "w" in f.lds
    fenced = []
    crossed = st.crossed
    mine = _lds_order(f.engine)
    for s in live:
        pf = facts[st.sid[s]]
        if f.fence and pf.engine == ENG_FLAT:
            continue  # a FLAT access may reach LDS, it is not known to: nothing to publish
        if not f.fence and _lds_order(pf.engine) == mine:
            continue  # one engine's LDS accesses are ordered
        same = s not in crossed
        hit, proven = regions.overlap(f.region, pf.region, same)
        if not hit:
            continue
        detail = regions.describe(f.region, pf.region, same)
        needs = m.need(st, s, pf.result_mask)
        if f.fence:
            fenced.append((s, needs, proven, detail))
            continue
        pw = "w" in pf.lds
        if pw and writes:
            report("lds-waw", s, detail, needs, proven)
        elif pw:
            if (pf.engine == ENG_TENSOR and not tensor_raw_required and s in st.fenced
                    and not (m.waves is not None and (m.waves.aligned or m.waves.pairs is not None))):
                # NumWaves policy, for a fill a barrier has published.  In an aligned function
                # the publish rule lets an unproven fill run across the barrier undrained (an
                # obligation, not a report), so a fill still in flight at its own wave's read
                # there is stale whatever NumWaves is: no skip.
                continue
            report("lds-raw", s, detail, needs, proven)
        elif writes:
            report("lds-war", s, detail, needs, proven)
    if f.fence and m.waves is not None and m.waves.aligned:
        fenced = _owe(m, st, f, fenced)
    elif f.fence and fenced and m.waves is not None and m.waves.pairs is not None:
        fenced = _specialised(m, st, f, fenced)
    if fenced:
        _report_strictest("barrier", "", fenced, report)
    if f.fence:
        st.fenced = st.fenced | frozenset(live)


def _owe(m: Machine, st: State, f: Facts, fenced: list) -> list:
    """At an LDS-fence barrier of an aligned function: the epoch of older obligations ends
    (or its next barrier is signalled), and each unproven in-flight access becomes an
    obligation (validate/hwpublish.py) instead of a report."""
    role = fence_role(f.inst)
    kept = []
    for ob in st.owed:
        if role == "full" or (role == "wait" and ob[4]):
            continue
        kept.append(ob if role != "signal" else ob[:4] + (True,))
    rest = []
    for s, needs, proven, detail in fenced:
        if proven:
            rest.append((s, needs, proven, detail))
            continue
        kept.append((m.facts[st.sid[s]].sid, f.sid, tuple(sorted(needs.items())), s not in st.crossed, False))
    st.owed = tuple(kept)
    return rest


def _specialised(m: Machine, st: State, f: Facts, fenced: list) -> list:
    """At an LDS-fence barrier of a function that is not aligned but whose barrier instances
    are paired (validate/hwwaves.py): an unproven in-flight access needs no drain when no
    other wave, after any barrier it may meet as this instance, may touch its bytes before its
    next barrier (validate/hwpublish.py `others_meet`)."""
    view = m.waves
    inst = f.inst
    pos = (view.blocks.index(inst.block), inst.block.instrs.index(inst))
    rest = []
    for s, needs, proven, detail in fenced:
        pf = m.facts[st.sid[s]]
        if proven or view.others_meet(pf.inst, "w" in pf.lds, pos):
            rest.append((s, needs, proven, detail))
    return rest


def _collect(m: Machine, st: State, f: Facts, report: "Report") -> None:
    """An LDS access another wave may run while an obligation's access is in flight."""
    view = m.waves
    writes = "w" in f.lds
    for psid, bsid, needs, same, _ in st.owed:
        pf = m.facts[psid]
        if not (writes or "w" in pf.lds):
            continue
        bf = m.facts[bsid]
        if view.other_wave_meets(pf.inst, f.inst, same, view.blocks.index(bf.inst.block)):
            report("barrier", -1, f"another wave's {f.inst.mnemonic} at line {f.inst.line} may touch its LDS "
                   f"bytes before the next barrier", dict(needs), False, at=bsid, psid=psid)


def _lds_order(engine: str) -> str:
    """The engine whose LDS order an access keeps: a FLAT access that reaches LDS is executed by
    the LDS unit in order with DS instructions (the assumption LLVM 22 makes too: it waits for
    neither order), every other engine is in order only with itself."""
    return ENG_DS if engine == ENG_FLAT else engine
