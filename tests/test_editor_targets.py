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
