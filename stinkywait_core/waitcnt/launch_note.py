"""Saying, at the line, what an undeclared launch shape costs.

Waves are told apart by the work-item id in v0 only when the workgroup is known to be
one-dimensional (`LaunchInfo.one_dimensional`): then wave w holds work-items 64w..64w+63 and
the per-wave views of the address analysis exist.  Code objects compiled from HIP rarely carry
``.reqd_workgroup_size``, and a kernel that reads only the X work-item id may still be launched
with a 2-D workgroup, where two waves hold the same X ids; so without a declaration the
analysis assumes any shape within the workgroup bound and keeps every barrier drain it cannot
clear for all of them (docs/decisions.md 56: aiter's gfx950 cktile GEMM keeps 14 such drains
as written, 7 with its launch declared 1-D).

That assumption changes waits, so it is said where it does (the brief: a silent assumption is
a bug): one note per kernel at its first unproven barrier drain, naming the declaration that
would let the analysis tell the waves apart.  It never states a count the user should paste:
the workgroup's X size is the user's to know (a declared size larger or smaller than the real
launch would be analysed wrongly), so only the bound the metadata and VGPR allocation allow is
given.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..analysis.lds_facts import LdsFacts
    from ..results import FunctionResult, PlannedWait

#: the reason prefix of a barrier drain the publish rule could not clear (hazards.py)
BARRIER_FALLBACK = "fallback-barrier"


def launch_note(facts: LdsFacts | None, res: FunctionResult) -> tuple[PlannedWait, str] | None:
    """(the first unproven barrier drain, the sentence) when `facts` (this version's
    `LdsFacts`, or None) belong to a kernel whose launch shape is not known to be
    one-dimensional, that enables only the X work-item id, and whose plan keeps barrier
    drains the analysis could not clear; None otherwise."""
    if facts is None or facts.flow.launch is None:
        return None  # no address analysis, or not a kernel (a callable function has no work-item id)
    launch = facts.launch
    if launch.reqd is not None:
        return None  # the shape is given, by the metadata or a 3-D declaration (a 2-D one is right)
    if launch.workitem_id != 0:
        return None  # the kernel reads the Y or Z id: it is not launched 1-D
    drains = [w for w in res.waits if w.reason.startswith(BARRIER_FALLBACK)]
    if not drains:
        return None
    first = min(drains, key=lambda w: (w.line, w.column))
    lines = len({w.line for w in drains})
    many = lines != 1
    # short: VS Code shows it in the hover of the wait at this line, which must fit its box
    text = (f"launch shape not declared: waves are not told apart by work-item id (an X-only kernel may run "
            f"2-D), so {lines} barrier wait{'s' if many else ''} of this kernel stay{'' if many else 's'} unproven; "
            f"if it always runs 1-D, `// stinkywait: workgroup-size N 1 1` (N <= {launch.max_flat}, its workgroup "
            f"size) may prove {'them' if many else 'it'} unneeded")
    return first, text
