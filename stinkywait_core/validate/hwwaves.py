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
a register whose names differ becomes a join name of that pair, shared by both waves when it
was shared in both executions and per wave otherwise (so the walk ends).

Each wave runs to its next LDS-fence barrier or its block's end; two waves at a barrier are
that barrier instance in both (`partners`); a wave at a barrier waits while the other runs; at
two block ends a conditional branch on the same-named SCC/VCC, of the same kind, goes one way
in both, every other pair of successors is walked.  A wave with no successor has ended
(`None` partner: it touches no LDS).  Calls, two fence kinds met as one instance, or too many
pairs of positions: `partners` is None.
"""

from __future__ import annotations

from ..ir import Instruction, Reg

_ONLY_ONE = ("s_getreg", "s_memtime", "s_memrealtime", "s_get_barrier_state", "s_sendmsg_rtn",
             "s_barrier_signal_isfirst", "s_atomic", "s_buffer_atomic", "s_get_pc", "s_sleep_var")
_MAX_PAIRS = 40000
_END = -1


def _units(r: Reg) -> list[tuple]:
    return [(r.kind, u) for u in range(r.lo, r.hi + 1)]


class BarrierPairs:
    """`partners[(block, index)]`: the fence positions another wave may be at as the same
    barrier instance (None: ended).  `fence_role(inst)` names fences ('' otherwise)."""

    def __init__(self, blocks: list, succs: list[list[int]], fence_role, gfx12: bool) -> None:
        self.blocks, self.succs, self.role, self.gfx12 = blocks, succs, fence_role, gfx12
        self.partners: dict[tuple, set] | None = None
        self._stop: dict[tuple, tuple] = {}
        #: value names interned as small integers (compared and hashed often)
        self._names: dict[tuple, int] = {}
        self._op_names: dict[int, tuple] = {}
        if not blocks:
            self.partners = {}
            return
        for b in blocks:
            for i in b.instrs:
                if i.mnemonic.startswith(("s_call", "s_swappc", "s_setpc", "s_set_pc")):
                    return
        self._walk()

    def _id(self, name: tuple) -> int:
        got = self._names.get(name)
        if got is None:
            got = self._names[name] = len(self._names)
        return got

    def _val(self, vals: dict, u: tuple) -> int:
        got = vals.get(u)
        return got if got is not None else self._id(("launch", u))

    def _name(self, inst: Instruction) -> tuple:
        got = self._op_names.get(id(inst))
        if got is None:
            got = self._op_names[id(inst)] = self._op_name(inst)
        return got

    def _op_name(self, inst: Instruction) -> tuple:
        mods = tuple(sorted((k, getattr(m, "raw", None) or repr(getattr(m, "fields", m))) for k, m in inst.mods.items()))
        return (inst.mnemonic, tuple(repr(o) for o in inst.srcs if type(o) is not Reg), mods)

    def _exec(self, side: int, inst: Instruction, vals: dict) -> None:
        mn = inst.mnemonic
        if mn.startswith(("s_cbranch", "s_branch")) or inst.is_label or inst.is_phi:
            return
        dsts = [u for r in inst.dsts if type(r) is Reg and r.kind not in ("v", "a") for u in _units(r)]
        scalar = mn.startswith("s_")
        if not dsts and not scalar:
            return
        regs = [r for r in inst.srcs if type(r) is Reg]
        own = not scalar or mn.startswith(_ONLY_ONE)
        execs = [r for r in regs if r.kind == "exec"]
        for r in regs:
            if r.kind in ("v", "a", "m0") or (r.kind == "ttmp" and not (self.gfx12 and r.lo == r.hi and r.lo in (6, 7, 9))):
                own = True
        if not own and execs:
            if mn.startswith("s_and_b") and len(execs) == 1 and [r.kind for r in inst.dsts if type(r) is Reg
                                                                 and r.kind != "SCC"] == ["vcc"]:
                rest = [r for r in regs if r.kind != "exec"]
                name = ("uniform-and",) + tuple(self._val(vals, u) for r in rest for u in _units(r))
                for u in dsts:
                    vals[u] = self._id(name + (u,))
                vals[("SCC", 0)] = self._id(name + ("scc",))
                return
            own = True
        if own:
            for u in dsts + ([("SCC", 0)] if scalar else []):
                vals[u] = self._id(("wave", side, id(inst), u))
            return
        name = self._name(inst) + tuple(self._val(vals, u) for r in regs for u in _units(r))
        for u in dsts:
            vals[u] = self._id(name + (u,))
        vals[("SCC", 0)] = self._id(name + ("scc",))

    def _to_stop(self, pos: tuple) -> tuple:
        """(instructions before the next fence at or after `pos`, that fence's position or None)."""
        got = self._stop.get(pos)
        if got is None:
            bi, k = pos
            instrs = self.blocks[bi].instrs
            run = []
            stop = None
            for j in range(k, len(instrs)):
                inst = instrs[j]
                if self.role(inst):
                    stop = (bi, j)
                    break
                mn = inst.mnemonic
                if inst.is_label or inst.is_phi or mn.startswith(("s_cbranch", "s_branch")):
                    continue
                if mn.startswith("s_") or any(type(r) is Reg and r.kind not in ("v", "a") for r in inst.dsts):
                    run.append(inst)  # only these change a scalar register's name
            got = self._stop[pos] = (run, stop)
        return got

    def _walk(self) -> None:
        start = ((0, 0), (0, 0))
        init = tuple({u: self._id(("wave", side, u)) for u in (("exec", 0), ("exec", 1), ("m0", 0))}
                     for side in (0, 1))
        seen: dict[tuple, tuple] = {}
        partners: dict[tuple, set] = {}
        todo = [(start, init)]
        while todo:
            pair, vals = todo.pop()
            old = seen.get(pair)
            if old is not None:
                joined = self._join(pair, old, vals)
                if joined == old:
                    continue
                vals = joined
            seen[pair] = vals
            if len(seen) > _MAX_PAIRS:
                return
            out = self._advance(pair, vals, partners)
            if out is None:
                return
            todo.extend(out)
        self.partners = partners

    def _join(self, pair: tuple, old: tuple, new: tuple) -> tuple:
        keys = set(old[0]) | set(old[1]) | set(new[0]) | set(new[1])
        a, b = dict(old[0]), dict(old[1])
        for u in keys:
            oa, ob = self._val(old[0], u), self._val(old[1], u)
            na, nb = self._val(new[0], u), self._val(new[1], u)
            if oa == na and ob == nb:
                continue
            if oa == ob and na == nb:
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
            run, stop = self._to_stop(pos)
            for inst in run:
                self._exec(side, inst, v)
            stops.append(stop)
        fa, fb = stops
        nv = (va, vb)
        if fa is not None and fb is not None:
            ia, ib = self.blocks[fa[0]].instrs[fa[1]], self.blocks[fb[0]].instrs[fb[1]]
            if self.role(ia) != self.role(ib):
                return None
            partners.setdefault(fa, set()).add(fb)
            partners.setdefault(fb, set()).add(fa)
            return [(((fa[0], fa[1] + 1), (fb[0], fb[1] + 1)), nv)]
        if fa is not None:
            if pair[1] == _END:
                partners.setdefault(fa, set()).add(None)
                return [(((fa[0], fa[1] + 1), _END), nv)]
            return [((fa, s), nv) for s in self._next_blocks(pair[1][0])]
        if fb is not None:
            if pair[0] == _END:
                partners.setdefault(fb, set()).add(None)
                return [((_END, (fb[0], fb[1] + 1)), nv)]
            return [((s, fb), nv) for s in self._next_blocks(pair[0][0])]
        na = self._next_blocks(pair[0][0]) if pair[0] != _END else [_END]
        nb = self._next_blocks(pair[1][0]) if pair[1] != _END else [_END]
        if pair[0] != _END and pair[1] != _END and len(na) == 2 and len(nb) == 2 \
                and self._one_way(pair[0][0], pair[1][0], va, vb):
            return [((na[0], nb[0]), nv), ((na[1], nb[1]), nv)]
        return [((x, y), nv) for x in na for y in nb]

    def _next_blocks(self, bi: int) -> list:
        return [(s, 0) for s in self.succs[bi]] or [_END]

    def _one_way(self, ba: int, bb: int, va: dict, vb: dict) -> bool:
        ta = [i for i in self.blocks[ba].instrs if not i.is_label]
        tb = [i for i in self.blocks[bb].instrs if not i.is_label]
        if not ta or not tb or ta[-1].mnemonic != tb[-1].mnemonic:
            return False
        mn = ta[-1].mnemonic
        if mn.startswith("s_cbranch_scc"):
            key = [("SCC", 0)]
        elif mn.startswith("s_cbranch_vcc"):
            key = [("vcc", 0), ("vcc", 1)]
        else:
            return False
        return all(self._val(va, u) == self._val(vb, u) for u in key)
