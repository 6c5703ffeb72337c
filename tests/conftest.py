"""Suite-wide hooks.

Under pytest-xdist (the Makefile's `-n auto`) a worker's terminal output is not shown, so a
module's end-of-module summary line (test_conformance's `conformance: N/M ...`) travels in
the worker's `workeroutput` and the controller prints it in its terminal summary.
"""

from __future__ import annotations

import pytest

_LINES = pytest.StashKey[list]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    line = getattr(node, "workeroutput", {}).get("conformance")
    if line:
        node.config.stash.setdefault(_LINES, []).append(line)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    for line in config.stash.get(_LINES, []):
        terminalreporter.write_line(line)
