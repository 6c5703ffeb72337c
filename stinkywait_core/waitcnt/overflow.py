"""Overflow reports: an in-order timeline that held more than kMaxInFlight=64 ops.

One warning per (block, in-order timeline), naming the op pushed out of the window and the
one that pushed it; the counter names as JSON, the editor and upstream's diagnostics spell them.
"""

from __future__ import annotations

from ..diagnostics import WARNING, Diagnostic, Related
from ..ir import Block, Instruction
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
            related = [Related(psp.line, psp.col, f"{pushed.mnemonic} pushed out of the window; "
                               f"now tracked at depth 64")] if psp else []
            self.diagnostics.append(Diagnostic(
                WARNING, "overflow",
                f"[WaitDataflow] warning: block ^{bb.name} counter {counter_diag_name(self.target, c)} exceeds "
                f"kMaxInFlight=64: {pushed.mnemonic}"
                f"{f' (line {psp.line})' if psp else ''} is tracked at the maximum wait count "
                f"{self.max_wait[c]} (confirm no deeper drain is needed)",
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
