"""The hardware model's hazards: what an instruction must wait for before it issues.

Written from the hardware's side (docs/decisions.md 28-36), per requirement:

* RAW: a register it reads is still to be written by an in-flight op (the SSA sources); and,
  before an op of an out-of-order timeline, the older op of that timeline one of the next few
  instructions reads (`InstInfo.ahead`, docs/decisions.md 49: its wait there would also wait
  for the new op);
* WAW: a register it writes is still to be written by an in-flight op, unless both writes land
  in issue order (same `order_class`: LDS returns, same-type VMEM on gfx9-11);
* WAR: a register it writes is still read by an in-flight op's source lock (gfx1250 address
  translation on xcnt, gfx9-11 export/GDS data on expcnt); a VMEM op overwriting the source
  of an older VMEM op needs no wait (translations complete in order), and an op already
  retired on its result counter has been translated;
* LDS between engines (DS, tensor, async, LDS DMA): a write while another engine's access to
  overlapping LDS is in flight, or a read while another engine's write is; the engines are
  each in order within themselves.  A barrier publishes: every own in-flight LDS access
  overlapping its tokens completes before it, unless (untagged side) no other wave may touch
  its bytes before the next barrier (waitcnt/publish.py).  Overlap is decided by memtokens; an untagged
  side may overlap anything (the "fallback" class: disjointness not proven);
* the ISA: timelines to drain before an instruction (cache invalidates, atomics on gfx1250,
  `s_barrier` without back-off), right after one (GWS), and before a return (the calling
  convention: the caller may read anything but stores; a tail call is not a return,
  `analysis/boundaries.py`);
* the calling convention at a callable function's first instruction: what the caller may have
  left in flight (`facts.entry_timelines`) is drained there.

Each contribution names its rule and the producer, for provenance, hints and the hover.
"""

from __future__ import annotations

from ..targets.model import CK_STORE, CK_TENSOR, CK_XV, CTL_RETURN, ENG_DS, ENG_FLAT

#: the LDS access order an engine is in: FLAT reaching LDS is executed in order with DS (LLVM
#: waits for neither pair; docs/decisions.md 34)
_ORDER_ENGINE = {ENG_FLAT: ENG_DS}
from .state import count_from, new_spec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from ..ir import Instruction
    from .contribution import Contribution
    from .facts import InstInfo

    class SolverView(Protocol):
        """What the rules read of the solver (waitcnt/dataflow.py's WaitDataflow), named here
        so that this module imports nothing above it."""

        info: dict
        newest: bool
        track_trips: bool
        xcnt_cks: frozenset
        lds_cks: tuple
        lds_engines: dict

        def drain(self, c: int, n: int) -> int: ...
        def contribution(self, rule: str, w: int, op=None, pred=None, n: int = 0,
                         trips: int = 0) -> Contribution: ...
        def trips_of(self, q, op) -> int: ...
        def still_in_flight(self, op, queues: list) -> bool: ...
        def lds_disjoint(self, a, b, same_trip: bool) -> bool: ...

RULE_CLASS = {"raw": "RAW", "waw": "WAW", "war-xcnt": "WAR", "war-exp": "WAR", "lds-raw": "RAW",
              "lds-waw": "WAW", "lds-war": "WAR", "barrier": "barrier", "fallback-lds": "fallback",
              "fallback-barrier": "fallback", "return": "return", "callee-entry": "callee entry", "isa-drain": "ISA", "clause": "clause", "raw-ahead": "RAW",
              "widening": "widening"}


def _overlap(a, b) -> tuple[bool, bool]:
    """(may overlap, proven by tokens) for two memtoken lists (None: untagged)."""
    if a is None or b is None:
        return True, False
    if not a or not b:
        return False, True
    for t in a:
        if t in b:
            return True, True
    return False, True


def hw_required(df: "SolverView", inst: "Instruction", inf: "InstInfo", queues: list, record: bool):
    """(required wait per timeline, contributions per timeline or None) under the hardware model."""
    req = new_spec()
    why = [[] for _ in range(len(req))] if record else None
    drain = df.drain
    newest = df.newest

    def tighten(c: int, w: int, rule: str, op=None, pred=None, n: int = 0, trips: int = 0) -> None:
        if w < 0:
            return
        if req[c] == -1 or w < req[c]:
            req[c] = w
        if why is not None:
            why[c].append(df.contribution(rule, w, op, pred, n, trips))

    # RAW through registers (SSA sources, one pair per timeline the producer completes on)
    for src, c in inf.mem_srcs:
        if c == CK_TENSOR and not inf.tensor_raw:
            continue
        for q in queues[c]:
            n = count_from(q, src, newest)
            if n > 0:
                tighten(c, drain(c, n), "raw", src, q.pred, n, df.trips_of(q, src))
    # an out-of-order op issued right before a consumer of an older op of its timeline: that
    # consumer's wait (count 0) would wait for this op too; waiting here, before it issues,
    # costs only what the older op has left (its consumer then waits for nothing)
    for src, c in inf.ahead:
        for q in queues[c]:
            n = count_from(q, src, newest)
            if n > 0:
                tighten(c, drain(c, n), "raw-ahead", src, q.pred, n, df.trips_of(q, src))
    if inf.simple and not record:
        return req, None
    # WAW: the newest in-flight writer of a register this writes, per timeline
    if inf.waw:
        for c in inf.waw_cks:
            for q in queues[c]:
                n, p = _newest(q, inf.waw)
                if n:
                    tighten(c, drain(c, n), "waw", p, q.pred, n, df.trips_of(q, p) if why is not None else 0)
    # WAR on source locks: the newest in-flight reader of a register this writes
    if inf.war:
        cands = inf.war
        for c in inf.war_cks:
            rule = "war-xcnt" if c in df.xcnt_cks else "war-exp"
            for q in queues[c]:
                if c == CK_XV or rule == "war-exp":
                    n, p = _newest(q, cands)
                    # retired on its result counter means translated (and on the in-order
                    # VMEM timeline, every older translation with it)
                    if n and rule == "war-xcnt" and not df.still_in_flight(p, queues):
                        n = 0
                else:  # out of order: any in-flight reader not yet retired on its counter
                    n, p = 0, None
                    for e in q.ops:
                        if e.op in cands and df.still_in_flight(e.op, queues):
                            n, p = 1, e.op
                            break
                if n:
                    tighten(c, drain(c, n), rule, p, q.pred, n, df.trips_of(q, p) if why is not None else 0)
    # LDS between engines, and barriers publishing LDS
    if inf.lds or inf.fence:
        _lds_scan(df, inst, inf, queues, tighten)
    # the ISA's drains
    if inf.drain or inf.after:
        for c in inf.drain + inf.after:
            if any(q.ops or q.sat for q in queues[c]):
                tighten(c, 0, "isa-drain")
    # a callable function's entry: the caller's ops may still be in flight, whatever the queues
    # (which start empty) say; the caller relied on this wait (docs/decisions.md 36)
    for c in inf.entry:
        tighten(c, 0, "callee-entry")
    if inf.control == CTL_RETURN:
        for c in df.cks:
            if c != CK_STORE and any(q.ops or q.sat for q in queues[c]):
                tighten(c, 0, "return")
    return req, why


def _newest(q, cands) -> tuple[int, object]:
    """(countFrom, op) of the newest op of `cands` in flight in queue `q` ((0, None): none)."""
    insts = q.insts
    best, bp = 0, None
    if len(cands) <= 12:
        if not insts and not q.sat:
            return 0, None
        rev = insts[::-1]
        for p in cands:
            try:
                n = rev.index(p) + 1
            except ValueError:
                if p in q.sat and not best:
                    best, bp = 64, p
                continue
            if not best or n < best or best == 64:
                best, bp = n, p
        return best, bp
    for idx in range(len(insts) - 1, -1, -1):
        if insts[idx] in cands:
            return len(insts) - idx, insts[idx]
    for p in q.sat:
        if p in cands:
            return 64, p
    return 0, None


def _lds_scan(df: "SolverView", inst: "Instruction", inf: "InstInfo", queues: list, tighten) -> None:
    """In-flight LDS accesses of other engines that conflict with this one (see module doc)."""
    fence = inf.fence
    writes = fence or "w" in inf.lds
    toks = inf.tokens
    info = df.info
    engine = _ORDER_ENGINE.get(inf.engine, inf.engine)
    for c in df.lds_cks:
        if not fence and all(_ORDER_ENGINE.get(e, e) == engine for e in df.lds_engines[c]):
            continue  # only this engine's own accesses there: ordered
        for q in queues[c]:
            ops = q.ops
            for idx in range(len(ops) - 1, -1, -1):
                e = ops[idx]
                p = e.op
                if p is inst:
                    continue
                pi = info[p]
                plds = pi.lds
                if not plds or c not in pi.results:
                    continue
                if fence:
                    if pi.engine == ENG_FLAT:
                        continue  # FLAT's LDS reach is a possibility, not published (decisions 34)
                elif _ORDER_ENGINE.get(pi.engine, pi.engine) == engine:
                    continue  # one engine's LDS accesses are ordered (FLAT goes with DS)
                pw = "w" in plds
                if not (writes or pw):
                    continue  # two reads
                # (a tensor fill still in flight at a read of this wave has met no barrier that
                # published it, whatever NumWaves is: a barrier drains it first, decisions 32)
                hit, proven = _overlap(toks, pi.tokens)
                if not hit:
                    continue
                same_trip = df.track_trips and e.trips == 0
                if not proven and not fence and df.lds_disjoint(p, inst, same_trip):
                    continue  # the addresses prove them apart (analysis/lds_facts.py)
                if not proven and fence and df.lds_published(p, inst, same_trip):
                    continue  # no other wave touches its bytes before the next barrier (publish.py)
                n = len(ops) - idx
                if fence:
                    rule = "barrier" if proven else "fallback-barrier"
                else:
                    rule = ("lds-waw" if pw and writes else "lds-raw" if pw else "lds-war") if proven \
                        else "fallback-lds"
                tighten(c, df.drain(c, n), rule, p, q.pred, n, e.trips)
                break
