"""Write benchmarks/llvm_inventory.md: LLVM 22's mnemonic inventory and wait oracle, per CPU.

Figures come from the committed inventory (``stinkywait_core/targets/data/mnemonics``, made by
``scripts/llvm_inventory.py``) and from running the `tests/peer/llvm_oracle.py` probes through
``llc-22 -run-pass=si-insert-waitcnts`` now.  The prose section "Surprises" of an existing
report is kept as it is; everything above it is regenerated.

    .venv/bin/python benchmarks/llvm_inventory_report.py [--out benchmarks/llvm_inventory.md]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from peer import inventory, llvm_oracle  # noqa: E402

SHORT = {"vmcnt": "vm", "lgkmcnt": "lgkm", "expcnt": "exp", "vscnt": "vs", "loadcnt": "load",
         "storecnt": "store", "dscnt": "ds", "kmcnt": "km", "samplecnt": "sample",
         "bvhcnt": "bvh", "xcnt": "x", "tensorcnt": "tensor", "asynccnt": "async"}
#: (family, hazard) rows of the hazard table
HAZARD_ROWS = (("global_load", "waw_same"), ("flat_load", "waw_same"), ("ds_load", "waw_same"),
               ("global_load", "waw_valu"), ("global_store", "war_data"),
               ("global_load", "war_addr"), ("smem_load", "war_base"),
               ("async_load", "war_addr"), ("global_load", "return"),
               ("global_store", "return"), ("flat_store", "return"), ("ds_store", "return"),
               ("smem_load", "call"), ("sendmsg", "return"), ("smem_prefetch", "war_base"),
               ("buffer_load_lds", "raw"), ("global_load_lds", "raw"),
               ("barrier_signal_isfirst", "raw"))
SURPRISES = "## Surprises"


def _wave_only(e: inventory.Entry) -> bool:
    return bool(e.marks) and e.marks[0].startswith("wave")


def _cell(window: dict[str, int] | None) -> str:
    if window is None:
        return ""
    return "+".join(SHORT.get(c, c) for c in sorted(window)) or "none"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "llvm_inventory.md")
    args = ap.parse_args(argv)
    cpus = inventory.cpus()
    out = ["# LLVM 22 as the oracle: mnemonic inventory and waits per CPU", "",
           "Regenerate: `python3 scripts/llvm_inventory.py` (data, ~9 min) then "
           "`.venv/bin/python benchmarks/llvm_inventory_report.py` (this file, seconds).", "",
           "## Inventory", "",
           "Every mnemonic llvm-mc-22 accepts (match-table names probed bare, both wave sizes on "
           "gfx10+). *sync* = touches memory, a counter or message queue, or control flow by "
           "LLVM's own opcode flags and names (column `kind`).", "",
           "| CPU | mnemonics | sync | mem | ctrl | wait | barrier | msg | cache | aliases | "
           "wave-only | with a form |", "|---" * 12 + "|"]
    for cpu in cpus:
        inv = inventory.load(cpu)
        kinds = collections.Counter(e.kind for e in inv.values())
        out.append(f"| {cpu} | {len(inv)} | {sum(e.sync for e in inv.values())} | "
                   + " | ".join(str(kinds[k]) for k in ("mem", "ctrl", "wait", "barrier", "msg",
                                                         "cache"))
                   + f" | {sum(bool(e.alias_of) for e in inv.values())} | "
                   f"{sum(_wave_only(e) for e in inv.values())} | "
                   f"{sum(e.form != '-' for e in inv.values())} |")
    windows: dict[tuple[str, str, str], dict[str, int]] = {}
    asm: dict[tuple[str, str], str] = {}
    if llvm_oracle.available():
        for cpu in cpus:
            for res in llvm_oracle.run(cpu, llvm_oracle.build_probes(cpu, inventory.load(cpu))):
                windows[(res.probe.family, res.probe.hazard, cpu)] = res.window()
                asm.setdefault((res.probe.family, cpu), res.producer_asm)
    families = [p.family for p in llvm_oracle.PRODUCERS]
    out += ["", "## Which counters LLVM counts each family on (`pending` probe)", "",
            "The producer, then one soft wait per counter; `si-insert-waitcnts` keeps those with "
            "something pending. Blank: the family does not exist on the CPU. `none`: LLVM 22 "
            "tracks nothing.", "",
            "| family | " + " | ".join(cpus) + " |", "|---" * (len(cpus) + 1) + "|"]
    for fam in families:
        cells = [_cell(windows.get((fam, "pending", cpu))) for cpu in cpus]
        if any(cells):
            out.append(f"| {fam} | " + " | ".join(cells) + " |")
    out += ["", "## Hazards: what LLVM waits on before the second instruction", "",
            "| family / hazard | " + " | ".join(cpus) + " |", "|---" * (len(cpus) + 1) + "|"]
    for fam, hz in HAZARD_ROWS:
        cells = [_cell(windows.get((fam, hz, cpu))) for cpu in cpus]
        if any(cells):
            out.append(f"| {fam} {hz} | " + " | ".join(cells) + " |")
    out += ["", "Samples as LLVM prints them (gfx942 / gfx1250): "
            + "; ".join(f"`{asm.get((f, 'gfx942')) or asm.get((f, 'gfx1250'))}`"
                        for f in families if asm.get((f, "gfx942")) or asm.get((f, "gfx1250"))),
            ""]
    prose = ""
    if args.out.is_file() and SURPRISES in args.out.read_text():
        prose = args.out.read_text()[args.out.read_text().index(SURPRISES):]
    args.out.write_text("\n".join(out) + "\n" + (prose or SURPRISES + "\n\n(none recorded)\n"))
    print(f"wrote {args.out} ({len(windows)} probe results, {len(cpus)} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
