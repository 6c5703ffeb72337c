"""What the peer comparison needs to know about a target, behind one small interface.

The comparison (`asm_compare`) asks three questions of an instruction on a CPU: which
timelines it pushes (`pushes`), on which hardware counter each timeline is counted
(`counter_of`), and what a wait instruction enforces (`decode_wait`).  The answers come from
the lead's per-target table, `stinkywait_core.targets.get_target(cpu)`, when it exists; until
then from `_ClassifyTarget`, an adapter over today's `stinkywait_core.analysis.classify`
(gfx12 vocabulary, five timelines: DS, VMEM load, SMEM, tensor, async) with the counter names
of each generation.  `peer_target` picks one; nothing else in the harness knows which.

Wait decoding is the one part written here in full (`decode_wait_text`), per generation:
gfx9 / gfx10 / gfx11 `s_waitcnt` (named fields and raw immediates, different bit layouts),
`s_waitcnt_vscnt null, N` and the SOPK `s_waitcnt_<cnt> null, N` forms, and the gfx12 split
and combined `s_wait_*` forms.  A wait the target does not have enforces nothing there (it
does not assemble either, which the harness reports separately).  Facts: targets.md s.1.1 / 1.2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

CPUS = ("gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1200", "gfx1250")


def family_of(cpu: str) -> str:
    """'gfx9', 'gfx10', 'gfx11', 'gfx12' or 'gfx1250' for a CPU name."""
    if cpu.startswith("gfx125"):
        return "gfx1250"
    if cpu.startswith("gfx12"):
        return "gfx12"
    if cpu.startswith("gfx11"):
        return "gfx11"
    if cpu.startswith("gfx10"):
        return "gfx10"
    return "gfx9"


#: counter name -> largest value its wait field encodes, per family (targets.md s.1.1)
COUNTER_MAX: dict[str, dict[str, int]] = {
    "gfx9": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 15},
    "gfx10": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63, "vscnt": 63},
    "gfx11": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63, "vscnt": 63},
    "gfx12": {"loadcnt": 63, "samplecnt": 63, "bvhcnt": 7, "expcnt": 7, "dscnt": 63,
              "storecnt": 63, "kmcnt": 31},
    "gfx1250": {"loadcnt": 63, "dscnt": 63, "storecnt": 63, "kmcnt": 31, "xcnt": 63,
                "tensorcnt": 63, "asynccnt": 63},
}

#: counters that count stores only: a callee returns with these possibly non-zero (LLVM's
#: calling convention drains everything else before `s_setpc`, targets.md s.3.2)
STORE_ONLY_COUNTERS = frozenset({"vscnt", "storecnt"})


class PeerTarget(Protocol):
    """The part of the lead's `Target` the harness uses."""

    name: str
    counter_max: dict[str, int]
    counter_of: Any            # timeline -> counter name (indexable)
    source: str                # where the answers come from (printed with the figures)

    def pushes(self, inst: Any, mnemonic: str) -> tuple[int, ...]: ...
    def decode_wait(self, inst: Any, mnemonic: str, operands: str) -> dict[str, int] | None: ...
    def modelled_counters(self) -> frozenset[str]: ...
    def timeline_in_order(self, timeline: Any) -> bool: ...


# --- wait decoding ---------------------------------------------------------------------------

_FIELD = re.compile(r"(vmcnt|expcnt|lgkmcnt|vscnt)(?:_sat)?\s*\(\s*([^)]*)\)")
_SPLIT_WAITS = {"s_wait_loadcnt": "loadcnt", "s_wait_storecnt": "storecnt", "s_wait_dscnt": "dscnt",
                "s_wait_kmcnt": "kmcnt", "s_wait_samplecnt": "samplecnt", "s_wait_bvhcnt": "bvhcnt",
                "s_wait_expcnt": "expcnt", "s_wait_xcnt": "xcnt", "s_wait_tensorcnt": "tensorcnt",
                "s_wait_asynccnt": "asynccnt"}
_COMBINED_WAITS = {"s_wait_loadcnt_dscnt": ("loadcnt", "dscnt"),
                   "s_wait_storecnt_dscnt": ("storecnt", "dscnt")}
_SOPK_WAITS = {"s_waitcnt_vmcnt": "vmcnt", "s_waitcnt_expcnt": "expcnt",
               "s_waitcnt_lgkmcnt": "lgkmcnt", "s_waitcnt_vscnt": "vscnt"}
WAIT_MNEMONICS = frozenset(_SPLIT_WAITS) | frozenset(_COMBINED_WAITS) | frozenset(_SOPK_WAITS) | {"s_waitcnt"}


def _int(text: str) -> int | None:
    try:
        return int(text.strip(), 0)
    except ValueError:
        return None


def _legacy_layout(family: str, imm: int) -> dict[str, int]:
    """The fields of a raw `s_waitcnt` immediate in one generation's layout."""
    if family == "gfx11":
        return {"expcnt": imm & 0x7, "lgkmcnt": (imm >> 4) & 0x3F, "vmcnt": (imm >> 10) & 0x3F}
    vm = (imm & 0xF) | (((imm >> 14) & 0x3) << 4)
    lgkm = (imm >> 8) & (0x3F if family == "gfx10" else 0xF)
    return {"vmcnt": vm, "expcnt": (imm >> 4) & 0x7, "lgkmcnt": lgkm}


def decode_wait_text(family: str, mnemonic: str, operands: str) -> dict[str, int] | None:
    """counter -> value the wait enforces on `family`; {} when it enforces nothing there;
    None when `mnemonic` is not a memory-counter wait at all."""
    ops = operands.split("//")[0].split(";")[0].strip()
    legacy = family in ("gfx9", "gfx10", "gfx11")
    if mnemonic == "s_waitcnt":
        if not legacy:
            return {}  # gfx12 assembles the legacy form but LLVM ignores it; we credit nothing
        if _FIELD.search(ops):
            out: dict[str, int] = {}
            for name, val in _FIELD.findall(ops):
                v = _int(val)
                if v is not None and name != "vscnt":
                    out[name] = min(v, COUNTER_MAX[family][name])
            return out
        imm = _int(ops)
        return _legacy_layout(family, imm & 0xFFFF) if imm is not None else {}
    if mnemonic in _SOPK_WAITS:
        name = _SOPK_WAITS[mnemonic]
        if family not in ("gfx10", "gfx11"):
            return {}
        parts = [p.strip() for p in ops.split(",")]
        if len(parts) != 2 or parts[0] != "null":
            return {}  # an SGPR operand adds a run-time value we do not know
        v = _int(parts[1])
        return {} if v is None else {name: v}
    if mnemonic in _SPLIT_WAITS:
        name = _SPLIT_WAITS[mnemonic]
        if name not in COUNTER_MAX.get(family, {}):
            return {}
        v = _int(ops)
        return {} if v is None else {name: v}
    if mnemonic in _COMBINED_WAITS:
        if legacy:
            return {}
        v = _int(ops)
        if v is None:
            return {}
        hi, lo = _COMBINED_WAITS[mnemonic]
        return {hi: (v >> 8) & 0x3F, lo: v & 0x3F}
    return None


# --- the adapter over today's classification ----------------------------------------------------

#: classify.py's timeline indices (the first five of targets/model.py, same numbers)
_CK_DS, _CK_LOAD, _CK_KM, _CK_TENSOR, _CK_ASYNC = 0, 1, 2, 3, 4
_ADAPTER_COUNTERS = {
    "gfx9": {_CK_DS: "lgkmcnt", _CK_LOAD: "vmcnt", _CK_KM: "lgkmcnt"},
    "gfx10": {_CK_DS: "lgkmcnt", _CK_LOAD: "vmcnt", _CK_KM: "lgkmcnt"},
    "gfx11": {_CK_DS: "lgkmcnt", _CK_LOAD: "vmcnt", _CK_KM: "lgkmcnt"},
    "gfx12": {_CK_DS: "dscnt", _CK_LOAD: "loadcnt", _CK_KM: "kmcnt"},
    "gfx1250": {_CK_DS: "dscnt", _CK_LOAD: "loadcnt", _CK_KM: "kmcnt", _CK_TENSOR: "tensorcnt",
                _CK_ASYNC: "asynccnt"},
}


@dataclass
class _ClassifyTarget:
    """Today's `analysis/classify.py` seen through the table's interface (one timeline per
    memory op; no stores, xcnt, images, flat-on-LDS: those counters are "not modelled")."""

    name: str
    family: str
    counter_max: dict[str, int]
    counter_of: dict[int, str]
    source: str = "adapter over stinkywait_core/analysis/classify.py"
    _classify: Any = field(default=None, repr=False)

    def pushes(self, inst: Any, mnemonic: str) -> tuple[int, ...]:
        if inst is None:
            return ()
        ck = self._classify(inst)
        return (ck,) if ck in self.counter_of else ()

    def decode_wait(self, inst: Any, mnemonic: str, operands: str) -> dict[str, int] | None:
        return decode_wait_text(self.family, mnemonic, operands)

    def modelled_counters(self) -> frozenset[str]:
        return frozenset(self.counter_of.values())

    def timeline_in_order(self, timeline: Any) -> bool:
        return timeline != _CK_KM  # scalar loads complete out of order


@dataclass
class _TableTarget:
    """The lead's `stinkywait_core.targets` table (used as soon as it is importable)."""

    name: str
    family: str
    counter_max: dict[str, int]
    counter_of: Any
    table: Any
    source: str = "stinkywait_core.targets table"

    def pushes(self, inst: Any, mnemonic: str) -> tuple[int, ...]:
        sem = self.table.sem(inst) if inst is not None else self.table.sem_for(mnemonic)
        return tuple(sem.pushes) if sem is not None else ()

    def decode_wait(self, inst: Any, mnemonic: str, operands: str) -> dict[str, int] | None:
        if mnemonic not in WAIT_MNEMONICS:
            return None
        if inst is not None and hasattr(self.table, "decode_wait"):
            return dict(self.table.decode_wait(inst))
        return decode_wait_text(self.family, mnemonic, operands)

    def modelled_counters(self) -> frozenset[str]:
        tl = getattr(self.table, "timelines", range(len(self.counter_of)))
        return frozenset(self.counter_of[t] for t in tl)

    def timeline_in_order(self, timeline: Any) -> bool:
        return bool(self.table.in_order[timeline])


def peer_target(cpu: str) -> PeerTarget:
    """The target description the comparison uses for `cpu`: the lead's table when
    `stinkywait_core.targets.get_target` exists, else the classify adapter."""
    fam = family_of(cpu)
    try:
        from stinkywait_core.targets import get_target  # type: ignore[attr-defined]
    except ImportError:
        from stinkywait_core.analysis.classify import classify_mem_op
        return _ClassifyTarget(cpu, fam, dict(COUNTER_MAX[fam]), dict(_ADAPTER_COUNTERS[fam]),
                               _classify=classify_mem_op)
    t = get_target(cpu)
    cmax = {c.name: c.max_value for c in t.counters}
    return _TableTarget(cpu, getattr(t, "family", fam), cmax, t.counter_of, t)
