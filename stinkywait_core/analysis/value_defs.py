"""The reaching definitions the value analysis's on-demand walk makes, besides instructions.

Shared by `value_flow` (which makes them) and `exec_mask` (which reads them back when it
asks where a saved EXEC came from); kept in their own module so neither imports the other.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..ir import Block

Key = tuple

#: reaching definition "the value the register had when the function started"
ENTRY = object()


class CalleeEntry:
    """Reaching definition "the state at the entry of a subroutine this function calls"."""

    __slots__ = ("block",)

    def __init__(self, block: "Block") -> None:
        self.block = block


class VPhi:
    """A join made by the on-demand walk: the block, the unit, (pred, def) operands
    (pred None: the function's entry edge); `forward` when all operands were one def."""

    __slots__ = ("block", "key", "ops", "forward")

    def __init__(self, block: "Block", key: Key) -> None:
        self.block = block
        self.key = key
        self.ops: list = []
        self.forward: Any = None

    def __repr__(self) -> str:
        return f"<vphi {self.key} @{self.block.name}>"
