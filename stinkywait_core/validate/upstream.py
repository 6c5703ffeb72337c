"""WaitCntValidationCheckPass: does the IR already hold every wait it needs?

Re-runs the dataflow to a fixed point treating the existing waits as the only drains (no
planning), then one reporting sweep: the first violation per counter is reported with the
consumer, its block, the producer nearest the tail of that counter's queues and the wait
that is missing (upstream-algorithm.md s.17).  Tensor RAW policy: any barrier or NumWaves 1.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

from ..analysis import classify as K
from ..analysis.cfg import compute_cfg
from ..analysis.ssa import build_use_def_chain, remove_phis
from ..ir import Block, Function, Instruction
from ..results import Options
from ..waitcnt.dataflow import WaitDataflow
from ..waitcnt.state import CounterEmitState, DataflowState


class _ValidationDataflow(WaitDataflow):
    """The solver with planning switched off: existing waits are the only trims."""

    def raw_needs_wait(self, c, inf):  # no cluster exclusion in the validator
        return (inf.tensor_raw or inf.fence) if c == K.CK_TENSOR else True

    def walk(self, bb: Block, state: DataflowState,
             on_consumer: Callable[[Instruction, DataflowState], None] | None = None) -> None:
        """Existing waits trim, everything else may be checked, then issues."""
        emit = [CounterEmitState() for _ in range(K.CK_COUNT)]
        for inst in bb.instrs:
            if inst.is_phi or inst.is_label:
                continue
            inf = self.info[inst]
            if inf.is_wait:
                self._credit(inst, state, emit)
                continue
            if on_consumer is not None:
                on_consumer(inst, state)
            self._produce(inst, inf, state, emit, None)

    def transfer_block(self, bb: Block, state: DataflowState):
        self.walk(bb, state)
        return []


def validation_check(func: Function, options: Options) -> list[str]:
    """Violation lines (`  MISSING: ...`), empty when every dependency is drained."""
    cfg = compute_cfg(func)
    build_use_def_chain(func, cfg)
    opts = options.replace(enable_tensor_descriptor_war=False, count_from_instance="oldest",
                   represent_empty_paths=False)
    df = _ValidationDataflow(func, cfg, opts)
    df.solve()
    lines: list[str] = []
    reported: set[int] = set()
    for bb in cfg.rpo:

        def report(inst: Instruction, st: DataflowState, bb: Block = bb) -> None:
            req, _ = df.compute_required_waits(inst, st)
            for c in range(K.CK_COUNT):
                if req[c] == -1 or c in reported:
                    continue
                reported.add(c)
                prod = _nearest_tail(st, c)
                lines.append(f"  MISSING: consumer '{inst.mnemonic}' in ^{bb.name} uses async producer "
                             f"'{prod.mnemonic if prod else '?'}' still in flight "
                             f"(missing {K.WAIT_MNEMONIC[c]} {req[c]})")

        df.walk(bb, df.entry_state[bb].copy(), report)
    remove_phis(func)
    return lines


def _nearest_tail(st: DataflowState, c: int) -> Instruction | None:
    for q in st.queues[c]:
        if q.ops:
            return q.ops[-1].op
    return None
