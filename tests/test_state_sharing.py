"""The solver's kept states share what is equal (issue 21, the server's peak after bench_lsp).

A join tags every predecessor's queues with it, so before this the states a solve keeps per
block (entry, exit, final exit, the memo's records) each held their own copy of the same empty
queue, per timeline: 165k queue objects for 3.7k distinct values on bench_lsp's 30k-line
kernel.  These tests fail on the tree before the change (one object per join and timeline)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_lsp import edit_line, synthetic_kernel  # noqa: E402

from stinkywait_core.api import analyze  # noqa: E402
from stinkywait_core.cache import AnalysisCache  # noqa: E402
from stinkywait_core.waitcnt.state import PerPredQueue  # noqa: E402


def _kept_states(an) -> list:
    df = an.outputs[0].df
    return [st for table in (df.entry_state, df.exit_state, df.final_exit, df.final_entry)
            for st in table.values()]


def _analysed(blocks: int = 120):
    text = synthetic_kernel(blocks)
    cache = AnalysisCache()
    analyze(text, "/tmp/state-sharing.s", cache=cache)
    lines = text.split("\n")
    n, new = edit_line(lines, 0)
    lines[n] = new
    return analyze("\n".join(lines), "/tmp/state-sharing.s", cache=cache), cache


def test_empty_queues_are_one_object_per_value():
    an, _cache = _analysed()
    objs = {id(q): q for st in _kept_states(an) for qs in st.queues for q in qs}
    empty = [q for q in objs.values() if not q.ops and not q.sat]
    assert len(empty) > 100
    # one object per value (old tree: one per join, timeline and kept state, ~40x)
    assert len(empty) == len(set(empty))


def test_per_counter_lists_shared_within_a_state():
    an, _cache = _analysed()
    for st in _kept_states(an):
        lists = {id(qs) for qs in st.queues}
        values = {tuple(map(id, qs)) for qs in st.queues}
        # the entry of a join: equal lists are one list (old tree: 14 lists per entry)
        assert len(lists) <= len(values) + 4


def test_queue_objects_bounded_by_blocks():
    """All PerPredQueue objects alive after a plan and an edit, per block: about 1 per
    (block, predecessor) value on this kernel; 40 on the old tree."""
    blocks = 120
    an, cache = _analysed(blocks)
    gc.collect()
    alive = sum(1 for o in gc.get_objects() if type(o) is PerPredQueue)
    assert alive < 4 * blocks, alive
    del an, cache


def test_ssa_unit_pairs_shared():
    an, cache = _analysed()
    units = an.outputs[0].memo.ssa.units
    pairs = {id(u) for u in units.values()}
    assert len(pairs) * 10 < len(units)
