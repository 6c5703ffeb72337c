"""Read the committed LLVM 22 mnemonic inventory (``stinkywait_core/targets/data/mnemonics``).

The files are written by ``scripts/llvm_inventory.py`` (see its docstring for how the list is
made complete and what each column means); the tests read them without needing LLVM.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "stinkywait_core" / "targets" / "data" / "mnemonics"

#: kinds that touch memory, a counter or message queue, or control flow (column 2)
SYNC_KINDS = ("ctrl", "wait", "barrier", "msg", "cache", "mem")


@dataclass(frozen=True)
class Entry:
    """One accepted mnemonic of one CPU with LLVM's facts about it."""

    mnemonic: str
    kind: str
    family: str
    signals: tuple[str, ...]
    extra: tuple[str, ...]
    canonical: str
    opcode: str
    variants: int
    form: str
    marks: tuple[str, ...]

    @property
    def sync(self) -> bool:
        return self.kind in SYNC_KINDS

    @property
    def alias_of(self) -> str:
        """The canonical mnemonic llvm-mc prints for this one, "" if it is its own."""
        return "" if self.canonical == "=" else self.canonical


def cpus() -> list[str]:
    """The CPUs with an inventory file, oldest first (gfx900 ... gfx90a ... gfx1250: the digits
    after "gfx" read as hexadecimal order them by generation)."""
    return sorted((p.name.split(".")[0] for p in DATA.glob("*.txt.gz")),
                  key=lambda cpu: int(cpu[3:], 16))


@lru_cache(maxsize=None)
def load(cpu: str) -> dict[str, Entry]:
    """Mnemonic -> Entry for one CPU (FileNotFoundError if there is no inventory for it)."""
    text = gzip.decompress((DATA / f"{cpu}.txt.gz").read_bytes()).decode()
    out = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 9:
            raise ValueError(f"{DATA / cpu}.txt.gz:{lineno}: expected 9 columns, got {len(cols)}")
        mnem, kind, fam, sig, extra, canon, opcode, variants, form = cols[:9]
        out[mnem] = Entry(mnem, kind, fam, _list(sig), _list(extra), canon, opcode,
                          int(variants), form, tuple(cols[9:]))
    return out


def _list(col: str) -> tuple[str, ...]:
    return () if col == "-" else tuple(col.split(","))
