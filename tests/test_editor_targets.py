"""The editors list exactly the targets the core supports (`stinkywait_core.targets.SUPPORTED_TARGETS`):
VS Code's `stinkywait.arch` enum and the Neovim plugin's documentation of its `arch` setting."""

from __future__ import annotations

import json
import re
from pathlib import Path

from stinkywait_core.targets import SUPPORTED_TARGETS, build_target

REPO = Path(__file__).resolve().parents[1]


def test_vscode_arch_enum_is_the_supported_targets():
    props = json.loads((REPO / "editors" / "vscode" / "package.json").read_text())["contributes"]["configuration"]["properties"]
    arch = props["stinkywait.arch"]
    assert tuple(arch["enum"]) == SUPPORTED_TARGETS
    assert arch["default"] in arch["enum"]
    build_target(arch["default"])  # the default is one the core builds


def test_nvim_plugin_documents_the_supported_targets():
    lua = (REPO / "editors" / "nvim" / "lua" / "stinkywait.lua").read_text()
    block = re.search(r"-- targets:(.*?)\n\s*arch = '([^']+)'", lua, re.S)
    assert block, "the arch setting's list of targets is missing from stinkywait.lua"
    listed = tuple(re.findall(r"gfx[0-9a-f]+", block.group(1)))
    assert listed == SUPPORTED_TARGETS
    assert block.group(2) in SUPPORTED_TARGETS


def test_readme_target_table_is_the_cores():
    from stinkywait_core.target_table import markdown, section_of
    readme = (REPO / "README.md").read_text()
    table = section_of(readme)
    assert table is not None, "README.md lost the targets table markers"
    assert table == markdown(), "README's targets table is stale: python scripts/target_table.py --write"
    # every supported CPU is in exactly one row, and its row says what the core builds for it
    rows = [r.split("|")[1:-1] for r in table.splitlines()[2:]]
    cpus = [c.strip() for r in rows for c in r[1].split(",")]
    assert sorted(cpus) == sorted(SUPPORTED_TARGETS)
    for r in rows:
        t = build_target(r[1].split(",")[0].strip())
        assert r[0].strip() == t.family
        assert [w.split()[0] for w in r[2].split(",")] == list(t.counter_names)
        assert ("modelled" in r[5]) == t.features.has_xcnt
        assert ("drains memory first" in r[7]) == (not t.features.back_off_barrier)


def test_readme_documents_the_annotations_the_core_reads():
    """The annotation syntax the README shows is the syntax the core accepts."""
    from stinkywait_core.analysis.lds_regions import parse_regions, parse_workgroup_sizes
    from stinkywait_core.syntax.asm_parser import parse_asm
    readme = (REPO / "README.md").read_text()
    for needle in ("// st.token:N[,M...]", "// stinkywait: lds-region NAME START END", "// stinkywait: workgroup-size N"):
        assert needle in readme
    text = ("// stinkywait: lds-region A 0 0x4000 v40\n// stinkywait: workgroup-size 256\n"
            "k:\n  ds_load_b128 v[8:11], v40   // st.token:0\n  s_endpgm\n")
    m = parse_asm(text, "t.s")
    per, diags = parse_regions(text, m.functions)
    assert not diags and [(r.name, r.start, r.end) for r in per[m.functions[0]]] == [("A", 0, 0x4000)]
    sizes, diags = parse_workgroup_sizes(text, m.functions)
    assert not diags and sizes[m.functions[0]][0] == (256,)
    load = next(i for b in m.functions[0].blocks for i in b.instrs if i.mnemonic == "ds_load_b128")
    assert tuple(load.tokens) == (0,)
