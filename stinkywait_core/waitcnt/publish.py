"""The cross-wave "publish" rule at barriers: which LDS accesses may stay in flight across one.

A barrier orders LDS between the waves of a workgroup, so the hardware model drains every own
in-flight LDS access before it (`hazards._lds_scan`, rule `barrier` / `fallback-barrier`).  The
drain is needed only if another wave could touch those bytes while the access is still in
flight.  Kernel writers let a tensor fill run across barriers because no wave touches that
tile before a later `s_wait_tensorcnt` and barrier; this module proves that case.

Where the other waves are.  When a wave leaves barrier instance k, every other wave has
arrived at instance k and none can pass instance k+1 before this wave signals it.  If every
wave executes the same sequence of barrier instructions (the function is *aligned*), the other
waves are then executing code of the *segment* of the barrier: what is reachable from it
before the wait of the next barrier (`s_barrier`, or an `s_barrier_wait` after an
`s_barrier_signal`), on any path.  An access `p` in flight at barrier `B` needs no drain there
when no access of the segment of `B`, executed by another wave, may touch a byte `p` writes
(or write a byte `p` reads).  If `p` is still in flight at the next barrier, the question is
asked again there, so one segment at a time covers every later trip.

Aligned: every conditional branch that may go different ways in different waves of a
workgroup ("wave-varying": its condition depends on the wave index, a lane, EXEC, VCC, a
hardware register, or a value written under such a branch) reconverges, at its immediate
post-dominator, without a barrier in between (the divergent region holds none).  Register
values are classified once per function, flow-insensitively (a register written anywhere
with a varying value is varying everywhere).  With one wave per workgroup (the launch's wave
count) nothing varies.  Assumptions: SGPRs set up at launch and scalar loads from uniform
addresses are the same in every wave of a workgroup (kernel arguments, workgroup ids).
Kernels specialised by wave index with barriers on the specialised paths are not aligned:
their barrier instances are paired between two waves (waitcnt/wave_match.py) and an access
needs no drain when no segment of a barrier paired with its own may touch its bytes.

Same trip: the two waves are compared in the same trip of a loop only when that loop holds
the barrier (an aligned loop with a barrier is run the same number of times by every wave),
no back edge lies between the access and the barrier, and none between the barrier and the
segment's access; otherwise across trips.

Answers are cached across versions (`PublishCache` in the function's memo) by what they
depend on: the segment (the CFG's edges and the positions of barriers, calls and LDS accesses
in it), the alignment verdict, and the LDS bytes of the accesses involved.  In a function
specialised by wave index an answer is reused while the edit cannot have changed what it read
(waitcnt/publish_reuse.py).
"""

from __future__ import annotations

from functools import lru_cache

from ..analysis.boundaries import local_transfers
from ..ir import Block, Function, Instruction, Reg
from .lds_reuse import basis_of
from .publish_reuse import WaveAnswers, carried

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..analysis.cfg import CfgInfo
    from ..analysis.lds_facts import LdsFacts

_SIGNAL, _WAIT, _FULL = "signal", "wait", "full"
#: scalar results that differ between waves whatever their sources
_VARYING_RESULTS = ("s_getreg", "s_memtime", "s_memrealtime", "s_get_barrier_state", "s_sendmsg_rtn",
                    "s_barrier_signal_isfirst", "s_atomic", "s_buffer_atomic", "s_get_pc", "s_sleep_var")


@lru_cache(maxsize=4096)
def _mnemonic_class(mn: str) -> tuple[bool, bool, bool, bool]:
    """(scalar, call or computed jump, may be a barrier, result varies by itself), per mnemonic."""
    scalar = mn.startswith("s_")
    return (scalar, scalar and mn.startswith(("s_call", "s_swappc", "s_setpc", "s_set_pc")),
            mn.startswith("s_barrier"), mn.startswith("v_") or mn.startswith(_VARYING_RESULTS))


def barrier_kind(inst: Instruction) -> str | None:
    mn = inst.mnemonic
    if not _mnemonic_class(mn)[2]:
        return None
    if mn == "s_barrier":
        return _FULL
    if mn.startswith("s_barrier_signal"):
        return None if inst.first_literal() in (-3, 0xfffd) else _SIGNAL
    if mn == "s_barrier_wait":
        return None if inst.first_literal() in (-3, 0xfffd) else _WAIT
    return None


def _is_call(inst: Instruction) -> bool:
    return _mnemonic_class(inst.mnemonic)[1]


class Alignment:
    """Does every wave of a workgroup execute the same barriers (see the module docstring)?

    Varying values follow the SSA's reaching definitions (`inst.sources`, flow-sensitive):
    an instruction's scalar result varies when it is a vector instruction's (a lane read, a
    compare), a hardware register's or a scalar atomic's, when it reads a VGPR, a trap
    temporary (gfx12's workgroup-id TTMPs excepted) or EXEC (LLVM's uniform-branch idiom
    `s_and vcc, exec, s` excepted), when a definition it reads varies, or when it lies in the
    divergent region of a varying branch.  A function with calls is not aligned (the SSA does
    not follow them)."""

    def __init__(self, func: Function, cfg: "CfgInfo", waves: int, arch: str = "") -> None:
        self.func = func
        self.cfg = cfg
        self.arch = arch
        self.single = waves <= 1
        self.why = ""
        self.aligned = self.single or self._solve()

    def _solve(self) -> bool:
        blocks = list(self.cfg.rpo)
        barrier_blocks = set()
        scalar = []
        for b in blocks:
            for inst in b.instrs:
                if inst.is_label:
                    continue
                if inst.is_phi or _mnemonic_class(inst.mnemonic)[0]:
                    scalar.append(inst)
                    if _is_call(inst):
                        self.why = f"{inst.mnemonic} at line {inst.line}: calls are not followed"
                        return False
                    if barrier_kind(inst):
                        barrier_blocks.add(b)
        if not barrier_blocks:
            return True
        varying, users = self._seed(scalar)
        pdom = PostDominators(blocks)
        done: set = set()
        while True:
            grown = False
            for x in blocks:
                if len(x.succs) < 2 or x in done or not self._branch_varies(x, varying):
                    continue
                done.add(x)
                region = divergent_region(x, pdom.immediate(x))
                if region & barrier_blocks:
                    term = x.terminator()
                    self.why = (f"the branch at line {term.line if term else '?'} may go different ways in "
                                f"different waves and a barrier lies before its paths meet")
                    return False
                # values written under the branch differ between waves after it
                _spread(varying, users, [i for b in region for i in b.instrs if not i.is_label])
                grown = True
            if not grown:
                return True

    def _seed(self, scalar: list) -> tuple[set, dict]:
        """The scalar instructions whose results may differ between waves, and the scalar
        readers of each definition (to spread later additions).  Vector instructions vary by
        themselves (a scalar reading one varies)."""
        users: dict = {}
        seeds = []
        for inst in scalar:
            if self._inherent(inst):
                seeds.append(inst)
                continue
            for src in inst.sources or ():
                if src is None:
                    continue  # a value from the launch (its register kind decided above)
                if not src.is_phi and not _mnemonic_class(src.mnemonic)[0]:
                    seeds.append(inst)
                    break
                users.setdefault(src, []).append(inst)
        varying: set = set()
        _spread(varying, users, seeds)
        return varying, users

    def _inherent(self, inst: Instruction) -> bool:
        if inst.is_phi:
            return False
        mn = inst.mnemonic
        if _mnemonic_class(mn)[3]:
            return True
        execs = 0
        for r in inst.srcs:
            if type(r) is not Reg:
                continue
            k = r.kind
            if k == "v" or k == "a" or (k == "ttmp" and not self._group_ttmp(r)):
                return True
            if k == "exec":
                execs += 1
        if not execs:
            return False
        dsts = [r.kind for r in inst.dsts if type(r) is Reg and r.kind != "SCC"]
        return not (mn.startswith("s_and_b") and dsts == ["vcc"] and execs == 1)

    def _group_ttmp(self, r: Reg) -> bool:
        """Trap temporaries holding per-workgroup values: on gfx12 the architected workgroup
        ids (TTMP9 x, TTMP7 y/z) and gfx1250's cluster ids (TTMP6), as LLVM 22 reads them
        (`s_and_b32 s, ttmp7, 0xffff`); TTMP8 holds the wave's index, and others vary."""
        return self.arch.startswith("gfx12") and r.lo == r.hi and r.lo in (6, 7, 9)

    def _branch_varies(self, b: Block, varying: set) -> bool:
        term = b.terminator()
        if term is None or not term.mnemonic.startswith(("s_cbranch_scc", "s_cbranch_vcc")):
            return True  # EXEC, computed targets, fall-through splits: may differ
        srcs = term.sources or ()
        return not srcs or any(s is None or s in varying or (not s.is_phi and not s.mnemonic.startswith("s_"))
                               for s in srcs)


def _spread(varying: set, users: dict, start: list) -> None:
    work = [i for i in start if i not in varying]
    varying.update(work)
    while work:
        for u in users.get(work.pop(), ()):
            if u not in varying:
                varying.add(u)
                work.append(u)


class PostDominators:
    """Post-dominator sets over `blocks` as bit masks (bit n: the virtual exit), by the
    iterative intersection; `immediate(b)` on demand."""

    def __init__(self, blocks: list[Block]) -> None:
        self.blocks = blocks
        idx = self.idx = {b: i for i, b in enumerate(blocks)}
        n = len(blocks)
        full = (1 << (n + 1)) - 1
        self.exit = 1 << n
        pdom = self.pdom = [full] * n
        succs = [[idx[s] for s in b.succs if s in idx] for b in blocks]
        changed = True
        while changed:
            changed = False
            for i in range(n - 1, -1, -1):
                acc = self.exit if not succs[i] else full
                for s in succs[i]:
                    acc &= pdom[s]
                acc |= 1 << i
                if acc != pdom[i]:
                    pdom[i] = acc
                    changed = True

    def immediate(self, b: Block) -> Block | None:
        """The nearest strict post-dominator (None: the exit): the one whose own set is the
        strict set."""
        i = self.idx[b]
        strict = self.pdom[i] & ~(1 << i)
        rest = strict & ~self.exit
        while rest:
            j = (rest & -rest).bit_length() - 1
            rest &= rest - 1
            if self.pdom[j] == strict:
                return self.blocks[j]
        return None


def divergent_region(x: Block, stop: Block | None) -> set[Block]:
    """Blocks reachable from `x`'s successors before `stop` (x itself if a cycle returns)."""
    seen: set[Block] = set()
    work = list(x.succs)
    while work:
        b = work.pop()
        if b is stop or b in seen:
            continue
        seen.add(b)
        work.extend(b.succs)
    return seen


class Segment:
    """The LDS accesses other waves may run after a barrier (see the module docstring):
    `accesses` maps each to whether it may be reached across a back edge; `opaque` says why
    the segment cannot be known (a call or computed jump in it)."""

    __slots__ = ("accesses", "opaque", "key", "seen")

    def __init__(self, barrier: Instruction, cfg: "CfgInfo", is_lds, local: frozenset = frozenset(),
                 narrow: dict | None = None, marks_of=None) -> None:
        if marks_of is None:
            def marks_of(b: Block) -> tuple:
                return _marks(b, is_lds)
        self.accesses: dict[Instruction, bool] = {}
        self.opaque = ""
        order: list = []
        b0 = barrier.block
        start = b0.instrs.index(barrier) + 1
        seen: set = set()
        work = [(b0, start, False, False)]
        #: the blocks walked, with their barriers, calls and LDS accesses then (a reuse needs
        #: them unchanged)
        self.seen: dict[Block, tuple] = {}
        while work:
            b, pos, signalled, crossed = work.pop()
            instrs = b.instrs
            self.seen[b] = marks_of(b)
            stop = False
            for k in range(pos, len(instrs)):
                inst = instrs[k]
                if inst.is_label or inst.is_phi:
                    continue
                kind = barrier_kind(inst)
                if kind or is_lds(inst):
                    order.append(inst)
                if kind == _FULL or (kind == _WAIT and signalled):
                    stop = True
                    break
                if kind == _SIGNAL:
                    signalled = True
                if _is_call(inst) and inst not in local:
                    # (a call of a subroutine of the function, and its return, are CFG edges:
                    # the walk goes into the callee and back after every call of it)
                    self.opaque = f"{inst.mnemonic} at line {inst.line} leaves the function's CFG"
                if is_lds(inst):
                    self.accesses[inst] = self.accesses.get(inst, False) or crossed
            if stop:
                continue
            for s in b.succs:
                c = crossed or cfg.is_back_edge(b, s)
                way = narrow.get((b, s)) if narrow else None
                nexts = [s]
                if way is not None:
                    # an exit into a stage-count dispatch whose value the path fixes
                    # (analysis/exit_dispatch.py): only the epilogues it selects
                    walked, nexts = way
                    for d in walked:
                        self.seen[d] = marks_of(d)
                        c = c or any(cfg.is_back_edge(d, t) for t in d.succs)
                for t in nexts:
                    st = (t, signalled, c)
                    if st in seen:
                        continue
                    seen.add(st)
                    work.append((t, 0, signalled, c))
        self.key = tuple(order)


def _marks(b: Block, is_lds) -> tuple:
    """What a segment reads of a block: its barriers, calls and LDS accesses, in order."""
    return tuple(i for i in b.instrs if not i.is_label and (barrier_kind(i) or _is_call(i) or is_lds(i)))


class PublishCache:
    """What carries across versions: segments by (barrier, CFG signature) and answers by
    the facts they rest on (kept in the function's memo)."""

    __slots__ = ("segments", "answers", "alignment", "edges", "old_segments", "old_answers", "match", "classes",
                 "wave", "match_parts")

    def __init__(self) -> None:
        self.edges: tuple | None = None
        self.segments: dict = {}
        self.answers: dict = {}
        self.old_segments: dict = {}
        self.old_answers: dict = {}
        self.alignment: tuple | None = None
        self.match: tuple | None = None
        #: (the pairing's signature and the classes of wave views, their `ClassPairing`)
        self.classes: tuple | None = None
        #: the last version's wave-specialised answers (publish_reuse.WaveAnswers; None when
        #: that version asked none)
        self.wave = None
        #: the lane slice's units and, per block, its instructions and its part of the
        #: pairing's signature (`Publish._match_signature`)
        self.match_parts: tuple | None = None


class Publish:
    """The publish answers of one version of a function (made on the first question)."""

    def __init__(self, func: Function, cfg: "CfgInfo", facts: "LdsFacts", info: dict, cache: PublishCache | None,
                 waves: int, edited: list | None = None) -> None:
        self.func, self.cfg, self.facts, self.info = func, cfg, facts, info
        #: answers are kept for the next version only with a memo (a cold plan skips the keys)
        self.persist = cache is not None
        self.cache = cache if cache is not None else PublishCache()
        # only the last version's entries carry over (dropped instructions are let go)
        self.cache.old_answers, self.cache.answers = self.cache.answers, {}
        self.cache.old_segments, self.cache.segments = self.cache.segments, {}
        #: the instructions the edit added or removed (None: not an adopted version), and the
        #: last version's wave-specialised answers, sorted out on the first such question
        self.edited = edited
        self._wave_prev = self.cache.wave
        self._wave_carry: dict | None = None
        self._wave: WaveAnswers | None = None
        if self.persist:
            self._wave = self.cache.wave = WaveAnswers((facts.flow.read_keys, facts.role_keys), basis_of(facts))
        else:
            self.cache.wave = None
        self.waves = waves
        self._align: Alignment | None = None
        self._match = None
        self._classes: object = False
        self._segs: dict[Instruction, Segment] = {}
        self._marks: dict[Block, tuple] = {}
        self._sig: tuple | None = None
        self._bytes: dict[Instruction, object] = {}
        self._token: object | None = None
        self._transfers: frozenset | None = None
        self._narrow: dict | None = None

    def _narrowing(self) -> dict:
        """The exit edges whose stage-count dispatch is fixed (analysis/exit_dispatch.py),
        made once per version."""
        if self._narrow is None:
            from ..analysis.exit_dispatch import dispatch_narrowing
            self._narrow = dispatch_narrowing(self.func)
        return self._narrow

    def _local(self) -> frozenset:
        """The calls of subroutines of this function and their returns (CFG edges, not
        boundaries: analysis/boundaries.py)."""
        if self._transfers is None:
            calls, returns = local_transfers(self.func)
            self._transfers = frozenset(calls | returns)
        return self._transfers

    def _block_marks(self, b: Block) -> tuple:
        """`_marks` of a block, made once per version (the segments of a function's barriers
        walk the same blocks: 41 segments over most of the GEMM's loop)."""
        got = self._marks.get(b)
        if got is None:
            got = self._marks[b] = _marks(b, self._is_lds)
        return got

    def _is_lds(self, inst: Instruction) -> bool:
        inf = self.info.get(inst)
        return bool(inf is not None and inf.lds)

    def _signature(self) -> tuple:
        """The CFG and what the alignment reads: the scalar instructions (and PHIs) of each
        block with their reaching definitions, by identity (a vector edit that feeds no
        scalar instruction keeps it)."""
        if self._sig is None:
            edges = tuple((b, tuple(b.succs)) for b in self.cfg.rpo)
            scalar = tuple(tuple((i, tuple(i.sources or ())) for i in b.instrs
                                 if not i.is_label and (i.is_phi or _mnemonic_class(i.mnemonic)[0]))
                           for b in self.cfg.rpo)
            self._sig = (edges, scalar, self.facts.launch.arch)
        return self._sig

    def aligned(self) -> bool:
        if self._align is None and not self.persist:
            self._align = Alignment(self.func, self.cfg, self.waves, self.facts.launch.arch)
        if self._align is None:
            old = self.cache.alignment
            sig = self._signature()
            if old is not None and old[0] == sig and old[1].single == (self.waves <= 1):
                self._align = old[1]
            else:
                self._align = Alignment(self.func, self.cfg, self.waves, self.facts.launch.arch)
                self.cache.alignment = (sig, self._align)
        return self._align.aligned

    def segment(self, barrier: Instruction, narrowed: bool = False) -> Segment:
        """What other waves may run after `barrier`; `narrowed`: past a loop exit only the
        epilogues its stage-count dispatch selects (analysis/exit_dispatch.py).  Only the
        wave-specialised answer narrows (its checker counterpart is `WaveView.epoch_of`; no
        aligned kernel here has such a dispatch)."""
        key = (barrier, narrowed)
        seg = self._segs.get(key)
        narrow = self._narrowing() if narrowed else None
        if seg is None and not self.persist:
            seg = self._segs[key] = Segment(barrier, self.cfg, self._is_lds, self._local(), narrow, self._block_marks)
        if seg is None:
            edges = self._signature()[0]
            if narrow:
                # the narrowing rests on scalar code anywhere before the barrier: part of the key
                edges = (edges, tuple(sorted(((id(e), id(h)), w) for (e, h), w in narrow.items())))
            got = self.cache.old_segments.get(key)
            if got is not None and got[0] == edges and all(
                    self._block_marks(b) == old for b, old in got[1].seen.items()):
                seg = got[1]
            else:
                seg = Segment(barrier, self.cfg, self._is_lds, self._local(), narrow, self._block_marks)
            self.cache.segments[key] = (edges, seg)
            self._segs[key] = seg
        return seg

    def _edges_token(self) -> object:
        """One object per CFG shape: the same as the last version's while the edges are."""
        if self._token is None:
            edges = self._signature()[0]
            old = self.cache.edges
            if old is not None and old[0] == edges:
                self._token = old[1]
            else:
                self._token = object()
                self.cache.edges = (edges, self._token)
        return self._token

    def _footprint(self, inst: Instruction):
        got = self._bytes.get(inst)
        if got is None:
            got = self._bytes[inst] = self.facts.wave_footprint(inst)
        return got

    def matched(self):
        """The pairing of barriers between waves of a function that is not aligned
        (waitcnt/wave_match.py), made once per version (kept with the alignment's key)."""
        if self._match is None:
            from .wave_match import WaveMatch
            old = self.cache.match if self.persist else None
            sig = self._match_signature() if self.persist else None
            if old is not None and old[0] == sig:
                self._match = old[1]
            else:
                self._match = WaveMatch(self.func, barrier_kind, self.facts.launch.arch)
                if self.persist:
                    self.cache.match = (sig, self._match)
        return self._match

    def _match_signature(self) -> tuple:
        """What the pairing reads: the CFG and, per block, its fences, calls, the
        instructions that write a scalar register or a vector unit a lane read may take
        (`lane_uniform.lane_slice`), by identity (an edit makes a new one), and its
        terminator; not PHIs or reaching definitions (rebuilt on every version: an edit that
        changes what a lane read takes writes one of those units, so is listed)."""
        from .lane_uniform import lane_slice, vector_units
        from .wave_match import _unit_keys
        units = lane_slice(self.func, _unit_keys).units

        def reads(i: Instruction) -> bool:
            return (barrier_kind(i) is not None or _is_call(i)
                    or any(type(r) is Reg and r.kind not in ("v", "a") for r in i.dsts)
                    or (bool(units) and any(u in units for r in i.dsts if type(r) is Reg and r.kind in ("v", "a")
                                            for u in vector_units(r))))
        # a block's part is the last version's while the lane slice's units and the block's
        # instructions (by identity, in order) are (an edit changes one block or two)
        old = self.cache.match_parts if self.persist else None
        old_parts = old[1] if old is not None and old[0] == units else {}
        parts: dict = {}
        out = []
        for b in self.cfg.rpo:
            got = old_parts.get(b)
            if got is None or got[0] != b.instrs:  # (list ==: identity per element, C-level)
                got = (list(b.instrs), (tuple(i for i in b.instrs if not i.is_label and not i.is_phi and reads(i)),
                                        b.terminator()))
            parts[b] = got
            out.append(got[1])
        if self.persist:
            self.cache.match_parts = (units, parts)
        return (self._signature()[0], self.facts.launch.arch, tuple(out))

    def published(self, p: Instruction, barrier: Instruction, same_trip: bool) -> bool:
        """`p`, in flight at `barrier`, may stay in flight across it (no other wave touches
        its bytes before the next barrier)."""
        if not self.aligned():
            return self._published_specialised(p, barrier)
        seg = self.segment(barrier)
        if seg.opaque:
            return False
        writes = "w" in self.info[p].lds
        if not self.persist:
            return self._answer(p, barrier, seg, writes, same_trip)
        key = (p, barrier, same_trip)
        dep = (self._footprint(p), seg.key, self._edges_token(), self._align.single, tuple(
            (q, crossed, self._footprint(q)) for q, crossed in seg.accesses.items()))
        old = self.cache.answers.get(key) or self.cache.old_answers.get(key)
        if old is not None and old[0] == dep:
            self.cache.answers[key] = old
            return old[1]
        ans = self._answer(p, barrier, seg, writes, same_trip)
        self.cache.answers[key] = (dep, ans)
        return ans

    def _published_specialised(self, p: Instruction, barrier: Instruction) -> bool:
        """Not aligned: another wave is after one of the barriers it may meet as the same
        instance (`WaveMatch`), or has ended; none of their segments' accesses may touch
        `p`'s bytes.  Compared across trips (the waves' loops are different loops).  The last
        version's answer is taken where the edit cannot have changed it (publish_reuse.py)."""
        key = (p, barrier)
        old = self._carried().get(key)
        if old is not None and all(self.segment(*at) is seg for at, seg in old[1]):
            self._wave.answers[key] = old  # (its segments are this version's: it holds on)
            return old[0]
        read: list = []

        def segment_of(x: Instruction, narrowed: bool = False) -> Segment:
            seg = self.segment(x, narrowed)
            read.append(((x, narrowed), seg))
            return seg

        ans = self._published_abstract(p, barrier, segment_of)
        if not ans:
            pairing = self._class_pairing()  # (per class of wave views: waitcnt/wave_classes.py)
            ans = pairing is not None and pairing.published(p, barrier, segment_of, lambda i: "w" in self.info[i].lds,
                                                            self.facts.may_overlap_waves_in)
        if self._wave is not None:
            self._wave.answers[key] = (ans, tuple(read))
        return ans

    def _carried(self) -> dict:
        """The last version's wave-specialised answers that may hold on this one (each still
        checked against its segments), sorted out once per version."""
        if self._wave_carry is None:
            self._wave_carry = {}
            if self._wave is not None:
                match = self.matched()
                self._wave.match = match
                prev = self._wave_prev
                self._wave_carry = carried(prev, self.edited, self._wave.basis, match)
                if self._wave_carry:  # (their keys are this version's too)
                    self._wave.keys += (frozenset().union(*prev.keys),)
        return self._wave_carry

    def _published_abstract(self, p: Instruction, barrier: Instruction, segment_of=None) -> bool:
        """`_published_specialised` by the pairing of two abstract waves."""
        if segment_of is None:
            segment_of = self.segment
        met = self.matched().met
        if met is None:
            return False
        others = met.get(barrier)
        if not others:
            return False  # not reached by the walk: nothing is known
        writes = "w" in self.info[p].lds
        for x in others:
            if x is None:
                continue  # that wave has ended
            seg = segment_of(x, narrowed=True)
            if seg.opaque:
                return False
            for q in seg.accesses:
                if not writes and "w" not in self.info[q].lds:
                    continue
                if self.facts.may_overlap_waves(p, q, False):
                    return False
        return True

    def _class_pairing(self):
        """The pairing per class of wave views when the wave index decides branches (made on
        first use, for this version)."""
        if self._classes is False:
            from .wave_classes import ClassPairing, wave_classes
            classes = wave_classes(self.facts.roles())
            if classes is None:
                self._classes = None
                return None
            key = (self._match_signature(), frozenset(classes)) if self.persist else None
            old = self.cache.classes
            if key is not None and old is not None and old[0] == key:
                self._classes = old[1]  # (its walks ran on this very CFG and these views)
            else:
                self._classes = ClassPairing(self.func, barrier_kind, self.facts.launch.arch, classes)
                if key is not None:
                    self.cache.classes = (key, self._classes)
        return self._classes

    def _answer(self, p: Instruction, barrier: Instruction, seg: Segment, writes: bool, same_trip: bool) -> bool:
        if self._align.single:
            return True  # no other wave
        phased = same_trip and self._phases_hold(p, barrier)
        for q, crossed in seg.accesses.items():
            if not writes and "w" not in self.info[q].lds:
                continue  # two reads
            st = phased and not crossed and self._phases_hold(q, barrier)
            if self.facts.may_overlap_waves(p, q, st):
                return False
        return True

    def _phases_hold(self, inst: Instruction, barrier: Instruction) -> bool:
        """Every loop `inst`'s address alternates with holds the barrier."""
        acc = self.facts.access(inst)
        if acc is None or acc.pieces is None:
            return True
        for piece in acc.pieces:
            ph = piece.addr.phase
            if ph is None:
                continue
            h = ph[0]
            b = barrier.block
            if not (h is b or (self.cfg.reaches(h, b) and self.cfg.reaches(b, h))):
                return False
        return True


def published_notes(pub: Publish | None) -> list[tuple[Instruction, str]]:
    """(first barrier, sentence) when the rule was asked in an aligned function with other
    waves: the assumption it rests on, said once at the function's first barrier
    (docs/decisions.md 45)."""
    if pub is None or pub._align is None or pub._align.single:
        return []
    paired = not pub._align.aligned and pub._match is not None and pub._match.met is not None
    if not pub._align.aligned and not paired:
        return []
    first = next((i for b in pub.func.blocks for i in b.instrs if not i.is_label and barrier_kind(i)), None)
    if first is None:
        return []
    # short: VS Code shows it in the hover of the wait at this line, which must fit its box
    if paired:
        return [(first, "publish rule: LDS ops may cross barriers undrained; waves on different paths are paired "
                        "barrier by barrier, assuming equal scalar loads (decisions.md 45)")]
    return [(first, "publish rule: LDS ops may cross barriers undrained, assuming every wave of the workgroup "
                    "runs the same barriers (decisions.md 45)")]
