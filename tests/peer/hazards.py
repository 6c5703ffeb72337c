"""Is our output register-safe for an operation LLVM retires earlier than we do?

The bound analysis (`asm_compare`) only counts; it says "LLVM waits more here than we do".
That is not yet a bug: LLVM's waits are register-based but conservative (one timeline per
counter, joins aligned by count, register-slot aliasing), and the brief lets such LLVM
over-waits be excused when the ISA says so.  This module makes that argument, per operation:

* **survival**: may an instance of op P still be in flight on counter c at a program point,
  under our waits?  Forward dataflow over the skeleton whose value is the set of possible
  counts k of younger ops of P's timeline issued since P (a bit mask, capped at 63).  A wait
  ``c <= n`` keeps only k < n when the timeline completes in order (P in flight means P and
  its k younger same-kind ops are, so k + 1 <= n), and nothing when it does not and n > 0
  keeps all; ``n = 0`` always retires P.  A call retires it (the callee drains all but stores).
* **dependency**: does instruction J need P complete?  J reads or writes a register P writes
  (RAW/WAW); on xcnt, J writes a register P reads (WAR on its sources); P fills LDS and J is a
  DS access or a barrier; J returns (LLVM's calling convention: all but stores drained); J is a
  cache write-back / invalidate, which the ISA wants issued with no VMEM access in flight
  (LLVM drains vmcnt/loadcnt before them); P is a scalar load and J a vector store or atomic
  (it may write the memory P still reads: LLVM's SLoadAddresses rule).  An instruction whose
  operands are unknown depends on everything.  Through LDS: DS accesses are ordered among
  themselves, but not with the other engines that touch LDS (DMA, async, tensor) nor with other
  waves after a barrier, so a DS write and a later fill, tensor store or barrier depend, as do a
  DS read and a later fill, and a fill and any later DS access, engine access or barrier --
  unless, for a pair that is not a barrier, the LDS address analysis proves their bytes apart
  on our output (`lds_oracle`, docs/decisions.md 41).

P is *safe* when no J that depends on P is reached while P may be in flight.  An LLVM wait is
excused under the rule ``no-dependency`` when every op that may be in flight there under our
waits is safe: then our program never needs what LLVM's wait retires, anywhere.
"""

from __future__ import annotations

import re
from typing import Any

from .asm_compare import EXITS, BoundAnalysis, Line
from .machine import STORE_ONLY_COUNTERS

_FULL = (1 << 64) - 1
_TOP = 1 << 63
_PSEUDO = ("LDS", "SCC", "null")
_RETURNS = frozenset({"s_setpc_b64", "s_set_pc_i64"})
#: cache maintenance: issued only with the vector memory counters drained
_CACHE_OPS = ("buffer_wbinvl1", "buffer_gl0_inv", "buffer_gl1_inv", "buffer_inv", "buffer_wbl2",
              "buffer_wb", "global_inv", "global_wb", "s_dcache_wb")
_VMEM_COUNTERS = frozenset({"vmcnt", "vscnt", "loadcnt", "storecnt", "samplecnt", "bvhcnt"})
_VMEM_WRITE = ("global_store", "global_atomic", "flat_store", "flat_atomic", "buffer_store",
               "buffer_atomic", "scratch_store")


def _units(ops: list[Any]) -> frozenset[tuple[str, int]]:
    out: set[tuple[str, int]] = set()
    for op in ops:
        kind = getattr(op, "kind", None)
        if kind is None or kind in _PSEUDO or not hasattr(op, "units"):
            continue
        out.update(op.units())
    return frozenset(out)


_LDS_WORD = re.compile(r"(?:^|[\s,])lds(?:$|[\s,])")


def _engine_lds(ln: Line, ins: Any) -> bool:
    """An LDS access by an engine other than DS (fills, and tensor/async stores from LDS)."""
    mn = ln.mnemonic
    return _fills_lds(ln, ins) or mn.startswith("tensor_store_from_lds") or ("async" in mn and "lds" in mn)


def _is_dma(ln: Line, ins: Any) -> bool:
    """A VMEM load that fills LDS through DMA (not async, not tensor)."""
    mn = ln.mnemonic
    return _fills_lds(ln, ins) and not mn.startswith("tensor") and "async" not in mn


def _ds_writes_lds(mn: str) -> bool:
    return mn.startswith("ds_") and not mn.startswith(("ds_load", "ds_read", "ds_bpermute", "ds_permute",
                                                       "ds_swizzle", "ds_nop"))


def _fills_lds(ln: Line, ins: Any) -> bool:
    """LDS DMA / async / tensor fills: ``*_load_lds_*``, ``*_async_to_lds_*``,
    ``tensor_load_to_lds``, and VMEM loads with the ``lds`` modifier (gfx9/gfx10)."""
    mn = ln.mnemonic
    if "lds" in mn and not mn.startswith("ds_") and ("load" in mn or "tensor" in mn):
        return True
    return bool(_LDS_WORD.search(ln.operands)) or (ins is not None and "lds" in getattr(ins, "mods", {}))


class Dependencies:
    """Survival and safety of ops in one function of our output."""

    def __init__(self, an: BoundAnalysis, waits: dict, insts: dict[int, Any], target: Any,
                 published: bool = False) -> None:
        # `published`: a barrier is not a dependency of an LDS fill or DS write in flight at it
        # (other waves' reads after it are the hardware checker's question: rule
        # cross-wave-publish); every other dependency still counts
        self.published = published
        self.an = an
        self.sk = an.sk
        self.waits = waits
        self.target = target
        self.insts = insts
        self.ins = [insts.get(ln.lineno) for ln in self.sk.insts]
        self.srcs = [_units(i.srcs) if i is not None else None for i in self.ins]
        self.dsts = [_units(i.dsts) if i is not None else None for i in self.ins]
        self.calls = [ln.mnemonic in ("s_swappc_b64", "s_swap_pc_i64", "s_call_b64") for ln in self.sk.insts]
        self._masks: dict[tuple[int, str], dict[tuple[int, int], int]] = {}
        self._safe: dict[tuple[int, str], tuple[bool, int]] = {}

    # --- survival ----------------------------------------------------------------------------
    def _timeline(self, p: int, c: str) -> Any:
        for t in self.an.push_idx[p][0]:
            tl = self.an.timelines[t]
            if self.an.tl_counter[tl] == c:
                return t
        return None

    def _wait(self, mask: int, lst: Any, c: str, in_order: bool) -> int:
        for _, dec in lst:
            if c in dec and mask:
                n = dec[c]
                if n <= 0:
                    mask = 0
                elif in_order and n < 64:
                    mask &= (1 << n) - 1
        return mask

    def masks(self, p: int, c: str) -> dict[tuple[int, int], int]:
        """slot -> mask of possible younger-op counts of op p on counter c (absent: 0)."""
        key = (p, c)
        if key in self._masks:
            return self._masks[key]
        t = self._timeline(p, c)
        rec: dict[tuple[int, int], int] = {}
        if t is None:
            self._masks[key] = rec
            return rec
        in_order = self.target_in_order(self.an.timelines[t])
        blocks = self.sk.blocks
        home = next(b.index for b in blocks if p in b.insts)
        inb = [0] * len(blocks)
        work, queued = [home], {home}
        drains = c not in STORE_ONLY_COUNTERS
        while work:
            b = work.pop()
            queued.discard(b)
            m = inb[b]
            blk = blocks[b]
            for k, i in enumerate(blk.insts):
                m = self._wait(m, self.waits.get((b, k), ()), c, in_order)
                if m:
                    rec[(b, k)] = rec.get((b, k), 0) | m
                if self.calls[i] and drains:
                    m = 0
                elif t in self.an.push_idx[i][0]:
                    m = ((m << 1) & _FULL) | (_TOP if m & _TOP else 0)
                if i == p:
                    m |= 1
            if m:
                rec[(b, len(blk.insts))] = rec.get((b, len(blk.insts)), 0) | m
            for s in blk.succs:
                e = m
                if blk.fallthrough == s:
                    e = self._wait(e, self.waits.get((b, len(blk.insts)), ()), c, in_order)
                if e | inb[s] != inb[s]:
                    inb[s] |= e
                    if s not in queued:
                        queued.add(s)
                        work.append(s)
        self._masks[key] = rec
        return rec

    def target_in_order(self, tl: Any) -> bool:
        f = getattr(self.target, "timeline_in_order", None)
        return bool(f(tl)) if f is not None else True

    def in_flight_at(self, p: int, c: str, slot: tuple[int, int]) -> bool:
        """May an instance of p be in flight on c when the instruction after `slot` issues?"""
        rec = self.masks(p, c)
        b, k = slot
        blocks = self.sk.blocks
        m = rec.get(slot, 0)
        if k < len(blocks[b].insts) or not m:
            return bool(m)
        t = self._timeline(p, c)
        in_order = self.target_in_order(self.an.timelines[t])
        m = self._wait(m, self.waits.get(slot, ()), c, in_order)
        seen, cur = {b}, b
        while m:
            nxt = blocks[cur].fallthrough
            if nxt is None or nxt in seen:
                break
            seen.add(nxt)
            m = self._wait(m, self.waits.get((nxt, 0), ()), c, in_order)
            if blocks[nxt].insts:
                break
            cur = nxt
        return bool(m)

    # --- dependency ----------------------------------------------------------------------------
    def depends(self, j: int, p: int, c: str) -> bool:
        ln = self.sk.insts[j]
        if ln.mnemonic in _RETURNS and c not in STORE_ONLY_COUNTERS:
            return True
        if ln.mnemonic in EXITS:
            return False
        if ln.mnemonic.startswith(_CACHE_OPS) and (c in _VMEM_COUNTERS or ln.mnemonic == "s_dcache_wb"):
            return True
        pm = self.sk.insts[p].mnemonic
        if pm.startswith(("s_load", "s_buffer_load")) and ln.mnemonic.startswith(_VMEM_WRITE):
            return True
        pd, ps, js, jd = self.dsts[p], self.srcs[p], self.srcs[j], self.dsts[j]
        if pd is None or js is None or jd is None or ps is None:
            return True
        if pd & js or pd & jd:
            return True
        if c == "xcnt" and ps & jd:
            return True
        pl, jm = self.sk.insts[p], ln.mnemonic
        if not jm.startswith("s_barrier") and self._lds_apart(p, j):
            return False  # the address analysis keeps their LDS bytes apart (lds_oracle)
        j_engine = _engine_lds(ln, self.ins[j])
        if self.published and jm.startswith("s_barrier"):
            return False
        if _fills_lds(pl, self.ins[p]) and (jm.startswith(("ds_", "s_barrier")) or j_engine) \
                and not (_is_dma(pl, self.ins[p]) and _is_dma(ln, self.ins[j])):
            # (two LDS DMA fills are one engine, in order with itself: docs/decisions.md 32)
            return True
        if _ds_writes_lds(pl.mnemonic) and (j_engine or jm.startswith("s_barrier")):
            return True
        if pl.mnemonic.startswith(("ds_load", "ds_read")) and _fills_lds(ln, self.ins[j]):
            return True
        return False

    def _lds_apart(self, p: int, j: int) -> bool:
        f = getattr(self.insts, "lds_disjoint", None)
        return f is not None and f(self.ins[p], self.ins[j])

    def safe(self, p: int, c: str) -> tuple[bool, int]:
        """(no dependent instruction is reached while p may be in flight, the first such line)."""
        key = (p, c)
        if key not in self._safe:
            res = (True, 0)
            rec = self.masks(p, c)
            for b in self.sk.blocks:
                for k, j in enumerate(b.insts):
                    if rec.get((b.index, k)) and self.depends(j, p, c):
                        res = (False, self.sk.insts[j].lineno)
                        break
                if res[0] and self._falls_off(b) and self.dsts[p] and self.in_flight_at(p, c, (b.index, len(b.insts))):
                    # a shader that returns values falls into its epilog, which reads them
                    res = (False, self.sk.insts[b.insts[-1]].lineno if b.insts else 0)
                if not res[0]:
                    break
            self._safe[key] = res
        return self._safe[key]

    def _falls_off(self, b: Any) -> bool:
        """Control leaves the function at the end of block b without an exit instruction."""
        if b.succs:
            return False
        return not b.insts or self.sk.insts[b.insts[-1]].mnemonic not in EXITS

    def producers(self, c: str) -> list[int]:
        return [i for i in range(len(self.sk.insts)) if self._timeline(i, c) is not None]

    def excuse(self, slot: tuple[int, int], c: str) -> tuple[bool, str]:
        """Is every op that may be in flight at `slot` on c safe?  (verdict, detail)."""
        live = [p for p in self.producers(c) if self.in_flight_at(p, c, slot)]
        for p in live:
            ok, line = self.safe(p, c)
            if not ok:
                return False, (f"line {self.sk.insts[p].lineno} ({self.sk.insts[p].mnemonic}) may still be "
                               f"in flight at line {line}, which depends on it")
        return True, f"{len(live)} ops in flight, none needed before it is retired"
