"""The hardware checker's cross-wave view of a barrier: may an LDS access stay in flight across it?

Written for the checker alone (no reasoning shared with waitcnt/publish.py, only the raw
address facts of analysis/lds_access.py, each access's pieces).  The checker executes one
wave's paths.  At an LDS-fence barrier an own in-flight access the regions cannot prove apart
from the barrier becomes an *obligation* instead of a violation, when every wave runs the same
barriers (`aligned`): the other waves are then on some path from this barrier, and every such
path is one the checker executes from the same state.  Until the epoch ends (the wait of the
next barrier: `s_barrier`, or `s_barrier_wait` after an `s_barrier_signal`), every LDS access
executed on the path stands for another wave's: if it may touch a byte the obligation's
access writes (or write a byte it reads), the barrier is reported as it was before.

Aligned, decided here by a forward dataflow of wave-varying scalar registers per block (not
the pass's SSA): a register varies after a vector instruction writes it, after a hardware
register or scalar atomic read, after a read of a VGPR, a trap temporary or EXEC (LLVM's
`s_and vcc, exec, s` uniform-branch idiom excepted), after a read of a varying register,
and inside the divergent region of a varying branch.  A varying branch whose region (blocks
reached before its immediate post-dominator) holds a barrier makes the function unaligned,
and so does any call.  One wave per workgroup: nothing varies and no other wave exists.

Across waves every symbol of an address is another instance: each residue's bytes are the
form's concrete span.  Residues are paired only when neither a back edge lies between the two
accesses and the residue's loop holds the barrier; otherwise every pair is compared.
"""

from __future__ import annotations

from ..analysis.values import lin_concrete
from .hwtensor import is_tensor, lattice_meet, lattices, tensor_bytes
from ..ir import Block, Function, Instruction, Reg

_VEC = ("v", "a", "ttmp")
_HW_READS = ("s_getreg", "s_memtime", "s_memrealtime", "s_get_barrier_state", "s_sendmsg_rtn",
             "s_barrier_signal_isfirst", "s_atomic", "s_buffer_atomic", "s_get_pc", "s_sleep_var")


def fence_role(inst: Instruction) -> str:
    """'full', 'signal' or 'wait' for an LDS-fence barrier ('' otherwise)."""
    mn = inst.mnemonic
    lit = inst.first_literal()
    if mn == "s_barrier":
        return "full"
    if mn.startswith("s_barrier_signal") and lit not in (-3, 0xfffd):
        return "signal"
    if mn == "s_barrier_wait" and lit not in (-3, 0xfffd):
        return "wait"
    return ""


class WaveView:
    """What the checker knows about the other waves of a function (made once per check)."""

    def __init__(self, func: Function, succs: list[list[int]], facts, waves: int) -> None:
        self.func = func
        self.blocks = list(func.blocks)
        self.succs = succs
        self._dispatch = None
        self.facts = facts
        #: gfx12 keeps the workgroup ids in TTMP9 (x) and TTMP7 (y, z), gfx1250 its cluster ids
        #: in TTMP6: the same in every wave of a workgroup (TTMP8 holds the wave index)
        self.gfx12 = facts is not None and facts.launch.arch.startswith("gfx12")
        self.alone = waves <= 1
        self._spans: dict = {}
        self._cycle: dict[int, set[int]] = {}
        #: ids of the calls of the function's own subroutines and their returns (the checker's
        #: reading, hwfacts.py): CFG edges into the callee and back, not an unknown
        from .hwfacts import local_transfer_ids
        self.local = local_transfer_ids(func)
        self.aligned = self.alone or (facts is not None and self._aligned())
        #: not aligned: the barrier instances two waves meet at (validate/hwwaves.py), by
        #: fence position (block index, instruction index); None: not known
        self._pairs: object = None if self.aligned or facts is None else False
        #: not aligned, with per-wave views: the classes of views and their pairings (`classes`)
        self._classes: object = False if not self.aligned and facts is not None else None
        self._class_pairs: dict = {}
        self._epochs: dict[tuple, list | None] = {}
        #: `others_meet` answers by (access id, writes, fence position): the same question is
        #: asked on every path that reaches the fence with the access in flight
        self._met_answers: dict[tuple, bool] = {}
        #: the checker's own LDS kind ('r', 'w', 'rw') per instruction id, set by the checker
        self.lds_of: dict[int, str] = {}

    @property
    def pairs(self) -> dict | None:
        """Made on first use (a barrier with an unproven access in flight, a fill read by its
        own wave): the pairing walks two waves over the whole function."""
        if self._pairs is False:
            from .hwwaves import barrier_pairs, skeleton
            skel = skeleton(self.blocks, self.succs, fence_role, self.gfx12, self.local)
            got = barrier_pairs(skel) if skel is not None else None
            if got is not None:
                # fences by (block, ordinal) -> by (block, instruction index)
                at = [[j for j, i in enumerate(b.instrs) if not i.is_label and not i.is_phi and fence_role(i)]
                      for b in self.blocks]
                got = {(k[0], at[k[0]][k[1]]): {None if x is None else (x[0], at[x[0]][x[1]]) for x in xs}
                       for k, xs in got.items()}
            self._pairs = got
        return self._pairs  # type: ignore[return-value]

    @property
    def dispatch(self):
        """The exit edges whose epilogue dispatch the checker proves (made on first use)."""
        if self._dispatch is None:
            from .hwdispatch import ExitDispatch
            self._dispatch = ExitDispatch(self.func, self.succs)
        return self._dispatch

    def epoch_of(self, pos: tuple) -> list | None:
        """The LDS accesses a wave may run after the fence at `pos` before the wait of its next
        barrier (a full barrier, or a wait after a signal), on any path; None: a call or
        computed jump lies there."""
        got = self._epochs.get(pos, False)
        if got is not False:
            return got
        out: list = []
        seen: set = set()
        todo = [(pos[0], pos[1] + 1, False)]
        bad = False
        while todo and not bad:
            bi, k, sig = todo.pop()
            instrs = self.blocks[bi].instrs
            ended = False
            for j in range(k, len(instrs)):
                inst = instrs[j]
                role = fence_role(inst)
                if role == "full" or (role == "wait" and sig):
                    ended = True
                    break
                if role == "signal":
                    sig = True
                if inst.mnemonic.startswith(("s_call", "s_swappc", "s_setpc", "s_set_pc")) and id(inst) not in self.local:
                    bad = True
                    break
                kind = self.lds_of.get(id(inst), "")
                if kind and inst not in out:
                    out.append((inst, kind))
            if ended:
                continue
            for t in self.succs[bi]:
                way = self.dispatch.ways.get((bi, t))
                # an exit into a stage-count dispatch the path fixes: its epilogues only
                # (validate/hwdispatch.py; the dispatch blocks hold no LDS access or fence)
                for u in way[1] if way is not None else (t,):
                    if (u, sig) not in seen:
                        seen.add((u, sig))
                        todo.append((u, 0, sig))
        got = self._epochs[pos] = None if bad else out
        return got

    def others_meet(self, a: Instruction, writes: bool, pos: tuple) -> bool:
        """Not aligned: may another wave, at a barrier it may meet as the instance of the fence
        at `pos`, touch `a`'s LDS bytes (write them, when `a` reads) before the next barrier
        (every trip compared)?"""
        key = (id(a), writes, pos)
        got = self._met_answers.get(key)
        if got is None:
            got = self._met_answers[key] = self._others_meet(a, writes, pos)
        return got

    def _others_meet(self, a: Instruction, writes: bool, pos: tuple) -> bool:
        if self.pairs is not None and not self._partners_meet(
                writes, self.pairs.get(pos), lambda q, x: self.other_wave_meets(a, q, False, x[0])):
            return False
        classes = self.classes  # (the abstract pairing may meet: class by class, when known)
        return not classes or self._classes_meet(a, writes, pos, classes)

    def _partners_meet(self, writes: bool, met, meets) -> bool:
        """May an access of the epoch of a fence in `met` (another wave's, at the same
        instance) meet ours (`meets(q, fence)`; a write, or any access when ours writes)?
        Nothing known (no partners, a call in an epoch): they may."""
        if not met:
            return True
        for x in met:
            if x is None:
                continue
            accs = self.epoch_of(x)
            if accs is None:
                return True
            for q, kind in accs:
                if (writes or "w" in kind) and meets(q, x):
                    return True
        return False

    @property
    def classes(self) -> list | None:
        """Classes of wave views that take the same edges ((dead edges by block index, live
        block indices, wave indices)), when the address facts have per-wave views and there
        are two classes; else None.  Each class pair is walked with each wave kept to its
        class's edges (`class_pairs`)."""
        if self._classes is False:
            self._classes = None
            roles = self.facts.roles() if self.facts is not None else None
            if roles:
                index = {b: i for i, b in enumerate(self.blocks)}
                groups: dict = {}
                for r, _ in roles:
                    groups.setdefault((r.dead, r.live), []).append(r.wave)
                if len(groups) == 2:  # (more classes: walks by the dozen; the abstract pairing alone)
                    self._classes = [(frozenset((index[x], index[y]) for x, y in dead if x in index and y in index),
                                      frozenset(index[b] for b in live if b in index), tuple(ws))
                                     for (dead, live), ws in groups.items()]
        return self._classes  # type: ignore[return-value]

    def class_pairs(self, ia: int, ib: int) -> dict | None:
        """The barrier instances a wave of class `ia` and a wave of class `ib` meet (by fence
        position), or None."""
        key = (ia, ib)
        if key not in self._class_pairs:
            from .hwwaves import barrier_pairs, skeleton
            skel = skeleton(self.blocks, self.succs, fence_role, self.gfx12, self.local)
            cls = self.classes
            got = barrier_pairs(skel, (cls[ia][0], cls[ib][0])) if skel is not None and cls else None
            if got is not None:
                at = [[j for j, i in enumerate(b.instrs) if not i.is_label and not i.is_phi and fence_role(i)]
                      for b in self.blocks]
                got = {(k[0], at[k[0]][k[1]]): {None if x is None else (x[0], at[x[0]][x[1]]) for x in xs}
                       for k, xs in got.items()}
            self._class_pairs[key] = got
        return self._class_pairs[key]

    def _classes_meet(self, a: Instruction, writes: bool, pos: tuple, classes: list) -> bool:
        """`_others_meet` class pair by class pair: `a` run by a wave of class ca in flight
        at the fence at `pos`, another wave of class cb at a fence the (ca, cb) walk meets
        with it, its accesses before its next barrier each run by that wave's own view."""
        ab = self.blocks.index(a.block) if a.block in self.blocks else -1
        for ia, (_, live_a, waves_a) in enumerate(classes):
            if pos[0] not in live_a or ab not in live_a:
                continue
            for ib, (_, _, waves_b) in enumerate(classes):
                if ia == ib and len(waves_a) < 2:
                    continue
                pairs = self.class_pairs(ia, ib)
                if self._partners_meet(writes, pairs.get(pos) if pairs is not None else None,
                                       lambda q, x: self._general_meets(a, q, False, x[0]) and
                                       self._roles_meet(a, q, (waves_a, waves_b))):
                    return True
        return False

    # ---- alignment ----------------------------------------------------------------------------
    def _reach(self, i: int) -> set[int]:
        seen, work = set(), list(self.succs[i])
        while work:
            j = work.pop()
            if j not in seen:
                seen.add(j)
                work.extend(self.succs[j])
        return seen

    def on_cycle(self, head: int, b: int) -> bool:
        """Do blocks `head` and `b` lie on one cycle (the loop of `head` holds `b`)?"""
        got = self._cycle.get(head)
        if got is None:
            fwd = self._reach(head)
            got = self._cycle[head] = {j for j in fwd if head in self._reach(j)}
        return b in got

    def _aligned(self) -> bool:
        n = len(self.blocks)
        has_bar = [any(fence_role(i) for i in b.instrs) for b in self.blocks]
        if not any(has_bar):
            return True
        for b in self.blocks:
            for i in b.instrs:
                if i.mnemonic.startswith(("s_call", "s_swappc", "s_setpc", "s_set_pc")):
                    return False
        pdom = self._ipdoms()
        tainted_blocks: set[int] = set()
        checked: set[int] = set()
        while True:
            entry_sets = self._flow(tainted_blocks)
            more = False
            for x in range(n):
                if len(self.succs[x]) < 2 or x in checked or not self._varies_at_end(x, entry_sets[x], tainted_blocks):
                    continue
                checked.add(x)
                region, work = set(), list(self.succs[x])
                while work:
                    j = work.pop()
                    if j == pdom[x] or j in region:
                        continue
                    region.add(j)
                    work.extend(self.succs[j])
                if any(has_bar[j] for j in region):
                    return False
                tainted_blocks |= region
                more = True
            if not more:
                return True

    def _ipdoms(self) -> list[int]:
        """Immediate post-dominator per block (-1: the exit), by iterating post-dominator sets
        (bit masks)."""
        n = len(self.blocks)
        every = (1 << n) - 1
        pd = [every] * n
        changed = True
        while changed:
            changed = False
            for i in range(n - 1, -1, -1):
                cur = every if self.succs[i] else 0
                for t in self.succs[i]:
                    cur &= pd[t]
                cur |= 1 << i
                if cur != pd[i]:
                    pd[i] = cur
                    changed = True
        out = []
        for i in range(n):
            strict = pd[i] & ~(1 << i)
            pick, rest = -1, strict
            while rest:
                j = (rest & -rest).bit_length() - 1
                rest &= rest - 1
                if pd[j] == strict:
                    pick = j
                    break
            out.append(pick)
        return out

    def _step(self, inst: Instruction, vary: set, forced: bool) -> None:
        mn = inst.mnemonic
        srcs = [r for r in inst.srcs if type(r) is Reg]
        kinds = [r.kind for r in srcs]
        bad = forced or mn.startswith("v_") or mn.startswith(_HW_READS) or any(
            r.kind in ("v", "a") or (r.kind == "ttmp" and not (self.gfx12 and r.lo == r.hi and r.lo in (6, 7, 9)))
            for r in srcs)
        if not bad and "exec" in kinds:
            outs = [r.kind for r in inst.dsts if type(r) is Reg and r.kind != "SCC"]
            bad = not (mn.startswith("s_and_b") and outs == ["vcc"] and kinds.count("exec") == 1)
        if not bad:
            bad = any((r.kind, u) in vary for r in srcs for u in range(r.lo, r.hi + 1))
        for r in inst.dsts:
            if type(r) is not Reg or r.kind in _VEC:
                continue
            for u in range(r.lo, r.hi + 1):
                if bad:
                    vary.add((r.kind, u))
                else:
                    vary.discard((r.kind, u))

    def _flow(self, forced: set[int]) -> list[set]:
        n = len(self.blocks)
        entry: list[set] = [set() for _ in range(n)]
        done = [False] * n
        work = [0] if n else []
        while work:
            i = work.pop()
            cur = set(entry[i])
            for inst in self.blocks[i].instrs:
                if not inst.is_label and not inst.is_phi:
                    self._step(inst, cur, i in forced)
            for s in self.succs[i]:
                if not done[s] or not cur <= entry[s]:
                    done[s] = True
                    entry[s] |= cur
                    work.append(s)
        return entry

    def _varies_at_end(self, i: int, entry: set, forced: set[int]) -> bool:
        instrs = [x for x in self.blocks[i].instrs if not x.is_label and not x.is_phi]
        if not instrs:
            return True
        term = instrs[-1]
        if not term.mnemonic.startswith(("s_cbranch_scc", "s_cbranch_vcc")):
            return True
        cur = set(entry)
        for inst in instrs[:-1]:
            self._step(inst, cur, i in forced)
        want = "SCC" if "scc" in term.mnemonic else "vcc"
        return any(u[0] == want for u in cur) or (want == "vcc" and any(u[0] == "vcc_lo" for u in cur))

    # ---- bytes --------------------------------------------------------------------------------
    def _residues(self, inst: Instruction):
        """(header block index or None, size, [form per residue], the checker's tensor bytes or
        None) per piece, or None when the access is not known (overlaps everything)."""
        got = self._spans.get(inst)
        if got is None:
            acc = self.facts.access(inst) if self.facts is not None else None
            if acc is None or acc.pieces is None:
                self._spans[inst] = ()
                return None
            out = []
            tb = tensor_bytes(inst, self.facts.flow) if is_tensor(inst) and acc.trusted is None else None
            if tb is not None:
                # the checker's own reading of the descriptor (validate/hwtensor.py)
                head = self.blocks.index(tb.head) if tb.head in self.blocks else None
                out.append((head, tb.size, tb.forms, tb))
            elif is_tensor(inst) and acc.trusted is None:
                self._spans[inst] = ()
                return None
            else:
                for piece in acc.pieces:
                    ph = piece.addr.phase
                    head = self.blocks.index(ph[0]) if ph is not None and ph[0] in self.blocks else None
                    out.append((head, piece.size, tuple(piece.addr.lins), None))
            got = self._spans[inst] = tuple(out)
        return got or None

    def other_wave_meets(self, a: Instruction, b: Instruction, same_trip: bool, barrier_block: int) -> bool:
        """May `a` (this wave) and `b` (another wave, whose wave index is another value) touch
        a common byte?"""
        if not self._general_meets(a, b, same_trip, barrier_block):
            return False
        return self._roles_meet(a, b)  # (each wave's own bytes, where the wave index decides)

    def _roles_meet(self, a: Instruction, b: Instruction, only: tuple | None = None) -> bool:
        """Each wave as it runs (analysis/wave_roles.py: one view per wave index, the wave index a
        constant there, the branches it decides followed): `a` by wave i, `b` by wave j != i,
        every symbol of either view as its concrete range, every trip against every trip.  No
        views: they may meet."""
        if self.facts is None:
            return True
        xa, xb = self.facts.role_accesses(a), self.facts.role_accesses(b)
        if xa is None or xb is None:
            return True
        lim = self.facts.launch.lds_limit
        for wa, acc_a in xa:
            for wb, acc_b in xb:
                if wa == wb or acc_a is None or acc_b is None:
                    continue
                if only is not None and (wa not in only[0] or wb not in only[1]):
                    continue
                if acc_a.pieces is None or acc_b.pieces is None:
                    return True
                for pa in acc_a.pieces:
                    for pb in acc_b.pieces:
                        for x in pa.addr.lins:
                            for y in pb.addr.lins:
                                sx, sy = lin_concrete(x), lin_concrete(y)
                                if sx[0] < 0 or sy[0] < 0 or sx[1] + pa.size > lim or sy[1] + pb.size > lim:
                                    return True
                                if lattice_meet((sx[0], sx[1], sx[2] or 1, pa.size), (sy[0], sy[1], sy[2] or 1, pb.size)):
                                    return True
        return False

    def _general_meets(self, a: Instruction, b: Instruction, same_trip: bool, barrier_block: int) -> bool:
        ra, rb = self._residues(a), self._residues(b)
        if ra is None or rb is None:
            return True
        for ha, za, la, ta in ra:
            for hb, zb, lb, tb in rb:
                paired = same_trip and ha is not None and ha == hb and self.on_cycle(ha, barrier_block)
                if paired:
                    m = len(la) * len(lb) // _gcd(len(la), len(lb))
                    forms = [(la[k % len(la)], lb[k % len(lb)]) for k in range(m)]
                else:
                    forms = [(x, y) for x in la for y in lb]
                for x, y in forms:
                    if self._forms_meet(x, za, y, zb, ta, tb):
                        return True
        return False

    def _forms_meet(self, x: tuple, zx: int, y: tuple, zy: int, tx=None, ty=None) -> bool:
        """Two waves with indices i != j (every index the launch allows): does some pair of
        their byte sets meet?  Symbols other than the wave index (and functions of it) vary
        freely."""
        lim = self.facts.launch.lds_limit
        idx = []
        for form in (x, y):
            for atom, _ in form[0]:
                base = _index_of(atom)
                if base is not None and base not in idx:
                    idx.append(base)
        choices: list[tuple[dict, dict]] = [({}, {})]
        for base in idx:
            lo, hi, step = base.range[0], base.range[1], base.range[2] or 1
            n = (hi - lo) // step + 1
            if lo < 0 or n * n * len(choices) > 1024:
                choices = [({}, {})]
                idx = []
                break
            vals = [lo + k * step for k in range(n)]
            choices = [({**c, base: i}, {**d, base: j}) for c, d in choices for i in vals for j in vals if i != j]
        for mine, theirs in choices:
            if tx is not None or ty is not None:
                if _tensor_meet(x, zx, tx, mine, y, zy, ty, theirs, bool(idx), lim):
                    return True
                continue
            sx, sy = _fixed(x, mine, bool(idx)), _fixed(y, theirs, bool(idx))
            if sx[0] < 0 or sy[0] < 0 or sx[1] + zx > lim or sy[1] + zy > lim:
                return True
            if lattice_meet(sx + (zx,), sy + (zy,)):
                return True
        return False


def _tensor_meet(x: tuple, zx: int, tx, mine: dict, y: tuple, zy: int, ty, theirs: dict, known: bool,
                 lim: int) -> bool:
    """`_forms_meet`'s test when a side is a tensor DMA: each side's bytes as lattices
    (validate/hwtensor.py: a padded tile's chunks), the wave indices at `mine` / `theirs`."""
    def fixer(index: dict):
        def value(atom):
            base = _index_of(atom) if known else None
            if base is None:
                return None
            v = index[base]
            return v if atom.derived is None else atom.derived[1](v)
        return value
    lx, ly = lattices(x, zx, tx, fixer(mine)), lattices(y, zy, ty, fixer(theirs))
    for part in (lx, ly):
        for lo, hi, _, z in part:
            if lo < 0 or hi + z > lim:
                return True
    return any(lattice_meet(a, b) for a in lx for b in ly)


def _index_of(atom) -> object | None:
    """The wave-index symbol behind `atom` (itself, or the root it is a function of)."""
    root = atom.derived[0] if atom.derived is not None else atom
    return root if root.origin.startswith("the wave's index") else None


def _fixed(form: tuple, index: dict, known: bool) -> tuple[int, int, int]:
    """(lo, hi, stride) of `form` with the wave-index symbols at `index` (when `known`)."""
    terms, k = [], 0
    for atom, c in form[0]:
        base = _index_of(atom) if known else None
        if base is None:
            terms.append((atom, c))
        else:
            v = index[base]
            k += c * (v if atom.derived is None else atom.derived[1](v))
    span = lin_concrete((tuple(terms), (form[1][0] + k, form[1][1] + k, form[1][2])))
    lo, hi, step = span[0], span[1], span[2]
    return lo, hi, step if step or lo == hi else 1


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
