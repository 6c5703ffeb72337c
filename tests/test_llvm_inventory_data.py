"""The committed LLVM 22 mnemonic inventory is well formed, current and complete on real code.

* the files parse, are sorted, and every memory/sync/control row carries an LLVM signal;
* (llvm-mc-22 installed) llvm-mc-22 still accepts exactly the inventory's names among the
  assembler's match-table mnemonics, so the data is not stale for the installed LLVM;
* every mnemonic of the real kernels in ``../shared/corpus/asm`` and of llc-22's own output for
  ``../shared/tools/llvm/ir/*.ll`` is in the inventory of its CPU.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from peer import inventory, llvm_oracle

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MC = shutil.which("llvm-mc-22")
LLC = shutil.which("llc-22")
KINDS = set(inventory.SYNC_KINDS) | {"alu"}
MEMORY_FORMATS = {"DS", "LDSDIR", "MUBUF", "MTBUF", "FLAT", "SMRD", "MIMG", "VIMAGE", "VSAMPLE",
                  "EXP"}
#: llvm-mc's answers for a mnemonic that does not exist on the CPU
UNKNOWN = r"not supported on this GPU|requires wavesize|invalid instruction"
SUFFIX = re.compile(r"_(e32|e64|sdwa|dpp|e64_dpp)$")


def test_every_target_has_an_inventory() -> None:
    assert {"gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1200", "gfx1201",
            "gfx1250"} <= set(inventory.cpus())


@pytest.mark.parametrize("cpu", inventory.cpus())
def test_file_is_well_formed(cpu: str) -> None:
    inv = inventory.load(cpu)
    names = list(inv)
    assert names == sorted(set(names)), "mnemonics must be sorted and unique"
    for m, e in inv.items():
        assert e.kind in KINDS, (m, e.kind)
        if e.sync:
            assert e.signals or e.extra, f"{m}: kind {e.kind} without an LLVM signal"
        else:
            assert not MEMORY_FORMATS & set(e.signals + e.extra), f"{m}: alu with {e.signals}"
        assert e.variants >= 1, m


@lru_cache(maxsize=1)
def _candidates() -> list[str]:
    """The assembler's match-table mnemonics, read from LLVM's static libraries ([] if absent)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import llvm_libtables
        try:
            return list(llvm_libtables.load().mnemonics)
        except llvm_libtables.TableError:
            return []
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _bare_probe(cpu: str, names: list[str], mattr: str = "") -> set[str]:
    """The names llvm-mc-22 knows on `cpu` (fed bare: only 'not supported' means unknown)."""
    cmd = [MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}"] + ([f"-mattr={mattr}"] if mattr else [])
    proc = subprocess.run(cmd, input="\n".join(names) + "\n", capture_output=True, text=True)
    unknown = set()
    for m in re.finditer(r"<stdin>:(\d+):\d+: error: (.*)", proc.stderr):
        if re.search(UNKNOWN, m.group(2)):
            unknown.add(names[int(m.group(1)) - 1])
    return set(names) - unknown


@pytest.mark.skipif(MC is None, reason="llvm-mc-22 not installed")
@pytest.mark.parametrize("cpu", inventory.cpus())
def test_inventory_is_what_llvm_mc_accepts_now(cpu: str) -> None:
    candidates = _candidates() or list(inventory.load(cpu))   # no static libs: one direction
    accepted = _bare_probe(cpu, candidates)
    if cpu.startswith("gfx1") and cpu != "gfx1250":
        accepted |= _bare_probe(cpu, candidates, "+wavefrontsize64")
    inv = set(inventory.load(cpu))
    assert inv <= set(candidates) and accepted == inv, (
        f"stale inventory for {cpu}: llvm-mc-22 now also accepts {sorted(accepted - inv)[:20]}, "
        f"no longer {sorted(inv - accepted)[:20]}; run scripts/llvm_inventory.py")


def _mnemonics(asm: str) -> set[str]:
    out = set()
    for line in asm.splitlines():
        code = line.split(";")[0].split("//")[0].strip()
        if not code or code.startswith((".", "#")) or code.endswith(":"):
            continue
        word = code.split()[0]
        if re.fullmatch(r"[a-z][a-z0-9_]*", word):
            out.add(word)
    return out


def _missing(cpu: str, words: set[str]) -> list[str]:
    inv = inventory.load(cpu)
    return sorted(w for w in words if w not in inv and SUFFIX.sub("", w) not in inv)


def _corpus() -> list[Path]:
    return sorted((SHARED / "corpus" / "asm").glob("**/*.s"))


@pytest.mark.skipif(not _corpus(), reason="../shared/corpus/asm not present")
@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_real_kernels_use_only_inventory_mnemonics(path: Path) -> None:
    text = path.read_text(errors="replace")
    m = re.search(r"amdgcn-amd-amdhsa--(gfx[0-9a-f]+)", text) or re.search(r"(gfx[0-9a-f]+)",
                                                                         path.name)
    assert m, f"{path.name}: no target"
    cpu = m.group(1)
    words = _mnemonics(text)
    assert len(words) > 20
    assert not _missing(cpu, words), f"{path.name} ({cpu}): {_missing(cpu, words)}"


def _ir() -> list[Path]:
    return sorted((SHARED / "tools" / "llvm" / "ir").glob("*.ll"))


@pytest.mark.skipif(LLC is None or not _ir(), reason="llc-22 or ../shared/tools/llvm/ir missing")
@pytest.mark.parametrize("cpu", ["gfx942", "gfx1100", "gfx1200", "gfx1250"])
def test_llc_output_uses_only_inventory_mnemonics(cpu: str) -> None:
    """llc-22 -O2 on the shared IR (files named for another target are left out), cached."""
    compiled = 0
    for ll in _ir():
        tag = re.search(r"gfx[0-9a-f]+", ll.name)
        if tag and tag.group(0) != cpu:
            continue
        try:
            asm = llvm_oracle.llc(cpu, ll.read_text(), ["-O2"], suffix=".ll")
        except llvm_oracle.OracleError:
            continue                      # target-specific intrinsics
        compiled += 1
        missing = _missing(cpu, _mnemonics(asm))
        assert not missing, f"{ll.name} for {cpu}: llc-22 emits {missing}, not in the inventory"
    assert compiled, f"no IR of ../shared/tools/llvm/ir compiles for {cpu}"
