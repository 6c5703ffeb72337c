"""The checker's own pairing of barrier instances between two waves of a wave-specialised function.

Written for the checker alone (the pass's waitcnt/wave_match.py shares nothing with it).  Two
waves, A and B, are executed together over the function's blocks with *value numbers*: every
scalar register of each wave names a symbolic value (a tuple).  At the entry an SGPR holds
the launch's value, the same name in both waves; EXEC, M0, trap temporaries (gfx12's
workgroup-id TTMP6/7/9 excepted) and anything a vector instruction, a hardware-register read
or an atomic writes are names of one wave only.  Any other scalar instruction's result is
named by its operation (mnemonic, non-register operands, modifiers) and its sources' names,
so two waves computing the same thing from the same values hold the same name (a scalar
load from equal addresses too: the publish rule's assumption); `s_and vcc, exec, s` is named
by `s` alone (LLVM's uniform-branch idiom).  Where two executions of a pair of positions meet,
the two executions' names are *anti-unified*: where they differ, a variable of that pair stands
for the two names, one variable wherever the same two names meet (in either wave), and equal
scalar operations keep their shape over generalised sources, so "B's counter is A's plus 0x40"
(ping-pong roles stepping one counter before and after a barrier) survives the join; names the
pair made at an earlier visit are renamed before (they are that visit's values).  After a few
joins of one pair the plain join takes over: a register whose names differ becomes a join name
of that pair, shared by both waves when it was shared in both executions and per wave otherwise
(so the walk ends).

Each wave runs to its next LDS-fence barrier or its block's end; two waves at a barrier are
that barrier instance in both (`partners`); a wave at a barrier waits while the other runs; at
two block ends a conditional branch on the same-named SCC/VCC, of the same kind, goes one way
in both, every other pair of successors is walked.  A wave with no successor has ended
(`None` partner: it touches no LDS).  Calls of the function's own subroutines (the checker's
reading, hwfacts.py) are followed with a return stack per wave: a call goes to its callee and
remembers the block after it, a return goes back to the last call's block (the return address a
call writes is named by the call's position: two waves at one call hold the same address).
Other calls or jumps, a return with nothing to return to, calls nested deeper than `_NEST`,
two fence kinds met as one instance, or too many pairs of positions: no pairing (None).

Where the two may part, a wave whose branch has a *rejoin* (the nearest block, breadth first,
that every way from the branch reaches with no fence, call, return or end before it, each block
on the way having a way on to it) runs on to it at once, what the ways write becoming its own
names (`_run_on`); and a successor block that only tests a value whose names differ between
the waves is passed to where it goes on (`_through_tests`: a dispatch chain on the wave index
is one step).  The two waves then meet their next branches and fences together.

Vector registers a ``v_readfirstlane`` may read are named too (split-k kernels divide kernel
arguments in the vector unit and take the quotient back to a scalar: the loop bound).  A
vector result is one *lane-uniform* name, the same in both waves, when the instruction works
lane by lane (no cross-lane operand, no hidden or old-destination input, not a 16-bit or SDWA
result), runs where EXEC is still the launch mask (no EXEC write on a path from the entry),
and reads only constants, scalars, lane-uniform vector names, and for its lane-mask operand
(``v_cndmask``'s condition, a carry in) a mask that such a compare wrote (the compare's scalar
value is the wave's own: it holds EXEC's bits; its per-lane meaning is shared).  A lane read
of a lane-uniform name is that name as a scalar; anything else vector is the wave's own.

The walk reads a *skeleton* of the function (per block: its fences and the instructions that
write a scalar register, its successors, its last mnemonic), a plain value: the review's
checker runs, on versions of one function that differ in their waits only, share one walk
(`barrier_pairs` keeps the last few).  Fences are named by block and ordinal in the block.
"""

from __future__ import annotations

from functools import lru_cache

from ..ir import Reg
from .hwbranch import KNOWN, Usable, branch_info, condition_units, decided, join_facts, launch_way, outcome_facts

_ONLY_ONE = ("s_getreg", "s_memtime", "s_memrealtime", "s_get_barrier_state", "s_sendmsg_rtn",
             "s_barrier_signal_isfirst", "s_atomic", "s_buffer_atomic", "s_get_pc", "s_sleep_var")
_CALLS = ("s_call", "s_swappc", "s_setpc", "s_set_pc")
_MAX_PAIRS = 40000
#: joins of one pair of positions that generalise (anti-unify) before the plain join takes over
_GENERALISE = 8
#: deepest operation nesting a generalisation looks into
_AU_DEPTH = 12
_NEST = 8
_END = -1
#: most branches a wave runs past to their rejoins in one step (`_Walk._run_on`)
_RUN_ON = 16
#: blocks tried as a branch's rejoin, and most blocks on the ways to it (`_Walk._rejoin`)
_JOIN_TRIES = 24
_JOIN_BLOCKS = 256


def _units(r: Reg) -> list[tuple]:
    return [(r.kind, u) for u in range(r.lo, r.hi + 1)]


#: vector operations that are not lane by lane (or read hidden state or their old result)
_CROSS_LANE = ("v_mbcnt", "v_readlane", "v_writelane", "v_permlane", "v_movrel", "v_swap", "v_interp", "v_mfma",
               "v_smfmac", "v_wmma", "v_swmmac", "v_dual_", "v_mac_", "v_fmac_", "v_pk_fmac", "v_div_fmas",
               "v_div_scale", "v_cmpx", "v_bpermute", "v_dot2c", "v_dot4c", "v_dot8c", "v_cvt_pk_", "v_prng",
               "v_sat_pk")
_NOT_PER_LANE_TEXT = ("row_", "quad_perm", "dpp", "bound_ctrl", "wave_", "op_sel", "fi:", "_sel:", "dst_unused")
_NARROW = {"u16", "i16", "b16", "f16", "bf16", "u8", "i8"}
_MASK_READERS = ("v_cndmask", "v_addc", "v_subb", "v_add_co_ci", "v_sub_co_ci", "v_subrev_co_ci")


def _per_lane(inst) -> bool:
    mn = inst.mnemonic
    if mn.startswith(_CROSS_LANE) or mn.endswith(("_dpp", "_dpp8", "_sdwa")) or _NARROW.intersection(mn.split("_")):
        return False
    return not (inst.suffix and any(t in inst.suffix for t in _NOT_PER_LANE_TEXT))


def _mask_slot(inst) -> int | None:
    """The lane-mask operand's index among the instruction's register operands."""
    if not inst.mnemonic.startswith(_MASK_READERS):
        return None
    regs = [r for r in inst.srcs if type(r) is Reg]
    for k in range(len(regs) - 1, -1, -1):
        if regs[k].kind not in ("v", "a"):
            return k
    return None


def _launch_exec_lost(blocks: list, succs: list[list[int]]) -> set:
    """(block, instruction index) positions an EXEC write may precede: a forward "may" fact,
    EXEC-written-on-some-path, iterated over the blocks to its fixed point."""
    first = []
    for b in blocks:
        at = None
        for j, inst in enumerate(b.instrs):
            if inst.is_label or inst.is_phi:
                continue
            mn = inst.mnemonic
            if "saveexec" in mn or "wrexec" in mn or mn.startswith("v_cmpx") or \
                    any(type(r) is Reg and r.kind == "exec" for r in inst.dsts):
                at = j
                break
        first.append(at)
    written_in = [False] * len(blocks)  # on entry to the block, along some path
    changed = True
    while changed:
        changed = False
        for bi in range(len(blocks)):
            out = written_in[bi] or first[bi] is not None
            for t in succs[bi]:
                if out and not written_in[t]:
                    written_in[t] = changed = True
    lost: set = set()
    for bi, b in enumerate(blocks):
        start = 0 if written_in[bi] else (first[bi] + 1 if first[bi] is not None else len(b.instrs))
        lost.update((bi, k) for k in range(start, len(b.instrs)))
    return lost


def _lane_read_slice(blocks: list, lost: set) -> tuple[set, set]:
    """(vector units, mask units) that a lane read may see through per-lane operations, by
    register units (flow-insensitive): what the skeleton must name."""
    vec: set = set()
    per_lane = []
    for bi, b in enumerate(blocks):
        for j, inst in enumerate(b.instrs):
            if inst.is_label or inst.is_phi or (bi, j) in lost or not inst.mnemonic.startswith("v_"):
                continue
            if inst.mnemonic.startswith("v_readfirstlane"):
                vec.update(u for r in inst.srcs if type(r) is Reg and r.kind in ("v", "a") for u in _units(r))
            elif _per_lane(inst):
                per_lane.append(inst)
    masks: set = set()
    grew = bool(vec)
    while grew:
        grew = False
        for inst in per_lane:
            outs = [u for r in inst.dsts if type(r) is Reg for u in _units(r)]
            if not any(u in vec or u in masks for u in outs):
                continue
            slot = _mask_slot(inst)
            for k, r in enumerate([r for r in inst.srcs if type(r) is Reg]):
                got = _units(r)
                target = vec if r.kind in ("v", "a") else masks if k == slot else None
                if target is not None and not target.issuperset(got):
                    target.update(got)
                    grew = True
    return vec, masks


def skeleton(blocks: list, succs: list[list[int]], fence_role, gfx12: bool,
             local: frozenset = frozenset()) -> tuple | None:
    """What the walk reads of a function, as a hashable value (None: a call or jump that is
    not a transfer to or from a subroutine of the function (`local`: their ids) is in it)."""
    lost = _launch_exec_lost(blocks, succs)
    vec, masks = _lane_read_slice(blocks, lost)
    out = []
    writes: dict[int, tuple] = {}
    for bi, b in enumerate(blocks):
        items = []
        last = ""
        ctl = ""
        for j, inst in enumerate(b.instrs):
            if inst.is_label or inst.is_phi:
                continue
            mn = last = inst.mnemonic
            if mn.startswith(_CALLS):
                if id(inst) not in local or inst is not b.instrs[-1]:
                    return None
                ctl = "ret" if mn.startswith(("s_setpc", "s_set_pc")) else "call"
                if ctl == "call":
                    items.append(("call",))
                    writes[bi] = tuple(u for r in inst.dsts if type(r) is Reg and r.kind not in ("v", "a")
                                       for u in _units(r))
                continue
            role = fence_role(inst)
            if role:
                items.append(("fence", role))
                continue
            dsts = tuple(u for r in inst.dsts if type(r) is Reg and r.kind not in ("v", "a") for u in _units(r))
            vdsts = tuple(u for r in inst.dsts if type(r) is Reg and r.kind in ("v", "a") for u in _units(r)
                          if u in vec)
            if not dsts and not vdsts:
                continue  # writes no scalar register nor a vector value a lane read may take
            srcs = tuple((r.kind, r.lo, r.hi) for r in inst.srcs if type(r) is Reg)
            extra = (tuple(repr(o) for o in inst.srcs if type(o) is not Reg),
                     tuple(sorted((k, getattr(m, "raw", None) or repr(getattr(m, "fields", m)))
                                  for k, m in inst.mods.items())))
            if vec and mn.startswith("v_"):
                uniform_ok = (bi, j) not in lost and (mn.startswith("v_readfirstlane") or _per_lane(inst))
                items.append(("vop", mn, extra, dsts, srcs, vdsts, uniform_ok, _mask_slot(inst),
                              inst.suffix or ""))
            else:
                items.append(("op", mn, extra, dsts + vdsts, srcs))
        out.append((tuple(items), tuple(succs[bi]), last, ctl))
    return (tuple(out), gfx12, frozenset(vec), tuple(sorted(writes.items())), branch_info(blocks, succs, lost))


@lru_cache(maxsize=16)
def barrier_pairs(skel: tuple, dead: tuple = (frozenset(), frozenset())) -> dict | None:
    """{(block, fence ordinal): {(block, fence ordinal) or None}} for a skeleton, or None.
    `dead`: per wave, (block, successor block) index pairs that wave never takes (its class of
    wave views, hwpublish.WaveView)."""
    return _Walk(skel, dead).partners


class _NoPairing(Exception):
    """The walk cannot follow a wave (see the module docstring)."""


class _Walk:
    def __init__(self, skel: tuple, dead: tuple = (frozenset(), frozenset())) -> None:
        self._dead = dead
        self.blocks, self.gfx12, self.vec, rets = skel[:4]
        #: per block: its two-way branch (hwbranch.branch_info), or None
        self._branches: tuple = skel[4] if len(skel) > 4 else ()
        self._ret_units = dict(rets)
        self.partners: dict[tuple, set] | None = None
        self._stop: dict[tuple, tuple] = {}
        #: value names interned as small integers (compared and hashed often)
        self._names: dict[tuple, int] = {}
        #: name -> the tuple it names (generalisation looks inside operations)
        self._terms: list[tuple] = []
        #: joins made per pair of positions
        self._joins: dict[tuple, int] = {}
        #: per pair of positions: a name -> the name with that pair's own names renamed stale
        self._stale_memo: dict[tuple, dict] = {}
        #: names of vector values the same in every lane of both waves
        self._lane_uniform: set[int] = set()
        #: a compare's mask (the wave's own scalar name) -> what each lane's bit means
        self._mask_meaning: dict[int, int] = {}
        #: block -> (its branch's rejoin, the units written on the way) or None (`_rejoin`)
        self._rejoins: dict[int, tuple | None] = {}
        self._usable = Usable(self._terms, self._opslots)
        if self.blocks:
            self._walk()
        else:
            self.partners = {}

    def _id(self, name: tuple) -> int:
        got = self._names.get(name)
        if got is None:
            got = self._names[name] = len(self._names)
            self._terms.append(name)
        return got

    def _val(self, vals: dict, u: tuple) -> int:
        got = vals.get(u)
        return got if got is not None else self._id(("launch", u))

    def _exec_vector(self, side: int, where: tuple, item: tuple, vals: dict) -> None:
        """A vector instruction writing a scalar or a vector value a lane read may take."""
        _, mn, extra, dsts, srcs, vdsts, uniform_ok, slot, suffix = item
        parts: list = []
        ok = uniform_ok
        regs = 0
        for kind, lo, hi in srcs:
            if not ok:
                break
            units = [(kind, u) for u in range(lo, hi + 1)]
            if kind in ("v", "a"):
                names = [self._val(vals, u) for u in units]
                ok = all(n in self._lane_uniform for n in names)
                parts.append(tuple(names))
            elif kind in ("exec", "m0") or (kind == "ttmp" and not (self.gfx12 and lo == hi and lo in (6, 7, 9))):
                ok = False
            elif regs == slot:
                meaning = [self._mask_meaning.get(self._val(vals, u)) for u in units]
                ok = None not in meaning
                parts.append(("mask",) + tuple(meaning))
            else:
                parts.append(tuple(self._val(vals, u) for u in units))
            regs += 1
        if mn.startswith("v_readfirstlane"):
            for u in dsts:
                vals[u] = self._id(("lane-read", parts[0][0]) + (u,)) if ok and parts else \
                    self._id(("wave", side, where, u))
            return
        if not ok:
            for u in dsts + vdsts:
                vals[u] = self._id(("wave", side, where, u))
            return
        name = ("per-lane", mn, extra, suffix) + tuple(parts)
        for u in vdsts:
            got = vals[u] = self._id(name + (u,))
            self._lane_uniform.add(got)
        for u in dsts:  # a compare's (or carry's) mask: the wave's own bits, a shared meaning
            if mn.startswith("v_cmp_"):
                meaning = self._id(name + (u,))
                got = vals[u] = self._id(("wave", side, where, u, meaning))  # (one name, one meaning)
                self._mask_meaning[got] = meaning
            else:
                vals[u] = self._id(("wave", side, where, u))

    def _exec(self, side: int, where: tuple, item: tuple, vals: dict) -> None:
        if item[0] == "call":
            return  # its return address: written where the call ends the block (`_next_blocks`)
        if item[0] == "vop":
            self._exec_vector(side, where, item, vals)
            return
        _, mn, extra, dsts, srcs = item
        own = not mn.startswith("s_") or mn.startswith(_ONLY_ONE)
        execs = 0
        for kind, lo, hi in srcs:
            if kind in ("v", "a", "m0") or (kind == "ttmp" and not (self.gfx12 and lo == hi and lo in (6, 7, 9))):
                own = True
            elif kind == "exec":
                execs += 1
        units = [(kind, u) for kind, lo, hi in srcs if kind != "exec" for u in range(lo, hi + 1)]
        if not own and execs:
            if mn.startswith("s_and_b") and execs == 1 and [u[0] for u in dsts if u[0] != "SCC"] in (["vcc"], ["vcc", "vcc"]):
                name = ("uniform-and",) + tuple(self._val(vals, u) for u in units)
                for u in dsts:
                    vals[u] = self._id(name + (u,))
                return
            own = True
        if own:
            for u in dsts:
                vals[u] = self._id(("wave", side, where, u))
            return
        name = (mn, extra) + tuple(self._val(vals, u) for u in units)
        for u in dsts:
            vals[u] = self._id(name + (u,))

    def _to_stop(self, pos: tuple) -> tuple:
        """(items before the next fence at or after item `pos`, that fence's position or None)."""
        pos = pos[:2]
        got = self._stop.get(pos)
        if got is None:
            bi, k = pos
            items = self.blocks[bi][0]
            run = []
            stop = None
            for j in range(k, len(items)):
                if items[j][0] == "fence":
                    stop = (bi, j)
                    break
                run.append(((bi, j), items[j]))
            got = self._stop[pos] = (run, stop)
        return got

    def _walk(self) -> None:
        start = ((0, 0, ()), (0, 0, ()))
        own = (("exec", 0), ("exec", 1), ("m0", 0)) + tuple(sorted(self.vec))  # (VGPRs: work-item ids)
        init = tuple({u: self._id(("wave", side, u)) for u in own} for side in (0, 1))
        seen: dict[tuple, tuple] = {start: init}
        partners: dict[tuple, set] = {}
        todo = [start]
        queued = {start}
        while todo:
            pair = todo.pop()
            queued.discard(pair)
            try:
                out = self._advance(pair, seen[pair], partners)
            except _NoPairing:
                return
            if out is None:
                return
            for nxt, vals in out:
                old = seen.get(nxt)
                if old is not None:
                    vals = self._join(nxt, old, vals)
                    if vals == old:
                        continue
                seen[nxt] = vals
                if len(seen) > _MAX_PAIRS:
                    return
                if nxt not in queued:
                    queued.add(nxt)
                    todo.append(nxt)
        # fences by ordinal in their block
        self.partners = {self._ordinal(k): {None if x is None else self._ordinal(x) for x in xs}
                         for k, xs in partners.items()}

    def _ordinal(self, pos: tuple) -> tuple:
        bi, j = pos
        return (bi, sum(1 for it in self.blocks[bi][0][:j] if it[0] == "fence"))

    def _join(self, pair: tuple, old: tuple, new: tuple) -> tuple:
        if old == new:
            return old
        fo, fn = old[0].get(KNOWN), new[0].get(KNOWN)
        if fo is not None or fn is not None:
            old = tuple({u: x for u, x in v.items() if u != KNOWN} for v in old)
            new = tuple({u: x for u, x in v.items() if u != KNOWN} for v in new)
        n = self._joins[pair] = self._joins.get(pair, 0) + 1
        if n <= _GENERALISE:
            memo: dict = {}
            out = self._generalise(pair, old, new, memo)
            stale = self._stale_memo.setdefault(pair, {})
            facts = join_facts(fo, fn, lambda y: self._stale(y, pair, stale),
                               lambda x, y: self._au(x, y, pair, ("fact",), memo, 0), self._usable)
        else:
            out = self._join_units(pair, old, new)
            facts = (fo & fn) if fo and fn else None
        if facts:
            out[0][KNOWN] = out[1][KNOWN] = facts
        return out

    # Generalisation.  Ping-pong roles (aiter's gfx942/gfx950 fmha fwd) advance one counter by
    # the same instruction, one role before a barrier and the other after it, so at a pair of
    # positions one wave's counter is the other's plus a step: `_join_units` gives the two
    # per-wave names there and the loops' exits read as independent.  The join of two visits
    # here is their anti-unification: where the two visits' names differ, a *variable* of this
    # pair stands for the pair of names, the same variable wherever the same two names meet (in
    # either wave), and equal operations keep their shape over their generalised sources; so
    # "B's counter = add(A's counter, 0x40)" survives the join.  Names made at this pair in an
    # earlier visit are the previous visit's values when they come back: they are renamed
    # before (`_stale`), so a variable never stands for two values.

    def _opslots(self, t: tuple) -> range | None:
        """Where a scalar operation's name holds its sources' names (None: not an operation)."""
        head = t[0]
        if type(head) is str and head.startswith("s_"):
            return range(2, len(t) - 1)
        if head == "uniform-and":
            return range(1, len(t) - 1)
        return None

    def _made_here(self, t: tuple, pair: tuple) -> bool:
        return t[0] in ("join", "au") and t[1] == pair

    def _stale(self, name: int, pair: tuple, memo: dict) -> int:
        got = memo.get(name)
        if got is not None:
            return got
        t = self._terms[name]
        if self._made_here(t, pair):
            got = self._id(("stale", name))
            if name in self._lane_uniform:
                self._lane_uniform.add(got)
        else:
            slots = self._opslots(t)
            got = name
            if slots is not None:
                parts = list(t)
                for i in slots:
                    parts[i] = self._stale(t[i], pair, memo)
                got = self._id(tuple(parts))
        memo[name] = got
        return got

    def _au(self, x: int, y: int, pair: tuple, where: tuple, memo: dict, depth: int) -> int:
        if x == y:
            return x
        got = memo.get((x, y))
        if got is not None:
            return got
        tx, ty = self._terms[x], self._terms[y]
        slots = self._opslots(tx)
        if slots is not None and depth < _AU_DEPTH and len(tx) == len(ty) and \
                all(tx[i] == ty[i] for i in range(len(tx)) if i not in slots):
            parts = list(tx)
            for i in slots:
                parts[i] = self._au(tx[i], ty[i], pair, where + (i,), memo, depth + 1)
            got = self._id(tuple(parts))
        else:
            uniform = x in self._lane_uniform and y in self._lane_uniform
            got = self._id(("au", pair, where, uniform))
            if uniform:
                self._lane_uniform.add(got)
        memo[(x, y)] = got
        return got

    def _generalise(self, pair: tuple, old: tuple, new: tuple, memo: dict | None = None) -> tuple:
        keys = sorted(set(old[0]) | set(old[1]) | set(new[0]) | set(new[1]))
        stale = self._stale_memo.setdefault(pair, {})
        memo = {} if memo is None else memo
        out: tuple = ({}, {})
        for u in keys:
            for side in (0, 1):
                x = self._val(old[side], u)
                y = self._stale(self._val(new[side], u), pair, stale)
                out[side][u] = self._au(x, y, pair, (side, u), memo, 0)
        return out

    def _join_units(self, pair: tuple, old: tuple, new: tuple) -> tuple:
        """The plain join: a register keeps its name where both visits agree, else a join
        name of the pair, shared when each visit had one name in both waves."""
        keys = set(old[0]) | set(old[1]) | set(new[0]) | set(new[1])
        a, b = dict(old[0]), dict(old[1])
        for u in keys:
            oa, ob = self._val(old[0], u), self._val(old[1], u)
            na, nb = self._val(new[0], u), self._val(new[1], u)
            if oa == na and ob == nb:
                continue
            if oa == ob and na == nb:
                if oa in self._lane_uniform and na in self._lane_uniform:
                    # (its own name: a later join that is not lane-uniform gets another)
                    got = a[u] = b[u] = self._id(("join", pair, u, "per-lane"))
                    self._lane_uniform.add(got)
                else:
                    a[u] = b[u] = self._id(("join", pair, u))
            else:
                a[u], b[u] = self._id(("join", pair, u, 0)), self._id(("join", pair, u, 1))
        return (a, b)

    def _advance(self, pair: tuple, vals: tuple, partners: dict) -> list | None:
        va, vb = dict(vals[0]), dict(vals[1])
        stops = []
        for side, pos, v in ((0, pair[0], va), (1, pair[1], vb)):
            if pos == _END:
                stops.append(None)
                continue
            stops.append(self._run_to_stop(side, pos, v))
        pair = self._run_on(pair, stops, va, vb)
        fa, fb = stops
        nv = (va, vb)
        # a fence position keeps its wave's return stack
        if fa is not None:
            fa_at = fa + (pair[0][2],)
        if fb is not None:
            fb_at = fb + (pair[1][2],)
        if fa is not None and fb is not None:
            if self.blocks[fa[0]][0][fa[1]] != self.blocks[fb[0]][0][fb[1]]:
                return None  # two kinds of fence as one instance
            partners.setdefault(fa, set()).add(fb)
            partners.setdefault(fb, set()).add(fa)
            return [(((fa[0], fa[1] + 1, pair[0][2]), (fb[0], fb[1] + 1, pair[1][2])), nv)]
        if fa is not None:
            if pair[1] == _END:
                partners.setdefault(fa, set()).add(None)
                return [(((fa[0], fa[1] + 1, pair[0][2]), _END), nv)]
            return self._alone(fa_at, pair[1], 1, nv)
        if fb is not None:
            if pair[0] == _END:
                partners.setdefault(fb, set()).add(None)
                return [((_END, (fb[0], fb[1] + 1, pair[1][2])), nv)]
            return self._alone(fb_at, pair[0], 0, nv)
        na = self._next_blocks(pair[0], 0, va) if pair[0] != _END else [_END]
        nb = self._next_blocks(pair[1], 1, vb) if pair[1] != _END else [_END]
        if pair[0] != _END and pair[1] != _END and len(na) == 2 and len(nb) == 2 \
                and self._one_way(pair[0][0], pair[1][0], va, vb):
            return [((na[0], nb[0]), nv), ((na[1], nb[1]), nv)]
        if len(na) > 1 or len(nb) > 1:
            na = self._through_tests(na, 0, va, vb)
            nb = self._through_tests(nb, 1, vb, va)
        return [((x, y), nv) for x in na for y in nb]

    def _alone(self, waiting: tuple, pos: tuple, side: int, nv: tuple) -> list:
        """The other wave waits at the fence `waiting`; wave `side` goes on from its block's
        end at `pos`: each way of a branch on usable value names records its outcome for
        the waiting wave's later branch on the same names (hwbranch.py)."""
        vals = nv[side]
        nexts = self._next_blocks(pos, side, vals)
        info = self._branches[pos[0]] if self._branches else None
        ways = outcome_facts(info, self._cond_names(info, vals)) if len(nexts) == 2 else None
        out = []
        for k, s in enumerate(nexts):
            state = nv
            if ways is not None:
                fact = next(f for i, f in ways if i == k)
                va, vb = dict(nv[0]), dict(nv[1])
                va[KNOWN] = vb[KNOWN] = (va.get(KNOWN) or frozenset()) | {fact}  # (in both: either reads it)
                state = (va, vb)
            out.append(((waiting, s) if side == 1 else (s, waiting), state))
        return out

    def _cond_names(self, info: tuple | None, vals: dict) -> tuple | None:
        """The value names of a branch's condition registers, when all usable."""
        if info is None:
            return None
        units = condition_units(info[0])
        if units is None:
            return None
        names = tuple(self._val(vals, u) for u in units)
        return names if all(self._usable(n) for n in names) else None

    def _run_to_stop(self, side: int, pos: tuple, vals: dict) -> tuple | None:
        """Execute a wave from `pos` to its next fence (returned) or its block's end (None)."""
        run, stop = self._to_stop(pos)
        for where, item in run:
            self._exec(side, where, item, vals)
        return stop

    def _run_on(self, pair: tuple, stops: list, va: dict, vb: dict) -> tuple:
        """Both waves at block ends whose branches may part: a wave whose branch has a
        *rejoin* (`_rejoin`: every way from it comes to one block with no fence before) goes
        there at once and runs on from it, so the two are compared at their next branch or
        fence together (the pair of positions it returns; `stops` updated).  What the ways
        between may write becomes the wave's own.  Without it a wave that took a short way
        (wave 0's prefetch block at aiter's gfx1250 f4gemm's entry, a named-barrier signal one
        role's loop has and the other's lacks) ran its code a block behind the other's and
        every later branch was walked both ways."""
        pos = list(pair)
        for _ in range(_RUN_ON):
            if _END in pos or stops[0] is not None or stops[1] is not None:
                break
            if len(self.blocks[pos[0][0]][1]) == 2 and len(self.blocks[pos[1][0]][1]) == 2 \
                    and self._one_way(pos[0][0], pos[1][0], va, vb):
                break
            moved = False
            for side, vals in ((0, va), (1, vb)):
                bi, _, stack = pos[side]
                if self._known_way(bi, vals) is not None:
                    continue  # (it goes one way: walked as it goes)
                got = self._rejoin(bi)
                if got is None:
                    continue
                join, units = got
                for u in units:
                    vals[u] = self._id(("wave", side, ("rejoin", bi), u))
                pos[side] = (join, 0, stack)
                stops[side] = self._run_to_stop(side, pos[side], vals)
                moved = True
            if not moved:
                break
        return (pos[0], pos[1])

    def _rejoin(self, bi: int) -> tuple | None:
        """(block, register units written on the way) for a two-way branch at the end of block
        `bi`: the nearest block, in breadth-first order from the branch, that every way from
        the branch reaches with no fence, call, return or end before it (each block passed
        on the way still has a way on to it); None when there is none among the first few."""
        if bi in self._rejoins:
            return self._rejoins[bi]
        got = None
        items, succs, _, ctl = self.blocks[bi]
        if len(succs) == 2 and not ctl:
            order: list = []
            seen = set(succs)
            layer = list(succs)
            while layer and len(order) < _JOIN_TRIES:
                order.extend(layer)
                nxt = []
                for b in layer:
                    for t in self.blocks[b][1]:
                        if t not in seen:
                            seen.add(t)
                            nxt.append(t)
                layer = nxt
            for cand in order[:_JOIN_TRIES]:
                if cand == bi:
                    continue
                way = self._ways_before(succs, cand)
                if way is not None:
                    units = {u for b in way for it in self.blocks[b][0] if it[0] in ("op", "vop")
                             for u in (it[3] + it[5] if it[0] == "vop" else it[3])}
                    got = (cand, frozenset(units))
                    break
        self._rejoins[bi] = got
        return got

    def _ways_before(self, starts, join: int) -> set | None:
        """The blocks a wave may pass from `starts` before `join`, when none holds a fence, a
        call or return, or ends the wave, and each has a way on to `join`; else None."""
        way: set = set()
        todo = [b for b in starts if b != join]
        while todo:
            b = todo.pop()
            if b in way:
                continue
            items, succs, _, ctl = self.blocks[b]
            if ctl or not succs or any(it[0] in ("fence", "call") for it in items) or len(way) >= _JOIN_BLOCKS:
                return None
            way.add(b)
            todo.extend(t for t in succs if t != join and t not in way)
        on = {join}
        grew = True
        while grew:
            grew = False
            for b in way:
                if b not in on and any(t in on for t in self.blocks[b][1]):
                    on.add(b)
                    grew = True
        return way if len(on) == len(way) + 1 else None

    def _through_tests(self, nexts: list, side: int, own: dict, other: dict) -> list:
        """Positions a wave goes to at a branch that may part it from the other wave, with a
        block that only tests a value the two waves may hold differently (its one item sets
        SCC; no fence, call or return) replaced by where that test goes on (repeatedly; SCC
        then the wave's own): a chain of such tests dispatching on the wave index (aiter's
        gfx1250 f4gemm: ``s_cmp_eq_u32 s22, k; s_cbranch_scc1`` for each role) takes the wave
        to its role's code in one step, where the other wave, already there, is."""
        out: list = []
        seen: set = set()
        todo = list(nexts)
        passed = False
        while todo:
            p = todo.pop(0)
            if p in seen:
                continue
            seen.add(p)
            if p != _END and len(seen) <= _JOIN_TRIES * 2 and self._tests_apart(p[0], own, other):
                bi = p[0]
                succs = [t for t in self.blocks[bi][1] if (bi, t) not in self._dead[side]]
                if bi not in succs:
                    todo.extend((t, 0, p[2]) for t in succs)
                    passed = True
                    continue
            out.append(p)
        if passed:
            own[("SCC", 0)] = self._id(("wave", side, ("tests", tuple(nexts)), ("SCC", 0)))
        return out

    def _tests_apart(self, bi: int, own: dict, other: dict) -> bool:
        items, succs, last, ctl = self.blocks[bi]
        if ctl or not succs:
            return False
        if not items and len(succs) == 2:
            # a branch on a condition set before the block: apart when its names differ
            keys = _condition(last)
            return keys is None or any(self._val(own, u) != self._val(other, u) for u in keys)
        apart = not items  # (a block that only passes a wave on)
        for it in items:
            if it[0] != "op" or any(u != ("SCC", 0) for u in it[3]):
                return False
            mn, srcs = it[1], it[4]
            if not mn.startswith("s_") or mn.startswith(_ONLY_ONE):
                apart = True
            for kind, lo, hi in srcs:
                if kind in ("v", "a", "m0", "exec") or (kind == "ttmp" and not (self.gfx12 and lo == hi
                                                                                 and lo in (6, 7, 9))):
                    apart = True  # (a name of one wave, or the wave index itself)
                for u in range(lo, hi + 1):
                    if self._val(own, (kind, u)) != self._val(other, (kind, u)):
                        apart = True
        return apart

    def _next_blocks(self, pos: tuple, side: int, vals: dict) -> list:
        """Where a wave goes at the end of block `pos[0]` with return stack `pos[2]` (not over
        an edge its view never takes)."""
        bi, _, stack = pos
        _, succs, _, ctl = self.blocks[bi]
        if self._dead[side]:
            succs = [t for t in succs if (bi, t) not in self._dead[side]]
            if not succs:
                return []  # (this wave never gets here)
        if ctl == "call":
            if len(stack) >= _NEST:
                raise _NoPairing
            back = bi + 1
            for r in self._ret_units.get(bi, ()):
                vals[r] = self._id(("return address", bi, r))
            return [(s, 0, stack + (back,)) for s in succs if s != back] or [_END]
        if ctl == "ret":
            if not stack or stack[-1] not in succs:
                raise _NoPairing
            return [(stack[-1], 0, stack[:-1])]
        out = [(s, 0, stack) for s in succs] or [_END]
        if len(out) == 2:
            k = self._known_way(bi, vals)
            if k is not None:
                return [out[k]]
        return out

    def _known_way(self, bi: int, vals: dict) -> int | None:
        """The successor index block `bi`'s branch takes in a wave with names `vals`, when
        known (hwbranch.py: EXEC at launch, or an outcome recorded for its names)."""
        if not self._branches:
            return None
        info = self._branches[bi]
        k = launch_way(info)
        if k is None:
            k = decided(info, self._cond_names(info, vals), vals.get(KNOWN))
        return k

    def _one_way(self, ba: int, bb: int, va: dict, vb: dict) -> bool:
        ma, mb = self.blocks[ba][2], self.blocks[bb][2]
        key = _condition(ma)
        if ma != mb or key is None:
            return False
        return all(self._val(va, u) == self._val(vb, u) for u in key)


def _condition(mnemonic: str) -> list | None:
    """The register units a conditional branch tests (None: not SCC or VCC)."""
    if mnemonic.startswith("s_cbranch_scc"):
        return [("SCC", 0)]
    if mnemonic.startswith("s_cbranch_vcc"):
        return [("vcc", 0), ("vcc", 1)]
    return None
