"""Contribution: why a timeline needs a wait at an anchor (the provenance record).

Made by the hazard rules (hazards.py, rules.py) and read by finalizePlan, the pipeline's
provenance and the server's hover; it lives below all of them so none imports another for it.
"""

from __future__ import annotations

from ..ir import Block, Instruction
from ..ir.records import Record


class Contribution(Record):
    """Why a timeline needs a wait at an anchor: one producer `op` (or a fallback, None) and
    its depth: `rule`, the `wait` it asks for, the predecessor queue `pred` it was found in,
    its `count_from` and `trips` back."""

    __slots__ = ("rule", "wait", "op", "pred", "count_from", "trips")

    def __init__(self, rule: str, wait: int, op: Instruction | None = None, pred: Block | None = None,
                 count_from: int = 0, trips: int = 0):
        self.rule, self.wait, self.op, self.pred, self.count_from, self.trips = rule, wait, op, pred, count_from, trips
