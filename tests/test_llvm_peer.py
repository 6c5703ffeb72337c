"""LLVM 22's SIInsertWaitcnts as the peer, per CPU (issues 11, 12, 15).

IR nobody here wrote (tests/data/llvm-ir: LLVM's own CodeGen tests; ../shared/tools/llvm/ir;
the aiter GEMM IR) is compiled by llc-22 for each CPU with the wait pass skipped (nowait.s) and
run (llvm.s); `stinkywait insert --replace-waits` re-inserts waits into nowait.s; llvm-mc-22
assembles the result.  Two checks per CPU:

* ``assembles``: every output of ours assembles for its CPU (skipped for a unit whose llvm.s
  itself does not);
* ``matched``: every LLVM wait on a counter the target description models is implied by ours at
  the same place or earlier on every path (tests/peer/asm_compare.py), or belongs to a class of
  tests/llvm_peer_exceptions.txt.

The checked-in gfx1250 GEMM pairs (../shared/corpus/asm/llvm22-pairs/*.nowait.s / *.llvm.s) go
through the same comparison.  CPUs that cannot pass yet are strict xfails listed in
tests/llvm_peer_expected_failures.txt.  Needs llc-22 and llvm-mc-22 (skipped otherwise); cold
runs compile everything once (about a minute on two cores), later runs read the cache.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer.compile import tools_available  # noqa: E402
from peer.exceptions import RULES, load_exceptions  # noqa: E402
from peer.machine import CPUS  # noqa: E402

EXPECTED = Path(__file__).resolve().parent / "llvm_peer_expected_failures.txt"
CHECKS = ("assembles", "matched")

needs_llvm = pytest.mark.skipif(not tools_available(), reason="llc-22 / llvm-mc-22 not installed")


def expected_failures() -> dict[tuple[str, str], str]:
    out = {}
    for raw in EXPECTED.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            cpu, check, reason = line.split(None, 2)
            out[(cpu, check)] = reason
    return out


@pytest.fixture(scope="module")
def peer_run():
    from peer.runner import evaluate
    return evaluate(CPUS)


def _reports(run, cpu):
    reps = [r for r in run.reports if r.cpu == cpu]
    assert reps, f"nothing compiled for {cpu}"
    return reps


def _params():
    xf = expected_failures()
    out = []
    for cpu in CPUS:
        for check in CHECKS:
            marks = [pytest.mark.xfail(strict=True, reason=xf[(cpu, check)])] if (cpu, check) in xf else []
            out.append(pytest.param(cpu, check, marks=marks, id=f"{cpu}-{check}"))
    return out


@needs_llvm
@pytest.mark.parametrize("cpu,check", _params())
def test_peer(peer_run, cpu, check):
    reps = _reports(peer_run, cpu)
    errors = [f"{r.unit}: {r.error}" for r in reps if r.error]
    assert not errors, "pairs that could not be compared:\n" + "\n".join(errors)
    if check == "assembles":
        bad = [f"{r.unit}: {r.assemble_error}" for r in reps if r.assembles is False]
        assert not bad, f"{len(bad)} outputs do not assemble for {cpu}:\n" + "\n".join(bad[:20])
    else:
        un = [u.format(r.unit) for r in reps for u in r.unmatched]
        assert not un, f"{len(un)} LLVM waits unmatched on {cpu}:\n" + "\n".join(un[:25])


@needs_llvm
def test_every_cpu_compiles_something(peer_run):
    """The corpus reaches every CPU (a broken llc invocation would otherwise pass vacuously)."""
    for cpu in CPUS:
        reps = _reports(peer_run, cpu)
        assert sum(r.llvm_reqs for r in reps) >= 20, f"{cpu}: almost no LLVM waits to compare"


@needs_llvm
def test_gemm_pairs_compared(peer_run):
    pairs = [r for r in peer_run.reports if r.unit.endswith("(pair)")]
    if not pairs:
        pytest.skip("../shared/corpus/asm/llvm22-pairs is absent")
    for r in pairs:
        assert r.error is None, r.error
        assert r.llvm_reqs > 20 and r.assembles, (r.unit, r.llvm_reqs, r.assemble_error)


def test_expected_failures_name_real_checks():
    for cpu, check in expected_failures():
        assert cpu in CPUS and check in CHECKS, f"llvm_peer_expected_failures.txt: unknown {cpu} {check}"


def test_exceptions_file_is_valid():
    rules = load_exceptions()
    assert set(rules) <= set(RULES)
    assert all(len(reason) > 40 for reason in rules.values())
