"""Target names -> `Target` objects: the supported cpus, their families, and the error a user
gets for anything else."""

from __future__ import annotations

from functools import lru_cache

from . import gfx9, gfx10, gfx11, gfx12, gfx1250, upstream
from .target import Target

_FAMILIES = ((gfx9.CPUS, gfx9.generation), (gfx10.CPUS, gfx10.generation), (gfx11.CPUS, gfx11.generation),
             (gfx12.CPUS, gfx12.generation), (gfx1250.CPUS, gfx1250.generation))

#: every cpu name accepted (the issue's list first: those are tested against LLVM per target)
PRIMARY_TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1200", "gfx1201", "gfx1250")
SUPPORTED_TARGETS = tuple(cpu for cpus, _ in _FAMILIES for cpu in cpus)
MODELS = ("hw", "upstream")


class UnsupportedTarget(ValueError):
    """An unknown target name, or a model the target does not have; the message lists the
    supported targets."""


def canonical(name: str) -> str:
    """`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-` -> `gfx942`; lower case, no features."""
    n = name.strip().strip('"').lower()
    if "--" in n:
        n = n.rsplit("--", 1)[1]
    n = n.split(":", 1)[0]
    return n


def xnack_on(name: str) -> bool:
    """The target id turns XNACK on (`gfx1250:xnack+`); `xnack-` or no setting: off."""
    return ":xnack+" in name.replace(" ", "").lower()


def build_target(name: str, model: str = "hw") -> Target:
    cpu = canonical(name)
    if model not in MODELS:
        raise UnsupportedTarget(f"unknown model '{model}' (models: {', '.join(MODELS)})")
    for cpus, make in _FAMILIES:
        if cpu in cpus:
            if model == "upstream":
                if make is not gfx1250.generation:
                    raise UnsupportedTarget(
                        f"the upstream model exists for gfx1250 only, not for '{cpu}' (use the hardware model)")
                return Target(cpu, upstream.generation(), "upstream", upstream.semantics)
            if make is gfx1250.generation:
                return Target(cpu, make(cpu, xnack_on(name)), "hw")
            return Target(cpu, make(cpu), "hw")
    raise UnsupportedTarget(f"unsupported target '{name}': supported targets are "
                            f"{', '.join(SUPPORTED_TARGETS)}")


@lru_cache(maxsize=None)
def cached_target(name: str, model: str) -> Target:
    """`build_target`, once per (canonical name with ``:xnack+``, model): targets are immutable."""
    return build_target(name, model)
