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
  itself).  A tensor fill followed by a read is required only under the NumWaves policy
  (`tensor_raw_required`: one wave per workgroup, or the "always" policy), because with several
  waves the fill is meant for other waves and the barrier publishes it;
* barrier: at an LDS-fence barrier every own in-flight LDS access overlapping its region
  (the barrier publishes LDS to the other waves);
* isa-drain: the table's drain before an instruction (cache invalidates, gfx1250 atomics,
  `s_barrier` without back-off) and right after one (GWS, ordered count);
* return: anything but store-like ops in flight at a return (the caller may read it).
"""

from __future__ import annotations

from ..targets.model import CK_XV, ENG_TENSOR, CTL_RETURN
from .hwfacts import Facts
from .hwstate import Machine, State
from .lds_overlap import LdsRegionModel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

    Report = Callable[[str, int, str, dict, bool], None]

RULES = ("raw", "waw", "war", "lds-raw", "lds-waw", "lds-war", "barrier", "isa-drain", "return")


def unit_name(u: tuple[str, int]) -> str:
    return f"{u[0]}{u[1]}"


def check_instruction(m: Machine, st: State, f: Facts, regions: LdsRegionModel, tensor_raw_required: bool,
                      report: "Report") -> None:
    """Report every hazard of `f` on the state `st` (see the module docstring)."""
    facts = m.facts
    writers = st.writers
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
            if not pf.store_like:
                cands.append((s, m.need(st, s, pf.result_mask or pf.lock_mask), True))
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
        return
    writes = "w" in f.lds
    fenced = []
    crossed = st.crossed
    for s in live:
        pf = facts[st.sid[s]]
        if pf.engine == f.engine and not f.fence:
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
            if pf.engine == ENG_TENSOR and not tensor_raw_required:
                continue  # NumWaves policy
            report("lds-raw", s, detail, needs, proven)
        elif writes:
            report("lds-war", s, detail, needs, proven)
    if fenced:
        _report_strictest("barrier", "", fenced, report)
