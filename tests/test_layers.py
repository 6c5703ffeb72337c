"""The tree's layers, read from the imports themselves.

ARCHITECTURE.md promises that data flows one way (syntax -> ir -> analysis -> waitcnt ->
validate -> cli; lsp on top), that there are no import circles, that the core never imports
the server, and that the hardware checker shares no reasoning with the pass.  A promise
nobody measures drifts, so these tests build the import graph with `ast` (no module is
imported, so a circle cannot hide behind import order) and check each promise.  Each rule
is also run on a small tree that breaks it, so a rule that could never fail is caught too.

Two graphs: module level imports (what runs at import; a circle here is an import-order
bug waiting to happen), and every import including those inside functions (a lazy import is
still a dependency: layering is about what may know about what).  Imports under
`if TYPE_CHECKING:` are annotations only and are left out of both.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("stinkywait_core", "stinkywait_lsp")

# Leaf modules of the core's top level: plain records and helpers every layer may use.
BASE_MODULES = {"diagnostics", "lazy_regex", "interrupt"}
# The pass's options and result records: they name a target (`Options.target()`), so they
# sit with the machine model, below everything that plans.
TARGET_LEVEL_MODULES = {"results"}
# The core's sub-packages, lowest first.  `targets` sits below `syntax` because the front
# ends read the target from the file; the top-level front door (api, cache, review*, ...)
# sits above `validate` (the review runs the hardware checker) and below the CLI.
RANKS = {"ir": 0, "targets": 1, "syntax": 2, "analysis": 3, "waitcnt": 4, "validate": 5}
FRONT_DOOR_RANK = 6
CLI_RANK = 7
LSP_RANK = 8

# The hardware checker: everything in validate/ except the two spec checkers, which re-run
# upstream's own algorithm by design (WaitCntValidationCheckPass and its path form).
SPEC_CHECKERS = {"upstream", "exhaustive"}
# What the hardware checker may read below validate/: the IR, the machine model, located
# messages, and the LDS address analysis's facts (byte ranges and value forms of addresses,
# the way LLVM's checkers read alias analysis).  Anything of the pass's reasoning (the
# solver, queues, SSA sources, hazard rules, the publish rule) is not on this list.
CHECKER_MAY_READ = {
    "stinkywait_core.ir", "stinkywait_core.ir.block_names",
    "stinkywait_core.targets", "stinkywait_core.targets.model", "stinkywait_core.targets.target",
    "stinkywait_core.diagnostics", "stinkywait_core.results",
    "stinkywait_core.analysis.intervals", "stinkywait_core.analysis.values",
    "stinkywait_core.analysis.lds_facts",
}


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the packages under `root`."""
    mods: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = path
    return mods


class _Imports(ast.NodeVisitor):
    """The modules one file imports; `lazy` includes imports inside function bodies."""

    def __init__(self, name: str, is_package: bool, known: dict[str, Path], lazy: bool) -> None:
        self.name, self.is_package, self.known, self.lazy = name, is_package, known, lazy
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.orelse:
                self.visit(stmt)
            return
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if self.lazy:
            self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.name.split(".") if self.is_package else self.name.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        for alias in node.names:
            # `from . import sub` depends on the submodule, not on the package's __init__
            sub = f"{module}.{alias.name}"
            self.found.add(sub if sub in self.known else module)


def import_graph(root: Path, lazy: bool) -> dict[str, set[str]]:
    """Module -> the package modules it imports (itself excluded)."""
    mods = module_files(root)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        visitor = _Imports(name, path.name == "__init__.py", mods, lazy)
        visitor.visit(ast.parse(path.read_text(), str(path)))
        graph[name] = {m for m in visitor.found if m in mods and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """An import circle, as its sorted modules ([] when there is none).  `graphlib` reports one
    circle at a time; the test fails on it, and the next one shows once it is untied."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return [sorted(set(exc.args[1]))]
    return []


def rank(module: str) -> int:
    parts = module.split(".")
    if parts[0] == "stinkywait_lsp":
        return LSP_RANK
    if len(parts) == 1:
        return FRONT_DOOR_RANK
    if parts[1] == "cli":
        return CLI_RANK
    if parts[1] in RANKS:
        return RANKS[parts[1]]
    if parts[1] in BASE_MODULES:
        return RANKS["ir"]
    return RANKS["targets"] if parts[1] in TARGET_LEVEL_MODULES else FRONT_DOOR_RANK


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} -> {e}" for m in sorted(graph) for e in sorted(graph[m]) if rank(e) > rank(m)]


def checker_reads_pass(graph: dict[str, set[str]]) -> list[str]:
    """Imports of the hardware checker that reach outside validate/ and the allowed facts."""
    bad = []
    for m in sorted(graph):
        parts = m.split(".")
        if parts[:2] != ["stinkywait_core", "validate"] or len(parts) < 3 or parts[2] in SPEC_CHECKERS:
            continue
        for e in sorted(graph[m]):
            inside = e.startswith("stinkywait_core.validate.") and e.split(".")[2] not in SPEC_CHECKERS
            if not inside and e not in CHECKER_MAY_READ:
                bad.append(f"{m} -> {e}")
    return bad


@pytest.fixture(scope="module")
def graphs() -> dict[bool, dict[str, set[str]]]:
    return {lazy: import_graph(ROOT, lazy) for lazy in (False, True)}


def test_graph_sees_the_tree(graphs):
    """A graph that lost the packages would pass every rule below."""
    g = graphs[True]
    assert len(g) > 150
    assert "stinkywait_core.waitcnt.dataflow" in g["stinkywait_core.validate.upstream"]
    assert "stinkywait_core.api" in g["stinkywait_core.cli.main"]


def test_no_import_circles_at_module_level(graphs):
    assert cycles(graphs[False]) == []


@pytest.mark.parametrize("lazy", [False, True], ids=["module-level", "with-lazy"])
def test_layers_point_down(graphs, lazy):
    assert upward_imports(graphs[lazy]) == []


def test_core_never_imports_the_server(graphs):
    assert [f"{m} -> {e}" for m, es in graphs[True].items() if m.startswith("stinkywait_core")
            for e in es if e.startswith("stinkywait_lsp")] == []


def test_hardware_checker_reads_no_pass_reasoning(graphs):
    assert checker_reads_pass(graphs[True]) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir(exist_ok=True)
        (tmp_path / pkg / "__init__.py").touch()
    return tmp_path


def test_rules_fail_on_broken_trees(tmp_path):
    """Each rule, on a tree that breaks it: a circle, an upward import (lazy), the core
    reaching the server, the checker reading the solver; TYPE_CHECKING imports stay out."""
    root = _tree(tmp_path, {
        "stinkywait_core/ir/__init__.py": "",
        "stinkywait_core/ir/nodes.py": "def f():\n    from ..waitcnt import dataflow\n",
        "stinkywait_core/waitcnt/__init__.py": "",
        "stinkywait_core/waitcnt/dataflow.py": "from . import state\nimport stinkywait_lsp.server\n",
        "stinkywait_core/waitcnt/state.py": "from .dataflow import X\n"
                                            "TYPE_CHECKING = False\nif TYPE_CHECKING:\n"
                                            "    from ..cli import main\n",
        "stinkywait_core/cli/__init__.py": "",
        "stinkywait_core/cli/main.py": "",
        "stinkywait_core/validate/__init__.py": "",
        "stinkywait_core/validate/hwcheck.py": "from ..waitcnt.state import Q\nfrom ..ir import Block\n",
        "stinkywait_lsp/server.py": "",
    })
    module_level, lazy = import_graph(root, False), import_graph(root, True)
    assert cycles(module_level) == [["stinkywait_core.waitcnt.dataflow", "stinkywait_core.waitcnt.state"]]
    assert upward_imports(module_level) == ["stinkywait_core.waitcnt.dataflow -> stinkywait_lsp.server"]
    assert "stinkywait_core.ir.nodes -> stinkywait_core.waitcnt.dataflow" in upward_imports(lazy)
    assert "stinkywait_core.ir.nodes -> stinkywait_core.waitcnt.dataflow" not in upward_imports(module_level)
    assert "stinkywait_core.cli.main" not in lazy["stinkywait_core.waitcnt.state"]
    assert checker_reads_pass(lazy) == ["stinkywait_core.validate.hwcheck -> stinkywait_core.waitcnt.state"]
