"""What a plan keeps grows with the function, not with its square (issue 21: the server's peak).

The candidates' liveness test (waitcnt/candidates.py) once memoised, per home block, the answer
for every block it was asked about: entries growing as n^2 on a chain of n self-loops, 66 MB
of the 30k-line kernel's first plan.  It now asks the CFG's reachability bitsets.  Checked here: the
test answers exactly what `CfgInfo.reaches` says for every pair of blocks, and the tables the
solver keeps after a plan grow linearly: from 100 to 400 blocks they grow 3.9x, and 7.8x with
the per-pair memo back (the bound is 5x).
"""

from __future__ import annotations

from stinkywait_core.api import analyze
from stinkywait_core.results import Options
from test_candidates_shared import _chain  # (self-loops: every block reaches the later ones)


def _nested_entries(obj: object) -> int:
    """Entries of the containers `obj`'s attributes hold, one level down (a dict of dicts
    counts the inner dicts' entries): what a per-pair table would make grow."""
    n = 0
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names += list(getattr(cls, "__slots__", ()))
    for name in names:
        v = getattr(obj, name, None)
        if isinstance(v, dict):
            n += len(v) + sum(len(x) for x in v.values() if isinstance(x, (dict, set, frozenset, list)))
        elif isinstance(v, (set, list)):
            n += len(v)
    return n


def test_liveness_test_is_reachability() -> None:
    an = analyze(_chain(40), "/tmp/chain.s", Options())
    df = an.outputs[0].df
    blocks = df.func.blocks
    for home in blocks:
        live = df._live_test(home)
        for b in blocks:
            inst = next((i for i in b.instrs if not i.is_label), None)
            if inst is None:
                continue
            assert bool(live(inst)) == (b is home or df.cfg.reaches(b, home)), (b.label, home.label)


def test_solver_tables_grow_linearly() -> None:
    small, big = 100, 400
    sizes = []
    for n in (small, big):
        an = analyze(_chain(n), "/tmp/chain.s", Options())
        sizes.append(_nested_entries(an.outputs[0].df))
    assert sizes[1] <= 5 * sizes[0], sizes
