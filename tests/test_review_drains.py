"""`review._drains` scans a FIFO snapshot's queues at C speed (thousands of per-predecessor
queues at a wait of the gfx1250 GEMM); it must say what the per-queue rule says: a wait of
`v` retires something when some queue holds more than `v` ops or saturated ones (in-order
counters), or, out of order, when `v` is 0 and some queue holds anything."""

from __future__ import annotations

from collections import namedtuple

from hypothesis import given, strategies as st

from stinkywait_core.review import _drains

Q = namedtuple("Q", "ops sat")


def _per_queue(queues, v: int, in_order: bool) -> bool:
    if not in_order:
        return any(v == 0 and bool(q.ops or q.sat) for q in queues)
    return any(len(q.ops) > v or bool(q.sat) for q in queues)


queues = st.lists(st.builds(Q, st.lists(st.integers(0, 9), max_size=6).map(tuple),
                            st.lists(st.integers(0, 9), max_size=2).map(tuple)), max_size=8)


@given(queues, st.integers(0, 7), st.booleans())
def test_drains_is_the_per_queue_rule(qs, v, in_order):
    assert _drains(qs, v, in_order) == _per_queue(qs, v, in_order)
