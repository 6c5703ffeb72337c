"""Suite-wide hooks.

Under pytest-xdist (the Makefile's `-n auto`) a worker's terminal output is not shown, so
test_conformance's end-of-module tally (`conformance: N/M ...`) travels in each worker's
`workeroutput` as (passed, run, failing names); the controller adds up the workers' tallies
and prints one line in its terminal summary.
"""

from __future__ import annotations

import pytest

_TALLIES = pytest.StashKey[list]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    tally = getattr(node, "workeroutput", {}).get("conformance")
    if tally:
        node.config.stash.setdefault(_TALLIES, []).append(tally)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    tallies = config.stash.get(_TALLIES, [])
    if not tallies:
        return
    passed = sum(t[0] for t in tallies)
    run = sum(t[1] for t in tallies)
    failed = sorted(name for t in tallies for name in t[2])
    line = f"conformance: {passed}/{run} upstream corpus files pass"
    if failed:
        line += " (failing: " + ", ".join(failed) + ")"
    terminalreporter.write_line(line)
