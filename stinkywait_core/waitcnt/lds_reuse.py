"""The previous version's LDS disjointness answers, reused while what they rest on is unchanged.

Why: after a one-line edit the memoised walks re-check every disjointness answer they used
(`LdsQueries.queries_hold`), and a fresh answer evaluates both accesses' addresses on the
new version: on the 3.2k-line gfx1250 GEMM that was most of an edit's re-plan, for answers an
edit far from any address cannot change.

What an answer rests on (analysis/lds_facts.py, whose verdicts are not touched here): the two
instructions (kept objects are unchanged text), the function's CFG, the launch facts and
region declarations, and the values the address analysis found, which in turn rest only on
the reaching definitions of the register units it asked about (`ValueFlow.read_keys`) and on
the instructions defining them.  So an answer of the previous version is this version's when:

- the function was adopted with its blocks and edges (`changed_blocks` known, the CFG kept);
- the launch facts and the declared workgroup size are equal, and no LDS region is declared
  (a region ties an access by its comment, which an adopted instruction may change);
- the function makes no calls (the value analysis then models clobbers and callee entries);
- no instruction the edit added or removed writes a unit the analysis asked about (no
  reaching definition of such a unit moved, and no definition it evaluated changed: an
  evaluated definition writes an asked unit, so editing it is such a write), and none is a
  branch, a call or an EXEC write (control and the EXEC state are read function-wide).

- where the answers were made with the per-wave views (analysis/wave_roles.py: the wave index
  decides a branch), every instruction the edit added or removed is also *inert* as
  `publish_reuse.inert` defines it (a vector ALU instruction writing only VGPR/AGPR units no
  analysis asked about, the views' own probes included, `LdsFacts.role_keys`): a view rests on
  the SCC and VCC writers before branches and on the wave-index units, which a scalar edit such
  as `s_cmp_eq_u32 s2, 1` -> `2` changes without writing a unit the address analysis asked
  about (an answer decided in the old views was reused, stale, before this rule).

Otherwise every answer is asked again.  The units asked about accumulate over the versions
an answer survives, so a surviving answer's dependencies are always in the set checked.
"""

from __future__ import annotations

from ..ir import Instruction, Reg
from .publish_reuse import inert

#: mnemonics whose edit may change what the value analysis reads function-wide
_CONTROL = ("s_cbranch", "s_branch", "s_setpc", "s_swappc", "s_call", "s_getpc", "s_rfe", "v_cmpx")


class LdsAnswers:
    """One version's disjointness answers and what they rest on (see the module doc)."""

    __slots__ = ("answers", "read_keys", "basis", "views")

    def __init__(self, answers: dict, read_keys: frozenset, basis: tuple, views: bool = False) -> None:
        self.answers = answers
        self.read_keys = read_keys
        self.basis = basis
        #: some answer may have been decided in the per-wave views (then only inert edits keep them)
        self.views = views


def basis_of(facts) -> tuple | None:
    """What every answer of `facts` rests on beyond the register values (None: answers are
    not reused for this function)."""
    if facts.flow.calls is not None or facts.regions:
        # (a region is tied by an instruction's comment, which adoption may change in place)
        return None
    return facts.launch, facts.declared_size


def _touches(inst: Instruction, keys: frozenset) -> bool:
    """`inst` writes one of `keys`, or is an edit the analysis reads function-wide."""
    if inst.mnemonic.startswith(_CONTROL):
        return True
    for op in inst.dsts:
        if type(op) is Reg:
            if op.kind == "exec":
                return True
            for u in range(op.lo, op.hi + 1):
                if (op.kind, u) in keys:
                    return True
    return False


def reusable(prev: LdsAnswers | None, edited: list | None, facts) -> dict:
    """The answers of the previous version that hold on this one ({}: none).

    `edited`: the instructions the edit added or removed (None: unknown, the function was
    not adopted)."""
    if prev is None or edited is None or not prev.answers:
        return {}
    basis = basis_of(facts)
    if basis is None or basis != prev.basis:
        return {}
    keys = prev.read_keys
    for inst in edited:
        if not inst.is_label and _touches(inst, keys):
            return {}
    if prev.views and not all(inert(inst, (keys,)) for inst in edited):
        return {}
    return prev.answers


def remember(pairs: dict, reused: dict, prev: LdsAnswers | None, facts) -> LdsAnswers | None:
    """This version's answers for the next one: the pair answers asked now (publish answers
    are kept by waitcnt/publish.py), with the units asked now and those of any reused
    answer."""
    if facts is None:
        return None
    basis = basis_of(facts)
    if basis is None:
        return None
    answers = {k: v for k, v in pairs.items() if len(k) == 3}
    keys = frozenset(facts.flow.read_keys) | frozenset(facts.role_keys)
    views = facts.views_made
    if reused and prev is not None:
        keys = keys | prev.read_keys
        views = views or prev.views
    return LdsAnswers(answers, keys, basis, views)
