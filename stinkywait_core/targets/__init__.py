"""The machine model, one room per target family (gfx9, gfx10, gfx11, gfx12, gfx1250).

`get_target(name, model="hw")` is the entry point; see `model.py` for the vocabulary
(timelines, counters, instruction semantics) and `table.py` for the instruction table.
"""

from __future__ import annotations

from .model import CK_COUNT, TIMELINE_NAMES, Counter, InstrSem
from .registry import (MODELS, PRIMARY_TARGETS, SUPPORTED_TARGETS, UnsupportedTarget, build_target,
                       cached_target, canonical, xnack_on)
from .target import Target


def get_target(name: str, model: str = "hw") -> Target:
    """The `Target` for a cpu name (raises `UnsupportedTarget` with the supported list)."""
    cpu = canonical(name)
    return cached_target(cpu + ":xnack+" if xnack_on(name) else cpu, model)


__all__ = ["CK_COUNT", "TIMELINE_NAMES", "Counter", "InstrSem", "MODELS", "PRIMARY_TARGETS", "SUPPORTED_TARGETS",
           "Target", "UnsupportedTarget", "build_target", "canonical", "get_target", "xnack_on"]
