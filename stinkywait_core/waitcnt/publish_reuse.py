"""The previous version's publish answers in wave-specialised functions, reused where an edit
cannot change them.

Why: the review's wait-stripped re-plan of the 3.2k-line gfx1250 GEMM asks the cross-wave
publish rule (waitcnt/publish.py) about 40 LDS accesses in flight at barriers, on every
version; in a function specialised by wave index each answer walks the barrier pairing's
partner segments and tests every access there against the one in flight, in every wave's
view (analysis/lds_facts.py `may_overlap_waves`): about two thirds of that re-plan, after an
edit of one VALU line far from any LDS address.  (Keying each answer on the accesses' byte
footprints, as aligned functions do, was tried in decision 53: computing the footprint of
every access of the partner segments cost more than the pair tests it saved.)

What an answer of `Publish._published_specialised(p, barrier)` reads, and why each is this
version's when the conditions below hold:

- the barrier pairing (`WaveMatch`, its `met`): kept across versions by its own signature;
  the reuse needs the very object this version's `matched()` returns;
- the partner segments (their accesses, whether they are opaque): kept by the CFG's edges and
  each walked block's barriers, calls and LDS accesses; every segment an answer read is
  recorded with it, and the answer is reused only when this version's `segment` of each is
  the same object;
- the accesses' LDS facts (`may_overlap_waves`, `may_overlap_waves_in`, in every wave's
  view): as for `lds_reuse`, the values the address analysis found rest only on the reaching
  definitions of the register units it asked about (`ValueFlow.read_keys`, shared by the
  wave views) and on the launch facts (`lds_reuse.basis_of`: no calls, no LDS regions);
- the wave views themselves (`wave_roles.restrictions`, and the classes of views the class
  pairing walks): the wave-index units (written by scalar instructions and lane reads only),
  the SCC writers before branches, the values the restriction's probes asked about (their
  own read keys, `LdsFacts.role_keys`) and the CFG;
- the instructions' LDS kinds (`InstInfo.lds`): kept instructions keep their text.

So the answers carry over when the function was adopted with its blocks and edges, the launch
basis is equal, the pairing is the same object, and every instruction the edit added or
removed is *inert*: a vector ALU instruction (never an LDS access, a barrier, a call or a
branch), not one that reads or writes across lanes into scalar state or writes registers by
an index (`_NOT_INERT`), whose every destination is a VGPR or AGPR unit none of the previous
version's answers' analyses asked about (or a PHI of a unit none asked about: the SSA's new
join of an edited unit).  Otherwise every answer is asked again.  The keys
asked accumulate over the versions an answer survives, as in `lds_reuse`.
"""

from __future__ import annotations

from ..ir import Instruction, Reg

#: vector mnemonics that write scalar state, EXEC, or registers chosen by M0
_NOT_INERT = ("v_cmpx", "v_readlane", "v_readfirstlane", "v_movrel", "v_swaprel")


class WaveAnswers:
    """One version's wave-specialised publish answers and what they rest on.

    `answers`: (access, barrier) -> (answer, the ((barrier, narrowed), segment) pairs it read);
    `keys`: sets of register units the address analysis asked about (this version's sets, which
    grow until it ends, and the keys carried with reused answers); `basis`: the launch basis;
    `match`: the pairing object the answers read (set when it is made)."""

    __slots__ = ("answers", "keys", "basis", "match")

    def __init__(self, keys: tuple, basis: tuple | None) -> None:
        self.answers: dict = {}
        self.keys = keys
        self.basis = basis
        self.match: object | None = None


def inert(inst: Instruction, keys: tuple) -> bool:
    """`inst`, added or removed by the edit, can change none of the answers (module doc)."""
    if inst.is_label:
        return True
    phi = inst.is_phi  # (a join's new reaching definition: inert unless its unit was asked about)
    mn = inst.mnemonic
    if not phi and (not mn.startswith("v_") or mn.startswith(_NOT_INERT)):
        return False
    for op in inst.dsts:
        if type(op) is not Reg:
            continue
        if op.kind not in ("v", "a") and not phi:
            return False
        for u in range(op.lo, op.hi + 1):
            k = (op.kind, u)
            for ks in keys:
                if k in ks:
                    return False
    return True


def carried(prev: WaveAnswers | None, edited: list | None, basis: tuple | None, match: object) -> dict:
    """The previous version's answers that may hold on this one, each still to be checked
    against the segments it read ({}: none)."""
    if prev is None or not prev.answers or edited is None or basis is None or basis != prev.basis:
        return {}
    if match is None or prev.match is not match:
        return {}
    keys = prev.keys
    for inst in edited:
        if not inert(inst, keys):
            return {}
    return prev.answers
