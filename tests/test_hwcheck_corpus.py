"""The hardware checker on real kernels nobody here wrote (../shared/corpus/asm: aiter gfx1250,
gfx942 and gfx950 kernels, LLVM 22's outputs of the gfx1250 GEMMs), as they are and after the
pass.  These kernels run on hardware, so every violation is classified (benchmarks/
bench_hwcheck.py prints the figures; the report lists the classes):

* LDS between engines and at barriers with an untagged side: the kernels rely on LDS buffers
  being disjoint (double buffering), which memtokens cannot show: "overlap not proven".  With
  the LDS address analysis (`lds_addresses=True`) the gfx1250 aiter finals are proven clean;
* the gfx950 kernel's one register WAW (line 725): a path on which the ds_reads of %bb.19 are
  issued and their consumers in %bb.21 skipped (two branches on different conditions); LLVM 22
  waits there on that CFG shape, the compiler that built the kernel did not.

Skipped when ../shared is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stinkywait_core.api import analyze, declared_target
from stinkywait_core.results import Options
from stinkywait_core.syntax import parse
from stinkywait_core.targets import canonical
from stinkywait_core.validate.hwcheck import check_module

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "asm"
KERNELS = sorted(CORPUS.glob("*.s")) + sorted((CORPUS / "llvm22-pairs").glob("*.llvm.s")) if CORPUS.is_dir() else []
pytestmark = pytest.mark.skipif(not KERNELS, reason="../shared/corpus/asm not available")

LDS_RULES = {"lds-raw", "lds-war", "lds-waw", "barrier"}


def _load(path: Path):
    module = parse(path.read_text(), str(path))
    d = declared_target(module)
    return module, canonical(d[0]) if d else "gfx942"


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_kernel_as_written(path: Path):
    module, arch = _load(path)
    for res in check_module(module, Options(arch=arch)):
        assert res.complete
        proven = [(v.rule, v.consumer.line) for v in res.violations if v.proven]
        if "gfx950" in path.name:
            assert proven == [("waw", 725)]
        else:
            assert proven == []
        assert {v.rule for v in res.violations if not v.proven} <= LDS_RULES


@pytest.mark.parametrize("path", [p for p in KERNELS if "gfx1250" in p.name and "final" in p.name],
                         ids=lambda p: p.name)
def test_address_analysis_proves_the_gfx1250_finals(path: Path):
    module, arch = _load(path)
    tokens = check_module(module, Options(arch=arch))
    addresses = check_module(module, Options(arch=arch), lds_addresses=True)
    assert sum(len(r.violations) for r in tokens) > 100  # untagged: every fill may hit every read
    assert all(r.ok and r.complete for r in addresses)


@pytest.mark.parametrize("replace", [False, True], ids=["insert", "replace-waits"])
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_pass_output_on_the_kernels(path: Path, replace: bool):
    _, arch = _load(path)
    an = analyze(path.read_text(), str(path), Options(arch=arch, replace_waits=replace))
    for res in check_module(parse(an.inserted_text(), str(path)), an.options, lds_addresses=True):
        assert res.ok and res.complete, [v for v in res.violations][:3]
