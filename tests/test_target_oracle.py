"""LLVM 22's SIInsertWaitcnts and the per-target table agree on what each family sample waits on.

For every CPU with an LLVM inventory that the table supports, `peer.llvm_oracle` writes MIR
probes (a producer of each family, then a consumer, an overwriter, a return or a call) and runs
``llc-22 -run-pass=si-insert-waitcnts`` on them at test time (cached in a temp directory per
MIR text and llc version).  The producer as LLVM prints it is parsed by our front end and given
to ``get_target(cpu).sem(inst)``; the counters the table says it is counted on
(``sem.pushes`` / ``sem.locks`` through ``counter_of``) must be exactly the counters LLVM waits
on after the producer:

==========  =====================================================================
pending     pushes and locks
raw         pushes (a read of the result: VGPR, SGPR, SCC, or LDS for DMA forms)
waw_valu    pushes (a VALU overwrites the pending result register)
waw_same    pushes, or none when the table says writes of the class land in order
war_*       locks (overwriting store data / load address / s_load base: gfx1250 xcnt)
return      pushes less the store counters (the callee does not wait for stores)
call        pushes of the ``s_load`` of the call target
==========  =====================================================================

In every row but ``war_*``, xcnt is dropped when loadcnt or kmcnt is also waited on: LLVM's
``applyXcnt`` counts an op's address translation as done once its data returned.

Where we differ from LLVM on purpose the difference is listed in `EXCEPTIONS` with its reason;
an exception whose LLVM side no longer holds fails, so the list cannot go stale silently.
Skipped without ``llc-22`` or while ``stinkywait_core.targets`` has no ``get_target``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache

import pytest

from peer import inventory, llvm_oracle
from stinkywait_core.syntax import parse

if not llvm_oracle.available():
    pytest.skip("llc-22 is not installed", allow_module_level=True)
targets = importlib.import_module("stinkywait_core.targets")
if getattr(targets, "get_target", None) is None:
    pytest.skip("stinkywait_core.targets has no get_target yet (per-target table not merged)",
                allow_module_level=True)

STORE_COUNTERS = frozenset(llvm_oracle.STORE_COUNTERS)
#: a wait on one of these covers an op's address translation (xcnt) in LLVM's model
XCNT_COVERED_BY = frozenset({"loadcnt", "kmcnt"})


@dataclass(frozen=True)
class Exception_:
    """A documented difference: on `cpus` (None: all), for `families` x `hazards`, LLVM waits
    on exactly `llvm`; the table waits on exactly `ours`, or (``ours=None``) on at least what
    LLVM waits on.  Counter names a target lacks are ignored on both sides."""

    families: frozenset[str]
    hazards: frozenset[str]
    llvm: frozenset[str]
    ours: frozenset[str] | None
    reason: str
    cpus: frozenset[str] | None = None


def _x(families: str, hazards: str, llvm: str, ours: str | None, reason: str,
       cpus: str | None = None) -> Exception_:
    return Exception_(frozenset(families.split()), frozenset(hazards.split()),
                      frozenset(llvm.split()), None if ours is None else frozenset(ours.split()),
                      reason, frozenset(cpus.split()) if cpus else None)


_STORES = "global_store global_atomic_noret scratch_store buffer_store"
EXCEPTIONS = (
    _x("ds_load ds_atomic_ret", "waw_same", "lgkmcnt dscnt", "",
       "LDS returns data in issue order (ISA): a second DS load into the same VGPR cannot land "
       "first, so we plan no wait; LLVM waits because it only exempts same-type VMEM writes"),
    _x("tensor_load", "pending raw return", "", None,
       "LLVM 22 does not model the Tensor Data Mover: no tensorcnt event, no wait", "gfx1250"),
    _x("async_load", "pending raw return war_addr", "", None,
       "LLVM 22 does not model async LDS copies: no asynccnt event (and no xcnt for them), no "
       "wait", "gfx1250"),
    _x("global_load_lds", "pending return", "vmcnt lgkmcnt", "vmcnt",
       "the FLAT-encoded LDS DMA: LLVM also counts it on lgkmcnt (LGKM_CNT is set on the "
       "opcode) but retires its LDS write by vmcnt alone; the table counts it on vmcnt only"),
    _x(_STORES, "return", "", None,
       "LLVM does not wait xcnt at a return for a pending store's address translation (the "
       "caller may overwrite the store's source VGPRs); the table may", "gfx1250"),
    _x("flat_store flat_atomic_noret", "return", "dscnt", None,
       "as for the other stores: LLVM waits the LDS side of a generic FLAT store at a return, "
       "not its xcnt; the table may", "gfx1250"),
)

#: disagreements that look like gaps in the table, pinned until it changes (then this list
#: must be updated: fixed, or the new value explained)
KNOWN_GAPS: tuple = ()


def _exception(cpu: str, family: str, hazard: str) -> Exception_ | None:
    for x in EXCEPTIONS + KNOWN_GAPS:
        if family in x.families and hazard in x.hazards and (x.cpus is None or cpu in x.cpus):
            return x
    return None


def _instruction(asm: str):
    module = parse(f"  {asm}\n", "probe.s")
    instrs = [i for f in module.functions for b in f.blocks for i in b.instrs
              if not i.is_label and not i.is_phi]
    assert len(instrs) == 1, f"our parser read {len(instrs)} instructions from {asm!r}"
    return instrs[0]


def expected(t, sem, hazard: str) -> set[str]:
    """The counters the table says LLVM should wait on for this hazard (see the docstring)."""
    pushes = {t.counter_of[ck] for ck in sem.pushes}
    locks = {t.counter_of[ck] for ck in sem.locks}
    if hazard.startswith("war_"):
        return locks
    if hazard == "pending":
        out = pushes | locks
    elif hazard in ("raw", "waw_valu", "call"):
        out = set(pushes)
    elif hazard == "waw_same":
        out = set() if sem.order_class is not None else set(pushes)
    elif hazard == "return":
        out = pushes - STORE_COUNTERS
    else:
        raise AssertionError(f"unknown hazard {hazard}")
    if out & XCNT_COVERED_BY:
        out.discard("xcnt")          # LLVM's applyXcnt: the load/kmcnt wait retires it
    return out


@lru_cache(maxsize=None)
def _results(cpu: str) -> tuple[llvm_oracle.Result, ...]:
    probes = llvm_oracle.build_probes(cpu, inventory.load(cpu))
    return tuple(llvm_oracle.run(cpu, probes))


def _target(cpu: str):
    try:
        return targets.get_target(cpu)
    except targets.UnsupportedTarget:
        if cpu in targets.SUPPORTED_TARGETS:
            pytest.fail(f"get_target({cpu!r}) raises although {cpu} is in SUPPORTED_TARGETS")
        pytest.skip(f"{cpu} is not supported by the table")


@pytest.mark.parametrize("cpu", inventory.cpus())
def test_table_counts_what_llvm_waits_for(cpu: str) -> None:
    t = _target(cpu)
    names = {c.name for c in t.counters}
    accepted = inventory.load(cpu)
    problems, matrix = [], []
    for res in _results(cpu):
        pr = res.probe
        asm = res.producer_asm
        word = asm.split()[0] if asm else ""
        assert word in accepted, f"{cpu} {pr.name}: LLVM printed {asm!r}, not in the inventory"
        llvm = set(res.window())
        sem = t.sem(_instruction(asm))
        ours = expected(t, sem, pr.hazard)
        matrix.append(f"  {pr.name:34} LLVM {','.join(sorted(llvm)) or '-':22} "
                      f"table {','.join(sorted(ours)) or '-':22} {asm}")
        x = _exception(cpu, pr.family, pr.hazard)
        if x is not None:
            documented = set(x.llvm) & names
            if llvm != documented:
                problems.append(f"{pr.name}: exception is stale: LLVM now waits on {sorted(llvm)}, "
                                f"documented {sorted(documented)} ({x.reason})")
            elif x.ours is None and not ours >= llvm:
                problems.append(f"{pr.name}: table waits on {sorted(ours)}, weaker than LLVM's "
                                f"{sorted(llvm)} ({asm})")
            elif x.ours is not None and ours != set(x.ours) & names:
                problems.append(f"{pr.name}: table waits on {sorted(ours)}; the documented "
                                f"difference expects {sorted(set(x.ours) & names)} ({x.reason})")
            continue
        if llvm != ours:
            problems.append(f"{pr.name}: LLVM waits on {sorted(llvm) or 'nothing'}, the table "
                            f"says {sorted(ours) or 'nothing'} for `{asm}` (sem family "
                            f"{sem.family!r}, pushes {sem.pushes}, locks {sem.locks})")
    print(f"\n{cpu}: {len(matrix)} probes, {len(problems)} disagreements\n" + "\n".join(matrix))
    assert not problems, (f"{cpu}: {len(problems)} disagreements with LLVM 22:\n"
                          + "\n".join(problems))



def test_every_listed_difference_is_exercised() -> None:
    """No entry of EXCEPTIONS / KNOWN_GAPS outlives the probes it was written for."""
    used = set()
    for cpu in inventory.cpus():
        if cpu not in targets.SUPPORTED_TARGETS:
            continue
        for res in _results(cpu):
            x = _exception(cpu, res.probe.family, res.probe.hazard)
            if x is not None:
                used.add(x)
    unused = [x.reason[:80] for x in EXCEPTIONS + KNOWN_GAPS if x not in used]
    assert not unused, f"listed differences no probe reaches: {unused}"
