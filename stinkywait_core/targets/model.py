"""The vocabulary of the machine model: timelines, hardware counters, instruction semantics.

Why timelines and not counters.  A hardware wait counter (``lgkmcnt`` on gfx9, ``xcnt`` on
gfx1250, ...) counts several *kinds* of operation.  Within one kind the hardware completes in
issue order (LDS ops, VMEM loads, ...), across kinds it does not, and some kinds complete out
of order even among themselves (scalar loads).  LLVM's SIInsertWaitcnts keeps one timeline per
counter and falls back to a wait of 0 as soon as two kinds are pending on it (its own header
TODO).  We keep one FIFO per kind, a *timeline*: to retire op P of an in-order timeline T counted
on counter C, ``C <= n`` suffices where n is the number of T-ops issued after P that may still be
in flight, because while P is outstanding so are those n younger T-ops, and the other kinds on
C only add to the count.  Out-of-order timelines are retired only by ``C == 0``.

The timeline indices are universal (the same number means the same kind on every target), so
per-instruction facts and queue states never need translating; a target activates the subset it
has and maps each to one of its hardware counters.  The first five are upstream's CounterKind
order (CK_DS .. CK_ASYNC), which is also the upstream model's whole set.

Everything here is plain data: the per-target tables (`targets/gfx*.py`) build it, the pass
(`waitcnt/`), the hardware checker (`validate/`) and the editors consume it.
"""

from __future__ import annotations

from collections import namedtuple

# --- timelines (universal indices) -----------------------------------------------------------

CK_DS, CK_LOAD, CK_KM, CK_TENSOR, CK_ASYNC = 0, 1, 2, 3, 4
#: VMEM stores and non-returning atomics (storecnt / vscnt); on gfx9 stores are counted in order
#: with the loads on vmcnt, so the gfx9 table puts them on CK_LOAD instead
CK_STORE = 5
#: image sample / gather / msaa loads (samplecnt, gfx12 only; vmcnt in order before)
CK_SAMPLE = 6
#: image BVH intersection (bvhcnt, gfx12 only)
CK_BVH = 7
#: gfx1250 address translation of VMEM ops (xcnt): in order
CK_XV = 8
#: gfx1250 address translation of SMEM ops (xcnt): out of order
CK_XS = 9
#: exports and GDS source locks (expcnt)
CK_EXP = 10
#: a gfx9 generic FLAT access: counted on vmcnt *and* lgkmcnt, out of order on both
CK_FLATV = 11
CK_FLATL = 12
#: GDS / GWS / ordered-count operations (lgkmcnt / dscnt), out of order with LDS
CK_GDS = 13
CK_COUNT = 14

TIMELINE_NAMES = ("ds", "load", "km", "tensor", "async", "store", "sample", "bvh", "xcnt",
                  "xcnt-smem", "exp", "flat-vm", "flat-lgkm", "gds")

#: how a timeline's requirement reads in a diagnostic ("ds (dscnt)")
TIMELINE_KINDS = ("LDS", "vector memory load", "scalar memory", "tensor", "async LDS copy",
                  "vector memory store", "image sample", "BVH", "VMEM address translation",
                  "SMEM address translation", "export/GDS source lock", "FLAT (VMEM side)",
                  "FLAT (LDS side)", "GDS")

#: the kind of op a timeline holds, as a kernel writer names it (the editors and the CLI mark
#: each op of a shared counter with it: "s_load_dwordx4 L9 (SMEM, out of order)")
TIMELINE_LABELS = ("LDS", "VMEM load", "SMEM", "tensor", "async copy", "VMEM store", "sample", "BVH",
                   "VMEM", "SMEM", "export", "FLAT", "FLAT", "GDS")

K_UNUSED = -1


class Counter(namedtuple("Counter", "name max_value max_wait")):
    """One hardware wait counter of a target.

    `name`: the counter's name as the ISA spells it (``loadcnt``, ``vmcnt``, ``xcnt``...).
    `max_value`: the largest value its wait field encodes (63, 15, 7, 31).  `max_wait`: the
    largest value we ever emit for a wait that must retire something: one less than
    `max_value`, because a counter sitting at its maximum may stand for more ops than it can
    show (LLVM's `determineWait` never emits more than max - 1 either).  The upstream model
    keeps upstream's 63.
    """

    __slots__ = ()


# --- instruction semantics ------------------------------------------------------------------

# LDS access kinds
LDS_NONE, LDS_READ, LDS_WRITE, LDS_RW = "", "r", "w", "rw"
# LDS engines (accesses of one engine are ordered among themselves, different engines are not)
ENG_DS, ENG_TENSOR, ENG_ASYNC, ENG_DMA, ENG_FLAT = "ds", "tensor", "async", "dma", "flat"
# control transfer kinds
CTL_NONE, CTL_BRANCH, CTL_CBRANCH, CTL_JUMP, CTL_CALL, CTL_RETURN, CTL_ENDPGM, CTL_TRAP = (
    "", "branch", "cbranch", "jump", "call", "return", "endpgm", "trap")
# barrier kinds
BAR_NONE, BAR_FULL, BAR_SIGNAL, BAR_WAIT, BAR_OTHER = "", "barrier", "signal", "wait", "other"


class InstrSem(namedtuple("InstrSem", (
        "mnemonic", "family", "pushes", "locks", "late_dsts", "order_class", "lds", "engine",
        "control", "barrier", "wait", "drain_before", "drain_after", "mem_model", "note"),
        defaults=("", (), (), False, None, LDS_NONE, "", CTL_NONE, BAR_NONE, False, (), (), "", ""))):
    """What one instruction does, as far as waits are concerned, on one target.

    `family`: encoding family ("ds", "global", "scratch", "flat", "buffer", "image", "smem",
    "tensor", "async", "export", "message", "barrier", "wait", "branch", "salu", "valu",
    "other", ...).
    `pushes`: the timelines the instruction increments when it issues; it is in flight on
    each until retired there.  Empty: not asynchronous.  A result is usable only once the op is
    retired on *every* timeline it pushes (a gfx12 FLAT load: CK_LOAD and CK_DS).
    `locks`: timelines on which the instruction keeps reading its *source* registers after it
    issued (gfx1250 xcnt, gfx9-11 expcnt): overwriting such a register before the op is retired
    there is a write-after-read hazard.
    `late_dsts`: the destination registers are written when the op completes, not at issue.
    `order_class`: two late writes of the same register by ops of the same class land in issue
    order (no WAW wait between them); None: no such guarantee (gfx12+ VMEM).
    `lds` / `engine`: the LDS access ("r", "w", "rw") and the engine that performs it.
    `control`: how it transfers control ("branch", "cbranch", "jump", "call", "return",
    "endpgm", "trap").
    `barrier`: "barrier" (s_barrier), "signal", "wait" (split barriers), "other" (barrier
    state, init, leave...).
    `wait`: a wait-count instruction (decoded by `Target.decode_wait`).
    `drain_before` / `drain_after`: timelines the hardware or the ISA requires drained to 0
    before / right after this instruction (``buffer_wbinvl1`` needs vmcnt 0 before; GWS needs
    lgkmcnt 0 after).
    `mem_model`: "inv", "wb", "wbinv" for cache invalidate / write-back instructions.
    `note`: why the entry is what it is, when that is not obvious (shown in the hover).
    """

    __slots__ = ()

    @property
    def is_async(self) -> bool:
        return bool(self.pushes)


#: the semantics of an instruction that touches no counter, no LDS and no control flow
def plain(mnemonic: str, family: str) -> InstrSem:
    return InstrSem(mnemonic, family)
