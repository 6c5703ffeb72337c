"""The per-target instruction table classifies every mnemonic llvm-mc-22 accepts.

The mnemonic lists are LLVM 22's own (``stinkywait_core/targets/data/mnemonics``, written by
``scripts/llvm_inventory.py`` from the assembler's match table, probed CPU by CPU), and so is
the split between instructions that touch memory, a counter or message queue, or control flow
(column ``kind``: from LLVM's opcode flags and names, not from our table's prefixes).  For every
CPU the table supports:

* every accepted mnemonic -- ALU ones included, aliases included -- must have an entry
  (``sem_for`` is not None) whose family is not "unknown";
* the gaps are listed per CPU in the failure, printed as counts with ``-s``, and written to
  ``benchmarks/target_inventory_gaps.txt`` together with two softer lists that do not fail:
  memory/sync/control mnemonics the table treats as plain, and families that disagree with
  LLVM's encoding family.

Skipped while ``stinkywait_core.targets`` has no ``get_target`` (the table is not on main yet).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from peer import inventory

targets = importlib.import_module("stinkywait_core.targets")
if getattr(targets, "get_target", None) is None:
    pytest.skip("stinkywait_core.targets has no get_target yet (per-target table not merged)",
                allow_module_level=True)

REPORT = Path(__file__).resolve().parents[1] / "benchmarks" / "target_inventory_gaps.txt"

#: LLVM encoding family (inventory column 3) -> table families that agree with it
AGREE = {"ds": {"ds", "gds"}, "ldsdir": {"ds", "ldsdir"}, "buffer": {"buffer"},
         "tbuffer": {"buffer"}, "global": {"global", "async", "cluster", "tensor"}, "scratch": {"scratch"}, "flat": {"flat"},
         "smem": {"smem"}, "image": {"image"}, "export": {"export"}, "tensor": {"tensor"},
         "valu": {"valu"}}
#: inventory kind -> table families that agree with it, for SALU-encoded instructions
AGREE_KIND = {"wait": {"wait"}, "msg": {"message"}, "barrier": {"barrier"},
              "ctrl": {"branch", "control"}, "alu": {"salu"}, "cache": {"cache", "smem"},
              "mem": {"smem", "message"}}


def _models_something(sem) -> bool:
    return bool(sem.pushes or sem.locks or sem.lds or sem.control or sem.barrier or sem.wait
                or sem.drain_before or sem.drain_after or sem.mem_model)


def _agrees(entry: inventory.Entry, family: str) -> bool:
    for llvm_family in entry.family.split("|"):
        allowed = AGREE.get(llvm_family) or AGREE_KIND.get(entry.kind, set())
        if family in allowed:
            return True
    return False


def _gaps(cpu: str) -> dict[str, list[str]] | None:
    """The table's gaps on one CPU, by category; None if the table does not support it."""
    try:
        t = targets.get_target(cpu)
    except targets.UnsupportedTarget:
        return None
    out: dict[str, list[str]] = {"missing": [], "unknown": [], "plain": [], "family": []}
    for m, e in sorted(inventory.load(cpu).items()):
        sem = t.sem_for(m)
        alias = f" (alias of {e.alias_of})" if e.alias_of else ""
        if sem is None:
            out["missing"].append(f"{m} [{e.kind}/{e.family}]{alias}")
        elif sem.family == "unknown":
            out["unknown"].append(f"{m} [{e.kind}/{e.family}]{alias}")
        else:
            if e.sync and not _models_something(sem):
                out["plain"].append(f"{m} [{e.kind}/{e.family}: {','.join(e.signals)}]")
            if not _agrees(e, sem.family):
                out["family"].append(f"{m}: table {sem.family!r}, LLVM {e.family} ({e.kind})")
    return out


@pytest.fixture(scope="module")
def gaps() -> dict[str, dict[str, list[str]] | None]:
    result = {cpu: _gaps(cpu) for cpu in inventory.cpus()}
    lines = ["# Table gaps against LLVM 22's mnemonic inventory (tests/test_target_inventory.py)",
             "# missing/unknown fail the test; plain/family are for review", ""]
    for cpu, g in result.items():
        if g is None:
            print(f"\n{cpu}: not supported by the table")
            lines.append(f"## {cpu}: not supported by the table\n")
            continue
        counts = " ".join(f"{k}={len(v)}" for k, v in g.items())
        print(f"\n{cpu}: {len(inventory.load(cpu))} mnemonics, gaps {counts}")
        lines.append(f"## {cpu}: {counts}")
        for k, v in g.items():
            lines += [f"### {k} ({len(v)})"] + [f"  {x}" for x in v]
        lines.append("")
    REPORT.write_text("\n".join(lines) + "\n")
    return result


def test_inventory_covers_every_target_family() -> None:
    """The primary targets, and at least one CPU of every family the table resolves a supported
    name to, have an LLVM inventory to be checked against (the other relatives share their
    family's table and are not probed one by one)."""
    have = set(inventory.cpus())
    primary = getattr(targets, "PRIMARY_TARGETS", targets.SUPPORTED_TARGETS)
    missing = [cpu for cpu in primary if cpu not in have]
    assert not missing, (f"no LLVM inventory for {missing}: "
                         f"python3 scripts/llvm_inventory.py --cpus {','.join(missing)}")
    covered = {targets.get_target(cpu).family for cpu in have if cpu in targets.SUPPORTED_TARGETS}
    families = {targets.get_target(cpu).family for cpu in targets.SUPPORTED_TARGETS}
    assert families <= covered, f"no inventory for any CPU of {sorted(families - covered)}"


@pytest.mark.parametrize("cpu", inventory.cpus())
def test_every_mnemonic_has_an_entry(cpu: str, gaps) -> None:
    g = gaps[cpu]
    if g is None:
        if cpu in targets.SUPPORTED_TARGETS:
            pytest.fail(f"get_target({cpu!r}) raises although {cpu} is in SUPPORTED_TARGETS")
        pytest.skip(f"{cpu} is not supported by the table")
    bad = g["missing"] + g["unknown"]
    assert not bad, (f"{cpu}: {len(g['missing'])} mnemonics llvm-mc-22 accepts have no table "
                     f"entry, {len(g['unknown'])} have family 'unknown' (list in {REPORT.name}):\n"
                     + "\n".join(bad[:200]))
