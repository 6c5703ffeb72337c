"""Property: the pass's output (the default `Options()`, hardware model) is safe on the hardware
checker, over random programs with the hazards only the hardware model has (tests/hwproggen.py),
for gfx1250 and gfx1200 (and, fewer, gfx942 and gfx1100).

The suite runs a few hundred programs; `benchmarks/bench_hwcheck.py` runs 2,000 and reports
over-drain (waits the checker shows unnecessary) as a figure.

One class of violation is a known pass defect (test_hwcheck_cases.py::test_loop_self_waw, a
strict xfail): a load in a loop whose result is never read, overwritten by the same load on
the next trip.  `test_only_known_pass_defect` allows exactly that class and nothing else;
`test_no_unsafe_wait_at_all` is the strict form, a strict xfail until the pass is fixed.
"""

from __future__ import annotations

import pytest

from hwplan import planned
from hwproggen import params_for, random_hw_program
from stinkywait_core.validate.hwcheck import HwResult, check_function
from stinkywait_core.validate.hwreport import format_result

ARCHS = ("gfx1250", "gfx1200", "gfx942", "gfx1100")
#: programs per target in the suite (the benchmark runs 1,000 per target); the legacy-counter
#: targets get the gfx12 generator's programs without tensor and async ops
N = {"gfx1250": 150, "gfx1200": 150, "gfx942": 60, "gfx1100": 60}
TRIPS = 3


def _run(arch: str, seed: int) -> tuple[str, HwResult]:
    spec = random_hw_program(seed, params_for(arch))
    opts = spec.options(arch=arch)
    text = spec.to_stir()
    p = planned(text, opts, "hw.stir")
    return text, check_function(p.func, opts, max_trips=TRIPS)


def _known(v) -> bool:
    """The pass's documented self-WAW defect (see the module docstring)."""
    return v.rule == "waw" and v.producer is v.consumer


@pytest.fixture(scope="module")
def results() -> dict[str, list[tuple[str, HwResult]]]:
    return {arch: [_run(arch, seed) for seed in range(N[arch])] for arch in ARCHS}


@pytest.mark.parametrize("arch", ARCHS)
def test_only_known_pass_defect(results, arch: str):
    for text, res in results[arch]:
        other = [v for v in res.violations if not _known(v)]
        assert not other, text + "\n" + format_result(res, "hw.stir")


@pytest.mark.xfail(strict=True, reason="waw: the pass's loop self-WAW defect (test_hwcheck_cases.py::"
                   "test_loop_self_waw); owner: waitcnt")
@pytest.mark.parametrize("arch", ARCHS)
def test_no_unsafe_wait_at_all(results, arch: str):
    bad = [(text, res) for text, res in results[arch] if not res.ok]
    assert not bad, bad[0][0] + "\n" + format_result(bad[0][1], "hw.stir")


def test_some_programs_are_proven(results):
    """The bound is not everything: some loop states repeat (a proof for every trip count)."""
    for arch in ARCHS:
        runs = results[arch]
        assert sum(r.complete for _, r in runs) >= len(runs) // 5, arch


def test_generator_makes_every_hazard():
    """The corpus contains what issue 12 lists, on both targets."""
    need = {"global_store", "buffer_store", "v_mov_b32>v42", "s_mov_b32>s0", "s_load_b32", "flat_load",
            "scratch_load", "cluster_load", "s_get_barrier_state", "s_barrier_signal_isfirst",
            "global_atomic_add_u32", "s_swap_pc_i64", "s_set_pc_i64", "s_clause", "loop", "tensor_load_to_lds"}
    tdm = {"global_load_async_to_lds_b32", "tensor_store_from_lds", "fill>ds_store"}
    for arch in ARCHS[:2]:
        seen: set[str] = set()
        for seed in range(300):
            spec = random_hw_program(seed, params_for(arch))
            labels = [b.label for b in spec.blocks]
            for b in spec.blocks:
                if any(labels.index(s) <= labels.index(b.label) for s in b.succs):
                    seen.add("loop")
                prev = None
                for op in b.ops:
                    mn = op.mnemonic
                    seen.add(mn)
                    seen.update(mn.rsplit("_", 1)[0] for _ in [0])
                    if mn in ("v_mov_b32", "s_mov_b32"):
                        seen.add(f"{mn}>{op.dsts[0]}")
                    if prev in ("tensor_load_to_lds", "global_load_async_to_lds_b32") and mn == "ds_store_b32":
                        seen.add("fill>ds_store")
                    prev = mn
        want = need | tdm if arch == "gfx1250" else need - {"tensor_load_to_lds"}
        assert want <= seen, (arch, sorted(want - seen))
        if arch != "gfx1250":
            assert not (seen & tdm) and "tensor_load_to_lds" not in seen
