"""The LDS disjointness facts of one function: what the wait pass asks before a fallback drain.

`lds_facts(func, ...)` returns an `LdsFacts`; nothing is computed until asked.  For two LDS
operations of the same wave, `may_overlap(a, b, same_trip)` is False only when no byte one of
them touches (on any lane, in any trip allowed by `same_trip`) is touched by the other, and
`why_not_proven(a, b, same_trip)` says in a sentence why the two could not be separated.

`same_trip=True` is the caller's promise that no loop back edge (an RPO back edge) is taken
between the two executions (the pass's queue entries with ``trips == 0``); then symbols
defined inside loops are the same instance for both, and a ping-pong base is on the same
trip residue for both.  `same_trip=False` allows any number of trips in between.

Addresses must fall below the target's LDS size to be compared (below it every address is a
distinct byte, so no wrap or alias can make two different addresses meet); any access
reaching beyond it is treated as touching everything.
"""

from __future__ import annotations

from math import gcd

from ..diagnostics import WARNING, Diagnostic
from ..ir import Function, Instruction, Module
from . import intervals as I
from .cfg import CfgInfo, compute_cfg
from .launch import LaunchInfo, launch_infos, target_of
from .lds_access import LdsAccess, Piece, access_of
from .lds_regions import Region, instruction_tag, parse_regions, parse_workgroup_sizes, tie
from .value_flow import ValueFlow
from .values import Atom, Lin, Val, const_val, lin_window
from .wave_roles import WaveRestriction, restrictions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .ssa import UseDefChains


class LdsFacts:
    """LDS accesses of one function and the pairwise disjointness queries (lazy, memoised).

    `regions`: the declared regions that apply to this function; `diagnostics`: declaration
    problems and disagreements between a declaration and a proven range (found so far).
    """

    def __init__(self, func: Function, flow: ValueFlow, launch: LaunchInfo, regions: list[Region] | None = None,
                 diagnostics: list[Diagnostic] | None = None) -> None:
        self.func = func
        self.flow = flow
        self.launch = launch
        self.regions = regions or []
        self.diagnostics = diagnostics if diagnostics is not None else []
        self._acc: dict = {}
        self._untrusted: str | None = None
        #: the line of a trusted `workgroup-size` declaration, when the launch comes from one
        self.declared_size: int | None = None
        #: each wave index's own view (analysis/wave_roles.py), made on the first query the
        #: path-insensitive analysis cannot answer; False: not made yet, None: none applies
        self._roles: list | None | bool = False
        #: the register units the views' restrictions asked about (their probes' values decide
        #: the branches each wave takes: waitcnt/publish_reuse.py reads them)
        self.role_keys: set = set()

    # --- per wave index ------------------------------------------------------------------------
    @property
    def views_made(self) -> bool:
        """Whether the per-wave views exist (some answer of this version may rest on them)."""
        return bool(self._roles)

    def roles(self) -> list[tuple[WaveRestriction, "LdsFacts"]] | None:
        """(restriction, facts of that wave's view) per wave index, when the wave index decides
        a branch of this kernel (the per-path wave-index restriction); None otherwise."""
        if self._roles is False:
            self._roles = None
            fl = self.flow
            if fl.launch is not None and fl.role is None:
                try:
                    rs = restrictions(self.func, fl.cfg, fl.launch, fl.chains, fl.text_hint, self.role_keys)
                except (RecursionError, ArithmeticError, LookupError, TypeError, ValueError, AttributeError):
                    fl.depth = 0
                    rs = None
                if rs:
                    out = []
                    for r in rs:
                        view = ValueFlow(self.func, fl.cfg, fl.launch, fl.chains, fl.text_hint, r)
                        view.read_keys = fl.read_keys  # what the answers rest on (lds_reuse)
                        out.append((r, LdsFacts(self.func, view, self.launch, self.regions, [])))
                    self._roles = out
        return self._roles  # type: ignore[return-value]

    def role_accesses(self, inst: Instruction) -> list[tuple[int, LdsAccess | None]] | None:
        """(wave index, the access as that wave runs it) for every wave that may run `inst`;
        None when there are no per-wave views."""
        roles = self.roles()
        if roles is None:
            return None
        return [(r.wave, f.access(inst)) for r, f in roles if inst.block in r.live]

    # --- accesses ------------------------------------------------------------------------------
    def access(self, inst: Instruction) -> LdsAccess | None:
        """The LDS access of `inst` (None: it touches no LDS memory)."""
        try:
            return self._acc[inst]
        except KeyError:
            pass
        try:
            acc = access_of(inst, self.flow, self.launch)
        except (RecursionError, ArithmeticError, LookupError, TypeError, ValueError, AttributeError) as e:
            # an analysis bug must cost precision, never the pass: the access is unknown
            self.flow.depth = 0
            acc = LdsAccess(inst, "rw", "ds", None, f"{inst.mnemonic} at line {inst.line}: internal analysis error "
                                                     f"({type(e).__name__})")
        if acc is not None and acc.pieces is not None:
            why = self._distrust(inst)
            if why:
                acc.pieces, acc.unknown = None, why
        if acc is not None and self.regions:
            self._apply_region(acc)
        self._acc[inst] = acc
        return acc

    def _distrust(self, inst: Instruction) -> str | None:
        """Why no range of `inst` can be trusted: its block is not reachable in the CFG, or
        the function jumps to computed addresses."""
        if self._untrusted is None:
            self._untrusted = self.flow.untrusted() or ""
        if self._untrusted:
            return self._untrusted
        if inst.block is None or inst.block not in self.flow.cfg.rpo_index:
            return f"line {inst.line} is not reachable in the CFG"
        return None

    def accesses(self) -> list[LdsAccess]:
        """Every LDS access of the function, in program order."""
        out = []
        for b in self.func.blocks:
            for inst in b.instrs:
                if inst.is_label or inst.is_phi:
                    continue
                a = self.access(inst)
                if a is not None:
                    out.append(a)
        return out

    def _apply_region(self, acc: LdsAccess) -> None:
        inst = acc.inst
        tag = instruction_tag(inst)
        region = tie(inst, self.regions)
        if tag is not None and region is None:
            self.diagnostics.append(Diagnostic(WARNING, "lds-region-unknown",
                                               f"lds-region: {tag} names no declared region", inst.line, 1))
            return
        if region is None:
            return
        if acc.pieces is not None and self._inside(acc, region.start, region.end):
            return  # proven, and consistent with the declaration
        if acc.pieces is not None and not self._unbounded(acc):
            r = acc.byte_range()
            self.diagnostics.append(Diagnostic(
                WARNING, "lds-region-conflict",
                f"{inst.mnemonic} is tied to {region.describe()}, but its addresses are "
                f"{I.fmt(r) if r else 'unknown'}: the declaration is not used for it", inst.line, 1))
            return
        acc.pieces = (Piece(const_val(region.start), region.end - region.start),)
        acc.unknown = None
        acc.trusted = region

    def _inside(self, acc: LdsAccess, lo: int, hi: int) -> bool:
        r = acc.byte_range()
        return r is not None and r[0] >= lo and r[1] < hi

    def _unbounded(self, acc: LdsAccess) -> bool:
        return not self._inside(acc, 0, self.launch.lds_limit)

    # --- pairs ----------------------------------------------------------------------------------
    def may_overlap(self, a: Instruction, b: Instruction, same_trip: bool = False) -> bool:
        """Might `a` and `b` touch a common LDS byte (same wave)?  Instructions that touch no
        LDS memory overlap nothing; an instruction that is not an access we understand
        overlaps everything."""
        return self._verdict(a, b, same_trip, False)[0]

    def why_not_proven(self, a: Instruction, b: Instruction, same_trip: bool = False) -> str:
        """Why `may_overlap` is True (a sentence naming both instructions), or why it is not."""
        return self._verdict(a, b, same_trip)[1]

    def may_overlap_waves(self, a: Instruction, b: Instruction, same_trip: bool = False) -> bool:
        """Might `a` executed by one wave and `b` executed by another wave of the workgroup
        touch a common LDS byte?  The two waves' indices differ (`_pieces_meet_waves`); every
        other symbol is another instance for the other wave (a lane read, a kernel argument
        alike: replaced by its range); with
        `same_trip` (both waves in the same trip of the loops the two accesses alternate
        with: the caller's promise) a ping-pong base is compared residue by residue.
        Unknown or unbounded accesses overlap everything; no LDS access overlaps nothing."""
        aa, ab = self.access(a), self.access(b)
        if aa is None or ab is None:
            return False
        if not self._plain_meet_waves(aa, ab, same_trip):
            return False
        # the per-wave views, where the wave index decides branches: each wave's own bytes
        # (aiter's gfx1250 f4gemm: a role's fill is its own tile, the join of the roles'
        # descriptors spans the others' too, inside the LDS or not)
        roles = self.roles()
        return roles is None or self._roles_meet_waves(a, b, roles)

    def may_overlap_waves_in(self, a: Instruction, b: Instruction, waves_a: tuple, waves_b: tuple) -> bool:
        """`may_overlap_waves` for `a` run by a wave of `waves_a` and `b` by another wave of
        `waves_b` (the pairing per class of wave views, waitcnt/wave_classes.py), every trip
        against every trip: the plain cross-wave test, then each pair of those waves' views."""
        aa, ab = self.access(a), self.access(b)
        if aa is None or ab is None:
            return False
        if not self._plain_meet_waves(aa, ab, False):
            return False
        roles = self.roles()
        if roles is None:
            return True
        return self._roles_meet_waves(a, b, [x for x in roles if x[0].wave in waves_a],
                                      [x for x in roles if x[0].wave in waves_b])

    def _plain_meet_waves(self, aa: LdsAccess, ab: LdsAccess, same_trip: bool) -> bool:
        for acc in (aa, ab):
            if acc.pieces is None or self._unbounded_why(acc):
                return True
        return any(_pieces_meet_waves(pa, pb, same_trip) for pa in aa.pieces for pb in ab.pieces)

    def _roles_meet_waves(self, a: Instruction, b: Instruction, roles: list, others: list | None = None) -> bool:
        """`a` run by wave i and `b` by wave j != i, each as its own view runs it: every symbol
        of one view is another instance in the other (its range; the wave index is a constant
        in each), compared over every trip residue.  `others`: the views j is among (default:
        `roles`)."""
        for ra, fa in roles:
            if a.block not in ra.live:
                continue
            xa = fa.access(a)
            for rb, fb in (roles if others is None else others):
                if rb.wave == ra.wave or b.block not in rb.live:
                    continue
                xb = fb.access(b)
                if xa is None or xb is None:
                    continue
                for acc, f in ((xa, fa), (xb, fb)):
                    if acc.pieces is None or f._unbounded_why(acc):
                        return True
                if any(_pieces_meet(pa, pb, False, 0) for pa in xa.pieces for pb in xb.pieces):
                    return True
        return False

    def wave_footprint(self, inst: Instruction) -> tuple:
        """What `may_overlap_waves` reads of an access, as plain values (no symbols: each is
        its range), so that an answer can be reused while this stays equal."""
        plain = self._plain_footprint(inst)
        roles = self.roles()
        if not roles:
            return plain
        return (plain,) + tuple((r.wave, inst.block in r.live, f._plain_footprint(inst)) for r, f in roles)

    def _plain_footprint(self, inst: Instruction) -> tuple:
        acc = self.access(inst)
        if acc is None:
            return ("none",)
        if acc.pieces is None or self._unbounded_why(acc):
            return ("unknown",)
        return tuple((p.size, tuple(_variant_free(x, 0) for x in p.addr.lins),
                      p.addr.phase[0] if p.addr.phase is not None else None,
                      p.addr.phase[1] if p.addr.phase is not None else 0) for p in acc.pieces)

    def trusted_by(self, a: Instruction, b: Instruction) -> list[Region]:
        """The declarations a disjointness result of this pair rests on."""
        out = []
        for x in (a, b):
            acc = self.access(x)
            if acc is not None and acc.trusted is not None:
                out.append(acc.trusted)
        return out

    def _verdict(self, a: Instruction, b: Instruction, same_trip: bool, say: bool = True) -> tuple[bool, str]:
        """(may overlap, why); `say=False`: the verdict alone, its sentence left empty (the
        pass asks only the verdict, for every pair it scans; the sentence is for the hover).
        What the whole function's analysis cannot separate may still be apart in each wave's
        own view (`roles`): a wave runs one view's paths only."""
        got = self._plain_verdict(a, b, same_trip, say)
        if not got[0]:
            return got
        roles = self.roles()
        if roles is None:
            return got
        n = 0
        for r, f in roles:
            if a.block not in r.live or b.block not in r.live:
                continue  # this wave never runs one of them
            if f._plain_verdict(a, b, same_trip, False)[0]:
                return got
            n += 1
        if not say:
            return False, ""
        msg = (f"{_name(a)} and {_name(b)}: disjoint as each wave runs them (the wave index fixed, the "
               f"branches it decides followed; {n} of {len(roles)} waves run both)")
        if not same_trip:
            msg += " in every trip"
        return False, msg

    def _plain_verdict(self, a: Instruction, b: Instruction, same_trip: bool, say: bool = True) -> tuple[bool, str]:
        """`_verdict` of this analysis alone (no per-wave views)."""
        na, nb = (_name(a), _name(b)) if say else ("", "")
        aa, ab = self.access(a), self.access(b)
        if aa is None or ab is None:
            which = na if aa is None else nb
            return False, f"{which} touches no LDS memory"
        for acc, n in ((aa, na), (ab, nb)):
            if acc.pieces is None:
                return True, f"{n}: {acc.unknown or 'its LDS range is unknown'}"
            bad = self._unbounded_why(acc)
            if bad:
                return True, f"{n}: {bad}"
        for pa in aa.pieces:
            for pb in ab.pieces:
                if _pieces_meet(pa, pb, same_trip):
                    if not say:
                        return True, ""
                    msg = (f"{na} touches {_bytes(aa)} and {nb} touches {_bytes(ab)}: "
                           f"these may overlap{_trip_note(pa, pb, same_trip)}")
                    return True, msg
        if not say:
            return False, ""
        trust = self.trusted_by(a, b)
        basis = "; ".join(f"trusted from the declaration of {r.describe()}" for r in trust)
        if self.declared_size is not None:
            basis += ("; " if basis else "") + f"trusting the workgroup size declared at line {self.declared_size}"
        msg = f"{na} touches {_bytes(aa)} and {nb} touches {_bytes(ab)}: disjoint"
        if not same_trip:
            msg += " in every trip"
        return False, msg + (f" ({basis})" if basis else "")

    def _unbounded_why(self, acc: LdsAccess) -> str | None:
        lim = self.launch.lds_limit
        for p in acc.pieces:
            c = p.span()
            if c[0] < 0 or c[1] + p.size > lim:
                why = p.addr.why
                rng = "any address" if c[1] - c[0] >= I.MASK32 >> 1 else I.fmt(c)
                base = f"its address ({rng}) is not known to stay inside the {lim:#x}-byte LDS"
                return base + (f": {why}" if why else "")
        return None


def _name(inst: Instruction) -> str:
    return f"{inst.mnemonic} at line {inst.line}"


def _bytes(acc: LdsAccess) -> str:
    r = acc.byte_range()
    if r is None:
        return "unknown bytes"
    return f"bytes [{r[0]:#x}, {r[1] + 1:#x})"


def _trip_note(pa: Piece, pb: Piece, same_trip: bool) -> str:
    if not same_trip and not _pieces_meet(pa, pb, True):
        return " across loop trips (they are disjoint within one trip)"
    return ""


#: symbols whose joint values a difference enumerates (instead of adding their ranges) when
#: there are at most this many combinations
_ENUMERATE = 64


def _diff_meets(la: Lin, lb: Lin, lo: int, hi: int) -> bool:
    """May (value of a) - (value of b) fall in [lo, hi]?  True when either form may wrap.

    The symbols left after cancelling are added as ranges, except that a few symbols of
    few values each (a wave's parity bit, a half index) are enumerated jointly: the sum of
    two such terms as intervals (0x46000*{0,1} + 0x2200*{0,1}) would cover the gaps between
    their four actual sums."""
    ka, kb = lin_window(la), lin_window(lb)
    if ka is None or kb is None:
        return True
    coeff: dict = {}
    for atom, c in la[0]:
        coeff[atom] = c
    for atom, c in lb[0]:
        coeff[atom] = coeff.get(atom, 0) - c
    # the two constant parts stay apart until the end (`_sub_meets`): their difference as one
    # interval of the steps' gcd would fill the holes between a padded tile's chunks
    base = (-((ka - kb) << 32), -((ka - kb) << 32), 0)
    # symbols derived from one root (a bit and a half of the wave index) are enumerated with
    # it: their values are the root's function, not independent
    groups: dict = {}
    for atom, c in coeff.items():
        if not c:
            continue
        d = atom.derived
        root = d[0] if d is not None else atom
        groups.setdefault(root, []).append((atom, c))
    small, combos = [], 1
    for root, members in groups.items():
        r = root.range
        n = 1 if r[2] == 0 else (r[1] - r[0]) // r[2] + 1
        if combos * n <= _ENUMERATE and I.in_u32(r):
            combos *= n
            small.append((root, r, members))
            continue
        for atom, c in members:
            base = I.add(base, I.mul_const(atom.range, c))
    offsets = [0]
    for root, r, members in small:
        vals = [r[0]] if r[2] == 0 else range(r[0], r[1] + 1, r[2])
        steps = [sum(c * (v if atom is root else atom.derived[1](v)) for atom, c in members) for v in vals]
        offsets = [o + st for o in offsets for st in steps]
    left = I.add(I.plain(la[1]), base)
    return any(_sub_meets(I.shift(left, o), lb[1], lo, hi) for o in offsets)


#: most members of the smaller side `_sub_meets` walks one by one
_EXACT = 256


def _sub_meets(x: I.SI, y: I.SI, lo: int, hi: int) -> bool:
    """May a member of `x` minus a member of `y` fall in [lo, hi]?  ``I.sub(x, y)`` steps by
    gcd(x's step, y's step): chunks 768 apart against a store's lanes 4 apart would cover every
    residue, also the 512 bytes of pad between the chunks.  So when both are strided and one has
    at most `_EXACT` members, each of its members is compared with the other as a strided
    interval (exact: one point against a strided interval)."""
    x, y = I.plain(x), I.plain(y)
    if not _meets(I.sub(x, y), lo, hi):
        return False
    if x[2] == 0 or y[2] == 0:
        return True  # a constant side: the difference above is exact
    if I.size(x) <= I.size(y):
        if I.size(x) > _EXACT:
            return True
        ny = I.neg(y)
        return any(_meets(I.shift(ny, v), lo, hi) for v in range(x[0], x[1] + 1, x[2]))
    if I.size(y) > _EXACT:
        return True
    return any(_meets(I.shift(x, -w), lo, hi) for w in range(y[0], y[1] + 1, y[2]))


def _meets(d: I.SI, lo: int, hi: int) -> bool:
    """Does the strided interval `d` have a member in [lo, hi]?"""
    dlo, dhi, st = d[:3]
    if dhi < lo or dlo > hi:
        return False
    if st == 0:
        return True
    first = dlo if dlo >= lo else dlo + -(-(lo - dlo) // st) * st
    return first <= min(dhi, hi)


def _variant_free(x: Lin, level: int) -> Lin:
    """A form with the symbols that may be another instance (`Atom.variant` >= level)
    replaced by their ranges."""
    if not any(a.variant >= level for a, _ in x[0]):
        return x
    kept = []
    s = x[1]
    for a, c in x[0]:
        if a.variant >= level:
            s = I.add(s, I.mul_const(a.range, c))
        else:
            kept.append((a, c))
    return (tuple(kept), s)


def _piece_pairs(pa: Piece, pb: Piece, same_trip: bool) -> list | None:
    """The pairs of linear forms to compare for two pieces, None when their spans are apart
    over every lane and trip.  Within one trip, two residue cycles of the same loop phase pair
    index by index (over the cycles' common period); otherwise every form meets every form."""
    ca, cb = pa.span(), pb.span()
    if ca[1] + pa.size <= cb[0] or cb[1] + pb.size <= ca[0]:
        return None
    va, vb = pa.addr, pb.addr
    if same_trip and va.phase is not None and vb.phase is not None and va.phase[0] is vb.phase[0]:
        p, q = va.phase[1], vb.phase[1]
        n = p * q // gcd(p, q)
        return [(va.lins[k % p], vb.lins[k % q]) for k in range(n)]
    return [(x, y) for x in va.lins for y in vb.lins]


def _pieces_meet(pa: Piece, pb: Piece, same_trip: bool, level: int | None = None) -> bool:
    """May the two pieces share a byte?  `level`: symbols of at least this `Atom.variant`
    are other instances (default: loop symbols across trips, subroutine symbols always;
    0: every symbol, two different waves)."""
    pairs = _piece_pairs(pa, pb, same_trip)
    if pairs is None:
        return False  # apart over every lane and trip
    if level is None:
        level = 2 if same_trip else 1
    for la, lb in pairs:
        la, lb = _variant_free(la, level), _variant_free(lb, level)
        if _diff_meets(la, lb, 1 - pa.size, pb.size - 1):
            return True
    return False


#: most (wave, other wave) index combinations a cross-wave comparison enumerates
_WAVE_PAIRS = 1024


def _wave_root(atom: Atom) -> Atom | None:
    """The wave-index symbol `atom` is (or is a function of), else None.  The analysis names
    the wave's index in its workgroup so (from TTMP8[29:25], or from v0 in a one-dimensional
    workgroup): unique per wave of a workgroup."""
    root = atom.derived[0] if atom.derived is not None else atom
    return root if root.origin.startswith("the wave's index") else None


def _wave_value(atom: Atom, values: dict) -> int:
    v = values[_wave_root(atom)]
    return v if atom.derived is None else atom.derived[1](v)


def _lane_sets(x: Lin, values: dict) -> list[I.SI] | None:
    """The integers form `x` takes in the wave whose wave-index symbols have `values`, every
    other symbol over its range (None: it may leave [0, 2^32), i.e. wrap).  A symbol of a few
    values (a two-way join of bases) is split value by value (at most `_FEW_SETS` sets):
    added to a strided chunk offset as one range it would fill the gap between its values
    (``{0, 0x8800} + [0, 8432] step 272`` is not ``[0, 43248] step 272``)."""
    sets = [x[1]]
    for a, c in x[0]:
        if _wave_root(a) is not None:
            sets = [I.shift(s, c * _wave_value(a, values)) for s in sets]
            continue
        lo, hi, st = a.range[:3]  # a 5-tuple's known bits are implied by its values
        n = (hi - lo) // st + 1 if st else 1
        if 1 < n and len(sets) * n <= _FEW_SETS:
            sets = [I.shift(s, c * v) for s in sets for v in range(lo, hi + 1, st)]
        else:
            sets = [I.add(s, I.mul_const(a.range, c)) for s in sets]
    return sets if all(I.in_u32(s) for s in sets) else None


#: the most sets `_lane_sets` splits one form into
_FEW_SETS = 8


def _pieces_meet_waves(pa: Piece, pb: Piece, same_trip: bool) -> bool:
    """May `pa` run by one wave and `pb` run by another share a byte?  Their wave indices are
    two different values of the index's range (enumerated in pairs, functions of the index
    computed from them); every other symbol is independent.  Residues pair as in
    `_pieces_meet`."""
    pairs = _piece_pairs(pa, pb, same_trip)
    if pairs is None:
        return False  # apart over every lane and trip
    for la, lb in pairs:
        roots = {r for lin in (la, lb) for a, _ in lin[0] for r in (_wave_root(a),) if r is not None}
        combos: list[tuple[dict, dict]] = [({}, {})]
        for r in roots:
            lo, hi, st = r.range[0], r.range[1], r.range[2] or 1
            vals = range(lo, hi + 1, st)
            if not I.in_u32(r.range) or len(combos) * len(vals) * len(vals) > _WAVE_PAIRS:
                combos = []
                break
            combos = [({**x, r: v}, {**y, r: w}) for x, y in combos for v in vals for w in vals if v != w]
        if not combos:  # too many to enumerate: every symbol as its range
            if _pieces_meet(pa, pb, same_trip, 0):
                return True
            continue
        for wa, wb in combos:
            sa, sb = _lane_sets(la, wa), _lane_sets(lb, wb)
            if sa is None or sb is None or any(_sub_meets(x, y, 1 - pa.size, pb.size - 1)
                                               for x in sa for y in sb):
                return True
    return False


def lds_facts(func: Function, module: Module | None = None, arch: str | None = None,
              cfg: CfgInfo | None = None, chains: UseDefChains | None = None,
              launch: LaunchInfo | None = None, regions: list[Region] | None = None) -> LdsFacts:
    """The (lazy) LDS facts of `func`.

    `module` gives the file's text (kernel launch facts, region declarations); `arch` the
    target when the text names none; `cfg`/`chains` the pass's CFG and SSA of this function
    when it has them (reused as they are; otherwise the CFG is computed and reaching
    definitions are found on demand, without touching the IR).
    """
    text = module.text if module is not None else ""
    diags: list[Diagnostic] = []
    declared = None
    if launch is None:
        infos = launch_infos(text, arch or target_of(text)) if text else {}
        launch = infos.get(func.name)
        if launch is not None and module is not None:
            sizes, diags = parse_workgroup_sizes(text, module.functions)
            declared = sizes.get(func)
            if declared is not None:
                launch = _declared_launch(launch, declared[0])
    kernel = launch is not None
    if launch is None:
        launch = LaunchInfo(arch or (target_of(text) if text else "gfx1250"))
    if regions is None and text and module is not None:
        per, more = parse_regions(text, module.functions)
        diags += more
        regions = per.get(func, [])
    flow = ValueFlow(func, cfg if cfg is not None else compute_cfg(func), launch if kernel else None, chains,
                     text or None)
    facts = LdsFacts(func, flow, launch, regions, diags)
    facts.declared_size = declared[1] if declared is not None else None
    return facts


def _declared_launch(la: LaunchInfo, size: tuple) -> LaunchInfo:
    """The launch facts with a declared workgroup size (`lds_regions.parse_workgroup_sizes`)."""
    if len(size) == 3:
        return LaunchInfo(la.arch, la.wave_size, la.workitem_id, size[0] * size[1] * size[2], size, la.lds_limit)
    return LaunchInfo(la.arch, la.wave_size, la.workitem_id, min(la.max_flat, size[0]), la.reqd, la.lds_limit)


def module_facts(module: Module, arch: str | None = None) -> dict[Function, LdsFacts]:
    """`lds_facts` of every function of a module (declarations parsed once)."""
    text = module.text
    infos = launch_infos(text, arch or target_of(text))
    per, diags = parse_regions(text, module.functions)
    sizes, more = parse_workgroup_sizes(text, module.functions)
    diags += more
    out = {}
    for i, f in enumerate(module.functions):
        la = infos.get(f.name)
        if la is not None and f in sizes:
            la = _declared_launch(la, sizes[f][0])
        kernel = la is not None
        la = la or LaunchInfo(arch or target_of(text))
        flow = ValueFlow(f, compute_cfg(f), la if kernel else None, None, text)
        out[f] = LdsFacts(f, flow, la, per.get(f, []), diags if i == 0 else [])
        out[f].declared_size = sizes[f][1] if f in sizes and kernel else None
    return out


__all__ = ["LdsFacts", "lds_facts", "module_facts", "Atom", "Val"]
