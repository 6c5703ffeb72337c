"""Overflow reports: an in-order timeline that held more than kMaxInFlight=64 ops.

One warning per (block, in-order timeline), naming the op pushed out of the window and the
one that pushed it, in a kernel writer's words ("more than 64 VMEM load ops may be in flight
on loadcnt in the block after line 5 ... the count capped at 62"), or upstream's under its
model (`stinkywait-opt`); the counter names as JSON, the editor and upstream's diagnostics
spell them.
"""

from __future__ import annotations

from ..diagnostics import WARNING, Diagnostic, Related
from ..ir import Block, Instruction
from ..ir.block_names import block_name
from ..targets.model import CK_ASYNC, CK_DS, CK_KM, CK_TENSOR, TIMELINE_NAMES


class OverflowReports:
    """The overflow warnings of a solve (see the module doc)."""

    @staticmethod
    def _site(sites: dict, bb: Block, c: int, inst: Instruction, sat: Instruction) -> None:
        """An overflow event (the first per block and counter wins)."""
        sites.setdefault((bb, c), (inst, sat))

    def _report_overflow(self) -> None:
        """One warning per (block, in-order timeline): the op pushed out and the one that did it."""
        self.overflow_sites = {k: v for bb in self.rpo for k, v in self.block_sites.get(bb, {}).items()}
        for (bb, c), (inst, pushed) in self.overflow_sites.items():
            if not self.in_order[c]:
                continue
            sp = inst.span
            psp = pushed.span
            related = [Related(psp.line, psp.col, f"{pushed.mnemonic}: more than 64 ops follow it here; "
                               f"waited for with the capped count")] if psp else []
            at = f" (line {psp.line})" if psp else ""
            if self.hw:  # in a kernel writer's words, the block as the source names it
                message = (f"more than 64 {self.target.op_kind(TIMELINE_NAMES[c], order=False)} ops may be in "
                           f"flight on {self.target.counter_of.get(c, '?')} in {block_name(self.func, bb)}: "
                           f"{pushed.mnemonic}{at} and older ones are waited for with the count capped at "
                           f"{self.max_wait[c]} (confirm no deeper drain is needed)")
            else:  # stinkywait-opt: upstream's own report (research/upstream-algorithm.md)
                message = (f"[WaitDataflow] warning: block ^{bb.name} counter {counter_diag_name(self.target, c)} "
                           f"exceeds kMaxInFlight=64: {pushed.mnemonic}{at} is tracked at the maximum wait count "
                           f"{self.max_wait[c]} (confirm no deeper drain is needed)")
            self.diagnostics.append(Diagnostic(
                WARNING, "overflow", message,
                sp.line if sp else 1, sp.col if sp else 1, related=related, function=self.func.name,
                data={"block": bb.name, "counter": counter_short_name(self.target, c),
                      "pushed_out_line": psp.line if psp else None}))


def counter_short_name(target, c: int) -> str:
    """A timeline's counter as the JSON and the editor name it ("ds", "load", "x", "lgkm")."""
    name = target.counter_of.get(c, TIMELINE_NAMES[c])
    return name[:-3] if name.endswith("cnt") else name


def counter_diag_name(target, c: int) -> str:
    """Upstream's diagnostic spelling ("ds (dscnt)", "buffer (loadcnt)")."""
    upstream = {CK_DS: "ds (dscnt)", 1: "buffer (loadcnt)", CK_KM: "km (kmcnt)", CK_TENSOR: "tensor (tlcnt)",
                CK_ASYNC: "async (asynccnt)"}
    if target.model == "upstream" and c in upstream:
        return upstream[c]
    return f"{TIMELINE_NAMES[c]} ({target.counter_of.get(c, '?')})"
